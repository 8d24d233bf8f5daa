//! The fast paths: events the simulator skips because their outcome is
//! already known when something earlier happens. They are all behind one
//! switch, the scenario's `fast_paths` (on by default): with it off every
//! cell and packet takes the plain event path, one event per arrival at a
//! port or an end, and the results are the same (the test suite runs every
//! example and reproduce scenario both ways and compares the digests of
//! their summaries and series).
//!
//! Each fast path, and the condition under which it is exact:
//!
//! 1. **Lazy ATM links.** A link whose cells all end where it ends, in
//!    passive sinks (no ABR destination, no TCP host, no backward RM cells
//!    on it), schedules no arrival events. A cell that will arrive before
//!    the *horizon* (the next probe tick, and the end of the current
//!    `advance`, where `finish` may read the sinks) is handed to its sink
//!    as it goes on the link; the others wait in the link's queue, handed
//!    on in batches (once 256 have piled up), at probe ticks and at the end,
//!    and those that arrive before the new horizon when it moves on. Exact
//!    because a passive sink only counts and reassembles, nothing reads its
//!    counters before the horizon, and each VC's cells still reach its sink
//!    in their order on the link (a cell is handed on at once only when the
//!    link's queue is empty: every cell queued arrives at or after the
//!    horizon, and the cells behind it later still).
//! 2. **Eager IP ports.** An IP port every packet of which comes from one
//!    single upstream link (which is not itself eager) is told of each
//!    packet when the upstream port computes its arrival, and computes the
//!    packet's own departure at once. Exact because the upstream link is
//!    FIFO with a constant delay, so the eager port still sees its arrivals
//!    in time order, and every query of a port takes the time it is about
//!    (queue lengths, counters and the ledger at time t count only what
//!    happened by t).
//! 3. **Batch IP ports.** An IP port, not eager, whose packets all come over
//!    links that have a delay and lead nowhere else, takes in one event at
//!    the earliest arrival E every arrival before E + the least feeder delay
//!    (and before the end of the current `advance`), in time order, ties by
//!    link. Exact because a packet entering a feeder from E on arrives later
//!    than that horizon, so no arrival of the window is missed or reordered.
//! 4. **Eager TCP ends.** A receiver with no delayed ACK and no processing
//!    time, whose ACK link carries only the ACKs of such receivers fed by
//!    the same last data link, takes each segment as soon as the last port
//!    computes its arrival; a sender with fine timers, whose data link
//!    carries only the data of such senders with ACKs over the same last
//!    link (and whose data's second link is not eager, so eager steps never
//!    chain without end), takes each ACK likewise. Exact because such an end
//!    changes only with the packets it takes (in order, over one FIFO link),
//!    its own timer and the probes: the simulator also requires the arrival
//!    to fall within the current `advance`, no earlier packet to be in
//!    flight on that link, and a sender's own deadline (its retransmission
//!    or its persist timer, which never run together) to come after the
//!    ACK; a probed sender keeps its samples for the ticks it moves past.
//!    A receiver answers a window probe at once, like any segment it drops
//!    beyond its window, so an eager receiver needs no timer for it.
//! 5. **Merged sources.** Under random arbitration (slotted or continuous)
//!    the open-loop sources (CBR, greedy, Poisson, on/off, frames) wait on
//!    a timing wheel under the very keys their own `SourceEmit` events
//!    would have in the agenda
//!    (time, then the arrival's hash), and the agenda holds one `Sources`
//!    event at the earliest. That event fires, in key order, every emission
//!    whose key comes before the agenda's next event and within the current
//!    `advance`, then waits at the next one. Exact because each emission
//!    runs at the same place in the total order of events as its own event
//!    would (the key decides, and a cell an emission schedules is compared
//!    before the next emission); only the event count changes. Under
//!    scheduling-order arbitration a source's place depends on when it was
//!    scheduled, which only the agenda knows: the sources keep their events.
//!    The wheel keeps times and computes an emission's whole key only to
//!    break a tie of times (with another source or with the agenda's next
//!    event). A source whose VC has one link, lazy (fast path 1), behind a
//!    single-class FIFO port without a switch algorithm, rate control or
//!    policer, puts its cells into that port within the same loop, by the
//!    steps of the plain path that apply to it. If it is its VC's only
//!    source and sends one-cell frames only, it tallies the cells that
//!    reach the sink at once in its own record and posts the tally to its
//!    VC's counters before the VC's next frame is opened the usual way;
//!    the VC's counters are read through one accessor
//!    (`Endpoints::counts`), which adds it. Exact because that VC's
//!    reassembly never holds an open unit (each cell is an intact frame,
//!    whatever the order) and no frame id is read in between (see
//!    `merged_sources::Direct`).
//! 6. **Quiet-end links.** An ATM link, not lazy, at whose far end every
//!    cell on it ends (the last link of every VC and backward RM path on
//!    it; a TCP host, an ABR destination or a source's end), with no edge
//!    there acting on what passes: a data cell that does not end its frame
//!    arriving before the horizon of fast path 1 is handed to its end
//!    without an event, when it goes on the link if the link holds no
//!    earlier cell, otherwise right after the arrival of the cell before
//!    it has been handled. Exact because such a cell only joins its VC's
//!    open reassembly unit (never closing one), adds to the VC's counters
//!    and delay statistics (at its own arrival time) and, at an ABR
//!    destination, notes its EFCI bit; these are read by the later cells of
//!    the same VC on the same FIFO link (its frame-ending cell, its next
//!    forward RM cell), which still arrive in order and by event, and at
//!    the horizon's instants. Frame-ending and RM cells keep their events.
//!
//! What is not a fast path: a port that computes a cell's or a packet's
//! departure when it arrives (Lindley's recursion, for a single-class ATM
//! port and every router port). The port decides at the arrival instant
//! with everything it needs, and its state at any later time follows from
//! the recorded departures: that is the port's model, and it needs no
//! switch.
//!
//! Opting out: a kind of port or element that changes cells or packets in
//! flight (a router rewriting an ACK's window, an ack bucket), or whose
//! decisions need its arrivals at their own time (a port computing explicit
//! rates), must not be fed early. It says so in [`port_allows_fast_paths`],
//! [`link_end_allows_fast_paths`] or [`flow_allows_fast_paths`], the one
//! place the plan below consults.
//!
//! Where each lives, and the one place the model calls it:
//! - lazy links (1): [`LazyLinks`] in `lazy_links.rs`, the horizon and the
//!   delivery of a lazy link's cells; the ATM fabric calls it where a cell
//!   goes on a link (`AtmFabric::link_push`), the run loop where the
//!   horizon moves and before the sinks are read. The link's own `lazy`
//!   flag and `drain_at` stay in its record (`atm::Link`): every cell's way
//!   onto a link tests the flag, and a record of their own would cost a
//!   cache line more per cell;
//! - eager and batch IP ports (2, 3): [`IpFastPaths`] in `ip.rs`, with the
//!   batch port's event; the IP fabric asks it once in `IpFabric::forward`
//!   (`onward`: on the link, into an eager port, or to an end host that may
//!   take the packet early) and where a link's head arrival is scheduled (a
//!   batch port's event or its own). What a port told early means for the
//!   ledger is in `told_early.rs`: the drops it decided for times the run
//!   has not reached (`ToldEarly`, fed where the fabric drops a packet),
//!   and the placing of each packet at the run's end (`place`, which the
//!   fabric's report calls instead of placing packets itself).
//!   The router port itself (`ip::IpPort`) takes an arrival's time apart
//!   from the simulator's (`arrive(at, now, ..)`) and keeps the run's end
//!   (`horizon`) for its largest queue: with `at == now` that is the plain
//!   port, and a port of its own for eager feeding would be a second copy
//!   of the recursion on the hot path of every packet;
//! - eager TCP ends (4): [`EagerEnds`] in `eager_tcp.rs`, kept in each
//!   flow's record; `IpFabric::forward` asks it at a path's end, through
//!   `TcpHosts::takes_early`;
//! - merged sources (5): `merged_sources.rs`, the `Sources` event and its
//!   loop, a source's [`Direct`] link and [`Tally`]; the ends read a VC's
//!   counters through one accessor (`Endpoints::counts`), which adds the
//!   tally. The loop takes a one-cell frame into a direct link's port under
//!   plain tail drop by its own steps (the port decides before the cell is
//!   made, and the tally spares the VC's record); every other frame goes
//!   the model's way (`send_frame`). The timing wheel is `engine::wheel`,
//!   and `traffic::Firing` chooses which source kinds the loop inlines;
//! - quiet-end links (6): the link's own `quiet_end` flag (`atm::Link`, set
//!   by `AtmFabric::set_quiet_ends`), tested where a cell goes on a link
//!   (`AtmFabric::link_push`) and where a link's head arrives
//!   (`AtmFabric::link_arrival`, which leaves the cells behind it to
//!   `AtmFabric::hand_on_quiet`, called once the arrival is handled); the
//!   ends take such a cell in `Endpoints::deliver_quiet`.

