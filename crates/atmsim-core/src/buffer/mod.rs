//! Buffer management at an output port: which arriving cells to drop
//! (seeds 000 section 11, 004; Romanow and Floyd 1995 for EPD and PPD).
//!
//! Every policy sees each arriving cell with the port's occupancy (cells
//! waiting, not counting the one being transmitted) and capacity, and says
//! accept or drop with a reason. Frame-based policies decide at a frame's
//! first cell. Not here: the queueing itself (see [`crate::atm::port`]).

pub mod epd;
pub mod intelligent_tail;
pub mod ppd;
pub mod tail;

use crate::atm::Cell;
use crate::scenario::PolicySpec;

/// Why a cell was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The buffer was full.
    Tail = 0,
    /// Above the intelligent-tail-drop threshold and not an EOM cell.
    IntelligentTail = 1,
    /// Rest of a frame that already lost a cell (partial packet discard).
    Ppd = 2,
    /// Whole frame refused at its first cell (early packet discard).
    Epd = 3,
}

/// Number of [`DropReason`] values.
pub const N_DROP_REASONS: usize = 4;

/// Names of the drop reasons as they appear in the summary.
pub const DROP_REASON_NAMES: [&str; N_DROP_REASONS] = ["tail", "intelligent_tail", "ppd", "epd"];

/// The decision on one cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Queue the cell.
    Accept,
    /// Drop the cell.
    Drop(DropReason),
}

/// A buffer-management policy at one port.
pub trait DropPolicy: Send + Sync {
    /// Decides on `cell` arriving at a port that holds `occupancy` waiting
    /// cells out of `capacity` (`u32::MAX` when unlimited).
    fn admit(&mut self, cell: &Cell, occupancy: u32, capacity: u32) -> Verdict;
}

/// Tracks, per VC, whether the next cell seen at this port starts a frame:
/// it does when the previous cell of that VC seen here was an EOM. A switch
/// only learns frame boundaries from EOM cells, so a frame whose EOM was lost
/// upstream runs on into the next one, as in a real switch.
#[derive(Clone, Debug)]
pub struct FrameTracker {
    mid_frame: Vec<bool>,
}

impl FrameTracker {
    /// A tracker for VCs `0..n_vcs`, all between frames.
    pub fn new(n_vcs: usize) -> Self {
        Self {
            mid_frame: vec![false; n_vcs],
        }
    }

    /// Records `cell`; returns true when it is the first cell of a frame.
    #[inline]
    pub fn observe(&mut self, cell: &Cell) -> bool {
        let slot = &mut self.mid_frame[cell.vc as usize];
        let first = !*slot;
        *slot = !cell.is_eom();
        first
    }
}

/// Builds the policy a scenario asks for.
pub fn build(spec: &PolicySpec, n_vcs: usize) -> Box<dyn DropPolicy> {
    match *spec {
        PolicySpec::Tail => Box::new(tail::TailDrop),
        PolicySpec::IntelligentTail { threshold } => {
            Box::new(intelligent_tail::IntelligentTailDrop::new(threshold))
        }
        PolicySpec::Ppd { keep_eom } => Box::new(ppd::PartialPacketDiscard::new(n_vcs, keep_eom)),
        PolicySpec::Epd { threshold } => Box::new(epd::EarlyPacketDiscard::new(n_vcs, threshold)),
        // Rejected on ATM links by Scenario::check; RED lives in crate::ip.
        PolicySpec::Red { .. } => Box::new(tail::TailDrop),
    }
}

#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// Cells of frame `id` (of `len` cells) on VC `vc`.
    pub fn frame(vc: u32, id: u32, len: u16) -> Vec<Cell> {
        (0..len)
            .map(|k| Cell::data(vc, id, len, k + 1 == len))
            .collect()
    }

    /// Runs `cells` through `policy` at the given occupancies.
    pub fn verdicts(
        policy: &mut dyn DropPolicy,
        cells: &[Cell],
        occ: &[u32],
        cap: u32,
    ) -> Vec<Verdict> {
        cells
            .iter()
            .zip(occ)
            .map(|(c, &x)| policy.admit(c, x, cap))
            .collect()
    }
}
