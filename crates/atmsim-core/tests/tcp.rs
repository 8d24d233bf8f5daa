//! TCP over ATM and over IP, end to end through the core: ledgers, goodput
//! against the analytic limits, loss recovery by every variant, determinism.

use atmsim_core::stats::{Series, Summary};
use atmsim_core::{Scenario, Simulation};
use serde_json::{json, Value};

mod common;
use common::{merge, run, MS, OC3_CPS, S};

const OC3_BPS: f64 = 155.52e6;

fn tcp(variant: &str, mss: u32, window: u64, scale: u8) -> Value {
    json!({"variant": variant, "mss_bytes": mss, "rcv_window_bytes": window, "window_scale": scale,
           "initial_cwnd_segments": 1, "initial_ssthresh_bytes": null,
           "timer": {"kind": "coarse", "tick_ps": 100 * MS},
           "initial_rto_ps": 3 * S, "min_rto_ps": 200 * MS, "max_rto_ps": 64 * S,
           "delayed_ack_ps": 0, "app_bytes": null, "max_sack_blocks": 3})
}

/// n hosts s_i -> sw1 -> sw2 -> d_i over ATM (duplex, 155.52 Mbps, `km`
/// per link), one TCP flow per pair over UBR; the sw1 -> sw2 port has
/// `buffer` cells and `policy`.
fn atm_net(
    n: usize,
    km: u64,
    buffer: Option<u32>,
    policy: Value,
    flow: Value,
    secs: u64,
) -> Scenario {
    let delay = km * 5_000_000; // 5 us/km in ps
    let mut nodes = vec![json!({"name": "sw1"}), json!({"name": "sw2"})];
    let mut links = vec![];
    let mut link = |name: String, from: usize, to: usize, buf: Option<u32>, pol: Value| {
        links.push(
            json!({"name": name, "from": from, "to": to, "bit_rate_bps": OC3_BPS,
            "cell_rate_cps": OC3_CPS, "delay_ps": delay, "buffer_cells": buf, "policy": pol}),
        );
        links.len() - 1
    };
    let core = link("sw1-sw2".into(), 0, 1, buffer, policy);
    let back = link("sw2-sw1".into(), 1, 0, None, json!({"kind": "tail"}));
    let mut vcs = vec![];
    let mut flows = vec![];
    for i in 0..n {
        nodes.push(json!({"name": format!("s{i}"), "kind": "host"}));
        nodes.push(json!({"name": format!("d{i}"), "kind": "host"}));
        let (s, d) = (2 + 2 * i, 3 + 2 * i);
        let up = link(format!("s{i}-sw1"), s, 0, None, json!({"kind": "tail"}));
        let up_back = link(format!("sw1-s{i}"), 0, s, None, json!({"kind": "tail"}));
        let down = link(format!("sw2-d{i}"), 1, d, None, json!({"kind": "tail"}));
        let down_back = link(format!("d{i}-sw2"), d, 1, None, json!({"kind": "tail"}));
        vcs.push(json!({"name": format!("f{i}"), "class": "ubr", "links": [up, core, down]}));
        vcs.push(json!({"name": format!("f{i}-ack"), "class": "ubr", "links": [down_back, back, up_back]}));
        flows.push(merge(
            flow.clone(),
            json!({"name": format!("f{i}"), "layer": "atm", "data_vc": 2 * i, "ack_vc": 2 * i + 1, "start_ps": i as u64 * MS}),
        ));
    }
    let v = json!({"duration_ps": secs * S, "seed": 1, "nodes": nodes, "links": links, "vcs": vcs,
                   "sources": [], "flows": flows,
                   "probes": {"period_ps": 10 * MS, "queue": [core], "flows": (0..n).collect::<Vec<_>>()}});
    serde_json::from_value(v).unwrap()
}

