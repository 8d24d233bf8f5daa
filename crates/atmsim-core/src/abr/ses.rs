//! The ABR source end system (ATM Forum Traffic Management Specification 4.0, source rules): paces the
//! VC's in-rate cells at ACR, inserts forward RM cells, and adjusts ACR on
//! backward RM cells.

use super::params;
use super::{bn, ci, forward_rm, ni};
use crate::atm::cell::{Cell, CLP};
use crate::engine::time::later;
use crate::engine::{Time, PS_PER_S};
use crate::param::FRACTION;
use atmsim_params::params;
use schemars::JsonSchema;
use serde::Deserialize;

/// The source end system's parameters of an ABR VC (ATM Forum Traffic
/// Management Specification 4.0; rates in cells/s, times in ps). Where a
/// parameter has a default it is TM 4.0's; PCR (the VC's first link's cell
/// rate in the scenario) and ICR (PCR there) depend on the network.
#[params]
#[derive(Clone, Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AbrParams {
    /// Peak cell rate (at most the cell rate of the VC's first link).
    #[param(range = params::ABR_RATE_CPS)]
    pub pcr_cps: f64,
    /// Minimum cell rate (at most PCR).
    #[param(default = 0.0, range = params::ABR_MCR_CPS)]
    pub mcr_cps: f64,
    /// Initial cell rate (at most PCR).
    #[param(range = params::ABR_RATE_CPS)]
    pub icr_cps: f64,
    /// Rate increase factor (AIR = RIF x PCR).
    #[param(default = 1.0 / 16.0, range = FRACTION)]
    pub rif: f64,
    /// Rate decrease factor.
    #[param(default = 1.0 / 16.0, range = FRACTION)]
    pub rdf: f64,
    /// In-rate cells per forward RM cell.
    #[param(default = 32, range = params::ABR_NRM)]
    pub nrm: u32,
    /// Fewest in-rate cells between forward RM cells sent on the Trm timer
    /// (at most Nrm).
    #[param(default = 2, range = params::ABR_MRM)]
    pub mrm: u32,
    /// Upper bound on the time between forward RM cells: 100 ms.
    #[param(default = PS_PER_S / 10, range = params::ABR_TRM_PS)]
    pub trm_ps: Time,
    /// Forward RM cells sent without backward feedback before ACR is cut:
    /// ceil(TBE / Nrm), with TM 4.0's TBE of 2^24 - 1 and its Nrm of 32.
    #[param(default = TBE_DEFAULT.div_ceil(32), range = params::ABR_CRM)]
    pub crm: u32,
    /// Cut-off decrease factor (rule 6).
    #[param(default = 1.0 / 16.0, range = FRACTION)]
    pub cdf: f64,
    /// ACR retention time-out (rule 5): 0.5 s.
    #[param(default = PS_PER_S / 2, range = params::ABR_ADTF_PS)]
    pub adtf_ps: Time,
    /// Tagged cell rate: the least rate of forward RM cells (at most PCR).
    #[param(default = 10.0, range = params::ABR_RATE_CPS)]
    pub tcr_cps: f64,
    /// Use it or lose it (an option; TM 4.0's mandatory rules only retain
    /// ACR for ADTF): before each forward RM cell, an ACR above the rate
    /// the source actually sent at since its previous forward RM cell falls
    /// to that rate, not below ICR.
    #[param(default = false)]
    pub use_it_or_lose_it: bool,
}

/// TM 4.0's default TBE, transient buffer exposure: 2^24 - 1 cells, the
/// largest its 24-bit field holds.
pub const TBE_DEFAULT: u32 = (1 << 24) - 1;

