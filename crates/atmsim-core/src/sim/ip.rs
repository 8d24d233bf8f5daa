//! Packets: router ports (eager ones too) and links, and the IP part of the
//! ledger.

use super::*;

impl Simulation {
    /// The entry of `ip_route` for `packet` at hop `hop` of its path: the IP
    /// link (with EAGER_LINK set if that link's port is eager), or ROUTE_END
    /// past its last link.
    #[inline]
    pub(super) fn ip_route_at(&self, packet: &Packet, hop: u8) -> u32 {
        let base = self.ip_route_base[packet.flow as usize][packet.is_data as usize];
        self.ip_route[base as usize + hop as usize]
    }

    /// `packet` reaches the port of IP link `l` at time `at` (now, or later
    /// for an eager port fed straight from its upstream port), and goes on
    /// through the eager ports after it, to an eager end host if it can.
    pub(super) fn ip_port_arrive(&mut self, mut l: usize, mut packet: Packet, mut at: Time) {
        let now = self.now;
        loop {
            let Hop::Ip(h) = &mut self.hops[l] else {
                unreachable!("packet on ATM link {l}")
            };
            let Some(end) = h.port.arrive(at, now, &packet) else {
                self.ip_drop(l, &packet, at);
                return;
            };
            let far = end + h.delay_ps;
            let next = self.ip_route_at(&packet, packet.hop + 1);
            if next != ROUTE_END && next & EAGER_LINK != 0 {
                packet.hop += 1;
                l = (next & !EAGER_LINK) as usize;
                at = far;
                continue;
            }
            let Hop::Ip(h) = &mut self.hops[l] else {
                unreachable!()
            };
            if next == ROUTE_END && far <= self.until && h.in_flight.is_empty() {
                let fl = &self.flows[packet.flow as usize];
                let eager = if packet.is_data {
                    fl.eager_rx
                } else {
                    // The sender's timer must not expire before the ACK.
                    fl.eager_tx && fl.sender.deadline().is_none_or(|d| d > far)
                };
                if eager {
                    // The end host takes the packet at `far`, now; what it
                    // sends in answer goes on until it meets an event (the
                    // build makes sure it does).
                    self.packets.delivered += 1;
                    self.packet_arrives(packet, far);
                    return;
                }
            }
            let was_empty = h.in_flight.is_empty();
            h.in_flight.push_back((far, at, packet));
            if was_empty {
                // Simultaneous packet arrivals go by link, whenever they
                // were scheduled (eager steps schedule them early).
                self.queue
                    .push_ordered(far, Event::LinkArrival(l as u32), l as u32);
            }
            return;
        }
    }

    /// The port of IP link `l` dropped `packet`, which arrived at `at`.
    #[cold]
    fn ip_drop(&mut self, l: usize, packet: &Packet, at: Time) {
        let now = self.now;
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
            for &(far, at, pk) in h.in_flight.iter() {
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
            let arrived = p.packets_in() - future_in[l] - future_drops[l];
            let dropped = p.dropped() - future_drops[l];
            ledger.packets.queued += in_port[l];
            ledger.packets.on_links += on_link[l];
            ledger.packets.dropped += dropped;
            if p.packets_held(now) as u64 != in_port[l]
                || arrived != p.packets_out(now) + dropped + in_port[l]
                || p.arrivals_after(now) as u64 != future_in[l]
            {
                ledger.problems.push(format!(
                    "IP port {}: in {arrived} != out {} + dropped {dropped} + held {} (port says {})",
                    h.name,
                    p.packets_out(now),
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
                packets_out: p.packets_out(now),
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
