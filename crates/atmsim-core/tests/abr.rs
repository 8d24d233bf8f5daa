//! ABR end to end: greedy sources under ERICA, ERICA+ and FMMRA converge to the
//! analytic rates (the max-min rates of the reference configurations), EFCI
//! reacts, and the ledger balances with RM cells, VBR priority and TCP on top.

use atmsim_core::atm::CELL_BITS;
use atmsim_core::stats::Summary;
use atmsim_core::{Scenario, Simulation};
use serde_json::{json, Value};

mod common;
use common::{merge, run, MS, OC3_CPS, S};

fn abr_params(pcr: f64) -> Value {
    json!({"pcr_cps": pcr, "mcr_cps": 0.0, "icr_cps": 10e6 / CELL_BITS, "rif": 1.0, "rdf": 1.0 / 512.0,
           "nrm": 32, "mrm": 2, "trm_ps": 100 * MS, "crm": 16, "cdf": 0.5, "adtf_ps": 500 * MS, "tcr_cps": 10.0})
}

fn erica() -> Value {
    json!({"kind": "erica", "target_utilization": 0.9, "interval_ps": MS, "interval_cells": 100,
           "delta": 0.1, "measured_rate": false, "bidirectional_count": false})
}

fn erica_plus() -> Value {
    json!({"kind": "erica_plus", "interval_ps": MS, "interval_cells": 100, "delta": 0.1,
           "measured_rate": false, "bidirectional_count": false,
           "t0_ps": 3 * MS / 2, "a": 1.15, "b": 1.05, "qdlf": 0.5})
}

fn fmmra() -> Value {
    json!({"kind": "fmmra", "interval_ps": MS, "interval_cells": 100})
}

/// A network builder: nodes, duplex links, ABR VCs with greedy sources.
#[derive(Default)]
struct Net {
    nodes: Vec<String>,
    links: Vec<Value>,
    vcs: Vec<Value>,
    sources: Vec<Value>,
}

impl Net {
    fn node(&mut self, name: &str) -> usize {
        if let Some(i) = self.nodes.iter().position(|n| n == name) {
            return i;
        }
        self.nodes.push(name.to_string());
        self.nodes.len() - 1
    }

    fn link_index(&self, from: usize, to: usize) -> usize {
        let name = format!("{}-{}", self.nodes[from], self.nodes[to]);
        self.links
            .iter()
            .position(|l| l["name"] == name)
            .expect("no link")
    }

    /// Duplex link a <-> b at `cps`, `delay` ps; the a -> b port has `algo`.
    fn duplex(&mut self, a: &str, b: &str, cps: f64, delay: u64, algo: Option<Value>) {
        let (ia, ib) = (self.node(a), self.node(b));
        for (x, y, alg) in [(ia, ib, algo.clone()), (ib, ia, algo)] {
            self.links.push(json!({"name": format!("{}-{}", self.nodes[x], self.nodes[y]),
                "from": x, "to": y, "bit_rate_bps": cps * CELL_BITS, "cell_rate_cps": cps, "delay_ps": delay,
                "buffer_cells": null, "policy": {"kind": "tail"}, "algorithm": alg}));
        }
    }

    /// An ABR VC along `path` (node names) with a greedy source starting at `start`.
    fn greedy_abr(&mut self, name: &str, path: &[&str], start: u64) {
        let ids: Vec<usize> = path.iter().map(|n| self.node(n)).collect();
        let fwd: Vec<usize> = ids
            .windows(2)
            .map(|w| self.link_index(w[0], w[1]))
            .collect();
        let back: Vec<usize> = ids
            .windows(2)
            .rev()
            .map(|w| self.link_index(w[1], w[0]))
            .collect();
        let vc = self.vcs.len();
        self.vcs.push(
            json!({"name": name, "class": "abr", "links": fwd, "back_links": back,
                             "abr": abr_params(OC3_CPS)}),
        );
        self.sources
            .push(json!({"name": name, "vc": vc, "start_ps": start, "model": {"kind": "greedy"}}));
    }

    fn scenario(&self, secs: u64, extra: Value) -> Scenario {
        let nodes: Vec<Value> = self.nodes.iter().map(|n| json!({"name": n})).collect();
        let v = json!({"duration_ps": secs * S, "seed": 1, "nodes": nodes, "links": self.links,
                       "vcs": self.vcs, "sources": self.sources});
        serde_json::from_value(merge(v, extra)).unwrap()
    }
}

fn acrs(s: &Summary) -> Vec<f64> {
    s.vcs
        .iter()
        .filter_map(|v| v.abr.as_ref().map(|a| a.acr_cps))
        .collect()
}