impl AbrParams {
    /// TM 4.0's defaults for a link of `pcr_cps` (ICR = PCR).
    pub fn tm40_defaults(pcr_cps: f64) -> Self {
        AbrParams {
            pcr_cps,
            mcr_cps: Self::default_mcr_cps(),
            icr_cps: pcr_cps,
            rif: Self::default_rif(),
            rdf: Self::default_rdf(),
            nrm: Self::default_nrm(),
            mrm: Self::default_mrm(),
            trm_ps: Self::default_trm_ps(),
            crm: Self::default_crm(),
            cdf: Self::default_cdf(),
            adtf_ps: Self::default_adtf_ps(),
            tcr_cps: Self::default_tcr_cps(),
            use_it_or_lose_it: Self::default_use_it_or_lose_it(),
        }
    }
}

/// What the SES sends at an in-rate opportunity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Emit {
    /// A forward RM cell.
    Frm(Cell),
    /// The next data cell from the queue.
    Data,
}

/// The source end system of one VC.
#[derive(Clone, Debug)]
pub struct SourceEndSystem {
    /// Parameters.
    pub p: AbrParams,
    /// Allowed cell rate, cells/s.
    pub acr: f64,
    vc: u32,
    sent_any: bool,
    /// In-rate cells since the last forward RM cell.
    since_frm: u32,
    last_frm: Time,
    /// Forward RM cells sent since the last backward RM with BN = 0 (rule 6).
    unacked_frms: u32,
    /// Time of the last in-rate cell.
    pub last_send: Option<Time>,
    /// ER of the last backward RM received, cells/s.
    pub last_er: f64,
    /// Forward RM cells sent.
    pub frms_sent: u64,
    /// Backward RM cells received.
    pub brms_received: u64,
    /// Times rule 6 cut ACR.
    pub rule6_cuts: u64,
}

impl SourceEndSystem {
    /// The SES of VC `vc` at start: ACR = ICR (rule 2).
    pub fn new(vc: u32, p: AbrParams) -> Self {
        let acr = p.icr_cps.clamp(p.mcr_cps, p.pcr_cps);
        SourceEndSystem {
            acr,
            vc,
            sent_any: false,
            since_frm: 0,
            last_frm: 0,
            unacked_frms: 0,
            last_send: None,
            last_er: p.pcr_cps,
            frms_sent: 0,
            brms_received: 0,
            rule6_cuts: 0,
            p,
        }
    }

    /// The rate cells are scheduled at: ACR, or TCR when ACR is below it
    /// (rule 10: the source keeps sending RM cells at TCR).
    fn pace_cps(&self) -> f64 {
        self.acr.max(self.p.tcr_cps)
    }

    /// The earliest time of the next in-rate cell (at most
    /// [`crate::engine::time::NEVER`]: a TCR near 0 leaves an ACR of 0 a gap
    /// longer than any run).
    pub fn next_opportunity(&self, now: Time) -> Time {
        match self.last_send {
            None => now,
            Some(t) => now.max(later(t, (PS_PER_S as f64 / self.pace_cps() + 0.5) as Time)),
        }
    }

    /// True when the next in-rate cell must be a forward RM cell (rules 2, 3).
    fn frm_due(&self, now: Time) -> bool {
        !self.sent_any
            || self.since_frm + 1 >= self.p.nrm
            || (self.since_frm >= self.p.mrm && now - self.last_frm >= self.p.trm_ps)
    }

    /// An in-rate opportunity at `now` with data waiting: what to send.
    pub fn emit(&mut self, now: Time) -> Emit {
        self.last_send = Some(now);
        if self.frm_due(now) {
            // Rule 5: ACR retention.
            if self.sent_any && self.acr > self.p.icr_cps && now - self.last_frm > self.p.adtf_ps {
                self.acr = self.p.icr_cps;
            }
            // Use it or lose it: the rate of the cells sent since the last
            // forward RM cell (that one included) bounds ACR, down to ICR.
            if self.p.use_it_or_lose_it && self.sent_any && now > self.last_frm {
                let used = (self.since_frm + 1) as f64 / ((now - self.last_frm) as f64 * 1e-12);
                if self.acr > used {
                    self.acr = used.max(self.p.icr_cps).min(self.acr);
                }
            }
            // Rule 6: too many FRMs without feedback.
            if self.unacked_frms >= self.p.crm {
                self.acr = (self.acr * (1.0 - self.p.cdf)).max(self.p.mcr_cps);
                self.rule6_cuts += 1;
            }
            self.sent_any = true;
            self.since_frm = 0;
            self.last_frm = now;
            self.unacked_frms = self.unacked_frms.saturating_add(1);
            self.frms_sent += 1;
            let mut c = forward_rm(self.vc, self.acr, self.p.pcr_cps, self.p.mcr_cps);
            if self.acr < self.p.tcr_cps {
                c.flags |= CLP; // rule 10: out of rate
            }
            Emit::Frm(c)
        } else {
            self.since_frm += 1;
            Emit::Data
        }
    }

