//! What sits at the ends of the VCs: the open-loop traffic sources, AAL5
//! segmentation (with the frames of TCP-carrying VCs kept until their fate
//! is known) and reassembly, and the ABR source and destination end systems
//! (ATM Forum Traffic Management Specification 4.0).
//!
//! Cells leave through the caller (the first port of the VC's path) and
//! arrive from it; this part never touches a port or a link.

use crate::abr::ses::Emit;
use crate::abr::{is_frm, DestinationEndSystem, SourceEndSystem};
use crate::atm::aal5::Outcome;
use crate::atm::{Cell, Reassembly, ServiceClass};
use crate::engine::{Event, EventQueue, RngStream, SourceKeys, Time, TimingWheel};
use crate::ip::Packet;
use crate::scenario::{Scenario, SourceModel};
use crate::stats::{AbrSummary, Ledger, VcSummary};
use crate::traffic::{self, Firing, TrafficSource};
use std::collections::VecDeque;

/// The ABR source end system of a VC with the cells it holds.
struct SesState {
    ses: SourceEndSystem,
    /// Data cells waiting for an in-rate opportunity (the ABR source queue).
    queue: VecDeque<Cell>,
    /// An infinite backlog of one-cell frames (until `greedy_stop`).
    greedy: bool,
    greedy_stop: Time,
    /// Time of the pending SesSend event.
    scheduled: Option<Time>,
}

/// The frames of a TCP-carrying VC that have not been resolved yet, by
/// frame id: the packet each carries and how many of its cells were dropped.
/// Frame ids are the VC's frame count in 32 bits, as the cells carry them:
/// they wrap after 2^32 frames, so every id here is taken relative to the
/// oldest (AAL5 only ever compares ids for equality).
#[derive(Default)]
struct FrameStore {
    base: u32,
    entries: VecDeque<FrameEntry>,
}

struct FrameEntry {
    packet: Packet,
    cells: u16,
    dropped: u16,
}

impl FrameStore {
    fn push(&mut self, frame: u32, entry: FrameEntry) {
        if self.entries.is_empty() {
            self.base = frame;
        }
        debug_assert_eq!(frame, self.base.wrapping_add(self.entries.len() as u32));
        self.entries.push_back(entry);
    }

    fn get_mut(&mut self, frame: u32) -> Option<&mut FrameEntry> {
        // An id before the oldest wraps to a position past the end.
        let k = frame.wrapping_sub(self.base);
        self.entries.get_mut(k as usize)
    }

    fn pop_front(&mut self) -> Option<(u32, FrameEntry)> {
        let e = self.entries.pop_front()?;
        let id = self.base;
        self.base = self.base.wrapping_add(1);
        Some((id, e))
    }
}

/// The two ends of one VC. Laid out in this order (`repr(C)`, on a cache
/// line of its own): what each cell of an open-loop source touches (the
/// counters, and the reassembly of a one-cell frame) fits the first 48
/// bytes, one line, whatever the number of VCs.
#[repr(C, align(64))]
struct VcEnd {
    counts: VcCounts,
    name: String,
    /// Frames in flight, for a VC of a TCP flow.
    store: Option<FrameStore>,
    ses: Option<Box<SesState>>,
    des: Option<DestinationEndSystem>,
}

/// A VC's frames and cells sent and delivered, and its reassembly (what
/// its summary reports).
#[derive(Clone, Default)]
#[repr(C)]
struct VcCounts {
    cells_sent: u64,
    frames_sent: u64,
    cells_delivered: u64,
    reassembly: Reassembly,
}

impl VcCounts {
    /// Opens a frame of `cells` cells: its id.
    #[inline(always)]
    fn open(&mut self, cells: u16) -> u32 {
        let frame = self.frames_sent as u32;
        self.frames_sent += 1;
        self.cells_sent += cells as u64;
        frame
    }

    /// A cell reaches the VC's end: counted and reassembled.
    #[inline(always)]
    fn deliver(&mut self, cell: &Cell) -> Outcome {
        self.cells_delivered += 1;
        self.reassembly.receive(cell)
    }

    /// Posts a source's tally of `k` one-cell frames sent and delivered at
    /// once: the same counts as `k` rounds of `open(1)` and `deliver` (see
    /// [`Direct`]).
    fn post(&mut self, k: u64) {
        self.frames_sent += k;
        self.cells_sent += k;
        self.cells_delivered += k;
        self.reassembly.receive_one_cell_frames(k);
    }
}

/// A source's direct link (see [`Endpoints::set_direct`]): none, or the
/// link its cells go straight into and whether the source tallies.
///
/// A source that tallies counts each one-cell frame that reaches its sink
/// at once in its own record (`SourceState::tally`), not at its VC's: the
/// cell then touches one record, not two (with 10,000 sources, a cache miss
/// fewer a cell). The tally is posted to the VC's counters before the next
/// frame of the VC is opened the usual way, and added wherever the VC's
/// counters are read. It gives the same counts because the source is its
/// VC's only one and sends one-cell frames only: the VC's reassembly never
/// holds an open unit, so each such cell is an intact frame whatever the
/// order, and nothing reads the frames' ids in between.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Direct(u32);

