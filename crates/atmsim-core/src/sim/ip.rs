//! The IP fabric: packet links with their router output ports, the IP
//! paths of the flows, and the IP part of the conservation ledger.
//!
//! On the plain path a packet reaching a port at `now` is queued or dropped
//! there; the port computes when its transmission ends (Lindley's
//! recursion, see [`crate::ip::port`]) and the packet goes on the link with
//! its arrival time at the far end; a link schedules only its head's
//! arrival. Simultaneous packet arrivals go by link index, whenever they
//! were scheduled.
//!
//! The fast paths (see `fast_paths`) let some ports learn of arrivals before
//! they happen: a port fed by one upstream port takes its packets at once
//! (an *eager* port), a port fed by delayed links takes every arrival within
//! its look-ahead in one event (a *batch* port), and an eager end host takes
//! a packet as soon as its arrival is known. The ledger then places each
//! packet where it is at the end of the run from the recorded times
//! (`fast_paths/told_early.rs`).

use super::capture::Captures;
use super::fast_paths::told_early::{self, ToldEarly, Upstream};
use super::fast_paths::{IpFastPaths, Onward};
use super::ip_control::{AckFate, IpControl};
use crate::buffer::COMMON_DROP_REASONS;
use crate::engine::{Event, EventQueue, RngStream, Time, PS_PER_S};
use crate::ids::{FlowId, IpLinkIx};
use crate::ip::red::Red;
use crate::ip::{IpLimit, IpPort, Packet};
use crate::scenario::{LinkSpec, PolicySpec, Scenario};
use crate::stats::{Ledger, PortSummary};
use std::collections::VecDeque;

/// An IP link with its router output port and the packets on the wire.
struct IpHop {
    name: String,
    delay_ps: Time,
    port: IpPort,
    /// Packets on the link or still in its port, earliest first: (arrival
    /// at the far end, packet). Their arrival at this port is in the port's
    /// records while it matters (the ledger).
    in_flight: VecDeque<(Time, Packet)>,
    /// A capture watches the link.
    captured: bool,
}

/// The `route` entry after a path's last link.
pub(super) const ROUTE_END: IpLinkIx = IpLinkIx::new(u32::MAX);

/// Schedules the arrival of the packet that has just become the head of
/// the empty link `l`, at `far`: its own event, or its batch port's.
#[inline(always)]
fn schedule_arrival(
    fast: &mut IpFastPaths,
    l: IpLinkIx,
    far: Time,
    n_links: u32,
    agenda: &mut EventQueue,
) {
    match fast.batch_port_fed(l) {
        // Simultaneous packet arrivals go by link, whenever they were
        // scheduled (the fast paths schedule them early).
        None => agenda.push_ordered(far, Event::PacketArrival(l), l.get()),
        Some(b) => fast.schedule_batch(b, far, n_links, agenda),
    }
}

/// What reached the far end of an IP link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Arrived {
    /// The packet goes on into the port of this link.
    Onward(IpLinkIx, Packet),
    /// The packet reached its end host.
    End(Packet),
}

/// The IP links, router ports and IP paths of a network.
pub(super) struct IpFabric {
    hops: Vec<IpHop>,
    /// The IP flows' paths, flat: link indices, each path closed by ROUTE_END.
    route: Vec<IpLinkIx>,
    /// Per flow, where its ACK path [0] and data path [1] start in `route`.
    route_base: Vec<[u32; 2]>,
    fast: IpFastPaths,
    control: IpControl,
    /// Drops decided ahead of time by ports told of arrivals early.
    told: ToldEarly,
    /// The packet captures of its links.
    captures: Captures,
    /// Packets handed to the first port of their path.
    generated: u64,
    /// Packets that reached their end host.
    delivered: u64,
    /// TCP payload bytes of the packets dropped at router ports.
    bytes_dropped: u64,
    /// Real hosts' datagrams (an emulation) dropped at router ports.
    external_dropped: u64,
}

