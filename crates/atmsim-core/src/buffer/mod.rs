//! Buffer management at an output port: which arriving cells to drop
//! (TCP over ABR (Kalyanaraman et al., 1996), section 11; GFR buffer
//! management (Goyal et al., 1998); Romanow and Floyd 1995 for EPD and PPD).
//!
//! Every policy sees each arriving cell with the port's occupancy (cells
//! waiting, not counting the one being transmitted), its capacity and, if
//! it asks, the port's cells per VC, and says accept or drop with a reason.
//! Frame-based policies decide at a frame's first cell. One file per
//! policy; [`build`] is the registry; [`params`] declares the policies'
//! parameters, their ranges and checks. Not here: the queueing itself (see
//! [`crate::atm::port`]).

pub mod dfba;
pub mod epd;
pub mod fba;
pub mod intelligent_tail;
pub mod params;
pub mod ppd;
pub mod selective_drop;
pub mod tail;

use crate::cell::Cell;
pub use params::{DfbaZ, PolicySpec};

/// Why a cell was dropped, as the summary names it: a plain name for the
/// policies every port knows (`"tail"`, `"ppd"`, `"epd"`,
/// `"intelligent_tail"`), `"<policy>:<reason>"` for the others
/// (`"dfba:clp1"`). A policy adds its reasons in its own file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DropReason(pub &'static str);

/// The buffer was full.
pub const TAIL: DropReason = DropReason("tail");
/// Above the intelligent-tail-drop threshold and not an EOM cell.
pub const INTELLIGENT_TAIL: DropReason = DropReason("intelligent_tail");
/// Rest of a frame that already lost a cell (partial packet discard).
pub const PPD: DropReason = DropReason("ppd");
/// Whole frame refused at its first cell (early packet discard).
pub const EPD: DropReason = DropReason("epd");

/// The reasons every ATM port reports, dropped or not (in this order).
pub const COMMON_DROP_REASONS: [DropReason; 4] = [TAIL, INTELLIGENT_TAIL, PPD, EPD];

/// The decision on one cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Queue the cell.
    Accept,
    /// Drop the cell.
    Drop(DropReason),
}

/// The cells of each VC in a port: X_i, the VCs with a cell there (N_a),
/// and their total X. A cell counts from its acceptance to the end of its
/// transmission (the one being sent included). Kept only at ports whose
/// policy asks for it ([`DropPolicy::needs_vc_occupancy`]) or whose
/// occupancy per VC is probed.
#[derive(Clone, Debug, Default)]
pub struct VcOccupancy {
    /// Cells of each VC in the port.
    pub cells: Vec<u32>,
    /// VCs with at least one cell in the port.
    pub active: u32,
    /// Cells in the port.
    pub total: u32,
}

impl VcOccupancy {
    /// Tracking no VC.
    pub const EMPTY: VcOccupancy = VcOccupancy {
        cells: Vec::new(),
        active: 0,
        total: 0,
    };

    /// Empty, for VCs `0..n_vcs`.
    pub fn new(n_vcs: usize) -> Self {
        VcOccupancy {
            cells: vec![0; n_vcs],
            active: 0,
            total: 0,
        }
    }

    /// A cell of `vc` enters.
    #[inline]
    pub fn add(&mut self, vc: u32) {
        let x = &mut self.cells[vc as usize];
        if *x == 0 {
            self.active += 1;
        }
        *x += 1;
        self.total += 1;
    }

    /// A cell of `vc` leaves.
    #[inline]
    pub fn remove(&mut self, vc: u32) {
        let x = &mut self.cells[vc as usize];
        *x -= 1;
        if *x == 0 {
            self.active -= 1;
        }
        self.total -= 1;
    }

    /// Cells of `vc` in the port (0 for a VC the port does not track).
    pub fn of(&self, vc: u32) -> u32 {
        self.cells.get(vc as usize).copied().unwrap_or(0)
    }
}

/// What a policy sees when a cell is offered to its port.
#[derive(Clone, Copy, Debug)]
pub struct Arrival<'a> {
    /// The cell.
    pub cell: &'a Cell,
    /// Cells waiting in the port, not counting the one being transmitted.
    pub occupancy: u32,
    /// Buffer size in cells (`u32::MAX` when unlimited).
    pub capacity: u32,
    /// The port's cells per VC (empty unless the policy asked for them).
    pub vcs: &'a VcOccupancy,
}

