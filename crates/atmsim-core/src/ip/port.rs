//! A router output port: a FIFO queue of packets limited in packets or
//! bytes, tail drop or RED. The queue is the packets waiting, not counting
//! the one being transmitted (as for cells).
//!
//! Like a single-class ATM port, it computes each packet's transmission
//! when the packet arrives (Lindley: start = max(arrival, free_at)), so it
//! needs no transmit event: the packet goes straight onto the link with its
//! arrival time at the far end. The port keeps (arrival, start, end, bytes)
//! of the packets it holds to know its queue at any time.
//!
//! A port fed by a single upstream link may be told of an arrival before it
//! happens (the simulator forwards packets through such ports at once, see
//! [`crate::sim`]): arrivals still come in time order, and every query takes
//! the time it is about, so counters and queues read at time t count only
//! what happened by t.

use super::packet::Packet;
use super::red::{Red, RedVerdict};
use crate::engine::time::NEVER;
use crate::engine::{RngStream, Time, PS_PER_S};

/// `arrive` forgets the packets that ended once this many have.
const SETTLE_EVERY: usize = 32;

/// What bounds the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpLimit {
    /// No bound.
    Unlimited,
    /// At most this many waiting packets.
    Packets(u32),
    /// At most this many waiting IP bytes.
    Bytes(u64),
}

/// A packet the port holds: 24 bytes (its start is `end` less its
/// transmission time; keeping it would make every record a third larger,
/// and the records of packets told early are many).
#[derive(Clone, Copy, Debug)]
struct Held {
    arrival: Time,
    end: Time,
    bytes: u32,
}

/// A router output port.
pub struct IpPort {
    /// Line rate, bit/s.
    pub rate_bps: f64,
    /// Transmission time per byte, ps, in 48.16 fixed point (exact to
    /// 2^-16 ps per byte: integer arithmetic on the hot path).
    ps_per_byte_fp: u64,
    /// Queue bound.
    pub limit: IpLimit,
    red: Option<Red>,
    rng: RngStream,
    /// The packets accepted and not yet forgotten are `held[head..]`, in
    /// arrival order (a Vec with a moving head: cheaper than a VecDeque on
    /// this path, and emptied whenever the port is).
    held: Vec<Held>,
    head: usize,
    /// Bytes of `held[head..]` (kept for a byte limit only).
    held_bytes: u64,
    /// The first `ahead` live packets (`ahead_bytes` bytes) had ended by the
    /// last arrival's time: arrivals come in time order, so this prefix
    /// only grows between settles and the queue an arrival finds is O(1).
    ahead: usize,
    ahead_bytes: u64,
    /// `arrive` forgets ended packets when `ahead` reaches this.
    settle_mark: usize,
    /// When the last accepted packet ends: at most [`NEVER`],
    /// as are the ends the port records and returns (a backlog can reach
    /// past the range of `u64`; what is clamped lies after every run's end,
    /// and the queue is counted in packets, so it stays exact).
    free_at: Time,
    last_tx_ps: Time,
    /// Transmission time of every packet accepted, ps: the busy time once
    /// they have all ended (more than `u64` holds for a long backlog).
    tx_total_ps: u128,
    wait_sum_ps: u128,
    /// Packets accepted.
    accepted: u64,
    /// Packets dropped because the buffer was full.
    pub dropped_tail: u64,
    /// Packets dropped by RED (early and forced).
    pub dropped_red: u64,
    /// Largest number of waiting packets, over the arrivals up to `horizon`.
    pub max_queue: u32,
    /// The run's end: a port told of arrivals ahead of time (the fast paths)
    /// learns of some after it, which its statistics must not see (the
    /// plain path never makes them). `Time::MAX` unless set.
    pub horizon: Time,
}

