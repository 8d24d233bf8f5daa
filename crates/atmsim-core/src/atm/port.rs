//! A switch (or host adapter) output port: one shared cell buffer feeding
//! one link.
//!
//! Two implementations of the same behaviour:
//! - [`PortMode::Fifo`] for a port whose cells are all of one priority
//!   class: each cell's departure is computed when it arrives (Lindley:
//!   start = max(arrival, free_at), depart = start + cell time), so the port
//!   needs no transmit event. The cells waiting at time t are the accepted
//!   cells not yet started: since they are served back to back,
//!   ceil((free_at - t) / cell time) are in the port, one of them in service.
//! - [`PortMode::Priority`] for a port that mixes classes: per-class FIFO
//!   queues served in strict priority (CBR > VBR > ABR/UBR/GFR), one
//!   transmit event per cell.
//!
//! The queue length is the number of cells waiting, not counting the cell
//! being transmitted; the buffer size bounds that number.

use super::cell::Cell;
use crate::buffer::{DropPolicy, Verdict, N_DROP_REASONS};
use crate::engine::Time;
use std::collections::VecDeque;

/// How a port schedules its cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortMode {
    /// One class: departures computed on arrival, no events.
    Fifo,
    /// Several classes: strict priority, a transmit event per cell.
    Priority,
}

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

/// An output port with its buffer, policy, scheduler state and counters.
pub struct Port {
    /// Transmission time of one cell on the port's link, ps.
    pub cell_time_ps: Time,
    /// Buffer size in cells (`u32::MAX` = unlimited).
    pub capacity: u32,
    /// Scheduling mode.
    pub mode: PortMode,
    policy: Box<dyn DropPolicy>,

    // Fifo mode: time the transmitter finishes the last accepted cell.
    free_at: Time,
    // Sum over accepted cells of (start - arrival), ps: the integral of the
    // queue length (Little's law), clipped at the end of the run.
    wait_sum_ps: u128,

    // Priority mode.
    queues: [VecDeque<Cell>; N_PRIORITIES],
    in_service: Option<Cell>,
    tx_start: Time,
    waiting: u32,
    area_ps: u128,
    last_change: Time,
    busy_done_ps: u128,

    /// Cells offered to the port.
    pub cells_in: u64,
    /// Cells accepted into the buffer.
    pub cells_accepted: u64,
    /// Cells dropped, by [`crate::buffer::DropReason`].
    pub drops: [u64; N_DROP_REASONS],
    /// Largest number of waiting cells seen.
    pub max_queue: u32,
}

impl Port {
    /// A port on a link of `cell_time_ps` per cell.
    pub fn new(
        cell_time_ps: Time,
        capacity: u32,
        mode: PortMode,
        policy: Box<dyn DropPolicy>,
    ) -> Self {
        Port {
            cell_time_ps,
            capacity,
            mode,
            policy,
            free_at: 0,
            wait_sum_ps: 0,
            queues: Default::default(),
            in_service: None,
            tx_start: 0,
            waiting: 0,
            area_ps: 0,
            last_change: 0,
            busy_done_ps: 0,
            cells_in: 0,
            cells_accepted: 0,
            drops: [0; N_DROP_REASONS],
            max_queue: 0,
        }
    }

    /// Cells in the port at `now` (waiting and in service).
    #[inline]
    fn fifo_in_port(&self, now: Time) -> u64 {
        if self.free_at > now {
            (self.free_at - now).div_ceil(self.cell_time_ps)
        } else {
            0
        }
    }

    /// Cells waiting (not counting the one in service) at `now`.
    pub fn occupancy(&self, now: Time) -> u32 {
        match self.mode {
            PortMode::Fifo => self.fifo_in_port(now).saturating_sub(1) as u32,
            PortMode::Priority => self.waiting,
        }
    }

    /// Cells waiting in the lowest-priority (ABR/UBR/GFR) queue at `now`.
    pub fn abr_waiting(&self, now: Time) -> u32 {
        match self.mode {
            PortMode::Fifo => self.occupancy(now),
            PortMode::Priority => self.queues[N_PRIORITIES - 1].len() as u32,
        }
    }

    /// Cells in the port at `now`, the one in service included.
    pub fn cells_in_port(&self, now: Time) -> u64 {
        match self.mode {
            PortMode::Fifo => self.fifo_in_port(now),
            PortMode::Priority => self.waiting as u64 + self.in_service.is_some() as u64,
        }
    }

