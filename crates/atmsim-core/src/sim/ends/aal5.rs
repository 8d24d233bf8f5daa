//! AAL5 at the ends of the VCs: frames opened (segmentation, counted at
//! the source), the fate of dropped cells, and reassembly at the sinks,
//! passive or TCP, resolving the frames of a TCP-carrying VC.

use super::frames::FrameEntry;
use super::{AtEnd, Endpoints};
use crate::abr::is_frm;
use crate::atm::aal5::Outcome;
use crate::atm::{Cell, Reassembly};
use crate::engine::Time;
use crate::ids::VcId;
use crate::ip::Packet;

/// A VC's frames and cells sent and delivered, and its reassembly (what
/// its summary reports).
#[derive(Clone, Default)]
#[repr(C)]
pub(super) struct VcCounts {
    pub(super) cells_sent: u64,
    pub(super) frames_sent: u64,
    pub(super) cells_delivered: u64,
    pub(super) reassembly: Reassembly,
}

impl VcCounts {
    /// Opens a frame of `cells` cells: its id.
    #[inline(always)]
    pub(super) fn open(&mut self, cells: u16) -> u32 {
        let frame = self.frames_sent as u32;
        self.frames_sent += 1;
        self.cells_sent += cells as u64;
        frame
    }

    /// A cell reaches the VC's end: counted and reassembled.
    #[inline(always)]
    pub(super) fn deliver(&mut self, cell: &Cell) -> Outcome {
        self.cells_delivered += 1;
        self.reassembly.receive(cell)
    }

    /// Posts a source's tally of `k` one-cell frames sent and delivered at
    /// once: the same counts as `k` rounds of `open(1)` and `deliver` (see
    /// [`Direct`]).
    pub(super) fn post(&mut self, k: u64) {
        self.frames_sent += k;
        self.cells_sent += k;
        self.cells_delivered += k;
        self.reassembly.receive_one_cell_frames(k);
    }
}

impl Endpoints {
    /// Opens frame `cells` cells long on `vc` (a TCP frame keeps its packet
    /// until its fate is known); returns its id.
    #[inline]
    pub(in crate::sim) fn open_frame(
        &mut self,
        vc: VcId,
        cells: u16,
        packet: Option<Packet>,
    ) -> u32 {
        let v = &mut self.vcs[vc.index()];
        let frame = v.posted.open(cells);
        if let (false, Some(p)) = (self.capture_log.is_empty(), packet) {
            if let Some((first, log)) = &mut self.capture_log[vc.index()] {
                if log.is_empty() {
                    *first = frame;
                }
                log.push(p);
            }
        }
        let v = &mut self.vcs[vc.index()];
        if let (Some(store), Some(packet)) = (&mut v.store, packet) {
            store.push(
                frame,
                FrameEntry {
                    packet,
                    cells,
                    dropped: 0,
                },
            );
        }
        frame
    }

    /// A port dropped `cell` (not an RM cell): its VC and the frame it
    /// belongs to count it.
    #[inline]
    pub(in crate::sim) fn cell_dropped(&mut self, cell: &Cell) {
        self.cells_dropped[cell.vc as usize] += 1;
        if let Some(store) = &mut self.vcs[cell.vc as usize].store {
            if let Some(e) = store.get_mut(cell.frame) {
                e.dropped += 1;
            }
        }
    }

    /// A port dropped a one-cell frame of VC `vc` sent through a direct
    /// link (no frame store to tell): counted for the VC, as
    /// `cell_dropped` does, without reading the VC's record.
    #[inline(always)]
    pub(in crate::sim) fn direct_cell_dropped(&mut self, vc: VcId) {
        debug_assert!(self.vcs[vc.index()].store.is_none());
        self.cells_dropped[vc.index()] += 1;
    }

    /// `cell` reached the end of its VC's forward path at `now`.
    #[inline]
    pub(in crate::sim) fn at_end(&mut self, cell: Cell, now: Time) -> AtEnd {
        let v = &mut self.vcs[cell.vc as usize];
        if let Some(des) = v.des.as_mut() {
            if is_frm(&cell) {
                let brm = des.on_frm(&cell);
                self.rm_delivered += 1;
                self.rm_generated += 1;
                return AtEnd::TurnedAround(brm);
            }
            des.on_data(&cell);
        }
        if v.store.is_some() {
            AtEnd::Tcp(cell)
        } else {
            self.deliver_passive(&cell, now);
            AtEnd::Delivered
        }
    }

    /// A data cell that does not end its frame reaches the end of its VC
    /// at `at`, handed on early by a quiet-end link (fast path 6): what
    /// [`Endpoints::at_end`] and then [`Endpoints::deliver_tcp_cell`] or
    /// [`Endpoints::deliver_passive`] do with it (an ABR destination notes
    /// its EFCI bit; the cell joins the open reassembly unit, which such a
    /// cell never closes).
    #[inline]
    pub(in crate::sim) fn deliver_quiet(&mut self, cell: &Cell, at: Time) {
        let v = &mut self.vcs[cell.vc as usize];
        if let Some(des) = v.des.as_mut() {
            des.on_data(cell);
        }
        self.deliver_passive(cell, at);
    }

    /// A data cell reaches the passive sink of its VC at `at`.
    #[inline]
    pub(in crate::sim) fn deliver_passive(&mut self, cell: &Cell, at: Time) {
        self.vcs[cell.vc as usize].posted.deliver(cell);
        self.count_ctd(cell, at);
    }

    /// With delay statistics on: the cell transfer delay of data cell
    /// `cell`, which reached its VC's end at `at`, from its birth (ITU-T
    /// I.356: from its entry into the first port of its VC's path to its
    /// exit at the far end).
    #[inline(always)]
    pub(super) fn count_ctd(&mut self, cell: &Cell, at: Time) {
        if let Some(d) = self.ctd.get_mut(cell.vc as usize) {
            d.add(at - cell.birth());
        }
    }

    /// A cell of a TCP VC reaches the end host: reassemble, resolve the fate
    /// of every frame the unit closes, and return the packet of an intact
    /// frame.
    pub(in crate::sim) fn deliver_tcp_cell(&mut self, cell: Cell, now: Time) -> Option<Packet> {
        self.count_ctd(&cell, now);
        let v = &mut self.vcs[cell.vc as usize];
        let (eom_frame, intact) = match v.posted.deliver(&cell) {
            Outcome::Pending => return None,
            Outcome::Delivered { frame, .. } => (frame, true),
            Outcome::Corrupted { frame, .. } | Outcome::Merged { frame, .. } => (frame, false),
        };
        let store = v.store.as_mut().expect("TCP VC without a frame store");
        let mut arrived = None;
        while let Some((id, e)) = store.pop_front() {
            if id == eom_frame && intact {
                arrived = Some(e.packet);
            } else if e.packet.external {
                // A real host's datagram: counted apart, out of the byte ledger.
                self.external_lost += 1;
            } else if e.packet.is_data {
                // Every cell of an earlier frame either was dropped or arrived
                // into this failed unit.
                let lost = e.packet.len as u64;
                if id != eom_frame && e.dropped == e.cells {
                    self.bytes_dropped_in_network += lost;
                } else {
                    self.bytes_dropped_aal5 += lost;
                }
            }
            if id == eom_frame {
                break;
            }
        }
        arrived
    }
}
