//! Building a network's parts from a scenario.

use super::fast_paths::{IpFastPaths, Plan};
use super::{atm, atm_control, ends, external, ip, probes, tcp, Clock, LinkRef, Simulation};
use crate::engine::{EventQueue, Time};
use crate::ids::{AtmLinkIx, IpLinkIx};
use crate::scenario::{Arbitration, Layer, Scenario};

/// Checks `sc` and builds its network, with the first events scheduled.
pub(super) fn build(sc: &Scenario) -> Result<Simulation, String> {
    sc.check()?;
    let plan = Plan::new(sc);
    // Each scenario link's place in its fabric.
    let mut links = Vec::with_capacity(sc.links.len());
    let (mut n_atm, mut n_ip) = (0u32, 0u32);
    for l in &sc.links {
        links.push(match l.layer {
            Layer::Atm => {
                n_atm += 1;
                LinkRef::Atm(AtmLinkIx::new(n_atm - 1))
            }
            Layer::Ip => {
                n_ip += 1;
                LinkRef::Ip(IpLinkIx::new(n_ip - 1))
            }
        });
    }
    // The same as bare numbers, for the fabrics' builders: an ATM link's
    // number in the ATM fabric, an IP link's in the IP fabric (each builder
    // looks up only its own layer's links).
    let local: Vec<u32> = links
        .iter()
        .map(|&at| match at {
            LinkRef::Atm(a) => a.get(),
            LinkRef::Ip(i) => i.get(),
        })
        .collect();
    let atm_specs = sc
        .links
        .iter()
        .enumerate()
        .filter(|(_, l)| l.layer == Layer::Atm)
        .map(|(i, l)| (i, l, plan.lazy_atm[i]))
        .collect();
    let slotted = sc.arbitration == Arbitration::Slotted;
    let mut atm = atm::AtmFabric::new(
        atm_specs,
        &sc.vcs,
        &local,
        sc.seed,
        &sc.probes.vc_queue,
        slotted,
    );
    let quiet_ends: Vec<bool> = (0..sc.links.len())
        .filter(|&i| sc.links[i].layer == Layer::Atm)
        .map(|i| plan.quiet_end_atm[i])
        .collect();
    atm.set_quiet_ends(&quiet_ends);
    let atm_captures = super::capture::AtmCaptures::new(sc, &local, atm.len());
    let ip_links: Vec<usize> = (0..sc.links.len())
        .filter(|&i| sc.links[i].layer == Layer::Ip)
        .collect();
    // The event queue (simultaneous cell arrivals ordered as the scenario
    // says); the parts schedule their first events on it as they are built.
    let mut agenda = match sc.arbitration {
        Arbitration::Slotted | Arbitration::Random => EventQueue::with_tie_seed(sc.seed),
        Arbitration::SchedulingOrder => EventQueue::by_scheduling_order(),
    };
    let ip_fast = IpFastPaths::new(&plan, &ip_links, &local);
    let ip_specs = ip_links.iter().map(|&i| (i, &sc.links[i])).collect();
    let ip = ip::IpFabric::new(sc, ip_specs, &local, ip_fast, &mut agenda);
    atm.set_control(atm_control::AtmControl::new(
        sc,
        &local,
        atm.len(),
        &mut agenda,
    ));
    // VCs that carry a TCP flow end in a host, not a passive sink.
    let mut tcp_vc = vec![false; sc.vcs.len()];
    for fl in &sc.flows {
        for v in [fl.data_vc, fl.ack_vc].into_iter().flatten() {
            tcp_vc[v as usize] = true;
        }
    }
    let first_link_cps: Vec<f64> = sc
        .vcs
        .iter()
        .map(|v| sc.links[v.links[0] as usize].cell_rate_cps)
        .collect();
    // The first events, in this order: rate intervals of IP ports, then of
    // ATM ports (above), sources,
    // flows and their ticks, the first probe tick (ties at one instant go by
    // scheduling order).
    let mut ends = ends::Endpoints::new(
        sc,
        &tcp_vc,
        &first_link_cps,
        plan.merged_sources,
        &mut agenda,
    );
    ends.set_direct(|vc| atm.direct_link(vc));
    if atm_captures.any() {
        ends.log_frames(|v| atm_captures.logs_vc(v));
    }
    atm.set_captures(atm_captures);
    let tcp = tcp::TcpHosts::new(sc, &plan.eager_rx, &plan.eager_tx, &mut agenda);
    let probes = probes::Probes::new(sc, &links, &atm);
    let next_tick = if sc.probes.any() {
        agenda.push(sc.probes.period_ps, crate::engine::Event::ProbeTick);
        sc.probes.period_ps
    } else {
        Time::MAX
    };
    debug_assert_eq!((atm.len(), ip.len()), (n_atm as usize, n_ip as usize));
    Ok(Simulation {
        clock: Clock {
            now: 0,
            until: 0,
            duration: sc.duration_ps,
            next_tick,
        },
        seed: sc.seed,
        events: 0,
        fast_paths: sc.fast_paths,
        agenda,
        links,
        atm,
        ip,
        ends,
        tcp,
        probes,
        external: external::External::default(),
        capture_files: Vec::new(),
        capture_order: sc.captures.iter().map(|c| c.name.clone()).collect(),
    })
}
