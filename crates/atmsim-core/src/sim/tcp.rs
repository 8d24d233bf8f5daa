//! TCP flows: segments and ACKs in and out of the hosts, timers.

use super::*;

impl Simulation {
    /// A packet reaches the host at the end of its path at `at`: now, or
    /// later for an eager end (`build::eager_receivers`, `eager_senders`),
    /// which takes it as soon as its arrival is known.
    pub(super) fn packet_arrives(&mut self, packet: Packet, at: Time) {
        if !packet.checksum_ok() {
            self.bad_checksums += 1;
        }
        let f = packet.flow as usize;
        if packet.is_data {
            let fl = &mut self.flows[f];
            if fl.processing_ps == 0 {
                self.receive_segment(f, packet, at);
            } else {
                debug_assert_eq!(at, self.now, "an eager receiver with processing time");
                fl.rx_queue.push_back(packet);
                if fl.rx_queue.len() == 1 {
                    let d = self.processing_delay(f);
                    self.queue.push(self.now + d, Event::RxDone(f as u32));
                }
            }
        } else {
            let (period, end) = (self.probe_period, self.duration);
            let fl = &mut self.flows[f];
            if fl.probe_next != 0 {
                // A probed sender moving past probe ticks keeps its samples
                // for them (its state until `at`); a tick at `at` itself
                // comes first (packet arrivals follow the other events of
                // their time). Only an eager sender can be behind a tick.
                while fl.probe_next <= at && fl.probe_next <= end {
                    let sample = flow_sample(&fl.sender);
                    fl.probe_held.push_back((fl.probe_next, sample));
                    fl.probe_next += period;
                }
            }
            let (blocks, n) = fl.sack.take(&packet);
            fl.sender.on_ack(at, packet.ack, packet.wnd, &blocks[..n]);
            self.pump_at(f, at);
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
        self.receive_segment(f, packet, self.now);
    }

    /// Flow `f`'s receiver takes data segment `packet` at `at`.
    pub(super) fn receive_segment(&mut self, f: usize, packet: Packet, at: Time) {
        match self.flows[f]
            .receiver
            .on_segment(at, packet.seq, packet.len)
        {
            AckPlan::Now => self.send_ack(f, at),
            AckPlan::At(t) => self.ensure_timer(f, t),
        }
    }

    /// Flow `f`'s receiver sends an ACK at `at`.
    pub(super) fn send_ack(&mut self, f: usize, at: Time) {
        let fl = &mut self.flows[f];
        let r = &fl.receiver;
        let mut packet = Packet::ack(f as u32, 0, r.rcv_nxt, fl.wnd_field);
        fl.sack.attach(&mut packet, r.sack_blocks());
        self.send_packet(f, packet, at);
    }

    /// Transmits what the sender's window allows, and keeps its timer.
    pub(super) fn pump(&mut self, f: usize) {
        self.pump_at(f, self.now);
    }

    /// `pump` at time `now` (later than the simulation's for an eager
    /// sender).
    pub(super) fn pump_at(&mut self, f: usize, now: Time) {
        while let Some(seg) = self.flows[f].sender.next_segment(now) {
            self.send_packet(f, Packet::data(f as u32, seg.seq, seg.len), now);
        }
        if let Some(d) = self.flows[f].sender.deadline() {
            self.ensure_timer(f, d);
        }
    }

    /// Sends `packet` of flow `f` along its data or ACK path at `at` (now,
    /// or later for an eager end, which is over IP).
    #[inline(always)]
    pub(super) fn send_packet(&mut self, f: usize, packet: Packet, at: Time) {
        match &self.flows[f].route {
            FlowRoute::Atm { data_vc, ack_vc } => {
                debug_assert_eq!(at, self.now, "an eager end over ATM");
                let vc = if packet.is_data { *data_vc } else { *ack_vc };
                let cells = cells_per_datagram(packet.ip_bytes()) as u16;
                self.send_frame(vc, cells, Some(packet));
            }
            FlowRoute::Ip => {
                let first = self.ip_route_at(&packet, packet.hop) & !EAGER_LINK;
                self.packets.generated += 1;
                self.ip_port_arrive(first as usize, packet, at);
            }
        }
    }

    /// Makes sure a FlowTimer event comes at or before `t`.
    #[inline(always)]
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
            self.send_ack(f, now);
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
