//! NewReno (RFC 6582): like Reno, but a partial ACK (one that does not
//! cover `recover`, the highest byte sent when recovery began) retransmits
//! the next unacknowledged segment, deflates cwnd by the amount acknowledged
//! and adds back one MSS, and keeps recovery going; the retransmission timer
//! is restarted on the first partial ACK only (RFC 6582 "impatient", as
//! ns-2), so a window with many losses ends in a timeout instead of one
//! retransmission per round trip. A full ACK sets cwnd = ssthresh and ends
//! recovery.

use super::reno::FastRecovery;
use super::CongestionControl;
use crate::ip::SackBlock;
use crate::tcp::sender::SenderState;

/// NewReno.
#[derive(Default)]
pub struct NewReno {
    fr: FastRecovery,
    partial_seen: bool,
}

impl CongestionControl for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }

    fn on_new_ack(&mut self, s: &mut SenderState, acked: u64, _sack: &[SackBlock]) {
        if !self.fr.in_recovery {
            s.grow();
        } else if s.snd_una >= s.recover {
            self.fr.in_recovery = false;
            s.cwnd = s.ssthresh;
        } else {
            // Partial ACK.
            s.retransmit_now = Some(s.snd_una);
            let mss = s.mss as f64;
            s.cwnd = (s.cwnd - acked as f64).max(0.0) + if acked >= s.mss { mss } else { 0.0 };
            s.cwnd = s.cwnd.max(mss);
            if std::mem::replace(&mut self.partial_seen, true) {
                s.keep_timer = true;
            }
        }
    }

    fn on_dupack(&mut self, s: &mut SenderState, _sack: &[SackBlock]) {
        if self.fr.on_dupack(s) {
            self.partial_seen = false;
        }
    }

    fn on_timeout(&mut self, _s: &mut SenderState) {
        self.fr.in_recovery = false;
    }

    fn in_recovery(&self) -> bool {
        self.fr.in_recovery
    }

    fn base_cwnd(&self, s: &SenderState) -> f64 {
        self.fr.base_cwnd(s)
    }
}

#[cfg(test)]
mod tests {
    use crate::tcp::config::{TcpConfig, Variant};
    use crate::tcp::sender::testing::Script;
    use crate::tcp::sender::Segment;

    #[test]
    fn partial_acks_retransmit_and_stay_in_recovery() {
        let mut sc = Script::new(TcpConfig::example(Variant::Newreno));
        sc.open_to(16);
        let cwnd = sc.cwnd_segments();
        let una = sc.tx.s.snd_una;
        let recover = sc.tx.s.snd_max;
        for _ in 0..3 {
            sc.ack(una);
        }
        assert_eq!(sc.tx.s.recover, recover);
        let inflated = sc.cwnd_segments();
        assert_eq!(inflated, cwnd / 2.0 + 3.0);
        // Partial ACK of 2 segments: the next hole is retransmitted at once,
        // cwnd deflates by 2 and regains 1.
        let out = sc.ack(una + 1024);
        assert_eq!(
            out.first(),
            Some(&Segment {
                seq: una + 1024,
                len: 512
            })
        );
        assert!(sc.tx.in_recovery());
        assert_eq!(sc.cwnd_segments(), inflated - 2.0 + 1.0);
        // The full ACK ends recovery with cwnd = ssthresh.
        sc.ack(recover);
        assert!(!sc.tx.in_recovery());
        assert_eq!(sc.cwnd_segments(), cwnd / 2.0);
        assert_eq!(sc.tx.s.fast_retransmits, 1);
    }

    #[test]
    fn only_the_first_partial_ack_restarts_the_timer() {
        // Regression (ns-2 validation D4): with many losses in one window,
        // later partial ACKs leave the timer running so that a timeout ends
        // a recovery that would resend one segment per round trip.
        let mut sc = Script::new(TcpConfig::example(Variant::Newreno));
        sc.open_to(16);
        let una = sc.tx.s.snd_una;
        for _ in 0..3 {
            sc.ack(una);
        }
        sc.ack(una + 512); // first partial: restarts
        let full = sc.tx.ticks_left().unwrap();
        assert!(full >= 2);
        sc.tx.on_tick(0);
        sc.ack(una + 1024); // second partial: keeps counting down
        assert_eq!(sc.tx.ticks_left(), Some(full - 1));
        assert!(sc.tx.in_recovery());
    }
}
