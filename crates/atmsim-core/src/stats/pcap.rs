//! The pcap file format ("libpcap", as tcpdump, Wireshark and ns-3 write
//! it; the IETF draft "PCAP Capture File Format"): a 24-byte file header,
//! then per packet a 16-byte record header and the bytes captured.
//! Timestamps have nanosecond resolution (the magic number 0xA1B23C4D),
//! little-endian.

/// LINKTYPE_RAW: each record is an IPv4 (or IPv6) datagram, no link header.
pub const LINKTYPE_RAW: u32 = 101;

/// LINKTYPE_ATM_RFC1483: each record is an AAL5 frame's payload with its
/// LLC/SNAP header (RFC 2684, formerly RFC 1483).
pub const LINKTYPE_ATM_RFC1483: u32 = 100;

/// Bytes of the file header.
pub const FILE_HEADER_BYTES: u64 = 24;

/// Bytes of a record's header.
pub const RECORD_HEADER_BYTES: u64 = 16;

/// A pcap file in memory, with a bound on its size.
#[derive(Debug)]
pub struct PcapFile {
    bytes: Vec<u8>,
    limit: u64,
    records: u64,
    /// A record did not fit under the limit: the file ends before it.
    pub full: bool,
}

impl PcapFile {
    /// An empty file of link type `linktype` whose records are at most
    /// `snaplen` bytes, that grows to at most `limit` bytes.
    pub fn new(linktype: u32, snaplen: u32, limit: u64) -> Self {
        let mut bytes = Vec::with_capacity(FILE_HEADER_BYTES as usize);
        bytes.extend_from_slice(&0xA1B2_3C4Du32.to_le_bytes());
        bytes.extend_from_slice(&2u16.to_le_bytes());
        bytes.extend_from_slice(&4u16.to_le_bytes());
        bytes.extend_from_slice(&0i32.to_le_bytes()); // thiszone
        bytes.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        bytes.extend_from_slice(&snaplen.to_le_bytes());
        bytes.extend_from_slice(&linktype.to_le_bytes());
        PcapFile {
            bytes,
            limit,
            records: 0,
            full: false,
        }
    }

    /// Appends a record at `time_ps` (truncated to whole nanoseconds) of
    /// `data`, the first bytes of a packet of `orig_len` bytes. False (and
    /// `full` set) when it would take the file past its limit.
    pub fn push(&mut self, time_ps: u64, data: &[u8], orig_len: u32) -> bool {
        let size = RECORD_HEADER_BYTES + data.len() as u64;
        if self.full || self.bytes.len() as u64 + size > self.limit {
            self.full = true;
            return false;
        }
        let ns = time_ps / 1_000;
        let secs = ns / 1_000_000_000;
        // The format's seconds are 32 bits: times up to 2^32 s (the core's
        // times end at 10^6 s).
        self.bytes.extend_from_slice(&(secs as u32).to_le_bytes());
        self.bytes
            .extend_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
        self.bytes
            .extend_from_slice(&(data.len() as u32).to_le_bytes());
        self.bytes.extend_from_slice(&orig_len.to_le_bytes());
        self.bytes.extend_from_slice(data);
        self.records += 1;
        true
    }

    /// Records written.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// The file's bytes.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_its_header_and_its_records_up_to_the_limit() {
        let mut f = PcapFile::new(LINKTYPE_RAW, 40, 24 + 2 * (16 + 3));
        assert!(f.push(1_500_000_000_123_456, &[1, 2, 3], 552));
        assert!(f.push(2_000, &[4, 5, 6], 3));
        assert!(!f.push(3_000, &[7], 1));
        assert!(f.full);
        assert_eq!(f.records(), 2);
        let b = f.into_bytes();
        assert_eq!(b.len(), 24 + 2 * 19);
        assert_eq!(&b[0..4], &0xA1B2_3C4Du32.to_le_bytes());
        assert_eq!(u32::from_le_bytes(b[20..24].try_into().unwrap()), 101);
        // 1500.000000123456 s: 1500 s and 123 ns (the picoseconds dropped).
        assert_eq!(u32::from_le_bytes(b[24..28].try_into().unwrap()), 1500);
        assert_eq!(u32::from_le_bytes(b[28..32].try_into().unwrap()), 123);
        assert_eq!(u32::from_le_bytes(b[32..36].try_into().unwrap()), 3);
        assert_eq!(u32::from_le_bytes(b[36..40].try_into().unwrap()), 552);
        assert_eq!(&b[40..43], &[1, 2, 3]);
    }
}
