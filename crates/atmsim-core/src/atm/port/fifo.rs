//! The single-class port: each cell's departure computed on its arrival,
//! no transmit event (see the module above).

use super::{time_average, PortCore};
use crate::buffer::VcOccupancy;
use crate::cell::Cell;
use crate::engine::time::NEVER;
use crate::engine::Time;
use std::collections::VecDeque;

/// A port whose cells are all of one priority class, served FIFO; each
/// departure is computed when the cell arrives (Lindley's recursion).
pub struct FifoPort {
    core: PortCore,
    // The transmitter finishes the last accepted cell at free_at + excess x
    // cell time. A slow link behind a fast one can hold a backlog longer
    // than `u64` counts picoseconds: free_at stops below NEVER (after every
    // run's end) and `excess` counts the cells beyond, so the cells in the
    // port are still counted exactly, in u64 on the hot path. The
    // departures handed out are clamped to NEVER.
    free_at: Time,
    excess: u64,
    // Sum over accepted cells of (start - arrival), ps: the integral of the
    // queue length (Little's law), clipped at the end of the run.
    wait_sum_ps: u128,
    /// With the cells per VC kept: the accepted cells still in the port, as
    /// (end of transmission, VC), in order.
    leaving: VecDeque<(Time, u32)>,
    /// Under plain tail drop with nothing tracked per VC: the port decides
    /// from the time its backlog takes to send (no division per cell). A
    /// cell is dropped when the backlog exceeds `full_ps` (capacity x cell
    /// time), and `max_queue` grows when it exceeds `max_queue_ps`
    /// (max_queue x cell time). Cleared for good once a cell waits beyond
    /// NEVER (`excess` > 0), which the backlog's time cannot tell.
    tail_fast: bool,
    full_ps: u64,
    max_queue_ps: u64,
}

impl FifoPort {
    /// A FIFO port around `core`.
    pub fn new(core: PortCore) -> Self {
        FifoPort {
            core,
            free_at: 0,
            excess: 0,
            wait_sum_ps: 0,
            leaving: VecDeque::new(),
            tail_fast: false,
            full_ps: 0,
            max_queue_ps: 0,
        }
        .with_tail_fast()
    }

    /// Sets `tail_fast` (and `full_ps`) when the port qualifies: plain tail
    /// drop, a buffer of at least one cell whose backlog time fits in u64 (a
    /// smaller or larger one takes the general path), no per-VC counts.
    fn with_tail_fast(mut self) -> Self {
        let c = &self.core;
        let full = c.capacity as u128 * c.cell_time_ps as u128;
        self.tail_fast =
            c.is_tail_drop() && !c.tracking && c.capacity >= 1 && full <= NEVER as u128;
        self.full_ps = full.min(NEVER as u128) as u64;
        self
    }

    /// The part every port shares: counters, buffer size, cell time.
    #[inline(always)]
    pub fn core(&self) -> &PortCore {
        &self.core
    }

    /// Cells in the port at `now` (waiting and in service).
    #[inline]
    pub fn cells_in_port(&self, now: Time) -> u64 {
        // `excess` is 0 unless free_at lies past every run's end.
        let ahead = if self.free_at > now {
            (self.free_at - now).div_ceil(self.core.cell_time_ps)
        } else {
            0
        };
        ahead + self.excess
    }

    /// When the last accepted cell finishes, exactly.
    fn end(&self) -> u128 {
        self.free_at as u128 + self.excess as u128 * self.core.cell_time_ps as u128
    }

    /// Cells waiting (not counting the one in service) at `now`; an
    /// unlimited buffer counts up to `u32::MAX`.
    pub fn occupancy(&self, now: Time) -> u32 {
        let waiting = self.cells_in_port(now).saturating_sub(1);
        u32::try_from(waiting).unwrap_or(u32::MAX)
    }

    /// Keeps the cells of each VC (`n_vcs` of them) in the port, from now on
    /// (call before any cell arrives); the tail-drop shortcut, which sees no
    /// cell, no longer applies.
    pub fn track_vcs(&mut self, n_vcs: usize) {
        self.core.track_vcs(n_vcs);
        self.tail_fast = false;
    }

    /// The cells of each VC in the port at `now` (kept only when asked for
    /// with [`FifoPort::track_vcs`]).
    pub fn vc_occupancy(&mut self, now: Time) -> Option<&VcOccupancy> {
        self.settle_leaving(now);
        self.core.vcs()
    }

