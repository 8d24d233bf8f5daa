//! Fast path 5, merged sources: the [`Event::Sources`] event and its loop,
//! which fires the open-loop sources in key order from their timing wheel
//! (`engine::wheel`, kept by the ends); and a source's [`Direct`] link and
//! [`Tally`], which the ends keep in each source's record. A VC's counters
//! are read through `Endpoints::counts`, which adds the tally. The loop
//! takes a one-cell frame into a direct link's port under plain tail drop
//! by its own steps; every other frame goes the model's way (`send_frame`).

use crate::atm::Cell;
use crate::engine::{Event, Time};
use crate::ids::{AtmLinkIx, VcId};
use crate::sim::atm::AtmFabric;
use crate::sim::Simulation;
use crate::traffic::{CellSourcesInline, EveryKindInline, Firing};

/// A source's direct link: none, or the link its cells go straight into
/// (the VC's one link, lazy, behind a plain FIFO port: see
/// `AtmFabric::direct_link`) and whether the source tallies.
///
/// A source that tallies counts each one-cell frame that reaches its sink
/// at once in its own record (its [`Tally`]), not at its VC's: the cell then
/// touches one record, not two (with 10,000 sources, a cache miss fewer a
/// cell). The tally is posted to the VC's counters before the next frame of
/// the VC is opened the usual way, and every reading of the VC's counters
/// adds it. It gives the same counts because the source is its VC's only
/// one and sends one-cell frames only: the VC's reassembly never holds an
/// open unit, so each such cell is an intact frame whatever the order, and
/// nothing reads the frames' ids in between.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::sim) struct Direct(u32);

impl Direct {
    /// The flag bit of a tallying source.
    const TALLIES: u32 = 1 << 31;
    /// No direct link: the source's frames go the usual way (it does not
    /// tally).
    pub(in crate::sim) const NONE: Direct = Direct(!Self::TALLIES);

    /// Link `link` (below `NONE`'s 2^31 - 1), tallying or not.
    pub(in crate::sim) fn new(link: AtmLinkIx, tallies: bool) -> Direct {
        let link = link.get();
        debug_assert!(link < Self::NONE.0);
        Direct(if tallies { link | Self::TALLIES } else { link })
    }

    /// Whether `link` can be a direct link (below `NONE`'s).
    pub(in crate::sim) fn fits(link: AtmLinkIx) -> bool {
        link.get() < Self::NONE.0
    }

    /// True when there is no direct link.
    #[inline(always)]
    pub(in crate::sim) fn is_none(self) -> bool {
        self == Self::NONE
    }

    /// The direct link (when there is one).
    #[inline(always)]
    pub(in crate::sim) fn link(self) -> AtmLinkIx {
        AtmLinkIx::new(self.0 & !Self::TALLIES)
    }

    /// True when the source tallies (when there is a direct link).
    #[inline(always)]
    pub(in crate::sim) fn tallies(self) -> bool {
        self.0 & Self::TALLIES != 0
    }
}

/// A tallying source's one-cell frames, sent and delivered at once, not yet
/// posted to its VC's counters (see [`Direct`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(in crate::sim) struct Tally(u64);

impl Tally {
    /// One more frame.
    #[inline(always)]
    pub(in crate::sim) fn add(&mut self) {
        self.0 += 1;
    }

    /// The frames held back, without posting them.
    #[inline]
    pub(in crate::sim) fn held(self) -> u64 {
        self.0
    }

    /// The frames held back, now to be posted: the tally is then empty.
    #[inline]
    pub(in crate::sim) fn take(&mut self) -> u64 {
        std::mem::take(&mut self.0)
    }
}

/// What became of a cell offered to a direct link's port by
/// [`direct_tail`].
#[derive(Clone, Copy, Debug, PartialEq)]
enum TailFate {
    /// The port is not deciding by plain tail drop now: the frame goes the
    /// usual way.
    OtherMode,
    /// Dropped by the port.
    Dropped,
    /// Accepted, and it reaches the sink at this time, before the horizon:
    /// the caller delivers it at once.
    Delivered(Time),
    /// Accepted, to leave the port then and reach the sink at or after the
    /// horizon: the caller puts it on the link.
    Queued(Time),
}

/// A cell offered at `now` to the port of direct link `l` (see
/// `AtmFabric::direct_link`) when that port decides under plain tail drop,
/// from its backlog alone (no cell needed); see [`TailFate`].
#[inline(always)]
fn direct_tail(atm: &mut AtmFabric, l: AtmLinkIx, now: Time) -> TailFate {
    let (port, link, lazy) = atm.direct_hop(l);
    let Some(port) = port else {
        return TailFate::OtherMode;
    };
    let Some(depart) = port.arrive_tail(now) else {
        return TailFate::Dropped;
    };
    if lazy.arrives_early(link, depart) {
        return TailFate::Delivered(depart + link.delay_ps);
    }
    TailFate::Queued(depart)
}

