//! The network and its run loop: builds ports, links, VCs, sources and TCP
//! flows from a [`Scenario`], moves cells and packets between them in time
//! order, and closes the run with a [`Summary`], the conservation [`Ledger`]
//! and the probes' [`Series`].
//!
//! Events per cell-hop set the speed, so:
//! - a single-class ATM port computes departures on arrival (no event);
//! - a link schedules only the arrival of its head cell or packet;
//! - a link whose cells all end in passive sinks schedules nothing and is
//!   drained in bulk (when cells are added, at probe ticks and at the end);
//! - a source reschedules itself by replacing the top of the heap;
//! - coarse TCP timers are one global tick per granularity, walking the
//!   flows (BSD's slow timer); fine timers are one lazy event per flow.

use crate::abr::algorithm::{self, AlgorithmStats, PortState};
use crate::abr::ses::Emit;
use crate::abr::{is_brm, is_frm, is_rm, DestinationEndSystem, SourceEndSystem, SwitchAlgorithm};
use crate::atm::aal5::{cells_per_datagram, Outcome};
use crate::atm::port::PriorityArrival;
use crate::atm::ServiceClass;
use crate::atm::{Cell, Link, Port, PortMode, Reassembly};
use crate::buffer::{self, DROP_REASON_NAMES};
use crate::engine::time::{cell_time_ps, ps_to_s};
use crate::engine::{Event, EventQueue, RngStream, Time};
use crate::ip::red::Red;
use crate::ip::{IpLimit, IpPort, Packet};
use crate::scenario::{Layer, PolicySpec, Scenario, SourceModel};
use crate::stats::{
    AbrSummary, FlowSummary, Ledger, Metric, PortSummary, Series, Summary, VcSummary,
};
use crate::tcp::receiver::AckPlan;
use crate::tcp::{TcpReceiver, TcpSender, TimerMode, Variant};
use crate::traffic::{self, TrafficSource};
use std::collections::VecDeque;

/// Random stream ids: sources use their index; flows and IP ports these bases.
const STREAM_FLOWS: u64 = 1 << 40;
const STREAM_IP_PORTS: u64 = 1 << 41;

/// An ATM link with its output port and, for ABR, its switch algorithm.
struct AtmHop {
    link: Link,
    port: Port,
    algorithm: Option<Box<dyn SwitchAlgorithm>>,
}

impl AtmHop {
    fn port_state(&self, now: Time) -> PortState {
        PortState {
            link_cps: self.link.cell_rate_cps,
            abr_queue: self.port.abr_waiting(now),
        }
    }
}

/// The ABR source end system of a VC with the cells it holds.
struct SesState {
    ses: SourceEndSystem,
    /// Data cells waiting for an in-rate opportunity (the ABR source queue).
    queue: VecDeque<Cell>,
    /// An infinite backlog of one-cell frames (until `greedy_stop`).
    greedy: bool,
    greedy_stop: Time,
    /// Time of the pending SesSend event.
    scheduled: Option<Time>,
}

/// An IP link with its router output port and the packets on the wire.
struct IpHop {
    name: String,
    delay_ps: Time,
    port: IpPort,
    /// Packets on the link or still in its port, earliest first: (arrival
    /// at the far end, arrival at this port, packet).
    in_flight: VecDeque<(Time, Time, Packet)>,
    /// Fed by one upstream link only, which is itself not eager: packets
    /// are pushed through this port as soon as they leave the upstream port,
    /// without an event at their arrival here (their order is already
    /// known). `pred` is that upstream link.
    eager_pred: Option<u32>,
}

/// A packet an eager port will drop at a time the run may not reach.
struct FutureDrop {
    at: Time,
    link: u32,
    data_bytes: u64,
}

enum Hop {
    Atm(AtmHop),
    Ip(IpHop),
}

/// The frames of a TCP-carrying VC that have not been resolved yet, by
/// frame id: the packet each carries and how many of its cells were dropped.
#[derive(Default)]
struct FrameStore {
    base: u32,
    entries: VecDeque<FrameEntry>,
}

struct FrameEntry {
    packet: Packet,
    cells: u16,
    dropped: u16,
}

impl FrameStore {
    fn push(&mut self, frame: u32, entry: FrameEntry) {
        if self.entries.is_empty() {
            self.base = frame;
        }
        debug_assert_eq!(frame, self.base + self.entries.len() as u32);
        self.entries.push_back(entry);
    }

    fn get_mut(&mut self, frame: u32) -> Option<&mut FrameEntry> {
        let k = frame.checked_sub(self.base)?;
        self.entries.get_mut(k as usize)
    }

    fn pop_front(&mut self) -> Option<(u32, FrameEntry)> {
        let e = self.entries.pop_front()?;
        let id = self.base;
        self.base += 1;
        Some((id, e))
    }
}

