//! The ABR parameters as the core JSON gives them: their ranges, declared
//! once here and read by the schema (the fields of [`AlgorithmSpec`] and
//! [`AbrParams`]) and by the checks below.

use super::{AbrParams, AlgorithmSpec};
use crate::atm::params::CELL_RATE_CPS;
use crate::buffer::params::BUFFER_CELLS;
use crate::engine::time::MAX_TIME_PS;
use crate::engine::PS_PER_S;
use crate::param::{Ints, Reals};

/// Averaging interval (ERICA, ERICA+, FMMRA, the explicit-rate control of
/// TCP) and ERICA+'s T0: [1 us, 10 s].
pub const INTERVAL_PS: Ints = Ints {
    min: PS_PER_S / 1_000_000,
    max: 10 * PS_PER_S,
};

/// Averaging interval in ABR input cells.
pub const INTERVAL_CELLS: Ints = Ints {
    min: 1,
    max: 1_000_000_000,
};

/// ERICA and ERICA+ overload band delta (and that of the ERICA+ of the
/// explicit-rate control of TCP, [`crate::ip::rate_control`]).
pub const ERICA_DELTA: Reals = Reals {
    min: 0.0,
    min_open: false,
    max: 10.0,
};

/// ERICA+'s curve above T0, a.
pub const ERICA_PLUS_A: Reals = Reals {
    min: 1.0,
    min_open: false,
    max: 10.0,
};

/// ERICA+'s curve below T0, b.
pub const ERICA_PLUS_B: Reals = Reals {
    min: 0.0,
    min_open: true,
    max: 10.0,
};

/// EFCI's high threshold, cells.
pub const EFCI_HIGH_CELLS: Ints = BUFFER_CELLS;

/// EFCI's low threshold, cells (at most the high one).
pub const EFCI_LOW_CELLS: Ints = Ints {
    min: 0,
    max: BUFFER_CELLS.max,
};

/// ABR PCR, ICR and TCR: positive, at most the fastest link's cell rate
/// (and PCR at most the VC's first link's, ICR and TCR at most PCR: checked).
pub const ABR_RATE_CPS: Reals = Reals {
    min: 0.0,
    min_open: true,
    max: CELL_RATE_CPS.max,
};

/// ABR MCR: [0, PCR].
pub const ABR_MCR_CPS: Reals = Reals {
    min: 0.0,
    min_open: false,
    max: CELL_RATE_CPS.max,
};

/// Nrm (ATM Forum Traffic Management Specification 4.0): 2 to 256.
pub const ABR_NRM: Ints = Ints { min: 2, max: 256 };

/// Mrm: 1 to Nrm.
pub const ABR_MRM: Ints = Ints { min: 1, max: 256 };

/// Trm: [100 us, 10^6 s].
pub const ABR_TRM_PS: Ints = Ints {
    min: PS_PER_S / 10_000,
    max: MAX_TIME_PS,
};

/// CRM = ceil(TBE / Nrm), TBE a 24-bit field: 1 to 2^24 - 1.
pub const ABR_CRM: Ints = Ints {
    min: 1,
    max: (1 << 24) - 1,
};

/// ADTF (ATM Forum Traffic Management Specification 4.0): [10 ms, 10.23 s].
pub const ABR_ADTF_PS: Ints = Ints {
    min: PS_PER_S / 100,
    max: 10_230 * (PS_PER_S / 1_000),
};

impl AlgorithmSpec {
    /// Rejects a parameter of the switch algorithm at path `p` outside its
    /// range (declared with the parameter), or EFCI's low threshold above
    /// its high one.
    pub fn check(&self, p: &str) -> Result<(), String> {
        self.check_ranges(p)?;
        if let AlgorithmSpec::Efci {
            high_cells,
            low_cells,
        } = *self
        {
            Ints {
                max: high_cells as u64,
                ..EFCI_LOW_CELLS
            }
            .check(format_args!("{p}.low_cells"), low_cells as u64)?;
        }
        Ok(())
    }
}

impl AbrParams {
    /// Rejects a source end system's parameter at path `p` outside its
    /// range (declared with the parameter), a rate above PCR or PCR above
    /// `link_cps`, the cell rate of the VC's first link, or Mrm above Nrm.
    pub fn check(&self, p: &str, link_cps: f64) -> Result<(), String> {
        self.check_ranges(p)?;
        let pcr = self.pcr_cps;
        ABR_RATE_CPS
            .at_most(link_cps)
            .check(format_args!("{p}.pcr_cps"), pcr)?;
        ABR_MCR_CPS
            .at_most(pcr)
            .check(format_args!("{p}.mcr_cps"), self.mcr_cps)?;
        for (key, rate) in [("icr_cps", self.icr_cps), ("tcr_cps", self.tcr_cps)] {
            ABR_RATE_CPS
                .at_most(pcr)
                .check(format_args!("{p}.{key}"), rate)?;
        }
        Ints {
            max: self.nrm as u64,
            ..ABR_MRM
        }
        .check(format_args!("{p}.mrm"), self.mrm as u64)
    }
}
