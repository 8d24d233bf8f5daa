//! Random Early Detection (Floyd and Jacobson, "Random Early Detection Gateways for Congestion
//! Avoidance", 1993): an EWMA
//! of the queue decides early drops between two thresholds.

use crate::engine::RngStream;

/// RED state and parameters. Thresholds are in the queue's unit (packets,
/// or bytes when the buffer is counted in bytes).
#[derive(Clone, Debug)]
pub struct Red {
    /// Lower threshold of the average queue.
    pub min_th: f64,
    /// Upper threshold of the average queue.
    pub max_th: f64,
    /// EWMA weight.
    pub w_q: f64,
    /// Drop probability at max_th.
    pub max_p: f64,
    /// Average queue.
    pub avg: f64,
    /// Packets accepted since the last drop while avg was between the thresholds (-1: below).
    count: i64,
}

/// RED's verdict on an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedVerdict {
    /// Queue it.
    Accept,
    /// Early drop, between the thresholds.
    EarlyDrop,
    /// Forced drop, average at or above max_th.
    ForcedDrop,
}

impl Red {
    /// RED with the given parameters and an empty average.
    pub fn new(min_th: f64, max_th: f64, w_q: f64, max_p: f64) -> Self {
        Red {
            min_th,
            max_th,
            w_q,
            max_p,
            avg: 0.0,
            count: -1,
        }
    }

    /// Updates the average for an arrival that finds `queue` waiting; if the
    /// queue was empty for `idle_slots` typical transmission times, the
    /// average first decays as if that many empty arrivals had come.
    pub fn update_average(&mut self, queue: f64, idle_slots: f64) {
        if idle_slots > 0.0 {
            self.avg *= (1.0 - self.w_q).powf(idle_slots);
        }
        self.avg += self.w_q * (queue - self.avg);
    }

    /// Decides on an arrival after [`Red::update_average`].
    pub fn decide(&mut self, rng: &mut RngStream) -> RedVerdict {
        if self.avg < self.min_th {
            self.count = -1;
            return RedVerdict::Accept;
        }
        if self.avg >= self.max_th {
            self.count = 0;
            return RedVerdict::ForcedDrop;
        }
        self.count += 1;
        let p_b = self.max_p * (self.avg - self.min_th) / (self.max_th - self.min_th);
        let denom = 1.0 - self.count as f64 * p_b;
        let p_a = if denom <= 0.0 {
            1.0
        } else {
            (p_b / denom).min(1.0)
        };
        if rng.uniform() < p_a {
            self.count = 0;
            RedVerdict::EarlyDrop
        } else {
            RedVerdict::Accept
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn average_moves_by_w_q() {
        let mut r = Red::new(5.0, 15.0, 0.002, 0.02);
        r.update_average(10.0, 0.0);
        assert!((r.avg - 0.02).abs() < 1e-12);
        r.avg = 10.0;
        r.update_average(0.0, 100.0);
        // 101 steps towards 0: 10 * 0.998^101
        assert!((r.avg - 10.0 * 0.998f64.powi(101)).abs() < 1e-9);
    }

    #[test]
    fn regions() {
        let mut rng = RngStream::new(1, 0);
        let mut r = Red::new(5.0, 15.0, 0.002, 0.02);
        r.avg = 4.0;
        assert_eq!(r.decide(&mut rng), RedVerdict::Accept);
        r.avg = 15.0;
        assert_eq!(r.decide(&mut rng), RedVerdict::ForcedDrop);
        // Midway: p_b = 0.01; with the count correction the gap between
        // drops is uniform on 1..1/p_b, mean about 50 arrivals.
        r.avg = 10.0;
        let mut drops = 0;
        let n = 200_000;
        for _ in 0..n {
            if r.decide(&mut rng) == RedVerdict::EarlyDrop {
                drops += 1;
            }
        }
        let gap = n as f64 / drops as f64;
        assert!((gap - 50.5).abs() < 2.0, "{gap}");
    }
}
