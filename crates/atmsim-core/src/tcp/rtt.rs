//! RTT estimation and the retransmission timeout (Jacobson and Karels,
//! "Congestion Avoidance and Control", 1988, on BSD's coarse tick; TCP over ABR
//! (Kalyanaraman et al., 1996) section 4 on the timer granularity).
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
//!
//! `RttArithmetic::Bsd` computes as 4.4BSD's tcp_xmit_timer and tcp_timers
//! (W. R. Stevens and G. R. Wright, "TCP/IP Illustrated, Volume 2", 1995,
//! sections 25.10 and 25.11): the timed segment's counter starts at 1 and
//! gains one per tick, so a sample is 1 + the ticks crossed; the first
//! sample sets srtt = R and rttvar = R/2; later ones, with srtt kept
//! scaled by 8 and rttvar by 4 in integers, take delta = R - 1 - srtt
//! (truncated), srtt += delta/8, rttvar += (|delta| - rttvar)/4 (each
//! truncated, and at least 1/8 and 1/4 tick); the RTO is the truncated
//! srtt + 4 rttvar ticks, clamped to [min, max], and a timeout multiplies
//! it by 2^shift (at most 64) before clamping. After the fourth
//! consecutive timeout srtt is folded into rttvar and cleared, so the next
//! sample counts as a first one. The truncations leave an RTO of at least
//! 3 ticks for RTTs below one tick, where the real-number arithmetic falls
//! to the 2-tick minimum.

use super::config::{RttArithmetic, TimerMode};
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
    /// The samples taken so far (reported with delay statistics on).
    taken: RttTally,
    /// BSD's fixed-point state, when the estimator computes as BSD.
    bsd: Option<BsdState>,
}

/// 4.4BSD's t_srtt (ticks x 8) and t_rttvar (ticks x 4); t_srtt = 0 means
/// no sample yet (or cleared after repeated timeouts).
#[derive(Clone, Copy, Debug, Default)]
struct BsdState {
    srtt: i64,
    rttvar: i64,
}

/// TCP_MAXRXTSHIFT / 4 in 4.4BSD: past this many consecutive timeouts srtt
/// is folded into rttvar and cleared.
const BSD_CLEAR_SHIFT: u32 = 3;

/// 4.4BSD's TCPTV_PERSMIN and TCPTV_PERSMAX: the persist timer is kept
/// between 5 and 60 s, ps.
pub const PERSIST_MIN_PS: Time = 5_000_000_000_000;
/// See [`PERSIST_MIN_PS`].
pub const PERSIST_MAX_PS: Time = 60_000_000_000_000;

/// 4.4BSD's tcp_backoff[] stops doubling at 64 (shift 6).
const BACKOFF_MAX_SHIFT: u32 = 6;

/// The RTT samples an estimator took from timed segments (count, sum,
/// least, greatest, ps; a coarse timer's sample is its ticks times the
/// tick): what the flow's summary reports of them.
#[derive(Clone, Copy, Debug, Default)]
pub struct RttTally {
    /// Samples taken.
    pub count: u64,
    /// Their sum, ps.
    pub sum_ps: u128,
    /// The least, ps (0 without samples).
    pub min_ps: Time,
    /// The greatest, ps.
    pub max_ps: Time,
}

impl RttTally {
    fn add(&mut self, d: Time) {
        if self.count == 0 || d < self.min_ps {
            self.min_ps = d;
        }
        self.max_ps = self.max_ps.max(d);
        self.count += 1;
        self.sum_ps += d as u128;
    }
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
    /// An estimator for the given timer mode and RTO bounds (ps), with the
    /// real-number arithmetic.
    pub fn new(mode: TimerMode, initial_ps: Time, min_ps: Time, max_ps: Time) -> Self {
        Self::with_arithmetic(mode, RttArithmetic::Real, initial_ps, min_ps, max_ps)
    }

