//! Fair Buffer Allocation (Heinanen and Kilkki, in GFR buffer management (Goyal
//! et al., 1998) section 6): as Selective Drop, but the share a VC may hold
//! shrinks as the buffer fills: a frame is refused when X > R and X_i x N_a / X
//! > Z x (K - R) / (X - R), K the buffer size.

use super::selective_drop::share_ratio;
use super::{Arrival, DropPolicy, DropReason, FrameGate, Verdict};

/// The frame was refused: its VC holds more than its (shrinking) share.
pub const FBA: DropReason = DropReason("fba");

/// FBA with threshold R (cells) and share factor Z.
pub struct FairBufferAllocation {
    /// R: the occupancy (cells) above which shares are enforced.
    pub threshold: u32,
    /// Z: the share factor, 0 < Z <= 1.
    pub z: f64,
    gate: FrameGate,
}

impl FairBufferAllocation {
    /// FBA for VCs `0..n_vcs`.
    pub fn new(n_vcs: usize, threshold: u32, z: f64) -> Self {
        FairBufferAllocation {
            threshold,
            z,
            gate: FrameGate::new(n_vcs),
        }
    }
}

impl DropPolicy for FairBufferAllocation {
    fn admit(&mut self, a: &Arrival) -> Verdict {
        if self.gate.starts_frame(a.cell) {
            let (r, x) = (self.threshold, a.vcs.total);
            // An unlimited buffer has no K: its share never shrinks.
            let k = if a.capacity == u32::MAX {
                f64::INFINITY
            } else {
                a.capacity as f64
            };
            let refuse = x > r && share_ratio(a) > self.z * (k - r as f64) / (x as f64 - r as f64);
            self.gate.decide(a.cell.vc, refuse.then_some(FBA));
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
    use crate::cell::Cell;

    #[test]
    fn the_share_shrinks_as_the_buffer_fills() {
        // K = 1000, R = 500, Z = 0.5; VC 0 holds 60 % of the cells of two
        // active VCs: X_i N_a / X = 1.2.
        let mut p = FairBufferAllocation::new(2, 500, 0.5);
        let verdict = |p: &mut FairBufferAllocation, frame: u32, x0: u32, x1: u32| {
            let mut o = VcOccupancy::new(2);
            (0..x0).for_each(|_| o.add(0));
            (0..x1).for_each(|_| o.add(1));
            let cell = Cell::data(0, frame, 1, true); // a one-cell frame: each is a first cell
            p.admit(&Arrival {
                cell: &cell,
                occupancy: x0 + x1 - 1,
                capacity: 1000,
                vcs: &o,
            })
        };
        // X = 600: limit 0.5 x 500 / 100 = 2.5: accepted.
        assert_eq!(verdict(&mut p, 0, 360, 240), Verdict::Accept);
        // X = 900: limit 0.5 x 500 / 400 = 0.625: refused.
        assert_eq!(verdict(&mut p, 1, 540, 360), Verdict::Drop(FBA));
        // X = 400 < R: accepted whatever the share.
        assert_eq!(verdict(&mut p, 2, 390, 10), Verdict::Accept);
    }
}
