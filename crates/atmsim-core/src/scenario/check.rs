//! The checks of a whole network: every value in its range (each model
//! checks its own parameters, [`crate::param`]), every reference to a
//! node, link, VC or flow present and of the right kind, paths that join,
//! and the explicit-rate control placed where it can act. The first
//! failure is returned, as one line naming its JSON path.

use super::limits;
use super::{AckControlSpec, FlowSpec, Layer, LinkSpec, Scenario, SourceSpec, VcSpec};
use crate::atm::ServiceClass;

impl Scenario {
    /// Rejects a model the simulator cannot run: a value outside its range
    /// (see [`limits`]) or an inconsistent reference, naming its JSON path.
    pub fn check(&self) -> Result<(), String> {
        self.check_ranges("")?;
        for (i, l) in self.links.iter().enumerate() {
            self.check_link(i, l)?;
        }
        let mut vc_used = vec![false; self.vcs.len()];
        for (i, v) in self.vcs.iter().enumerate() {
            self.check_vc(i, v)?;
        }
        for (i, s) in self.sources.iter().enumerate() {
            self.check_source(i, s, &mut vc_used)?;
        }
        for (i, f) in self.flows.iter().enumerate() {
            self.check_flow(i, f, &mut vc_used)?;
        }
        self.check_probes()?;
        self.check_captures()
    }

    /// The captures: each named once (its files), over IP links.
    fn check_captures(&self) -> Result<(), String> {
        let mut names = std::collections::HashSet::new();
        for (i, c) in self.captures.iter().enumerate() {
            let p = format!("captures[{i}]");
            c.check_ranges(&p)?;
            let plain = |ch: char| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_';
            if c.name.is_empty() || !c.name.chars().all(plain) {
                return Err(format!(
                    "{p}.name = {:?}: letters, digits, - and _ only (it names files)",
                    c.name
                ));
            }
            if !names.insert(c.name.as_str()) {
                return Err(format!("{p}.name: {:?} names another capture", c.name));
            }
            let mut layer = None;
            for (k, tap) in c.links.iter().enumerate() {
                let Some(l) = self.links.get(tap.link as usize) else {
                    return Err(format!("{p}.links[{k}].link: no link {}", tap.link));
                };
                // One file format per capture: IP datagrams, or AAL5 frames.
                if *layer.get_or_insert(l.layer) != l.layer {
                    return Err(format!(
                        "{p}.links[{k}].link: link {} is not of the layer of the capture's \
                         first link (a capture is of IP links or of ATM links)",
                        tap.link
                    ));
                }
            }
        }
        Ok(())
    }

    /// Link `i`: its ends, its rates and delay, then its port by layer.
    fn check_link(&self, i: usize, l: &LinkSpec) -> Result<(), String> {
        let n_nodes = self.nodes.len();
        if l.from as usize >= n_nodes {
            return Err(format!("links[{i}].from: no node {}", l.from));
        }
        if l.to as usize >= n_nodes {
            return Err(format!("links[{i}].to: no node {}", l.to));
        }
        l.check_ranges(&format!("links[{i}]"))?;
        match l.layer {
            Layer::Atm => self.check_atm_link(i, l),
            Layer::Ip => self.check_ip_link(i, l),
        }
    }

    /// ATM link `i`'s cell rate and port: its buffer in cells, its drop
    /// policy, its switch algorithm and its explicit-rate control.
    fn check_atm_link(&self, i: usize, l: &LinkSpec) -> Result<(), String> {
        // An ATM link needs its cell rate: 0 is for IP links.
        limits::CELL_RATE_CPS.check(format_args!("links[{i}].cell_rate_cps"), l.cell_rate_cps)?;
        if l.buffer_packets.is_some() || l.buffer_bytes.is_some() {
            return Err(format!(
                "links[{i}]: buffer_packets and buffer_bytes are for IP links"
            ));
        }
        let buffer = l.buffer_cells.unwrap_or(u32::MAX - 1) as u64;
        l.policy.check_atm(&format!("links[{i}].policy"), buffer)?;
        if let Some(a) = &l.algorithm {
            a.check(&format!("links[{i}].algorithm"))?;
        }
        self.check_atm_control(i, l)
    }

