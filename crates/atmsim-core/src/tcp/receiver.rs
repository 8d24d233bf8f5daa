//! The TCP receiver: cumulative ACKs, out-of-order buffering, duplicate
//! counting, SACK blocks (RFC 2018), delayed ACKs and the window.
//!
//! The application reads every in-order byte at once, so the advertised
//! window is always the whole receiver buffer (out-of-order data sits in the
//! reassembly queue, as in BSD, and does not shrink it). The window is
//! still the buffer space left: bytes the application has not read would
//! hold it (only a test hook stops the reading), the right edge of the
//! window never moves back, and data beyond it is dropped, a segment wholly
//! beyond it answered at once with an ACK carrying the current window (RFC
//! 9293 section 3.10.7.4; 4.4BSD's tcp_input): that is how a window probe
//! into a closed window is answered.
//!
//! Receiver-side silly-window-syndrome avoidance (RFC 1122 section
//! 4.2.3.3: do not move the window's right edge by less than min(buffer/2,
//! MSS)) concerns a window reopened by an application reading in small
//! pieces. Ours read everything at once, so the window offered at every ACK
//! is the whole buffer: the rule has nothing to hold back (after a segment
//! shorter than a full one, the last of a finite transfer, it would keep
//! the edge where it was, but the sender has nothing left to send into it).

use super::insert_range;
use crate::engine::Time;
use crate::ip::SackBlock;

/// What the receiver wants after a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckPlan {
    /// Send an ACK now.
    Now,
    /// Send one at this time unless another segment triggers it first.
    At(Time),
}

/// One TCP receiver.
#[derive(Clone, Debug)]
pub struct TcpReceiver {
    /// Next byte expected: every byte below it was delivered.
    pub rcv_nxt: u64,
    /// Out-of-order ranges held, sorted and disjoint, all above rcv_nxt.
    ooo: Vec<SackBlock>,
    /// Out-of-order ranges, most recently changed first (SACK block order).
    recent: Vec<SackBlock>,
    sack: bool,
    max_blocks: usize,
    delayed_ack_ps: Time,
    unacked_segments: u32,
    /// Pending delayed-ACK deadline.
    pub delack_deadline: Option<Time>,
    /// Bytes delivered to the application.
    pub bytes_delivered: u64,
    /// Bytes received again (dropped as duplicates).
    pub bytes_duplicate: u64,
    /// Data segments received.
    pub segments_received: u64,
    /// The receive buffer, bytes: the window offered while the application
    /// has read everything.
    buffer: u64,
    /// The window-scale shift of the advertised field (RFC 1323).
    scale: u8,
    /// The field advertising the whole buffer: min(65535, buffer >> scale).
    full_field: u16,
    /// rcv_nxt when the application stopped reading, if it did: the bytes
    /// delivered since hold buffer space. Only a test hook stops it.
    paused_at: Option<u64>,
    /// Payload bytes dropped beyond the window's right edge (window probes
    /// into a closed window).
    pub bytes_beyond_window: u64,
}

impl TcpReceiver {
    /// A receiver; `sack` enables SACK blocks (at most `max_blocks`); its
    /// buffer is unbounded until [`Self::with_buffer`].
    pub fn new(sack: bool, max_blocks: u8, delayed_ack_ps: Time) -> Self {
        TcpReceiver {
            rcv_nxt: 0,
            ooo: Vec::new(),
            recent: Vec::new(),
            sack,
            max_blocks: max_blocks as usize,
            delayed_ack_ps,
            unacked_segments: 0,
            delack_deadline: None,
            bytes_delivered: 0,
            bytes_duplicate: 0,
            segments_received: 0,
            buffer: u64::MAX,
            scale: 0,
            full_field: u16::MAX,
            paused_at: None,
            bytes_beyond_window: 0,
        }
    }

    /// The receiver with a buffer of `bytes`, advertised in the 16-bit
    /// field at window-scale shift `scale`.
    pub fn with_buffer(mut self, bytes: u64, scale: u8) -> Self {
        self.buffer = bytes;
        self.scale = scale;
        self.full_field = (bytes >> scale).min(u16::MAX as u64) as u16;
        self
    }

    /// The window, bytes: the buffer space the application's unread bytes
    /// leave.
    pub fn window(&self) -> u64 {
        match self.paused_at {
            None => self.buffer,
            Some(at) => self.buffer.saturating_sub(self.rcv_nxt - at),
        }
    }

    /// The window field of the next ACK: min(65535, window >> scale).
    #[inline(always)]
    pub fn window_field(&self) -> u16 {
        if self.paused_at.is_some() {
            return self.partial_field();
        }
        self.full_field
    }

