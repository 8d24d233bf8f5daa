//! The probes: every `period`, the queues, utilizations, VC rates, VC losses
//! and AAL5 merges, TCP windows and ABR rates the scenario asked for, into the run's
//! [`Series`].
//!
//! A probe reads the other parts through their accessors; it changes
//! nothing but its own running totals (and the samples a TCP sender kept
//! for a tick it moved past).

use super::atm::AtmFabric;
use super::ends::Endpoints;
use super::ip::IpFabric;
use super::tcp::TcpHosts;
use super::LinkRef;
use crate::engine::time::ps_to_s;
use crate::engine::Time;
use crate::ids::{AtmLinkIx, FlowId, LinkId, VcId};
use crate::scenario::Scenario;
use crate::stats::{Metric, Series};

/// What the probes sample and what they recorded so far.
pub(super) struct Probes {
    /// Sampling period, ps (0 = no probes).
    period: Time,
    /// Ports whose queue is sampled: (scenario link index, where it is).
    queue: Vec<(LinkId, LinkRef)>,
    /// Ports whose utilization is recorded, with their busy time at the
    /// last tick.
    util: Vec<(LinkId, LinkRef, u128)>,
    /// VCs whose delivered cell rate is recorded, with their count at the
    /// last tick.
    rate: Vec<(VcId, u64)>,
    /// VCs whose cells dropped and AAL5 frames merged so far are recorded.
    losses: Vec<VcId>,
    /// Flows whose windows, sequence number and RTT are recorded.
    flows: Vec<FlowId>,
    /// ABR VCs whose ACR and last ER are recorded.
    abr_vcs: Vec<VcId>,
    /// Ports whose switch algorithm is recorded: (scenario link, ATM link).
    abr_ports: Vec<(LinkId, AtmLinkIx)>,
    /// Ports whose cells per VC are sampled: (ATM link, the VCs crossing
    /// it, the entity id of the first (link, VC) pair).
    vc_queue: Vec<(AtmLinkIx, Vec<VcId>, u32)>,
    /// Entity ids: links, then VCs, then flows.
    n_links: u32,
    n_vcs: u32,
    series: Series,
}

impl Probes {
    /// The probes of `sc`, with `links` locating each scenario link.
    pub(super) fn new(sc: &Scenario, links: &[LinkRef], atm: &AtmFabric) -> Self {
        let p = &sc.probes;
        let mut series = Series::default();
        if p.any() {
            series.entity_names = sc
                .links
                .iter()
                .map(|l| l.name.clone())
                .chain(sc.vcs.iter().map(|v| v.name.clone()))
                .chain(sc.flows.iter().map(|f| f.name.clone()))
                .collect();
        }
        let mut vc_queue = Vec::new();
        for &l in &p.vc_queue {
            let LinkRef::Atm(a) = links[l as usize] else {
                continue;
            };
            let vcs = atm.vcs_on(a);
            let first = series.entity_names.len() as u32;
            let link = &sc.links[l as usize].name;
            series.entity_names.extend(
                vcs.iter()
                    .map(|&v| format!("{link}/{}", sc.vcs[v.index()].name)),
            );
            vc_queue.push((a, vcs, first));
        }
        let at = |l: u32| (LinkId::new(l), links[l as usize]);
        Probes {
            period: p.period_ps,
            queue: p.queue.iter().map(|&l| at(l)).collect(),
            util: p
                .utilization
                .iter()
                .map(|&l| (LinkId::new(l), links[l as usize], 0))
                .collect(),
            rate: p.vc_rate.iter().map(|&v| (VcId::new(v), 0)).collect(),
            losses: p.vc_losses.iter().map(|&v| VcId::new(v)).collect(),
            flows: p.flows.iter().map(|&f| FlowId::new(f)).collect(),
            abr_vcs: p.abr_vcs.iter().map(|&v| VcId::new(v)).collect(),
            abr_ports: p
                .abr_ports
                .iter()
                .filter_map(|&l| match links[l as usize] {
                    LinkRef::Atm(a) => Some((LinkId::new(l), a)),
                    LinkRef::Ip(_) => None,
                })
                .collect(),
            vc_queue,
            n_links: sc.links.len() as u32,
            n_vcs: sc.vcs.len() as u32,
            series,
        }
    }

    /// True when a probe reads the cells VCs' ends have received (their
    /// rate): the quiet-end links may not hand cells on past a tick.
    pub(super) fn reads_vc_ends(&self) -> bool {
        !self.rate.is_empty()
    }

    /// The sampling period (0: no probes).
    pub(super) fn period(&self) -> Time {
        self.period
    }

