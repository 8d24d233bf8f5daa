//! A packet's headers as they would be on the wire: an IPv4 header (RFC
//! 791) and a TCP header (RFC 793), for packet captures.
//!
//! The model keeps a segment's fields (sequence and acknowledgement
//! numbers, the window field, the lengths) and a checksum over the words it
//! keeps ([`Packet::compute_checksum`]), updated incrementally (RFC 1624)
//! where a router rewrites the window. The wire header adds what the model
//! does not carry: addresses and ports, which name the flow, and the
//! pseudo-header. Its TCP checksum is the model's checksum carried over to
//! those words by the same incremental rule (RFC 1624 eqn. 3, word by
//! word), so a model checksum that a rewrite left wrong shows as a wrong
//! checksum on the wire, and a right one as the checksum a receiver
//! computes over the pseudo-header, the header and a payload of zeros (the
//! model has no payload bytes).
//!
//! Addresses: flow f's sender is 10.0.0.0 + 2f + 1 and its receiver
//! 10.0.0.0 + 2f + 2 (unique for 2^23 flows); the sender's port is
//! 49152 + f mod 16384 (the dynamic range of RFC 6335), the receiver's
//! 5001. No options: the SACK blocks an ACK carries are not written (its
//! IP length counts them, as the model does), nor the window scale option of
//! a handshake the model does not simulate (a reader is told the flow's
//! shift instead: tshark's `tcp.default_window_scaling`).
//!
//! The window field of an ACK is the model's, as the receiver wrote it and
//! the routers rewrote it. A data segment's window is the sender's own
//! receive window, which the model does not have (its senders receive no
//! data): the wire shows 65535, so that no reader takes it for a zero
//! window.

use super::checksum::ones_complement_sum;
use super::packet::{Packet, TCPIP_HEADER_BYTES};

/// Bytes of the headers written: IPv4 (20) and TCP (20).
pub const HEADER_BYTES: usize = TCPIP_HEADER_BYTES as usize;

/// The port every receiver listens on.
pub const RECEIVER_PORT: u16 = 5001;

/// The IPv4 address of flow `flow`'s sender (or receiver).
pub fn host_address(flow: u32, receiver: bool) -> [u8; 4] {
    let n = (0x0A00_0000u32).wrapping_add(2 * flow + 1 + receiver as u32);
    n.to_be_bytes()
}

/// The TCP port of flow `flow`'s sender.
pub fn sender_port(flow: u32) -> u16 {
    49_152 + (flow % 16_384) as u16
}

/// The model's checksum carried over from the words it covers to those of
/// the wire header: ~(~hc + ~sum(model) + sum(wire)), RFC 1624's rule for
/// changed words applied to all of them at once.
fn carried_checksum(hc: u16, model_words: &[u16], wire_words: &[u16]) -> u16 {
    let model = ones_complement_sum(model_words);
    let wire = ones_complement_sum(wire_words);
    !ones_complement_sum(&[!hc, !model, wire])
}

