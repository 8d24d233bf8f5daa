//! The open-loop traffic sources of the VCs, each firing on an event of
//! its own (for the merged sources, see `merged`).

use super::{Direct, Endpoints, Tally};
use crate::engine::{Event, EventQueue, RngStream, Time};
use crate::ids::VcId;
use crate::traffic::{self, TrafficSource};

pub(super) struct SourceState {
    pub(super) source: traffic::Source,
    pub(super) rng: RngStream,
    pub(super) vc: VcId,
    pub(super) stop: Time,
    /// The link its cells go straight into, if any (see `set_direct`).
    pub(super) direct: Direct,
    /// One-cell frames it sent that reached the sink at once, not yet
    /// posted to its VC's counters (see [`Direct`]).
    pub(super) tally: Tally,
}

impl Endpoints {
    /// Source `s` fires at `now` (and schedules its next emission): the VC
    /// and the cells of the frame it sends.
    #[inline]
    pub(in crate::sim) fn fire_source(
        &mut self,
        s: u32,
        now: Time,
        agenda: &mut EventQueue,
    ) -> (VcId, u16) {
        let st = &mut self.sources[s as usize];
        let e = st.source.fire(now, &mut st.rng);
        if let Some(t) = e.next.filter(|&t| t < st.stop) {
            agenda.push_arrival(t, Event::SourceEmit(s));
        }
        (st.vc, e.cells)
    }

    /// True when every source is of a kind `traffic::CellSourcesInline`
    /// inlines.
    pub(in crate::sim) fn cell_sources_only(&self) -> bool {
        self.cell_sources_only
    }
}
