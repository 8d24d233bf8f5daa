//! The typed scenario handed over by the Python layer, in canonical units
//! (picoseconds, cells/s, bits/s) with references as indices.
//!
//! These types are the one definition of the core JSON: serde reads it
//! with them (every object rejects unknown keys), and the JSON Schema in
//! `docs/core-schema.json` is generated from them ([`json_schema`]), with
//! the allowed range of every value from [`limits`]. `docs/core-interface.md`
//! describes the format; its key tables are rendered from that schema.
//! [`Scenario::check`] rejects a value outside its range, or an
//! inconsistent model, with a message naming its JSON path; Python
//! validates the same ranges first, so a failure here is a bug in
//! validation, never a user error.

pub mod limits;

use crate::abr::{AbrParams, AlgorithmSpec};
use crate::atm::ServiceClass;
use crate::engine::Time;
use crate::tcp::{RttArithmetic, TcpConfig, TimerMode, Variant};
use limits::{Limit, ZeroOr};
use schemars::JsonSchema;
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize};

/// A whole run: the network, its traffic and its probes.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Simulated duration, ps.
    #[schemars(transform = Limit(limits::POSITIVE_TIME_PS))]
    pub duration_ps: Time,
    /// Seed of all random streams.
    #[schemars(transform = Limit(limits::ANY_U64))]
    pub seed: u64,
    /// Nodes (hosts and switches).
    #[schemars(transform = Limit(limits::ENTITIES))]
    pub nodes: Vec<NodeSpec>,
    /// Unidirectional links, each with its output port.
    #[schemars(transform = Limit(limits::ENTITIES))]
    pub links: Vec<LinkSpec>,
    /// Virtual circuits.
    #[schemars(transform = Limit(limits::ENTITIES))]
    pub vcs: Vec<VcSpec>,
    /// Traffic sources, one per VC at most.
    #[schemars(transform = Limit(limits::ENTITIES))]
    pub sources: Vec<SourceSpec>,
    /// TCP connections.
    #[serde(default)]
    #[schemars(transform = Limit(limits::ENTITIES))]
    pub flows: Vec<FlowSpec>,
    /// Time-series probes.
    #[serde(default)]
    pub probes: ProbeSpec,
    /// Take the fast paths (events skipped because their outcome is already
    /// known, see `sim::fast_paths`); false sends every cell and packet
    /// through the plain event path, with the same results.
    #[serde(default = "default_true")]
    pub fast_paths: bool,
    /// How cells that reach a switch output port together contend for it.
    #[serde(default)]
    pub arbitration: Arbitration,
}

/// How a switch output port takes the cells that reach it together.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Arbitration {
    /// In cell slots: the cells that reach a switch over links within one
    /// cell time of an output port contend for it together at the end of
    /// that slot, in a random order of their inputs drawn per slot from the
    /// run's seed (an output-queued switch, Karol, Hluchyj and Morgan 1987;
    /// see `atm::slot_arrival`). Cells that a node's own end systems send
    /// enter its ports when they are sent.
    #[default]
    Slotted,
    /// In continuous time: each cell enters its port when it arrives; only
    /// arrivals at the same picosecond go in a random order. Inputs at
    /// one rate keep fixed sub-cell phase offsets, so at a full buffer the
    /// same input can win every freed place. For comparison.
    Random,
    /// In continuous time, arrivals at the same picosecond in the order
    /// they were scheduled: one fixed order. For comparison.
    SchedulingOrder,
}

fn default_true() -> bool {
    true
}

/// What a node is (informational: any node can be a path's first or last).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// An end system.
    Host,
    /// A switch or router.
    #[default]
    Switch,
}

/// A node.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// Name.
    pub name: String,
    /// Host or switch (informational).
    #[serde(default)]
    pub kind: NodeKind,
}

/// Which network a link or flow belongs to.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// ATM: cells, switch ports.
    #[default]
    Atm,
    /// IP: packets, router ports.
    Ip,
}

/// A unidirectional link and its output port.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// ATM (cells) or IP (packets).
    #[serde(default)]
    pub layer: Layer,
    /// Name.
    pub name: String,
    /// Index of the node it leaves.
    pub from: u32,
    /// Index of the node it reaches.
    pub to: u32,
    /// Line rate, bit/s: an IP link's rate; informational on an ATM link.
    #[schemars(transform = Limit(limits::BIT_RATE_BPS))]
    pub bit_rate_bps: f64,
    /// Cell rate, cells/s: sets an ATM link's cell time (the line rate or
    /// its SONET payload / 424); 0 on an IP link.
    #[serde(default)]
    #[schemars(transform = ZeroOr(limits::CELL_RATE_CPS))]
    pub cell_rate_cps: f64,
    /// Propagation delay, ps.
    #[schemars(transform = Limit(limits::DELAY_PS))]
    pub delay_ps: Time,
    /// ATM: buffer of the output port, cells (null: unlimited; null on IP
    /// links).
    #[serde(default)]
    #[schemars(transform = Limit(limits::BUFFER_CELLS))]
    pub buffer_cells: Option<u32>,
    /// IP: buffer of the router port, packets (at most one of the two IP
    /// buffers is set; both null: unlimited).
    #[serde(default)]
    #[schemars(transform = Limit(limits::BUFFER_PACKETS))]
    pub buffer_packets: Option<u32>,
    /// IP: buffer of the router port, IP bytes.
    #[serde(default)]
    #[schemars(transform = Limit(limits::BUFFER_BYTES))]
    pub buffer_bytes: Option<u64>,
    /// Drop policy of the output port: tail, intelligent_tail, ppd or epd on
    /// ATM links; tail or red on IP links.
    #[serde(deserialize_with = "strict_tagged")]
    pub policy: PolicySpec,
    /// ATM: the ABR switch algorithm at the output port (null: none).
    #[serde(default)]
    pub algorithm: Option<AlgorithmSpec>,
    /// The port computes explicit rates for the TCP flows through it (seed
    /// 001's simplified ERICA+; null: none): per flow at an IP port, in IP
    /// bytes/s; per VC at an ATM port, in cell payload bytes/s (48 per cell).
    #[serde(default)]
    pub rate_control: Option<RateControlSpec>,
    /// What is done to the ACKs arriving over this link (null: nothing): on
    /// an IP link, by the router at its far end, for the flows another of
    /// its ports rate-controls; on an ATM link, by the edge that reassembles
    /// the ACK frames of the ACK VCs ending with it, for the flows whose data
    /// VC crosses `rates_from` (an ATM port with rate_control; no ack bucket).
    #[serde(default)]
    pub ack_control: Option<AckControlSpec>,
}

