//! Windows of about one segment: explicit-rate control of TCP in a LAN,
//! where ER x T falls below one segment and the router or the ATM edge
//! writes its floor of one segment into every ACK.
//!
//! The floor is written in the flow's window-scale units: at least
//! ceil(MSS / 2^scale) units, so the sender reads a window of at least one
//! MSS. A floor of MSS >> scale (truncated) gave MSS 1460 at scale 5 a
//! window of 45 x 32 = 1440 bytes, less than the one segment a sender may
//! send: once its flight was acknowledged each flow waited for ever.

use atmsim_core::stats::Summary;
use atmsim_core::{Scenario, Simulation};
use serde_json::{json, Value};

mod common;
use common::{run, MS, OC3_CPS, S};

const OC3_BPS: f64 = 155.52e6;
/// 1 km of fibre at 5 us/km, ps.
const KM: u64 = 5_000_000;
/// Flows sharing the bottleneck.
const FLOWS: usize = 30;

/// A flow's TCP: Reno, MSS 1460, 1 MB windows at window scale 5 (1460 is
/// not a multiple of 2^5), the fine timer.
fn tcp() -> Value {
    json!({"variant": "reno", "mss_bytes": 1460, "rcv_window_bytes": 1 << 20, "window_scale": 5,
           "initial_cwnd_segments": 1, "initial_ssthresh_bytes": null,
           "timer": {"kind": "fine"}, "initial_rto_ps": 3 * S, "min_rto_ps": 200 * MS,
           "max_rto_ps": 64 * S, "delayed_ack_ps": 0, "app_bytes": null, "max_sack_blocks": 3})
}

/// The simplified ERICA+ of Explicit rate control of TCP (Satyavolu et al.,
/// 1998), section 5, Table 1.
fn erica_plus() -> Value {
    json!({"interval_ps": 5 * MS, "t0_ps": 1_500_000_000, "a": 1.15, "b": 1.0, "qdlf": 0.5,
           "delta": 0.1, "max_increase": 0.1, "active_decay": 0.9})
}

/// `FLOWS` flows s_i -> r1 -> r2 -> d_i over IP links of 1 km at 155.52
/// Mb/s, buffers unlimited; r1 -> r2 computes the rates and the router r1
/// writes them into the ACKs arriving over r2 -> r1 with window rule
/// `window`.
fn ip_lan(window: &Value, fast_paths: bool, secs: u64) -> Scenario {
    let mut nodes = vec![json!({"name": "r1"}), json!({"name": "r2"})];
    let mut links: Vec<Value> = vec![];
    let mut link = |from: usize, to: usize| {
        links.push(
            json!({"name": format!("l{}", links.len()), "layer": "ip", "from": from,
            "to": to, "bit_rate_bps": OC3_BPS, "delay_ps": KM, "buffer_packets": null,
            "policy": {"kind": "tail"}}),
        );
        links.len() - 1
    };
    let core = link(0, 1);
    let back = link(1, 0);
    let mut flows = vec![];
    for i in 0..FLOWS {
        nodes.push(json!({"name": format!("s{i}"), "kind": "host"}));
        nodes.push(json!({"name": format!("d{i}"), "kind": "host"}));
        let (s, d) = (2 + 2 * i, 3 + 2 * i);
        let (a, a_back) = (link(s, 0), link(0, s));
        let (b, b_back) = (link(1, d), link(d, 1));
        let mut f = tcp();
        f["name"] = json!(format!("f{i}"));
        f["layer"] = json!("ip");
        f["data_links"] = json!([a, core, b]);
        f["ack_links"] = json!([b_back, back, a_back]);
        f["start_ps"] = json!(i as u64 * MS / 10);
        flows.push(f);
    }
    links[core]["rate_control"] = erica_plus();
    links[back]["ack_control"] = json!({"rates_from": core, "window": window, "ack_bucket": false});
    let v = json!({"duration_ps": secs * S, "seed": 1, "fast_paths": fast_paths, "nodes": nodes,
        "links": links, "vcs": [], "sources": [], "flows": flows, "probes": {}});
    serde_json::from_value(v).unwrap()
}

