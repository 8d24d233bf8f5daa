//! What sits at the ends of the VCs: the open-loop traffic sources, AAL5
//! segmentation (with the frames of TCP-carrying VCs kept until their fate
//! is known) and reassembly, and the ABR source and destination end systems
//! (ATM Forum Traffic Management Specification 4.0).
//!
//! Cells leave through the caller (the first port of the VC's path) and
//! arrive from it; this part never touches a port or a link.
//!
//! The jobs, each in a file of its own, as methods of [`Endpoints`]:
//! - `sources`: the open-loop sources, each firing on an event of its own;
//! - `merged`: the sources merged on a timing wheel (a fast path);
//! - `prefetch`: the cache hint for the next merged source's records;
//! - `tally`: sources whose cells go straight into a port, and the tallies
//!   of those that count their one-cell frames themselves;
//! - `aal5`: frames opened, cells dropped, reassembly at the sinks;
//! - `frames`: the frame store of a TCP-carrying VC;
//! - `abr_ends`: the ABR source and destination end systems.
//!
//! This file holds the VCs' ends and the sources, builds them, and reports.

mod aal5;
mod abr_ends;
mod frames;
mod merged;
mod prefetch;
mod sources;
mod tally;

use crate::abr::{DestinationEndSystem, SourceEndSystem};
use crate::atm::{Cell, ServiceClass};
use crate::engine::{Event, EventQueue, RngStream, SourceKeys, Time, TimingWheel};
use crate::ids::VcId;
use crate::ip::Packet;
use crate::scenario::{Scenario, SourceModel};
use crate::stats::{AbrSummary, DelayStats, Ledger, VcSummary};
use crate::traffic::{self, TrafficSource};

pub(super) use super::fast_paths::{Direct, Tally};
use aal5::VcCounts;
use abr_ends::SesState;
use frames::FrameStore;
use prefetch::PREFETCH_SOURCES;
use sources::SourceState;
use std::collections::VecDeque;

