//! Fast path 5, merged sources: what a source sending straight into its
//! port needs (its [`Direct`] link, and the [`Tally`] of a source that
//! counts its own cells). The ends keep both in each source's record; the
//! VC's counters are read through `Endpoints::counts`, which adds the tally.

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
    pub(in crate::sim) fn new(link: u32, tallies: bool) -> Direct {
        debug_assert!(link < Self::NONE.0);
        Direct(if tallies { link | Self::TALLIES } else { link })
    }

    /// Whether `link` can be a direct link (below `NONE`'s).
    pub(in crate::sim) fn fits(link: u32) -> bool {
        link < Self::NONE.0
    }

    /// True when there is no direct link.
    #[inline(always)]
    pub(in crate::sim) fn is_none(self) -> bool {
        self == Self::NONE
    }

    /// The direct link (when there is one).
    #[inline(always)]
    pub(in crate::sim) fn link(self) -> u32 {
        self.0 & !Self::TALLIES
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
