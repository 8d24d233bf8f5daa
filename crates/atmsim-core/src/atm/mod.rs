//! The ATM layer: cells, links, switch output ports and AAL5 reassembly.
//!
//! Not here: drop decisions (see [`crate::buffer`]), traffic generation
//! (see [`crate::traffic`]) and the ABR feedback loop (see [`crate::abr`]).

pub mod aal5;
pub mod cell;
pub mod link;
pub mod port;

pub use aal5::{cells_per_datagram, Reassembly};
pub use cell::{Cell, ServiceClass, CELL_BITS};
pub use link::{slot_arrival, Lane, Link, SlotClock};
pub use port::{Port, PortMode};
