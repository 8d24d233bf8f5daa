//! The ATM layer's parameters: the rates of a link and how a switch
//! output port takes the cells that reach it together.

use crate::cell::CELL_BITS;
use crate::param::Reals;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Line rate of a link, ATM or IP: [1 kbit/s, 1 Tbit/s].
pub const BIT_RATE_BPS: Reals = Reals {
    min: 1e3,
    min_open: false,
    max: 1e12,
};
/// Cell rate of an ATM link: the line rate / 424 bits, or with SONET the
/// payload (26/27 of the line rate, 149.76 of 155.52 Mbit/s) / 424, from
/// the least line rate to the greatest. Computed in the same order as the
/// Python layer, so its smallest rate is this bound exactly.
pub const CELL_RATE_CPS: Reals = Reals {
    min: BIT_RATE_BPS.min * 26.0 / 27.0 / CELL_BITS,
    min_open: false,
    max: BIT_RATE_BPS.max / CELL_BITS,
};

/// How a switch output port takes the cells that reach it together.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Arbitration {
    /// In cell slots: the cells that reach a switch over links within one
    /// cell time of an output port contend for it together at the end of
    /// that slot, in a random order of their inputs drawn per slot from the
    /// run's seed (an output-queued switch, Karol, Hluchyj and Morgan 1987;
    /// see `atm::slot_arrival`). Cells that a node's own end systems send
    /// enter its ports when they are sent.
    #[default]
    Slotted,
    /// In continuous time: each cell enters its port when it arrives; only
    /// arrivals at the same picosecond go in a random order. Inputs at
    /// one rate keep fixed sub-cell phase offsets, so at a full buffer the
    /// same input can win every freed place. For comparison.
    Random,
    /// In continuous time, arrivals at the same picosecond in the order
    /// they were scheduled: one fixed order. For comparison.
    SchedulingOrder,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cell_rate_bounds_follow_the_line_rate_bounds() {
        // 1 kbit/s with SONET: 1000 x 26/27 / 424 cells/s; 1 Tbit/s: 10^12 / 424.
        assert!((CELL_RATE_CPS.min - 2.271_139_8).abs() < 1e-6);
        assert_eq!(CELL_RATE_CPS.max, 1e12 / CELL_BITS);
    }
}
