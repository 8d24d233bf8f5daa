//! Differential Fair Buffer Allocation (GFR buffer management (Goyal et al.,
//! 1998) section 3: Goyal, Jain, Fahmy and Vandalore, "Buffer Management for
//! the GFR Service", ATM Forum 98-0405): buffer shares in proportion to the
//! VCs' MCRs on one FIFO.
//!
//! At a frame's first cell, with X the cells in the port, X_i those of the
//! frame's VC, W_i = MCR_i / GFR capacity its weight and W the sum of the
//! weights of the VCs crossing the port:
//! - X < L (low threshold): accept;
//! - X > H (high threshold): refuse (EPD);
//! - otherwise refuse a CLP = 1 frame; and refuse a CLP = 0 frame of a VC
//!   above its share (X_i > X W_i / W) with probability
//!   Z_i (alpha (X_i - X W_i / W) / (X (1 - W_i / W)) + (1 - alpha) (X - L) / (H - L)).
//!
//! Cells of an accepted frame that meet a full buffer are cut as by PPD.

use super::params::DfbaZ;
use super::{Arrival, DropPolicy, DropReason, FrameGate, PolicyContext, Verdict};
use crate::engine::RngStream;

/// X > H: the frame was refused as by EPD.
pub const DFBA_HIGH: DropReason = DropReason("dfba:high");
/// L <= X <= H: a CLP = 1 (tagged) frame was refused.
pub const DFBA_CLP1: DropReason = DropReason("dfba:clp1");
/// L <= X <= H: a CLP = 0 frame of a VC above its share lost the draw.
pub const DFBA_PROBABILISTIC: DropReason = DropReason("dfba:probabilistic");

/// DFBA at one port.
pub struct Dfba {
    low: u32,
    high: u32,
    alpha: f64,
    /// W_i / W per VC (0 for VCs with no MCR here).
    share: Vec<f64>,
    /// Z_i per VC.
    z: Vec<f64>,
    rng: RngStream,
    gate: FrameGate,
}

impl Dfba {
    /// DFBA with thresholds L and H (cells), alpha, and the rule for Z_i.
    pub fn new(ctx: PolicyContext, low: u32, high: u32, alpha: f64, z: DfbaZ) -> Self {
        let total: f64 = ctx.weights.iter().sum();
        let share: Vec<f64> = ctx
            .weights
            .iter()
            .map(|&w| if total > 0.0 { w / total } else { 0.0 })
            .collect();
        let z = share
            .iter()
            .map(|&s| match z {
                DfbaZ::Constant { value } => value,
                DfbaZ::OneMinusShare => 1.0 - s,
                DfbaZ::OneMinusShareSquared => (1.0 - s) * (1.0 - s),
            })
            .collect();
        Dfba {
            low,
            high,
            alpha,
            share,
            z,
            rng: ctx.rng,
            gate: FrameGate::new(ctx.n_vcs),
        }
    }

    /// The probability of refusing a CLP = 0 frame of VC `vc` holding `xi`
    /// of the port's `x` cells (0 when the VC is within its share).
    pub fn drop_probability(&self, vc: u32, xi: u32, x: u32) -> f64 {
        let v = vc as usize;
        let (x, xi, s) = (x as f64, xi as f64, self.share[v]);
        let fair = x * s;
        if xi <= fair || x <= 0.0 {
            return 0.0;
        }
        let fairness = if s < 1.0 {
            (xi - fair) / (x * (1.0 - s))
        } else {
            0.0
        };
        let efficiency = if self.high > self.low {
            (x - self.low as f64) / (self.high - self.low) as f64
        } else {
            1.0
        };
        (self.z[v] * (self.alpha * fairness + (1.0 - self.alpha) * efficiency)).clamp(0.0, 1.0)
    }

    fn decide(&mut self, a: &Arrival) -> Option<DropReason> {
        let x = a.vcs.total;
        if x < self.low {
            return None;
        }
        if x > self.high {
            return Some(DFBA_HIGH);
        }
        if a.cell.is_clp1() {
            return Some(DFBA_CLP1);
        }
        let p = self.drop_probability(a.cell.vc, a.vcs.of(a.cell.vc), x);
        (p > 0.0 && self.rng.uniform() < p).then_some(DFBA_PROBABILISTIC)
    }
}

