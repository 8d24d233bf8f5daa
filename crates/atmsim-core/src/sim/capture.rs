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

/// Bytes of one record in a capture file.
const RECORD_BYTES: u64 = RECORD_HEADER_BYTES + HEADER_BYTES as u64;

/// One packet seen: when, and the packet as it was there.
#[derive(Clone, Copy)]
struct Seen {
    at: Time,
    packet: Packet,
}

/// One link of a capture: its records and when they are stamped.
struct Tap {
    stamp: CaptureStamp,
    crossed: Vec<Seen>,
    dropped: Vec<Seen>,
}

/// A capture: its name, its links' taps and its files' size bound.
struct Capture {
    name: String,
    max_bytes: u64,
    /// Records one file holds at most.
    max_records: usize,
    taps: Vec<Tap>,
    /// A tap had more records than a file holds.
    overflow: bool,
}

/// The captures of a run, by IP fabric link.
#[derive(Default)]
pub(super) struct Captures {
    captures: Vec<Capture>,
    /// Per IP fabric link: (capture, tap) pairs watching it.
    by_link: Vec<Vec<(u32, u32)>>,
    end: Time,
}

impl Captures {
    /// The captures `sc` asks for; `local` maps a scenario link index to
    /// the IP fabric's (checked: every captured link is an IP link).
    pub(super) fn new(sc: &Scenario, local: &[u32], n_ip_links: usize) -> Self {
        let mut by_link = vec![Vec::new(); n_ip_links];
        let mut captures = Vec::with_capacity(sc.captures.len());
        for spec in &sc.captures {
            if !spec
                .links
                .iter()
                .all(|t| sc.links[t.link as usize].layer == Layer::Ip)
            {
                continue;
            }
            let c = captures.len();
            let mut taps = Vec::with_capacity(spec.links.len());
            for (t, tap) in spec.links.iter().enumerate() {
                by_link[local[tap.link as usize] as usize].push((c as u32, t as u32));
                taps.push(Tap {
                    stamp: tap.stamp,
                    crossed: Vec::new(),
                    dropped: Vec::new(),
                });
            }
            let room = spec.max_bytes.saturating_sub(FILE_HEADER_BYTES) / RECORD_BYTES;
            captures.push(Capture {
                name: spec.name.clone(),
                max_bytes: spec.max_bytes,
                max_records: room.min(usize::MAX as u64) as usize,
                taps,
                overflow: false,
            });
        }
        Captures {
            captures,
            by_link,
            end: sc.duration_ps,
        }
    }

    /// Whether link `l` is captured.
    #[inline(always)]
    pub(super) fn watches(&self, l: IpLinkIx) -> bool {
        self.by_link.get(l.index()).is_some_and(|t| !t.is_empty())
    }

    /// The port of link `l` accepted `packet`; its transmission runs from
    /// `start` to `end`, and it reaches the far end at `far`.
    #[cold]
    pub(super) fn crossed(&mut self, l: IpLinkIx, packet: &Packet, start: Time, far: Time) {
        for &(c, t) in &self.by_link[l.index()] {
            let cap = &mut self.captures[c as usize];
            let tap = &mut cap.taps[t as usize];
            let at = match tap.stamp {
                CaptureStamp::Start => start,
                CaptureStamp::Arrival => far,
            };
            if at <= self.end {
                if tap.crossed.len() < cap.max_records {
                    tap.crossed.push(Seen {
                        at,
                        packet: *packet,
                    });
                } else {
                    cap.overflow = true;
                }
            }
        }
    }

    /// The port of link `l` dropped `packet`, which reached it at `at`.
    #[cold]
    pub(super) fn dropped(&mut self, l: IpLinkIx, packet: &Packet, at: Time) {
        for &(c, t) in &self.by_link[l.index()] {
            let cap = &mut self.captures[c as usize];
            let tap = &mut cap.taps[t as usize];
            if at <= self.end {
                if tap.dropped.len() < cap.max_records {
                    tap.dropped.push(Seen {
                        at,
                        packet: *packet,
                    });
                } else {
                    cap.overflow = true;
                }
            }
        }
    }

    /// The files of every capture, `(file name, bytes)`, and what each
    /// capture wrote.
    pub(super) fn finish(&mut self) -> (Vec<(String, Vec<u8>)>, Vec<CaptureSummary>) {
        let mut files = Vec::new();
        let mut summaries = Vec::new();
        for cap in std::mem::take(&mut self.captures) {
            let crossed = write(&cap, |t| &t.crossed);
            let dropped = write(&cap, |t| &t.dropped);
            summaries.push(CaptureSummary {
                name: cap.name.clone(),
                packets: crossed.records(),
                drops: dropped.records(),
                max_bytes: cap.max_bytes,
                full: cap.overflow || crossed.full || dropped.full,
            });
            files.push((format!("{}.pcap", cap.name), crossed.into_bytes()));
            files.push((format!("{}.drops.pcap", cap.name), dropped.into_bytes()));
        }
        (files, summaries)
    }
}