/// The simplified ERICA+ of seed 001 section 5 at a router port.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RateControlSpec {
    /// Averaging interval, ps.
    #[schemars(transform = Limit(limits::INTERVAL_PS))]
    pub interval_ps: Time,
    /// Target queueing delay T0, ps.
    #[schemars(transform = Limit(limits::INTERVAL_PS))]
    pub t0_ps: Time,
    /// The target curve above T0.
    #[schemars(transform = Limit(limits::ERICA_PLUS_A))]
    pub a: f64,
    /// The target curve below T0.
    #[schemars(transform = Limit(limits::ERICA_PLUS_B))]
    pub b: f64,
    /// Queue drain limit factor: the floor of the target factor.
    #[schemars(transform = Limit(limits::FRACTION))]
    pub qdlf: f64,
    /// Overload band: z > 1 + delta counts as overload.
    #[schemars(transform = Limit(limits::ERICA_DELTA))]
    pub delta: f64,
    /// Largest increase of a flow's rate per interval, a fraction of it.
    #[schemars(transform = Limit(limits::RATE_INCREASE))]
    pub max_increase: f64,
    /// The number of active sources: decay per interval of a silent
    /// session's activity (0: the flows seen in the interval; 1: every
    /// flow ever seen).
    #[schemars(transform = Limit(limits::UNIT_INTERVAL))]
    pub active_decay: f64,
}

/// How a flow's explicit rate becomes the window written into its ACKs:
/// W = ER x T.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum WindowRule {
    /// ACK windows are left alone.
    None,
    /// One time T for every flow.
    Fixed {
        /// T, ps.
        #[schemars(transform = Limit(limits::POSITIVE_TIME_PS))]
        t_ps: Time,
    },
    /// Each flow's own round-trip time as a ping from the router measures
    /// it: its base round-trip time plus the queueing delay of the
    /// controlling port at the instant the ACK passes (seed 001 section
    /// 4.2.1: "ping-like ICMP packets to both source and destination").
    Rtt,
    /// Each flow's base round-trip time: its paths' propagation and one
    /// segment's and one ACK's transmission at every hop, no queueing.
    BaseRtt,
}

/// What the router at a link's far end does to the ACKs it receives over
/// the link, for the flows whose data leave through its port `rates_from`.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct AckControlSpec {
    /// The link whose port computes the rates, with `rate_control`: on an IP
    /// link, an IP link leaving the node this link reaches; on an ATM link,
    /// an ATM link on the controlled flows' data VCs.
    pub rates_from: u32,
    /// Writes min(window, ER x T) into each ACK (RFC 1624 checksum update).
    pub window: WindowRule,
    /// Holds the ACKs and releases them at the flow's rate (the ack bucket;
    /// IP links only).
    pub ack_bucket: bool,
}

/// Drop policy of a port.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum PolicySpec {
    /// Tail drop: a cell or packet that finds the buffer full is dropped.
    Tail,
    /// Intelligent tail drop: from the threshold on, every cell but EOM
    /// cells is dropped.
    IntelligentTail {
        /// Occupancy from which non-EOM cells are dropped, cells (at most
        /// the buffer).
        #[schemars(transform = Limit(limits::THRESHOLD_CELLS))]
        threshold: u32,
    },
    /// Partial packet discard: once a cell of a frame is dropped, the rest
    /// of the frame is too.
    Ppd {
        /// Keep the EOM cell of a discarded frame.
        keep_eom: bool,
    },
    /// Early packet discard: a frame whose first cell finds the occupancy
    /// at or above the threshold is dropped whole.
    Epd {
        /// Occupancy at which a new frame is refused, cells (at most the
        /// buffer).
        #[schemars(transform = Limit(limits::THRESHOLD_CELLS))]
        threshold: u32,
    },
    /// Selective Drop (seed 004 section 6): above R cells in the port, a
    /// frame of a VC holding more than its share (X_i N_a / X > Z) is
    /// dropped whole.
    SelectiveDrop {
        /// R: the occupancy above which shares are enforced, cells (at most
        /// the buffer).
        #[schemars(transform = Limit(limits::THRESHOLD_CELLS))]
        threshold: u32,
        /// Z: the share factor.
        #[schemars(transform = Limit(limits::FRACTION))]
        z: f64,
    },
    /// Fair Buffer Allocation (seed 004 section 6): as Selective Drop with
    /// the share scaled by (K - R) / (X - R).
    Fba {
        /// R: the occupancy above which shares are enforced, cells (at most
        /// the buffer).
        #[schemars(transform = Limit(limits::THRESHOLD_CELLS))]
        threshold: u32,
        /// Z: the share factor.
        #[schemars(transform = Limit(limits::FRACTION))]
        z: f64,
    },
    /// Differential Fair Buffer Allocation (seed 004 section 3): buffer
    /// shares in proportion to the GFR VCs' MCRs.
    Dfba {
        /// L: below it every frame is accepted, cells.
        #[schemars(transform = Limit(limits::DFBA_THRESHOLD_CELLS))]
        low: u32,
        /// H: above it every frame is refused (EPD), cells (at least L, at
        /// most the buffer).
        #[schemars(transform = Limit(limits::THRESHOLD_CELLS))]
        high: u32,
        /// Weight of the fairness term in the drop probability (the
        /// efficiency term gets 1 - alpha).
        #[schemars(transform = Limit(limits::UNIT_INTERVAL))]
        alpha: f64,
        /// Z_i, the scale of each VC's drop probability.
        z: DfbaZ,
    },
    /// RED at an IP port (thresholds in the buffer's unit: packets, or
    /// bytes with buffer_bytes).
    Red {
        /// Lower threshold (below max_th).
        #[schemars(transform = Limit(limits::RED_THRESHOLD))]
        min_th: f64,
        /// Upper threshold.
        #[schemars(transform = Limit(limits::RED_THRESHOLD))]
        max_th: f64,
        /// Weight of the queue average (EWMA).
        #[schemars(transform = Limit(limits::FRACTION))]
        w_q: f64,
        /// Drop probability at max_th.
        #[schemars(transform = Limit(limits::FRACTION))]
        max_p: f64,
    },
}

/// DFBA's Z_i (seed 004 section 5, Table 6), with W_i / W a VC's share of
/// the port's weights.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum DfbaZ {
    /// The same Z for every VC (seed 004: 1 "in most cases").
    Constant {
        /// Z, in [0, 1].
        #[schemars(transform = Limit(limits::UNIT_INTERVAL))]
        value: f64,
    },
    /// Z_i = 1 - W_i / W.
    OneMinusShare,
    /// Z_i = (1 - W_i / W)^2.
    OneMinusShareSquared,
}

/// A GFR VC's traffic contract (ATM Forum Traffic Management Specification
/// 4.1, the Guaranteed Frame Rate service).
#[derive(Clone, Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GfrParams {
    /// Minimum cell rate, cells/s (at most the cell rate of the VC's first
    /// link).
    #[schemars(transform = Limit(limits::GFR_MCR_CPS))]
    pub mcr_cps: f64,
    /// Maximum burst size, cells (the burst tolerance of the frame-based
    /// GCRA).
    #[schemars(transform = Limit(limits::GFR_CELLS))]
    pub mbs_cells: u32,
    /// Maximum frame size, cells: longer frames are not eligible.
    #[schemars(transform = Limit(limits::GFR_CELLS))]
    pub mfs_cells: u32,
    /// Tag (CLP = 1) the frames the frame-based GCRA finds not eligible,
    /// at the VC's first switch.
    pub tagging: bool,
}

