//! Delay statistics kept as a stream: exact count, min, max, mean and
//! standard deviation, and percentiles from a log-linear histogram of
//! bounded relative error (the HdrHistogram layout: 64 linear sub-buckets
//! per power of two). A VC's cell transfer delay and a flow's packet delay
//! are kept this way (ITU-T I.356, "B-ISDN ATM layer cell transfer
//! performance"; the ATM Forum's Traffic Management Specification 4.0,
//! its QoS parameters: CTD, peak-to-peak CDV).
//!
//! The histogram holds only the buckets between the least and the greatest
//! sample seen (a window that grows on demand), at most [`MAX_BUCKETS`]:
//! a sample below the window once it is full is counted in its lowest
//! bucket. The memory is the fixed record plus 8 bytes per bucket of the
//! window (docs/model.md, "Delay statistics").

use crate::engine::time::ps_to_s;
use crate::engine::Time;
use serde::Serialize;

/// Linear sub-buckets per power of two, as a shift: 64. A bucket of
/// values from `2^k` on is `2^(k-6)` wide, so the middle of the bucket is
/// within 1/128 (0.8 %) of any value in it.
const SUB_BITS: u32 = 6;
const SUB: u64 = 1 << SUB_BITS;

/// Most buckets a histogram keeps: 16 powers of two, a ratio of 65,536
/// between the greatest sample and the least one kept apart.
pub const MAX_BUCKETS: usize = 1024;

/// The bound on the relative error of a percentile: 1/128.
pub const RELATIVE_ERROR: f64 = 1.0 / 128.0;

/// The histogram bucket of value `v`: values below 64 have a bucket each;
/// above, 64 buckets per power of two.
#[inline]
fn bucket_of(v: u64) -> u32 {
    if v < SUB {
        return v as u32;
    }
    let e = 63 - v.leading_zeros(); // 2^e <= v < 2^(e+1), e >= 6
    let m = v >> (e - SUB_BITS); // in [64, 128)
    (e - SUB_BITS + 1) * SUB as u32 + (m - SUB) as u32
}

/// The least and greatest values of bucket `i`.
fn bucket_range(i: u32) -> (u64, u64) {
    if (i as u64) < SUB {
        return (i as u64, i as u64);
    }
    let k = i / SUB as u32; // >= 1
    let j = (i % SUB as u32) as u64;
    let shift = k - 1;
    let lo = (SUB + j) << shift;
    (lo, lo + (1u64 << shift) - 1)
}

/// A stream of delays, ps.
#[derive(Clone, Debug, Default)]
pub struct DelayStats {
    count: u64,
    min: Time,
    max: Time,
    /// The first sample: the sums are taken of the samples less it, so that
    /// the variance of nearly equal samples loses no precision.
    shift: Time,
    sum: i128,
    sum_sq: i128,
    /// The histogram's window: the bucket of `counts[0]`.
    lo: u32,
    counts: Vec<u64>,
}

impl DelayStats {
    /// Adds one sample of `d` ps.
    #[inline]
    pub fn add(&mut self, d: Time) {
        if self.count == 0 {
            self.first(d);
        }
        self.count += 1;
        self.min = self.min.min(d);
        self.max = self.max.max(d);
        // Delays differ from the first by less than 2^63 ps: the square of
        // an i64 in an i128 is one widening multiplication.
        let x = d.wrapping_sub(self.shift) as i64;
        self.sum += x as i128;
        self.sum_sq += x as i128 * x as i128;
        let i = bucket_of(d).wrapping_sub(self.lo) as usize;
        match self.counts.get_mut(i) {
            Some(c) => *c += 1,
            None => self.grow(bucket_of(d)),
        }
    }

    /// The first sample sets the least, the greatest and the shift.
    #[cold]
    fn first(&mut self, d: Time) {
        (self.min, self.max, self.shift) = (d, d, d);
    }

    /// Counts a sample in bucket `b`, outside the window: grows the window
    /// to it (at most `MAX_BUCKETS`: the lowest buckets are folded into the
    /// next when the window would grow beyond, and a sample below a full
    /// window counts in its lowest bucket).
    #[cold]
    fn grow(&mut self, b: u32) {
        if self.counts.is_empty() {
            self.lo = b;
            self.counts.push(1);
        } else if b >= self.lo {
            self.grow_up(b);
        } else {
            self.grow_down(b);
        }
    }

