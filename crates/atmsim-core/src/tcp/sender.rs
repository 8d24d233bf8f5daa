//! The TCP sender: window, transmission, ACK processing, the retransmission
//! timer. The variant-specific reactions (duplicate ACKs, partial ACKs,
//! recovery) live in [`super::cc`]; everything else is shared.

use super::cc::{self, CongestionControl, SendChoice};
use super::config::{TcpConfig, TimerMode};
use super::rtt::RttEstimator;
use crate::engine::Time;
use crate::ip::SackBlock;

/// The state a congestion-control variant reads and changes.
#[derive(Clone, Debug)]
pub struct SenderState {
    /// Maximum segment size, bytes.
    pub mss: u64,
    /// Oldest unacknowledged byte.
    pub snd_una: u64,
    /// Next byte to send.
    pub snd_nxt: u64,
    /// One past the highest byte ever sent.
    pub snd_max: u64,
    /// Congestion window, bytes.
    pub cwnd: f64,
    /// Slow-start threshold, bytes.
    pub ssthresh: f64,
    /// Upper bound of cwnd: the largest window the receiver can offer.
    pub max_cwnd: f64,
    /// Window last advertised by the receiver, bytes.
    pub rwnd: u64,
    /// Consecutive duplicate ACKs.
    pub dupacks: u32,
    /// snd_max when the last fast retransmit or timeout happened; a new fast
    /// retransmit needs snd_una >= recover.
    pub recover: u64,
    /// A segment to retransmit at once, whatever the window.
    pub retransmit_now: Option<u64>,
    /// Set by a variant: restart the retransmission timer.
    pub restart_timer: bool,
    /// Set by a variant: stop timing the RTT sample (Karn).
    pub cancel_rtt: bool,
    /// Set by a variant: do not restart the retransmission timer for this
    /// new ACK (NewReno's later partial ACKs, RFC 6582 "impatient").
    pub keep_timer: bool,
    /// Fast retransmits so far.
    pub fast_retransmits: u64,
}

impl SenderState {
    /// Bytes sent and not yet acknowledged.
    pub fn flight(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// Slow start (cwnd < ssthresh): one MSS per new ACK; congestion
    /// avoidance: MSS^2/cwnd per new ACK.
    pub fn grow(&mut self) {
        let mss = self.mss as f64;
        if self.cwnd < self.ssthresh {
            self.cwnd += mss;
        } else {
            self.cwnd += mss * mss / self.cwnd;
        }
        self.cwnd = self.cwnd.min(self.max_cwnd);
    }

    /// `bytes` rounded down to whole segments, at least 2 (BSD and ns-2 keep
    /// ssthresh in whole segments).
    pub fn whole_segments(&self, bytes: f64) -> f64 {
        let mss = self.mss as f64;
        ((bytes / mss).floor() * mss).max(2.0 * mss)
    }

    /// The threshold after a fast retransmit: half the window in use
    /// (min(cwnd, rwnd), as ns-2), in whole segments, at least 2.
    pub fn half_window(&self) -> f64 {
        self.whole_segments(self.cwnd.min(self.rwnd as f64) / 2.0)
    }

    /// True when a fast retransmit may start: the ACK has moved beyond the
    /// highest byte sent at the last fast retransmit or timeout (RFC 6582,
    /// ns-2), so the duplicates of resent old data do not start another.
    pub fn may_fast_retransmit(&self) -> bool {
        self.snd_una > self.recover
    }

    /// Shared part of a fast retransmit: remember the window, halve the
    /// threshold, restart the timer, stop RTT timing.
    pub fn begin_fast_retransmit(&mut self) {
        self.recover = self.snd_max;
        self.ssthresh = self.half_window();
        self.fast_retransmits += 1;
        self.restart_timer = true;
        self.cancel_rtt = true;
    }
}

/// The retransmission timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RexmtTimer {
    /// Coarse: ticks left (0 = off).
    Ticks(u64),
    /// Fine: the deadline (None = off).
    Deadline(Option<Time>),
}

