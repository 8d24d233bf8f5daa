//! Explicit rates for TCP flows at a router port: the simplified ERICA+ of
//! Explicit rate control of TCP, section 5 (Satyavolu, Duvedi and
//! Kalyanaraman, "Explicit rate control of TCP applications", ATM Forum
//! 98-0152, 1998).
//!
//! At the end of each averaging interval the port measures its input rate
//! and each flow's rate (bytes of the flow's packets that reached the port
//! in the interval), and its queue. The target capacity is f(Tq) x the link
//! rate, with Tq the queueing delay of the queue at the link rate and f the
//! ERICA+ curve (T0, a, b, floored at QDLF); z = input / target; with N the
//! number of active sources, FairShare = target / N. Each session's
//! activity is 1 in an interval it was seen in and decays by `active_decay`
//! per interval it was not; N is the sum, at least 1. With `active_decay`
//! 0 (the scenarios' default) N is the number of sources seen in the
//! interval, as the paper's pseudo-code measures it and as Kalyanaraman's
//! dissertation counts VCs ("Number Active VCs In Last Interval = Max(sum
//! of Seen VC In This Interval, 1)"); above 0 it is the dissertation's
//! "Averaging VCs" option (a VC's "Contribution" times a "Decay Factor" per
//! interval), whose factor no source we could read gives; 1 counts every session
//! ever seen.
//! For each session, every flow the port has seen a packet of, in this
//! interval or an earlier one (the paper's "FOR each session i"; Rate[i] = 0
//! for a session silent in the interval, which leaves it the fair share at
//! most):
//!
//! ```text
//! VCShare = Rate[i] / z
//! IF z > 1 + delta: ER[i] = min(max(VCShare, FairShare), (1 + inc) ER[i])
//! ELSE:             ER[i] = min(max(MaxAllocPrevious, VCShare), (1 + inc) ER[i])
//! MaxAllocCurrent = max(MaxAllocCurrent, ER[i])
//! IF ER[i] > FairShare AND Rate[i] < FairShare: ER[i] = FairShare
//! ```
//!
//! then MaxAllocPrevious = MaxAllocCurrent and MaxAllocCurrent = FairShare.
//! Increases are capped at `inc` (10 %) of the previous ER per interval,
//! decreases are not. Rates are in bytes/s (IP bytes).
//!
//! The paper leaves the initial ER open; with a cap on increases an ER that
//! starts at 0 stays at 0. A flow's ER starts at the port's link rate, as an
//! ABR source's forward RM cell starts with ER = PCR (ATM Forum TM 4.0): no
//! limit until the port has measured the flow, whose first computed ER then
//! falls to its allocation at once (decreases are not capped). Our choice.

use crate::engine::{Time, PS_PER_S};
use crate::ip::Packet;

/// The translation of a rate into a window of Explicit rate control of TCP (section 3): writes
/// min(window, ER x T) into ACK `packet`'s window field, ER in bytes/s and T
/// in ps, in units of the flow's window scale (RFC 1323: the field is the
/// window shifted right by `scale`, truncated), never raising the field and
/// never writing more than 65535.
///
/// The field written is at least ceil(`mss` / 2^`scale`), so the window
/// the sender reads back (the field shifted left) is at least one segment
/// of `mss` bytes. The floor is rounded up in the field's units, not
/// applied to the bytes before the shift: MSS >> scale would truncate it
/// whenever the MSS is not a multiple of 2^scale (MSS 1460 at scale 5:
/// 45 x 32 = 1440 bytes), and a sender that sends only segments that fit
/// its window would then stop once its flight was acknowledged, until its
/// persist timer forced a segment out (docs/model.md, "TCP").
///
/// The checksum follows incrementally (RFC 1624). Returns true when the
/// field was lowered. Routers and ATM edges share it.
pub fn limit_window(packet: &mut Packet, er: f64, t_ps: Time, mss: u32, scale: u8) -> bool {
    let w = (er * t_ps as f64 / PS_PER_S as f64) as u64;
    let one_segment = (mss as u64).div_ceil(1 << scale);
    let field = (w >> scale).max(one_segment).min(u16::MAX as u64) as u16;
    if field < packet.wnd {
        packet.rewrite_window(field);
        true
    } else {
        false
    }
}

