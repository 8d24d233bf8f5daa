//! Intelligent tail drop (TCP over ABR (Kalyanaraman et al., 1996) section 11):
//! above a threshold a few cells below the buffer size, drop every cell except
//! EOM cells, so that the frame boundaries survive and frames do not merge at
//! the receiver.

use super::{Arrival, DropPolicy, Verdict, INTELLIGENT_TAIL, TAIL};

/// Drops non-EOM cells once the occupancy reaches `threshold`; EOM cells are
/// dropped only when the buffer is full.
pub struct IntelligentTailDrop {
    /// Occupancy (cells) from which non-EOM cells are dropped.
    pub threshold: u32,
}

impl IntelligentTailDrop {
    /// A policy with the given threshold in cells.
    pub fn new(threshold: u32) -> Self {
        Self { threshold }
    }
}

impl DropPolicy for IntelligentTailDrop {
    #[inline]
    fn admit(&mut self, a: &Arrival) -> Verdict {
        let (cell, occupancy, capacity) = (a.cell, a.occupancy, a.capacity);
        if occupancy >= capacity {
            Verdict::Drop(TAIL)
        } else if occupancy >= self.threshold && !cell.is_eom() {
            Verdict::Drop(INTELLIGENT_TAIL)
        } else {
            Verdict::Accept
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::testing::*;

    #[test]
    fn keeps_eom_cells_above_threshold() {
        let f = frame(0, 0, 3);
        let mut p = IntelligentTailDrop::new(8);
        let v = verdicts(&mut p, &f, &[7, 8, 9], 10);
        assert_eq!(
            v,
            vec![
                Verdict::Accept,
                Verdict::Drop(INTELLIGENT_TAIL),
                Verdict::Accept
            ]
        );
        // A full buffer drops the EOM too.
        assert_eq!(admit(&mut p, &f[2], 10, 10), Verdict::Drop(TAIL));
    }
}
