//! The IP layer: packets (a TCP segment with its IP header), the TCP
//! checksum and its incremental update, and router output ports with FIFO
//! queues (tail drop or RED) feeding packet links.
//!
//! Not here: the rate-to-window translation and the ack bucket of seed 001
//! (not modelled yet), and IP fragmentation (the seeds never fragment).

pub mod checksum;
pub mod packet;
pub mod port;
pub mod red;

pub use packet::{Packet, SackBlock, SackRing};
pub use port::{IpLimit, IpPort};