mod eager_tcp;
mod ip;
mod lazy_links;
mod merged_sources;
#[cfg(test)]
mod tests;
pub(super) mod told_early;

pub(super) use eager_tcp::EagerEnds;
pub(super) use ip::{IpFastPaths, Onward};
pub(super) use lazy_links::LazyLinks;
pub(super) use merged_sources::{Direct, Tally};

use crate::scenario::{Arbitration, FlowSpec, Layer, LinkSpec, PolicySpec, Scenario};
use crate::tcp::TimerMode;

/// Whether the output port of `link` may be fed early (eager or batch) by
/// the fast paths, or its link drained lazily: not a port (IP or ATM) that
/// computes explicit rates from its arrivals (it must count them at their
/// time); otherwise every policy
/// decides on each arrival from its own state at that instant, so all may
/// (the match makes a new policy choose).
pub(super) fn port_allows_fast_paths(link: &LinkSpec) -> bool {
    if link.rate_control.is_some() {
        return false;
    }
    match link.policy {
        PolicySpec::Tail
        | PolicySpec::Red { .. }
        | PolicySpec::IntelligentTail { .. }
        | PolicySpec::Ppd { .. }
        | PolicySpec::Epd { .. } => true,
        // ATM policies that read the port's cells per VC: the IP fast paths
        // never feed an ATM port, and the ATM one (lazy links) only delays
        // deliveries at passive sinks, after the port.
        PolicySpec::SelectiveDrop { .. } | PolicySpec::Fba { .. } | PolicySpec::Dfba { .. } => true,
    }
}

