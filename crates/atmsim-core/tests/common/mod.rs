//! What the integration tests share: units, and running a scenario to its
//! end with its ledgers checked.
#![allow(dead_code)] // each test file uses part of it

use atmsim_core::atm::CELL_BITS;
use atmsim_core::stats::Summary;
use atmsim_core::{Scenario, Simulation};
use serde_json::Value;

/// Cells/s of a 155.52 Mb/s link.
pub const OC3_CPS: f64 = 155.52e6 / CELL_BITS;
/// Picoseconds per millisecond and per second.
pub const MS: u64 = 1_000_000_000;
pub const S: u64 = 1_000 * MS;

/// Runs `sc` to its end; its conservation ledgers (cells, packets, bytes)
/// must balance.
pub fn run(sc: &Scenario) -> Summary {
    let mut sim = Simulation::new(sc).unwrap();
    sim.run();
    let (s, _) = sim.finish();
    assert!(s.conservation.ok, "{:#?}", s.conservation);
    assert!(s.conservation.bytes.ok && s.conservation.packets.ok);
    s
}

/// `a` with the keys of object `b` set over it.
pub fn merge(mut a: Value, b: Value) -> Value {
    for (k, v) in b.as_object().unwrap() {
        a[k] = v.clone();
    }
    a
}
