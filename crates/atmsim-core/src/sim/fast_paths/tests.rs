//! The plan's conditions, one test each: a scenario that takes the fast
//! path, and the same with that one condition turned off, which does not.

use super::*;
use crate::scenario::{AckControlSpec, RateControlSpec, Scenario, VcSpec, WindowRule};
use crate::sim::testing::ip_line;

/// An explicit-rate controller (any values: the plan reads only whether
/// there is one).
fn rate_control() -> RateControlSpec {
    RateControlSpec {
        interval_ps: 1_000_000_000,
        t0_ps: 1_000_000_000,
        a: 1.15,
        b: 1.05,
        qdlf: 0.5,
        delta: 0.1,
        max_increase: 0.1,
        active_decay: 0.0,
    }
}

/// A router writing ACK windows (any values, as above).
fn ack_control() -> AckControlSpec {
    AckControlSpec {
        rates_from: 0,
        window: WindowRule::Rtt,
        ack_bucket: false,
    }
}

/// A dumbbell of two flows a1 -> r1 -> r2 -> b1 and a2 -> r1 -> r2 -> b2,
/// their ACKs back the same way over links of their own: links 0 and 1
/// (access) feed 2 (r1 -> r2), which feeds 3 and 4 (exits); links 5 and 6
/// feed 7 (r2 -> r1), which feeds 8 and 9.
fn dumbbell() -> Scenario {
    let mut sc = ip_line(100, true, "");
    let proto = sc.links[0].clone();
    sc.links = (0..10).map(|_| proto.clone()).collect();
    let f0 = sc.flows[0].clone();
    let flow = |name: &str, data: [u32; 3], ack: [u32; 3]| {
        let mut f = f0.clone();
        f.name = name.into();
        f.data_links = data.to_vec();
        f.ack_links = ack.to_vec();
        f
    };
    sc.flows = vec![
        flow("f1", [0, 2, 3], [5, 7, 8]),
        flow("f2", [1, 2, 4], [6, 7, 9]),
    ];
    sc
}

/// One ATM link carrying one passive VC (no flow, no ABR).
fn atm_sink() -> Scenario {
    let mut sc = ip_line(100, true, "");
    sc.links.truncate(2);
    for l in &mut sc.links {
        l.layer = Layer::Atm;
        l.cell_rate_cps = 1e5;
        l.buffer_packets = None;
    }
    sc.flows.clear();
    sc.vcs = vec![VcSpec {
        name: "v".into(),
        class: crate::atm::ServiceClass::Ubr,
        links: vec![0],
        back_links: vec![],
        abr: None,
        gfr: None,
    }];
    sc
}

#[test]
fn fast_paths_off_takes_none() {
    for sc in [dumbbell(), atm_sink(), ip_line(100, true, "")] {
        let on = Plan::new(&sc);
        let mut off_sc = sc.clone();
        off_sc.fast_paths = false;
        let off = Plan::new(&off_sc);
        let any = |p: &Plan| {
            p.lazy_atm.iter().chain(&p.quiet_end_atm).any(|&x| x)
                || p.eager_ip.iter().any(Option::is_some)
                || p.batch_feeders.iter().any(|f| !f.is_empty())
                || p.eager_rx.iter().chain(&p.eager_tx).any(|&x| x)
                || p.merged_sources
        };
        assert!(any(&on));
        assert!(!any(&off));
    }
}

#[test]
fn a_rate_controlling_port_allows_no_fast_path() {
    let mut link = dumbbell().links[0].clone();
    assert!(port_allows_fast_paths(&link));
    link.rate_control = Some(rate_control());
    assert!(!port_allows_fast_paths(&link));
    // The plan: an exit port is eager, a bottleneck a batch port, an ATM
    // link lazy; each is not with a controller.
    let sc = dumbbell();
    assert_eq!(Plan::new(&sc).eager_ip[3], Some(2));
    assert_eq!(Plan::new(&sc).batch_feeders[2], vec![0, 1]);
    let mut off = sc.clone();
    off.links[3].rate_control = Some(rate_control());
    assert_eq!(Plan::new(&off).eager_ip[3], None);
    let mut off = sc;
    off.links[2].rate_control = Some(rate_control());
    assert!(Plan::new(&off).batch_feeders[2].is_empty());
    let sc = atm_sink();
    assert!(Plan::new(&sc).lazy_atm[0]);
    let mut off = sc;
    off.links[0].rate_control = Some(rate_control());
    assert!(!Plan::new(&off).lazy_atm[0]);
}

