//! The ATM fabric's explicit-rate control of TCP (Explicit rate control of
//! TCP, Satyavolu et al., 1998: "Explicit rate control of TCP applications",
//! section 3: the rate "can be calculated ...
//! at a switch/router/atm end system"; section 7: it "can be implemented in
//! both ATM edge devices/switches, as well as in Internet routers").
//!
//! An ATM port with `rate_control` runs the same simplified ERICA+ as a
//! router port ([`crate::ip::rate_control`]), with VCs for sessions: it
//! counts the data cells (not RM cells) offered to it per VC, each as its 48
//! payload bytes, and its capacity is the link's cell rate x 48 bytes. Rates
//! are in bytes/s of cell payload (bits/s of payload in summaries and
//! series); the queueing delay is the port's cells waiting x the cell time.
//! A session is a VC: a flow has its own data VC, or shares one (GFR flows
//! with `vc = ...`), whose flows the paper allows to be controlled "as a
//! single unit"; each of n flows sharing a data VC gets ER / n (our choice).
//!
//! An ATM link with `ack_control` names such a port (`rates_from`): where
//! the ACK VCs that end with that link end, the edge reassembles each ACK
//! frame and, for a flow whose data VC crosses `rates_from`, writes
//! min(window, ER x T) into its window field with the checksum updated as
//! RFC 1624 says ([`limit_window`]), before the host takes it. The ER
//! reaches the edge at once (a model: an ABR switch's ER would travel in
//! backward RM cells). There is no ack bucket at an ATM edge.
//!
//! These elements act on cells at the instant they pass, so the lazy ATM
//! links leave them out (`fast_paths::port_allows_fast_paths`).

use crate::atm::aal5::cells_per_datagram;
use crate::atm::cell::CELL_PAYLOAD_BYTES;
use crate::engine::time::cell_time_ps;
use crate::engine::{Event, EventQueue, Time};
use crate::ids::{AtmLinkIx, FlowId, VcId};
use crate::ip::rate_control::{limit_window, RateControl, RateControlParams};
use crate::ip::Packet;
use crate::scenario::{Layer, Scenario, WindowRule};
use crate::stats::FlowRateSummary;

/// What the edge at one ATM link's far end does to the ACK frames it
/// reassembles.
struct EdgeControl {
    /// The fabric index of the port whose rates it uses.
    rates_from: AtmLinkIx,
    window: WindowRule,
    /// Per flow: its ACK VC ends with this link and its data VC crosses
    /// `rates_from`.
    controls: Vec<bool>,
}

/// The explicit-rate control of an ATM fabric.
#[derive(Default)]
pub(super) struct AtmControl {
    /// Per fabric link: its port's rate controller (sessions: VCs).
    rate: Vec<Option<RateControl>>,
    /// Per fabric link: what the edge at its far end does to ACK frames.
    edge: Vec<Option<EdgeControl>>,
    /// Per flow: the port that rates it (fabric index), if any.
    rated_at: Vec<Option<AtmLinkIx>>,
    /// Per flow: its data VC and its part of that VC's ER (1 / the flows
    /// sharing the VC).
    data_vc: Vec<u32>,
    share: Vec<f64>,
    /// Per flow: its round-trip time without queueing, ps.
    rtt_ps: Vec<Time>,
    /// Per flow: window scale shift and MSS.
    scale: Vec<u8>,
    mss: Vec<u32>,
    /// Per flow: the last window written into its ACKs, bytes (0: none).
    written: Vec<u64>,
    /// Per flow: ACKs whose window field was lowered.
    rewritten: Vec<u64>,
    /// Some port computes rates (kept: asked on every cell).
    active: bool,
}

impl AtmControl {
    /// Flow `f`'s ends are real hosts whose SYNs negotiated window scale
    /// shift `scale` and segment size `mss` (an emulation): the windows of
    /// their ACKs are read and written with these, not the scenario's.
    pub(super) fn set_real_tcp(&mut self, f: FlowId, scale: u8, mss: u32) {
        if let (Some(s), Some(m)) = (self.scale.get_mut(f.index()), self.mss.get_mut(f.index())) {
            (*s, *m) = (scale, mss);
        }
    }

