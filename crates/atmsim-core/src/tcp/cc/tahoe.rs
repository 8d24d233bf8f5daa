//! Tahoe (4.3BSD-Tahoe, as ns-2's Agent/TCP): on the third duplicate ACK,
//! ssthresh = half the window, cwnd = 1 MSS, and slow start again from the
//! lost segment (go-back-N), as after a timeout but without waiting for it.

use super::CongestionControl;
use crate::ip::SackBlock;
use crate::tcp::sender::SenderState;

/// Tahoe with fast retransmit.
pub struct Tahoe;

impl CongestionControl for Tahoe {
    fn name(&self) -> &'static str {
        "tahoe"
    }

    fn on_dupack(&mut self, s: &mut SenderState, _sack: &[SackBlock]) {
        if s.dupacks == 3 && s.may_fast_retransmit() {
            s.begin_fast_retransmit();
            s.cwnd = s.mss as f64;
            s.snd_nxt = s.snd_una;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::tcp::config::{TcpConfig, Variant};
    use crate::tcp::sender::testing::Script;
    use crate::tcp::sender::Segment;

    #[test]
    fn third_dupack_retransmits_and_restarts_slow_start() {
        let mut sc = Script::new(TcpConfig::example(Variant::Tahoe));
        sc.open_to(16);
        let cwnd = sc.cwnd_segments();
        let una = sc.tx.s.snd_una;
        assert!(sc.ack(una).is_empty());
        assert!(sc.ack(una).is_empty());
        let out = sc.ack(una);
        assert_eq!(out, vec![Segment { seq: una, len: 512 }]);
        assert_eq!(sc.cwnd_segments(), 1.0);
        assert_eq!(sc.ssthresh_segments(), cwnd / 2.0);
        assert_eq!(sc.tx.s.fast_retransmits, 1);
        // More duplicates do nothing; the ACK of the retransmission grows
        // cwnd to 2 and sends the next two segments (go-back-N).
        assert!(sc.ack(una).is_empty());
        let out = sc.ack(una + 512);
        assert_eq!(sc.cwnd_segments(), 2.0);
        assert_eq!(
            out.iter().map(|s| s.seq).collect::<Vec<_>>(),
            vec![una + 512, una + 1024]
        );
        assert_eq!(sc.tx.bytes_retransmitted, 3 * 512);
    }

    #[test]
    fn duplicates_at_recover_do_not_fast_retransmit_again() {
        // Regression (ns-2 validation D2): after a fast retransmit, ACKs equal
        // to `recover` (duplicates caused by resent old data) must not start
        // another one; only ACKs beyond it re-arm fast retransmit.
        let mut sc = Script::new(TcpConfig::example(Variant::Tahoe));
        sc.open_to(16);
        let una = sc.tx.s.snd_una;
        for _ in 0..3 {
            sc.ack(una);
        }
        let recover = sc.tx.s.recover;
        sc.ack(recover);
        for _ in 0..3 {
            sc.ack(recover);
        }
        assert_eq!(sc.tx.s.fast_retransmits, 1);
        let next = sc.tx.s.snd_max;
        sc.ack(next);
        for _ in 0..3 {
            sc.ack(next);
        }
        assert_eq!(sc.tx.s.fast_retransmits, 2);
    }
}