/// The file of `cap`'s records `which` (crossed or dropped): the taps'
/// lists merged by time (a tie by the tap's order), cut at the bound.
fn write(cap: &Capture, which: impl Fn(&Tap) -> &Vec<Seen>) -> PcapFile {
    let mut all: Vec<(Time, usize, usize)> = Vec::new();
    for (t, tap) in cap.taps.iter().enumerate() {
        all.extend(which(tap).iter().enumerate().map(|(i, s)| (s.at, t, i)));
    }
    all.sort_unstable();
    let mut file = PcapFile::new(LINKTYPE_RAW, HEADER_BYTES as u32, cap.max_bytes);
    for (at, t, i) in all {
        let p = &which(&cap.taps[t])[i].packet;
        if !file.push(at, &headers(p), p.ip_bytes()) {
            break;
        }
    }
    file
}

/// LLC/SNAP header of a routed IPv4 datagram in an AAL5 frame (RFC 2684:
/// LLC AA-AA-03, OUI 00-00-00, EtherType 0x0800).
const LLC_SNAP_IPV4: [u8; 8] = [0xAA, 0xAA, 0x03, 0x00, 0x00, 0x00, 0x08, 0x00];

/// Bytes of one record of an ATM capture: the LLC/SNAP header and the IP
/// and TCP headers.
const ATM_RECORD_BYTES: u64 = RECORD_HEADER_BYTES + 8 + HEADER_BYTES as u64;

/// A frame seen at an ATM link: when, and which (its VC and frame id).
#[derive(Clone, Copy)]
struct FrameSeen {
    at: Time,
    vc: u32,
    frame: u32,
}

/// One ATM link of a capture.
struct AtmTap {
    stamp: CaptureStamp,
    crossed: Vec<FrameSeen>,
    dropped: Vec<FrameSeen>,
    /// Per VC, the last frame a cell of which was dropped here: a frame's
    /// later cells are not recorded again (a VC's frames come in order).
    last_dropped: std::collections::HashMap<u32, u32>,
}

/// An ATM capture.
struct AtmCapture {
    name: String,
    max_bytes: u64,
    max_records: usize,
    taps: Vec<AtmTap>,
    /// A tap had more records than a file holds.
    overflow: bool,
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
/// one its VC's sending end stored for it (`Endpoints::capture_log`).
#[derive(Default)]
pub(super) struct AtmCaptures {
    captures: Vec<AtmCapture>,
    /// Per ATM fabric link: (capture, tap) pairs watching it.
    by_link: Vec<Vec<(u32, u32)>>,
    /// Per VC: it carries a TCP flow's frames (data or ACKs).
    tcp_vcs: Vec<bool>,
    end: Time,
}

impl AtmCaptures {
    /// The captures of ATM links `sc` asks for; `local` maps a scenario
    /// link index to the ATM fabric's.
    pub(super) fn new(sc: &Scenario, local: &[u32], n_atm_links: usize) -> Self {
        let mut by_link = vec![Vec::new(); n_atm_links];
        let mut captures = Vec::new();
        for spec in &sc.captures {
            if !spec
                .links
                .iter()
                .all(|t| sc.links[t.link as usize].layer == Layer::Atm)
            {
                continue;
            }
            let c = captures.len() as u32;
            let mut taps = Vec::with_capacity(spec.links.len());
            for (t, tap) in spec.links.iter().enumerate() {
                by_link[local[tap.link as usize] as usize].push((c, t as u32));
                taps.push(AtmTap {
                    stamp: tap.stamp,
                    crossed: Vec::new(),
                    dropped: Vec::new(),
                    last_dropped: Default::default(),
                });
            }
            let room = spec.max_bytes.saturating_sub(FILE_HEADER_BYTES) / ATM_RECORD_BYTES;
            captures.push(AtmCapture {
                name: spec.name.clone(),
                max_bytes: spec.max_bytes,
                max_records: room.min(usize::MAX as u64) as usize,
                taps,
                overflow: false,
            });
        }
        let mut tcp_vcs = vec![false; sc.vcs.len()];
        if !captures.is_empty() {
            for f in &sc.flows {
                for vc in [f.data_vc, f.ack_vc].into_iter().flatten() {
                    tcp_vcs[vc as usize] = true;
                }
            }
        }
        AtmCaptures {
            captures,
            by_link,
            tcp_vcs,
            end: sc.duration_ps,
        }
    }

