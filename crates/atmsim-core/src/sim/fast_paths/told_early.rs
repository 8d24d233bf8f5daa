//! Where the packets are at the end of a run whose IP ports were told of
//! arrivals ahead of time (eager and batch ports, see `ip.rs`).
//!
//! On the plain path a packet on a link's `in_flight` list has reached the
//! link's port: it is in the port (its transmission has not ended) or on
//! the link. A port told early has taken packets that, at the end of the
//! run, are still upstream: on an earlier link or in an earlier port of
//! their path; and it may have dropped a packet at a time the run never
//! reached. The ledger needs each packet where it is, so [`place`] walks
//! up each packet's path from the recorded times (the far-end arrival, a
//! link's delay, the port's record of when the transmission that ended at
//! a time began), and [`ToldEarly`] keeps the drops still in the future.

use crate::engine::Time;
use crate::ids::IpLinkIx;
use crate::sim::ip::ROUTE_END;

/// A packet a port will drop at a time the run may not reach.
struct FutureDrop {
    at: Time,
    /// Where the dropping port's link is in the fabric's `route` (the link,
    /// and the path to place the packet upstream).
    route_pos: u32,
    data_bytes: u64,
}

/// The drops that ports told early decided for times after the present.
#[derive(Default)]
pub(in crate::sim) struct ToldEarly {
    future_drops: Vec<FutureDrop>,
}

impl ToldEarly {
    /// The port at `route_pos` drops a packet of `data_bytes` TCP payload
    /// that reaches it at `at`, after `now`.
    #[cold]
    pub(in crate::sim) fn drop_ahead(
        &mut self,
        at: Time,
        now: Time,
        route_pos: u32,
        data_bytes: u64,
    ) {
        // Only drops still in the future at the end matter: forget the past
        // ones now and then, so the list stays short.
        if self.future_drops.len() >= 1024 {
            self.future_drops.retain(|d| d.at > now);
        }
        self.future_drops.push(FutureDrop {
            at,
            route_pos,
            data_bytes,
        });
    }
}

/// What the fabric tells [`place`] about its links.
pub(in crate::sim) trait Upstream {
    /// The flows' paths, flat, each closed by `ROUTE_END`.
    fn route(&self) -> &[IpLinkIx];
    /// The propagation delay of link `l`.
    fn delay(&self, l: IpLinkIx) -> Time;
    /// When the packet whose transmission at the port of link `l` ended at
    /// `end` arrived there (None: no such transmission).
    fn arrival_ending_at(&self, l: IpLinkIx, end: Time) -> Option<Time>;
}

/// Where the packets of an IP fabric are at `now`, by the fabric's link
/// index.
pub(in crate::sim) struct Placement {
    /// In the link's port.
    pub in_port: Vec<u64>,
    /// On the link.
    pub on_link: Vec<u64>,
    /// Taken by the link's port for an arrival after `now`.
    pub future_in: Vec<u64>,
    /// Dropped by the link's port for an arrival after `now`.
    pub future_drops: Vec<u64>,
    /// TCP payload bytes of those drops: still in the path.
    pub future_drop_bytes: u64,
    /// Packets with no place upstream (a bug: the ledger reports it).
    pub misplaced: u64,
}

/// Places every packet at `now`: each `(far, route_pos)` of `in_flight` (a
/// packet reaching the far end of the link at `route[route_pos - 1]` at
/// `far`), and each future drop of `told`.
pub(in crate::sim) fn place(
    fabric: &impl Upstream,
    n_links: usize,
    in_flight: impl Iterator<Item = (Time, u32)>,
    told: &ToldEarly,
    now: Time,
) -> Placement {
    let mut p = Placement {
        in_port: vec![0; n_links],
        on_link: vec![0; n_links],
        future_in: vec![0; n_links],
        future_drops: vec![0; n_links],
        future_drop_bytes: 0,
        misplaced: 0,
    };
    let put = |p: &mut Placement, route_pos: u32, at: Time| match place_upstream(
        fabric,
        route_pos,
        at,
        now,
        &mut p.future_in,
    ) {
        Some((l, true)) => p.in_port[l] += 1,
        Some((l, false)) => p.on_link[l] += 1,
        None => p.misplaced += 1,
    };
    for (far, route_pos) in in_flight {
        put(&mut p, route_pos, far);
    }
    for d in told.future_drops.iter().filter(|d| d.at > now) {
        p.future_drop_bytes += d.data_bytes;
        p.future_drops[fabric.route()[d.route_pos as usize].index()] += 1;
        put(&mut p, d.route_pos, d.at);
    }
    p
}

/// Where a packet is at `now` that reaches the end of the link before
/// `route[route_pos]` at `at` > now: (link, true) in that link's port,
/// (link, false) on the link, walking up its path from the recorded times;
/// the ports it has yet to reach were told of it ahead (counted in
/// `future_in`). None if the path gives out first, which would be a bug.
fn place_upstream(
    fabric: &impl Upstream,
    route_pos: u32,
    mut at: Time,
    now: Time,
    future_in: &mut [u64],
) -> Option<(usize, bool)> {
    let route = fabric.route();
    let mut pos = route_pos as usize;
    loop {
        pos = pos.checked_sub(1)?;
        let l = route[pos];
        if l == ROUTE_END {
            return None;
        }
        let end = at.checked_sub(fabric.delay(l))?;
        if end <= now {
            return Some((l.index(), false));
        }
        let arrival = fabric.arrival_ending_at(l, end)?;
        if arrival <= now {
            return Some((l.index(), true));
        }
        future_in[l.index()] += 1;
        at = arrival;
    }
}
