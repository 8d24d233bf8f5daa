//! The hosts of the TCP connections: each flow's sender and receiver, their
//! timers (one global tick per coarse granularity, walking its flows as
//! BSD's slow timer does; one lazy event per flow for fine timers and
//! delayed ACKs) and the receiver's processing queue.
//!
//! Packets leave through the caller, which knows the flow's route (two VCs
//! or two IP paths); this part only says what to send and when.

use super::fast_paths::EagerEnds;
use crate::engine::{Event, EventQueue, RngStream, Time};
use crate::ids::{FlowId, VcId};
use crate::ip::{Packet, SackRing};
use crate::scenario::{Layer, Scenario};
use crate::stats::{ByteLedger, DelayStats, FlowSummary, RttSummary};
use crate::tcp::receiver::AckPlan;
use crate::tcp::{TcpReceiver, TcpSender, TimerMode, Variant};
use std::collections::VecDeque;

/// How a flow's packets travel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FlowRoute {
    /// Over ATM: data and ACKs each on their own VC.
    Atm {
        /// The VC carrying data.
        data_vc: VcId,
        /// The VC carrying ACKs.
        ack_vc: VcId,
    },
    /// Over IP: along the flow's paths in the IP fabric.
    Ip,
}

struct FlowState {
    name: String,
    sender: TcpSender,
    receiver: TcpReceiver,
    route: FlowRoute,
    processing_ps: Time,
    jitter_ps: Time,
    rng: RngStream,
    rx_queue: VecDeque<Packet>,
    /// The SACK blocks of the flow's ACKs on their way.
    sack: SackRing,
    /// Time of the pending FlowTimer event, if any.
    timer_at: Option<Time>,
    started: bool,
    /// Its two ends are real hosts (an emulation, `Simulation::set_external`):
    /// the model's sender never starts, and the datagrams on its paths are
    /// the real hosts'.
    external: bool,
    /// Which of its ends take packets as soon as their arrival is known (a
    /// fast path, see `fast_paths`).
    eager: EagerEnds,
    /// For a probed flow, the next probe tick it has no sample for (0 when
    /// the flow is not probed).
    probe_next: Time,
    /// Samples a sender kept for probe ticks it moved past: (tick,
    /// `flow_sample`).
    probe_held: VecDeque<(Time, [f64; 4])>,
    /// With `probes.delay`: the delay of the flow's data segments that
    /// reached the receiving host, from the sender's hand-over to the first
    /// link or VC (the time each carries, [`Packet::sent_at`]) to their
    /// arrival whole (after AAL5 reassembly over ATM).
    delay: Option<Box<DelayStats>>,
}

/// What the flow probes record of a sender: cwnd, usable window, highest
/// byte sent + 1, smoothed RTT.
fn flow_sample(s: &TcpSender) -> [f64; 4] {
    [s.s.cwnd, s.window(), s.s.snd_max as f64, s.rtt.srtt_s()]
}

impl FlowState {
    /// The receiver's processing time for the next segment.
    fn processing_delay(&mut self) -> Time {
        if self.jitter_ps == 0 {
            return self.processing_ps;
        }
        let lo = self.processing_ps - self.jitter_ps;
        let hi = self.processing_ps + self.jitter_ps;
        self.rng.int_between(lo, hi)
    }

    /// The receiver (of flow `f`) takes data segment `packet` at `at`: the
    /// ACK to send at once, if any.
    #[inline]
    fn receive_segment(
        &mut self,
        f: FlowId,
        packet: Packet,
        at: Time,
        agenda: &mut EventQueue,
    ) -> Option<Packet> {
        match self.receiver.on_segment(at, packet.seq, packet.len) {
            AckPlan::Now => Some(self.ack(f)),
            AckPlan::At(t) => {
                self.ensure_timer(f, t, agenda);
                None
            }
        }
    }

    /// The ACK the receiver (of flow `f`) sends now.
    #[inline(always)]
    fn ack(&mut self, f: FlowId) -> Packet {
        let r = &self.receiver;
        let mut packet = Packet::ack(f.get(), 0, r.rcv_nxt, r.window_field());
        self.sack.attach(&mut packet, r.sack_blocks());
        packet
    }

