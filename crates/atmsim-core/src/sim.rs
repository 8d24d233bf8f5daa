//! The network and its run loop: builds ports, links, VCs and sources from a
//! [`Scenario`], moves cells between them in time order, and closes the run
//! with a [`Summary`], the conservation [`Ledger`] and the probes' [`Series`].
//!
//! Events per cell-hop set the speed, so:
//! - a single-class port computes departures on arrival (no event);
//! - a link schedules only the arrival of its head cell;
//! - a link whose cells all end in passive sinks schedules nothing and is
//!   drained in bulk at probe ticks and at the end;
//! - a source reschedules itself by replacing the top of the heap.

use crate::atm::port::PriorityArrival;
use crate::atm::{Cell, Link, Port, PortMode, Reassembly};
use crate::buffer::{self, DROP_REASON_NAMES};
use crate::engine::time::{cell_time_ps, ps_to_s};
use crate::engine::{Event, EventQueue, RngStream, Time};
use crate::scenario::Scenario;
use crate::stats::{Ledger, Metric, PortSummary, Series, Summary, VcSummary};
use crate::traffic::{self, TrafficSource};

struct VcState {
    name: String,
    links: Vec<u32>,
    priority: usize,
    cells_sent: u64,
    frames_sent: u64,
    cells_delivered: u64,
    reassembly: Reassembly,
}

struct SourceState {
    source: Box<dyn TrafficSource>,
    rng: RngStream,
    vc: u32,
    stop: Time,
}

/// A network ready to run.
pub struct Simulation {
    now: Time,
    duration: Time,
    seed: u64,
    events: u64,
    queue: EventQueue,
    links: Vec<Link>,
    ports: Vec<Port>,
    vcs: Vec<VcState>,
    sources: Vec<SourceState>,
    probe_period: Time,
    probe_queue: Vec<u32>,
    probe_util: Vec<(u32, u128)>,
    probe_rate: Vec<(u32, u64)>,
    series: Series,
}

impl Simulation {
    /// Builds the network; fails on an inconsistent scenario.
    pub fn new(sc: &Scenario) -> Result<Self, String> {
        sc.check()?;
        let n_vcs = sc.vcs.len();
        // Which priorities use each link, and whether a link is the last of
        // every VC on it.
        let mut classes = vec![[false; 3]; sc.links.len()];
        let mut last_only = vec![true; sc.links.len()];
        for v in &sc.vcs {
            for (k, &l) in v.links.iter().enumerate() {
                classes[l as usize][v.class.priority()] = true;
                if k + 1 != v.links.len() {
                    last_only[l as usize] = false;
                }
            }
        }
        let mut links = Vec::with_capacity(sc.links.len());
        let mut ports = Vec::with_capacity(sc.links.len());
        for (i, l) in sc.links.iter().enumerate() {
            let n_classes = classes[i].iter().filter(|&&c| c).count();
            let mode = if n_classes <= 1 {
                PortMode::Fifo
            } else {
                PortMode::Priority
            };
            ports.push(Port::new(
                cell_time_ps(l.cell_rate_cps),
                l.buffer_cells.unwrap_or(u32::MAX),
                mode,
                buffer::build(&l.policy, n_vcs),
            ));
            links.push(Link {
                name: l.name.clone(),
                from: l.from,
                to: l.to,
                cell_rate_cps: l.cell_rate_cps,
                delay_ps: l.delay_ps,
                in_flight: Default::default(),
                lazy: last_only[i],
            });
        }
        let vcs = sc
            .vcs
            .iter()
            .map(|v| VcState {
                name: v.name.clone(),
                links: v.links.clone(),
                priority: v.class.priority(),
                cells_sent: 0,
                frames_sent: 0,
                cells_delivered: 0,
                reassembly: Reassembly::default(),
            })
            .collect::<Vec<_>>();
        let mut queue = EventQueue::new();
        let mut sources = Vec::with_capacity(sc.sources.len());
        for (i, s) in sc.sources.iter().enumerate() {
            let first_link = &sc.links[sc.vcs[s.vc as usize].links[0] as usize];
            let mut source = traffic::build(&s.model, first_link.cell_rate_cps);
            // Stream id = source index: adding a source never changes the others.
            let mut rng = RngStream::new(sc.seed, i as u64);
            let stop = s.stop_ps.unwrap_or(Time::MAX);
            let t = source.first(s.start_ps, &mut rng);
            if t < stop {
                queue.push(t, Event::SourceEmit(i as u32));
            }
            sources.push(SourceState {
                source,
                rng,
                vc: s.vc,
                stop,
            });
        }
        let p = &sc.probes;
        let mut series = Series::default();
        if p.any() {
            queue.push(p.period_ps, Event::ProbeTick);
            series.entity_names = sc
                .links
                .iter()
                .map(|l| l.name.clone())
                .chain(sc.vcs.iter().map(|v| v.name.clone()))
                .collect();
        }
        Ok(Simulation {
            now: 0,
            duration: sc.duration_ps,
            seed: sc.seed,
            events: 0,
            queue,
            links,
            ports,
            vcs,
            sources,
            probe_period: p.period_ps,
            probe_queue: p.queue.clone(),
            probe_util: p.utilization.iter().map(|&l| (l, 0)).collect(),
            probe_rate: p.vc_rate.iter().map(|&v| (v, 0)).collect(),
            series,
        })
    }

