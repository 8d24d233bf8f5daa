//! Packet captures: the packets crossing chosen links, written as pcap
//! files that Wireshark, tshark and tcptrace read (the convention of ns-3's
//! and OMNeT++'s captures).
//!
//! A capture names links, each stamped at the start of a packet's
//! transmission onto it (what a tap at the sending node sees) or at its
//! arrival at the far end (at the receiving node): a capture "at a node" is
//! its outgoing links stamped at the start and its incoming links at the
//! arrival. Each capture gives two files: the packets that crossed, and
//! (a companion file) the packets its links' ports dropped, stamped at the
//! drop. Only what happened by the end of the run is written.
//!
//! The IP fabric reports every packet a port accepts or drops
//! (`IpFabric::forward`), with the times the port computed; with the fast
//! paths a port may learn of a packet before it arrives, so records of one
//! link come in their time order but those of several links do not. Each
//! (capture, link) list therefore keeps its first records in time order, up
//! to as many as the file can hold, and the file is their merge by time,
//! cut at its size bound: the same bytes with the fast paths on and off.

use crate::cell::{Cell, EOM, RM};
use crate::engine::Time;
use crate::ids::IpLinkIx;
use crate::ip::wire::{headers, HEADER_BYTES};
use crate::ip::Packet;
use crate::scenario::{CaptureStamp, Layer, Scenario};
use crate::stats::pcap::{
    PcapFile, FILE_HEADER_BYTES, LINKTYPE_ATM_RFC1483, LINKTYPE_RAW, RECORD_HEADER_BYTES,
};
use crate::stats::CaptureSummary;
use std::collections::{HashMap, HashSet};

/// One link of a capture: its records (when, and what was seen) and when
/// they are stamped.
struct Tap<R> {
    stamp: CaptureStamp,
    crossed: Vec<(Time, R)>,
    dropped: Vec<(Time, R)>,
}

/// A capture: its name, its links' taps and its files' size bound.
struct Capture<R> {
    name: String,
    max_bytes: u64,
    /// Records one file holds at most.
    max_records: usize,
    taps: Vec<Tap<R>>,
    /// A tap had more records than a file holds.
    overflow: bool,
}

impl<R> Capture<R> {
    /// Keeps `record` seen at `at` in `list` if the run reached `at` and
    /// the file has room for it (else notes the overflow).
    fn keep(&mut self, t: u32, at: Time, end: Time, record: R, crossed: bool) {
        if at > end {
            return;
        }
        let max = self.max_records;
        let tap = &mut self.taps[t as usize];
        let list = if crossed {
            &mut tap.crossed
        } else {
            &mut tap.dropped
        };
        if list.len() < max {
            list.push((at, record));
        } else {
            self.overflow = true;
        }
    }

    /// The file of the records `which` (crossed or dropped) that `bytes`
    /// writes (None: left out): the taps' lists merged by time (a tie by the
    /// tap's order), cut at the bound.
    fn file(
        &self,
        which: impl Fn(&Tap<R>) -> &Vec<(Time, R)>,
        linktype: u32,
        snaplen: u32,
        mut bytes: impl FnMut(&R) -> Option<(Vec<u8>, u32)>,
    ) -> PcapFile {
        let mut all: Vec<(Time, usize, usize)> = Vec::new();
        for (t, tap) in self.taps.iter().enumerate() {
            all.extend(which(tap).iter().enumerate().map(|(i, s)| (s.0, t, i)));
        }
        all.sort_unstable();
        let mut file = PcapFile::new(linktype, snaplen, self.max_bytes);
        for (at, t, i) in all {
            let Some((data, orig_len)) = bytes(&which(&self.taps[t])[i].1) else {
                continue;
            };
            if !file.push(at, &data, orig_len) {
                break;
            }
        }
        file
    }
}

/// The captures of one fabric's links (those of the scenario's captures
/// whose links are all of its layer), by the fabric's link index.
struct Recorder<R> {
    captures: Vec<Capture<R>>,
    /// Per fabric link: (capture, tap) pairs watching it.
    by_link: Vec<Vec<(u32, u32)>>,
    end: Time,
}

impl<R> Default for Recorder<R> {
    fn default() -> Self {
        Recorder {
            captures: Vec::new(),
            by_link: Vec::new(),
            end: 0,
        }
    }
}

impl<R: Copy> Recorder<R> {
    /// The captures of `layer` in `sc`, each file holding records of
    /// `record_bytes`; `local` maps a scenario link index to the fabric's.
    fn new(sc: &Scenario, layer: Layer, local: &[u32], n_links: usize, record_bytes: u64) -> Self {
        let mut by_link = vec![Vec::new(); n_links];
        let mut captures = Vec::new();
        for spec in &sc.captures {
            if !spec
                .links
                .iter()
                .all(|t| sc.links[t.link as usize].layer == layer)
            {
                continue;
            }
            let c = captures.len() as u32;
            let mut taps = Vec::with_capacity(spec.links.len());
            for (t, tap) in spec.links.iter().enumerate() {
                by_link[local[tap.link as usize] as usize].push((c, t as u32));
                taps.push(Tap {
                    stamp: tap.stamp,
                    crossed: Vec::new(),
                    dropped: Vec::new(),
                });
            }
            let room = spec.max_bytes.saturating_sub(FILE_HEADER_BYTES) / record_bytes;
            captures.push(Capture {
                name: spec.name.clone(),
                max_bytes: spec.max_bytes,
                max_records: room.min(usize::MAX as u64) as usize,
                taps,
                overflow: false,
            });
        }
        Recorder {
            captures,
            by_link,
            end: sc.duration_ps,
        }
    }

