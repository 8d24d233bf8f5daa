//! What each event does: cells and packets move from part to part through
//! the parts' methods (a source's frame into the first port of its VC, a
//! cell at the end of its path into a sink, a host or an ABR destination, a
//! TCP segment into its route). No part's state is touched here directly.

use super::atm::{Arrived as CellArrived, BrmStep};
use super::ends::AtEnd;
use super::ip::Arrived as PacketArrived;
use super::ip_control::AckFate;
use super::tcp::FlowRoute;
use super::Simulation;
use crate::abr::is_rm;
use crate::atm::aal5::cells_per_datagram;
use crate::atm::Cell;
use crate::engine::{Event, Time};
use crate::ids::{AtmLinkIx, FlowId, IpLinkIx, VcId};
use crate::ip::Packet;

impl Simulation {
    // --- cells ------------------------------------------------------------

    pub(super) fn on_source(&mut self, s: u32) {
        let (vc, cells) = self.ends.fire_source(s, self.clock.now, &mut self.agenda);
        self.send_frame(vc, cells, None);
    }

    /// Segments a frame of `cells` cells on `vc` into its first port, or
    /// into its ABR source end system; a TCP frame's packet is kept until
    /// its fate is known.
    pub(super) fn send_frame(&mut self, vc: VcId, cells: u16, packet: Option<Packet>) {
        let frame = self.ends.open_frame(vc, cells, packet);
        if self.ends.has_ses(vc) {
            self.ends.ses_enqueue(vc, frame, cells);
            self.ends.wake_ses(vc, self.clock.now, &mut self.agenda);
            return;
        }
        let first = self.atm.first_link(vc);
        let now = self.clock.now;
        for k in 0..cells {
            let cell = Cell::data_born(vc.get(), frame, cells, k + 1 == cells, now);
            self.cell_to_port(first, cell);
        }
    }

    /// `cell` reaches the output port of ATM link `l` now.
    #[inline(always)]
    fn cell_to_port(&mut self, l: AtmLinkIx, cell: Cell) {
        let ends = &mut self.ends;
        let accepted = self.atm.port_arrive(
            l,
            cell,
            self.clock.now,
            &mut self.agenda,
            &mut |c: &Cell, at| ends.deliver_quiet(c, at),
        );
        if !accepted && !is_rm(&cell) {
            self.ends.cell_dropped(&cell);
        }
    }

    pub(super) fn on_port_tx_done(&mut self, l: AtmLinkIx) {
        let ends = &mut self.ends;
        self.atm
            .tx_done(l, self.clock.now, &mut self.agenda, &mut |c: &Cell, at| {
                ends.deliver_quiet(c, at)
            });
    }

    pub(super) fn on_cell_arrival(&mut self, q: u32) {
        let (l, arrived) = self.atm.link_arrival(q, self.clock.now, &mut self.agenda);
        match arrived {
            CellArrived::Onward(next, cell) => self.cell_to_port(next, cell),
            CellArrived::Brm(cell) => match self.atm.brm_onward(cell, self.clock.now) {
                BrmStep::Onward(next, cell) => self.cell_to_port(next, cell),
                BrmStep::AtSource(cell) => {
                    self.ends.brm_at_source(&cell);
                    self.ends
                        .wake_ses(VcId::new(cell.vc), self.clock.now, &mut self.agenda);
                }
            },
            CellArrived::End(cell) => match self.ends.at_end(cell, self.clock.now) {
                AtEnd::TurnedAround(brm) => {
                    let back = self.atm.first_back_link(VcId::new(brm.vc));
                    self.cell_to_port(back, brm);
                }
                AtEnd::Tcp(cell) => {
                    if let Some(packet) = self.ends.deliver_tcp_cell(cell, self.clock.now) {
                        let packet = self.atm.at_edge(l, packet, self.clock.now);
                        self.packet_arrives(packet, self.clock.now);
                    }
                }
                AtEnd::Delivered => {}
            },
        }
        let ends = &mut self.ends;
        self.atm
            .hand_on_quiet(&mut self.agenda, &mut |c: &Cell, at| {
                ends.deliver_quiet(c, at)
            });
    }

    pub(super) fn on_ses_send(&mut self, v: VcId) {
        let now = self.clock.now;
        if let Some(mut cell) = self.ends.ses_send(v, now) {
            // A data cell is born when its SES sends it: its wait in the
            // SES's queue is the source's, not the network's.
            if !is_rm(&cell) {
                cell.set_birth(now);
            }
            let first = self.atm.first_link(v);
            self.cell_to_port(first, cell);
            self.ends.wake_ses(v, now, &mut self.agenda);
        }
    }

    // --- packets ----------------------------------------------------------

    /// `packet` reaches the port of IP link `l` at `at` (now, or later for a
    /// port told early), on through the eager ports after it, to an eager
    /// end host if it can.
    #[inline]
    pub(super) fn ip_port_arrive(&mut self, l: IpLinkIx, packet: Packet, at: Time) {
        let (now, until) = (self.clock.now, self.clock.until);
        let tcp = &self.tcp;
        if let Some((packet, far)) =
            self.ip
                .forward(l, packet, at, now, until, &mut self.agenda, |p, far| {
                    tcp.takes_early(p, far)
                })
        {
            // The end host takes the packet at `far`, now; what it sends in
            // answer goes on until it meets an event (the fast-path plan
            // makes sure it does).
            self.packet_arrives(packet, far);
        }
    }

