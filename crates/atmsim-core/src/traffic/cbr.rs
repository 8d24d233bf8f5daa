//! Constant bit rate: one cell every 1/rate seconds. A greedy source is a
//! CBR source at the cell rate of its first link.

use super::{at, Emission, TrafficSource};
use crate::engine::time::interval_ps;
use crate::engine::{RngStream, Time};

/// One cell every `interval_ps`.
pub struct Cbr {
    interval_ps: f64,
    next_ps: f64,
}

impl Cbr {
    /// A CBR source of `rate_cps` cells/s.
    pub fn new(rate_cps: f64) -> Self {
        Self {
            interval_ps: interval_ps(rate_cps),
            next_ps: 0.0,
        }
    }
}

impl TrafficSource for Cbr {
    fn first(&mut self, start: Time, _rng: &mut RngStream) -> Time {
        self.next_ps = start as f64;
        start
    }

    #[inline]
    fn fire(&mut self, _now: Time, _rng: &mut RngStream) -> Emission {
        self.next_ps += self.interval_ps;
        Emission {
            cells: 1,
            next: Some(at(self.next_ps)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
}