    /// Makes sure a FlowTimer event of this flow (`f`) comes at or before `t`.
    #[inline(always)]
    fn ensure_timer(&mut self, f: FlowId, t: Time, agenda: &mut EventQueue) {
        if self.timer_at.is_none_or(|at| t < at) {
            self.timer_at = Some(t);
            agenda.push(t, Event::FlowTimer(f));
        }
    }
}

/// The TCP connections of a network.
pub(super) struct TcpHosts {
    flows: Vec<FlowState>,
    /// Coarse timers: (tick, the flows on it), one global event per tick.
    tick_groups: Vec<(Time, Vec<FlowId>)>,
    /// Packets whose TCP checksum failed at the receiving host (must stay 0).
    bad_checksums: u64,
    probe_period: Time,
    duration: Time,
    /// Delay statistics are on (`probes.delay`): each flow has its delay
    /// record.
    delays: bool,
}

impl TcpHosts {
    /// The scenario's flows, their start and tick events scheduled on
    /// `agenda`; `eager_rx` / `eager_tx` are the fast-path plan's ends.
    pub(super) fn new(
        sc: &Scenario,
        eager_rx: &[bool],
        eager_tx: &[bool],
        agenda: &mut EventQueue,
    ) -> Self {
        let mut flows = Vec::with_capacity(sc.flows.len());
        let mut tick_groups: Vec<(Time, Vec<FlowId>)> = Vec::new();
        let probe_period = sc.probes.period_ps;
        for (f, fl) in sc.flows.iter().enumerate() {
            let route = match fl.layer {
                Layer::Atm => FlowRoute::Atm {
                    data_vc: VcId::new(fl.data_vc.unwrap_or_default()),
                    ack_vc: VcId::new(fl.ack_vc.unwrap_or_default()),
                },
                Layer::Ip => FlowRoute::Ip,
            };
            if let TimerMode::Coarse { tick_ps } = fl.tcp.timer {
                match tick_groups.iter_mut().find(|(g, _)| *g == tick_ps) {
                    Some((_, members)) => members.push(FlowId::from_index(f)),
                    None => tick_groups.push((tick_ps, vec![FlowId::from_index(f)])),
                }
            }
            flows.push(FlowState {
                name: fl.name.clone(),
                sender: TcpSender::new(&fl.tcp),
                receiver: TcpReceiver::new(
                    fl.tcp.variant == Variant::Sack,
                    fl.tcp.max_sack_blocks,
                    fl.tcp.delayed_ack_ps,
                )
                .with_buffer(fl.tcp.rcv_window_bytes, fl.tcp.window_scale),
                route,
                processing_ps: fl.processing_ps,
                jitter_ps: fl.processing_jitter_ps,
                rng: RngStream::new(sc.seed, super::STREAM_FLOWS + f as u64),
                rx_queue: VecDeque::new(),
                sack: SackRing::default(),
                timer_at: None,
                started: false,
                external: false,
                eager: EagerEnds::new(eager_rx[f], eager_tx[f]),
                probe_next: if sc.probes.any() && sc.probes.flows.contains(&(f as u32)) {
                    probe_period
                } else {
                    0
                },
                probe_held: VecDeque::new(),
                delay: sc.probes.delay.then(Box::default),
            });
            agenda.push(fl.start_ps, Event::FlowStart(FlowId::from_index(f)));
        }
        for (g, (tick, _)) in tick_groups.iter().enumerate() {
            agenda.push(*tick, Event::TcpTick(g as u32));
        }
        TcpHosts {
            flows,
            tick_groups,
            bad_checksums: 0,
            probe_period,
            duration: sc.duration_ps,
            delays: sc.probes.delay,
        }
    }

    /// Flow `f`'s route.
    #[inline]
    pub(super) fn route(&self, f: FlowId) -> FlowRoute {
        self.flows[f.index()].route
    }

    /// Test hook: flow `f`'s receiver (to stop its application reading).
    #[cfg(test)]
    pub(super) fn receiver_mut(&mut self, f: FlowId) -> &mut TcpReceiver {
        &mut self.flows[f.index()].receiver
    }

    /// Flow `f` starts sending; false (nothing starts) when its ends are
    /// real hosts.
    pub(super) fn start(&mut self, f: FlowId) -> bool {
        let fl = &mut self.flows[f.index()];
        fl.started = !fl.external;
        fl.started
    }

    /// Flow `f`'s ends become real hosts: its model sender never starts.
    pub(super) fn set_external(&mut self, f: FlowId) {
        self.flows[f.index()].external = true;
    }

