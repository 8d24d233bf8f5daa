//! Delay statistics (`probes.delay`) against what is known exactly or in
//! closed form: the cell transfer delay of a VC over an empty path, the
//! M/D/1 queue's mean wait (Pollaczek-Khinchine), the RTT and segment delay
//! of a TCP flow over an uncongested path; and the same results with the
//! fast paths off.

use atmsim_core::stats::{DelaySummary, Summary};
use atmsim_core::Scenario;
use serde_json::{json, Value};

mod common;
use common::{run, MS, OC3_CPS, S};

const OC3_BPS: f64 = 155.52e6;

/// One OC-3 cell time, ps, as the ports round it.
fn cell_ps() -> u64 {
    (1e12 / OC3_CPS).round() as u64
}

/// A chain of `hops` OC-3 links of `delay_ps` each (unlimited buffers,
/// tail drop), one UBR VC per source model along all of them.
fn chain(hops: u32, delay_ps: u64, models: Vec<Value>, secs: f64, arbitration: &str) -> Scenario {
    let nodes: Vec<Value> = (0..=hops)
        .map(|i| json!({"name": format!("n{i}")}))
        .collect();
    let links: Vec<Value> = (0..hops)
        .map(|i| {
            json!({"name": format!("l{i}"), "from": i, "to": i + 1, "bit_rate_bps": OC3_BPS,
                   "cell_rate_cps": OC3_CPS, "delay_ps": delay_ps, "buffer_cells": null,
                   "policy": {"kind": "tail"}})
        })
        .collect();
    let path: Vec<u32> = (0..hops).collect();
    let vcs: Vec<Value> = (0..models.len())
        .map(|i| json!({"name": format!("v{i}"), "class": "ubr", "links": path}))
        .collect();
    let sources: Vec<Value> = models
        .into_iter()
        .enumerate()
        .map(|(i, m)| json!({"name": format!("s{i}"), "vc": i, "model": m}))
        .collect();
    serde_json::from_value(json!({
        "duration_ps": (secs * 1e12) as u64, "seed": 1, "nodes": nodes, "links": links,
        "vcs": vcs, "sources": sources, "probes": {"delay": true}, "arbitration": arbitration}))
    .unwrap()
}

/// Runs `sc` with the fast paths on and off: the summaries must be the same
/// (apart from the event count); returns the first.
fn run_both(sc: &Scenario) -> Summary {
    let fast = run(sc);
    let mut plain_sc = sc.clone();
    plain_sc.fast_paths = false;
    let plain = run(&plain_sc);
    for (a, b) in [
        (
            serde_json::to_value(&fast.vcs),
            serde_json::to_value(&plain.vcs),
        ),
        (
            serde_json::to_value(&fast.flows),
            serde_json::to_value(&plain.flows),
        ),
    ] {
        assert_eq!(a.unwrap(), b.unwrap());
    }
    fast
}

fn ctd(s: &Summary, v: usize) -> &DelaySummary {
    s.vcs[v].ctd.as_ref().expect("a CTD summary")
}

#[test]
fn cbr_over_an_empty_path_takes_transmission_plus_propagation() {
    // A CBR VC at a tenth of OC-3 over two 1 ms links, alone: each cell
    // waits nowhere, so its CTD is two cell times and 2 ms exactly, every
    // cell (random arbitration: the second port takes it when it arrives),
    // and its CDV is 0.
    let sc = chain(
        2,
        MS,
        vec![json!({"kind": "cbr", "rate_cps": OC3_CPS / 10.0})],
        0.2,
        "random",
    );
    let s = run_both(&sc);
    let d = ctd(&s, 0);
    let exact = (2 * cell_ps() + 2 * MS) as f64 / 1e12;
    assert_eq!(d.count, s.vcs[0].cells_delivered);
    assert!(d.count > 7000);
    for v in [d.min_s, d.max_s, d.mean_s, d.p50_s, d.p95_s, d.p99_s] {
        assert!((v - exact).abs() < 1e-15, "{v} vs {exact}");
    }
    assert_eq!((d.std_s, d.p2p_cdv_s), (0.0, 0.0));
}

#[test]
fn md1_mean_wait_follows_pollaczek_khinchine() {
    // Poisson cells at load 0.8 into one OC-3 port with an unlimited
    // buffer and no propagation delay (scenarios/md1.toml): an M/D/1
    // queue. Pollaczek-Khinchine: mean wait rho / (2 (1 - rho)) service
    // times = 2 cell times; the CTD adds the cell's own transmission: 3.
    let rho = 0.8;
    let sc = chain(
        1,
        0,
        vec![json!({"kind": "poisson", "rate_cps": rho * OC3_CPS})],
        2.0,
        "slotted",
    );
    let s = run_both(&sc);
    let d = ctd(&s, 0);
    let ct = cell_ps() as f64 / 1e12;
    let expect = ct * (1.0 + rho / (2.0 * (1.0 - rho)));
    assert!(
        (d.mean_s / expect - 1.0).abs() < 0.03,
        "mean CTD {} vs {expect}",
        d.mean_s
    );
    assert!((d.min_s - ct).abs() < 1e-15, "least CTD is one cell time");
    assert!(d.p50_s <= d.p95_s && d.p95_s <= d.p99_s && d.p99_s <= d.max_s);
    assert!(d.std_s > 0.0 && d.p2p_cdv_s > 0.0);
}

