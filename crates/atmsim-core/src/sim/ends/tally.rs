//! Sources whose cells go straight into a port, and of them the tallying
//! ones: one-cell frames sent and delivered at once, counted by the source
//! and posted to its VC's counters when read or before its VC opens a
//! frame (see [`Direct`]).

use super::aal5::VcCounts;
use super::{Direct, Endpoints};
use crate::atm::Cell;
use crate::engine::Time;
use crate::ids::{AtmLinkIx, VcId};

impl Endpoints {
    /// A one-cell frame of source `s` on passive VC `vc` (no store, no
    /// SES) through `direct`, sent at `now` and delivered at once (it
    /// arrives at `at`): tallied by a tallying source, else `open_frame`
    /// and `deliver_passive` on one reading of the VC's record.
    #[inline(always)]
    pub(in crate::sim) fn send_delivered_cell(
        &mut self,
        s: u32,
        vc: VcId,
        direct: Direct,
        now: Time,
        at: Time,
    ) {
        if direct.tallies() {
            self.sources[s as usize].tally.add();
            return;
        }
        let v = &mut self.vcs[vc.index()];
        debug_assert!(v.store.is_none() && v.ses.is_none());
        let frame = v.posted.open(1);
        let cell = Cell::data_born(vc.get(), frame, 1, true, now);
        v.posted.deliver(&cell);
        self.count_ctd(&cell, at);
    }

    /// `open_frame` for a frame of source `s` through `direct`: a tallying
    /// source's tally is posted first, so that the frame gets its exact id.
    #[inline(always)]
    pub(in crate::sim) fn open_direct_frame(
        &mut self,
        s: u32,
        vc: VcId,
        cells: u16,
        direct: Direct,
    ) -> u32 {
        self.post_direct_tally(s, direct);
        self.open_frame(vc, cells, None)
    }

    /// Posts source `s`'s tally to its VC's counters if it tallies (through
    /// `direct`): before any frame of its VC is opened.
    #[inline(always)]
    pub(in crate::sim) fn post_direct_tally(&mut self, s: u32, direct: Direct) {
        if direct.tallies() {
            self.post_tally(s);
        }
    }

    /// Posts source `s`'s tally to its VC's counters.
    #[inline]
    fn post_tally(&mut self, s: u32) {
        let st = &mut self.sources[s as usize];
        let k = st.tally.take();
        if k > 0 {
            self.vcs[st.vc.index()].posted.post(k);
        }
    }

    /// The tally VC `v`'s counters have still to take (see [`Direct`]).
    fn unposted(&self, v: usize) -> u64 {
        match self.tally_source[v] {
            u32::MAX => 0,
            s => self.sources[s as usize].tally.held(),
        }
    }

    /// VC `vc`'s counters with what the fast paths hold back added (a
    /// tallying source's tally, see [`Direct`]): the one way to read them,
    /// a copy, so that reading changes nothing.
    pub(super) fn counts(&self, vc: usize) -> VcCounts {
        let mut counts = self.vcs[vc].posted.clone();
        counts.post(self.unposted(vc));
        counts
    }

    /// Marks the sources whose cells may go straight into a port: those of
    /// VCs without an ABR source end system or a TCP frame store, for
    /// which `link_of` names a link (see `AtmFabric::direct_link`). Of
    /// them, those that are their VC's only source and send one-cell frames
    /// only tally (see [`Direct`]).
    /// With delay statistics on none tallies: a tally never makes the
    /// cells it counts, so it cannot time them.
    pub(in crate::sim) fn set_direct(&mut self, link_of: impl Fn(VcId) -> Option<AtmLinkIx>) {
        let mut sources_of = vec![0u32; self.vcs.len()];
        for st in &self.sources {
            sources_of[st.vc.index()] += 1;
        }
        for (s, st) in self.sources.iter_mut().enumerate() {
            let v = &self.vcs[st.vc.index()];
            if v.ses.is_some() || v.store.is_some() {
                continue;
            }
            let Some(link) = link_of(st.vc).filter(|&l| Direct::fits(l)) else {
                continue;
            };
            let tallies = sources_of[st.vc.index()] == 1
                && st.source.one_cell_frames()
                && self.ctd.is_empty();
            st.direct = Direct::new(link, tallies);
            if tallies {
                self.tally_source[st.vc.index()] = s as u32;
            }
        }
        if self.sources.iter().all(|st| st.direct.tallies()) {
            self.source_vcs = Vec::new();
        }
    }
}
