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

/// Builds the source a scenario asks for; `first_link_cps` is the cell rate
/// of the VC's first link (the pace of a greedy source).
pub fn build(model: &SourceModel, first_link_cps: f64) -> Box<dyn TrafficSource> {
    match *model {
        SourceModel::Cbr { rate_cps } => Box::new(cbr::Cbr::new(rate_cps)),
        SourceModel::Greedy => Box::new(cbr::Cbr::new(first_link_cps)),
        SourceModel::Poisson { rate_cps } => Box::new(poisson::Poisson::new(rate_cps)),
        SourceModel::VbrOnoff {
            peak_cps,
            on_ps,
            off_ps,
            distribution,
        } => Box::new(vbr_onoff::VbrOnOff::new(
            peak_cps,
            on_ps,
            off_ps,
            distribution,
        )),
        SourceModel::GeometricOnoff {
            peak_cps,
            mean_cps,
            mean_burst_cells,
        } => Box::new(geometric_onoff::GeometricOnOff::new(
            peak_cps,
            mean_cps,
            mean_burst_cells,
        )),
        SourceModel::Frames {
            ref frame_cells,
            rate_cps,
            arrivals,
        } => Box::new(frames::FrameSource::new(*frame_cells, rate_cps, arrivals)),
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