/// The two ends of one VC. Laid out in this order (`repr(C)`, on a cache
/// line of its own): what each cell of an open-loop source touches (the
/// counters, and the reassembly of a one-cell frame) fits the first 48
/// bytes, one line, whatever the number of VCs.
#[repr(C, align(64))]
struct VcEnd {
    /// The VC's counters as posted; a fast path may hold some back (a
    /// tallying source's, see [`Direct`]): read them through
    /// [`Endpoints::counts`], which adds those.
    posted: VcCounts,
    name: String,
    /// Frames in flight, for a VC of a TCP flow.
    store: Option<FrameStore>,
    ses: Option<Box<SesState>>,
    des: Option<DestinationEndSystem>,
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
    source_vcs: Vec<VcId>,
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
    /// Real hosts' datagrams (an emulation) whose frames were lost, whole
    /// or by AAL5.
    external_lost: u64,
    /// Data cells of each VC dropped at a port so far (read by the
    /// `vc_losses` probes).
    cells_dropped: Vec<u64>,
    /// With the sources merged (a fast path): their pending emissions, by
    /// the keys their SourceEmit events would have; the agenda then holds
    /// one [`Event::Sources`] at the earliest of them.
    wheel: Option<TimingWheel<SourceKeys>>,
    /// For the packet captures of ATM links: per VC whose frames may be
    /// captured, the segments of its frames in the order sent (the id of the
    /// first, and the segments); empty without such captures.
    capture_log: Vec<Option<(u32, Vec<Packet>)>>,
    /// With `probes.delay`: each VC's cell transfer delay (empty without:
    /// one test per delivered cell is then all it costs).
    ctd: Vec<DelayStats>,
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
                posted: VcCounts::default(),
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
                agenda.push_arrival(s.start_ps, Event::SesSend(VcId::new(s.vc)));
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
                vc: VcId::new(s.vc),
                stop,
                direct: Direct::NONE,
                tally: Tally::default(),
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
            external_lost: 0,
            cells_dropped: vec![0; sc.vcs.len()],
            capture_log: Vec::new(),
            ctd: if sc.probes.delay {
                vec![DelayStats::default(); sc.vcs.len()]
            } else {
                Vec::new()
            },
            wheel: wheel.map(|mut w| {
                if let Some((t, s)) = w.peek() {
                    agenda.push_keyed(w.key(t, s), Event::Sources);
                }
                w
            }),
        }
    }

    /// Keeps the segments of the frames of each VC `logged` tells (for the
    /// packet captures of ATM links, `Self::captured_segment`).
    pub(super) fn log_frames(&mut self, logged: impl Fn(usize) -> bool) {
        self.capture_log = (0..self.vcs.len())
            .map(|v| logged(v).then(|| (0, Vec::new())))
            .collect();
    }

    /// The segment frame `frame` of VC `vc` carried, if its VC's frames
    /// were logged.
    pub(super) fn captured_segment(&self, vc: u32, frame: u32) -> Option<Packet> {
        let (first, log) = self.capture_log.get(vc as usize)?.as_ref()?;
        log.get(frame.wrapping_sub(*first) as usize).copied()
    }

    /// Cells delivered to VC `vc`'s end so far.
    pub(super) fn cells_delivered(&self, vc: VcId) -> u64 {
        self.counts(vc.index()).cells_delivered
    }

    /// AAL5 frames VC `vc`'s reassembly has lost by merging so far.
    pub(super) fn frames_merged(&self, vc: VcId) -> u64 {
        self.counts(vc.index()).reassembly.frames_merged
    }

    /// Data cells of VC `vc` dropped at ports so far.
    pub(super) fn cells_dropped(&self, vc: VcId) -> u64 {
        self.cells_dropped[vc.index()]
    }

    /// Real hosts' datagrams (an emulation): those whose frames were lost
    /// so far (a frame all of whose cells were dropped counts once it is
    /// known), and those whose frames are still in the network.
    pub(super) fn external_terms(&self) -> (u64, u64) {
        let (mut lost, mut in_network) = (self.external_lost, 0);
        for store in self.vcs.iter().filter_map(|v| v.store.as_ref()) {
            for e in store.entries.iter().filter(|e| e.packet.external) {
                if e.dropped == e.cells {
                    lost += 1;
                } else {
                    in_network += 1;
                }
            }
        }
        (lost, in_network)
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
            let counts = self.counts(i);
            ledger.cells_generated += counts.cells_sent;
            ledger.cells_delivered += counts.cells_delivered;
            if let Some(st) = &v.ses {
                ledger.cells_queued += st.queue.len() as u64;
            }
            if let Some(store) = &v.store {
                for e in (store.entries.iter()).filter(|e| e.packet.is_data && !e.packet.external) {
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
                ctd: self.ctd.get(i).and_then(DelayStats::summary),
            });
        }
        (vcs, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abr::{is_brm, is_frm};
    use crate::ids::AtmLinkIx;
    use crate::ip::Packet;

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
                        e.send_delivered_cell(
                            0,
                            VcId::new(0),
                            Direct::new(AtmLinkIx::new(0), false),
                            0,
                            0,
                        );
                    } else {
                        let frame = e.open_frame(VcId::new(0), 1, None);
                        e.deliver_passive(&Cell::data(0, frame, 1, true), 0);
                    }
                    continue;
                }
                let frame = e.open_frame(VcId::new(0), cells, None);
                for c in 0..cells {
                    if k % 5 != 3 || c == cells - 1 {
                        e.deliver_passive(&Cell::data(0, frame, cells, c + 1 == cells), 0);
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
        tallying.set_direct(|_| Some(AtmLinkIx::new(0)));
        counting.set_direct(|_| Some(AtmLinkIx::new(0)));
        counting.sources[0].direct = Direct::new(AtmLinkIx::new(0), false);
        assert!(tallying.sources[0].direct.tallies());
        let mut waiting = [Vec::new(), Vec::new()];
        // Ends on cells delivered at once (k = 35): a tally left unposted.
        for k in 0..36u32 {
            for (e, waiting) in [&mut tallying, &mut counting].into_iter().zip(&mut waiting) {
                let d = e.sources[0].direct;
                match k % 7 {
                    // Onto the link: delivered later, with the frame's id.
                    2 | 5 => waiting.push(e.open_direct_frame(0, VcId::new(0), 1, d)),
                    // Dropped by the port.
                    4 => {
                        e.open_direct_frame(0, VcId::new(0), 1, d);
                    }
                    _ => e.send_delivered_cell(0, VcId::new(0), d, 0, 0),
                }
                if k % 3 == 0 {
                    for frame in waiting.drain(..) {
                        e.deliver_passive(&Cell::data(0, frame, 1, true), 0);
                    }
                }
            }
            assert_eq!(waiting[0], waiting[1], "the same frame ids");
            assert_eq!(
                tallying.cells_delivered(VcId::new(0)),
                counting.cells_delivered(VcId::new(0))
            );
        }
        assert!(
            tallying.sources[0].tally.held() > 0,
            "some cells still tallied"
        );
        same_reports(&tallying, &counting);
    }

    fn ends(agenda: &mut EventQueue) -> Endpoints {
        let sc = scenario();
        Endpoints::new(&sc, &[true, false], &[366792.45; 2], false, agenda)
    }

    #[test]
    fn reassembly_resolves_every_frame_of_a_tcp_vc() {
        let mut agenda = EventQueue::new();
        let mut e = ends(&mut agenda);
        // Five frames of two cells, each carrying a 100-byte segment.
        let cells: Vec<Vec<Cell>> = (0..5u64)
            .map(|k| {
                let frame = e.open_frame(VcId::new(0), 2, Some(Packet::data(0, 100 * k, 100)));
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
                    got.extend(e.deliver_tcp_cell(*c, 0).map(|p| p.seq));
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
        assert_eq!(
            agenda.next_until(Time::MAX),
            Some((0, Event::SesSend(VcId::new(1))))
        );
        let frm = e.ses_send(VcId::new(1), 0).expect("a cell");
        assert!(is_frm(&frm));
        // Then data at ICR (10,000 cells/s: every 100 us).
        e.wake_ses(VcId::new(1), 0, &mut agenda);
        let (t, ev) = agenda.next_until(Time::MAX).unwrap();
        assert_eq!((t, ev), (100_000_000, Event::SesSend(VcId::new(1))));
        let data = e.ses_send(VcId::new(1), t).expect("a cell");
        assert!(!is_frm(&data) && data.is_eom());
        // A stale opportunity sends nothing.
        assert_eq!(e.ses_send(VcId::new(1), 5), None);
        match e.at_end(frm, 0) {
            AtEnd::TurnedAround(brm) => {
                assert!(is_brm(&brm));
                e.brm_at_source(&brm);
            }
            _ => panic!("not turned around"),
        }
        assert!(matches!(e.at_end(data, 0), AtEnd::Delivered));
        let mut ledger = Ledger::default();
        e.report(1.0, &mut ledger);
        // Two RM cells made (FRM, BRM), both absorbed; one data cell.
        assert_eq!((ledger.cells_generated, ledger.cells_delivered), (3, 3));
    }
}
