//! An IP packet carrying one TCP segment (data or a pure ACK).

use super::checksum;
use std::collections::VecDeque;

/// IP + TCP header bytes without options.
pub const TCPIP_HEADER_BYTES: u32 = 40;

/// A SACK block: bytes [start, end) received out of order.
pub type SackBlock = (u64, u64);

/// Most SACK blocks a segment can carry (no timestamps).
pub const MAX_SACK_BLOCKS: usize = 4;

/// One TCP segment in its IP datagram: 40 bytes in memory. Sequence
/// numbers are 64-bit byte offsets from the connection's start (no wrap);
/// the header checksum uses their low 32 bits, as on the wire. The SACK
/// blocks of an ACK travel beside it, in its flow's [`SackRing`] under
/// its id (`aux`): they are rare, and every packet is copied several times on
/// its way (inline, they would make each packet 64 bytes; the cost is in
/// docs/performance.md).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Packet {
    /// First payload byte.
    pub seq: u64,
    /// Cumulative acknowledgement: next byte expected (ACKs).
    pub ack: u64,
    /// Flow (connection) index.
    pub flow: u32,
    /// Payload bytes.
    pub len: u32,
    /// The receiver-window field (16 bits, scaled by the window-scale shift).
    pub wnd: u16,
    /// The TCP checksum field.
    pub checksum: u16,
    /// True for a data segment, false for a pure ACK.
    pub is_data: bool,
    /// SACK blocks carried (in the flow's [`SackRing`]).
    pub n_sack: u8,
    /// Index along the packet's IP path of the link it is on.
    pub hop: u8,
    /// A real host's IP datagram carried for an emulation
    /// ([`Packet::external`]): only its size and `aux` (the caller's tag)
    /// mean anything; no TCP end of the model reads it. In the padding
    /// byte: the packet stays 40 bytes.
    pub external: bool,
    /// An ACK: which of the flow's SACK-carrying ACKs this is (when
    /// `n_sack` > 0). A data segment built by [`Packet::data_at`]: the time
    /// its sender handed it over, ps. Beside the header: the checksum does
    /// not cover it, and the packet stays 40 bytes.
    aux: u64,
}

/// The SACK blocks of a flow's ACKs on their way, oldest first, by ACK id.
/// ACKs reach the sender in the order they were sent (every path is FIFO);
/// the blocks of ACKs lost on the way are dropped when a later one arrives.
#[derive(Debug, Default)]
pub struct SackRing {
    next_id: u32,
    blocks: VecDeque<(u32, [SackBlock; MAX_SACK_BLOCKS])>,
}

impl SackRing {
    /// Makes ACK `p` carry `sack` (the first MAX_SACK_BLOCKS of it).
    pub fn attach(&mut self, p: &mut Packet, sack: &[SackBlock]) {
        let n = sack.len().min(MAX_SACK_BLOCKS);
        if n == 0 {
            return;
        }
        let mut blocks = [(0, 0); MAX_SACK_BLOCKS];
        blocks[..n].copy_from_slice(&sack[..n]);
        p.n_sack = n as u8;
        p.aux = self.next_id as u64;
        self.blocks.push_back((self.next_id, blocks));
        self.next_id = self.next_id.wrapping_add(1);
    }

    /// The SACK blocks ACK `p` carries, most recent first, and how many.
    pub fn take(&mut self, p: &Packet) -> ([SackBlock; MAX_SACK_BLOCKS], usize) {
        let none = ([(0, 0); MAX_SACK_BLOCKS], 0);
        if p.n_sack == 0 {
            return none;
        }
        // Older entries belong to ACKs lost on the way.
        while let Some(&(id, blocks)) = self.blocks.front() {
            self.blocks.pop_front();
            if id as u64 == p.aux {
                return (blocks, p.n_sack as usize);
            }
        }
        debug_assert!(false, "the SACK blocks of ACK {} are gone", p.aux);
        none
    }

