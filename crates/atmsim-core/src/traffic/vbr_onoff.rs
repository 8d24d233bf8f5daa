//! VBR on/off: cells at the peak rate while on, silence while off; on and off
//! times fixed or exponential. Starts in the on state (TCP over ABR
//! (Kalyanaraman et al., 1996): 100 ms on / 100 ms off at 124.41 Mbps from 2
//! ms).

use super::params::Distribution;
use super::{Emission, Fine, TrafficSource};
use crate::engine::time::interval_ps;
use crate::engine::{RngStream, Time};

/// Off and on periods a source draws one by one, looking for the on period
/// its next cell falls in, before it computes where that is at once.
const PERIODS_DRAWN: u32 = 64;

/// An on/off source at `peak` while on.
///
/// Its cells are never closer than 1/peak: a cell is due 1/peak after the last
/// one, and sent then if the source is on, or else at the start of the first on
/// period after that. With periods longer than 1/peak (the papers' 100 ms at
/// 124.41 Mbps) a burst starts with its on period and the mean rate is the peak
/// times on / (on + off); with periods far shorter than 1/peak a due cell
/// rarely waits long, and the rate nears the peak. (A source that sent a cell
/// at the start of every on period exceeded its peak whenever on + off was
/// shorter than 1/peak: a 1 kbps source with on = off = 1 ps sent 50,001 cells
/// in 100 ms.) When the due time lies many periods ahead, the period it falls
/// in is computed instead of drawn period by period: by arithmetic for fixed
/// periods; for exponential ones from the on/off chain's state at the due time
/// (a two-state Markov chain: from the start of an off period, on at a time d
/// later with probability p (1 - e^-(a+b)d), a = 1/off, b = 1/on, p = a / (a +
/// b)), and the rest of the period in which it falls drawn afresh, exact since
/// exponential periods have no memory.
pub struct VbrOnOff {
    interval: Fine,
    on_ps: f64,
    off_ps: f64,
    distribution: Distribution,
    /// The last cell's time.
    last: Fine,
    /// The end of the current (or last) on period.
    on_end: Fine,
}

impl VbrOnOff {
    /// On/off at `peak_cps` with mean on and off times in ps.
    pub fn new(peak_cps: f64, on_ps: u64, off_ps: u64, distribution: Distribution) -> Self {
        Self {
            interval: Fine::of_ps(interval_ps(peak_cps)),
            on_ps: on_ps as f64,
            off_ps: off_ps as f64,
            distribution,
            last: Fine::default(),
            on_end: Fine::default(),
        }
    }

    fn draw(&self, mean: f64, rng: &mut RngStream) -> Fine {
        Fine::of_ps(match self.distribution {
            Distribution::Fixed => mean,
            Distribution::Exponential => rng.exponential(mean),
        })
    }

    /// The first instant at or after `due` at which the source is on, the
    /// current on period having ended at `self.on_end` (before `due`);
    /// `self.on_end` becomes the end of the on period that instant is in.
    #[inline(never)]
    fn next_on(&mut self, due: Fine, rng: &mut RngStream) -> Fine {
        for _ in 0..PERIODS_DRAWN {
            let on_start = self.on_end.plus(self.draw(self.off_ps, rng));
            self.on_end = on_start.plus(self.draw(self.on_ps, rng));
            let t = due.max(on_start);
            if t < self.on_end {
                return t;
            }
        }
        // `due` is at or after `self.on_end`, the start of an off period.
        let (on, off) = (Fine::of_ps(self.on_ps), Fine::of_ps(self.off_ps));
        if on == Fine::default() {
            // Never on (an on time below 2^-64 ps): silent from now on.
            self.on_end = Fine::of_time(Time::MAX);
            return self.on_end;
        }
        match self.distribution {
            Distribution::Fixed => {
                // On periods start at first + k (on + off), k = 0, 1, ...
                let first = self.on_end.plus(off);
                if due <= first {
                    self.on_end = first.plus(on);
                    return first;
                }
                let cycle = on.plus(off);
                let start = first.plus(cycle.times(due.minus(first).div_floor(cycle)));
                if due < start.plus(on) {
                    self.on_end = start.plus(on);
                    due
                } else {
                    let next = start.plus(cycle);
                    self.on_end = next.plus(on);
                    next
                }
            }
            Distribution::Exponential => {
                let (a, b) = (1.0 / self.off_ps, 1.0 / self.on_ps);
                let d = due.minus(self.on_end).ps();
                let p_on = a / (a + b) * -(-(a + b) * d).exp_m1();
                if rng.uniform() < p_on {
                    self.on_end = due.plus(self.draw(self.on_ps, rng));
                    due
                } else {
                    let on_start = due.plus(self.draw(self.off_ps, rng));
                    self.on_end = on_start.plus(self.draw(self.on_ps, rng));
                    on_start
                }
            }
        }
    }
}

