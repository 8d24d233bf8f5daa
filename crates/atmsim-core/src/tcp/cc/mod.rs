//! Congestion-control variants, one per file, behind one trait. The shared
//! sender ([`super::sender`]) handles new ACKs' bookkeeping, timeouts and the
//! timer; a variant decides what duplicate and partial ACKs do, how the
//! window grows on a new ACK, and (SACK) what to send during recovery.

pub mod newreno;
pub mod reno;
pub mod sack;
pub mod tahoe;
pub mod tahoe_nofr;

use super::config::Variant;
use super::sender::{Segment, SenderState};
use crate::ip::SackBlock;

/// A variant's choice of what to send next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendChoice {
    /// The shared rule: new data (or go-back-N) within min(cwnd, rwnd).
    Normal,
    /// This segment.
    Segment(Segment),
    /// Nothing now.
    Nothing,
}

/// What distinguishes one TCP variant from another.
pub trait CongestionControl: Send + Sync {
    /// Name as written in scenarios.
    fn name(&self) -> &'static str;

    /// A new cumulative ACK acknowledged `acked` bytes (snd_una has moved).
    /// Default: grow the window.
    fn on_new_ack(&mut self, s: &mut SenderState, _acked: u64, _sack: &[SackBlock]) {
        s.grow();
    }

    /// A duplicate ACK arrived; `s.dupacks` counts it.
    fn on_dupack(&mut self, s: &mut SenderState, sack: &[SackBlock]);

    /// An ACK below snd_una (reordered, stale): only SACK information matters.
    fn on_old_ack(&mut self, _s: &mut SenderState, _sack: &[SackBlock]) {}

    /// After the shared timeout reaction: leave recovery, forget state.
    fn on_timeout(&mut self, _s: &mut SenderState) {}

    /// What to send next.
    fn choose(&mut self, _s: &SenderState) -> SendChoice {
        SendChoice::Normal
    }

    /// A segment was transmitted.
    fn on_send(&mut self, _s: &SenderState, _seg: Segment) {}

    /// True while in fast recovery.
    fn in_recovery(&self) -> bool {
        false
    }

    /// The congestion window without fast recovery's inflation.
    fn base_cwnd(&self, s: &SenderState) -> f64 {
        s.cwnd
    }
}

/// One of the variants, dispatched statically: the sender calls its
/// variant a few times per ACK, and a `match` the compiler can inline costs
/// less than a virtual call (docs/performance.md).
pub enum Cc {
    /// `tahoe-nofr`.
    TahoeNofr(tahoe_nofr::TahoeNoFr),
    /// `tahoe`.
    Tahoe(tahoe::Tahoe),
    /// `reno`.
    Reno(reno::Reno),
    /// `newreno`.
    NewReno(newreno::NewReno),
    /// `sack`.
    Sack(sack::Sack),
}

/// Calls `$call` on the variant inside `$cc`.
macro_rules! dispatch {
    ($cc:expr, $v:ident => $call:expr) => {
        match $cc {
            Cc::TahoeNofr($v) => $call,
            Cc::Tahoe($v) => $call,
            Cc::Reno($v) => $call,
            Cc::NewReno($v) => $call,
            Cc::Sack($v) => $call,
        }
    };
}

impl CongestionControl for Cc {
    fn name(&self) -> &'static str {
        dispatch!(self, c => c.name())
    }
    #[inline]
    fn on_new_ack(&mut self, s: &mut SenderState, acked: u64, sack: &[SackBlock]) {
        dispatch!(self, c => c.on_new_ack(s, acked, sack))
    }
    fn on_dupack(&mut self, s: &mut SenderState, sack: &[SackBlock]) {
        dispatch!(self, c => c.on_dupack(s, sack))
    }
    fn on_old_ack(&mut self, s: &mut SenderState, sack: &[SackBlock]) {
        dispatch!(self, c => c.on_old_ack(s, sack))
    }
    fn on_timeout(&mut self, s: &mut SenderState) {
        dispatch!(self, c => c.on_timeout(s))
    }
    #[inline]
    fn choose(&mut self, s: &SenderState) -> SendChoice {
        dispatch!(self, c => c.choose(s))
    }
    #[inline]
    fn on_send(&mut self, s: &SenderState, seg: Segment) {
        dispatch!(self, c => c.on_send(s, seg))
    }
    fn in_recovery(&self) -> bool {
        dispatch!(self, c => c.in_recovery())
    }
    fn base_cwnd(&self, s: &SenderState) -> f64 {
        dispatch!(self, c => c.base_cwnd(s))
    }
}

/// The variant a scenario names.
pub fn build(v: Variant) -> Cc {
    match v {
        Variant::TahoeNofr => Cc::TahoeNofr(tahoe_nofr::TahoeNoFr),
        Variant::Tahoe => Cc::Tahoe(tahoe::Tahoe),
        Variant::Reno => Cc::Reno(reno::Reno::default()),
        Variant::Newreno => Cc::NewReno(newreno::NewReno::default()),
        Variant::Sack => Cc::Sack(sack::Sack::default()),
    }
}