struct VcState {
    name: String,
    links: Vec<u32>,
    priority: usize,
    cells_sent: u64,
    frames_sent: u64,
    cells_delivered: u64,
    reassembly: Reassembly,
    /// Frames in flight, for a VC of a TCP flow.
    store: Option<FrameStore>,
    is_abr: bool,
    /// ABR: the backward path.
    back_links: Vec<u32>,
    /// ABR: for a backward RM cell that arrived over back_links[h], the
    /// forward port at that switch whose algorithm marks it.
    brm_mark: Vec<Option<u32>>,
    ses: Option<Box<SesState>>,
    des: Option<DestinationEndSystem>,
}

struct SourceState {
    source: Box<dyn TrafficSource>,
    rng: RngStream,
    vc: u32,
    stop: Time,
}

enum FlowRoute {
    Atm {
        data_vc: u32,
        ack_vc: u32,
    },
    Ip {
        data_links: Vec<u32>,
        ack_links: Vec<u32>,
    },
}

struct FlowState {
    name: String,
    sender: TcpSender,
    receiver: TcpReceiver,
    route: FlowRoute,
    wnd_field: u16,
    processing_ps: Time,
    jitter_ps: Time,
    rng: RngStream,
    rx_queue: VecDeque<Packet>,
    /// Time of the pending FlowTimer event, if any.
    timer_at: Option<Time>,
    started: bool,
}

/// Counters of the byte ledger kept during the run.
#[derive(Default)]
struct ByteLosses {
    dropped_in_network: u64,
    dropped_aal5: u64,
}

/// Counters of the packet ledger kept during the run.
#[derive(Default)]
struct PacketCounts {
    generated: u64,
    delivered: u64,
}

/// A network ready to run.
pub struct Simulation {
    now: Time,
    duration: Time,
    seed: u64,
    events: u64,
    queue: EventQueue,
    hops: Vec<Hop>,
    vcs: Vec<VcState>,
    sources: Vec<SourceState>,
    flows: Vec<FlowState>,
    tick_groups: Vec<(Time, Vec<u32>)>,
    byte_losses: ByteLosses,
    packets: PacketCounts,
    future_drops: Vec<FutureDrop>,
    rm_generated: u64,
    rm_delivered: u64,
    bad_checksums: u64,
    probe_period: Time,
    probe_queue: Vec<u32>,
    probe_util: Vec<(u32, u128)>,
    probe_rate: Vec<(u32, u64)>,
    probe_flows: Vec<u32>,
    probe_abr_vcs: Vec<u32>,
    probe_abr_ports: Vec<u32>,
    series: Series,
}

