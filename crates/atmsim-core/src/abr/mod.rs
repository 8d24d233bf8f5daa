//! ABR (ATM Forum Traffic Management Specification 4.0; TCP over ABR
//! (Kalyanaraman et al., 1996), ABR and UBR buffering (Kalyanaraman et al.,
//! 1998) and TCP over FMMRA (An et al., 1998)): the source and destination end
//! systems of TM 4.0 and the switch algorithms that write explicit rates or set
//! congestion bits: ERICA, ERICA+, EFCI and FMMRA; [`params`] declares their
//! parameters' ranges and checks.
//!
//! Not here: the queueing of cells (see [`crate::atm::port`]) and their
//! routing (see [`crate::sim`]). A switch algorithm is attached to an output
//! port; it sees every cell offered to the port, and every backward RM cell
//! of the VCs whose forward direction leaves through that port as it passes
//! the switch on its way back.

pub mod algorithm;
pub mod des;
pub mod efci;
pub mod erica;
pub mod erica_plus;
pub mod fmmra;
pub mod params;
pub mod ses;

pub use algorithm::{AlgorithmSpec, PortState, SwitchAlgorithm};
pub use des::DestinationEndSystem;
pub use ses::{AbrParams, SourceEndSystem};

use crate::atm::cell::{Cell, BN, CI, DIR_BACKWARD, NI, RM};

/// True for a resource-management cell.
#[inline]
pub fn is_rm(cell: &Cell) -> bool {
    cell.flags & RM != 0
}

/// True for a backward RM cell.
#[inline]
pub fn is_brm(cell: &Cell) -> bool {
    cell.flags & (RM | DIR_BACKWARD) == (RM | DIR_BACKWARD)
}

/// True for a forward RM cell.
#[inline]
pub fn is_frm(cell: &Cell) -> bool {
    cell.flags & (RM | DIR_BACKWARD) == RM
}

/// A forward RM cell of VC `vc` (rule 7): CCR = ACR, ER = PCR, CI = NI = 0.
pub fn forward_rm(vc: u32, acr: f64, pcr: f64, mcr: f64) -> Cell {
    Cell {
        vc,
        frame: 0,
        frame_len: 1,
        hop: 0,
        flags: RM,
        er: pcr as f32,
        ccr: acr as f32,
        mcr: mcr as f32,
    }
}

/// The destination's turn-around of `frm` (TM 4.0 destination behaviour): DIR = backward,
/// BN = 0, fields copied, CI set when `congested`.
pub fn turn_around(frm: &Cell, congested: bool) -> Cell {
    let mut b = *frm;
    b.flags = (b.flags | DIR_BACKWARD) & !BN;
    if congested {
        b.flags |= CI;
    }
    b.hop = 0;
    b
}

/// Congestion indication of an RM cell.
#[inline]
pub fn ci(cell: &Cell) -> bool {
    cell.flags & CI != 0
}

/// No-increase bit of an RM cell.
#[inline]
pub fn ni(cell: &Cell) -> bool {
    cell.flags & NI != 0
}

/// Backward-notification bit of an RM cell.
#[inline]
pub fn bn(cell: &Cell) -> bool {
    cell.flags & BN != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turn_around_keeps_fields_and_sets_ci() {
        let f = forward_rm(3, 1000.0, 366_000.0, 0.0);
        assert!(is_frm(&f) && !is_brm(&f));
        let b = turn_around(&f, true);
        assert!(is_brm(&b) && ci(&b) && !bn(&b));
        assert_eq!((b.vc, b.er, b.ccr), (3, f.er, f.ccr));
        assert!(!ci(&turn_around(&f, false)));
    }
}