impl IpPort {
    /// A port at `rate_bps` with the given bound and optional RED.
    pub fn new(rate_bps: f64, limit: IpLimit, red: Option<Red>, rng: RngStream) -> Self {
        IpPort {
            rate_bps,
            ps_per_byte_fp: (8.0 * PS_PER_S as f64 / rate_bps * 65_536.0).round() as u64,
            limit,
            red,
            rng,
            held: Vec::new(),
            head: 0,
            held_bytes: 0,
            ahead: 0,
            ahead_bytes: 0,
            settle_mark: SETTLE_EVERY,
            free_at: 0,
            last_tx_ps: 0,
            tx_total_ps: 0,
            wait_sum_ps: 0,
            accepted: 0,
            dropped_tail: 0,
            dropped_red: 0,
            max_queue: 0,
            horizon: Time::MAX,
        }
    }

    /// Transmission time of `bytes` IP bytes, ps. The product is taken in
    /// 128 bits: at 1 kbit/s a 65,535-byte packet's is 3.4 x 10^19 before
    /// the shift, more than `u64` holds.
    #[inline]
    pub fn tx_time(&self, bytes: u32) -> Time {
        ((bytes as u128 * self.ps_per_byte_fp as u128 + (1 << 15)) >> 16) as Time
    }

    /// When `h`'s transmission started.
    fn start_of(&self, h: &Held) -> Time {
        h.end - self.tx_time(h.bytes)
    }

    /// The packets the port holds or was told of, in arrival order.
    fn live(&self) -> &[Held] {
        &self.held[self.head..]
    }

    /// Forgets the packets whose transmission ended by `now`.
    #[inline]
    pub fn settle(&mut self, now: Time) {
        let track_bytes = matches!(self.limit, IpLimit::Bytes(_));
        while let Some(h) = self.held.get(self.head) {
            if h.end > now {
                break;
            }
            if track_bytes {
                self.held_bytes -= h.bytes as u64;
                if self.ahead > 0 {
                    self.ahead_bytes -= h.bytes as u64;
                }
            }
            self.ahead = self.ahead.saturating_sub(1);
            self.head += 1;
        }
        if self.head == self.held.len() {
            self.held.clear();
            self.head = 0;
        } else if self.head >= 128 && 2 * self.head >= self.held.len() {
            self.held.drain(..self.head);
            self.head = 0;
        }
    }

    /// Packets that finished transmission by `now` (at least the last
    /// settled time).
    pub fn packets_out(&self, now: Time) -> u64 {
        self.accepted - self.live().iter().filter(|h| h.end > now).count() as u64
    }

    /// Packets waiting at `now` (not counting the one in transmission).
    pub fn queue_len(&self, now: Time) -> usize {
        self.waiting(now, true)
    }

    /// IP bytes of the packets waiting at `now` (not counting the one in
    /// transmission).
    pub fn queue_bytes(&self, now: Time) -> u64 {
        self.live()
            .iter()
            .rev()
            .take_while(|h| self.start_of(h) > now)
            .filter(|h| h.arrival <= now)
            .map(|h| h.bytes as u64)
            .sum()
    }

    /// Packets waiting at `now` before the arrivals of that instant: what a
    /// probe at `now` sees (probes come before simultaneous arrivals, see
    /// docs/model.md, "Time and order"), however early the port was told.
    pub fn queue_len_before(&self, now: Time) -> usize {
        self.waiting(now, false)
    }

    /// Packets waiting at `now`, counting those arriving at `now` itself
    /// only if `with_now`.
    fn waiting(&self, now: Time, with_now: bool) -> usize {
        self.live()
            .iter()
            .rev()
            .take_while(|h| self.start_of(h) > now)
            .filter(|h| h.arrival < now || (with_now && h.arrival == now))
            .count()
    }

    /// The arrival time of the held packet whose transmission ends at
    /// `end`, if the port still holds it (it does while `end` is after the
    /// last settled time).
    pub fn arrival_ending_at(&self, end: Time) -> Option<Time> {
        let live = self.live();
        let k = live.partition_point(|h| h.end < end);
        live.get(k).filter(|h| h.end == end).map(|h| h.arrival)
    }