impl DropPolicy for Dfba {
    fn admit(&mut self, a: &Arrival) -> Verdict {
        if self.gate.starts_frame(a.cell) {
            let reason = self.decide(a);
            self.gate.decide(a.cell.vc, reason);
        }
        self.gate.follow(a)
    }

    fn needs_vc_occupancy(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::VcOccupancy;
    use crate::cell::{Cell, CLP};

    /// DFBA with weights 0.1 and 0.3 (W = 0.4: shares 1/4 and 3/4), L = 100,
    /// H = 400, alpha = 0.5.
    fn dfba(z: DfbaZ, seed: u64) -> Dfba {
        let ctx = PolicyContext {
            n_vcs: 2,
            weights: vec![0.1, 0.3],
            rng: RngStream::new(seed, 0),
        };
        Dfba::new(ctx, 100, 400, 0.5, z)
    }

    fn occupancy(x0: u32, x1: u32) -> VcOccupancy {
        let mut o = VcOccupancy::new(2);
        (0..x0).for_each(|_| o.add(0));
        (0..x1).for_each(|_| o.add(1));
        o
    }

    fn verdict(d: &mut Dfba, vc: u32, frame: u32, clp1: bool, o: &VcOccupancy) -> Verdict {
        let mut cell = Cell::data(vc, frame, 1, true);
        if clp1 {
            cell.flags |= CLP;
        }
        d.admit(&Arrival {
            cell: &cell,
            occupancy: o.total.saturating_sub(1),
            capacity: 1000,
            vcs: o,
        })
    }

    const ONE: DfbaZ = DfbaZ::Constant { value: 1.0 };

    #[test]
    fn the_four_regions() {
        let mut d = dfba(ONE, 1);
        // X = 50 < L: everything accepted, tagged or not.
        assert_eq!(
            verdict(&mut d, 0, 0, true, &occupancy(50, 0)),
            Verdict::Accept
        );
        // X = 500 > H: EPD.
        assert_eq!(
            verdict(&mut d, 1, 0, false, &occupancy(100, 400)),
            Verdict::Drop(DFBA_HIGH)
        );
        // L <= X <= H: tagged frames go; a VC within its share keeps its
        // CLP = 0 frames (VC 1 holds 150 of 200, its share is 3/4 = 150).
        let mid = occupancy(50, 150);
        assert_eq!(verdict(&mut d, 1, 1, true, &mid), Verdict::Drop(DFBA_CLP1));
        assert_eq!(verdict(&mut d, 1, 2, false, &mid), Verdict::Accept);
    }

    #[test]
    fn the_drop_probability_by_hand() {
        let d = dfba(ONE, 1);
        // X = 200, VC 0 holds 150 against a share of 200/4 = 50:
        // fairness (150 - 50) / (200 x 3/4) = 2/3; efficiency
        // (200 - 100) / 300 = 1/3; P = 0.5 x 2/3 + 0.5 x 1/3 = 0.5.
        assert!((d.drop_probability(0, 150, 200) - 0.5).abs() < 1e-12);
        // Within its share: 0.
        assert_eq!(d.drop_probability(0, 50, 200), 0.0);
        // Z_i = 1 - W_i / W scales it: VC 0's share is 1/4, Z = 3/4.
        let d = dfba(DfbaZ::OneMinusShare, 1);
        assert!((d.drop_probability(0, 150, 200) - 0.375).abs() < 1e-12);
        let d = dfba(DfbaZ::OneMinusShareSquared, 1);
        assert!((d.drop_probability(0, 150, 200) - 0.28125).abs() < 1e-12);
    }

    #[test]
    fn an_over_allocated_vc_loses_frames_at_its_probability() {
        // P = 0.5 (above): over 10,000 frames about half are refused.
        let mut d = dfba(ONE, 7);
        let o = occupancy(150, 50);
        let refused = (0..10_000)
            .filter(|&k| verdict(&mut d, 0, k, false, &o) == Verdict::Drop(DFBA_PROBABILISTIC))
            .count();
        assert!((4_800..=5_200).contains(&refused), "{refused}");
    }
}
