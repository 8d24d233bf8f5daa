//! Explicit-rate control of TCP at an IP router (Explicit rate control of TCP,
//! Satyavolu et al., 1998): rates written
//! into ACK windows, the ack bucket, and the fast paths kept off them.

use atmsim_core::atm::CELL_BITS;
use atmsim_core::stats::{Metric, Series, Summary};
use atmsim_core::{Scenario, Simulation};
use serde_json::{json, Value};

mod common;
use common::{MS, S};

/// Three Reno flows with access links of 1, 10 and 40 ms one way sharing
/// r1 -> r2 (20 Mb/s, 10 ms, 2000 packets); windows of 600,000 bytes as in
/// Explicit rate control of TCP. `control` is the rate control of r1 -> r2 and `acks` the ACK
/// control at r1 (on r2 -> r1), JSON or null.
fn hetero(control: Value, acks: Value, fast_paths: bool, secs: u64) -> Scenario {
    let mut nodes = vec![json!({"name": "r1"}), json!({"name": "r2"})];
    let mut links: Vec<Value> = vec![];
    let mut link = |from: usize, to: usize, bps: f64, delay: u64, buf: Option<u32>| {
        links.push(json!({"name": format!("l{}", links.len()), "layer": "ip", "from": from, "to": to,
            "bit_rate_bps": bps, "delay_ps": delay, "buffer_packets": buf, "policy": {"kind": "tail"}}));
        links.len() - 1
    };
    let core = link(0, 1, 20e6, 10 * MS, Some(2000));
    let back = link(1, 0, 20e6, 10 * MS, Some(2000));
    let mut flows = vec![];
    for (i, access) in [MS, 10 * MS, 40 * MS].into_iter().enumerate() {
        nodes.push(json!({"name": format!("s{i}"), "kind": "host"}));
        nodes.push(json!({"name": format!("d{i}"), "kind": "host"}));
        let (s, d) = (2 + 2 * i, 3 + 2 * i);
        let a = link(s, 0, 1e9, access, None);
        let a_back = link(0, s, 1e9, access, None);
        let b = link(1, d, 1e9, MS, None);
        let b_back = link(d, 1, 1e9, MS, None);
        flows.push(
            json!({"name": format!("f{i}"), "layer": "ip", "data_links": [a, core, b],
            "ack_links": [b_back, back, a_back], "start_ps": 0,
            "variant": "reno", "mss_bytes": 1024, "rcv_window_bytes": 600_000, "window_scale": 4,
            "initial_cwnd_segments": 1, "initial_ssthresh_bytes": 600_000,
            "timer": {"kind": "fine"}, "initial_rto_ps": 3 * S, "min_rto_ps": 200 * MS,
            "max_rto_ps": 64 * S, "delayed_ack_ps": 0, "app_bytes": null, "max_sack_blocks": 3}),
        );
    }
    links[core]["rate_control"] = control;
    links[back]["ack_control"] = acks;
    let v = json!({"duration_ps": secs * S, "seed": 1, "fast_paths": fast_paths, "nodes": nodes,
        "links": links, "vcs": [], "sources": [], "flows": flows,
        "probes": {"period_ps": 10 * MS, "queue": [core], "flows": [0, 1, 2]}});
    serde_json::from_value(v).unwrap()
}

/// The simplified ERICA+ of Explicit rate control of TCP (section 5, Table 1).
fn erica_plus() -> Value {
    json!({"interval_ps": 5 * MS, "t0_ps": 1_500_000_000, "a": 1.15, "b": 1.0, "qdlf": 0.5,
           "delta": 0.1, "max_increase": 0.1, "active_decay": 0.9})
}

fn acks(window: Value, bucket: bool) -> Value {
    json!({"rates_from": 0, "window": window, "ack_bucket": bucket})
}

