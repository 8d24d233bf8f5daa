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

/// Runs `sc` in slices ending at `stops` (the last at or after its end)
/// with the fast paths as the scenario says and again with them off:
/// the summaries (but for the events dispatched) and the series must be
/// equal. Returns the events of the fast run and of the plain one.
pub fn same_both_ways(sc: &Scenario, stops: &[u64]) -> (u64, u64) {
    let sliced = |sc: &Scenario| {
        let mut sim = Simulation::new(sc).unwrap();
        for &t in stops {
            sim.advance(t.min(sc.duration_ps));
        }
        sim.advance(sc.duration_ps);
        let events = sim.events();
        let (s, series) = sim.finish();
        assert!(s.conservation.ok, "{:#?}", s.conservation);
        let mut s = serde_json::to_value(&s).unwrap();
        s.as_object_mut().unwrap().remove("events");
        let series = (series.time_s, series.entity, series.metric, series.value);
        (s, format!("{series:?}"), events)
    };
    let fast = sliced(sc);
    let mut plain_sc = sc.clone();
    plain_sc.fast_paths = false;
    let plain = sliced(&plain_sc);
    assert_eq!(fast.0, plain.0);
    assert_eq!(fast.1, plain.1);
    (fast.2, plain.2)
}
