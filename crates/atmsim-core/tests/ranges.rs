//! The ranges `Scenario::check` enforces (the decided ranges of every
//! scenario value, `atmsim_core::scenario::limits`): at each end of each
//! range the value is accepted, just outside it is rejected with an error
//! naming its JSON path. The base scenario uses every kind of object: ATM
//! links with each switch algorithm and each ATM policy, IP links with RED
//! and each buffer unit, an ABR VC, a source of each model, an ATM and an IP
//! flow, and probes.

use atmsim_core::atm::CELL_BITS;
use atmsim_core::scenario::{self, Scenario};
use atmsim_core::Simulation;
use serde_json::{json, Value};

const S: u64 = 1_000_000_000_000;
const MAX_TIME: u64 = 1_000_000 * S;
const OC3_CPS: f64 = 155.52e6 / CELL_BITS;
const MIN_CELL_RATE: f64 = 1e3 * 26.0 / 27.0 / CELL_BITS;
const MAX_CELL_RATE: f64 = 1e12 / CELL_BITS;

fn atm_link(from: u32, to: u32, policy: Value, algorithm: Value) -> Value {
    json!({"name": format!("l{from}-{to}"), "from": from, "to": to, "bit_rate_bps": 155.52e6,
           "cell_rate_cps": OC3_CPS, "delay_ps": 1_000_000_000u64, "buffer_cells": 1000,
           "policy": policy, "algorithm": algorithm})
}

fn tcp(name: &str) -> Value {
    json!({"name": name, "variant": "reno", "mss_bytes": 512, "rcv_window_bytes": 65536,
           "window_scale": 1, "initial_cwnd_segments": 1, "initial_ssthresh_bytes": null,
           "timer": {"kind": "coarse", "tick_ps": 100_000_000_000u64},
           "initial_rto_ps": 3 * S, "min_rto_ps": 200_000_000_000u64, "max_rto_ps": 64 * S,
           "delayed_ack_ps": 0, "processing_ps": 0, "processing_jitter_ps": 0, "start_ps": 0,
           "app_bytes": null, "max_sack_blocks": 3})
}

fn merge(mut a: Value, b: Value) -> Value {
    for (k, v) in b.as_object().unwrap() {
        a[k] = v.clone();
    }
    a
}

