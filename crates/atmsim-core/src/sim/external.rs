//! Real hosts' IP datagrams in the simulated network, for an emulation
//! (docs/emulation.md): a flow whose two ends are real hosts (Linux network
//! namespaces with TUN devices, driven from Python) has its model sender
//! and receiver switched off; the datagrams the real hosts write enter at
//! the flow's first link or VC ([`Simulation::inject`]): over ATM segmented
//! into cells by AAL5 on its data or ACK VC, over IP as packets of their
//! size on its data or ACK path, the same machinery that carries the
//! model's TCP segments. Those that reach the far end, whole, wait here
//! until the caller takes them ([`Simulation::take_delivered`]).
//!
//! The model carries only a datagram's size and a tag the caller chooses
//! (its bytes stay with the caller). The byte ledger leaves these
//! datagrams out (they are no segments of the model's TCP); their own
//! ledger ([`crate::stats::ExternalLedger`]) balances injected against
//! delivered, lost and in the network, the last two counted by the fabrics
//! from their state.
//!
//! An emulation runs without the fast paths: a fast path may hand a packet
//! to its end host before its arrival time, and a real host must get it at
//! that time.

use super::Simulation;
use crate::engine::Time;
use crate::ids::FlowId;
use crate::ip::Packet;
use crate::stats::ExternalLedger;

/// A real host's datagram that reached the far end of its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivered {
    /// The tag it was injected with.
    pub tag: u64,
    /// When it arrived, ps.
    pub at: Time,
    /// True when it came over the flow's data path (to the receiver).
    pub to_receiver: bool,
    /// Its window field now: as injected, or lowered by the explicit-rate
    /// control of a router or an ATM edge on its way (the caller writes it
    /// into the datagram's TCP header, with its checksum).
    pub wnd: u16,
}

/// The emulation's counters and the datagrams delivered, not yet taken.
#[derive(Debug, Default)]
pub(super) struct External {
    /// Some flow's ends are real hosts.
    any: bool,
    injected: u64,
    delivered: u64,
    outbox: Vec<Delivered>,
}

impl External {
    /// True when some flow's ends are real hosts.
    pub(super) fn any(&self) -> bool {
        self.any
    }

    /// A real host's datagram reached the far end at `at`.
    pub(super) fn delivered(&mut self, packet: &Packet, at: Time) {
        self.delivered += 1;
        self.outbox.push(Delivered {
            tag: packet.tag(),
            at,
            to_receiver: packet.is_data,
            wnd: packet.wnd,
        });
    }

    /// The ledger, given the datagrams the fabrics lost and hold.
    pub(super) fn ledger(&self, lost: u64, in_network: u64) -> ExternalLedger {
        ExternalLedger {
            ok: false, // set by `Ledger::close`
            injected: self.injected,
            delivered: self.delivered,
            lost,
            in_network,
        }
    }
}

impl Simulation {
    /// Makes flow `flow`'s two ends real hosts: its model sender never
    /// starts, and [`Simulation::inject`] puts datagrams on its paths. Only
    /// before the run starts, and only without the fast paths.
    pub fn set_external(&mut self, flow: usize) -> Result<(), String> {
        if flow >= self.tcp.len() {
            return Err(format!(
                "flow {flow}: no such flow (the scenario has {})",
                self.tcp.len()
            ));
        }
        if self.fast_paths {
            return Err("real hosts need a run without the fast paths (fast_paths = false)".into());
        }
        if self.events > 0 {
            return Err("real hosts are set before the run starts".into());
        }
        self.tcp.set_external(FlowId::from_index(flow));
        self.external.any = true;
        Ok(())
    }

    /// The real hosts of flow `flow` negotiated window scale shift `scale`
    /// for the windows of the receiver's segments (RFC 7323), and segments
    /// of `mss` bytes: the explicit-rate control reads and writes their
    /// ACKs' windows with these (never below one segment).
    pub fn set_external_tcp(&mut self, flow: usize, scale: u8, mss: u32) -> Result<(), String> {
        self.external_flow(flow)?;
        if scale > 14 || mss == 0 {
            return Err(format!(
                "flow {flow}: window scale {scale} (at most 14) or MSS {mss} (at least 1)"
            ));
        }
        self.ip.set_real_tcp(FlowId::from_index(flow), scale, mss);
        self.atm.set_real_tcp(FlowId::from_index(flow), scale, mss);
        Ok(())
    }

    fn external_flow(&self, flow: usize) -> Result<(), String> {
        if flow >= self.tcp.len() || !self.tcp.is_external(FlowId::from_index(flow)) {
            return Err(format!("flow {flow}: not a flow of real hosts"));
        }
        Ok(())
    }

