//! SACK (RFC 2018 blocks) with Fall & Floyd's "pipe" recovery, as ns-2's
//! Sack1. On the third duplicate ACK: ssthresh = cwnd = half the window,
//! the first unacknowledged segment is retransmitted, and `pipe` estimates
//! the bytes in flight as (snd_max - snd_una) - 3 MSS. Each further duplicate
//! takes one MSS off pipe, a partial ACK two; whenever pipe < cwnd the sender
//! retransmits the next hole the scoreboard shows (bytes below the highest
//! SACKed byte that nobody SACKed and that were not yet retransmitted), or
//! else sends new data, adding the segment to pipe. An ACK at or above
//! `recover` ends recovery with cwnd = ssthresh. A timeout clears the
//! scoreboard.

use super::{CongestionControl, SendChoice};
use crate::ip::SackBlock;
use crate::tcp::insert_range;
use crate::tcp::sender::{Segment, SenderState};

/// SACK sender state.
#[derive(Default)]
pub struct Sack {
    in_recovery: bool,
    /// Estimated bytes in the network during recovery.
    pipe: f64,
    /// One past the highest byte retransmitted in this recovery.
    high_rxt: u64,
    /// SACKed ranges above snd_una, sorted and disjoint.
    scoreboard: Vec<SackBlock>,
    /// The fast retransmission itself is not added to pipe (ns-2's Sack1).
    skip_next_send: bool,
}

impl Sack {
    fn update_scoreboard(&mut self, snd_una: u64, sack: &[SackBlock]) {
        for &(a, b) in sack {
            if b <= a || b <= snd_una {
                continue;
            }
            insert_range(&mut self.scoreboard, (a.max(snd_una), b));
        }
        self.scoreboard.retain(|&(_, b)| b > snd_una);
        if let Some(first) = self.scoreboard.first_mut() {
            first.0 = first.0.max(snd_una);
        }
    }

    /// The next hole to retransmit: the first byte at or above
    /// max(snd_una, high_rxt), below the highest SACKed byte, not SACKed.
    fn next_hole(&self, s: &SenderState) -> Option<Segment> {
        let top = self.scoreboard.last()?.1;
        let mut seq = s.snd_una.max(self.high_rxt);
        for &(a, b) in &self.scoreboard {
            if seq < a {
                let len = (a - seq).min(s.mss);
                return Some(Segment {
                    seq,
                    len: len as u32,
                });
            }
            seq = seq.max(b);
        }
        debug_assert!(seq >= top);
        None
    }

    /// Bytes SACKed above snd_una.
    pub fn sacked_bytes(&self) -> u64 {
        self.scoreboard.iter().map(|&(a, b)| b - a).sum()
    }
}