    fn watches(&self, l: usize) -> bool {
        self.by_link.get(l).is_some_and(|t| !t.is_empty())
    }

    /// `record` went onto link `l`: its transmission started at `start`, it
    /// reaches the far end at `far`.
    fn crossed(&mut self, l: usize, record: R, start: Time, far: Time) {
        for &(c, t) in &self.by_link[l] {
            let cap = &mut self.captures[c as usize];
            let at = match cap.taps[t as usize].stamp {
                CaptureStamp::Start => start,
                CaptureStamp::Arrival => far,
            };
            cap.keep(t, at, self.end, record, true);
        }
    }

    /// The port of link `l` dropped `record` at `at`.
    fn dropped(&mut self, l: usize, record: R, at: Time) {
        for &(c, t) in &self.by_link[l] {
            self.captures[c as usize].keep(t, at, self.end, record, false);
        }
    }

    /// Each capture's two files, `(file name, bytes)`, and what it wrote:
    /// `files` writes a capture's (crossed, dropped) files.
    fn finish(
        &mut self,
        mut files: impl FnMut(&Capture<R>) -> (PcapFile, PcapFile),
    ) -> (Vec<(String, Vec<u8>)>, Vec<CaptureSummary>) {
        let mut out = Vec::new();
        let mut summaries = Vec::new();
        for cap in std::mem::take(&mut self.captures) {
            let (crossed, dropped) = files(&cap);
            summaries.push(CaptureSummary {
                name: cap.name.clone(),
                packets: crossed.records(),
                drops: dropped.records(),
                max_bytes: cap.max_bytes,
                full: cap.overflow || crossed.full || dropped.full,
            });
            out.push((format!("{}.pcap", cap.name), crossed.into_bytes()));
            out.push((format!("{}.drops.pcap", cap.name), dropped.into_bytes()));
        }
        (out, summaries)
    }
}

/// The captures of IP links: each packet's IPv4 and TCP headers (pcap's
/// LINKTYPE_RAW), see `ip::wire`.
#[derive(Default)]
pub(super) struct Captures(Recorder<Packet>);

impl Captures {
    /// The captures of IP links `sc` asks for; `local` maps a scenario link
    /// index to the IP fabric's.
    pub(super) fn new(sc: &Scenario, local: &[u32], n_ip_links: usize) -> Self {
        let record = RECORD_HEADER_BYTES + HEADER_BYTES as u64;
        Captures(Recorder::new(sc, Layer::Ip, local, n_ip_links, record))
    }

    /// Whether link `l` is captured.
    pub(super) fn watches(&self, l: IpLinkIx) -> bool {
        self.0.watches(l.index())
    }

    /// The port of link `l` accepted `packet`; its transmission runs from
    /// `start`, and it reaches the far end at `far`.
    #[cold]
    pub(super) fn crossed(&mut self, l: IpLinkIx, packet: &Packet, start: Time, far: Time) {
        self.0.crossed(l.index(), *packet, start, far);
    }

    /// The port of link `l` dropped `packet`, which reached it at `at`.
    #[cold]
    pub(super) fn dropped(&mut self, l: IpLinkIx, packet: &Packet, at: Time) {
        self.0.dropped(l.index(), *packet, at);
    }

    /// The files of every capture, `(file name, bytes)`, and what each
    /// capture wrote.
    pub(super) fn finish(&mut self) -> (Vec<(String, Vec<u8>)>, Vec<CaptureSummary>) {
        let bytes = |p: &Packet| Some((headers(p).to_vec(), p.ip_bytes()));
        let snaplen = HEADER_BYTES as u32;
        self.0.finish(|cap| {
            (
                cap.file(|t| &t.crossed, LINKTYPE_RAW, snaplen, bytes),
                cap.file(|t| &t.dropped, LINKTYPE_RAW, snaplen, bytes),
            )
        })
    }
}

/// LLC/SNAP header of a routed IPv4 datagram in an AAL5 frame (RFC 2684:
/// LLC AA-AA-03, OUI 00-00-00, EtherType 0x0800).
const LLC_SNAP_IPV4: [u8; 8] = [0xAA, 0xAA, 0x03, 0x00, 0x00, 0x00, 0x08, 0x00];

/// A frame seen at an ATM link: its VC and frame id.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct FrameRef {
    vc: u32,
    frame: u32,
}

