//! atmsim-core: a cell-level discrete-event simulator of ATM networks.
//!
//! The core is a library: it takes a typed [`scenario::Scenario`], runs it and
//! returns a [`stats::Summary`] and a [`stats::Series`]. It never reads files
//! or prints; the Python layer (`python/atmsim`) owns everything a person
//! touches. See `docs/core-interface.md` for the contract.
//!
//! Modules, in layers: a module uses only modules of its own layer or of
//! the layers below, and no two modules use each other, directly or
//! through others (`tests/layering.rs` checks both on the source).
//!
//! 1. Foundation, knowing no model:
//!    - [`engine`]: simulated time, the event queue, RNG streams;
//!    - [`ids`]: the typed indices of VCs, flows and links (the
//!      scenario's and each fabric's);
//!    - [`param`]: how a model declares a parameter's range, read by the
//!      JSON Schema and by the check; the ranges every model shares.
//! 2. The domain models, each with its parameter types, their ranges,
//!    docs and checks (in the model's `params` module; TCP's in
//!    [`tcp::config`]):
//!    - [`cell`]: the ATM cell (below the ports and the drop policies that
//!      both read it);
//!    - [`buffer`]: drop policies at a port (tail, intelligent tail, PPD,
//!      EPD, Selective Drop, FBA, DFBA; RED's parameters);
//!    - [`atm`]: links, switch output ports, AAL5 reassembly, arbitration;
//!    - [`traffic`]: cell and frame sources (CBR, VBR, on/off, Poisson,
//!      greedy, frames);
//!    - [`gfr`]: the GFR contract and the frame-based GCRA;
//!    - [`abr`]: ABR end systems and switch algorithms (ERICA, ERICA+,
//!      EFCI, FMMRA);
//!    - [`ip`]: packets, router ports, RED, the explicit-rate control of
//!      TCP;
//!    - [`tcp`]: senders, receivers, congestion control, RTT estimation;
//!    - [`stats`]: counters, the conservation ledger, the summary, series.
//! 3. [`scenario`]: the typed model handed over by Python; assembles the
//!    models' parameters into a network and checks the whole.
//! 4. [`sim`]: builds the network from a scenario and runs it.
//!
//! `docs/model.md` ("Where things live") tells where a new model's code
//! and parameters go.
//!
//! Unsafe code is refused crate-wide; each of the few places that needs it
//! (unchecked indexing in the timing wheel's ring, a prefetch hint) allows it
//! locally, with a SAFETY comment saying why it is sound.

#![deny(unsafe_code)]

pub mod abr;
pub mod atm;
pub mod buffer;
pub mod cell;
pub mod engine;
pub mod gfr;
pub mod ids;
pub mod ip;
pub mod param;
pub mod scenario;
pub mod sim;
pub mod stats;
pub mod tcp;
pub mod traffic;

pub use scenario::Scenario;
pub use sim::Simulation;