impl Direct {
    /// The flag bit of a tallying source.
    const TALLIES: u32 = 1 << 31;
    /// No direct link: the source's frames go the usual way (it does not
    /// tally).
    pub(super) const NONE: Direct = Direct(!Self::TALLIES);

    /// Link `link` (below `NONE`'s 2^31 - 1), tallying or not.
    fn new(link: u32, tallies: bool) -> Direct {
        debug_assert!(link < Self::NONE.0);
        Direct(if tallies { link | Self::TALLIES } else { link })
    }

    /// True when there is no direct link.
    #[inline(always)]
    pub(super) fn is_none(self) -> bool {
        self == Self::NONE
    }

    /// The direct link (when there is one).
    #[inline(always)]
    pub(super) fn link(self) -> u32 {
        self.0 & !Self::TALLIES
    }

    /// True when the source tallies (when there is a direct link).
    #[inline(always)]
    pub(super) fn tallies(self) -> bool {
        self.0 & Self::TALLIES != 0
    }
}

struct SourceState {
    source: traffic::Source,
    rng: RngStream,
    vc: u32,
    stop: Time,
    /// The link its cells go straight into, if any (see `set_direct`).
    direct: Direct,
    /// One-cell frames it sent that reached the sink at once, not yet
    /// posted to its VC's counters (see [`Direct`]).
    tally: u64,
}

/// What a cell at the end of its VC's forward path turned out to be.
pub(super) enum AtEnd {
    /// A forward RM cell, turned around by the destination end system: this
    /// backward RM cell goes back along the VC's backward path.
    TurnedAround(Cell),
    /// A cell for a TCP host's AAL5 reassembly.
    Tcp(Cell),
    /// A cell for a passive sink (delivered already).
    Delivered,
}

/// Bytes of TCP payload the ends account for in the byte ledger.
#[derive(Default)]
pub(super) struct ByteTerms {
    /// In packets whose cells were all dropped in the network.
    pub dropped_in_network: u64,
    /// In packets discarded by AAL5 reassembly.
    pub dropped_aal5: u64,
    /// In frames still on their way (sent, not yet resolved).
    pub in_path: u64,
}

/// The ends of every VC and the sources that feed them.
pub(super) struct Endpoints {
    vcs: Vec<VcEnd>,
    sources: Vec<SourceState>,
    /// Each source's VC (`sources[s].vc`, apart: read to prefetch); none
    /// when every source tallies (see [`Direct`]: a tallying source's cells
    /// seldom touch their VC's record, and prefetching it cost 10 % with
    /// 10,000 sources).
    source_vcs: Vec<u32>,
    /// Each VC's tallying source (see [`Direct`]), or u32::MAX.
    tally_source: Vec<u32>,
    /// Enough sources (PREFETCH_SOURCES) that their records are out of the
    /// cache: the next one's are prefetched.
    prefetching: bool,
    /// Every source is a CBR or geometric on/off source: the merged
    /// sources' loop inlines only those kinds (`traffic::CellSourcesInline`).
    cell_sources_only: bool,
    /// RM cells generated (forward by sources, backward by destinations).
    rm_generated: u64,
    /// RM cells absorbed (forward at destinations, backward at sources).
    rm_delivered: u64,
    /// TCP payload bytes of frames whose cells were all dropped.
    bytes_dropped_in_network: u64,
    /// TCP payload bytes of frames AAL5 discarded.
    bytes_dropped_aal5: u64,
    /// Data cells of each VC dropped at a port so far (read by the
    /// `vc_losses` probes).
    cells_dropped: Vec<u64>,
    /// With the sources merged (a fast path): their pending emissions, by
    /// the keys their SourceEmit events would have; the agenda then holds
    /// one [`Event::Sources`] at the earliest of them.
    wheel: Option<TimingWheel<SourceKeys>>,
}