/// n flows s_i -> r1 -> r2 -> d_i over IP: access 1 Gb/s 1 ms, bottleneck
/// `rate` bit/s, 10 ms, `buffer` packets, drop-tail (or `policy`).
fn ip_net(n: usize, rate: f64, buffer: u32, policy: Value, flow: Value, secs: u64) -> Scenario {
    let mut nodes = vec![json!({"name": "r1"}), json!({"name": "r2"})];
    let mut links = vec![];
    let mut link = |name: String,
                    from: usize,
                    to: usize,
                    bps: f64,
                    delay: u64,
                    buf: Option<u32>,
                    pol: Value| {
        links.push(
            json!({"name": name, "layer": "ip", "from": from, "to": to, "bit_rate_bps": bps,
            "delay_ps": delay, "buffer_packets": buf, "policy": pol}),
        );
        links.len() - 1
    };
    let tail = json!({"kind": "tail"});
    let core = link("r1-r2".into(), 0, 1, rate, 10 * MS, Some(buffer), policy);
    let back = link(
        "r2-r1".into(),
        1,
        0,
        rate,
        10 * MS,
        Some(buffer),
        tail.clone(),
    );
    let mut flows = vec![];
    for i in 0..n {
        nodes.push(json!({"name": format!("s{i}"), "kind": "host"}));
        nodes.push(json!({"name": format!("d{i}"), "kind": "host"}));
        let (s, d) = (2 + 2 * i, 3 + 2 * i);
        let a = link(format!("s{i}-r1"), s, 0, 1e9, MS, None, tail.clone());
        let a_back = link(format!("r1-s{i}"), 0, s, 1e9, MS, None, tail.clone());
        let b = link(format!("r2-d{i}"), 1, d, 1e9, MS, None, tail.clone());
        let b_back = link(format!("d{i}-r2"), d, 1, 1e9, MS, None, tail.clone());
        flows.push(merge(
            flow.clone(),
            json!({"name": format!("f{i}"), "layer": "ip", "data_links": [a, core, b],
                   "ack_links": [b_back, back, a_back], "start_ps": i as u64 * 7 * MS}),
        ));
    }
    let v = json!({"duration_ps": secs * S, "seed": 1, "nodes": nodes, "links": links, "vcs": [],
                   "sources": [], "flows": flows, "probes": {}});
    serde_json::from_value(v).unwrap()
}

#[test]
fn one_flow_over_atm_fills_the_link_at_the_aal5_efficiency() {
    // MSS 512: 552-byte datagrams in 12 cells, so the goodput limit is
    // 155.52 Mb/s x 512 / (12 x 53) = 125.2 Mb/s. Window 1 MB (> the
    // 30 ms x 155 Mb/s pipe): the link is the limit. 1 km links keep the
    // slow-start transient short against the 4 s run.
    let sc = atm_net(
        1,
        1,
        None,
        json!({"kind": "tail"}),
        tcp("tahoe_nofr", 512, 1 << 20, 4),
        4,
    );
    let s = run(&sc);
    let limit = OC3_BPS * 512.0 / (12.0 * 53.0) / 1e6;
    let g = s.flows[0].goodput_mbps;
    assert!((g / limit - 1.0).abs() < 0.02, "goodput {g} vs {limit}");
    assert_eq!(s.flows[0].timeouts, 0);
    assert_eq!(s.flows[0].bytes_retransmitted, 0);
}

#[test]
fn one_flow_over_ip_fills_the_bottleneck() {
    // 1000-byte payloads in 1040-byte packets at 10 Mb/s: 9.615 Mb/s of
    // goodput. The buffer (2000 packets) holds the whole 1 MB window: no loss.
    let sc = ip_net(
        1,
        10e6,
        2000,
        json!({"kind": "tail"}),
        tcp("reno", 1000, 1 << 20, 5),
        20,
    );
    let s = run(&sc);
    let limit = 10.0 * 1000.0 / 1040.0;
    let g = s.flows[0].goodput_mbps;
    assert!((g / limit - 1.0).abs() < 0.02, "goodput {g} vs {limit}");
    assert_eq!(s.ports[0].packets_dropped, 0);
}

#[test]
fn window_limited_flow_gets_window_over_rtt() {
    // 16 KB window over a 2 x (1 + 10 + 1) ms = 24 ms RTT at 1 Gb/s access
    // and 100 Mb/s bottleneck: about 16384 B / 24.2 ms = 5.4 Mb/s.
    let sc = ip_net(
        1,
        100e6,
        1000,
        json!({"kind": "tail"}),
        tcp("reno", 1000, 16_000, 0),
        10,
    );
    let s = run(&sc);
    let rtt = 0.024 + (1040.0 * 8.0 / 100e6) + 2.0 * 1040.0 * 8.0 / 1e9 + 3.0 * 40.0 * 8.0 / 1e9;
    let expect = 16.0 * 8000.0 / rtt / 1e6; // 16 segments of 1000 B per RTT
    let g = s.flows[0].goodput_mbps;
    assert!((g / expect - 1.0).abs() < 0.03, "goodput {g} vs {expect}");
}

