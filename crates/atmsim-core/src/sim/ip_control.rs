//! The IP fabric's explicit-rate control of TCP (Explicit rate
//! control of TCP, Satyavolu et al., 1998): the ports that
//! compute rates, the routers that write them into ACK windows or hold ACKs
//! in ack buckets, and the flows they control.
//!
//! A port with `rate_control` counts every packet offered to it per flow and
//! computes each flow's explicit rate (ER) at the end of each averaging
//! interval ([`crate::ip::rate_control`]). A link with `ack_control` names
//! such a port at the node it reaches: the ACKs arriving over it of the
//! flows whose data leave through that port get min(window, ER x T) written
//! into their window field (the checksum updated as RFC 1624 says), and/or
//! wait in the flow's ack bucket, which releases them at the flow's ER
//! ([`crate::ip::ack_bucket`]). These elements act on packets at the
//! instant they pass, so the fast paths never feed them early
//! (`fast_paths::port_allows_fast_paths`).

use crate::engine::{Event, EventQueue, Time, PS_PER_S};
use crate::ids::{FlowId, IpLinkIx};
use crate::ip::ack_bucket::AckBucket;
use crate::ip::rate_control::{limit_window, RateControl, RateControlParams};
use crate::ip::Packet;
use crate::scenario::{Layer, Scenario, WindowRule};
use crate::stats::FlowRateSummary;

/// The port of an unused ack bucket.
const NO_PORT: IpLinkIx = IpLinkIx::new(u32::MAX);

/// What a router does to the ACKs arriving over one link.
struct AckControl {
    /// The fabric index of the port whose rates it uses.
    rates_from: IpLinkIx,
    window: WindowRule,
    bucket: bool,
    /// Per flow: its data leave through `rates_from` and its ACKs come over
    /// this link.
    controls: Vec<bool>,
    /// Per flow: its bucket at this router (an index of `buckets`), if the
    /// router holds its ACKs.
    bucket_of: Vec<u32>,
}

/// What became of an ACK at a controlling router.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum AckFate {
    /// It goes on (its window perhaps rewritten).
    Pass(Packet),
    /// It waits in its flow's ack bucket at this router.
    Held,
}

/// The explicit-rate control of an IP fabric.
#[derive(Default)]
pub(super) struct IpControl {
    /// Per fabric link: its port's rate controller.
    rate: Vec<Option<RateControl>>,
    /// Per fabric link: what the router at its far end does to ACKs.
    ack: Vec<Option<AckControl>>,
    /// The ack buckets: one per flow and router that holds its ACKs. A
    /// flow's bucket at the first such router is `buckets[flow]` (unused for
    /// a flow no router holds); one at a further router is appended. (One
    /// bucket per flow, as once, mixed the ACKs two routers held and sent
    /// them on from the wrong router.)
    buckets: Vec<AckBucket>,
    /// Per bucket: its flow, and the port whose rate paces it (NO_PORT:
    /// unused).
    bucket_flow: Vec<(FlowId, IpLinkIx)>,
    /// Per flow: the port that rates it (fabric index), if any.
    rated_at: Vec<Option<IpLinkIx>>,
    /// Per flow: its round-trip time without queueing, ps.
    rtt_ps: Vec<Time>,
    /// Per flow: window scale shift and MSS.
    scale: Vec<u8>,
    mss: Vec<u32>,
    /// Per flow: the last window written into its ACKs, bytes (0: none).
    written: Vec<u64>,
    /// Per flow: ACKs whose window field was lowered.
    rewritten: Vec<u64>,
    /// ACKs held in buckets now.
    held: u64,
    /// Some port computes rates (kept: asked on every packet).
    active: bool,
}

impl IpControl {
    /// Flow `f`'s ends are real hosts whose SYNs negotiated window scale
    /// shift `scale` and segment size `mss` (an emulation): the windows of
    /// their ACKs are read and written with these, not the scenario's.
    pub(super) fn set_real_tcp(&mut self, f: FlowId, scale: u8, mss: u32) {
        if let (Some(s), Some(m)) = (self.scale.get_mut(f.index()), self.mss.get_mut(f.index())) {
            (*s, *m) = (scale, mss);
        }
    }

