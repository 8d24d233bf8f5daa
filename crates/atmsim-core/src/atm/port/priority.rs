//! The port that mixes classes: strict priority queues, a transmit event
//! per cell (see the module above).

use super::{time_average, PortCore};
use crate::buffer::VcOccupancy;
use crate::cell::Cell;
use crate::engine::Time;
use std::collections::VecDeque;

/// Number of priority levels (CBR, VBR, the rest).
pub const N_PRIORITIES: usize = 3;

/// What happened to a cell offered to a priority port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PriorityArrival {
    /// Dropped by the policy.
    Dropped,
    /// Queued behind others.
    Queued,
    /// The port was idle: transmission starts now and ends at this time.
    Started(Time),
}

/// A port whose cells are of several classes: one FIFO queue per priority
/// level, served in strict priority, one transmit event per cell.
pub struct PriorityPort {
    core: PortCore,
    queues: [VecDeque<Cell>; N_PRIORITIES],
    in_service: Option<Cell>,
    /// When the cell in service started.
    tx_start: Time,
    /// Cells in the queues (not counting the one in service).
    waiting: u32,
    /// The integral of `waiting` up to `last_change`, cell x ps.
    area_ps: u128,
    last_change: Time,
    /// Transmission time of the cells that finished, ps.
    busy_done_ps: u128,
}

impl PriorityPort {
    /// A priority port around `core`.
    pub fn new(core: PortCore) -> Self {
        PriorityPort {
            core,
            queues: Default::default(),
            in_service: None,
            tx_start: 0,
            waiting: 0,
            area_ps: 0,
            last_change: 0,
            busy_done_ps: 0,
        }
    }

    /// The part every port shares: counters, buffer size, cell time.
    #[inline]
    pub fn core(&self) -> &PortCore {
        &self.core
    }

    /// Cells waiting (not counting the one in service).
    pub fn occupancy(&self) -> u32 {
        self.waiting
    }

    /// Cells waiting in the lowest-priority (ABR/UBR/GFR) queue.
    pub fn abr_waiting(&self) -> u32 {
        self.queues[N_PRIORITIES - 1].len() as u32
    }

    /// Cells in the port, the one in service included.
    pub fn cells_in_port(&self) -> u64 {
        self.waiting as u64 + self.in_service.is_some() as u64
    }

    /// Keeps the cells of each VC (`n_vcs` of them) in the port, from now on
    /// (call before any cell arrives).
    pub fn track_vcs(&mut self, n_vcs: usize) {
        self.core.track_vcs(n_vcs);
    }

    /// The cells of each VC in the port (kept only when asked for with
    /// [`PriorityPort::track_vcs`]).
    pub fn vc_occupancy(&self) -> Option<&VcOccupancy> {
        self.core.vcs()
    }

    /// Adds the queue's area since the last change.
    fn account(&mut self, now: Time) {
        self.area_ps += self.waiting as u128 * (now - self.last_change) as u128;
        self.last_change = now;
    }

    /// Offers `cell` of priority `prio` at `now`.
    pub fn arrive(&mut self, now: Time, cell: Cell, prio: usize) -> PriorityArrival {
        let occupancy = self.waiting;
        if !self.core.judge(&cell, occupancy) {
            return PriorityArrival::Dropped;
        }
        self.account(now);
        if self.in_service.is_none() {
            // Straight into service: it never waits.
            self.in_service = Some(cell);
            self.tx_start = now;
            return PriorityArrival::Started(now + self.core.cell_time_ps);
        }
        self.queues[prio].push_back(cell);
        self.waiting += 1;
        self.core.max_queue = self.core.max_queue.max(self.waiting);
        PriorityArrival::Queued
    }

    /// The transmission that ends at `now` is done. Returns the cell that
    /// left and, if another one started, its end time.
    pub fn tx_done(&mut self, now: Time) -> (Cell, Option<Time>) {
        self.account(now);
        let done = self.in_service.take().expect("tx done on an idle port");
        self.core.left(done.vc);
        self.busy_done_ps += (now - self.tx_start) as u128;
        let next = self.queues.iter_mut().find_map(|q| q.pop_front());
        let end = next.map(|c| {
            self.waiting -= 1;
            self.in_service = Some(c);
            self.tx_start = now;
            now + self.core.cell_time_ps
        });
        (done, end)
    }

    /// Transmission time spent up to `now`, ps.
    pub fn busy_ps(&self, now: Time) -> u128 {
        let current = if self.in_service.is_some() {
            (now - self.tx_start) as u128
        } else {
            0
        };
        self.busy_done_ps + current
    }

    /// Time-average number of waiting cells over [0, now].
    pub fn mean_queue(&self, now: Time) -> f64 {
        let area = self.area_ps + self.waiting as u128 * (now - self.last_change) as u128;
        time_average(area, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::tail::TailDrop;

    #[test]
    fn a_higher_class_goes_first_and_each_cell_takes_a_transmit_event() {
        // Cells of 1000 ps into a 3-cell buffer: VC 0 (lowest class) starts
        // at once, then VC 1 (lowest), VC 2 (VBR) and VC 3 (CBR) queue
        // behind it; a fourth waiting cell is dropped. Each end of
        // transmission hands over the next cell, CBR before VBR before the
        // rest, FIFO within a class.
        let mut p = PriorityPort::new(PortCore::new(1000, 3, Box::new(TailDrop)));
        let c = |vc| Cell::data(vc, 0, 1, true);
        assert_eq!(p.arrive(0, c(0), 2), PriorityArrival::Started(1000));
        assert_eq!(p.arrive(100, c(1), 2), PriorityArrival::Queued);
        assert_eq!(p.arrive(200, c(2), 1), PriorityArrival::Queued);
        assert_eq!(p.arrive(300, c(3), 0), PriorityArrival::Queued);
        assert_eq!(p.arrive(400, c(4), 0), PriorityArrival::Dropped);
        assert_eq!(
            (p.occupancy(), p.abr_waiting(), p.cells_in_port()),
            (3, 1, 4)
        );
        let mut order = Vec::new();
        let mut end = Some(1000);
        while let Some(t) = end {
            let (done, next) = p.tx_done(t);
            order.push((t, done.vc));
            end = next;
        }
        assert_eq!(order, [(1000, 0), (2000, 3), (3000, 2), (4000, 1)]);
        assert_eq!(p.cells_in_port(), 0);
        assert_eq!(p.core().max_queue, 3);
        assert_eq!((p.core().cells_in, p.core().cells_accepted), (5, 4));
        assert_eq!(p.busy_ps(5000), 4000);
        // Waiting cells: 1 from 100, 2 from 200, 3 from 300 to 1000, then
        // one fewer each cell time: 100 + 200 + 2100 + 2000 + 1000 ps.
        assert_eq!(p.mean_queue(5000), 5400.0 / 5000.0);
    }
}
