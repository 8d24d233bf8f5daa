//! ERICA (TCP over ABR (Kalyanaraman et al., 1996) section 3.2; Jain et al.,
//! "ERICA Switch Algorithm: A Complete Description", ATM Forum 96-1172):
//! explicit rates from the load factor and the fair share, measured over
//! averaging intervals.

use super::algorithm::{AlgorithmStats, EricaVariant, Measured, Meter, PortState, SwitchAlgorithm};
use super::erica_plus::QueueDelayTarget;
use super::{is_brm, is_frm};
use crate::atm::Cell;
use crate::engine::Time;

/// What capacity ERICA aims at.
#[derive(Clone, Copy, Debug)]
pub enum Target {
    /// ERICA: U x link rate - CBR/VBR rate.
    Utilization(f64),
    /// ERICA+: f(queueing delay) x (link rate - CBR/VBR rate).
    QueueDelay(QueueDelayTarget),
}

/// ERICA at one port.
pub struct Erica {
    target: Target,
    variant: EricaVariant,
    meter: Meter,
    delta: f64,
    measured_rate: bool,
    bidirectional_count: bool,
    valid: bool,
    /// ABR capacity of the last interval, cells/s.
    pub abr_cap: f64,
    /// Load factor of the last interval.
    pub z: f64,
    /// Fair share of the last interval, cells/s.
    pub fair_share: f64,
    max_alloc_prev: f64,
    max_alloc_cur: f64,
    ccr: Vec<f64>,
    er_cache: Vec<(u64, f64)>,
    last_er: f64,
}

impl Erica {
    /// ERICA (or ERICA+, by its target) for VCs `0..n_vcs`.
    pub fn new(
        n_vcs: usize,
        target: Target,
        meter: Meter,
        delta: f64,
        measured_rate: bool,
        bidirectional_count: bool,
    ) -> Self {
        Erica {
            target,
            variant: EricaVariant::MaxMin,
            meter,
            delta,
            measured_rate,
            bidirectional_count,
            valid: false,
            abr_cap: 0.0,
            z: 0.0,
            fair_share: 0.0,
            max_alloc_prev: 0.0,
            max_alloc_cur: 0.0,
            ccr: vec![0.0; n_vcs],
            er_cache: vec![(u64::MAX, 0.0); n_vcs],
            last_er: 0.0,
        }
    }

    /// The same ERICA with the rule of `variant`.
    pub fn with_variant(mut self, variant: EricaVariant) -> Self {
        self.variant = variant;
        self
    }

    /// End of an averaging interval: the new ABR capacity, z and fair share.
    /// The ABR input rate counts every ABR cell offered to the port, the
    /// backward RM cells of VCs running the other way included.
    pub fn end_interval(&mut self, m: &Measured, port: &PortState) {
        let avail = (port.link_cps - m.vbr_cps).max(0.0);
        self.abr_cap = match self.target {
            Target::Utilization(u) => (u * port.link_cps - m.vbr_cps).max(0.0),
            Target::QueueDelay(q) => {
                let tq_s = if avail > 0.0 {
                    port.abr_queue as f64 / avail
                } else {
                    f64::INFINITY
                };
                q.factor(tq_s) * avail
            }
        };
        let input_cps = m.abr_cps + m.reverse_brm_cps;
        self.z = if self.abr_cap <= 0.0 || input_cps <= 0.0 {
            f64::INFINITY
        } else {
            input_cps / self.abr_cap
        };
        let n = m.active_vcs.max(1) as f64;
        self.fair_share = self.abr_cap / n;
        self.max_alloc_prev = self.max_alloc_cur;
        self.max_alloc_cur = self.fair_share;
        self.valid = true;
    }

