//! A switch (or host adapter) output port: one shared cell buffer feeding
//! one link.
//!
//! Two kinds of port, chosen by the classes of the VCs that cross it:
//! - [`FifoPort`] (`fifo.rs`) for a port whose cells are all of one
//!   priority class: each cell's departure is computed when it arrives
//!   (Lindley: start = max(arrival, free_at), depart = start + cell time),
//!   so the port needs no transmit event. The cells waiting at time t are
//!   the accepted cells not yet started: since they are served back to
//!   back, ceil((free_at - t) / cell time) are in the port, one of them in
//!   service.
//! - [`PriorityPort`] (`priority.rs`) for a port that mixes classes:
//!   per-class FIFO queues served in strict priority (CBR > VBR >
//!   ABR/UBR/GFR), one transmit event per cell.
//!
//! Both embed a [`PortCore`]: the link's cell time, the buffer size, the
//! drop policy that judges each arriving cell, the counters, and the cells
//! of each VC in the port when they are tracked. [`AtmPort`] holds either
//! kind and answers the queries every port answers.
//!
//! The queue length is the number of cells waiting, not counting the cell
//! being transmitted; the buffer size bounds that number.

mod fifo;
mod priority;

pub use fifo::FifoPort;
pub use priority::{PriorityArrival, PriorityPort, N_PRIORITIES};

use crate::buffer::{Arrival, DropPolicy, DropReason, VcOccupancy, Verdict, COMMON_DROP_REASONS};
use crate::cell::Cell;
use crate::engine::Time;

/// What both kinds of port share: the link's cell time, the buffer, its
/// drop policy, the counters and the cells per VC.
pub struct PortCore {
    /// Transmission time of one cell on the port's link, ps.
    pub cell_time_ps: Time,
    /// Buffer size in cells (`u32::MAX` = unlimited).
    pub capacity: u32,
    policy: Box<dyn DropPolicy>,
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
    /// Largest number of waiting cells seen.
    pub max_queue: u32,
}

impl PortCore {
    /// The shared part of a port on a link of `cell_time_ps` per cell, with
    /// a buffer of `capacity` cells judged by `policy`.
    pub fn new(cell_time_ps: Time, capacity: u32, policy: Box<dyn DropPolicy>) -> Self {
        PortCore {
            cell_time_ps,
            capacity,
            policy,
            cells_in: 0,
            cells_accepted: 0,
            drops: COMMON_DROP_REASONS.iter().map(|&r| (r, 0)).collect(),
            vcs: VcOccupancy::EMPTY,
            tracking: false,
            max_queue: 0,
        }
    }

    /// True when the port's policy reads its cells per VC.
    pub fn policy_needs_vcs(&self) -> bool {
        self.policy.needs_vc_occupancy()
    }

    /// True when the policy is plain tail drop (the FIFO port's shortcut
    /// decides for it from the backlog's time).
    fn is_tail_drop(&self) -> bool {
        self.policy.is_tail_drop()
    }

    /// Starts keeping the cells of each VC (`n_vcs` of them) in the port.
    fn track_vcs(&mut self, n_vcs: usize) {
        self.vcs = VcOccupancy::new(n_vcs);
        self.tracking = true;
    }

    /// The cells of each VC in the port, if kept.
    fn vcs(&self) -> Option<&VcOccupancy> {
        self.tracking.then_some(&self.vcs)
    }

    /// Takes a cell of VC `vc` that left the port out of the per-VC counts
    /// (if kept).
    #[inline]
    fn left(&mut self, vc: u32) {
        if self.tracking {
            self.vcs.remove(vc);
        }
    }

    /// Offers `cell` to the policy, which sees `occupancy` cells waiting:
    /// counts it, and the drop with its reason; true when accepted.
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

    /// Total dropped cells.
    pub fn cells_dropped(&self) -> u64 {
        self.drops.iter().map(|(_, n)| n).sum()
    }
}

/// The time average over [0, now] of a queue whose integral is `area_ps`.
fn time_average(area_ps: u128, now: Time) -> f64 {
    if now == 0 {
        return 0.0;
    }
    area_ps as f64 / now as f64
}

/// An output port of either kind.
pub enum AtmPort {
    /// One class: departures computed on arrival, no events.
    Fifo(FifoPort),
    /// Several classes: strict priority, a transmit event per cell.
    Priority(PriorityPort),
}

impl AtmPort {
    /// A port for VCs of `n_classes` priority classes: a FIFO port for one
    /// (or none), a priority port for more.
    pub fn new(core: PortCore, n_classes: usize) -> Self {
        if n_classes <= 1 {
            AtmPort::Fifo(FifoPort::new(core))
        } else {
            AtmPort::Priority(PriorityPort::new(core))
        }
    }

    /// The part both kinds share: counters, buffer size, cell time.
    #[inline]
    pub fn core(&self) -> &PortCore {
        match self {
            AtmPort::Fifo(p) => p.core(),
            AtmPort::Priority(p) => p.core(),
        }
    }

