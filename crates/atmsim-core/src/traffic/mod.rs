//! Traffic sources: open-loop generators of cells and AAL5 frames
//! (the papers' traffic: VBR on/off, CBR, greedy).
//!
//! A source is asked to fire at the time it named; it answers with the
//! number of cells of the frame it sends now (1 for cell sources) and when
//! to call it next. Sources pace themselves in fixed-point picoseconds
//! ([`Fine`]) so that a rate is kept exactly over long runs, however late
//! a source starts. Not here: where the cells go
//! (see [`crate::sim`]) and closed-loop sources (TCP and ABR: [`crate::tcp`], [`crate::abr`]).
//! [`params`] declares the sources' parameters, their ranges and check.

pub mod cbr;
pub mod frames;
pub mod geometric_onoff;
pub mod params;
pub mod poisson;
pub mod vbr_onoff;

use crate::engine::{RngStream, Time};
pub use params::{Arrivals, Distribution, FrameSize, SourceModel};

/// What a source does when it fires.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Emission {
    /// Cells of the frame sent now (the last one carries EOM).
    pub cells: u16,
    /// When to fire next (None: never again).
    pub next: Option<Time>,
}

/// An open-loop traffic source.
pub trait TrafficSource: Send + Sync {
    /// Time of the first emission for a source started at `start`.
    fn first(&mut self, start: Time, rng: &mut RngStream) -> Time;
    /// Fires at `now` (the time it asked for).
    fn fire(&mut self, now: Time, rng: &mut RngStream) -> Emission;
}

/// The latest time [`Fine::time`] gives, ps (below 2^63, beyond
/// [`crate::engine::time::NEVER`]): a saturated silence.
const LATEST_PS: f64 = 9.2e18;

/// A source's clock: picoseconds in fixed point, 64 integer and 64
/// fractional bits. A source's schedule is a sum of steps (1/rate, drawn
/// gaps, on and off periods); kept in `f64` such a sum loses its
/// fractional picoseconds as it grows (at 10^18 ps an `f64` steps by 128
/// ps, so a CBR source at a link's rate started late in a long run sent
/// 10 % too many cells, and a step of 1 ps was lost altogether). In fixed
/// point every sum is exact: a step is its `f64` value to 2^-64 ps, and
/// the rounding to the engine's integer time is done once per emission,
/// never accumulated.
///
/// Two 64-bit words rather than a `u128`, whose 16-byte alignment grew
/// every source and slowed the loop that fires them by 6 to 10 %.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Fine {
    /// Whole picoseconds (compared first).
    whole: u64,
    /// Fractions of a picosecond, in units of 2^-64 ps.
    frac: u64,
}

impl Fine {
    const ONE_PS: f64 = 18_446_744_073_709_551_616.0;

    #[inline]
    fn of_u128(x: u128) -> Self {
        Fine {
            whole: (x >> 64) as u64,
            frac: x as u64,
        }
    }

    #[inline]
    fn as_u128(self) -> u128 {
        ((self.whole as u128) << 64) | self.frac as u128
    }

    /// The engine time `t` exactly.
    #[inline]
    pub(crate) fn of_time(t: Time) -> Self {
        Fine { whole: t, frac: 0 }
    }

    /// A (non-negative) step in ps given as a float: a NaN or a negative
    /// step is 0, a step past 2^64 ps saturates (far past any run).
    #[inline]
    pub(crate) fn of_ps(x: f64) -> Self {
        // `as u128` saturates, and turns a NaN into 0.
        Self::of_u128(if x > 0.0 {
            (x * Self::ONE_PS) as u128
        } else {
            0
        })
    }

    /// `self + d`, saturating at 2^64 ps (after every run's end).
    #[inline(always)]
    pub(crate) fn plus(self, d: Fine) -> Self {
        let (frac, carry) = self.frac.overflowing_add(d.frac);
        Fine {
            whole: self
                .whole
                .saturating_add(d.whole)
                .saturating_add(carry as u64),
            frac,
        }
    }