/// Whether a packet at the far end of `link` may go on early into the next
/// port (or, over a batch port's feeder, be taken early), or an ATM link's
/// cells be delivered lazily: not when a router or an ATM edge there acts
/// on it at the instant it passes (ACK windows, ack buckets).
pub(super) fn link_end_allows_fast_paths(link: &LinkSpec) -> bool {
    link.ack_control.is_none()
}

/// Whether the end hosts of `flow` may take packets as soon as their
/// arrival is known (given the structural conditions of the module docs).
pub(super) fn flow_allows_fast_paths(flow: &FlowSpec) -> bool {
    let _ = flow;
    true
}

/// Which fast paths a scenario takes, decided once when it is built.
pub(super) struct Plan {
    /// Per scenario link: an ATM link drained lazily.
    pub lazy_atm: Vec<bool>,
    /// Per scenario link: an ATM link, not lazy, at whose far end every
    /// cell on it ends (fast path 6).
    pub quiet_end_atm: Vec<bool>,
    /// Per scenario link: for an eager IP port, its one upstream link.
    pub eager_ip: Vec<Option<u32>>,
    /// Per scenario link: for a batch IP port, the links feeding it
    /// (ascending); empty otherwise.
    pub batch_feeders: Vec<Vec<u32>>,
    /// Per flow: the receiver takes segments early.
    pub eager_rx: Vec<bool>,
    /// Per flow: the sender takes ACKs early.
    pub eager_tx: Vec<bool>,
    /// The open-loop sources are merged on a timing wheel.
    pub merged_sources: bool,
}

impl Plan {
    /// The fast paths of `sc` (none when `sc.fast_paths` is false).
    pub(super) fn new(sc: &Scenario) -> Self {
        let n = sc.links.len();
        if !sc.fast_paths {
            return Plan {
                lazy_atm: vec![false; n],
                quiet_end_atm: vec![false; n],
                eager_ip: vec![None; n],
                batch_feeders: vec![Vec::new(); n],
                eager_rx: vec![false; sc.flows.len()],
                eager_tx: vec![false; sc.flows.len()],
                merged_sources: false,
            };
        }
        let eager_ip = eager_ip_links(sc);
        let lazy_atm = lazy_atm_links(sc);
        Plan {
            quiet_end_atm: quiet_end_links(sc, &lazy_atm),
            lazy_atm,
            batch_feeders: batch_ports(sc, &eager_ip),
            eager_rx: eager_receivers(sc),
            eager_tx: eager_senders(sc, &eager_ip),
            eager_ip,
            // The wheel keeps the agenda's keys of random arbitration
            // (slotted or not: sources enter their ports when they send);
            // under scheduling order a source's place depends on when it
            // was scheduled, which only the agenda knows.
            merged_sources: sc.arbitration != Arbitration::SchedulingOrder,
        }
    }
}

