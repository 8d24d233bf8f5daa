//! A unidirectional link: bit rate, propagation delay, and the cells in
//! flight on it.
//!
//! Links are FIFO with a constant delay, so the cells on a link are kept in
//! a queue in arrival order and only the head's arrival is an event: the
//! event heap stays small however long the link.

use crate::cell::Cell;
use crate::engine::Time;
use std::collections::VecDeque;

/// A unidirectional link from node `from` to node `to`.
pub struct Link {
    /// Name given in the scenario.
    pub name: String,
    /// Node the link leaves (its output port lives there).
    pub from: u32,
    /// Node the link reaches.
    pub to: u32,
    /// Cell rate, cells/s.
    pub cell_rate_cps: f64,
    /// Propagation delay, ps.
    pub delay_ps: Time,
    /// Cells in flight (or, behind a FIFO port, already scheduled), with the
    /// time each reaches `to`, earliest first: those that go on into ports
    /// of slot `slot_ps` there (or that end there); cells for ports of
    /// another slot wait in a [`Lane`] of their own.
    pub in_flight: VecDeque<(Time, Cell)>,
    /// Slotted contention: the slots of the output ports into which the
    /// cells of `in_flight` go on at `to`; each one enters its port at the
    /// first multiple of their cell time at or after its arrival (a slot of
    /// 0: at its arrival, as cells that end at `to` do, and every cell
    /// under continuous contention).
    pub slot: SlotClock,
    /// True when every VC on the link ends at `to` in a passive sink: its
    /// arrivals need no events. A cell arriving before the next instant the
    /// sinks are read is delivered as it goes on the link; the others are
    /// drained in bulk (at probe ticks and at the end). Both give the same
    /// results as delivering each cell at its arrival.
    pub lazy: bool,
    /// A lazy link hands its arrived cells on once `in_flight` holds this
    /// many (then this many more than it kept): in batches, and with the
    /// queue bounded by the cells in the port and on the wire plus a batch.
    pub drain_at: usize,
    /// True when every VC whose cells go on the link ends at `to` (a
    /// fast path, see `sim::fast_paths`): a data cell that does not end its
    /// frame is then handed to its end before its arrival when nothing can
    /// read that end in between, instead of taking an event.
    pub quiet_end: bool,
}

/// Cells a lazy link lets pile up before it hands on the arrived ones.
pub const LAZY_BATCH: usize = 256;

/// The cells on a link that go on into output ports whose slot differs
/// from the slot of the link's own queue (a link into a switch whose
/// output ports run at different rates). Each queue's arrival times,
/// rounded up to its slot, then grow along it, so that only its head needs
/// an event. A VC's cells all take one queue: their order is kept.
pub struct Lane {
    /// The link (the ATM fabric's index).
    pub link: u32,
    /// The slots of the ports the lane's cells go on into.
    pub slot: SlotClock,
    /// The cells, as in [`Link::in_flight`].
    pub in_flight: VecDeque<(Time, Cell)>,
}

/// When a cell that reaches a switch at `t` enters an output port of slot
/// `slot_ps` (0: continuous contention, at `t`): at the end of the slot it
/// arrived in, where it contends with every cell that reached that port
/// within the same slot (M. J. Karol, M. G. Hluchyj and S. P. Morgan,
/// "Input Versus Output Queueing on a Space-Division Packet Switch", IEEE
/// Trans. Commun. 35(12), 1987: the cells for one output in one slot are
/// queued in random order). A port's slots run from time 0.
#[inline]
pub fn slot_arrival(t: Time, slot_ps: Time) -> Time {
    if slot_ps == 0 {
        t
    } else {
        t.div_ceil(slot_ps).saturating_mul(slot_ps)
    }
}

/// The slot ends of one queue of a link ([`slot_arrival`] of its arrivals,
/// which come in time order): the next arrival usually falls in the slot of
/// the one before or in the next, which need no division.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlotClock {
    /// The slot, ps (0: continuous).
    pub slot_ps: Time,
    /// The end of the last arrival's slot: a multiple of `slot_ps`.
    last_end: Time,
}

impl SlotClock {
    /// Slots of `slot_ps` (0: continuous time).
    pub fn new(slot_ps: Time) -> Self {
        SlotClock {
            slot_ps,
            last_end: 0,
        }
    }

    /// [`slot_arrival`] of `t`, no earlier than the arrival before it.
    #[inline]
    pub fn end_for(&mut self, t: Time) -> Time {
        let slot = self.slot_ps;
        if slot == 0 {
            return t;
        }
        let last = self.last_end;
        let end = if t <= last && t + slot > last {
            last
        } else if t > last && t <= last.saturating_add(slot) {
            last + slot
        } else {
            slot_arrival(t, slot)
        };
        self.last_end = end;
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_clock_gives_the_end_of_each_arrivals_slot() {
        // Arrivals in time order, in the same slot, the next, and after
        // gaps: the same as the division, every time.
        let mut clock = SlotClock::new(10);
        let mut t = 0;
        let mut step = 1u64;
        for _ in 0..10_000 {
            step = step
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            t += (step >> 33) % 37;
            assert_eq!(clock.end_for(t), slot_arrival(t, 10), "at {t}");
        }
        assert_eq!(SlotClock::new(0).end_for(7), 7);
    }

    #[test]
    fn an_arrival_waits_for_the_end_of_its_slot() {
        assert_eq!(slot_arrival(7, 0), 7);
        assert_eq!(slot_arrival(0, 10), 0);
        assert_eq!(slot_arrival(1, 10), 10);
        assert_eq!(slot_arrival(10, 10), 10);
        assert_eq!(slot_arrival(11, 10), 20);
        assert_eq!(slot_arrival(u64::MAX - 1, 10), u64::MAX);
    }
}
