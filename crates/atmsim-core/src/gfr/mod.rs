//! The Guaranteed Frame Rate service's conformance definition: the
//! frame-based GCRA (F-GCRA) that decides, at a VC's first switch, which
//! frames are eligible for the MCR guarantee, and the tagging (CLP = 1) of
//! those that are not (ATM Forum Traffic Management Specification 4.1,
//! GFR), and the VC's contract ([`params`]).
//!
//! Not here: the buffer policies that act on the tags (see
//! [`crate::buffer::dfba`]) and the MCR weights they use.

pub mod fgcra;
pub mod params;

pub use fgcra::Fgcra;
pub use params::GfrParams;
