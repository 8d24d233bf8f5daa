//! Random-number streams: one independent PCG stream per component.
//!
//! Every stream is derived from the run seed and a component id, so adding
//! a component does not change the numbers another one draws, and the same
//! scenario with the same run seed gives identical results on every machine.

use rand_core::Rng;
use rand_pcg::Pcg64;

/// An independent random stream for one component.
pub struct RngStream {
    pcg: Pcg64,
}

/// SplitMix64 finaliser: spreads a seed over all bits.
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl RngStream {
    /// The stream of component `stream_id` for run seed `seed`.
    pub fn new(seed: u64, stream_id: u64) -> Self {
        let hi = splitmix64(seed);
        let lo = splitmix64(seed ^ 0xA5A5_A5A5_A5A5_A5A5);
        let state = ((hi as u128) << 64) | lo as u128;
        Self {
            pcg: Pcg64::new(state, stream_id as u128),
        }
    }

    /// 32 uniform random bits.
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        (self.pcg.next_u64() >> 32) as u32
    }

    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.pcg.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in (0, 1]: safe to take the logarithm of.
    pub fn uniform_open0(&mut self) -> f64 {
        1.0 - self.uniform()
    }

    /// Exponential with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * self.uniform_open0().ln()
    }

    /// Geometric on {1, 2, ...} with the given mean (>= 1).
    pub fn geometric_from_1(&mut self, mean: f64) -> u64 {
        if mean <= 1.0 {
            return 1;
        }
        let p = 1.0 / mean;
        // The float-to-integer cast saturates for a huge mean; so does the +1.
        ((self.uniform_open0().ln() / (1.0 - p).ln()).floor() as u64).saturating_add(1)
    }

    /// Geometric on {0, 1, ...} with the given mean (>= 0).
    pub fn geometric_from_0(&mut self, mean: f64) -> u64 {
        if mean <= 0.0 {
            return 0;
        }
        let q = mean / (1.0 + mean);
        // From a mean of 2^53 on, q rounds to 1 and ln q to 0 (every draw
        // would be 0): then ln q = -ln(1 + 1/mean), which keeps its value.
        let ln_q = match q.ln() {
            0.0 => -(1.0 / mean).ln_1p(),
            l => l,
        };
        // Saturates at u64::MAX for a huge mean.
        (self.uniform_open0().ln() / ln_q).floor() as u64
    }

    /// Uniform integer in [lo, hi].
    pub fn int_between(&mut self, lo: u64, hi: u64) -> u64 {
        let span = hi - lo;
        lo + ((self.uniform() * span.saturating_add(1) as f64) as u64).min(span)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<f64> = (0..5).map(|_| 0.0).collect();
        let mut s1 = RngStream::new(7, 1);
        let mut s1b = RngStream::new(7, 1);
        let mut s2 = RngStream::new(7, 2);
        let x: Vec<f64> = a.iter().map(|_| s1.uniform()).collect();
        let y: Vec<f64> = a.iter().map(|_| s1b.uniform()).collect();
        let z: Vec<f64> = a.iter().map(|_| s2.uniform()).collect();
        assert_eq!(x, y);
        assert_ne!(x, z);
    }

    #[test]
    fn means_are_right() {
        let mut s = RngStream::new(1, 0);
        let n = 200_000;
        let g1: f64 = (0..n)
            .map(|_| s.geometric_from_1(100.0) as f64)
            .sum::<f64>()
            / n as f64;
        let g0: f64 = (0..n).map(|_| s.geometric_from_0(50.0) as f64).sum::<f64>() / n as f64;
        let e: f64 = (0..n).map(|_| s.exponential(3.0)).sum::<f64>() / n as f64;
        assert!((g1 - 100.0).abs() < 1.5, "{g1}");
        assert!((g0 - 50.0).abs() < 1.0, "{g0}");
        assert!((e - 3.0).abs() < 0.05, "{e}");
    }
}