    /// `n` steps of `self`, saturating.
    #[inline]
    pub(crate) fn times(self, n: u64) -> Self {
        Self::of_u128(self.as_u128().saturating_mul(n as u128))
    }

    /// `self - d`, or 0 when `d` is later.
    #[inline]
    pub(crate) fn minus(self, d: Fine) -> Self {
        Self::of_u128(self.as_u128().saturating_sub(d.as_u128()))
    }

    /// How many whole steps `d` fit in `self` (`d` not 0).
    #[inline]
    pub(crate) fn div_floor(self, d: Fine) -> u64 {
        (self.as_u128() / d.as_u128().max(1)).min(u64::MAX as u128) as u64
    }

    /// The span in ps as a float (for a probability of a drawn period).
    #[inline]
    pub(crate) fn ps(self) -> f64 {
        self.as_u128() as f64 / Self::ONE_PS
    }

    /// The engine time: rounded half up; a time past 9.2 x 10^18 ps
    /// (after every run's end) is clamped there (or one ps after it), so
    /// that the engine's sums of times cannot overflow.
    #[inline(always)]
    pub(crate) fn time(self) -> Time {
        // The whole part (clamped first, so that the half added after it
        // cannot overflow), plus one when the fraction is at least a half.
        self.whole.min(LATEST_PS as Time) + (self.frac >> 63)
    }
}

/// Any of the open-loop sources, dispatched by a `match` (statically: the
/// compiler inlines each kind's `fire` into the loop that fires sources).
pub enum Source {
    /// [`cbr::Cbr`] (and greedy sources).
    Cbr(cbr::Cbr),
    /// [`poisson::Poisson`].
    Poisson(poisson::Poisson),
    /// [`vbr_onoff::VbrOnOff`].
    VbrOnOff(vbr_onoff::VbrOnOff),
    /// [`geometric_onoff::GeometricOnOff`].
    GeometricOnOff(geometric_onoff::GeometricOnOff),
    /// [`frames::FrameSource`].
    Frames(frames::FrameSource),
}

impl TrafficSource for Source {
    fn first(&mut self, start: Time, rng: &mut RngStream) -> Time {
        match self {
            Source::Cbr(s) => s.first(start, rng),
            Source::Poisson(s) => s.first(start, rng),
            Source::VbrOnOff(s) => s.first(start, rng),
            Source::GeometricOnOff(s) => s.first(start, rng),
            Source::Frames(s) => s.first(start, rng),
        }
    }

    #[inline(always)]
    fn fire(&mut self, now: Time, rng: &mut RngStream) -> Emission {
        match self {
            Source::Cbr(s) => s.fire(now, rng),
            Source::Poisson(s) => s.fire(now, rng),
            Source::VbrOnOff(s) => s.fire(now, rng),
            Source::GeometricOnOff(s) => s.fire(now, rng),
            Source::Frames(s) => s.fire(now, rng),
        }
    }
}

/// How a loop that fires many sources dispatches on their kind: which
/// kinds' `fire` it inlines. The merged sources' loop is compiled once per
/// strategy and picks one per run (see `sim::fast_paths::merged_sources`):
/// inlining the kinds that draw a variate at every emission (a logarithm
/// each) makes the loop hold their constants in registers, so that its other
/// values go to the stack and are read back at every cell. On/off sources
/// fire faster with those kinds out of line, Poisson sources slower; the
/// measurements are in docs/performance.md.
pub trait Firing {
    /// `source.fire(now, rng)`.
    fn fire(source: &mut Source, now: Time, rng: &mut RngStream) -> Emission;
}

/// Every kind inlined (any mix of sources).
pub struct EveryKindInline;

impl Firing for EveryKindInline {
    #[inline(always)]
    fn fire(source: &mut Source, now: Time, rng: &mut RngStream) -> Emission {
        source.fire(now, rng)
    }
}

/// The CBR and geometric on/off sources inlined, which draw no variate
/// within a burst; the others out of line (for a set of sources of these
/// two kinds only, where the others never fire).
pub struct CellSourcesInline;