    #[inline]
    fn judge(&mut self, cell: &Cell, occupancy: u32) -> bool {
        self.cells_in += 1;
        match self.policy.admit(cell, occupancy, self.capacity) {
            Verdict::Accept => {
                self.cells_accepted += 1;
                true
            }
            Verdict::Drop(reason) => {
                self.drops[reason as usize] += 1;
                false
            }
        }
    }

    /// Fifo mode: offers `cell` at `now`; returns the time its transmission
    /// ends, or None if it was dropped.
    #[inline]
    pub fn fifo_arrive(&mut self, now: Time, cell: &Cell) -> Option<Time> {
        debug_assert_eq!(self.mode, PortMode::Fifo);
        let in_port = self.fifo_in_port(now);
        // Occupancy as seen by the arriving cell: cells waiting behind the
        // one in service.
        let occupancy = in_port.saturating_sub(1) as u32;
        if !self.judge(cell, occupancy) {
            return None;
        }
        if in_port > 0 {
            // It waits behind `occupancy` others (an idle port sends it at once).
            self.max_queue = self.max_queue.max(occupancy + 1);
        }
        let start = self.free_at.max(now);
        self.wait_sum_ps += (start - now) as u128;
        self.free_at = start + self.cell_time_ps;
        Some(self.free_at)
    }

    fn prio_account(&mut self, now: Time) {
        self.area_ps += self.waiting as u128 * (now - self.last_change) as u128;
        self.last_change = now;
    }

    /// Priority mode: offers `cell` of priority `prio` at `now`.
    pub fn prio_arrive(&mut self, now: Time, cell: Cell, prio: usize) -> PriorityArrival {
        debug_assert_eq!(self.mode, PortMode::Priority);
        let occupancy = self.waiting;
        if !self.judge(&cell, occupancy) {
            return PriorityArrival::Dropped;
        }
        self.prio_account(now);
        if self.in_service.is_none() {
            // Straight into service: it never waits.
            self.in_service = Some(cell);
            self.tx_start = now;
            return PriorityArrival::Started(now + self.cell_time_ps);
        }
        self.queues[prio].push_back(cell);
        self.waiting += 1;
        self.max_queue = self.max_queue.max(self.waiting);
        PriorityArrival::Queued
    }

    /// Priority mode: the transmission that ends at `now` is done. Returns
    /// the cell that left and, if another one started, its end time.
    pub fn prio_tx_done(&mut self, now: Time) -> (Cell, Option<Time>) {
        self.prio_account(now);
        let done = self.in_service.take().expect("tx done on an idle port");
        self.busy_done_ps += (now - self.tx_start) as u128;
        let next = self.queues.iter_mut().find_map(|q| q.pop_front());
        let end = next.map(|c| {
            self.waiting -= 1;
            self.in_service = Some(c);
            self.tx_start = now;
            now + self.cell_time_ps
        });
        (done, end)
    }

    /// Transmission time spent up to `now`, ps.
    pub fn busy_ps(&self, now: Time) -> u128 {
        match self.mode {
            PortMode::Fifo => {
                let total = self.cells_accepted as u128 * self.cell_time_ps as u128;
                total - self.free_at.saturating_sub(now) as u128
            }
            PortMode::Priority => {
                let current = if self.in_service.is_some() {
                    (now - self.tx_start) as u128
                } else {
                    0
                };
                self.busy_done_ps + current
            }
        }
    }

    /// Cells that finished transmission by `now`.
    pub fn cells_out(&self, now: Time) -> u64 {
        self.cells_accepted - self.cells_in_port(now)
    }

    /// Total dropped cells.
    pub fn cells_dropped(&self) -> u64 {
        self.drops.iter().sum()
    }

    /// Time-average number of waiting cells over [0, now].
    pub fn mean_queue(&self, now: Time) -> f64 {
        if now == 0 {
            return 0.0;
        }
        let area = match self.mode {
            PortMode::Fifo => {
                // Cells still waiting at `now` were charged their full wait;
                // remove the part after `now`. They start at free_at - k*ct.
                let mut area = self.wait_sum_ps;
                let n = self.fifo_in_port(now);
                for k in 1..=n {
                    let start = self.free_at - k * self.cell_time_ps;
                    if start > now {
                        area -= (start - now) as u128;
                    }
                }
                area
            }
            PortMode::Priority => {
                self.area_ps + self.waiting as u128 * (now - self.last_change) as u128
            }
        };
        area as f64 / now as f64
    }
}