/// The ERICA+ queue-delay curve and the controller's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateControlParams {
    /// Averaging interval, ps.
    pub interval_ps: u64,
    /// Target queueing delay T0, ps.
    pub t0_ps: u64,
    /// Curve above T0.
    pub a: f64,
    /// Curve below T0.
    pub b: f64,
    /// Floor of the target factor (queue drain limit factor).
    pub qdlf: f64,
    /// Overload band: z > 1 + delta is overload.
    pub delta: f64,
    /// Largest increase of a flow's ER per interval, as a fraction of it.
    pub max_increase: f64,
    /// Decay per interval of a silent session's activity in the number of
    /// active sources, [0, 1].
    pub active_decay: f64,
}

impl RateControlParams {
    /// f(Tq) for a queueing delay of `tq_s` seconds (the ERICA+ curve).
    pub fn factor(&self, tq_s: f64) -> f64 {
        let t0 = self.t0_ps as f64 / PS_PER_S as f64;
        let (k, x) = if tq_s > t0 {
            (self.a, tq_s)
        } else {
            (self.b, tq_s)
        };
        let f = k * t0 / ((k - 1.0) * x + t0);
        if f.is_finite() {
            f.max(self.qdlf)
        } else {
            self.qdlf
        }
    }
}

/// One flow's state at the port.
#[derive(Clone, Copy, Debug, Default)]
struct FlowRate {
    /// Bytes in the current interval.
    bytes: u64,
    /// Explicit rate, bytes/s (None until the flow is first measured).
    er: Option<f64>,
    /// The port has seen a packet of the flow.
    session: bool,
    /// Its weight in the number of active sources.
    activity: f64,
}

/// The rate controller of one router port.
#[derive(Clone, Debug)]
pub struct RateControl {
    /// Parameters.
    pub p: RateControlParams,
    /// The link rate, bytes/s.
    link_bps: f64,
    flows: Vec<FlowRate>,
    /// The sessions: the flows the port has seen a packet of, in the order
    /// it first saw them. A router keeps state only for the flows it has
    /// seen; a flow counted as a session before its first packet would get
    /// ER = MaxAllocPrevious = 0 in the first interval and, with increases
    /// capped at 10 % of the last ER, keep it.
    sessions: Vec<u32>,
    /// Flows seen in the current interval (indices into `flows`).
    seen: Vec<u32>,
    input_bytes: u64,
    max_alloc_prev: f64,
    max_alloc_cur: f64,
    /// Of the last interval: load factor, fair share (bytes/s), target.
    pub z: f64,
    /// Of the last interval: the fair share, bytes/s.
    pub fair_share: f64,
    /// Of the last interval: the target capacity, bytes/s.
    pub target: f64,
}

impl RateControl {
    /// A controller for flows `0..n_flows` at a port sending `link_bps`
    /// bits/s.
    pub fn new(p: RateControlParams, link_bps: f64, n_flows: usize) -> Self {
        RateControl {
            p,
            link_bps: link_bps / 8.0,
            flows: vec![FlowRate::default(); n_flows],
            sessions: Vec::new(),
            seen: Vec::new(),
            input_bytes: 0,
            max_alloc_prev: 0.0,
            max_alloc_cur: 0.0,
            z: 0.0,
            fair_share: 0.0,
            target: 0.0,
        }
    }

    /// A packet of `bytes` IP bytes of `flow` reached the port.
    #[inline]
    pub fn count(&mut self, flow: u32, bytes: u32) {
        let f = &mut self.flows[flow as usize];
        if f.bytes == 0 {
            self.seen.push(flow);
            if !f.session {
                f.session = true;
                self.sessions.push(flow);
            }
        }
        f.bytes += bytes as u64;
        self.input_bytes += bytes as u64;
    }

    /// The end of an interval of `length_ps` with `queue_bytes` waiting:
    /// every measured flow's new ER.
    pub fn end_interval(&mut self, length_ps: u64, queue_bytes: u64) {
        let secs = length_ps as f64 / PS_PER_S as f64;
        let capacity = self.link_bps;
        let tq = queue_bytes as f64 / capacity;
        self.target = self.p.factor(tq) * capacity;
        let input = self.input_bytes as f64 / secs;
        self.z = if input > 0.0 && self.target > 0.0 {
            input / self.target
        } else {
            0.0
        };
        let mut n = 0.0;
        for &i in &self.sessions {
            let f = &mut self.flows[i as usize];
            f.activity = if f.bytes > 0 {
                1.0
            } else {
                f.activity * self.p.active_decay
            };
            n += f.activity;
        }
        self.fair_share = self.target / n.max(1.0);
        for &i in &self.sessions {
            let f = &mut self.flows[i as usize];
            let rate = f.bytes as f64 / secs;
            let vc_share = if self.z > 0.0 { rate / self.z } else { rate };
            let cap = (1.0 + self.p.max_increase) * f.er.unwrap_or(capacity);
            let mut er = if self.z > 1.0 + self.p.delta {
                vc_share.max(self.fair_share).min(cap)
            } else {
                self.max_alloc_prev.max(vc_share).min(cap)
            };
            self.max_alloc_cur = self.max_alloc_cur.max(er);
            if er > self.fair_share && rate < self.fair_share {
                er = self.fair_share;
            }
            f.er = Some(er);
            f.bytes = 0;
        }
        self.seen.clear();
        self.input_bytes = 0;
        self.max_alloc_prev = self.max_alloc_cur;
        self.max_alloc_cur = self.fair_share;
    }