fn run(sc: &Scenario) -> (Summary, Series, u64) {
    let mut sim = Simulation::new(sc).unwrap();
    sim.run();
    let events = sim.events();
    let (s, series) = sim.finish();
    assert!(s.conservation.ok, "{:#?}", s.conservation);
    (s, series, events)
}

fn values(series: &Series, entity: &str, metric: Metric) -> Vec<f64> {
    let e = series
        .entity_names
        .iter()
        .position(|n| n == entity)
        .unwrap() as u32;
    series
        .entity
        .iter()
        .zip(&series.metric)
        .zip(&series.value)
        .filter(|((&x, &m), _)| x == e && m == metric as u8)
        .map(|(_, &v)| v)
        .collect()
}

fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    s * s / (x.len() as f64 * x.iter().map(|v| v * v).sum::<f64>())
}

#[test]
fn windows_written_into_acks_cap_the_queue() {
    let vanilla = run(&hetero(Value::Null, Value::Null, true, 4));
    let controlled = run(&hetero(
        erica_plus(),
        acks(json!({"kind": "fixed", "t_ps": 30 * MS}), false),
        true,
        4,
    ));
    let max_q = |r: &(Summary, Series, u64)| r.0.ports[0].max_queue_packets;
    // Vanilla TCP fills the 2000-packet buffer; the written windows keep
    // the queue short.
    assert!(max_q(&vanilla) > 1000, "{}", max_q(&vanilla));
    assert!(
        max_q(&controlled) < max_q(&vanilla) / 4,
        "{} vs {}",
        max_q(&controlled),
        max_q(&vanilla)
    );
    // Written windows are never above what the receiver advertises (600,000
    // bytes, scaled by 2^4), never below one segment, and the checksums
    // stayed valid (a failed one is a ledger problem).
    for f in ["f0", "f1", "f2"] {
        let w = values(&controlled.1, f, Metric::RwndWrittenBytes);
        assert!(
            !w.is_empty()
                && w.iter()
                    .all(|&x| x <= 600_000.0 && (x == 0.0 || x >= 1024.0)),
            "{f}: {w:?}"
        );
        // A written window is a whole number of the window scale's units
        // (window_scale 4: 16 bytes): the 16-bit field holds it shifted.
        assert!(w.iter().all(|&x| x % 16.0 == 0.0), "{f}: {w:?}");
        assert!(values(&controlled.1, f, Metric::ErBps)
            .iter()
            .all(|&x| x > 0.0));
    }
    assert!(controlled.0.flows.iter().all(|f| f.bytes_delivered > 0));
    // The summary says what the router did: windows lowered, nothing held.
    for f in &controlled.0.flows {
        let rc = f.rate_control.as_ref().expect("a controlled flow");
        assert!(rc.acks_rewritten > 0 && rc.er_bps > 0.0, "{rc:?}");
        assert!(rc.window_written_bytes >= 1024.0 && rc.window_written_bytes <= 600_000.0);
        assert_eq!(
            (rc.acks_released, rc.acks_held, rc.acks_held_max),
            (0, 0, 0)
        );
    }
    assert!(vanilla.0.flows.iter().all(|f| f.rate_control.is_none()));
}

#[test]
fn the_flows_own_rtt_is_fairer_than_one_fixed_time() {
    // Figs 3 and 4 of Explicit rate control of TCP: one T = 30 ms leaves the long-RTT flow short;
    // each flow's own RTT shares the link fairly.
    let fixed = run(&hetero(
        erica_plus(),
        acks(json!({"kind": "fixed", "t_ps": 30 * MS}), false),
        true,
        5,
    ));
    let own = run(&hetero(
        erica_plus(),
        acks(json!({"kind": "rtt"}), false),
        true,
        5,
    ));
    let goodputs =
        |r: &(Summary, Series, u64)| r.0.flows.iter().map(|f| f.goodput_mbps).collect::<Vec<_>>();
    let (jf, jo) = (jain(&goodputs(&fixed)), jain(&goodputs(&own)));
    assert!(
        jo > jf,
        "Jain {jo:.3} (own RTT) against {jf:.3} (T = 30 ms): {:?} {:?}",
        goodputs(&own),
        goodputs(&fixed)
    );
}

