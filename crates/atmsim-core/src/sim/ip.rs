//! Packets: router ports (eager ones too) and links, and the IP part of the
//! ledger.

use super::*;

impl Simulation {
    /// Where the link `packet` is on sits in `ip_route`.
    fn route_pos(&self, packet: &Packet) -> u32 {
        self.ip_route_base[packet.flow as usize][packet.is_data as usize] + packet.hop as u32
    }

    /// The entry of `ip_route` for `packet` at hop `hop` of its path: the IP
    /// link (with EAGER_LINK set if that link's port is eager), or ROUTE_END
    /// past its last link.
    #[inline]
    pub(super) fn ip_route_at(&self, packet: &Packet, hop: u8) -> u32 {
        let base = self.ip_route_base[packet.flow as usize][packet.is_data as usize];
        self.ip_route[base as usize + hop as usize]
    }

    /// `packet` reaches the port of IP link `l` at time `at` (now, or later
    /// for an eager port fed straight from its upstream port), and goes on
    /// through the eager ports after it, to an eager end host if it can.
    pub(super) fn ip_port_arrive(&mut self, mut l: usize, mut packet: Packet, mut at: Time) {
        let now = self.now;
        loop {
            let Hop::Ip(h) = &mut self.hops[l] else {
                unreachable!("packet on ATM link {l}")
            };
            let Some(end) = h.port.arrive(at, now, &packet) else {
                self.ip_drop(&packet, at);
                return;
            };
            let far = end + h.delay_ps;
            let next = self.ip_route_at(&packet, packet.hop + 1);
            if next != ROUTE_END && next & EAGER_LINK != 0 {
                packet.hop += 1;
                l = (next & !EAGER_LINK) as usize;
                at = far;
                continue;
            }
            let Hop::Ip(h) = &mut self.hops[l] else {
                unreachable!()
            };
            if next == ROUTE_END && far <= self.until && h.in_flight.is_empty() {
                let fl = &self.flows[packet.flow as usize];
                let eager = if packet.is_data {
                    fl.eager_rx
                } else {
                    // The sender's timer must not expire before the ACK.
                    fl.eager_tx && fl.sender.deadline().is_none_or(|d| d > far)
                };
                if eager {
                    // The end host takes the packet at `far`, now; what it
                    // sends in answer goes on until it meets an event (the
                    // build makes sure it does).
                    self.packets.delivered += 1;
                    self.packet_arrives(packet, far);
                    return;
                }
            }
            let was_empty = h.in_flight.is_empty();
            h.in_flight.push_back((far, packet));
            if was_empty {
                let b = h.feeds;
                if b == NO_BATCH {
                    // Simultaneous packet arrivals go by link, whenever they
                    // were scheduled (eager steps schedule them early).
                    self.queue
                        .push_ordered(far, Event::LinkArrival(l as u32), l as u32);
                } else {
                    self.schedule_batch(b as usize, far);
                }
            }
            return;
        }
    }

    /// When the head packet of IP link `l` reaches its far end (Time::MAX
    /// if the link is empty).
    #[inline]
    fn link_head(&self, l: usize) -> Time {
        match &self.hops[l] {
            Hop::Ip(h) => h.in_flight.front().map_or(Time::MAX, |e| e.0),
            Hop::Atm(_) => Time::MAX,
        }
    }

    /// The propagation delay of IP link `l`.
    fn link_delay(&self, l: usize) -> Time {
        match &self.hops[l] {
            Hop::Ip(h) => h.delay_ps,
            Hop::Atm(h) => h.link.delay_ps,
        }
    }

    /// Makes sure batch port `b` has its IpBatch event at or before `t`.
    fn schedule_batch(&mut self, b: usize, t: Time) {
        let order = self.hops.len() as u32 + b as u32;
        let Hop::Ip(h) = &mut self.hops[b] else {
            unreachable!()
        };
        if t < h.batch_at {
            h.batch_at = t;
            self.queue.push_ordered(t, Event::IpBatch(b as u32), order);
        }
    }

