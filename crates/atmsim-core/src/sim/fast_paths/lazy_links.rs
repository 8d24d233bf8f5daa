//! Fast path 1, lazy ATM links: a link whose cells all end where it ends,
//! in passive sinks, schedules no arrival events. [`LazyLinks`] keeps the
//! horizon of early delivery and moves a lazy link's cells to their sinks;
//! the ATM fabric calls it where a cell goes on a link
//! (`AtmFabric::link_push`, and the merged sources' direct steps), and the
//! run loop when the horizon moves on and before the sinks are read.
//!
//! A link is marked lazy by the plan (`Link::lazy`, kept in the link's own
//! record because the test sits on every cell's way onto a link; its
//! `drain_at` likewise).

use crate::atm::link::LAZY_BATCH;
use crate::atm::{Cell, Link};
use crate::engine::Time;
use crate::sim::Simulation;

/// The lazy links' shared state: the horizon of early delivery.
#[derive(Debug, Default)]
pub(in crate::sim) struct LazyLinks {
    /// A cell of a lazy link that arrives before this time is delivered
    /// when it goes on the link: nothing reads the passive sinks before it
    /// (see [`LazyLinks::raise`]).
    horizon: Time,
}

impl LazyLinks {
    /// Puts `cell`, whose transmission ends at `tx_end`, on lazy link
    /// `link`: delivered at once when it arrives before the horizon (no
    /// sink is read before then, and the link's queue is empty: every
    /// earlier cell of the link has been delivered), otherwise queued, the
    /// cells that have arrived by `now` delivered once a batch is queued.
    #[inline(always)]
    pub(in crate::sim) fn push(
        &self,
        link: &mut Link,
        tx_end: Time,
        cell: Cell,
        now: Time,
        deliver: &mut impl FnMut(&Cell, Time),
    ) {
        if self.arrives_early(link, tx_end) {
            deliver(&cell, tx_end + link.delay_ps);
            return;
        }
        link.in_flight.push_back((tx_end + link.delay_ps, cell));
        if link.in_flight.len() >= link.drain_at {
            drain_lazy(link, now, deliver);
        }
    }

    /// True when a cell whose transmission on lazy link `link` ends at
    /// `tx_end` reaches the far end before the horizon: it is delivered at
    /// once.
    #[inline(always)]
    pub(in crate::sim) fn arrives_early(&self, link: &Link, tx_end: Time) -> bool {
        let early = tx_end + link.delay_ps < self.horizon;
        // The queue holds only cells arriving at or after the horizon
        // (`raise`), and a link's arrivals come in the order its cells go
        // on it: a cell arriving before the horizon finds it empty.
        debug_assert!(!early || link.in_flight.is_empty());
        early
    }

    /// Moves the horizon of early delivery to `t` (it never moves back):
    /// the caller promises that the passive sinks are not read before `t`
    /// (the next probe tick, the end of the current `advance`). The cells
    /// of the lazy links among `links` that arrive before it are delivered
    /// now, so that a lazy link's queue holds only cells arriving at or
    /// after the horizon: a cell put on an empty queue and arriving before
    /// the horizon can then be delivered at once, after every earlier cell
    /// of its link.
    pub(in crate::sim) fn raise<'a>(
        &mut self,
        t: Time,
        links: impl Iterator<Item = &'a mut Link>,
        deliver: &mut impl FnMut(&Cell, Time),
    ) {
        if t > self.horizon {
            self.horizon = t;
            Self::drain(links, t, false, deliver);
        }
    }

    /// Hands the cells of the lazy links among `links` that have arrived
    /// before `t` (by `t` with `at_t`) to `deliver`.
    pub(in crate::sim) fn drain<'a>(
        links: impl Iterator<Item = &'a mut Link>,
        t: Time,
        at_t: bool,
        deliver: &mut impl FnMut(&Cell, Time),
    ) {
        for link in links.filter(|l| l.lazy) {
            deliver_arrived(link, |a| a < t || (at_t && a == t), deliver);
        }
    }
}

/// Delivers the cells of lazy link `link` that have arrived by `now`, so
/// that it holds only the cells still in the port or on the wire, and a
/// batch more before the next drain.
#[inline(never)]
fn drain_lazy(link: &mut Link, now: Time, deliver: &mut impl FnMut(&Cell, Time)) {
    deliver_arrived(link, |a| a <= now, deliver);
}

/// Delivers, in order, the cells of lazy link `link` whose arrival times
/// pass `arrived` (a test true up to some time), then takes them out at
/// once; the next batch drain comes a batch later.
#[inline]
fn deliver_arrived(
    link: &mut Link,
    arrived: impl Fn(Time) -> bool,
    deliver: &mut impl FnMut(&Cell, Time),
) {
    // Arrival times grow along the queue: deliver the arrived run of each
    // of its two slices.
    let mut taken = 0;
    let (a, b) = link.in_flight.as_slices();
    for part in [a, b] {
        let n = part.partition_point(|&(at, _)| arrived(at));
        part[..n].iter().for_each(|&(at, ref c)| deliver(c, at));
        taken += n;
        if n < part.len() {
            break;
        }
    }
    link.in_flight.drain(..taken);
    link.drain_at = link.in_flight.len() + LAZY_BATCH;
}

impl Simulation {
    /// Lets the lazy links deliver at once the cells that arrive before
    /// the next instant the passive sinks are read: the next probe tick or
    /// the end of the current `advance` (where `finish` may read them).
    /// Exact because a passive sink only counts and reassembles, each VC's
    /// cells in their order on its link, and its state is read at those
    /// instants alone.
    pub(in crate::sim) fn raise_horizon(&mut self) {
        let horizon = self.clock.until.min(self.clock.next_tick);
        // The quiet-end links' horizon passes the probe ticks unless a
        // probe reads the cells a VC's end has received.
        let quiet = if self.probes.reads_vc_ends() {
            horizon
        } else {
            self.clock.until
        };
        let ends = &mut self.ends;
        self.atm.raise_horizon(horizon, quiet, &mut |c: &Cell, at| {
            ends.deliver_passive(c, at)
        });
    }

    /// Hands the cells of lazy links that arrived before `t` (by `t` with
    /// `at_t`) to their sinks.
    pub(in crate::sim) fn drain_lazy(&mut self, t: Time, at_t: bool) {
        let ends = &mut self.ends;
        self.atm
            .drain_lazy(t, at_t, &mut |c: &Cell, at| ends.deliver_passive(c, at));
    }
}
