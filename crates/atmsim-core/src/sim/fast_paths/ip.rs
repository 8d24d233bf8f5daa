//! The IP fast paths' state (which ports are eager, which are batch ports
//! and their feeders, whether any end host takes packets early) and the
//! batch port's event.

use super::Plan;
use crate::engine::{Event, EventQueue, Time};
use crate::ids::IpLinkIx;
use crate::sim::ip::ROUTE_END;
use crate::sim::Simulation;

/// `feeds` of a link that feeds no batch port.
const NO_BATCH: IpLinkIx = IpLinkIx::new(u32::MAX);

/// Where a packet goes from a port (see [`IpFastPaths::onward`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::sim) enum Onward {
    /// On the link, its arrival scheduled: the plain path.
    Link,
    /// Into the next port at once (an eager port).
    EagerPort,
    /// To its end host now, if the host takes it early.
    EarlyEnd,
}

/// The IP fabric's fast paths, by the fabric's link index.
pub(in crate::sim) struct IpFastPaths {
    /// The link's port is eager (fed at once from its one upstream link).
    eager: Vec<bool>,
    /// The batch port the link feeds (NO_BATCH if none): its packets then
    /// wait for that port's IpBatch event, not for a PacketArrival.
    feeds: Vec<IpLinkIx>,
    /// For a batch port: the links that feed it (ascending); the least of
    /// their delays is its look-ahead.
    feeders: Vec<Vec<IpLinkIx>>,
    /// For a batch port: the time of its pending IpBatch event (Time::MAX
    /// if none; events at other times are stale).
    batch_at: Vec<Time>,
    /// Scratch for the batch event: (head arrival, feeder).
    heads: Vec<(Time, IpLinkIx)>,
    /// Some end host takes packets as soon as their arrival is known.
    early_ends: bool,
}

impl IpFastPaths {
    /// The IP part of `plan`; `ip_links` are the scenario indices of the IP
    /// links in the fabric's order, `local` maps scenario to fabric indices.
    pub(in crate::sim) fn new(plan: &Plan, ip_links: &[usize], local: &[u32]) -> Self {
        let n = ip_links.len();
        let mut feeds = vec![NO_BATCH; n];
        let mut feeders = vec![Vec::new(); n];
        for (b, &i) in ip_links.iter().enumerate() {
            for &k in &plan.batch_feeders[i] {
                feeds[local[k as usize] as usize] = IpLinkIx::from_index(b);
                feeders[b].push(IpLinkIx::new(local[k as usize]));
            }
        }
        IpFastPaths {
            eager: ip_links
                .iter()
                .map(|&i| plan.eager_ip[i].is_some())
                .collect(),
            feeds,
            feeders,
            batch_at: vec![Time::MAX; n],
            heads: Vec::new(),
            early_ends: plan.eager_rx.iter().chain(&plan.eager_tx).any(|&e| e),
        }
    }

    /// What becomes of a packet whose transmission at a port has been
    /// computed, reaching the far end at `far`, when the next link of its
    /// path is `next` (`ROUTE_END`: its end host) and the port's link held
    /// nothing (`link_empty`): the next port takes it at once, its end
    /// host may take it now (before `until`, the end of the current
    /// advance, and only past an empty link, so the order of arrivals
    /// stays), or it goes on the link as on the plain path.
    #[inline(always)]
    pub(in crate::sim) fn onward(
        &self,
        next: IpLinkIx,
        link_empty: bool,
        far: Time,
        until: Time,
    ) -> Onward {
        if next == ROUTE_END {
            if link_empty && self.early_ends && far <= until {
                Onward::EarlyEnd
            } else {
                Onward::Link
            }
        } else if self.eager[next.index()] {
            Onward::EagerPort
        } else {
            Onward::Link
        }
    }

    /// The batch port link `l` feeds, if any.
    #[inline]
    pub(in crate::sim) fn batch_port_fed(&self, l: IpLinkIx) -> Option<IpLinkIx> {
        let b = self.feeds[l.index()];
        (b != NO_BATCH).then_some(b)
    }

    /// Makes sure batch port `b` has its IpBatch event at or before `t`
    /// (`n_links`: the fabric's link count; batch events of an instant come
    /// after its packet arrivals, by port).
    pub(in crate::sim) fn schedule_batch(
        &mut self,
        b: IpLinkIx,
        t: Time,
        n_links: u32,
        agenda: &mut EventQueue,
    ) {
        if t < self.batch_at[b.index()] {
            self.batch_at[b.index()] = t;
            agenda.push_ordered(t, Event::IpBatch(b), n_links + b.get());
        }
    }
}

impl Simulation {
    /// Batch port `b` takes, in time order (ties by link), every packet its
    /// feeders bring before now + its look-ahead: a packet that enters a
    /// feeder from now on arrives later than that, so these are all the
    /// arrivals of that window, and the port (told of them early, like an
    /// eager port) sees them in their order.
    pub(in crate::sim) fn on_ip_batch(&mut self, b: IpLinkIx) {
        let now = self.clock.now;
        let fast = self.ip.fast_mut();
        if fast.batch_at[b.index()] != now {
            return; // superseded by an earlier one
        }
        let feeders = std::mem::take(&mut fast.feeders[b.index()]);
        let mut heads = std::mem::take(&mut fast.heads);
        // Nothing past the end of the current `advance` (like eager ends),
        // so a run in slices takes smaller batches with the same results.
        let lookahead = feeders.iter().map(|&k| self.ip.delay(k)).min();
        let horizon = now
            .saturating_add(lookahead.unwrap_or(0))
            .min(self.clock.until.saturating_add(1));
        // Arrivals added meanwhile come after the horizon: no event for them
        // until the batch is done.
        self.ip.fast_mut().batch_at[b.index()] = horizon;
        // The feeders' head arrivals (Time::MAX when empty), refreshed as
        // they are taken: cheaper than looking into every feeder each time.
        heads.clear();
        heads.extend(feeders.iter().map(|&k| (self.ip.link_head(k), k)));
        loop {
            // The earliest head (the first feeder on a tie), and the time
            // before which that feeder's packets come first.
            let mut best = usize::MAX;
            let mut best_t = horizon;
            let mut bound = horizon;
            for (i, &(t, _)) in heads.iter().enumerate() {
                if t < best_t {
                    bound = best_t;
                    best_t = t;
                    best = i;
                } else if t < bound {
                    bound = t;
                }
            }
            if best == usize::MAX {
                break;
            }
            let k = heads[best].1;
            loop {
                let (far, packet, next) = self.ip.take_head(k);
                self.ip_port_arrive(b, packet, far);
                if next >= bound {
                    heads[best].0 = next;
                    break;
                }
            }
        }
        // Feeders may have gained packets meanwhile (after the horizon).
        let next = feeders.iter().map(|&k| self.ip.link_head(k)).min();
        let n_links = self.ip.len() as u32;
        let fast = self.ip.fast_mut();
        fast.heads = heads;
        fast.feeders[b.index()] = feeders;
        fast.batch_at[b.index()] = Time::MAX;
        if let Some(t) = next.filter(|&t| t != Time::MAX) {
            fast.schedule_batch(b, t, n_links, &mut self.agenda);
        }
    }
}