#[test]
fn the_ack_bucket_holds_acks_neither_lost_nor_delivered() {
    // The bucket alone, and with windows: the packet ledger balances at any
    // end, ACKs held counted on their own line.
    for window in [json!({"kind": "none"}), json!({"kind": "rtt"})] {
        let sc = hetero(erica_plus(), acks(window.clone(), true), true, 2);
        for end in [333 * MS + 17, 2 * S] {
            let mut sim = Simulation::new(&sc).unwrap();
            sim.advance(end);
            let (s, _) = sim.finish();
            assert!(
                s.conservation.ok,
                "{window} at {end}: {:#?}",
                s.conservation
            );
        }
        let (s, _, _) = run(&sc);
        assert!(s.flows.iter().all(|f| f.bytes_delivered > 0), "{window}");
    }
    // Some ACKs are held at some time: the bucket paces them. The flows'
    // summaries count the ACKs held as the ledger does.
    let sc = hetero(erica_plus(), acks(json!({"kind": "none"}), true), true, 2);
    let held = (1..20u64)
        .map(|k| {
            let mut sim = Simulation::new(&sc).unwrap();
            sim.advance(k * 100 * MS);
            let s = sim.finish().0;
            let in_buckets: u64 = s
                .flows
                .iter()
                .map(|f| f.rate_control.as_ref().unwrap().acks_held)
                .sum();
            assert_eq!(in_buckets, s.conservation.packets.held_at_routers);
            in_buckets
        })
        .max()
        .unwrap();
    assert!(held > 0);
    let (s, _, _) = run(&sc);
    for f in &s.flows {
        let rc = f.rate_control.as_ref().unwrap();
        assert!(rc.acks_released > 0 && rc.acks_held_max > 0, "{rc:?}");
        assert!(rc.ack_hold_mean_s > 0.0 && rc.acks_rewritten == 0, "{rc:?}");
    }
}

#[test]
fn the_fast_paths_stay_off_where_rates_and_acks_are_controlled() {
    // With the fast paths on or off the results are the same: the
    // controlled port and the router that rewrites ACKs see every packet at
    // its time either way.
    let control = || (erica_plus(), acks(json!({"kind": "rtt"}), true));
    let (c, a) = control();
    let fast = run(&hetero(c, a, true, 2));
    let (c, a) = control();
    let plain = run(&hetero(c, a, false, 2));
    let json = |s: &Summary| {
        let mut v = serde_json::to_value(s).unwrap();
        v.as_object_mut().unwrap().remove("events");
        v
    };
    assert_eq!(json(&fast.0), json(&plain.0));
    assert_eq!(fast.1.value, plain.1.value);
}

