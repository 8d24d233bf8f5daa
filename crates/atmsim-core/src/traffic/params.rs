//! The sources' parameters as the core JSON gives them ([`SourceModel`]),
//! their ranges and their check.

use crate::atm::params::CELL_RATE_CPS;
use crate::engine::Time;
use crate::param::{Ints, Limit, Reals, POSITIVE_TIME_PS};
use atmsim_params::params;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A source's cell rate (peak, mean): at least one cell every 1000 s, at
/// most the fastest link's cell rate (and the VC's first link's, checked).
pub const SOURCE_RATE_CPS: Reals = Reals {
    min: 1e-3,
    min_open: false,
    max: CELL_RATE_CPS.max,
};
/// Mean burst of a geometric on/off source, cells.
pub const MEAN_BURST_CELLS: Reals = Reals {
    min: 1.0,
    min_open: false,
    max: 1e9,
};
/// Frame size, cells (a `u16`).
pub const FRAME_CELLS: Ints = Ints {
    min: 1,
    max: u16::MAX as u64,
};

/// On and off time distribution.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Distribution {
    /// Always the mean.
    Fixed,
    /// Exponential with that mean.
    Exponential,
}

/// Frame arrival process.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
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
    Fixed(#[schemars(transform = Limit(FRAME_CELLS))] u16),
    /// Uniform integer in [lo, hi], lo <= hi.
    Uniform(
        #[schemars(transform = Limit(FRAME_CELLS))] u16,
        #[schemars(transform = Limit(FRAME_CELLS))] u16,
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
#[params]
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum SourceModel {
    /// Constant cell rate.
    Cbr {
        /// Cells/s.
        #[param(range = SOURCE_RATE_CPS)]
        rate_cps: f64,
    },
    /// One cell per cell time of the VC's first link (on an ABR VC: an
    /// infinite backlog at its source end system).
    Greedy,
    /// Poisson cells: exponential gaps.
    Poisson {
        /// Cells/s.
        #[param(range = SOURCE_RATE_CPS)]
        rate_cps: f64,
    },
    /// On/off VBR: cells at the peak rate while on; starts on.
    VbrOnoff {
        /// Cells/s while on.
        #[param(range = SOURCE_RATE_CPS)]
        peak_cps: f64,
        /// Mean on time, ps.
        #[param(range = POSITIVE_TIME_PS)]
        on_ps: Time,
        /// Mean off time, ps.
        #[param(range = POSITIVE_TIME_PS)]
        off_ps: Time,
        /// Distribution of on and off times (fixed by default, as TCP over
        /// ABR's VBR background: "100 ms ON time and 100 ms OFF time").
        #[param(default = Distribution::Fixed)]
        distribution: Distribution,
    },
    /// Geometric bursts at the peak rate; geometric silences in slots of
    /// 1/peak_cps with mean mean_burst_cells * (peak_cps/mean_cps - 1).
    GeometricOnoff {
        /// Cells/s while in a burst.
        #[param(range = SOURCE_RATE_CPS)]
        peak_cps: f64,
        /// Long-run cells/s (below peak_cps).
        #[param(range = SOURCE_RATE_CPS)]
        mean_cps: f64,
        /// Mean burst length, cells.
        #[param(range = MEAN_BURST_CELLS)]
        mean_burst_cells: f64,
    },
    /// AAL5 frames; all cells of a frame enter the first port at once.
    Frames {
        /// Frame size.
        frame_cells: FrameSize,
        /// Offered cells/s (the mean frame gap is the mean frame size / rate).
        #[param(range = SOURCE_RATE_CPS)]
        rate_cps: f64,
        /// Arrival process (periodic by default).
        #[param(default = Arrivals::Periodic)]
        arrivals: Arrivals,
    },
}

impl SourceModel {
    /// Rejects a parameter of the model at path `p` outside its range
    /// (declared with the parameter), a rate above `link_cps` (the cell
    /// rate of the VC's first link), a mean rate not below the peak, or a
    /// frame size out of order.
    pub fn check(&self, p: &str, link_cps: f64) -> Result<(), String> {
        self.check_ranges(p)?;
        let rate = SOURCE_RATE_CPS.at_most(link_cps);
        match *self {
            SourceModel::Cbr { rate_cps } | SourceModel::Poisson { rate_cps } => {
                rate.check(format_args!("{p}.rate_cps"), rate_cps)
            }
            SourceModel::Greedy => Ok(()),
            SourceModel::VbrOnoff { peak_cps, .. } => {
                rate.check(format_args!("{p}.peak_cps"), peak_cps)
            }
            SourceModel::GeometricOnoff {
                peak_cps, mean_cps, ..
            } => {
                rate.check(format_args!("{p}.peak_cps"), peak_cps)?;
                rate.check(format_args!("{p}.mean_cps"), mean_cps)?;
                if mean_cps >= peak_cps {
                    return Err(format!(
                        "{p}.mean_cps = {mean_cps:?} is not below {p}.peak_cps = {peak_cps:?}"
                    ));
                }
                Ok(())
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
}