impl Simulation {
    /// Builds the network; fails on an inconsistent scenario.
    pub fn new(sc: &Scenario) -> Result<Self, String> {
        sc.check()?;
        let n_vcs = sc.vcs.len();
        // VCs that carry a TCP flow end in a host, not a passive sink; ABR
        // VCs end in a destination end system that turns RM cells around.
        let tcp_vc = {
            let mut t = vec![false; n_vcs];
            for fl in &sc.flows {
                for v in [fl.data_vc, fl.ack_vc].into_iter().flatten() {
                    t[v as usize] = true;
                }
            }
            t
        };
        let endpoint: Vec<bool> = (0..n_vcs)
            .map(|i| tcp_vc[i] || sc.vcs[i].abr.is_some())
            .collect();
        // Which priorities use each link, and whether every VC on a link ends
        // there in a passive sink (then the link can be drained lazily).
        let mut classes = vec![[false; 3]; sc.links.len()];
        let mut lazy = vec![true; sc.links.len()];
        for (i, v) in sc.vcs.iter().enumerate() {
            for (k, &l) in v.links.iter().enumerate() {
                classes[l as usize][v.class.priority()] = true;
                if k + 1 != v.links.len() || endpoint[i] {
                    lazy[l as usize] = false;
                }
            }
            // Backward RM cells need their events.
            for &l in &v.back_links {
                lazy[l as usize] = false;
            }
        }
        let eager = eager_ip_links(sc);
        let mut hops = Vec::with_capacity(sc.links.len());
        for (i, l) in sc.links.iter().enumerate() {
            let hop = match l.layer {
                Layer::Atm => {
                    let n_classes = classes[i].iter().filter(|&&c| c).count();
                    let mode = if n_classes <= 1 {
                        PortMode::Fifo
                    } else {
                        PortMode::Priority
                    };
                    Hop::Atm(AtmHop {
                        link: Link {
                            name: l.name.clone(),
                            from: l.from,
                            to: l.to,
                            cell_rate_cps: l.cell_rate_cps,
                            delay_ps: l.delay_ps,
                            in_flight: VecDeque::new(),
                            lazy: lazy[i],
                        },
                        port: Port::new(
                            cell_time_ps(l.cell_rate_cps),
                            l.buffer_cells.unwrap_or(u32::MAX),
                            mode,
                            buffer::build(&l.policy, n_vcs),
                        ),
                        algorithm: l.algorithm.as_ref().map(|a| algorithm::build(a, n_vcs)),
                    })
                }
                Layer::Ip => {
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
                    let rng = RngStream::new(sc.seed, STREAM_IP_PORTS + i as u64);
                    Hop::Ip(IpHop {
                        name: l.name.clone(),
                        delay_ps: l.delay_ps,
                        port: IpPort::new(l.bit_rate_bps, limit, red, rng),
                        in_flight: VecDeque::new(),
                        eager_pred: eager[i],
                    })
                }
            };
            hops.push(hop);
        }
        let vcs = sc
            .vcs
            .iter()
            .enumerate()
            .map(|(i, v)| VcState {
                name: v.name.clone(),
                links: v.links.clone(),
                priority: v.class.priority(),
                cells_sent: 0,
                frames_sent: 0,
                cells_delivered: 0,
                reassembly: Reassembly::default(),
                store: tcp_vc[i].then(FrameStore::default),
                is_abr: v.class == ServiceClass::Abr,
                back_links: v.back_links.clone(),
                brm_mark: v.back_links[..v.back_links.len().saturating_sub(1)]
                    .iter()
                    .map(|&b| {
                        let node = sc.links[b as usize].to;
                        v.links
                            .iter()
                            .copied()
                            .find(|&l| sc.links[l as usize].from == node)
                    })
                    .collect(),
                ses: v.abr.as_ref().map(|p| {
                    Box::new(SesState {
                        ses: SourceEndSystem::new(i as u32, p.clone()),
                        queue: VecDeque::new(),
                        greedy: false,
                        greedy_stop: Time::MAX,
                        scheduled: None,
                    })
                }),
                des: v.abr.as_ref().map(|_| DestinationEndSystem::default()),
            })
            .collect::<Vec<_>>();
        let mut vcs = vcs;
        let mut queue = EventQueue::new();
        let mut sources = Vec::with_capacity(sc.sources.len());
        for (i, s) in sc.sources.iter().enumerate() {
            // A greedy source on an ABR VC is an infinite backlog at its SES.
            if let (SourceModel::Greedy, Some(ses)) = (&s.model, vcs[s.vc as usize].ses.as_mut()) {
                ses.greedy = true;
                ses.greedy_stop = s.stop_ps.unwrap_or(Time::MAX);
                ses.scheduled = Some(s.start_ps);
                queue.push(s.start_ps, Event::SesSend(s.vc));
                continue;
            }
            let first_link = &sc.links[sc.vcs[s.vc as usize].links[0] as usize];
            let mut source = traffic::build(&s.model, first_link.cell_rate_cps);
            // Stream id = source index: adding a source never changes the others.
            let mut rng = RngStream::new(sc.seed, i as u64);
            let stop = s.stop_ps.unwrap_or(Time::MAX);
            let t = source.first(s.start_ps, &mut rng);
            if t < stop {
                queue.push(t, Event::SourceEmit(sources.len() as u32));
            }
            sources.push(SourceState {
                source,
                rng,
                vc: s.vc,
                stop,
            });
        }
        let mut flows = Vec::with_capacity(sc.flows.len());
        let mut tick_groups: Vec<(Time, Vec<u32>)> = Vec::new();
        for (f, fl) in sc.flows.iter().enumerate() {
            let route = match fl.layer {
                Layer::Atm => FlowRoute::Atm {
                    data_vc: fl.data_vc.unwrap_or_default(),
                    ack_vc: fl.ack_vc.unwrap_or_default(),
                },
                Layer::Ip => FlowRoute::Ip {
                    data_links: fl.data_links.clone(),
                    ack_links: fl.ack_links.clone(),
                },
            };
            if let TimerMode::Coarse { tick_ps } = fl.tcp.timer {
                match tick_groups.iter_mut().find(|(g, _)| *g == tick_ps) {
                    Some((_, members)) => members.push(f as u32),
                    None => tick_groups.push((tick_ps, vec![f as u32])),
                }
            }
            flows.push(FlowState {
                name: fl.name.clone(),
                sender: TcpSender::new(&fl.tcp),
                receiver: TcpReceiver::new(
                    fl.tcp.variant == Variant::Sack,
                    fl.tcp.max_sack_blocks,
                    fl.tcp.delayed_ack_ps,
                ),
                route,
                wnd_field: fl.tcp.window_field(),
                processing_ps: fl.processing_ps,
                jitter_ps: fl.processing_jitter_ps,
                rng: RngStream::new(sc.seed, STREAM_FLOWS + f as u64),
                rx_queue: VecDeque::new(),
                timer_at: None,
                started: false,
            });
            queue.push(fl.start_ps, Event::FlowStart(f as u32));
        }
        for (g, (tick, _)) in tick_groups.iter().enumerate() {
            queue.push(*tick, Event::TcpTick(g as u32));
        }
        let p = &sc.probes;
        let mut series = Series::default();
        if p.any() {
            queue.push(p.period_ps, Event::ProbeTick);
            series.entity_names = sc
                .links
                .iter()
                .map(|l| l.name.clone())
                .chain(sc.vcs.iter().map(|v| v.name.clone()))
                .chain(sc.flows.iter().map(|f| f.name.clone()))
                .collect();
        }
        Ok(Simulation {
            now: 0,
            duration: sc.duration_ps,
            seed: sc.seed,
            events: 0,
            queue,
            hops,
            vcs,
            sources,
            flows,
            tick_groups,
            byte_losses: ByteLosses::default(),
            packets: PacketCounts::default(),
            future_drops: Vec::new(),
            rm_generated: 0,
            rm_delivered: 0,
            bad_checksums: 0,
            probe_period: p.period_ps,
            probe_queue: p.queue.clone(),
            probe_util: p.utilization.iter().map(|&l| (l, 0)).collect(),
            probe_rate: p.vc_rate.iter().map(|&v| (v, 0)).collect(),
            probe_flows: p.flows.clone(),
            probe_abr_vcs: p.abr_vcs.clone(),
            probe_abr_ports: p.abr_ports.clone(),
            series,
        })
    }

