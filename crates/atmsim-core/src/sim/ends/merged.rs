//! The open-loop sources merged on a timing wheel (a fast path, see
//! `sim::fast_paths`): the earliest pending emission, its place among the
//! agenda's events, and firing it.

use super::prefetch::prefetch;
use super::{Direct, Endpoints};
use crate::engine::Time;
use crate::ids::VcId;
use crate::traffic::Firing;

impl Endpoints {
    /// Merged sources: the earliest pending emission, as (its time, the
    /// source), still pending.
    #[inline]
    pub(in crate::sim) fn next_due(&mut self) -> Option<(Time, u32)> {
        self.wheel.as_mut()?.peek()
    }

    /// Merged sources: the agenda key of source `s`'s emission at `t`,
    /// where its own `SourceEmit` event would stand.
    #[inline]
    pub(in crate::sim) fn due_key(&self, t: Time, s: u32) -> u128 {
        self.wheel.as_ref().expect("merged sources").key(t, s)
    }

    /// Merged sources: true when source `s`'s emission at `t` comes before
    /// the event of key `key` (its whole key is computed only when the two
    /// times tie).
    #[inline(always)]
    pub(in crate::sim) fn due_before(&self, t: Time, s: u32, key: u128) -> bool {
        let other = (key >> 64) as Time;
        t < other || (t == other && self.due_key_before(t, s, key))
    }

    /// `due_before` for a tie of times: the whole keys (out of line, so
    /// that the key's hash is never computed ahead just in case).
    #[cold]
    #[inline(never)]
    fn due_key_before(&self, t: Time, s: u32, key: u128) -> bool {
        self.due_key(t, s) < key
    }

    /// Merged sources: source `s`, the one `next_due` gave, fires at `now`
    /// and is put back on the wheel for its next emission. Returns the VC,
    /// the cells of the frame it sends and the source's direct link (see
    /// `set_direct`). The caller opens the frame.
    #[inline(always)]
    pub(in crate::sim) fn fire_due<F: Firing>(&mut self, s: u32, now: Time) -> (VcId, u16, Direct) {
        let wheel = self.wheel.as_mut().expect("merged sources");
        wheel.pop();
        if let Some(n) = self.prefetching.then(|| wheel.following()).flatten() {
            // With many sources their records are out of the cache: ask
            // for the next one's (and its VC's, unless every source
            // tallies) while this one fires.
            // Addresses only, so no bounds checks: a prefetch of any
            // address is harmless.
            let n = n as usize;
            let st = self.sources.as_ptr().wrapping_add(n);
            prefetch(st);
            prefetch(st.wrapping_add(1).cast::<u8>().wrapping_sub(1));
            if let Some(&v) = self.source_vcs.get(n) {
                prefetch(self.vcs.as_ptr().wrapping_add(v.index()));
            }
        }
        let st = &mut self.sources[s as usize];
        let e = F::fire(&mut st.source, now, &mut st.rng);
        if let Some(t) = e.next.filter(|&t| t < st.stop) {
            wheel.insert(s, t);
        }
        (st.vc, e.cells, st.direct)
    }
}
