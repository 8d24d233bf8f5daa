//! The network and its run loop: builds the parts of a network from a
//! [`Scenario`], runs its events in time order, and closes the run with a
//! [`Summary`], the conservation [`Ledger`](crate::stats::Ledger) and the
//! probes' [`Series`].
//!
//! The parts, each in its own file and owning its state:
//! - [`atm`]: the ATM fabric: links, their output ports and switch
//!   algorithms, the VCs' paths, with [`atm_control`], the explicit-rate
//!   control of TCP at ATM ports and edges (rates, ACK windows);
//! - [`ip`]: the IP fabric: packet links, router ports, the flows' IP paths
//!   and the IP part of the ledger, with [`ip_control`], the explicit-rate
//!   control of TCP at routers (rates, ACK windows, ack buckets);
//! - [`ends`]: what sits at the ends of the VCs: traffic sources, AAL5
//!   segmentation and reassembly, the ABR source and destination end
//!   systems;
//! - [`tcp`]: the TCP connections' hosts (sender, receiver, timers);
//! - [`probes`]: the time series;
//! - [`fast_paths`]: the fast paths (events skipped because their outcome is
//!   already known), fenced behind one switch with the conditions under
//!   which each is exact, each in a module of its own there behind a type
//!   the parts call at one place (lazy links, the IP ports told early, the
//!   merged sources);
//! - [`report`]: closing the run: summaries and conservation ledgers.
//!
//! This file holds the run loop, which only dispatches; `handlers` says what
//! each event does, moving cells and packets from part to part through the
//! parts' methods; `build` makes the parts.

mod atm;
mod atm_control;
mod build;
mod capture;
mod ends;
mod external;
mod fast_paths;
mod handlers;
mod ip;
mod ip_control;
mod probes;
mod report;
mod tcp;

use crate::engine::{Event, EventQueue, Time};
use crate::ids::{AtmLinkIx, IpLinkIx};
use crate::scenario::Scenario;
pub use external::Delivered;

/// Random stream ids: sources use their index; flows, IP ports and ATM ports
/// (their drop policies) these bases.
const STREAM_FLOWS: u64 = 1 << 40;
const STREAM_IP_PORTS: u64 = 1 << 41;
const STREAM_ATM_PORTS: u64 = 1 << 42;

/// Where a scenario link lives: the index of an ATM link in the ATM fabric,
/// or of an IP link in the IP fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LinkRef {
    Atm(AtmLinkIx),
    Ip(IpLinkIx),
}

/// Simulated time and the bounds of the current `advance`.
#[derive(Clone, Copy, Debug)]
struct Clock {
    /// The time of the event being dispatched (or reached).
    now: Time,
    /// The end of the current `advance`: nothing may happen after it.
    until: Time,
    /// The scenario's duration.
    duration: Time,
    /// The pending probe tick (Time::MAX: none): with the end of the
    /// current `advance`, the next instant the passive sinks are read.
    next_tick: Time,
}

/// A network ready to run.
pub struct Simulation {
    clock: Clock,
    seed: u64,
    /// Events dispatched so far.
    events: u64,
    /// Whether the fast paths are on (the scenario's `fast_paths`).
    fast_paths: bool,
    agenda: EventQueue,
    /// Each scenario link, by its index (a `LinkId`): its fabric and index
    /// there.
    links: Vec<LinkRef>,
    atm: atm::AtmFabric,
    ip: ip::IpFabric,
    ends: ends::Endpoints,
    tcp: tcp::TcpHosts,
    probes: probes::Probes,
    /// The real hosts' datagrams of an emulation (none in a simulated run).
    external: external::External,
    /// The packet captures' files, once the run is finished.
    capture_files: Vec<(String, Vec<u8>)>,
    /// The captures' names, in the scenario's order.
    capture_order: Vec<String>,
}

impl Simulation {
    /// Simulated time reached, ps.
    pub fn now(&self) -> Time {
        self.clock.now
    }