#[test]
fn every_variant_recovers_losses_and_balances_its_ledgers() {
    for variant in ["tahoe_nofr", "tahoe", "reno", "newreno", "sack"] {
        // ATM: 3 flows, a 300-cell bottleneck: cells are lost, frames die.
        let sc = atm_net(
            3,
            100,
            Some(300),
            json!({"kind": "tail"}),
            tcp(variant, 512, 1 << 16, 1),
            3,
        );
        let s = run(&sc);
        let lost: u64 = s.ports.iter().map(|p| p.cells_dropped).sum();
        assert!(lost > 0, "{variant}: no loss");
        let b = &s.conservation.bytes;
        assert!(b.dropped_aal5 + b.dropped_in_network > 0, "{variant}");
        assert!(b.retransmitted > 0, "{variant}");
        // Tail drop over UBR wastes part of the link on the cells of frames
        // that lost another cell (Romanow and Floyd, "Dynamics of TCP
        // Traffic over ATM Networks", 1995), and the timeouts that follow
        // leave it idle: every flow gets through, with less goodput than
        // the link carries.
        let total: f64 = s.flows.iter().map(|f| f.goodput_mbps).sum();
        let carried = s.ports[0].utilization * OC3_BPS / 1e6;
        assert!(total < carried, "{variant}: {total} of {carried}");
        assert!(s.flows.iter().all(|f| f.bytes_delivered > 0), "{variant}");
        // IP: 4 flows, 20-packet drop-tail buffer.
        let sc = ip_net(
            4,
            20e6,
            20,
            json!({"kind": "tail"}),
            tcp(variant, 1000, 1 << 18, 3),
            10,
        );
        let s = run(&sc);
        assert!(s.ports[0].packets_dropped > 0, "{variant}");
        let total: f64 = s.flows.iter().map(|f| f.goodput_mbps).sum();
        eprintln!("{variant}: IP total goodput {total:.2} Mb/s");
        let floor = if variant == "tahoe_nofr" { 0.4 } else { 0.7 };
        assert!(total > floor * 20.0 * 1000.0 / 1040.0, "{variant}: {total}");
        let fr: u64 = s.flows.iter().map(|f| f.fast_retransmits).sum();
        if variant == "tahoe_nofr" {
            assert_eq!(fr, 0);
        } else {
            assert!(fr > 0, "{variant}: no fast retransmit");
        }
    }
}

#[test]
fn sack_and_newreno_time_out_less_than_reno() {
    let timeouts = |variant: &str| -> u64 {
        let sc = ip_net(
            4,
            20e6,
            20,
            json!({"kind": "tail"}),
            tcp(variant, 1000, 1 << 18, 3),
            20,
        );
        run(&sc).flows.iter().map(|f| f.timeouts).sum()
    };
    let (reno, newreno, sack) = (timeouts("reno"), timeouts("newreno"), timeouts("sack"));
    assert!(
        newreno <= reno && sack <= reno,
        "reno {reno}, newreno {newreno}, sack {sack}"
    );
}

#[test]
fn red_drops_early_and_keeps_the_average_queue_low() {
    let red = json!({"kind": "red", "min_th": 5.0, "max_th": 15.0, "w_q": 0.002, "max_p": 0.02});
    let sc = ip_net(4, 20e6, 100, red, tcp("reno", 1000, 1 << 18, 3), 20);
    let s = run(&sc);
    let p = &s.ports[0];
    assert!(p.packets_dropped_red > 0);
    assert!(p.mean_queue_packets < 20.0, "{}", p.mean_queue_packets);
    let tail = run(&ip_net(
        4,
        20e6,
        100,
        json!({"kind": "tail"}),
        tcp("reno", 1000, 1 << 18, 3),
        20,
    ));
    assert!(tail.ports[0].mean_queue_packets > p.mean_queue_packets);
}