    /// The controls of `sc`'s ATM links, with `local` mapping scenario link
    /// indices to the fabric's; the rate intervals are scheduled on
    /// `agenda` (event [`Event::AtmRateInterval`]).
    pub(super) fn new(
        sc: &Scenario,
        local: &[u32],
        n_local: usize,
        agenda: &mut EventQueue,
    ) -> Self {
        let n_flows = sc.flows.len();
        let mut c = AtmControl {
            rate: (0..n_local).map(|_| None).collect(),
            edge: (0..n_local).map(|_| None).collect(),
            rated_at: vec![None; n_flows],
            data_vc: sc.flows.iter().map(|f| f.data_vc.unwrap_or(0)).collect(),
            share: vec![1.0; n_flows],
            rtt_ps: vec![0; n_flows],
            scale: sc.flows.iter().map(|f| f.tcp.window_scale).collect(),
            mss: sc.flows.iter().map(|f| f.tcp.mss_bytes).collect(),
            written: vec![0; n_flows],
            rewritten: vec![0; n_flows],
            active: false,
        };
        for (i, l) in sc.links.iter().enumerate() {
            if l.layer != Layer::Atm {
                continue;
            }
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
                // The payload rate in bits/s: cells/s x 48 bytes x 8.
                let payload_bps = l.cell_rate_cps * (CELL_PAYLOAD_BYTES * 8) as f64;
                let a = AtmLinkIx::new(local[i]);
                c.rate[a.index()] = Some(RateControl::new(p, payload_bps, sc.vcs.len()));
                c.active = true;
                agenda.push(rc.interval_ps, Event::AtmRateInterval(a));
            }
        }
        for (i, l) in sc.links.iter().enumerate() {
            let Some(ac) = l.ack_control.as_ref().filter(|_| l.layer == Layer::Atm) else {
                continue;
            };
            let controls: Vec<bool> = sc
                .flows
                .iter()
                .map(|f| match (f.data_vc, f.ack_vc) {
                    (Some(d), Some(a)) => {
                        sc.vcs[a as usize].links.last() == Some(&(i as u32))
                            && sc.vcs[d as usize].links.contains(&ac.rates_from)
                    }
                    _ => false,
                })
                .collect();
            for f in (0..n_flows).filter(|&f| controls[f]) {
                let vc = sc.flows[f].data_vc;
                let n = sc.flows.iter().filter(|g| g.data_vc == vc).count();
                c.rated_at[f] = Some(AtmLinkIx::new(local[ac.rates_from as usize]));
                c.share[f] = 1.0 / n as f64;
                c.rtt_ps[f] = base_rtt(sc, f);
            }
            c.edge[local[i] as usize] = Some(EdgeControl {
                rates_from: AtmLinkIx::new(local[ac.rates_from as usize]),
                window: ac.window,
                controls,
            });
        }
        c
    }

    /// True when any ATM port computes rates.
    #[inline]
    pub(super) fn any(&self) -> bool {
        self.active
    }

    /// A data cell of VC `vc` is offered to the port of link `l`.
    #[inline]
    pub(super) fn count(&mut self, l: AtmLinkIx, vc: VcId) {
        if let Some(rc) = self.rate.get_mut(l.index()).and_then(Option::as_mut) {
            rc.count(vc.get(), CELL_PAYLOAD_BYTES);
        }
    }

    /// The end of an averaging interval at port `l`, whose queue holds
    /// `queue_cells` now: new rates, and the next interval scheduled.
    pub(super) fn end_interval(
        &mut self,
        l: AtmLinkIx,
        now: Time,
        queue_cells: u64,
        agenda: &mut EventQueue,
    ) {
        let rc = self.rate[l.index()]
            .as_mut()
            .expect("a rate-controlled ATM port");
        rc.end_interval(rc.p.interval_ps, queue_cells * CELL_PAYLOAD_BYTES as u64);
        agenda.push(now + rc.p.interval_ps, Event::AtmRateInterval(l));
    }

    /// Flow `f`'s part of its data VC's explicit rate at its controlling
    /// port, bytes/s of cell payload.
    fn er(&self, f: FlowId) -> Option<f64> {
        let l = self.rated_at[f.index()]?;
        let rc = self.rate[l.index()].as_ref()?;
        Some(rc.er(self.data_vc[f.index()]) * self.share[f.index()])
    }

    /// The port whose queueing delay the window rule of the ACK frames
    /// reassembled at the end of link `l` needs (the rule `Rtt`), if any.
    pub(super) fn queue_delay_port(&self, l: AtmLinkIx) -> Option<AtmLinkIx> {
        let ctl = self.edge.get(l.index())?.as_ref()?;
        (ctl.window == WindowRule::Rtt).then_some(ctl.rates_from)
    }

    /// ACK `packet`, reassembled at the end of link `l`, leaves the ATM
    /// network towards its sender; `queue_delay_ps` is the queueing delay at
    /// the port that rates its flow (0 unless the window rule needs it): its
    /// window rewritten, or untouched.
    pub(super) fn on_ack(
        &mut self,
        l: AtmLinkIx,
        mut packet: Packet,
        queue_delay_ps: Time,
    ) -> Packet {
        let Some(ctl) = self.edge.get(l.index()).and_then(Option::as_ref) else {
            return packet;
        };
        let f = packet.flow as usize;
        if packet.is_data || !ctl.controls[f] {
            return packet;
        }
        let er = self.er(FlowId::new(packet.flow)).unwrap_or(0.0);
        let t_ps = match ctl.window {
            WindowRule::None => return packet,
            WindowRule::Fixed { t_ps } => t_ps,
            WindowRule::Rtt => self.rtt_ps[f] + queue_delay_ps,
            WindowRule::BaseRtt => self.rtt_ps[f],
        };
        if limit_window(&mut packet, er, t_ps, self.mss[f], self.scale[f]) {
            self.rewritten[f] += 1;
        }
        self.written[f] = (packet.wnd as u64) << self.scale[f];
        packet
    }

    /// What the control did to flow `f`, for its summary; None for a flow
    /// not rate-controlled at an ATM port.
    pub(super) fn flow_summary(&self, f: FlowId) -> Option<FlowRateSummary> {
        let er = self.er(f)?;
        Some(FlowRateSummary {
            er_bps: er * 8.0,
            window_written_bytes: self.written[f.index()] as f64,
            acks_rewritten: self.rewritten[f.index()],
            acks_released: 0,
            acks_held: 0,
            acks_held_max: 0,
            ack_hold_mean_s: 0.0,
        })
    }

    /// Flow `f`'s explicit rate (bits/s of cell payload) and the last window
    /// written into its ACKs (bytes), for the probes.
    pub(super) fn sample(&self, f: FlowId) -> Option<(f64, f64)> {
        let er = self.er(f)?;
        Some((er * 8.0, self.written[f.index()] as f64))
    }
}

