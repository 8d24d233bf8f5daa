//! The typed scenario handed over by the Python layer, in canonical units
//! (picoseconds, cells/s, bits/s) with references as indices. The format is
//! documented in `docs/core-interface.md`. [`Scenario::check`] rejects an
//! inconsistent model with a message; Python validates first, so a failure
//! here is a bug in validation, never a user error.

use crate::abr::{AbrParams, AlgorithmSpec};
use crate::atm::ServiceClass;
use crate::engine::Time;
use crate::tcp::TcpConfig;
use serde::Deserialize;

/// A whole run.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Simulated duration, ps.
    pub duration_ps: Time,
    /// Seed of all random streams.
    pub seed: u64,
    /// Nodes (hosts and switches).
    pub nodes: Vec<NodeSpec>,
    /// Unidirectional links, each with its output port.
    pub links: Vec<LinkSpec>,
    /// Virtual circuits.
    pub vcs: Vec<VcSpec>,
    /// Traffic sources, one per VC at most.
    pub sources: Vec<SourceSpec>,
    /// TCP connections.
    #[serde(default)]
    pub flows: Vec<FlowSpec>,
    /// Time-series probes.
    #[serde(default)]
    pub probes: ProbeSpec,
    /// Take the fast paths (events skipped because their outcome is already
    /// known, see `sim::fast_paths`); false sends every cell and packet
    /// through the plain event path, with the same results.
    #[serde(default = "default_true")]
    pub fast_paths: bool,
    /// The order of cells that reach ports at the same instant.
    #[serde(default)]
    pub arbitration: Arbitration,
}

/// The order in which a port takes cells that reach it at the same instant.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Arbitration {
    /// A random order, drawn per instant from the run's seed (an
    /// output-queued switch; see `engine::queue`).
    #[default]
    Random,
    /// The order in which the arrivals were scheduled: one fixed order, in
    /// which the same input can win every slot freed at a full buffer. For
    /// comparison with the random order only.
    SchedulingOrder,
}

fn default_true() -> bool {
    true
}

/// A node.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// Name.
    pub name: String,
    /// "host" or "switch" (informational).
    #[serde(default = "default_kind")]
    pub kind: String,
}

fn default_kind() -> String {
    "switch".to_string()
}

/// Which network a link belongs to.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// ATM: cells, switch ports.
    #[default]
    Atm,
    /// IP: packets, router ports.
    Ip,
}

/// A link and its output port.
#[derive(Clone, Debug, Deserialize)]
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
    /// Line bit rate, bit/s (informational; the cell rate rules).
    pub bit_rate_bps: f64,
    /// Cell rate, cells/s (ATM links).
    #[serde(default)]
    pub cell_rate_cps: f64,
    /// Propagation delay, ps.
    pub delay_ps: Time,
    /// Buffer size of an ATM port in cells (None = unlimited).
    #[serde(default)]
    pub buffer_cells: Option<u32>,
    /// Buffer size of an IP port in packets.
    #[serde(default)]
    pub buffer_packets: Option<u32>,
    /// Buffer size of an IP port in IP bytes.
    #[serde(default)]
    pub buffer_bytes: Option<u64>,
    /// Drop policy of the output port.
    pub policy: PolicySpec,
    /// ABR switch algorithm at the output port (ATM links).
    #[serde(default)]
    pub algorithm: Option<AlgorithmSpec>,
}

/// Drop policy of a port.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum PolicySpec {
    /// Tail drop.
    Tail,
    /// Intelligent tail drop with a threshold in cells.
    IntelligentTail {
        /// Occupancy from which non-EOM cells are dropped.
        threshold: u32,
    },
    /// Partial packet discard.
    Ppd {
        /// Keep the EOM cell of a discarded frame.
        keep_eom: bool,
    },
    /// Early packet discard with a threshold in cells.
    Epd {
        /// Occupancy at which a new frame is refused.
        threshold: u32,
    },
    /// RED at an IP port (thresholds in the buffer's unit).
    Red {
        /// Lower threshold.
        min_th: f64,
        /// Upper threshold.
        max_th: f64,
        /// EWMA weight.
        w_q: f64,
        /// Drop probability at max_th.
        max_p: f64,
    },
}