    /// Whether any ATM link is captured.
    pub(super) fn any(&self) -> bool {
        !self.captures.is_empty()
    }

    /// Whether ATM link `l` is captured.
    pub(super) fn watches(&self, l: usize) -> bool {
        self.by_link.get(l).is_some_and(|t| !t.is_empty())
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
        for &(c, t) in &self.by_link[l] {
            let cap = &mut self.captures[c as usize];
            let tap = &mut cap.taps[t as usize];
            let at = match tap.stamp {
                CaptureStamp::Start => start,
                CaptureStamp::Arrival => far,
            };
            if at <= self.end {
                if tap.crossed.len() < cap.max_records {
                    tap.crossed.push(FrameSeen {
                        at,
                        vc: cell.vc,
                        frame: cell.frame,
                    });
                } else {
                    cap.overflow = true;
                }
            }
        }
    }

    /// The port of captured ATM link `l` dropped `cell` at `at`.
    #[cold]
    pub(super) fn dropped(&mut self, l: usize, cell: &Cell, at: Time) {
        if cell.flags & RM != 0 || !self.logs_vc(cell.vc as usize) {
            return;
        }
        for &(c, t) in &self.by_link[l] {
            let cap = &mut self.captures[c as usize];
            let tap = &mut cap.taps[t as usize];
            // The first dropped cell of a frame stands for it.
            if tap.last_dropped.insert(cell.vc, cell.frame) == Some(cell.frame) {
                continue;
            }
            if at <= self.end {
                if tap.dropped.len() < cap.max_records {
                    tap.dropped.push(FrameSeen {
                        at,
                        vc: cell.vc,
                        frame: cell.frame,
                    });
                } else {
                    cap.overflow = true;
                }
            }
        }
    }

    /// The files of every ATM capture and what each wrote; `segment` gives
    /// the TCP segment a VC's frame carried.
    pub(super) fn finish(
        &mut self,
        segment: impl Fn(u32, u32) -> Option<Packet>,
    ) -> (Vec<(String, Vec<u8>)>, Vec<CaptureSummary>) {
        let mut files = Vec::new();
        let mut summaries = Vec::new();
        for cap in std::mem::take(&mut self.captures) {
            // A frame with a cell dropped at a link is not whole there.
            let mut lost = std::collections::HashSet::new();
            for tap in &cap.taps {
                lost.extend(tap.dropped.iter().map(|s| (s.vc, s.frame)));
            }
            let crossed = write_frames(
                &cap,
                &segment,
                |t| &t.crossed,
                |s| !lost.contains(&(s.vc, s.frame)),
            );
            let dropped = write_frames(&cap, &segment, |t| &t.dropped, |_| true);
            summaries.push(CaptureSummary {
                name: cap.name.clone(),
                packets: crossed.records(),
                drops: dropped.records(),
                max_bytes: cap.max_bytes,
                full: cap.overflow || crossed.full || dropped.full,
            });
            files.push((format!("{}.pcap", cap.name), crossed.into_bytes()));
            files.push((format!("{}.drops.pcap", cap.name), dropped.into_bytes()));
        }
        (files, summaries)
    }
}

/// The file of `cap`'s frames `which` (those `keep` accepts), merged by
/// time, cut at the bound.
fn write_frames(
    cap: &AtmCapture,
    segment: &impl Fn(u32, u32) -> Option<Packet>,
    which: impl Fn(&AtmTap) -> &Vec<FrameSeen>,
    keep: impl Fn(&FrameSeen) -> bool,
) -> PcapFile {
    let mut all: Vec<(Time, usize, usize)> = Vec::new();
    for (t, tap) in cap.taps.iter().enumerate() {
        all.extend(
            which(tap)
                .iter()
                .enumerate()
                .filter(|(_, s)| keep(s))
                .map(|(i, s)| (s.at, t, i)),
        );
    }
    all.sort_unstable();
    let mut file = PcapFile::new(LINKTYPE_ATM_RFC1483, 8 + HEADER_BYTES as u32, cap.max_bytes);
    let mut record = [0u8; 8 + HEADER_BYTES];
    record[..8].copy_from_slice(&LLC_SNAP_IPV4);
    for (at, t, i) in all {
        let s = which(&cap.taps[t])[i];
        let Some(p) = segment(s.vc, s.frame) else {
            continue;
        };
        record[8..].copy_from_slice(&headers(&p));
        if !file.push(at, &record, 8 + p.ip_bytes()) {
            break;
        }
    }
    file
}