    /// Batch port `b` takes, in time order (ties by link), every packet its
    /// feeders bring before now + its look-ahead: a packet that enters a
    /// feeder from now on arrives later than that, so these are all the
    /// arrivals of that window, and the port (told of them early, like an
    /// eager port) sees them in their order.
    pub(super) fn on_ip_batch(&mut self, b: usize) {
        self.queue.pop();
        let now = self.now;
        let Hop::Ip(h) = &mut self.hops[b] else {
            unreachable!()
        };
        if h.batch_at != now {
            return; // superseded by an earlier one
        }
        // Nothing past the end of the current `advance` (like eager ends),
        // so a run in slices takes smaller batches with the same results.
        let feeders = std::mem::take(&mut h.feeders);
        let lookahead = feeders.iter().map(|&k| self.link_delay(k as usize)).min();
        let horizon = now
            .saturating_add(lookahead.unwrap_or(0))
            .min(self.until.saturating_add(1));
        let Hop::Ip(h) = &mut self.hops[b] else {
            unreachable!()
        };
        // Arrivals added meanwhile come after the horizon: no event for them
        // until the batch is done.
        h.batch_at = horizon;
        // The feeders' head arrivals (Time::MAX when empty), refreshed as
        // they are taken: cheaper than looking into every feeder each time.
        let mut heads = std::mem::take(&mut self.batch_heads);
        heads.clear();
        heads.extend(feeders.iter().map(|&k| (self.link_head(k as usize), k)));
        loop {
            // The earliest head (the first feeder on a tie), and the time
            // before which that feeder's packets come first.
            let mut best = usize::MAX;
            let mut best_t = horizon;
            let mut bound = horizon;
            for (i, &(t, _)) in heads.iter().enumerate() {
                if t < best_t {
                    bound = best_t;
                    best_t = t;
                    best = i;
                } else if t < bound {
                    bound = t;
                }
            }
            if best == usize::MAX {
                break;
            }
            let k = heads[best].1 as usize;
            loop {
                let Hop::Ip(fh) = &mut self.hops[k] else {
                    unreachable!()
                };
                let (far, mut packet) = fh.in_flight.pop_front().expect("a head");
                let next = fh.in_flight.front().map_or(Time::MAX, |e| e.0);
                packet.hop += 1;
                self.ip_port_arrive(b, packet, far);
                if next >= bound {
                    heads[best].0 = next;
                    break;
                }
            }
        }
        self.batch_heads = heads;
        // Feeders may have gained packets meanwhile (after the horizon).
        let next = feeders.iter().map(|&k| self.link_head(k as usize)).min();
        let Hop::Ip(h) = &mut self.hops[b] else {
            unreachable!()
        };
        h.feeders = feeders;
        h.batch_at = Time::MAX;
        if let Some(t) = next.filter(|&t| t != Time::MAX) {
            self.schedule_batch(b, t);
        }
    }

    /// The port of the link `packet` is on dropped it; it arrived at `at`.
    #[cold]
    fn ip_drop(&mut self, packet: &Packet, at: Time) {
        let now = self.now;
        let data_bytes = if packet.is_data { packet.len as u64 } else { 0 };
        self.byte_losses.dropped_in_network += data_bytes;
        if at > now {
            // Only drops still in the future at the end matter: forget
            // the past ones now and then, so the list stays short.
            if self.future_drops.len() >= 1024 {
                self.future_drops.retain(|d| d.at > now);
            }
            self.future_drops.push(FutureDrop {
                at,
                route_pos: self.route_pos(packet),
                data_bytes,
            });
        }
    }