impl IpFabric {
    /// The fabric of the scenario's IP links `specs` (in order), with `local`
    /// mapping a scenario link index to the fabric's, and the fast paths'
    /// plan for its links.
    pub(super) fn new(
        sc: &Scenario,
        specs: Vec<(usize, &LinkSpec)>,
        local: &[u32],
        fast: IpFastPaths,
        agenda: &mut EventQueue,
    ) -> Self {
        let mut hops: Vec<IpHop> = specs
            .into_iter()
            .map(|(i, l)| {
                let limit = match (l.buffer_packets, l.buffer_bytes) {
                    (Some(n), _) => IpLimit::Packets(n),
                    (None, Some(b)) => IpLimit::Bytes(b),
                    (None, None) => IpLimit::Unlimited,
                };
                let red = match l.policy {
                    PolicySpec::Red {
                        min_th,
                        max_th,
                        w_q,
                        max_p,
                    } => Some(Red::new(min_th, max_th, w_q, max_p)),
                    _ => None,
                };
                // Stream id by scenario link index: adding an ATM link
                // elsewhere never changes an IP port's randomness.
                let rng = RngStream::new(sc.seed, super::STREAM_IP_PORTS + i as u64);
                IpHop {
                    name: l.name.clone(),
                    delay_ps: l.delay_ps,
                    port: {
                        let mut port = IpPort::new(l.bit_rate_bps, limit, red, rng);
                        port.horizon = sc.duration_ps;
                        port
                    },
                    in_flight: VecDeque::new(),
                    captured: false,
                }
            })
            .collect();
        let mut route = Vec::new();
        let mut route_base = Vec::with_capacity(sc.flows.len());
        for fl in &sc.flows {
            let mut bases = [0u32; 2];
            if fl.layer == crate::scenario::Layer::Ip {
                for (slot, path) in [&fl.ack_links, &fl.data_links].into_iter().enumerate() {
                    bases[slot] = route.len() as u32;
                    route.extend(path.iter().map(|&l| IpLinkIx::new(local[l as usize])));
                    route.push(ROUTE_END);
                }
            }
            route_base.push(bases);
        }
        let control = IpControl::new(sc, local, hops.len(), agenda);
        let captures = Captures::new(sc, local, hops.len());
        for (l, hop) in hops.iter_mut().enumerate() {
            hop.captured = captures.watches(IpLinkIx::from_index(l));
        }
        IpFabric {
            hops,
            route,
            route_base,
            fast,
            control,
            told: ToldEarly::default(),
            captures,
            generated: 0,
            delivered: 0,
            bytes_dropped: 0,
            external_dropped: 0,
        }
    }

    /// Number of links.
    pub(super) fn len(&self) -> usize {
        self.hops.len()
    }

    /// The fast paths' state.
    pub(super) fn fast_mut(&mut self) -> &mut IpFastPaths {
        &mut self.fast
    }

    /// Where the link `packet` is on sits in `route`.
    fn route_pos(&self, packet: &Packet) -> u32 {
        self.route_base[packet.flow as usize][packet.is_data as usize] + packet.hop as u32
    }

    /// The link at hop `hop` of `packet`'s path, or ROUTE_END past its last.
    #[inline]
    fn route_at(&self, packet: &Packet, hop: u8) -> IpLinkIx {
        let base = self.route_base[packet.flow as usize][packet.is_data as usize];
        self.route[base as usize + hop as usize]
    }

    /// A host hands `packet` to the first port of its path: the link.
    #[inline]
    pub(super) fn send(&mut self, packet: &Packet) -> IpLinkIx {
        self.generated += 1;
        self.route_at(packet, packet.hop)
    }

    /// Counts a packet that reached its end host.
    #[inline]
    pub(super) fn note_delivered(&mut self) {
        self.delivered += 1;
    }