/// Runs `net` for `secs` and returns each VC's mean in-rate cell rate over
/// the second half (delivered data cells x 32/31 for the RM cells), cells/s.
fn mean_rates(net: &Net, secs: u64) -> (Summary, Vec<f64>) {
    let n = net.vcs.len();
    let sc = net.scenario(
        secs,
        json!({"probes": {"period_ps": 10 * MS, "vc_rate": (0..n).collect::<Vec<_>>()}}),
    );
    let mut sim = Simulation::new(&sc).unwrap();
    sim.run();
    let (s, series) = sim.finish();
    assert!(s.conservation.ok, "{:#?}", s.conservation);
    let n_links = s.ports.len() as u32;
    let half = secs as f64 / 2.0;
    let mut sum = vec![0.0; n];
    let mut count = vec![0usize; n];
    for i in 0..series.len() {
        if series.time_s[i] > half && series.metric[i] == 2 {
            let v = (series.entity[i] - n_links) as usize;
            sum[v] += series.value[i];
            count[v] += 1;
        }
    }
    let rates = sum
        .iter()
        .zip(&count)
        .map(|(s, c)| s / *c as f64 * 32.0 / 31.0)
        .collect();
    (s, rates)
}

/// n greedy sources s_i -> sw1 -> sw2 -> d_i, 100 km links, `algo` at sw1 -> sw2.
fn n_source(n: usize, algo: Value) -> Net {
    let mut net = Net::default();
    net.duplex("sw1", "sw2", OC3_CPS, 500 * 1_000_000, Some(algo));
    for i in 0..n {
        net.duplex(&format!("s{i}"), "sw1", OC3_CPS, 500 * 1_000_000, None);
        net.duplex("sw2", &format!("d{i}"), OC3_CPS, 500 * 1_000_000, None);
    }
    for i in 0..n {
        net.greedy_abr(
            &format!("v{i}"),
            &[&format!("s{i}"), "sw1", "sw2", &format!("d{i}")],
            i as u64 * 5 * MS,
        );
    }
    net
}

#[test]
fn erica_gives_n_greedy_sources_u_c_over_n() {
    // With delta = 0, ERICA's only equilibrium is z = 1: every source at
    // U C / n. (With the usual delta = 0.1, see the next test.)
    for n in [1, 2, 5, 10] {
        let mut algo = erica();
        algo["delta"] = json!(0.0);
        let s = run(&n_source(n, algo).scenario(1, json!({})));
        let target = 0.9 * OC3_CPS / n as f64;
        for a in acrs(&s) {
            assert!(
                (a / target - 1.0).abs() < 0.02,
                "n = {n}: ACR {a} vs {target}"
            );
        }
        let u = s.ports[0].utilization;
        assert!((u - 0.9).abs() < 0.02, "n = {n}: utilization {u}");
    }
}

#[test]
fn erica_with_a_delta_band_settles_fairly_inside_the_band() {
    // With delta = 0.1 any equal allocation with 1 <= z <= 1.1 is stable
    // (ER = max(MaxAllocPrevious, CCR/z) keeps it): the sources end equal,
    // between U C / n and (1 + delta) U C / n.
    for n in [2, 5, 10] {
        let s = run(&n_source(n, erica()).scenario(1, json!({})));
        let target = 0.9 * OC3_CPS / n as f64;
        let a = acrs(&s);
        let (lo, hi) = a
            .iter()
            .fold((f64::MAX, 0.0f64), |(l, h), &x| (l.min(x), h.max(x)));
        assert!(hi / lo < 1.01, "n = {n}: unfair {a:?}");
        assert!(
            lo > 0.99 * target && hi < 1.11 * target,
            "n = {n}: {a:?} vs {target}"
        );
    }
}

#[test]
fn fmmra_gives_n_greedy_sources_c_over_n() {
    for n in [2, 5] {
        let s = run(&n_source(n, fmmra()).scenario(1, json!({})));
        let target = OC3_CPS / n as f64;
        for a in acrs(&s) {
            assert!(
                (a / target - 1.0).abs() < 0.02,
                "n = {n}: ACR {a} vs {target}"
            );
        }
    }
}

