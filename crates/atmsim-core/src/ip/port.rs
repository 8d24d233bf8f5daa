//! A router output port: a FIFO queue of packets limited in packets or
//! bytes, tail drop or RED, one transmit event per packet. The queue is the
//! packets waiting, not counting the one being transmitted (as for cells).

use super::packet::Packet;
use super::red::{Red, RedVerdict};
use crate::engine::{RngStream, Time, PS_PER_S};
use std::collections::VecDeque;

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

/// What happened to a packet offered to the port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpArrival {
    /// Dropped (tail or RED).
    Dropped,
    /// Queued behind others.
    Queued,
    /// The port was idle: transmission ends at this time.
    Started(Time),
}

/// A router output port.
pub struct IpPort {
    /// Line rate, bit/s.
    pub rate_bps: f64,
    /// Queue bound.
    pub limit: IpLimit,
    red: Option<Red>,
    rng: RngStream,
    queue: VecDeque<Packet>,
    queued_bytes: u64,
    in_service: Option<Packet>,
    tx_start: Time,
    idle_since: Time,
    last_tx_ps: Time,
    area: u128,
    last_change: Time,
    busy_done_ps: u128,
    /// Packets offered.
    pub packets_in: u64,
    /// Packets that finished transmission.
    pub packets_out: u64,
    /// Packets dropped because the buffer was full.
    pub dropped_tail: u64,
    /// Packets dropped early by RED (including RED's forced drops).
    pub dropped_red: u64,
    /// Largest number of waiting packets.
    pub max_queue: u32,
}

impl IpPort {
    /// A port at `rate_bps` with the given bound and optional RED.
    pub fn new(rate_bps: f64, limit: IpLimit, red: Option<Red>, rng: RngStream) -> Self {
        IpPort {
            rate_bps,
            limit,
            red,
            rng,
            queue: VecDeque::new(),
            queued_bytes: 0,
            in_service: None,
            tx_start: 0,
            idle_since: 0,
            last_tx_ps: 0,
            area: 0,
            last_change: 0,
            busy_done_ps: 0,
            packets_in: 0,
            packets_out: 0,
            dropped_tail: 0,
            dropped_red: 0,
            max_queue: 0,
        }
    }

    /// Transmission time of `bytes` IP bytes, ps.
    pub fn tx_time(&self, bytes: u32) -> Time {
        ((bytes as f64 * 8.0 * PS_PER_S as f64 / self.rate_bps) + 0.5) as Time
    }

    /// Packets waiting.
    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }

    /// Packets in the port (waiting and in transmission).
    pub fn packets_held(&self) -> impl Iterator<Item = &Packet> {
        self.in_service.iter().chain(self.queue.iter())
    }

    fn account(&mut self, now: Time) {
        self.area += self.queue.len() as u128 * (now - self.last_change) as u128;
        self.last_change = now;
    }

    fn fits(&self, p: &Packet) -> bool {
        match self.limit {
            IpLimit::Unlimited => true,
            IpLimit::Packets(n) => (self.queue.len() as u32) < n,
            IpLimit::Bytes(b) => self.queued_bytes + p.ip_bytes() as u64 <= b,
        }
    }

    /// Offers `p` at `now`.
    pub fn arrive(&mut self, now: Time, p: Packet) -> IpArrival {
        self.packets_in += 1;
        if let Some(red) = &mut self.red {
            let q = match self.limit {
                IpLimit::Bytes(_) => self.queued_bytes as f64,
                _ => self.queue.len() as f64,
            };
            let idle = if self.in_service.is_none() && self.queue.is_empty() && self.last_tx_ps > 0
            {
                (now - self.idle_since) as f64 / self.last_tx_ps as f64
            } else {
                0.0
            };
            red.update_average(q, idle);
            if red.decide(&mut self.rng) != RedVerdict::Accept {
                self.dropped_red += 1;
                return IpArrival::Dropped;
            }
        }
        if self.in_service.is_none() {
            let end = now + self.tx_time(p.ip_bytes());
            self.last_tx_ps = end - now;
            self.in_service = Some(p);
            self.tx_start = now;
            return IpArrival::Started(end);
        }
        if !self.fits(&p) {
            self.dropped_tail += 1;
            return IpArrival::Dropped;
        }
        self.account(now);
        self.queued_bytes += p.ip_bytes() as u64;
        self.queue.push_back(p);
        self.max_queue = self.max_queue.max(self.queue.len() as u32);
        IpArrival::Queued
    }

    /// The transmission ending at `now` is done: returns the packet and, if
    /// another one started, its end time.
    pub fn tx_done(&mut self, now: Time) -> (Packet, Option<Time>) {
        let done = self.in_service.take().expect("tx done on an idle IP port");
        self.busy_done_ps += (now - self.tx_start) as u128;
        self.packets_out += 1;
        self.account(now);
        let end = match self.queue.pop_front() {
            Some(p) => {
                self.queued_bytes -= p.ip_bytes() as u64;
                let tx = self.tx_time(p.ip_bytes());
                self.last_tx_ps = tx;
                self.in_service = Some(p);
                self.tx_start = now;
                Some(now + tx)
            }
            None => {
                self.idle_since = now;
                None
            }
        };
        (done, end)
    }

    /// Transmission time spent up to `now`, ps.
    pub fn busy_ps(&self, now: Time) -> u128 {
        self.busy_done_ps
            + if self.in_service.is_some() {
                (now - self.tx_start) as u128
            } else {
                0
            }
    }

    /// Time-average number of waiting packets over [0, now].
    pub fn mean_queue(&self, now: Time) -> f64 {
        if now == 0 {
            return 0.0;
        }
        let area = self.area + self.queue.len() as u128 * (now - self.last_change) as u128;
        area as f64 / now as f64
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

    #[test]
    fn serialisation_time_of_a_packet() {
        // 1000 IP bytes at 8 Mb/s: 1 ms.
        let p = port(IpLimit::Unlimited);
        assert_eq!(p.tx_time(1000), 1_000_000_000);
    }

    #[test]
    fn fifo_with_packet_limit() {
        let mut p = port(IpLimit::Packets(2));
        let pk = |s| Packet::data(0, s, 960); // 1000 IP bytes
        assert_eq!(p.arrive(0, pk(0)), IpArrival::Started(1_000_000_000));
        assert_eq!(p.arrive(0, pk(1)), IpArrival::Queued);
        assert_eq!(p.arrive(0, pk(2)), IpArrival::Queued);
        assert_eq!(p.arrive(0, pk(3)), IpArrival::Dropped);
        let (a, next) = p.tx_done(1_000_000_000);
        assert_eq!(a.seq, 0);
        assert_eq!(next, Some(2_000_000_000));
        assert_eq!(p.max_queue, 2);
        assert_eq!((p.packets_in, p.packets_out, p.dropped()), (4, 1, 1));
    }

    #[test]
    fn byte_limit() {
        let mut p = port(IpLimit::Bytes(1500));
        let pk = Packet::data(0, 0, 960);
        p.arrive(0, pk);
        assert_eq!(p.arrive(0, pk), IpArrival::Queued);
        assert_eq!(p.arrive(0, pk), IpArrival::Dropped);
    }
}