    /// The controls of `sc`, with `local` mapping scenario link indices to
    /// the fabric's; the rate intervals are scheduled on `agenda`.
    pub(super) fn new(
        sc: &Scenario,
        local: &[u32],
        n_local: usize,
        agenda: &mut EventQueue,
    ) -> Self {
        let n_flows = sc.flows.len();
        let mut c = IpControl {
            rate: (0..n_local).map(|_| None).collect(),
            ack: (0..n_local).map(|_| None).collect(),
            buckets: vec![AckBucket::default(); n_flows],
            bucket_flow: (0..n_flows)
                .map(|f| (FlowId::from_index(f), NO_PORT))
                .collect(),
            rated_at: vec![None; n_flows],
            rtt_ps: vec![0; n_flows],
            scale: sc.flows.iter().map(|f| f.tcp.window_scale).collect(),
            mss: sc.flows.iter().map(|f| f.tcp.mss_bytes).collect(),
            written: vec![0; n_flows],
            rewritten: vec![0; n_flows],
            held: 0,
            active: false,
        };
        for (i, l) in sc.links.iter().enumerate() {
            if l.layer != Layer::Ip {
                continue;
            }
            let a = IpLinkIx::new(local[i]);
            if let Some(rc) = &l.rate_control {
                let p = RateControlParams {
                    interval_ps: rc.interval_ps,
                    t0_ps: rc.t0_ps,
                    a: rc.a,
                    b: rc.b,
                    qdlf: rc.qdlf,
                    delta: rc.delta,
                    max_increase: rc.max_increase,
                    active_decay: rc.active_decay,
                };
                c.rate[a.index()] = Some(RateControl::new(p, l.bit_rate_bps, n_flows));
                c.active = true;
                agenda.push(rc.interval_ps, Event::RateInterval(a));
            }
        }
        for (i, l) in sc.links.iter().enumerate() {
            let Some(ac) = l.ack_control.as_ref().filter(|_| l.layer == Layer::Ip) else {
                continue;
            };
            let controls: Vec<bool> = sc
                .flows
                .iter()
                .map(|f| f.data_links.contains(&ac.rates_from) && f.ack_links.contains(&(i as u32)))
                .collect();
            let rates_from = IpLinkIx::new(local[ac.rates_from as usize]);
            let mut bucket_of = vec![u32::MAX; n_flows];
            for f in (0..n_flows).filter(|&f| controls[f]) {
                c.rated_at[f] = Some(rates_from);
                c.rtt_ps[f] = propagation_rtt(sc, f);
                if ac.ack_bucket {
                    let b = if c.bucket_flow[f].1 == NO_PORT {
                        f
                    } else {
                        c.buckets.push(AckBucket::default());
                        c.bucket_flow
                            .push((FlowId::from_index(f), IpLinkIx::new(0)));
                        c.buckets.len() - 1
                    };
                    c.bucket_flow[b].1 = rates_from;
                    bucket_of[f] = b as u32;
                }
            }
            c.ack[local[i] as usize] = Some(AckControl {
                rates_from,
                window: ac.window,
                bucket: ac.ack_bucket,
                controls,
                bucket_of,
            });
        }
        c
    }

    /// True when any port or router controls rates.
    #[inline]
    pub(super) fn any(&self) -> bool {
        self.active
    }

    /// A packet is offered to the port of link `l`.
    #[inline]
    pub(super) fn count(&mut self, l: IpLinkIx, packet: &Packet) {
        if let Some(rc) = self.rate.get_mut(l.index()).and_then(Option::as_mut) {
            rc.count(packet.flow, packet.ip_bytes());
        }
    }

    /// The end of an averaging interval at port `l`, whose queue holds
    /// `queue_bytes` now: new rates, and the next interval scheduled.
    pub(super) fn end_interval(
        &mut self,
        l: IpLinkIx,
        now: Time,
        queue_bytes: u64,
        agenda: &mut EventQueue,
    ) {
        let rc = self.rate[l.index()]
            .as_mut()
            .expect("a rate-controlled port");
        rc.end_interval(rc.p.interval_ps, queue_bytes);
        agenda.push(now + rc.p.interval_ps, Event::RateInterval(l));
    }

    /// Flow `f`'s explicit rate at its controlling port, bytes/s.
    fn er(&self, f: FlowId) -> Option<f64> {
        let l = self.rated_at[f.index()]?;
        Some(self.rate[l.index()].as_ref()?.er(f.get()))
    }

    /// The port whose queueing delay the window rule of the ACKs arriving
    /// over link `l` needs (the rule `Rtt`), if any.
    pub(super) fn queue_delay_port(&self, l: IpLinkIx) -> Option<IpLinkIx> {
        let ctl = self.ack.get(l.index())?.as_ref()?;
        (ctl.window == WindowRule::Rtt).then_some(ctl.rates_from)
    }