/// A virtual circuit.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VcSpec {
    /// Name.
    pub name: String,
    /// Service category; decides the priority at a port (cbr > vbr > abr =
    /// ubr = gfr).
    pub class: ServiceClass,
    /// Path as link indices (ATM links; each ends where the next begins).
    #[schemars(transform = Limit(limits::PATH_LINKS))]
    pub links: Vec<u32>,
    /// ABR: the path backward RM cells take to the source (the forward
    /// path's nodes in reverse); empty for other classes.
    #[serde(default)]
    #[schemars(transform = Limit(limits::IP_PATH_LINKS))]
    pub back_links: Vec<u32>,
    /// ABR: the source end system's parameters (required for class abr,
    /// null otherwise).
    #[serde(default)]
    pub abr: Option<AbrParams>,
    /// GFR: the traffic contract (required for class gfr, null otherwise).
    #[serde(default)]
    pub gfr: Option<GfrParams>,
}

/// A traffic source on a VC.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SourceSpec {
    /// Name.
    pub name: String,
    /// Index of its VC (one source per VC; not a VC of a flow).
    pub vc: u32,
    /// Start time, ps.
    #[serde(default)]
    #[schemars(transform = Limit(limits::TIME_PS))]
    pub start_ps: Time,
    /// Stop time, ps, after the start (null: runs to the end).
    #[serde(default)]
    #[schemars(transform = Limit(limits::TIME_PS))]
    pub stop_ps: Option<Time>,
    /// What it sends.
    #[serde(deserialize_with = "strict_tagged")]
    pub model: SourceModel,
}

/// On and off time distribution.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Distribution {
    /// Always the mean.
    Fixed,
    /// Exponential with that mean.
    Exponential,
}

/// Frame arrival process.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    /// Evenly spaced.
    Periodic,
    /// Exponential gaps.
    Poisson,
}

/// Frame size in cells: `{"fixed": n}` or `{"uniform": [lo, hi]}`.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum FrameSize {
    /// Always this many cells.
    Fixed(#[schemars(transform = Limit(limits::FRAME_CELLS))] u16),
    /// Uniform integer in [lo, hi], lo <= hi.
    Uniform(
        #[schemars(transform = Limit(limits::FRAME_CELLS))] u16,
        #[schemars(transform = Limit(limits::FRAME_CELLS))] u16,
    ),
}

impl FrameSize {
    /// Mean size in cells.
    pub fn mean(&self) -> f64 {
        match *self {
            FrameSize::Fixed(n) => n as f64,
            FrameSize::Uniform(lo, hi) => (lo as f64 + hi as f64) / 2.0,
        }
    }
}

/// Source model and its parameters. Rates are at most the cell rate of the
/// VC's first link.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum SourceModel {
    /// Constant cell rate.
    Cbr {
        /// Cells/s.
        #[schemars(transform = Limit(limits::SOURCE_RATE_CPS))]
        rate_cps: f64,
    },
    /// One cell per cell time of the VC's first link (on an ABR VC: an
    /// infinite backlog at its source end system).
    Greedy,
    /// Poisson cells: exponential gaps.
    Poisson {
        /// Cells/s.
        #[schemars(transform = Limit(limits::SOURCE_RATE_CPS))]
        rate_cps: f64,
    },
    /// On/off VBR: cells at the peak rate while on; starts on.
    VbrOnoff {
        /// Cells/s while on.
        #[schemars(transform = Limit(limits::SOURCE_RATE_CPS))]
        peak_cps: f64,
        /// Mean on time, ps.
        #[schemars(transform = Limit(limits::POSITIVE_TIME_PS))]
        on_ps: Time,
        /// Mean off time, ps.
        #[schemars(transform = Limit(limits::POSITIVE_TIME_PS))]
        off_ps: Time,
        /// Distribution of on and off times.
        distribution: Distribution,
    },
    /// Geometric bursts at the peak rate; geometric silences in slots of
    /// 1/peak_cps with mean mean_burst_cells * (peak_cps/mean_cps - 1).
    GeometricOnoff {
        /// Cells/s while in a burst.
        #[schemars(transform = Limit(limits::SOURCE_RATE_CPS))]
        peak_cps: f64,
        /// Long-run cells/s (below peak_cps).
        #[schemars(transform = Limit(limits::SOURCE_RATE_CPS))]
        mean_cps: f64,
        /// Mean burst length, cells.
        #[schemars(transform = Limit(limits::MEAN_BURST_CELLS))]
        mean_burst_cells: f64,
    },
    /// AAL5 frames; all cells of a frame enter the first port at once.
    Frames {
        /// Frame size.
        frame_cells: FrameSize,
        /// Offered cells/s (the mean frame gap is the mean frame size / rate).
        #[schemars(transform = Limit(limits::SOURCE_RATE_CPS))]
        rate_cps: f64,
        /// Arrival process.
        arrivals: Arrivals,
    },
}

/// A TCP connection: its two paths, the receiving host's timing and the
/// TCP parameters, all keys of one object.
// Read through `FlowJson`, which names every key (serde cannot reject
// unknown keys of a flattened struct); the simulator keeps the TCP
// parameters together as a `TcpConfig`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(from = "FlowJson")]
#[schemars(with = "FlowJson")]
pub struct FlowSpec {
    /// Name.
    pub name: String,
    /// ATM (over two VCs) or IP (over two link paths).
    pub layer: Layer,
    /// ATM: the VC carrying data.
    pub data_vc: Option<u32>,
    /// ATM: the VC carrying ACKs back.
    pub ack_vc: Option<u32>,
    /// IP: links from sender to receiver.
    pub data_links: Vec<u32>,
    /// IP: links from receiver to sender.
    pub ack_links: Vec<u32>,
    /// When the connection starts sending, ps.
    pub start_ps: Time,
    /// Receiver processing time per data segment, ps.
    pub processing_ps: Time,
    /// Uniform jitter around the processing time, ps.
    pub processing_jitter_ps: Time,
    /// TCP parameters.
    pub tcp: TcpConfig,
}

