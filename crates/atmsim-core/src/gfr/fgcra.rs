//! The frame-based generic cell rate algorithm, F-GCRA(T, f), with T = 1 /
//! MCR and f = BT the burst tolerance for MBS cells, BT = (MBS - 1) (1/MCR -
//! 1/PCR) (ATM Forum Traffic Management Specification 4.1, GFR conformance;
//! the cell delay variation tolerance is 0 here, our choice).
//!
//! At the first cell of a frame, arriving at t: the frame is eligible when
//! t >= TAT - f, it is not tagged already (CLP = 0) and it is at most MFS
//! cells long (the length is read from the cell, as the AAL5 trailer would
//! give it at the end of the frame: our simplification). The cells of an
//! eligible frame each move the theoretical arrival time on,
//! TAT = max(t, TAT) + T; those of a frame that is not leave it alone, and
//! are tagged CLP = 1 when tagging is on. Whole frames only: the decision
//! is taken once per frame.

use crate::atm::cell::{Cell, CLP};
use crate::engine::{Time, PS_PER_S};
use crate::traffic::Fine;

/// The F-GCRA of one VC, with its counters.
#[derive(Clone, Debug)]
pub struct Fgcra {
    /// T = 1 / MCR, in fixed-point ps: sums of it stay exact however late
    /// in a long run.
    t: Fine,
    /// f = BT.
    f: Fine,
    mfs_cells: u32,
    tagging: bool,
    /// Theoretical arrival time.
    tat: Fine,
    /// The frame in progress is eligible (None between frames).
    eligible: Option<bool>,
    /// Frames found not eligible.
    pub frames_ineligible: u64,
    /// Frames tested.
    pub frames_tested: u64,
    /// Cells tagged CLP = 1.
    pub cells_tagged: u64,
}

impl Fgcra {
    /// F-GCRA for MCR `mcr_cps`, a first link (PCR) of `pcr_cps`, MBS and
    /// MFS in cells; `tagging` tags the cells of frames not eligible.
    pub fn new(mcr_cps: f64, pcr_cps: f64, mbs_cells: u32, mfs_cells: u32, tagging: bool) -> Self {
        let ps = PS_PER_S as f64;
        let t_ps = ps / mcr_cps;
        let bt = (mbs_cells.saturating_sub(1)) as f64 * (t_ps - ps / pcr_cps).max(0.0);
        Fgcra {
            t: Fine::of_ps(t_ps),
            f: Fine::of_ps(bt),
            mfs_cells,
            tagging,
            tat: Fine::default(),
            eligible: None,
            frames_ineligible: 0,
            frames_tested: 0,
            cells_tagged: 0,
        }
    }

    /// `cell` (a data cell of this VC) arrives at `now`: tests its frame at
    /// the first cell, moves TAT on for eligible frames, and tags the cells
    /// of frames that are not (with tagging on). Returns true when the
    /// cell's frame is eligible.
    pub fn police(&mut self, now: Time, cell: &mut Cell) -> bool {
        let t = Fine::of_time(now);
        let eligible = match self.eligible {
            Some(e) => e,
            None => {
                self.frames_tested += 1;
                let e = !cell.is_clp1()
                    && cell.frame_len as u32 <= self.mfs_cells
                    && t.plus(self.f) >= self.tat;
                if !e {
                    self.frames_ineligible += 1;
                }
                e
            }
        };
        if eligible {
            self.tat = self.tat.max(t).plus(self.t);
        } else if self.tagging && !cell.is_clp1() {
            cell.flags |= CLP;
            self.cells_tagged += 1;
        }
        self.eligible = if cell.is_eom() { None } else { Some(eligible) };
        eligible
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Time = 1_000_000;

    fn frame(f: &mut Fgcra, start: Time, spacing: Time, cells: u16) -> Vec<bool> {
        (0..cells)
            .map(|k| {
                let mut c = Cell::data(0, 0, cells, k + 1 == cells);
                let e = f.police(start + k as Time * spacing, &mut c);
                assert_eq!(c.is_clp1(), !e);
                e
            })
            .collect()
    }

    #[test]
    fn frames_within_the_mcr_and_burst_are_eligible() {
        // MCR 100,000 cells/s (T = 10 us), PCR 1,000,000 (1 us), MBS 10:
        // BT = 9 x 9 us = 81 us. A 10-cell frame at PCR is eligible and
        // moves TAT to 100 us.
        let mut f = Fgcra::new(1e5, 1e6, 10, 20, true);
        assert!(frame(&mut f, 0, US, 10).iter().all(|&e| e));
        // The next frame right after it (t = 10 us) finds TAT - f = 19 us:
        // too early, not eligible, all its cells tagged.
        assert!(frame(&mut f, 10 * US, US, 5).iter().all(|&e| !e));
        assert_eq!((f.frames_ineligible, f.cells_tagged), (1, 5));
        // At the MCR's pace (TAT = 100 us) a frame is eligible again.
        assert!(frame(&mut f, 100 * US, US, 5).iter().all(|&e| e));
    }

    #[test]
    fn long_or_already_tagged_frames_are_not_eligible_and_tagging_can_be_off() {
        let mut f = Fgcra::new(1e5, 1e6, 10, 4, false);
        // Longer than MFS: not eligible, but not tagged (tagging off).
        let mut c = Cell::data(0, 0, 5, false);
        assert!(!f.police(0, &mut c));
        assert!(!c.is_clp1());
        for k in 1..5 {
            let mut c = Cell::data(0, 0, 5, k == 4);
            f.police(k * US, &mut c);
        }
        let mut tagged = Cell::data(0, 1, 1, true);
        tagged.flags |= CLP;
        assert!(!f.police(50 * US, &mut tagged));
        assert_eq!(
            (f.frames_tested, f.frames_ineligible, f.cells_tagged),
            (2, 2, 0)
        );
    }
}