    /// Takes the cells whose transmission ended by `now` out of the per-VC
    /// counts.
    #[inline]
    fn settle_leaving(&mut self, now: Time) {
        while let Some(&(end, vc)) = self.leaving.front() {
            if end > now {
                break;
            }
            self.leaving.pop_front();
            self.core.left(vc);
        }
    }

    /// True when `arrive` decides as `arrive_tail` does, without looking at
    /// the cell (plain tail drop, untracked, with no cell waiting beyond
    /// NEVER).
    #[inline(always)]
    pub(crate) fn tail_now(&self) -> bool {
        debug_assert!(!self.tail_fast || self.excess == 0);
        self.tail_fast
    }

    /// Offers `cell` at `now`; returns the time its transmission ends, or
    /// None if it was dropped.
    #[inline]
    pub fn arrive(&mut self, now: Time, cell: &Cell) -> Option<Time> {
        if self.tail_now() {
            return self.arrive_tail(now);
        }
        let in_port = self.cells_in_port(now);
        // Occupancy as seen by the arriving cell: cells waiting behind the
        // one in service.
        let occupancy = u32::try_from(in_port.saturating_sub(1)).unwrap_or(u32::MAX);
        self.settle_leaving(now);
        if !self.core.judge(cell, occupancy) {
            return None;
        }
        if in_port > 0 {
            // It waits behind `occupancy` others (an idle port sends it at
            // once). Every policy accepts only below the capacity, at most
            // u32::MAX, so the sum fits.
            self.core.max_queue = self.core.max_queue.max(occupancy + 1);
        }
        let start = self.free_at.max(now);
        self.wait_sum_ps += (start - now) as u128;
        // start <= NEVER: the sum cannot overflow. While cells wait beyond
        // NEVER, free_at + cell time lies past it too.
        let end = start + self.core.cell_time_ps;
        let end = if end <= NEVER {
            self.free_at = end;
            end
        } else {
            self.arrive_beyond_never()
        };
        if self.core.tracking {
            self.leaving.push_back((end, cell.vc));
        }
        Some(end)
    }

    /// `arrive` under plain tail drop: the same decisions and counts, from
    /// the backlog's time. With b = free_at - now (0 when idle) the cells in
    /// the port are ceil(b / cell time), the waiting ones one fewer: the
    /// buffer is full when b > capacity x cell time, and the cell waits
    /// behind more than max_queue cells when b > max_queue x cell time.
    #[inline(always)]
    pub(crate) fn arrive_tail(&mut self, now: Time) -> Option<Time> {
        self.core.cells_in += 1;
        let backlog = self.free_at.saturating_sub(now);
        if backlog > self.full_ps {
            // COMMON_DROP_REASONS starts with TAIL.
            self.core.drops[0].1 += 1;
            return None;
        }
        if backlog > self.max_queue_ps {
            self.new_max_queue(backlog);
        }
        self.core.cells_accepted += 1;
        self.wait_sum_ps += backlog as u128;
        let end = now + backlog + self.core.cell_time_ps;
        if end <= NEVER {
            self.free_at = end;
            Some(end)
        } else {
            Some(self.arrive_beyond_never())
        }
    }

    /// A cell waits behind more cells than ever: the new maximum.
    #[cold]
    #[inline(never)]
    fn new_max_queue(&mut self, backlog: Time) {
        let ct = self.core.cell_time_ps;
        let in_port = backlog.div_ceil(ct);
        self.core.max_queue = u32::try_from(in_port).unwrap_or(u32::MAX);
        self.max_queue_ps = (self.core.max_queue as u128 * ct as u128).min(u64::MAX as u128) as u64;
    }

    /// The rest of `arrive` for a cell that leaves after NEVER.
    #[cold]
    #[inline(never)]
    fn arrive_beyond_never(&mut self) -> Time {
        // It waited `excess` cell times more than free_at tells.
        self.wait_sum_ps += self.excess as u128 * self.core.cell_time_ps as u128;
        self.excess += 1;
        // From now on the backlog's time no longer tells the cells in the
        // port (`excess` only grows): the general step decides.
        self.tail_fast = false;
        NEVER
    }

    /// Transmission time spent up to `now`, ps.
    pub fn busy_ps(&self, now: Time) -> u128 {
        let total = self.core.cells_accepted as u128 * self.core.cell_time_ps as u128;
        total - self.end().saturating_sub(now as u128)
    }

    /// Cells that finished transmission by `now`.
    pub fn cells_out(&self, now: Time) -> u64 {
        self.core.cells_accepted - self.cells_in_port(now)
    }

