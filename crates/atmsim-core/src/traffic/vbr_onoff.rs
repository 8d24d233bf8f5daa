//! VBR on/off: cells at the peak rate while on, silence while off; on and
//! off times fixed or exponential. Starts in the on state (seed 000: 100 ms
//! on / 100 ms off at 124.41 Mbps from 2 ms).

use super::{at, Emission, TrafficSource};
use crate::engine::time::interval_ps;
use crate::engine::{RngStream, Time};
use crate::scenario::Distribution;

/// An on/off source at `peak` while on.
pub struct VbrOnOff {
    interval_ps: f64,
    on_ps: f64,
    off_ps: f64,
    distribution: Distribution,
    next_ps: f64,
    on_end_ps: f64,
}

impl VbrOnOff {
    /// On/off at `peak_cps` with mean on and off times in ps.
    pub fn new(peak_cps: f64, on_ps: u64, off_ps: u64, distribution: Distribution) -> Self {
        Self {
            interval_ps: interval_ps(peak_cps),
            on_ps: on_ps as f64,
            off_ps: off_ps as f64,
            distribution,
            next_ps: 0.0,
            on_end_ps: 0.0,
        }
    }

    fn draw(&self, mean: f64, rng: &mut RngStream) -> f64 {
        match self.distribution {
            Distribution::Fixed => mean,
            Distribution::Exponential => rng.exponential(mean),
        }
    }
}

impl TrafficSource for VbrOnOff {
    fn first(&mut self, start: Time, rng: &mut RngStream) -> Time {
        self.next_ps = start as f64;
        self.on_end_ps = self.next_ps + self.draw(self.on_ps, rng);
        start
    }

    fn fire(&mut self, _now: Time, rng: &mut RngStream) -> Emission {
        self.next_ps += self.interval_ps;
        // Skip whole off periods (and empty on periods) until a cell fits.
        while self.next_ps >= self.on_end_ps {
            let on_start = self.on_end_ps + self.draw(self.off_ps, rng);
            self.next_ps = on_start;
            self.on_end_ps = on_start + self.draw(self.on_ps, rng);
        }
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
    fn fixed_on_off_sends_half_the_time() {
        let ms = PS_PER_S / 1000;
        let mut s = VbrOnOff::new(10_000.0, 100 * ms, 100 * ms, Distribution::Fixed);
        let tr = trace(&mut s, 1, 2 * ms, 1002 * ms);
        // 5 on periods of 100 ms at 10,000 cells/s.
        assert_eq!(tr.len(), 5_000);
        // First cell at the start; the second on period starts at 202 ms.
        assert_eq!(tr[0].0, 2 * ms);
        assert_eq!(tr[1000].0, 202 * ms);
    }
}