/// One TCP sender.
pub struct TcpSender {
    /// Shared state.
    pub s: SenderState,
    cc: cc::Cc,
    /// RTT estimator and RTO.
    pub rtt: RttEstimator,
    timer: RexmtTimer,
    app_bytes: Option<u64>,
    window_scale: u8,
    /// Bytes transmitted (first copies and retransmissions).
    pub bytes_sent: u64,
    /// Bytes transmitted for the first time.
    pub bytes_sent_once: u64,
    /// Bytes transmitted again.
    pub bytes_retransmitted: u64,
    /// Segments transmitted.
    pub segments_sent: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// ACKs whose checksum did not verify (must stay 0).
    pub bad_checksums: u64,
    /// When the finite transfer was fully acknowledged.
    pub completed_at: Option<Time>,
}

/// A segment to transmit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// First byte.
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
}

impl TcpSender {
    /// A sender that has sent nothing yet.
    pub fn new(cfg: &TcpConfig) -> Self {
        let mss = cfg.mss_bytes as u64;
        let max_window = cfg.max_window();
        let s = SenderState {
            mss,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            cwnd: (cfg.initial_cwnd_segments as u64 * mss) as f64,
            ssthresh: cfg.initial_ssthresh_bytes.unwrap_or(max_window) as f64,
            max_cwnd: ((65_535u64 << cfg.window_scale).max(max_window)) as f64,
            rwnd: max_window,
            dupacks: 0,
            recover: 0,
            retransmit_now: None,
            restart_timer: false,
            cancel_rtt: false,
            keep_timer: false,
            fast_retransmits: 0,
        };
        let timer = match cfg.timer {
            TimerMode::Coarse { .. } => RexmtTimer::Ticks(0),
            TimerMode::Fine => RexmtTimer::Deadline(None),
        };
        TcpSender {
            s,
            cc: cc::build(cfg.variant),
            rtt: RttEstimator::with_arithmetic(
                cfg.timer,
                cfg.rtt_arithmetic,
                cfg.initial_rto_ps,
                cfg.min_rto_ps,
                cfg.max_rto_ps,
            ),
            timer,
            app_bytes: cfg.app_bytes,
            window_scale: cfg.window_scale,
            bytes_sent: 0,
            bytes_sent_once: 0,
            bytes_retransmitted: 0,
            segments_sent: 0,
            timeouts: 0,
            bad_checksums: 0,
            completed_at: None,
        }
    }

