//! Traffic sources: open-loop generators of cells and AAL5 frames
//! (the seeds' traffic: VBR on/off, CBR, greedy).
//!
//! A source is asked to fire at the time it named; it answers with the
//! number of cells of the frame it sends now (1 for cell sources) and when
//! to call it next. Sources pace themselves in floating-point picoseconds so
//! that a rate is kept exactly over long runs. Not here: where the cells go
//! (see [`crate::sim`]) and closed-loop sources (TCP and ABR: [`crate::tcp`], [`crate::abr`]).

pub mod cbr;
pub mod frames;
pub mod geometric_onoff;
pub mod poisson;
pub mod vbr_onoff;

use crate::engine::{RngStream, Time};
use crate::scenario::SourceModel;

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

/// Rounds a (non-negative) floating-point time in ps to the engine's
/// integer time, half up. (`f64::round` is a libm call on baseline x86-64.)
#[inline]
pub(crate) fn at(t_ps: f64) -> Time {
    (t_ps + 0.5) as Time
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
