//! The ABR destination end system (TM 4.0 destination behaviour): remembers the EFCI bit of the
//! last data cell and turns forward RM cells around, with CI set when that
//! bit was set.

use super::turn_around;
use crate::atm::cell::{Cell, EFCI};

/// The destination end system of one VC.
#[derive(Clone, Debug, Default)]
pub struct DestinationEndSystem {
    efci: bool,
    /// Forward RM cells turned around.
    pub turned: u64,
}

impl DestinationEndSystem {
    /// A data cell arrived.
    #[inline]
    pub fn on_data(&mut self, cell: &Cell) {
        self.efci = cell.flags & EFCI != 0;
    }

    /// A forward RM cell arrived: the backward RM cell to send.
    pub fn on_frm(&mut self, frm: &Cell) -> Cell {
        let b = turn_around(frm, self.efci);
        self.efci = false;
        self.turned += 1;
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abr::{ci, forward_rm};

    #[test]
    fn efci_state_becomes_ci_once() {
        let mut d = DestinationEndSystem::default();
        let mut data = Cell::data(0, 0, 1, true);
        data.flags |= EFCI;
        d.on_data(&data);
        let f = forward_rm(0, 1.0, 2.0, 0.0);
        assert!(ci(&d.on_frm(&f)));
        assert!(!ci(&d.on_frm(&f)));
        // The last data cell decides: a clear one after a marked one clears it.
        d.on_data(&data);
        d.on_data(&Cell::data(0, 1, 1, true));
        assert!(!ci(&d.on_frm(&f)));
    }
}
