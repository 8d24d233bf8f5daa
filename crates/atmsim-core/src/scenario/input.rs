//! The core JSON as serde reads it: the network's own objects (nodes,
//! links, VCs, sources, flows, probes) holding the models' parameter types
//! (each declared, with its ranges, in its model's `params`), every object
//! rejecting unknown keys.

use super::limits::{self, Limit, ZeroOr};
use crate::abr::{AbrParams, AlgorithmSpec};
use crate::atm::{Arbitration, ServiceClass};
use crate::buffer::PolicySpec;
use crate::engine::Time;
use crate::gfr::GfrParams;
use crate::ip::{AckControlSpec, RateControlSpec};
use crate::tcp::{RttArithmetic, TcpConfig, TimerMode, Variant};
use crate::traffic::SourceModel;
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
}
