//! The event queue: a binary min-heap ordered by (time, sequence number).
//!
//! The sequence number is assigned at scheduling, so two events at the same
//! time run in the order they were scheduled: runs are deterministic.

use super::time::Time;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What an event means; the index names the component it wakes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// A traffic source emits its next cell or frame.
    SourceEmit(u32),
    /// The head cell of a link's in-flight queue reaches the far node.
    LinkArrival(u32),
    /// An IP port fed by several links takes, in time order, every packet
    /// they bring within its look-ahead (see `sim`).
    IpBatch(u32),
    /// A priority-scheduled port finishes transmitting a cell.
    PortTxDone(u32),
    /// Sample the probes.
    ProbeTick,
    /// A TCP flow starts sending.
    FlowStart(u32),
    /// The global coarse TCP timer of one granularity ticks.
    TcpTick(u32),
    /// A flow's fine retransmission or delayed-ACK deadline may have come.
    FlowTimer(u32),
    /// A flow's receiver finished processing a segment.
    RxDone(u32),
    /// An ABR source end system may send its next in-rate cell.
    SesSend(u32),
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

    /// An entry placed by `order` after the sequenced ones of its time
    /// (sequence numbers stay far below 2^63).
    #[inline]
    fn ordered(time: Time, event: Event, order: u32) -> Self {
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

/// Pending events, earliest first.
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<Entry>>,
    next_seq: u64,
}

impl EventQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedules `event` at `time`.
    pub fn push(&mut self, time: Time, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Reverse(Entry::new(time, seq, event)));
    }

    /// The earliest pending event, if its time is at most `until`.
    pub fn peek_until(&self, until: Time) -> Option<(Time, Event)> {
        match self.heap.peek() {
            Some(Reverse(e)) if e.time() <= until => Some((e.time(), e.event)),
            _ => None,
        }
    }

    /// Schedules `event` at `time` in a fixed place among the events of the
    /// same time: after every event scheduled with `push`, and by `order`
    /// among those scheduled with `push_ordered` (at most one pending per
    /// `order` and time). Their order then does not depend on when they
    /// were scheduled, which eager steps change.
    pub fn push_ordered(&mut self, time: Time, event: Event, order: u32) {
        self.heap.push(Reverse(Entry::ordered(time, event, order)));
    }

    /// `replace_top` with the place of `push_ordered`.
    pub fn replace_top_ordered(&mut self, time: Time, event: Event, order: u32) {
        self.replace_top_entry(Entry::ordered(time, event, order));
    }

    /// Removes the earliest event (the one `peek_until` returned).
    pub fn pop(&mut self) {
        self.heap.pop();
    }

    /// Replaces the earliest event by `event` at `time` with one sift instead
    /// of a pop and a push: the common case of a component rescheduling
    /// itself.
    pub fn replace_top(&mut self, time: Time, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.replace_top_entry(Entry::new(time, seq, event));
    }

    #[inline]
    fn replace_top_entry(&mut self, entry: Entry) {
        if self.heap.is_empty() {
            self.heap.push(Reverse(entry));
        } else if let Some(mut top) = self.heap.peek_mut() {
            // PeekMut sifts the new top down when it is dropped.
            *top = Reverse(entry);
        }
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_then_fifo_at_equal_times() {
        let mut q = EventQueue::new();
        q.push(20, Event::ProbeTick);
        q.push(10, Event::SourceEmit(1));
        q.push(10, Event::SourceEmit(0));
        let mut seen = vec![];
        while let Some((t, e)) = q.peek_until(u64::MAX) {
            q.pop();
            seen.push((t, e));
        }
        assert_eq!(
            seen,
            vec![
                (10, Event::SourceEmit(1)),
                (10, Event::SourceEmit(0)),
                (20, Event::ProbeTick)
            ]
        );
    }

    #[test]
    fn replace_top_keeps_order() {
        let mut q = EventQueue::new();
        q.push(5, Event::SourceEmit(0));
        q.push(7, Event::SourceEmit(1));
        q.replace_top(9, Event::SourceEmit(0));
        assert_eq!(q.peek_until(100), Some((7, Event::SourceEmit(1))));
        q.pop();
        assert_eq!(q.peek_until(8), None);
        assert_eq!(q.peek_until(9), Some((9, Event::SourceEmit(0))));
    }

    #[test]
    fn ordered_events_follow_the_sequenced_ones_by_their_order() {
        let mut q = EventQueue::new();
        q.push_ordered(10, Event::LinkArrival(7), 7);
        q.push_ordered(10, Event::LinkArrival(2), 2);
        q.push(10, Event::ProbeTick);
        q.push_ordered(9, Event::LinkArrival(9), 9);
        q.push(10, Event::FlowTimer(0));
        let mut seen = vec![];
        while let Some((t, e)) = q.peek_until(u64::MAX) {
            q.pop();
            seen.push((t, e));
        }
        assert_eq!(
            seen,
            vec![
                (9, Event::LinkArrival(9)),
                (10, Event::ProbeTick),
                (10, Event::FlowTimer(0)),
                (10, Event::LinkArrival(2)),
                (10, Event::LinkArrival(7)),
            ]
        );
    }
}