impl TrafficSource for VbrOnOff {
    fn first(&mut self, start: Time, rng: &mut RngStream) -> Time {
        self.last = Fine::of_time(start);
        self.on_end = self.last.plus(self.draw(self.on_ps, rng));
        start
    }

    fn fire(&mut self, _now: Time, rng: &mut RngStream) -> Emission {
        let due = self.last.plus(self.interval);
        self.last = if due < self.on_end {
            due
        } else {
            self.next_on(due, rng)
        };
        Emission {
            cells: 1,
            next: Some(self.last.time()),
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

    /// Whatever on and off are, no two cells are closer than 1/peak, and a
    /// source whose periods are far shorter than 1/peak sends about its
    /// duty cycle of the peak (the periods it lands in are found at once,
    /// not drawn one by one: a 1 ps period is not a hang).
    #[test]
    fn never_above_the_peak_whatever_the_periods() {
        let ms = PS_PER_S / 1000;
        for distribution in [Distribution::Fixed, Distribution::Exponential] {
            for (peak, on, off) in [
                (2358.0, 1, 1),                    // 1 kbps, 1 ps periods
                (2358.0, 1, 1_000_000 * PS_PER_S), // 1 ps on, 10^6 s off
                (10_000.0, 3_000_000, 7_000_000),  // periods below 1/peak
                (10_000.0, 100 * ms, 100 * ms),
            ] {
                let mut s = VbrOnOff::new(peak, on, off, distribution);
                let tr = trace(&mut s, 7, 5, 5 + 100 * ms);
                let gap = (PS_PER_S as f64 / peak) as u64;
                for w in tr.windows(2) {
                    assert!(w[1].0 - w[0].0 >= gap, "{distribution:?} {on} {off}");
                }
                let most = (peak / 10.0).ceil() as usize + 1;
                assert!(
                    tr.len() <= most,
                    "{distribution:?} {on} {off}: {}",
                    tr.len()
                );
            }
        }
        // Exponential 1 ps periods: a cell due while off waits a few ps for
        // the next on period, so the source sends at nearly its peak.
        let mut s = VbrOnOff::new(10_000.0, 1, 1, Distribution::Exponential);
        let n = trace(&mut s, 3, 0, 10 * PS_PER_S).len();
        assert!((99_990..=100_000).contains(&n), "{n}");
        // Fixed 1 ps periods: every due time (a whole even number of ps
        // after the start) falls in an on period, so the peak itself.
        let mut s = VbrOnOff::new(10_000.0, 1, 1, Distribution::Fixed);
        assert_eq!(trace(&mut s, 3, 0, PS_PER_S).len(), 10_000);
        // Periods of 3 and 7 ps against a 100 us interval: a cell is due at
        // 0 mod 10, always on.
        let mut s = VbrOnOff::new(10_000.0, 3, 7, Distribution::Fixed);
        assert_eq!(trace(&mut s, 3, 0, PS_PER_S).len(), 10_000);
        // On 3 ps of 7 and an interval of 100,000,001 ps: due times step
        // through the cycle, the source waits for the next on period.
        let mut s = VbrOnOff::new(PS_PER_S as f64 / 100_000_001.0, 3, 4, Distribution::Fixed);
        let tr = trace(&mut s, 3, 0, PS_PER_S);
        assert!(tr.iter().all(|&(t, _)| t % 7 < 3));
    }
}