/// ATM flow `f`'s round-trip time without queueing: a full segment's frame
/// over its data VC and an ACK's over its ACK VC. Switches forward cells one
/// by one, so a frame of c cells over links of cell times t_i and delays d_i
/// has its last cell at the far end after sum(d_i + t_i) + (c - 1) max(t_i):
/// each cell crosses every link, and the frame is paced out at its slowest.
/// (Under slotted contention a cell may also wait up to one cell time at
/// each switch for its slot; that wait is not counted.)
fn base_rtt(sc: &Scenario, f: usize) -> Time {
    let fl = &sc.flows[f];
    let path = |vc: Option<u32>, ip_bytes: u32| -> Time {
        let Some(v) = vc else { return 0 };
        let cells = cells_per_datagram(ip_bytes) as Time;
        let links = sc.vcs[v as usize]
            .links
            .iter()
            .map(|&l| &sc.links[l as usize]);
        let one_cell: Time = links
            .clone()
            .map(|link| link.delay_ps + cell_time_ps(link.cell_rate_cps))
            .sum();
        let slowest = links
            .map(|link| cell_time_ps(link.cell_rate_cps))
            .max()
            .unwrap_or(0);
        one_cell + (cells - 1) * slowest
    };
    path(fl.data_vc, fl.tcp.mss_bytes + 40) + path(fl.ack_vc, 40)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atm::CELL_BITS;

    const MS: u64 = 1_000_000_000;

    fn params() -> RateControlParams {
        RateControlParams {
            interval_ps: 5 * MS,
            t0_ps: 1_500_000_000,
            a: 1.15,
            b: 1.0,
            qdlf: 0.5,
            delta: 0.1,
            max_increase: 0.1,
            active_decay: 0.0,
        }
    }

    #[test]
    fn the_base_round_trip_counts_cells_switched_one_by_one() {
        // Data a -> b -> c over links of 1 us and 4 us per cell (1 ms and 2
        // ms of delay), ACKs c -> b -> a over the same rates. MSS 512: 12
        // cells a segment, 2 an ACK. A segment's last cell reaches c after
        // 3 ms + (1 + 4) us + 11 x 4 us (paced at the slower link) = 3.049
        // ms; the ACK's after 3 ms + 5 us + 1 x 4 us = 3.009 ms. Stored and
        // forwarded frame by frame it would be 3 ms + 12 x 5 us and 3 ms + 2
        // x 5 us.
        let us: Time = 1_000_000;
        let link = |name: &str, from: u32, to: u32, cps: f64, delay_ps: Time| {
            serde_json::json!({"name": name, "from": from, "to": to,
                "bit_rate_bps": cps * CELL_BITS, "cell_rate_cps": cps, "delay_ps": delay_ps,
                "buffer_cells": null, "policy": {"kind": "tail"}})
        };
        let v = serde_json::json!({"duration_ps": MS, "seed": 1,
            "nodes": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
            "links": [link("ab", 0, 1, 1e6, MS), link("bc", 1, 2, 2.5e5, 2 * MS),
                      link("cb", 2, 1, 2.5e5, 2 * MS), link("ba", 1, 0, 1e6, MS)],
            "vcs": [{"name": "d", "class": "ubr", "links": [0, 1]},
                    {"name": "k", "class": "ubr", "links": [2, 3]}],
            "sources": [],
            "flows": [{"name": "f", "layer": "atm", "data_vc": 0, "ack_vc": 1,
                "variant": "reno", "mss_bytes": 512, "rcv_window_bytes": 65535,
                "window_scale": 0, "initial_cwnd_segments": 1,
                "initial_ssthresh_bytes": null, "timer": {"kind": "fine"},
                "initial_rto_ps": 1000 * MS, "min_rto_ps": 200 * MS,
                "max_rto_ps": 64000 * MS, "delayed_ack_ps": 0, "app_bytes": null,
                "max_sack_blocks": 3}]});
        let sc: Scenario = serde_json::from_value(v).unwrap();
        let data = 3 * MS + 5 * us + 11 * 4 * us;
        let ack = 3 * MS + 5 * us + 4 * us;
        assert_eq!(base_rtt(&sc, 0), data + ack);
    }

    #[test]
    fn an_atm_port_measures_rates_in_cell_payload_bytes() {
        // A port of 10,000 cells/s: 480,000 payload bytes/s; sessions are
        // VCs. Interval 1 (5 ms, 50 cell times): VC 0 offers 30 cells (1440
        // bytes, 288,000 B/s), VC 2 10 cells (96,000 B/s); the queue is
        // empty: target 480,000, z = 384,000 / 480,000 = 0.8, fair share
        // 240,000. Underload: ER = max(MaxAllocPrevious = 0, VCShare) capped
        // at 1.1 x the link rate: VC 0 288,000 / 0.8 = 360,000; VC 2
        // 96,000 / 0.8 = 120,000, which asks less than its share: no clamp.
        let cps = 10_000.0;
        let mut c = AtmControl {
            rate: vec![Some(RateControl::new(params(), cps * 384.0, 3))],
            edge: vec![None],
            rated_at: vec![
                Some(AtmLinkIx::new(0)),
                Some(AtmLinkIx::new(0)),
                Some(AtmLinkIx::new(0)),
            ],
            data_vc: vec![0, 2, 2],
            share: vec![1.0, 0.5, 0.5],
            rtt_ps: vec![0; 3],
            scale: vec![0; 3],
            mss: vec![512; 3],
            written: vec![0; 3],
            rewritten: vec![0; 3],
            active: true,
        };
        // Before the first interval: the link's payload rate.
        assert_eq!(c.er(FlowId::new(0)), Some(480_000.0));
        for _ in 0..30 {
            c.count(AtmLinkIx(0), VcId(0));
        }
        for _ in 0..10 {
            c.count(AtmLinkIx(0), VcId(2));
        }
        let mut agenda = EventQueue::new();
        c.end_interval(AtmLinkIx::new(0), 5 * MS, 0, &mut agenda);
        assert_eq!(
            agenda.next_until(Time::MAX),
            Some((10 * MS, Event::AtmRateInterval(AtmLinkIx::new(0))))
        );
        let rc = c.rate[0].as_ref().unwrap();
        assert!((rc.z - 0.8).abs() < 1e-12 && (rc.fair_share - 240_000.0).abs() < 1e-6);
        assert!((c.er(FlowId::new(0)).unwrap() - 360_000.0).abs() < 1e-6);
        // Flows 1 and 2 share VC 2 as one unit: half of its ER each.
        assert!((c.er(FlowId::new(1)).unwrap() - 60_000.0).abs() < 1e-6);
        // Interval 2: VC 0 alone offers 60 cells (576,000 B/s) with 25
        // cells waiting (2.5 ms at 10,000 cells/s, above T0 = 1.5 ms):
        // target = 1.15 x 1.5 / (0.15 x 2.5 + 1.5) x 480,000 = 441,600,
        // z = 1.304 > 1.1, one active source (decay 0): fair share
        // 441,600. VC 0: max(VCShare = 441,600, FairShare) = 441,600,
        // capped at 1.1 x its last ER, 396,000. VC 2 (silent): max(0,
        // 441,600) capped at 1.1 x 120,000 = 132,000, half of it per flow.
        for _ in 0..60 {
            c.count(AtmLinkIx(0), VcId(0));
        }
        c.end_interval(AtmLinkIx::new(0), 10 * MS, 25, &mut agenda);
        let rc = c.rate[0].as_ref().unwrap();
        assert!((rc.target - 441_600.0).abs() < 1e-6, "{}", rc.target);
        assert!((c.er(FlowId::new(0)).unwrap() - 396_000.0).abs() < 1e-6);
        assert!((c.er(FlowId::new(2)).unwrap() - 66_000.0).abs() < 1e-6);
    }

    #[test]
    fn the_edge_lowers_windows_and_never_raises_them() {
        let mut c = AtmControl {
            rate: vec![Some(RateControl::new(params(), 10_000.0 * 384.0, 1))],
            edge: vec![
                None,
                Some(EdgeControl {
                    rates_from: AtmLinkIx::new(0),
                    window: WindowRule::Fixed { t_ps: 10 * MS },
                    controls: vec![true],
                }),
            ],
            rated_at: vec![Some(AtmLinkIx::new(0))],
            data_vc: vec![0],
            share: vec![1.0],
            rtt_ps: vec![0],
            scale: vec![1],
            mss: vec![512],
            written: vec![0],
            rewritten: vec![0],
            active: true,
        };
        // ER = the link's 480,000 B/s: W = 4800 bytes, field 2400 (scale 1).
        let ack = Packet::ack(0, 0, 1000, 32768);
        let out = c.on_ack(AtmLinkIx::new(1), ack, 0);
        assert_eq!(out.wnd, 2400);
        assert!(out.checksum_ok());
        assert_eq!((c.written[0], c.rewritten[0]), (4800, 1));
        // A window already below ER x T stays as it is.
        let out = c.on_ack(AtmLinkIx::new(1), Packet::ack(0, 0, 1000, 100), 0);
        assert_eq!((out.wnd, c.rewritten[0]), (100, 1));
        assert_eq!(c.written[0], 200);
        // A T of 0.1 ms makes ER x T 48 bytes: one segment is written
        // instead (512 bytes, 256 in scale-1 units).
        c.edge[1].as_mut().unwrap().window = WindowRule::Fixed { t_ps: MS / 10 };
        let out = c.on_ack(AtmLinkIx::new(1), Packet::ack(0, 0, 1000, 32768), 0);
        assert_eq!(out.wnd, 256);
        assert!(out.checksum_ok());
        // ACKs arriving over another link, and data, pass untouched.
        assert_eq!(
            c.on_ack(AtmLinkIx::new(0), Packet::ack(0, 0, 1, 900), 0)
                .wnd,
            900
        );
    }
}
