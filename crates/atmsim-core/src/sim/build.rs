//! Building the network from a scenario.

use super::*;
use crate::scenario::FlowSpec;

impl Simulation {
    /// Builds the network; fails on an inconsistent scenario.
    pub fn new(sc: &Scenario) -> Result<Self, String> {
        sc.check()?;
        let n_vcs = sc.vcs.len();
        // VCs that carry a TCP flow end in a host, not a passive sink; ABR
        // VCs end in a destination end system that turns RM cells around.
        let tcp_vc = {
            let mut t = vec![false; n_vcs];
            for fl in &sc.flows {
                for v in [fl.data_vc, fl.ack_vc].into_iter().flatten() {
                    t[v as usize] = true;
                }
            }
            t
        };
        let endpoint: Vec<bool> = (0..n_vcs)
            .map(|i| tcp_vc[i] || sc.vcs[i].abr.is_some())
            .collect();
        // Which priorities use each link, and whether every VC on a link ends
        // there in a passive sink (then the link can be drained lazily).
        let mut classes = vec![[false; 3]; sc.links.len()];
        let mut lazy = vec![true; sc.links.len()];
        for (i, v) in sc.vcs.iter().enumerate() {
            for (k, &l) in v.links.iter().enumerate() {
                classes[l as usize][v.class.priority()] = true;
                if k + 1 != v.links.len() || endpoint[i] {
                    lazy[l as usize] = false;
                }
            }
            // Backward RM cells need their events.
            for &l in &v.back_links {
                lazy[l as usize] = false;
            }
        }
        let eager = eager_ip_links(sc);
        let feeders = batch_ports(sc, &eager);
        let mut feeds = vec![NO_BATCH; sc.links.len()];
        for (b, fs) in feeders.iter().enumerate() {
            for &k in fs {
                feeds[k as usize] = b as u32;
            }
        }
        let mut hops = Vec::with_capacity(sc.links.len());
        for (i, l) in sc.links.iter().enumerate() {
            let hop = match l.layer {
                Layer::Atm => {
                    let n_classes = classes[i].iter().filter(|&&c| c).count();
                    let mode = if n_classes <= 1 {
                        PortMode::Fifo
                    } else {
                        PortMode::Priority
                    };
                    Hop::Atm(AtmHop {
                        link: Link {
                            name: l.name.clone(),
                            from: l.from,
                            to: l.to,
                            cell_rate_cps: l.cell_rate_cps,
                            delay_ps: l.delay_ps,
                            in_flight: VecDeque::new(),
                            lazy: lazy[i],
                        },
                        port: Port::new(
                            cell_time_ps(l.cell_rate_cps),
                            l.buffer_cells.unwrap_or(u32::MAX),
                            mode,
                            buffer::build(&l.policy, n_vcs),
                        ),
                        algorithm: l.algorithm.as_ref().map(|a| algorithm::build(a, n_vcs)),
                    })
                }
                Layer::Ip => {
                    let limit = match (l.buffer_packets, l.buffer_bytes) {
                        (Some(n), _) => IpLimit::Packets(n),
                        (None, Some(b)) => IpLimit::Bytes(b),
                        (None, None) => IpLimit::Unlimited,
                    };
                    let red = match l.policy {
                        PolicySpec::Red {
                            min_th,
                            max_th,
                            w_q,
                            max_p,
                        } => Some(Red::new(min_th, max_th, w_q, max_p)),
                        _ => None,
                    };
                    let rng = RngStream::new(sc.seed, STREAM_IP_PORTS + i as u64);
                    Hop::Ip(IpHop {
                        name: l.name.clone(),
                        delay_ps: l.delay_ps,
                        port: IpPort::new(l.bit_rate_bps, limit, red, rng),
                        in_flight: VecDeque::new(),
                        feeds: feeds[i],
                        feeders: feeders[i].clone(),
                        batch_at: Time::MAX,
                    })
                }
            };
            hops.push(hop);
        }
        let mut vcs = sc
            .vcs
            .iter()
            .enumerate()
            .map(|(i, v)| VcState {
                name: v.name.clone(),
                links: v.links.clone(),
                priority: v.class.priority(),
                cells_sent: 0,
                frames_sent: 0,
                cells_delivered: 0,
                reassembly: Reassembly::default(),
                store: tcp_vc[i].then(FrameStore::default),
                is_abr: v.class == ServiceClass::Abr,
                back_links: v.back_links.clone(),
                brm_mark: v.back_links[..v.back_links.len().saturating_sub(1)]
                    .iter()
                    .map(|&b| {
                        let node = sc.links[b as usize].to;
                        v.links
                            .iter()
                            .copied()
                            .find(|&l| sc.links[l as usize].from == node)
                    })
                    .collect(),
                ses: v.abr.as_ref().map(|p| {
                    Box::new(SesState {
                        ses: SourceEndSystem::new(i as u32, p.clone()),
                        queue: VecDeque::new(),
                        greedy: false,
                        greedy_stop: Time::MAX,
                        scheduled: None,
                    })
                }),
                des: v.abr.as_ref().map(|_| DestinationEndSystem::default()),
            })
            .collect::<Vec<_>>();
        let mut queue = EventQueue::new();
        let mut sources = Vec::with_capacity(sc.sources.len());
        for (i, s) in sc.sources.iter().enumerate() {
            // A greedy source on an ABR VC is an infinite backlog at its SES.
            if let (SourceModel::Greedy, Some(ses)) = (&s.model, vcs[s.vc as usize].ses.as_mut()) {
                ses.greedy = true;
                ses.greedy_stop = s.stop_ps.unwrap_or(Time::MAX);
                ses.scheduled = Some(s.start_ps);
                queue.push(s.start_ps, Event::SesSend(s.vc));
                continue;
            }
            let first_link = &sc.links[sc.vcs[s.vc as usize].links[0] as usize];
            let mut source = traffic::build(&s.model, first_link.cell_rate_cps);
            // Stream id = source index: adding a source never changes the others.
            let mut rng = RngStream::new(sc.seed, i as u64);
            let stop = s.stop_ps.unwrap_or(Time::MAX);
            let t = source.first(s.start_ps, &mut rng);
            if t < stop {
                queue.push(t, Event::SourceEmit(sources.len() as u32));
            }
            sources.push(SourceState {
                source,
                rng,
                vc: s.vc,
                stop,
            });
        }
        let mut flows = Vec::with_capacity(sc.flows.len());
        let eager_rx = eager_receivers(sc);
        let eager_tx = eager_senders(sc, &eager);
        let mut ip_route: Vec<u32> = Vec::new();
        let mut ip_route_base: Vec<[u32; 2]> = Vec::with_capacity(sc.flows.len());
        let mut tick_groups: Vec<(Time, Vec<u32>)> = Vec::new();
        for (f, fl) in sc.flows.iter().enumerate() {
            let route = match fl.layer {
                Layer::Atm => FlowRoute::Atm {
                    data_vc: fl.data_vc.unwrap_or_default(),
                    ack_vc: fl.ack_vc.unwrap_or_default(),
                },
                Layer::Ip => FlowRoute::Ip,
            };
            let mut bases = [0u32; 2];
            if fl.layer == Layer::Ip {
                for (slot, path) in [&fl.ack_links, &fl.data_links].into_iter().enumerate() {
                    bases[slot] = ip_route.len() as u32;
                    ip_route.extend(path.iter().map(|&l| match eager[l as usize] {
                        Some(_) => l | EAGER_LINK,
                        None => l,
                    }));
                    ip_route.push(ROUTE_END);
                }
            }
            ip_route_base.push(bases);
            if let TimerMode::Coarse { tick_ps } = fl.tcp.timer {
                match tick_groups.iter_mut().find(|(g, _)| *g == tick_ps) {
                    Some((_, members)) => members.push(f as u32),
                    None => tick_groups.push((tick_ps, vec![f as u32])),
                }
            }
            flows.push(FlowState {
                name: fl.name.clone(),
                sender: TcpSender::new(&fl.tcp),
                receiver: TcpReceiver::new(
                    fl.tcp.variant == Variant::Sack,
                    fl.tcp.max_sack_blocks,
                    fl.tcp.delayed_ack_ps,
                ),
                route,
                wnd_field: fl.tcp.window_field(),
                processing_ps: fl.processing_ps,
                jitter_ps: fl.processing_jitter_ps,
                rng: RngStream::new(sc.seed, STREAM_FLOWS + f as u64),
                rx_queue: VecDeque::new(),
                sack: SackRing::default(),
                timer_at: None,
                started: false,
                eager_rx: eager_rx[f],
                eager_tx: eager_tx[f],
                probe_next: if sc.probes.any() && sc.probes.flows.contains(&(f as u32)) {
                    sc.probes.period_ps
                } else {
                    0
                },
                probe_held: VecDeque::new(),
            });
            queue.push(fl.start_ps, Event::FlowStart(f as u32));
        }
        for (g, (tick, _)) in tick_groups.iter().enumerate() {
            queue.push(*tick, Event::TcpTick(g as u32));
        }
        let p = &sc.probes;
        let mut series = Series::default();
        if p.any() {
            queue.push(p.period_ps, Event::ProbeTick);
            series.entity_names = sc
                .links
                .iter()
                .map(|l| l.name.clone())
                .chain(sc.vcs.iter().map(|v| v.name.clone()))
                .chain(sc.flows.iter().map(|f| f.name.clone()))
                .collect();
        }
        Ok(Simulation {
            now: 0,
            until: 0,
            duration: sc.duration_ps,
            seed: sc.seed,
            events: 0,
            queue,
            hops,
            vcs,
            sources,
            flows,
            tick_groups,
            byte_losses: ByteLosses::default(),
            packets: PacketCounts::default(),
            future_drops: Vec::new(),
            batch_heads: Vec::new(),
            ip_route,
            ip_route_base,
            rm_generated: 0,
            rm_delivered: 0,
            bad_checksums: 0,
            probe_period: p.period_ps,
            probe_queue: p.queue.clone(),
            probe_util: p.utilization.iter().map(|&l| (l, 0)).collect(),
            probe_rate: p.vc_rate.iter().map(|&v| (v, 0)).collect(),
            probe_flows: p.flows.clone(),
            probe_abr_vcs: p.abr_vcs.clone(),
            probe_abr_ports: p.abr_ports.clone(),
            series,
        })
    }
}