impl Endpoints {
    /// The ends of the scenario's VCs, its sources with their first events
    /// scheduled on `agenda`; `tcp_vc[v]` tells whether VC v carries a TCP
    /// flow; `first_link_cps[v]` is the cell rate of VC v's first link;
    /// `merged`: the sources are merged on a timing wheel (a fast path; the
    /// agenda must order arrivals by their keys, not by scheduling).
    pub(super) fn new(
        sc: &Scenario,
        tcp_vc: &[bool],
        first_link_cps: &[f64],
        merged: bool,
        agenda: &mut EventQueue,
    ) -> Self {
        let mut vcs: Vec<VcEnd> = sc
            .vcs
            .iter()
            .enumerate()
            .map(|(i, v)| VcEnd {
                counts: VcCounts::default(),
                name: v.name.clone(),
                store: tcp_vc[i].then(FrameStore::default),
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
            .collect();
        debug_assert!(sc
            .vcs
            .iter()
            .all(|v| (v.class == ServiceClass::Abr) == v.abr.is_some()));
        let mut sources = Vec::with_capacity(sc.sources.len());
        let mut wheel = merged.then(|| {
            let (per_s, gap) = sc
                .sources
                .iter()
                .map(|s| traffic::pace(&s.model, first_link_cps[s.vc as usize]))
                .fold((0.0, 0.0f64), |(r, g), (r1, g1)| (r + r1, g.max(g1)));
            let keys = agenda
                .source_keys()
                .expect("merged sources need arrivals ordered by key");
            TimingWheel::sized(keys, per_s, gap)
        });
        for (i, s) in sc.sources.iter().enumerate() {
            // A greedy source on an ABR VC is an infinite backlog at its SES.
            if let (SourceModel::Greedy, Some(ses)) = (&s.model, vcs[s.vc as usize].ses.as_mut()) {
                ses.greedy = true;
                ses.greedy_stop = s.stop_ps.unwrap_or(Time::MAX);
                ses.scheduled = Some(s.start_ps);
                agenda.push_arrival(s.start_ps, Event::SesSend(s.vc));
                continue;
            }
            let mut source = traffic::build(&s.model, first_link_cps[s.vc as usize]);
            // Stream id = source index: adding a source never changes the others.
            let mut rng = RngStream::new(sc.seed, i as u64);
            let stop = s.stop_ps.unwrap_or(Time::MAX);
            let t = source.first(s.start_ps, &mut rng);
            if t < stop {
                let s = sources.len() as u32;
                match &mut wheel {
                    Some(w) => w.insert(s, t),
                    None => agenda.push_arrival(t, Event::SourceEmit(s)),
                }
            }
            sources.push(SourceState {
                source,
                rng,
                vc: s.vc,
                stop,
                direct: Direct::NONE,
                tally: 0,
            });
        }
        let source_vcs = sources.iter().map(|st| st.vc).collect();
        let prefetching = sources.len() >= PREFETCH_SOURCES;
        let cell_sources_only = sources.iter().all(|st| st.source.is_cell_source());
        Endpoints {
            vcs,
            sources,
            source_vcs,
            tally_source: vec![u32::MAX; sc.vcs.len()],
            prefetching,
            cell_sources_only,
            rm_generated: 0,
            rm_delivered: 0,
            bytes_dropped_in_network: 0,
            bytes_dropped_aal5: 0,
            cells_dropped: vec![0; sc.vcs.len()],
            wheel: wheel.map(|mut w| {
                if let Some((t, s)) = w.peek() {
                    agenda.push_keyed(w.key(t, s), Event::Sources);
                }
                w
            }),
        }
    }

    /// Source `s` fires at `now` (and schedules its next emission): the VC
    /// and the cells of the frame it sends.
    #[inline]
    pub(super) fn fire_source(&mut self, s: u32, now: Time, agenda: &mut EventQueue) -> (u32, u16) {
        let st = &mut self.sources[s as usize];
        let e = st.source.fire(now, &mut st.rng);
        if let Some(t) = e.next.filter(|&t| t < st.stop) {
            agenda.push_arrival(t, Event::SourceEmit(s));
        }
        (st.vc, e.cells)
    }

    /// Merged sources: the earliest pending emission, as (its time, the
    /// source), still pending.
    #[inline]
    pub(super) fn next_due(&mut self) -> Option<(Time, u32)> {
        self.wheel.as_mut()?.peek()
    }

    /// Merged sources: the agenda key of source `s`'s emission at `t`,
    /// where its own `SourceEmit` event would stand.
    #[inline]
    pub(super) fn due_key(&self, t: Time, s: u32) -> u128 {
        self.wheel.as_ref().expect("merged sources").key(t, s)
    }

    /// Merged sources: true when source `s`'s emission at `t` comes before
    /// the event of key `key` (its whole key is computed only when the two
    /// times tie).
    #[inline(always)]
    pub(super) fn due_before(&self, t: Time, s: u32, key: u128) -> bool {
        let other = (key >> 64) as Time;
        t < other || (t == other && self.due_key_before(t, s, key))
    }

    /// `due_before` for a tie of times: the whole keys (out of line, so
    /// that the key's hash is never computed ahead just in case).
    #[cold]
    #[inline(never)]
    fn due_key_before(&self, t: Time, s: u32, key: u128) -> bool {
        self.due_key(t, s) < key
    }

    /// Merged sources: source `s`, the one `next_due` gave, fires at `now`
    /// and is put back on the wheel for its next emission. Returns the VC,
    /// the cells of the frame it sends and the source's direct link (see
    /// `set_direct`). The caller opens the frame.
    #[inline(always)]
    pub(super) fn fire_due<F: Firing>(&mut self, s: u32, now: Time) -> (u32, u16, Direct) {
        let wheel = self.wheel.as_mut().expect("merged sources");
        wheel.pop();
        if let Some(n) = self.prefetching.then(|| wheel.following()).flatten() {
            // With many sources their records are out of the cache: ask
            // for the next one's (and its VC's, unless every source
            // tallies) while this one fires.
            // Addresses only, so no bounds checks: a prefetch of any
            // address is harmless.
            let n = n as usize;
            let st = self.sources.as_ptr().wrapping_add(n);
            prefetch(st);
            prefetch(st.wrapping_add(1).cast::<u8>().wrapping_sub(1));
            if let Some(&v) = self.source_vcs.get(n) {
                prefetch(self.vcs.as_ptr().wrapping_add(v as usize));
            }
        }
        let st = &mut self.sources[s as usize];
        let e = F::fire(&mut st.source, now, &mut st.rng);
        if let Some(t) = e.next.filter(|&t| t < st.stop) {
            wheel.insert(s, t);
        }
        (st.vc, e.cells, st.direct)
    }

    /// True when every source is of a kind `traffic::CellSourcesInline`
    /// inlines.
    pub(super) fn cell_sources_only(&self) -> bool {
        self.cell_sources_only
    }

    /// A one-cell frame of source `s` on passive VC `vc` (no store, no
    /// SES) through `direct`, sent and delivered at once: tallied by a
    /// tallying source, else `open_frame` and `deliver_passive` on one
    /// reading of the VC's record.
    #[inline(always)]
    pub(super) fn send_delivered_cell(&mut self, s: u32, vc: u32, direct: Direct) {
        if direct.tallies() {
            self.sources[s as usize].tally += 1;
            return;
        }
        let v = &mut self.vcs[vc as usize];
        debug_assert!(v.store.is_none() && v.ses.is_none());
        let frame = v.counts.open(1);
        v.counts.deliver(&Cell::data(vc, frame, 1, true));
    }

    /// `open_frame` for a frame of source `s` through `direct`: a tallying
    /// source's tally is posted first, so that the frame gets its exact id.
    #[inline(always)]
    pub(super) fn open_direct_frame(&mut self, s: u32, vc: u32, cells: u16, direct: Direct) -> u32 {
        if direct.tallies() {
            self.post_tally(s);
        }
        self.open_frame(vc, cells, None)
    }

    /// Posts source `s`'s tally to its VC's counters.
    #[inline]
    fn post_tally(&mut self, s: u32) {
        let st = &mut self.sources[s as usize];
        let k = std::mem::take(&mut st.tally);
        if k > 0 {
            self.vcs[st.vc as usize].counts.post(k);
        }
    }

    /// The tally VC `v`'s counters have still to take (see [`Direct`]).
    fn unposted(&self, v: usize) -> u64 {
        match self.tally_source[v] {
            u32::MAX => 0,
            s => self.sources[s as usize].tally,
        }
    }

    /// Marks the sources whose cells may go straight into a port: those of
    /// VCs without an ABR source end system or a TCP frame store, for
    /// which `link_of` names a link (see `AtmFabric::direct_link`). Of
    /// them, those that are their VC's only source and send one-cell frames
    /// only tally (see [`Direct`]).
    pub(super) fn set_direct(&mut self, link_of: impl Fn(u32) -> Option<u32>) {
        let mut sources_of = vec![0u32; self.vcs.len()];
        for st in &self.sources {
            sources_of[st.vc as usize] += 1;
        }
        for (s, st) in self.sources.iter_mut().enumerate() {
            let v = &self.vcs[st.vc as usize];
            if v.ses.is_some() || v.store.is_some() {
                continue;
            }
            let Some(link) = link_of(st.vc).filter(|&l| l < Direct::NONE.0) else {
                continue;
            };
            let tallies = sources_of[st.vc as usize] == 1 && st.source.one_cell_frames();
            st.direct = Direct::new(link, tallies);
            if tallies {
                self.tally_source[st.vc as usize] = s as u32;
            }
        }
        if self.sources.iter().all(|st| st.direct.tallies()) {
            self.source_vcs = Vec::new();
        }
    }

    /// Opens frame `cells` cells long on `vc` (a TCP frame keeps its packet
    /// until its fate is known); returns its id.
    #[inline]
    pub(super) fn open_frame(&mut self, vc: u32, cells: u16, packet: Option<Packet>) -> u32 {
        let v = &mut self.vcs[vc as usize];
        let frame = v.counts.open(cells);
        if let (Some(store), Some(packet)) = (&mut v.store, packet) {
            store.push(
                frame,
                FrameEntry {
                    packet,
                    cells,
                    dropped: 0,
                },
            );
        }
        frame
    }

    /// True when `vc` has an ABR source end system (its cells wait there
    /// for in-rate opportunities).
    #[inline]
    pub(super) fn has_ses(&self, vc: u32) -> bool {
        self.vcs[vc as usize].ses.is_some()
    }

    /// Queues the cells of frame `frame` at `vc`'s source end system.
    pub(super) fn ses_enqueue(&mut self, vc: u32, frame: u32, cells: u16) {
        let st = self.vcs[vc as usize].ses.as_mut().expect("an ABR VC");
        for k in 0..cells {
            st.queue
                .push_back(Cell::data(vc, frame, cells, k + 1 == cells));
        }
    }

    /// Makes sure the SES of VC `v` has an opportunity scheduled if it has
    /// something to send, at the earliest time its ACR allows.
    pub(super) fn wake_ses(&mut self, v: u32, now: Time, agenda: &mut EventQueue) {
        let Some(st) = self.vcs[v as usize].ses.as_mut() else {
            return;
        };
        if st.queue.is_empty() && !st.greedy {
            return;
        }
        let t = st.ses.next_opportunity(now);
        if st.scheduled.is_none_or(|s| t < s) {
            st.scheduled = Some(t);
            agenda.push_arrival(t, Event::SesSend(v));
        }
    }

    /// The SES of VC `v` has an in-rate opportunity at `now`: the cell it
    /// sends (a forward RM cell or data), or None (a superseded
    /// opportunity, or nothing to send).
    pub(super) fn ses_send(&mut self, v: u32, now: Time) -> Option<Cell> {
        let vc = &mut self.vcs[v as usize];
        let st = vc.ses.as_mut().expect("SesSend on a VC without an SES");
        if st.scheduled != Some(now) {
            return None; // superseded by an earlier opportunity
        }
        st.scheduled = None;
        if st.greedy && now >= st.greedy_stop {
            st.greedy = false;
        }
        if st.queue.is_empty() && !st.greedy {
            return None;
        }
        Some(match st.ses.emit(now) {
            Emit::Frm(c) => {
                self.rm_generated += 1;
                c
            }
            Emit::Data => match st.queue.pop_front() {
                Some(c) => c,
                None => {
                    // Greedy: a new one-cell frame.
                    let frame = vc.counts.open(1);
                    Cell::data(v, frame, 1, true)
                }
            },
        })
    }

    /// A backward RM cell is back at its source end system.
    pub(super) fn brm_at_source(&mut self, cell: &Cell) {
        self.rm_delivered += 1;
        if let Some(st) = self.vcs[cell.vc as usize].ses.as_mut() {
            st.ses.on_brm(cell);
        }
    }

    /// A port dropped `cell` (not an RM cell): its VC and the frame it
    /// belongs to count it.
    #[inline]
    pub(super) fn cell_dropped(&mut self, cell: &Cell) {
        self.cells_dropped[cell.vc as usize] += 1;
        if let Some(store) = &mut self.vcs[cell.vc as usize].store {
            if let Some(e) = store.get_mut(cell.frame) {
                e.dropped += 1;
            }
        }
    }

    /// `cell` reached the end of its VC's forward path.
    #[inline]
    pub(super) fn at_end(&mut self, cell: Cell) -> AtEnd {
        let v = &mut self.vcs[cell.vc as usize];
        if let Some(des) = v.des.as_mut() {
            if is_frm(&cell) {
                let brm = des.on_frm(&cell);
                self.rm_delivered += 1;
                self.rm_generated += 1;
                return AtEnd::TurnedAround(brm);
            }
            des.on_data(&cell);
        }
        if v.store.is_some() {
            AtEnd::Tcp(cell)
        } else {
            self.deliver_passive(&cell);
            AtEnd::Delivered
        }
    }

    /// A cell reaches the passive sink of its VC.
    #[inline]
    pub(super) fn deliver_passive(&mut self, cell: &Cell) {
        self.vcs[cell.vc as usize].counts.deliver(cell);
    }

    /// A cell of a TCP VC reaches the end host: reassemble, resolve the fate
    /// of every frame the unit closes, and return the packet of an intact
    /// frame.
    pub(super) fn deliver_tcp_cell(&mut self, cell: Cell) -> Option<Packet> {
        let v = &mut self.vcs[cell.vc as usize];
        let (eom_frame, intact) = match v.counts.deliver(&cell) {
            Outcome::Pending => return None,
            Outcome::Delivered { frame, .. } => (frame, true),
            Outcome::Corrupted { frame, .. } | Outcome::Merged { frame, .. } => (frame, false),
        };
        let store = v.store.as_mut().expect("TCP VC without a frame store");
        let mut arrived = None;
        while let Some((id, e)) = store.pop_front() {
            if id == eom_frame && intact {
                arrived = Some(e.packet);
            } else if e.packet.is_data {
                // Every cell of an earlier frame either was dropped or arrived
                // into this failed unit.
                let lost = e.packet.len as u64;
                if id != eom_frame && e.dropped == e.cells {
                    self.bytes_dropped_in_network += lost;
                } else {
                    self.bytes_dropped_aal5 += lost;
                }
            }
            if id == eom_frame {
                break;
            }
        }
        arrived
    }

    /// Cells delivered to VC `vc`'s end so far.
    pub(super) fn cells_delivered(&self, vc: u32) -> u64 {
        self.vcs[vc as usize].counts.cells_delivered + self.unposted(vc as usize)
    }

    /// AAL5 frames VC `vc`'s reassembly has lost by merging so far.
    pub(super) fn frames_merged(&self, vc: u32) -> u64 {
        self.vcs[vc as usize].counts.reassembly.frames_merged
    }

    /// Data cells of VC `vc` dropped at ports so far.
    pub(super) fn cells_dropped(&self, vc: u32) -> u64 {
        self.cells_dropped[vc as usize]
    }

    /// The ACR and the last ER received of ABR VC `vc`'s source, cells/s.
    pub(super) fn ses_rates(&self, vc: u32) -> Option<(f64, f64)> {
        let st = self.vcs[vc as usize].ses.as_ref()?;
        Some((st.ses.acr, st.ses.last_er))
    }

    /// The VCs' summaries over `t_s` seconds; adds the cells and RM cells
    /// to the ledger and returns the ends' terms of the byte ledger.
    pub(super) fn report(&self, t_s: f64, ledger: &mut Ledger) -> (Vec<VcSummary>, ByteTerms) {
        let mut bytes = ByteTerms {
            dropped_in_network: self.bytes_dropped_in_network,
            dropped_aal5: self.bytes_dropped_aal5,
            in_path: 0,
        };
        ledger.cells_generated += self.rm_generated;
        ledger.cells_delivered += self.rm_delivered;
        let mut vcs = Vec::with_capacity(self.vcs.len());
        for (i, v) in self.vcs.iter().enumerate() {
            // The VC's counters with its source's tally posted (a copy:
            // reading the summary changes nothing).
            let mut counts = v.counts.clone();
            counts.post(self.unposted(i));
            ledger.cells_generated += counts.cells_sent;
            ledger.cells_delivered += counts.cells_delivered;
            if let Some(st) = &v.ses {
                ledger.cells_queued += st.queue.len() as u64;
            }
            if let Some(store) = &v.store {
                for e in store.entries.iter().filter(|e| e.packet.is_data) {
                    if e.dropped == e.cells {
                        bytes.dropped_in_network += e.packet.len as u64;
                    } else {
                        bytes.in_path += e.packet.len as u64;
                    }
                }
            }
            let r = &counts.reassembly;
            vcs.push(VcSummary {
                name: v.name.clone(),
                cells_sent: counts.cells_sent,
                cells_delivered: counts.cells_delivered,
                frames_sent: counts.frames_sent,
                frames_delivered: r.frames_delivered,
                frames_corrupted: r.frames_corrupted,
                frames_merged: r.frames_merged,
                cells_discarded_aal5: r.cells_discarded,
                frame_goodput_cps: if t_s > 0.0 {
                    r.cells_good as f64 / t_s
                } else {
                    0.0
                },
                abr: v.ses.as_ref().map(|st| AbrSummary {
                    acr_cps: st.ses.acr,
                    last_er_cps: st.ses.last_er,
                    frms_sent: st.ses.frms_sent,
                    brms_received: st.ses.brms_received,
                    rule6_cuts: st.ses.rule6_cuts,
                    source_queue_cells: st.queue.len() as u64,
                }),
                gfr: None,
            });
        }
        (vcs, bytes)
    }
}

/// Sources from which the merged sources prefetch the next one's records
/// (below, they stay in the cache and prefetching only costs: mux_onoff's 10
/// sources ran 1-2 % slower with it, 10,000 sources 10-30 % faster).
const PREFETCH_SOURCES: usize = 1000;

/// Asks the CPU to bring `*p`'s cache line in (a hint: no effect on results).
#[inline(always)]
#[allow(unsafe_code)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and reads nothing the program sees.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abr::{is_brm, is_frm};

    /// Two VCs on one ATM link: 0 carries a TCP flow's frames, 1 is ABR with
    /// a greedy source from time 0.
    fn scenario() -> Scenario {
        serde_json::from_str(
            r#"{"duration_ps":1000000000000,"seed":1,
            "nodes":[{"name":"a"},{"name":"b"}],
            "links":[{"name":"ab","from":0,"to":1,"bit_rate_bps":1.5552e8,
                "cell_rate_cps":366792.45,"delay_ps":0,"buffer_cells":null,
                "policy":{"kind":"tail"}},
              {"name":"ba","from":1,"to":0,"bit_rate_bps":1.5552e8,
                "cell_rate_cps":366792.45,"delay_ps":0,"buffer_cells":null,
                "policy":{"kind":"tail"}}],
            "vcs":[{"name":"tcp","class":"ubr","links":[0]},
              {"name":"abr","class":"abr","links":[0],"back_links":[1],
               "abr":{"pcr_cps":366792.45,"mcr_cps":0,"icr_cps":10000,"rif":0.0625,
                 "rdf":0.0625,"nrm":32,"mrm":2,"trm_ps":100000000000,"crm":100,
                 "cdf":0.0625,"adtf_ps":500000000000,"tcr_cps":10}}],
            "sources":[{"name":"g","vc":1,"model":{"kind":"greedy"}}]}"#,
        )
        .unwrap()
    }

