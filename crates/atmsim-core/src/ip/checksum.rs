//! The 16-bit one's-complement checksum of TCP (RFC 793) and its
//! incremental update (RFC 1624), used when a router rewrites a header
//! field such as the receiver window.
//!
//! The model has no payload bytes, so the checksum covers the header words
//! the model keeps; what matters is that every rewrite keeps it consistent,
//! which the receiver verifies by recomputing it.

/// One's-complement sum of 16-bit words, folded to 16 bits.
pub fn ones_complement_sum(words: &[u16]) -> u16 {
    let mut sum: u32 = 0;
    for &w in words {
        sum += w as u32;
    }
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    sum as u16
}

/// The checksum of `words`: the complement of their one's-complement sum.
pub fn checksum(words: &[u16]) -> u16 {
    !ones_complement_sum(words)
}

/// RFC 1624 eqn. 3: the new checksum when one 16-bit word changes from `m`
/// to `m_new`: HC' = ~(~HC + ~m + m'). Skipped (unchanged) when m == m'.
pub fn update(hc: u16, m: u16, m_new: u16) -> u16 {
    if m == m_new {
        return hc;
    }
    !ones_complement_sum(&[!hc, !m, m_new])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incremental_update_matches_full_recompute() {
        // Walk many headers and rewrites, including the corner cases of
        // one's-complement arithmetic (0x0000 / 0xFFFF words).
        let mut x: u32 = 12345;
        let mut next = || {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (x >> 8) as u16
        };
        for case in 0..10_000 {
            let mut words: Vec<u16> = (0..12).map(|_| next()).collect();
            if case % 7 == 0 {
                words[3] = 0xFFFF;
            }
            if case % 11 == 0 {
                words[3] = 0;
            }
            let hc = checksum(&words);
            let m = words[3];
            let m_new = match case % 5 {
                0 => 0,
                1 => 0xFFFF,
                2 => m,
                _ => next(),
            };
            words[3] = m_new;
            let full = checksum(&words);
            let inc = update(hc, m, m_new);
            // 0x0000 and 0xFFFF are the same number in one's complement.
            assert!(
                inc == full || (inc ^ full) == 0xFFFF && (inc == 0 || full == 0),
                "case {case}"
            );
            // And the receiver's check passes: the sum with the checksum is all ones.
            words.push(inc);
            assert_eq!(ones_complement_sum(&words), 0xFFFF, "case {case}");
        }
    }

    #[test]
    fn rfc1624_example() {
        // RFC 1624 section 4: HC = 0xDD2F, m = 0x5555 -> m' = 0x3285 gives 0x0000.
        assert_eq!(update(0xDD2F, 0x5555, 0x3285), 0x0000);
    }
}