/// For each link, the one value all its uses name, if they all name the
/// same `Some`; None for a link unused, or whose uses differ or name None.
fn sole_value(
    n_links: usize,
    uses: impl IntoIterator<Item = (u32, Option<u32>)>,
) -> Vec<Option<u32>> {
    // None: unused; Some(None): no single value; Some(Some(v)): always v.
    let mut seen: Vec<Option<Option<u32>>> = vec![None; n_links];
    for (l, v) in uses {
        let slot = &mut seen[l as usize];
        *slot = match *slot {
            None => Some(v),
            Some(q) if q == v => Some(q),
            Some(_) => Some(None),
        };
    }
    seen.into_iter().map(Option::flatten).collect()
}

/// For each link, the upstream link of an IP port that can be fed eagerly:
/// every IP path through it comes from that one link, which is itself not
/// such a candidate (so eager ports never follow one another).
pub(super) fn eager_ip_links(sc: &Scenario) -> Vec<Option<u32>> {
    let uses = sc.flows.iter().flat_map(|f| {
        [&f.data_links, &f.ack_links].into_iter().flat_map(|path| {
            path.iter()
                .enumerate()
                .map(|(k, &l)| (l, k.checked_sub(1).map(|p| path[p])))
        })
    });
    let candidate = sole_value(sc.links.len(), uses);
    candidate
        .iter()
        .map(|c| c.filter(|&p| candidate[p as usize].is_none()))
        .collect()
}