    fn grow_up(&mut self, b: u32) {
        let len = (b - self.lo) as usize + 1;
        if len > MAX_BUCKETS {
            // Fold the lowest buckets into the new lowest one.
            let cut = len - MAX_BUCKETS;
            let folded: u64 = self.counts.iter().take(cut).sum();
            self.counts.drain(..cut.min(self.counts.len()));
            self.lo += cut as u32;
            if self.counts.is_empty() {
                self.counts.push(0);
            }
            self.counts[0] += folded;
        }
        self.reserve((b - self.lo) as usize + 1);
        self.counts.resize((b - self.lo) as usize + 1, 0);
        let last = self.counts.len() - 1;
        self.counts[last] += 1;
    }

    fn grow_down(&mut self, b: u32) {
        let top = self.lo as usize + self.counts.len() - 1;
        let new_lo = (b as usize).max((top + 1).saturating_sub(MAX_BUCKETS)) as u32;
        let extra = (self.lo - new_lo) as usize;
        if extra > 0 {
            self.reserve(self.counts.len() + extra);
            self.counts.splice(0..0, std::iter::repeat_n(0, extra));
            self.lo = new_lo;
        }
        self.counts[0] += 1;
    }

    /// Makes room for `len` buckets: doubling, as a vector does, but never
    /// beyond `MAX_BUCKETS`, so the memory stays bounded.
    fn reserve(&mut self, len: usize) {
        let cap = self.counts.capacity();
        if len > cap {
            let want = len.max(2 * cap).min(MAX_BUCKETS).max(len);
            self.counts.reserve_exact(want - self.counts.len());
        }
    }

    /// Samples taken.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The mean, ps (0 without samples).
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        self.shift as f64 + self.sum as f64 / self.count as f64
    }

    /// The standard deviation (of the samples as the population), ps.
    pub fn std_dev(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let n = self.count as f64;
        let m = self.sum as f64 / n;
        (self.sum_sq as f64 / n - m * m).max(0.0).sqrt()
    }

    /// The least sample, ps (0 without samples).
    pub fn min(&self) -> Time {
        self.min
    }

    /// The greatest sample, ps (0 without samples).
    pub fn max(&self) -> Time {
        self.max
    }

    /// The `p`-th percentile (0 < p <= 100) by nearest rank: the
    /// ceil(p/100 n)-th least sample, as the middle of its histogram
    /// bucket, kept within [min, max] (relative error at most
    /// [`RELATIVE_ERROR`] while the window has not folded; exact for
    /// values below 64 ps and for the greatest sample).
    pub fn percentile(&self, p: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((p / 100.0 * self.count as f64).ceil() as u64).clamp(1, self.count);
        if rank == self.count {
            return self.max as f64;
        }
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, hi) = bucket_range(self.lo + i as u32);
                let mid = (lo as f64 + hi as f64) / 2.0;
                return mid.clamp(self.min as f64, self.max as f64);
            }
        }
        self.max as f64
    }

    /// Bytes this record holds (itself and its histogram).
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.counts.capacity() * 8
    }

    /// The summary, in seconds; none without samples.
    pub fn summary(&self) -> Option<DelaySummary> {
        if self.count == 0 {
            return None;
        }
        let s = |ps: f64| ps / 1e12;
        let p99 = self.percentile(99.0);
        Some(DelaySummary {
            count: self.count,
            mean_s: s(self.mean()),
            min_s: ps_to_s(self.min),
            max_s: ps_to_s(self.max),
            p50_s: s(self.percentile(50.0)),
            p95_s: s(self.percentile(95.0)),
            p99_s: s(p99),
            std_s: s(self.std_dev()),
            p2p_cdv_s: s(p99 - self.min as f64),
        })
    }
}