    /// True when flow `f`'s ends are real hosts.
    pub(super) fn is_external(&self, f: FlowId) -> bool {
        self.flows[f.index()].external
    }

    /// Number of flows.
    pub(super) fn len(&self) -> usize {
        self.flows.len()
    }

    /// Counts a packet whose checksum fails at the host it reaches.
    #[inline]
    pub(super) fn check_checksum(&mut self, packet: &Packet) {
        if !packet.checksum_ok() {
            self.bad_checksums += 1;
        }
    }

    /// Whether the end host of `packet`'s path takes it at `far`, as soon as
    /// its arrival is known (the fast paths' eager ends): a data segment if
    /// the flow's receiver is eager; an ACK if its sender is and its timer
    /// (retransmission or persist) does not expire before `far`.
    #[inline]
    pub(super) fn takes_early(&self, packet: &Packet, far: Time) -> bool {
        let fl = &self.flows[packet.flow as usize];
        fl.eager.take(packet, far, || fl.sender.deadline())
    }

    /// Data segment `packet` reaches flow `f`'s receiving host at `at` (now,
    /// or later for an eager receiver); returns the ACK to send at `at`, if
    /// one goes at once.
    #[inline]
    pub(super) fn data_arrives(
        &mut self,
        f: FlowId,
        packet: Packet,
        at: Time,
        now: Time,
        agenda: &mut EventQueue,
    ) -> Option<Packet> {
        if self.delays {
            self.segment_arrived(f, &packet, at);
        }
        let fl = &mut self.flows[f.index()];
        if fl.processing_ps == 0 {
            return fl.receive_segment(f, packet, at, agenda);
        }
        debug_assert_eq!(at, now, "an eager receiver with processing time");
        fl.rx_queue.push_back(packet);
        if fl.rx_queue.len() == 1 {
            let d = fl.processing_delay();
            agenda.push(now + d, Event::RxDone(f));
        }
        None
    }

    /// Flow `f`'s receiver finished processing a segment at `now`: it takes
    /// the segment; returns the ACK to send now, if any.
    pub(super) fn rx_done(
        &mut self,
        f: FlowId,
        now: Time,
        agenda: &mut EventQueue,
    ) -> Option<Packet> {
        let fl = &mut self.flows[f.index()];
        let packet = fl.rx_queue.pop_front().expect("processing with no packet");
        if !fl.rx_queue.is_empty() {
            let d = fl.processing_delay();
            agenda.push(now + d, Event::RxDone(f));
        }
        fl.receive_segment(f, packet, now, agenda)
    }

    /// ACK `packet` reaches flow `f`'s sender at `at` (now, or later for an
    /// eager sender). The caller then lets the sender send (`next_segment`).
    #[inline]
    pub(super) fn ack_arrives(&mut self, f: FlowId, packet: Packet, at: Time) {
        let (period, end) = (self.probe_period, self.duration);
        let fl = &mut self.flows[f.index()];
        if fl.probe_next != 0 {
            // A probed sender moving past probe ticks keeps its samples for
            // them (its state until `at`); a tick at `at` itself comes first
            // (packet arrivals follow the other events of their time). Only
            // an eager sender can be more than one instant behind a tick.
            while fl.probe_next <= at && fl.probe_next <= end {
                let sample = flow_sample(&fl.sender);
                fl.probe_held.push_back((fl.probe_next, sample));
                fl.probe_next += period;
            }
        }
        let (blocks, n) = fl.sack.take(&packet);
        fl.sender.on_ack(at, packet.ack, packet.wnd, &blocks[..n]);
    }

    /// The next segment flow `f`'s sender may transmit at `now`, as a packet.
    #[inline]
    pub(super) fn next_segment(&mut self, f: FlowId, now: Time) -> Option<Packet> {
        let seg = self.flows[f.index()].sender.next_segment(now)?;
        Some(Packet::data_at(f.get(), seg.seq, seg.len, now))
    }

    /// With delay statistics on: flow `f`'s data segment `p` reached its
    /// receiving host at `at`.
    #[cold]
    #[inline(never)]
    fn segment_arrived(&mut self, f: FlowId, p: &Packet, at: Time) {
        if let Some(d) = &mut self.flows[f.index()].delay {
            d.add(at - p.sent_at());
        }
    }