/// A TCP connection as the core JSON writes it: one object, every key
/// named, so that an unknown key is an error.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "FlowSpec")]
pub struct FlowJson {
    /// Name.
    name: String,
    /// ATM (over two VCs) or IP (over two paths of IP links).
    layer: Layer,
    /// ATM: index of the VC carrying data, from the sender's host to the
    /// receiver's (null on IP).
    #[serde(default)]
    data_vc: Option<u32>,
    /// ATM: index of the VC carrying ACKs back (null on IP).
    #[serde(default)]
    ack_vc: Option<u32>,
    /// IP: links from sender to receiver (empty on ATM).
    #[serde(default)]
    #[schemars(transform = Limit(limits::IP_PATH_LINKS))]
    data_links: Vec<u32>,
    /// IP: links from receiver to sender (empty on ATM).
    #[serde(default)]
    #[schemars(transform = Limit(limits::IP_PATH_LINKS))]
    ack_links: Vec<u32>,
    /// When the connection starts sending, ps.
    #[serde(default)]
    #[schemars(transform = Limit(limits::TIME_PS))]
    start_ps: Time,
    /// Receiver processing time per data segment, ps.
    #[serde(default)]
    #[schemars(transform = Limit(limits::DELAY_PS))]
    processing_ps: Time,
    /// Jitter of the processing time, ps: uniform in [p - j, p + j], j <= p.
    #[serde(default)]
    #[schemars(transform = Limit(limits::DELAY_PS))]
    processing_jitter_ps: Time,
    /// Congestion-control variant.
    variant: Variant,
    /// Maximum segment size, payload bytes.
    #[schemars(transform = Limit(limits::MSS_BYTES))]
    mss_bytes: u32,
    /// Receiver buffer: the largest window it advertises, bytes (at least
    /// the MSS).
    #[schemars(transform = Limit(limits::RCV_WINDOW_BYTES))]
    rcv_window_bytes: u64,
    /// Window-scale shift (RFC 1323); the 16-bit field is
    /// min(65535, rcv_window_bytes >> shift).
    #[schemars(transform = Limit(limits::WINDOW_SCALE))]
    window_scale: u8,
    /// Initial congestion window, segments.
    #[schemars(transform = Limit(limits::INITIAL_CWND_SEGMENTS))]
    initial_cwnd_segments: u32,
    /// Initial slow-start threshold, bytes (null: the largest window).
    #[serde(default)]
    #[schemars(transform = Limit(limits::BYTES_2_53))]
    initial_ssthresh_bytes: Option<u64>,
    /// Retransmission timer: coarse (BSD ticks) or fine.
    #[serde(deserialize_with = "strict_tagged")]
    timer: TimerMode,
    /// The RTT estimator's arithmetic: "real" (default) or "bsd" (4.4BSD's
    /// fixed-point code; coarse timer only).
    #[serde(default)]
    rtt_arithmetic: RttArithmetic,
    /// RTO before the first RTT sample, ps (min_rto_ps <= it <= max_rto_ps).
    #[schemars(transform = Limit(limits::POSITIVE_TIME_PS))]
    initial_rto_ps: Time,
    /// Smallest RTO, ps (rounded up to whole ticks with a coarse timer).
    #[schemars(transform = Limit(limits::POSITIVE_TIME_PS))]
    min_rto_ps: Time,
    /// Largest RTO, ps.
    #[schemars(transform = Limit(limits::POSITIVE_TIME_PS))]
    max_rto_ps: Time,
    /// Delayed-ACK timeout, ps (0: every segment is ACKed at once).
    #[schemars(transform = Limit(limits::DELAY_PS))]
    delayed_ack_ps: Time,
    /// Bytes the application sends (null: an infinite source).
    #[serde(default)]
    #[schemars(transform = Limit(limits::BYTES_2_53))]
    app_bytes: Option<u64>,
    /// Most SACK blocks per ACK.
    #[schemars(transform = Limit(limits::SACK_BLOCKS))]
    max_sack_blocks: u8,
}

/// Reads a `kind`-tagged object (a policy, a source model, a timer),
/// rejecting keys beside `kind` for a kind without parameters: serde
/// ignores them there even with `deny_unknown_fields`. A kind without
/// parameters is one that reads from `{"kind": ...}` alone.
fn strict_tagged<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let v = serde_json::Value::deserialize(d)?;
    let t = T::deserialize(&v).map_err(D::Error::custom)?;
    if let (Some(obj), Some(kind)) = (v.as_object(), v.get("kind")) {
        let extra = obj.keys().find(|k| *k != "kind");
        if let Some(key) = extra {
            if T::deserialize(serde_json::json!({ "kind": kind })).is_ok() {
                return Err(D::Error::custom(format_args!(
                    "unknown field `{key}`: kind {kind} takes no other key"
                )));
            }
        }
    }
    Ok(t)
}

impl From<FlowJson> for FlowSpec {
    fn from(f: FlowJson) -> Self {
        FlowSpec {
            name: f.name,
            layer: f.layer,
            data_vc: f.data_vc,
            ack_vc: f.ack_vc,
            data_links: f.data_links,
            ack_links: f.ack_links,
            start_ps: f.start_ps,
            processing_ps: f.processing_ps,
            processing_jitter_ps: f.processing_jitter_ps,
            tcp: TcpConfig {
                variant: f.variant,
                mss_bytes: f.mss_bytes,
                rcv_window_bytes: f.rcv_window_bytes,
                window_scale: f.window_scale,
                initial_cwnd_segments: f.initial_cwnd_segments,
                initial_ssthresh_bytes: f.initial_ssthresh_bytes,
                timer: f.timer,
                rtt_arithmetic: f.rtt_arithmetic,
                initial_rto_ps: f.initial_rto_ps,
                min_rto_ps: f.min_rto_ps,
                max_rto_ps: f.max_rto_ps,
                delayed_ack_ps: f.delayed_ack_ps,
                app_bytes: f.app_bytes,
                max_sack_blocks: f.max_sack_blocks,
            },
        }
    }
}

/// Time-series probes.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProbeSpec {
    /// Sampling period, ps (0: no probes; not 0 when any list is given).
    #[serde(default)]
    #[schemars(transform = ZeroOr(limits::PROBE_PERIOD_PS))]
    pub period_ps: Time,
    /// Links whose port queue length is sampled.
    #[serde(default)]
    pub queue: Vec<u32>,
    /// Links whose port utilization over each period is recorded.
    #[serde(default)]
    pub utilization: Vec<u32>,
    /// VCs whose delivered cell rate over each period is recorded.
    #[serde(default)]
    pub vc_rate: Vec<u32>,
    /// VCs whose data cells dropped and AAL5 frames lost by merging so far
    /// are recorded (the instant of each loss and merge, to a probe period).
    #[serde(default)]
    pub vc_losses: Vec<u32>,
    /// ATM links whose port's cells of each VC crossing it are sampled (the
    /// series' entities are "<link>/<vc>").
    #[serde(default)]
    pub vc_queue: Vec<u32>,
    /// Flows whose cwnd, window, sequence number and srtt are recorded.
    #[serde(default)]
    pub flows: Vec<u32>,
    /// ABR VCs whose ACR and last received ER are recorded.
    #[serde(default)]
    pub abr_vcs: Vec<u32>,
    /// Links whose port's switch algorithm's load factor, fair share and
    /// last ER are recorded.
    #[serde(default)]
    pub abr_ports: Vec<u32>,
}

impl ProbeSpec {
    /// True when any series was asked for.
    pub fn any(&self) -> bool {
        !(self.queue.is_empty()
            && self.utilization.is_empty()
            && self.vc_rate.is_empty()
            && self.vc_losses.is_empty()
            && self.vc_queue.is_empty()
            && self.flows.is_empty()
            && self.abr_vcs.is_empty()
            && self.abr_ports.is_empty())
    }
}