/// Three Reno flows over UBR, s_i -> sw1 -> sw2 -> d_i (155.52 Mb/s, 1000
/// km a link, the sw1 -> sw2 port unlimited), windows of 256 KB: their sum
/// is far above the 30 ms pipe, so without control the shared queue holds
/// the excess. `control` is the rate control of the sw1 -> sw2 port and
/// `window` the rule of the ATM edges at s_i, where the ACK VCs end (the
/// ack_control of each sw1 -> s_i link), JSON or null.
fn atm_edge(control: Value, window: Value, fast_paths: bool, secs: u64) -> Scenario {
    let (oc3_bps, oc3_cps) = (155.52e6, 155.52e6 / CELL_BITS);
    let delay: u64 = 1000 * 5_000_000; // 1000 km at 5 us/km, ps
    let mut nodes = vec![json!({"name": "sw1"}), json!({"name": "sw2"})];
    let mut links: Vec<Value> = vec![];
    let mut link = |from: usize, to: usize| {
        links.push(
            json!({"name": format!("l{}", links.len()), "from": from, "to": to,
            "bit_rate_bps": oc3_bps, "cell_rate_cps": oc3_cps, "delay_ps": delay,
            "buffer_cells": null, "policy": {"kind": "tail"}}),
        );
        links.len() - 1
    };
    let core = link(0, 1);
    let back = link(1, 0);
    let (mut vcs, mut flows, mut edges) = (vec![], vec![], vec![]);
    for i in 0..3 {
        nodes.push(json!({"name": format!("s{i}"), "kind": "host"}));
        nodes.push(json!({"name": format!("d{i}"), "kind": "host"}));
        let (s, d) = (2 + 2 * i, 3 + 2 * i);
        let (up, up_back) = (link(s, 0), link(0, s));
        let (down, down_back) = (link(1, d), link(d, 1));
        edges.push(up_back);
        vcs.push(json!({"name": format!("vc{i}"), "class": "ubr", "links": [up, core, down]}));
        vcs.push(json!({"name": format!("vc{i}-ack"), "class": "ubr",
            "links": [down_back, back, up_back]}));
        flows.push(
            json!({"name": format!("f{i}"), "layer": "atm", "data_vc": 2 * i,
            "ack_vc": 2 * i + 1, "start_ps": i as u64 * MS,
            "variant": "reno", "mss_bytes": 512, "rcv_window_bytes": 262_144, "window_scale": 3,
            "initial_cwnd_segments": 1, "initial_ssthresh_bytes": null,
            "timer": {"kind": "fine"}, "initial_rto_ps": 3 * S, "min_rto_ps": 200 * MS,
            "max_rto_ps": 64 * S, "delayed_ack_ps": 0, "app_bytes": null, "max_sack_blocks": 3}),
        );
    }
    links[core]["rate_control"] = control;
    if !window.is_null() {
        for e in edges {
            links[e]["ack_control"] =
                json!({"rates_from": core, "window": window, "ack_bucket": false});
        }
    }
    let v = json!({"duration_ps": secs * S, "seed": 1, "fast_paths": fast_paths, "nodes": nodes,
        "links": links, "vcs": vcs, "sources": [], "flows": flows,
        "probes": {"period_ps": 10 * MS, "queue": [core], "flows": [0, 1, 2]}});
    serde_json::from_value(v).unwrap()
}

#[test]
fn an_atm_edge_writes_windows_from_an_atm_ports_rates() {
    let vanilla = run(&atm_edge(Value::Null, Value::Null, true, 2));
    let base_rtt = json!({"kind": "base_rtt"});
    let controlled = run(&atm_edge(erica_plus(), base_rtt.clone(), true, 2));
    let max_q = |r: &(Summary, Series, u64)| r.0.ports[0].max_queue_cells;
    // Three 256 KB windows (18,432 cells) exceed the 30 ms pipe (11,004
    // cells): vanilla TCP queues the excess at sw1 -> sw2.
    assert!(max_q(&vanilla) > 5000, "{}", max_q(&vanilla));
    // Both see the first slow starts (3827 cells at 250 ms, before the
    // first rates matter); then vanilla TCP holds the excess of the windows
    // (7410 cells) while the written windows keep the mean queue far lower.
    let late_mean = |r: &(Summary, Series, u64)| {
        let q = values(&r.1, &r.1.entity_names[0], Metric::QueueCells);
        let late = &q[q.len() / 2..];
        late.iter().sum::<f64>() / late.len() as f64
    };
    assert!(
        late_mean(&controlled) < late_mean(&vanilla) / 3.0,
        "{} vs {}",
        late_mean(&controlled),
        late_mean(&vanilla)
    );
    for f in &controlled.0.flows {
        let rc = f.rate_control.as_ref().expect("a controlled flow");
        assert!(rc.acks_rewritten > 0 && rc.er_bps > 0.0, "{rc:?}");
        // Never raised above the advertised window, never below a segment,
        // a whole number of the scale's units (2^3 bytes).
        let w = values(&controlled.1, &f.name, Metric::RwndWrittenBytes);
        assert!(
            !w.is_empty()
                && w.iter()
                    .all(|&x| x <= 262_144.0 && (x == 0.0 || x >= 512.0) && x % 8.0 == 0.0),
            "{}: {w:?}",
            f.name
        );
        assert!(f.bytes_delivered > 0);
    }
    // Checksums stayed valid (a failure is a ledger problem; `run` checks
    // the ledgers balance).
    assert!(controlled.0.conservation.problems.is_empty());
    assert!(vanilla.0.flows.iter().all(|f| f.rate_control.is_none()));
    // The fast paths leave the controlled port and edges alone: the same
    // results either way.
    let plain = run(&atm_edge(erica_plus(), base_rtt, false, 2));
    assert_eq!(
        serde_json::to_string(&controlled.0.flows).unwrap(),
        serde_json::to_string(&plain.0.flows).unwrap()
    );
    assert_eq!(controlled.1.value, plain.1.value);
    // A rate computed with no ACK control changes nothing.
    let measured_only = run(&atm_edge(erica_plus(), Value::Null, true, 2));
    assert_eq!(max_q(&measured_only), max_q(&vanilla));
}