    /// The variant's name.
    pub fn variant(&self) -> &'static str {
        self.cc.name()
    }

    /// True while in fast recovery.
    pub fn in_recovery(&self) -> bool {
        self.cc.in_recovery()
    }

    /// min(cwnd, advertised window), bytes.
    pub fn window(&self) -> f64 {
        self.s.cwnd.min(self.s.rwnd as f64)
    }

    /// True when every byte of a finite transfer was acknowledged.
    pub fn done(&self) -> bool {
        self.completed_at.is_some()
    }

    fn data_end(&self) -> u64 {
        self.app_bytes.unwrap_or(u64::MAX)
    }

    fn arm_timer(&mut self, now: Time) {
        self.timer = match self.timer {
            RexmtTimer::Ticks(_) => RexmtTimer::Ticks(self.rtt.rto_ticks().max(1)),
            RexmtTimer::Deadline(_) => RexmtTimer::Deadline(Some(now + self.rtt.rto_ps())),
        };
    }

    fn stop_timer(&mut self) {
        self.timer = match self.timer {
            RexmtTimer::Ticks(_) => RexmtTimer::Ticks(0),
            RexmtTimer::Deadline(_) => RexmtTimer::Deadline(None),
        };
    }

    fn timer_running(&self) -> bool {
        !matches!(
            self.timer,
            RexmtTimer::Ticks(0) | RexmtTimer::Deadline(None)
        )
    }

    /// Coarse mode: ticks left on the retransmission timer (0 = off).
    pub fn ticks_left(&self) -> Option<u64> {
        match self.timer {
            RexmtTimer::Ticks(n) => Some(n),
            RexmtTimer::Deadline(_) => None,
        }
    }

    /// Fine mode: when the retransmission timer expires.
    pub fn deadline(&self) -> Option<Time> {
        match self.timer {
            RexmtTimer::Deadline(d) => d,
            RexmtTimer::Ticks(_) => None,
        }
    }

    /// The next segment to transmit at `now`, if the window allows one.
    /// Call repeatedly until None.
    pub fn next_segment(&mut self, now: Time) -> Option<Segment> {
        if self.done() {
            return None;
        }
        let end = self.data_end();
        let seg = if let Some(seq) = self.s.retransmit_now.take() {
            let len = self.s.mss.min(self.s.snd_max - seq).min(end - seq);
            Segment {
                seq,
                len: len as u32,
            }
        } else {
            match self.cc.choose(&self.s) {
                SendChoice::Segment(seg) => seg,
                SendChoice::Nothing => return None,
                SendChoice::Normal => {
                    if self.s.snd_nxt >= end {
                        return None;
                    }
                    let len = self.s.mss.min(end - self.s.snd_nxt);
                    // Past snd_una + floor(window)? For a whole number of
                    // bytes that is past the window itself, compared in f64
                    // (exact below 2^53) to spare a saturating cast.
                    let beyond = (self.s.snd_nxt + len).saturating_sub(self.s.snd_una);
                    if beyond as f64 > self.window() {
                        return None;
                    }
                    Segment {
                        seq: self.s.snd_nxt,
                        len: len as u32,
                    }
                }
            }
        };
        self.record_send(now, seg);
        Some(seg)
    }

    fn record_send(&mut self, now: Time, seg: Segment) {
        let end = seg.seq + seg.len as u64;
        let old_max = self.s.snd_max;
        let again = old_max.min(end).saturating_sub(seg.seq);
        self.bytes_retransmitted += again;
        self.bytes_sent_once += seg.len as u64 - again;
        self.bytes_sent += seg.len as u64;
        self.segments_sent += 1;
        if seg.seq == self.s.snd_nxt {
            self.s.snd_nxt = end;
        }
        if end > old_max {
            self.s.snd_max = end;
        }
        if again == 0 {
            self.rtt.start(seg.seq, now);
        }
        self.cc.on_send(&self.s, seg);
        if !self.timer_running() {
            self.arm_timer(now);
        }
    }

    fn apply_flags(&mut self, now: Time) {
        if std::mem::take(&mut self.s.cancel_rtt) {
            self.rtt.cancel();
        }
        if std::mem::take(&mut self.s.restart_timer) {
            self.arm_timer(now);
        }
    }

    /// Processes an ACK: cumulative `ack`, window field `wnd`, SACK blocks.
    pub fn on_ack(&mut self, now: Time, ack: u64, wnd: u16, sack: &[SackBlock]) {
        self.s.rwnd = (wnd as u64) << self.window_scale;
        if ack > self.s.snd_max {
            // Acknowledges data never sent: ignore (cannot happen in the model).
            return;
        }
        if ack > self.s.snd_una {
            let acked = ack - self.s.snd_una;
            self.rtt.on_ack(ack, now);
            self.s.snd_una = ack;
            if self.s.snd_nxt < ack {
                self.s.snd_nxt = ack;
            }
            self.cc.on_new_ack(&mut self.s, acked, sack);
            self.s.dupacks = 0;
            if ack >= self.data_end() {
                self.completed_at = Some(now);
            }
            if self.s.snd_una == self.s.snd_max {
                self.stop_timer();
            } else if !std::mem::take(&mut self.s.keep_timer) {
                self.arm_timer(now);
            }
        } else if ack == self.s.snd_una && self.s.snd_max > self.s.snd_una {
            self.s.dupacks = self.s.dupacks.saturating_add(1);
            self.cc.on_dupack(&mut self.s, sack);
        } else {
            self.cc.on_old_ack(&mut self.s, sack);
        }
        self.apply_flags(now);
    }

    /// A coarse global tick at `now`: counts the RTT and the timer down.
    /// Returns true when the retransmission timer expired (the timeout has
    /// been handled; transmit what [`Self::next_segment`] gives).
    pub fn on_tick(&mut self, now: Time) -> bool {
        self.rtt.tick();
        if let RexmtTimer::Ticks(n) = &mut self.timer {
            if *n > 0 {
                *n -= 1;
                if *n == 0 {
                    self.timeout(now);
                    return true;
                }
            }
        }
        false
    }

    /// Fine mode: the deadline passed at `now`. Returns true on a timeout.
    pub fn on_deadline(&mut self, now: Time) -> bool {
        match self.timer {
            RexmtTimer::Deadline(Some(d)) if d <= now => {
                self.timeout(now);
                true
            }
            _ => false,
        }
    }

    /// The retransmission timeout (seed 000 section 2): ssthresh = max(2 MSS,
    /// min(cwnd/2, Wrcvr)) in whole segments, cwnd = 1 MSS, go back to
    /// snd_una, back off. During fast recovery the window is the one before
    /// the inflation (ns-2's cwnd; RFC 5681 takes the flight).
    pub fn timeout(&mut self, now: Time) {
        self.timeouts += 1;
        let base = self.cc.base_cwnd(&self.s);
        let s = &mut self.s;
        let mss = s.mss as f64;
        s.ssthresh = s.whole_segments((base / 2.0).min(s.rwnd as f64));
        s.cwnd = mss;
        s.snd_nxt = s.snd_una;
        s.dupacks = 0;
        s.recover = s.snd_max;
        s.retransmit_now = None;
        s.keep_timer = false;
        self.cc.on_timeout(s);
        self.rtt.cancel();
        self.rtt.back_off();
        self.arm_timer(now);
    }
}

