//! The ack bucket (Explicit rate control of TCP (Satyavolu et al., 1998)
//! section 4.1; Narvaez and Siu, "An Acknowledgment Bucket Scheme for
//! Regulating TCP Flow over ATM"): a flow's returning ACKs are held at the edge
//! and released at the rate allocated to the flow, each ACK after the time its
//! newly acknowledged data takes at that rate, so that TCP's ACK clock, and
//! with it the flow's rate, follows the allocation. ACKs leave in the order
//! they came (duplicates, which acknowledge nothing new, right after the one
//! before them).

use super::packet::Packet;
use crate::engine::{Time, PS_PER_S};
use std::collections::VecDeque;

/// The ACKs held for one flow.
#[derive(Clone, Debug, Default)]
pub struct AckBucket {
    held: VecDeque<Packet>,
    /// When the last ACK left (the release clock).
    last_release: Time,
    /// The highest cumulative ACK released.
    acked: u64,
    /// ACKs that went through the bucket.
    pub released: u64,
    /// Most ACKs held at once.
    pub max_held: usize,
    /// Sum over released ACKs of the time each was held, ps.
    pub held_ps: u128,
    /// When each held ACK came (parallel to `held`).
    came: VecDeque<Time>,
}

impl AckBucket {
    /// Holds `ack`, arrived at `now`; true when it is the only one held (the
    /// caller then schedules its release).
    pub fn hold(&mut self, ack: Packet, now: Time) -> bool {
        self.held.push_back(ack);
        self.came.push_back(now);
        self.max_held = self.max_held.max(self.held.len());
        self.held.len() == 1
    }

    /// When the oldest held ACK may leave, at `rate_bps` bytes/s of data, at
    /// the earliest `now`.
    pub fn next_release(&self, now: Time, rate_bps: f64) -> Option<Time> {
        let ack = self.held.front()?;
        let newly = ack.ack.saturating_sub(self.acked);
        let gap = if rate_bps > 0.0 {
            (newly as f64 / rate_bps * PS_PER_S as f64).round() as Time
        } else {
            0
        };
        Some(now.max(self.last_release.saturating_add(gap)))
    }

    /// Releases the oldest ACK at `now`.
    pub fn release(&mut self, now: Time) -> Option<Packet> {
        let ack = self.held.pop_front()?;
        let came = self.came.pop_front().unwrap_or(now);
        self.held_ps += (now - came) as u128;
        self.released += 1;
        self.last_release = now;
        self.acked = self.acked.max(ack.ack);
        Some(ack)
    }

    /// The ACKs held now, oldest first.
    pub fn held(&self) -> impl Iterator<Item = &Packet> {
        self.held.iter()
    }

    /// ACKs held now.
    pub fn len(&self) -> usize {
        self.held.len()
    }

    /// True when no ACK is held.
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000_000;

    #[test]
    fn each_ack_leaves_after_the_time_of_the_data_it_acknowledges() {
        // 1,000,000 bytes/s: an ACK for 1000 new bytes spaces 1 ms.
        let mut b = AckBucket::default();
        let rate = 1e6;
        assert!(b.hold(Packet::ack(0, 0, 1000, 100), 0));
        assert!(!b.hold(Packet::ack(0, 0, 2000, 100), 0));
        assert!(!b.hold(Packet::ack(0, 0, 2000, 100), 0)); // a duplicate
                                                           // The first
                                                           // acknowledges 1000
                                                           // bytes from 0: 1 ms
                                                           // after the clock's
                                                           // start (0), not
                                                           // before now.
        assert_eq!(b.next_release(0, rate), Some(MS));
        assert_eq!(b.release(MS).map(|a| a.ack), Some(1000));
        assert_eq!(b.next_release(MS, rate), Some(2 * MS));
        b.release(2 * MS);
        // The duplicate acknowledges nothing new: it follows at once.
        assert_eq!(b.next_release(2 * MS, rate), Some(2 * MS));
        b.release(2 * MS);
        assert!(b.is_empty() && b.next_release(3 * MS, rate).is_none());
        assert_eq!((b.released, b.max_held), (3, 3));
        assert_eq!(b.held_ps, (MS + 2 * MS + 2 * MS) as u128);
    }
}