    /// Simulated time reached, ps.
    pub fn now(&self) -> Time {
        self.now
    }

    /// The scenario's duration, ps.
    pub fn duration(&self) -> Time {
        self.duration
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Runs every event with time <= min(until, duration).
    pub fn advance(&mut self, until: Time) {
        let until = until.min(self.duration);
        while let Some((t, ev)) = self.queue.peek_until(until) {
            self.now = t;
            self.events += 1;
            match ev {
                Event::SourceEmit(s) => self.on_source(s as usize),
                Event::LinkArrival(l) => self.on_link_arrival(l as usize),
                Event::PortTxDone(l) => self.on_tx_done(l as usize),
                Event::ProbeTick => self.on_probe(),
                Event::FlowStart(f) => {
                    self.queue.pop();
                    self.flows[f as usize].started = true;
                    self.pump(f as usize);
                }
                Event::TcpTick(g) => self.on_tcp_tick(g as usize),
                Event::FlowTimer(f) => self.on_flow_timer(f as usize),
                Event::RxDone(f) => self.on_rx_done(f as usize),
                Event::SesSend(v) => self.on_ses_send(v as usize),
            }
        }
        self.now = self.now.max(until);
    }

    /// Runs to the end of the scenario.
    pub fn run(&mut self) {
        self.advance(self.duration);
    }

    // ----- ATM ---------------------------------------------------------

    fn on_source(&mut self, s: usize) {
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
    fn send_frame(&mut self, vc: u32, cells: u16, packet: Option<Packet>) {
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

    // ----- ABR end systems -----------------------------------------------

    /// Makes sure the SES of VC `v` has an opportunity scheduled if it has
    /// something to send, at the earliest time its ACR allows.
    fn wake_ses(&mut self, v: usize) {
        let now = self.now;
        let Some(st) = self.vcs[v].ses.as_mut() else {
            return;
        };
        if st.queue.is_empty() && !st.greedy {
            return;
        }
        let t = st.ses.next_opportunity(now);
        if st.scheduled.is_none_or(|s| t < s) {
            st.scheduled = Some(t);
            self.queue.push(t, Event::SesSend(v as u32));
        }
    }

    fn on_ses_send(&mut self, v: usize) {
        self.queue.pop();
        let now = self.now;
        let vc = &mut self.vcs[v];
        let first_link = vc.links[0] as usize;
        let st = vc.ses.as_mut().expect("SesSend on a VC without an SES");
        if st.scheduled != Some(now) {
            return; // superseded by an earlier opportunity
        }
        st.scheduled = None;
        if st.greedy && now >= st.greedy_stop {
            st.greedy = false;
        }
        if st.queue.is_empty() && !st.greedy {
            return;
        }
        let cell = match st.ses.emit(now) {
            Emit::Frm(c) => {
                self.rm_generated += 1;
                c
            }
            Emit::Data => match st.queue.pop_front() {
                Some(c) => c,
                None => {
                    // Greedy: a new one-cell frame.
                    let frame = vc.frames_sent as u32;
                    vc.frames_sent += 1;
                    vc.cells_sent += 1;
                    Cell::data(v as u32, frame, 1, true)
                }
            },
        };
        self.port_arrive(first_link, cell);
        self.wake_ses(v);
    }

    /// A cell reaches the end of its VC's forward path at an ABR destination.
    fn abr_destination(&mut self, cell: Cell) -> Option<Cell> {
        let v = &mut self.vcs[cell.vc as usize];
        let des = v.des.as_mut()?;
        if is_frm(&cell) {
            let brm = des.on_frm(&cell);
            self.rm_delivered += 1;
            self.rm_generated += 1;
            let back = v.back_links[0] as usize;
            self.port_arrive(back, brm);
            None
        } else {
            des.on_data(&cell);
            Some(cell)
        }
    }

    /// A backward RM cell arrived over back_links[hop] of its VC.
    fn on_brm_arrival(&mut self, mut cell: Cell) {
        let now = self.now;
        let vc = cell.vc as usize;
        let h = cell.hop as usize;
        let n = self.vcs[vc].back_links.len();
        if h + 1 == n {
            // Back at the source.
            self.rm_delivered += 1;
            if let Some(st) = self.vcs[vc].ses.as_mut() {
                st.ses.on_brm(&cell);
            }
            self.wake_ses(vc);
            return;
        }
        if let Some(k) = self.vcs[vc].brm_mark[h] {
            let hop = self.atm(k as usize);
            let ps = hop.port_state(now);
            if let Some(a) = hop.algorithm.as_mut() {
                a.on_brm(now, &mut cell, &ps);
            }
        }
        cell.hop += 1;
        let next = self.vcs[vc].back_links[cell.hop as usize] as usize;
        self.port_arrive(next, cell);
    }

    fn atm(&mut self, l: usize) -> &mut AtmHop {
        match &mut self.hops[l] {
            Hop::Atm(h) => h,
            Hop::Ip(_) => unreachable!("cell on IP link {l}"),
        }
    }

    /// A cell reaches the output port of link `l`.
    #[inline]
    fn port_arrive(&mut self, l: usize, mut cell: Cell) {
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

    fn on_tx_done(&mut self, l: usize) {
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
    fn link_push(&mut self, l: usize, tx_end: Time, cell: Cell) {
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

    fn on_link_arrival(&mut self, l: usize) {
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
                let (_, _, mut packet) = h.in_flight.pop_front().expect("arrival on an empty link");
                match h.in_flight.front() {
                    Some(&(t, _, _)) => self.queue.replace_top(t, Event::LinkArrival(l as u32)),
                    None => self.queue.pop(),
                }
                packet.hop += 1;
                match self.ip_next_link(&packet) {
                    None => {
                        self.packets.delivered += 1;
                        self.packet_arrives(packet);
                    }
                    Some(next) => self.ip_port_arrive(next, packet, self.now),
                }
            }
        }
    }

    /// A cell of a TCP VC reaches the end host: reassemble, and resolve the
    /// fate of every frame the unit closes.
    fn deliver_tcp_cell(&mut self, cell: Cell) {
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
            self.packet_arrives(p);
        }
    }

    // ----- IP ----------------------------------------------------------

    /// The IP link `packet` takes from its current hop, None at its end.
    #[inline]
    fn ip_next_link(&self, packet: &Packet) -> Option<usize> {
        let FlowRoute::Ip {
            data_links,
            ack_links,
        } = &self.flows[packet.flow as usize].route
        else {
            unreachable!("packet of an ATM flow on an IP link")
        };
        let path = if packet.is_data {
            data_links
        } else {
            ack_links
        };
        path.get(packet.hop as usize).map(|&l| l as usize)
    }

    /// `packet` reaches the port of IP link `l` at time `at` (now, or later
    /// for an eager port fed straight from its upstream port).
    fn ip_port_arrive(&mut self, l: usize, mut packet: Packet, at: Time) {
        let now = self.now;
        let Hop::Ip(h) = &mut self.hops[l] else {
            unreachable!("packet on ATM link {l}")
        };
        let Some(end) = h.port.arrive(at, now, &packet) else {
            let data_bytes = if packet.is_data { packet.len as u64 } else { 0 };
            self.byte_losses.dropped_in_network += data_bytes;
            if at > now {
                self.future_drops.push(FutureDrop {
                    at,
                    link: l as u32,
                    data_bytes,
                });
            }
            return;
        };
        let far = end + h.delay_ps;
        packet.hop += 1;
        if let Some(next) = self.ip_next_link(&packet) {
            if let Hop::Ip(n) = &self.hops[next] {
                if n.eager_pred.is_some() {
                    self.ip_port_arrive(next, packet, far);
                    return;
                }
            }
        }
        packet.hop -= 1;
        let Hop::Ip(h) = &mut self.hops[l] else {
            unreachable!()
        };
        let was_empty = h.in_flight.is_empty();
        h.in_flight.push_back((far, at, packet));
        if was_empty {
            self.queue.push(far, Event::LinkArrival(l as u32));
        }
    }

    // ----- TCP ---------------------------------------------------------

    /// A packet reaches the host at the end of its path.
    fn packet_arrives(&mut self, packet: Packet) {
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

    fn processing_delay(&mut self, f: usize) -> Time {
        let fl = &mut self.flows[f];
        if fl.jitter_ps == 0 {
            return fl.processing_ps;
        }
        let lo = fl.processing_ps - fl.jitter_ps;
        let hi = fl.processing_ps + fl.jitter_ps;
        fl.rng.int_between(lo, hi)
    }

    fn on_rx_done(&mut self, f: usize) {
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

    fn receive_segment(&mut self, f: usize, packet: Packet) {
        let now = self.now;
        match self.flows[f]
            .receiver
            .on_segment(now, packet.seq, packet.len)
        {
            AckPlan::Now => self.send_ack(f),
            AckPlan::At(t) => self.ensure_timer(f, t),
        }
    }

    fn send_ack(&mut self, f: usize) {
        let fl = &self.flows[f];
        let r = &fl.receiver;
        let packet = Packet::ack(f as u32, 0, r.rcv_nxt, fl.wnd_field, r.sack_blocks());
        self.send_packet(f, packet);
    }

    /// Transmits what the sender's window allows, and keeps its timer.
    fn pump(&mut self, f: usize) {
        let now = self.now;
        while let Some(seg) = self.flows[f].sender.next_segment(now) {
            self.send_packet(f, Packet::data(f as u32, seg.seq, seg.len));
        }
        if let Some(d) = self.flows[f].sender.deadline() {
            self.ensure_timer(f, d);
        }
    }

    /// Sends `packet` of flow `f` along its data or ACK path.
    fn send_packet(&mut self, f: usize, packet: Packet) {
        match &self.flows[f].route {
            FlowRoute::Atm { data_vc, ack_vc } => {
                let vc = if packet.is_data { *data_vc } else { *ack_vc };
                let cells = cells_per_datagram(packet.ip_bytes()) as u16;
                self.send_frame(vc, cells, Some(packet));
            }
            FlowRoute::Ip {
                data_links,
                ack_links,
            } => {
                let first = if packet.is_data {
                    data_links[0]
                } else {
                    ack_links[0]
                };
                self.packets.generated += 1;
                self.ip_port_arrive(first as usize, packet, self.now);
            }
        }
    }

    /// Makes sure a FlowTimer event comes at or before `t`.
    fn ensure_timer(&mut self, f: usize, t: Time) {
        let fl = &mut self.flows[f];
        if fl.timer_at.is_none_or(|at| t < at) {
            fl.timer_at = Some(t);
            self.queue.push(t, Event::FlowTimer(f as u32));
        }
    }

    fn on_flow_timer(&mut self, f: usize) {
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

    fn on_tcp_tick(&mut self, g: usize) {
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

    // ----- probes and the end ------------------------------------------

    /// Delivers the cells of lazy links that have arrived by `t`.
    fn drain_lazy(&mut self, t: Time) {
        for hop in &mut self.hops {
            let Hop::Atm(h) = hop else { continue };
            if !h.link.lazy {
                continue;
            }
            while let Some(&(a, cell)) = h.link.in_flight.front() {
                if a > t {
                    break;
                }
                h.link.in_flight.pop_front();
                deliver_passive(&mut self.vcs, &cell);
            }
        }
    }

    fn on_probe(&mut self) {
        let now = self.now;
        let next = now + self.probe_period;
        if next <= self.duration {
            self.queue.replace_top(next, Event::ProbeTick);
        } else {
            self.queue.pop();
        }
        self.drain_lazy(now);
        let t = ps_to_s(now);
        let period = self.probe_period as f64;
        for &l in &self.probe_queue {
            match &self.hops[l as usize] {
                Hop::Atm(h) => {
                    self.series
                        .push(t, l, Metric::QueueCells, h.port.occupancy(now) as f64)
                }
                Hop::Ip(h) => {
                    self.series
                        .push(t, l, Metric::IpQueuePackets, h.port.queue_len(now) as f64)
                }
            }
        }
        for (l, last) in &mut self.probe_util {
            let busy = match &self.hops[*l as usize] {
                Hop::Atm(h) => h.port.busy_ps(now),
                Hop::Ip(h) => h.port.busy_ps(now),
            };
            let u = (busy - *last) as f64 / period;
            *last = busy;
            self.series.push(t, *l, Metric::Utilization, u);
        }
        let n_links = self.hops.len() as u32;
        for (v, last) in &mut self.probe_rate {
            let d = self.vcs[*v as usize].cells_delivered;
            let r = (d - *last) as f64 / ps_to_s(self.probe_period);
            *last = d;
            self.series.push(t, n_links + *v, Metric::VcRateCps, r);
        }
        for &v in &self.probe_abr_vcs {
            if let Some(st) = &self.vcs[v as usize].ses {
                self.series.push(t, n_links + v, Metric::AcrCps, st.ses.acr);
                self.series
                    .push(t, n_links + v, Metric::ErCps, st.ses.last_er);
            }
        }
        for &l in &self.probe_abr_ports {
            if let Hop::Atm(h) = &self.hops[l as usize] {
                let st: AlgorithmStats =
                    h.algorithm.as_ref().map(|a| a.stats()).unwrap_or_default();
                self.series.push(t, l, Metric::LoadFactor, st.load_factor);
                self.series
                    .push(t, l, Metric::FairShareCps, st.fair_share_cps);
                self.series.push(t, l, Metric::ErCps, st.last_er_cps);
                self.series
                    .push(t, l, Metric::AbrQueueCells, h.port.abr_waiting(now) as f64);
            }
        }
        let base = n_links + self.vcs.len() as u32;
        for &f in &self.probe_flows {
            let s = &self.flows[f as usize].sender;
            let e = base + f;
            self.series.push(t, e, Metric::CwndBytes, s.s.cwnd);
            self.series.push(t, e, Metric::WindowBytes, s.window());
            self.series.push(t, e, Metric::SeqBytes, s.s.snd_max as f64);
            self.series.push(t, e, Metric::SrttS, s.rtt.srtt_s());
        }
    }

    /// Closes the run at the time reached: drains lazy links, checks the
    /// conservation ledgers and returns the summary and the series.
    pub fn finish(&mut self) -> (Summary, Series) {
        let now = self.now;
        self.drain_lazy(now);
        let t_s = ps_to_s(now);
        let mut ledger = Ledger::default();
        let mut in_path_bytes = 0u64;
        let mut ports = Vec::with_capacity(self.hops.len());
        for hop in &mut self.hops {
            match hop {
                Hop::Atm(h) => ports.push(atm_port_summary(h, now, &mut ledger)),
                Hop::Ip(_) => ports.push(PortSummary::default()),
            }
        }
        in_path_bytes += self.ip_ledger(now, &mut ledger, &mut ports);
        ledger.packets.generated = self.packets.generated;
        ledger.packets.delivered = self.packets.delivered;
        let future_drop_bytes: u64 = self
            .future_drops
            .iter()
            .filter(|d| d.at > now)
            .map(|d| d.data_bytes)
            .sum();
        in_path_bytes += future_drop_bytes;
        let mut dropped_in_network = self.byte_losses.dropped_in_network - future_drop_bytes;
        ledger.cells_generated += self.rm_generated;
        ledger.cells_delivered += self.rm_delivered;
        let mut vcs = Vec::with_capacity(self.vcs.len());
        for v in &self.vcs {
            ledger.cells_generated += v.cells_sent;
            ledger.cells_delivered += v.cells_delivered;
            if let Some(st) = &v.ses {
                ledger.cells_queued += st.queue.len() as u64;
            }
            if let Some(store) = &v.store {
                for e in store.entries.iter().filter(|e| e.packet.is_data) {
                    if e.dropped == e.cells {
                        dropped_in_network += e.packet.len as u64;
                    } else {
                        in_path_bytes += e.packet.len as u64;
                    }
                }
            }
            let r = &v.reassembly;
            vcs.push(VcSummary {
                name: v.name.clone(),
                cells_sent: v.cells_sent,
                cells_delivered: v.cells_delivered,
                frames_sent: v.frames_sent,
                frames_delivered: r.frames_delivered,
                frames_corrupted: r.frames_corrupted,
                frames_merged: r.frames_merged,
                cells_discarded_aal5: r.cells_discarded,
                frame_goodput_cps: if t_s > 0.0 {
                    r.cells_good as f64 / t_s
                } else {
                    0.0
                },
                abr: v.ses.as_ref().map(|st| AbrSummary {
                    acr_cps: st.ses.acr,
                    last_er_cps: st.ses.last_er,
                    frms_sent: st.ses.frms_sent,
                    brms_received: st.ses.brms_received,
                    rule6_cuts: st.ses.rule6_cuts,
                    source_queue_cells: st.queue.len() as u64,
                }),
            });
        }
        let mut flows = Vec::with_capacity(self.flows.len());
        let b = &mut ledger.bytes;
        for fl in &self.flows {
            let s = &fl.sender;
            let r = &fl.receiver;
            b.sent += s.bytes_sent;
            b.sent_once += s.bytes_sent_once;
            b.retransmitted += s.bytes_retransmitted;
            b.delivered += r.bytes_delivered;
            b.duplicates += r.bytes_duplicate;
            b.held_out_of_order += r.held_bytes();
            in_path_bytes += fl.rx_queue.iter().map(|p| p.len as u64).sum::<u64>();
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
                final_cwnd_bytes: s.s.cwnd,
                final_ssthresh_bytes: s.s.ssthresh,
                srtt_s: s.rtt.srtt_s(),
                rto_s: ps_to_s(s.rtt.rto_ps()),
                completed_at_s: s.completed_at.map(ps_to_s),
            });
        }
        b.dropped_in_network = dropped_in_network;
        b.dropped_aal5 = self.byte_losses.dropped_aal5;
        b.in_path = in_path_bytes;
        if self.bad_checksums > 0 {
            ledger.problems.push(format!(
                "{} TCP checksums failed at the receiving hosts",
                self.bad_checksums
            ));
        }
        let summary = Summary {
            sim_time_s: t_s,
            events: self.events,
            seed: self.seed,
            completed: now >= self.duration,
            ports,
            vcs,
            flows,
            conservation: ledger.close(),
        };
        (summary, std::mem::take(&mut self.series))
    }
}

impl Simulation {
    /// The IP ports' summaries (into `ports`, by link index) and their part
    /// of the ledger at `now`; returns the TCP payload bytes in the IP path.
    /// Packets pushed ahead through eager ports are placed where they are at
    /// `now`, from their recorded times.
    fn ip_ledger(&mut self, now: Time, ledger: &mut Ledger, ports: &mut [PortSummary]) -> u64 {
        let n = self.hops.len();
        let mut in_port = vec![0u64; n];
        let mut on_link = vec![0u64; n];
        let mut future_in = vec![0u64; n];
        let mut future_drops = vec![0u64; n];
        let mut in_path = 0u64;
        // Where is a packet that reaches eager port `l` at `at` > now?
        let upstream = |hops: &[Hop], l: usize, at: Time| -> (usize, bool) {
            let Hop::Ip(h) = &hops[l] else { unreachable!() };
            let p = h
                .eager_pred
                .expect("a future arrival at a port that is not eager")
                as usize;
            let Hop::Ip(ph) = &hops[p] else {
                unreachable!()
            };
            (p, at - ph.delay_ps > now)
        };
        for l in 0..n {
            let Hop::Ip(h) = &self.hops[l] else { continue };
            for &(far, at, pk) in &h.in_flight {
                if pk.is_data {
                    in_path += pk.len as u64;
                }
                if at > now {
                    future_in[l] += 1;
                    let (p, in_p) = upstream(&self.hops, l, at);
                    if in_p {
                        in_port[p] += 1;
                    } else {
                        on_link[p] += 1;
                    }
                } else if far - h.delay_ps > now {
                    in_port[l] += 1;
                } else {
                    on_link[l] += 1;
                }
            }
        }
        for d in self.future_drops.iter().filter(|d| d.at > now) {
            let l = d.link as usize;
            future_drops[l] += 1;
            let (p, in_p) = upstream(&self.hops, l, d.at);
            if in_p {
                in_port[p] += 1;
            } else {
                on_link[p] += 1;
            }
        }
        for l in 0..n {
            let Hop::Ip(h) = &mut self.hops[l] else {
                continue;
            };
            h.port.settle(now);
            let p = &h.port;
            let arrived = p.packets_in - future_in[l] - future_drops[l];
            let dropped = p.dropped() - future_drops[l];
            ledger.packets.queued += in_port[l];
            ledger.packets.on_links += on_link[l];
            ledger.packets.dropped += dropped;
            if p.packets_held(now) as u64 != in_port[l]
                || arrived != p.packets_out + dropped + in_port[l]
                || p.arrivals_after(now) as u64 != future_in[l]
            {
                ledger.problems.push(format!(
                    "IP port {}: in {arrived} != out {} + dropped {dropped} + held {} (port says {})",
                    h.name,
                    p.packets_out,
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
                packets_out: p.packets_out,
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

/// For each link, the upstream link of an IP port that can be fed eagerly:
/// every IP path through it comes from that one link, which is itself not
/// such a candidate (so eager ports never follow one another).
fn eager_ip_links(sc: &Scenario) -> Vec<Option<u32>> {
    // None: unused; Some(None): several or a host; Some(Some(p)): always p.
    let mut pred: Vec<Option<Option<u32>>> = vec![None; sc.links.len()];
    for f in &sc.flows {
        for path in [&f.data_links, &f.ack_links] {
            for (k, &l) in path.iter().enumerate() {
                let p = if k == 0 { None } else { Some(path[k - 1]) };
                let slot = &mut pred[l as usize];
                *slot = match *slot {
                    None => Some(p),
                    Some(q) if q == p => Some(q),
                    Some(_) => Some(None),
                };
            }
        }
    }
    let candidate: Vec<Option<u32>> = pred.iter().map(|p| p.flatten()).collect();
    candidate
        .iter()
        .map(|c| c.filter(|&p| candidate[p as usize].is_none()))
        .collect()
}

/// A cell reaches the passive sink of its VC.
#[inline]
fn deliver_passive(vcs: &mut [VcState], cell: &Cell) {
    let v = &mut vcs[cell.vc as usize];
    v.cells_delivered += 1;
    v.reassembly.receive(cell);
}

/// The summary of an ATM port, adding its cells to the ledger.
fn atm_port_summary(h: &AtmHop, now: Time, ledger: &mut Ledger) -> PortSummary {
    let (port, link) = (&h.port, &h.link);
    // Cells still on the link's queue: behind a FIFO port those whose
    // transmission has not ended are still in the port.
    let mut in_port_listed = 0u64;
    let mut on_wire = 0u64;
    for &(a, _) in &link.in_flight {
        if port.mode == PortMode::Fifo && a - link.delay_ps > now {
            in_port_listed += 1;
        } else {
            on_wire += 1;
        }
    }
    let in_port = match port.mode {
        PortMode::Fifo => in_port_listed,
        PortMode::Priority => port.cells_in_port(now),
    };
    if port.cells_in_port(now) != in_port {
        ledger.problems.push(format!(
            "port {}: {} cells in the port by its clock, {} by its list",
            link.name,
            port.cells_in_port(now),
            in_port
        ));
    }
    let dropped = port.cells_dropped();
    if port.cells_in != port.cells_accepted + dropped {
        ledger.problems.push(format!(
            "port {}: cells in {} != accepted {} + dropped {dropped}",
            link.name, port.cells_in, port.cells_accepted
        ));
    }
    ledger.cells_dropped += dropped;
    ledger.cells_queued += in_port;
    ledger.cells_on_links += on_wire;
    PortSummary {
        name: link.name.clone(),
        layer: "atm",
        cells_in: port.cells_in,
        cells_out: port.cells_out(now),
        cells_dropped: dropped,
        drops: DROP_REASON_NAMES
            .iter()
            .zip(port.drops)
            .map(|(n, c)| (n.to_string(), c))
            .collect(),
        clr: if port.cells_in > 0 {
            dropped as f64 / port.cells_in as f64
        } else {
            0.0
        },
        max_queue_cells: port.max_queue,
        mean_queue_cells: port.mean_queue(now),
        utilization: if now > 0 {
            port.busy_ps(now) as f64 / now as f64
        } else {
            0.0
        },
        ..Default::default()
    }
}
