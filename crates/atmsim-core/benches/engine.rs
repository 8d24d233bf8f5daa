//! `cargo bench -p atmsim-core`: cells per wall-second of the core alone on
//! the `mux_onoff` scenario (10 geometric on/off sources, load 0.9, one
//! 1000-cell port, 30 s). `atmsim bench` measures the same through Python.

use atmsim_core::{Scenario, Simulation};
use std::time::Instant;

fn mux_onoff() -> Scenario {
    let link_cps = 155.52e6 / 424.0;
    let peak = 0.2 * link_cps;
    let mean = 0.09 * link_cps;
    let vcs: Vec<String> = (0..10)
        .map(|i| format!(r#"{{"name":"s{i}","class":"ubr","links":[0]}}"#))
        .collect();
    let sources: Vec<String> = (0..10)
        .map(|i| {
            format!(
                r#"{{"name":"s{i}","vc":{i},"model":{{"kind":"geometric_onoff","peak_cps":{peak},"mean_cps":{mean},"mean_burst_cells":100.0}}}}"#
            )
        })
        .collect();
    let json = format!(
        r#"{{"duration_ps":30000000000000,"seed":1,
        "nodes":[{{"name":"mux","kind":"host"}},{{"name":"sink","kind":"host"}}],
        "links":[{{"name":"mux->sink","from":0,"to":1,"bit_rate_bps":155520000.0,"cell_rate_cps":{link_cps},
                   "delay_ps":0,"buffer_cells":1000,"policy":{{"kind":"tail"}}}}],
        "vcs":[{}],"sources":[{}]}}"#,
        vcs.join(","),
        sources.join(",")
    );
    serde_json::from_str(&json).unwrap()
}

fn main() {
    let sc = mux_onoff();
    let mut best = f64::MAX;
    let mut cells = 0;
    let mut events = 0;
    for _ in 0..3 {
        let mut sim = Simulation::new(&sc).unwrap();
        let t0 = Instant::now();
        sim.run();
        let (summary, _) = sim.finish();
        let wall = t0.elapsed().as_secs_f64();
        assert!(summary.conservation.ok);
        best = best.min(wall);
        cells = summary.conservation.cells_generated;
        events = summary.events;
    }
    println!(
        "mux_onoff: {cells} cells, {events} events, best wall {best:.3} s: {:.3e} cells/s, {:.3e} events/s",
        cells as f64 / best,
        events as f64 / best
    );
}
