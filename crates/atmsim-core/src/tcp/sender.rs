//! The TCP sender: window, transmission, ACK processing, the retransmission
//! and persist timers. The variant-specific reactions (duplicate ACKs,
//! partial ACKs, recovery) live in [`super::cc`]; everything else is
//! shared.
//!
//! What it sends: a full segment (or the last bytes of a finite transfer)
//! whenever it fits in min(cwnd, offered window). When it does not, the
//! sender's silly-window-syndrome avoidance (RFC 1122 section 4.2.3.4, as
//! 4.4BSD's tcp_output does it) sends a shorter segment only if it fills
//! at least half of the largest window the receiver ever offered (Fs =
//! 1/2), if it retransmits the oldest unacknowledged byte, or if the
//! persist timer forces it. With nothing in flight and nothing it may
//! send, the persist timer (RFC 9293 section 3.8.6.1, RFC 1122 section
//! 4.2.2.17; 4.4BSD's tcp_setpersist) runs; on expiry the sender sends
//! what the window allows, or one byte into a zero window (a window
//! probe), and backs the timer off. A sender that is always offered at
//! least one segment never meets these rules: a full segment then always
//! fits once its flight is acknowledged.

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

/// A timer of the sender: the retransmission timer or the persist timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SenderTimer {
    /// Coarse: ticks left (0 = off).
    Ticks(u64),
    /// Fine: the deadline (None = off).
    Deadline(Option<Time>),
}

impl SenderTimer {
    /// The same kind of timer, stopped.
    fn off(self) -> Self {
        match self {
            SenderTimer::Ticks(_) => SenderTimer::Ticks(0),
            SenderTimer::Deadline(_) => SenderTimer::Deadline(None),
        }
    }

    fn running(self) -> bool {
        !matches!(self, SenderTimer::Ticks(0) | SenderTimer::Deadline(None))
    }
}

/// 4.4BSD's TCP_MAXRXTSHIFT: the persist back-off counts no further.
const PERSIST_MAX_SHIFT: u32 = 12;

