//! Probes, and closing a run: the summary and the conservation ledgers.

use super::atm::deliver_passive;
use super::*;

impl Simulation {
    /// Delivers the cells of lazy links that have arrived by `t`.
    pub(super) fn drain_lazy(&mut self, t: Time) {
        for hop in &mut self.hops {
            let Hop::Atm(h) = hop else { continue };
            if !h.link.lazy {
                continue;
            }
            while let Some(&(a, cell)) = h.link.in_flight.front() {
                if a > t {
                    break;
                }
                h.link.in_flight.pop_front();
                deliver_passive(&mut self.vcs, &cell);
            }
        }
    }

    pub(super) fn on_probe(&mut self) {
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
            match &self.hops[l as usize] {
                Hop::Atm(h) => {
                    self.series
                        .push(t, l, Metric::QueueCells, h.port.occupancy(now) as f64)
                }
                Hop::Ip(h) => self.series.push(
                    t,
                    l,
                    Metric::IpQueuePackets,
                    h.port.queue_len_before(now) as f64,
                ),
            }
        }
        for (l, last) in &mut self.probe_util {
            let busy = match &self.hops[*l as usize] {
                Hop::Atm(h) => h.port.busy_ps(now),
                Hop::Ip(h) => h.port.busy_ps(now),
            };
            let u = (busy - *last) as f64 / period;
            *last = busy;
            self.series.push(t, *l, Metric::Utilization, u);
        }
        let n_links = self.hops.len() as u32;
        for (v, last) in &mut self.probe_rate {
            let d = self.vcs[*v as usize].cells_delivered;
            let r = (d - *last) as f64 / ps_to_s(self.probe_period);
            *last = d;
            self.series.push(t, n_links + *v, Metric::VcRateCps, r);
        }
        for &v in &self.probe_abr_vcs {
            if let Some(st) = &self.vcs[v as usize].ses {
                self.series.push(t, n_links + v, Metric::AcrCps, st.ses.acr);
                self.series
                    .push(t, n_links + v, Metric::ErCps, st.ses.last_er);
            }
        }
        for &l in &self.probe_abr_ports {
            if let Hop::Atm(h) = &self.hops[l as usize] {
                let st: AlgorithmStats =
                    h.algorithm.as_ref().map(|a| a.stats()).unwrap_or_default();
                self.series.push(t, l, Metric::LoadFactor, st.load_factor);
                self.series
                    .push(t, l, Metric::FairShareCps, st.fair_share_cps);
                self.series.push(t, l, Metric::ErCps, st.last_er_cps);
                self.series
                    .push(t, l, Metric::AbrQueueCells, h.port.abr_waiting(now) as f64);
            }
        }
        let base = n_links + self.vcs.len() as u32;
        for &f in &self.probe_flows {
            let fl = &mut self.flows[f as usize];
            // An eager sender that moved past this tick kept its sample.
            let v = match fl.probe_held.front() {
                Some(&(tick, v)) if tick == now => {
                    fl.probe_held.pop_front();
                    v
                }
                _ => flow_sample(&fl.sender),
            };
            fl.probe_next = fl.probe_next.max(next);
            let e = base + f;
            for (metric, x) in [
                Metric::CwndBytes,
                Metric::WindowBytes,
                Metric::SeqBytes,
                Metric::SrttS,
            ]
            .into_iter()
            .zip(v)
            {
                self.series.push(t, e, metric, x);
            }
        }
    }

    /// Closes the run at the time reached: drains lazy links, checks the
    /// conservation ledgers and returns the summary and the series.
    pub fn finish(&mut self) -> (Summary, Series) {
        let now = self.now;
        self.drain_lazy(now);
        let t_s = ps_to_s(now);
        let mut ledger = Ledger::default();
        let mut in_path_bytes = 0u64;
        let mut ports = Vec::with_capacity(self.hops.len());
        for hop in &mut self.hops {
            match hop {
                Hop::Atm(h) => ports.push(atm_port_summary(h, now, &mut ledger)),
                Hop::Ip(_) => ports.push(PortSummary::default()),
            }
        }
        in_path_bytes += self.ip_ledger(now, &mut ledger, &mut ports);
        ledger.packets.generated = self.packets.generated;
        ledger.packets.delivered = self.packets.delivered;
        let future_drop_bytes: u64 = self
            .future_drops
            .iter()
            .filter(|d| d.at > now)
            .map(|d| d.data_bytes)
            .sum();
        in_path_bytes += future_drop_bytes;
        let mut dropped_in_network = self.byte_losses.dropped_in_network - future_drop_bytes;
        ledger.cells_generated += self.rm_generated;
        ledger.cells_delivered += self.rm_delivered;
        let mut vcs = Vec::with_capacity(self.vcs.len());
        for v in &self.vcs {
            ledger.cells_generated += v.cells_sent;
            ledger.cells_delivered += v.cells_delivered;
            if let Some(st) = &v.ses {
                ledger.cells_queued += st.queue.len() as u64;
            }
            if let Some(store) = &v.store {
                for e in store.entries.iter().filter(|e| e.packet.is_data) {
                    if e.dropped == e.cells {
                        dropped_in_network += e.packet.len as u64;
                    } else {
                        in_path_bytes += e.packet.len as u64;
                    }
                }
            }
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
                abr: v.ses.as_ref().map(|st| AbrSummary {
                    acr_cps: st.ses.acr,
                    last_er_cps: st.ses.last_er,
                    frms_sent: st.ses.frms_sent,
                    brms_received: st.ses.brms_received,
                    rule6_cuts: st.ses.rule6_cuts,
                    source_queue_cells: st.queue.len() as u64,
                }),
            });
        }
        let mut flows = Vec::with_capacity(self.flows.len());
        let b = &mut ledger.bytes;
        for fl in &self.flows {
            let s = &fl.sender;
            let r = &fl.receiver;
            b.sent += s.bytes_sent;
            b.sent_once += s.bytes_sent_once;
            b.retransmitted += s.bytes_retransmitted;
            b.delivered += r.bytes_delivered;
            b.duplicates += r.bytes_duplicate;
            b.held_out_of_order += r.held_bytes();
            in_path_bytes += fl.rx_queue.iter().map(|p| p.len as u64).sum::<u64>();
            flows.push(FlowSummary {
                name: fl.name.clone(),
                variant: s.variant(),
                goodput_mbps: if t_s > 0.0 {
                    r.bytes_delivered as f64 * 8.0 / t_s / 1e6
                } else {
                    0.0
                },
                bytes_delivered: r.bytes_delivered,
                bytes_sent: s.bytes_sent,
                bytes_sent_once: s.bytes_sent_once,
                bytes_retransmitted: s.bytes_retransmitted,
                bytes_duplicate: r.bytes_duplicate,
                segments_sent: s.segments_sent,
                timeouts: s.timeouts,
                fast_retransmits: s.s.fast_retransmits,
                final_cwnd_bytes: s.s.cwnd,
                final_ssthresh_bytes: s.s.ssthresh,
                srtt_s: s.rtt.srtt_s(),
                rto_s: ps_to_s(s.rtt.rto_ps()),
                completed_at_s: s.completed_at.map(ps_to_s),
            });
        }
        b.dropped_in_network = dropped_in_network;
        b.dropped_aal5 = self.byte_losses.dropped_aal5;
        b.in_path = in_path_bytes;
        if self.bad_checksums > 0 {
            ledger.problems.push(format!(
                "{} TCP checksums failed at the receiving hosts",
                self.bad_checksums
            ));
        }
        let summary = Summary {
            sim_time_s: t_s,
            events: self.events,
            seed: self.seed,
            completed: now >= self.duration,
            ports,
            vcs,
            flows,
            conservation: ledger.close(),
        };
        (summary, std::mem::take(&mut self.series))
    }
}

/// The summary of an ATM port, adding its cells to the ledger.
pub(super) fn atm_port_summary(h: &AtmHop, now: Time, ledger: &mut Ledger) -> PortSummary {
    let (port, link) = (&h.port, &h.link);
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
    PortSummary {
        name: link.name.clone(),
        layer: "atm",
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
        ..Default::default()
    }
}