    /// Packets in the port at `now` (waiting or in transmission).
    pub fn packets_held(&self, now: Time) -> usize {
        self.live()
            .iter()
            .rev()
            .take_while(|h| h.end > now)
            .filter(|h| h.arrival <= now)
            .count()
    }

    /// Packets told of that arrive after `now`.
    pub fn arrivals_after(&self, now: Time) -> usize {
        self.live()
            .iter()
            .rev()
            .take_while(|h| h.arrival > now)
            .count()
    }

    /// Offers `p`, arriving at `at`, when the simulation is at `now` <= `at`;
    /// returns when its transmission ends, or None if it was dropped.
    #[inline(always)]
    pub fn arrive(&mut self, at: Time, now: Time, p: &Packet) -> Option<Time> {
        // Packets that end by `at` have left by `at`.
        let track_bytes = matches!(self.limit, IpLimit::Bytes(_));
        while let Some(h) = self.held.get(self.head + self.ahead) {
            if h.end > at {
                break;
            }
            self.ahead += 1;
            if track_bytes {
                self.ahead_bytes += h.bytes as u64;
            }
        }
        // Forget those that ended by `now` (all in that prefix) now and
        // then, not at every arrival: queries take their time anyway. A
        // port told of arrivals early may have many that ended by `at` but
        // not by `now`: wait for more.
        if self.ahead >= self.settle_mark {
            self.settle(now);
            self.settle_mark = self.ahead + SETTLE_EVERY;
        }
        // Every held packet arrived by `at` (arrivals come in time order), so
        // the first one still there at `at` is in transmission: the others
        // wait.
        let present = self.held.len() - self.head - self.ahead;
        let busy = present > 0;
        let waiting = present.saturating_sub(1);
        // Bytes waiting: only a byte limit needs them.
        let waiting_bytes = match (track_bytes, self.held.get(self.head + self.ahead)) {
            (true, Some(h)) => self.held_bytes - self.ahead_bytes - h.bytes as u64,
            _ => 0,
        };
        let now = at;
        if let Some(red) = &mut self.red {
            let q = match self.limit {
                IpLimit::Bytes(_) => waiting_bytes as f64,
                _ => waiting as f64,
            };
            // An idle port's average decays as if small packets had arrived
            // to an empty queue during the idle time.
            let idle = if !busy && self.last_tx_ps > 0 {
                (now - self.free_at) as f64 / self.last_tx_ps as f64
            } else {
                0.0
            };
            red.update_average(q, idle);
            if red.decide(&mut self.rng) != RedVerdict::Accept {
                self.dropped_red += 1;
                return None;
            }
        }
        let bytes = p.ip_bytes();
        if busy {
            let fits = match self.limit {
                IpLimit::Unlimited => true,
                IpLimit::Packets(n) => (waiting as u32) < n,
                IpLimit::Bytes(b) => waiting_bytes + bytes as u64 <= b,
            };
            if !fits {
                self.dropped_tail += 1;
                return None;
            }
        }
        let start = self.free_at.max(now);
        let tx = self.tx_time(bytes);
        // start <= NEVER and tx < 10^15: the sum cannot overflow.
        let end = (start + tx).min(NEVER);
        if start > now && now <= self.horizon {
            let queued = u32::try_from(waiting + 1).unwrap_or(u32::MAX);
            self.max_queue = self.max_queue.max(queued);
        }
        self.wait_sum_ps += (start - now) as u128;
        self.free_at = end;
        self.last_tx_ps = tx;
        self.tx_total_ps += tx as u128;
        self.accepted += 1;
        self.held.push(Held {
            arrival: now,
            end,
            bytes,
        });
        if track_bytes {
            self.held_bytes += bytes as u64;
        }
        Some(end)
    }

