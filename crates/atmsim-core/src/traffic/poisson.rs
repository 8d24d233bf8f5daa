//! Poisson cell arrivals: exponential gaps with mean 1/rate.

use super::{Emission, Fine, TrafficSource};
use crate::engine::time::interval_ps;
use crate::engine::{RngStream, Time};

/// Cells with exponential gaps.
pub struct Poisson {
    mean_gap_ps: f64,
    next: Fine,
}

impl Poisson {
    /// Poisson cells at `rate_cps` cells/s.
    pub fn new(rate_cps: f64) -> Self {
        Self {
            mean_gap_ps: interval_ps(rate_cps),
            next: Fine::default(),
        }
    }
}

impl TrafficSource for Poisson {
    fn first(&mut self, start: Time, rng: &mut RngStream) -> Time {
        self.next = Fine::of_time(start).plus(Fine::of_ps(rng.exponential(self.mean_gap_ps)));
        self.next.time()
    }

    #[inline]
    fn fire(&mut self, _now: Time, rng: &mut RngStream) -> Emission {
        self.next = self
            .next
            .plus(Fine::of_ps(rng.exponential(self.mean_gap_ps)));
        Emission {
            cells: 1,
            next: Some(self.next.time()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::PS_PER_S;
    use crate::traffic::testing::trace;

    #[test]
    fn mean_rate() {
        let tr = trace(&mut Poisson::new(100_000.0), 3, 0, PS_PER_S);
        let n = tr.len() as f64;
        // Poisson count: sd = sqrt(1e5) ~ 316; allow 5 sd.
        assert!((n - 100_000.0).abs() < 1600.0, "{n}");
    }
}