    /// Flow `flow`'s explicit rate, bytes/s (the link rate before the port
    /// first measured it).
    pub fn er(&self, flow: u32) -> f64 {
        self.flows[flow as usize].er.unwrap_or(self.link_bps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000_000;

    fn params() -> RateControlParams {
        RateControlParams {
            interval_ps: 5 * MS,
            t0_ps: 1_500_000_000,
            a: 1.15,
            b: 1.0,
            qdlf: 0.5,
            delta: 0.1,
            max_increase: 0.1,
            active_decay: 0.0,
        }
    }

    #[test]
    fn the_curve_of_erica_plus() {
        let p = params();
        // At or below T0 with b = 1: f = 1.
        assert_eq!(p.factor(0.0), 1.0);
        assert_eq!(p.factor(0.0015), 1.0);
        // Above: a T0 / ((a - 1) Tq + T0); at Tq = 11.5 ms:
        // 1.15 x 1.5 / (0.15 x 11.5 + 1.5) = 1.725 / 3.225.
        assert!((p.factor(0.0115) - 1.725 / 3.225).abs() < 1e-12);
        // Floored at QDLF.
        assert_eq!(p.factor(1.0), 0.5);
    }

    #[test]
    fn intervals_by_hand() {
        // A 8 Mbit/s link (1,000,000 bytes/s), two flows, 5 ms intervals.
        let mut c = RateControl::new(params(), 8e6, 2);
        // Interval 1: flow 0 sends 4000 bytes (800,000 B/s), flow 1 1000
        // (200,000 B/s); empty queue: target 1,000,000, z = 1, fair share
        // 500,000. Underload branch: MaxAllocPrevious = 0, so ER = VCShare,
        // capped at 1.1 x the link rate; flow 1 below the fair share asking
        // less stays at its share.
        c.count(0, 4000);
        c.count(1, 1000);
        c.end_interval(5 * MS, 0);
        assert!((c.z - 1.0).abs() < 1e-12);
        assert!((c.er(0) - 800_000.0).abs() < 1e-6);
        assert!((c.er(1) - 200_000.0).abs() < 1e-6);
        // Interval 2: the same input, the queue at 11.5 ms of the link:
        // target 534,884, z = 1.87 > 1.1: ER = max(VCShare, FairShare),
        // with fair share 267,442: flow 0 gets 800,000 / 1.87 = 427,907;
        // flow 1 its fair share, but only 10 % above its last ER: 220,000.
        c.count(0, 4000);
        c.count(1, 1000);
        c.end_interval(5 * MS, 11_500);
        let target = 1.725 / 3.225 * 1e6;
        assert!((c.target - target).abs() < 1e-6);
        assert!((c.er(0) - 800_000.0 / (1e6 / target)).abs() < 1e-6);
        assert!((c.er(1) - 220_000.0).abs() < 1e-6);
        // Interval 3: flow 1 sends nothing (Rate 0) and is still updated:
        // one active source, empty queue, fair share = target = 1,000,000;
        // underload (z = 0.08): ER = max(MaxAllocPrevious, 0) = 427,907 (the
        // largest ER of interval 2), capped at 1.1 x 220,000 = 242,000; below
        // the fair share, so no clamp.
        c.count(0, 400);
        c.end_interval(5 * MS, 0);
        assert!((c.fair_share - 1e6).abs() < 1e-6);
        assert!((c.er(1) - 242_000.0).abs() < 1e-6);
    }

    #[test]
    fn the_window_written_is_at_least_one_segment_after_the_scale() {
        let ack = |wnd: u16| Packet::ack(0, 0, 1000, wnd);
        // ER x T = 100,000 B/s x 1 ms = 100 bytes, below one segment.
        let (er, t) = (100_000.0, MS);
        // MSS 1460 at scale 5: ceil(1460 / 32) = 46 units, 1472 bytes (the
        // truncated 1460 >> 5 = 45 units would be 1440 bytes, less than a
        // segment).
        let mut p = ack(32_768);
        assert!(limit_window(&mut p, er, t, 1460, 5));
        assert_eq!(p.wnd, 46);
        assert!((p.wnd as u32) << 5 >= 1460);
        assert!(p.checksum_ok());
        // A multiple of 2^scale needs no rounding: MSS 1024 at scale 4 is 64.
        let mut p = ack(32_768);
        assert!(limit_window(&mut p, er, t, 1024, 4));
        assert_eq!(p.wnd, 64);
        // Without scaling the floor is the MSS itself.
        let mut p = ack(65_535);
        assert!(limit_window(&mut p, er, t, 1460, 0));
        assert_eq!(p.wnd, 1460);
        // ER x T between MSS and the rounded floor (1465 bytes: 45 units
        // truncated) is raised to the floor too.
        let mut p = ack(32_768);
        assert!(limit_window(&mut p, 1_465_000.0, t, 1460, 5));
        assert_eq!(p.wnd, 46);
        // Above the floor the field is ER x T truncated: 100,000 bytes at
        // scale 5 is 3125 units.
        let mut p = ack(32_768);
        assert!(limit_window(&mut p, 100_000_000.0, t, 1460, 5));
        assert_eq!(p.wnd, 3125);
        // Never raised: an ACK already below the floor keeps its field.
        let mut p = ack(10);
        assert!(!limit_window(&mut p, er, t, 1460, 5));
        assert_eq!(p.wnd, 10);
        // Never above 65535: a floor beyond the field (MSS 65495 without
        // scaling fits; at scale 0 and an ER of 10^12 B/s the field is
        // 65535).
        let mut p = ack(u16::MAX);
        assert!(!limit_window(&mut p, 1e12, t, 1460, 0));
        assert_eq!(p.wnd, u16::MAX);
        let mut p = ack(u16::MAX);
        assert!(limit_window(&mut p, er, t, 65_495, 0));
        assert_eq!(p.wnd, 65_495);
        // At the largest shift one unit (16 KB) covers any MSS.
        let mut p = ack(100);
        assert!(limit_window(&mut p, er, t, 1460, 14));
        assert_eq!(p.wnd, 1);
    }

    #[test]
    fn an_unmeasured_flow_has_the_link_rate() {
        let c = RateControl::new(params(), 8e6, 1);
        assert_eq!(c.er(0), 1_000_000.0);
    }

    #[test]
    fn the_number_of_active_sources_decays_with_silence() {
        // Two sessions seen in interval 1, only flow 0 in interval 2 (empty
        // queue: target 1,000,000 bytes/s). N = 1 + decay: the fair share is
        // the target over 1 (decay 0), 1.5 (decay 0.5) or 2 (decay 1).
        for (decay, n) in [(0.0, 1.0), (0.5, 1.5), (1.0, 2.0)] {
            let mut p = params();
            p.active_decay = decay;
            let mut c = RateControl::new(p, 8e6, 2);
            c.count(0, 1000);
            c.count(1, 1000);
            c.end_interval(5 * MS, 0);
            assert!((c.fair_share - 500_000.0).abs() < 1e-6);
            c.count(0, 1000);
            c.end_interval(5 * MS, 0);
            assert!(
                (c.fair_share - 1e6 / n).abs() < 1e-6,
                "{decay}: {}",
                c.fair_share
            );
        }
    }

    #[test]
    fn a_silent_flow_falls_to_the_fair_share_under_overload() {
        // Three sessions on a link of 1,000,000 bytes/s, 5 ms intervals.
        // Interval 1: 1000, 4000 and 1000 bytes (1.2 x the link): z = 1.2,
        // fair share 333,333; flow 1 gets its VCShare, 800,000 / 1.2.
        let mut c = RateControl::new(params(), 8e6, 3);
        c.count(0, 1000);
        c.count(1, 4000);
        c.count(2, 1000);
        c.end_interval(5 * MS, 0);
        assert!((c.er(1) - 800_000.0 / 1.2).abs() < 1e-6);
        // Interval 2: flows 0 and 2 send 3000 bytes each, flow 1 nothing:
        // z = 1.2, two active sources, fair share 500,000. Flow 1's Rate is 0:
        // max(VCShare = 0, FairShare) = 500,000 (below 1.1 x its last ER), as
        // the paper's loop over every session gives; a controller that skipped
        // it would leave it at 666,667.
        c.count(0, 3000);
        c.count(2, 3000);
        c.end_interval(5 * MS, 0);
        assert!((c.fair_share - 500_000.0).abs() < 1e-6);
        assert!((c.er(1) - 500_000.0).abs() < 1e-6, "{}", c.er(1));
    }
}
