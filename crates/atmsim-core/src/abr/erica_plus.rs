//! ERICA+ (Jain et al., "ERICA Switch Algorithm: A Complete Description", ATM
//! Forum 96-1172; Explicit rate control of TCP (Satyavolu et al., 1998) section
//! 5): ERICA whose target capacity follows the queueing delay instead of a
//! fixed utilization. With Tq = Q / (ABR capacity) and target delay T0, the
//! target is f(Tq) x ABR capacity with f = a T0 / ((a - 1) Tq + T0) above T0
//! and b T0 / ((b - 1) Tq + T0) below, floored at QDLF.

use super::algorithm::Meter;
use super::erica::{Erica, Target};
use crate::engine::Time;

/// The queue-delay target curve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueDelayTarget {
    /// Target queueing delay T0, ps.
    pub t0_ps: Time,
    /// Curve parameter above T0.
    pub a: f64,
    /// Curve parameter below T0.
    pub b: f64,
    /// Floor of the factor (queue drain limit factor).
    pub qdlf: f64,
}

impl QueueDelayTarget {
    /// f(Tq) for a queueing delay of `tq_s` seconds.
    pub fn factor(&self, tq_s: f64) -> f64 {
        let t0 = self.t0_ps as f64 * 1e-12;
        let f = if tq_s > t0 {
            self.a * t0 / ((self.a - 1.0) * tq_s + t0)
        } else {
            self.b * t0 / ((self.b - 1.0) * tq_s + t0)
        };
        if f.is_nan() {
            self.qdlf
        } else {
            f.max(self.qdlf)
        }
    }
}

/// ERICA+ for VCs `0..n_vcs`.
pub fn new(
    n_vcs: usize,
    target: QueueDelayTarget,
    meter: Meter,
    delta: f64,
    measured_rate: bool,
    bidirectional_count: bool,
) -> Erica {
    Erica::new(
        n_vcs,
        Target::QueueDelay(target),
        meter,
        delta,
        measured_rate,
        bidirectional_count,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factor_at_zero_t0_and_ten_t0() {
        let ms = 1_000_000_000;
        // Explicit rate control of TCP: T0 = 1.5 ms, a = 1.15, b = 1 (and the
        // literature's b = 1.05).
        let mut q = QueueDelayTarget {
            t0_ps: 3 * ms / 2,
            a: 1.15,
            b: 1.05,
            qdlf: 0.5,
        };
        // Tq = 0: f = b.
        assert!((q.factor(0.0) - 1.05).abs() < 1e-12);
        // Tq = T0: f = 1 on both branches.
        assert!((q.factor(0.0015) - 1.0).abs() < 1e-12);
        // Tq = 10 T0: 1.15 / (0.15 x 10 + 1) = 0.46, floored at QDLF = 0.5.
        assert_eq!(q.factor(0.015), 0.5);
        q.qdlf = 0.1;
        assert!((q.factor(0.015) - 0.46).abs() < 1e-12);
        // b = 1: flat at 1 below T0.
        q.b = 1.0;
        assert!((q.factor(0.0007) - 1.0).abs() < 1e-12);
    }
}