/// For each link, the links that feed its port if it is a *batch port*
/// (else none): an IP port that is not eager, every packet of which comes
/// over one of those links, each of which has a delay and leads nowhere
/// else. The port then takes their packets in batches: at the earliest
/// arrival E, every arrival before E + the least feeder delay, since a
/// packet entering a feeder from E on arrives after that.
pub(super) fn batch_ports(sc: &Scenario, eager_links: &[Option<u32>]) -> Vec<Vec<u32>> {
    let n = sc.links.len();
    let paths = || {
        sc.flows
            .iter()
            .filter(|f| f.layer == Layer::Ip)
            .flat_map(|f| [&f.data_links, &f.ack_links])
    };
    // The one link each link leads to (None if several or a path's end).
    let next = sole_value(
        n,
        paths().flat_map(|path| {
            path.iter()
                .enumerate()
                .map(|(k, &l)| (l, path.get(k + 1).copied()))
        }),
    );
    let mut feeders: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut ok: Vec<bool> = (0..n)
        .map(|l| sc.links[l].layer == Layer::Ip && eager_links[l].is_none())
        .collect();
    let mut used = vec![false; n];
    for path in paths() {
        for (k, &l) in path.iter().enumerate() {
            used[l as usize] = true;
            match k.checked_sub(1).map(|j| path[j]) {
                Some(p) if next[p as usize] == Some(l) && sc.links[p as usize].delay_ps > 0 => {
                    feeders[l as usize].push(p)
                }
                _ => ok[l as usize] = false,
            }
        }
    }
    for (l, fs) in feeders.iter_mut().enumerate() {
        if ok[l] && used[l] {
            fs.sort_unstable();
            fs.dedup();
        } else {
            fs.clear();
        }
    }
    feeders
}

