//! The event queue: a binary min-heap ordered by (time, sequence number).
//!
//! The sequence number is assigned at scheduling, so two events at the same
//! time run in the order they were scheduled: runs are deterministic.
//!
//! The run loop *takes* each event it dispatches with [`EventQueue::next_until`]:
//! a handler never removes its own event, so none can be left behind to
//! run again. The taken event's slot stays at the top of the heap until the
//! handler schedules something: the first `push` of a handler replaces it
//! with one sift (the common case of a component rescheduling itself), and
//! an event that schedules nothing is removed when the loop takes the next.
//!
//! Arrivals of cells at ports ([`EventQueue::push_arrival`]) are arbitrated:
//! at one instant they come after every other event (a port first finishes
//! the transmission that ends then), in a random order: each arrival's
//! place is a hash of the run seed, the instant and the input. Being a
//! function of those alone, the order does not depend on what else was
//! scheduled (the fast paths schedule fewer events than the plain path). An output-queued switch that takes several cells for one
//! output in the same slot queues them in random order (Karol, Hluchyj and
//! Morgan, "Input Versus Output Queueing on a Space-Division Packet Switch",
//! IEEE Trans. Commun. 35(12), 1987); a fixed order (by input, or by when
//! the arrivals were scheduled) would let one input win every slot freed at
//! a full buffer for ever. Under slotted contention (the default, see
//! `atm::slot_arrival`) every cell that reaches a switch output over a link
//! within one of its cell times arrives at the end of that slot, so this
//! random order of one instant is the order of the whole slot's contention.

use super::rng::splitmix64;
use super::time::Time;
use crate::ids::{AtmLinkIx, FlowId, IpLinkIx, VcId};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What an event means; the index names the component it wakes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// A traffic source emits its next cell or frame.
    SourceEmit(u32),
    /// The head cell of one of an ATM link's in-flight queues reaches the
    /// far node, or under slotted contention the end of the slot it
    /// arrived in (the index is the link's own queue's or a lane's, see
    /// `sim::atm`).
    CellArrival(u32),
    /// The head packet of an IP link reaches the far node (the index is the
    /// IP link's, see `sim::ip`).
    PacketArrival(IpLinkIx),
    /// An IP port fed by several links takes, in time order, every packet
    /// they bring within its look-ahead (a fast path, see `sim::fast_paths`).
    IpBatch(IpLinkIx),
    /// A priority-scheduled ATM port finishes transmitting a cell.
    PortTxDone(AtmLinkIx),
    /// Sample the probes.
    ProbeTick,
    /// A TCP flow starts sending.
    FlowStart(FlowId),
    /// The global coarse TCP timer of one granularity ticks.
    TcpTick(u32),
    /// A flow's fine retransmission or delayed-ACK deadline may have come.
    FlowTimer(FlowId),
    /// A flow's receiver finished processing a segment.
    RxDone(FlowId),
    /// An ABR source end system may send its next in-rate cell.
    SesSend(VcId),
    /// A rate-controlled IP port ends an averaging interval (its index is
    /// the IP link's).
    RateInterval(IpLinkIx),
    /// An ack bucket (one per flow and router holding its ACKs) releases
    /// its next ACK.
    AckRelease(u32),
    /// A rate-controlled ATM port ends an averaging interval (its index is
    /// the ATM link's).
    AtmRateInterval(AtmLinkIx),
    /// The open-loop sources, merged on a timing wheel, emit what they have
    /// due before the next other event (a fast path, see `sim::fast_paths`).
    Sources,
}

/// A pending event. `key` packs (time, sequence number) into one integer
/// so that ordering is a single 128-bit comparison.
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u128,
    event: Event,
}

impl Entry {
    #[inline]
    fn new(time: Time, seq: u64, event: Event) -> Self {
        Entry {
            key: ((time as u128) << 64) | seq as u128,
            event,
        }
    }

    /// An entry placed by `order` (< 2^63) after the sequenced ones of its
    /// time (sequence numbers stay far below 2^63).
    #[inline]
    fn ordered(time: Time, event: Event, order: u64) -> Self {
        Entry {
            key: ((time as u128) << 64) | (1 << 63) | order as u128,
            event,
        }
    }