    pub(super) fn on_packet_arrival(&mut self, l: IpLinkIx) {
        let now = self.clock.now;
        match self.ip.link_arrival(l, &mut self.agenda) {
            PacketArrived::Onward(next, packet) => {
                if let AckFate::Pass(packet) = self.ip.at_router(l, packet, now, &mut self.agenda) {
                    self.ip_port_arrive(next, packet, now);
                }
            }
            PacketArrived::End(packet) => {
                self.ip.note_delivered();
                self.packet_arrives(packet, now);
            }
        }
    }

    pub(super) fn on_rate_interval(&mut self, l: IpLinkIx) {
        self.ip
            .end_rate_interval(l, self.clock.now, &mut self.agenda);
    }

    pub(super) fn on_atm_rate_interval(&mut self, l: AtmLinkIx) {
        self.atm
            .end_rate_interval(l, self.clock.now, &mut self.agenda);
    }

    pub(super) fn on_ack_release(&mut self, b: u32) {
        let now = self.clock.now;
        if let Some((next, packet)) = self.ip.release_ack(b, now, &mut self.agenda) {
            self.ip_port_arrive(next, packet, now);
        }
    }

    // --- TCP --------------------------------------------------------------

    /// A packet reaches the host at the end of its path at `at`: now, or
    /// later for an eager end, which takes it as soon as its arrival is
    /// known.
    fn packet_arrives(&mut self, packet: Packet, at: Time) {
        if packet.external {
            // A real host's datagram: handed back to the emulation.
            self.external.delivered(&packet, at);
            return;
        }
        self.tcp.check_checksum(&packet);
        let f = FlowId::new(packet.flow);
        if packet.is_data {
            let now = self.clock.now;
            if let Some(ack) = self.tcp.data_arrives(f, packet, at, now, &mut self.agenda) {
                self.send_packet(f, ack, at);
            }
        } else {
            self.tcp.ack_arrives(f, packet, at);
            self.pump(f, at);
        }
    }

    /// Transmits what flow `f`'s sender's window allows at `at` (now, or
    /// later for an eager sender), and keeps its timer.
    fn pump(&mut self, f: FlowId, at: Time) {
        while let Some(packet) = self.tcp.next_segment(f, at) {
            self.send_packet(f, packet, at);
        }
        self.tcp.arm_sender(f, &mut self.agenda);
    }

    /// Sends `packet` of flow `f` along its data or ACK path at `at` (now,
    /// or later for an eager end, which is over IP).
    #[inline(always)]
    pub(super) fn send_packet(&mut self, f: FlowId, packet: Packet, at: Time) {
        match self.tcp.route(f) {
            FlowRoute::Atm { data_vc, ack_vc } => {
                debug_assert_eq!(at, self.clock.now, "an eager end over ATM");
                let vc = if packet.is_data { data_vc } else { ack_vc };
                let cells = cells_per_datagram(packet.ip_bytes()) as u16;
                self.send_frame(vc, cells, Some(packet));
            }
            FlowRoute::Ip => {
                let first = self.ip.send(&packet);
                self.ip_port_arrive(first, packet, at);
            }
        }
    }

    pub(super) fn on_flow_start(&mut self, f: FlowId) {
        if self.tcp.start(f) {
            self.pump(f, self.clock.now);
        }
    }

    pub(super) fn on_rx_done(&mut self, f: FlowId) {
        let now = self.clock.now;
        if let Some(ack) = self.tcp.rx_done(f, now, &mut self.agenda) {
            self.send_packet(f, ack, now);
        }
    }

    pub(super) fn on_flow_timer(&mut self, f: FlowId) {
        let now = self.clock.now;
        if !self.tcp.timer_due(f, now) {
            return; // superseded by an earlier one
        }
        if self.tcp.sender_deadline(f, now) {
            self.pump(f, now);
        }
        if let Some(ack) = self.tcp.delayed_ack(f, now) {
            self.send_packet(f, ack, now);
        }
        self.tcp.rearm(f, &mut self.agenda);
    }

    pub(super) fn on_tcp_tick(&mut self, g: u32) {
        let now = self.clock.now;
        let n = self.tcp.tick(g, now, &mut self.agenda);
        for k in 0..n {
            if let Some(f) = self.tcp.tick_member(g, k, now) {
                self.pump(f, now);
            }
        }
    }

    // --- probes -----------------------------------------------------------

    pub(super) fn on_probe(&mut self) {
        let now = self.clock.now;
        let next = now + self.probes.period();
        self.clock.next_tick = if next <= self.clock.duration {
            self.agenda.push(next, Event::ProbeTick);
            next
        } else {
            Time::MAX
        };
        // A probe sees the state before the arrivals of its instant.
        self.drain_lazy(now, false);
        self.probes.sample(
            now,
            next,
            &mut self.atm,
            &self.ip,
            &self.ends,
            &mut self.tcp,
        );
        self.raise_horizon();
    }
}
