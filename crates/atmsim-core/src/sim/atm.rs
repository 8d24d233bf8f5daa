//! Cells: sources, ATM ports and links, delivery at the end of a VC.

use super::*;

impl Simulation {
    pub(super) fn on_source(&mut self, s: usize) {
        let now = self.now;
        let st = &mut self.sources[s];
        let e = st.source.fire(now, &mut st.rng);
        match e.next {
            Some(t) if t < st.stop => self.queue.replace_top(t, Event::SourceEmit(s as u32)),
            _ => self.queue.pop(),
        }
        let vc = st.vc;
        self.send_frame(vc, e.cells, None);
    }

    /// Segments a frame of `cells` cells on `vc` into its first port; a TCP
    /// frame's packet is kept in the VC's frame store.
    pub(super) fn send_frame(&mut self, vc: u32, cells: u16, packet: Option<Packet>) {
        let v = &mut self.vcs[vc as usize];
        let frame = v.frames_sent as u32;
        v.frames_sent += 1;
        v.cells_sent += cells as u64;
        if let (Some(store), Some(packet)) = (&mut v.store, packet) {
            store.push(
                frame,
                FrameEntry {
                    packet,
                    cells,
                    dropped: 0,
                },
            );
        }
        let first_link = v.links[0] as usize;
        if let Some(ses) = v.ses.as_mut() {
            for k in 0..cells {
                ses.queue
                    .push_back(Cell::data(vc, frame, cells, k + 1 == cells));
            }
            self.wake_ses(vc as usize);
            return;
        }
        for k in 0..cells {
            self.port_arrive(first_link, Cell::data(vc, frame, cells, k + 1 == cells));
        }
    }

    pub(super) fn atm(&mut self, l: usize) -> &mut AtmHop {
        match &mut self.hops[l] {
            Hop::Atm(h) => h,
            Hop::Ip(_) => unreachable!("cell on IP link {l}"),
        }
    }

    /// A cell reaches the output port of link `l`.
    #[inline]
    pub(super) fn port_arrive(&mut self, l: usize, mut cell: Cell) {
        let now = self.now;
        let vc = &self.vcs[cell.vc as usize];
        let (prio, abr) = (vc.priority, vc.is_abr);
        let hop = self.atm(l);
        if hop.algorithm.is_some() && !is_brm(&cell) {
            let ps = hop.port_state(now);
            if let Some(a) = hop.algorithm.as_mut() {
                a.on_cell(now, &mut cell, abr, prio, &ps);
            }
        }
        let accepted = match hop.port.mode {
            PortMode::Fifo => match hop.port.fifo_arrive(now, &cell) {
                Some(depart) => {
                    self.link_push(l, depart, cell);
                    true
                }
                None => false,
            },
            PortMode::Priority => match hop.port.prio_arrive(now, cell, prio) {
                PriorityArrival::Started(end) => {
                    self.queue.push(end, Event::PortTxDone(l as u32));
                    true
                }
                PriorityArrival::Queued => true,
                PriorityArrival::Dropped => false,
            },
        };
        if !accepted && !is_rm(&cell) {
            if let Some(store) = &mut self.vcs[cell.vc as usize].store {
                if let Some(e) = store.get_mut(cell.frame) {
                    e.dropped += 1;
                }
            }
        }
    }

    pub(super) fn on_tx_done(&mut self, l: usize) {
        let now = self.now;
        match &mut self.hops[l] {
            Hop::Atm(h) => {
                let (cell, next) = h.port.prio_tx_done(now);
                match next {
                    Some(end) => self.queue.replace_top(end, Event::PortTxDone(l as u32)),
                    None => self.queue.pop(),
                }
                self.link_push(l, now, cell);
            }
            Hop::Ip(_) => unreachable!("IP ports need no transmit events"),
        }
    }