/// For each flow, whether its receiver can take each data segment as soon
/// as the segment's arrival time is known, at that time, rather than through
/// an arrival event: the receiver changes only when segments arrive, and
/// segments come in order over the path's last link. That holds when
///
/// - the flow is over IP, ACKs at once (no delayed ACK) and has no
///   processing time, so nothing else (a timer, a queue) touches the
///   receiver;
/// - its ACKs' first link carries only the ACKs of such receivers fed by
///   the same last data link, so the ACKs reach that port in time order.
///
/// The simulator also needs the arrival to be no later than the end of the
/// current `advance`, and the last link to have no packet in flight ahead
/// of it (else the segment takes the event path, in order).
pub(super) fn eager_receivers(sc: &Scenario) -> Vec<bool> {
    owning_ends(sc, false, |f| {
        f.layer == Layer::Ip
            && f.tcp.delayed_ack_ps == 0
            && f.processing_ps == 0
            && f.processing_jitter_ps == 0
            && !f.data_links.is_empty()
            && !f.ack_links.is_empty()
    })
}

/// For each flow, whether its sender can take each ACK as soon as the ACK's
/// arrival time is known, at that time, rather than through an arrival
/// event. The sender changes only with its ACKs, its retransmission timer
/// and the probes, so that holds when
///
/// - the flow is over IP with fine timers (a coarse timer is a global tick
///   that walks the flows);
/// - its data's first link carries only the data of such senders whose ACKs
///   come over the same last link, so the data reach that port in time
///   order;
/// - its data's second link is not eager, so what the sender sends stops at
///   an event there (eager steps never chain without end).
///
/// The simulator also needs the ACK to arrive within the current
/// `advance`, no earlier packet in flight on the last link, and the
/// sender's own deadline after the ACK; a probed flow keeps its samples for
/// the ticks it moves past.
pub(super) fn eager_senders(sc: &Scenario, eager_links: &[Option<u32>]) -> Vec<bool> {
    owning_ends(sc, true, |f| {
        f.layer == Layer::Ip
            && f.tcp.timer == TimerMode::Fine
            && f.data_links.len() >= 2
            && eager_links[f.data_links[1] as usize].is_none()
            && !f.ack_links.is_empty()
    })
}

/// For each flow, whether it is `capable` and the first link of its data
/// path (`sender` true) or ACK path (false) carries nothing but that first
/// hop of capable flows whose other path ends on one same link: the ends
/// those links leave from then see their packets in time order.
fn owning_ends(sc: &Scenario, sender: bool, capable: impl Fn(&FlowSpec) -> bool) -> Vec<bool> {
    // The path whose first link the end owns, and the other one.
    fn paths(f: &FlowSpec, sender: bool) -> (&[u32], &[u32]) {
        if sender {
            (&f.data_links, &f.ack_links)
        } else {
            (&f.ack_links, &f.data_links)
        }
    }
    let uses = sc.flows.iter().flat_map(|f| {
        let (own, other) = paths(f, sender);
        let claim = other.last().copied().filter(|_| capable(f));
        own.iter()
            .enumerate()
            .map(move |(k, &l)| (l, claim.filter(|_| k == 0)))
            .chain(other.iter().map(|&l| (l, None)))
    });
    let feeder = sole_value(sc.links.len(), uses);
    sc.flows
        .iter()
        .map(|f| capable(f) && feeder[paths(f, sender).0[0] as usize].is_some())
        .collect()
}