    /// `packet` reaches the port of link `l` at `at` (now, or later for a
    /// port told early), and goes on through the eager ports after it.
    /// Through its path's last port, a packet whose end host `takes_early`
    /// (given the arrival) is returned to be handed to it now, counted as
    /// delivered; any other goes on the link.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn forward(
        &mut self,
        mut l: IpLinkIx,
        mut packet: Packet,
        mut at: Time,
        now: Time,
        until: Time,
        agenda: &mut EventQueue,
        takes_early: impl FnOnce(&Packet, Time) -> bool,
    ) -> Option<(Packet, Time)> {
        let n_links = self.hops.len() as u32;
        let IpFabric {
            hops,
            route,
            route_base,
            fast,
            control,
            delivered,
            captures,
            ..
        } = self;
        let has_control = control.any();
        let base = route_base[packet.flow as usize][packet.is_data as usize] as usize;
        loop {
            if has_control {
                control.count(l, &packet);
            }
            let h = &mut hops[l.index()];
            let Some(end) = h.port.arrive(at, now, &packet) else {
                self.drop(l, &packet, at, now);
                return None;
            };
            let far = end + h.delay_ps;
            if h.captured {
                let start = end - h.port.tx_time(packet.ip_bytes());
                captures.crossed(l, &packet, start, far);
            }
            let next = route[base + packet.hop as usize + 1];
            let was_empty = h.in_flight.is_empty();
            match fast.onward(next, was_empty, far, until) {
                Onward::Link => {}
                Onward::EagerPort => {
                    packet.hop += 1;
                    l = next;
                    at = far;
                    continue;
                }
                Onward::EarlyEnd => {
                    if takes_early(&packet, far) {
                        *delivered += 1;
                        return Some((packet, far));
                    }
                }
            }
            h.in_flight.push_back((far, packet));
            if was_empty {
                schedule_arrival(fast, l, far, n_links, agenda);
            }
            return None;
        }
    }

    /// Port `l`'s rate controller ends an averaging interval at `now`.
    pub(super) fn end_rate_interval(&mut self, l: IpLinkIx, now: Time, agenda: &mut EventQueue) {
        let queue = self.hops[l.index()].port.queue_bytes(now);
        self.control.end_interval(l, now, queue, agenda);
    }

    /// `packet` arrived over link `l` at `now`, at a router that may control
    /// its flow's ACKs: it goes on (perhaps rewritten) or waits in a bucket.
    #[inline]
    pub(super) fn at_router(
        &mut self,
        l: IpLinkIx,
        packet: Packet,
        now: Time,
        agenda: &mut EventQueue,
    ) -> AckFate {
        if packet.is_data || !self.control.any() {
            return AckFate::Pass(packet);
        }
        let queue_delay_ps = match self.control.queue_delay_port(l) {
            Some(p) => {
                // What a ping through the controlling port would wait there.
                let port = &self.hops[p.index()].port;
                let bits = port.queue_bytes(now) as f64 * 8.0;
                (bits / port.rate_bps * PS_PER_S as f64).round() as Time
            }
            None => 0,
        };
        self.control.on_ack(l, packet, now, queue_delay_ps, agenda)
    }

    /// Ack bucket `b` releases an ACK at `now`: the ACK and the link it goes
    /// on to, the next of its own path (the ACK's hop already counts the
    /// link it came over).
    pub(super) fn release_ack(
        &mut self,
        b: u32,
        now: Time,
        agenda: &mut EventQueue,
    ) -> Option<(IpLinkIx, Packet)> {
        let packet = self.control.release(b, now, agenda)?;
        Some((self.route_at(&packet, packet.hop), packet))
    }

    /// Flow `f`'s ends are real hosts with window scale `scale` and MSS
    /// `mss` (an emulation).
    pub(super) fn set_real_tcp(&mut self, f: FlowId, scale: u8, mss: u32) {
        self.control.set_real_tcp(f, scale, mss);
    }

    /// Flow `f`'s explicit rate (bits/s) and last written window (bytes).
    pub(super) fn control_sample(&self, f: FlowId) -> Option<(f64, f64)> {
        self.control.sample(f)
    }

    /// The head packet of link `l` reaches its far end; the next one's
    /// arrival is scheduled.
    pub(super) fn link_arrival(&mut self, l: IpLinkIx, agenda: &mut EventQueue) -> Arrived {
        let h = &mut self.hops[l.index()];
        let (_, mut packet) = h.in_flight.pop_front().expect("arrival on an empty link");
        if let Some(&(t, _)) = h.in_flight.front() {
            agenda.push_ordered(t, Event::PacketArrival(l), l.get());
        }
        packet.hop += 1;
        match self.route_at(&packet, packet.hop) {
            ROUTE_END => Arrived::End(packet),
            next => Arrived::Onward(next, packet),
        }
    }

    /// When the head packet of link `l` reaches its far end (Time::MAX if
    /// the link is empty).
    #[inline]
    pub(super) fn link_head(&self, l: IpLinkIx) -> Time {
        self.hops[l.index()]
            .in_flight
            .front()
            .map_or(Time::MAX, |e| e.0)
    }

    /// Takes the head packet of link `l` off the link (it has arrived, or a
    /// batch port takes it ahead): its arrival time, the packet at its next
    /// hop, and when the next head arrives.
    #[inline]
    pub(super) fn take_head(&mut self, l: IpLinkIx) -> (Time, Packet, Time) {
        let h = &mut self.hops[l.index()];
        let (far, mut packet) = h.in_flight.pop_front().expect("a head");
        let next = h.in_flight.front().map_or(Time::MAX, |e| e.0);
        packet.hop += 1;
        (far, packet, next)
    }

    /// The propagation delay of link `l`.
    pub(super) fn delay(&self, l: IpLinkIx) -> Time {
        self.hops[l.index()].delay_ps
    }

    /// The port of the link `packet` is on dropped it; it arrived at `at`.
    #[cold]
    fn drop(&mut self, l: IpLinkIx, packet: &Packet, at: Time, now: Time) {
        if self.captures.watches(l) {
            self.captures.dropped(l, packet, at);
        }
        // A real host's datagram is no TCP segment of the model: it is
        // counted apart, out of the byte ledger.
        if packet.external {
            self.external_dropped += 1;
        }
        let data_bytes = if packet.is_data && !packet.external {
            packet.len as u64
        } else {
            0
        };
        self.bytes_dropped += data_bytes;
        if at > now {
            let pos = self.route_pos(packet);
            self.told.drop_ahead(at, now, pos, data_bytes);
        }
    }

    /// Packets waiting at the port of link `l` at `now`, before the arrivals
    /// of that instant (what a probe at `now` sees).
    pub(super) fn queue_packets(&self, l: IpLinkIx, now: Time) -> usize {
        self.hops[l.index()].port.queue_len_before(now)
    }

    /// Transmission time the port of link `l` spent up to `now`, ps.
    pub(super) fn busy_ps(&self, l: IpLinkIx, now: Time) -> u128 {
        self.hops[l.index()].port.busy_ps(now)
    }

    /// The IP ports' summaries (by the fabric's link index) and the IP part
    /// of the ledger at `now`: the packet ledger's terms, and (returned) the
    /// TCP payload bytes dropped at routers and those in the IP path.
    /// Packets learned of ahead of time are placed where they are at `now`,
    /// from their recorded times.
    /// The captures' files and what each wrote (once, at the run's end).
    pub(super) fn take_captures(
        &mut self,
    ) -> (Vec<(String, Vec<u8>)>, Vec<crate::stats::CaptureSummary>) {
        self.captures.finish()
    }

    /// What the explicit-rate control did to flow `f` (None: not controlled).
    pub(super) fn flow_rate_summary(&self, f: FlowId) -> Option<crate::stats::FlowRateSummary> {
        self.control.flow_summary(f)
    }

    /// Real hosts' datagrams (an emulation): those dropped at router ports
    /// so far, and those on links, in ports or held in ack buckets now.
    pub(super) fn external_terms(&self) -> (u64, u64) {
        let in_network = (self.hops.iter())
            .flat_map(|h| h.in_flight.iter())
            .filter(|(_, pk)| pk.external)
            .count() as u64;
        (
            self.external_dropped,
            in_network + self.control.held_external(),
        )
    }

    pub(super) fn report(
        &mut self,
        now: Time,
        ledger: &mut Ledger,
    ) -> (Vec<PortSummary>, u64, u64) {
        let n = self.hops.len();
        let mut in_path = 0u64;
        for h in &self.hops {
            in_path += (h.in_flight.iter())
                .filter(|(_, pk)| pk.is_data && !pk.external)
                .map(|(_, pk)| pk.len as u64)
                .sum::<u64>();
        }
        // Each packet where it is: on its link or in its port, or (with
        // ports told early) further up its path.
        let in_flight = (self.hops.iter())
            .flat_map(|h| h.in_flight.iter())
            .map(|&(far, pk)| (far, self.route_pos(&pk) + 1));
        let placed = told_early::place(&*self, n, in_flight, &self.told, now);
        let told_early::Placement {
            in_port,
            on_link,
            future_in,
            future_drops,
            future_drop_bytes,
            misplaced,
        } = placed;
        if misplaced > 0 {
            ledger.problems.push(format!(
                "{misplaced} packets told ahead to a port have no place upstream at {now} ps"
            ));
        }
        let mut ports = Vec::with_capacity(n);
        for (l, h) in self.hops.iter_mut().enumerate() {
            h.port.settle(now);
            let p = &h.port;
            // Checked: a misplaced packet must show as a problem, not wrap.
            let arrived = p
                .packets_in()
                .checked_sub(future_in[l] + future_drops[l])
                .unwrap_or_else(|| {
                    ledger.problems.push(format!(
                        "IP port {}: more packets told ahead than offered",
                        h.name
                    ));
                    0
                });
            let dropped = p.dropped().saturating_sub(future_drops[l]);
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
            ports.push(PortSummary {
                name: h.name.clone(),
                layer: "ip",
                drops: COMMON_DROP_REASONS
                    .iter()
                    .map(|r| (r.0.to_string(), 0))
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
            });
        }
        ledger.packets.generated = self.generated;
        ledger.packets.delivered = self.delivered;
        ledger.packets.held_at_routers = self.control.held();
        // Drops still to come at the end are packets in the path.
        let dropped_bytes = self.bytes_dropped - future_drop_bytes;
        (ports, dropped_bytes, in_path + future_drop_bytes)
    }
}