impl Simulation {
    /// The merged sources emit, in order, everything they have due before
    /// the next other event and by the end of the current `advance`; then
    /// their event waits at the next emission's key (each emission happens
    /// exactly where its own SourceEmit event would have). The loop inlines
    /// the `fire` of every source kind, or only of the CBR and geometric
    /// on/off sources when there are no others (see `traffic::Firing`).
    pub(in crate::sim) fn on_sources(&mut self) {
        if self.ends.cell_sources_only() {
            self.sources_loop::<CellSourcesInline>();
        } else {
            self.sources_loop::<EveryKindInline>();
        }
    }

    /// `on_sources`' loop. Kept out of `advance` (never inlined): the loop
    /// then has the registers to itself, with fewer values kept on the
    /// stack.
    #[inline(never)]
    fn sources_loop<F: Firing>(&mut self) {
        self.agenda.discard_taken();
        // Emissions before `sure` need neither test below (by the end of
        // the `advance`, and before the next other event: only a frame sent
        // the usual way can change it, a direct link schedules nothing).
        // The loop keeps `sure` alone; the end and the next event's key are
        // read again when an emission reaches it (fewer values held across
        // the loop, so fewer of them kept on the stack).
        let sure_of = |sim: &Self| {
            let key = sim.agenda.peek_key();
            sim.clock.until.saturating_add(1).min((key >> 64) as Time)
        };
        let mut sure = sure_of(self);
        while let Some((t, s)) = self.ends.next_due() {
            if t >= sure && self.sources_stop(t, s) {
                return;
            }
            self.clock.now = t;
            let (vc, cells, direct) = self.ends.fire_due::<F>(s, t);
            if direct.is_none() {
                self.send_frame(vc, cells, None);
                sure = sure_of(self);
                continue;
            }
            // A one-cell frame (every cell of an on/off source) into the
            // port of the VC's one, lazy link, under plain tail drop: the
            // port decides from its backlog alone, before the cell is made,
            // and a cell that reaches the sink at once is sent and
            // delivered on one reading of its VC's record, or tallied (the
            // counters are the same whatever their order: nothing reads
            // them in between). These are the steps of `send_frame` and
            // `cell_to_port` that apply; any other frame takes those.
            let fate = if cells == 1 {
                direct_tail(&mut self.atm, direct.link(), t)
            } else {
                TailFate::OtherMode
            };
            match fate {
                TailFate::Delivered(at) => self.ends.send_delivered_cell(s, vc, direct, t, at),
                TailFate::Queued(depart) => {
                    // Onto the link's queue (`LazyLinks::push`, which tests
                    // the horizon again: one compare on this path).
                    let frame = self.ends.open_direct_frame(s, vc, 1, direct);
                    let ends = &mut self.ends;
                    let cell = Cell::data_born(vc.get(), frame, 1, true, t);
                    let (_, link, lazy) = self.atm.direct_hop(direct.link());
                    lazy.push(link, depart, cell, t, &mut |c: &Cell, at| {
                        ends.deliver_passive(c, at)
                    });
                }
                TailFate::Dropped => {
                    self.ends.open_direct_frame(s, vc, 1, direct);
                    self.ends.direct_cell_dropped(vc);
                }
                TailFate::OtherMode => self.direct_frame(s, vc, cells, direct),
            }
        }
    }

    /// A frame of source `s` that its direct link's port does not decide by
    /// tail drop alone, or of several cells: the source's tally posted,
    /// then the usual way (`send_frame`; a direct link schedules nothing,
    /// so the loop's `sure` still holds). Out of line: its steps would hold
    /// values of their own across the sources' loop.
    #[inline(never)]
    fn direct_frame(&mut self, s: u32, vc: VcId, cells: u16, direct: Direct) {
        self.ends.post_direct_tally(s, direct);
        self.send_frame(vc, cells, None);
    }

    /// The merged sources' emission at `t` by source `s` reached the loop's
    /// `sure` time: true (their event then waits at its key) when it comes
    /// after the end of the `advance` or after the next other event.
    #[cold]
    #[inline(never)]
    fn sources_stop(&mut self, t: Time, s: u32) -> bool {
        let next_key = self.agenda.peek_key();
        if t > self.clock.until || !self.ends.due_before(t, s, next_key) {
            self.agenda
                .push_keyed(self.ends.due_key(t, s), Event::Sources);
            return true;
        }
        false
    }
}
