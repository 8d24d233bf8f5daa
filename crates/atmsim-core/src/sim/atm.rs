//! The ATM fabric: unidirectional links with their output ports and ABR
//! switch algorithms, and the paths of the VCs (forward, and backward for
//! the RM cells of ABR VCs).
//!
//! It moves cells between ports: a cell offered to a port is judged by the
//! port's drop policy; a single-class port computes its departure at once
//! (Lindley: depart = max(arrive, last depart) + cell time) and puts it on
//! the link; a port that mixes classes sends one cell per transmit event.
//! A link schedules only the arrival of its head cell. What reaches the end
//! of a path is handed back to the caller; the fabric knows nothing of
//! sources, sinks or hosts.
//!
//! A link whose cells all end in passive sinks may be *lazy* (a fast path,
//! `fast_paths::lazy_links`): it schedules nothing, and `link_push` hands
//! its cells to `LazyLinks`, which passes them to a `deliver` callback.

use super::atm_control::AtmControl;
use super::capture::AtmCaptures;
use super::fast_paths::LazyLinks;
use crate::abr::algorithm::{self, AlgorithmStats, PortState};
use crate::abr::{is_brm, is_rm, SwitchAlgorithm};
use crate::atm::link::LAZY_BATCH;
use crate::atm::port::{FifoPort, PortCore, PriorityArrival};
use crate::atm::{AtmPort, Cell, Lane, Link, ServiceClass, SlotClock};
use crate::buffer::{PolicyContext, VcOccupancy};
use crate::engine::time::cell_time_ps;
use crate::engine::{Event, EventQueue, RngStream, Time};
use crate::gfr::Fgcra;
use crate::ids::{AtmLinkIx, FlowId, VcId};
use crate::ip::Packet;
use crate::scenario::{LinkSpec, PolicySpec, VcSpec};
use crate::stats::{GfrSummary, Ledger, PortSummary};
use std::collections::VecDeque;

/// An ATM link with its output port and, for ABR, its switch algorithm.
struct AtmHop {
    link: Link,
    port: AtmPort,
    algorithm: Option<Box<dyn SwitchAlgorithm>>,
    /// The link's lanes beyond its own queue (indices into
    /// [`AtmFabric::lanes`]; empty unless its cells go on into ports of
    /// several slots).
    lanes: Vec<u32>,
    /// A packet capture watches the link.
    captured: bool,
}

impl AtmHop {
    fn port_state(&self, now: Time) -> PortState {
        PortState {
            link_cps: self.link.cell_rate_cps,
            abr_queue: self.port.abr_waiting(now),
        }
    }
}

/// A VC's way through the fabric (link indices are the fabric's).
struct VcPath {
    links: Vec<AtmLinkIx>,
    /// The queue each hop's cells take on its link: the link's own (its
    /// index) or a lane (the number of links + the lane's index).
    queues: Vec<u32>,
    /// ABR: the same for the backward RM cells on `back_links`.
    back_queues: Vec<u32>,
    priority: usize,
    is_abr: bool,
    /// ABR: the backward path of the RM cells.
    back_links: Vec<AtmLinkIx>,
    /// ABR: for a backward RM cell that arrived over back_links[h], the
    /// forward port at that switch whose algorithm marks it.
    brm_mark: Vec<Option<AtmLinkIx>>,
}

/// What reached the far end of a link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Arrived {
    /// A backward RM cell, still at the hop it crossed (see [`AtmFabric::brm_onward`]).
    Brm(Cell),
    /// A cell going on into the port of this link.
    Onward(AtmLinkIx, Cell),
    /// A cell at the end of its VC's forward path.
    End(Cell),
}

/// Where a backward RM cell goes after crossing a switch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum BrmStep {
    /// It is back at its source end system.
    AtSource(Cell),
    /// Into the port of this link (marked by the switch's algorithm).
    Onward(AtmLinkIx, Cell),
}

/// The ATM links, ports and VC paths of a network.
pub(super) struct AtmFabric {
    hops: Vec<AtmHop>,
    paths: Vec<VcPath>,
    /// Each VC's first link (u32::MAX: none), apart from its path so that
    /// a cell's way in touches 4 bytes per VC, not its path's records.
    first_links: Vec<AtmLinkIx>,
    /// GFR VCs: the frame-based GCRA at the VC's first switch.
    policers: Vec<Option<Fgcra>>,
    /// GFR VCs: the MCR, cells/s.
    mcr_cps: Vec<f64>,
    /// The explicit-rate control of TCP at its ports and edges.
    control: AtmControl,
    /// The lazy links' horizon (a fast path, see `fast_paths`).
    lazy: LazyLinks,
    /// The packet captures of its links.
    captures: AtmCaptures,
    /// The links' lanes beyond their own queues (slotted contention only).
    lanes: Vec<Lane>,
    /// The quiet-end link whose head cell has just arrived, when the cells
    /// behind it are to be handed on early once its own arrival has been
    /// handled ([`AtmFabric::hand_on_quiet`]).
    quiet_pending: Option<AtmLinkIx>,
    /// A quiet cell arriving before this time is handed to its end early:
    /// nothing reads the ends behind the quiet-end links before it (the
    /// lazy links' horizon, or the end of the current `advance` when no
    /// probe reads the cells the ends have received).
    quiet_horizon: Time,
}