impl CongestionControl for Sack {
    fn name(&self) -> &'static str {
        "sack"
    }

    fn on_new_ack(&mut self, s: &mut SenderState, _acked: u64, sack: &[SackBlock]) {
        self.update_scoreboard(s.snd_una, sack);
        if !self.in_recovery {
            s.grow();
        } else if s.snd_una >= s.recover {
            self.in_recovery = false;
            s.cwnd = s.ssthresh;
            self.pipe = 0.0;
        } else {
            // Partial ACK: the original and its retransmission have left.
            self.pipe -= 2.0 * s.mss as f64;
            s.restart_timer = true;
        }
    }

    fn on_dupack(&mut self, s: &mut SenderState, sack: &[SackBlock]) {
        let before = self.sacked_bytes();
        self.update_scoreboard(s.snd_una, sack);
        if !self.in_recovery && self.sacked_bytes() == before {
            // A duplicate that SACKs nothing new does not count (ns-2's
            // Sack1): it is no evidence that another segment left the network.
            s.dupacks -= 1;
            return;
        }
        if self.in_recovery {
            self.pipe -= s.mss as f64;
        } else if s.dupacks == 3 && s.may_fast_retransmit() {
            s.begin_fast_retransmit();
            s.cwnd = s.ssthresh;
            self.in_recovery = true;
            self.pipe = s.flight() as f64 - 3.0 * s.mss as f64;
            self.high_rxt = s.snd_una + s.mss;
            s.retransmit_now = Some(s.snd_una);
            self.skip_next_send = true;
        }
    }

    fn on_old_ack(&mut self, s: &mut SenderState, sack: &[SackBlock]) {
        self.update_scoreboard(s.snd_una, sack);
    }

    fn on_timeout(&mut self, _s: &mut SenderState) {
        self.in_recovery = false;
        self.pipe = 0.0;
        self.high_rxt = 0;
        self.scoreboard.clear();
    }

    fn choose(&mut self, s: &SenderState) -> SendChoice {
        if !self.in_recovery {
            return SendChoice::Normal;
        }
        if self.pipe >= s.cwnd {
            return SendChoice::Nothing;
        }
        if let Some(hole) = self.next_hole(s) {
            return SendChoice::Segment(hole);
        }
        // New data, within the receiver's window.
        let seq = s.snd_nxt.max(s.snd_max);
        if seq + s.mss > s.snd_una + s.rwnd {
            return SendChoice::Nothing;
        }
        SendChoice::Segment(Segment {
            seq,
            len: s.mss as u32,
        })
    }

    fn on_send(&mut self, s: &SenderState, seg: Segment) {
        if std::mem::take(&mut self.skip_next_send) {
            return;
        }
        if self.in_recovery {
            self.pipe += seg.len as f64;
            if seg.seq < s.recover {
                self.high_rxt = self.high_rxt.max(seg.seq + seg.len as u64);
            }
        }
    }

    fn in_recovery(&self) -> bool {
        self.in_recovery
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::config::{TcpConfig, Variant};
    use crate::tcp::sender::testing::Script;

    #[test]
    fn ranges_merge() {
        let mut l = vec![];
        insert_range(&mut l, (10, 20));
        insert_range(&mut l, (30, 40));
        insert_range(&mut l, (20, 30));
        assert_eq!(l, vec![(10, 40)]);
        insert_range(&mut l, (50, 60));
        insert_range(&mut l, (0, 5));
        assert_eq!(l, vec![(0, 5), (10, 40), (50, 60)]);
    }

    #[test]
    fn recovery_retransmits_only_the_holes() {
        // 16 segments in flight; segments 0 and 2 are lost. The receiver
        // SACKs 1 and 3.. as they arrive.
        let mut sc = Script::new(TcpConfig::example(Variant::Sack));
        sc.open_to(16);
        let una = sc.tx.s.snd_una;
        let m = 512u64;
        let cwnd = sc.cwnd_segments();
        let max = sc.tx.s.snd_max;
        sc.ack_sack(una, &[(una + m, una + 2 * m)]);
        sc.ack_sack(una, &[(una + 3 * m, una + 4 * m), (una + m, una + 2 * m)]);
        let out = sc.ack_sack(una, &[(una + 3 * m, una + 5 * m), (una + m, una + 2 * m)]);
        // Third duplicate: fast retransmit of segment 0; cwnd = ssthresh = cwnd/2.
        assert_eq!(out[0], Segment { seq: una, len: 512 });
        assert!(sc.tx.in_recovery());
        assert_eq!(sc.cwnd_segments(), cwnd / 2.0);
        assert_eq!(sc.ssthresh_segments(), cwnd / 2.0);
        // Further duplicates shrink pipe until the hole at segment 2 goes,
        // and never resend SACKed segments 1, 3, 4.
        let mut sent = vec![];
        for k in 5..16 {
            sent.extend(sc.ack_sack(una, &[(una + 3 * m, una + k * m), (una + m, una + 2 * m)]));
        }
        assert_eq!(
            sent.first(),
            Some(&Segment {
                seq: una + 2 * m,
                len: 512
            })
        );
        assert!(
            sent.iter().all(|s| s.seq == una + 2 * m || s.seq >= max),
            "{sent:?}"
        );
        // The ACK covering everything sent before recovery ends it.
        sc.ack(max);
        assert!(!sc.tx.in_recovery());
        assert_eq!(sc.cwnd_segments(), cwnd / 2.0);
        assert_eq!(sc.tx.bytes_retransmitted, 2 * m);
    }

    #[test]
    fn timeout_clears_the_scoreboard() {
        let mut sc = Script::new(TcpConfig::example(Variant::Sack));
        sc.open_to(8);
        let una = sc.tx.s.snd_una;
        sc.ack_sack(una, &[(una + 512, una + 1024)]);
        sc.tx.timeout(sc.now);
        assert!(!sc.tx.in_recovery());
        // Go-back-N from snd_una with cwnd 1.
        assert_eq!(sc.send(), vec![Segment { seq: una, len: 512 }]);
    }

    #[test]
    fn duplicates_without_new_sack_information_do_not_count() {
        // Regression (ns-2 validation D5): only duplicates that SACK new data
        // are evidence of a loss; three bare duplicates start nothing.
        let mut sc = Script::new(TcpConfig::example(Variant::Sack));
        sc.open_to(16);
        let una = sc.tx.s.snd_una;
        let block = [(una + 512, una + 1024)];
        for _ in 0..5 {
            sc.ack_sack(una, &block);
        }
        assert_eq!(sc.tx.s.fast_retransmits, 0);
        assert_eq!(sc.tx.s.dupacks, 1);
        sc.ack_sack(una, &[(una + 512, una + 1536)]);
        let out = sc.ack_sack(una, &[(una + 512, una + 2048)]);
        assert_eq!(sc.tx.s.fast_retransmits, 1);
        assert_eq!(out[0], Segment { seq: una, len: 512 });
    }
}