    /// Makes sure flow `f`'s sender has its timer event, after it sent.
    #[inline]
    pub(super) fn arm_sender(&mut self, f: FlowId, agenda: &mut EventQueue) {
        let fl = &mut self.flows[f.index()];
        if let Some(d) = fl.sender.deadline() {
            fl.ensure_timer(f, d, agenda);
        }
    }

    /// Flow `f`'s timer event at `now`: false for a superseded one (an
    /// earlier event took its place), else it is consumed.
    pub(super) fn timer_due(&mut self, f: FlowId, now: Time) -> bool {
        let fl = &mut self.flows[f.index()];
        if fl.timer_at != Some(now) {
            return false;
        }
        fl.timer_at = None;
        true
    }

    /// Flow `f`'s fine retransmission deadline at `now`: true if the sender
    /// timed out and may send.
    pub(super) fn sender_deadline(&mut self, f: FlowId, now: Time) -> bool {
        self.flows[f.index()].sender.on_deadline(now)
    }

    /// Flow `f`'s delayed-ACK deadline at `now`: the ACK to send, if due.
    pub(super) fn delayed_ack(&mut self, f: FlowId, now: Time) -> Option<Packet> {
        let fl = &mut self.flows[f.index()];
        fl.receiver.on_delack_timer(now).then(|| fl.ack(f))
    }

    /// Re-arms flow `f`'s timer for the earlier of its deadlines.
    pub(super) fn rearm(&mut self, f: FlowId, agenda: &mut EventQueue) {
        let fl = &mut self.flows[f.index()];
        let next = [fl.sender.deadline(), fl.receiver.delack_deadline]
            .into_iter()
            .flatten()
            .min();
        if let Some(t) = next {
            fl.ensure_timer(f, t, agenda);
        }
    }

    /// Coarse tick group `g` ticks at `now`: its next tick is scheduled;
    /// returns the number of flows to walk (`tick_member`).
    pub(super) fn tick(&mut self, g: u32, now: Time, agenda: &mut EventQueue) -> usize {
        let (tick, ref members) = self.tick_groups[g as usize];
        agenda.push(now + tick, Event::TcpTick(g));
        members.len()
    }

    /// The `k`-th flow of tick group `g` takes the tick at `now`: its flow
    /// index if its sender timed out and may send.
    pub(super) fn tick_member(&mut self, g: u32, k: usize, now: Time) -> Option<FlowId> {
        let f = self.tick_groups[g as usize].1[k];
        let fl = &mut self.flows[f.index()];
        (fl.started && fl.sender.on_tick(now)).then_some(f)
    }

    /// What a probe at `now` records of flow `f`'s sender: the sample it
    /// kept for this tick if it moved past it, else its state now.
    pub(super) fn probe_sample(&mut self, f: FlowId, now: Time, next_tick: Time) -> [f64; 4] {
        let fl = &mut self.flows[f.index()];
        let v = match fl.probe_held.front() {
            Some(&(tick, v)) if tick == now => {
                fl.probe_held.pop_front();
                v
            }
            _ => flow_sample(&fl.sender),
        };
        fl.probe_next = fl.probe_next.max(next_tick);
        v
    }

    /// Payload bytes in the receivers' processing queues.
    pub(super) fn bytes_in_processing(&self) -> u64 {
        self.flows
            .iter()
            .flat_map(|fl| fl.rx_queue.iter())
            .map(|p| p.len as u64)
            .sum()
    }

    /// Packets whose TCP checksum failed at the receiving host.
    pub(super) fn bad_checksums(&self) -> u64 {
        self.bad_checksums
    }