#[test]
fn on_off_sources_on_a_lazy_link_give_the_same_delays_both_ways() {
    // Merged sources into one lazy link, queueing: the fast paths skip the
    // per-cell events, yet the delays are the plain path's.
    let m = json!({"kind": "geometric_onoff", "peak_cps": 0.3 * OC3_CPS,
                   "mean_cps": 0.09 * OC3_CPS, "mean_burst_cells": 100.0});
    let sc = chain(1, MS, vec![m; 10], 0.5, "random");
    let s = run_both(&sc);
    for v in 0..10 {
        let d = ctd(&s, v);
        assert_eq!(d.count, s.vcs[v].cells_delivered);
        assert!(d.max_s > d.min_s);
    }
}

#[test]
fn without_the_probe_nothing_is_reported() {
    let mut sc = chain(
        1,
        MS,
        vec![json!({"kind": "cbr", "rate_cps": 1000.0})],
        0.1,
        "random",
    );
    sc.probes.delay = false;
    let s = run(&sc);
    assert!(s.vcs[0].ctd.is_none());
    let v = serde_json::to_value(&s.vcs[0]).unwrap();
    assert!(v.get("ctd").is_none());
}

/// One TCP flow s -> r1 -> r2 -> d over IP (1 Gb/s 1 ms access links, a
/// 100 Mb/s 10 ms core), fine timer, window `window` bytes.
fn ip_flow(window: u64, secs: u64) -> Scenario {
    let link = |name: &str, from: u32, to: u32, bps: f64, delay: u64| {
        json!({"name": name, "layer": "ip", "from": from, "to": to, "bit_rate_bps": bps,
               "delay_ps": delay, "buffer_packets": null, "policy": {"kind": "tail"}})
    };
    let links = vec![
        link("s-r1", 0, 1, 1e9, MS),
        link("r1-r2", 1, 2, 100e6, 10 * MS),
        link("r2-d", 2, 3, 1e9, MS),
        link("d-r2", 3, 2, 1e9, MS),
        link("r2-r1", 2, 1, 100e6, 10 * MS),
        link("r1-s", 1, 0, 1e9, MS),
    ];
    let tcp = json!({"variant": "reno", "mss_bytes": 1000, "rcv_window_bytes": window,
        "window_scale": 0, "initial_cwnd_segments": 1, "initial_ssthresh_bytes": null,
        "timer": {"kind": "fine"}, "initial_rto_ps": 3 * S, "min_rto_ps": 200 * MS,
        "max_rto_ps": 64 * S, "delayed_ack_ps": 0, "app_bytes": null, "max_sack_blocks": 3});
    let flow = common::merge(
        tcp,
        json!({"name": "f", "layer": "ip", "data_links": [0, 1, 2],
               "ack_links": [3, 4, 5], "start_ps": 0}),
    );
    let nodes: Vec<Value> = ["s", "r1", "r2", "d"]
        .iter()
        .map(|n| json!({"name": n}))
        .collect();
    serde_json::from_value(json!({
        "duration_ps": secs * S, "seed": 1, "nodes": nodes, "links": links, "vcs": [],
        "sources": [], "flows": [flow], "probes": {"delay": true}}))
    .unwrap()
}

#[test]
fn rtt_samples_over_an_uncongested_path_equal_the_base_rtt() {
    // A window of one segment: stop and wait, nothing ever queues. Each
    // segment takes 12 ms and its transmissions (1040 bytes at 1 Gb/s,
    // 100 Mb/s, 1 Gb/s); its ACK 12 ms and 40 bytes at each rate.
    let sc = ip_flow(1000, 2);
    let s = run_both(&sc);
    let f = &s.flows[0];
    let tx = |bytes: f64| bytes * 8.0 / 1e9 * 2.0 + bytes * 8.0 / 100e6;
    let one_way = 0.012 + tx(1040.0);
    let base = one_way + 0.012 + tx(40.0);
    let rtt = f.rtt.as_ref().expect("RTT samples");
    assert!(rtt.count > 50, "{} samples", rtt.count);
    for v in [rtt.min_s, rtt.max_s, rtt.mean_s] {
        assert!((v - base).abs() < 1e-9, "RTT {v} vs {base}");
    }
    let d = f.delay.as_ref().expect("segment delays");
    assert_eq!(d.count, f.segments_sent);
    for v in [d.min_s, d.max_s, d.mean_s, d.p99_s] {
        assert!((v - one_way).abs() < 1e-9, "delay {v} vs {one_way}");
    }
    assert_eq!(d.std_s, 0.0);
}

#[test]
fn a_queueing_flow_has_its_delays_both_ways() {
    // A 64 kB window: slow start's bursts queue at the 100 Mb/s core, so
    // the segments' delays spread, and the eager ends (fast paths) measure
    // what the plain path does. (The timed segments here never wait: the
    // RTT samples need not spread.)
    let sc = ip_flow(64_000, 2);
    let s = run_both(&sc);
    let f = &s.flows[0];
    let d = f.delay.as_ref().unwrap();
    let rtt = f.rtt.as_ref().unwrap();
    assert!(d.max_s > d.min_s && d.std_s > 0.0, "{d:?}");
    assert!(
        rtt.count > 50 && rtt.min_s > 2.0 * d.min_s * 0.99,
        "{rtt:?}"
    );
}