#[test]
fn finite_transfer_reports_its_completion() {
    let mut flow = tcp("reno", 1000, 1 << 18, 3);
    flow["app_bytes"] = json!(1_000_000);
    let s = run(&ip_net(1, 10e6, 100, json!({"kind": "tail"}), flow, 5));
    let f = &s.flows[0];
    assert_eq!(f.bytes_delivered, 1_000_000);
    let done = f.completed_at_s.expect("not completed");
    // 1000 segments at 10 Mb/s take at least 0.83 s; slow start adds a few RTTs.
    assert!(done > 0.83 && done < 1.5, "{done}");
}

#[test]
fn receiver_processing_time_limits_goodput() {
    // 1 ms per segment at the receiver: at most 1000 segments/s = 8 Mb/s.
    let mut flow = tcp("reno", 1000, 1 << 18, 3);
    flow["processing_ps"] = json!(MS);
    flow["processing_jitter_ps"] = json!(MS / 4);
    let s = run(&ip_net(1, 100e6, 1000, json!({"kind": "tail"}), flow, 5));
    let g = s.flows[0].goodput_mbps;
    assert!(g < 8.0 && g > 7.0, "{g}");
}

#[test]
fn delayed_acks_halve_the_ack_count() {
    let mut flow = tcp("reno", 1000, 1 << 16, 1);
    let count_acks = |flow: &Value| {
        let sc = ip_net(1, 10e6, 1000, json!({"kind": "tail"}), flow.clone(), 5);
        let s = run(&sc);
        (
            s.conservation.packets.generated - s.flows[0].segments_sent,
            s.flows[0].segments_sent,
        )
    };
    // Without delayed ACKs, one ACK per segment (less the window in flight).
    let (acks, segs) = count_acks(&flow);
    assert!(acks <= segs && acks + 70 >= segs, "{acks} {segs}");
    flow["delayed_ack_ps"] = json!(200 * MS);
    let (acks, segs) = count_acks(&flow);
    assert!(
        (acks as f64) < 0.55 * segs as f64 && (acks as f64) > 0.45 * segs as f64,
        "{acks} {segs}"
    );
}

#[test]
fn same_seed_same_flows() {
    let red = json!({"kind": "red", "min_th": 5.0, "max_th": 15.0, "w_q": 0.002, "max_p": 0.02});
    let sc = ip_net(3, 20e6, 50, red, tcp("sack", 1000, 1 << 18, 3), 5);
    let a = serde_json::to_string(&run(&sc).flows).unwrap();
    let b = serde_json::to_string(&run(&sc).flows).unwrap();
    assert_eq!(a, b);
}

#[test]
fn ip_runs_in_slices_give_the_same_results() {
    let red = json!({"kind": "red", "min_th": 5.0, "max_th": 15.0, "w_q": 0.002, "max_p": 0.02});
    let sc = ip_net(4, 20e6, 30, red, tcp("sack", 1000, 1 << 18, 3), 3);
    let whole = run(&sc);
    let mut sim = Simulation::new(&sc).unwrap();
    let mut t = 0;
    while t < sc.duration_ps {
        t += 3_333_333_333;
        sim.advance(t);
    }
    let (sliced, _) = sim.finish();
    assert!(sliced.conservation.ok);
    assert_eq!(
        serde_json::to_value(&whole.flows).unwrap(),
        serde_json::to_value(&sliced.flows).unwrap()
    );
    assert_eq!(
        serde_json::to_value(&whole.ports).unwrap(),
        serde_json::to_value(&sliced.ports).unwrap()
    );
}

