//! Tahoe without fast retransmit: duplicate ACKs are ignored; only the
//! retransmission timeout recovers a loss, with go-back-N from snd_una (TCP
//! over ABR (Kalyanaraman et al., 1996) section 2, ABR and UBR buffering
//! (Kalyanaraman et al., 1998) and TCP over FMMRA (An et al., 1998)).

use super::CongestionControl;
use crate::ip::SackBlock;
use crate::tcp::sender::SenderState;

/// Tahoe without fast retransmit.
pub struct TahoeNoFr;

impl CongestionControl for TahoeNoFr {
    fn name(&self) -> &'static str {
        "tahoe-nofr"
    }

    fn on_dupack(&mut self, _s: &mut SenderState, _sack: &[SackBlock]) {}
}

#[cfg(test)]
mod tests {
    use crate::tcp::config::{TcpConfig, Variant};
    use crate::tcp::sender::testing::Script;

    #[test]
    fn three_dupacks_change_nothing() {
        let mut sc = Script::new(TcpConfig::example(Variant::TahoeNofr));
        sc.open_to(8);
        let (cwnd, ssthresh) = (sc.cwnd_segments(), sc.ssthresh_segments());
        let una = sc.tx.s.snd_una;
        for _ in 0..5 {
            assert!(sc.ack(una).is_empty());
        }
        assert_eq!(
            (sc.cwnd_segments(), sc.ssthresh_segments()),
            (cwnd, ssthresh)
        );
        assert_eq!(sc.tx.s.fast_retransmits, 0);
    }
}