    /// An estimator for the given timer mode, arithmetic and RTO bounds (ps).
    /// BSD's arithmetic needs a coarse timer (the scenario check rejects it
    /// with the fine one; here it falls back to the real numbers).
    pub fn with_arithmetic(
        mode: TimerMode,
        arithmetic: RttArithmetic,
        initial_ps: Time,
        min_ps: Time,
        max_ps: Time,
    ) -> Self {
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
            taken: RttTally::default(),
            bsd: match (arithmetic, tick_ps) {
                (RttArithmetic::Bsd, Some(_)) => Some(BsdState::default()),
                _ => None,
            },
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
                self.take_sample(t, now);
                true
            }
            _ => false,
        }
    }

    /// The timed segment `t` is acknowledged at `now`: its sample (ticks
    /// crossed, or ps), kept in the tally and fed to the estimator. Once
    /// per RTT at most: kept out of the ACK's way.
    #[inline(never)]
    fn take_sample(&mut self, t: Timing, now: Time) {
        let r = match self.tick_ps {
            Some(g) => {
                self.taken.add(t.ticks.saturating_mul(g));
                t.ticks as f64
            }
            None => {
                self.taken.add(now - t.start);
                (now - t.start) as f64
            }
        };
        self.sample(r);
        self.timing = None;
    }

    /// Feeds one RTT sample `r` (ticks crossed or ps) and clears the back-off.
    pub fn sample(&mut self, r: f64) {
        if let Some(b) = &mut self.bsd {
            // BSD's counter reads 1 + the ticks crossed.
            let rtt = r as i64 + 1;
            if b.srtt != 0 {
                let mut delta = rtt - 1 - (b.srtt >> 3);
                b.srtt += delta;
                if b.srtt <= 0 {
                    b.srtt = 1;
                }
                delta = delta.abs() - (b.rttvar >> 2);
                b.rttvar += delta;
                if b.rttvar <= 0 {
                    b.rttvar = 1;
                }
            } else {
                b.srtt = rtt << 3;
                b.rttvar = rtt << 1;
            }
            self.srtt = b.srtt as f64 / 8.0;
            self.rttvar = b.rttvar as f64 / 4.0;
            self.sampled = true;
            self.backoff = 0;
            self.rto = self.compute_rto();
            return;
        }
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

    /// The RTT samples taken from timed segments so far.
    pub fn taken(&self) -> RttTally {
        self.taken
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

    /// BSD's TCP_REXMTVAL: truncated srtt + 4 rttvar, in whole ticks.
    fn bsd_rexmtval(b: &BsdState) -> f64 {
        ((b.srtt >> 3) + b.rttvar) as f64
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
        match &self.bsd {
            // tcp_timers: REXMTVAL x tcp_backoff[shift] (1, 2, 4, ... 64, 64, ...),
            // then clamped; before any sample, the initial RTO backed off.
            Some(b) if self.sampled => {
                let factor = (1u64 << self.backoff.min(6)) as f64;
                (Self::bsd_rexmtval(b) * factor).clamp(self.min, self.max)
            }
            _ => (self.base_rto() * (1u64 << self.backoff.min(30)) as f64).min(self.max),
        }
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

    /// The persist timer's value after `shift` earlier expiries, in the
    /// estimator's unit (whole ticks with a coarse timer, ps with the fine
    /// one), as 4.4BSD's tcp_setpersist computes it (W. R. Stevens and
    /// G. R. Wright, "TCP/IP Illustrated, Volume 2", 1995, section 25.9):
    /// t = srtt + 2 rttvar, BSD's ((t_srtt >> 2) + t_rttvar) >> 1 in its
    /// fixed point; times tcp_backoff[shift] (2^shift, at most 64); kept
    /// within [5 s, 60 s] (TCPTV_PERSMIN, TCPTV_PERSMAX, rounded to whole
    /// ticks inwards). Before the first sample t is the initial RTO, as in
    /// BSD, where both come from the same default (t_rttvar's initial
    /// value gives t = the initial t_rxtcur). With the real-number
    /// arithmetic and a coarse timer t x 2^shift is rounded up to whole
    /// ticks, as the RTO is.
    pub fn persist_units(&self, shift: u32) -> f64 {
        let factor = (1u64 << shift.min(BACKOFF_MAX_SHIFT)) as f64;
        let t = match &self.bsd {
            Some(b) if self.sampled => (((b.srtt >> 2) + b.rttvar) >> 1) as f64,
            _ if self.sampled => self.srtt + 2.0 * self.rttvar,
            _ => self.initial.clamp(self.min, self.max),
        };
        let (lo, hi) = match self.tick_ps {
            Some(g) => {
                let lo = PERSIST_MIN_PS.div_ceil(g).max(1);
                (lo as f64, (PERSIST_MAX_PS / g).max(lo) as f64)
            }
            None => (PERSIST_MIN_PS as f64, PERSIST_MAX_PS as f64),
        };
        let v = t * factor;
        let v = if self.tick_ps.is_some() { v.ceil() } else { v };
        v.clamp(lo, hi)
    }

    /// [`Self::persist_units`] in ps.
    pub fn persist_ps(&self, shift: u32) -> Time {
        let v = self.persist_units(shift) as Time;
        match self.tick_ps {
            Some(g) => v * g,
            None => v,
        }
    }

    /// Doubles the RTO (after a timeout).
    pub fn back_off(&mut self) {
        // An RTO of 1 ps times out 10^18 times in a run of 10^6 s.
        self.backoff = self.backoff.saturating_add(1);
        self.rto = self.compute_rto();
        if let Some(b) = &mut self.bsd {
            // tcp_timers, after computing the backed-off RTO: "our srtt estimate
            // is probably bogus" after this many timeouts; the next sample is a
            // first one, and rttvar keeps the retransmit times until then.
            if self.backoff > BSD_CLEAR_SHIFT && b.srtt != 0 {
                b.rttvar += b.srtt >> 3;
                b.srtt = 0;
            }
        }
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

    fn bsd() -> RttEstimator {
        RttEstimator::with_arithmetic(
            TimerMode::Coarse { tick_ps: 100 * MS },
            RttArithmetic::Bsd,
            3_000 * MS,
            200 * MS,
            64_000 * MS,
        )
    }

    #[test]
    fn bsd_first_sample_is_three_times_the_counter() {
        let mut e = bsd();
        assert_eq!(e.rto_ticks(), 30);
        // No tick crossed: BSD's counter reads 1; srtt 1, rttvar 1/2: RTO 3 ticks.
        e.start(0, 0);
        assert!(e.on_ack(512, 0));
        assert_eq!(e.rto_ticks(), 3);
        // Two ticks crossed on the first sample: counter 3, RTO 9 ticks.
        let mut e = bsd();
        e.sample(2.0);
        assert_eq!(e.rto_ticks(), 9);
    }

    #[test]
    fn bsd_truncation_keeps_three_ticks_for_sub_tick_rtts() {
        // Net/3's fixed point: with samples of 0 ticks crossed, t_srtt falls to
        // 7 (0 whole ticks) and t_rttvar to 3 (3/4 tick), so REXMTVAL = 0 + 3 =
        // 3 ticks: above the 2-tick minimum the real numbers reach.
        let mut e = bsd();
        for _ in 0..200 {
            e.sample(0.0);
        }
        let b = e.bsd.unwrap();
        assert_eq!((b.srtt, b.rttvar), (7, 3));
        assert_eq!(e.rto_ticks(), 3);
        let mut real = coarse();
        for _ in 0..200 {
            real.sample(0.0);
        }
        assert_eq!(real.rto_ticks(), 2);
    }

    #[test]
    fn bsd_update_by_hand() {
        let mut e = bsd();
        e.sample(2.0); // counter 3: t_srtt 24, t_rttvar 6 -> RTO 3 + 6 = 9
                       // Counter 2 (1 tick crossed): delta = 2 - 1 - 3 = -2, t_srtt 22;
                       // |delta| - (6 >> 2) = 1, t_rttvar 7 -> RTO (22 >> 3) + 7 = 9.
        e.sample(1.0);
        let b = e.bsd.unwrap();
        assert_eq!((b.srtt, b.rttvar), (22, 7));
        assert_eq!(e.rto_ticks(), 9);
    }

    #[test]
    fn bsd_back_off_multiplies_then_clamps_and_clears_srtt() {
        let mut e = bsd();
        e.sample(0.0); // RTO 3 ticks
        e.back_off();
        assert_eq!(e.rto_ticks(), 6);
        e.back_off();
        e.back_off();
        assert_eq!(e.rto_ticks(), 24);
        // The fourth timeout: 3 x 16 = 48 ticks, then srtt (1 tick) moves into
        // rttvar (t_rttvar 2 + 1 = 3) and is cleared.
        e.back_off();
        assert_eq!(e.rto_ticks(), 48);
        let b = e.bsd.unwrap();
        assert_eq!((b.srtt, b.rttvar), (0, 3));
        // The next sample counts as a first one.
        e.sample(0.0);
        assert_eq!(e.rto_ticks(), 3);
        assert_eq!(e.backoff(), 0);
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
    fn persist_timer_as_bsd_computes_it() {
        // RFC 1122 4.2.2.17 asks for probes at exponentially growing
        // intervals; 4.4BSD's tcp_setpersist takes srtt + 2 rttvar, doubles
        // it per expiry (tcp_backoff, at most x 64) and keeps it in [5 s,
        // 60 s]. Coarse ticks of 100 ms: [50, 600] ticks.
        let mut e = coarse();
        // Before any sample: the initial RTO, 30 ticks (3 s) -> 50 ticks
        // (5 s), then 60 ticks (6 s), 120, 240, 480 and 600 (60 s).
        let got: Vec<f64> = (0..7).map(|k| e.persist_units(k)).collect();
        assert_eq!(got, [50.0, 60.0, 120.0, 240.0, 480.0, 600.0, 600.0]);
        assert_eq!(e.persist_ps(1), 6_000 * MS);
        // A 3-tick sample: srtt 3, rttvar 1.5: t = 3 + 3 = 6 ticks:
        // 6, 12, 24, 48, 96, 192, 384, then 384 (x 64 at most): the first
        // four are raised to 50, 384 stays.
        e.sample(3.0);
        let got: Vec<f64> = (0..8).map(|k| e.persist_units(k)).collect();
        assert_eq!(got, [50.0, 50.0, 50.0, 50.0, 96.0, 192.0, 384.0, 384.0]);
        // A LAN (RTTs far below a tick): t rounds up to whole ticks and the
        // 5 s minimum holds for every shift (64 x t < 50 ticks).
        for _ in 0..100 {
            e.sample(0.0);
        }
        assert!((0..12).all(|k| e.persist_units(k) == 50.0));
    }

    #[test]
    fn persist_timer_in_bsd_fixed_point() {
        // 500 ms ticks (BSD's slow timer): [10, 120] ticks. A first sample
        // with 2 ticks crossed: t_srtt 24, t_rttvar 6 (as in
        // bsd_first_sample_is_three_times_the_counter): t = ((24 >> 2) + 6)
        // >> 1 = 6 ticks (3 s): 10 (5 s), 12, 24, 48, 96, 120 (60 s).
        let mut e = RttEstimator::with_arithmetic(
            TimerMode::Coarse { tick_ps: 500 * MS },
            RttArithmetic::Bsd,
            6_000 * MS,
            1_000 * MS,
            64_000 * MS,
        );
        e.sample(2.0);
        let got: Vec<f64> = (0..7).map(|k| e.persist_units(k)).collect();
        assert_eq!(got, [10.0, 12.0, 24.0, 48.0, 96.0, 120.0, 120.0]);
        // Stevens' LAN example (W. R. Stevens, "TCP/IP Illustrated,
        // Volume 1", 1994, section 22.2):
        // t = 1.5 s (3 ticks) gives probes 5, 5, 6, 12, 24, 48, 60 s apart.
        // t_srtt 8 (1 tick), t_rttvar 4 (1 tick): ((8 >> 2) + 4) >> 1 = 3.
        e.bsd = Some(BsdState { srtt: 8, rttvar: 4 });
        let got: Vec<Time> = (0..7).map(|k| e.persist_ps(k) / (500 * MS)).collect();
        assert_eq!(got, [10, 10, 12, 24, 48, 96, 120]);
    }

    #[test]
    fn persist_timer_in_exact_time() {
        // The fine timer: srtt 1 s, rttvar 0.5 s -> t = 2 s: 5, 5, 8, 16,
        // 32 s, then 60 s (64 s clamped).
        let mut e = RttEstimator::new(TimerMode::Fine, 3_000 * MS, 200 * MS, 64_000 * MS);
        e.sample((1_000 * MS) as f64);
        let got: Vec<Time> = (0..6).map(|k| e.persist_ps(k) / MS).collect();
        assert_eq!(got, [5_000, 5_000, 8_000, 16_000, 32_000, 60_000]);
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