    /// The flows' summaries over `t_s` seconds, adding the senders' and
    /// receivers' terms to the byte ledger.
    pub(super) fn report(&self, t_s: f64, b: &mut ByteLedger) -> Vec<FlowSummary> {
        let mut flows = Vec::with_capacity(self.flows.len());
        for fl in &self.flows {
            let s = &fl.sender;
            let r = &fl.receiver;
            b.sent += s.bytes_sent;
            b.sent_once += s.bytes_sent_once;
            b.retransmitted += s.bytes_retransmitted;
            b.delivered += r.bytes_delivered;
            b.duplicates += r.bytes_duplicate;
            b.held_out_of_order += r.held_bytes();
            b.dropped_beyond_window += r.bytes_beyond_window;
            flows.push(FlowSummary {
                name: fl.name.clone(),
                variant: s.variant(),
                goodput_mbps: if t_s > 0.0 {
                    r.bytes_delivered as f64 * 8.0 / t_s / 1e6
                } else {
                    0.0
                },
                bytes_delivered: r.bytes_delivered,
                bytes_sent: s.bytes_sent,
                bytes_sent_once: s.bytes_sent_once,
                bytes_retransmitted: s.bytes_retransmitted,
                bytes_duplicate: r.bytes_duplicate,
                segments_sent: s.segments_sent,
                timeouts: s.timeouts,
                fast_retransmits: s.s.fast_retransmits,
                persist_expiries: s.persist_expiries,
                window_probes: s.window_probes,
                zero_window_acks: s.zero_window_acks,
                final_cwnd_bytes: s.s.cwnd,
                final_ssthresh_bytes: s.s.ssthresh,
                srtt_s: s.rtt.srtt_s(),
                rto_s: crate::engine::time::ps_to_s(s.rtt.rto_ps()),
                completed_at_s: s.completed_at.map(crate::engine::time::ps_to_s),
                rate_control: None,
                delay: fl.delay.as_ref().and_then(|d| d.summary()),
                rtt: fl.delay.as_ref().and_then(|_| rtt_summary(s)),
            });
        }
        flows
    }
}