/// The IPv4 and TCP headers of `p` as it crosses its `hop`-th link.
pub fn headers(p: &Packet) -> [u8; HEADER_BYTES] {
    let (src, dst, sport, dport) = if p.is_data {
        (
            host_address(p.flow, false),
            host_address(p.flow, true),
            sender_port(p.flow),
            RECEIVER_PORT,
        )
    } else {
        (
            host_address(p.flow, true),
            host_address(p.flow, false),
            RECEIVER_PORT,
            sender_port(p.flow),
        )
    };
    let total = p.ip_bytes();
    let mut h = [0u8; HEADER_BYTES];
    // IPv4: version 4, IHL 5; total length (16 bits: larger datagrams
    // cannot exist, MSS <= 65495); identification 0 with Don't Fragment
    // (RFC 6864: an atomic datagram's ID carries nothing); TTL 64 less the
    // links crossed; protocol 6 (TCP).
    h[0] = 0x45;
    h[2..4].copy_from_slice(&(total.min(65_535) as u16).to_be_bytes());
    h[6] = 0x40;
    h[8] = 64u8.saturating_sub(p.hop);
    h[9] = 6;
    h[12..16].copy_from_slice(&src);
    h[16..20].copy_from_slice(&dst);
    let ip_words: Vec<u16> = words(&h[..20]).collect();
    let ip_sum = !ones_complement_sum(&ip_words);
    h[10..12].copy_from_slice(&ip_sum.to_be_bytes());
    // TCP: ports, sequence and acknowledgement numbers (their low 32 bits,
    // as the model's checksum has them), data offset 5, flags PSH|ACK for a
    // segment with data and ACK for a pure ACK, the window field.
    let t = &mut h[20..];
    t[0..2].copy_from_slice(&sport.to_be_bytes());
    t[2..4].copy_from_slice(&dport.to_be_bytes());
    t[4..8].copy_from_slice(&(p.seq as u32).to_be_bytes());
    t[8..12].copy_from_slice(&(p.ack as u32).to_be_bytes());
    t[12] = 5 << 4;
    t[13] = if p.is_data { 0x18 } else { 0x10 };
    let wnd = if p.is_data { u16::MAX } else { p.wnd };
    t[14..16].copy_from_slice(&wnd.to_be_bytes());
    // The words the wire checksum covers: the pseudo-header (addresses,
    // protocol, TCP length) and the TCP header without its checksum.
    let tcp_len = (total - 20).min(65_535) as u16;
    let mut wire = Vec::with_capacity(16);
    wire.extend(words(&src));
    wire.extend(words(&dst));
    wire.push(6);
    wire.push(tcp_len);
    wire.extend(words(&t[..16]));
    let sum = carried_checksum(p.checksum, &p.header_words(), &wire);
    t[16..18].copy_from_slice(&sum.to_be_bytes());
    h
}

/// Big-endian 16-bit words of `bytes` (an even count).
fn words(bytes: &[u8]) -> impl Iterator<Item = u16> + '_ {
    bytes
        .chunks_exact(2)
        .map(|w| u16::from_be_bytes([w[0], w[1]]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The TCP checksum a receiver computes: over the pseudo-header, the
    /// header (checksum field included) and `len` zero bytes of payload.
    fn verifies(h: &[u8; HEADER_BYTES], tcp_len: u16) -> bool {
        let mut w: Vec<u16> = words(&h[12..20]).collect();
        w.push(6);
        w.push(tcp_len);
        w.extend(words(&h[20..]));
        ones_complement_sum(&w) == 0xFFFF
    }

    #[test]
    fn the_wire_checksums_verify_and_follow_a_rewritten_window() {
        let data = Packet::data(7, 5 * 512 + (3u64 << 32), 512);
        let h = headers(&data);
        assert!(verifies(&h, 20 + 512));
        // The IP header's own checksum.
        let ip: Vec<u16> = words(&h[..20]).collect();
        assert_eq!(ones_complement_sum(&ip), 0xFFFF);
        let mut ack = Packet::ack(7, 0, 4096, 32_768);
        assert!(verifies(&headers(&ack), 20));
        // A router rewrites the window with an incremental update: the wire
        // checksum follows, and the field shows the new window.
        ack.rewrite_window(1_000);
        let h = headers(&ack);
        assert!(verifies(&h, 20));
        assert_eq!(u16::from_be_bytes([h[34], h[35]]), 1_000);
        // A checksum the model left wrong stays wrong on the wire.
        ack.checksum ^= 0x0100;
        assert!(!verifies(&headers(&ack), 20));
    }

    #[test]
    fn a_flow_is_named_by_its_addresses_and_ports() {
        let d = headers(&Packet::data(3, 0, 100));
        let a = headers(&Packet::ack(3, 0, 100, 1));
        assert_eq!(&d[12..16], &[10, 0, 0, 7]);
        assert_eq!(&d[16..20], &[10, 0, 0, 8]);
        assert_eq!((&a[12..16], &a[16..20]), (&d[16..20], &d[12..16]));
        assert_eq!(u16::from_be_bytes([d[20], d[21]]), 49_155);
        assert_eq!(u16::from_be_bytes([a[22], a[23]]), 49_155);
        assert_eq!(u16::from_be_bytes([d[2], d[3]]), 140);
        assert_eq!(d[33], 0x18);
        assert_eq!(u16::from_be_bytes([d[34], d[35]]), u16::MAX);
        assert_eq!(a[33], 0x10);
    }
}
