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
//!
//! Files: this one holds the state and the run loop; `build` makes the
//! network, `atm` moves cells, `abr` runs the end systems, `ip` moves
//! packets, `tcp` connects the flows' hosts, `report` samples probes and
//! closes the run.

mod abr;
mod atm;
mod build;
mod ip;
mod report;
mod tcp;

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
use crate::ip::{IpLimit, IpPort, Packet, SackRing};
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
    /// at the far end, packet). Their arrival at this port is in the port's
    /// records while it matters (the ledger).
    in_flight: VecDeque<(Time, Packet)>,
    /// The batch port this link feeds (NO_BATCH if none): its packets then
    /// wait here for that port's IpBatch event, not for a LinkArrival.
    feeds: u32,
    /// For a batch port: the links that feed it (by index, ascending); the
    /// least of their delays is its look-ahead.
    feeders: Vec<u32>,
    /// For a batch port: the time of its pending IpBatch event (Time::MAX if
    /// none; events at other times are stale).
    batch_at: Time,
}

/// `IpHop::feeds` of a link that feeds no batch port.
const NO_BATCH: u32 = u32::MAX;

/// A packet a port will drop at a time the run may not reach (a port told
/// of arrivals ahead of time).
struct FutureDrop {
    at: Time,
    /// Where the dropping port's link is in `ip_route` (the link, and the
    /// path to place the packet upstream).
    route_pos: u32,
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
    /// The links are in `Simulation::ip_route`.
    Ip,
}

/// An `ip_route` entry's flag: the link's port is eager.
const EAGER_LINK: u32 = 1 << 31;
/// The `ip_route` entry after a path's last link.
const ROUTE_END: u32 = u32::MAX;

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
    /// The SACK blocks of the flow's ACKs on their way.
    sack: SackRing,
    /// Time of the pending FlowTimer event, if any.
    timer_at: Option<Time>,
    started: bool,
    /// The receiver may take a data segment as soon as its arrival time is
    /// known (see `eager_receivers`).
    eager_rx: bool,
    /// The sender may take an ACK as soon as its arrival time is known (see
    /// `eager_senders`).
    eager_tx: bool,
    /// For a probed flow, the next probe tick it has no sample for (0 when
    /// the flow is not probed).
    probe_next: Time,
    /// Samples an eager sender kept for probe ticks it moved past: (tick,
    /// `flow_sample`).
    probe_held: VecDeque<(Time, [f64; 4])>,
}

/// What the flow probes record of a sender: cwnd, usable window, highest
/// byte sent + 1, smoothed RTT.
fn flow_sample(s: &TcpSender) -> [f64; 4] {
    [s.s.cwnd, s.window(), s.s.snd_max as f64, s.rtt.srtt_s()]
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
    /// The end of the current `advance`: nothing may happen after it.
    until: Time,
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
    /// Scratch for `on_ip_batch`: (head arrival, feeder).
    batch_heads: Vec<(Time, u32)>,
    /// The IP flows' paths, flat: link indices (with EAGER_LINK when the
    /// link's port is eager), each path closed by ROUTE_END.
    ip_route: Vec<u32>,
    /// Per flow, where its ACK path [0] and data path [1] start in `ip_route`.
    ip_route_base: Vec<[u32; 2]>,
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
        self.until = until;
        while let Some((t, ev)) = self.queue.peek_until(until) {
            self.now = t;
            self.events += 1;
            match ev {
                Event::SourceEmit(s) => self.on_source(s as usize),
                Event::LinkArrival(l) => self.on_link_arrival(l as usize),
                Event::IpBatch(l) => self.on_ip_batch(l as usize),
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
}
