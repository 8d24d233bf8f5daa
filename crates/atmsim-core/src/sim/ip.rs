//! Packets: router ports (eager ones too) and links, and the IP part of the
//! ledger.

use super::*;

impl Simulation {
    /// The IP link `packet` takes from its current hop, None at its end.
    #[inline]
    pub(super) fn ip_next_link(&self, packet: &Packet) -> Option<usize> {
        let FlowRoute::Ip {
            data_links,
            ack_links,
        } = &self.flows[packet.flow as usize].route
        else {
            unreachable!("packet of an ATM flow on an IP link")
        };
        let path = if packet.is_data {
            data_links
        } else {
            ack_links
        };
        path.get(packet.hop as usize).map(|&l| l as usize)
    }

    /// `packet` reaches the port of IP link `l` at time `at` (now, or later
    /// for an eager port fed straight from its upstream port).
    pub(super) fn ip_port_arrive(&mut self, l: usize, mut packet: Packet, at: Time) {
        let now = self.now;
        let Hop::Ip(h) = &mut self.hops[l] else {
            unreachable!("packet on ATM link {l}")
        };
        let Some(end) = h.port.arrive(at, now, &packet) else {
            let data_bytes = if packet.is_data { packet.len as u64 } else { 0 };
            self.byte_losses.dropped_in_network += data_bytes;
            if at > now {
                // Only drops still in the future at the end matter: forget
                // the past ones now and then, so the list stays short.
                if self.future_drops.len() >= 1024 {
                    self.future_drops.retain(|d| d.at > now);
                }
                self.future_drops.push(FutureDrop {
                    at,
                    link: l as u32,
                    data_bytes,
                });
            }
            return;
        };
        let far = end + h.delay_ps;
        packet.hop += 1;
        if let Some(next) = self.ip_next_link(&packet) {
            if let Hop::Ip(n) = &self.hops[next] {
                if n.eager_pred.is_some() {
                    self.ip_port_arrive(next, packet, far);
                    return;
                }
            }
        }
        packet.hop -= 1;
        let Hop::Ip(h) = &mut self.hops[l] else {
            unreachable!()
        };
        let was_empty = h.in_flight.is_empty();
        h.in_flight.push_back((far, at, packet));
        if was_empty {
            self.queue.push(far, Event::LinkArrival(l as u32));
        }
    }

    /// The IP ports' summaries (into `ports`, by link index) and their part
    /// of the ledger at `now`; returns the TCP payload bytes in the IP path.
    /// Packets pushed ahead through eager ports are placed where they are at
    /// `now`, from their recorded times.
    pub(super) fn ip_ledger(
        &mut self,
        now: Time,
        ledger: &mut Ledger,
        ports: &mut [PortSummary],
    ) -> u64 {
        let n = self.hops.len();
        let mut in_port = vec![0u64; n];
        let mut on_link = vec![0u64; n];
        let mut future_in = vec![0u64; n];
        let mut future_drops = vec![0u64; n];
        let mut in_path = 0u64;
        // Where is a packet that reaches eager port `l` at `at` > now?
        let upstream = |hops: &[Hop], l: usize, at: Time| -> (usize, bool) {
            let Hop::Ip(h) = &hops[l] else { unreachable!() };
            let p = h
                .eager_pred
                .expect("a future arrival at a port that is not eager")
                as usize;
            let Hop::Ip(ph) = &hops[p] else {
                unreachable!()
            };
            (p, at - ph.delay_ps > now)
        };
        for l in 0..n {
            let Hop::Ip(h) = &self.hops[l] else { continue };
            for &(far, at, pk) in &h.in_flight {
                if pk.is_data {
                    in_path += pk.len as u64;
                }
                if at > now {
                    future_in[l] += 1;
                    let (p, in_p) = upstream(&self.hops, l, at);
                    if in_p {
                        in_port[p] += 1;
                    } else {
                        on_link[p] += 1;
                    }
                } else if far - h.delay_ps > now {
                    in_port[l] += 1;
                } else {
                    on_link[l] += 1;
                }
            }
        }
        for d in self.future_drops.iter().filter(|d| d.at > now) {
            let l = d.link as usize;
            future_drops[l] += 1;
            let (p, in_p) = upstream(&self.hops, l, d.at);
            if in_p {
                in_port[p] += 1;
            } else {
                on_link[p] += 1;
            }
        }
        for l in 0..n {
            let Hop::Ip(h) = &mut self.hops[l] else {
                continue;
            };
            h.port.settle(now);
            let p = &h.port;
            let arrived = p.packets_in - future_in[l] - future_drops[l];
            let dropped = p.dropped() - future_drops[l];
            ledger.packets.queued += in_port[l];
            ledger.packets.on_links += on_link[l];
            ledger.packets.dropped += dropped;
            if p.packets_held(now) as u64 != in_port[l]
                || arrived != p.packets_out + dropped + in_port[l]
                || p.arrivals_after(now) as u64 != future_in[l]
            {
                ledger.problems.push(format!(
                    "IP port {}: in {arrived} != out {} + dropped {dropped} + held {} (port says {})",
                    h.name,
                    p.packets_out,
                    in_port[l],
                    p.packets_held(now)
                ));
            }
            ports[l] = PortSummary {
                name: h.name.clone(),
                layer: "ip",
                drops: DROP_REASON_NAMES
                    .iter()
                    .map(|n| (n.to_string(), 0))
                    .collect(),
                utilization: if now > 0 {
                    p.busy_ps(now) as f64 / now as f64
                } else {
                    0.0
                },
                packets_in: arrived,
                packets_out: p.packets_out,
                packets_dropped: dropped,
                packets_dropped_red: p.dropped_red,
                max_queue_packets: p.max_queue,
                mean_queue_packets: p.mean_queue(now),
                ..Default::default()
            };
        }
        in_path
    }
}