/// GFC-2 (Explicit rate control of TCP (Satyavolu et al., 1998) section 6.2,
/// scaled from ATM Forum 94-0557): 7 switches in a chain.
fn gfc2(algo: Value) -> Net {
    let mbps = |m: f64| m * 1e6 / CELL_BITS;
    let mut net = Net::default();
    let hop = 1_000 * 1_000_000; // 200 km, 1 ms
    let chain = [
        ("SW1", "SW2", 50.0),
        ("SW2", "SW3", 100.0),
        ("SW3", "SW4", 50.0),
        ("SW4", "SW5", 150.0),
        ("SW5", "SW6", 150.0),
        ("SW6", "SW7", 50.0),
    ];
    for (a, b, m) in chain {
        net.duplex(a, b, mbps(m), hop, Some(algo.clone()));
    }
    // (group, count, enters at, leaves at)
    let groups: Vec<(&str, Vec<&str>, &str)> = vec![
        ("A", vec!["SW1", "SW2", "SW3"], "SW6"),
        ("B", vec!["SW1", "SW2", "SW4"], "SW7"),
        ("C", vec!["SW5", "SW5", "SW5"], "SW6"),
        ("D", vec!["SW1"], "SW2"),
        ("E", vec!["SW2", "SW2"], "SW3"),
        ("F", vec!["SW3"], "SW4"),
        ("G", vec!["SW6"; 7], "SW7"),
        ("H", vec!["SW4", "SW4"], "SW5"),
    ];
    let sw = |k: usize| format!("SW{k}");
    for (g, entries, exit) in &groups {
        for (i, entry) in entries.iter().enumerate() {
            let (src, dst) = (format!("{g}{i}s"), format!("{g}{i}d"));
            net.duplex(&src, entry, OC3_CPS, 1_000_000, None);
            net.duplex(exit, &dst, OC3_CPS, 1_000_000, None);
            let a: usize = entry[2..].parse().unwrap();
            let b: usize = exit[2..].parse().unwrap();
            let mut path = vec![src.clone()];
            path.extend((a..=b).map(sw));
            path.push(dst);
            let refs: Vec<&str> = path.iter().map(|s| s.as_str()).collect();
            net.greedy_abr(&format!("{g}{i}"), &refs, 0);
        }
    }
    net
}

/// Max-min rates of GFC-2 (Mb/s) by group.
fn gfc2_max_min(g: char) -> f64 {
    match g {
        'A' => 10.0,
        'B' => 5.0,
        'C' => 35.0,
        'D' => 35.0,
        'E' => 35.0,
        'F' => 10.0,
        'G' => 5.0,
        'H' => 52.5,
        _ => unreachable!(),
    }
}

fn check_gfc2(algo: Value, scale: f64) {
    let (s, rates) = mean_rates(&gfc2(algo), 2);
    for (v, r) in s.vcs.iter().zip(rates) {
        let g = v.name.chars().next().unwrap();
        let mbps = r * CELL_BITS / 1e6;
        let want = gfc2_max_min(g) * scale;
        assert!(
            (mbps / want - 1.0).abs() < 0.05,
            "{}: {mbps:.2} Mb/s vs {want:.2}",
            v.name
        );
    }
}

#[test]
fn gfc2_converges_to_max_min_under_fmmra() {
    check_gfc2(fmmra(), 1.0);
}

#[test]
fn gfc2_converges_to_max_min_under_erica_plus() {
    check_gfc2(erica_plus(), 1.0);
}

#[test]
fn efci_marks_and_sources_back_off() {
    let efci = json!({"kind": "efci", "high_cells": 50, "low_cells": 50});
    let mut net = n_source(2, efci);
    for v in &mut net.vcs {
        // The EFCI source parameters of TCP over FMMRA (An et al., 1998), TM 4.0's TBE.
        v["abr"]["rif"] = json!(0.1);
        v["abr"]["rdf"] = json!(1.0 / 16.0);
        v["abr"]["crm"] = json!(524_288);
    }
    let s = run(&net.scenario(1, json!({})));
    // Binary feedback oscillates, but it bounds the queue ...
    let p = &s.ports[0];
    assert!(p.max_queue_cells < 5_000, "{}", p.max_queue_cells);
    assert!(p.utilization > 0.5, "{}", p.utilization);
    // ... where sources without feedback overrun the port: two sources at
    // the line rate into one link fill it with half a second of cells.
    for l in &mut net.links {
        l["algorithm"] = Value::Null;
    }
    let s = run(&net.scenario(1, json!({})));
    assert!(
        s.ports[0].max_queue_cells > 100_000,
        "{}",
        s.ports[0].max_queue_cells
    );
}