impl AtmFabric {
    /// The fabric of the scenario's ATM links `specs` (each with its scenario
    /// index and its lazy flag), in order, and of its VCs; `local` maps a
    /// scenario link index to the fabric's (only ATM links are looked up);
    /// `seed` seeds the ports' random streams; `vc_probed` lists the links
    /// whose ports' cells per VC are probed; with `slotted`, a cell that
    /// reaches a switch over a link enters its output port at the end of
    /// that port's slot (see [`crate::atm::slot_arrival`]).
    pub(super) fn new(
        specs: Vec<(usize, &LinkSpec, bool)>,
        vcs: &[VcSpec],
        local: &[u32],
        seed: u64,
        vc_probed: &[u32],
        slotted: bool,
    ) -> Self {
        let n_vcs = vcs.len();
        // Which priorities use each link: a port with one class needs no
        // transmit events; and each GFR VC's weight at each DFBA port. Only
        // DFBA reads the weights: other ports get none, so that a network of
        // many links and many VCs does not hold links x VCs of them.
        let mut classes = vec![[false; 3]; specs.len()];
        let mut weights: Vec<Vec<f64>> = specs
            .iter()
            .map(|(_, l, _)| match l.policy {
                PolicySpec::Dfba { .. } => vec![0.0; n_vcs],
                _ => Vec::new(),
            })
            .collect();
        let mut crossing = vec![Vec::new(); specs.len()];
        for (v, vc) in vcs.iter().enumerate() {
            for &l in &vc.links {
                let a = local[l as usize] as usize;
                classes[a][vc.class.priority()] = true;
                if weights[a].is_empty() {
                    continue;
                }
                crossing[a].push(v);
                if let (Some(g), Some(w)) = (&vc.gfr, weights[a].get_mut(v)) {
                    // W_i = MCR_i / GFR capacity, the capacity being the
                    // link's cell rate (GFR buffer management (Goyal et al., 1998), section 4).
                    *w = g.mcr_cps / specs[a].1.cell_rate_cps;
                }
            }
        }
        // A port that no VC with an MCR crosses (DFBA over UBR VCs) gives
        // every VC crossing it the same weight: W_i / W is 0 / 0 there, and
        // equal shares are what Selective Drop and FBA enforce (our choice).
        for (w, vcs_here) in weights.iter_mut().zip(&crossing) {
            if !w.is_empty() && w.iter().all(|&x| x == 0.0) {
                for &v in vcs_here {
                    w[v] = 1.0;
                }
            }
        }
        let mut hops = specs
            .into_iter()
            .zip(weights)
            .enumerate()
            .map(|(a, ((i, l, lazy), weights))| {
                let n_classes = classes[a].iter().filter(|&&c| c).count();
                let policy = crate::buffer::build(
                    &l.policy,
                    PolicyContext {
                        n_vcs,
                        weights,
                        rng: RngStream::new(seed, super::STREAM_ATM_PORTS + i as u64),
                    },
                );
                let core = PortCore::new(
                    cell_time_ps(l.cell_rate_cps),
                    l.buffer_cells.unwrap_or(u32::MAX),
                    policy,
                );
                let mut port = AtmPort::new(core, n_classes);
                if port.policy_needs_vcs() || vc_probed.contains(&(i as u32)) {
                    port.track_vcs(n_vcs);
                }
                AtmHop {
                    link: Link {
                        name: l.name.clone(),
                        from: l.from,
                        to: l.to,
                        cell_rate_cps: l.cell_rate_cps,
                        delay_ps: l.delay_ps,
                        in_flight: VecDeque::new(),
                        slot: SlotClock::default(),
                        lazy,
                        drain_at: LAZY_BATCH,
                        quiet_end: false,
                    },
                    port,
                    algorithm: l.algorithm.as_ref().map(|a| algorithm::build(a, n_vcs)),
                    lanes: Vec::new(),
                    captured: false,
                }
            })
            .collect::<Vec<_>>();
        let mut paths = vcs
            .iter()
            .map(|v| {
                let to_local = |ls: &[u32]| {
                    ls.iter()
                        .map(|&l| AtmLinkIx::new(local[l as usize]))
                        .collect()
                };
                let links: Vec<AtmLinkIx> = to_local(&v.links);
                let brm_mark = v.back_links[..v.back_links.len().saturating_sub(1)]
                    .iter()
                    .map(|&b| {
                        // The forward link leaving the node this backward link reaches.
                        let node = hops[local[b as usize] as usize].link.to;
                        links
                            .iter()
                            .copied()
                            .find(|&l| hops[l.index()].link.from == node)
                    })
                    .collect();
                VcPath {
                    priority: v.class.priority(),
                    is_abr: v.class == ServiceClass::Abr,
                    back_links: to_local(&v.back_links),
                    brm_mark,
                    links,
                    queues: Vec::new(),
                    back_queues: Vec::new(),
                }
            })
            .collect::<Vec<VcPath>>();
        let lanes = assign_queues(&mut hops, &mut paths, slotted);
        let policers = vcs
            .iter()
            .zip(&paths)
            .map(|(v, path)| {
                let g = v.gfr.as_ref()?;
                let pcr = hops[path.links[0].index()].link.cell_rate_cps;
                Some(Fgcra::new(
                    g.mcr_cps,
                    pcr,
                    g.mbs_cells,
                    g.mfs_cells,
                    g.tagging,
                ))
            })
            .collect();
        let mcr_cps = vcs
            .iter()
            .map(|v| v.gfr.as_ref().map_or(0.0, |g| g.mcr_cps))
            .collect();
        let first_links = paths
            .iter()
            .map(|p| p.links.first().copied().unwrap_or(AtmLinkIx::new(u32::MAX)))
            .collect();
        AtmFabric {
            hops,
            paths,
            first_links,
            policers,
            mcr_cps,
            control: AtmControl::default(),
            lazy: LazyLinks::default(),
            captures: AtmCaptures::default(),
            lanes,
            quiet_pending: None,
            quiet_horizon: 0,
        }
    }

