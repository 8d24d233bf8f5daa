//! `cargo bench -p atmsim-core`: the core alone on
//! - `mux_onoff` (10 geometric on/off sources, load 0.9, one 1000-cell port,
//!   30 s): cells per second;
//! - an IP dumbbell (5 Reno flows, MSS 1000, through a 155.52 Mb/s, 20 ms,
//!   100-packet drop-tail bottleneck, 20 s): packets per second;
//! - `scale`: N geometric on/off VCs (N = 10 ... 100,000) sharing one OC-48
//!   port (2488.32 Mb/s, 1000-cell buffer) at load 0.9, each with a peak of
//!   2/N and a mean of 0.9/N of the link (N = 10 is mux_onoff's shape), 1 s
//!   simulated: cells per second against N.
//!
//! Each figure is the median of `runs=N` runs (default 5) with the spread
//! (min - max), in wall time and in CPU time of the running thread (Linux:
//! `/proc/thread-self/schedstat`; the wall time elsewhere). The run itself
//! is timed: building the network and `finish` are not, as in
//! `Result.loop_wall_s`. `atmsim bench` measures the same through Python.
//!
//! - `floor`: mux_onoff's model with none of the engine around it (the
//!   same sources, random streams, timing wheel and tail-drop step, in one
//!   plain loop), then with the engine's parts added one at a time: what
//!   a cell costs at the least, and what each part adds (docs/performance.md).
//!   Each level checks that it sent and dropped the cells the simulator did.
//!
//! Words after `--`: `mux`, `dumbbell`, `scale`, `floor` pick the benchmarks
//! (`scale` and `floor` only when named); `plain` turns the fast paths off;
//! `delay` turns the delay statistics on (`probes.delay`);
//! `runs=N`; `vcs=N` runs the scale series at that one N; `secs=S` sets its
//! simulated time; `file=PATH` runs a core scenario (the JSON `atmsim
//! scenario` hands the core) instead, counting its cells: the general path
//! on the papers' own configurations (`atmsim bench` writes such files).

use atmsim_core::atm::CELL_BITS;
use atmsim_core::atm::{Cell, Reassembly};
use atmsim_core::engine::time::cell_time_ps;
use atmsim_core::engine::{RngStream, TieKey, Time, TimingWheel};
use atmsim_core::stats::Summary;
use atmsim_core::traffic::geometric_onoff::GeometricOnOff;
use atmsim_core::traffic::TrafficSource;
use atmsim_core::{Scenario, Simulation};
use std::collections::VecDeque;
use std::time::Instant;

/// N geometric on/off sources, each on its own VC, into one port of a link
/// of `link_bps` with a `buffer`-cell buffer, for `secs` simulated seconds.
fn onoff_mux(n: usize, link_bps: f64, peak: f64, mean: f64, buffer: u32, secs: f64) -> Scenario {
    let link_cps = link_bps / CELL_BITS;
    let (peak, mean) = (peak * link_cps, mean * link_cps);
    let vcs: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"name":"s{i}","class":"ubr","links":[0]}}"#))
        .collect();
    let sources: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"name":"s{i}","vc":{i},"model":{{"kind":"geometric_onoff","peak_cps":{peak},"mean_cps":{mean},"mean_burst_cells":{MEAN_BURST}}}}}"#
            )
        })
        .collect();
    let json = format!(
        r#"{{"duration_ps":{duration},"seed":1,
        "nodes":[{{"name":"mux","kind":"host"}},{{"name":"sink","kind":"host"}}],
        "links":[{{"name":"mux->sink","from":0,"to":1,"bit_rate_bps":{link_bps},"cell_rate_cps":{link_cps},
                   "delay_ps":0,"buffer_cells":{buffer},"policy":{{"kind":"tail"}}}}],
        "vcs":[{}],"sources":[{}]}}"#,
        vcs.join(","),
        sources.join(","),
        duration = (secs * 1e12) as u64,
    );
    serde_json::from_str(&json).unwrap()
}