/// A virtual circuit.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VcSpec {
    /// Name.
    pub name: String,
    /// Service category.
    pub class: ServiceClass,
    /// Path as link indices.
    pub links: Vec<u32>,
    /// ABR: the path backward RM cells take to the source (the forward
    /// path's nodes in reverse).
    #[serde(default)]
    pub back_links: Vec<u32>,
    /// ABR: the source end system's parameters (required for class abr).
    #[serde(default)]
    pub abr: Option<AbrParams>,
}

/// A traffic source on a VC.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceSpec {
    /// Name.
    pub name: String,
    /// Index of its VC.
    pub vc: u32,
    /// Start time, ps.
    #[serde(default)]
    pub start_ps: Time,
    /// Stop time, ps (None = runs to the end).
    #[serde(default)]
    pub stop_ps: Option<Time>,
    /// What it sends.
    pub model: SourceModel,
}

/// On and off time distribution.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Distribution {
    /// Always the mean.
    Fixed,
    /// Exponential with that mean.
    Exponential,
}

/// Frame arrival process.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    /// Evenly spaced.
    Periodic,
    /// Exponential gaps.
    Poisson,
}

/// Frame size in cells.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FrameSize {
    /// Always this many cells.
    Fixed(u16),
    /// Uniform integer in [lo, hi].
    Uniform(u16, u16),
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

/// Source model and its parameters.
#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum SourceModel {
    /// Constant cell rate.
    Cbr {
        /// Cells/s.
        rate_cps: f64,
    },
    /// One cell per cell time of the first link.
    Greedy,
    /// Poisson cells.
    Poisson {
        /// Cells/s.
        rate_cps: f64,
    },
    /// On/off VBR.
    VbrOnoff {
        /// Cells/s while on.
        peak_cps: f64,
        /// Mean on time, ps.
        on_ps: Time,
        /// Mean off time, ps.
        off_ps: Time,
        /// Distribution of on and off times.
        distribution: Distribution,
    },
    /// Geometric bursts.
    GeometricOnoff {
        /// Cells/s while in a burst.
        peak_cps: f64,
        /// Long-run cells/s.
        mean_cps: f64,
        /// Mean burst length, cells.
        mean_burst_cells: f64,
    },
    /// AAL5 frames.
    Frames {
        /// Frame size.
        frame_cells: FrameSize,
        /// Offered cells/s.
        rate_cps: f64,
        /// Arrival process.
        arrivals: Arrivals,
    },
}

/// A TCP connection.
#[derive(Clone, Debug, Deserialize)]
pub struct FlowSpec {
    /// Name.
    pub name: String,
    /// ATM (over two VCs) or IP (over two link paths).
    pub layer: Layer,
    /// ATM: the VC carrying data.
    #[serde(default)]
    pub data_vc: Option<u32>,
    /// ATM: the VC carrying ACKs back.
    #[serde(default)]
    pub ack_vc: Option<u32>,
    /// IP: links from sender to receiver.
    #[serde(default)]
    pub data_links: Vec<u32>,
    /// IP: links from receiver to sender.
    #[serde(default)]
    pub ack_links: Vec<u32>,
    /// When the connection starts sending, ps.
    #[serde(default)]
    pub start_ps: Time,
    /// Receiver processing time per data segment, ps.
    #[serde(default)]
    pub processing_ps: Time,
    /// Uniform jitter around the processing time, ps.
    #[serde(default)]
    pub processing_jitter_ps: Time,
    /// TCP parameters.
    #[serde(flatten)]
    pub tcp: TcpConfig,
}