#[test]
fn vbr_background_takes_priority_and_erica_gives_abr_the_rest() {
    // CBR-like VBR at 40 % of the link on a VC through the bottleneck.
    let mut net = n_source(2, erica());
    let (s_vbr, sw1) = (net.node("vbr"), net.node("sw1"));
    net.duplex("vbr", "sw1", OC3_CPS, 1_000_000, None);
    let (sw2, d) = (net.node("sw2"), net.node("d0"));
    let fwd = vec![
        net.link_index(s_vbr, sw1),
        net.link_index(sw1, sw2),
        net.link_index(sw2, d),
    ];
    let vc = net.vcs.len();
    net.vcs
        .push(json!({"name": "vbr", "class": "vbr", "links": fwd}));
    net.sources.push(
        json!({"name": "vbr", "vc": vc, "model": {"kind": "cbr", "rate_cps": 0.4 * OC3_CPS}}),
    );
    let s = run(&net.scenario(1, json!({})));
    let target = (0.9 - 0.4) * OC3_CPS / 2.0;
    for a in acrs(&s) {
        assert!(
            a > 0.99 * target && a < 1.11 * target,
            "ACR {a} vs {target}"
        );
    }
    // The VBR stream is served first: all but the cells still in flight
    // (2 ms of propagation) arrive.
    let vbr = s.vcs.iter().find(|v| v.name == "vbr").unwrap();
    assert!(vbr.cells_sent - vbr.cells_delivered < (0.4 * OC3_CPS * 0.0021) as u64);
}

/// The configuration of TCP over ABR (Kalyanaraman et al., 1996), section 8: n
/// TCP sources over ABR through SW1 -> SW2 (three 1000 km links), ERICA at the
/// bottleneck, `buffer` cells, TBE 512, optional VBR background.
fn tcp_over_abr(n: usize, buffer: Option<u32>, tbe: u32, vbr: bool, secs: u64) -> Scenario {
    let km = 5_000_000u64; // ps per km
    let mut net = Net::default();
    net.duplex("sw1", "sw2", OC3_CPS, 1000 * km, Some(erica()));
    for i in 0..n {
        net.duplex(&format!("s{i}"), "sw1", OC3_CPS, 1000 * km, None);
        net.duplex("sw2", &format!("d{i}"), OC3_CPS, 1000 * km, None);
    }
    if let Some(b) = buffer {
        net.links[0]["buffer_cells"] = json!(b);
    }
    let mut flows = vec![];
    for i in 0..n {
        let path = [format!("s{i}"), "sw1".into(), "sw2".into(), format!("d{i}")];
        let ids: Vec<usize> = path.iter().map(|p| net.node(p)).collect();
        let fwd: Vec<usize> = ids.windows(2).map(|w| net.link_index(w[0], w[1])).collect();
        let back: Vec<usize> = ids
            .windows(2)
            .rev()
            .map(|w| net.link_index(w[1], w[0]))
            .collect();
        let mut p = abr_params(OC3_CPS);
        p["crm"] = json!(tbe.div_ceil(32));
        let d = net.vcs.len();
        net.vcs.push(json!({"name": format!("f{i}"), "class": "abr", "links": fwd, "back_links": back, "abr": p}));
        net.vcs.push(json!({"name": format!("f{i}-ack"), "class": "abr", "links": back, "back_links": fwd, "abr": p}));
        flows.push(json!({"name": format!("f{i}"), "layer": "atm", "data_vc": d, "ack_vc": d + 1,
            "variant": "tahoe_nofr", "mss_bytes": 512, "rcv_window_bytes": 1 << 20, "window_scale": 4,
            "initial_cwnd_segments": 1, "initial_ssthresh_bytes": null,
            "timer": {"kind": "coarse", "tick_ps": 100 * MS},
            "initial_rto_ps": 3 * S, "min_rto_ps": 200 * MS, "max_rto_ps": 64 * S,
            "delayed_ack_ps": 0, "app_bytes": null, "max_sack_blocks": 3}));
    }
    if vbr {
        net.duplex("vbr", "sw1", OC3_CPS, 1000 * km, None);
        net.duplex("sw2", "vbrd", OC3_CPS, 1000 * km, None);
        let ids: Vec<usize> = ["vbr", "sw1", "sw2", "vbrd"]
            .iter()
            .map(|p| net.node(p))
            .collect();
        let fwd: Vec<usize> = ids.windows(2).map(|w| net.link_index(w[0], w[1])).collect();
        let vc = net.vcs.len();
        net.vcs
            .push(json!({"name": "vbr", "class": "vbr", "links": fwd}));
        net.sources.push(json!({"name": "vbr", "vc": vc, "start_ps": 2 * MS, "model": {"kind": "vbr_onoff",
            "peak_cps": 124.41e6 / CELL_BITS, "on_ps": 100 * MS, "off_ps": 100 * MS, "distribution": "fixed"}}));
    }
    net.scenario(secs, json!({"flows": flows}))
}