    /// Records one sample of everything asked for at `now` (the lazy links
    /// drained by the caller); `next` is the next tick.
    pub(super) fn sample(
        &mut self,
        now: Time,
        next: Time,
        atm: &mut AtmFabric,
        ip: &IpFabric,
        ends: &Endpoints,
        tcp: &mut TcpHosts,
    ) {
        let t = ps_to_s(now);
        let period = self.period as f64;
        let series = &mut self.series;
        for &(l, at) in &self.queue {
            match at {
                LinkRef::Atm(a) => series.push(
                    t,
                    l.get(),
                    Metric::QueueCells,
                    atm.queue_cells(a, now) as f64,
                ),
                LinkRef::Ip(i) => series.push(
                    t,
                    l.get(),
                    Metric::IpQueuePackets,
                    ip.queue_packets(i, now) as f64,
                ),
            }
        }
        for (l, at, last) in &mut self.util {
            let busy = match *at {
                LinkRef::Atm(a) => atm.busy_ps(a, now),
                LinkRef::Ip(i) => ip.busy_ps(i, now),
            };
            let u = (busy - *last) as f64 / period;
            *last = busy;
            series.push(t, l.get(), Metric::Utilization, u);
        }
        let n_links = self.n_links;
        for (v, last) in &mut self.rate {
            let d = ends.cells_delivered(*v);
            let r = (d - *last) as f64 / ps_to_s(self.period);
            *last = d;
            series.push(t, n_links + v.get(), Metric::VcRateCps, r);
        }
        for &v in &self.losses {
            let e = n_links + v.get();
            series.push(t, e, Metric::CellsDropped, ends.cells_dropped(v) as f64);
            series.push(t, e, Metric::FramesMerged, ends.frames_merged(v) as f64);
        }
        for &v in &self.abr_vcs {
            if let Some((acr, er)) = ends.ses_rates(v) {
                series.push(t, n_links + v.get(), Metric::AcrCps, acr);
                series.push(t, n_links + v.get(), Metric::ErCps, er);
            }
        }
        for &(l, a) in &self.abr_ports {
            let st = atm.algorithm_stats(a);
            let l = l.get();
            series.push(t, l, Metric::LoadFactor, st.load_factor);
            series.push(t, l, Metric::FairShareCps, st.fair_share_cps);
            series.push(t, l, Metric::ErCps, st.last_er_cps);
            series.push(
                t,
                l,
                Metric::AbrQueueCells,
                atm.abr_queue_cells(a, now) as f64,
            );
        }
        for (a, vcs, first) in &self.vc_queue {
            if let Some(occ) = atm.vc_occupancy(*a, now) {
                for (k, &v) in vcs.iter().enumerate() {
                    series.push(
                        t,
                        first + k as u32,
                        Metric::VcQueueCells,
                        occ.of(v.get()) as f64,
                    );
                }
            }
        }
        let base = n_links + self.n_vcs;
        for &f in &self.flows {
            let v = tcp.probe_sample(f, now, next);
            let e = base + f.get();
            for (metric, x) in [
                Metric::CwndBytes,
                Metric::WindowBytes,
                Metric::SeqBytes,
                Metric::SrttS,
            ]
            .into_iter()
            .zip(v)
            {
                series.push(t, e, metric, x);
            }
            if let Some((er, wnd)) = ip.control_sample(f).or_else(|| atm.control_sample(f)) {
                series.push(t, e, Metric::ErBps, er);
                series.push(t, e, Metric::RwndWrittenBytes, wnd);
            }
        }
    }

    /// The series recorded (the probes keep nothing).
    pub(super) fn take_series(&mut self) -> Series {
        std::mem::take(&mut self.series)
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::testing::ip_line;
    use crate::sim::Simulation;
    use crate::stats::Metric;

    const MS: u64 = 1_000_000_000;

    #[test]
    fn every_period_samples_each_series_asked_for() {
        // Probes every 10 ms over 1 s on the IP line: the queue of the
        // first port, the utilization of the second, the flow's four
        // metrics.
        let mut sc = ip_line(10, true, "");
        sc.probes.period_ps = 10 * MS;
        sc.probes.queue = vec![0];
        sc.probes.utilization = vec![1];
        sc.probes.flows = vec![0];
        let mut sim = Simulation::new(&sc).unwrap();
        sim.run();
        let (summary, series) = sim.finish();
        let ticks = (sc.duration_ps / sc.probes.period_ps) as usize;
        assert_eq!(series.time_s.len(), ticks * 6);
        assert_eq!(series.entity_names, vec!["ar", "rb", "br", "ra", "f"]);
        let first: Vec<(u32, u8)> = (0..6)
            .map(|k| (series.entity[k], series.metric[k]))
            .collect();
        assert_eq!(
            first,
            vec![
                (0, Metric::IpQueuePackets as u8),
                (1, Metric::Utilization as u8),
                (4, Metric::CwndBytes as u8),
                (4, Metric::WindowBytes as u8),
                (4, Metric::SeqBytes as u8),
                (4, Metric::SrttS as u8),
            ]
        );
        assert!((series.time_s[0] - 0.01).abs() < 1e-12);
        // Utilizations over the periods average to the port's own figure.
        let utils: Vec<f64> = (0..ticks).map(|k| series.value[k * 6 + 1]).collect();
        let mean = utils.iter().sum::<f64>() / ticks as f64;
        assert!((mean - summary.ports[1].utilization).abs() < 1e-9);
        assert!(utils.iter().all(|&u| (0.0..=1.0).contains(&u)));
    }
}