    /// A backward RM cell of this VC arrived (rules 8, 9).
    pub fn on_brm(&mut self, brm: &Cell) {
        self.brms_received += 1;
        if !bn(brm) {
            self.unacked_frms = 0;
        }
        let p = &self.p;
        if ci(brm) {
            self.acr = (self.acr * (1.0 - p.rdf)).max(p.mcr_cps);
        } else if !ni(brm) {
            self.acr = (self.acr + p.rif * p.pcr_cps).min(p.pcr_cps);
        }
        let er = brm.er as f64;
        self.last_er = er;
        self.acr = self.acr.min(er).max(p.mcr_cps);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abr::{is_frm, turn_around};
    use crate::atm::cell::{CI, NI};

    const MS: Time = 1_000_000_000;

    fn params() -> AbrParams {
        AbrParams {
            pcr_cps: 366_792.0,
            mcr_cps: 0.0,
            icr_cps: 23_585.0, // 10 Mb/s
            rif: 1.0,
            rdf: 1.0 / 512.0,
            nrm: 32,
            mrm: 2,
            trm_ps: 100 * MS,
            crm: 4, // TBE 128 / Nrm 32
            cdf: 0.5,
            adtf_ps: 500 * MS,
            tcr_cps: 10.0,
            use_it_or_lose_it: false,
        }
    }

    fn brm(er: f64, flags: u8) -> Cell {
        let mut b = turn_around(&forward_rm(0, 0.0, er, 0.0), false);
        b.flags |= flags;
        b
    }

    #[test]
    fn rule_3_first_cell_then_every_nrm() {
        let mut s = SourceEndSystem::new(0, params());
        let kinds: Vec<bool> = (0..65).map(|k| matches!(s.emit(k), Emit::Frm(_))).collect();
        // FRM first, then 31 data cells, FRM, 31 data cells, FRM.
        let frms: Vec<usize> = kinds
            .iter()
            .enumerate()
            .filter(|(_, f)| **f)
            .map(|(i, _)| i)
            .collect();
        assert_eq!(frms, vec![0, 32, 64]);
    }

    #[test]
    fn rule_3_trm_sends_an_frm_after_mrm_cells() {
        let mut s = SourceEndSystem::new(0, params());
        s.emit(0); // FRM
        assert_eq!(s.emit(1), Emit::Data);
        assert_eq!(s.emit(2), Emit::Data);
        // 100 ms later, with Mrm = 2 cells since the FRM: an FRM.
        assert!(matches!(s.emit(100 * MS + 2), Emit::Frm(_)));
    }

    #[test]
    fn rule_5_acr_retention() {
        let mut s = SourceEndSystem::new(0, params());
        let Emit::Frm(f) = s.emit(0) else { panic!() };
        assert!(is_frm(&f) && f.ccr == s.acr as f32);
        s.on_brm(&brm(300_000.0, 0)); // ACR -> min(ICR + PCR, ER) = 300,000
        assert_eq!(s.acr, 300_000.0);
        // Idle for more than ADTF: the next FRM resets ACR to ICR.
        s.since_frm = 31;
        assert!(matches!(s.emit(600 * MS), Emit::Frm(_)));
        assert_eq!(s.acr, 23_585.0);
    }

    #[test]
    fn use_it_or_lose_it_brings_acr_down_to_the_rate_used() {
        let mut p = params();
        p.use_it_or_lose_it = true;
        let mut s = SourceEndSystem::new(0, p);
        s.emit(0);
        s.on_brm(&brm(300_000.0, 0));
        assert_eq!(s.acr, 300_000.0);
        // 31 data cells and the next FRM at 100,000 cells/s (10 us apart):
        // ACR falls to 100,000.
        for k in 1..32 {
            assert_eq!(s.emit(k * 10_000_000), Emit::Data);
        }
        assert!(matches!(s.emit(32 * 10_000_000), Emit::Frm(_)));
        assert!((s.acr - 100_000.0).abs() < 1e-6, "{}", s.acr);
        // A source that paused long sends its next FRM at ICR at most.
        s.since_frm = 31;
        s.emit(40 * MS);
        assert_eq!(s.acr, params().icr_cps);
        // Without the option (rule 5 alone, ADTF 500 ms), ACR stays.
        let mut s = SourceEndSystem::new(0, params());
        s.emit(0);
        s.on_brm(&brm(300_000.0, 0));
        s.since_frm = 31;
        s.emit(40 * MS);
        assert_eq!(s.acr, 300_000.0);
    }

    #[test]
    fn rule_6_cuts_acr_on_every_frm_while_no_feedback() {
        let mut s = SourceEndSystem::new(0, params());
        s.acr = 100_000.0;
        s.p.icr_cps = 366_792.0; // keep rule 5 out of the way
        let mut acrs = vec![];
        for k in 0..7u64 {
            s.since_frm = 31;
            s.emit(k);
            acrs.push(s.acr);
        }
        // CRM = 4: FRMs 1-4 leave at 100,000; from the 5th on, each halves ACR.
        assert_eq!(
            acrs,
            vec![100_000.0, 100_000.0, 100_000.0, 100_000.0, 50_000.0, 25_000.0, 12_500.0]
        );
        // Feedback with BN = 0 resets the count.
        s.on_brm(&brm(366_792.0, 0));
        s.since_frm = 31;
        let before = s.acr;
        s.emit(10);
        assert_eq!(s.acr, before);
    }

    #[test]
    fn rules_8_and_9() {
        let mut s = SourceEndSystem::new(0, params());
        s.acr = 100_000.0;
        // CI: multiplicative decrease by RDF = 1/512.
        s.on_brm(&brm(366_792.0, CI));
        assert!((s.acr - 100_000.0 * (1.0 - 1.0 / 512.0)).abs() < 1e-9);
        // NI, no CI: no increase.
        let a = s.acr;
        s.on_brm(&brm(366_792.0, NI));
        assert_eq!(s.acr, a);
        // Neither: + RIF x PCR, capped at PCR, then at ER.
        s.on_brm(&brm(200_000.0, 0));
        assert_eq!(s.acr, 200_000.0);
        s.on_brm(&brm(1e9, 0));
        assert_eq!(s.acr, 366_792.0);
        // ER below MCR: MCR wins.
        s.p.mcr_cps = 1000.0;
        s.on_brm(&brm(10.0, 0));
        assert_eq!(s.acr, 1000.0);
    }

    #[test]
    fn a_rate_near_zero_paces_past_every_run() {
        // TCR and ACR near 0: the gap to the next cell (10^12 / 10^-300 ps)
        // saturates at NEVER instead of overflowing.
        let mut p = params();
        p.tcr_cps = 1e-300;
        p.icr_cps = 1e-300;
        let mut s = SourceEndSystem::new(0, p);
        s.emit(5);
        assert_eq!(s.next_opportunity(5), crate::engine::time::NEVER);
    }

    #[test]
    fn pacing_at_acr() {
        let mut s = SourceEndSystem::new(0, params());
        s.emit(0);
        // 23,585 cells/s: 42.39983 us between cells.
        assert_eq!(s.next_opportunity(0), 42_399_830);
        assert_eq!(s.next_opportunity(50_000_000), 50_000_000);
    }
}
