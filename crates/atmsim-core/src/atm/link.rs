//! A unidirectional link: bit rate, propagation delay, and the cells in
//! flight on it.
//!
//! Links are FIFO with a constant delay, so the cells on a link are kept in
//! a queue in arrival order and only the head's arrival is an event: the
//! event heap stays small however long the link.

use super::cell::Cell;
use crate::engine::Time;
use std::collections::VecDeque;

/// A unidirectional link from node `from` to node `to`.
pub struct Link {
    /// Name given in the scenario.
    pub name: String,
    /// Node the link leaves (its output port lives there).
    pub from: u32,
    /// Node the link reaches.
    pub to: u32,
    /// Cell rate, cells/s.
    pub cell_rate_cps: f64,
    /// Propagation delay, ps.
    pub delay_ps: Time,
    /// Cells in flight (or, behind a FIFO port, already scheduled), with the
    /// time each reaches `to`, earliest first.
    pub in_flight: VecDeque<(Time, Cell)>,
    /// True when every VC on the link ends at `to` in a passive sink: its
    /// arrivals need no events. A cell arriving before the next instant the
    /// sinks are read is delivered as it goes on the link; the others are
    /// drained in bulk (at probe ticks and at the end). Both give the same
    /// results as delivering each cell at its arrival.
    pub lazy: bool,
    /// A lazy link hands its arrived cells on once `in_flight` holds this
    /// many (then this many more than it kept): in batches, and with the
    /// queue bounded by the cells in the port and on the wire plus a batch.
    pub drain_at: usize,
}

/// Cells a lazy link lets pile up before it hands on the arrived ones.
pub const LAZY_BATCH: usize = 256;
