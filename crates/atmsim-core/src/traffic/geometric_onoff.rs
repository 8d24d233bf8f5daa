//! Geometric on/off cell source, the classic bursty source of multiplexer
//! studies. Bursts of geometric length (mean `mean_burst_cells`) at the peak
//! rate, separated by a geometric number of idle slots of 1/peak with mean
//! `mean_burst_cells * (peak/mean - 1)`, so the long-run rate is `mean`.
//! The first state is drawn from the stationary on/off probabilities.

use super::{Emission, Fine, TrafficSource};
use crate::engine::time::interval_ps;
use crate::engine::{RngStream, Time};

/// Geometric bursts at the peak rate.
pub struct GeometricOnOff {
    slot: Fine,
    mean_burst: f64,
    mean_idle_slots: f64,
    on_probability: f64,
    left_in_burst: u64,
    next: Fine,
}

impl GeometricOnOff {
    /// A source with the given peak and mean rates (cells/s) and mean burst.
    pub fn new(peak_cps: f64, mean_cps: f64, mean_burst_cells: f64) -> Self {
        Self {
            slot: Fine::of_ps(interval_ps(peak_cps)),
            mean_burst: mean_burst_cells,
            mean_idle_slots: mean_burst_cells * (peak_cps / mean_cps - 1.0),
            on_probability: mean_cps / peak_cps,
            left_in_burst: 0,
            next: Fine::default(),
        }
    }
}

impl GeometricOnOff {
    /// The burst's last cell was sent: a silence, then the next burst
    /// (out of line: the cells within a burst take the short way).
    #[inline(never)]
    fn end_burst(&mut self, rng: &mut RngStream) {
        let idle = rng.geometric_from_0(self.mean_idle_slots);
        // A mean silence of up to 10^9 cells x (peak/mean) slots: the
        // draw can saturate u64 (it then lies far past any run's end).
        self.next = self.next.plus(self.slot.times(idle.saturating_add(1)));
        self.left_in_burst = rng.geometric_from_1(self.mean_burst);
    }
}

impl TrafficSource for GeometricOnOff {
    fn first(&mut self, start: Time, rng: &mut RngStream) -> Time {
        let phase = Fine::of_ps(rng.uniform() * self.slot.ps());
        let idle = if rng.uniform() < self.on_probability {
            0
        } else {
            rng.geometric_from_0(self.mean_idle_slots)
        };
        self.left_in_burst = rng.geometric_from_1(self.mean_burst);
        self.next = Fine::of_time(start).plus(phase).plus(self.slot.times(idle));
        self.next.time()
    }

    #[inline(always)]
    fn fire(&mut self, _now: Time, rng: &mut RngStream) -> Emission {
        self.left_in_burst -= 1;
        if self.left_in_burst > 0 {
            self.next = self.next.plus(self.slot);
        } else {
            self.end_burst(rng);
        }
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
    fn the_longest_mean_silence_does_not_overflow() {
        // Peak at the fastest link, mean at one cell every 1000 s, bursts of
        // 10^9 cells: silences average 2.4 x 10^21 slots, beyond u64.
        let mut s = GeometricOnOff::new(1e12 / CELL_BITS, 1e-3, 1e9);
        let mut rng = RngStream::new(1, 0);
        let mut t = s.first(0, &mut rng);
        s.left_in_burst = 1;
        let e = s.fire(t, &mut rng);
        // The silence lasts far past any run's end (almost surely more
        // than 10^6 s).
        assert!(e.next.unwrap() > 1_000_000 * crate::engine::PS_PER_S);
        t = e.next.unwrap();
        assert!(s.fire(t, &mut rng).next.unwrap() >= t);
    }

    #[test]
    fn long_run_rate_is_the_mean() {
        let peak = 73_358.49;
        let mean = 33_011.32;
        let mut s = GeometricOnOff::new(peak, mean, 100.0);
        let tr = trace(&mut s, 5, 0, 100 * PS_PER_S);
        let rate = tr.len() as f64 / 100.0;
        assert!((rate / mean - 1.0).abs() < 0.02, "{rate}");
        // Never faster than the peak.
        let min_gap = tr.windows(2).map(|w| w[1].0 - w[0].0).min().unwrap();
        assert!(min_gap as f64 >= interval_ps(peak) - 1.0);
    }
}
