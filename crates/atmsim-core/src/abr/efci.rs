//! Binary EFCI marking (TCP over FMMRA (An et al., 1998); ATM Forum TM 4.0):
//! once the ABR queue exceeds the high threshold, set EFCI on the ABR data
//! cells offered to the port until the queue falls below the low threshold.
//! Sources react through the destination's CI bit (rule 8).

use super::algorithm::{AlgorithmStats, PortState, SwitchAlgorithm};
use super::is_rm;
use crate::atm::cell::{Cell, EFCI};
use crate::engine::Time;

/// EFCI with hysteresis.
pub struct Efci {
    high: u32,
    low: u32,
    /// True while marking.
    pub congested: bool,
}

impl Efci {
    /// Marks above `high` cells until the queue is below `low` cells.
    pub fn new(high: u32, low: u32) -> Self {
        Efci {
            high,
            low,
            congested: false,
        }
    }

    /// Updates the state for an ABR queue of `q` cells.
    pub fn observe(&mut self, q: u32) -> bool {
        if q > self.high {
            self.congested = true;
        } else if q < self.low {
            self.congested = false;
        }
        self.congested
    }
}

impl SwitchAlgorithm for Efci {
    fn name(&self) -> &'static str {
        "efci"
    }

    fn on_cell(
        &mut self,
        _now: Time,
        cell: &mut Cell,
        abr: bool,
        _priority: usize,
        port: &PortState,
    ) {
        if abr && !is_rm(cell) && self.observe(port.abr_queue) {
            cell.flags |= EFCI;
        }
    }

    fn on_brm(&mut self, _now: Time, _cell: &mut Cell, _port: &PortState) {}

    /// EFCI acts on the queue, which these cells are part of already.
    fn on_reverse_brm(&mut self, _now: Time, _port: &PortState) {}

    fn stats(&self) -> AlgorithmStats {
        AlgorithmStats::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hysteresis() {
        let mut e = Efci::new(100, 50);
        let seq = [10, 100, 101, 80, 50, 49, 60, 101];
        let got: Vec<bool> = seq.iter().map(|&q| e.observe(q)).collect();
        assert_eq!(
            got,
            vec![false, false, true, true, true, false, false, true]
        );
        // Equal thresholds: on above, off below, unchanged at the threshold.
        let mut e = Efci::new(100, 100);
        let got: Vec<bool> = [101, 100, 99, 100].iter().map(|&q| e.observe(q)).collect();
        assert_eq!(got, vec![true, true, false, false]);
    }

    #[test]
    fn marks_only_abr_data_cells() {
        let mut e = Efci::new(0, 0);
        let p = PortState {
            link_cps: 1.0,
            abr_queue: 5,
        };
        let mut d = Cell::data(0, 0, 1, true);
        e.on_cell(0, &mut d, true, 2, &p);
        assert!(d.flags & EFCI != 0);
        let mut u = Cell::data(1, 0, 1, true);
        e.on_cell(0, &mut u, false, 2, &p);
        assert!(u.flags & EFCI == 0);
        let mut rm = crate::abr::forward_rm(0, 1.0, 1.0, 0.0);
        e.on_cell(0, &mut rm, true, 2, &p);
        assert!(rm.flags & EFCI == 0);
    }
}
