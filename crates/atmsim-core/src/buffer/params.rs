//! The parameters of a port's drop policy as the core JSON gives them
//! ([`PolicySpec`]), their ranges and their checks. RED, the one IP
//! policy, is declared here with the others (one `policy` key on every
//! link) and run by [`crate::ip::red`].

use crate::param::{Ints, Reals, FRACTION, UNIT_INTERVAL};
use atmsim_params::params;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An ATM port's buffer in cells: `u32::MAX` stands for unlimited inside the
/// core, so one less at most.
pub const BUFFER_CELLS: Ints = Ints {
    min: 1,
    max: u32::MAX as u64 - 1,
};

/// EPD, intelligent-tail, Selective Drop, FBA and DFBA (H) thresholds,
/// cells (at most the buffer).
pub const THRESHOLD_CELLS: Ints = BUFFER_CELLS;

/// DFBA's low threshold L, cells (at most H: checked).
pub const DFBA_THRESHOLD_CELLS: Ints = Ints {
    min: 0,
    max: BUFFER_CELLS.max,
};

/// RED thresholds, packets or bytes (min_th < max_th).
pub const RED_THRESHOLD: Reals = Reals {
    min: 0.0,
    min_open: true,
    max: (1u64 << 53) as f64,
};

/// Drop policy of a port. Thresholds have no default here: the scenario's
/// defaults are shares of the port's buffer (docs/scenarios.md).
#[params]
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
        #[param(range = THRESHOLD_CELLS)]
        threshold: u32,
    },
    /// Partial packet discard: once a cell of a frame is dropped, the rest
    /// of the frame is too.
    Ppd {
        /// Keep the EOM cell of a discarded frame (when there is room): on,
        /// so that the receiver sees the frame's end and the next frame is
        /// not merged into it (docs/model.md, "Drop policies").
        #[param(default = true)]
        keep_eom: bool,
    },
    /// Early packet discard: a frame whose first cell finds the occupancy
    /// at or above the threshold is dropped whole.
    Epd {
        /// Occupancy at which a new frame is refused, cells (at most the
        /// buffer).
        #[param(range = THRESHOLD_CELLS)]
        threshold: u32,
    },
    /// Selective Drop (GFR buffer management (Goyal et al., 1998) section 6):
    /// above R cells in the port, a frame of a VC holding more than its share
    /// (X_i N_a / X > Z) is dropped whole.
    SelectiveDrop {
        /// R: the occupancy above which shares are enforced, cells (at most
        /// the buffer).
        #[param(range = THRESHOLD_CELLS)]
        threshold: u32,
        /// Z: the share factor. 1, the fair share itself: our choice (GFR
        /// buffer management section 6 allows 0 < Z <= 1 without a value;
        /// docs/model.md, "Drop policies").
        #[param(default = 1.0, range = FRACTION)]
        z: f64,
    },
    /// Fair Buffer Allocation (GFR buffer management section 6): as Selective Drop with
    /// the share scaled by (K - R) / (X - R).
    Fba {
        /// R: the occupancy above which shares are enforced, cells (at most
        /// the buffer).
        #[param(range = THRESHOLD_CELLS)]
        threshold: u32,
        /// Z: the share factor. 1, the fair share itself: our choice (GFR
        /// buffer management section 6 allows 0 < Z <= 1 without a value;
        /// docs/model.md, "Drop policies").
        #[param(default = 1.0, range = FRACTION)]
        z: f64,
    },
    /// Differential Fair Buffer Allocation (GFR buffer management section 3): buffer
    /// shares in proportion to the GFR VCs' MCRs.
    Dfba {
        /// L: below it every frame is accepted, cells.
        #[param(range = DFBA_THRESHOLD_CELLS)]
        low: u32,
        /// H: above it every frame is refused (EPD), cells (at least L, at
        /// most the buffer).
        #[param(range = THRESHOLD_CELLS)]
        high: u32,
        /// Weight of the fairness term in the drop probability (the
        /// efficiency term gets 1 - alpha). 0.5: GFR buffer management
        /// section 4, "alpha was fixed to 0.5".
        #[param(default = 0.5, range = UNIT_INTERVAL)]
        alpha: f64,
        /// Z_i, the scale of each VC's drop probability. A constant 1, as in
        /// GFR buffer management's Table 1 ("Z_i = 1 for all i").
        #[param(default = DfbaZ::Constant { value: 1.0 })]
        z: DfbaZ,
    },
    /// RED at an IP port (thresholds in the buffer's unit: packets, or
    /// bytes with buffer_bytes).
    Red {
        /// Lower threshold (below max_th).
        #[param(range = RED_THRESHOLD)]
        min_th: f64,
        /// Upper threshold.
        #[param(range = RED_THRESHOLD)]
        max_th: f64,
        /// Weight of the queue average (EWMA). 0.002: Floyd and Jacobson,
        /// "Random Early Detection Gateways for Congestion Avoidance", 1993.
        #[param(default = 0.002, range = FRACTION)]
        w_q: f64,
        /// Drop probability at max_th. 0.02 (1/50): Floyd and Jacobson 1993.
        #[param(default = 0.02, range = FRACTION)]
        max_p: f64,
    },
}

/// DFBA's Z_i (GFR buffer management section 5, Table 6), with W_i / W a VC's share of
/// the port's weights.
#[params]
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum DfbaZ {
    /// The same Z for every VC (GFR buffer management: 1 "in most cases").
    Constant {
        /// Z, in [0, 1].
        #[param(range = UNIT_INTERVAL)]
        value: f64,
    },
    /// Z_i = 1 - W_i / W.
    OneMinusShare,
    /// Z_i = (1 - W_i / W)^2.
    OneMinusShareSquared,
}

impl PolicySpec {
    /// Rejects the policy at path `p` of an ATM port whose buffer holds
    /// `buffer` cells: RED, a parameter outside its range (declared with
    /// the parameter), a threshold above the buffer, or DFBA's L above H.
    pub fn check_atm(&self, p: &str, buffer: u64) -> Result<(), String> {
        if let PolicySpec::Red { .. } = self {
            return Err(format!("{p}: red is for IP links"));
        }
        self.check_ranges(p)?;
        let threshold_range = Ints {
            max: buffer,
            ..THRESHOLD_CELLS
        };
        match *self {
            PolicySpec::IntelligentTail { threshold }
            | PolicySpec::Epd { threshold }
            | PolicySpec::SelectiveDrop { threshold, .. }
            | PolicySpec::Fba { threshold, .. } => {
                threshold_range.check(format_args!("{p}.threshold"), threshold as u64)
            }
            PolicySpec::Dfba { low, high, z, .. } => {
                threshold_range.check(format_args!("{p}.high"), high as u64)?;
                Ints {
                    max: high as u64,
                    ..DFBA_THRESHOLD_CELLS
                }
                .check(format_args!("{p}.low"), low as u64)?;
                z.check_ranges(&format!("{p}.z"))
            }
            _ => Ok(()),
        }
    }

    /// Rejects the policy at path `p` of an IP port: one other than tail
    /// and RED, a RED parameter outside its range, or min_th not below
    /// max_th.
    pub fn check_ip(&self, p: &str) -> Result<(), String> {
        match *self {
            PolicySpec::Tail => Ok(()),
            PolicySpec::Red { min_th, max_th, .. } => {
                self.check_ranges(p)?;
                if min_th >= max_th {
                    return Err(format!(
                        "{p}.min_th = {min_th:?} is not below {p}.max_th = {max_th:?}"
                    ));
                }
                Ok(())
            }
            _ => Err(format!("{p}: IP links take tail or red")),
        }
    }
}