/// N CBR sources, each on its own VC into one port of a link of
/// `link_bps`, together at the link's rate, all started at 0 with random
/// arbitration of simultaneous cells.
fn together(n: usize, link_bps: f64, secs: f64) -> Scenario {
    let link_cps = link_bps / CELL_BITS;
    let rate = link_cps / n as f64;
    let vcs: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"name":"s{i}","class":"ubr","links":[0]}}"#))
        .collect();
    let sources: Vec<String> = (0..n)
        .map(|i| {
            format!(r#"{{"name":"s{i}","vc":{i},"model":{{"kind":"cbr","rate_cps":{rate}}}}}"#)
        })
        .collect();
    let json = format!(
        r#"{{"duration_ps":{duration},"seed":1,"arbitration":"random",
        "nodes":[{{"name":"mux","kind":"host"}},{{"name":"sink","kind":"host"}}],
        "links":[{{"name":"mux->sink","from":0,"to":1,"bit_rate_bps":{link_bps},"cell_rate_cps":{link_cps},
                   "delay_ps":0,"buffer_cells":1000000,"policy":{{"kind":"tail"}}}}],
        "vcs":[{}],"sources":[{}]}}"#,
        vcs.join(","),
        sources.join(","),
        duration = (secs * 1e12) as u64,
    );
    serde_json::from_str(&json).unwrap()
}

/// Cells in a burst on average, every on/off source of these benchmarks.
const MEAN_BURST: f64 = 100.0;

/// mux_onoff's shape: sources, link bit rate, peak and mean (fractions of
/// the link), buffer cells, simulated seconds (the `mux` and `floor` runs).
const MUX_ONOFF: (usize, f64, f64, f64, u32, f64) = (10, 155.52e6, 0.2, 0.09, 1000, 30.0);

fn mux_onoff() -> Scenario {
    let (n, link_bps, peak, mean, buffer, secs) = MUX_ONOFF;
    onoff_mux(n, link_bps, peak, mean, buffer, secs)
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

/// The options after `--`.
struct Options {
    plain: bool,
    delay: bool,
    runs: usize,
    vcs: Option<usize>,
    secs: f64,
    only: Vec<String>,
    /// Core scenarios (JSON, as `atmsim.scenario.to_core` writes them) to
    /// run as they are.
    files: Vec<String>,
}

fn options() -> Options {
    let mut o = Options {
        plain: false,
        delay: false,
        runs: 5,
        vcs: None,
        secs: 1.0,
        only: vec![],
        files: vec![],
    };
    for a in std::env::args().skip(1).filter(|a| !a.starts_with('-')) {
        if a == "plain" {
            o.plain = true;
        } else if a == "delay" {
            o.delay = true;
        } else if let Some(n) = a.strip_prefix("runs=") {
            o.runs = n.parse().expect("runs=N");
        } else if let Some(n) = a.strip_prefix("vcs=") {
            o.vcs = Some(n.parse().expect("vcs=N"));
        } else if let Some(s) = a.strip_prefix("secs=") {
            o.secs = s.parse().expect("secs=S");
        } else if let Some(path) = a.strip_prefix("file=") {
            o.files.push(path.to_string());
        } else {
            o.only.push(a);
        }
    }
    o
}

fn main() {
    let o = options();
    let want = |name: &str| {
        o.files.is_empty() && o.only.is_empty() || o.only.iter().any(|w| name.contains(w.as_str()))
    };
    for path in &o.files {
        let text = std::fs::read_to_string(path).expect("file=PATH: a readable core JSON file");
        let sc = Scenario::from_json(&text).expect("file=PATH: a valid core scenario");
        bench(path, "cells", sc, &o, |s| s.conservation.cells_generated);
    }
    if want("dumbbell") {
        let sc = dumbbell();
        bench("ip dumbbell", "packets", sc, &o, |s| {
            s.conservation.packets.generated
        });
    }
    if want("mux") {
        bench("mux_onoff", "cells", mux_onoff(), &o, |s| {
            s.conservation.cells_generated
        });
    }
    if o.only.iter().any(|w| w == "floor") {
        floor(&o);
    }
    if o.only.iter().any(|w| w == "together") {
        // N CBR sources on one port, started at one instant at the same
        // rate: every cell time all N fire together, in the random order
        // of their arrival keys (a run sorted by key, not by insertion).
        for n in [1_000, 10_000, 100_000] {
            let sc = together(n, 2488.32e6, o.secs);
            bench(&format!("together N={n}"), "cells", sc, &o, |s| {
                s.conservation.cells_generated
            });
        }
    }
    if o.only.iter().any(|w| w == "scale") {
        let ns = match o.vcs {
            Some(n) => vec![n],
            None => vec![10, 100, 1_000, 10_000, 100_000],
        };
        for n in ns {
            let sc = onoff_mux(n, 2488.32e6, 2.0 / n as f64, 0.9 / n as f64, 1000, o.secs);
            bench(&format!("scale N={n}"), "cells", sc, &o, |s| {
                s.conservation.cells_generated
            });
        }
    }
}

/// CPU time of this thread so far, s (the wall clock where Linux's
/// schedstat is missing).
fn cpu_s(wall: Instant) -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map(|ns| ns as f64 * 1e-9)
        .unwrap_or_else(|| wall.elapsed().as_secs_f64())
}

