//! TCP flows: segments and ACKs in and out of the hosts, timers.

use super::*;

impl Simulation {
    /// A packet reaches the host at the end of its path.
    pub(super) fn packet_arrives(&mut self, packet: Packet) {
        if !packet.checksum_ok() {
            self.bad_checksums += 1;
        }
        let f = packet.flow as usize;
        if packet.is_data {
            let fl = &mut self.flows[f];
            if fl.processing_ps == 0 {
                self.receive_segment(f, packet);
            } else {
                fl.rx_queue.push_back(packet);
                if fl.rx_queue.len() == 1 {
                    let d = self.processing_delay(f);
                    self.queue.push(self.now + d, Event::RxDone(f as u32));
                }
            }
        } else {
            let now = self.now;
            let (blocks, n) = packet.sack_blocks();
            self.flows[f]
                .sender
                .on_ack(now, packet.ack, packet.wnd, &blocks[..n]);
            self.pump(f);
        }
    }

    pub(super) fn processing_delay(&mut self, f: usize) -> Time {
        let fl = &mut self.flows[f];
        if fl.jitter_ps == 0 {
            return fl.processing_ps;
        }
        let lo = fl.processing_ps - fl.jitter_ps;
        let hi = fl.processing_ps + fl.jitter_ps;
        fl.rng.int_between(lo, hi)
    }

    pub(super) fn on_rx_done(&mut self, f: usize) {
        self.queue.pop();
        let packet = self.flows[f]
            .rx_queue
            .pop_front()
            .expect("processing with no packet");
        if !self.flows[f].rx_queue.is_empty() {
            let d = self.processing_delay(f);
            self.queue.push(self.now + d, Event::RxDone(f as u32));
        }
        self.receive_segment(f, packet);
    }

    pub(super) fn receive_segment(&mut self, f: usize, packet: Packet) {
        let now = self.now;
        match self.flows[f]
            .receiver
            .on_segment(now, packet.seq, packet.len)
        {
            AckPlan::Now => self.send_ack(f),
            AckPlan::At(t) => self.ensure_timer(f, t),
        }
    }

    pub(super) fn send_ack(&mut self, f: usize) {
        let packet = self.ack_packet(f);
        self.send_packet(f, packet);
    }

    /// The ACK flow `f`'s receiver sends now.
    pub(super) fn ack_packet(&self, f: usize) -> Packet {
        let fl = &self.flows[f];
        let r = &fl.receiver;
        Packet::ack(f as u32, 0, r.rcv_nxt, fl.wnd_field, r.sack_blocks())
    }

    /// Transmits what the sender's window allows, and keeps its timer.
    pub(super) fn pump(&mut self, f: usize) {
        self.pump_at(f, self.now);
    }

    /// `pump` at time `now` (later than the simulation's for an eager
    /// sender).
    pub(super) fn pump_at(&mut self, f: usize, now: Time) {
        while let Some(seg) = self.flows[f].sender.next_segment(now) {
            self.send_packet_at(f, Packet::data(f as u32, seg.seq, seg.len), now);
        }
        if let Some(d) = self.flows[f].sender.deadline() {
            self.ensure_timer(f, d);
        }
    }

    /// Sends `packet` of flow `f` along its data or ACK path.
    pub(super) fn send_packet(&mut self, f: usize, packet: Packet) {
        self.send_packet_at(f, packet, self.now);
    }

    /// `send_packet` at time `at` (later than the simulation's for an eager
    /// sender; over IP only, which `build::eager_senders` checks).
    pub(super) fn send_packet_at(&mut self, f: usize, packet: Packet, at: Time) {
        match &self.flows[f].route {
            FlowRoute::Atm { data_vc, ack_vc } => {
                let vc = if packet.is_data { *data_vc } else { *ack_vc };
                let cells = cells_per_datagram(packet.ip_bytes()) as u16;
                self.send_frame(vc, cells, Some(packet));
            }
            FlowRoute::Ip => {
                let first = self.ip_route_entry(&packet) & !EAGER_LINK;
                self.packets.generated += 1;
                self.ip_port_arrive(first as usize, packet, at);
            }
        }
    }

    /// Makes sure a FlowTimer event comes at or before `t`.
    pub(super) fn ensure_timer(&mut self, f: usize, t: Time) {
        let fl = &mut self.flows[f];
        if fl.timer_at.is_none_or(|at| t < at) {
            fl.timer_at = Some(t);
            self.queue.push(t, Event::FlowTimer(f as u32));
        }
    }

    pub(super) fn on_flow_timer(&mut self, f: usize) {
        self.queue.pop();
        let now = self.now;
        if self.flows[f].timer_at != Some(now) {
            return; // superseded by an earlier one
        }
        self.flows[f].timer_at = None;
        if self.flows[f].sender.on_deadline(now) {
            self.pump(f);
        }
        if self.flows[f].receiver.on_delack_timer(now) {
            self.send_ack(f);
        }
        let fl = &self.flows[f];
        let next = [fl.sender.deadline(), fl.receiver.delack_deadline]
            .into_iter()
            .flatten()
            .min();
        if let Some(t) = next {
            self.ensure_timer(f, t);
        }
    }

    pub(super) fn on_tcp_tick(&mut self, g: usize) {
        let now = self.now;
        let (tick, _) = self.tick_groups[g];
        self.queue.replace_top(now + tick, Event::TcpTick(g as u32));
        for k in 0..self.tick_groups[g].1.len() {
            let f = self.tick_groups[g].1[k] as usize;
            if self.flows[f].started && self.flows[f].sender.on_tick(now) {
                self.pump(f);
            }
        }
    }
}