/// One TCP sender.
pub struct TcpSender {
    /// Shared state.
    pub s: SenderState,
    cc: cc::Cc,
    /// RTT estimator and RTO.
    pub rtt: RttEstimator,
    timer: SenderTimer,
    /// The persist timer (BSD's TCPT_PERSIST): runs while the sender has
    /// data to send, nothing in flight and a window too small to send
    /// into. Never runs while the retransmission timer does.
    persist: SenderTimer,
    /// The persist timer's back-off: its expiries since it started (BSD's
    /// t_rxtshift as tcp_setpersist uses it; BSD shares that counter with
    /// the retransmission timer, which never runs at the same time: the
    /// RTO's back-off is kept apart here, in the estimator).
    persist_shift: u32,
    /// The persist timer expired: the next transmission may be shorter
    /// than the silly-window rules allow, one byte into a zero window
    /// (BSD's t_force).
    force: bool,
    /// The largest window the receiver ever offered, bytes (BSD's
    /// max_sndwnd): the maximum window of RFC 1122's Fs rule.
    max_sndwnd: u64,
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
    /// Expiries of the persist timer.
    pub persist_expiries: u64,
    /// Window probes: one byte sent into a zero window on a persist
    /// expiry.
    pub window_probes: u64,
    /// ACKs that offered a zero window.
    pub zero_window_acks: u64,
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
            TimerMode::Coarse { .. } => SenderTimer::Ticks(0),
            TimerMode::Fine => SenderTimer::Deadline(None),
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
            persist: timer,
            persist_shift: 0,
            force: false,
            max_sndwnd: max_window,
            app_bytes: cfg.app_bytes,
            window_scale: cfg.window_scale,
            bytes_sent: 0,
            bytes_sent_once: 0,
            bytes_retransmitted: 0,
            segments_sent: 0,
            timeouts: 0,
            persist_expiries: 0,
            window_probes: 0,
            zero_window_acks: 0,
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
            SenderTimer::Ticks(_) => SenderTimer::Ticks(self.rtt.rto_ticks().max(1)),
            SenderTimer::Deadline(_) => SenderTimer::Deadline(Some(now + self.rtt.rto_ps())),
        };
    }

    fn stop_timer(&mut self) {
        self.timer = self.timer.off();
    }

    fn timer_running(&self) -> bool {
        self.timer.running()
    }

    /// True while the persist timer runs.
    pub fn persisting(&self) -> bool {
        self.persist.running()
    }

    /// Starts (shift 0) or restarts the persist timer with the current
    /// back-off, and counts one more step of it: 4.4BSD's tcp_setpersist.
    fn set_persist(&mut self, now: Time) {
        debug_assert!(
            !self.timer_running(),
            "persist with the retransmission timer"
        );
        self.persist = match self.persist {
            SenderTimer::Ticks(_) => {
                SenderTimer::Ticks((self.rtt.persist_units(self.persist_shift) as u64).max(1))
            }
            SenderTimer::Deadline(_) => {
                SenderTimer::Deadline(Some(now + self.rtt.persist_ps(self.persist_shift)))
            }
        };
        // TCP_MAXRXTSHIFT: BSD counts no further.
        if self.persist_shift < PERSIST_MAX_SHIFT {
            self.persist_shift += 1;
        }
    }

    /// Stops the persist timer and clears its back-off (BSD, when the
    /// retransmission timer starts in tcp_output).
    fn stop_persist(&mut self) {
        self.persist = self.persist.off();
        self.persist_shift = 0;
    }

    /// Coarse mode: ticks left on the retransmission timer (0 = off).
    pub fn ticks_left(&self) -> Option<u64> {
        match self.timer {
            SenderTimer::Ticks(n) => Some(n),
            SenderTimer::Deadline(_) => None,
        }
    }

    /// Coarse mode: ticks left on the persist timer (0 = off).
    pub fn persist_ticks_left(&self) -> Option<u64> {
        match self.persist {
            SenderTimer::Ticks(n) => Some(n),
            SenderTimer::Deadline(_) => None,
        }
    }

    /// Fine mode: when the retransmission or the persist timer (never both
    /// at once) expires.
    #[inline]
    pub fn deadline(&self) -> Option<Time> {
        match self.timer {
            SenderTimer::Deadline(Some(d)) => Some(d),
            SenderTimer::Deadline(None) => match self.persist {
                SenderTimer::Deadline(p) => p,
                SenderTimer::Ticks(_) => None,
            },
            SenderTimer::Ticks(_) => None,
        }
    }

    /// The next segment to transmit at `now`, if the window allows one.
    /// Call repeatedly until None.
    pub fn next_segment(&mut self, now: Time) -> Option<Segment> {
        let force = std::mem::take(&mut self.force);
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
                        // The usual end of a window-limited pump, decided
                        // here as `small_window` would: data in flight under
                        // the retransmission timer, a window offered, not
                        // forced, and no partial segment allowed (it would
                        // be less than a segment, so less than half of a
                        // largest window above two segments, and it is no
                        // retransmission of the oldest byte).
                        if !force
                            && self.s.snd_nxt != self.s.snd_una
                            && self.s.rwnd != 0
                            && 2 * self.s.mss < self.max_sndwnd
                            && self.timer_running()
                        {
                            return None;
                        }
                        return self.small_window(now, len, force);
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

    /// The `len` bytes at snd_nxt do not fit in the window: what the
    /// sender's silly-window-syndrome avoidance lets it send instead.
    /// RFC 1122 section 4.2.3.4 sends when (1) a full segment fits (not
    /// here), (2) all the data queued fits (the last bytes of a finite
    /// transfer: not here either, they would fit), (3) at least a fraction
    /// Fs = 1/2 of the largest window the receiver ever offered fits, (4)
    /// the override timeout expires: BSD's persist timer, `force`. As
    /// 4.4BSD's tcp_output the usable window is min(cwnd, offered window)
    /// less the bytes sent beyond snd_una, and a retransmission goes into
    /// whatever window there is ("if retransmitting ... must resend"), here
    /// only that of the oldest unacknowledged byte (BSD resends any, but
    /// with a window of at least one segment, which the senders of our
    /// scenarios always have, only a cwnd of a fraction of a segment could
    /// then be the limit, and the model keeps whole segments there).
    /// With nothing it may send, [`Self::cannot_send`]; a persist expiry
    /// into a zero window sends one byte (a window probe).
    #[cold]
    #[inline(never)]
    fn small_window(&mut self, now: Time, len: u64, force: bool) -> Option<Segment> {
        let win = self.window() as u64;
        let off = self.s.snd_nxt - self.s.snd_una;
        let usable = win.saturating_sub(off).min(len);
        let retransmit = off == 0 && self.s.snd_nxt < self.s.snd_max;
        if usable > 0 && (force || retransmit || 2 * usable >= self.max_sndwnd) {
            let seg = Segment {
                seq: self.s.snd_nxt,
                len: usable as u32,
            };
            self.record_send(now, seg);
            return Some(seg);
        }
        if force && self.s.rwnd == 0 && off == 0 {
            // RFC 9293 section 3.8.6.1: probe a zero window with one byte
            // of new data (or the byte at snd_una again). As BSD, snd_nxt
            // stays (the byte lies beyond the window), the persist timer
            // stays the sender's timer, nothing is timed.
            let seg = Segment {
                seq: self.s.snd_nxt,
                len: 1,
            };
            self.record_probe(seg);
            return Some(seg);
        }
        self.cannot_send(now);
        None
    }

    /// Nothing may be sent now: 4.4BSD's tcp_output then pulls snd_nxt
    /// back to snd_una when the window closed on data in flight (that data
    /// lies beyond it: the retransmission timer stops, Karn's rule drops
    /// the RTT timing) and, with data to send, neither timer running,
    /// starts the persist timer. BSD pulls snd_nxt back only when it was
    /// beyond the closed window and otherwise lets the retransmission
    /// timer run, which a zero window would let expire until BSD gives up
    /// on the connection; we pull back whenever the window is zero with
    /// data in flight, so that the window is probed.
    fn cannot_send(&mut self, now: Time) {
        if self.s.rwnd == 0 && self.s.snd_max > self.s.snd_una && self.timer_running() {
            self.stop_timer();
            self.s.snd_nxt = self.s.snd_una;
            self.rtt.cancel();
        }
        if !self.timer_running() && !self.persisting() {
            self.persist_shift = 0;
            self.set_persist(now);
        }
    }

    /// The payload counters of transmitting `seg`; returns the bytes of it
    /// sent before.
    fn count_bytes(&mut self, seg: Segment) -> u64 {
        let end = seg.seq + seg.len as u64;
        let again = self.s.snd_max.min(end).saturating_sub(seg.seq);
        self.bytes_retransmitted += again;
        self.bytes_sent_once += seg.len as u64 - again;
        self.bytes_sent += seg.len as u64;
        self.segments_sent += 1;
        again
    }

    #[inline(always)]
    fn record_send(&mut self, now: Time, seg: Segment) {
        let end = seg.seq + seg.len as u64;
        let old_max = self.s.snd_max;
        let again = self.count_bytes(seg);
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
            // Transmitting, no longer persisting (BSD's tcp_output).
            if self.persisting() {
                self.stop_persist();
            }
        }
    }

    /// A window probe: counted like any data; only snd_max moves.
    fn record_probe(&mut self, seg: Segment) {
        self.count_bytes(seg);
        self.window_probes += 1;
        self.s.snd_max = self.s.snd_max.max(seg.seq + seg.len as u64);
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
        if self.s.rwnd > self.max_sndwnd {
            self.max_sndwnd = self.s.rwnd;
        }
        if wnd == 0 {
            self.zero_window_acks += 1;
        }
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
                self.stop_persist();
            }
            if self.s.snd_una == self.s.snd_max {
                self.stop_timer();
            } else if !std::mem::take(&mut self.s.keep_timer) && !self.persisting() {
                // (In persist state an ACK of part of a probe leaves the
                // persist timer the sender's timer, as in BSD's tcp_input.)
                self.arm_timer(now);
            }
        } else if ack == self.s.snd_una && self.s.snd_max > self.s.snd_una {
            if self.persisting() {
                // The answer to a window probe, not a duplicate: BSD counts
                // duplicate ACKs only while the retransmission timer runs.
                self.s.dupacks = 0;
            } else {
                self.s.dupacks = self.s.dupacks.saturating_add(1);
                self.cc.on_dupack(&mut self.s, sack);
            }
        } else {
            self.cc.on_old_ack(&mut self.s, sack);
        }
        self.apply_flags(now);
    }

    /// A coarse global tick at `now`: counts the RTT and the timers down.
    /// Returns true when the retransmission timer or the persist timer
    /// expired (the expiry has been handled; transmit what
    /// [`Self::next_segment`] gives).
    pub fn on_tick(&mut self, now: Time) -> bool {
        self.rtt.tick();
        if let SenderTimer::Ticks(n) = &mut self.timer {
            if *n > 0 {
                *n -= 1;
                if *n == 0 {
                    self.timeout(now);
                    return true;
                }
            }
        }
        if let SenderTimer::Ticks(n) = &mut self.persist {
            if *n > 0 {
                *n -= 1;
                if *n == 0 {
                    self.persist_expired(now);
                    return true;
                }
            }
        }
        false
    }

    /// Fine mode: the deadline passed at `now`. Returns true on a timeout
    /// or a persist expiry.
    pub fn on_deadline(&mut self, now: Time) -> bool {
        match (self.timer, self.persist) {
            (SenderTimer::Deadline(Some(d)), _) if d <= now => {
                self.timeout(now);
                true
            }
            (_, SenderTimer::Deadline(Some(p))) if p <= now => {
                self.persist_expired(now);
                true
            }
            _ => false,
        }
    }

    /// The persist timer expired (4.4BSD's tcp_timers, TCPT_PERSIST): the
    /// timer restarts one back-off step on and the next transmission is
    /// forced: what the window allows, or a one-byte probe of a zero
    /// window. A forced segment into a window that is not zero starts the
    /// retransmission timer, which stops the persist timer.
    fn persist_expired(&mut self, now: Time) {
        self.persist_expiries += 1;
        self.set_persist(now);
        self.force = true;
    }

    /// The retransmission timeout (TCP over ABR (Kalyanaraman et al., 1996)
    /// section 2): ssthresh = max(2 MSS, min(cwnd/2, Wrcvr)) in whole segments,
    /// cwnd = 1 MSS, go back to snd_una, back off. During fast recovery the
    /// window is the one before the inflation (ns-2's cwnd; RFC 5681 takes the
    /// flight).
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
        // ssthresh = max(2, min(cwnd/2, Wrcvr)) (TCP over ABR): with cwnd far
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

    // --- small and zero windows -------------------------------------------

    /// MSS 1460, 1 MB windows at scale 5 (field 32768), coarse 100 ms ticks,
    /// initial RTO 3 s (30 ticks).
    fn wide() -> TcpConfig {
        let mut cfg = TcpConfig::example(Variant::Reno);
        cfg.mss_bytes = 1460;
        cfg.rcv_window_bytes = 1 << 20;
        cfg.window_scale = 5;
        cfg
    }

    /// Ticks until one of the sender's timers fires (at most `limit`).
    fn ticks_to_fire(sc: &mut Script, limit: u64) -> u64 {
        for k in 1..=limit {
            sc.now += 100_000_000_000;
            if sc.tx.on_tick(sc.now) {
                return k;
            }
        }
        panic!("no timer fired in {limit} ticks");
    }

    #[test]
    fn a_window_below_one_segment_with_nothing_in_flight_starts_the_persist_timer() {
        // RFC 9293 section 3.8.6.1 and RFC 1122 section 4.2.2.17 (probe a
        // closed window); 4.4BSD's tcp_output: data to send, neither timer
        // running, nothing sent: tcp_setpersist. The window is the one the
        // truncated floor of explicit-rate control wrote: 45 units of 2^5,
        // 1440 bytes, less than the 1460-byte segment.
        let mut sc = Script::new(wide());
        assert_eq!(sc.send(), vec![Segment { seq: 0, len: 1460 }]);
        assert!(!sc.tx.persisting());
        sc.wnd = 45;
        assert!(sc.ack(1460).is_empty());
        // The flight is acknowledged: no retransmission timer; the persist
        // timer runs, 5 s (TCPTV_PERSMIN: the initial RTO of 3 s and the
        // 0-tick sample both give less).
        assert_eq!(sc.tx.ticks_left(), Some(0));
        assert!(sc.tx.persisting());
        assert_eq!(sc.tx.persist_ticks_left(), Some(50));
        // Nothing goes before it expires (the Fs rule: 1440 bytes are far
        // below half the 1 MB window offered at first).
        assert_eq!(ticks_to_fire(&mut sc, 100), 50);
        assert_eq!(sc.tx.persist_expiries, 1);
        // RFC 1122 section 4.2.3.4's override timeout, which is BSD's
        // persist timer: what the window allows goes, and the sender is
        // transmitting again (retransmission timer on, persist timer off).
        assert_eq!(
            sc.send(),
            vec![Segment {
                seq: 1460,
                len: 1440
            }]
        );
        assert!(sc.tx.ticks_left().unwrap() > 0);
        assert!(!sc.tx.persisting());
        assert_eq!(sc.tx.window_probes, 0);
        assert_eq!(sc.tx.s.snd_nxt, 2900);
    }

    #[test]
    fn a_zero_window_is_probed_with_one_byte_at_backed_off_intervals() {
        // RFC 9293 section 3.8.6.1: one octet of new data probes a zero
        // window; RFC 1122 section 4.2.2.17: the intervals grow
        // exponentially. 4.4BSD's tcp_setpersist: t = srtt + 2 rttvar,
        // times 1, 2, 4, ... 64, within [5 s, 60 s].
        let mut sc = Script::new(wide());
        sc.send();
        // An RTT of 10 ticks: srtt 10, rttvar 5, so t = 20 ticks (2 s).
        for _ in 0..10 {
            sc.now += 100_000_000_000;
            assert!(!sc.tx.on_tick(sc.now));
        }
        sc.wnd = 0;
        assert!(sc.ack(1460).is_empty());
        assert_eq!(sc.tx.zero_window_acks, 1);
        // Intervals: 20 x 1 -> 50 ticks, 20 x 2 -> 50, 80, 160, 320,
        // 20 x 32 = 640 -> 600 (60 s), 600.
        let mut intervals = vec![];
        for k in 0..7 {
            intervals.push(ticks_to_fire(&mut sc, 1000));
            // Each expiry sends the byte at snd_nxt, 1460, and nothing else.
            assert_eq!(sc.send(), vec![Segment { seq: 1460, len: 1 }]);
            assert_eq!(sc.tx.window_probes, k + 1);
            // The receiver drops it (its window is closed) and answers at
            // once with the same ACK and window: not a duplicate ACK (BSD
            // counts those only while the retransmission timer runs), so
            // no fast retransmit however many come.
            assert!(sc.ack(1460).is_empty());
            assert_eq!(sc.tx.s.dupacks, 0);
        }
        assert_eq!(intervals, [50, 50, 80, 160, 320, 600, 600]);
        assert_eq!(sc.tx.persist_expiries, 7);
        assert_eq!(sc.tx.zero_window_acks, 8);
        assert_eq!(sc.tx.s.fast_retransmits, 0);
        // A probe moves snd_max only: snd_nxt stays, nothing is timed, no
        // retransmission timer (BSD: "in persist state, just set snd_max").
        assert_eq!((sc.tx.s.snd_nxt, sc.tx.s.snd_max), (1460, 1461));
        assert!(!sc.tx.rtt.is_timing());
        assert_eq!(sc.tx.ticks_left(), Some(0));
        // The probe byte is data: sent once, then six times again.
        assert_eq!(sc.tx.bytes_sent_once, 1461);
        assert_eq!(sc.tx.bytes_retransmitted, 6);
        assert_eq!(sc.tx.bytes_sent, 1467);
        // The window opens (the answer to a probe): full segments go from
        // snd_nxt (the first carries the probe byte again), the sender is
        // transmitting: retransmission timer on, persist timer off, its
        // back-off cleared.
        sc.wnd = 32_768;
        let sent = sc.ack(1460);
        assert_eq!(
            sent,
            vec![
                Segment {
                    seq: 1460,
                    len: 1460
                },
                Segment {
                    seq: 2920,
                    len: 1460
                }
            ]
        );
        assert!(!sc.tx.persisting() && sc.tx.ticks_left().unwrap() > 0);
        assert_eq!(sc.tx.bytes_retransmitted, 7);
        // The next time the persist timer starts, it starts from 5 s.
        sc.wnd = 0;
        sc.ack(4380);
        assert_eq!(sc.tx.persist_ticks_left(), Some(50));
    }

    #[test]
    fn a_probe_the_receiver_accepts_is_acknowledged_like_data() {
        // RFC 9293 section 3.8.6.1: the probe is one octet of new data; a
        // receiver whose window has reopened keeps it and acknowledges it.
        let mut sc = Script::new(wide());
        sc.send();
        sc.wnd = 0;
        sc.ack(1460);
        ticks_to_fire(&mut sc, 100);
        assert_eq!(sc.send(), vec![Segment { seq: 1460, len: 1 }]);
        // The receiver's window had opened: it takes the byte.
        sc.wnd = 32_768;
        let sent = sc.ack(1461);
        assert_eq!(
            sent[0],
            Segment {
                seq: 1461,
                len: 1460
            }
        );
        assert_eq!(sc.tx.bytes_retransmitted, 0);
        assert!(!sc.tx.persisting());
    }

    #[test]
    fn at_least_half_the_largest_window_offered_goes_without_waiting() {
        // RFC 1122 section 4.2.3.4, rule 3 with Fs = 1/2 (4.4BSD: len >=
        // max_sndwnd / 2): a receive buffer of 2000 bytes and MSS 1460.
        let mut cfg = wide();
        cfg.rcv_window_bytes = 2000;
        cfg.window_scale = 0;
        let mut sc = Script::new(cfg);
        // cwnd 1460, window 2000: one full segment; the 540 bytes left are
        // less than 1000.
        assert_eq!(sc.send(), vec![Segment { seq: 0, len: 1460 }]);
        // Offered 1000 bytes (less than a segment), nothing in flight:
        // 1000 >= 2000 / 2, so 1000 bytes go at once.
        sc.wnd = 1000;
        assert_eq!(
            sc.ack(1460),
            vec![Segment {
                seq: 1460,
                len: 1000
            }]
        );
        assert!(!sc.tx.persisting());
        // Offered 999: below half of 2000; nothing goes, the persist timer
        // starts.
        sc.wnd = 999;
        assert!(sc.ack(2460).is_empty());
        assert!(sc.tx.persisting());
        // A full segment fits again: it goes, whatever the fraction.
        sc.wnd = 2000;
        assert_eq!(
            sc.ack(2460),
            vec![Segment {
                seq: 2460,
                len: 1460
            }]
        );
        assert!(!sc.tx.persisting());
        // With 1460 bytes in flight the 540 left of the window stay unsent
        // (540 < 1000), and the retransmission timer runs: no persist.
        assert!(sc.send().is_empty());
        assert!(!sc.tx.persisting());
    }

    #[test]
    fn a_retransmission_goes_into_a_window_below_one_segment() {
        // 4.4BSD's tcp_output: "if retransmitting ... must resend". After a
        // timeout the oldest unacknowledged byte goes in whatever window is
        // offered.
        let mut sc = Script::new(wide());
        sc.send();
        // An ACK of nothing new shrinks the window to 1000 bytes.
        sc.wnd = 1000 / 32;
        assert!(sc.ack(0).is_empty());
        assert!(!sc.tx.persisting());
        // The initial RTO, 30 ticks: go-back-N into 992 bytes (31 x 32).
        assert_eq!(ticks_to_fire(&mut sc, 100), 30);
        assert_eq!(sc.tx.timeouts, 1);
        assert_eq!(sc.send(), vec![Segment { seq: 0, len: 992 }]);
        assert_eq!(sc.tx.bytes_retransmitted, 992);
    }

    #[test]
    fn a_window_closed_on_data_in_flight_stops_the_retransmission_timer() {
        // 4.4BSD's tcp_output: the window shrank to zero after data was
        // sent into it: snd_nxt back to snd_una, retransmission timer off;
        // then the persist timer probes.
        let mut sc = Script::new(wide());
        sc.tx.s.cwnd = 4.0 * 1460.0;
        assert_eq!(sc.send().len(), 4);
        sc.wnd = 0;
        assert!(sc.ack(1460).is_empty());
        assert_eq!((sc.tx.s.snd_una, sc.tx.s.snd_nxt), (1460, 1460));
        assert_eq!(sc.tx.s.snd_max, 4 * 1460);
        assert_eq!(sc.tx.ticks_left(), Some(0));
        assert!(sc.tx.persisting());
        // Karn: what was timed may be sent again.
        assert!(!sc.tx.rtt.is_timing());
        ticks_to_fire(&mut sc, 100);
        // The probe is the byte at snd_una, sent before.
        assert_eq!(sc.send(), vec![Segment { seq: 1460, len: 1 }]);
        assert_eq!(sc.tx.bytes_retransmitted, 1);
        assert_eq!(sc.tx.timeouts, 0);
    }

    #[test]
    fn the_persist_timer_runs_in_exact_time_with_the_fine_timer() {
        // RFC 1122 section 4.2.2.17 with BSD's values, as the coarse timer
        // (a_zero_window_is_probed_...), in exact time.
        let mut cfg = wide();
        cfg.timer = TimerMode::Fine;
        let mut sc = Script::new(cfg);
        sc.send();
        sc.wnd = 0;
        sc.ack(1460);
        // A 1 us RTT: t = 2 us, raised to 5 s.
        let due = sc.now + 5_000_000_000_000;
        assert_eq!(sc.tx.deadline(), Some(due));
        assert!(!sc.tx.on_deadline(due - 1));
        assert!(sc.tx.on_deadline(due));
        assert_eq!(sc.tx.persist_expiries, 1);
        assert_eq!(sc.send(), vec![Segment { seq: 1460, len: 1 }]);
        // Re-armed one back-off step on, from the expiry: 2 x 2 us -> 5 s.
        assert_eq!(sc.tx.deadline(), Some(due + 5_000_000_000_000));
    }

    #[test]
    fn a_completed_transfer_stops_the_persist_timer() {
        // RFC 9293 section 3.8.6.1 probes for data to send: with none left
        // there is nothing to probe for.
        let mut cfg = wide();
        cfg.app_bytes = Some(1461);
        let mut sc = Script::new(cfg);
        sc.send();
        sc.wnd = 0;
        sc.ack(1460);
        ticks_to_fire(&mut sc, 100);
        // The probe is the last byte; the receiver takes it.
        assert_eq!(sc.send(), vec![Segment { seq: 1460, len: 1 }]);
        sc.ack(1461);
        assert!(sc.tx.done());
        assert!(!sc.tx.persisting());
        assert!((0..10_000).all(|_| !sc.tx.on_tick(0)));
    }
}