/// Median, min and max of `xs`.
fn spread(xs: &mut [f64]) -> (f64, f64, f64) {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    let median = if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    };
    (median, xs[0], xs[n - 1])
}

/// Runs `sc` `o.runs` times and prints units per second (median and
/// spread, wall and CPU).
fn bench(name: &str, unit: &str, mut sc: Scenario, o: &Options, count: fn(&Summary) -> u64) {
    sc.fast_paths = !o.plain;
    sc.probes.delay = o.delay;
    let (mut walls, mut cpus) = (vec![], vec![]);
    let mut last = None;
    for _ in 0..o.runs.max(1) {
        let mut sim = Simulation::new(&sc).unwrap();
        let t0 = Instant::now();
        let c0 = cpu_s(t0);
        sim.run();
        cpus.push(cpu_s(t0) - c0);
        walls.push(t0.elapsed().as_secs_f64());
        let (summary, _) = sim.finish();
        assert!(summary.conservation.ok);
        last = Some(summary);
    }
    let summary = last.unwrap();
    let n = count(&summary) as f64;
    let (w, w0, w1) = spread(&mut walls);
    let (c, c0, c1) = spread(&mut cpus);
    println!(
        "{name}: {} {unit}, {} events, {} runs: {:.3e} {unit}/CPU-s (CPU {c:.3} s, {c0:.3}-{c1:.3}), \
         {:.3e} {unit}/wall-s (wall {w:.3} s, {w0:.3}-{w1:.3})",
        n as u64,
        summary.events,
        cpus.len(),
        n / c,
        n / w,
    );
}

/// Ties broken by source index. The engine hashes its keys instead, so two
/// emissions at one picosecond could come out in another order here. The
/// totals each level checks do not depend on that order (a tail-drop FIFO
/// of equal cells drops by the arrival times alone): the floor measures
/// cost; it does not stand in for the simulator.
struct ByIndex;

impl TieKey for ByIndex {
    fn key(&self, time: Time, item: u32) -> u128 {
        ((time as u128) << 64) | item as u128
    }
}

/// What the floor loop adds to the bare model.
#[derive(Clone, Copy, PartialEq, PartialOrd)]
enum Floor {
    /// Sources, wheel and the tail-drop step, counters only.
    Model,
    /// + each VC's send counters, as the engine opens a frame.
    VcCounters,
    /// + the lazy link as the engine keeps it: (arrival, cell) entries
    ///   delivered in batches to the VC's counters and AAL5 reassembly.
    LazyLink,
    /// the same with 16-byte entries (arrival, VC).
    LazyLinkVcOnly,
    /// + delivery when the port accepts the cell (no list).
    DeliverOnAccept,
}

/// One VC's counters in the floor loop (the engine's hot ones).
#[derive(Clone, Default)]
struct FloorVc {
    frames_sent: u64,
    cells_sent: u64,
    cells_delivered: u64,
    reassembly: Reassembly,
}

impl FloorVc {
    /// A cell reaches the VC's sink: counted and reassembled.
    #[inline(always)]
    fn deliver(&mut self, cell: &Cell) {
        self.cells_delivered += 1;
        self.reassembly.receive(cell);
    }
}

/// Puts `entry` (arrival time, what arrives) on a lazy list, as the
/// engine's lazy link does: once `drain_at` entries wait, those arrived by
/// `t` go to `deliver`, and the next drain comes a batch of 256 later.
#[inline(always)]
fn push_lazy<T: Copy>(
    list: &mut VecDeque<(Time, T)>,
    drain_at: &mut usize,
    entry: (Time, T),
    t: Time,
    mut deliver: impl FnMut(T),
) {
    list.push_back(entry);
    if list.len() >= *drain_at {
        let arrived = list.partition_point(|&(a, _)| a <= t);
        list.drain(..arrived).for_each(|(_, x)| deliver(x));
        *drain_at = list.len() + 256;
    }
}