    /// A real host of flow `flow` writes an IP datagram of `ip_bytes` bytes
    /// now (the time reached): towards the flow's receiver (`to_receiver`,
    /// along its data path or VC) or its sender (its ACK path or VC).
    /// `wnd`: the window field of a TCP segment towards the sender, which
    /// the explicit-rate control may lower (0 for any other), and `ack`
    /// its cumulative acknowledgement as bytes of data acknowledged since
    /// the connection began, which an ack bucket reads to pace it (0 when
    /// unknown: it is then released as acknowledging nothing new). `tag`
    /// comes back with it when it is delivered.
    pub fn inject(
        &mut self,
        flow: usize,
        to_receiver: bool,
        ip_bytes: u32,
        wnd: u16,
        ack: u64,
        tag: u64,
    ) -> Result<(), String> {
        self.external_flow(flow)?;
        let mut packet = Packet::external(flow as u32, to_receiver, ip_bytes, wnd, tag);
        if !to_receiver {
            packet.ack = ack;
        }
        self.external.injected += 1;
        self.send_packet(FlowId::from_index(flow), packet, self.clock.now);
        Ok(())
    }

    /// The real hosts' datagrams delivered since the last call, in the
    /// order they arrived.
    pub fn take_delivered(&mut self) -> Vec<Delivered> {
        std::mem::take(&mut self.external.outbox)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;
    use crate::sim::testing::ip_line;

    const MS: Time = 1_000_000_000;

    /// One flow a -> b over two ATM links of 10 Mb/s (1 ms each), its ACK
    /// VC back over two more, switch buffers of `buffer` cells.
    fn atm_line(buffer: u32) -> Scenario {
        let cps = 10e6 / 424.0;
        let link = |name: &str, from: u32, to: u32| {
            format!(
                r#"{{"name":"{name}","from":{from},"to":{to},"bit_rate_bps":1e7,
                "cell_rate_cps":{cps},"delay_ps":1000000000,"buffer_cells":{buffer},
                "policy":{{"kind":"tail"}}}}"#
            )
        };
        let json = format!(
            r#"{{"duration_ps":1000000000000,"seed":3,"fast_paths":false,
            "nodes":[{{"name":"a"}},{{"name":"s"}},{{"name":"b"}}],
            "links":[{},{},{},{}],
            "vcs":[{{"name":"d","class":"ubr","links":[0,1]}},{{"name":"k","class":"ubr","links":[2,3]}}],
            "sources":[],
            "flows":[{{"name":"f","layer":"atm","data_vc":0,"ack_vc":1,
              "variant":"reno","mss_bytes":960,"rcv_window_bytes":65535,"window_scale":0,
              "initial_cwnd_segments":1,"initial_ssthresh_bytes":null,"timer":{{"kind":"fine"}},
              "initial_rto_ps":3000000000000,"min_rto_ps":200000000000,
              "max_rto_ps":64000000000000,"delayed_ack_ps":0,"app_bytes":null,
              "max_sack_blocks":3}}]}}"#,
            link("as", 0, 1),
            link("sb", 1, 2),
            link("bs", 2, 1),
            link("sa", 1, 0),
        );
        serde_json::from_str(&json).unwrap()
    }

    fn real(sc: &Scenario) -> Simulation {
        let mut sim = Simulation::new(sc).unwrap();
        sim.set_external(0).unwrap();
        sim
    }

    /// Finishes `sim`, whose ledgers must balance: its summary, and the
    /// real datagrams injected, delivered, lost and in the network.
    fn finish_real(mut sim: Simulation) -> (crate::stats::Summary, (u64, u64, u64, u64)) {
        let (summary, _) = sim.finish();
        let c = &summary.conservation;
        assert!(c.ok, "{:?}", c.problems);
        let x = c.external.as_ref().unwrap();
        let terms = (x.injected, x.delivered, x.lost, x.in_network);
        (summary, terms)
    }

    #[test]
    fn datagrams_cross_an_ip_path_at_the_model_s_times_and_the_ledgers_balance() {
        let mut sim = real(&ip_line(10, false, ""));
        // 1000 IP bytes take 1 ms on each 8 Mb/s link, plus 1 ms of delay.
        sim.inject(0, true, 1000, 0, 0, 7).unwrap();
        sim.inject(0, false, 1000, 0, 0, 8).unwrap();
        sim.advance(3 * MS);
        assert!(sim.take_delivered().is_empty());
        sim.advance(4 * MS);
        let got = sim.take_delivered();
        let at = |tag| {
            got.iter()
                .find(|d| d.tag == tag)
                .map(|d| (d.at, d.to_receiver))
        };
        assert_eq!(
            (at(7), at(8)),
            (Some((4 * MS, true)), Some((4 * MS, false)))
        );
        // The model's own TCP sent nothing.
        sim.inject(0, true, 1500, 0, 0, 9).unwrap();
        let (summary, terms) = finish_real(sim);
        assert_eq!(terms, (3, 2, 0, 1));
        let c = &summary.conservation;
        assert_eq!((c.bytes.sent, c.packets.generated), (0, 3));
    }

    #[test]
    fn datagrams_cross_an_atm_path_as_aal5_frames_and_losses_are_counted() {
        let mut sim = real(&atm_line(20));
        // 1500 IP bytes + 16 of LLC/SNAP and trailer: 32 cells at once into
        // a port that holds 20 waiting and one in transmission.
        sim.inject(0, true, 1500, 0, 0, 1).unwrap();
        sim.inject(0, false, 40, 0, 0, 3).unwrap();
        sim.advance(50 * MS);
        sim.inject(0, true, 400, 0, 0, 2).unwrap();
        sim.advance(100 * MS);
        let mut got: Vec<u64> = sim.take_delivered().iter().map(|d| d.tag).collect();
        got.sort();
        // The first frame loses its tail (and its EOM): the second frame's
        // cells merge into it and both are lost; the ACK arrives.
        assert_eq!(got, vec![3]);
        let (summary, terms) = finish_real(sim);
        assert_eq!(terms, (3, 1, 2, 0));
        assert_eq!(summary.flows[0].bytes_sent, 0);
    }

    #[test]
    fn real_hosts_are_refused_with_the_fast_paths_or_once_running() {
        let mut sim = Simulation::new(&ip_line(10, true, "")).unwrap();
        assert!(sim.set_external(0).unwrap_err().contains("fast paths"));
        assert!(sim.set_external(1).unwrap_err().contains("no such flow"));
        let mut sim = Simulation::new(&ip_line(10, false, "")).unwrap();
        assert!(sim.inject(0, true, 100, 0, 0, 0).is_err());
        sim.advance(MS);
        assert!(sim.set_external(0).unwrap_err().contains("before"));
        // A simulated run has no ledger of real hosts' datagrams.
        let (summary, _) = sim.finish();
        assert!(summary.conservation.external.is_none());
    }

    /// `ip_line` with explicit-rate control at r's port to b (link 1, an
    /// ER of the link's 1,000,000 bytes/s until its first interval ends)
    /// and an ack bucket for the ACKs arriving at r from b (link 2).
    fn bucketed() -> Scenario {
        use crate::scenario::{AckControlSpec, RateControlSpec, WindowRule};
        let mut sc = ip_line(10, false, "");
        sc.links[1].rate_control = Some(RateControlSpec {
            interval_ps: 10_000 * MS,
            t0_ps: 10_000 * MS,
            a: 1.15,
            b: 1.05,
            qdlf: 0.5,
            delta: 0.1,
            max_increase: 0.1,
            active_decay: 0.0,
        });
        sc.links[2].ack_control = Some(AckControlSpec {
            rates_from: 1,
            window: WindowRule::None,
            ack_bucket: true,
        });
        sc
    }

    #[test]
    fn an_ack_bucket_paces_real_acks_by_the_data_they_acknowledge() {
        // Five real ACKs written at once, each acknowledging 100,000 bytes
        // more: at 1,000,000 bytes/s the bucket lets one go every 100 ms.
        let inject_five = |sim: &mut Simulation| {
            for k in 1..=5u64 {
                sim.inject(0, false, 40, 0, k * 100_000, k).unwrap();
            }
        };
        let mut sim = real(&bucketed());
        inject_five(&mut sim);
        sim.advance(50 * MS);
        assert!(sim.take_delivered().is_empty());
        // Held ACKs are in the network: the ledger balances mid-run.
        assert_eq!(finish_real(sim).1, (5, 0, 0, 5));

        let mut sim = real(&bucketed());
        inject_five(&mut sim);
        sim.advance(1000 * MS);
        let got = sim.take_delivered();
        let tags: Vec<u64> = got.iter().map(|d| d.tag).collect();
        assert_eq!(tags, vec![1, 2, 3, 4, 5]);
        // Released at 100, 200, ... 500 ms, then 1 ms to a (40 bytes take
        // 40 us on its link).
        let at: Vec<Time> = got.iter().map(|d| d.at).collect();
        let expected: Vec<Time> = (1..=5).map(|k| k * 100 * MS + MS + 40_000_000).collect();
        assert_eq!(at, expected);
    }
}