#[test]
fn a_link_end_writing_acks_allows_no_fast_path() {
    let mut link = dumbbell().links[0].clone();
    assert!(link_end_allows_fast_paths(&link));
    link.ack_control = Some(ack_control());
    assert!(!link_end_allows_fast_paths(&link));
    // No eager port after it, it feeds no batch port, and an ATM link with
    // it is not lazy.
    let mut off = dumbbell();
    off.links[2].ack_control = Some(ack_control());
    assert_eq!(Plan::new(&off).eager_ip[3], None);
    let mut off = dumbbell();
    off.links[0].ack_control = Some(ack_control());
    assert!(Plan::new(&off).batch_feeders[2].is_empty());
    let mut off = atm_sink();
    off.links[0].ack_control = Some(ack_control());
    assert!(!Plan::new(&off).lazy_atm[0]);
}

#[test]
fn every_flow_allows_its_ends_to_be_eager() {
    // No kind of flow opts out yet: its ends are eager or not by the
    // structural conditions alone (the tests below).
    let sc = dumbbell();
    assert!(sc.flows.iter().all(flow_allows_fast_paths));
    assert_eq!(Plan::new(&sc).eager_rx, vec![true, true]);
    assert_eq!(Plan::new(&sc).eager_tx, vec![true, true]);
}

#[test]
fn a_lazy_link_ends_its_vcs_in_passive_sinks() {
    assert!(Plan::new(&atm_sink()).lazy_atm[0]);
    // Not an IP link.
    let mut off = atm_sink();
    off.links[0].layer = Layer::Ip;
    assert!(!Plan::new(&off).lazy_atm[0]);
    // Not a link a VC goes on from.
    let mut off = atm_sink();
    off.vcs[0].links = vec![0, 1];
    let plan = Plan::new(&off);
    assert!(!plan.lazy_atm[0] && plan.lazy_atm[1]);
    // Not a VC with an ABR destination.
    let mut abr: Scenario = serde_json::from_str(
        r#"{"duration_ps":1,"seed":1,"nodes":[{"name":"a"},{"name":"b"}],
        "links":[{"name":"ab","from":0,"to":1,"bit_rate_bps":1e6,"cell_rate_cps":1e4,
          "delay_ps":0,"buffer_cells":null,"policy":{"kind":"tail"}},
          {"name":"ba","from":1,"to":0,"bit_rate_bps":1e6,"cell_rate_cps":1e4,
          "delay_ps":0,"buffer_cells":null,"policy":{"kind":"tail"}}],
        "vcs":[{"name":"v","class":"abr","links":[0],"back_links":[1],
          "abr":{"pcr_cps":1e4,"mcr_cps":0,"icr_cps":1e3,"rif":0.0625,"rdf":0.0625,
          "nrm":32,"mrm":2,"trm_ps":100000000000,"crm":100,"cdf":0.0625,
          "adtf_ps":500000000000,"tcr_cps":10}}],"sources":[]}"#,
    )
    .unwrap();
    // Not even its backward link, whose RM cells need their events.
    assert_eq!(Plan::new(&abr).lazy_atm, vec![false, false]);
    // Both are quiet-end links: the VC ends where the forward link ends,
    // its backward RM cells where the backward one does.
    assert_eq!(Plan::new(&abr).quiet_end_atm, vec![true, true]);
    abr.vcs[0].abr = None;
    abr.vcs[0].back_links.clear();
    assert_eq!(Plan::new(&abr).lazy_atm, vec![true, true]);
    // Not a VC ending at a TCP host.
    let mut off = atm_sink();
    let mut f = ip_line(100, true, "").flows[0].clone();
    f.layer = Layer::Atm;
    f.data_links.clear();
    f.ack_links.clear();
    f.data_vc = Some(0);
    off.flows = vec![f];
    assert!(!Plan::new(&off).lazy_atm[0]);
}