    /// IP link `i`'s port: its buffer in packets or bytes, its drop policy
    /// and its explicit-rate control.
    fn check_ip_link(&self, i: usize, l: &LinkSpec) -> Result<(), String> {
        if l.buffer_cells.is_some() {
            return Err(format!("links[{i}].buffer_cells: for ATM links only"));
        }
        if l.buffer_packets.is_some() && l.buffer_bytes.is_some() {
            return Err(format!("links[{i}]: buffer in packets or bytes, not both"));
        }
        l.policy.check_ip(&format!("links[{i}].policy"))?;
        if l.algorithm.is_some() {
            return Err(format!(
                "links[{i}].algorithm: switch algorithms run on ATM ports"
            ));
        }
        if let Some(rc) = &l.rate_control {
            rc.check(&format!("links[{i}].rate_control"))?;
        }
        match &l.ack_control {
            Some(ac) => self.check_ip_ack_control(i, l, ac),
            None => Ok(()),
        }
    }

    /// The ACK control of IP link `i`: its rates come from an IP port with
    /// rate control leaving the node where this link ends.
    fn check_ip_ack_control(
        &self,
        i: usize,
        l: &LinkSpec,
        ac: &AckControlSpec,
    ) -> Result<(), String> {
        let p = format!("links[{i}].ack_control");
        let r = ac.rates_from;
        let Some(ports) = self.links.get(r as usize) else {
            return Err(format!("{p}.rates_from: no link {r}"));
        };
        if ports.layer != Layer::Ip || ports.rate_control.is_none() {
            return Err(format!(
                "{p}.rates_from: link {r} is not an IP link with rate_control"
            ));
        }
        if ports.from != l.to {
            return Err(format!(
                "{p}.rates_from: link {r} does not leave node {}, where this link ends",
                l.to
            ));
        }
        ac.window.check(&format!("{p}.window"))
    }

    /// The explicit-rate control of TCP at an ATM port and edge: rates measured
    /// at an ATM port, and the windows of the ACK frames reassembled where the
    /// ACK VCs ending with ATM link `i` end (Explicit rate control of TCP
    /// (Satyavolu et al., 1998) section 7: "ATM edge devices/switches, as well
    /// as ... Internet routers").
    fn check_atm_control(&self, i: usize, l: &LinkSpec) -> Result<(), String> {
        if let Some(rc) = &l.rate_control {
            rc.check(&format!("links[{i}].rate_control"))?;
        }
        let Some(ac) = &l.ack_control else {
            return Ok(());
        };
        let p = format!("links[{i}].ack_control");
        let r = ac.rates_from;
        let Some(ports) = self.links.get(r as usize) else {
            return Err(format!("{p}.rates_from: no link {r}"));
        };
        if ports.layer != Layer::Atm || ports.rate_control.is_none() {
            return Err(format!(
                "{p}.rates_from: link {r} is not an ATM link with rate_control"
            ));
        }
        if ac.ack_bucket {
            return Err(format!(
                "{p}.ack_bucket: the ack bucket is modelled at IP routers only"
            ));
        }
        ac.window.check(&format!("{p}.window"))?;
        let ends_here = self.flows.iter().any(|f| {
            f.ack_vc
                .and_then(|v| self.vcs.get(v as usize))
                .and_then(|v| v.links.last())
                == Some(&(i as u32))
        });
        if !ends_here {
            return Err(format!(
                "{p}: no flow's ack_vc ends with this link (an ATM edge writes the windows of \
                 the ACK frames it reassembles, where their VC ends)"
            ));
        }
        Ok(())
    }