/// The JSON Schema of the core JSON (draft 2020-12), generated from the
/// types above with their ranges: what `docs/core-schema.json` holds.
pub fn json_schema() -> schemars::Schema {
    schemars::schema_for!(Scenario)
}

/// The schema as the checked-in file writes it: pretty JSON and a newline.
pub fn json_schema_text() -> String {
    let mut text = serde_json::to_string_pretty(&json_schema()).expect("a schema is JSON");
    text.push('\n');
    text
}

impl Scenario {
    /// Reads the core JSON; an error names the JSON path of the offending
    /// value (an unknown key, a wrong type) and is one line.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let mut de = serde_json::Deserializer::from_str(text);
        let sc: Scenario = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            if path == "." {
                inner.to_string()
            } else {
                format!("{path}: {inner}")
            }
        })?;
        de.end().map_err(|e| e.to_string())?;
        Ok(sc)
    }

    /// Rejects a model the simulator cannot run: a value outside its range
    /// (see [`limits`]) or an inconsistent reference, naming its JSON path.
    pub fn check(&self) -> Result<(), String> {
        use limits::*;
        POSITIVE_TIME_PS.check("duration_ps", self.duration_ps)?;
        ENTITIES.check_len("nodes", self.nodes.len())?;
        ENTITIES.check_len("links", self.links.len())?;
        ENTITIES.check_len("vcs", self.vcs.len())?;
        ENTITIES.check_len("sources", self.sources.len())?;
        ENTITIES.check_len("flows", self.flows.len())?;
        for (i, l) in self.links.iter().enumerate() {
            self.check_link(i, l)?;
        }
        let mut vc_used = vec![false; self.vcs.len()];
        for (i, v) in self.vcs.iter().enumerate() {
            self.check_vc(i, v)?;
        }
        for (i, s) in self.sources.iter().enumerate() {
            self.check_source(i, s, &mut vc_used)?;
        }
        for (i, f) in self.flows.iter().enumerate() {
            self.check_flow(i, f, &mut vc_used)?;
        }
        self.check_probes()
    }

    fn check_link(&self, i: usize, l: &LinkSpec) -> Result<(), String> {
        use limits::*;
        let n_nodes = self.nodes.len();
        if l.from as usize >= n_nodes {
            return Err(format!("links[{i}].from: no node {}", l.from));
        }
        if l.to as usize >= n_nodes {
            return Err(format!("links[{i}].to: no node {}", l.to));
        }
        BIT_RATE_BPS.check(format_args!("links[{i}].bit_rate_bps"), l.bit_rate_bps)?;
        DELAY_PS.check(format_args!("links[{i}].delay_ps"), l.delay_ps)?;
        match l.layer {
            Layer::Atm => {
                CELL_RATE_CPS.check(format_args!("links[{i}].cell_rate_cps"), l.cell_rate_cps)?;
                if let Some(b) = l.buffer_cells {
                    BUFFER_CELLS.check(format_args!("links[{i}].buffer_cells"), b as u64)?;
                }
                if l.buffer_packets.is_some() || l.buffer_bytes.is_some() {
                    return Err(format!(
                        "links[{i}]: buffer_packets and buffer_bytes are for IP links"
                    ));
                }
                let buffer = l.buffer_cells.unwrap_or(u32::MAX - 1) as u64;
                match l.policy {
                    PolicySpec::Tail | PolicySpec::Ppd { .. } => {}
                    PolicySpec::IntelligentTail { threshold } | PolicySpec::Epd { threshold } => {
                        Ints {
                            max: buffer,
                            ..THRESHOLD_CELLS
                        }
                        .check(
                            format_args!("links[{i}].policy.threshold"),
                            threshold as u64,
                        )?;
                    }
                    PolicySpec::SelectiveDrop { threshold, z }
                    | PolicySpec::Fba { threshold, z } => {
                        Ints {
                            max: buffer,
                            ..THRESHOLD_CELLS
                        }
                        .check(
                            format_args!("links[{i}].policy.threshold"),
                            threshold as u64,
                        )?;
                        FRACTION.check(format_args!("links[{i}].policy.z"), z)?;
                    }
                    PolicySpec::Dfba {
                        low,
                        high,
                        alpha,
                        z,
                    } => {
                        let p = format!("links[{i}].policy");
                        Ints {
                            max: buffer,
                            ..THRESHOLD_CELLS
                        }
                        .check(format_args!("{p}.high"), high as u64)?;
                        Ints {
                            max: high as u64,
                            ..DFBA_THRESHOLD_CELLS
                        }
                        .check(format_args!("{p}.low"), low as u64)?;
                        UNIT_INTERVAL.check(format_args!("{p}.alpha"), alpha)?;
                        if let DfbaZ::Constant { value } = z {
                            UNIT_INTERVAL.check(format_args!("{p}.z.value"), value)?;
                        }
                    }
                    PolicySpec::Red { .. } => {
                        return Err(format!("links[{i}].policy: red is for IP links"))
                    }
                }
                if let Some(a) = &l.algorithm {
                    check_algorithm(i, a)?;
                }
                self.check_atm_control(i, l)?;
            }
            Layer::Ip => {
                if l.cell_rate_cps != 0.0 {
                    CELL_RATE_CPS
                        .check(format_args!("links[{i}].cell_rate_cps"), l.cell_rate_cps)?;
                }
                if l.buffer_cells.is_some() {
                    return Err(format!("links[{i}].buffer_cells: for ATM links only"));
                }
                if let Some(b) = l.buffer_packets {
                    BUFFER_PACKETS.check(format_args!("links[{i}].buffer_packets"), b as u64)?;
                }
                if let Some(b) = l.buffer_bytes {
                    BUFFER_BYTES.check(format_args!("links[{i}].buffer_bytes"), b)?;
                }
                if l.buffer_packets.is_some() && l.buffer_bytes.is_some() {
                    return Err(format!("links[{i}]: buffer in packets or bytes, not both"));
                }
                match l.policy {
                    PolicySpec::Tail => {}
                    PolicySpec::Red {
                        min_th,
                        max_th,
                        w_q,
                        max_p,
                    } => {
                        let p = format!("links[{i}].policy");
                        RED_THRESHOLD.check(format_args!("{p}.min_th"), min_th)?;
                        RED_THRESHOLD.check(format_args!("{p}.max_th"), max_th)?;
                        if min_th >= max_th {
                            return Err(format!(
                                "{p}.min_th = {min_th:?} is not below {p}.max_th = {max_th:?}"
                            ));
                        }
                        FRACTION.check(format_args!("{p}.w_q"), w_q)?;
                        FRACTION.check(format_args!("{p}.max_p"), max_p)?;
                    }
                    _ => return Err(format!("links[{i}].policy: IP links take tail or red")),
                }
                if l.algorithm.is_some() {
                    return Err(format!(
                        "links[{i}].algorithm: switch algorithms run on ATM ports"
                    ));
                }
                if let Some(rc) = &l.rate_control {
                    check_rate_control(i, rc)?;
                }
                if let Some(ac) = &l.ack_control {
                    let p = format!("links[{i}].ack_control");
                    let r = ac.rates_from;
                    let Some(ports) = self.links.get(r as usize) else {
                        return Err(format!("{p}.rates_from: no link {r}"));
                    };
                    if ports.layer != Layer::Ip || ports.rate_control.is_none() {
                        return Err(format!(
                            "{p}.rates_from: link {r} is not an IP link with rate_control"
                        ));
                    }
                    if ports.from != l.to {
                        return Err(format!(
                            "{p}.rates_from: link {r} does not leave node {}, where this link ends",
                            l.to
                        ));
                    }
                    if let WindowRule::Fixed { t_ps } = ac.window {
                        POSITIVE_TIME_PS.check(format_args!("{p}.window.t_ps"), t_ps)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// The explicit-rate control of TCP at an ATM port and edge: rates
    /// measured at an ATM port, and the windows of the ACK frames reassembled
    /// where the ACK VCs ending with ATM link `i` end (seed 001 section 7:
    /// "ATM edge devices/switches, as well as ... Internet routers").
    fn check_atm_control(&self, i: usize, l: &LinkSpec) -> Result<(), String> {
        use limits::*;
        if let Some(rc) = &l.rate_control {
            check_rate_control(i, rc)?;
        }
        let Some(ac) = &l.ack_control else {
            return Ok(());
        };
        let p = format!("links[{i}].ack_control");
        let r = ac.rates_from;
        let Some(ports) = self.links.get(r as usize) else {
            return Err(format!("{p}.rates_from: no link {r}"));
        };
        if ports.layer != Layer::Atm || ports.rate_control.is_none() {
            return Err(format!(
                "{p}.rates_from: link {r} is not an ATM link with rate_control"
            ));
        }
        if ac.ack_bucket {
            return Err(format!(
                "{p}.ack_bucket: the ack bucket is modelled at IP routers only"
            ));
        }
        if let WindowRule::Fixed { t_ps } = ac.window {
            POSITIVE_TIME_PS.check(format_args!("{p}.window.t_ps"), t_ps)?;
        }
        let ends_here = self.flows.iter().any(|f| {
            f.ack_vc
                .and_then(|v| self.vcs.get(v as usize))
                .and_then(|v| v.links.last())
                == Some(&(i as u32))
        });
        if !ends_here {
            return Err(format!(
                "{p}: no flow's ack_vc ends with this link (an ATM edge writes the windows of \
                 the ACK frames it reassembles, where their VC ends)"
            ));
        }
        Ok(())
    }

    /// A path of link indices at `path`: in range, of `layer`, each link
    /// beginning where the one before ends.
    fn check_path(&self, path: &str, links: &[u32], layer: Layer) -> Result<(), String> {
        limits::PATH_LINKS.check_len(path, links.len())?;
        for (k, &l) in links.iter().enumerate() {
            match self.links.get(l as usize) {
                None => return Err(format!("{path}[{k}]: no link {l}")),
                Some(link) if link.layer != layer => {
                    let want = match layer {
                        Layer::Atm => "ATM",
                        Layer::Ip => "IP",
                    };
                    return Err(format!("{path}[{k}]: link {l} is not an {want} link"));
                }
                Some(_) => {}
            }
        }
        for (k, w) in links.windows(2).enumerate() {
            if self.links[w[0] as usize].to != self.links[w[1] as usize].from {
                return Err(format!(
                    "{path}[{}]: links {} and {} do not join",
                    k + 1,
                    w[0],
                    w[1]
                ));
            }
        }
        Ok(())
    }

    /// The cell rate of the first link of VC `v` (checked before).
    fn first_link_cps(&self, v: u32) -> f64 {
        self.links[self.vcs[v as usize].links[0] as usize].cell_rate_cps
    }

    fn check_vc(&self, i: usize, v: &VcSpec) -> Result<(), String> {
        self.check_path(&format!("vcs[{i}].links"), &v.links, Layer::Atm)?;
        if (v.class == ServiceClass::Gfr) != v.gfr.is_some() {
            return Err(format!(
                "vcs[{i}]: class gfr and gfr parameters go together"
            ));
        }
        if let Some(g) = &v.gfr {
            use limits::*;
            GFR_MCR_CPS
                .at_most(self.first_link_cps(i as u32))
                .check(format_args!("vcs[{i}].gfr.mcr_cps"), g.mcr_cps)?;
            GFR_CELLS.check(format_args!("vcs[{i}].gfr.mbs_cells"), g.mbs_cells as u64)?;
            GFR_CELLS.check(format_args!("vcs[{i}].gfr.mfs_cells"), g.mfs_cells as u64)?;
        }
        let is_abr = v.class == ServiceClass::Abr;
        if is_abr != v.abr.is_some() {
            return Err(format!(
                "vcs[{i}]: class abr and abr parameters go together"
            ));
        }
        let Some(p) = &v.abr else {
            if !v.back_links.is_empty() {
                return Err(format!("vcs[{i}].back_links: for ABR VCs only"));
            }
            return Ok(());
        };
        check_abr(&format!("vcs[{i}].abr"), p, self.first_link_cps(i as u32))?;
        // The backward path must visit the forward path's nodes in reverse.
        let n = v.links.len();
        if v.back_links.len() != n {
            return Err(format!(
                "vcs[{i}].back_links: must reverse the forward path ({n} links)"
            ));
        }
        for (k, &b) in v.back_links.iter().enumerate() {
            let Some(bl) = self.links.get(b as usize) else {
                return Err(format!("vcs[{i}].back_links[{k}]: no link {b}"));
            };
            let f = &self.links[v.links[n - 1 - k] as usize];
            if bl.layer != Layer::Atm || bl.from != f.to || bl.to != f.from {
                return Err(format!(
                    "vcs[{i}].back_links[{k}]: must reverse the forward path"
                ));
            }
        }
        Ok(())
    }

    fn check_source(&self, i: usize, s: &SourceSpec, vc_used: &mut [bool]) -> Result<(), String> {
        use limits::*;
        if s.vc as usize >= self.vcs.len() {
            return Err(format!("sources[{i}].vc: no VC {}", s.vc));
        }
        if std::mem::replace(&mut vc_used[s.vc as usize], true) {
            return Err(format!("sources[{i}]: VC {} already has a source", s.vc));
        }
        TIME_PS.check(format_args!("sources[{i}].start_ps"), s.start_ps)?;
        if let Some(stop) = s.stop_ps {
            TIME_PS.check(format_args!("sources[{i}].stop_ps"), stop)?;
            if stop <= s.start_ps {
                return Err(format!(
                    "sources[{i}].stop_ps = {stop} is not after sources[{i}].start_ps = {}",
                    s.start_ps
                ));
            }
        }
        // Rates: in range, and at most the first link's cell rate.
        let rate = SOURCE_RATE_CPS.at_most(self.first_link_cps(s.vc));
        let p = format!("sources[{i}].model");
        match s.model {
            SourceModel::Cbr { rate_cps } | SourceModel::Poisson { rate_cps } => {
                rate.check(format_args!("{p}.rate_cps"), rate_cps)
            }
            SourceModel::Greedy => Ok(()),
            SourceModel::VbrOnoff {
                peak_cps,
                on_ps,
                off_ps,
                ..
            } => {
                rate.check(format_args!("{p}.peak_cps"), peak_cps)?;
                POSITIVE_TIME_PS.check(format_args!("{p}.on_ps"), on_ps)?;
                POSITIVE_TIME_PS.check(format_args!("{p}.off_ps"), off_ps)
            }
            SourceModel::GeometricOnoff {
                peak_cps,
                mean_cps,
                mean_burst_cells,
            } => {
                rate.check(format_args!("{p}.peak_cps"), peak_cps)?;
                rate.check(format_args!("{p}.mean_cps"), mean_cps)?;
                if mean_cps >= peak_cps {
                    return Err(format!(
                        "{p}.mean_cps = {mean_cps:?} is not below {p}.peak_cps = {peak_cps:?}"
                    ));
                }
                MEAN_BURST_CELLS.check(format_args!("{p}.mean_burst_cells"), mean_burst_cells)
            }
            SourceModel::Frames {
                frame_cells,
                rate_cps,
                ..
            } => {
                match frame_cells {
                    FrameSize::Fixed(n) => {
                        FRAME_CELLS.check(format_args!("{p}.frame_cells.fixed"), n as u64)?
                    }
                    FrameSize::Uniform(lo, hi) => {
                        FRAME_CELLS.check(format_args!("{p}.frame_cells.uniform[0]"), lo as u64)?;
                        FRAME_CELLS.check(format_args!("{p}.frame_cells.uniform[1]"), hi as u64)?;
                        if lo > hi {
                            return Err(format!("{p}.frame_cells.uniform: [{lo}, {hi}] is empty"));
                        }
                    }
                }
                rate.check(format_args!("{p}.rate_cps"), rate_cps)
            }
        }
    }

    fn check_flow(&self, i: usize, f: &FlowSpec, vc_used: &mut [bool]) -> Result<(), String> {
        use limits::*;
        let p = format!("flows[{i}]");
        TIME_PS.check(format_args!("{p}.start_ps"), f.start_ps)?;
        DELAY_PS.check(format_args!("{p}.processing_ps"), f.processing_ps)?;
        DELAY_PS.check(
            format_args!("{p}.processing_jitter_ps"),
            f.processing_jitter_ps,
        )?;
        if f.processing_jitter_ps > f.processing_ps {
            return Err(format!(
                "{p}.processing_jitter_ps = {} is above {p}.processing_ps = {}",
                f.processing_jitter_ps, f.processing_ps
            ));
        }
        check_tcp(&p, &f.tcp)?;
        let endpoints = |links: &[u32]| {
            let first = &self.links[links[0] as usize];
            let last = &self.links[links[links.len() - 1] as usize];
            (first.from, last.to)
        };
        let (data, ack) = match f.layer {
            Layer::Atm => {
                let (Some(d), Some(a)) = (f.data_vc, f.ack_vc) else {
                    return Err(format!("{p}: an ATM flow needs data_vc and ack_vc"));
                };
                if !(f.data_links.is_empty() && f.ack_links.is_empty()) {
                    return Err(format!("{p}: data_links and ack_links are for IP flows"));
                }
                for (key, v) in [("data_vc", d), ("ack_vc", a)] {
                    if v as usize >= self.vcs.len() {
                        return Err(format!("{p}.{key}: no VC {v}"));
                    }
                    // Flows may share VCs (an edge router multiplexes many
                    // TCP connections onto one VC), sources may not.
                    if vc_used[v as usize] {
                        return Err(format!("{p}.{key}: VC {v} carries a traffic source"));
                    }
                }
                if d == a {
                    return Err(format!(
                        "{p}: data_vc and ack_vc must differ (both are VC {d})"
                    ));
                }
                (&self.vcs[d as usize].links, &self.vcs[a as usize].links)
            }
            Layer::Ip => {
                if f.data_vc.is_some() || f.ack_vc.is_some() {
                    return Err(format!("{p}: data_vc and ack_vc are for ATM flows"));
                }
                self.check_path(&format!("{p}.data_links"), &f.data_links, Layer::Ip)?;
                self.check_path(&format!("{p}.ack_links"), &f.ack_links, Layer::Ip)?;
                (&f.data_links, &f.ack_links)
            }
        };
        let ((a, b), (c, d)) = (endpoints(data), endpoints(ack));
        if a == d && b == c {
            Ok(())
        } else {
            Err(format!(
                "{p}: the ACK path must run from the receiver back to the sender"
            ))
        }
    }

    fn check_probes(&self) -> Result<(), String> {
        let p = &self.probes;
        if p.period_ps != 0 {
            limits::PROBE_PERIOD_PS.check("probes.period_ps", p.period_ps)?;
        } else if p.any() {
            return Err("probes.period_ps must be > 0 when a series is asked for".into());
        }
        let lists: [(&str, &[u32], usize); 5] = [
            ("queue", &p.queue, self.links.len()),
            ("utilization", &p.utilization, self.links.len()),
            ("vc_rate", &p.vc_rate, self.vcs.len()),
            ("vc_losses", &p.vc_losses, self.vcs.len()),
            ("flows", &p.flows, self.flows.len()),
        ];
        for (key, list, n) in lists {
            if let Some((k, x)) = list.iter().enumerate().find(|(_, &x)| x as usize >= n) {
                return Err(format!("probes.{key}[{k}]: no entry {x}"));
            }
        }
        for (k, &l) in p.vc_queue.iter().enumerate() {
            if self
                .links
                .get(l as usize)
                .is_none_or(|link| link.layer != Layer::Atm)
            {
                return Err(format!("probes.vc_queue[{k}]: {l} is not an ATM link"));
            }
        }
        for (k, &v) in p.abr_vcs.iter().enumerate() {
            if self.vcs.get(v as usize).is_none_or(|vc| vc.abr.is_none()) {
                return Err(format!("probes.abr_vcs[{k}]: {v} is not an ABR VC"));
            }
        }
        for (k, &l) in p.abr_ports.iter().enumerate() {
            if self
                .links
                .get(l as usize)
                .is_none_or(|link| link.algorithm.is_none())
            {
                return Err(format!(
                    "probes.abr_ports[{k}]: link {l} has no switch algorithm"
                ));
            }
        }
        Ok(())
    }
}

/// The switch algorithm of link `i`.
/// The parameters of link `i`'s rate computation (an IP or an ATM port).
fn check_rate_control(i: usize, rc: &RateControlSpec) -> Result<(), String> {
    use limits::*;
    let p = format!("links[{i}].rate_control");
    INTERVAL_PS.check(format_args!("{p}.interval_ps"), rc.interval_ps)?;
    INTERVAL_PS.check(format_args!("{p}.t0_ps"), rc.t0_ps)?;
    ERICA_PLUS_A.check(format_args!("{p}.a"), rc.a)?;
    ERICA_PLUS_B.check(format_args!("{p}.b"), rc.b)?;
    FRACTION.check(format_args!("{p}.qdlf"), rc.qdlf)?;
    ERICA_DELTA.check(format_args!("{p}.delta"), rc.delta)?;
    RATE_INCREASE.check(format_args!("{p}.max_increase"), rc.max_increase)?;
    UNIT_INTERVAL.check(format_args!("{p}.active_decay"), rc.active_decay)
}

fn check_algorithm(i: usize, a: &AlgorithmSpec) -> Result<(), String> {
    use limits::*;
    let p = format!("links[{i}].algorithm");
    let interval = |interval_ps: Time, interval_cells: u32| {
        INTERVAL_PS.check(format_args!("{p}.interval_ps"), interval_ps)?;
        INTERVAL_CELLS.check(format_args!("{p}.interval_cells"), interval_cells as u64)
    };
    match *a {
        AlgorithmSpec::Erica {
            target_utilization,
            interval_ps,
            interval_cells,
            delta,
            ..
        } => {
            FRACTION.check(format_args!("{p}.target_utilization"), target_utilization)?;
            interval(interval_ps, interval_cells)?;
            ERICA_DELTA.check(format_args!("{p}.delta"), delta)
        }
        AlgorithmSpec::EricaPlus {
            interval_ps,
            interval_cells,
            delta,
            t0_ps,
            a,
            b,
            qdlf,
            ..
        } => {
            interval(interval_ps, interval_cells)?;
            ERICA_DELTA.check(format_args!("{p}.delta"), delta)?;
            INTERVAL_PS.check(format_args!("{p}.t0_ps"), t0_ps)?;
            ERICA_PLUS_A.check(format_args!("{p}.a"), a)?;
            ERICA_PLUS_B.check(format_args!("{p}.b"), b)?;
            FRACTION.check(format_args!("{p}.qdlf"), qdlf)
        }
        AlgorithmSpec::Efci {
            high_cells,
            low_cells,
        } => {
            EFCI_HIGH_CELLS.check(format_args!("{p}.high_cells"), high_cells as u64)?;
            Ints {
                max: high_cells as u64,
                ..EFCI_LOW_CELLS
            }
            .check(format_args!("{p}.low_cells"), low_cells as u64)
        }
        AlgorithmSpec::Fmmra {
            interval_ps,
            interval_cells,
        } => interval(interval_ps, interval_cells),
    }
}

/// The SES parameters at `p` of a VC whose first link carries `link_cps`.
fn check_abr(p: &str, a: &AbrParams, link_cps: f64) -> Result<(), String> {
    use limits::*;
    ABR_RATE_CPS
        .at_most(link_cps)
        .check(format_args!("{p}.pcr_cps"), a.pcr_cps)?;
    let pcr = a.pcr_cps;
    ABR_MCR_CPS
        .at_most(pcr)
        .check(format_args!("{p}.mcr_cps"), a.mcr_cps)?;
    ABR_RATE_CPS
        .at_most(pcr)
        .check(format_args!("{p}.icr_cps"), a.icr_cps)?;
    ABR_RATE_CPS
        .at_most(pcr)
        .check(format_args!("{p}.tcr_cps"), a.tcr_cps)?;
    FRACTION.check(format_args!("{p}.rif"), a.rif)?;
    FRACTION.check(format_args!("{p}.rdf"), a.rdf)?;
    FRACTION.check(format_args!("{p}.cdf"), a.cdf)?;
    ABR_NRM.check(format_args!("{p}.nrm"), a.nrm as u64)?;
    Ints {
        max: a.nrm as u64,
        ..ABR_MRM
    }
    .check(format_args!("{p}.mrm"), a.mrm as u64)?;
    ABR_TRM_PS.check(format_args!("{p}.trm_ps"), a.trm_ps)?;
    ABR_CRM.check(format_args!("{p}.crm"), a.crm as u64)?;
    ABR_ADTF_PS.check(format_args!("{p}.adtf_ps"), a.adtf_ps)
}

/// The TCP parameters of the flow at `p`.
fn check_tcp(p: &str, t: &TcpConfig) -> Result<(), String> {
    use limits::*;
    MSS_BYTES.check(format_args!("{p}.mss_bytes"), t.mss_bytes as u64)?;
    Ints {
        min: t.mss_bytes as u64,
        ..RCV_WINDOW_BYTES
    }
    .check(format_args!("{p}.rcv_window_bytes"), t.rcv_window_bytes)?;
    WINDOW_SCALE.check(format_args!("{p}.window_scale"), t.window_scale as u64)?;
    if t.max_window() < t.mss_bytes as u64 {
        return Err(format!(
            "{p}: the advertised window ({} bytes at shift {}) is below one MSS",
            t.max_window(),
            t.window_scale
        ));
    }
    INITIAL_CWND_SEGMENTS.check(
        format_args!("{p}.initial_cwnd_segments"),
        t.initial_cwnd_segments as u64,
    )?;
    if let Some(b) = t.initial_ssthresh_bytes {
        BYTES_2_53.check(format_args!("{p}.initial_ssthresh_bytes"), b)?;
    }
    if let TimerMode::Coarse { tick_ps } = t.timer {
        TICK_PS.check(format_args!("{p}.timer.tick_ps"), tick_ps)?;
    }
    if t.rtt_arithmetic == RttArithmetic::Bsd && t.timer == TimerMode::Fine {
        return Err(format!(
            "{p}.rtt_arithmetic = \"bsd\" needs a coarse timer (BSD counts in ticks)"
        ));
    }
    POSITIVE_TIME_PS.check(format_args!("{p}.initial_rto_ps"), t.initial_rto_ps)?;
    POSITIVE_TIME_PS.check(format_args!("{p}.min_rto_ps"), t.min_rto_ps)?;
    POSITIVE_TIME_PS.check(format_args!("{p}.max_rto_ps"), t.max_rto_ps)?;
    if t.min_rto_ps > t.initial_rto_ps {
        return Err(format!(
            "{p}.min_rto_ps = {} is above {p}.initial_rto_ps = {}",
            t.min_rto_ps, t.initial_rto_ps
        ));
    }
    if t.initial_rto_ps > t.max_rto_ps {
        return Err(format!(
            "{p}.initial_rto_ps = {} is above {p}.max_rto_ps = {}",
            t.initial_rto_ps, t.max_rto_ps
        ));
    }
    DELAY_PS.check(format_args!("{p}.delayed_ack_ps"), t.delayed_ack_ps)?;
    if let Some(b) = t.app_bytes {
        BYTES_2_53.check(format_args!("{p}.app_bytes"), b)?;
    }
    SACK_BLOCKS.check(
        format_args!("{p}.max_sack_blocks"),
        t.max_sack_blocks as u64,
    )
}