    /// Where a packet is at `now` that reaches the end of the link before
    /// `ip_route[route_pos]` at `at` > now (a packet on a link, or one a
    /// port was told of ahead of time): (link, true) in that link's port,
    /// (link, false) on the link, walking up its path from the recorded
    /// times; the ports it has yet to reach were told of it ahead (counted
    /// in `future_in`). None if the path gives out first, which would be a
    /// bug.
    fn place_upstream(
        &self,
        route_pos: u32,
        mut at: Time,
        now: Time,
        future_in: &mut [u64],
    ) -> Option<(usize, bool)> {
        let mut pos = route_pos as usize;
        loop {
            pos = pos.checked_sub(1)?;
            let p = self.ip_route[pos];
            if p == ROUTE_END {
                return None;
            }
            let p = (p & !EAGER_LINK) as usize;
            let Hop::Ip(ph) = &self.hops[p] else {
                return None;
            };
            let end = at.checked_sub(ph.delay_ps)?;
            if end <= now {
                return Some((p, false));
            }
            let arrival = ph.port.arrival_ending_at(end)?;
            if arrival <= now {
                return Some((p, true));
            }
            future_in[p] += 1;
            at = arrival;
        }
    }

    /// The IP ports' summaries (into `ports`, by link index) and their part
    /// of the ledger at `now`; returns the TCP payload bytes in the IP path.
    /// Packets pushed ahead through eager ports are placed where they are at
    /// `now`, from their recorded times.
    pub(super) fn ip_ledger(
        &mut self,
        now: Time,
        ledger: &mut Ledger,
        ports: &mut [PortSummary],
    ) -> u64 {
        let n = self.hops.len();
        let mut in_port = vec![0u64; n];
        let mut on_link = vec![0u64; n];
        let mut future_in = vec![0u64; n];
        let mut future_drops = vec![0u64; n];
        let mut in_path = 0u64;
        let mut misplaced = 0u64;
        for l in 0..n {
            let Hop::Ip(h) = &self.hops[l] else { continue };
            for &(far, pk) in h.in_flight.iter() {
                if pk.is_data {
                    in_path += pk.len as u64;
                }
                // It reaches the far end of link l at `far`: on l, in l's
                // port, or (told early) further up its path.
                let pos = self.route_pos(&pk) + 1;
                match self.place_upstream(pos, far, now, &mut future_in) {
                    Some((p, true)) => in_port[p] += 1,
                    Some((p, false)) => on_link[p] += 1,
                    None => misplaced += 1,
                }
            }
        }
        for d in self.future_drops.iter().filter(|d| d.at > now) {
            future_drops[(self.ip_route[d.route_pos as usize] & !EAGER_LINK) as usize] += 1;
            match self.place_upstream(d.route_pos, d.at, now, &mut future_in) {
                Some((p, true)) => in_port[p] += 1,
                Some((p, false)) => on_link[p] += 1,
                None => misplaced += 1,
            }
        }
        if misplaced > 0 {
            ledger.problems.push(format!(
                "{misplaced} packets told ahead to a port have no place upstream at {now} ps"
            ));
        }
        for l in 0..n {
            let Hop::Ip(h) = &mut self.hops[l] else {
                continue;
            };
            h.port.settle(now);
            let p = &h.port;
            let arrived = p.packets_in() - future_in[l] - future_drops[l];
            let dropped = p.dropped() - future_drops[l];
            ledger.packets.queued += in_port[l];
            ledger.packets.on_links += on_link[l];
            ledger.packets.dropped += dropped;
            if p.packets_held(now) as u64 != in_port[l]
                || arrived != p.packets_out(now) + dropped + in_port[l]
                || p.arrivals_after(now) as u64 != future_in[l]
            {
                ledger.problems.push(format!(
                    "IP port {}: in {arrived} != out {} + dropped {dropped} + held {} (port says {})",
                    h.name,
                    p.packets_out(now),
                    in_port[l],
                    p.packets_held(now)
                ));
            }
            ports[l] = PortSummary {
                name: h.name.clone(),
                layer: "ip",
                drops: DROP_REASON_NAMES
                    .iter()
                    .map(|n| (n.to_string(), 0))
                    .collect(),
                utilization: if now > 0 {
                    p.busy_ps(now) as f64 / now as f64
                } else {
                    0.0
                },
                packets_in: arrived,
                packets_out: p.packets_out(now),
                packets_dropped: dropped,
                packets_dropped_red: p.dropped_red,
                max_queue_packets: p.max_queue,
                mean_queue_packets: p.mean_queue(now),
                ..Default::default()
            };
        }
        in_path
    }
}
