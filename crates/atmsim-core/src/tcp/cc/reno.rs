//! Reno: fast retransmit and fast recovery (RFC 5681). On the third
//! duplicate ACK: ssthresh = half the window, retransmit the lost segment,
//! cwnd = ssthresh + 3 MSS; each further duplicate inflates cwnd by 1 MSS;
//! the first new ACK (full or partial) deflates cwnd to ssthresh and ends
//! recovery.

use super::CongestionControl;
use crate::ip::SackBlock;
use crate::tcp::sender::SenderState;

/// Reno.
#[derive(Default)]
pub struct Reno {
    fr: FastRecovery,
}

/// Fast recovery as Reno and NewReno share it.
#[derive(Default)]
pub(crate) struct FastRecovery {
    /// True between the fast retransmit and the ACK that ends recovery.
    pub in_recovery: bool,
}

impl FastRecovery {
    /// A duplicate ACK: in recovery, inflate cwnd by one MSS; otherwise, on
    /// the third, retransmit, set cwnd = ssthresh + 3 MSS and enter
    /// recovery. Returns true when recovery starts.
    pub fn on_dupack(&mut self, s: &mut SenderState) -> bool {
        if self.in_recovery {
            s.cwnd += s.mss as f64;
            return false;
        }
        if s.dupacks == 3 && s.may_fast_retransmit() {
            s.begin_fast_retransmit();
            s.retransmit_now = Some(s.snd_una);
            s.cwnd = s.ssthresh + 3.0 * s.mss as f64;
            self.in_recovery = true;
            return true;
        }
        false
    }

    /// The window without the inflation: ssthresh while in recovery.
    pub fn base_cwnd(&self, s: &SenderState) -> f64 {
        if self.in_recovery {
            s.ssthresh
        } else {
            s.cwnd
        }
    }
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    fn on_new_ack(&mut self, s: &mut SenderState, _acked: u64, _sack: &[SackBlock]) {
        if self.fr.in_recovery {
            self.fr.in_recovery = false;
            s.cwnd = s.ssthresh;
        } else {
            s.grow();
        }
    }

    fn on_dupack(&mut self, s: &mut SenderState, _sack: &[SackBlock]) {
        self.fr.on_dupack(s);
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
    fn fast_recovery_inflates_then_deflates() {
        let mut sc = Script::new(TcpConfig::example(Variant::Reno));
        sc.open_to(16);
        let cwnd = sc.cwnd_segments();
        let una = sc.tx.s.snd_una;
        let max = sc.tx.s.snd_max;
        sc.ack(una);
        sc.ack(una);
        let out = sc.ack(una);
        assert_eq!(out, vec![Segment { seq: una, len: 512 }]);
        assert!(sc.tx.in_recovery());
        assert_eq!(sc.ssthresh_segments(), cwnd / 2.0);
        assert_eq!(sc.cwnd_segments(), cwnd / 2.0 + 3.0);
        // Each further duplicate adds one segment; once cwnd exceeds the
        // flight, new data goes out.
        let mut new_data = 0;
        for k in 1..=12 {
            new_data += sc.ack(una).len();
            assert_eq!(sc.cwnd_segments(), cwnd / 2.0 + 3.0 + k as f64);
        }
        assert!(new_data > 0);
        assert!(sc.tx.s.snd_max > max);
        // A partial ACK ends Reno's recovery: cwnd = ssthresh.
        sc.ack(una + 512);
        assert!(!sc.tx.in_recovery());
        assert_eq!(sc.cwnd_segments(), cwnd / 2.0);
    }

    #[test]
    fn no_second_fast_retransmit_in_the_same_window() {
        let mut sc = Script::new(TcpConfig::example(Variant::Reno));
        sc.open_to(16);
        let una = sc.tx.s.snd_una;
        for _ in 0..3 {
            sc.ack(una);
        }
        sc.ack(una + 512); // partial: leaves recovery
        for _ in 0..3 {
            sc.ack(una + 512);
        }
        assert_eq!(sc.tx.s.fast_retransmits, 1);
    }

    #[test]
    fn timeout_in_recovery_halves_the_window_before_inflation() {
        // Regression (ns-2 validation D3): cwnd is inflated by duplicates in
        // recovery; a timeout must halve the window in use, not the inflation.
        let mut sc = Script::new(TcpConfig::example(Variant::Reno));
        sc.open_to(16);
        let una = sc.tx.s.snd_una;
        for _ in 0..13 {
            sc.ack(una);
        }
        let ssthresh = sc.tx.s.ssthresh;
        assert!(sc.tx.s.cwnd > 2.0 * ssthresh);
        sc.tx.timeout(sc.now);
        assert_eq!(sc.tx.s.ssthresh, ssthresh / 2.0);
        assert!(!sc.tx.in_recovery());
    }
}
