//! GFR end to end: many TCP connections per VC, tagging at the first switch,
//! per-VC buffer policies at a shared backbone port; the ledgers balance and
//! the MCRs shape the throughputs.

use atmsim_core::stats::Summary;
use atmsim_core::{Scenario, Simulation};
use serde_json::{json, Value};

mod common;
use common::{run, MS, OC3_CPS, S};

const OC3_BPS: f64 = 155.52e6;

/// `per_vc` SACK connections on each of `mcrs.len()` GFR VCs from edge
/// switches e_i through a backbone b1 -> b2 (1000 km, `buffer` cells,
/// `policy`) to exit switches x_i (10 km local hops), for `secs` seconds.
fn backbone(
    mcrs: &[f64],
    per_vc: usize,
    buffer: u32,
    policy: Value,
    tagging: bool,
    secs: u64,
) -> Scenario {
    let mut nodes = vec![json!({"name": "b1"}), json!({"name": "b2"})];
    let mut links = vec![];
    let mut link = |from: usize, to: usize, km: u64, buf: Option<u32>, pol: Value| {
        links.push(
            json!({"name": format!("l{}", links.len()), "from": from, "to": to,
            "bit_rate_bps": OC3_BPS, "cell_rate_cps": OC3_CPS, "delay_ps": km * 5_000_000,
            "buffer_cells": buf, "policy": pol}),
        );
        links.len() as u32 - 1
    };
    let core = link(0, 1, 1000, Some(buffer), policy);
    let back = link(1, 0, 1000, None, json!({"kind": "tail"}));
    let (mut vcs, mut flows) = (vec![], vec![]);
    for (i, &mcr) in mcrs.iter().enumerate() {
        nodes.push(json!({"name": format!("e{i}")}));
        nodes.push(json!({"name": format!("x{i}")}));
        let (e, x) = (2 + 2 * i, 3 + 2 * i);
        let up = link(e, 0, 10, None, json!({"kind": "tail"}));
        let up_back = link(0, e, 10, None, json!({"kind": "tail"}));
        let down = link(1, x, 10, None, json!({"kind": "tail"}));
        let down_back = link(x, 1, 10, None, json!({"kind": "tail"}));
        let gfr = json!({"mcr_cps": mcr, "mbs_cells": 200, "mfs_cells": 200, "tagging": tagging});
        vcs.push(
            json!({"name": format!("v{i}"), "class": "gfr", "links": [up, core, down], "gfr": gfr}),
        );
        vcs.push(json!({"name": format!("v{i}-ack"), "class": "ubr", "links": [down_back, back, up_back]}));
        for k in 0..per_vc {
            flows.push(json!({"name": format!("v{i}-tcp{k}"), "layer": "atm",
                "data_vc": 2 * i, "ack_vc": 2 * i + 1, "start_ps": k as u64 * MS,
                "variant": "sack", "mss_bytes": 1024, "rcv_window_bytes": 1 << 20, "window_scale": 5,
                "initial_cwnd_segments": 1, "initial_ssthresh_bytes": null,
                "timer": {"kind": "coarse", "tick_ps": 100 * MS},
                "initial_rto_ps": 3 * S, "min_rto_ps": 200 * MS, "max_rto_ps": 64 * S,
                "delayed_ack_ps": 0, "app_bytes": null, "max_sack_blocks": 3}));
        }
    }
    let v = json!({"duration_ps": secs * S, "seed": 1, "nodes": nodes, "links": links, "vcs": vcs,
                   "sources": [], "flows": flows,
                   "probes": {"period_ps": 10 * MS, "vc_queue": [core]}});
    serde_json::from_value(v).unwrap()
}

/// Goodput of the flows of VC `i` (named "v<i>-tcp<k>"), Mbps.
fn vc_goodput(s: &Summary, i: usize) -> f64 {
    let prefix = format!("v{i}-tcp");
    s.flows
        .iter()
        .filter(|f| f.name.starts_with(&prefix))
        .map(|f| f.goodput_mbps)
        .sum()
}