/// mux_onoff's model in one loop at `level`: (cells sent, cells dropped,
/// CPU seconds of the loop).
fn floor_run(level: Floor) -> (u64, u64, f64) {
    let (n, link_bps, peak, mean, buffer, secs) = MUX_ONOFF;
    let link_cps = link_bps / CELL_BITS;
    let (peak, mean) = (peak * link_cps, mean * link_cps);
    let end = (secs * 1e12) as Time;
    let mut sources: Vec<(GeometricOnOff, RngStream)> = (0..n)
        .map(|i| {
            (
                GeometricOnOff::new(peak, mean, MEAN_BURST),
                RngStream::new(1, i as u64),
            )
        })
        .collect();
    let mut wheel = TimingWheel::sized(ByIndex, mean * n as f64, 1e12 / peak);
    for (i, (s, rng)) in sources.iter_mut().enumerate() {
        let t = s.first(0, rng);
        wheel.insert(i as u32, t);
    }
    let cell_time = cell_time_ps(link_cps);
    let full = buffer as Time * cell_time;
    let mut vcs = vec![FloorVc::default(); n];
    let mut cells_list: VecDeque<(Time, Cell)> = VecDeque::new();
    let mut vc_list: VecDeque<(Time, u32)> = VecDeque::new();
    let mut drain_at = 256;
    let (mut free_at, mut sent, mut dropped, mut wait): (Time, u64, u64, u128) = (0, 0, 0, 0);
    let t0 = Instant::now();
    let c0 = cpu_s(t0);
    while let Some((t, s)) = wheel.peek() {
        if t >= end {
            break;
        }
        wheel.pop();
        sent += 1;
        let (source, rng) = &mut sources[s as usize];
        if let Some(next) = source.fire(t, rng).next {
            wheel.insert(s, next);
        }
        let mut frame = 0;
        if level >= Floor::VcCounters {
            let v = &mut vcs[s as usize];
            frame = v.frames_sent as u32;
            v.frames_sent += 1;
            v.cells_sent += 1;
        }
        let backlog = free_at.saturating_sub(t);
        if backlog > full {
            dropped += 1;
            continue;
        }
        wait += backlog as u128;
        free_at = t + backlog + cell_time;
        match level {
            Floor::LazyLink => {
                let entry = (free_at, Cell::data(s, frame, 1, true));
                push_lazy(&mut cells_list, &mut drain_at, entry, t, |c| {
                    vcs[c.vc as usize].deliver(&c)
                });
            }
            Floor::LazyLinkVcOnly => {
                push_lazy(&mut vc_list, &mut drain_at, (free_at, s), t, |vc| {
                    vcs[vc as usize].deliver(&Cell::data(vc, 0, 1, true))
                });
            }
            Floor::DeliverOnAccept => vcs[s as usize].deliver(&Cell::data(s, frame, 1, true)),
            Floor::Model | Floor::VcCounters => {}
        }
    }
    let cpu = cpu_s(t0) - c0;
    std::hint::black_box((wait, &vcs));
    (sent, dropped, cpu)
}

/// The `floor` benchmark: each level `o.runs` times, checked against the
/// simulator's own run of mux_onoff.
fn floor(o: &Options) {
    let mut sim = Simulation::new(&mux_onoff()).unwrap();
    sim.run();
    let (summary, _) = sim.finish();
    let want = (summary.ports[0].cells_in, summary.ports[0].cells_dropped);
    let levels = [
        (Floor::Model, "sources, wheel, tail drop"),
        (Floor::VcCounters, "+ VC send counters"),
        (
            Floor::LazyLink,
            "+ lazy link of (arrival, cell), AAL5 delivery",
        ),
        (
            Floor::LazyLinkVcOnly,
            "  the same, entries of (arrival, VC)",
        ),
        (Floor::DeliverOnAccept, "  delivery on acceptance instead"),
    ];
    for (level, name) in levels {
        let mut cpus = vec![];
        for _ in 0..o.runs.max(1) {
            let (sent, dropped, cpu) = floor_run(level);
            assert_eq!((sent, dropped), want, "the floor loop left the model");
            cpus.push(cpu);
        }
        let (c, c0, c1) = spread(&mut cpus);
        println!(
            "floor {name}: {} cells, {} runs: {:.3e} cells/CPU-s (CPU {c:.3} s, {c0:.3}-{c1:.3})",
            want.0,
            cpus.len(),
            want.0 as f64 / c,
        );
    }
}
