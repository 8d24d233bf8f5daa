//! The typed scenario handed over by the Python layer, in canonical units
//! (picoseconds, cells/s, bits/s) with references as indices. The format is
//! documented in `docs/core-interface.md`. [`Scenario::check`] rejects an
//! inconsistent model with a message; Python validates first, so a failure
//! here is a bug in validation, never a user error.

use crate::atm::ServiceClass;
use crate::engine::Time;
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
    /// Time-series probes.
    #[serde(default)]
    pub probes: ProbeSpec,
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

/// A link and its output port.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Name.
    pub name: String,
    /// Index of the node it leaves.
    pub from: u32,
    /// Index of the node it reaches.
    pub to: u32,
    /// Line bit rate, bit/s (informational; the cell rate rules).
    pub bit_rate_bps: f64,
    /// Cell rate, cells/s.
    pub cell_rate_cps: f64,
    /// Propagation delay, ps.
    pub delay_ps: Time,
    /// Buffer size of the output port in cells (None = unlimited).
    pub buffer_cells: Option<u32>,
    /// Drop policy of the output port.
    pub policy: PolicySpec,
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
}

impl ProbeSpec {
    /// True when any series was asked for.
    pub fn any(&self) -> bool {
        !(self.queue.is_empty() && self.utilization.is_empty() && self.vc_rate.is_empty())
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
            if !(l.cell_rate_cps.is_finite() && l.cell_rate_cps > 0.0) {
                return Err(format!("links[{i}].cell_rate_cps must be > 0"));
            }
            if l.buffer_cells == Some(0) {
                return Err(format!("links[{i}].buffer_cells must be >= 1"));
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
        let p = &self.probes;
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
}
