//! The switch-algorithm trait, the averaging-interval meter the algorithms
//! share, and the scenario form of an algorithm.

use super::params;
use crate::atm::Cell;
use crate::engine::{Time, PS_PER_S};
use crate::param::FRACTION;
use atmsim_params::params;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What an algorithm sees of its port.
#[derive(Clone, Copy, Debug)]
pub struct PortState {
    /// The link's cell rate, cells/s.
    pub link_cps: f64,
    /// Cells waiting in the port's ABR queue.
    pub abr_queue: u32,
}

/// Values an algorithm exposes to the probes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AlgorithmStats {
    /// Load factor z of the last interval (ERICA).
    pub load_factor: f64,
    /// Fair share (ERICA) or advertised rate (FMMRA), cells/s.
    pub fair_share_cps: f64,
    /// The last explicit rate written into an RM cell, cells/s.
    pub last_er_cps: f64,
}

/// A switch algorithm at one output port.
pub trait SwitchAlgorithm: Send + Sync {
    /// Name as written in scenarios.
    fn name(&self) -> &'static str;

    /// A cell is offered to the port at `now` (before the drop decision);
    /// `abr` tells whether its VC is ABR, `priority` its class priority.
    fn on_cell(&mut self, now: Time, cell: &mut Cell, abr: bool, priority: usize, port: &PortState);

    /// A backward RM cell of a VC whose forward direction leaves through this
    /// port passes the switch at `now`.
    fn on_brm(&mut self, now: Time, cell: &mut Cell, port: &PortState);

    /// A backward RM cell of a VC running the other way is offered to this
    /// port at `now`, on its way back to its source. No VC of this port sent
    /// it, but it takes the link's capacity like any ABR cell: the
    /// algorithms count it in what they measure (ERICA in its ABR input
    /// rate, FMMRA as capacity ABR cannot have), as their papers define the
    /// input.
    fn on_reverse_brm(&mut self, now: Time, port: &PortState);

    /// Values for the probes.
    fn stats(&self) -> AlgorithmStats;
}

/// The scenario form of a port's switch algorithm (times in ps). Each
/// parameter is declared with its default and range (`#[params]`); the
/// default's source is in its doc.
#[params]
#[derive(Clone, Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AlgorithmSpec {
    /// ERICA: explicit rates from the load factor and the fair share.
    Erica {
        /// Which ERICA: the basic rule of TCP over ABR (Kalyanaraman et al.,
        /// 1996) section 3.2, or the description's max-min version (the
        /// default; docs/model.md, "ABR").
        #[param(default = EricaVariant::MaxMin)]
        variant: EricaVariant,
        /// Target utilization U of the link: 0.9, as TCP over ABR section 5,
        /// ABR and UBR buffering (Kalyanaraman et al., 1998) and TCP over
        /// FMMRA (An et al., 1998) section 4.1 set it.
        #[param(default = 0.9, range = FRACTION)]
        target_utilization: f64,
        /// Averaging interval: time bound, ps. 1 ms: TCP over ABR section 5
        /// ("100 cells or 1 ms, whichever first").
        #[param(default = PS_PER_S / 1_000, range = params::INTERVAL_PS)]
        interval_ps: Time,
        /// Averaging interval: ABR input cells bound. 100: TCP over ABR
        /// section 5.
        #[param(default = 100, range = params::INTERVAL_CELLS)]
        interval_cells: u32,
        /// Overload band: z > 1 + delta counts as overload. 0.1: the ERICA
        /// description (Jain et al., "ERICA Switch Algorithm: A Complete
        /// Description", ATM Forum 96-1172).
        #[param(default = 0.1, range = params::ERICA_DELTA)]
        delta: f64,
        /// Use each VC's measured rate instead of the CCR of its RM cells.
        /// Off: the papers' ERICA took the CCR from the forward RM cells
        /// (TCP over ABR section 9: window-limited sources keep their ACRs
        /// at 90 % of the link); the description's per-VC measurement is
        /// the option (docs/model.md, "ABR").
        #[param(default = false)]
        measured_rate: bool,
        /// Count VCs seen by their backward RM cells as active too. On:
        /// Kalyanaraman's dissertation marks a VC seen on every backward RM
        /// cell, and the study behind ABR and UBR buffering ran ERICA with
        /// "correct counting of bursty sources" (docs/model.md, "ABR").
        #[param(default = true)]
        bidirectional_count: bool,
    },
    /// ERICA+: ERICA with a queueing-delay target instead of a utilization.
    EricaPlus {
        /// Averaging interval: time bound, ps (as ERICA's).
        #[param(default = PS_PER_S / 1_000, range = params::INTERVAL_PS)]
        interval_ps: Time,
        /// Averaging interval: ABR input cells bound (as ERICA's).
        #[param(default = 100, range = params::INTERVAL_CELLS)]
        interval_cells: u32,
        /// Overload band (as ERICA's).
        #[param(default = 0.1, range = params::ERICA_DELTA)]
        delta: f64,
        /// Use measured per-VC rates (as ERICA's).
        #[param(default = false)]
        measured_rate: bool,
        /// Count VCs seen by backward RM cells (as ERICA's).
        #[param(default = true)]
        bidirectional_count: bool,
        /// Target queueing delay T0, ps. 1.5 ms: Explicit rate control of
        /// TCP (Satyavolu et al., 1998) section 6.
        #[param(default = 1_500 * (PS_PER_S / 1_000_000), range = params::INTERVAL_PS)]
        t0_ps: Time,
        /// Curve above T0, a. 1.15: Explicit rate control of TCP.
        #[param(default = 1.15, range = params::ERICA_PLUS_A)]
        a: f64,
        /// Curve below T0, b. 1.05: the literature's value (Explicit rate
        /// control of TCP uses 1 for its routers, the default of
        /// `RateControlSpec`).
        #[param(default = 1.05, range = params::ERICA_PLUS_B)]
        b: f64,
        /// Floor of the target factor (queue drain limit factor). 0.5:
        /// Explicit rate control of TCP.
        #[param(default = 0.5, range = FRACTION)]
        qdlf: f64,
    },
    /// Binary EFCI marking with hysteresis.
    Efci {
        /// ABR queue (cells) above which data cells are marked. No default:
        /// the papers give it per experiment.
        #[param(range = params::EFCI_HIGH_CELLS)]
        high_cells: u32,
        /// ABR queue (cells) below which marking stops (at most high_cells;
        /// the scenario's default is high_cells, no hysteresis).
        #[param(range = params::EFCI_LOW_CELLS)]
        low_cells: u32,
    },
    /// FMMRA (our reconstruction).
    Fmmra {
        /// Averaging interval of the capacity measurement: time bound, ps
        /// (as ERICA's).
        #[param(default = PS_PER_S / 1_000, range = params::INTERVAL_PS)]
        interval_ps: Time,
        /// Averaging interval: cells bound (as ERICA's).
        #[param(default = 100, range = params::INTERVAL_CELLS)]
        interval_cells: u32,
    },
}