    #[cold]
    #[inline(never)]
    fn partial_field(&self) -> u16 {
        (self.window() >> self.scale).min(u16::MAX as u64) as u16
    }

    /// Test hook: the application stops reading; what arrives from now on
    /// fills the buffer and closes the window.
    #[cfg(test)]
    pub fn pause_reading(&mut self) {
        self.paused_at.get_or_insert(self.rcv_nxt);
    }

    /// Test hook: the application reads everything it left and reads at
    /// once again. No window update is sent (the next segment, a window
    /// probe, learns of it, as after a lost update).
    #[cfg(test)]
    pub fn resume_reading(&mut self) {
        self.paused_at = None;
    }

    /// Bytes held out of order (received, not yet deliverable).
    pub fn held_bytes(&self) -> u64 {
        self.ooo.iter().map(|&(a, b)| b - a).sum()
    }

    /// Bytes of [a, b) already received.
    fn already_have(&self, a: u64, b: u64) -> u64 {
        let mut have = self.rcv_nxt.min(b).saturating_sub(a);
        for &(x, y) in &self.ooo {
            let lo = x.max(a).max(self.rcv_nxt);
            let hi = y.min(b);
            have += hi.saturating_sub(lo);
        }
        have
    }

    /// Takes the data segment [seq, seq + len) at `now`.
    #[inline(always)]
    pub fn on_segment(&mut self, now: Time, seq: u64, len: u32) -> AckPlan {
        self.segments_received += 1;
        // Bytes beyond the window's right edge are dropped; with none left,
        // the segment (a window probe, or data sent into a window that
        // closed) is answered at once.
        let edge = self.rcv_nxt.saturating_add(self.window());
        let end = (seq + len as u64).min(edge.max(seq));
        if end < seq + len as u64 {
            self.bytes_beyond_window += seq + len as u64 - end;
            if end == seq {
                return self.ack_now();
            }
        }
        let dup = self.already_have(seq, end);
        self.bytes_duplicate += dup;
        let had_holes = !self.ooo.is_empty();
        let in_order = seq <= self.rcv_nxt && end > self.rcv_nxt;
        if in_order {
            self.rcv_nxt = end;
            // Pull in out-of-order ranges that now join.
            while let Some(&(a, b)) = self.ooo.first() {
                if a > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(b);
                self.ooo.remove(0);
            }
            let nxt = self.rcv_nxt;
            self.recent.retain(|&(_, b)| b > nxt);
            self.bytes_delivered = self.rcv_nxt;
        } else if seq > self.rcv_nxt {
            let merged = insert_range(&mut self.ooo, (seq, end));
            // The block holding this segment goes first; blocks it swallowed go.
            self.recent.retain(|&(a, b)| b < merged.0 || a > merged.1);
            self.recent.insert(0, merged);
        }
        let immediate = self.delayed_ack_ps == 0 || !in_order || had_holes || dup > 0;
        if immediate {
            return self.ack_now();
        }
        self.unacked_segments += 1;
        if self.unacked_segments >= 2 {
            return self.ack_now();
        }
        let deadline = *self
            .delack_deadline
            .get_or_insert(now + self.delayed_ack_ps);
        AckPlan::At(deadline)
    }

    fn ack_now(&mut self) -> AckPlan {
        self.unacked_segments = 0;
        self.delack_deadline = None;
        AckPlan::Now
    }

    /// The delayed-ACK timer fired at `now`: true if an ACK is due.
    pub fn on_delack_timer(&mut self, now: Time) -> bool {
        match self.delack_deadline {
            Some(d) if d <= now => {
                self.ack_now();
                true
            }
            _ => false,
        }
    }

