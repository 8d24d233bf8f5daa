//! TCP (SPEC section 2): the sender with its congestion-control variants,
//! the receiver, and the RTT/RTO estimator.
//!
//! The sender and receiver are plain state machines with no knowledge of the
//! network: [`crate::sim`] hands them ACKs, segments and timer ticks and
//! sends what they produce. That keeps every rule testable with small
//! scripted exchanges.
//!
//! Modelled: byte sequence numbers, MSS, receiver window with window
//! scaling, slow start and congestion avoidance, Tahoe without fast
//! retransmit (the seeds' default), Tahoe, Reno, NewReno and SACK (Fall &
//! Floyd's pipe), Jacobson/Karels RTO on a coarse global tick (BSD) or in
//! exact time, Karn's rule and back-off, delayed ACKs, out-of-order
//! buffering, SACK blocks. Not modelled: connection set-up and tear-down
//! (a connection starts established, with the window-scale option agreed),
//! the Nagle algorithm (the applications always have full segments),
//! timestamps, ECN.

pub mod cc;
pub mod config;
pub mod receiver;
pub mod rtt;
pub mod sender;

pub use config::{TcpConfig, TimerMode, Variant};
pub use receiver::TcpReceiver;
pub use sender::{SenderState, TcpSender};
