//! Early packet discard: when a frame's first cell arrives and the
//! occupancy is at or above the threshold, drop the whole frame. Frames
//! already accepted continue; if the buffer fills under one of them, the
//! rest of it is discarded as by PPD (keeping its EOM when there is room).

use super::{Arrival, DropPolicy, FrameGate, Verdict, EPD};

/// EPD with a threshold in cells.
pub struct EarlyPacketDiscard {
    /// Occupancy (cells) at or above which a new frame is refused.
    pub threshold: u32,
    gate: FrameGate,
}

impl EarlyPacketDiscard {
    /// EPD for VCs `0..n_vcs`.
    pub fn new(n_vcs: usize, threshold: u32) -> Self {
        Self {
            threshold,
            gate: FrameGate::new(n_vcs),
        }
    }
}

impl DropPolicy for EarlyPacketDiscard {
    #[inline]
    fn admit(&mut self, a: &Arrival) -> Verdict {
        if self.gate.starts_frame(a.cell) {
            // The only decision point: a frame's first cell.
            let refuse = a.occupancy >= self.threshold.min(a.capacity);
            self.gate.decide(a.cell.vc, refuse.then_some(EPD));
        }
        self.gate.follow(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::testing::*;
    use crate::buffer::{EPD, PPD, TAIL};
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
        assert_eq!(verdicts(&mut p, &g, &[5, 0, 0, 0], 10), vec![Drop(EPD); 4]);
        // The next frame is judged afresh.
        let h = frame(0, 2, 2);
        assert_eq!(verdicts(&mut p, &h, &[1, 1], 10), vec![Accept, Accept]);
    }

    #[test]
    fn accepted_frame_meeting_a_full_buffer_is_cut_with_ppd() {
        let mut p = EarlyPacketDiscard::new(1, 5);
        let f = frame(0, 0, 4);
        let v = verdicts(&mut p, &f, &[4, 10, 3, 3], 10);
        assert_eq!(v, vec![Accept, Drop(TAIL), Drop(PPD), Accept]);
    }
}
