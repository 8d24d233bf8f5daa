//! Selective Drop (GFR buffer management (Goyal et al., 1998), section 6): a frame is refused at
//! its first cell when the buffer holds more than R cells and its VC holds
//! more than its share, X_i x N_a / X > Z (X cells in the port, N_a VCs with
//! cells there). Equal buffer shares, hence equal throughput, without per-VC
//! queues.

use super::{Arrival, DropPolicy, DropReason, FrameGate, Verdict};

/// The frame was refused: its VC holds more than its share.
pub const SELECTIVE_DROP: DropReason = DropReason("selective_drop");

/// Selective Drop with threshold R (cells) and share factor Z.
pub struct SelectiveDrop {
    /// R: the occupancy (cells) above which shares are enforced.
    pub threshold: u32,
    /// Z: the share factor, 0 < Z <= 1.
    pub z: f64,
    gate: FrameGate,
}

impl SelectiveDrop {
    /// Selective Drop for VCs `0..n_vcs`.
    pub fn new(n_vcs: usize, threshold: u32, z: f64) -> Self {
        SelectiveDrop {
            threshold,
            z,
            gate: FrameGate::new(n_vcs),
        }
    }
}

/// X_i x N_a / X: a VC's cells against an equal share of the port's.
pub(super) fn share_ratio(a: &Arrival) -> f64 {
    let x = a.vcs.total as f64;
    if x == 0.0 {
        return 0.0;
    }
    a.vcs.of(a.cell.vc) as f64 * a.vcs.active as f64 / x
}

impl DropPolicy for SelectiveDrop {
    fn admit(&mut self, a: &Arrival) -> Verdict {
        if self.gate.starts_frame(a.cell) {
            let refuse = a.vcs.total > self.threshold && share_ratio(a) > self.z;
            self.gate
                .decide(a.cell.vc, refuse.then_some(SELECTIVE_DROP));
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
    use crate::buffer::{VcOccupancy, PPD, TAIL};
    use crate::cell::Cell;

    fn occupancy(cells: &[u32]) -> VcOccupancy {
        let mut o = VcOccupancy::new(cells.len());
        for (vc, &n) in cells.iter().enumerate() {
            for _ in 0..n {
                o.add(vc as u32);
            }
        }
        o
    }

    /// The verdict on the first cell of a frame of `len` cells of `vc`.
    fn first_cell(
        p: &mut SelectiveDrop,
        vc: u32,
        frame: u32,
        len: u16,
        o: &VcOccupancy,
    ) -> Verdict {
        let cell = Cell::data(vc, frame, len, len == 1);
        p.admit(&Arrival {
            cell: &cell,
            occupancy: o.total.saturating_sub(1),
            capacity: 1000,
            vcs: o,
        })
    }

    #[test]
    fn refuses_a_vc_above_its_share_once_the_buffer_passes_r() {
        // R = 50, Z = 0.8. VC 0 holds 60 of 100 cells, VC 1 holds 40: two
        // active VCs, shares 60 x 2 / 100 = 1.2 > 0.8 and 0.8 (not > 0.8).
        let mut p = SelectiveDrop::new(2, 50, 0.8);
        let o = occupancy(&[60, 40]);
        assert_eq!(
            first_cell(&mut p, 0, 0, 1, &o),
            Verdict::Drop(SELECTIVE_DROP)
        );
        assert_eq!(first_cell(&mut p, 1, 0, 1, &o), Verdict::Accept);
        // Below R nothing is refused.
        let low = occupancy(&[40, 10]);
        assert_eq!(first_cell(&mut p, 0, 1, 1, &low), Verdict::Accept);
    }

    #[test]
    fn the_rest_of_a_refused_frame_follows_and_a_full_buffer_still_cuts() {
        let mut p = SelectiveDrop::new(2, 50, 0.8);
        let o = occupancy(&[60, 40]);
        assert_eq!(
            first_cell(&mut p, 0, 0, 3, &o),
            Verdict::Drop(SELECTIVE_DROP)
        );
        let mid = Cell::data(0, 0, 3, false);
        let empty = VcOccupancy::new(2);
        let a = Arrival {
            cell: &mid,
            occupancy: 0,
            capacity: 1000,
            vcs: &empty,
        };
        assert_eq!(p.admit(&a), Verdict::Drop(SELECTIVE_DROP));
        // An accepted frame that meets a full buffer: tail, then PPD.
        assert_eq!(first_cell(&mut p, 1, 0, 3, &o), Verdict::Accept);
        let c = Cell::data(1, 0, 3, false);
        let full = Arrival {
            cell: &c,
            occupancy: 1000,
            capacity: 1000,
            vcs: &o,
        };
        assert_eq!(p.admit(&full), Verdict::Drop(TAIL));
        let ok = Arrival {
            cell: &c,
            occupancy: 0,
            capacity: 1000,
            vcs: &o,
        };
        assert_eq!(p.admit(&ok), Verdict::Drop(PPD));
    }
}
