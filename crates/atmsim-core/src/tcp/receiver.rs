//! The TCP receiver: cumulative ACKs, out-of-order buffering, duplicate
//! counting, SACK blocks (RFC 2018) and delayed ACKs.
//!
//! The application reads every in-order byte at once, so the advertised
//! window is always the whole receiver buffer (out-of-order data sits in the
//! reassembly queue, as in BSD, and does not shrink it).

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
}

impl TcpReceiver {
    /// A receiver; `sack` enables SACK blocks (at most `max_blocks`).
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
        }
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
        let end = seq + len as u64;
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
}