    /// A path of link indices at `path`: in range, of `layer`, each link
    /// beginning where the one before ends.
    fn check_path(&self, path: &str, links: &[u32], layer: Layer) -> Result<(), String> {
        limits::PATH_LINKS.check_len(path, links.len())?;
        for (k, &l) in links.iter().enumerate() {
            match self.links.get(l as usize) {
                None => return Err(format!("{path}[{k}]: no link {l}")),
                Some(link) if link.layer != layer => {
                    let want = match layer {
                        Layer::Atm => "ATM",
                        Layer::Ip => "IP",
                    };
                    return Err(format!("{path}[{k}]: link {l} is not an {want} link"));
                }
                Some(_) => {}
            }
        }
        for (k, w) in links.windows(2).enumerate() {
            if self.links[w[0] as usize].to != self.links[w[1] as usize].from {
                return Err(format!(
                    "{path}[{}]: links {} and {} do not join",
                    k + 1,
                    w[0],
                    w[1]
                ));
            }
        }
        Ok(())
    }

    /// The cell rate of the first link of VC `v` (checked before).
    fn first_link_cps(&self, v: u32) -> f64 {
        self.links[self.vcs[v as usize].links[0] as usize].cell_rate_cps
    }

    fn check_vc(&self, i: usize, v: &VcSpec) -> Result<(), String> {
        v.check_ranges(&format!("vcs[{i}]"))?;
        self.check_path(&format!("vcs[{i}].links"), &v.links, Layer::Atm)?;
        if (v.class == ServiceClass::Gfr) != v.gfr.is_some() {
            return Err(format!(
                "vcs[{i}]: class gfr and gfr parameters go together"
            ));
        }
        if let Some(g) = &v.gfr {
            g.check(&format!("vcs[{i}].gfr"), self.first_link_cps(i as u32))?;
        }
        let is_abr = v.class == ServiceClass::Abr;
        if is_abr != v.abr.is_some() {
            return Err(format!(
                "vcs[{i}]: class abr and abr parameters go together"
            ));
        }
        let Some(p) = &v.abr else {
            if !v.back_links.is_empty() {
                return Err(format!("vcs[{i}].back_links: for ABR VCs only"));
            }
            return Ok(());
        };
        p.check(&format!("vcs[{i}].abr"), self.first_link_cps(i as u32))?;
        // The backward path must visit the forward path's nodes in reverse.
        let n = v.links.len();
        if v.back_links.len() != n {
            return Err(format!(
                "vcs[{i}].back_links: must reverse the forward path ({n} links)"
            ));
        }
        for (k, &b) in v.back_links.iter().enumerate() {
            let Some(bl) = self.links.get(b as usize) else {
                return Err(format!("vcs[{i}].back_links[{k}]: no link {b}"));
            };
            let f = &self.links[v.links[n - 1 - k] as usize];
            if bl.layer != Layer::Atm || bl.from != f.to || bl.to != f.from {
                return Err(format!(
                    "vcs[{i}].back_links[{k}]: must reverse the forward path"
                ));
            }
        }
        Ok(())
    }

    fn check_source(&self, i: usize, s: &SourceSpec, vc_used: &mut [bool]) -> Result<(), String> {
        if s.vc as usize >= self.vcs.len() {
            return Err(format!("sources[{i}].vc: no VC {}", s.vc));
        }
        if std::mem::replace(&mut vc_used[s.vc as usize], true) {
            return Err(format!("sources[{i}]: VC {} already has a source", s.vc));
        }
        s.check_ranges(&format!("sources[{i}]"))?;
        if let Some(stop) = s.stop_ps {
            if stop <= s.start_ps {
                return Err(format!(
                    "sources[{i}].stop_ps = {stop} is not after sources[{i}].start_ps = {}",
                    s.start_ps
                ));
            }
        }
        // Rates: in range, and at most the first link's cell rate.
        s.model
            .check(&format!("sources[{i}].model"), self.first_link_cps(s.vc))
    }