/// `FLOWS` flows s_i -> sw1 -> sw2 -> d_i over UBR, ATM links of 1 km at
/// 155.52 Mb/s, ports unlimited; the sw1 -> sw2 port computes the rates
/// (per VC) and the edges where the ACK VCs end (sw1 -> s_i) write them
/// into the ACKs with window rule `window`.
fn atm_lan(window: &Value, fast_paths: bool, secs: u64) -> Scenario {
    let mut nodes = vec![json!({"name": "sw1"}), json!({"name": "sw2"})];
    let mut links: Vec<Value> = vec![];
    let mut link = |from: usize, to: usize| {
        links.push(
            json!({"name": format!("l{}", links.len()), "from": from, "to": to,
            "bit_rate_bps": OC3_BPS, "cell_rate_cps": OC3_CPS, "delay_ps": KM,
            "buffer_cells": null, "policy": {"kind": "tail"}}),
        );
        links.len() - 1
    };
    let core = link(0, 1);
    let back = link(1, 0);
    let (mut vcs, mut flows, mut edges) = (vec![], vec![], vec![]);
    for i in 0..FLOWS {
        nodes.push(json!({"name": format!("s{i}"), "kind": "host"}));
        nodes.push(json!({"name": format!("d{i}"), "kind": "host"}));
        let (s, d) = (2 + 2 * i, 3 + 2 * i);
        let (up, up_back) = (link(s, 0), link(0, s));
        let (down, down_back) = (link(1, d), link(d, 1));
        edges.push(up_back);
        vcs.push(json!({"name": format!("vc{i}"), "class": "ubr", "links": [up, core, down]}));
        vcs.push(json!({"name": format!("vc{i}-ack"), "class": "ubr",
            "links": [down_back, back, up_back]}));
        let mut f = tcp();
        f["name"] = json!(format!("f{i}"));
        f["layer"] = json!("atm");
        f["data_vc"] = json!(2 * i);
        f["ack_vc"] = json!(2 * i + 1);
        f["start_ps"] = json!(i as u64 * MS / 10);
        flows.push(f);
    }
    links[core]["rate_control"] = erica_plus();
    for e in edges {
        links[e]["ack_control"] =
            json!({"rates_from": core, "window": window, "ack_bucket": false});
    }
    let v = json!({"duration_ps": secs * S, "seed": 1, "fast_paths": fast_paths, "nodes": nodes,
        "links": links, "vcs": vcs, "sources": [], "flows": flows, "probes": {}});
    serde_json::from_value(v).unwrap()
}

/// The window rules: T fixed at 1 ms (ER x T about 650 bytes, the fair
/// share 155.52 Mb/s / 30 = 648 kB/s), the flow's base round trip (about
/// 0.15 ms: ER x T below 100 bytes) and its round trip as a ping measures
/// it.
fn rules() -> [(&'static str, Value); 3] {
    [
        ("fixed 1 ms", json!({"kind": "fixed", "t_ps": MS})),
        ("base_rtt", json!({"kind": "base_rtt"})),
        ("rtt", json!({"kind": "rtt"})),
    ]
}

fn total_goodput_mbps(s: &Summary) -> f64 {
    s.flows.iter().map(|f| f.goodput_mbps).sum()
}

/// What every regression run must show: the bottleneck's payload rate
/// `limit_mbps` in goodput, every flow with its share, and windows of at
/// least one segment written.
fn check(what: &str, s: &Summary, limit_mbps: f64) {
    let total = total_goodput_mbps(s);
    // ER x T is below one segment, so each flow is offered one segment
    // (46 units of 2^5, 1472 bytes): 30 flows keep 30 segments in flight
    // against a pipe (155.52 Mb/s x 0.15 ms) of about two, so the
    // bottleneck never idles after the flows' first round trips and the
    // goodput is its payload rate. We measured 99.98 % of it in every
    // mode (the truncated floor gave 1.3 to 2.8 Mb/s in this second, 0.3
    // to 0.6 Mb/s over 5 s); 95 % leaves room for the first round trips.
    assert!(total > 0.95 * limit_mbps, "{what}: {total} Mb/s");
    let fair = limit_mbps / FLOWS as f64;
    for f in &s.flows {
        // Every flow has its share: within 10 % of it in every run but
        // the ATM edge's `rtt` rule, where the first flow to start keeps
        // about twice it (its round trip includes the queue it met).
        assert!(f.goodput_mbps > 0.5 * fair, "{what}: {f:?}");
        let rc = f.rate_control.as_ref().expect("a controlled flow");
        assert!(rc.window_written_bytes >= 1460.0, "{what}: {rc:?}");
        assert_eq!(f.timeouts, 0, "{what}: {f:?}");
    }
}

#[test]
fn a_router_in_a_lan_keeps_every_flow_sending() {
    // IP payload rate of the bottleneck: 155.52 Mb/s x 1460 / 1500.
    let limit = OC3_BPS * 1460.0 / 1500.0 / 1e6;
    for (name, rule) in rules() {
        let s = run(&ip_lan(&rule, true, 1));
        check(&format!("router, {name}"), &s, limit);
    }
}

#[test]
fn an_atm_edge_in_a_lan_keeps_every_flow_sending() {
    // A 1460-byte segment is 1500 + 16 bytes in 32 cells: 155.52 Mb/s x
    // 1460 / (32 x 53).
    let limit = OC3_BPS * 1460.0 / (32.0 * 53.0) / 1e6;
    for (name, rule) in rules() {
        let s = run(&atm_lan(&rule, true, 1));
        check(&format!("ATM edge, {name}"), &s, limit);
    }
}

#[test]
fn the_fast_paths_change_nothing_in_the_lan() {
    let json = |s: &Summary| serde_json::to_string(&s.flows).unwrap();
    let rule = json!({"kind": "base_rtt"});
    let (fast, plain) = (ip_lan(&rule, true, 1), ip_lan(&rule, false, 1));
    assert_eq!(json(&run(&fast)), json(&run(&plain)));
    let mut sim = Simulation::new(&atm_lan(&rule, false, 1)).unwrap();
    sim.run();
    let (plain, _) = sim.finish();
    assert_eq!(json(&run(&atm_lan(&rule, true, 1))), json(&plain));
}
