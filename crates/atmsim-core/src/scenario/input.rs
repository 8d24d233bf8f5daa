//! The core JSON as serde reads it: the network's own objects (nodes,
//! links, VCs, sources, flows, probes) holding the models' parameter types
//! (each declared, with its ranges, in its model's `params`), every object
//! rejecting unknown keys.

use super::limits;
use crate::abr::{AbrParams, AlgorithmSpec};
use crate::atm::{Arbitration, ServiceClass};
use crate::buffer::PolicySpec;
use crate::engine::Time;
use crate::gfr::GfrParams;
use crate::ip::{AckControlSpec, RateControlSpec};
use crate::tcp::TcpConfig;
use crate::traffic::SourceModel;
use atmsim_params::params;
use schemars::JsonSchema;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};

/// A whole run: the network, its traffic and its probes.
#[params]
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Simulated duration, ps.
    #[param(range = limits::POSITIVE_TIME_PS)]
    pub duration_ps: Time,
    /// Seed of all random streams.
    #[param(range = limits::ANY_U64)]
    pub seed: u64,
    /// Nodes (hosts and switches).
    #[param(range = limits::ENTITIES)]
    pub nodes: Vec<NodeSpec>,
    /// Unidirectional links, each with its output port.
    #[param(range = limits::ENTITIES)]
    pub links: Vec<LinkSpec>,
    /// Virtual circuits.
    #[param(range = limits::ENTITIES)]
    pub vcs: Vec<VcSpec>,
    /// Traffic sources, one per VC at most.
    #[param(range = limits::ENTITIES)]
    pub sources: Vec<SourceSpec>,
    /// TCP connections.
    #[param(default = Vec::new(), range = limits::ENTITIES)]
    pub flows: Vec<FlowSpec>,
    /// Time-series probes.
    #[serde(default)]
    pub probes: ProbeSpec,
    /// Packet captures (pcap files of chosen IP links).
    #[param(default = Vec::new(), range = limits::ENTITIES)]
    pub captures: Vec<CaptureSpec>,
    /// Take the fast paths (events skipped because their outcome is already
    /// known, see `sim::fast_paths`); false sends every cell and packet
    /// through the plain event path, with the same results.
    #[param(default = true)]
    pub fast_paths: bool,
    /// How cells that reach a switch output port together contend for it.
    #[serde(default)]
    pub arbitration: Arbitration,
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
#[params]
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
    #[param(range = limits::BIT_RATE_BPS)]
    pub bit_rate_bps: f64,
    /// Cell rate, cells/s: sets an ATM link's cell time (the line rate or
    /// its SONET payload / 424); 0 on an IP link.
    #[param(default = 0.0, zero_or = limits::CELL_RATE_CPS)]
    pub cell_rate_cps: f64,
    /// Propagation delay, ps.
    #[param(range = limits::DELAY_PS)]
    pub delay_ps: Time,
    /// ATM: buffer of the output port, cells (null: unlimited; null on IP
    /// links).
    #[param(default = None, range = limits::BUFFER_CELLS)]
    pub buffer_cells: Option<u32>,
    /// IP: buffer of the router port, packets (at most one of the two IP
    /// buffers is set; both null: unlimited).
    #[param(default = None, range = limits::BUFFER_PACKETS)]
    pub buffer_packets: Option<u32>,
    /// IP: buffer of the router port, IP bytes.
    #[param(default = None, range = limits::BUFFER_BYTES)]
    pub buffer_bytes: Option<u64>,
    /// Drop policy of the output port: tail, intelligent_tail, ppd or epd on
    /// ATM links; tail or red on IP links.
    #[serde(deserialize_with = "crate::param::strict_tagged")]
    pub policy: PolicySpec,
    /// ATM: the ABR switch algorithm at the output port (null: none).
    #[serde(default)]
    pub algorithm: Option<AlgorithmSpec>,
    /// The port computes explicit rates for the TCP flows through it
    /// (Explicit rate control of TCP's simplified ERICA+; null: none): per
    /// flow at an IP port, in IP bytes/s; per VC at an ATM port, in cell
    /// payload bytes/s (48 per cell).
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
#[params]
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VcSpec {
    /// Name.
    pub name: String,
    /// Service category; decides the priority at a port (cbr > vbr > abr =
    /// ubr = gfr).
    pub class: ServiceClass,
    /// Path as link indices (ATM links; each ends where the next begins).
    #[param(range = limits::PATH_LINKS)]
    pub links: Vec<u32>,
    /// ABR: the path backward RM cells take to the source (the forward
    /// path's nodes in reverse); empty for other classes.
    #[param(default = Vec::new(), range = limits::IP_PATH_LINKS)]
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
#[params]
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SourceSpec {
    /// Name.
    pub name: String,
    /// Index of its VC (one source per VC; not a VC of a flow).
    pub vc: u32,
    /// Start time, ps.
    #[param(default = 0, range = limits::TIME_PS)]
    pub start_ps: Time,
    /// Stop time, ps, after the start (null: runs to the end).
    #[param(default = None, range = limits::TIME_PS)]
    pub stop_ps: Option<Time>,
    /// What it sends.
    #[serde(deserialize_with = "crate::param::strict_tagged")]
    pub model: SourceModel,
}

/// A TCP connection: the flow's own keys ([`FlowKeys`], read through
/// `Deref`) and its TCP parameters, all keys of one object.
#[derive(Clone, Debug, JsonSchema)]
#[schemars(extend("additionalProperties" = false))]
pub struct FlowSpec {
    /// The flow's own keys.
    #[serde(flatten)]
    pub keys: FlowKeys,
    /// The TCP parameters (declared with the TCP model).
    #[serde(flatten)]
    pub tcp: TcpConfig,
}

impl std::ops::Deref for FlowSpec {
    type Target = FlowKeys;
    fn deref(&self) -> &FlowKeys {
        &self.keys
    }
}

impl std::ops::DerefMut for FlowSpec {
    fn deref_mut(&mut self) -> &mut FlowKeys {
        &mut self.keys
    }
}

// Read by hand rather than with `#[serde(flatten)]`, which would accept any
// unknown key and lose the path of an error inside the TCP parameters: the
// flow's own keys are read from the object, the rest as a `TcpConfig` that
// refuses unknown keys. An error's message starts with its path inside the
// flow (".timer: ..."), which `Scenario::from_json` joins to the flow's.
impl<'de> Deserialize<'de> for FlowSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        static OWN: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        let own = OWN.get_or_init(|| {
            let schema = schemars::schema_for!(FlowKeys);
            let props = schema.get("properties").and_then(|p| p.as_object());
            props
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default()
        });
        let serde_json::Value::Object(mut map) = serde_json::Value::deserialize(d)? else {
            return Err(D::Error::custom("a flow is an object"));
        };
        let inner = |e: serde_path_to_error::Error<serde_json::Error>| {
            D::Error::custom(format_args!(".{}: {}", e.path(), e.inner()))
        };
        let mut mine = serde_json::Map::new();
        for key in own {
            if let Some(v) = map.remove(key) {
                mine.insert(key.clone(), v);
            }
        }
        let keys =
            serde_path_to_error::deserialize(serde_json::Value::Object(mine)).map_err(inner)?;
        let tcp =
            serde_path_to_error::deserialize(serde_json::Value::Object(map)).map_err(inner)?;
        Ok(FlowSpec { keys, tcp })
    }
}

