//! The ATM layer: links, switch output ports and AAL5 reassembly, and
//! their parameters ([`params`]). The cell itself is [`crate::cell`].
//!
//! Not here: drop decisions (see [`crate::buffer`]), traffic generation
//! (see [`crate::traffic`]) and the ABR feedback loop (see [`crate::abr`]).

pub mod aal5;
pub mod link;
pub mod params;
pub mod port;

pub use aal5::{cells_per_datagram, Reassembly};
// The cell lies below this module (the drop policies in `crate::buffer`,
// which the ports here use, read it too); `atm::cell` keeps naming it.
pub use crate::cell;
pub use crate::cell::{Cell, ServiceClass, CELL_BITS};
pub use link::{slot_arrival, Lane, Link, SlotClock};
pub use params::Arbitration;
pub use port::{AtmPort, FifoPort, PortCore, PriorityPort};