/// A buffer-management policy at one port.
pub trait DropPolicy: Send + Sync {
    /// Decides on the cell of `a`.
    fn admit(&mut self, a: &Arrival) -> Verdict;

    /// True when the policy reads the port's occupancy per VC (the port then
    /// keeps it).
    fn needs_vc_occupancy(&self) -> bool {
        false
    }

    /// True for plain tail drop (stateless: drop exactly when the buffer is
    /// full), which a FIFO port decides without asking the policy.
    fn is_tail_drop(&self) -> bool {
        false
    }
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

/// What a port's policy may need besides its parameters.
pub struct PolicyContext {
    /// VCs in the network (policies keep per-VC state by index).
    pub n_vcs: usize,
    /// For each VC, its MCR over the port's GFR capacity (0 for a VC with no
    /// MCR, or that does not cross the port): DFBA's weight W_i.
    pub weights: Vec<f64>,
    /// The port's own random stream (DFBA's probabilistic drops).
    pub rng: crate::engine::RngStream,
}

/// A decision per frame, taken at its first cell, which the frame's other
/// cells follow; a frame accepted that meets a full buffer loses the rest of
/// its cells as by PPD (keeping its EOM when there is room). EPD, Selective
/// Drop, FBA and DFBA are all this gate with their own decision.
pub struct FrameGate {
    frames: FrameTracker,
    refused: Vec<Option<DropReason>>,
    partial: ppd::PartialPacketDiscard,
}

impl FrameGate {
    /// A gate for VCs `0..n_vcs`.
    pub fn new(n_vcs: usize) -> Self {
        FrameGate {
            frames: FrameTracker::new(n_vcs),
            refused: vec![None; n_vcs],
            partial: ppd::PartialPacketDiscard::new(n_vcs, true),
        }
    }

    /// Records `cell` (once per cell): true when it starts a frame, whose
    /// decision the caller then gives with [`FrameGate::decide`].
    #[inline]
    pub fn starts_frame(&mut self, cell: &Cell) -> bool {
        self.frames.observe(cell)
    }

    /// The decision for the frame VC `vc` has just started: refused for
    /// `reason`, or accepted (None).
    #[inline]
    pub fn decide(&mut self, vc: u32, reason: Option<DropReason>) {
        self.refused[vc as usize] = reason;
    }

    /// The verdict on `a`'s cell, following its frame's decision.
    #[inline]
    pub fn follow(&mut self, a: &Arrival) -> Verdict {
        match self.refused[a.cell.vc as usize] {
            Some(reason) => Verdict::Drop(reason),
            None => self.partial.admit(a),
        }
    }
}

/// Builds the policy a scenario asks for (the registry: a new policy adds
/// its file, its `PolicySpec` variant and its line here).
pub fn build(spec: &PolicySpec, ctx: PolicyContext) -> Box<dyn DropPolicy> {
    let n_vcs = ctx.n_vcs;
    match *spec {
        PolicySpec::Tail => Box::new(tail::TailDrop),
        PolicySpec::IntelligentTail { threshold } => {
            Box::new(intelligent_tail::IntelligentTailDrop::new(threshold))
        }
        PolicySpec::Ppd { keep_eom } => Box::new(ppd::PartialPacketDiscard::new(n_vcs, keep_eom)),
        PolicySpec::Epd { threshold } => Box::new(epd::EarlyPacketDiscard::new(n_vcs, threshold)),
        PolicySpec::SelectiveDrop { threshold, z } => {
            Box::new(selective_drop::SelectiveDrop::new(n_vcs, threshold, z))
        }
        PolicySpec::Fba { threshold, z } => {
            Box::new(fba::FairBufferAllocation::new(n_vcs, threshold, z))
        }
        PolicySpec::Dfba {
            low,
            high,
            alpha,
            z,
        } => Box::new(dfba::Dfba::new(ctx, low, high, alpha, z)),
        // Rejected on ATM links by PolicySpec::check_atm; RED lives in crate::ip.
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
            .map(|(c, &x)| admit(policy, c, x, cap))
            .collect()
    }

    /// `policy`'s verdict on `cell` at `occupancy` of `capacity`, per-VC
    /// occupancy empty.
    pub fn admit(
        policy: &mut dyn DropPolicy,
        cell: &Cell,
        occupancy: u32,
        capacity: u32,
    ) -> Verdict {
        let vcs = VcOccupancy::default();
        policy.admit(&Arrival {
            cell,
            occupancy,
            capacity,
            vcs: &vcs,
        })
    }
}
