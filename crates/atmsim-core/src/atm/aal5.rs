//! AAL5: segmentation of frames into cells and reassembly at the receiver
//! (ITU-T I.363.5; LLC/SNAP encapsulation of RFC 1483, TCP over ABR (Kalyanaraman et al.,
//! 1996), section 8).
//!
//! The receiver collects cells until an EOM cell. A frame with any cell
//! missing fails its CRC and is discarded whole. If an EOM cell is lost, the
//! next frame's cells are appended to the partial one and the merged unit
//! fails too: one lost EOM costs two frames (TCP over ABR, section 11).

use crate::cell::{Cell, CELL_PAYLOAD_BYTES};

/// Bytes of the AAL5 trailer.
pub const AAL5_TRAILER_BYTES: u32 = 8;
/// Bytes of the LLC/SNAP header (RFC 1483) in front of an IP datagram.
pub const LLC_SNAP_BYTES: u32 = 8;

/// Cells needed to carry an IP datagram of `ip_bytes` over AAL5 with LLC/SNAP:
/// ceil((L_ip + 16) / 48).
pub fn cells_per_datagram(ip_bytes: u32) -> u32 {
    (ip_bytes + LLC_SNAP_BYTES + AAL5_TRAILER_BYTES).div_ceil(CELL_PAYLOAD_BYTES)
}

/// What the receiver made of a reassembled unit when its EOM arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Not an EOM: the unit is still being collected.
    Pending,
    /// An intact frame of this many cells.
    Delivered { frame: u32, cells: u64 },
    /// One frame with cells missing: discarded. `frame` is the EOM's frame.
    Corrupted { frame: u32, cells: u64 },
    /// Several frames merged after a lost EOM: all discarded. `frame` is the
    /// EOM's frame, the last of the unit.
    Merged { frame: u32, frames: u64, cells: u64 },
}

/// Reassembly state of one VC at its receiver. Laid out in this order
/// (`repr(C)`): what a one-cell frame touches comes first, in 24 bytes.
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct Reassembly {
    active: bool,
    last_frame: u32,
    /// Frames reassembled intact.
    pub frames_delivered: u64,
    /// Cells of intact frames.
    pub cells_good: u64,
    // A unit grows for as long as EOM cells are lost (a port in overload
    // can lose every frame's end): counted in u64, where a run cannot make
    // them wrap (10^6 s at 1 Tbit/s is 2.4 x 10^15 cells).
    frames_in_unit: u64,
    cells: u64,
    /// Single-frame units that missed cells.
    pub frames_corrupted: u64,
    /// Frames lost by merging after a lost EOM (counted per original frame).
    pub frames_merged: u64,
    /// Cells thrown away by failed reassembly.
    pub cells_discarded: u64,
}

impl Reassembly {
    /// Takes one arriving cell; returns what happened to the unit.
    #[inline]
    pub fn receive(&mut self, cell: &Cell) -> Outcome {
        if !self.active && cell.is_eom() && cell.frame_len == 1 {
            // A one-cell frame that opens and closes a unit: intact. (The
            // unit's own counters are read only while a unit is open, so
            // they need not be kept: the same outcome and totals as
            // `receive_cell`, with three counters touched instead of seven.)
            self.frames_delivered += 1;
            self.cells_good += 1;
            return Outcome::Delivered {
                frame: cell.frame,
                cells: 1,
            };
        }
        self.receive_cell(cell)
    }

    /// As `k` calls of `receive` with the cell of a one-cell frame while
    /// no unit is open: `k` intact frames of one cell.
    pub fn receive_one_cell_frames(&mut self, k: u64) {
        debug_assert!(!self.active || k == 0, "one-cell frames into an open unit");
        self.frames_delivered += k;
        self.cells_good += k;
    }

    /// `receive` for any cell: the unit it opens, grows or closes.
    fn receive_cell(&mut self, cell: &Cell) -> Outcome {
        if !self.active {
            self.active = true;
            self.last_frame = cell.frame;
            self.frames_in_unit = 1;
            self.cells = 0;
        } else if cell.frame != self.last_frame {
            self.last_frame = cell.frame;
            self.frames_in_unit += 1;
        }
        self.cells += 1;
        if !cell.is_eom() {
            return Outcome::Pending;
        }
        self.active = false;
        let cells = self.cells;
        if self.frames_in_unit == 1 && cells == cell.frame_len as u64 {
            self.frames_delivered += 1;
            self.cells_good += cells;
            Outcome::Delivered {
                frame: cell.frame,
                cells,
            }
        } else if self.frames_in_unit == 1 {
            self.frames_corrupted += 1;
            self.cells_discarded += cells;
            Outcome::Corrupted {
                frame: cell.frame,
                cells,
            }
        } else {
            let frames = self.frames_in_unit;
            self.frames_merged += frames;
            self.cells_discarded += cells;
            Outcome::Merged {
                frame: cell.frame,
                frames,
                cells,
            }
        }
    }