#[test]
fn drops_at_an_eager_port_balance_the_ledger_at_any_end() {
    // The exit links r2 -> d_i are fed by r1 -> r2 alone, so their ports
    // learn of arrivals early; a small buffer there makes them drop packets
    // "in the future". Whatever instant the run ends at, the ledgers balance.
    let mut sc = ip_net(
        3,
        50e6,
        50,
        json!({"kind": "tail"}),
        tcp("reno", 1000, 1 << 18, 3),
        2,
    );
    for l in &mut sc.links {
        if l.name.starts_with("r2-d") {
            l.bit_rate_bps = 10e6;
            l.buffer_packets = Some(5);
        }
    }
    for end_ms in [137u64, 501, 999, 1500, 2000] {
        let mut sim = Simulation::new(&sc).unwrap();
        sim.advance(end_ms * MS + 123_457);
        let (s, _) = sim.finish();
        assert!(s.conservation.ok, "end {end_ms} ms: {:#?}", s.conservation);
        let exit_drops: u64 = s
            .ports
            .iter()
            .filter(|p| p.name.starts_with("r2-d"))
            .map(|p| p.packets_dropped)
            .sum();
        if end_ms >= 999 {
            assert!(exit_drops > 0, "no drop at the eager ports by {end_ms} ms");
        }
    }
}

/// Runs `sc` in slices of `slice` ps; returns the summary, the series and
/// the events.
fn run_sliced(sc: &Scenario, slice: u64) -> (Summary, Series, u64) {
    let mut sim = Simulation::new(sc).unwrap();
    let mut t = 0;
    while t < sc.duration_ps {
        t += slice;
        sim.advance(t);
    }
    let events = sim.events();
    let (s, series) = sim.finish();
    assert!(s.conservation.ok, "{:#?}", s.conservation);
    (s, series, events)
}

fn assert_same_results(a: &(Summary, Series, u64), b: &(Summary, Series, u64)) {
    for (x, y) in [
        (
            serde_json::to_value(&a.0.flows),
            serde_json::to_value(&b.0.flows),
        ),
        (
            serde_json::to_value(&a.0.ports),
            serde_json::to_value(&b.0.ports),
        ),
        (
            serde_json::to_value(&a.0.conservation.packets),
            serde_json::to_value(&b.0.conservation.packets),
        ),
    ] {
        assert_eq!(x.unwrap(), y.unwrap());
    }
    assert_eq!(a.1.time_s, b.1.time_s);
    assert_eq!(a.1.entity, b.1.entity);
    assert_eq!(a.1.metric, b.1.metric);
    assert_eq!(a.1.value, b.1.value);
}

#[test]
fn eager_ends_change_nothing_but_the_event_count() {
    // A receiver that ACKs at once takes each segment when its arrival time
    // is known, and a sender with a fine timer each ACK, if that is within
    // the current advance. Slices shorter than the last hop (1 ms) leave no
    // arrival within reach: every packet then takes the event path. Results
    // and series must not differ, only the events. The flows start together
    // (simultaneous arrivals) and are probed every 0.1 ms (ticks that fall
    // between an eager step and the time it is about).
    let mut flow = tcp("reno", 1000, 1 << 18, 3);
    flow["timer"] = json!({"kind": "fine"});
    let mut sc = ip_net(4, 20e6, 30, json!({"kind": "tail"}), flow, 3);
    for f in &mut sc.flows {
        f.start_ps = 0;
    }
    sc.probes.period_ps = MS / 10;
    sc.probes.flows = vec![0, 1, 2, 3];
    sc.probes.queue = vec![0];
    sc.probes.utilization = vec![0];
    let whole = run_sliced(&sc, sc.duration_ps);
    let fine = run_sliced(&sc, MS / 2);
    assert_same_results(&whole, &fine);
    assert!(whole
        .0
        .flows
        .iter()
        .all(|f| f.timeouts + f.fast_retransmits > 0));
    // One arrival event saved per data segment and per ACK.
    let segments = whole.0.flows.iter().map(|f| f.segments_sent).sum::<u64>();
    assert!(
        whole.2 + segments * 18 / 10 < fine.2,
        "{} events in one go, {} in slices, {segments} segments",
        whole.2,
        fine.2
    );
}