/// A delay distribution as summary.json reports it, in seconds.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DelaySummary {
    /// Samples.
    pub count: u64,
    /// Mean.
    pub mean_s: f64,
    /// Least.
    pub min_s: f64,
    /// Greatest.
    pub max_s: f64,
    /// Median (nearest rank, from the histogram).
    pub p50_s: f64,
    /// 95th percentile.
    pub p95_s: f64,
    /// 99th percentile.
    pub p99_s: f64,
    /// Standard deviation: the delay variation as one number.
    pub std_s: f64,
    /// Peak-to-peak delay variation: p99 less the least delay (the
    /// 2-point CDV of ITU-T I.356 and ATM Forum TM 4.0, with the 1 - alpha
    /// quantile at alpha = 1e-2).
    pub p2p_cdv_s: f64,
}

/// A flow's RTT samples, in seconds.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RttSummary {
    /// Samples taken.
    pub count: u64,
    /// Mean.
    pub mean_s: f64,
    /// Least.
    pub min_s: f64,
    /// Greatest.
    pub max_s: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_tile_the_values() {
        let mut next = 0u64;
        for i in 0..(64 * 40) {
            let (lo, hi) = bucket_range(i);
            assert_eq!(lo, next, "bucket {i}");
            assert_eq!(bucket_of(lo), i);
            assert_eq!(bucket_of(hi), i);
            // Half the width within RELATIVE_ERROR of the lower bound.
            assert!((hi - lo) as f64 / 2.0 <= RELATIVE_ERROR * lo as f64 + 0.5);
            next = hi + 1;
        }
    }

    #[test]
    fn exact_moments_and_bounded_percentiles() {
        // A deterministic spread of delays over four decades.
        let mut d = DelayStats::default();
        let mut xs = Vec::new();
        let mut x: u64 = 12345;
        for _ in 0..100_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = 1_000_000 + (x >> 33) % 10_000_000_000;
            xs.push(v);
            d.add(v);
        }
        xs.sort_unstable();
        assert_eq!(d.count(), 100_000);
        assert_eq!(d.min(), xs[0]);
        assert_eq!(d.max(), *xs.last().unwrap());
        let mean = xs.iter().map(|&v| v as f64).sum::<f64>() / xs.len() as f64;
        assert!((d.mean() - mean).abs() <= 1e-9 * mean);
        let var = xs.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / xs.len() as f64;
        assert!((d.std_dev() - var.sqrt()).abs() <= 1e-6 * var.sqrt());
        for p in [1.0, 10.0, 50.0, 95.0, 99.0, 99.9] {
            let rank = (p / 100.0 * xs.len() as f64).ceil() as usize;
            let exact = xs[rank - 1] as f64;
            let est = d.percentile(p);
            assert!(
                (est - exact).abs() <= RELATIVE_ERROR * exact,
                "p{p}: {est} vs {exact}"
            );
        }
        assert_eq!(d.percentile(100.0), d.max() as f64);
    }

    #[test]
    fn constant_samples_have_no_variation() {
        let mut d = DelayStats::default();
        for _ in 0..1000 {
            d.add(2_830_188_679);
        }
        let s = d.summary().unwrap();
        assert_eq!((s.std_s, s.p2p_cdv_s), (0.0, 0.0));
        assert_eq!(s.p50_s, s.min_s);
        assert_eq!(s.max_s, s.min_s);
    }

    #[test]
    fn descending_samples_grow_the_window_down() {
        let mut d = DelayStats::default();
        for v in (1..=5000u64).rev() {
            d.add(v * 1000);
        }
        let est = d.percentile(50.0);
        assert!((est - 2_500_000.0).abs() <= RELATIVE_ERROR * 2_500_000.0);
        assert!(d.counts.len() <= MAX_BUCKETS);
    }

    #[test]
    fn the_window_is_bounded() {
        let mut d = DelayStats::default();
        for e in 0..60 {
            d.add(1u64 << e);
            d.add((1u64 << e) + 1);
        }
        assert!(d.counts.len() <= MAX_BUCKETS);
        assert_eq!(d.counts.iter().sum::<u64>(), 120);
        // The record itself is 96 bytes (docs/model.md, "Delay statistics").
        assert_eq!(std::mem::size_of::<DelayStats>(), 96);
        assert!(d.memory_bytes() <= 96 + MAX_BUCKETS * 8);
        // The top percentiles stay exact to the bound.
        assert_eq!(d.percentile(100.0), (1u64 << 59) as f64 + 1.0);
    }
}