/// For each link, whether it is an ATM link whose cells all end where it
/// ends, in passive sinks: no TCP host, no ABR destination, and no backward
/// RM cells on it.
fn lazy_atm_links(sc: &Scenario) -> Vec<bool> {
    let mut endpoint = vec![false; sc.vcs.len()];
    for fl in &sc.flows {
        for v in [fl.data_vc, fl.ack_vc].into_iter().flatten() {
            endpoint[v as usize] = true;
        }
    }
    // A port that computes rates or an edge that writes ACK windows acts
    // on the cells as they pass: never lazy (exact either way, since a lazy
    // link only delays deliveries to passive sinks, but these elements
    // stay on the plain event path as the IP ones do).
    let mut lazy: Vec<bool> = sc
        .links
        .iter()
        .map(|l| {
            l.layer == Layer::Atm && port_allows_fast_paths(l) && link_end_allows_fast_paths(l)
        })
        .collect();
    for (i, v) in sc.vcs.iter().enumerate() {
        let passive = !endpoint[i] && v.abr.is_none();
        for (k, &l) in v.links.iter().enumerate() {
            if k + 1 != v.links.len() || !passive {
                lazy[l as usize] = false;
            }
        }
        // Backward RM cells need their events.
        for &l in &v.back_links {
            lazy[l as usize] = false;
        }
    }
    lazy
}

/// For each link, whether it is an ATM link, not lazy, used by some VC,
/// whose every cell ends where it ends: the last link of every VC path
/// and every backward RM path it is on, with no edge there that acts on
/// what passes (fast path 6).
fn quiet_end_links(sc: &Scenario, lazy: &[bool]) -> Vec<bool> {
    let mut quiet: Vec<Option<bool>> = sc
        .links
        .iter()
        .zip(lazy)
        .map(|(l, &lazy)| {
            (l.layer == Layer::Atm && !lazy && link_end_allows_fast_paths(l)).then_some(false)
        })
        .collect();
    for v in &sc.vcs {
        for path in [&v.links, &v.back_links] {
            for (k, &l) in path.iter().enumerate() {
                if let Some(q) = quiet[l as usize].as_mut() {
                    if k + 1 == path.len() {
                        *q = true;
                    } else {
                        quiet[l as usize] = None;
                    }
                }
            }
        }
    }
    quiet.into_iter().map(|q| q == Some(true)).collect()
}

/// For each link, the one value all its uses name, if they all name the
/// same `Some`; None for a link unused, or whose uses differ or name None.
fn sole_value(
    n_links: usize,
    uses: impl IntoIterator<Item = (u32, Option<u32>)>,
) -> Vec<Option<u32>> {
    // None: unused; Some(None): no single value; Some(Some(v)): always v.
    let mut seen: Vec<Option<Option<u32>>> = vec![None; n_links];
    for (l, v) in uses {
        let slot = &mut seen[l as usize];
        *slot = match *slot {
            None => Some(v),
            Some(q) if q == v => Some(q),
            Some(_) => Some(None),
        };
    }
    seen.into_iter().map(Option::flatten).collect()
}

/// For each link, the upstream link of an IP port that can be fed eagerly:
/// every IP path through it comes from that one link, which is itself not
/// such a candidate (so eager ports never follow one another), and the port
/// allows it.
fn eager_ip_links(sc: &Scenario) -> Vec<Option<u32>> {
    let uses = sc.flows.iter().flat_map(|f| {
        [&f.data_links, &f.ack_links].into_iter().flat_map(|path| {
            path.iter()
                .enumerate()
                .map(|(k, &l)| (l, k.checked_sub(1).map(|p| path[p])))
        })
    });
    let candidate: Vec<Option<u32>> = sole_value(sc.links.len(), uses)
        .into_iter()
        .enumerate()
        .map(|(l, c)| c.filter(|_| port_allows_fast_paths(&sc.links[l])))
        .collect();
    candidate
        .iter()
        .map(|c| {
            c.filter(|&p| {
                candidate[p as usize].is_none() && link_end_allows_fast_paths(&sc.links[p as usize])
            })
        })
        .collect()
}