    /// Simulated time reached, ps.
    pub fn now(&self) -> Time {
        self.now
    }

    /// The scenario's duration, ps.
    pub fn duration(&self) -> Time {
        self.duration
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Runs every event with time <= min(until, duration).
    pub fn advance(&mut self, until: Time) {
        let until = until.min(self.duration);
        while let Some((t, ev)) = self.queue.peek_until(until) {
            self.now = t;
            self.events += 1;
            match ev {
                Event::SourceEmit(s) => self.on_source(s as usize),
                Event::LinkArrival(l) => self.on_link_arrival(l as usize),
                Event::PortTxDone(l) => self.on_tx_done(l as usize),
                Event::ProbeTick => self.on_probe(),
            }
        }
        self.now = self.now.max(until);
    }

    /// Runs to the end of the scenario.
    pub fn run(&mut self) {
        self.advance(self.duration);
    }

    fn on_source(&mut self, s: usize) {
        let now = self.now;
        let st = &mut self.sources[s];
        let e = st.source.fire(now, &mut st.rng);
        match e.next {
            Some(t) if t < st.stop => self.queue.replace_top(t, Event::SourceEmit(s as u32)),
            _ => self.queue.pop(),
        }
        let vc = st.vc;
        let v = &mut self.vcs[vc as usize];
        let frame = v.frames_sent as u32;
        v.frames_sent += 1;
        v.cells_sent += e.cells as u64;
        let first_link = v.links[0] as usize;
        for k in 0..e.cells {
            let cell = Cell::data(vc, frame, e.cells, k + 1 == e.cells);
            self.port_arrive(first_link, cell);
        }
    }

    /// A cell reaches the output port of link `l`.
    #[inline]
    fn port_arrive(&mut self, l: usize, cell: Cell) {
        let now = self.now;
        let port = &mut self.ports[l];
        match port.mode {
            PortMode::Fifo => {
                if let Some(depart) = port.fifo_arrive(now, &cell) {
                    self.link_push(l, depart, cell);
                }
            }
            PortMode::Priority => {
                let prio = self.vcs[cell.vc as usize].priority;
                if let PriorityArrival::Started(end) = port.prio_arrive(now, cell, prio) {
                    self.queue.push(end, Event::PortTxDone(l as u32));
                }
            }
        }
    }

    fn on_tx_done(&mut self, l: usize) {
        let now = self.now;
        let (cell, next) = self.ports[l].prio_tx_done(now);
        match next {
            Some(end) => self.queue.replace_top(end, Event::PortTxDone(l as u32)),
            None => self.queue.pop(),
        }
        self.link_push(l, now, cell);
    }

    /// Puts `cell`, whose transmission on link `l` ends at `tx_end`, on the link.
    #[inline]
    fn link_push(&mut self, l: usize, tx_end: Time, cell: Cell) {
        let link = &mut self.links[l];
        let arrival = tx_end + link.delay_ps;
        if link.lazy {
            // Deliver what has arrived by now, so the queue holds only the
            // cells still in the port or on the wire.
            let now = self.now;
            while let Some(&(a, done)) = link.in_flight.front() {
                if a > now {
                    break;
                }
                link.in_flight.pop_front();
                deliver(&mut self.vcs, &done);
            }
            link.in_flight.push_back((arrival, cell));
            return;
        }
        let was_empty = link.in_flight.is_empty();
        link.in_flight.push_back((arrival, cell));
        if was_empty {
            self.queue.push(arrival, Event::LinkArrival(l as u32));
        }
    }

    fn on_link_arrival(&mut self, l: usize) {
        let link = &mut self.links[l];
        let (_, mut cell) = link
            .in_flight
            .pop_front()
            .expect("arrival on an empty link");
        match link.in_flight.front() {
            Some(&(t, _)) => self.queue.replace_top(t, Event::LinkArrival(l as u32)),
            None => self.queue.pop(),
        }
        cell.hop += 1;
        let v = &self.vcs[cell.vc as usize];
        if cell.hop as usize == v.links.len() {
            deliver(&mut self.vcs, &cell);
        } else {
            let next = v.links[cell.hop as usize] as usize;
            self.port_arrive(next, cell);
        }
    }

    /// Delivers the cells of lazy links that have arrived by `t`.
    fn drain_lazy(&mut self, t: Time) {
        for l in 0..self.links.len() {
            if !self.links[l].lazy {
                continue;
            }
            while let Some(&(a, cell)) = self.links[l].in_flight.front() {
                if a > t {
                    break;
                }
                self.links[l].in_flight.pop_front();
                deliver(&mut self.vcs, &cell);
            }
        }
    }

    fn on_probe(&mut self) {
        let now = self.now;
        let next = now + self.probe_period;
        if next <= self.duration {
            self.queue.replace_top(next, Event::ProbeTick);
        } else {
            self.queue.pop();
        }
        self.drain_lazy(now);
        let t = ps_to_s(now);
        let period = self.probe_period as f64;
        for &l in &self.probe_queue {
            let q = self.ports[l as usize].occupancy(now);
            self.series.push(t, l, Metric::QueueCells, q as f64);
        }
        for (l, last) in &mut self.probe_util {
            let busy = self.ports[*l as usize].busy_ps(now);
            let u = (busy - *last) as f64 / period;
            *last = busy;
            self.series.push(t, *l, Metric::Utilization, u);
        }
        let n_links = self.links.len() as u32;
        for (v, last) in &mut self.probe_rate {
            let d = self.vcs[*v as usize].cells_delivered;
            let r = (d - *last) as f64 / ps_to_s(self.probe_period);
            *last = d;
            self.series.push(t, n_links + *v, Metric::VcRateCps, r);
        }
    }

    /// Closes the run at the time reached: drains lazy links, checks the
    /// conservation ledger and returns the summary and the series.
    pub fn finish(&mut self) -> (Summary, Series) {
        let now = self.now;
        self.drain_lazy(now);
        let t_s = ps_to_s(now);
        let mut ledger = Ledger::default();
        let mut ports = Vec::with_capacity(self.ports.len());
        for (port, link) in self.ports.iter().zip(&self.links) {
            // Cells still on the link's queue: behind a FIFO port those whose
            // transmission has not ended are still in the port.
            let mut in_port_listed = 0u64;
            let mut on_wire = 0u64;
            for &(a, _) in &link.in_flight {
                if port.mode == PortMode::Fifo && a - link.delay_ps > now {
                    in_port_listed += 1;
                } else {
                    on_wire += 1;
                }
            }
            let in_port = match port.mode {
                PortMode::Fifo => in_port_listed,
                PortMode::Priority => port.cells_in_port(now),
            };
            if port.cells_in_port(now) != in_port {
                ledger.problems.push(format!(
                    "port {}: {} cells in the port by its clock, {} by its list",
                    link.name,
                    port.cells_in_port(now),
                    in_port
                ));
            }
            let dropped = port.cells_dropped();
            if port.cells_in != port.cells_accepted + dropped {
                ledger.problems.push(format!(
                    "port {}: cells in {} != accepted {} + dropped {dropped}",
                    link.name, port.cells_in, port.cells_accepted
                ));
            }
            ledger.cells_dropped += dropped;
            ledger.cells_queued += in_port;
            ledger.cells_on_links += on_wire;
            ports.push(PortSummary {
                name: link.name.clone(),
                cells_in: port.cells_in,
                cells_out: port.cells_out(now),
                cells_dropped: dropped,
                drops: DROP_REASON_NAMES
                    .iter()
                    .zip(port.drops)
                    .map(|(n, c)| (n.to_string(), c))
                    .collect(),
                clr: if port.cells_in > 0 {
                    dropped as f64 / port.cells_in as f64
                } else {
                    0.0
                },
                max_queue_cells: port.max_queue,
                mean_queue_cells: port.mean_queue(now),
                utilization: if now > 0 {
                    port.busy_ps(now) as f64 / now as f64
                } else {
                    0.0
                },
            });
        }
        let mut vcs = Vec::with_capacity(self.vcs.len());
        for v in &self.vcs {
            ledger.cells_generated += v.cells_sent;
            ledger.cells_delivered += v.cells_delivered;
            let r = &v.reassembly;
            vcs.push(VcSummary {
                name: v.name.clone(),
                cells_sent: v.cells_sent,
                cells_delivered: v.cells_delivered,
                frames_sent: v.frames_sent,
                frames_delivered: r.frames_delivered,
                frames_corrupted: r.frames_corrupted,
                frames_merged: r.frames_merged,
                cells_discarded_aal5: r.cells_discarded,
                frame_goodput_cps: if t_s > 0.0 {
                    r.cells_good as f64 / t_s
                } else {
                    0.0
                },
            });
        }
        let summary = Summary {
            sim_time_s: t_s,
            events: self.events,
            seed: self.seed,
            completed: now >= self.duration,
            ports,
            vcs,
            conservation: ledger.close(),
        };
        (summary, std::mem::take(&mut self.series))
    }
}

/// A cell reaches the sink of its VC.
#[inline]
fn deliver(vcs: &mut [VcState], cell: &Cell) {
    let v = &mut vcs[cell.vc as usize];
    v.cells_delivered += 1;
    v.reassembly.receive(cell);
}