    /// ACK `packet` arrived over link `l` at `now`, when the queueing delay
    /// at the port that rates its flow is `queue_delay_ps` (0 unless the
    /// window rule needs it): rewritten and passed on, held in its bucket
    /// (its release scheduled), or untouched.
    pub(super) fn on_ack(
        &mut self,
        l: IpLinkIx,
        mut packet: Packet,
        now: Time,
        queue_delay_ps: Time,
        agenda: &mut EventQueue,
    ) -> AckFate {
        let Some(ctl) = self.ack.get(l.index()).and_then(Option::as_ref) else {
            return AckFate::Pass(packet);
        };
        let f = packet.flow as usize;
        if packet.is_data || !ctl.controls[f] {
            return AckFate::Pass(packet);
        }
        let er = self.rate[ctl.rates_from.index()]
            .as_ref()
            .map_or(0.0, |rc| rc.er(packet.flow));
        let t_ps = match ctl.window {
            WindowRule::None => None,
            WindowRule::Fixed { t_ps } => Some(t_ps),
            WindowRule::Rtt => Some(self.rtt_ps[f] + queue_delay_ps),
            WindowRule::BaseRtt => Some(self.rtt_ps[f]),
        };
        if let Some(t_ps) = t_ps {
            // W = ER x T, not below one segment, never raised.
            if limit_window(&mut packet, er, t_ps, self.mss[f], self.scale[f]) {
                self.rewritten[f] += 1;
            }
            self.written[f] = (packet.wnd as u64) << self.scale[f];
        }
        // A real host's ACK is held like the model's: its acknowledgement,
        // read from the real header, is counted from the connection's start
        // (`Simulation::inject`), as the model's is.
        if !ctl.bucket {
            return AckFate::Pass(packet);
        }
        let b = ctl.bucket_of[f];
        let bucket = &mut self.buckets[b as usize];
        if bucket.hold(packet, now) {
            let t = bucket.next_release(now, er).unwrap_or(now);
            agenda.push(t, Event::AckRelease(b));
        }
        self.held += 1;
        AckFate::Held
    }

    /// Bucket `b` releases its oldest ACK at `now` (its next release
    /// scheduled, at the rate its router's port gives the flow).
    pub(super) fn release(&mut self, b: u32, now: Time, agenda: &mut EventQueue) -> Option<Packet> {
        let (f, port) = self.bucket_flow[b as usize];
        let er = self.rate[port.index()]
            .as_ref()
            .map_or(0.0, |rc| rc.er(f.get()));
        let bucket = &mut self.buckets[b as usize];
        let packet = bucket.release(now)?;
        self.held -= 1;
        if let Some(t) = bucket.next_release(now, er) {
            agenda.push(t, Event::AckRelease(b));
        }
        Some(packet)
    }

    /// ACKs held in buckets now (a term of the packet ledger).
    pub(super) fn held(&self) -> u64 {
        self.held
    }

    /// Real hosts' ACKs held in buckets now (a term of their own ledger).
    pub(super) fn held_external(&self) -> u64 {
        (self.buckets.iter())
            .flat_map(|b| b.held())
            .filter(|p| p.external)
            .count() as u64
    }

    /// What the control did to flow `f`, for its summary; None for a flow
    /// not rate-controlled.
    pub(super) fn flow_summary(&self, f: FlowId) -> Option<FlowRateSummary> {
        let er = self.er(f)?;
        // The flow's buckets at every router that holds its ACKs: its first at
        // index f, further ones after the n_flows first (few: one a flow and
        // router beyond the first), so that a summary of every flow is not
        // a scan of every bucket per flow.
        let n_flows = self.rated_at.len();
        let extra = (n_flows..self.buckets.len()).filter(|&b| self.bucket_flow[b].0 == f);
        let (mut released, mut held, mut most, mut held_ps) = (0, 0, 0, 0u128);
        for b in std::iter::once(f.index())
            .chain(extra)
            .filter(|&b| self.bucket_flow[b].1 != NO_PORT)
        {
            let bucket = &self.buckets[b];
            released += bucket.released;
            held += bucket.len() as u64;
            most = most.max(bucket.max_held as u64);
            held_ps += bucket.held_ps;
        }
        Some(FlowRateSummary {
            er_bps: er * 8.0,
            window_written_bytes: self.written[f.index()] as f64,
            acks_rewritten: self.rewritten[f.index()],
            acks_released: released,
            acks_held: held,
            acks_held_max: most,
            ack_hold_mean_s: if released > 0 {
                held_ps as f64 / released as f64 / PS_PER_S as f64
            } else {
                0.0
            },
        })
    }

    /// Flow `f`'s explicit rate (bits/s) and the last window written into
    /// its ACKs (bytes), for the probes; None for a flow not rate-controlled.
    pub(super) fn sample(&self, f: FlowId) -> Option<(f64, f64)> {
        let er = self.er(f)?;
        Some((er * 8.0, self.written[f.index()] as f64))
    }
}

/// Flow `f`'s round-trip time without queueing: the propagation delay of
/// every link of its data and ACK paths, one full segment's transmission on
/// each data link and one ACK's on each ACK link.
fn propagation_rtt(sc: &Scenario, f: usize) -> Time {
    let fl = &sc.flows[f];
    let tx = |l: u32, bytes: u32| -> Time {
        let link = &sc.links[l as usize];
        (bytes as f64 * 8.0 / link.bit_rate_bps * PS_PER_S as f64).round() as Time
    };
    let data: Time = fl
        .data_links
        .iter()
        .map(|&l| sc.links[l as usize].delay_ps + tx(l, fl.tcp.mss_bytes + 40))
        .sum();
    let acks: Time = fl
        .ack_links
        .iter()
        .map(|&l| sc.links[l as usize].delay_ps + tx(l, 40))
        .sum();
    data + acks
}
