//! Closing a run: each part's summary and its terms of the conservation
//! ledgers (TCP over ABR (Kalyanaraman et al., 1996), section 7), checked
//! together.

use super::{LinkRef, Simulation};
use crate::engine::time::ps_to_s;
use crate::ids::{FlowId, VcId};
use crate::stats::{Ledger, PortSummary, Series, Summary};

impl Simulation {
    /// Closes the run at the time reached: drains lazy links, checks the
    /// conservation ledgers and returns the summary and the series.
    pub fn finish(&mut self) -> (Summary, Series) {
        let now = self.clock.now;
        self.drain_lazy(now, true);
        let t_s = ps_to_s(now);
        let mut ledger = Ledger::default();
        // Ports in scenario order: the ATM ones first add to the ledger, then
        // the IP fabric places its packets.
        let mut ports: Vec<PortSummary> = self
            .links
            .iter()
            .map(|&at| match at {
                LinkRef::Atm(a) => self.atm.port_summary(a, now, &mut ledger),
                LinkRef::Ip(_) => PortSummary::default(),
            })
            .collect();
        let (ip_ports, ip_dropped_bytes, ip_in_path_bytes) = self.ip.report(now, &mut ledger);
        let mut ip_ports = ip_ports.into_iter();
        for (slot, &at) in ports.iter_mut().zip(&self.links) {
            if let LinkRef::Ip(_) = at {
                *slot = ip_ports.next().expect("an IP port summary per IP link");
            }
        }
        let (mut vcs, end_bytes) = self.ends.report(t_s, &mut ledger);
        for (v, summary) in vcs.iter_mut().enumerate() {
            summary.gfr = self.atm.gfr_summary(VcId::from_index(v));
        }
        let mut flows = self.tcp.report(t_s, &mut ledger.bytes);
        for (f, flow) in flows.iter_mut().enumerate() {
            flow.rate_control = self
                .ip
                .flow_rate_summary(FlowId::from_index(f))
                .or_else(|| self.atm.flow_rate_summary(FlowId::from_index(f)));
        }
        if self.external.any() {
            let (ip_dropped, ip_in_network) = self.ip.external_terms();
            let (atm_lost, atm_in_network) = self.ends.external_terms();
            ledger.external = Some(
                self.external
                    .ledger(ip_dropped + atm_lost, ip_in_network + atm_in_network),
            );
        }
        let b = &mut ledger.bytes;
        b.dropped_in_network = ip_dropped_bytes + end_bytes.dropped_in_network;
        b.dropped_aal5 = end_bytes.dropped_aal5;
        b.in_path = ip_in_path_bytes + end_bytes.in_path + self.tcp.bytes_in_processing();
        if self.tcp.bad_checksums() > 0 {
            ledger.problems.push(format!(
                "{} TCP checksums failed at the receiving hosts",
                self.tcp.bad_checksums()
            ));
        }
        // The captures in the scenario's order: the IP fabric's and the ATM
        // fabric's, each a capture of one layer's links.
        let (mut files, mut captures) = self.ip.take_captures();
        let ends = &self.ends;
        let (atm_files, atm_captures) = self
            .atm
            .take_captures(|vc, frame| ends.captured_segment(vc, frame));
        files.extend(atm_files);
        captures.extend(atm_captures);
        let order = |name: &str| self.capture_order.iter().position(|n| n == name);
        captures.sort_by_key(|c| order(&c.name));
        files.sort_by_key(|(f, _)| {
            let stem = f.trim_end_matches(".pcap").trim_end_matches(".drops");
            (order(stem), f.ends_with(".drops.pcap"))
        });
        self.capture_files = files;
        let summary = Summary {
            sim_time_s: t_s,
            events: self.events,
            seed: self.seed,
            completed: now >= self.clock.duration,
            ports,
            vcs,
            flows,
            conservation: ledger.close(),
            captures,
        };
        (summary, self.probes.take_series())
    }

    /// The packet captures' files, `(file name, bytes)`, once [`Self::finish`]
    /// has run (empty before, and after they were taken).
    pub fn take_capture_files(&mut self) -> Vec<(String, Vec<u8>)> {
        std::mem::take(&mut self.capture_files)
    }
}