/// The captures of ATM links, by ATM fabric link.
///
/// An ATM link carries cells; what crosses it is written as AAL5 frames
/// with their LLC/SNAP header (RFC 2684; pcap's LINKTYPE_ATM_RFC1483, which
/// Wireshark decodes down to TCP): a frame of a TCP flow's VC, when its
/// last cell (the one with the end-of-message bit) goes onto the link,
/// stamped as that cell's transmission starts or as it arrives. A frame
/// with a cell the link's port dropped goes to the drops file instead,
/// stamped at the first of its cells dropped. Cells of other VCs (no IP
/// inside) and RM cells are not written. The frame's TCP segment is the
/// one its VC's sending end stored for it (`Endpoints::captured_segment`).
#[derive(Default)]
pub(super) struct AtmCaptures {
    recorder: Recorder<FrameRef>,
    /// Per VC: it carries a TCP flow's frames (data or ACKs).
    tcp_vcs: Vec<bool>,
    /// Per (link, VC), the last frame a cell of which was dropped there: a
    /// frame's later cells are not recorded again (a VC's frames come in
    /// order).
    last_dropped: HashMap<(usize, u32), u32>,
}

impl AtmCaptures {
    /// The captures of ATM links `sc` asks for; `local` maps a scenario
    /// link index to the ATM fabric's.
    pub(super) fn new(sc: &Scenario, local: &[u32], n_atm_links: usize) -> Self {
        let record = RECORD_HEADER_BYTES + (LLC_SNAP_IPV4.len() + HEADER_BYTES) as u64;
        let recorder = Recorder::new(sc, Layer::Atm, local, n_atm_links, record);
        let mut tcp_vcs = vec![false; sc.vcs.len()];
        if !recorder.captures.is_empty() {
            for f in &sc.flows {
                for vc in [f.data_vc, f.ack_vc].into_iter().flatten() {
                    tcp_vcs[vc as usize] = true;
                }
            }
        }
        AtmCaptures {
            recorder,
            tcp_vcs,
            last_dropped: HashMap::new(),
        }
    }

    /// Whether any ATM link is captured.
    pub(super) fn any(&self) -> bool {
        !self.recorder.captures.is_empty()
    }

    /// Whether ATM link `l` is captured.
    pub(super) fn watches(&self, l: usize) -> bool {
        self.recorder.watches(l)
    }

    /// Whether VC `vc`'s frames can be captured (it carries TCP, and a
    /// capture watches some ATM link).
    pub(super) fn logs_vc(&self, vc: usize) -> bool {
        self.tcp_vcs.get(vc).copied().unwrap_or(false)
    }

    /// `cell` goes onto captured ATM link `l`: its transmission starts at
    /// `start` and it reaches the far end at `far`.
    #[cold]
    pub(super) fn crossed(&mut self, l: usize, cell: &Cell, start: Time, far: Time) {
        if cell.flags & EOM == 0 || cell.flags & RM != 0 || !self.logs_vc(cell.vc as usize) {
            return;
        }
        let frame = FrameRef {
            vc: cell.vc,
            frame: cell.frame,
        };
        self.recorder.crossed(l, frame, start, far);
    }

    /// The port of captured ATM link `l` dropped `cell` at `at`.
    #[cold]
    pub(super) fn dropped(&mut self, l: usize, cell: &Cell, at: Time) {
        if cell.flags & RM != 0 || !self.logs_vc(cell.vc as usize) {
            return;
        }
        // The first dropped cell of a frame stands for it.
        if self.last_dropped.insert((l, cell.vc), cell.frame) == Some(cell.frame) {
            return;
        }
        let frame = FrameRef {
            vc: cell.vc,
            frame: cell.frame,
        };
        self.recorder.dropped(l, frame, at);
    }

    /// The files of every ATM capture and what each wrote; `segment` gives
    /// the TCP segment a VC's frame carried.
    pub(super) fn finish(
        &mut self,
        segment: impl Fn(u32, u32) -> Option<Packet>,
    ) -> (Vec<(String, Vec<u8>)>, Vec<CaptureSummary>) {
        let snaplen = (LLC_SNAP_IPV4.len() + HEADER_BYTES) as u32;
        let frame_bytes = |f: &FrameRef| {
            let p = segment(f.vc, f.frame)?;
            let mut data = LLC_SNAP_IPV4.to_vec();
            data.extend_from_slice(&headers(&p));
            Some((data, LLC_SNAP_IPV4.len() as u32 + p.ip_bytes()))
        };
        self.recorder.finish(|cap| {
            // A frame with a cell dropped at a link is not whole there.
            let lost: HashSet<FrameRef> = (cap.taps.iter())
                .flat_map(|t| t.dropped.iter().map(|s| s.1))
                .collect();
            let whole = |f: &FrameRef| {
                if lost.contains(f) {
                    None
                } else {
                    frame_bytes(f)
                }
            };
            (
                cap.file(|t| &t.crossed, LINKTYPE_ATM_RFC1483, snaplen, whole),
                cap.file(|t| &t.dropped, LINKTYPE_ATM_RFC1483, snaplen, frame_bytes),
            )
        })
    }
}