    /// Cells held in an unfinished unit.
    pub fn cells_pending(&self) -> u64 {
        if self.active {
            self.cells
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(vc: u32, id: u32, len: u16) -> Vec<Cell> {
        (0..len)
            .map(|k| Cell::data(vc, id, len, k + 1 == len))
            .collect()
    }

    #[test]
    fn mss_512_datagram_is_12_cells() {
        // 512 payload + 20 TCP + 20 IP = 552; + 8 LLC/SNAP + 8 trailer = 568 -> 12 cells.
        assert_eq!(cells_per_datagram(512 + 40), 12);
        assert_eq!(cells_per_datagram(9180), 192);
        assert_eq!(cells_per_datagram(32), 1);
        assert_eq!(cells_per_datagram(33), 2);
    }

    #[test]
    fn intact_frames_pass() {
        let mut r = Reassembly::default();
        for id in 0..3 {
            let mut last = Outcome::Pending;
            for c in frame(0, id, 12) {
                last = r.receive(&c);
            }
            assert_eq!(
                last,
                Outcome::Delivered {
                    frame: id,
                    cells: 12
                }
            );
        }
        assert_eq!(r.frames_delivered, 3);
        assert_eq!(r.cells_good, 36);
    }

    #[test]
    fn a_lost_middle_cell_corrupts_one_frame() {
        let mut r = Reassembly::default();
        let mut f = frame(0, 0, 12);
        f.remove(5);
        let outs: Vec<_> = f.iter().map(|c| r.receive(c)).collect();
        assert_eq!(
            *outs.last().unwrap(),
            Outcome::Corrupted {
                frame: 0,
                cells: 11
            }
        );
        for c in frame(0, 1, 12) {
            r.receive(&c);
        }
        assert_eq!((r.frames_corrupted, r.frames_delivered), (1, 1));
    }

    /// Random streams of frames of 1 to 3 cells, some cells lost: `receive`
    /// (with its way for one-cell frames) gives the outcomes and totals of
    /// `receive_cell` alone.
    #[test]
    fn one_cell_frames_take_a_short_way_to_the_same_outcomes() {
        let mut r = 12345u64;
        let mut draw = |n: u64| {
            r = crate::engine::rng::splitmix64(r);
            r % n
        };
        let (mut fast, mut plain) = (Reassembly::default(), Reassembly::default());
        for id in 0..20_000 {
            let len = 1 + draw(3) as u16;
            for c in frame(0, id, len) {
                if draw(5) == 0 {
                    continue; // lost on the way
                }
                assert_eq!(fast.receive(&c), plain.receive_cell(&c));
                assert_eq!(fast.cells_pending(), plain.cells_pending());
            }
        }
        let totals = |r: &Reassembly| {
            (
                r.frames_delivered,
                r.frames_corrupted,
                r.frames_merged,
                r.cells_discarded,
                r.cells_good,
            )
        };
        assert_eq!(totals(&fast), totals(&plain));
        assert!(fast.frames_delivered > 5_000 && fast.frames_merged > 1_000);
    }

    #[test]
    fn a_lost_eom_merges_two_frames() {
        let mut r = Reassembly::default();
        let mut cells = frame(0, 0, 12);
        cells.pop(); // EOM of frame 0 lost
        cells.extend(frame(0, 1, 12));
        cells.extend(frame(0, 2, 12));
        let outs: Vec<_> = cells.iter().map(|c| r.receive(c)).collect();
        assert_eq!(
            outs[22],
            Outcome::Merged {
                frame: 1,
                frames: 2,
                cells: 23
            }
        );
        assert_eq!(
            outs[34],
            Outcome::Delivered {
                frame: 2,
                cells: 12
            }
        );
        assert_eq!(r.frames_merged, 2);
        assert_eq!(r.cells_discarded, 23);
        assert_eq!(r.frames_delivered, 1);
    }
}
