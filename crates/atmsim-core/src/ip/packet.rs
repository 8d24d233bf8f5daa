//! An IP packet carrying one TCP segment (data or a pure ACK).

use super::checksum;

/// IP + TCP header bytes without options.
pub const TCPIP_HEADER_BYTES: u32 = 40;

/// A SACK block: bytes [start, end) received out of order.
pub type SackBlock = (u64, u64);

/// Most SACK blocks a segment can carry (no timestamps).
pub const MAX_SACK_BLOCKS: usize = 4;

/// One TCP segment in its IP datagram: 64 bytes in memory. Sequence
/// numbers are 64-bit byte offsets from the connection's start (no wrap);
/// the header checksum uses their low 32 bits, as on the wire.
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
    /// SACK blocks carried (the first `n_sack` of `sack`).
    pub n_sack: u8,
    /// Index along the packet's IP path of the link it is on.
    pub hop: u8,
    /// SACK blocks, most recent first, as offsets from `ack` (they lie above it).
    sack: [(u32, u32); MAX_SACK_BLOCKS],
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
            sack: [(0, 0); MAX_SACK_BLOCKS],
        };
        p.checksum = p.compute_checksum();
        p
    }

    /// A pure ACK with window field `wnd` and SACK blocks (above `ack`).
    pub fn ack(flow: u32, seq: u64, ack: u64, wnd: u16, sack: &[SackBlock]) -> Self {
        let n = sack.len().min(MAX_SACK_BLOCKS);
        let mut blocks = [(0, 0); MAX_SACK_BLOCKS];
        for (slot, &(a, b)) in blocks.iter_mut().zip(sack) {
            debug_assert!(a >= ack && b - ack <= u32::MAX as u64);
            *slot = ((a - ack) as u32, (b - ack) as u32);
        }
        let mut p = Packet {
            seq,
            ack,
            flow,
            len: 0,
            wnd,
            checksum: 0,
            is_data: false,
            n_sack: n as u8,
            hop: 0,
            sack: blocks,
        };
        p.checksum = p.compute_checksum();
        p
    }

    /// The SACK blocks carried, most recent first.
    pub fn sack_blocks(&self) -> ([SackBlock; MAX_SACK_BLOCKS], usize) {
        let mut out = [(0, 0); MAX_SACK_BLOCKS];
        for (o, &(a, b)) in out.iter_mut().zip(&self.sack[..self.n_sack as usize]) {
            *o = (self.ack + a as u64, self.ack + b as u64);
        }
        (out, self.n_sack as usize)
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

    /// The header words the checksum covers (ports stand for the flow).
    #[inline]
    fn words(&self) -> [u16; 10] {
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
        checksum::checksum(&self.words())
    }

    /// True when the checksum field matches the header.
    #[inline]
    pub fn checksum_ok(&self) -> bool {
        let sum: u32 = self.words().iter().map(|&w| w as u32).sum::<u32>() + self.checksum as u32;
        let folded = (sum & 0xFFFF) + (sum >> 16);
        let folded = (folded & 0xFFFF) + (folded >> 16);
        folded == 0xFFFF
    }

    /// Rewrites the window field as a router does (seed 001): the checksum is
    /// updated incrementally (RFC 1624), not recomputed.
    pub fn rewrite_window(&mut self, wnd: u16) {
        self.checksum = checksum::update(self.checksum, self.wnd, wnd);
        self.wnd = wnd;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_is_small_and_keeps_its_sack_blocks() {
        assert_eq!(std::mem::size_of::<Packet>(), 64);
        let p = Packet::ack(1, 0, 1000, 7, &[(3000, 4000), (1500, 2000)]);
        let (blocks, n) = p.sack_blocks();
        assert_eq!(&blocks[..n], &[(3000, 4000), (1500, 2000)]);
    }

    #[test]
    fn sizes() {
        assert_eq!(Packet::data(0, 0, 512).ip_bytes(), 552);
        assert_eq!(Packet::ack(0, 0, 0, 100, &[]).ip_bytes(), 40);
        assert_eq!(Packet::ack(0, 0, 0, 100, &[(1, 2), (3, 4)]).ip_bytes(), 60);
    }

    #[test]
    fn window_rewrite_keeps_the_checksum_valid() {
        let mut p = Packet::ack(3, 7, 123_456_789, 65535, &[(123_457_000, 123_458_000)]);
        assert!(p.checksum_ok());
        for w in [0u16, 1, 1000, 65535, 65535, 4242] {
            p.rewrite_window(w);
            assert!(p.checksum_ok(), "wnd {w}");
        }
        p.wnd = 17; // a rewrite that forgets the checksum is caught
        assert!(!p.checksum_ok());
    }
}