/// Which ERICA a port runs.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EricaVariant {
    /// ER = max(FairShare, VCShare) when the link is overloaded (z > 1 +
    /// delta), else max(MaxAllocPrevious, VCShare); a VC below the fair
    /// share rises only to it (Jain et al., "ERICA Switch Algorithm: A
    /// Complete Description", ATM Forum 96-1172: the max-min fairness
    /// enhancement).
    #[default]
    MaxMin,
    /// ER = max(FairShare, VCShare) always (TCP over ABR section 3.2, the
    /// algorithm as first proposed).
    Basic,
}

/// Builds the algorithm a scenario asks for, for VCs `0..n_vcs`.
pub fn build(spec: &AlgorithmSpec, n_vcs: usize) -> Box<dyn SwitchAlgorithm> {
    use super::{efci, erica, erica_plus, fmmra};
    match *spec {
        AlgorithmSpec::Erica {
            variant,
            target_utilization,
            interval_ps,
            interval_cells,
            delta,
            measured_rate,
            bidirectional_count,
        } => Box::new(
            erica::Erica::new(
                n_vcs,
                erica::Target::Utilization(target_utilization),
                Meter::new(n_vcs, interval_ps, interval_cells),
                delta,
                measured_rate,
                bidirectional_count,
            )
            .with_variant(variant),
        ),
        AlgorithmSpec::EricaPlus {
            interval_ps,
            interval_cells,
            delta,
            measured_rate,
            bidirectional_count,
            t0_ps,
            a,
            b,
            qdlf,
        } => Box::new(erica_plus::new(
            n_vcs,
            erica_plus::QueueDelayTarget { t0_ps, a, b, qdlf },
            Meter::new(n_vcs, interval_ps, interval_cells),
            delta,
            measured_rate,
            bidirectional_count,
        )),
        AlgorithmSpec::Efci {
            high_cells,
            low_cells,
        } => Box::new(efci::Efci::new(high_cells, low_cells)),
        AlgorithmSpec::Fmmra {
            interval_ps,
            interval_cells,
        } => Box::new(fmmra::Fmmra::new(
            n_vcs,
            Meter::new(n_vcs, interval_ps, interval_cells),
        )),
    }
}

/// What one averaging interval measured.
#[derive(Clone, Debug, Default)]
pub struct Measured {
    /// ABR input rate, cells/s.
    pub abr_cps: f64,
    /// CBR + VBR input rate, cells/s.
    pub vbr_cps: f64,
    /// Rate of the backward RM cells of VCs running the other way, cells/s
    /// (ABR cells no VC of this port sent).
    pub reverse_brm_cps: f64,
    /// ABR VCs seen.
    pub active_vcs: u32,
    /// Length of the interval, ps.
    pub length_ps: Time,
}