impl Firing for CellSourcesInline {
    #[inline(always)]
    fn fire(source: &mut Source, now: Time, rng: &mut RngStream) -> Emission {
        match source {
            Source::Cbr(s) => s.fire(now, rng),
            Source::GeometricOnOff(s) => s.fire(now, rng),
            _ => source.fire_out_of_line(now, rng),
        }
    }
}

impl Source {
    /// True for the kinds [`CellSourcesInline`] inlines.
    pub fn is_cell_source(&self) -> bool {
        matches!(self, Source::Cbr(_) | Source::GeometricOnOff(_))
    }

    /// True for the kinds whose every frame is one cell (a kind added later
    /// is not, until it is named here).
    pub fn one_cell_frames(&self) -> bool {
        matches!(
            self,
            Source::Cbr(_) | Source::Poisson(_) | Source::VbrOnOff(_) | Source::GeometricOnOff(_)
        )
    }

    /// `fire`, never inlined.
    #[inline(never)]
    fn fire_out_of_line(&mut self, now: Time, rng: &mut RngStream) -> Emission {
        self.fire(now, rng)
    }
}

/// Builds the source a scenario asks for; `first_link_cps` is the cell rate
/// of the VC's first link (the pace of a greedy source).
pub fn build(model: &SourceModel, first_link_cps: f64) -> Source {
    match *model {
        SourceModel::Cbr { rate_cps } => Source::Cbr(cbr::Cbr::new(rate_cps)),
        SourceModel::Greedy => Source::Cbr(cbr::Cbr::new(first_link_cps)),
        SourceModel::Poisson { rate_cps } => Source::Poisson(poisson::Poisson::new(rate_cps)),
        SourceModel::VbrOnoff {
            peak_cps,
            on_ps,
            off_ps,
            distribution,
        } => Source::VbrOnOff(vbr_onoff::VbrOnOff::new(
            peak_cps,
            on_ps,
            off_ps,
            distribution,
        )),
        SourceModel::GeometricOnoff {
            peak_cps,
            mean_cps,
            mean_burst_cells,
        } => Source::GeometricOnOff(geometric_onoff::GeometricOnOff::new(
            peak_cps,
            mean_cps,
            mean_burst_cells,
        )),
        SourceModel::Frames {
            ref frame_cells,
            rate_cps,
            arrivals,
        } => Source::Frames(frames::FrameSource::new(*frame_cells, rate_cps, arrivals)),
    }
}