    /// Transmission time spent up to `now` (at least the last settled
    /// time), ps: all that was accepted, less what the packets still there
    /// at `now` have yet to send.
    pub fn busy_ps(&self, now: Time) -> u128 {
        let to_come: u128 = self
            .live()
            .iter()
            .filter(|h| h.end > now)
            .map(|h| (h.end - self.start_of(h).max(now)) as u128)
            .sum();
        self.tx_total_ps - to_come
    }

    /// Time-average number of waiting packets over [0, now].
    pub fn mean_queue(&self, now: Time) -> f64 {
        if now == 0 {
            return 0.0;
        }
        // Packets still waiting at `now` (or yet to arrive) were charged
        // their whole wait: remove the part after `now`.
        let future: u128 = self
            .live()
            .iter()
            .map(|h| (self.start_of(h), h.arrival))
            .filter(|&(start, _)| start > now)
            .map(|(start, arrival)| (start - arrival.max(now)) as u128)
            .sum();
        (self.wait_sum_ps - future) as f64 / now as f64
    }

    /// Packets offered (accepted or dropped).
    pub fn packets_in(&self) -> u64 {
        self.accepted + self.dropped()
    }

    /// Packets dropped for any reason.
    pub fn dropped(&self) -> u64 {
        self.dropped_tail + self.dropped_red
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(limit: IpLimit) -> IpPort {
        IpPort::new(8e6, limit, None, RngStream::new(1, 0))
    }

    const MS: Time = 1_000_000_000;

    #[test]
    fn serialisation_time_of_a_packet() {
        // 1000 IP bytes at 8 Mb/s: 1 ms.
        let p = port(IpLimit::Unlimited);
        assert_eq!(p.tx_time(1000), MS);
    }

    #[test]
    fn the_slowest_link_times_the_largest_packet_exactly() {
        // 1 kbit/s: 8 ms a byte; 65,535 IP bytes take 524.28 s, though the
        // fixed-point product (3.4 x 10^19) exceeds u64.
        let p = IpPort::new(1e3, IpLimit::Unlimited, None, RngStream::new(1, 0));
        assert_eq!(p.tx_time(65_535), 65_535 * 8 * MS);
        assert_eq!(p.tx_time(1), 8 * MS);
    }

    #[test]
    fn a_backlog_longer_than_u64_picoseconds_keeps_its_counts() {
        // 40,000 largest packets at once at 1 kbit/s: 2.1 x 10^19 ps of
        // transmission. Ends past NEVER are recorded as NEVER; the queue,
        // counted in packets, and the busy time stay exact.
        let mut p = IpPort::new(1e3, IpLimit::Unlimited, None, RngStream::new(1, 0));
        let pk = Packet::data(0, 0, 65_495);
        let tx = p.tx_time(pk.ip_bytes());
        let ends: Vec<Time> = (0..40_000).map(|_| p.arrive(0, 0, &pk).unwrap()).collect();
        assert_eq!(ends[0], tx);
        assert_eq!(*ends.last().unwrap(), crate::engine::time::NEVER);
        assert!(ends.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(p.queue_len(0), 39_999);
        assert_eq!(p.packets_held(tx / 2), 40_000);
        assert_eq!(p.busy_ps(tx / 2), (tx / 2) as u128);
        assert_eq!(p.packets_out(3 * tx), 3);
        assert_eq!(p.max_queue, 39_999);
    }

    #[test]
    fn fifo_with_packet_limit() {
        let mut p = port(IpLimit::Packets(2));
        let pk = |s| Packet::data(0, s, 960); // 1000 IP bytes
        assert_eq!(p.arrive(0, 0, &pk(0)), Some(MS));
        assert_eq!(p.arrive(0, 0, &pk(1)), Some(2 * MS));
        assert_eq!(p.arrive(0, 0, &pk(2)), Some(3 * MS));
        assert_eq!(p.arrive(0, 0, &pk(3)), None);
        assert_eq!(p.queue_len(0), 2);
        // At 1.5 ms the first has left, the second is in transmission.
        assert_eq!(p.queue_len(3 * MS / 2), 1);
        assert_eq!(p.packets_held(3 * MS / 2), 2);
        assert_eq!(p.arrive(3 * MS / 2, 3 * MS / 2, &pk(4)), Some(4 * MS));
        assert_eq!(p.max_queue, 2);
        assert_eq!(
            (p.packets_in(), p.packets_out(3 * MS / 2), p.dropped()),
            (5, 1, 1)
        );
        assert_eq!(p.busy_ps(3 * MS / 2), (3 * MS / 2) as u128);
        // Waits: 0, 1, 2 ms and 1.5 ms (3 ms - 1.5 ms) over 4 ms.
        assert!((p.mean_queue(4 * MS) - 4.5 / 4.0).abs() < 1e-12);
    }

    #[test]
    fn byte_limit() {
        let mut p = port(IpLimit::Bytes(1500));
        let pk = Packet::data(0, 0, 960);
        p.arrive(0, 0, &pk);
        assert!(p.arrive(0, 0, &pk).is_some());
        assert!(p.arrive(0, 0, &pk).is_none());
    }

    #[test]
    fn arrivals_told_in_advance_count_only_from_their_time() {
        let mut p = port(IpLimit::Packets(10));
        let pk = Packet::data(0, 0, 960);
        // At time 0 the port learns of arrivals at 1 ms and 1.5 ms.
        assert_eq!(p.arrive(MS, 0, &pk), Some(2 * MS));
        assert_eq!(p.arrive(3 * MS / 2, 0, &pk), Some(3 * MS));
        assert_eq!(
            (p.queue_len(0), p.packets_held(0), p.arrivals_after(0)),
            (0, 0, 2)
        );
        assert_eq!((p.queue_len(MS), p.packets_held(MS)), (0, 1));
        assert_eq!(
            (p.queue_len(7 * MS / 4), p.packets_held(7 * MS / 4)),
            (1, 2)
        );
        assert_eq!(p.busy_ps(MS / 2), 0);
        // The second waits 0.5 ms; at 1.75 ms a quarter of it has passed.
        assert!((p.mean_queue(7 * MS / 4) - 0.25 / 1.75).abs() < 1e-12);
        // A packet arriving at 2.5 ms finds the first gone and waits behind
        // the second, even though the simulation is still at 0.
        assert_eq!(p.arrive(5 * MS / 2, 0, &pk), Some(4 * MS));
        assert_eq!(p.max_queue, 1);
        // A probe at 2.5 ms comes before that instant's arrival; just after,
        // the packet waits.
        assert_eq!(p.queue_len_before(5 * MS / 2), 0);
        assert_eq!(p.queue_len(5 * MS / 2), 1);
        assert_eq!(p.queue_len_before(5 * MS / 2 + 1), 1);
        // The ledger finds a held packet by the end of its transmission.
        assert_eq!(p.arrival_ending_at(3 * MS), Some(3 * MS / 2));
        assert_eq!(p.arrival_ending_at(4 * MS), Some(5 * MS / 2));
        assert_eq!(p.arrival_ending_at(4 * MS - 1), None);
    }

    #[test]
    fn a_long_backlog_is_compacted_without_losing_count() {
        // 10,000 packets of 1 ms at time 0, then one arrival every 2 ms:
        // the port forgets the sent ones (compacting its store) while it
        // stays busy, and its counts stay exact.
        let mut p = port(IpLimit::Unlimited);
        let pk = Packet::data(0, 0, 960);
        for _ in 0..10_000 {
            p.arrive(0, 0, &pk);
        }
        for k in 1..=8_000u64 {
            let t = 2 * k * MS;
            p.arrive(t, t, &pk);
            let sent = (t / MS).min(10_000 + k);
            assert_eq!(p.packets_out(t), sent);
            assert_eq!(p.packets_held(t) as u64, 10_000 + k - sent);
            assert_eq!(p.busy_ps(t), t as u128);
        }
        assert!(p.held.len() < 18_000, "never compacted: {}", p.held.len());
    }
}