/// The averaging interval of ERICA and FMMRA: ends after `interval_ps` or
/// `interval_cells` ABR input cells, whichever comes first. The time bound is
/// checked whenever the port sees a cell or a backward RM cell (a port that
/// sees nothing needs no new rates), so an interval ended by time lasts
/// until that moment and its rates are averages over its real length.
#[derive(Clone, Debug)]
pub struct Meter {
    interval_ps: Time,
    interval_cells: u32,
    start: Time,
    abr_cells: u32,
    /// CBR and VBR cells: not bounded by `interval_cells`, so up to 10 s of
    /// a 1 Tbit/s link's cells (more than `u32` holds).
    vbr_cells: u64,
    /// Backward RM cells of VCs running the other way.
    reverse_brm_cells: u32,
    seen: Vec<u64>,
    active: u32,
    per_vc: Vec<u32>,
    /// Per-VC measured rates of the last interval, cells/s.
    pub vc_rate: Vec<f64>,
    /// Intervals closed so far (an interval's id).
    pub closed: u64,
}

impl Meter {
    /// A meter for VCs `0..n_vcs`.
    pub fn new(n_vcs: usize, interval_ps: Time, interval_cells: u32) -> Self {
        Meter {
            interval_ps,
            interval_cells: interval_cells.max(1),
            start: 0,
            abr_cells: 0,
            vbr_cells: 0,
            reverse_brm_cells: 0,
            seen: vec![u64::MAX; n_vcs],
            active: 0,
            per_vc: vec![0; n_vcs],
            vc_rate: vec![0.0; n_vcs],
            closed: 0,
        }
    }

    /// Marks VC `vc` active in this interval.
    pub fn mark_active(&mut self, vc: u32) {
        let s = &mut self.seen[vc as usize];
        if *s != self.closed {
            *s = self.closed;
            self.active += 1;
        }
    }

    /// Counts a cell offered to the port; returns the interval's measurement
    /// if this cell closed it.
    pub fn count(&mut self, now: Time, vc: u32, abr: bool, priority: usize) -> Option<Measured> {
        if abr {
            self.abr_cells += 1;
            self.per_vc[vc as usize] += 1;
            self.mark_active(vc);
            if self.abr_cells + self.reverse_brm_cells >= self.interval_cells {
                return Some(self.close(now));
            }
        } else if priority < 2 {
            self.vbr_cells += 1;
        }
        self.close_if_due(now)
    }

    /// Counts a backward RM cell of a VC running the other way (an ABR input
    /// cell, toward the interval's cell bound, of no VC of this port).
    pub fn count_reverse_brm(&mut self, now: Time) -> Option<Measured> {
        self.reverse_brm_cells += 1;
        if self.abr_cells + self.reverse_brm_cells >= self.interval_cells {
            return Some(self.close(now));
        }
        self.close_if_due(now)
    }

    /// Closes the interval if its time is up.
    pub fn close_if_due(&mut self, now: Time) -> Option<Measured> {
        if now >= self.start + self.interval_ps {
            Some(self.close(now))
        } else {
            None
        }
    }

    fn close(&mut self, now: Time) -> Measured {
        let length_ps = (now - self.start).max(1);
        let secs = length_ps as f64 * 1e-12;
        let m = Measured {
            abr_cps: self.abr_cells as f64 / secs,
            vbr_cps: self.vbr_cells as f64 / secs,
            reverse_brm_cps: self.reverse_brm_cells as f64 / secs,
            active_vcs: self.active,
            length_ps,
        };
        for (r, c) in self.vc_rate.iter_mut().zip(self.per_vc.iter_mut()) {
            *r = *c as f64 / secs;
            *c = 0;
        }
        self.start = now;
        self.abr_cells = 0;
        self.vbr_cells = 0;
        self.reverse_brm_cells = 0;
        self.active = 0;
        self.closed += 1;
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_ends_at_n_cells_or_t() {
        let ms = 1_000_000_000;
        let mut m = Meter::new(3, ms, 100);
        for k in 0..99 {
            assert!(m.count(k * 1000, (k % 3) as u32, true, 2).is_none());
        }
        let r = m.count(99_000, 0, true, 2).expect("100th cell closes it");
        assert_eq!(r.active_vcs, 3);
        assert!((r.abr_cps - 100.0 / 99e-9).abs() / r.abr_cps < 1e-9);
        // Time bound: 3 VBR cells, then 1 ms passes.
        for k in 0..3 {
            m.count(100_000 + k, 0, false, 1);
        }
        let r = m.close_if_due(99_000 + ms).expect("time is up");
        assert_eq!(r.active_vcs, 0);
        assert!((r.vbr_cps - 3000.0).abs() < 1e-6);
    }
}