    /// The explicit rate for VC `vc` whose current rate is `ccr` (cells/s).
    pub fn rate_for(&mut self, vc: u32, ccr: f64) -> f64 {
        let slot = &mut self.er_cache[vc as usize];
        if slot.0 == self.meter.closed {
            return slot.1;
        }
        let vc_share = if self.z.is_finite() && self.z > 0.0 {
            ccr / self.z
        } else {
            0.0
        };
        if self.variant == EricaVariant::Basic {
            let er = self.fair_share.max(vc_share).min(self.abr_cap);
            *slot = (self.meter.closed, er);
            return er;
        }
        let mut er = if self.z > 1.0 + self.delta {
            self.fair_share.max(vc_share)
        } else {
            self.max_alloc_prev.max(vc_share)
        };
        self.max_alloc_cur = self.max_alloc_cur.max(er);
        // A source below the fair share may rise only to it. "Below" allows
        // for the precision of RM-cell rates (TM 4.0's 9-bit mantissa): a
        // CCR within 1/512 of the fair share is at it, so rounding cannot
        // pin one source to the fair share while the others sit above it.
        if er > self.fair_share && ccr < self.fair_share * (1.0 - 1.0 / 512.0) {
            er = self.fair_share;
        }
        er = er.min(self.abr_cap);
        *slot = (self.meter.closed, er);
        er
    }

    fn tick(&mut self, now: Time, port: &PortState) {
        if let Some(m) = self.meter.close_if_due(now) {
            self.end_interval(&m, port);
        }
    }
}