    /// The scenario's duration, ps.
    pub fn duration(&self) -> Time {
        self.clock.duration
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Whether the run takes the fast paths (see [`fast_paths`]).
    pub fn fast_paths(&self) -> bool {
        self.fast_paths
    }

    /// Runs every event with time <= min(until, duration).
    pub fn advance(&mut self, until: Time) {
        while !self.advance_some(until, u64::MAX) {}
    }

    /// `advance`, but returns after at most about `max_events` events: true
    /// when `until` (or the end of the run) is reached, false when there is
    /// more to do before it. The caller gets control back that often (the
    /// Python layer answers Ctrl-C between calls, however much work one
    /// slice of simulated time holds). Stopping between two events changes
    /// nothing of what follows: the next call goes on from the next event.
    pub fn advance_some(&mut self, until: Time, max_events: u64) -> bool {
        let until = until.min(self.clock.duration);
        self.clock.until = until;
        self.raise_horizon();
        let stop_at = self.events.saturating_add(max_events);
        while let Some((t, ev)) = self.agenda.next_until(until) {
            self.clock.now = t;
            self.events += 1;
            match ev {
                Event::SourceEmit(s) => self.on_source(s),
                Event::CellArrival(l) => self.on_cell_arrival(l),
                Event::PortTxDone(l) => self.on_port_tx_done(l),
                Event::PacketArrival(l) => self.on_packet_arrival(l),
                Event::IpBatch(b) => self.on_ip_batch(b),
                Event::ProbeTick => self.on_probe(),
                Event::FlowStart(f) => self.on_flow_start(f),
                Event::TcpTick(g) => self.on_tcp_tick(g),
                Event::FlowTimer(f) => self.on_flow_timer(f),
                Event::RxDone(f) => self.on_rx_done(f),
                Event::SesSend(v) => self.on_ses_send(v),
                Event::RateInterval(l) => self.on_rate_interval(l),
                Event::AckRelease(b) => self.on_ack_release(b),
                Event::AtmRateInterval(l) => self.on_atm_rate_interval(l),
                Event::Sources => self.on_sources(),
            }
            if self.events >= stop_at {
                return false;
            }
        }
        self.clock.now = self.clock.now.max(until);
        true
    }

    /// Runs to the end of the scenario.
    pub fn run(&mut self) {
        self.advance(self.clock.duration);
    }

    /// Builds the network; fails on an inconsistent scenario.
    pub fn new(sc: &Scenario) -> Result<Self, String> {
        build::build(sc)
    }
}

/// Scenarios for the parts' unit tests.
#[cfg(test)]
mod testing {
    use crate::scenario::Scenario;

    /// One TCP flow a -> r -> b over IP links of 8 Mb/s (1000 IP bytes take
    /// 1 ms), 1 ms of delay each, buffers of `buffer` packets; `extra` keys
    /// are set on the flow (e.g. `"processing_ps": 5`).
    pub(super) fn ip_line(buffer: u32, fast_paths: bool, extra: &str) -> Scenario {
        let link = |name: &str, from: u32, to: u32| {
            format!(
                r#"{{"layer":"ip","name":"{name}","from":{from},"to":{to},"bit_rate_bps":8e6,
                "delay_ps":1000000000,"buffer_packets":{buffer},"policy":{{"kind":"tail"}}}}"#
            )
        };
        let json = format!(
            r#"{{"duration_ps":1000000000000,"seed":3,"fast_paths":{fast_paths},
            "nodes":[{{"name":"a"}},{{"name":"r"}},{{"name":"b"}}],
            "links":[{},{},{},{}],"vcs":[],"sources":[],
            "flows":[{{"name":"f","layer":"ip","data_links":[0,1],"ack_links":[2,3],
              "variant":"reno","mss_bytes":960,"rcv_window_bytes":65535,"window_scale":0,
              "initial_cwnd_segments":1,"initial_ssthresh_bytes":null,"timer":{{"kind":"fine"}},
              "initial_rto_ps":3000000000000,"min_rto_ps":200000000000,
              "max_rto_ps":64000000000000,"delayed_ack_ps":0,"app_bytes":null,
              "max_sack_blocks":3{extra}}}]}}"#,
            link("ar", 0, 1),
            link("rb", 1, 2),
            link("br", 2, 1),
            link("ra", 1, 0),
        );
        serde_json::from_str(&json).unwrap()
    }
}