#[test]
fn a_quiet_end_link_is_the_last_of_every_path_on_it() {
    // One VC ending at a TCP host over two links: the last one only.
    let mut sc = atm_sink();
    let mut f = ip_line(100, true, "").flows[0].clone();
    f.layer = Layer::Atm;
    f.data_links.clear();
    f.ack_links.clear();
    f.data_vc = Some(0);
    sc.flows = vec![f];
    sc.vcs[0].links = vec![0, 1];
    let plan = Plan::new(&sc);
    assert_eq!(plan.lazy_atm, vec![false, false]);
    assert_eq!(plan.quiet_end_atm, vec![false, true]);
    // Not when another VC goes on from it.
    let mut other = sc.clone();
    let mut v = other.vcs[0].clone();
    v.name = "w".into();
    v.links = vec![1, 0];
    other.vcs.push(v);
    assert_eq!(Plan::new(&other).quiet_end_atm, vec![false, false]);
    // Not when the edge at its far end writes ACK windows.
    let mut off = sc.clone();
    off.links[1].ack_control = Some(ack_control());
    assert_eq!(Plan::new(&off).quiet_end_atm, vec![false, false]);
    // Not an IP link, nor a link no VC uses, nor a lazy link.
    let mut off = sc.clone();
    off.links[1].layer = Layer::Ip;
    assert_eq!(Plan::new(&off).quiet_end_atm, vec![false, false]);
    let mut off = sc;
    off.flows.clear();
    let plan = Plan::new(&off);
    assert_eq!(plan.lazy_atm, vec![false, true]);
    assert_eq!(plan.quiet_end_atm, vec![false, false]);
}

#[test]
fn an_eager_port_has_one_upstream_link_that_is_not_eager() {
    let sc = dumbbell();
    let plan = Plan::new(&sc);
    assert_eq!(
        plan.eager_ip,
        vec![
            None,
            None,
            None,
            Some(2),
            Some(2),
            None,
            None,
            None,
            Some(7),
            Some(7)
        ]
    );
    // A second upstream link: not eager.
    let mut off = sc.clone();
    off.flows[1].data_links = vec![1, 3];
    assert_eq!(Plan::new(&off).eager_ip[3], None);
    // An upstream port that is itself fed by one link: only the first of
    // the chain is eager (in the line a -> r -> b, links 0 -> 1).
    let line = ip_line(100, true, "");
    assert_eq!(
        Plan::new(&line).eager_ip,
        vec![None, Some(0), None, Some(2)]
    );
    let mut chain = line;
    chain.links.push(chain.links[1].clone());
    chain.flows[0].data_links = vec![0, 1, 4];
    assert_eq!(Plan::new(&chain).eager_ip[4], None);
}

#[test]
fn a_batch_port_is_fed_by_delayed_links_leading_nowhere_else() {
    let sc = dumbbell();
    let plan = Plan::new(&sc);
    assert_eq!(plan.batch_feeders[2], vec![0, 1]);
    assert_eq!(plan.batch_feeders[7], vec![5, 6]);
    // A feeder without delay.
    let mut off = sc.clone();
    off.links[1].delay_ps = 0;
    assert!(Plan::new(&off).batch_feeders[2].is_empty());
    // A feeder that leads elsewhere too.
    let mut off = sc.clone();
    let mut f = off.flows[0].clone();
    f.data_links = vec![0, 8];
    off.flows.push(f);
    assert!(Plan::new(&off).batch_feeders[2].is_empty());
    // A path that starts at the port: a packet from no feeder.
    let mut off = sc.clone();
    let mut f = off.flows[0].clone();
    f.data_links = vec![2, 3];
    off.flows.push(f);
    assert!(Plan::new(&off).batch_feeders[2].is_empty());
    // An eager port is not a batch port (with one feeder it is eager).
    let mut off = sc.clone();
    off.flows[1].data_links = vec![0, 2, 4];
    let plan = Plan::new(&off);
    assert_eq!(plan.eager_ip[2], Some(0));
    assert!(plan.batch_feeders[2].is_empty());
    // An ATM link is no batch port.
    let mut off = sc.clone();
    off.links[2].layer = Layer::Atm;
    assert!(Plan::new(&off).batch_feeders[2].is_empty());
    // An unused link is none either.
    let mut off = sc;
    off.links.push(off.links[2].clone());
    assert!(Plan::new(&off).batch_feeders[10].is_empty());
}

