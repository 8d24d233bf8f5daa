//! Frame source: AAL5 frames of fixed or uniformly random size (in cells)
//! at a given offered cell rate, periodic or Poisson. All cells of a frame
//! are handed to the first port at once; the port paces them out.

use super::params::{Arrivals, FrameSize};
use super::{Emission, Fine, TrafficSource};
use crate::engine::time::interval_ps;
use crate::engine::{RngStream, Time};

/// Frames at an offered rate.
pub struct FrameSource {
    size: FrameSize,
    mean_gap_ps: f64,
    arrivals: Arrivals,
    next: Fine,
}

impl FrameSource {
    /// Frames of `size` cells, offered at `rate_cps` cells/s.
    pub fn new(size: FrameSize, rate_cps: f64, arrivals: Arrivals) -> Self {
        Self {
            size,
            mean_gap_ps: size.mean() * interval_ps(rate_cps),
            arrivals,
            next: Fine::default(),
        }
    }

    fn gap(&self, rng: &mut RngStream) -> f64 {
        match self.arrivals {
            Arrivals::Periodic => self.mean_gap_ps,
            Arrivals::Poisson => rng.exponential(self.mean_gap_ps),
        }
    }
}

impl TrafficSource for FrameSource {
    fn first(&mut self, start: Time, _rng: &mut RngStream) -> Time {
        self.next = Fine::of_time(start);
        start
    }

    fn fire(&mut self, _now: Time, rng: &mut RngStream) -> Emission {
        let cells = match self.size {
            FrameSize::Fixed(n) => n,
            FrameSize::Uniform(lo, hi) => rng.int_between(lo as u64, hi as u64) as u16,
        };
        self.next = self.next.plus(Fine::of_ps(self.gap(rng)));
        Emission {
            cells,
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
    fn offered_rate_in_cells() {
        let mut s = FrameSource::new(FrameSize::Fixed(12), 12_000.0, Arrivals::Periodic);
        let tr = trace(&mut s, 1, 0, PS_PER_S);
        assert_eq!(tr.len(), 1000);
        assert!(tr.iter().all(|&(_, c)| c == 12));
        let mut s = FrameSource::new(FrameSize::Uniform(5, 15), 10_000.0, Arrivals::Poisson);
        let tr = trace(&mut s, 1, 0, 10 * PS_PER_S);
        let cells: u64 = tr.iter().map(|&(_, c)| c as u64).sum();
        assert!(
            (cells as f64 / 10.0 / 10_000.0 - 1.0).abs() < 0.03,
            "{cells}"
        );
        assert!(tr.iter().all(|&(_, c)| (5..=15).contains(&c)));
    }
}
