//! RTT estimation and the retransmission timeout (Jacobson and Karels,
//! "Congestion Avoidance and Control", 1988, on BSD's coarse tick; seed 000
//! section 4 on the timer granularity).
//!
//! Jacobson/Karels as in RFC 6298: the first sample R sets srtt = R,
//! rttvar = R/2; later ones update rttvar = 3/4 rttvar + 1/4 |srtt - R| (with
//! the old srtt) and then srtt = 7/8 srtt + 1/8 R; RTO = srtt + 4 rttvar,
//! clamped to [min, max], doubled per back-off.
//!
//! With a coarse timer (BSD) everything is counted in ticks of G: one
//! segment at a time is timed by counting global ticks until its ACK, and the
//! RTO is a whole number of ticks (at least the minimum, 2 ticks by
//! default). With the fine timer, samples and the RTO are exact times.
//! Karn's rule: a timed segment that is retransmitted gives no sample, and
//! the back-off is cleared only by a valid sample.

use super::config::TimerMode;
use crate::engine::Time;

/// The estimator and the timing of one outstanding segment.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    /// Tick length, ps, in coarse mode.
    tick_ps: Option<Time>,
    /// Smoothed RTT (ticks in coarse mode, ps in fine mode).
    srtt: f64,
    /// RTT variation (same unit).
    rttvar: f64,
    /// True once a sample was taken.
    sampled: bool,
    initial: f64,
    min: f64,
    max: f64,
    /// Back-off shift: the RTO is doubled this many times.
    backoff: u32,
    /// `rto_units`, kept up to date by every change of the above (the
    /// sender asks for the RTO on every ACK).
    rto: f64,
    timing: Option<Timing>,
}

#[derive(Clone, Copy, Debug)]
struct Timing {
    /// Sequence number of the timed segment's first byte.
    seq: u64,
    /// When it was sent.
    start: Time,
    /// Ticks seen since (coarse mode): up to an RTO of 10^6 s in ticks of
    /// 1 us, more than `u32` holds.
    ticks: u64,
}

impl RttEstimator {
    /// An estimator for the given timer mode and RTO bounds (ps).
    pub fn new(mode: TimerMode, initial_ps: Time, min_ps: Time, max_ps: Time) -> Self {
        let tick_ps = match mode {
            TimerMode::Coarse { tick_ps } => Some(tick_ps),
            TimerMode::Fine => None,
        };
        let (initial, min, max) = match tick_ps {
            // Whole ticks: the minimum rounds up, the initial value rounds up.
            Some(g) => (
                initial_ps.div_ceil(g) as f64,
                min_ps.div_ceil(g).max(1) as f64,
                (max_ps / g).max(1) as f64,
            ),
            None => (initial_ps as f64, min_ps as f64, max_ps as f64),
        };
        RttEstimator {
            tick_ps,
            srtt: 0.0,
            rttvar: 0.0,
            sampled: false,
            initial,
            min,
            max,
            backoff: 0,
            rto: 0.0,
            timing: None,
        }
        .with_rto()
    }

    /// True when a segment is being timed.
    pub fn is_timing(&self) -> bool {
        self.timing.is_some()
    }

    /// Starts timing the segment at `seq` sent at `now`, unless one is timed.
    pub fn start(&mut self, seq: u64, now: Time) {
        if self.timing.is_none() {
            self.timing = Some(Timing {
                seq,
                start: now,
                ticks: 0,
            });
        }
    }

    /// Karn's rule: the timed segment was (or may have been) retransmitted.
    pub fn cancel(&mut self) {
        self.timing = None;
    }

    /// A global tick passed (coarse mode).
    pub fn tick(&mut self) {
        if let Some(t) = &mut self.timing {
            t.ticks = t.ticks.saturating_add(1);
        }
    }

    /// A cumulative ACK for bytes below `ack` arrived at `now`: takes a
    /// sample if it covers the timed segment. Returns true on a sample.
    pub fn on_ack(&mut self, ack: u64, now: Time) -> bool {
        match self.timing {
            Some(t) if ack > t.seq => {
                let r = match self.tick_ps {
                    Some(_) => t.ticks as f64,
                    None => (now - t.start) as f64,
                };
                self.sample(r);
                self.timing = None;
                true
            }
            _ => false,
        }
    }

