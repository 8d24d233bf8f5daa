//! A GFR VC's traffic contract as the core JSON gives it, its ranges and
//! its check.

use crate::atm::params::CELL_RATE_CPS;
use crate::param::{Ints, Reals};
use atmsim_params::params;
use schemars::JsonSchema;
use serde::Deserialize;

/// A GFR VC's MCR, cells/s (at most its first link's: checked): at least one
/// cell every 1000 s.
pub const GFR_MCR_CPS: Reals = Reals {
    min: 1e-3,
    min_open: false,
    max: CELL_RATE_CPS.max,
};
/// A GFR VC's MBS and MFS, cells.
pub const GFR_CELLS: Ints = Ints {
    min: 1,
    max: u16::MAX as u64,
};

/// A GFR VC's traffic contract (ATM Forum Traffic Management Specification
/// 4.1, the Guaranteed Frame Rate service). The MCR has no default; the
/// scenario's default MBS is 2 x MFS (docs/model.md, "GFR").
#[params]
#[derive(Clone, Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GfrParams {
    /// Minimum cell rate, cells/s (at most the cell rate of the VC's first
    /// link).
    #[param(range = GFR_MCR_CPS)]
    pub mcr_cps: f64,
    /// Maximum burst size, cells (the burst tolerance of the frame-based
    /// GCRA).
    #[param(range = GFR_CELLS)]
    pub mbs_cells: u32,
    /// Maximum frame size, cells: longer frames are not eligible. 192: the
    /// AAL5 frame of the largest IP datagram of IP over ATM's default MTU
    /// (RFC 1626: 9180 bytes) with LLC/SNAP (8 bytes) and the AAL5 trailer
    /// (8), padded to cells; every frame a TCP flow of the papers sends is
    /// within it.
    #[param(default = 192, range = GFR_CELLS)]
    pub mfs_cells: u32,
    /// Tag (CLP = 1) the frames the frame-based GCRA finds not eligible,
    /// at the VC's first switch (on by default; off: test and count them
    /// only).
    #[param(default = true)]
    pub tagging: bool,
}

impl GfrParams {
    /// Rejects a parameter outside its range, naming it under `p`; the MCR
    /// is at most `link_cps`, the cell rate of the VC's first link.
    pub fn check(&self, p: &str, link_cps: f64) -> Result<(), String> {
        self.check_ranges(p)?;
        GFR_MCR_CPS
            .at_most(link_cps)
            .check(format_args!("{p}.mcr_cps"), self.mcr_cps)
    }
}