#[test]
fn an_eager_receiver_acks_at_once_over_a_link_of_its_own() {
    let sc = dumbbell();
    assert_eq!(Plan::new(&sc).eager_rx, vec![true, true]);
    let changed = |edit: &dyn Fn(&mut FlowSpec)| {
        let mut off = sc.clone();
        edit(&mut off.flows[0]);
        Plan::new(&off).eager_rx
    };
    assert_eq!(changed(&|f| f.tcp.delayed_ack_ps = 1), vec![false, true]);
    assert_eq!(changed(&|f| f.processing_ps = 1), vec![false, true]);
    assert_eq!(changed(&|f| f.processing_jitter_ps = 1), vec![false, true]);
    assert_eq!(changed(&|f| f.layer = Layer::Atm), vec![false, true]);
    // Its ACK link shared with the other flow's receiver, whose data come
    // over another last link.
    assert_eq!(
        changed(&|f| f.ack_links = vec![6, 7, 8]),
        vec![false, false]
    );
    // Shared with a receiver fed over the same last link: both stay.
    let mut shared = sc.clone();
    shared.flows[1].data_links = vec![1, 2, 3];
    shared.flows[1].ack_links = vec![5, 7, 9];
    assert_eq!(Plan::new(&shared).eager_rx, vec![true, true]);
    // Its ACK link also carrying a later hop of another path.
    let mut off = sc;
    off.flows[1].ack_links = vec![6, 5, 7, 9];
    assert_eq!(Plan::new(&off).eager_rx, vec![false, true]);
}

#[test]
fn an_eager_sender_has_fine_timers_and_a_second_link_not_eager() {
    let sc = dumbbell();
    assert_eq!(Plan::new(&sc).eager_tx, vec![true, true]);
    let changed = |edit: &dyn Fn(&mut FlowSpec)| {
        let mut off = sc.clone();
        edit(&mut off.flows[0]);
        Plan::new(&off).eager_tx
    };
    let coarse = TimerMode::Coarse {
        tick_ps: 500_000_000_000,
    };
    assert_eq!(changed(&|f| f.tcp.timer = coarse), vec![false, true]);
    assert_eq!(changed(&|f| f.layer = Layer::Atm), vec![false, true]);
    // A one-link data path.
    let mut off = sc.clone();
    off.flows[0].data_links = vec![0];
    assert!(!Plan::new(&off).eager_tx[0]);
    // Its data link shared with the other sender, whose ACKs come over
    // another last link.
    assert_eq!(
        changed(&|f| f.data_links = vec![1, 2, 3]),
        vec![false, false]
    );
    // A second data link that is eager (the line a -> r -> b): eager steps
    // would chain.
    let line = ip_line(100, true, "");
    assert!(Plan::new(&line).eager_ip[1].is_some());
    assert_eq!(Plan::new(&line).eager_tx, vec![false]);
}

#[test]
fn merged_sources_need_random_arbitration() {
    let mut sc = atm_sink();
    for a in [Arbitration::Slotted, Arbitration::Random] {
        sc.arbitration = a;
        assert!(Plan::new(&sc).merged_sources);
    }
    sc.arbitration = Arbitration::SchedulingOrder;
    assert!(!Plan::new(&sc).merged_sources);
}

/// The `vc_losses` probe of a VC whose source sends straight into its port
/// (merged sources) counts the cells that port drops, as without fast paths.
#[test]
fn a_direct_source_s_drops_reach_the_loss_probe() {
    let mut sc = atm_sink();
    sc.links[0].buffer_cells = Some(2);
    sc.duration_ps = 100_000_000_000;
    sc.sources = serde_json::from_str(
        r#"[{"name":"s","vc":0,"model":{"kind":"cbr","rate_cps":8e4}},
            {"name":"t","vc":1,"model":{"kind":"cbr","rate_cps":8e4}}]"#,
    )
    .unwrap();
    let mut v = sc.vcs[0].clone();
    v.name = "w".into();
    sc.vcs.push(v);
    sc.probes.period_ps = 10_000_000_000;
    sc.probes.vc_losses = vec![0, 1];
    let run = |fast: bool| {
        let mut sc = sc.clone();
        sc.fast_paths = fast;
        let mut sim = crate::sim::Simulation::new(&sc).unwrap();
        sim.run();
        let (summary, series) = sim.finish();
        (format!("{:?}", summary.vcs), series.value)
    };
    let (on, off) = (run(true), run(false));
    assert!(off.1.iter().any(|&v| v > 0.0), "the port drops");
    assert_eq!(on, off);
}