/// A source's mean number of emissions per second (frames, for a frame
/// source) and the gap between two emissions within a burst, ps (the mean
/// gap for sources without bursts): what sizes the timing wheel that
/// merges the sources (only its speed depends on them).
pub fn pace(model: &SourceModel, first_link_cps: f64) -> (f64, f64) {
    use crate::engine::PS_PER_S;
    let per_s = match *model {
        SourceModel::Cbr { rate_cps } | SourceModel::Poisson { rate_cps } => rate_cps,
        SourceModel::Greedy => first_link_cps,
        SourceModel::VbrOnoff {
            peak_cps,
            on_ps,
            off_ps,
            ..
        } => peak_cps * on_ps as f64 / (on_ps as f64 + off_ps as f64).max(1.0),
        SourceModel::GeometricOnoff { mean_cps, .. } => mean_cps,
        SourceModel::Frames {
            ref frame_cells,
            rate_cps,
            ..
        } => rate_cps / frame_cells.mean(),
    };
    let gap = match *model {
        SourceModel::VbrOnoff { peak_cps, .. } | SourceModel::GeometricOnoff { peak_cps, .. } => {
            PS_PER_S as f64 / peak_cps
        }
        _ => PS_PER_S as f64 / per_s,
    };
    (per_s, gap)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::NEVER;

    /// The two dispatch strategies fire every kind alike (the same
    /// emissions from the same state and stream), `is_cell_source` names
    /// the kinds `CellSourcesInline` inlines, and a kind said to send
    /// one-cell frames only (`one_cell_frames`) does.
    #[test]
    fn every_firing_strategy_fires_every_kind_alike() {
        let models = [
            (r#"{"kind":"cbr","rate_cps":1000}"#, true, true),
            (r#"{"kind":"greedy"}"#, true, true),
            (r#"{"kind":"poisson","rate_cps":1000}"#, false, true),
            (
                r#"{"kind":"vbr_onoff","peak_cps":1000,"on_ps":5000000000,"off_ps":5000000000,"distribution":"exponential"}"#,
                false,
                true,
            ),
            (
                r#"{"kind":"geometric_onoff","peak_cps":1000,"mean_cps":300,"mean_burst_cells":5}"#,
                true,
                true,
            ),
            (
                r#"{"kind":"frames","frame_cells":{"uniform":[1,4]},"rate_cps":1000,"arrivals":"poisson"}"#,
                false,
                false,
            ),
        ];
        for (json, cell_source, one_cell) in models {
            let model: SourceModel = serde_json::from_str(json).unwrap();
            let (mut a, mut b) = (build(&model, 2000.0), build(&model, 2000.0));
            assert_eq!(a.is_cell_source(), cell_source, "{json}");
            assert_eq!(a.one_cell_frames(), one_cell, "{json}");
            let (mut ra, mut rb) = (RngStream::new(3, 1), RngStream::new(3, 1));
            let (mut ta, mut tb) = (a.first(0, &mut ra), b.first(0, &mut rb));
            let mut longest = 0;
            for _ in 0..200 {
                let ea = CellSourcesInline::fire(&mut a, ta, &mut ra);
                let eb = EveryKindInline::fire(&mut b, tb, &mut rb);
                assert_eq!(ea, eb, "{json}");
                longest = longest.max(ea.cells);
                (ta, tb) = (ea.next.unwrap(), eb.next.unwrap());
            }
            assert_eq!(longest == 1, one_cell, "{json}");
        }
    }

    /// Fixed-point time rounds half up, compares whole picoseconds first,
    /// saturates, and clamps past NEVER.
    #[test]
    fn fine_rounds_half_up_and_clamps_past_never() {
        assert!(LATEST_PS as Time > NEVER);
        for (ps, t) in [
            (0.0, 0),
            (0.49, 0),
            (0.5, 1),
            (1.5, 2),
            (2.4999, 2),
            (3.7e12, 3_700_000_000_000),
        ] {
            assert_eq!(Fine::of_ps(ps).time(), t, "{ps}");
        }
        let half = Fine::of_ps(0.5);
        assert_eq!(half.plus(half).time(), 1);
        assert_eq!(Fine::of_time(7).plus(half).time(), 8);
        assert!(Fine::of_time(2) > Fine::of_time(1).plus(Fine::of_ps(0.999)));
        for x in [9.3e18, 1.9e19, 1e300, f64::INFINITY] {
            assert!(Fine::of_ps(x).time() >= LATEST_PS as Time, "{x}");
        }
        for x in [f64::NAN, -5.0, f64::NEG_INFINITY] {
            assert_eq!(Fine::of_ps(x), Fine::default());
        }
        let big = Fine::of_ps(1e300);
        assert_eq!(big.plus(big).time(), big.time());
        assert!(Fine::of_ps(3.0).times(u64::MAX).time() >= LATEST_PS as Time);
        // 2^-64 ps steps add up exactly: 2^20 of them are 2^-44 ps.
        let tiny = Fine { whole: 0, frac: 1 };
        let mut t = Fine::of_time(1_000_000_000_000_000_000);
        for _ in 0..1 << 20 {
            t = t.plus(tiny);
        }
        assert_eq!(t.frac, 1 << 20);
    }
}

#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// Emission times and sizes of `src` over [start, end).
    pub fn trace(
        src: &mut dyn TrafficSource,
        seed: u64,
        start: Time,
        end: Time,
    ) -> Vec<(Time, u16)> {
        let mut rng = RngStream::new(seed, 0);
        let mut t = src.first(start, &mut rng);
        let mut out = vec![];
        while t < end {
            let e = src.fire(t, &mut rng);
            out.push((t, e.cells));
            match e.next {
                Some(n) => {
                    assert!(n >= t, "time went backwards");
                    t = n
                }
                None => break,
            }
        }
        out
    }
}