    /// Feeds one RTT sample `r` (ticks or ps) and clears the back-off.
    pub fn sample(&mut self, r: f64) {
        if !self.sampled {
            self.srtt = r;
            self.rttvar = r / 2.0;
            self.sampled = true;
        } else {
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - r).abs();
            self.srtt = 0.875 * self.srtt + 0.125 * r;
        }
        self.backoff = 0;
        self.rto = self.compute_rto();
    }

    fn with_rto(mut self) -> Self {
        self.rto = self.compute_rto();
        self
    }

    /// Smoothed RTT (ticks in coarse mode, ps in fine mode; 0 before the
    /// first sample).
    pub fn srtt(&self) -> f64 {
        self.srtt
    }

    /// Back-off shift: the RTO is doubled this many times.
    pub fn backoff(&self) -> u32 {
        self.backoff
    }

    /// The RTO before back-off, in the estimator's unit, clamped.
    fn base_rto(&self) -> f64 {
        let raw = if self.sampled {
            self.srtt + 4.0 * self.rttvar
        } else {
            self.initial
        };
        let raw = if self.tick_ps.is_some() {
            raw.ceil()
        } else {
            raw
        };
        raw.clamp(self.min, self.max)
    }

    /// The RTO with back-off from the current state, in the estimator's unit.
    fn compute_rto(&self) -> f64 {
        (self.base_rto() * (1u64 << self.backoff.min(30)) as f64).min(self.max)
    }

    /// The current RTO with back-off, in the estimator's unit.
    #[inline]
    fn rto_units(&self) -> f64 {
        self.rto
    }

    /// The RTO in whole ticks (coarse mode).
    pub fn rto_ticks(&self) -> u64 {
        self.rto_units() as u64
    }

    /// The RTO in ps.
    pub fn rto_ps(&self) -> Time {
        match self.tick_ps {
            Some(g) => self.rto_units() as Time * g,
            None => self.rto_units() as Time,
        }
    }

    /// Smoothed RTT in seconds (0 before the first sample).
    pub fn srtt_s(&self) -> f64 {
        let ps = match self.tick_ps {
            Some(g) => self.srtt * g as f64,
            None => self.srtt,
        };
        ps / 1e12
    }

    /// Doubles the RTO (after a timeout).
    pub fn back_off(&mut self) {
        // An RTO of 1 ps times out 10^18 times in a run of 10^6 s.
        self.backoff = self.backoff.saturating_add(1);
        self.rto = self.compute_rto();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000_000;

    fn coarse() -> RttEstimator {
        RttEstimator::new(
            TimerMode::Coarse { tick_ps: 100 * MS },
            3_000 * MS,
            200 * MS,
            64_000 * MS,
        )
    }

    #[test]
    fn rto_in_ticks() {
        let mut e = coarse();
        // Before any sample: 3 s = 30 ticks.
        assert_eq!(e.rto_ticks(), 30);
        // A 3-tick sample: srtt 3, rttvar 1.5, RTO = 3 + 6 = 9 ticks.
        e.start(0, 0);
        for _ in 0..3 {
            e.tick();
        }
        assert!(e.on_ack(512, 0));
        assert_eq!(e.rto_ticks(), 9);
        assert_eq!(e.rto_ps(), 900 * MS);
        // A 1-tick sample: rttvar = 0.75*1.5 + 0.25*2 = 1.625, srtt = 2.75;
        // RTO = 2.75 + 6.5 = 9.25 -> 10 ticks.
        e.sample(1.0);
        assert!((e.srtt - 2.75).abs() < 1e-12 && (e.rttvar - 1.625).abs() < 1e-12);
        assert_eq!(e.rto_ticks(), 10);
        // Sub-tick RTTs give 0-tick samples; the RTO stays at the 2-tick minimum.
        for _ in 0..100 {
            e.sample(0.0);
        }
        assert_eq!(e.rto_ticks(), 2);
    }

    #[test]
    fn back_off_doubles_and_caps() {
        let mut e = coarse();
        e.sample(2.0); // RTO 2 + 4 = 6 ticks
        e.back_off();
        assert_eq!(e.rto_ticks(), 12);
        for _ in 0..20 {
            e.back_off();
        }
        assert_eq!(e.rto_ticks(), 640); // 64 s
        e.sample(2.0);
        assert_eq!(e.backoff, 0);
    }

    #[test]
    fn karn_no_sample_from_a_retransmitted_segment() {
        let mut e = coarse();
        e.start(1000, 0);
        e.tick();
        e.cancel();
        assert!(!e.on_ack(5000, 0));
        assert!(!e.sampled);
    }

    #[test]
    fn fine_timer_samples_exact_times() {
        let mut e = RttEstimator::new(TimerMode::Fine, 3_000 * MS, 200 * MS, 64_000 * MS);
        e.start(0, 10 * MS);
        assert!(!e.on_ack(0, 20 * MS)); // does not cover the timed byte
        assert!(e.on_ack(1, 70 * MS));
        assert_eq!(e.srtt, (60 * MS) as f64);
        // 60 + 4 * 30 = 180 ms, below the 200 ms minimum.
        assert_eq!(e.rto_ps(), 200 * MS);
        assert!((e.srtt_s() - 0.060).abs() < 1e-12);
    }
}
