//! Partial packet discard: tail drop, and once a cell of a frame has been
//! dropped, drop the rest of that frame. The EOM cell is kept (when there is
//! room) if `keep_eom`, so the receiver sees the frame boundary and the next
//! frame is not merged into the broken one.

use super::{Arrival, DropPolicy, Verdict, PPD, TAIL};

/// Per-VC "discarding the rest of this frame" state plus tail drop.
pub struct PartialPacketDiscard {
    discarding: Vec<bool>,
    keep_eom: bool,
}

impl PartialPacketDiscard {
    /// PPD for VCs `0..n_vcs`.
    pub fn new(n_vcs: usize, keep_eom: bool) -> Self {
        Self {
            discarding: vec![false; n_vcs],
            keep_eom,
        }
    }

    /// True while VC `vc` is discarding the rest of a frame.
    pub fn is_discarding(&self, vc: u32) -> bool {
        self.discarding[vc as usize]
    }

    /// Starts discarding the rest of the current frame of VC `vc` (used by
    /// EPD when an accepted frame meets a full buffer).
    pub fn start_discarding(&mut self, vc: u32) {
        self.discarding[vc as usize] = true;
    }
}

impl DropPolicy for PartialPacketDiscard {
    #[inline]
    fn admit(&mut self, a: &Arrival) -> Verdict {
        let (cell, occupancy, capacity) = (a.cell, a.occupancy, a.capacity);
        let vc = cell.vc as usize;
        let full = occupancy >= capacity;
        if self.discarding[vc] {
            if cell.is_eom() {
                self.discarding[vc] = false;
                if self.keep_eom && !full {
                    return Verdict::Accept;
                }
                return Verdict::Drop(if full { TAIL } else { PPD });
            }
            return Verdict::Drop(PPD);
        }
        if full {
            if !cell.is_eom() {
                self.discarding[vc] = true;
            }
            return Verdict::Drop(TAIL);
        }
        Verdict::Accept
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::testing::*;
    use crate::buffer::{PPD, TAIL};
    use Verdict::*;

    #[test]
    fn drops_the_rest_of_a_frame_after_one_loss() {
        let f = frame(0, 0, 5);
        let mut p = PartialPacketDiscard::new(1, true);
        // Cell 1 meets a full buffer; cells 2 and 3 find room but belong to a
        // broken frame; the EOM is kept.
        let v = verdicts(&mut p, &f, &[9, 10, 3, 2, 1], 10);
        assert_eq!(v, vec![Accept, Drop(TAIL), Drop(PPD), Drop(PPD), Accept]);
        // The next frame is untouched.
        let g = frame(0, 1, 2);
        assert_eq!(verdicts(&mut p, &g, &[1, 1], 10), vec![Accept, Accept]);
    }

    #[test]
    fn without_keep_eom_the_eom_goes_too() {
        let f = frame(0, 0, 3);
        let mut p = PartialPacketDiscard::new(1, false);
        let v = verdicts(&mut p, &f, &[10, 0, 0], 10);
        assert_eq!(v, vec![Drop(TAIL), Drop(PPD), Drop(PPD)]);
    }

    #[test]
    fn vcs_are_independent() {
        let mut p = PartialPacketDiscard::new(2, true);
        let a = frame(0, 0, 3);
        let b = frame(1, 0, 3);
        assert_eq!(admit(&mut p, &a[0], 10, 10), Drop(TAIL));
        assert_eq!(admit(&mut p, &b[0], 0, 10), Accept);
        assert_eq!(admit(&mut p, &a[1], 0, 10), Drop(PPD));
    }
}