/// Time-series probes.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeSpec {
    /// Sampling period, ps (0 = no probes).
    #[serde(default)]
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
    /// Flows whose cwnd, window, sequence number and srtt are recorded.
    #[serde(default)]
    pub flows: Vec<u32>,
    /// ABR VCs whose ACR and last received ER are recorded.
    #[serde(default)]
    pub abr_vcs: Vec<u32>,
    /// Ports whose switch algorithm's load factor, fair share and last ER
    /// are recorded.
    #[serde(default)]
    pub abr_ports: Vec<u32>,
}

impl ProbeSpec {
    /// True when any series was asked for.
    pub fn any(&self) -> bool {
        !(self.queue.is_empty()
            && self.utilization.is_empty()
            && self.vc_rate.is_empty()
            && self.flows.is_empty()
            && self.abr_vcs.is_empty()
            && self.abr_ports.is_empty())
    }
}

impl Scenario {
    /// Rejects a model the simulator cannot run, naming the offending item.
    pub fn check(&self) -> Result<(), String> {
        let n_nodes = self.nodes.len() as u32;
        let n_links = self.links.len() as u32;
        let n_vcs = self.vcs.len() as u32;
        if self.duration_ps == 0 {
            return Err("duration_ps must be > 0".into());
        }
        for (i, l) in self.links.iter().enumerate() {
            if l.from >= n_nodes || l.to >= n_nodes {
                return Err(format!("links[{i}]: node index out of range"));
            }
            match l.layer {
                Layer::Atm => {
                    if !(l.cell_rate_cps.is_finite() && l.cell_rate_cps > 0.0) {
                        return Err(format!("links[{i}].cell_rate_cps must be > 0"));
                    }
                    if l.buffer_cells == Some(0) {
                        return Err(format!("links[{i}].buffer_cells must be >= 1"));
                    }
                    if matches!(l.policy, PolicySpec::Red { .. }) {
                        return Err(format!("links[{i}].policy: red is for IP links"));
                    }
                }
                Layer::Ip => {
                    if !(l.bit_rate_bps.is_finite() && l.bit_rate_bps > 0.0) {
                        return Err(format!("links[{i}].bit_rate_bps must be > 0"));
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
                            if !(0.0 <= min_th
                                && min_th < max_th
                                && 0.0 < w_q
                                && w_q <= 1.0
                                && 0.0 < max_p
                                && max_p <= 1.0)
                            {
                                return Err(format!(
                                    "links[{i}].policy: RED parameters out of range"
                                ));
                            }
                        }
                        _ => return Err(format!("links[{i}].policy: IP links take tail or red")),
                    }
                }
            }
        }
        let mut has_source = vec![false; self.vcs.len()];
        for (i, v) in self.vcs.iter().enumerate() {
            if v.links.is_empty() || v.links.len() > 255 {
                return Err(format!("vcs[{i}].links must hold 1 to 255 links"));
            }
            if v.links.iter().any(|&l| l >= n_links) {
                return Err(format!("vcs[{i}].links: link index out of range"));
            }
            if v.links
                .iter()
                .any(|&l| self.links[l as usize].layer != Layer::Atm)
            {
                return Err(format!("vcs[{i}].links: a VC runs on ATM links only"));
            }
            self.check_abr(i, v)?;
            for w in v.links.windows(2) {
                if self.links[w[0] as usize].to != self.links[w[1] as usize].from {
                    return Err(format!(
                        "vcs[{i}].links: links {} and {} do not join",
                        w[0], w[1]
                    ));
                }
            }
        }
        for (i, s) in self.sources.iter().enumerate() {
            if s.vc >= n_vcs {
                return Err(format!("sources[{i}].vc out of range"));
            }
            if std::mem::replace(&mut has_source[s.vc as usize], true) {
                return Err(format!("sources[{i}]: VC {} already has a source", s.vc));
            }
            let positive = |x: f64| x.is_finite() && x > 0.0;
            let ok = match s.model {
                SourceModel::Cbr { rate_cps } | SourceModel::Poisson { rate_cps } => {
                    positive(rate_cps)
                }
                SourceModel::Greedy => true,
                SourceModel::VbrOnoff {
                    peak_cps, on_ps, ..
                } => positive(peak_cps) && on_ps > 0,
                SourceModel::GeometricOnoff {
                    peak_cps,
                    mean_cps,
                    mean_burst_cells,
                } => positive(mean_cps) && mean_cps < peak_cps && mean_burst_cells >= 1.0,
                SourceModel::Frames {
                    frame_cells,
                    rate_cps,
                    ..
                } => {
                    positive(rate_cps)
                        && match frame_cells {
                            FrameSize::Fixed(n) => n >= 1,
                            FrameSize::Uniform(lo, hi) => lo >= 1 && lo <= hi,
                        }
                }
            };
            if !ok {
                return Err(format!("sources[{i}].model: parameters out of range"));
            }
        }
        for (i, f) in self.flows.iter().enumerate() {
            self.check_flow(i, f, &mut has_source)?;
        }
        for (i, l) in self.links.iter().enumerate() {
            if l.algorithm.is_some() && l.layer != Layer::Atm {
                return Err(format!(
                    "links[{i}].algorithm: switch algorithms run on ATM ports"
                ));
            }
        }
        let p = &self.probes;
        if p.flows.iter().any(|&f| f as usize >= self.flows.len()) {
            return Err("probes.flows: index out of range".into());
        }
        if p.abr_vcs
            .iter()
            .any(|&v| v as usize >= self.vcs.len() || self.vcs[v as usize].abr.is_none())
        {
            return Err("probes.abr_vcs: not an ABR VC".into());
        }
        if p.abr_ports
            .iter()
            .any(|&l| l as usize >= self.links.len() || self.links[l as usize].algorithm.is_none())
        {
            return Err("probes.abr_ports: not a port with a switch algorithm".into());
        }
        if p.queue.iter().chain(&p.utilization).any(|&l| l >= n_links)
            || p.vc_rate.iter().any(|&v| v >= n_vcs)
        {
            return Err("probes: index out of range".into());
        }
        if p.any() && p.period_ps == 0 {
            return Err("probes.period_ps must be > 0".into());
        }
        Ok(())
    }

    fn check_abr(&self, i: usize, v: &VcSpec) -> Result<(), String> {
        let is_abr = v.class == ServiceClass::Abr;
        if is_abr != v.abr.is_some() {
            return Err(format!(
                "vcs[{i}]: class abr and abr parameters go together"
            ));
        }
        let Some(p) = &v.abr else {
            return Ok(());
        };
        let pos = |x: f64| x.is_finite() && x > 0.0;
        if !(pos(p.pcr_cps)
            && p.mcr_cps >= 0.0
            && p.mcr_cps <= p.pcr_cps
            && pos(p.icr_cps)
            && p.icr_cps <= p.pcr_cps)
            || !(pos(p.rif)
                && p.rif <= 1.0
                && pos(p.rdf)
                && p.rdf <= 1.0
                && pos(p.cdf)
                && p.cdf <= 1.0)
            || p.nrm < 2
            || p.mrm == 0
            || p.crm == 0
            || !pos(p.tcr_cps)
        {
            return Err(format!("vcs[{i}].abr: parameters out of range"));
        }
        // The backward path must visit the forward path's nodes in reverse.
        let n = v.links.len();
        if v.back_links.len() != n {
            return Err(format!(
                "vcs[{i}].back_links: must reverse the forward path"
            ));
        }
        for (k, &b) in v.back_links.iter().enumerate() {
            let Some(bl) = self.links.get(b as usize) else {
                return Err(format!("vcs[{i}].back_links: link index out of range"));
            };
            let f = &self.links[v.links[n - 1 - k] as usize];
            if bl.layer != Layer::Atm || bl.from != f.to || bl.to != f.from {
                return Err(format!(
                    "vcs[{i}].back_links: must reverse the forward path"
                ));
            }
        }
        Ok(())
    }

    fn check_flow(&self, i: usize, f: &FlowSpec, vc_used: &mut [bool]) -> Result<(), String> {
        let t = &f.tcp;
        if t.mss_bytes == 0 || t.window_scale > 14 || t.rcv_window_bytes < t.mss_bytes as u64 {
            return Err(format!(
                "flows[{i}]: mss, window or window_scale out of range"
            ));
        }
        if t.max_window() < t.mss_bytes as u64 {
            return Err(format!(
                "flows[{i}]: the advertised window is below one MSS"
            ));
        }
        if t.initial_cwnd_segments == 0 || t.max_sack_blocks == 0 || t.max_sack_blocks > 4 {
            return Err(format!(
                "flows[{i}]: initial_cwnd or max_sack_blocks out of range"
            ));
        }
        if t.min_rto_ps > t.max_rto_ps || t.initial_rto_ps == 0 || t.max_rto_ps == 0 {
            return Err(format!("flows[{i}]: RTO bounds out of range"));
        }
        if let crate::tcp::TimerMode::Coarse { tick_ps } = t.timer {
            if tick_ps == 0 {
                return Err(format!("flows[{i}].timer.tick_ps must be > 0"));
            }
        }
        if f.processing_jitter_ps > f.processing_ps {
            return Err(format!(
                "flows[{i}]: processing jitter above the processing time"
            ));
        }
        let endpoints = |links: &[u32]| -> Option<(u32, u32)> {
            let first = self.links.get(*links.first()? as usize)?;
            let last = self.links.get(*links.last()? as usize)?;
            Some((first.from, last.to))
        };
        let (data, ack) = match f.layer {
            Layer::Atm => {
                let (Some(d), Some(a)) = (f.data_vc, f.ack_vc) else {
                    return Err(format!("flows[{i}]: an ATM flow needs data_vc and ack_vc"));
                };
                if d as usize >= self.vcs.len() || a as usize >= self.vcs.len() || d == a {
                    return Err(format!("flows[{i}]: data_vc/ack_vc out of range"));
                }
                for v in [d, a] {
                    if std::mem::replace(&mut vc_used[v as usize], true) {
                        return Err(format!(
                            "flows[{i}]: VC {v} already carries a source or flow"
                        ));
                    }
                }
                (
                    self.vcs[d as usize].links.clone(),
                    self.vcs[a as usize].links.clone(),
                )
            }
            Layer::Ip => {
                let all = f.data_links.iter().chain(&f.ack_links);
                if f.data_links.is_empty()
                    || f.ack_links.is_empty()
                    || f.data_links.len() > 255
                    || f.ack_links.len() > 255
                {
                    return Err(format!(
                        "flows[{i}]: an IP flow needs data_links and ack_links (1 to 255)"
                    ));
                }
                for &l in all {
                    match self.links.get(l as usize) {
                        Some(link) if link.layer == Layer::Ip => {}
                        _ => return Err(format!("flows[{i}]: link {l} is not an IP link")),
                    }
                }
                for path in [&f.data_links, &f.ack_links] {
                    for w in path.windows(2) {
                        if self.links[w[0] as usize].to != self.links[w[1] as usize].from {
                            return Err(format!(
                                "flows[{i}]: links {} and {} do not join",
                                w[0], w[1]
                            ));
                        }
                    }
                }
                (f.data_links.clone(), f.ack_links.clone())
            }
        };
        match (endpoints(&data), endpoints(&ack)) {
            (Some((a, b)), Some((c, d))) if a == d && b == c => Ok(()),
            _ => Err(format!(
                "flows[{i}]: the ACK path must run from the receiver back to the sender"
            )),
        }
    }
}