/// Nodes h0, s, h1 (ATM) and r0, r1 (IP). Links 0: h0->s (ERICA, tail),
/// 1: s->h1 (ERICA+, EPD), 2: h1->s (EFCI, intelligent tail, unlimited),
/// 3: s->h0 (FMMRA, PPD), 4: r0->r1 (IP, bytes, RED), 5: r1->r0 (IP,
/// packets, tail). VCs 0-5 carry one source each over [0]; VC 6 is ABR over
/// [0, 1] back [2, 3]; VCs 7 and 8 carry flow 0; flow 1 runs over IP.
fn base() -> Value {
    let erica = json!({"kind": "erica", "target_utilization": 0.9, "interval_ps": 1_000_000_000u64,
                       "interval_cells": 100, "delta": 0.1, "measured_rate": false,
                       "bidirectional_count": false});
    let erica_plus = json!({"kind": "erica_plus", "interval_ps": 5_000_000_000u64,
                            "interval_cells": 100, "delta": 0.1, "measured_rate": false,
                            "bidirectional_count": false, "t0_ps": 1_500_000_000u64,
                            "a": 1.15, "b": 1.0, "qdlf": 0.5});
    let efci = json!({"kind": "efci", "high_cells": 300, "low_cells": 200});
    let fmmra = json!({"kind": "fmmra", "interval_ps": 1_000_000_000u64, "interval_cells": 100});
    let mut links = vec![
        atm_link(0, 1, json!({"kind": "tail"}), erica),
        atm_link(1, 2, json!({"kind": "epd", "threshold": 100}), erica_plus),
        atm_link(
            2,
            1,
            json!({"kind": "intelligent_tail", "threshold": 500}),
            efci,
        ),
        atm_link(1, 0, json!({"kind": "ppd", "keep_eom": true}), fmmra),
    ];
    links[2]["buffer_cells"] = Value::Null;
    links.push(
        json!({"name": "r0-r1", "layer": "ip", "from": 3, "to": 4, "bit_rate_bps": 10e6,
                      "cell_rate_cps": 0.0, "delay_ps": 1_000_000_000u64, "buffer_cells": null,
                      "buffer_packets": null, "buffer_bytes": 100_000,
                      "policy": {"kind": "red", "min_th": 5000.0, "max_th": 15000.0,
                                 "w_q": 0.002, "max_p": 0.02}}),
    );
    links.push(
        json!({"name": "r1-r0", "layer": "ip", "from": 4, "to": 3, "bit_rate_bps": 10e6,
                      "delay_ps": 0, "buffer_packets": 100, "policy": {"kind": "tail"}}),
    );
    let ubr = |name: &str, links: Value| json!({"name": name, "class": "ubr", "links": links});
    let abr = json!({"pcr_cps": OC3_CPS, "mcr_cps": 0.0, "icr_cps": 23_585.0, "rif": 1.0,
                     "rdf": 0.001953125, "nrm": 32, "mrm": 2, "trm_ps": S / 10, "crm": 16,
                     "cdf": 0.5, "adtf_ps": S / 2, "tcr_cps": 10.0});
    let mut vcs: Vec<Value> = (0..6).map(|i| ubr(&format!("v{i}"), json!([0]))).collect();
    vcs.push(
        json!({"name": "abr", "class": "abr", "links": [0, 1], "back_links": [2, 3],
                    "abr": abr}),
    );
    vcs.push(ubr("data", json!([0, 1])));
    vcs.push(ubr("ack", json!([2, 3])));
    let models = [
        json!({"kind": "cbr", "rate_cps": 1000.0}),
        json!({"kind": "poisson", "rate_cps": 1000.0}),
        json!({"kind": "vbr_onoff", "peak_cps": 1000.0, "on_ps": S, "off_ps": S,
               "distribution": "fixed"}),
        json!({"kind": "geometric_onoff", "peak_cps": 2000.0, "mean_cps": 1000.0,
               "mean_burst_cells": 100.0}),
        json!({"kind": "frames", "frame_cells": {"uniform": [2, 30]}, "rate_cps": 1000.0,
               "arrivals": "poisson"}),
        json!({"kind": "greedy"}),
    ];
    let mut sources: Vec<Value> = models
        .into_iter()
        .enumerate()
        .map(|(i, m)| {
            json!({"name": format!("s{i}"), "vc": i, "start_ps": S, "stop_ps": 2 * S,
                             "model": m})
        })
        .collect();
    sources.push(json!({"name": "a", "vc": 6, "model": {"kind": "greedy"}}));
    let flows = vec![
        merge(
            tcp("atm"),
            json!({"layer": "atm", "data_vc": 7, "ack_vc": 8,
                                 "data_links": [], "ack_links": []}),
        ),
        merge(
            tcp("ip"),
            json!({"layer": "ip", "data_vc": null, "ack_vc": null,
                                "data_links": [4], "ack_links": [5]}),
        ),
    ];
    let nodes: Vec<Value> = ["h0", "s", "h1", "r0", "r1"]
        .iter()
        .map(|n| json!({"name": n}))
        .collect();
    json!({"duration_ps": 10 * S, "seed": 1, "nodes": nodes, "links": links, "vcs": vcs,
           "sources": sources, "flows": flows,
           "probes": {"period_ps": S / 10, "queue": [0, 4], "utilization": [1], "vc_rate": [0],
                      "flows": [0, 1], "abr_vcs": [6], "abr_ports": [0, 1]}})
}

/// `Scenario::check` of `v` (read from the JSON value, so that every float
/// is exactly the one written here).
fn check(v: &Value) -> Result<(), String> {
    let sc: Scenario = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    sc.check()
}

