//! The IP layer: packets (a TCP segment with its IP header), the TCP
//! checksum and its incremental update, router output ports with FIFO
//! queues (tail drop or RED) feeding packet links, and a packet's headers
//! as on the wire, for captures ([`wire`]).
//!
//! Also the explicit-rate control of TCP at a router port (Explicit rate
//! control of TCP, Satyavolu et al., 1998): the rates ([`rate_control`]) and
//! the ack bucket ([`ack_bucket`]); the translation of a rate into the window
//! of passing ACKs is [`rate_control::limit_window`]
//! ([`Packet::rewrite_window`] with the checksum updated incrementally), shared
//! with the ATM edges; [`params`] declares their parameters. Not here: IP
//! fragmentation (the papers never fragment).

pub mod ack_bucket;
pub mod checksum;
pub mod packet;
pub mod params;
pub mod port;
pub mod rate_control;
pub mod red;
pub mod wire;

pub use packet::{Packet, SackBlock, SackRing};
pub use params::{AckControlSpec, RateControlSpec, WindowRule};
pub use port::{IpLimit, IpPort};