    /// Marks the links whose far end is the end of every VC on them (fast
    /// path 6, see `fast_paths`): `quiet[a]` for the fabric's link `a`.
    pub(super) fn set_quiet_ends(&mut self, quiet: &[bool]) {
        for (hop, &q) in self.hops.iter_mut().zip(quiet) {
            // Cells that end where their link ends enter no port there: the
            // link keeps no lanes and no slots.
            debug_assert!(!q || (hop.link.slot.slot_ps == 0 && !hop.link.lazy));
            hop.link.quiet_end = q;
        }
    }

    /// Moves the lazy links' horizon of early delivery to `t` (see
    /// [`LazyLinks::raise`]).
    /// The quiet-end links' horizon moves to `quiet` (at least `t`: the
    /// ends behind them are not read before it).
    pub(super) fn raise_horizon(
        &mut self,
        t: Time,
        quiet: Time,
        deliver: &mut impl FnMut(&Cell, Time),
    ) {
        let links = self.hops.iter_mut().map(|h| &mut h.link);
        self.lazy.raise(t, links, deliver);
        self.quiet_horizon = self.quiet_horizon.max(quiet);
    }

    /// Gives the fabric its explicit-rate control (built once the agenda,
    /// where it schedules its intervals, exists).
    pub(super) fn set_captures(&mut self, captures: AtmCaptures) {
        for (l, hop) in self.hops.iter_mut().enumerate() {
            hop.captured = captures.watches(l);
        }
        self.captures = captures;
    }

    /// The ATM captures' files and what each wrote, `segment` giving the
    /// TCP segment a VC's frame carried.
    pub(super) fn take_captures(
        &mut self,
        segment: impl Fn(u32, u32) -> Option<crate::ip::Packet>,
    ) -> (Vec<(String, Vec<u8>)>, Vec<crate::stats::CaptureSummary>) {
        self.captures.finish(segment)
    }

    pub(super) fn set_control(&mut self, control: AtmControl) {
        self.control = control;
    }

    /// Port `l`'s rate controller ends an averaging interval at `now`.
    pub(super) fn end_rate_interval(&mut self, l: AtmLinkIx, now: Time, agenda: &mut EventQueue) {
        let queue = self.hops[l.index()].port.occupancy(now) as u64;
        self.control.end_interval(l, now, queue, agenda);
    }

    /// ACK `packet`, reassembled from cells that arrived over link `l`,
    /// leaves the ATM network at `now`: its window perhaps rewritten by the
    /// edge there.
    #[inline]
    pub(super) fn at_edge(&mut self, l: AtmLinkIx, packet: Packet, now: Time) -> Packet {
        if packet.is_data || !self.control.any() {
            return packet;
        }
        let queue_delay_ps = match self.control.queue_delay_port(l) {
            // What a ping through the controlling port would wait there.
            Some(p) => {
                let port = &self.hops[p.index()].port;
                port.occupancy(now) as Time * port.cell_time_ps()
            }
            None => 0,
        };
        self.control.on_ack(l, packet, queue_delay_ps)
    }

    /// Flow `f`'s ends are real hosts with window scale `scale` and MSS
    /// `mss` (an emulation).
    pub(super) fn set_real_tcp(&mut self, f: FlowId, scale: u8, mss: u32) {
        self.control.set_real_tcp(f, scale, mss);
    }

    /// Flow `f`'s explicit rate (bits/s) and last written window (bytes),
    /// if an ATM port rates it.
    pub(super) fn control_sample(&self, f: FlowId) -> Option<(f64, f64)> {
        self.control.sample(f)
    }

    /// What the explicit-rate control at ATM ports did to flow `f`.
    pub(super) fn flow_rate_summary(&self, f: FlowId) -> Option<crate::stats::FlowRateSummary> {
        self.control.flow_summary(f)
    }

    /// Number of links.
    pub(super) fn len(&self) -> usize {
        self.hops.len()
    }

    /// The first link of VC `vc`'s path.
    #[inline]
    pub(super) fn first_link(&self, vc: VcId) -> AtmLinkIx {
        let l = self.first_links[vc.index()];
        debug_assert_ne!(l.get(), u32::MAX, "VC {vc} has no ATM link");
        l
    }

    /// The first link of ABR VC `vc`'s backward path.
    pub(super) fn first_back_link(&self, vc: VcId) -> AtmLinkIx {
        self.paths[vc.index()].back_links[0]
    }