#[test]
fn batch_ports_change_nothing_but_the_event_count() {
    // r1-r2 and r2-r1 are fed by several 1 ms access links: each takes, at
    // its earliest arrival E, every arrival before E + 1 ms (and before the
    // end of the advance) in one IpBatch event. Slices of 20 us cut the
    // batches to a packet or two and keep the ends from being eager; the
    // results and series must not change, only the events.
    let mut flow = tcp("newreno", 1000, 1 << 18, 3);
    flow["timer"] = json!({"kind": "fine"});
    let mut sc = ip_net(4, 20e6, 30, json!({"kind": "tail"}), flow, 2);
    sc.probes.period_ps = MS / 10;
    sc.probes.flows = vec![0, 1, 2, 3];
    sc.probes.queue = vec![0, 1];
    sc.probes.utilization = vec![0];
    let whole = run_sliced(&sc, sc.duration_ps);
    let fine = run_sliced(&sc, MS / 50);
    assert_same_results(&whole, &fine);
    let core = &whole.0.ports[0];
    assert!(core.packets_dropped > 0 && core.max_queue_packets == 30);
    // Two or three packets per batch at the 20 Mb/s core (416 us each), and
    // eager ends: besides the probe ticks, fewer events than half the
    // packets delivered in one go.
    let delivered = whole.0.conservation.packets.delivered;
    let ticks = sc.duration_ps / sc.probes.period_ps + 1;
    assert!(
        (whole.2 - ticks) * 2 < delivered,
        "{} events ({ticks} probe ticks) for {delivered} packets",
        whole.2
    );
}

#[test]
fn ends_with_timers_or_shared_links_are_not_eager() {
    // With delayed ACKs a timer touches the receiver, and with a coarse
    // timer a global tick touches the sender: neither end is eager, so
    // every packet reaches its end host through an arrival event, in one
    // go as in slices.
    let mut flow = tcp("reno", 1000, 1 << 18, 3);
    flow["delayed_ack_ps"] = json!(100 * MS);
    let sc = ip_net(2, 20e6, 30, json!({"kind": "tail"}), flow, 2);
    let a = run_sliced(&sc, sc.duration_ps);
    let b = run_sliced(&sc, MS / 2);
    for run in [&a, &b] {
        assert!(run.2 >= run.0.conservation.packets.delivered);
    }
    assert_same_results(&a, &b);
    // A flow back from d0 to s0 sends its data on d0's link, which also
    // carries f0's ACKs, and takes its ACKs on s0's link, which carries f0's
    // data: neither end of f0 or of the flow back may be eager, but f1's
    // are. Results do not depend on the slices either way.
    let mut flow = tcp("reno", 1000, 1 << 18, 3);
    flow["timer"] = json!({"kind": "fine"});
    let mut sc = ip_net(2, 20e6, 30, json!({"kind": "tail"}), flow, 2);
    let mut back = sc.flows[0].clone();
    back.name = "back".into();
    let keys = &mut back.keys;
    std::mem::swap(&mut keys.data_links, &mut keys.ack_links);
    sc.flows.push(back);
    let a = run_sliced(&sc, sc.duration_ps);
    let b = run_sliced(&sc, MS / 2);
    assert_same_results(&a, &b);
    assert!(a.0.flows.iter().all(|f| f.bytes_delivered > 0));
}

#[test]
fn the_plain_event_path_gives_the_same_results_as_the_fast_paths() {
    // Batch core ports, eager access ports and eager ends (fine timers), and
    // RED with SACK: with the fast paths off every packet arrival is an
    // event; results and series must not change, only the events.
    for (policy, variant) in [
        (json!({"kind": "tail"}), "newreno"),
        (
            json!({"kind": "red", "min_th": 5.0, "max_th": 15.0, "w_q": 0.002, "max_p": 0.1}),
            "sack",
        ),
    ] {
        let mut flow = tcp(variant, 1000, 1 << 18, 3);
        flow["timer"] = json!({"kind": "fine"});
        let mut sc = ip_net(4, 20e6, 30, policy, flow, 2);
        sc.probes.period_ps = MS / 10;
        sc.probes.flows = vec![0, 1, 2, 3];
        sc.probes.queue = vec![0, 1];
        sc.probes.utilization = vec![0];
        let fast = run_sliced(&sc, sc.duration_ps);
        sc.fast_paths = false;
        let plain = run_sliced(&sc, sc.duration_ps);
        assert_same_results(&fast, &plain);
        assert!(fast.0.ports[0].packets_dropped > 0);
        // The plain path: at least one event per packet delivered.
        assert!(plain.2 >= plain.0.conservation.packets.delivered);
        assert!(fast.2 < plain.2, "{} vs {} events", fast.2, plain.2);
    }
}