    /// Blocks held for ACKs still on their way (or lost).
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// True when no ACK's blocks are held.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }
}

impl Packet {
    /// A data segment.
    pub fn data(flow: u32, seq: u64, len: u32) -> Self {
        let mut p = Packet {
            seq,
            ack: 0,
            flow,
            len,
            wnd: 0,
            checksum: 0,
            is_data: true,
            n_sack: 0,
            hop: 0,
            external: false,
            aux: 0,
        };
        p.checksum = p.compute_checksum();
        p
    }

    /// A pure ACK with window field `wnd` (SACK blocks: [`SackRing::attach`]).
    pub fn ack(flow: u32, seq: u64, ack: u64, wnd: u16) -> Self {
        let mut p = Packet {
            seq,
            ack,
            flow,
            len: 0,
            wnd,
            checksum: 0,
            is_data: false,
            n_sack: 0,
            hop: 0,
            external: false,
            aux: 0,
        };
        p.checksum = p.compute_checksum();
        p
    }

    /// A data segment handed over at `sent` ps: as [`Packet::data`], with
    /// the hand-over time beside the header, which the receiver reads back
    /// ([`Packet::sent_at`]) for the segment's delay.
    #[inline]
    pub fn data_at(flow: u32, seq: u64, len: u32, sent: u64) -> Self {
        // `aux` is outside the checksum's words: set after it, as `data` sets it.
        Packet {
            aux: sent,
            ..Packet::data(flow, seq, len)
        }
    }

    /// A real host's IP datagram of `ip_bytes` bytes, entering an emulated
    /// network (docs/emulation.md): towards the flow's receiver (its data
    /// path) or towards its sender (its ACK path), with the caller's `tag`
    /// beside it, handed back when it is delivered. The model carries only
    /// its size: `len` is the bytes beyond the 40 of an IP and a TCP header
    /// without options, so [`Packet::ip_bytes`] is the datagram's size (a
    /// datagram shorter than 40 bytes is carried as 40). `wnd` is the
    /// window field of a TCP segment towards the sender, which the
    /// explicit-rate control of routers and ATM edges may lower
    /// ([`Packet::rewrite_window`]); 0 for any other datagram (a zero
    /// window is never lowered).
    pub fn external(flow: u32, to_receiver: bool, ip_bytes: u32, wnd: u16, tag: u64) -> Self {
        let mut p = if to_receiver {
            Packet::data(flow, 0, ip_bytes.saturating_sub(TCPIP_HEADER_BYTES))
        } else {
            Packet::ack(flow, 0, 0, wnd)
        };
        p.len = ip_bytes.saturating_sub(TCPIP_HEADER_BYTES);
        p.external = true;
        p.aux = tag;
        p
    }

    /// The caller's tag of a real host's datagram ([`Packet::external`]).
    #[inline]
    pub fn tag(&self) -> u64 {
        debug_assert!(self.external);
        self.aux
    }

    /// A data segment's hand-over time, ps ([`Packet::data_at`]).
    #[inline]
    pub fn sent_at(&self) -> u64 {
        debug_assert!(self.is_data);
        self.aux
    }

    /// TCP options bytes: SACK is 2 NOPs + kind + length + 8 per block.
    pub fn option_bytes(&self) -> u32 {
        if self.n_sack == 0 {
            0
        } else {
            4 + 8 * self.n_sack as u32
        }
    }

    /// Bytes of the IP datagram.
    pub fn ip_bytes(&self) -> u32 {
        TCPIP_HEADER_BYTES + self.option_bytes() + self.len
    }

    /// The header words the model's checksum covers (the flow stands for
    /// the addresses and ports).
    #[inline]
    pub fn header_words(&self) -> [u16; 10] {
        let seq = self.seq as u32;
        let ack = self.ack as u32;
        let flags: u16 = if self.is_data { 0x0018 } else { 0x0010 };
        [
            (self.flow >> 16) as u16,
            self.flow as u16,
            (seq >> 16) as u16,
            seq as u16,
            (ack >> 16) as u16,
            ack as u16,
            flags,
            self.wnd,
            self.len as u16,
            (self.len >> 16) as u16,
        ]
    }