    /// `cell` reaches the output port of link `l` at `now`; returns false if
    /// the port dropped it. Arrived cells of a lazy link go to `deliver`.
    #[inline]
    pub(super) fn port_arrive(
        &mut self,
        l: AtmLinkIx,
        mut cell: Cell,
        now: Time,
        agenda: &mut EventQueue,
        deliver: &mut impl FnMut(&Cell, Time),
    ) -> bool {
        if self.control.any() && !is_rm(&cell) {
            self.control.count(l, VcId::new(cell.vc));
        }
        let hop = &mut self.hops[l.index()];
        if hop.algorithm.is_some() {
            let path = &self.paths[cell.vc as usize];
            let (prio, abr) = (path.priority, path.is_abr);
            let ps = hop.port_state(now);
            if let Some(a) = hop.algorithm.as_mut() {
                if is_brm(&cell) {
                    a.on_reverse_brm(now, &ps);
                } else {
                    a.on_cell(now, &mut cell, abr, prio, &ps);
                }
            }
        }
        let captured = hop.captured;
        let accepted = match &mut hop.port {
            AtmPort::Fifo(port) => match port.arrive(now, &cell) {
                Some(depart) => {
                    self.link_push(l, depart, cell, now, agenda, deliver);
                    true
                }
                None => false,
            },
            AtmPort::Priority(port) => {
                match port.arrive(now, cell, self.paths[cell.vc as usize].priority) {
                    PriorityArrival::Started(end) => {
                        agenda.push(end, Event::PortTxDone(l));
                        true
                    }
                    PriorityArrival::Queued => true,
                    PriorityArrival::Dropped => false,
                }
            }
        };
        if captured && !accepted {
            self.captures.dropped(l.index(), &cell, now);
        }
        accepted
    }

    /// The link into which VC `vc`'s cells may go straight from their source
    /// (the merged sources' direct steps, `fast_paths::merged_sources`):
    /// its one link, when that link is lazy and its port a single-class
    /// FIFO without a switch algorithm, explicit-rate control or policer
    /// (None otherwise).
    pub(super) fn direct_link(&self, vc: VcId) -> Option<AtmLinkIx> {
        let path = &self.paths[vc.index()];
        let &[l] = path.links.as_slice() else {
            return None;
        };
        let hop = &self.hops[l.index()];
        let plain = hop.link.lazy
            && hop.port.is_fifo()
            && hop.algorithm.is_none()
            && !self.control.any()
            && self.policers[vc.index()].is_none();
        plain.then_some(l)
    }

    /// The port and link of direct link `l` (see [`AtmFabric::direct_link`]),
    /// with the lazy links' state: for the merged sources' direct steps
    /// (`fast_paths::merged_sources`). The port is there when it decides by
    /// plain tail drop from its backlog alone ([`AtmPort::tail_fifo`]).
    #[inline(always)]
    pub(super) fn direct_hop(
        &mut self,
        l: AtmLinkIx,
    ) -> (Option<&mut FifoPort>, &mut Link, &LazyLinks) {
        let hop = &mut self.hops[l.index()];
        debug_assert!(hop.link.lazy && hop.algorithm.is_none() && hop.port.is_fifo());
        (hop.port.tail_fifo(), &mut hop.link, &self.lazy)
    }

    /// The priority port of link `l` finished the cell it was sending at
    /// `now`: it goes on the link and the next one starts.
    pub(super) fn tx_done(
        &mut self,
        l: AtmLinkIx,
        now: Time,
        agenda: &mut EventQueue,
        deliver: &mut impl FnMut(&Cell, Time),
    ) {
        let AtmPort::Priority(port) = &mut self.hops[l.index()].port else {
            unreachable!("tx done at the FIFO port of link {l}");
        };
        let (cell, next) = port.tx_done(now);
        if let Some(end) = next {
            agenda.push(end, Event::PortTxDone(l));
        }
        self.link_push(l, now, cell, now, agenda, deliver);
    }

    /// Puts `cell`, whose transmission on link `l` ends at `tx_end`, on the link.
    #[inline]
    fn link_push(
        &mut self,
        l: AtmLinkIx,
        tx_end: Time,
        cell: Cell,
        now: Time,
        agenda: &mut EventQueue,
        deliver: &mut impl FnMut(&Cell, Time),
    ) {
        let n_links = self.hops.len();
        let hop = &mut self.hops[l.index()];
        if hop.captured {
            let start = tx_end - hop.port.cell_time_ps();
            let far = tx_end + hop.link.delay_ps;
            self.captures.crossed(l.index(), &cell, start, far);
        }
        if hop.link.lazy {
            self.lazy.push(&mut hop.link, tx_end, cell, now, deliver);
            return;
        }
        let arrival = tx_end + hop.link.delay_ps;
        if hop.link.quiet_end
            && quiet(&cell)
            && hop.link.in_flight.is_empty()
            && arrival < self.quiet_horizon
        {
            // Every earlier cell of the link has reached its end, and
            // nothing reads this one's end before the horizon.
            deliver(&cell, arrival);
            return;
        }
        // The cell's queue: the link's own unless it has lanes.
        let q = if hop.lanes.is_empty() {
            l.get()
        } else {
            let path = &self.paths[cell.vc as usize];
            if is_brm(&cell) {
                path.back_queues[cell.hop as usize]
            } else {
                path.queues[cell.hop as usize]
            }
        };
        let (in_flight, slot) = if q == l.get() {
            (&mut hop.link.in_flight, &mut hop.link.slot)
        } else {
            let lane = &mut self.lanes[q as usize - n_links];
            (&mut lane.in_flight, &mut lane.slot)
        };
        let was_empty = in_flight.is_empty();
        in_flight.push_back((arrival, cell));
        if was_empty {
            agenda.push_arrival(slot.end_for(arrival), Event::CellArrival(q));
        }
    }