#[test]
fn ack_control_on_an_atm_link_needs_an_atm_port_with_rates_and_an_ack_vc_end() {
    let mut sc = atm_edge(Value::Null, json!({"kind": "rtt"}), true, 1);
    let err = Simulation::new(&sc).err().unwrap();
    assert!(
        err.contains("is not an ATM link with rate_control"),
        "{err}"
    );
    sc = atm_edge(erica_plus(), json!({"kind": "rtt"}), true, 1);
    sc.links[0].ack_control = sc.links[3].ack_control;
    let err = Simulation::new(&sc).err().unwrap();
    assert!(
        err.contains("no flow's ack_vc ends with this link"),
        "{err}"
    );
    sc = atm_edge(erica_plus(), json!({"kind": "rtt"}), true, 1);
    sc.links[3].ack_control.as_mut().unwrap().ack_bucket = true;
    let err = Simulation::new(&sc).err().unwrap();
    assert!(
        err.contains("ack bucket is modelled at IP routers only"),
        "{err}"
    );
    // The round trip as a ping measures it: runs balanced.
    let s = run(&atm_edge(erica_plus(), json!({"kind": "rtt"}), true, 1));
    assert!(s
        .0
        .flows
        .iter()
        .all(|f| f.rate_control.as_ref().unwrap().acks_rewritten > 0));
}

#[test]
fn flows_sharing_a_vc_share_its_rate_as_one_unit() {
    // f0 and f1 ride VC 0 (data) and VC 1 (ACKs) together; f2 has its own.
    // The port sees two sessions (VCs 0 and 4); each flow of the shared VC
    // gets half of its ER, so the two always report the same rate.
    let mut sc = atm_edge(erica_plus(), json!({"kind": "base_rtt"}), true, 1);
    sc.flows[1].data_vc = Some(0);
    sc.flows[1].ack_vc = Some(1);
    sc.links[7].ack_control = None; // VC 3, f1's own ACK VC, now carries nothing
    let (s, series, _) = run(&sc);
    let er = |f: usize| s.flows[f].rate_control.as_ref().unwrap().er_bps;
    assert_eq!(er(0), er(1));
    assert_eq!(
        values(&series, "f0", Metric::ErBps),
        values(&series, "f1", Metric::ErBps)
    );
    // Within the port's payload rate (155.52e6 / 424 cells/s x 384 bits).
    let payload_bps = 155.52e6 / CELL_BITS * 384.0;
    assert!(
        2.0 * er(0) + er(2) <= 1.1 * payload_bps,
        "{} {}",
        er(0),
        er(2)
    );
    assert!(s
        .flows
        .iter()
        .all(|f| f.rate_control.as_ref().unwrap().acks_rewritten > 0));
}