#[test]
fn many_flows_share_a_vc_and_the_ledgers_balance() {
    // 2 VCs x 5 SACK connections, tail drop at a 2000-cell backbone port.
    let sc = backbone(
        &[30_000.0, 90_000.0],
        5,
        2000,
        json!({"kind": "tail"}),
        true,
        2,
    );
    let s = run(&sc);
    assert_eq!(s.flows.len(), 10);
    assert!(s.flows.iter().all(|f| f.bytes_delivered > 0));
    // The two data VCs carried every flow's frames.
    let sent: u64 = s.flows.iter().map(|f| f.segments_sent).sum();
    assert_eq!(s.vcs[0].frames_sent + s.vcs[2].frames_sent, sent);
    let g = s.vcs[0].gfr.as_ref().expect("a GFR summary");
    assert!(g.frames_tested > 0 && g.cells_tagged > 0, "{g:?}");
    assert!(s.vcs[1].gfr.is_none());
}

#[test]
fn dfba_keeps_buffer_shares_in_proportion_to_the_mcrs() {
    // The setting of GFR buffer management (Goyal et al., 1998) in small: MCRs
    // of 20 % and 60 % of the link, DFBA with L = 500, H = 1500 in a 2000-cell
    // buffer, 5 connections per VC. (Whether each VC reaches its MCR depends on
    // the buffer, the thresholds and the TCP windows: GFR buffer management's
    // reproduction measures it in its own configurations.)
    let mcrs = [0.2 * OC3_CPS, 0.6 * OC3_CPS];
    let policy = json!({"kind": "dfba", "low": 500, "high": 1500, "alpha": 0.5,
                        "z": {"kind": "constant", "value": 1.0}});
    let sc = backbone(&mcrs, 5, 2000, policy, true, 4);
    let mut sim = Simulation::new(&sc).unwrap();
    sim.run();
    let (s, series) = sim.finish();
    assert!(s.conservation.ok, "{:#?}", s.conservation);
    let core = &s.ports[0];
    let reasons: Vec<&String> = core
        .drops
        .iter()
        .filter(|(_, &n)| n > 0)
        .map(|(r, _)| r)
        .collect();
    assert!(
        reasons.iter().any(|r| r.starts_with("dfba:")),
        "{reasons:?}"
    );
    // The larger MCR gets the larger throughput.
    assert!(vc_goodput(&s, 1) > vc_goodput(&s, 0), "{:?}", s.flows);
    // The per-VC occupancy series: per tick, the VCs' cells add up to at
    // most the buffer plus the cell being sent, and the port held cells of
    // both VCs at times.
    let names = &series.entity_names;
    let ids: Vec<u32> = ["l0/v0", "l0/v1"]
        .iter()
        .map(|n| names.iter().position(|x| x == n).expect(n) as u32)
        .collect();
    let mut per_tick: std::collections::BTreeMap<u64, [f64; 2]> = Default::default();
    for ((&t, &e), &v) in series.time_s.iter().zip(&series.entity).zip(&series.value) {
        if let Some(k) = ids.iter().position(|&x| x == e) {
            per_tick.entry((t * 1e6) as u64).or_default()[k] = v;
        }
    }
    assert_eq!(per_tick.len(), 400);
    assert!(per_tick.values().all(|x| x[0] + x[1] <= 2001.0));
    assert!(per_tick.values().any(|x| x[0] > 0.0) && per_tick.values().any(|x| x[1] > 0.0));
}