/// `v` with the value at JSON pointer `at` set to `x` (its key added if
/// absent).
fn set(mut v: Value, at: &str, x: Value) -> Value {
    let (parent, key) = at.rsplit_once('/').unwrap();
    let parent = v
        .pointer_mut(parent)
        .unwrap_or_else(|| panic!("no {parent}"));
    match key.parse::<usize>() {
        Ok(k) => parent[k] = x,
        Err(_) => parent[key] = x,
    }
    v
}

/// `base()` with the value at JSON pointer `at` set to `x`.
fn with(at: &str, x: Value) -> Value {
    set(base(), at, x)
}

/// The JSON path `check` names for pointer `at`: /links/3/delay_ps ->
/// links[3].delay_ps.
fn json_path(at: &str) -> String {
    let mut out = String::new();
    for part in at.trim_start_matches('/').split('/') {
        if part.parse::<usize>().is_ok() {
            out.push_str(&format!("[{part}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(part);
        }
    }
    out
}

/// Each of `ok` is accepted at `at`, each of `bad` rejected with an error
/// naming the path (alone, or beside the value it is compared with).
fn edges(at: &str, ok: &[Value], bad: &[Value]) {
    edges_in(&base(), at, ok, bad)
}

/// `edges` in scenario `v`.
fn edges_in(v: &Value, at: &str, ok: &[Value], bad: &[Value]) {
    for x in ok {
        if let Err(e) = check(&set(v.clone(), at, x.clone())) {
            panic!("{at} = {x} was rejected: {e}");
        }
    }
    let path = json_path(at);
    for x in bad {
        match check(&set(v.clone(), at, x.clone())) {
            Ok(()) => panic!("{at} = {x} was accepted"),
            Err(e) => assert!(e.contains(&path), "{at} = {x}: {e:?} does not name {path}"),
        }
    }
}

fn up(x: f64) -> Value {
    json!(x.next_up())
}

fn down(x: f64) -> Value {
    json!(x.next_down())
}

#[test]
fn the_base_scenario_is_valid_and_runs() {
    check(&base()).unwrap();
    let sc = Scenario::from_json(&base().to_string()).unwrap();
    let mut sim = Simulation::new(&sc).unwrap();
    sim.advance(S / 2);
    let (s, _) = sim.finish();
    assert!(s.conservation.ok, "{:?}", s.conservation);
}

#[test]
fn run_and_counts() {
    edges(
        "/duration_ps",
        &[json!(1), json!(MAX_TIME)],
        &[json!(0), json!(MAX_TIME + 1)],
    );
    edges(
        "/probes/period_ps",
        &[json!(1000), json!(MAX_TIME)],
        &[json!(999), json!(MAX_TIME + 1)],
    );
    // No probes at all: period 0; a series without a period is rejected.
    let mut v = base();
    v["probes"] = json!({"period_ps": 0});
    check(&v).unwrap();
    assert!(check(&with("/probes/period_ps", json!(0)))
        .unwrap_err()
        .contains("probes.period_ps"));
    // At most 10^6 nodes (the same bound holds for links, VCs, sources, flows).
    let mut sc = Scenario::from_json(&base().to_string()).unwrap();
    let node = sc.nodes[0].clone();
    sc.nodes.resize(1_000_000, node.clone());
    sc.check().unwrap();
    sc.nodes.push(node);
    assert!(sc
        .check()
        .unwrap_err()
        .starts_with("nodes has 1000001 entries"));
}

#[test]
fn links() {
    let t = 1_000 * S;
    edges(
        "/links/0/delay_ps",
        &[json!(0), json!(t)],
        &[json!(t + 1), json!(u64::MAX)],
    );
    edges(
        "/links/3/cell_rate_cps",
        &[json!(MIN_CELL_RATE), json!(MAX_CELL_RATE)],
        &[down(MIN_CELL_RATE), up(MAX_CELL_RATE), json!(0.0)],
    );
    edges(
        "/links/3/bit_rate_bps",
        &[json!(1e3), json!(1e12)],
        &[down(1e3), up(1e12)],
    );
    edges(
        "/links/5/bit_rate_bps",
        &[json!(1e3), json!(1e12)],
        &[down(1e3), up(1e12), json!(0.001), json!(f64::MAX)],
    );
    let max_cells = u32::MAX as u64 - 1;
    edges(
        "/links/0/buffer_cells",
        &[json!(1), json!(max_cells)],
        &[json!(0), json!(u32::MAX)],
    );
    edges(
        "/links/5/buffer_packets",
        &[json!(1), json!(u32::MAX)],
        &[json!(0)],
    );
    edges(
        "/links/4/buffer_bytes",
        &[json!(1), json!(1u64 << 53)],
        &[json!(0), json!((1u64 << 53) + 1)],
    );
    // Thresholds: at most the buffer (1000 cells on link 1; unlimited on link 2).
    edges(
        "/links/1/policy/threshold",
        &[json!(1), json!(1000)],
        &[json!(0), json!(1001)],
    );
    edges(
        "/links/2/policy/threshold",
        &[json!(max_cells)],
        &[json!(u32::MAX)],
    );
    edges(
        "/links/4/policy/min_th",
        &[up(0.0), json!(14_999.0)],
        &[json!(0.0), json!(15_000.0)],
    );
    edges(
        "/links/4/policy/max_th",
        &[json!((1u64 << 53) as f64)],
        &[up((1u64 << 53) as f64), json!(5000.0)],
    );
    for key in ["w_q", "max_p"] {
        edges(
            &format!("/links/4/policy/{key}"),
            &[up(0.0), json!(1.0)],
            &[json!(0.0), up(1.0)],
        );
    }
}

#[test]
fn the_rate_and_delay_that_overflowed_are_rejected() {
    // An IP link at 0.001 bit/s made the port's fixed-point time per byte
    // overflow; a delay near u64::MAX overflowed arrival times.
    let e = check(&with("/links/5/bit_rate_bps", json!(0.001))).unwrap_err();
    assert_eq!(
        e,
        "links[5].bit_rate_bps = 0.001 is outside [1000.0, 1000000000000.0]"
    );
    let e = check(&with("/links/0/delay_ps", json!(u64::MAX))).unwrap_err();
    assert!(
        e.starts_with("links[0].delay_ps = 18446744073709551615 is outside"),
        "{e}"
    );
    // Simulation::new checks first: no network is built.
    let sc = Scenario::from_json(&with("/links/5/bit_rate_bps", json!(0.001)).to_string()).unwrap();
    assert!(Simulation::new(&sc).is_err());
}

#[test]
fn switch_algorithms() {
    let (lo, hi) = (1_000_000u64, 10 * S);
    for link in 0..2 {
        edges(
            &format!("/links/{link}/algorithm/interval_ps"),
            &[json!(lo), json!(hi)],
            &[json!(lo - 1), json!(hi + 1)],
        );
        edges(
            &format!("/links/{link}/algorithm/interval_cells"),
            &[json!(1), json!(1_000_000_000)],
            &[json!(0), json!(1_000_000_001)],
        );
        edges(
            &format!("/links/{link}/algorithm/delta"),
            &[json!(0.0), json!(10.0)],
            &[json!(-1e-300), up(10.0)],
        );
    }
    edges(
        "/links/3/algorithm/interval_ps",
        &[json!(lo), json!(hi)],
        &[json!(lo - 1), json!(hi + 1)],
    );
    edges(
        "/links/3/algorithm/interval_cells",
        &[json!(1)],
        &[json!(0)],
    );
    edges(
        "/links/0/algorithm/target_utilization",
        &[up(0.0), json!(1.0)],
        &[json!(0.0), up(1.0)],
    );
    edges(
        "/links/1/algorithm/t0_ps",
        &[json!(lo), json!(hi)],
        &[json!(lo - 1), json!(hi + 1)],
    );
    edges(
        "/links/1/algorithm/a",
        &[json!(1.0), json!(10.0)],
        &[down(1.0), up(10.0)],
    );
    edges(
        "/links/1/algorithm/b",
        &[up(0.0), json!(10.0)],
        &[json!(0.0), up(10.0)],
    );
    edges(
        "/links/1/algorithm/qdlf",
        &[up(0.0), json!(1.0)],
        &[json!(0.0), up(1.0)],
    );
    let max_cells = u32::MAX as u64 - 1;
    edges(
        "/links/2/algorithm/high_cells",
        &[json!(200), json!(max_cells)],
        &[json!(0), json!(u32::MAX)],
    );
    edges(
        "/links/2/algorithm/low_cells",
        &[json!(0), json!(300)],
        &[json!(301)],
    );
    // A switch algorithm is for ATM ports only.
    let e = check(&with(
        "/links/5/algorithm",
        json!({"kind": "efci", "high_cells": 1, "low_cells": 0}),
    ));
    assert!(e.unwrap_err().starts_with("links[5].algorithm"));
}

#[test]
fn abr_source_end_system() {
    let p = "/vcs/6/abr";
    edges(
        &format!("{p}/pcr_cps"),
        &[json!(23_585.0), json!(OC3_CPS)],
        &[json!(OC3_CPS * 1.000_001)],
    );
    // ICR and TCR at most PCR: with both at the least rate, so can PCR be.
    let mut tiny = base();
    for key in ["icr_cps", "tcr_cps"] {
        tiny = set(tiny, &format!("{p}/{key}"), up(0.0));
    }
    edges_in(
        &tiny,
        &format!("{p}/pcr_cps"),
        &[up(0.0)],
        &[json!(0.0), json!(-1.0)],
    );
    // Rates compared with another have the Python layer's relative
    // tolerance of 1e-12 (conversions between units round).
    edges(
        &format!("{p}/icr_cps"),
        &[json!(OC3_CPS * (1.0 + 1e-13))],
        &[json!(OC3_CPS * (1.0 + 1e-11))],
    );
    edges(
        &format!("{p}/mcr_cps"),
        &[json!(0.0), json!(OC3_CPS)],
        &[json!(-1e-300), json!(OC3_CPS * 1.000_001)],
    );
    for key in ["icr_cps", "tcr_cps"] {
        edges(
            &format!("{p}/{key}"),
            &[up(0.0), json!(OC3_CPS)],
            &[json!(0.0), json!(OC3_CPS * 1.000_001)],
        );
    }
    for key in ["rif", "rdf", "cdf"] {
        edges(
            &format!("{p}/{key}"),
            &[up(0.0), json!(1.0)],
            &[json!(0.0), up(1.0)],
        );
    }
    edges(
        &format!("{p}/nrm"),
        &[json!(2), json!(256)],
        &[json!(1), json!(257)],
    );
    edges(
        &format!("{p}/mrm"),
        &[json!(1), json!(32)],
        &[json!(0), json!(33)],
    );
    edges(
        &format!("{p}/trm_ps"),
        &[json!(S / 10_000), json!(MAX_TIME)],
        &[json!(S / 10_000 - 1), json!(MAX_TIME + 1)],
    );
    edges(
        &format!("{p}/crm"),
        &[json!(1), json!((1 << 24) - 1)],
        &[json!(0), json!(1 << 24)],
    );
    let (lo, hi) = (S / 100, 10_230 * S / 1000);
    edges(
        &format!("{p}/adtf_ps"),
        &[json!(lo), json!(hi)],
        &[json!(lo - 1), json!(hi + 1)],
    );
}

#[test]
fn sources() {
    edges(
        "/sources/0/start_ps",
        &[json!(0), json!(2 * S - 1)],
        &[json!(2 * S)],
    );
    edges(
        "/sources/0/stop_ps",
        &[json!(S + 1), json!(MAX_TIME)],
        &[json!(S), json!(MAX_TIME + 1)],
    );
    edges(
        "/sources/6/start_ps",
        &[json!(MAX_TIME)],
        &[json!(MAX_TIME + 1)],
    );
    for (src, key) in [
        (0, "rate_cps"),
        (1, "rate_cps"),
        (2, "peak_cps"),
        (4, "rate_cps"),
    ] {
        edges(
            &format!("/sources/{src}/model/{key}"),
            &[json!(1e-3), json!(OC3_CPS)],
            &[down(1e-3), json!(OC3_CPS * 1.000_001), json!(0.0)],
        );
    }
    edges(
        "/sources/3/model/peak_cps",
        &[json!(OC3_CPS)],
        &[json!(OC3_CPS * 1.000_001), json!(1000.0)],
    );
    edges(
        "/sources/3/model/mean_cps",
        &[json!(1e-3), json!(1999.0)],
        &[down(1e-3), json!(2000.0)],
    );
    edges(
        "/sources/3/model/mean_burst_cells",
        &[json!(1.0), json!(1e9)],
        &[down(1.0), up(1e9)],
    );
    for key in ["on_ps", "off_ps"] {
        edges(
            &format!("/sources/2/model/{key}"),
            &[json!(1), json!(MAX_TIME)],
            &[json!(0), json!(MAX_TIME + 1)],
        );
    }
    edges(
        "/sources/4/model/frame_cells",
        &[
            json!({"fixed": 1}),
            json!({"fixed": 65535}),
            json!({"uniform": [7, 7]}),
        ],
        &[
            json!({"fixed": 0}),
            json!({"uniform": [0, 3]}),
            json!({"uniform": [8, 7]}),
        ],
    );
}

#[test]
fn flows() {
    for f in 0..2 {
        let p = format!("/flows/{f}");
        edges(
            &format!("{p}/start_ps"),
            &[json!(0), json!(MAX_TIME)],
            &[json!(MAX_TIME + 1)],
        );
        edges(
            &format!("{p}/mss_bytes"),
            &[json!(1), json!(65_495)],
            &[json!(0), json!(65_496)],
        );
        edges(
            &format!("{p}/window_scale"),
            &[json!(0), json!(14)],
            &[json!(15)],
        );
        edges(
            &format!("{p}/initial_cwnd_segments"),
            &[json!(1), json!(1_000_000)],
            &[json!(0), json!(1_000_001)],
        );
        edges(
            &format!("{p}/initial_ssthresh_bytes"),
            &[json!(1), json!(1u64 << 53)],
            &[json!(0), json!((1u64 << 53) + 1)],
        );
        edges(
            &format!("{p}/app_bytes"),
            &[json!(1), json!(1u64 << 53)],
            &[json!(0), json!((1u64 << 53) + 1)],
        );
        edges(
            &format!("{p}/max_sack_blocks"),
            &[json!(1), json!(4)],
            &[json!(0), json!(5)],
        );
        edges(
            &format!("{p}/timer/tick_ps"),
            &[json!(1_000_000), json!(1000 * S)],
            &[json!(999_999), json!(1000 * S + 1)],
        );
        for key in ["delayed_ack_ps", "processing_ps"] {
            edges(
                &format!("{p}/{key}"),
                &[json!(0), json!(1000 * S)],
                &[json!(1000 * S + 1)],
            );
        }
        // RTOs: min <= initial <= max, each in (0, 10^6 s].
        edges(
            &format!("{p}/initial_rto_ps"),
            &[json!(200_000_000_000u64), json!(64 * S)],
            &[json!(199_999_999_999u64), json!(64 * S + 1)],
        );
        edges(
            &format!("{p}/min_rto_ps"),
            &[json!(1), json!(3 * S)],
            &[json!(0), json!(3 * S + 1)],
        );
        edges(
            &format!("{p}/max_rto_ps"),
            &[json!(3 * S), json!(MAX_TIME)],
            &[json!(3 * S - 1), json!(MAX_TIME + 1)],
        );
    }
    // The window: at least one MSS, at most 65535 << 14.
    edges(
        "/flows/0/rcv_window_bytes",
        &[json!(512), json!(65_535u64 << 14)],
        &[json!(511), json!((65_535u64 << 14) + 1)],
    );
    // Jitter: at most the processing time.
    let mut v = base();
    v["flows"][0]["processing_ps"] = json!(1000);
    v["flows"][0]["processing_jitter_ps"] = json!(1000);
    check(&v).unwrap();
    v["flows"][0]["processing_jitter_ps"] = json!(1001);
    assert!(check(&v)
        .unwrap_err()
        .starts_with("flows[0].processing_jitter_ps"));
}

#[test]
fn paths_hold_1_to_255_links() {
    // s->h1 and h1->s join each other, so any length of path runs between them.
    let path = |n: usize| -> Value {
        let mut p = vec![0u32];
        p.extend((1..n).map(|k| if k % 2 == 1 { 1 } else { 2 }));
        json!(p)
    };
    edges(
        "/vcs/0/links",
        &[path(1), path(255)],
        &[json!([]), path(256)],
    );
    let ip = |n: usize| {
        json!((0..n)
            .map(|k| if k % 2 == 0 { 4 } else { 5 })
            .collect::<Vec<u32>>())
    };
    // An odd number of links ends at r1, where the ACK path (link 5) starts.
    edges(
        "/flows/1/data_links",
        &[ip(1), ip(255)],
        &[json!([]), ip(256)],
    );
}

#[test]
fn unknown_keys_are_rejected_with_their_path() {
    for (at, key) in [
        ("", "extra"),
        ("/nodes/0", "x"),
        ("/links/0", "rate"),
        ("/links/0/policy", "threshold"),
        ("/links/1/policy", "keep_eom"),
        ("/links/0/algorithm", "x"),
        ("/vcs/6/abr", "tbe"),
        ("/sources/5/model", "rate_cps"),
        ("/sources/0/model", "mean_cps"),
        ("/flows/0", "window"),
        ("/flows/0/timer", "tick"),
        ("/probes", "abr"),
    ] {
        let mut v = base();
        v.pointer_mut(at).unwrap()[key] = json!(1);
        let e = Scenario::from_json(&v.to_string()).unwrap_err();
        assert!(e.contains(&format!("unknown field `{key}`")), "{at}: {e}");
        assert!(e.starts_with(&json_path(at)), "{at}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
    // A frame size is one of two keys.
    let v = set(base(), "/sources/4/model/frame_cells/fixed", json!(3));
    let e = Scenario::from_json(&v.to_string()).unwrap_err();
    assert!(
        e.starts_with("sources[4].model: ") && e.contains("single key"),
        "{e}"
    );
    // A flow used to take any key (its TCP parameters were flattened in).
    let v = set(base(), "/flows/1/windw_scale", json!(3));
    let e = Scenario::from_json(&v.to_string()).unwrap_err();
    assert!(
        e.starts_with("flows[1]") && e.contains("unknown field `windw_scale`"),
        "{e}"
    );
}

#[test]
fn the_schema_carries_the_ranges() {
    let schema = serde_json::to_value(scenario::json_schema()).unwrap();
    let link = &schema["$defs"]["LinkSpec"]["properties"];
    assert_eq!(link["delay_ps"]["maximum"], json!(1000 * S));
    assert_eq!(link["bit_rate_bps"]["minimum"], json!(1e3));
    let red = schema["$defs"]["PolicySpec"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| &v["properties"])
        .find(|p| p["kind"]["const"] == json!("red"))
        .expect("a red policy");
    assert_eq!(red["w_q"]["exclusiveMinimum"], json!(0.0));
    let vc = &schema["$defs"]["VcSpec"]["properties"]["links"];
    assert_eq!((&vc["minItems"], &vc["maxItems"]), (&json!(1), &json!(255)));
    let flow = &schema["$defs"]["FlowSpec"];
    assert_eq!(flow["additionalProperties"], json!(false));
    assert_eq!(flow["properties"]["mss_bytes"]["maximum"], json!(65_495));
}

#[test]
fn a_key_left_out_takes_the_default_declared_with_its_parameter() {
    // Every key of ERICA, of PPD and of a coarse-timed flow but the required
    // ones left out: each takes its declared default, and the schema gives
    // the same value as the key's "default".
    let mut v = base();
    v["links"][0]["algorithm"] = json!({"kind": "erica"});
    v["links"][3]["policy"] = json!({"kind": "ppd"});
    let sc = Scenario::from_json(&v.to_string()).unwrap();
    sc.check().unwrap();
    let schema: Value = serde_json::to_value(scenario::json_schema()).unwrap();
    let erica = schema["$defs"]["AlgorithmSpec"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["properties"]["kind"]["const"] == "erica")
        .unwrap()["properties"]
        .clone();
    match sc.links[0].algorithm.clone().unwrap() {
        atmsim_core::abr::AlgorithmSpec::Erica {
            target_utilization,
            interval_ps,
            interval_cells,
            delta,
            measured_rate,
            bidirectional_count,
            ..
        } => {
            assert_eq!(
                json!(target_utilization),
                erica["target_utilization"]["default"]
            );
            assert_eq!(json!(interval_ps), erica["interval_ps"]["default"]);
            assert_eq!(json!(interval_cells), erica["interval_cells"]["default"]);
            assert_eq!(json!(delta), erica["delta"]["default"]);
            assert_eq!(json!(measured_rate), erica["measured_rate"]["default"]);
            assert_eq!(
                json!(bidirectional_count),
                erica["bidirectional_count"]["default"]
            );
            assert_eq!((target_utilization, interval_cells), (0.9, 100));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        sc.links[3].policy,
        atmsim_core::buffer::PolicySpec::Ppd { keep_eom: true }
    );
    // A required key stays required.
    let v = set(base(), "/links/2/algorithm", json!({"kind": "efci"}));
    let e = Scenario::from_json(&v.to_string()).unwrap_err();
    assert!(e.contains("missing field `high_cells`"), "{e}");
}

#[test]
fn a_kind_whose_keys_all_have_defaults_still_refuses_an_unknown_key() {
    // PPD's one key has a default, so {"kind": "ppd"} alone reads; that
    // must not make it a kind without keys, which would refuse keep_eom.
    let v = set(
        base(),
        "/links/3/policy",
        json!({"kind": "ppd", "keep_eom": false}),
    );
    let sc = Scenario::from_json(&v.to_string()).unwrap();
    assert_eq!(
        sc.links[3].policy,
        atmsim_core::buffer::PolicySpec::Ppd { keep_eom: false }
    );
    let v = set(
        base(),
        "/links/3/policy",
        json!({"kind": "ppd", "eom": false}),
    );
    let e = Scenario::from_json(&v.to_string()).unwrap_err();
    assert!(
        e.starts_with("links[3].policy") && e.contains("unknown field `eom`"),
        "{e}"
    );
    // A kind without keys refuses any.
    let v = set(
        base(),
        "/links/0/policy",
        json!({"kind": "tail", "keep_eom": true}),
    );
    let e = Scenario::from_json(&v.to_string()).unwrap_err();
    assert!(e.contains("takes no other key"), "{e}");
}

#[test]
fn an_error_inside_a_flows_tcp_parameters_names_its_key() {
    let v = set(base(), "/flows/0/mss_bytes", json!("512"));
    let e = Scenario::from_json(&v.to_string()).unwrap_err();
    assert!(e.starts_with("flows[0].mss_bytes: invalid type"), "{e}");
    let v = set(base(), "/flows/1/timer", json!({"kind": "coarse"}));
    let e = Scenario::from_json(&v.to_string()).unwrap_err();
    assert!(
        e.starts_with("flows[1].timer: missing field `tick_ps`"),
        "{e}"
    );
}