/// For each link, the links that feed its port if it is a batch port (else
/// none): an IP port that is not eager and allows fast paths, every packet
/// of which comes over one of those links, each of which has a delay and
/// leads nowhere else.
fn batch_ports(sc: &Scenario, eager_links: &[Option<u32>]) -> Vec<Vec<u32>> {
    let n = sc.links.len();
    let paths = || {
        sc.flows
            .iter()
            .filter(|f| f.layer == Layer::Ip)
            .flat_map(|f| [&f.data_links, &f.ack_links])
    };
    // The one link each link leads to (None if several or a path's end).
    let next = sole_value(
        n,
        paths().flat_map(|path| {
            path.iter()
                .enumerate()
                .map(|(k, &l)| (l, path.get(k + 1).copied()))
        }),
    );
    let mut feeders: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut ok: Vec<bool> = (0..n)
        .map(|l| {
            sc.links[l].layer == Layer::Ip
                && eager_links[l].is_none()
                && port_allows_fast_paths(&sc.links[l])
        })
        .collect();
    let mut used = vec![false; n];
    for path in paths() {
        for (k, &l) in path.iter().enumerate() {
            used[l as usize] = true;
            match k.checked_sub(1).map(|j| path[j]) {
                Some(p)
                    if next[p as usize] == Some(l)
                        && sc.links[p as usize].delay_ps > 0
                        && link_end_allows_fast_paths(&sc.links[p as usize]) =>
                {
                    feeders[l as usize].push(p)
                }
                _ => ok[l as usize] = false,
            }
        }
    }
    for (l, fs) in feeders.iter_mut().enumerate() {
        if ok[l] && used[l] {
            fs.sort_unstable();
            fs.dedup();
        } else {
            fs.clear();
        }
    }
    feeders
}

/// For each flow, whether its receiver can take each data segment as soon
/// as the segment's arrival time is known (fast path 4 of the module docs).
fn eager_receivers(sc: &Scenario) -> Vec<bool> {
    owning_ends(sc, false, |f| {
        f.layer == Layer::Ip
            && flow_allows_fast_paths(f)
            && f.tcp.delayed_ack_ps == 0
            && f.processing_ps == 0
            && f.processing_jitter_ps == 0
            && !f.data_links.is_empty()
            && !f.ack_links.is_empty()
    })
}

/// For each flow, whether its sender can take each ACK as soon as the ACK's
/// arrival time is known (fast path 4 of the module docs).
fn eager_senders(sc: &Scenario, eager_links: &[Option<u32>]) -> Vec<bool> {
    owning_ends(sc, true, |f| {
        f.layer == Layer::Ip
            && flow_allows_fast_paths(f)
            && f.tcp.timer == TimerMode::Fine
            && f.data_links.len() >= 2
            && eager_links[f.data_links[1] as usize].is_none()
            && !f.ack_links.is_empty()
    })
}

/// For each flow, whether it is `capable` and the first link of its data
/// path (`sender` true) or ACK path (false) carries nothing but that first
/// hop of capable flows whose other path ends on one same link: the ends
/// those links leave from then see their packets in time order.
fn owning_ends(sc: &Scenario, sender: bool, capable: impl Fn(&FlowSpec) -> bool) -> Vec<bool> {
    // The path whose first link the end owns, and the other one.
    fn paths(f: &FlowSpec, sender: bool) -> (&[u32], &[u32]) {
        if sender {
            (&f.data_links, &f.ack_links)
        } else {
            (&f.ack_links, &f.data_links)
        }
    }
    let uses = sc.flows.iter().flat_map(|f| {
        let (own, other) = paths(f, sender);
        let claim = other.last().copied().filter(|_| capable(f));
        own.iter()
            .enumerate()
            .map(move |(k, &l)| (l, claim.filter(|_| k == 0)))
            .chain(other.iter().map(|&l| (l, None)))
    });
    let feeder = sole_value(sc.links.len(), uses);
    sc.flows
        .iter()
        .map(|f| capable(f) && feeder[paths(f, sender).0[0] as usize].is_some())
        .collect()
}
