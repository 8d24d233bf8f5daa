//! Tail drop: drop a cell when the buffer is full.

use super::{Arrival, DropPolicy, Verdict, TAIL};

/// Drops a cell when the buffer holds `capacity` cells.
pub struct TailDrop;

impl DropPolicy for TailDrop {
    #[inline]
    fn admit(&mut self, a: &Arrival) -> Verdict {
        let (occupancy, capacity) = (a.occupancy, a.capacity);
        if occupancy >= capacity {
            Verdict::Drop(TAIL)
        } else {
            Verdict::Accept
        }
    }

    fn is_tail_drop(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::testing::*;

    #[test]
    fn drops_only_when_full() {
        let f = frame(0, 0, 3);
        let v = verdicts(&mut TailDrop, &f, &[9, 10, 11], 10);
        assert_eq!(
            v,
            vec![Verdict::Accept, Verdict::Drop(TAIL), Verdict::Drop(TAIL)]
        );
    }
}