#[test]
fn tcp_over_abr_with_enough_buffer_loses_nothing_and_is_rate_limited() {
    // TCP over ABR section 8: 2 sources, 4096 cells, TBE 512, no VBR: no loss,
    // and each source uses the rate ERICA gives it (0.9 C / 2).
    let s = run(&tcp_over_abr(2, Some(4096), 512, false, 2));
    let dropped: u64 = s.ports.iter().map(|p| p.cells_dropped).sum();
    assert_eq!(dropped, 0);
    let total: f64 = s.flows.iter().map(|f| f.goodput_mbps).sum();
    eprintln!(
        "tcp over abr: total goodput {total:.2} Mb/s, flows {:?}",
        s.flows.iter().map(|f| f.goodput_mbps).collect::<Vec<_>>()
    );
    // 155.52 x 0.9 x 48/53 x 512/568 x 31/32 = 110.6 Mb/s at most.
    assert!(total < 110.7 && total > 90.0, "{total}");
}

#[test]
fn running_in_slices_gives_the_same_results_as_in_one_go() {
    // The Python layer advances in slices (progress bar, Ctrl-C); nothing
    // may depend on where the slices end.
    let sc = tcp_over_abr(2, Some(2048), 512, true, 1);
    let whole = run(&sc);
    let mut sim = Simulation::new(&sc).unwrap();
    let step = 7_777_777_777; // ps, not a divisor of anything in the scenario
    let mut t = 0;
    while t < sc.duration_ps {
        t += step;
        sim.advance(t);
    }
    let (sliced, _) = sim.finish();
    for (a, b) in [
        (
            serde_json::to_value(&whole.ports),
            serde_json::to_value(&sliced.ports),
        ),
        (
            serde_json::to_value(&whole.vcs),
            serde_json::to_value(&sliced.vcs),
        ),
        (
            serde_json::to_value(&whole.flows),
            serde_json::to_value(&sliced.flows),
        ),
    ] {
        assert_eq!(a.unwrap(), b.unwrap());
    }
    // The events dispatched may differ: the merged sources' event stops at
    // each slice's end (a fast path: it emits the same cells at the same
    // times either way).
    assert!(sliced.events >= whole.events);
}

#[test]
fn quiet_end_links_change_nothing_but_the_event_count() {
    // TCP over ABR with VBR background, EFCI-noting destinations, delay
    // statistics, probes and uneven slices: the cells that do not end a
    // frame reach their ends without events (fast path 6) and every result
    // is the plain path's.
    let mut sc = tcp_over_abr(2, Some(1024), 512, true, 1);
    sc.probes.period_ps = 7 * MS + 13;
    sc.probes.flows = vec![0, 1];
    sc.probes.vc_rate = vec![0, 1, 2, 3];
    sc.probes.abr_vcs = vec![0, 2];
    sc.probes.delay = true;
    let stops = [3 * MS, 3 * MS + 1, 250 * MS + 7, 251 * MS, 700 * MS];
    let (fast, plain) = common::same_both_ways(&sc, &stops);
    assert!(fast * 10 < plain * 9, "{fast} vs {plain} events");
}

#[test]
fn quiet_end_links_change_nothing_across_a_grid() {
    // Fast path 6 away from the configuration above: one and three sources,
    // a small and a large buffer, MSS 512, 1460 and 9180 (frames of 12, 32
    // and 193 cells), links of 1000 km and of 1 km (a LAN), with and
    // without VBR. Every result is the plain path's.
    for (n, buffer, mss, km, vbr) in [
        (1, 256, 1460, 1000, false),
        (3, 256, 512, 1, true),
        (3, 4096, 9180, 1000, false),
        (1, 4096, 512, 1, false),
        (3, 1024, 1460, 1, false),
        (1, 1024, 9180, 1, true),
    ] {
        let mut sc = tcp_over_abr(n, Some(buffer), 512, vbr, 1);
        for f in &mut sc.flows {
            f.tcp.mss_bytes = mss;
        }
        for l in &mut sc.links {
            l.delay_ps = l.delay_ps / 1000 * km;
        }
        sc.probes.period_ps = 11 * MS;
        sc.probes.flows = (0..n as u32).collect();
        sc.probes.delay = true;
        let (fast, plain) = common::same_both_ways(&sc, &[MS / 3, 97 * MS]);
        assert!(
            fast < plain,
            "n {n} buffer {buffer} mss {mss} {km} km: {fast} vs {plain} events"
        );
    }
}