    /// The checksum recomputed from the header.
    pub fn compute_checksum(&self) -> u16 {
        checksum::checksum(&self.header_words())
    }

    /// True when the checksum field matches the header.
    #[inline]
    pub fn checksum_ok(&self) -> bool {
        let sum: u32 =
            self.header_words().iter().map(|&w| w as u32).sum::<u32>() + self.checksum as u32;
        let folded = (sum & 0xFFFF) + (sum >> 16);
        let folded = (folded & 0xFFFF) + (folded >> 16);
        folded == 0xFFFF
    }

    /// Rewrites the window field as a router does (Explicit rate control of
    /// TCP, Satyavolu et al., 1998): the checksum is updated incrementally (RFC
    /// 1624), not recomputed.
    pub fn rewrite_window(&mut self, wnd: u16) {
        self.checksum = checksum::update(self.checksum, self.wnd, wnd);
        self.wnd = wnd;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_is_small_and_its_sack_blocks_travel_beside_it() {
        assert_eq!(std::mem::size_of::<Packet>(), 40);
        let mut ring = SackRing::default();
        let mut acks: Vec<Packet> = (0..4)
            .map(|k| {
                let mut p = Packet::ack(1, 0, 1000, 7);
                ring.attach(&mut p, &[(3000 + k, 4000), (1500, 2000)]);
                p
            })
            .collect();
        let mut plain = Packet::ack(1, 0, 1000, 7);
        ring.attach(&mut plain, &[]);
        assert_eq!((plain.n_sack, ring.len()), (0, 4));
        assert_eq!(ring.take(&plain).1, 0);
        // The first arrives; the second is lost; the third and fourth come.
        let (blocks, n) = ring.take(&acks[0]);
        assert_eq!(&blocks[..n], &[(3000, 4000), (1500, 2000)]);
        acks.remove(1);
        for (k, p) in acks[1..].iter().enumerate() {
            let (blocks, n) = ring.take(p);
            assert_eq!(&blocks[..n], &[(3002 + k as u64, 4000), (1500, 2000)]);
        }
        assert!(ring.is_empty());
    }

    #[test]
    fn an_external_datagram_keeps_its_size_and_tag() {
        let p = Packet::external(2, true, 1500, 0, 77);
        assert_eq!(
            (p.ip_bytes(), p.tag(), p.is_data, p.external),
            (1500, 77, true, true)
        );
        let q = Packet::external(2, false, 52, 501, 78);
        assert_eq!(
            (q.ip_bytes(), q.tag(), q.is_data, q.wnd),
            (52, 78, false, 501)
        );
        assert_eq!(Packet::external(0, false, 28, 0, 1).ip_bytes(), 40);
        assert!(!Packet::data(0, 0, 1).external);
    }

    #[test]
    fn sizes() {
        assert_eq!(Packet::data(0, 0, 512).ip_bytes(), 552);
        assert_eq!(Packet::ack(0, 0, 0, 100).ip_bytes(), 40);
        let mut p = Packet::ack(0, 0, 0, 100);
        SackRing::default().attach(&mut p, &[(1, 2), (3, 4)]);
        assert_eq!(p.ip_bytes(), 60);
    }

    #[test]
    fn window_rewrite_keeps_the_checksum_valid() {
        let mut p = Packet::ack(3, 7, 123_456_789, 65535);
        SackRing::default().attach(&mut p, &[(123_457_000, 123_458_000)]);
        assert!(p.checksum_ok());
        for w in [0u16, 1, 1000, 65535, 65535, 4242] {
            p.rewrite_window(w);
            assert!(p.checksum_ok(), "wnd {w}");
        }
        p.wnd = 17; // a rewrite that forgets the checksum is caught
        assert!(!p.checksum_ok());
    }
}