    fn check_flow(&self, i: usize, f: &FlowSpec, vc_used: &mut [bool]) -> Result<(), String> {
        let p = format!("flows[{i}]");
        f.check_ranges(&p)?;
        if f.processing_jitter_ps > f.processing_ps {
            return Err(format!(
                "{p}.processing_jitter_ps = {} is above {p}.processing_ps = {}",
                f.processing_jitter_ps, f.processing_ps
            ));
        }
        f.tcp.check(&p)?;
        let endpoints = |links: &[u32]| {
            let first = &self.links[links[0] as usize];
            let last = &self.links[links[links.len() - 1] as usize];
            (first.from, last.to)
        };
        let (data, ack) = match f.layer {
            Layer::Atm => {
                let (Some(d), Some(a)) = (f.data_vc, f.ack_vc) else {
                    return Err(format!("{p}: an ATM flow needs data_vc and ack_vc"));
                };
                if !(f.data_links.is_empty() && f.ack_links.is_empty()) {
                    return Err(format!("{p}: data_links and ack_links are for IP flows"));
                }
                for (key, v) in [("data_vc", d), ("ack_vc", a)] {
                    if v as usize >= self.vcs.len() {
                        return Err(format!("{p}.{key}: no VC {v}"));
                    }
                    // Flows may share VCs (an edge router multiplexes many
                    // TCP connections onto one VC), sources may not.
                    if vc_used[v as usize] {
                        return Err(format!("{p}.{key}: VC {v} carries a traffic source"));
                    }
                }
                if d == a {
                    return Err(format!(
                        "{p}: data_vc and ack_vc must differ (both are VC {d})"
                    ));
                }
                (&self.vcs[d as usize].links, &self.vcs[a as usize].links)
            }
            Layer::Ip => {
                if f.data_vc.is_some() || f.ack_vc.is_some() {
                    return Err(format!("{p}: data_vc and ack_vc are for ATM flows"));
                }
                self.check_path(&format!("{p}.data_links"), &f.data_links, Layer::Ip)?;
                self.check_path(&format!("{p}.ack_links"), &f.ack_links, Layer::Ip)?;
                (&f.data_links, &f.ack_links)
            }
        };
        let ((a, b), (c, d)) = (endpoints(data), endpoints(ack));
        if a == d && b == c {
            Ok(())
        } else {
            Err(format!(
                "{p}: the ACK path must run from the receiver back to the sender"
            ))
        }
    }

    fn check_probes(&self) -> Result<(), String> {
        let p = &self.probes;
        p.check_ranges("probes")?;
        if p.period_ps == 0 && p.any() {
            return Err("probes.period_ps must be > 0 when a series is asked for".into());
        }
        let lists: [(&str, &[u32], usize); 5] = [
            ("queue", &p.queue, self.links.len()),
            ("utilization", &p.utilization, self.links.len()),
            ("vc_rate", &p.vc_rate, self.vcs.len()),
            ("vc_losses", &p.vc_losses, self.vcs.len()),
            ("flows", &p.flows, self.flows.len()),
        ];
        for (key, list, n) in lists {
            if let Some((k, x)) = list.iter().enumerate().find(|(_, &x)| x as usize >= n) {
                return Err(format!("probes.{key}[{k}]: no entry {x}"));
            }
        }
        for (k, &l) in p.vc_queue.iter().enumerate() {
            if self
                .links
                .get(l as usize)
                .is_none_or(|link| link.layer != Layer::Atm)
            {
                return Err(format!("probes.vc_queue[{k}]: {l} is not an ATM link"));
            }
        }
        for (k, &v) in p.abr_vcs.iter().enumerate() {
            if self.vcs.get(v as usize).is_none_or(|vc| vc.abr.is_none()) {
                return Err(format!("probes.abr_vcs[{k}]: {v} is not an ABR VC"));
            }
        }
        for (k, &l) in p.abr_ports.iter().enumerate() {
            if self
                .links
                .get(l as usize)
                .is_none_or(|link| link.algorithm.is_none())
            {
                return Err(format!(
                    "probes.abr_ports[{k}]: link {l} has no switch algorithm"
                ));
            }
        }
        Ok(())
    }
}