    /// The head cell of queue `q` (a link's own queue, or a lane: see
    /// [`VcPath::queues`]) reaches the far end of its link at `now` (under
    /// slotted contention, the end of the slot it arrived in); the next
    /// one's arrival is scheduled. Returns the link, and where the cell
    /// goes. A GFR VC's data cells are policed as they reach the VC's first
    /// switch (the end of its first link).
    pub(super) fn link_arrival(
        &mut self,
        q: u32,
        now: Time,
        agenda: &mut EventQueue,
    ) -> (AtmLinkIx, Arrived) {
        let n_links = self.hops.len() as u32;
        let horizon = self.quiet_horizon;
        let (l, in_flight, slot, quiet_end) = if q < n_links {
            let link = &mut self.hops[q as usize].link;
            (q, &mut link.in_flight, &mut link.slot, link.quiet_end)
        } else {
            let lane = &mut self.lanes[(q - n_links) as usize];
            (lane.link, &mut lane.in_flight, &mut lane.slot, false)
        };
        let l = AtmLinkIx::new(l);
        let mut quiet_pending = false;
        let (_, mut cell) = in_flight.pop_front().expect("arrival on an empty link");
        if let Some(&(t, ref next)) = in_flight.front() {
            if quiet_end && quiet(next) && t < horizon {
                // The quiet cells behind this one are handed on once this
                // one has been handled (a VC's cells reach its end in order).
                quiet_pending = true;
            } else {
                agenda.push_arrival(slot.end_for(t), Event::CellArrival(q));
            }
        }
        if quiet_pending {
            self.quiet_pending = Some(l);
        }
        if is_brm(&cell) {
            return (l, Arrived::Brm(cell));
        }
        cell.hop += 1;
        let path = &self.paths[cell.vc as usize];
        let arrived = match path.links.get(cell.hop as usize) {
            Some(&next) => {
                if cell.hop == 1 && !is_rm(&cell) {
                    if let Some(p) = self.policers[cell.vc as usize].as_mut() {
                        p.police(now, &mut cell);
                    }
                }
                Arrived::Onward(next, cell)
            }
            None => Arrived::End(cell),
        };
        (l, arrived)
    }

    /// After the arrival of the head cell of a quiet-end link marked by
    /// `link_arrival`: hands the quiet cells behind it that arrive before
    /// the horizon to `deliver`, in order, and schedules the arrival of the
    /// first cell left, if any. Exact as in [`AtmFabric::link_push`]: the
    /// cells of a VC reach its end in their order on the link, and nothing
    /// reads an end's state for a data cell that does not end its frame
    /// (its reassembly, its counters, an ABR destination's EFCI state)
    /// before that VC's next frame-ending or RM cell on the same link, or
    /// before the horizon (a probe tick, the end of the `advance`).
    #[inline]
    pub(super) fn hand_on_quiet(
        &mut self,
        agenda: &mut EventQueue,
        deliver: &mut impl FnMut(&Cell, Time),
    ) {
        let Some(l) = self.quiet_pending.take() else {
            return;
        };
        let horizon = self.quiet_horizon;
        let link = &mut self.hops[l.index()].link;
        while let Some(&(t, cell)) = link.in_flight.front() {
            if !quiet(&cell) || t >= horizon {
                agenda.push_arrival(link.slot.end_for(t), Event::CellArrival(l.get()));
                return;
            }
            link.in_flight.pop_front();
            deliver(&cell, t);
        }
    }

    /// A GFR VC's conformance counters (None for other VCs).
    pub(super) fn gfr_summary(&self, vc: VcId) -> Option<GfrSummary> {
        let p = self.policers[vc.index()].as_ref()?;
        Some(GfrSummary {
            mcr_cps: self.mcr_cps[vc.index()],
            frames_tested: p.frames_tested,
            frames_ineligible: p.frames_ineligible,
            cells_tagged: p.cells_tagged,
        })
    }

    /// The cells of each VC in the port of link `l` at `now`, if kept.
    pub(super) fn vc_occupancy(&mut self, l: AtmLinkIx, now: Time) -> Option<&VcOccupancy> {
        self.hops[l.index()].port.vc_occupancy(now)
    }

    /// The VCs whose path crosses link `l`, in index order.
    pub(super) fn vcs_on(&self, l: AtmLinkIx) -> Vec<VcId> {
        (0..self.paths.len())
            .filter(|&v| self.paths[v].links.contains(&l))
            .map(VcId::from_index)
            .collect()
    }

    /// A backward RM cell arrived over hop `cell.hop` of its backward path at
    /// `now`: back at its source, or marked by the switch's algorithm and on
    /// into the next backward link.
    pub(super) fn brm_onward(&mut self, mut cell: Cell, now: Time) -> BrmStep {
        let path = &self.paths[cell.vc as usize];
        let h = cell.hop as usize;
        if h + 1 == path.back_links.len() {
            return BrmStep::AtSource(cell);
        }
        if let Some(k) = path.brm_mark[h] {
            let hop = &mut self.hops[k.index()];
            let ps = hop.port_state(now);
            if let Some(a) = hop.algorithm.as_mut() {
                a.on_brm(now, &mut cell, &ps);
            }
        }
        cell.hop += 1;
        BrmStep::Onward(path.back_links[cell.hop as usize], cell)
    }