/// Two UBR VCs of AAL5 frame sources, offered 40 % and 95 % of a link,
/// into a port of `policy` (1000 cells); returns (cells the light VC lost,
/// cells the heavy VC lost).
fn ubr_losses(policy: Value) -> (u64, u64) {
    let link = |name: &str, from: u32, to: u32, buf: Option<u32>, pol: Value| {
        json!({"name": name, "from": from, "to": to, "bit_rate_bps": OC3_BPS,
               "cell_rate_cps": OC3_CPS, "delay_ps": 10 * 5_000_000u64,
               "buffer_cells": buf, "policy": pol})
    };
    let source = |name: &str, vc: u32, share: f64| {
        json!({"name": name, "vc": vc, "model": {"kind": "frames",
               "frame_cells": {"fixed": 12}, "rate_cps": share * OC3_CPS,
               "arrivals": "poisson"}})
    };
    let v = json!({
        "duration_ps": S, "seed": 3,
        "nodes": [{"name": "a"}, {"name": "b"}, {"name": "sw"}, {"name": "d"}],
        "links": [
            link("a-sw", 0, 2, None, json!({"kind": "tail"})),
            link("b-sw", 1, 2, None, json!({"kind": "tail"})),
            link("sw-d", 2, 3, Some(1000), policy),
        ],
        "vcs": [
            {"name": "light", "class": "ubr", "links": [0, 2]},
            {"name": "heavy", "class": "ubr", "links": [1, 2]},
        ],
        "sources": [source("light", 0, 0.4), source("heavy", 1, 0.95)],
    });
    let s = run(&serde_json::from_value(v).unwrap());
    let lost = |k: usize| s.vcs[k].cells_sent - s.vcs[k].cells_delivered;
    (lost(0), lost(1))
}

#[test]
fn dfba_over_ubr_vcs_gives_them_equal_shares() {
    // No VC has an MCR: DFBA weighs the two VCs crossing the port equally,
    // so the VC within its half of the buffer loses nothing and the one
    // above it takes every probabilistic drop (with weights of 0 both would
    // count as above their share of nothing).
    let policy = json!({"kind": "dfba", "low": 100, "high": 900, "alpha": 0.5,
                        "z": {"kind": "constant", "value": 1.0}});
    let (light, heavy) = ubr_losses(policy);
    assert!(heavy > 10_000, "{heavy}");
    assert!(light * 100 < heavy, "light {light}, heavy {heavy}");
}

#[test]
fn quiet_end_links_change_nothing_but_the_event_count_under_dfba() {
    // Three hops per VC, tagging, DFBA's random drops, several flows per
    // VC: the exit links hand their quiet cells on early (fast path 6),
    // with the same results as the plain event path.
    let policy = json!({"kind": "dfba", "low": 300, "high": 900, "alpha": 0.5,
                        "z": {"kind": "constant", "value": 0.5}});
    let mut sc = backbone(&[0.2 * OC3_CPS, 0.6 * OC3_CPS], 3, 1000, policy, true, 1);
    sc.probes.delay = true;
    sc.probes.flows = vec![0, 4];
    let (fast, plain) = common::same_both_ways(&sc, &[5 * MS, 333 * MS + 1]);
    assert!(fast * 10 < plain * 9, "{fast} vs {plain} events");
}

#[test]
fn quiet_end_links_change_nothing_across_policies_and_buffers() {
    // The backbone under tail drop, EPD and DFBA, with small and large
    // buffers, one and four flows per VC, with and without tagging: the
    // exit links' quiet cells give the plain path's results.
    let dfba = json!({"kind": "dfba", "low": 300, "high": 900, "alpha": 0.5,
                      "z": {"kind": "constant", "value": 0.5}});
    for (policy, buffer, per_vc, tagging) in [
        (json!({"kind": "tail"}), 300, 1, false),
        (json!({"kind": "epd", "threshold": 800}), 1000, 4, true),
        (dfba, 1000, 1, false),
    ] {
        let mut sc = backbone(
            &[0.1 * OC3_CPS, 0.5 * OC3_CPS],
            per_vc,
            buffer,
            policy,
            tagging,
            1,
        );
        sc.probes.delay = true;
        let (fast, plain) = common::same_both_ways(&sc, &[7 * MS, 500 * MS]);
        assert!(
            fast < plain,
            "{buffer} cells, {per_vc} per VC: {fast} vs {plain}"
        );
    }
}