    /// Two sets of ends for one passive VC on one link, fed by `sources`
    /// (JSON of the scenario's sources).
    fn one_vc_ends(sources: &str) -> (Endpoints, Endpoints) {
        let sc: Scenario = serde_json::from_str(&format!(
            r#"{{"duration_ps":1000000000000,"seed":1,
            "nodes":[{{"name":"a"}},{{"name":"b"}}],
            "links":[{{"name":"ab","from":0,"to":1,"bit_rate_bps":1.5552e8,
                "cell_rate_cps":366792.45,"delay_ps":0,"buffer_cells":null,
                "policy":{{"kind":"tail"}}}}],
            "vcs":[{{"name":"v","class":"ubr","links":[0]}}],
            "sources":[{sources}]}}"#
        ))
        .unwrap();
        let mut agenda = EventQueue::new();
        let mut ends = || Endpoints::new(&sc, &[false], &[366792.45], false, &mut agenda);
        (ends(), ends())
    }

    /// The VC summaries of `a`, after checking that they and the ledgers
    /// are those of `b`.
    fn same_reports(a: &Endpoints, b: &Endpoints) -> Vec<VcSummary> {
        let mut ledgers = (Ledger::default(), Ledger::default());
        let (ra, rb) = (
            a.report(1.0, &mut ledgers.0).0,
            b.report(1.0, &mut ledgers.1).0,
        );
        assert_eq!(format!("{ra:?}"), format!("{rb:?}"));
        assert_eq!(format!("{:?}", ledgers.0), format!("{:?}", ledgers.1));
        ra
    }

    /// A one-cell frame sent and delivered at once on one reading of the
    /// VC's record counts as opening the frame and delivering its cell.
    #[test]
    fn a_cell_sent_and_delivered_at_once_counts_as_the_two_steps() {
        let (mut fused, mut steps) = one_vc_ends("");
        // Among frames of several cells, and one whose cells were lost.
        for k in 0..20u16 {
            let cells = 1 + k % 3;
            for (one_reading, e) in [(true, &mut fused), (false, &mut steps)] {
                if cells == 1 && k % 4 != 0 {
                    if one_reading {
                        e.send_delivered_cell(0, 0, Direct::new(0, false));
                    } else {
                        let frame = e.open_frame(0, 1, None);
                        e.deliver_passive(&Cell::data(0, frame, 1, true));
                    }
                    continue;
                }
                let frame = e.open_frame(0, cells, None);
                for c in 0..cells {
                    if k % 5 != 3 || c == cells - 1 {
                        e.deliver_passive(&Cell::data(0, frame, cells, c + 1 == cells));
                    }
                }
            }
        }
        let a = same_reports(&fused, &steps);
        assert!(a[0].frames_delivered > 5 && a[0].frames_corrupted > 0);
    }

    /// A source that tallies (the only source of its VC, one-cell frames)
    /// gives the same counts, frame ids and summaries as one counting each
    /// cell at its VC, whichever of its cells reach the sink at once, wait
    /// on the link or are dropped, read at any point.
    #[test]
    fn a_tallying_source_counts_as_one_that_does_not() {
        let (mut tallying, mut counting) =
            one_vc_ends(r#"{"name":"s","vc":0,"model":{"kind":"cbr","rate_cps":1000}}"#);
        tallying.set_direct(|_| Some(0));
        counting.set_direct(|_| Some(0));
        counting.sources[0].direct = Direct::new(0, false);
        assert!(tallying.sources[0].direct.tallies());
        let mut waiting = [Vec::new(), Vec::new()];
        // Ends on cells delivered at once (k = 35): a tally left unposted.
        for k in 0..36u32 {
            for (e, waiting) in [&mut tallying, &mut counting].into_iter().zip(&mut waiting) {
                let d = e.sources[0].direct;
                match k % 7 {
                    // Onto the link: delivered later, with the frame's id.
                    2 | 5 => waiting.push(e.open_direct_frame(0, 0, 1, d)),
                    // Dropped by the port.
                    4 => {
                        e.open_direct_frame(0, 0, 1, d);
                    }
                    _ => e.send_delivered_cell(0, 0, d),
                }
                if k % 3 == 0 {
                    for frame in waiting.drain(..) {
                        e.deliver_passive(&Cell::data(0, frame, 1, true));
                    }
                }
            }
            assert_eq!(waiting[0], waiting[1], "the same frame ids");
            assert_eq!(tallying.cells_delivered(0), counting.cells_delivered(0));
        }
        assert!(tallying.sources[0].tally > 0, "some cells still tallied");
        same_reports(&tallying, &counting);
    }

    fn ends(agenda: &mut EventQueue) -> Endpoints {
        let sc = scenario();
        Endpoints::new(&sc, &[true, false], &[366792.45; 2], false, agenda)
    }

    #[test]
    fn frame_ids_wrap_after_two_to_the_32_frames() {
        let entry = || FrameEntry {
            packet: Packet::data(0, 0, 1),
            cells: 1,
            dropped: 0,
        };
        let mut store = FrameStore::default();
        store.push(u32::MAX, entry());
        store.push(0, entry());
        store.get_mut(0).unwrap().dropped = 1;
        assert!(store.get_mut(1).is_none() && store.get_mut(u32::MAX - 1).is_none());
        assert_eq!(
            store.pop_front().map(|(id, e)| (id, e.dropped)),
            Some((u32::MAX, 0))
        );
        assert_eq!(
            store.pop_front().map(|(id, e)| (id, e.dropped)),
            Some((0, 1))
        );
    }

    #[test]
    fn reassembly_resolves_every_frame_of_a_tcp_vc() {
        let mut agenda = EventQueue::new();
        let mut e = ends(&mut agenda);
        // Five frames of two cells, each carrying a 100-byte segment.
        let cells: Vec<Vec<Cell>> = (0..5u64)
            .map(|k| {
                let frame = e.open_frame(0, 2, Some(Packet::data(0, 100 * k, 100)));
                assert_eq!(frame as u64, k);
                vec![
                    Cell::data(0, frame, 2, false),
                    Cell::data(0, frame, 2, true),
                ]
            })
            .collect();
        // Frame 1 loses its first cell; frame 3 loses both.
        e.cell_dropped(&cells[1][0]);
        e.cell_dropped(&cells[3][0]);
        e.cell_dropped(&cells[3][1]);
        let mut got = vec![];
        for (k, frame) in cells.iter().enumerate() {
            for (j, c) in frame.iter().enumerate() {
                let lost = (k == 1 && j == 0) || k == 3;
                if !lost {
                    got.extend(e.deliver_tcp_cell(*c).map(|p| p.seq));
                }
            }
        }
        // Frames 0, 2 and 4 arrive intact; 1 fails its CRC (AAL5), 3 was
        // dropped whole in the network.
        assert_eq!(got, vec![0, 200, 400]);
        let mut ledger = Ledger::default();
        let (vcs, bytes) = e.report(1.0, &mut ledger);
        assert_eq!(
            (bytes.dropped_aal5, bytes.dropped_in_network, bytes.in_path),
            (100, 100, 0)
        );
        assert_eq!((vcs[0].frames_delivered, vcs[0].frames_corrupted), (3, 1));
        assert_eq!((ledger.cells_generated, ledger.cells_delivered), (10, 7));
    }

    #[test]
    fn an_abr_source_begins_with_a_forward_rm_cell_that_the_destination_turns_around() {
        let mut agenda = EventQueue::new();
        let mut e = ends(&mut agenda);
        // The greedy source's first opportunity is at its start.
        assert_eq!(agenda.next_until(Time::MAX), Some((0, Event::SesSend(1))));
        let frm = e.ses_send(1, 0).expect("a cell");
        assert!(is_frm(&frm));
        // Then data at ICR (10,000 cells/s: every 100 us).
        e.wake_ses(1, 0, &mut agenda);
        let (t, ev) = agenda.next_until(Time::MAX).unwrap();
        assert_eq!((t, ev), (100_000_000, Event::SesSend(1)));
        let data = e.ses_send(1, t).expect("a cell");
        assert!(!is_frm(&data) && data.is_eom());
        // A stale opportunity sends nothing.
        assert_eq!(e.ses_send(1, 5), None);
        match e.at_end(frm) {
            AtEnd::TurnedAround(brm) => {
                assert!(is_brm(&brm));
                e.brm_at_source(&brm);
            }
            _ => panic!("not turned around"),
        }
        assert!(matches!(e.at_end(data), AtEnd::Delivered));
        let mut ledger = Ledger::default();
        e.report(1.0, &mut ledger);
        // Two RM cells made (FRM, BRM), both absorbed; one data cell.
        assert_eq!((ledger.cells_generated, ledger.cells_delivered), (3, 3));
    }
}