    /// Puts `cell`, whose transmission on link `l` ends at `tx_end`, on the link.
    #[inline]
    pub(super) fn link_push(&mut self, l: usize, tx_end: Time, cell: Cell) {
        let now = self.now;
        let Hop::Atm(hop) = &mut self.hops[l] else {
            unreachable!("cell on IP link {l}")
        };
        let link = &mut hop.link;
        let arrival = tx_end + link.delay_ps;
        if link.lazy {
            // Deliver what has arrived by now, so the queue holds only the
            // cells still in the port or on the wire.
            while let Some(&(a, done)) = link.in_flight.front() {
                if a > now {
                    break;
                }
                link.in_flight.pop_front();
                deliver_passive(&mut self.vcs, &done);
            }
            link.in_flight.push_back((arrival, cell));
            return;
        }
        let was_empty = link.in_flight.is_empty();
        link.in_flight.push_back((arrival, cell));
        if was_empty {
            self.queue.push(arrival, Event::LinkArrival(l as u32));
        }
    }

    pub(super) fn on_link_arrival(&mut self, l: usize) {
        match &mut self.hops[l] {
            Hop::Atm(h) => {
                let (_, mut cell) = h
                    .link
                    .in_flight
                    .pop_front()
                    .expect("arrival on an empty link");
                match h.link.in_flight.front() {
                    Some(&(t, _)) => self.queue.replace_top(t, Event::LinkArrival(l as u32)),
                    None => self.queue.pop(),
                }
                if is_brm(&cell) {
                    self.on_brm_arrival(cell);
                    return;
                }
                cell.hop += 1;
                let v = &self.vcs[cell.vc as usize];
                if cell.hop as usize == v.links.len() {
                    let cell = if v.des.is_some() {
                        match self.abr_destination(cell) {
                            Some(c) => c,
                            None => return,
                        }
                    } else {
                        cell
                    };
                    if self.vcs[cell.vc as usize].store.is_some() {
                        self.deliver_tcp_cell(cell);
                    } else {
                        deliver_passive(&mut self.vcs, &cell);
                    }
                } else {
                    let next = v.links[cell.hop as usize] as usize;
                    self.port_arrive(next, cell);
                }
            }
            Hop::Ip(h) => {
                let (_, mut packet) = h.in_flight.pop_front().expect("arrival on an empty link");
                match h.in_flight.front() {
                    Some(&(t, _)) => {
                        self.queue
                            .replace_top_ordered(t, Event::LinkArrival(l as u32), l as u32)
                    }
                    None => self.queue.pop(),
                }
                packet.hop += 1;
                match self.ip_route_at(&packet, packet.hop) {
                    ROUTE_END => {
                        self.packets.delivered += 1;
                        self.packet_arrives(packet, self.now);
                    }
                    next => self.ip_port_arrive((next & !EAGER_LINK) as usize, packet, self.now),
                }
            }
        }
    }

    /// A cell of a TCP VC reaches the end host: reassemble, and resolve the
    /// fate of every frame the unit closes.
    pub(super) fn deliver_tcp_cell(&mut self, cell: Cell) {
        let v = &mut self.vcs[cell.vc as usize];
        v.cells_delivered += 1;
        let (eom_frame, intact) = match v.reassembly.receive(&cell) {
            Outcome::Pending => return,
            Outcome::Delivered { frame, .. } => (frame, true),
            Outcome::Corrupted { frame, .. } | Outcome::Merged { frame, .. } => (frame, false),
        };
        let store = v.store.as_mut().expect("TCP VC without a frame store");
        let mut arrived = None;
        while let Some((id, e)) = store.pop_front() {
            if id == eom_frame && intact {
                arrived = Some(e.packet);
            } else if e.packet.is_data {
                // Every cell of an earlier frame either was dropped or arrived
                // into this failed unit.
                let lost = e.packet.len as u64;
                if id != eom_frame && e.dropped == e.cells {
                    self.byte_losses.dropped_in_network += lost;
                } else {
                    self.byte_losses.dropped_aal5 += lost;
                }
            }
            if id == eom_frame {
                break;
            }
        }
        if let Some(p) = arrived {
            self.packet_arrives(p, self.now);
        }
    }
}

/// A cell reaches the passive sink of its VC.
#[inline]
pub(super) fn deliver_passive(vcs: &mut [VcState], cell: &Cell) {
    let v = &mut vcs[cell.vc as usize];
    v.cells_delivered += 1;
    v.reassembly.receive(cell);
}