    #[inline]
    fn time(&self) -> Time {
        (self.key >> 64) as Time
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    #[inline]
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

/// The key of an arrival of `input` (its kind and index) at `time` in a
/// queue whose ties are seeded by `tie_seed`: its time, then 31 random bits
/// drawn from the three, then the input.
#[inline(always)]
fn arrival_key(tie_seed: u64, time: Time, input: u64) -> u128 {
    // One SplitMix64 finalisation of the run seed, the instant and the input:
    // all three reach every bit of the draw.
    let h = splitmix64(
        tie_seed
            ^ time.wrapping_mul(0xD6E8_FEB8_6659_FD93)
            ^ input.wrapping_mul(0x9E37_79B9_7F4A_7C15),
    );
    // 31 random bits, then the input: distinct inputs never tie.
    let order = (h >> 33) << 32 | input;
    ((time as u128) << 64) | (1 << 63) | order as u128
}

/// The agenda keys of the `SourceEmit` events of one queue, for the timing
/// wheel that stands in for them (it computes a key only to break a tie of
/// times).
#[derive(Clone, Copy, Debug)]
pub struct SourceKeys {
    tie_seed: u64,
}

impl super::wheel::TieKey for SourceKeys {
    #[inline(always)]
    fn key(&self, time: Time, item: u32) -> u128 {
        arrival_key(self.tie_seed, time, 1 << 30 | item as u64)
    }
}

/// Pending events, earliest first.
pub struct EventQueue {
    heap: BinaryHeap<Reverse<Entry>>,
    next_seq: u64,
    /// The top of the heap is the event being dispatched: the next push
    /// takes its slot, the next `next_until` removes it.
    taken: bool,
    /// Seeds the order of simultaneous arrivals (None: by scheduling order).
    tie_seed: Option<u64>,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl EventQueue {
    /// An empty queue (simultaneous arrivals ordered as for run seed 0).
    pub fn new() -> Self {
        Self::with_tie_seed(0)
    }

    /// An empty queue that orders simultaneous arrivals from `seed`.
    pub fn with_tie_seed(seed: u64) -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            next_seq: 0,
            taken: false,
            tie_seed: Some(splitmix64(seed ^ 0x0A7B_1724_7105_0000)),
        }
    }

    /// An empty queue that runs simultaneous arrivals in the order they were
    /// scheduled, like any other events (a fabric that always serves its
    /// inputs in one fixed order; for comparison only).
    pub fn by_scheduling_order() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            next_seq: 0,
            taken: false,
            tie_seed: None,
        }
    }

    /// Takes the earliest pending event if its time is at most `until`: it
    /// is no longer pending once this returns (the event dispatched before
    /// it, if it scheduled nothing, is removed now).
    #[inline]
    pub fn next_until(&mut self, until: Time) -> Option<(Time, Event)> {
        if self.taken {
            self.heap.pop();
            self.taken = false;
        }
        match self.heap.peek() {
            Some(Reverse(e)) if e.time() <= until => {
                self.taken = true;
                Some((e.time(), e.event))
            }
            _ => None,
        }
    }

    /// Schedules `event` at `time`.
    #[inline]
    pub fn push(&mut self, time: Time, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.insert(Entry::new(time, seq, event));
    }

    /// Schedules `event` at `time` in a fixed place among the events of the
    /// same time: after every event scheduled with `push`, and by `order`
    /// among those scheduled with `push_ordered` (at most one pending per
    /// `order` and time). Their order then does not depend on when they
    /// were scheduled, which the fast paths change.
    #[inline]
    pub fn push_ordered(&mut self, time: Time, event: Event, order: u32) {
        self.insert(Entry::ordered(time, event, order as u64));
    }

    /// Schedules `event`, the arrival of a cell at a port at `time` (a
    /// [`Event::CellArrival`], [`Event::SourceEmit`] or [`Event::SesSend`],
    /// whose index is below 2^30): after every event scheduled with `push`
    /// at that time, and among the arrivals of that time in a random order
    /// (the module docs).
    #[inline]
    pub fn push_arrival(&mut self, time: Time, event: Event) {
        match self.arrival_key(time, event) {
            Some(key) => self.insert(Entry { key, event }),
            None => self.push(time, event),
        }
    }

    /// The key [`EventQueue::push_arrival`] gives `event` at `time` (None
    /// when arrivals go by scheduling order): its place among every event.
    #[inline]
    pub fn arrival_key(&self, time: Time, event: Event) -> Option<u128> {
        let tie_seed = self.tie_seed?;
        let input = match event {
            Event::CellArrival(l) => l as u64,
            Event::SourceEmit(s) => 1 << 30 | s as u64,
            Event::SesSend(v) => 2 << 30 | v.get() as u64,
            _ => 3 << 30,
        };
        Some(arrival_key(tie_seed, time, input))
    }

    /// The keys [`EventQueue::arrival_key`] gives the `SourceEmit` events of
    /// this queue (None when arrivals go by scheduling order).
    pub fn source_keys(&self) -> Option<SourceKeys> {
        self.tie_seed.map(|tie_seed| SourceKeys { tie_seed })
    }

    /// Schedules `event` with `key`, a key from [`EventQueue::arrival_key`]
    /// (of another event: a stand-in for it, at its place).
    #[inline]
    pub fn push_keyed(&mut self, key: u128, event: Event) {
        self.insert(Entry { key, event });
    }

    /// The key of the earliest pending event (the one being dispatched
    /// excluded: see [`EventQueue::discard_taken`]), or `u128::MAX`.
    #[inline]
    pub fn peek_key(&self) -> u128 {
        debug_assert!(!self.taken, "peek_key while an event is taken");
        self.heap.peek().map_or(u128::MAX, |Reverse(e)| e.key)
    }

    /// Removes the event being dispatched now rather than at the next take,
    /// so that [`EventQueue::peek_key`] shows the next one.
    #[inline]
    pub fn discard_taken(&mut self) {
        if self.taken {
            self.heap.pop();
            self.taken = false;
        }
    }

    #[inline]
    fn insert(&mut self, entry: Entry) {
        if self.taken {
            self.taken = false;
            if let Some(mut top) = self.heap.peek_mut() {
                // PeekMut sifts the new top down when it is dropped.
                *top = Reverse(entry);
                return;
            }
        }
        self.heap.push(Reverse(entry));
    }

    /// Number of pending events (the one being dispatched excluded).
    pub fn len(&self) -> usize {
        self.heap.len() - self.taken as usize
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Typed ids are as small as the numbers they wrap: the event, moved
    /// on every push and pop, stays eight bytes.
    #[test]
    fn an_event_is_eight_bytes() {
        assert_eq!(std::mem::size_of::<Event>(), 8);
    }

    fn drain(q: &mut EventQueue) -> Vec<(Time, Event)> {
        let mut seen = vec![];
        while let Some(x) = q.next_until(u64::MAX) {
            seen.push(x);
        }
        seen
    }

    #[test]
    fn earliest_first_then_fifo_at_equal_times() {
        let mut q = EventQueue::new();
        q.push(20, Event::ProbeTick);
        q.push(10, Event::SourceEmit(1));
        q.push(10, Event::SourceEmit(0));
        assert_eq!(
            drain(&mut q),
            vec![
                (10, Event::SourceEmit(1)),
                (10, Event::SourceEmit(0)),
                (20, Event::ProbeTick)
            ]
        );
        assert!(q.is_empty());
    }

    #[test]
    fn a_taken_event_is_gone_whether_or_not_its_handler_schedules() {
        let mut q = EventQueue::new();
        q.push(5, Event::SourceEmit(0));
        q.push(7, Event::SourceEmit(1));
        assert_eq!(q.next_until(100), Some((5, Event::SourceEmit(0))));
        assert_eq!(q.len(), 1);
        // The handler reschedules itself: the new event takes the slot.
        q.push(9, Event::SourceEmit(0));
        assert_eq!(q.len(), 2);
        assert_eq!(q.next_until(8), Some((7, Event::SourceEmit(1))));
        // This handler schedules nothing: its event is removed all the same.
        assert_eq!(q.next_until(8), None);
        assert_eq!(q.len(), 1);
        assert_eq!(q.next_until(9), Some((9, Event::SourceEmit(0))));
        assert_eq!(q.next_until(u64::MAX), None);
        assert!(q.is_empty());
    }

    #[test]
    fn ordered_events_follow_the_sequenced_ones_by_their_order() {
        let mut q = EventQueue::new();
        q.push_ordered(10, Event::PacketArrival(IpLinkIx(7)), 7);
        q.push_ordered(10, Event::PacketArrival(IpLinkIx(2)), 2);
        q.push(10, Event::ProbeTick);
        q.push_ordered(9, Event::PacketArrival(IpLinkIx(9)), 9);
        q.push(10, Event::FlowTimer(FlowId(0)));
        assert_eq!(
            drain(&mut q),
            vec![
                (9, Event::PacketArrival(IpLinkIx(9))),
                (10, Event::ProbeTick),
                (10, Event::FlowTimer(FlowId(0))),
                (10, Event::PacketArrival(IpLinkIx(2))),
                (10, Event::PacketArrival(IpLinkIx(7))),
            ]
        );
    }

    #[test]
    fn simultaneous_arrivals_come_last_in_a_seeded_random_order() {
        // Two inputs deliver a cell at every instant: each comes first at
        // about half of them, after the other events of the instant, and
        // the same run seed gives the same order.
        let order = |seed: u64| {
            let mut q = EventQueue::with_tie_seed(seed);
            let mut firsts = vec![];
            for t in 0..1000 {
                q.push_arrival(t, Event::CellArrival(0));
                q.push_arrival(t, Event::CellArrival(1));
                q.push(t, Event::ProbeTick);
                let all: Vec<Event> = (0..3).map(|_| q.next_until(t).unwrap().1).collect();
                assert_eq!(all[0], Event::ProbeTick);
                firsts.push(all[1]);
            }
            firsts
        };
        let a = order(1);
        let zero_first = a.iter().filter(|&&e| e == Event::CellArrival(0)).count();
        assert!((430..=570).contains(&zero_first), "{zero_first}");
        assert_eq!(a, order(1));
        assert_ne!(a, order(2));
    }

    #[test]
    fn pushes_after_a_take_give_the_same_order_as_a_fresh_queue() {
        // Reusing the taken slot must not change what comes out.
        let later = [
            (4, Event::FlowTimer(FlowId(1))),
            (3, Event::FlowTimer(FlowId(2))),
            (4, Event::RxDone(FlowId::new(0))),
            (3, Event::SesSend(VcId::new(5))),
        ];
        let mut a = EventQueue::new();
        a.push(1, Event::ProbeTick);
        assert_eq!(a.next_until(1), Some((1, Event::ProbeTick)));
        let mut fresh = EventQueue::new();
        for (t, e) in later {
            a.push(t, e);
            fresh.push(t, e);
        }
        assert_eq!(drain(&mut a), drain(&mut fresh));
    }
}