#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// A scripted exchange: the sender, and helpers to ACK and drain.
    pub struct Script {
        pub tx: TcpSender,
        pub now: Time,
        pub wnd: u16,
    }

    impl Script {
        pub fn new(cfg: TcpConfig) -> Self {
            let wnd = cfg.window_field();
            Script {
                tx: TcpSender::new(&cfg),
                now: 0,
                wnd,
            }
        }

        /// Every segment the sender transmits now.
        pub fn send(&mut self) -> Vec<Segment> {
            let mut v = vec![];
            while let Some(s) = self.tx.next_segment(self.now) {
                v.push(s);
            }
            v
        }

        pub fn ack(&mut self, ack: u64) -> Vec<Segment> {
            self.ack_sack(ack, &[])
        }

        pub fn ack_sack(&mut self, ack: u64, sack: &[SackBlock]) -> Vec<Segment> {
            self.now += 1_000_000;
            self.tx.on_ack(self.now, ack, self.wnd, sack);
            self.send()
        }

        pub fn cwnd_segments(&self) -> f64 {
            self.tx.s.cwnd / self.tx.s.mss as f64
        }

        pub fn ssthresh_segments(&self) -> f64 {
            self.tx.s.ssthresh / self.tx.s.mss as f64
        }

        /// Opens the window to `n` segments in flight by ACKing in slow start.
        pub fn open_to(&mut self, n: usize) {
            let mut sent = self.send();
            let mss = self.tx.s.mss;
            while sent.len() < n {
                let next = self.tx.s.snd_una + mss;
                sent = self.ack(next);
                let flight = (self.tx.s.snd_max - self.tx.s.snd_una) / mss;
                if flight as usize >= n {
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::Script;
    use super::*;
    use crate::tcp::config::Variant;

    #[test]
    fn slow_start_then_congestion_avoidance() {
        let mut cfg = TcpConfig::example(Variant::TahoeNofr);
        cfg.initial_ssthresh_bytes = Some(4 * 512);
        let mut sc = Script::new(cfg);
        assert_eq!(sc.send().len(), 1);
        // Each new ACK adds one MSS below ssthresh ...
        assert_eq!(sc.ack(512).len(), 2);
        assert_eq!(sc.cwnd_segments(), 2.0);
        sc.ack(1024);
        sc.ack(1536);
        assert_eq!(sc.cwnd_segments(), 4.0);
        // ... and MSS/cwnd above: 4 + 1/4.
        sc.ack(2048);
        assert!((sc.cwnd_segments() - 4.25).abs() < 1e-12);
    }

    #[test]
    fn window_is_min_of_cwnd_and_advertised_window() {
        let mut cfg = TcpConfig::example(Variant::TahoeNofr);
        cfg.initial_cwnd_segments = 100;
        let mut sc = Script::new(cfg);
        // 64 KB window = 128 segments of 512, cwnd 100: 100 segments go.
        assert_eq!(sc.send().len(), 100);
        // The receiver shrinks its window to 10 segments (field in units of 2).
        sc.wnd = 2560;
        assert!(sc.ack(512).is_empty());
        assert_eq!(sc.tx.window(), 5120.0);
    }

    #[test]
    fn a_segment_goes_only_if_all_of_it_fits_the_window() {
        // The window is a fractional byte count in congestion avoidance: a
        // segment goes when its last byte is within snd_una + window.
        for (cwnd, segments) in [(3.0 * 512.0, 3), (3.0 * 512.0 - 0.5, 2), (2.99 * 512.0, 2)] {
            let mut cfg = TcpConfig::example(Variant::TahoeNofr);
            cfg.initial_cwnd_segments = 1;
            let mut sc = Script::new(cfg);
            sc.tx.s.cwnd = cwnd;
            assert_eq!(sc.send().len(), segments, "cwnd {cwnd}");
        }
    }

    #[test]
    fn timeout_halves_and_goes_back_n() {
        let mut sc = Script::new(TcpConfig::example(Variant::TahoeNofr));
        sc.open_to(16);
        let una = sc.tx.s.snd_una;
        let cwnd = sc.tx.s.cwnd;
        sc.tx.timeout(sc.now);
        assert_eq!(sc.tx.s.cwnd, 512.0);
        assert_eq!(sc.tx.s.ssthresh, (cwnd / 2.0).max(1024.0));
        assert_eq!(sc.tx.s.snd_nxt, una);
        assert_eq!(sc.tx.timeouts, 1);
        // One segment goes out again: a retransmission of snd_una.
        let again = sc.send();
        assert_eq!(again, vec![Segment { seq: una, len: 512 }]);
        assert_eq!(sc.tx.bytes_retransmitted, 512);
        assert_eq!(sc.tx.rtt.backoff(), 1);
    }

    #[test]
    fn timeout_threshold_uses_the_receiver_window_when_smaller() {
        // ssthresh = max(2, min(cwnd/2, Wrcvr)) (seed 000): with cwnd far
        // above the window, the window bounds it.
        let mut sc = Script::new(TcpConfig::example(Variant::TahoeNofr));
        sc.tx.s.cwnd = 300_000.0;
        sc.tx.timeout(0);
        assert_eq!(sc.tx.s.ssthresh, 65_536.0);
    }

    #[test]
    fn ssthresh_is_kept_in_whole_segments() {
        // Regression (ns-2 validation D1): 11 segments halve to 5, not 5.5.
        let mut sc = Script::new(TcpConfig::example(Variant::TahoeNofr));
        sc.tx.s.cwnd = 11.0 * 512.0;
        sc.tx.timeout(0);
        assert_eq!(sc.tx.s.ssthresh, 5.0 * 512.0);
        sc.tx.s.cwnd = 11.0 * 512.0 + 300.0;
        assert_eq!(sc.tx.s.half_window(), 5.0 * 512.0);
        sc.tx.s.cwnd = 1.0 * 512.0;
        assert_eq!(sc.tx.s.half_window(), 2.0 * 512.0);
    }

    #[test]
    fn coarse_timer_expires_after_rto_ticks() {
        let mut sc = Script::new(TcpConfig::example(Variant::TahoeNofr));
        sc.send();
        // Initial RTO: 3 s = 30 ticks of 100 ms.
        for k in 1..30 {
            assert!(!sc.tx.on_tick(k * 100), "tick {k}");
        }
        assert!(sc.tx.on_tick(3000));
        assert_eq!(sc.tx.timeouts, 1);
    }

    #[test]
    fn finite_transfer_completes() {
        let mut cfg = TcpConfig::example(Variant::Reno);
        cfg.app_bytes = Some(1300);
        let mut sc = Script::new(cfg);
        let s = sc.send();
        assert_eq!(s, vec![Segment { seq: 0, len: 512 }]);
        let s = sc.ack(512);
        assert_eq!(
            s,
            vec![
                Segment { seq: 512, len: 512 },
                Segment {
                    seq: 1024,
                    len: 276
                }
            ]
        );
        sc.ack(1300);
        assert!(sc.tx.done());
        assert!(sc.send().is_empty());
        assert_eq!(sc.tx.bytes_sent_once, 1300);
    }
}
