//! Constant bit rate: one cell every 1/rate seconds. A greedy source is a
//! CBR source at the cell rate of its first link.

use super::{Emission, Fine, TrafficSource};
use crate::engine::time::interval_ps;
use crate::engine::{RngStream, Time};

/// One cell every `interval_ps`.
pub struct Cbr {
    interval: Fine,
    next: Fine,
}

impl Cbr {
    /// A CBR source of `rate_cps` cells/s.
    pub fn new(rate_cps: f64) -> Self {
        Self {
            interval: Fine::of_ps(interval_ps(rate_cps)),
            next: Fine::default(),
        }
    }
}

impl TrafficSource for Cbr {
    fn first(&mut self, start: Time, _rng: &mut RngStream) -> Time {
        self.next = Fine::of_time(start);
        start
    }

    #[inline]
    fn fire(&mut self, _now: Time, _rng: &mut RngStream) -> Emission {
        self.next = self.next.plus(self.interval);
        Emission {
            cells: 1,
            next: Some(self.next.time()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atm::CELL_BITS;
    use crate::engine::PS_PER_S;
    use crate::traffic::testing::trace;

    #[test]
    fn rate_times_duration_cells() {
        // 10,000 cells/s for 1 s from t = 0: cells at 0, 100 us, ... 999.9 ms.
        let tr = trace(&mut Cbr::new(10_000.0), 1, 0, PS_PER_S);
        assert_eq!(tr.len(), 10_000);
        assert_eq!(tr[1].0, 100_000_000);
        // A rate that does not divide a picosecond count stays exact.
        let r = 366_792.452_830_188_7;
        let tr = trace(&mut Cbr::new(r), 1, 0, 30 * PS_PER_S);
        assert!((tr.len() as f64 - r * 30.0).abs() <= 1.0);
    }

    /// At the latest start a scenario allows (10^6 s), a source at a link's
    /// rate keeps its rate exactly: the gaps are the rounded interval, never
    /// the 128 ps steps of a float at 10^18 ps.
    #[test]
    fn a_late_start_keeps_the_rate() {
        use crate::engine::time::MAX_TIME_PS;
        let r = 155.52e6 / CELL_BITS;
        let start = MAX_TIME_PS - PS_PER_S / 100;
        let tr = trace(&mut Cbr::new(r), 1, start, start + PS_PER_S / 100);
        assert!((tr.len() as f64 - r / 100.0).abs() <= 1.0, "{}", tr.len());
        for w in tr.windows(2) {
            let gap = w[1].0 - w[0].0;
            assert!((2_726_337..=2_726_338).contains(&gap), "{gap}");
        }
    }
}
