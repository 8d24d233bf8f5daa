//! Simulated time: an integer count of picoseconds.

/// Simulated time in picoseconds.
pub type Time = u64;

/// Picoseconds in one second.
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// The largest time a scenario may give (a duration, a delay, a start):
/// 10^6 s. `u64` holds 1.8 x 10^19 ps, so a sum of a few such times cannot
/// overflow.
pub const MAX_TIME_PS: Time = 1_000_000 * PS_PER_S;

/// A time after the end of every run (8 x [`MAX_TIME_PS`]): times computed
/// from a backlog (a port's departures, an idle source's next cell) are
/// clamped to it, so that adding a few scenario times to them cannot
/// overflow either. Nothing clamped happens within a run.
pub const NEVER: Time = 8 * MAX_TIME_PS;

/// `t + d`, or [`NEVER`] when that is later.
#[inline]
pub fn later(t: Time, d: Time) -> Time {
    t.saturating_add(d).min(NEVER)
}

/// Converts a time in picoseconds to seconds.
pub fn ps_to_s(t: Time) -> f64 {
    t as f64 / PS_PER_S as f64
}

/// Converts a rate (events per second) to the interval between events in
/// picoseconds, as a float so that pacing can accumulate without drift.
pub fn interval_ps(rate_per_s: f64) -> f64 {
    PS_PER_S as f64 / rate_per_s
}

/// Transmission time of one 53-byte cell on a link of `cell_rate_cps`
/// cells/s, rounded to the nearest picosecond (relative error < 1e-6 for any
/// rate below 1 Tb/s).
pub fn cell_time_ps(cell_rate_cps: f64) -> Time {
    (interval_ps(cell_rate_cps)).round().max(1.0) as Time
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oc3_cell_time() {
        // 155.52 Mbps / 424 bits = 366,792.45 cells/s -> 2.726337 us per cell.
        let t = cell_time_ps(155.52e6 / 424.0);
        assert_eq!(t, 2_726_337);
    }

    #[test]
    fn later_stops_at_never() {
        assert_eq!(later(3, 4), 7);
        assert_eq!(later(NEVER - 1, 5), NEVER);
        assert_eq!(later(u64::MAX, u64::MAX), NEVER);
        // Scenario times added to NEVER stay representable.
        assert!(NEVER.checked_add(4 * MAX_TIME_PS).is_some());
    }

    #[test]
    fn seconds() {
        assert_eq!(ps_to_s(1_500_000_000_000), 1.5);
    }
}