/// A TCP connection's own keys: its paths and the receiving host's timing.
#[params]
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowKeys {
    /// Name.
    pub name: String,
    /// ATM (over two VCs) or IP (over two paths of IP links).
    pub layer: Layer,
    /// ATM: index of the VC carrying data, from the sender's host to the
    /// receiver's (null on IP).
    #[serde(default)]
    pub data_vc: Option<u32>,
    /// ATM: index of the VC carrying ACKs back (null on IP).
    #[serde(default)]
    pub ack_vc: Option<u32>,
    /// IP: links from sender to receiver (empty on ATM).
    #[param(default = Vec::new(), range = limits::IP_PATH_LINKS)]
    pub data_links: Vec<u32>,
    /// IP: links from receiver to sender (empty on ATM).
    #[param(default = Vec::new(), range = limits::IP_PATH_LINKS)]
    pub ack_links: Vec<u32>,
    /// When the connection starts sending, ps.
    #[param(default = 0, range = limits::TIME_PS)]
    pub start_ps: Time,
    /// Receiver processing time per data segment, ps.
    #[param(default = 0, range = limits::DELAY_PS)]
    pub processing_ps: Time,
    /// Jitter of the processing time, ps: uniform in [p - j, p + j], j <= p.
    #[param(default = 0, range = limits::DELAY_PS)]
    pub processing_jitter_ps: Time,
}

/// A packet capture: pcap files of the packets crossing some IP links
/// (`<name>.pcap`) and of those their ports drop (`<name>.drops.pcap`).
#[params]
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaptureSpec {
    /// Name: the files' names.
    pub name: String,
    /// The IP links captured, and when each packet is stamped.
    #[param(range = limits::CAPTURE_LINKS)]
    pub links: Vec<CaptureLink>,
    /// The largest size of each of the two files, bytes: 100 MiB by
    /// default (a capture stops there, and the summary says so).
    #[param(default = 100 << 20, range = limits::CAPTURE_BYTES)]
    pub max_bytes: u64,
}

/// A link of a capture.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaptureLink {
    /// Index of the link (an IP link).
    pub link: u32,
    /// When a packet crossing it is stamped.
    pub stamp: CaptureStamp,
}

/// When a captured packet is stamped.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CaptureStamp {
    /// When its transmission onto the link starts (a tap at the sending
    /// node).
    Start,
    /// When it reaches the far end (a tap at the receiving node).
    Arrival,
}

/// Time-series probes.
#[params]
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProbeSpec {
    /// Sampling period, ps (0: no probes; not 0 when any list is given).
    #[serde(default)]
    #[param(zero_or = limits::PROBE_PERIOD_PS)]
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
    /// Measure delays into the summary (no series): each VC's cell transfer
    /// delay and each TCP flow's data-segment delay and RTT samples (ITU-T
    /// I.356; docs/model.md, "Delay statistics"). Off by default: it costs
    /// work on every delivered cell.
    #[serde(default)]
    pub delay: bool,
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
            let inner = inner.to_string();
            if path == "." {
                inner
            } else if inner.starts_with('.') {
                // A path inside the value, as a flow gives it.
                format!("{path}{inner}")
            } else {
                format!("{path}: {inner}")
            }
        })?;
        de.end().map_err(|e| e.to_string())?;
        Ok(sc)
    }
}
