//! `cargo bench -p atmsim-core`: the core alone on
//! - `mux_onoff` (10 geometric on/off sources, load 0.9, one 1000-cell port,
//!   30 s): cells per wall-second;
//! - an IP dumbbell (5 Reno flows, MSS 1000, through a 155.52 Mb/s, 20 ms,
//!   100-packet drop-tail bottleneck, 20 s): packets per wall-second.
//!
//! `atmsim bench` measures the same through Python. Add `plain` to run them
//! with the fast paths off: `cargo bench -p atmsim-core -- mux plain`.

use atmsim_core::stats::Summary;
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

fn dumbbell() -> Scenario {
    let ms: u64 = 1_000_000_000;
    let mut nodes = vec![
        r#"{"name":"r1"}"#.to_string(),
        r#"{"name":"r2"}"#.to_string(),
    ];
    let mut links = vec![];
    let mut link = |name: String, from: usize, to: usize, bps: f64, delay: u64, buf: &str| {
        links.push(format!(
            r#"{{"name":"{name}","layer":"ip","from":{from},"to":{to},"bit_rate_bps":{bps},"delay_ps":{delay},"buffer_packets":{buf},"policy":{{"kind":"tail"}}}}"#
        ));
        links.len() - 1
    };
    let core = link("r1-r2".into(), 0, 1, 155.52e6, 20 * ms, "100");
    let back = link("r2-r1".into(), 1, 0, 155.52e6, 20 * ms, "100");
    let mut flows = vec![];
    for i in 0..5 {
        nodes.push(format!(r#"{{"name":"s{i}"}}"#));
        nodes.push(format!(r#"{{"name":"d{i}"}}"#));
        let (s, d) = (2 + 2 * i, 3 + 2 * i);
        let a = link(format!("s{i}-r1"), s, 0, 1e9, ms, "null");
        let ab = link(format!("r1-s{i}"), 0, s, 1e9, ms, "null");
        let b = link(format!("r2-d{i}"), 1, d, 1e9, ms, "null");
        let bb = link(format!("d{i}-r2"), d, 1, 1e9, ms, "null");
        flows.push(format!(
            r#"{{"name":"f{i}","layer":"ip","data_links":[{a},{core},{b}],"ack_links":[{bb},{back},{ab}],
            "start_ps":{start},"variant":"reno","mss_bytes":1000,"rcv_window_bytes":262144,"window_scale":3,
            "initial_cwnd_segments":1,"initial_ssthresh_bytes":null,"timer":{{"kind":"fine"}},
            "initial_rto_ps":3000000000000,"min_rto_ps":200000000000,"max_rto_ps":64000000000000,
            "delayed_ack_ps":0,"app_bytes":null,"max_sack_blocks":3}}"#,
            start = i as u64 * 10 * ms
        ));
    }
    let json = format!(
        r#"{{"duration_ps":20000000000000,"seed":1,"nodes":[{}],"links":[{}],"vcs":[],"sources":[],"flows":[{}]}}"#,
        nodes.join(","),
        links.join(","),
        flows.join(",")
    );
    serde_json::from_str(&json).unwrap()
}

fn main() {
    // `cargo bench -p atmsim-core -- mux` or `-- dumbbell` runs one of them;
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    // `plain` runs them with the fast paths off (every cell and packet on
    // the plain event path).
    let plain = only.iter().any(|o| o == "plain");
    let only: Vec<&String> = only.iter().filter(|o| *o != "plain").collect();
    let want = |name: &str| only.is_empty() || only.iter().any(|o| name.contains(o.as_str()));
    if want("dumbbell") {
        bench_dumbbell(plain);
    }
    if want("mux") {
        bench_mux(plain);
    }
}

fn bench_dumbbell(plain: bool) {
    let mut sc = dumbbell();
    sc.fast_paths = !plain;
    let (best, summary) = best_of_3(&sc);
    report(
        "ip dumbbell",
        "packets",
        summary.conservation.packets.generated,
        summary.events,
        best,
    );
}

fn bench_mux(plain: bool) {
    let mut sc = mux_onoff();
    sc.fast_paths = !plain;
    let (best, summary) = best_of_3(&sc);
    report(
        "mux_onoff",
        "cells",
        summary.conservation.cells_generated,
        summary.events,
        best,
    );
}

/// Runs `sc` three times; the best wall time and the last summary.
fn best_of_3(sc: &Scenario) -> (f64, Summary) {
    let mut best = f64::MAX;
    let mut last = None;
    for _ in 0..3 {
        let mut sim = Simulation::new(sc).unwrap();
        let t0 = Instant::now();
        sim.run();
        let (summary, _) = sim.finish();
        best = best.min(t0.elapsed().as_secs_f64());
        assert!(summary.conservation.ok);
        last = Some(summary);
    }
    (best, last.unwrap())
}

fn report(name: &str, unit: &str, count: u64, events: u64, wall: f64) {
    println!(
        "{name}: {count} {unit}, {events} events, best wall {wall:.3} s: {:.3e} {unit}/s, {:.3e} events/s",
        count as f64 / wall,
        events as f64 / wall
    );
}