    /// Hands the cells of lazy links that have arrived before `t` (by `t`
    /// with `at_t`) to `deliver`.
    pub(super) fn drain_lazy(
        &mut self,
        t: Time,
        at_t: bool,
        deliver: &mut impl FnMut(&Cell, Time),
    ) {
        let links = self.hops.iter_mut().map(|h| &mut h.link);
        LazyLinks::drain(links, t, at_t, deliver);
    }

    /// Cells waiting at the port of link `l` at `now`.
    pub(super) fn queue_cells(&self, l: AtmLinkIx, now: Time) -> u32 {
        self.hops[l.index()].port.occupancy(now)
    }

    /// Cells waiting in the ABR queue of the port of link `l` at `now`.
    pub(super) fn abr_queue_cells(&self, l: AtmLinkIx, now: Time) -> u32 {
        self.hops[l.index()].port.abr_waiting(now)
    }

    /// Transmission time the port of link `l` spent up to `now`, ps.
    pub(super) fn busy_ps(&self, l: AtmLinkIx, now: Time) -> u128 {
        self.hops[l.index()].port.busy_ps(now)
    }

    /// What the switch algorithm of link `l`'s port shows the probes.
    pub(super) fn algorithm_stats(&self, l: AtmLinkIx) -> AlgorithmStats {
        let h = &self.hops[l.index()];
        h.algorithm.as_ref().map(|a| a.stats()).unwrap_or_default()
    }

    /// The summary of link `l`'s port at `now`, adding its cells to the ledger.
    pub(super) fn port_summary(&self, l: AtmLinkIx, now: Time, ledger: &mut Ledger) -> PortSummary {
        let h = &self.hops[l.index()];
        let (port, link) = (&h.port, &h.link);
        // Cells still on the link's queue: behind a FIFO port those whose
        // transmission has not ended are still in the port.
        let mut in_port_listed = 0u64;
        let mut on_wire = 0u64;
        let n_links = self.hops.len();
        let lanes = h.lanes.iter().map(|&k| &self.lanes[k as usize - n_links]);
        for &(a, _) in link
            .in_flight
            .iter()
            .chain(lanes.flat_map(|x| &x.in_flight))
        {
            if port.is_fifo() && a - link.delay_ps > now {
                in_port_listed += 1;
            } else {
                on_wire += 1;
            }
        }
        let in_port = if port.is_fifo() {
            in_port_listed
        } else {
            port.cells_in_port(now)
        };
        if port.cells_in_port(now) != in_port {
            ledger.problems.push(format!(
                "port {}: {} cells in the port by its clock, {} by its list",
                link.name,
                port.cells_in_port(now),
                in_port
            ));
        }
        let dropped = port.cells_dropped();
        let counts = port.core();
        if counts.cells_in != counts.cells_accepted + dropped {
            ledger.problems.push(format!(
                "port {}: cells in {} != accepted {} + dropped {dropped}",
                link.name, counts.cells_in, counts.cells_accepted
            ));
        }
        ledger.cells_dropped += dropped;
        ledger.cells_queued += in_port;
        ledger.cells_on_links += on_wire;
        PortSummary {
            name: link.name.clone(),
            layer: "atm",
            cells_in: counts.cells_in,
            cells_out: port.cells_out(now),
            cells_dropped: dropped,
            drops: counts
                .drops
                .iter()
                .map(|(r, c)| (r.0.to_string(), *c))
                .collect(),
            clr: if counts.cells_in > 0 {
                dropped as f64 / counts.cells_in as f64
            } else {
                0.0
            },
            max_queue_cells: counts.max_queue,
            mean_queue_cells: port.mean_queue(now),
            utilization: if now > 0 {
                port.busy_ps(now) as f64 / now as f64
            } else {
                0.0
            },
            ..Default::default()
        }
    }
}

/// Gives each hop of each VC's forward and backward paths the queue its
/// cells take on that link ([`VcPath::queues`]). Under slotted contention
/// a link keeps one queue per slot of the ports its cells go on into at its
/// far end (cells that end there count as slot 0, continuous): its own for
/// the first slot met, a lane for each other one, so that the arrival
/// times along each queue, rounded up to its slot, still grow. Under
/// continuous contention every link keeps its own queue alone. Returns the
/// lanes.
fn assign_queues(hops: &mut [AtmHop], paths: &mut [VcPath], slotted: bool) -> Vec<Lane> {
    let n_links = hops.len() as u32;
    let mut lanes: Vec<Lane> = Vec::new();
    // Each link's first slot met (its own queue's).
    let mut own: Vec<Option<Time>> = vec![None; hops.len()];
    let mut queue_for = |hops: &mut [AtmHop], l: AtmLinkIx, next: Option<&AtmLinkIx>| -> u32 {
        let slot = match next {
            Some(&k) if slotted => hops[k.index()].port.cell_time_ps(),
            _ => 0,
        };
        let hop = &mut hops[l.index()];
        match own[l.index()] {
            None => {
                own[l.index()] = Some(slot);
                hop.link.slot = SlotClock::new(slot);
                l.get()
            }
            Some(s) if s == slot => l.get(),
            Some(_) => {
                let found = hop
                    .lanes
                    .iter()
                    .copied()
                    .find(|&k| lanes[(k - n_links) as usize].slot.slot_ps == slot);
                found.unwrap_or_else(|| {
                    lanes.push(Lane {
                        link: l.get(),
                        slot: SlotClock::new(slot),
                        in_flight: VecDeque::new(),
                    });
                    let k = n_links + lanes.len() as u32 - 1;
                    hop.lanes.push(k);
                    k
                })
            }
        }
    };
    for path in paths.iter_mut() {
        let mut queues = Vec::with_capacity(path.links.len());
        for (h, &l) in path.links.iter().enumerate() {
            queues.push(queue_for(hops, l, path.links.get(h + 1)));
        }
        let mut back_queues = Vec::with_capacity(path.back_links.len());
        for (h, &l) in path.back_links.iter().enumerate() {
            back_queues.push(queue_for(hops, l, path.back_links.get(h + 1)));
        }
        path.queues = queues;
        path.back_queues = back_queues;
    }
    // A lazy link's cells all end at its far end: one queue, continuous.
    debug_assert!(hops
        .iter()
        .all(|h| !h.link.lazy || (h.lanes.is_empty() && h.link.slot.slot_ps == 0)));
    lanes
}

