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

use crate::buffer::{Arrival, DropPolicy, DropReason, VcOccupancy, Verdict, COMMON_DROP_REASONS};
use crate::cell::Cell;
use crate::engine::time::NEVER;
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

    // Fifo mode: the transmitter finishes the last accepted cell at
    // free_at + excess x cell time. A slow link behind a fast one can hold
    // a backlog longer than `u64` counts picoseconds: free_at stops below
    // NEVER (after every run's end) and `excess` counts the cells beyond,
    // so the cells in the port are still counted exactly, in u64 on the
    // hot path. The departures handed out are clamped to NEVER.
    free_at: Time,
    excess: u64,
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
    /// Cells dropped, by reason: the reasons every port reports, then any
    /// other its policy gave, in the order they first occurred.
    pub drops: Vec<(DropReason, u64)>,
    /// The cells of each VC in the port, when its policy reads them or a
    /// probe asked (None otherwise).
    vcs: VcOccupancy,
    /// True when `vcs` is kept (asked for by the policy or a probe).
    tracking: bool,
    /// FIFO mode with `vcs`: the accepted cells still in the port, as (end
    /// of transmission, VC), in order.
    leaving: VecDeque<(Time, u32)>,
    /// Largest number of waiting cells seen.
    pub max_queue: u32,
    /// FIFO mode under plain tail drop with nothing tracked per VC: the
    /// port decides from the time its backlog takes to send (no division
    /// per cell). A cell is dropped when the backlog exceeds `full_ps`
    /// (capacity x cell time), and `max_queue` grows when it exceeds
    /// `max_queue_ps` (max_queue x cell time). Cleared for good once a cell
    /// waits beyond NEVER (`excess` > 0), which the backlog's time cannot
    /// tell.
    tail_fast: bool,
    full_ps: u64,
    max_queue_ps: u64,
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
            excess: 0,
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
            drops: COMMON_DROP_REASONS.iter().map(|&r| (r, 0)).collect(),
            vcs: VcOccupancy::EMPTY,
            tracking: false,
            leaving: VecDeque::new(),
            max_queue: 0,
            tail_fast: false,
            full_ps: 0,
            max_queue_ps: 0,
        }
        .with_tail_fast()
    }

    /// Sets `tail_fast` (and `full_ps`) when the port qualifies: FIFO, plain
    /// tail drop, a buffer of at least one cell whose backlog time fits in
    /// u64 (a smaller or larger one takes the general path), no per-VC
    /// counts.
    fn with_tail_fast(mut self) -> Self {
        let full = self.capacity as u128 * self.cell_time_ps as u128;
        self.tail_fast = self.mode == PortMode::Fifo
            && self.policy.is_tail_drop()
            && !self.tracking
            && self.capacity >= 1
            && full <= NEVER as u128;
        self.full_ps = full.min(NEVER as u128) as u64;
        self
    }

    /// Cells in the port at `now` (waiting and in service).
    #[inline]
    fn fifo_in_port(&self, now: Time) -> u64 {
        // `excess` is 0 unless free_at lies past every run's end.
        let ahead = if self.free_at > now {
            (self.free_at - now).div_ceil(self.cell_time_ps)
        } else {
            0
        };
        ahead + self.excess
    }

    /// Fifo mode: when the last accepted cell finishes, exactly.
    fn fifo_end(&self) -> u128 {
        self.free_at as u128 + self.excess as u128 * self.cell_time_ps as u128
    }

    /// Cells waiting (not counting the one in service) at `now`; an
    /// unlimited buffer counts up to `u32::MAX`.
    pub fn occupancy(&self, now: Time) -> u32 {
        match self.mode {
            PortMode::Fifo => {
                let waiting = self.fifo_in_port(now).saturating_sub(1);
                u32::try_from(waiting).unwrap_or(u32::MAX)
            }
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

    /// Keeps the cells of each VC (`n_vcs` of them) in the port, from now on
    /// (call before any cell arrives).
    pub fn track_vcs(&mut self, n_vcs: usize) {
        self.vcs = VcOccupancy::new(n_vcs);
        self.tracking = true;
        self.tail_fast = false;
    }

    /// True when the port's policy reads its cells per VC.
    pub fn policy_needs_vcs(&self) -> bool {
        self.policy.needs_vc_occupancy()
    }

    /// The cells of each VC in the port at `now` (kept only when asked for
    /// with [`Port::track_vcs`]).
    pub fn vc_occupancy(&mut self, now: Time) -> Option<&VcOccupancy> {
        self.settle_leaving(now);
        self.tracking.then_some(&self.vcs)
    }

    /// FIFO mode: takes the cells whose transmission ended by `now` out of
    /// the per-VC counts.
    #[inline]
    fn settle_leaving(&mut self, now: Time) {
        while let Some(&(end, vc)) = self.leaving.front() {
            if end > now {
                break;
            }
            self.leaving.pop_front();
            self.vcs.remove(vc);
        }
    }

    #[inline(always)]
    fn judge(&mut self, cell: &Cell, occupancy: u32) -> bool {
        self.cells_in += 1;
        let arrival = Arrival {
            cell,
            occupancy,
            capacity: self.capacity,
            vcs: &self.vcs,
        };
        match self.policy.admit(&arrival) {
            Verdict::Accept => {
                self.cells_accepted += 1;
                if self.tracking {
                    self.vcs.add(cell.vc);
                }
                true
            }
            Verdict::Drop(reason) => {
                match self.drops.iter_mut().find(|(r, _)| *r == reason) {
                    Some((_, n)) => *n += 1,
                    None => self.drops.push((reason, 1)),
                }
                false
            }
        }
    }

    /// True when `fifo_arrive` decides as `fifo_arrive_tail` does, without
    /// looking at the cell (a FIFO port under plain tail drop, untracked,
    /// with no cell waiting beyond NEVER).
    #[inline(always)]
    pub(crate) fn tail_now(&self) -> bool {
        debug_assert!(!self.tail_fast || self.excess == 0);
        self.tail_fast
    }

    /// Fifo mode: offers `cell` at `now`; returns the time its transmission
    /// ends, or None if it was dropped.
    #[inline]
    pub fn fifo_arrive(&mut self, now: Time, cell: &Cell) -> Option<Time> {
        debug_assert_eq!(self.mode, PortMode::Fifo);
        if self.tail_now() {
            return self.fifo_arrive_tail(now);
        }
        let in_port = self.fifo_in_port(now);
        // Occupancy as seen by the arriving cell: cells waiting behind the
        // one in service.
        let occupancy = u32::try_from(in_port.saturating_sub(1)).unwrap_or(u32::MAX);
        self.settle_leaving(now);
        if !self.judge(cell, occupancy) {
            return None;
        }
        if in_port > 0 {
            // It waits behind `occupancy` others (an idle port sends it at
            // once). Every policy accepts only below the capacity, at most
            // u32::MAX, so the sum fits.
            self.max_queue = self.max_queue.max(occupancy + 1);
        }
        let start = self.free_at.max(now);
        self.wait_sum_ps += (start - now) as u128;
        // start <= NEVER: the sum cannot overflow. While cells wait beyond
        // NEVER, free_at + cell time lies past it too.
        let end = start + self.cell_time_ps;
        let end = if end <= NEVER {
            self.free_at = end;
            end
        } else {
            self.fifo_arrive_beyond_never()
        };
        if self.tracking {
            self.leaving.push_back((end, cell.vc));
        }
        Some(end)
    }

    /// `fifo_arrive` under plain tail drop: the same decisions and counts,
    /// from the backlog's time. With b = free_at - now (0 when idle) the
    /// cells in the port are ceil(b / cell time), the waiting ones one
    /// fewer: the buffer is full when b > capacity x cell time, and the
    /// cell waits behind more than max_queue cells when b > max_queue x
    /// cell time.
    #[inline(always)]
    pub(crate) fn fifo_arrive_tail(&mut self, now: Time) -> Option<Time> {
        self.cells_in += 1;
        let backlog = self.free_at.saturating_sub(now);
        if backlog > self.full_ps {
            // COMMON_DROP_REASONS starts with TAIL.
            self.drops[0].1 += 1;
            return None;
        }
        if backlog > self.max_queue_ps {
            self.new_max_queue(backlog);
        }
        self.cells_accepted += 1;
        self.wait_sum_ps += backlog as u128;
        let end = now + backlog + self.cell_time_ps;
        if end <= NEVER {
            self.free_at = end;
            Some(end)
        } else {
            Some(self.fifo_arrive_beyond_never())
        }
    }

    /// A cell waits behind more cells than ever: the new maximum.
    #[cold]
    #[inline(never)]
    fn new_max_queue(&mut self, backlog: Time) {
        let in_port = backlog.div_ceil(self.cell_time_ps);
        self.max_queue = u32::try_from(in_port).unwrap_or(u32::MAX);
        self.max_queue_ps =
            (self.max_queue as u128 * self.cell_time_ps as u128).min(u64::MAX as u128) as u64;
    }

    /// The rest of `fifo_arrive` for a cell that leaves after NEVER.
    #[cold]
    #[inline(never)]
    fn fifo_arrive_beyond_never(&mut self) -> Time {
        // It waited `excess` cell times more than free_at tells.
        self.wait_sum_ps += self.excess as u128 * self.cell_time_ps as u128;
        self.excess += 1;
        // From now on the backlog's time no longer tells the cells in the
        // port (`excess` only grows): the general step decides.
        self.tail_fast = false;
        NEVER
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
        if self.tracking {
            self.vcs.remove(done.vc);
        }
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
                total - self.fifo_end().saturating_sub(now as u128)
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
        self.drops.iter().map(|(_, n)| n).sum()
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
                let n = self.fifo_in_port(now) as u128;
                let (now, end) = (now as u128, self.fifo_end());
                for k in 1..=n {
                    let start = end - k * self.cell_time_ps as u128;
                    if start > now {
                        area -= start - now;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atm::CELL_BITS;
    use crate::buffer::tail::TailDrop;
    use crate::engine::time::cell_time_ps;

    #[test]
    fn a_backlog_longer_than_u64_picoseconds_is_counted_exactly() {
        // The slowest ATM link (1 kbit/s with SONET: 2.27 cells/s, 0.44 s a
        // cell) fed 5 x 10^7 cells at once: they would leave over 2.2 x 10^19
        // ps, more than u64 holds. The count of cells stays exact; the
        // departures past NEVER are handed out as NEVER.
        let ct = cell_time_ps(1e3 * 26.0 / 27.0 / CELL_BITS);
        let mut p = Port::new(ct, u32::MAX, PortMode::Fifo, Box::new(TailDrop));
        let n = 50_000_000u64;
        let cell = Cell::data(0, 0, 1, true);
        let mut last = 0;
        for _ in 0..n {
            last = p.fifo_arrive(0, &cell).expect("unlimited");
        }
        assert!(n as u128 * ct as u128 > u64::MAX as u128);
        assert_eq!(last, NEVER);
        assert_eq!(p.cells_in_port(0), n);
        assert_eq!(p.occupancy(0), (n - 1) as u32);
        assert_eq!(p.max_queue, (n - 1) as u32);
        // One cell time later, one has left.
        assert_eq!(p.cells_out(ct), 1);
        assert_eq!(p.busy_ps(ct), ct as u128);
    }

    #[test]
    fn the_tail_drop_shortcut_hands_over_when_cells_wait_beyond_never() {
        // Cells offered just before NEVER to a 10-cell tail-drop port: the
        // third would leave after NEVER. The shortcut port (deciding from
        // its backlog's time) then hands over to the general step for good;
        // a tracked port takes the general step throughout. Both give the
        // same departures, drops and counts.
        let ct: Time = 1000;
        let mut fast = Port::new(ct, 10, PortMode::Fifo, Box::new(TailDrop));
        let mut general = Port::new(ct, 10, PortMode::Fifo, Box::new(TailDrop));
        general.track_vcs(1);
        assert!(fast.tail_now() && !general.tail_now());
        let cell = Cell::data(0, 0, 1, true);
        let now = NEVER - 2500;
        for k in 0..14 {
            let (a, b) = (
                fast.fifo_arrive(now, &cell),
                general.fifo_arrive(now, &cell),
            );
            assert_eq!(a, b, "cell {k}");
            assert_eq!(fast.tail_now(), k < 2, "cell {k}");
            assert_eq!(fast.cells_in_port(now), general.cells_in_port(now));
            assert_eq!(fast.occupancy(now), general.occupancy(now));
        }
        assert_eq!(fast.cells_dropped(), general.cells_dropped());
        assert!(fast.cells_dropped() > 0);
        assert_eq!(fast.max_queue, general.max_queue);
        assert_eq!(fast.mean_queue(NEVER), general.mean_queue(NEVER));
    }

    #[test]
    fn the_cells_per_vc_always_equal_a_recount() {
        // Random arrivals of five VCs' cells into a FIFO port and a priority
        // port with 40-cell buffers: after each arrival, X_i, N_a and X match
        // a recount of the cells in the port.
        use crate::engine::RngStream;
        let ct: Time = 1000;
        for mode in [PortMode::Fifo, PortMode::Priority] {
            let mut p = Port::new(ct, 40, mode, Box::new(TailDrop));
            p.track_vcs(5);
            let mut rng = RngStream::new(3, 0);
            // The cells in the port, as (end of transmission, VC), for the
            // FIFO port; the priority port is driven by its own events.
            let mut fifo_in: Vec<(Time, u32)> = Vec::new();
            let mut prio_in: Vec<u32> = Vec::new();
            let mut tx_end: Option<Time> = None;
            let mut now: Time = 0;
            for _ in 0..20_000 {
                now += (rng.exponential(900.0)) as Time;
                let vc = rng.int_between(0, 4) as u32;
                let cell = Cell::data(vc, 0, 1, true);
                match mode {
                    PortMode::Fifo => {
                        if let Some(end) = p.fifo_arrive(now, &cell) {
                            fifo_in.push((end, vc));
                        }
                        fifo_in.retain(|&(end, _)| end > now);
                    }
                    PortMode::Priority => {
                        while let Some(t) = tx_end.filter(|&t| t <= now) {
                            let (done, next) = p.prio_tx_done(t);
                            let k = prio_in.iter().position(|&v| v == done.vc).unwrap();
                            prio_in.remove(k);
                            tx_end = next;
                        }
                        match p.prio_arrive(now, cell, 2) {
                            PriorityArrival::Started(end) => {
                                tx_end = Some(end);
                                prio_in.push(vc);
                            }
                            PriorityArrival::Queued => prio_in.push(vc),
                            PriorityArrival::Dropped => {}
                        }
                    }
                }
                let listed: Vec<u32> = match mode {
                    PortMode::Fifo => fifo_in.iter().map(|&(_, v)| v).collect(),
                    PortMode::Priority => prio_in.clone(),
                };
                let occ = p.vc_occupancy(now).unwrap().clone();
                for v in 0..5u32 {
                    assert_eq!(occ.of(v), listed.iter().filter(|&&x| x == v).count() as u32);
                }
                assert_eq!(occ.total as usize, listed.len());
                let active = (0..5u32).filter(|v| listed.contains(v)).count() as u32;
                assert_eq!(occ.active, active);
                assert_eq!(occ.total as u64, p.cells_in_port(now));
            }
            assert!(p.cells_dropped() > 0, "{mode:?}: the buffer never filled");
        }
    }
}