impl SwitchAlgorithm for Erica {
    fn name(&self) -> &'static str {
        match self.target {
            Target::Utilization(_) => "erica",
            Target::QueueDelay(_) => "erica_plus",
        }
    }

    fn on_cell(
        &mut self,
        now: Time,
        cell: &mut Cell,
        abr: bool,
        priority: usize,
        port: &PortState,
    ) {
        if abr && is_frm(cell) {
            self.ccr[cell.vc as usize] = cell.ccr as f64;
        }
        if let Some(m) = self.meter.count(now, cell.vc, abr, priority) {
            self.end_interval(&m, port);
        }
    }

    fn on_brm(&mut self, now: Time, cell: &mut Cell, port: &PortState) {
        debug_assert!(is_brm(cell));
        self.tick(now, port);
        if self.bidirectional_count {
            self.meter.mark_active(cell.vc);
        }
        if !self.valid {
            return;
        }
        let v = cell.vc as usize;
        let ccr = if self.measured_rate {
            self.meter.vc_rate[v]
        } else if self.ccr[v] > 0.0 {
            self.ccr[v]
        } else {
            cell.ccr as f64
        };
        let er = self.rate_for(cell.vc, ccr);
        self.last_er = er;
        if (er as f32) < cell.er {
            cell.er = er as f32;
        }
    }

    fn on_reverse_brm(&mut self, now: Time, port: &PortState) {
        if let Some(m) = self.meter.count_reverse_brm(now) {
            self.end_interval(&m, port);
        }
    }

    fn stats(&self) -> AlgorithmStats {
        AlgorithmStats {
            load_factor: self.z,
            fair_share_cps: self.fair_share,
            last_er_cps: self.last_er,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const C: f64 = 100_000.0;

    fn erica() -> Erica {
        Erica::new(
            4,
            Target::Utilization(0.9),
            Meter::new(4, 1, 100),
            0.1,
            false,
            false,
        )
    }

    fn port() -> PortState {
        PortState {
            link_cps: C,
            abr_queue: 0,
        }
    }

    fn measured(abr: f64, vbr: f64, n: u32) -> Measured {
        Measured {
            abr_cps: abr,
            vbr_cps: vbr,
            reverse_brm_cps: 0.0,
            active_vcs: n,
            length_ps: 1,
        }
    }

    #[test]
    fn overload_branch_gives_max_of_fair_share_and_vc_share() {
        let mut e = erica();
        // ABRcap = 0.9 x 100,000 - 10,000 = 80,000; input 160,000: z = 2.
        e.end_interval(&measured(160_000.0, 10_000.0, 2), &port());
        assert_eq!((e.abr_cap, e.z, e.fair_share), (80_000.0, 2.0, 40_000.0));
        // VC at 120,000: share 60,000 > fair share 40,000.
        assert_eq!(e.rate_for(0, 120_000.0), 60_000.0);
        // VC at 40,000: share 20,000 < fair share: gets the fair share.
        assert_eq!(e.rate_for(1, 40_000.0), 40_000.0);
    }

    #[test]
    fn underload_branch_uses_max_alloc_previous() {
        let mut e = erica();
        // ABRcap 90,000, input 160,000: z = 1.78, fair share 45,000.
        e.end_interval(&measured(160_000.0, 0.0, 2), &port());
        // VCShare = 120,000 / 1.78 = 67,500 becomes MaxAllocCurrent.
        assert_eq!(e.rate_for(0, 120_000.0), 67_500.0);
        // Next interval underloaded: z = 81,000 / 90,000 = 0.9.
        e.end_interval(&measured(81_000.0, 0.0, 2), &port());
        assert!((e.z - 0.9).abs() < 1e-12);
        // max(MaxAllocPrevious = 67,500, 50,000 / 0.9 = 55,556) = 67,500;
        // the VC is above the fair share, so no clamp.
        assert_eq!(e.rate_for(0, 50_000.0), 67_500.0);
        // A VC below the fair share asking above it is clamped to the fair share.
        assert_eq!(e.rate_for(1, 10_000.0), 45_000.0);
    }

    #[test]
    fn once_per_vc_per_interval() {
        let mut e = erica();
        e.end_interval(&measured(160_000.0, 0.0, 2), &port());
        let first = e.rate_for(0, 100_000.0);
        assert_eq!(e.rate_for(0, 1.0), first);
    }

    #[test]
    fn never_above_abr_capacity_and_never_raises_er() {
        let mut e = erica();
        e.end_interval(&measured(10_000.0, 0.0, 1), &port());
        assert!(e.rate_for(0, 1e9) <= e.abr_cap);
        let mut brm = crate::abr::turn_around(&crate::abr::forward_rm(0, 1.0, 1000.0, 0.0), false);
        e.on_brm(0, &mut brm, &port());
        assert_eq!(brm.er, 1000.0);
    }

    #[test]
    fn the_basic_variant_gives_max_of_fair_share_and_vc_share_always() {
        // TCP over ABR section 3.2: no MaxAllocPrevious, no fair-share clamp.
        let mut e = erica().with_variant(EricaVariant::Basic);
        e.end_interval(&measured(160_000.0, 0.0, 2), &port());
        assert_eq!(e.rate_for(0, 120_000.0), 67_500.0);
        // Underloaded next: z = 0.9, fair share 45,000; a VC at 50,000 gets
        // 50,000 / 0.9 (the max-min variant gave MaxAllocPrevious, 67,500),
        // and one at 10,000 the fair share.
        // (VCs 2 and 3: a VC's rate is computed once per interval, and
        // these intervals are closed by hand.)
        e.end_interval(&measured(81_000.0, 0.0, 2), &port());
        assert!((e.rate_for(2, 50_000.0) - 50_000.0 / 0.9).abs() < 1e-9);
        assert_eq!(e.rate_for(3, 10_000.0), 45_000.0);
    }

    #[test]
    fn backward_rm_cells_of_the_other_direction_count_in_the_input_rate() {
        // 100-cell intervals: 60 ABR cells of this port's VCs and 40 backward
        // RM cells of VCs running the other way close one, and z counts all.
        let ms = 1_000_000_000;
        let meter = Meter::new(4, ms, 100);
        let mut e = Erica::new(4, Target::Utilization(0.9), meter, 0.1, false, false);
        let p = port();
        for k in 0..60u64 {
            let mut c = Cell::data(0, 0, 1, true);
            e.on_cell(k * 10_000_000, &mut c, true, 2, &p);
        }
        for k in 60..100u64 {
            e.on_reverse_brm(k * 10_000_000, &p);
        }
        // 100 cells over 0.99 ms: z = 101,010 / 90,000; one active VC.
        assert!((e.z - 100.0 / 0.99e-3 / 90_000.0).abs() < 1e-9, "{}", e.z);
        assert_eq!(e.fair_share, 90_000.0);
    }

    #[test]
    fn a_vc_seen_only_by_its_backward_rm_cells_counts_when_asked() {
        // Bidirectional counting of bursty sources (Jain et al., "ERICA Switch
        // Algorithm: A Complete Description"; in Kalyanaraman's dissertation
        // "Traffic Management for the Available Bit Rate (ABR) Service in ATM
        // Networks" the switch pseudo-code marks a VC seen when its backward RM
        // cell is received): a TCP source waiting for its ACKs sends no forward
        // cell in an interval, but its backward RM cells still pass the switch.
        // Link 100,000 cells/s, U = 0.9: ABR capacity 90,000. VC 1's backward RM
        // cell passes at t = 0; VC 0 sends 100 cells 10 us apart, the 100th
        // closing the interval at 0.99 ms: z = (100 / 0.99 ms) / 90,000 = 1.122,
        // overload. Counted, VC 1 makes two active VCs: fair share 45,000, and
        // its next backward RM cell (CCR 1,000, VCShare 891) gets 45,000; not
        // counted, one VC: 90,000, the whole capacity for an idle source.
        let ms = 1_000_000_000;
        for (bidirectional, fair_share) in [(true, 45_000.0), (false, 90_000.0)] {
            let meter = Meter::new(2, ms, 100);
            let mut e = Erica::new(
                2,
                Target::Utilization(0.9),
                meter,
                0.1,
                false,
                bidirectional,
            );
            let p = port();
            let brm =
                || crate::abr::turn_around(&crate::abr::forward_rm(1, 1_000.0, 1e9, 0.0), false);
            e.on_brm(0, &mut brm(), &p);
            for k in 0..100u64 {
                let mut c = Cell::data(0, 0, 1, true);
                e.on_cell(k * 10_000_000, &mut c, true, 2, &p);
            }
            assert!((e.z - 100.0 / 0.99e-3 / 90_000.0).abs() < 1e-9, "{}", e.z);
            assert_eq!(e.fair_share, fair_share);
            let mut next = brm();
            e.on_brm(ms, &mut next, &p);
            assert_eq!(next.er as f64, fair_share, "{bidirectional}");
        }
    }

    #[test]
    fn the_measured_rate_replaces_the_ccr_field_when_asked() {
        // Link 100,000 cells/s (ABR capacity 90,000 at U = 0.9). VC 0's
        // forward RM cells say CCR = 80,000, but its cells come at 10,000
        // cells/s; VC 1's at 50,000. Input 60,000: z = 2/3, fair share
        // 45,000 (two VCs). Basic ERICA for VC 0: from the field, VCShare
        // = 120,000, capped at 90,000; from the measured rate, 15,000, so
        // the fair share, 45,000.
        let ms = 1_000_000_000;
        for (measured, expect) in [(false, 90_000.0), (true, 45_000.0)] {
            let meter = Meter::new(2, ms, 1_000_000);
            let mut e = Erica::new(2, Target::Utilization(0.9), meter, 0.1, measured, false)
                .with_variant(EricaVariant::Basic);
            let p = PortState {
                link_cps: 100_000.0,
                abr_queue: 0,
            };
            let mut frm = crate::abr::forward_rm(0, 80_000.0, 1e9, 0.0);
            e.on_cell(0, &mut frm, true, 2, &p);
            // 60 cells in the first ms: every 6th of VC 0 (10 with the FRM).
            for k in 1..60u64 {
                let vc = if k % 6 == 0 { 0 } else { 1 };
                let mut c = Cell::data(vc, 0, 1, true);
                e.on_cell(k * ms / 60, &mut c, true, 2, &p);
            }
            let mut brm =
                crate::abr::turn_around(&crate::abr::forward_rm(0, 80_000.0, 1e9, 0.0), false);
            e.on_brm(ms, &mut brm, &p);
            assert!((e.z - 2.0 / 3.0).abs() < 1e-9, "{}", e.z);
            assert!(
                (brm.er as f64 - expect).abs() < 1.0,
                "{measured}: {}",
                brm.er
            );
        }
    }
}
