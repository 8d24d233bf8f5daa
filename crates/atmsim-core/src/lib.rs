//! atmsim-core: a cell-level discrete-event simulator of ATM networks.
//!
//! The core is a library: it takes a typed [`scenario::Scenario`], runs it and
//! returns a [`stats::Summary`] and a [`stats::Series`]. It never reads files
//! or prints; the Python layer (`python/atmsim`) owns everything a person
//! touches. See `docs/core-interface.md` for the contract.
//!
//! Modules:
//! - [`engine`]: simulated time, the event queue, RNG streams.
//! - [`atm`]: cells, links, switch output ports, AAL5 reassembly.
//! - [`buffer`]: drop policies at a port (tail, intelligent tail, PPD, EPD).
//! - [`traffic`]: cell and frame sources (CBR, VBR, on/off, Poisson, greedy).
//! - [`stats`]: counters, probes, the conservation ledger, the summary.
//! - [`scenario`]: the typed model handed over by Python.
//! - [`sim`]: the network and its run loop.
//!
//! Unsafe code is refused crate-wide; each of the few places that needs it
//! (unchecked indexing in the timing wheel's ring, a prefetch hint) allows it
//! locally, with a SAFETY comment saying why it is sound.

#![deny(unsafe_code)]

pub mod abr;
pub mod atm;
pub mod buffer;
pub mod engine;
pub mod gfr;
pub mod ip;
pub mod scenario;
pub mod sim;
pub mod stats;
pub mod tcp;
pub mod traffic;

pub use scenario::Scenario;
pub use sim::Simulation;