/// The RTT samples sender `s`'s estimator took, in seconds; none without.
fn rtt_summary(s: &TcpSender) -> Option<RttSummary> {
    let t = s.rtt.taken();
    (t.count > 0).then(|| RttSummary {
        count: t.count,
        mean_s: t.sum_ps as f64 / t.count as f64 / 1e12,
        min_s: crate::engine::time::ps_to_s(t.min_ps),
        max_s: crate::engine::time::ps_to_s(t.max_ps),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::testing::ip_line;
    use crate::tcp::TimerMode;

    const MS: Time = 1_000_000_000;

    fn hosts(extra: &str, agenda: &mut EventQueue) -> TcpHosts {
        let sc = ip_line(10, false, extra);
        TcpHosts::new(&sc, &[false], &[false], agenda)
    }

    #[test]
    fn a_flow_starts_sends_its_first_window_and_arms_its_timer() {
        let mut agenda = EventQueue::new();
        let mut tcp = hosts("", &mut agenda);
        assert_eq!(
            agenda.next_until(Time::MAX),
            Some((0, Event::FlowStart(FlowId::new(0))))
        );
        tcp.start(FlowId::new(0));
        // Initial window: one segment.
        let first = tcp.next_segment(FlowId::new(0), 0).expect("a segment");
        assert_eq!((first.seq, first.len, first.is_data), (0, 960, true));
        assert_eq!(tcp.next_segment(FlowId::new(0), 0), None);
        tcp.arm_sender(FlowId::new(0), &mut agenda);
        // The retransmission timer: the initial RTO, 3 s.
        assert_eq!(
            agenda.next_until(Time::MAX),
            Some((3000 * MS, Event::FlowTimer(FlowId::new(0))))
        );
        assert!(tcp.timer_due(FlowId::new(0), 3000 * MS));
        // A second event at the same time would be stale.
        assert!(!tcp.timer_due(FlowId::new(0), 3000 * MS));
    }

    #[test]
    fn a_receiver_acks_at_once_or_after_its_processing_time() {
        let mut agenda = EventQueue::new();
        let mut tcp = hosts("", &mut agenda);
        let ack = tcp.data_arrives(FlowId::new(0), Packet::data(0, 0, 960), MS, MS, &mut agenda);
        assert_eq!(ack.map(|a| (a.ack, a.is_data)), Some((960, false)));

        let mut agenda = EventQueue::new();
        let mut tcp = hosts(r#","processing_ps":5000000"#, &mut agenda);
        let _ = agenda.next_until(Time::MAX); // FlowStart
        assert_eq!(
            tcp.data_arrives(FlowId::new(0), Packet::data(0, 0, 960), MS, MS, &mut agenda),
            None
        );
        assert_eq!(
            tcp.data_arrives(
                FlowId::new(0),
                Packet::data(0, 960, 960),
                MS,
                MS,
                &mut agenda
            ),
            None
        );
        // One processing event at a time: 5 us after the arrival.
        assert_eq!(
            agenda.next_until(Time::MAX),
            Some((MS + 5_000_000, Event::RxDone(FlowId::new(0))))
        );
        let ack = tcp.rx_done(FlowId::new(0), MS + 5_000_000, &mut agenda);
        assert_eq!(ack.map(|a| a.ack), Some(960));
        assert_eq!(tcp.bytes_in_processing(), 960);
        assert_eq!(
            agenda.next_until(Time::MAX),
            Some((MS + 10_000_000, Event::RxDone(FlowId::new(0))))
        );
        assert_eq!(
            tcp.rx_done(FlowId::new(0), MS + 10_000_000, &mut agenda)
                .map(|a| a.ack),
            Some(1920)
        );
    }

    #[test]
    fn an_ack_opens_the_window() {
        let mut agenda = EventQueue::new();
        let mut tcp = hosts("", &mut agenda);
        tcp.start(FlowId::new(0));
        let first = tcp.next_segment(FlowId::new(0), 0).unwrap();
        let ack = Packet::ack(0, 0, first.seq + first.len as u64, 65535);
        tcp.ack_arrives(FlowId::new(0), ack, 4 * MS);
        // Slow start: two segments now.
        assert!(tcp.next_segment(FlowId::new(0), 4 * MS).is_some());
        assert!(tcp.next_segment(FlowId::new(0), 4 * MS).is_some());
        assert_eq!(tcp.next_segment(FlowId::new(0), 4 * MS), None);
    }

    #[test]
    fn a_closed_window_is_probed_until_it_opens_and_every_byte_balances() {
        // End to end over the IP line (8 Mb/s, MSS 960, a 65535-byte
        // buffer): the receiving application stops reading at the start
        // (a test hook), so the window closes once the buffer is full; the
        // sender's persist timer forces out what the last 255 bytes of
        // window allow, then probes the zero window with one byte, which
        // the receiver drops and answers (RFC 9293 section 3.8.6.1). The
        // application reads again at 22 s, with no window update: the next
        // probe finds the window open. With the fine timer and the coarse
        // one, the fast paths on and off (the same results).
        let mut summaries = vec![];
        for coarse in [false, true] {
            for fast_paths in [true, false] {
                let mut sc = ip_line(100, fast_paths, "");
                sc.duration_ps = 40_000 * MS;
                if coarse {
                    sc.flows[0].tcp.timer = TimerMode::Coarse { tick_ps: 100 * MS };
                }
                let mut sim = crate::sim::Simulation::new(&sc).unwrap();
                sim.tcp.receiver_mut(FlowId::new(0)).pause_reading();
                sim.advance(22_000 * MS);
                let (s, r) = (&sim.tcp.flows[0].sender, &sim.tcp.flows[0].receiver);
                // The buffer is full and nothing more was taken; each probe
                // byte was dropped beyond the window.
                assert_eq!(r.bytes_delivered, 65_535);
                assert_eq!(r.window_field(), 0);
                // Expiries at about 5, 10, 15 and 20 s: the first forced the
                // 255 bytes left (65535 = 68 x 960 + 255), the others probed.
                assert_eq!(s.persist_expiries, 4, "coarse {coarse}");
                assert_eq!(s.window_probes, 3);
                assert_eq!(r.bytes_beyond_window, 3);
                // The ACK of the 255 bytes and the answer to every probe.
                assert_eq!(s.zero_window_acks, 4);
                assert_eq!(s.timeouts, 0);
                assert!(s.persisting());
                sim.tcp.receiver_mut(FlowId::new(0)).resume_reading();
                sim.run();
                let (summary, _) = sim.finish();
                assert!(summary.conservation.ok, "{:#?}", summary.conservation);
                let f = &summary.flows[0];
                // The probe at about 25 s finds the window open: the flow
                // runs at the line rate (8 Mb/s x 960 / 1000) for most of
                // the last 15 s.
                assert_eq!(f.window_probes, 4);
                assert!(f.bytes_delivered > 65_535 + 10_000_000, "{f:?}");
                // The three probes into the closed window were dropped; the
                // fourth was taken.
                let b = &summary.conservation.bytes;
                assert_eq!(b.dropped_beyond_window, 3);
                assert_eq!(b.sent, f.bytes_sent);
                summaries.push(serde_json::to_string(&summary.flows).unwrap());
            }
            assert_eq!(
                summaries[summaries.len() - 2],
                summaries[summaries.len() - 1]
            );
        }
    }
}