    /// The SACK blocks to put in the next ACK.
    pub fn sack_blocks(&self) -> &[SackBlock] {
        if !self.sack {
            return &[];
        }
        &self.recent[..self.recent.len().min(self.max_blocks)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_out_of_order_and_duplicates() {
        let mut r = TcpReceiver::new(true, 3, 0);
        r.on_segment(0, 0, 100);
        assert_eq!(r.rcv_nxt, 100);
        // 200..300 and 400..500 arrive early.
        r.on_segment(0, 200, 100);
        r.on_segment(0, 400, 100);
        assert_eq!(r.rcv_nxt, 100);
        assert_eq!(r.held_bytes(), 200);
        assert_eq!(r.sack_blocks(), [(400, 500), (200, 300)]);
        // A duplicate of 200..300 is counted and that block goes first.
        r.on_segment(0, 200, 100);
        assert_eq!(r.bytes_duplicate, 100);
        assert_eq!(r.sack_blocks(), [(200, 300), (400, 500)]);
        // The hole fills: delivery jumps to 300.
        r.on_segment(0, 100, 100);
        assert_eq!(r.rcv_nxt, 300);
        assert_eq!(r.bytes_delivered, 300);
        assert_eq!(r.sack_blocks(), [(400, 500)]);
        // Go-back-N resends 300..500: 400..500 is a duplicate.
        r.on_segment(0, 300, 100);
        r.on_segment(0, 400, 100);
        assert_eq!(
            (r.rcv_nxt, r.bytes_duplicate, r.held_bytes()),
            (500, 200, 0)
        );
        // Old data entirely below rcv_nxt.
        r.on_segment(0, 0, 100);
        assert_eq!(r.bytes_duplicate, 300);
    }

    #[test]
    fn sack_off_sends_no_blocks() {
        let mut r = TcpReceiver::new(false, 3, 0);
        r.on_segment(0, 100, 100);
        assert!(r.sack_blocks().is_empty());
    }

    #[test]
    fn delayed_ack_every_second_segment_or_on_timer() {
        let mut r = TcpReceiver::new(false, 3, 200);
        assert_eq!(r.on_segment(10, 0, 100), AckPlan::At(210));
        assert_eq!(r.on_segment(20, 100, 100), AckPlan::Now);
        assert_eq!(r.on_segment(30, 200, 100), AckPlan::At(230));
        assert!(!r.on_delack_timer(229));
        assert!(r.on_delack_timer(230));
        // Out of order: at once.
        assert_eq!(r.on_segment(40, 400, 100), AckPlan::Now);
    }

    #[test]
    fn at_most_max_blocks() {
        let mut r = TcpReceiver::new(true, 3, 0);
        for k in 1..=5 {
            r.on_segment(0, k * 200, 100);
        }
        assert_eq!(r.sack_blocks(), [(1000, 1100), (800, 900), (600, 700)]);
    }

    #[test]
    fn the_window_is_the_buffer_the_application_leaves() {
        // A 4000-byte buffer at scale 0; the application reads at once: the
        // whole buffer is offered at every ACK.
        let mut r = TcpReceiver::new(false, 3, 0).with_buffer(4000, 0);
        r.on_segment(0, 0, 1000);
        assert_eq!((r.window(), r.window_field()), (4000, 4000));
        // It stops reading (a test hook): 1000 bytes more leave 3000.
        r.pause_reading();
        r.on_segment(0, 1000, 1000);
        assert_eq!((r.window(), r.window_field()), (3000, 3000));
        // At scale 5 the field is the window shifted, truncated: 4000 >> 5
        // = 125, then 3000 >> 5 = 93.
        let mut r = TcpReceiver::new(false, 3, 0).with_buffer(4000, 5);
        assert_eq!(r.window_field(), 125);
        r.pause_reading();
        r.on_segment(0, 0, 1000);
        assert_eq!(r.window_field(), 3000 >> 5);
        // A buffer above what the field holds advertises 65535.
        let r = TcpReceiver::new(false, 3, 0).with_buffer(1 << 20, 0);
        assert_eq!(r.window_field(), u16::MAX);
    }

    #[test]
    fn data_beyond_the_window_is_dropped_and_a_probe_is_answered_at_once() {
        // RFC 9293 section 3.10.7.4 (a segment not acceptable is answered
        // with an ACK) and 4.4BSD's tcp_input (bytes after the window are
        // trimmed; a segment wholly after it is dropped, then ACKed), with
        // delayed ACKs on so that "at once" shows.
        let mut r = TcpReceiver::new(false, 3, 200).with_buffer(2500, 0);
        r.pause_reading();
        assert_eq!(r.on_segment(10, 0, 1000), AckPlan::At(210));
        assert_eq!(r.on_segment(20, 1000, 1000), AckPlan::Now);
        // 500 bytes of window left: of a 1000-byte segment, 500 are taken,
        // 500 dropped; the right edge stays at 2500.
        assert_eq!(r.on_segment(30, 2000, 1000), AckPlan::At(230));
        assert_eq!((r.rcv_nxt, r.bytes_beyond_window), (2500, 500));
        assert_eq!((r.window(), r.window_field()), (0, 0));
        // A window probe (one byte at rcv_nxt) into the closed window: dropped,
        // answered at once (the ACK carries window 0).
        assert_eq!(r.on_segment(40, 2500, 1), AckPlan::Now);
        assert_eq!((r.rcv_nxt, r.bytes_beyond_window), (2500, 501));
        assert_eq!(r.bytes_delivered, 2500);
        assert_eq!(r.held_bytes(), 0);
        // The application reads again: the next probe is data like any
        // other, in order, and delivered.
        r.resume_reading();
        assert_eq!(r.window_field(), 2500);
        r.on_segment(50, 2500, 1);
        assert_eq!((r.rcv_nxt, r.bytes_beyond_window), (2501, 501));
    }
}
