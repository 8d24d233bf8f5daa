//! Early packet discard: when a frame's first cell arrives and the
//! occupancy is at or above the threshold, drop the whole frame. Frames
//! already accepted continue; if the buffer fills under one of them, the
//! rest of it is discarded as by PPD (keeping its EOM when there is room).

use super::ppd::PartialPacketDiscard;
use super::{DropPolicy, DropReason, FrameTracker, Verdict};
use crate::atm::Cell;

/// EPD with a threshold in cells.
pub struct EarlyPacketDiscard {
    /// Occupancy (cells) at or above which a new frame is refused.
    pub threshold: u32,
    frames: FrameTracker,
    refusing: Vec<bool>,
    partial: PartialPacketDiscard,
}

impl EarlyPacketDiscard {
    /// EPD for VCs `0..n_vcs`.
    pub fn new(n_vcs: usize, threshold: u32) -> Self {
        Self {
            threshold,
            frames: FrameTracker::new(n_vcs),
            refusing: vec![false; n_vcs],
            partial: PartialPacketDiscard::new(n_vcs, true),
        }
    }
}

impl DropPolicy for EarlyPacketDiscard {
    #[inline]
    fn admit(&mut self, cell: &Cell, occupancy: u32, capacity: u32) -> Verdict {
        let vc = cell.vc as usize;
        if self.frames.observe(cell) {
            // The only decision point: a frame's first cell.
            self.refusing[vc] = occupancy >= self.threshold.min(capacity);
        }
        if self.refusing[vc] {
            return Verdict::Drop(DropReason::Epd);
        }
        self.partial.admit(cell, occupancy, capacity)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::testing::*;
    use DropReason::*;
    use Verdict::*;

    #[test]
    fn decides_only_at_the_first_cell() {
        let mut p = EarlyPacketDiscard::new(1, 5);
        // First cell below the threshold: the frame is accepted even though
        // later cells find the queue above it.
        let f = frame(0, 0, 4);
        assert_eq!(verdicts(&mut p, &f, &[4, 6, 7, 8], 10), vec![Accept; 4]);
        // First cell at the threshold: the whole frame goes, even if the
        // queue drains meanwhile.
        let g = frame(0, 1, 4);
        assert_eq!(verdicts(&mut p, &g, &[5, 0, 0, 0], 10), vec![Drop(Epd); 4]);
        // The next frame is judged afresh.
        let h = frame(0, 2, 2);
        assert_eq!(verdicts(&mut p, &h, &[1, 1], 10), vec![Accept, Accept]);
    }

    #[test]
    fn accepted_frame_meeting_a_full_buffer_is_cut_with_ppd() {
        let mut p = EarlyPacketDiscard::new(1, 5);
        let f = frame(0, 0, 4);
        let v = verdicts(&mut p, &f, &[4, 10, 3, 3], 10);
        assert_eq!(v, vec![Accept, Drop(Tail), Drop(Ppd), Accept]);
    }
}