impl Upstream for IpFabric {
    fn route(&self) -> &[IpLinkIx] {
        &self.route
    }

    fn delay(&self, l: IpLinkIx) -> Time {
        self.hops[l.index()].delay_ps
    }

    fn arrival_ending_at(&self, l: IpLinkIx, end: Time) -> Option<Time> {
        self.hops[l.index()].port.arrival_ending_at(end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::fast_paths::Plan;
    use crate::sim::testing::ip_line;

    const MS: Time = 1_000_000_000;

    fn fabric(sc: &Scenario) -> IpFabric {
        let plan = Plan::new(sc);
        let all: Vec<usize> = (0..sc.links.len()).collect();
        let local: Vec<u32> = (0..sc.links.len() as u32).collect();
        let fast = IpFastPaths::new(&plan, &all, &local);
        IpFabric::new(
            sc,
            sc.links.iter().enumerate().collect(),
            &local,
            fast,
            &mut EventQueue::new(),
        )
    }

    #[test]
    fn the_plain_path_queues_forwards_and_drops() {
        let sc = ip_line(1, false, "");
        let mut ip = fabric(&sc);
        let mut agenda = EventQueue::new();
        // Three segments of 1000 IP bytes at time 0 into a port holding one
        // waiting packet: two go (ending at 1 and 2 ms), the third is dropped.
        for k in 0..3u64 {
            let p = Packet::data(0, k * 960, 960);
            let first = ip.send(&p);
            assert_eq!(first, IpLinkIx::new(0));
            assert_eq!(
                ip.forward(first, p, 0, 0, Time::MAX, &mut agenda, |_, _| true),
                None
            );
        }
        // One event: the head of link 0, at 1 ms + 1 ms of delay.
        assert_eq!(agenda.len(), 1);
        assert_eq!(
            agenda.next_until(Time::MAX),
            Some((2 * MS, Event::PacketArrival(IpLinkIx::new(0))))
        );
        match ip.link_arrival(IpLinkIx::new(0), &mut agenda) {
            Arrived::Onward(IpLinkIx(1), p) => {
                assert_eq!((p.seq, p.hop), (0, 1));
                assert_eq!(
                    ip.forward(
                        IpLinkIx::new(1),
                        p,
                        2 * MS,
                        2 * MS,
                        Time::MAX,
                        &mut agenda,
                        |_, _| true
                    ),
                    None
                );
            }
            other => panic!("{other:?}"),
        }
        let mut ledger = Ledger::default();
        let (ports, dropped, in_path) = ip.report(2 * MS, &mut ledger);
        assert_eq!((ports[0].packets_in, ports[0].packets_dropped), (3, 1));
        assert_eq!(dropped, 960);
        // The second segment is still in the first port (in transmission
        // until 2 ms... it ended: on the link), the first in the second port.
        assert_eq!(in_path, 2 * 960);
        assert_eq!((ledger.packets.generated, ledger.packets.dropped), (3, 1));
        assert_eq!(ledger.packets.queued + ledger.packets.on_links, 2);
        assert!(ledger.problems.is_empty(), "{:?}", ledger.problems);
    }

    #[test]
    fn an_eager_port_and_an_eager_end_take_a_packet_ahead_and_the_ledger_places_it() {
        // With the fast paths, r's port towards b is fed only by a -> r: it
        // is eager, and b's receiver takes segments early.
        let sc = ip_line(10, true, "");
        let plan = Plan::new(&sc);
        assert!(plan.eager_ip[1].is_some() && plan.eager_rx[0]);
        let mut ip = fabric(&sc);
        let mut agenda = EventQueue::new();
        let p = Packet::data(0, 0, 960);
        ip.send(&p);
        // It crosses both ports at once and reaches b at 4 ms (two
        // transmissions and two delays), handed back to be delivered now
        // (the run must then reach 4 ms before it ends: `until`).
        let early = ip.forward(IpLinkIx::new(0), p, 0, 0, 4 * MS, &mut agenda, |_, _| true);
        assert_eq!(early.map(|(p, far)| (p.hop, far)), Some((1, 4 * MS)));
        assert!(agenda.is_empty());
        let mut ledger = Ledger::default();
        ip.report(4 * MS, &mut ledger);
        assert!(ledger.problems.is_empty(), "{:?}", ledger.problems);
        assert_eq!((ledger.packets.generated, ledger.packets.delivered), (1, 1));
    }

    #[test]
    fn a_packet_told_ahead_is_placed_upstream_by_the_ledger() {
        let sc = ip_line(10, true, "");
        let mut ip = fabric(&sc);
        let mut agenda = EventQueue::new();
        // One the end host does not take goes on the last link with its own
        // arrival event (two transmissions and two delays: 4 ms).
        let q = Packet::data(0, 0, 960);
        ip.send(&q);
        assert_eq!(
            ip.forward(IpLinkIx::new(0), q, 0, 0, 4 * MS, &mut agenda, |_, _| false),
            None
        );
        assert_eq!(
            agenda.next_until(Time::MAX),
            Some((4 * MS, Event::PacketArrival(IpLinkIx::new(1))))
        );
        // At 0.5 ms the ledger finds it in the first port, the second port
        // told of it ahead; at 1.5 ms on the first link.
        for (at, queued, on_links) in [(MS / 2, 1, 0), (3 * MS / 2, 0, 1), (5 * MS / 2, 1, 0)] {
            let mut ledger = Ledger::default();
            ip.report(at, &mut ledger);
            assert!(ledger.problems.is_empty(), "{:?}", ledger.problems);
            assert_eq!(
                (ledger.packets.queued, ledger.packets.on_links),
                (queued, on_links),
                "at {at} ps"
            );
        }
    }
}