    /// True for a single-class FIFO port.
    #[inline]
    pub fn is_fifo(&self) -> bool {
        matches!(self, AtmPort::Fifo(_))
    }

    /// The FIFO port when it decides by plain tail drop from its backlog
    /// alone ([`FifoPort::arrive_tail`]), else None: one test of the kind
    /// and the shortcut together, on the merged sources' per-cell path.
    #[inline(always)]
    pub(crate) fn tail_fifo(&mut self) -> Option<&mut FifoPort> {
        match self {
            AtmPort::Fifo(p) if p.tail_now() => Some(p),
            _ => None,
        }
    }

    /// Transmission time of one cell on the port's link, ps.
    #[inline]
    pub fn cell_time_ps(&self) -> Time {
        self.core().cell_time_ps
    }

    /// Cells waiting (not counting the one in service) at `now`; an
    /// unlimited buffer counts up to `u32::MAX`.
    pub fn occupancy(&self, now: Time) -> u32 {
        match self {
            AtmPort::Fifo(p) => p.occupancy(now),
            AtmPort::Priority(p) => p.occupancy(),
        }
    }

    /// Cells waiting in the lowest-priority (ABR/UBR/GFR) queue at `now`.
    pub fn abr_waiting(&self, now: Time) -> u32 {
        match self {
            AtmPort::Fifo(p) => p.occupancy(now),
            AtmPort::Priority(p) => p.abr_waiting(),
        }
    }

    /// Cells in the port at `now`, the one in service included.
    pub fn cells_in_port(&self, now: Time) -> u64 {
        match self {
            AtmPort::Fifo(p) => p.cells_in_port(now),
            AtmPort::Priority(p) => p.cells_in_port(),
        }
    }

    /// Keeps the cells of each VC (`n_vcs` of them) in the port, from now on
    /// (call before any cell arrives).
    pub fn track_vcs(&mut self, n_vcs: usize) {
        match self {
            AtmPort::Fifo(p) => p.track_vcs(n_vcs),
            AtmPort::Priority(p) => p.track_vcs(n_vcs),
        }
    }

    /// True when the port's policy reads its cells per VC.
    pub fn policy_needs_vcs(&self) -> bool {
        self.core().policy_needs_vcs()
    }

    /// The cells of each VC in the port at `now` (kept only when asked for
    /// with [`AtmPort::track_vcs`]).
    pub fn vc_occupancy(&mut self, now: Time) -> Option<&VcOccupancy> {
        match self {
            AtmPort::Fifo(p) => p.vc_occupancy(now),
            AtmPort::Priority(p) => p.vc_occupancy(),
        }
    }

    /// Transmission time spent up to `now`, ps.
    pub fn busy_ps(&self, now: Time) -> u128 {
        match self {
            AtmPort::Fifo(p) => p.busy_ps(now),
            AtmPort::Priority(p) => p.busy_ps(now),
        }
    }

    /// Cells that finished transmission by `now`.
    pub fn cells_out(&self, now: Time) -> u64 {
        self.core().cells_accepted - self.cells_in_port(now)
    }

    /// Total dropped cells.
    pub fn cells_dropped(&self) -> u64 {
        self.core().cells_dropped()
    }

    /// Time-average number of waiting cells over [0, now].
    pub fn mean_queue(&self, now: Time) -> f64 {
        match self {
            AtmPort::Fifo(p) => p.mean_queue(now),
            AtmPort::Priority(p) => p.mean_queue(now),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::tail::TailDrop;

    #[test]
    fn the_cells_per_vc_always_equal_a_recount() {
        // Random arrivals of five VCs' cells into a FIFO port and a priority
        // port with 40-cell buffers: after each arrival, X_i, N_a and X match
        // a recount of the cells in the port.
        use crate::engine::RngStream;
        let ct: Time = 1000;
        for n_classes in [1, 2] {
            let mut p = AtmPort::new(PortCore::new(ct, 40, Box::new(TailDrop)), n_classes);
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
                match &mut p {
                    AtmPort::Fifo(f) => {
                        if let Some(end) = f.arrive(now, &cell) {
                            fifo_in.push((end, vc));
                        }
                        fifo_in.retain(|&(end, _)| end > now);
                    }
                    AtmPort::Priority(q) => {
                        while let Some(t) = tx_end.filter(|&t| t <= now) {
                            let (done, next) = q.tx_done(t);
                            let k = prio_in.iter().position(|&v| v == done.vc).unwrap();
                            prio_in.remove(k);
                            tx_end = next;
                        }
                        match q.arrive(now, cell, 2) {
                            PriorityArrival::Started(end) => {
                                tx_end = Some(end);
                                prio_in.push(vc);
                            }
                            PriorityArrival::Queued => prio_in.push(vc),
                            PriorityArrival::Dropped => {}
                        }
                    }
                }
                let listed: Vec<u32> = if p.is_fifo() {
                    fifo_in.iter().map(|&(_, v)| v).collect()
                } else {
                    prio_in.clone()
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
            assert!(
                p.cells_dropped() > 0,
                "{n_classes} classes: the buffer never filled"
            );
        }
    }
}
