//! TCP (TCP over ABR (Kalyanaraman et al., 1996) section 2; RFC 793, 5681,
//! 6582, 2018): the sender with its congestion-control variants, the receiver,
//! and the RTT/RTO estimator.
//!
//! The sender and receiver are plain state machines with no knowledge of the
//! network: [`crate::sim`] hands them ACKs, segments and timer ticks and
//! sends what they produce. That keeps every rule testable with small
//! scripted exchanges.
//!
//! Modelled: byte sequence numbers, MSS, receiver window with window
//! scaling, slow start and congestion avoidance, Tahoe without fast
//! retransmit (the papers' default), Tahoe, Reno, NewReno and SACK (Fall &
//! Floyd's pipe), Jacobson/Karels RTO on a coarse global tick (BSD) or in
//! exact time, Karn's rule and back-off, the persist timer with window
//! probes and the sender's silly-window-syndrome avoidance (RFC 9293, RFC
//! 1122, as 4.4BSD), the receiver's window as the buffer its application
//! leaves, delayed ACKs, out-of-order buffering, SACK blocks. Not
//! modelled: connection set-up and tear-down (a connection starts
//! established, with the window-scale option agreed), the Nagle algorithm
//! (the applications always have full segments), timestamps, ECN.

pub mod cc;
pub mod config;
pub mod receiver;
pub mod rtt;
pub mod sender;

pub use config::{RttArithmetic, TcpConfig, TimerMode, Variant};

use crate::ip::SackBlock;

/// Inserts [a, b) into sorted, disjoint byte ranges, merging it with those
/// it touches; returns the merged range. (The SACK scoreboard and the
/// receiver's out-of-order queue.)
pub(crate) fn insert_range(list: &mut Vec<SackBlock>, (a, b): SackBlock) -> SackBlock {
    let mut lo = a;
    let mut hi = b;
    list.retain(|&(x, y)| {
        if y < lo || x > hi {
            true
        } else {
            lo = lo.min(x);
            hi = hi.max(y);
            false
        }
    });
    let pos = list.partition_point(|&(x, _)| x < lo);
    list.insert(pos, (lo, hi));
    (lo, hi)
}
pub use receiver::TcpReceiver;
pub use sender::{SenderState, TcpSender};