    /// Time-average number of waiting cells over [0, now].
    pub fn mean_queue(&self, now: Time) -> f64 {
        // Cells still waiting at `now` were charged their full wait; remove
        // the part after `now`. They start at the end - k x cell time.
        let mut area = self.wait_sum_ps;
        let n = self.cells_in_port(now) as u128;
        let (at, end) = (now as u128, self.end());
        for k in 1..=n {
            let start = end - k * self.core.cell_time_ps as u128;
            if start > at {
                area -= start - at;
            }
        }
        time_average(area, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::tail::TailDrop;
    use crate::cell::CELL_BITS;
    use crate::engine::time::cell_time_ps;

    fn port(ct: Time, capacity: u32) -> FifoPort {
        FifoPort::new(PortCore::new(ct, capacity, Box::new(TailDrop)))
    }

    #[test]
    fn a_backlog_longer_than_u64_picoseconds_is_counted_exactly() {
        // The slowest ATM link (1 kbit/s with SONET: 2.27 cells/s, 0.44 s a
        // cell) fed 5 x 10^7 cells at once: they would leave over 2.2 x 10^19
        // ps, more than u64 holds. The count of cells stays exact; the
        // departures past NEVER are handed out as NEVER.
        let ct = cell_time_ps(1e3 * 26.0 / 27.0 / CELL_BITS);
        let mut p = port(ct, u32::MAX);
        let n = 50_000_000u64;
        let cell = Cell::data(0, 0, 1, true);
        let mut last = 0;
        for _ in 0..n {
            last = p.arrive(0, &cell).expect("unlimited");
        }
        assert!(n as u128 * ct as u128 > u64::MAX as u128);
        assert_eq!(last, NEVER);
        assert_eq!(p.cells_in_port(0), n);
        assert_eq!(p.occupancy(0), (n - 1) as u32);
        assert_eq!(p.core().max_queue, (n - 1) as u32);
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
        let mut fast = port(ct, 10);
        let mut general = port(ct, 10);
        general.track_vcs(1);
        assert!(fast.tail_now() && !general.tail_now());
        let cell = Cell::data(0, 0, 1, true);
        let now = NEVER - 2500;
        for k in 0..14 {
            let (a, b) = (fast.arrive(now, &cell), general.arrive(now, &cell));
            assert_eq!(a, b, "cell {k}");
            assert_eq!(fast.tail_now(), k < 2, "cell {k}");
            assert_eq!(fast.cells_in_port(now), general.cells_in_port(now));
            assert_eq!(fast.occupancy(now), general.occupancy(now));
        }
        assert_eq!(fast.core().cells_dropped(), general.core().cells_dropped());
        assert!(fast.core().cells_dropped() > 0);
        assert_eq!(fast.core().max_queue, general.core().max_queue);
        assert_eq!(fast.mean_queue(NEVER), general.mean_queue(NEVER));
    }

    #[test]
    fn departures_follow_lindley_without_events() {
        // Cells of 1000 ps into a 2-cell buffer at 0, 0, 0, 0, 500 and 5000
        // ps: each departure is max(arrival, previous departure) + the cell
        // time, fixed when the cell arrives; the fourth and fifth find two
        // waiting and are dropped. The same with the shortcut (plain tail
        // drop, untracked) and with the general step (tracked).
        for tracked in [false, true] {
            let mut p = port(1000, 2);
            if tracked {
                p.track_vcs(1);
            }
            assert_eq!(p.tail_now(), !tracked);
            let cell = Cell::data(0, 0, 1, true);
            let mut got: Vec<Option<Time>> = (0..4).map(|_| p.arrive(0, &cell)).collect();
            assert_eq!((p.cells_in_port(0), p.occupancy(0)), (3, 2));
            assert_eq!((p.cells_in_port(1500), p.occupancy(1500)), (2, 1));
            got.push(p.arrive(500, &cell));
            got.push(p.arrive(5000, &cell));
            assert_eq!(
                got,
                [Some(1000), Some(2000), Some(3000), None, None, Some(6000)]
            );
            assert_eq!(p.cells_out(5000), 3);
            assert_eq!(p.core().max_queue, 2);
            assert_eq!(p.core().drops[0].1, 2);
            // Waits of 0, 1000 and 2000 ps over 6000 ps; busy 4 cell times.
            assert_eq!(p.mean_queue(6000), 0.5);
            assert_eq!(p.busy_ps(6000), 4000);
        }
    }
}