/// A cell that needs no event of its own at the end of a quiet-end link:
/// a data cell that does not end its frame (the end only adds it to the
/// open reassembly unit and counts it).
#[inline(always)]
fn quiet(cell: &Cell) -> bool {
    !is_rm(cell) && !cell.is_eom()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atm::CELL_BITS;
    use crate::scenario::{Layer, PolicySpec};

    const CPS: f64 = 1e6; // 1 us per cell

    fn link(name: &str, from: u32, to: u32, buffer: Option<u32>, delay_ps: Time) -> LinkSpec {
        LinkSpec {
            layer: Layer::Atm,
            name: name.into(),
            from,
            to,
            bit_rate_bps: CPS * CELL_BITS,
            cell_rate_cps: CPS,
            delay_ps,
            buffer_cells: buffer,
            buffer_packets: None,
            buffer_bytes: None,
            policy: PolicySpec::Tail,
            algorithm: None,
            rate_control: None,
            ack_control: None,
        }
    }

    fn vc(class: ServiceClass, links: Vec<u32>) -> VcSpec {
        VcSpec {
            name: "v".into(),
            class,
            links,
            back_links: vec![],
            abr: None,
            gfr: None,
        }
    }

    /// The fabric of `specs` (the scenario's only links, in order), its
    /// ports contending in continuous time.
    fn fabric(specs: &[LinkSpec], lazy: bool, vcs: &[VcSpec]) -> AtmFabric {
        fabric_of(specs, lazy, vcs, false)
    }

    fn fabric_of(specs: &[LinkSpec], lazy: bool, vcs: &[VcSpec], slotted: bool) -> AtmFabric {
        let local: Vec<u32> = (0..specs.len() as u32).collect();
        let with_index = specs
            .iter()
            .enumerate()
            .map(|(i, l)| (i, l, lazy))
            .collect();
        AtmFabric::new(with_index, vcs, &local, 1, &[], slotted)
    }

    const US: Time = 1_000_000;

    #[test]
    fn a_fifo_port_sends_cells_back_to_back_and_the_link_hands_them_on() {
        // a -> b -> c, 2 us each way; two cells at time 0 into the first port.
        let specs = [
            link("ab", 0, 1, None, 2 * US),
            link("bc", 1, 2, None, 2 * US),
        ];
        let mut fabric = fabric(&specs, false, &[vc(ServiceClass::Ubr, vec![0, 1])]);
        let mut agenda = EventQueue::new();
        let mut nothing = |_: &Cell, _| panic!("no lazy link here");
        for k in 0..2 {
            let cell = Cell::data(0, 0, 2, k == 1);
            assert!(fabric.port_arrive(AtmLinkIx::new(0), cell, 0, &mut agenda, &mut nothing));
        }
        // The first cell leaves at 1 us and arrives at 3 us: one event for
        // the head of the link.
        assert_eq!(agenda.len(), 1);
        assert_eq!(fabric.queue_cells(AtmLinkIx::new(0), 0), 1);
        assert_eq!(
            agenda.next_until(Time::MAX),
            Some((3 * US, Event::CellArrival(0)))
        );
        match fabric.link_arrival(0, 0, &mut agenda).1 {
            Arrived::Onward(AtmLinkIx(1), c) => assert_eq!((c.hop, c.is_eom()), (1, false)),
            other => panic!("{other:?}"),
        }
        // The second one is next, 1 us later.
        assert_eq!(
            agenda.next_until(Time::MAX),
            Some((4 * US, Event::CellArrival(0)))
        );
        assert!(matches!(
            fabric.link_arrival(0, 0, &mut agenda).1,
            Arrived::Onward(AtmLinkIx(1), _)
        ));
        assert_eq!(agenda.next_until(Time::MAX), None);
    }

    #[test]
    fn in_slots_a_cell_enters_its_next_port_at_the_end_of_that_ports_slot() {
        // a -> b (1 us per cell, 0.2 us of delay), then b -> c at the same
        // rate (slots of 1 us) or b -> d at a quarter of it (slots of 4 us).
        // A cell of v1 (towards d) leaves first, at 1 us, and reaches b at
        // 1.2 us: it enters d's port at 4 us; the cell of v0 behind it
        // reaches b at 2.2 us and enters c's port at 3 us, before it. The
        // two go in two queues of the link (its own, and a lane), each in
        // the order of its arrivals.
        let ns: Time = 1_000;
        let mut to_d = link("bd", 1, 3, None, 0);
        to_d.cell_rate_cps = CPS / 4.0;
        let specs = [
            link("ab", 0, 1, None, 200 * ns),
            link("bc", 1, 2, None, 0),
            to_d,
        ];
        let vcs = [
            vc(ServiceClass::Ubr, vec![0, 1]),
            vc(ServiceClass::Ubr, vec![0, 2]),
        ];
        let mut nothing = |_: &Cell, _| panic!("no lazy link here");
        for slotted in [false, true] {
            let mut fabric = fabric_of(&specs, false, &vcs, slotted);
            let mut agenda = EventQueue::new();
            for v in [1, 0] {
                let cell = Cell::data(v, 0, 1, true);
                assert!(fabric.port_arrive(AtmLinkIx::new(0), cell, 0, &mut agenda, &mut nothing));
            }
            let mut seen = vec![];
            while let Some((t, Event::CellArrival(q))) = agenda.next_until(Time::MAX) {
                match fabric.link_arrival(q, t, &mut agenda) {
                    (AtmLinkIx(0), Arrived::Onward(next, c)) => seen.push((t, q, next, c.vc)),
                    other => panic!("{other:?}"),
                }
            }
            if slotted {
                // v0's queue is the link's own (index 0, the first VC's
                // slot); v1's the first lane (index 3: after the 3 links).
                assert_eq!(
                    seen,
                    vec![(3 * US, 0, AtmLinkIx(1), 0), (4 * US, 3, AtmLinkIx(2), 1)]
                );
            } else {
                assert_eq!(
                    seen,
                    vec![
                        (1200 * ns, 0, AtmLinkIx(2), 1),
                        (2200 * ns, 0, AtmLinkIx(1), 0)
                    ]
                );
            }
        }
    }

    #[test]
    fn a_full_buffer_drops_and_the_ledger_counts_every_cell() {
        let specs = [link("ab", 0, 1, Some(1), 0)];
        let mut fabric = fabric(&specs, false, &[vc(ServiceClass::Ubr, vec![0])]);
        let mut agenda = EventQueue::new();
        let mut nothing = |_: &Cell, _| {};
        let accepted: Vec<bool> = (0..3)
            .map(|_| {
                fabric.port_arrive(
                    AtmLinkIx::new(0),
                    Cell::data(0, 0, 1, true),
                    0,
                    &mut agenda,
                    &mut nothing,
                )
            })
            .collect();
        // One in transmission, one waiting, the third finds the buffer full.
        assert_eq!(accepted, vec![true, true, false]);
        let mut ledger = Ledger::default();
        let s = fabric.port_summary(AtmLinkIx::new(0), US / 2, &mut ledger);
        assert_eq!((s.cells_in, s.cells_dropped, s.max_queue_cells), (3, 1, 1));
        assert_eq!((ledger.cells_dropped, ledger.cells_queued), (1, 2));
        assert!(ledger.problems.is_empty());
    }

    #[test]
    fn a_lazy_link_schedules_nothing_and_delivers_when_drained() {
        let specs = [link("ab", 0, 1, None, 5 * US)];
        let mut fabric = fabric(&specs, true, &[vc(ServiceClass::Ubr, vec![0])]);
        let mut agenda = EventQueue::new();
        let mut got = 0;
        for _ in 0..3 {
            fabric.port_arrive(
                AtmLinkIx::new(0),
                Cell::data(0, 0, 1, true),
                0,
                &mut agenda,
                &mut |_, _| got += 1,
            );
        }
        assert!(agenda.is_empty());
        // Arrivals at 6, 7 and 8 us.
        fabric.drain_lazy(7 * US, false, &mut |_, _| got += 1);
        assert_eq!(got, 1);
        fabric.drain_lazy(7 * US, true, &mut |_, _| got += 1);
        assert_eq!(got, 2);
        fabric.drain_lazy(Time::MAX, true, &mut |_, _| got += 1);
        assert_eq!(got, 3);
    }

    #[test]
    fn a_port_with_two_classes_serves_the_higher_first() {
        // CBR (priority 0) and UBR share the port: one transmit event per cell.
        let specs = [link("ab", 0, 1, None, 0)];
        let vcs = [
            vc(ServiceClass::Ubr, vec![0]),
            vc(ServiceClass::Cbr, vec![0]),
        ];
        let mut fabric = fabric(&specs, false, &vcs);
        let mut agenda = EventQueue::new();
        let mut nothing = |_: &Cell, _| {};
        fabric.port_arrive(
            AtmLinkIx::new(0),
            Cell::data(0, 0, 1, true),
            0,
            &mut agenda,
            &mut nothing,
        );
        fabric.port_arrive(
            AtmLinkIx::new(0),
            Cell::data(0, 1, 1, true),
            0,
            &mut agenda,
            &mut nothing,
        );
        fabric.port_arrive(
            AtmLinkIx::new(0),
            Cell::data(1, 0, 1, true),
            0,
            &mut agenda,
            &mut nothing,
        );
        let mut order = vec![];
        while let Some((t, ev)) = agenda.next_until(Time::MAX) {
            match ev {
                Event::PortTxDone(l) => fabric.tx_done(l, t, &mut agenda, &mut nothing),
                Event::CellArrival(l) => match fabric.link_arrival(l, t, &mut agenda).1 {
                    Arrived::End(c) => order.push((t, c.vc)),
                    other => panic!("{other:?}"),
                },
                other => panic!("{other:?}"),
            }
        }
        // The first UBR cell was already in service; the CBR cell overtakes
        // the second.
        assert_eq!(order, vec![(US, 0), (2 * US, 1), (3 * US, 0)]);
    }
}
