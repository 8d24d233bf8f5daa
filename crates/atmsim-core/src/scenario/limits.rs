//! The allowed range of every scenario value, in the core JSON's units.
//!
//! Each range is written once, here, and used twice: by the JSON Schema (a
//! field carries `#[schemars(transform = Limit(...))]`, which writes
//! `minimum`/`maximum`, `exclusiveMinimum` or `minItems`/`maxItems`) and by
//! [`super::Scenario::check`], which rejects a value outside it with its JSON
//! path and the range. Ranges that depend on another value (a threshold
//! below its buffer, a rate below the first link's, `min <= initial <= max`
//! RTOs) are checked there too, and told in the fields' descriptions.
//!
//! The bounds keep every computation in range: a time is at most 10^6 s
//! (10^18 ps, while `u64` holds 1.8 x 10^19), so the sum of a few times
//! cannot overflow; rates lie between 1 kbit/s and 1 Tbit/s; a source sends
//! at least one cell every 1000 s.

use crate::engine::time::{MAX_TIME_PS, PS_PER_S};
use schemars::transform::Transform;
use schemars::Schema;
use std::fmt::Display;

/// An integer range, both ends included.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ints {
    /// Least value.
    pub min: u64,
    /// Greatest value.
    pub max: u64,
}

/// A real range, closed above, open or closed below.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reals {
    /// Lower end.
    pub min: f64,
    /// True when `min` itself is excluded.
    pub min_open: bool,
    /// Greatest value.
    pub max: f64,
}

impl Ints {
    /// True when `v` lies in the range.
    pub fn contains(&self, v: u64) -> bool {
        self.min <= v && v <= self.max
    }

    /// Rejects `v` outside the range, naming `path`.
    pub fn check(&self, path: impl Display, v: u64) -> Result<(), String> {
        if self.contains(v) {
            Ok(())
        } else {
            Err(format!("{path} = {v} is outside {self}"))
        }
    }

    /// Rejects a list of `len` items outside the range, naming `path`.
    pub fn check_len(&self, path: impl Display, len: usize) -> Result<(), String> {
        if self.contains(len as u64) {
            Ok(())
        } else {
            Err(format!("{path} has {len} entries, outside {self}"))
        }
    }
}

impl Reals {
    /// True when `v` lies in the range (NaN never does).
    pub fn contains(&self, v: f64) -> bool {
        let above = if self.min_open {
            v > self.min
        } else {
            v >= self.min
        };
        above && v <= self.max
    }

    /// Rejects `v` outside the range, naming `path`.
    pub fn check(&self, path: impl Display, v: f64) -> Result<(), String> {
        if self.contains(v) {
            Ok(())
        } else {
            Err(format!("{path} = {v:?} is outside {self}"))
        }
    }
}

/// Relative tolerance of a rate compared with another (a source's rate with
/// its first link's, ICR with PCR): rates written in different units
/// (Mbit/s, cells/s) convert with rounding, so the Python layer lets a rate
/// exceed its bound by this fraction, and so does the core.
pub const RATE_TOLERANCE: f64 = 1e-12;

impl Reals {
    /// This range, its top lowered to `bound` (with [`RATE_TOLERANCE`]).
    pub fn at_most(self, bound: f64) -> Reals {
        Reals {
            max: self.max.min(bound * (1.0 + RATE_TOLERANCE)),
            ..self
        }
    }
}

impl Display for Ints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}, {}]", self.min, self.max)
    }
}

impl Display for Reals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let open = if self.min_open { '(' } else { '[' };
        write!(f, "{open}{:?}, {:?}]", self.min, self.max)
    }
}

/// A range as a schema transform: `#[schemars(transform = Limit(X))]`
/// writes range `X` into the field's schema (the items' count for a list).
pub struct Limit<R>(pub R);

/// Like [`Limit`], for a value where 0 means "none" (probes off, no cell
/// rate on an IP link): 0, or a value in the range.
pub struct ZeroOr<R>(pub R);

/// A range's schema keywords.
trait Keywords {
    fn keywords(&self, schema: &mut Schema);
}

impl Keywords for Ints {
    fn keywords(&self, schema: &mut Schema) {
        if schema.get("type").and_then(|t| t.as_str()) == Some("array") {
            schema.insert("minItems".into(), self.min.into());
            schema.insert("maxItems".into(), self.max.into());
        } else {
            schema.insert("minimum".into(), self.min.into());
            schema.insert("maximum".into(), self.max.into());
        }
    }
}

impl Keywords for Reals {
    fn keywords(&self, schema: &mut Schema) {
        let lower = if self.min_open {
            "exclusiveMinimum"
        } else {
            "minimum"
        };
        schema.remove("minimum");
        schema.insert(lower.into(), self.min.into());
        schema.insert("maximum".into(), self.max.into());
    }
}

impl<R: Keywords> Transform for Limit<R> {
    fn transform(&mut self, schema: &mut Schema) {
        self.0.keywords(schema);
    }
}

impl<R: Keywords> Transform for ZeroOr<R> {
    fn transform(&mut self, schema: &mut Schema) {
        let mut range = Schema::default();
        self.0.keywords(&mut range);
        schema.insert("anyOf".into(), serde_json::json!([{ "const": 0 }, range]));
    }
}

/// Every time: [0, 10^6 s].
pub const TIME_PS: Ints = Ints {
    min: 0,
    max: MAX_TIME_PS,
};
/// A time that must be positive: (0, 10^6 s].
pub const POSITIVE_TIME_PS: Ints = Ints {
    min: 1,
    max: MAX_TIME_PS,
};
/// Delays and host times: [0, 1000 s] (a link's propagation delay; TCP's
/// delayed ACK, processing time and jitter).
pub const DELAY_PS: Ints = Ints {
    min: 0,
    max: 1_000 * PS_PER_S,
};
/// Any `u64` (the seed).
pub const ANY_U64: Ints = Ints {
    min: 0,
    max: u64::MAX,
};
/// Nodes, links, VCs, sources, flows: at most 10^6 of each.
pub const ENTITIES: Ints = Ints {
    min: 0,
    max: 1_000_000,
};
/// The links of a path (a VC, an IP flow's data or ACK path): 1 to 255 (a
/// cell or packet counts its hops in a byte).
pub const PATH_LINKS: Ints = Ints { min: 1, max: 255 };
/// An IP flow's path as sent for ATM flows too (empty there): at most 255.
pub const IP_PATH_LINKS: Ints = Ints { min: 0, max: 255 };

/// Line rate of a link: [1 kbit/s, 1 Tbit/s].
pub const BIT_RATE_BPS: Reals = Reals {
    min: 1e3,
    min_open: false,
    max: 1e12,
};
/// Cell rate of an ATM link: the line rate / 424 bits, or with SONET the
/// payload (26/27 of the line rate, 149.76 of 155.52 Mbit/s) / 424, from
/// the least line rate to the greatest. Computed in the same order as the
/// Python layer, so its smallest rate is this bound exactly.
pub const CELL_RATE_CPS: Reals = Reals {
    min: BIT_RATE_BPS.min * 26.0 / 27.0 / 424.0,
    min_open: false,
    max: BIT_RATE_BPS.max / 424.0,
};
/// An ATM port's buffer in cells: `u32::MAX` stands for unlimited inside the
/// core, so one less at most.
pub const BUFFER_CELLS: Ints = Ints {
    min: 1,
    max: u32::MAX as u64 - 1,
};
/// An IP port's buffer in packets.
pub const BUFFER_PACKETS: Ints = Ints {
    min: 1,
    max: u32::MAX as u64,
};
/// An IP port's buffer in bytes (exact as a double: up to 2^53).
pub const BUFFER_BYTES: Ints = Ints {
    min: 1,
    max: 1 << 53,
};
/// EPD and intelligent-tail thresholds, cells (at most the buffer).
pub const THRESHOLD_CELLS: Ints = BUFFER_CELLS;
/// RED thresholds, packets or bytes (min_th < max_th).
pub const RED_THRESHOLD: Reals = Reals {
    min: 0.0,
    min_open: true,
    max: (1u64 << 53) as f64,
};
/// A fraction in (0, 1]: RED's w_q and max_p, ERICA's target utilization,
/// ERICA+'s qdlf, ABR's RIF, RDF and CDF.
pub const FRACTION: Reals = Reals {
    min: 0.0,
    min_open: true,
    max: 1.0,
};

/// A value in [0, 1]: DFBA's alpha and Z.
pub const UNIT_INTERVAL: Reals = Reals {
    min: 0.0,
    min_open: false,
    max: 1.0,
};
/// DFBA's low threshold L, cells (at most H: checked).
pub const DFBA_THRESHOLD_CELLS: Ints = Ints {
    min: 0,
    max: BUFFER_CELLS.max,
};
/// A GFR VC's MCR, cells/s (at most its first link's: checked): at least one
/// cell every 1000 s.
pub const GFR_MCR_CPS: Reals = Reals {
    min: 1e-3,
    min_open: false,
    max: CELL_RATE_CPS.max,
};
/// The largest increase of an explicit rate per interval (seed 001: 10 %).
pub const RATE_INCREASE: Reals = Reals {
    min: 0.0,
    min_open: false,
    max: 10.0,
};
/// A GFR VC's MBS and MFS, cells.
pub const GFR_CELLS: Ints = Ints {
    min: 1,
    max: u16::MAX as u64,
};

/// A source's cell rate (peak, mean): at least one cell every 1000 s, at
/// most the fastest link's cell rate (and the VC's first link's, checked).
pub const SOURCE_RATE_CPS: Reals = Reals {
    min: 1e-3,
    min_open: false,
    max: CELL_RATE_CPS.max,
};
/// Mean burst of a geometric on/off source, cells.
pub const MEAN_BURST_CELLS: Reals = Reals {
    min: 1.0,
    min_open: false,
    max: 1e9,
};
/// Frame size, cells (a `u16`).
pub const FRAME_CELLS: Ints = Ints {
    min: 1,
    max: u16::MAX as u64,
};

/// ERICA and ERICA+ overload band delta.
pub const ERICA_DELTA: Reals = Reals {
    min: 0.0,
    min_open: false,
    max: 10.0,
};
/// Averaging interval (ERICA, ERICA+, FMMRA) and ERICA+'s T0: [1 us, 10 s].
pub const INTERVAL_PS: Ints = Ints {
    min: PS_PER_S / 1_000_000,
    max: 10 * PS_PER_S,
};
/// Averaging interval in ABR input cells.
pub const INTERVAL_CELLS: Ints = Ints {
    min: 1,
    max: 1_000_000_000,
};
/// ERICA+'s curve above T0, a.
pub const ERICA_PLUS_A: Reals = Reals {
    min: 1.0,
    min_open: false,
    max: 10.0,
};
/// ERICA+'s curve below T0, b.
pub const ERICA_PLUS_B: Reals = Reals {
    min: 0.0,
    min_open: true,
    max: 10.0,
};
/// EFCI's high threshold, cells.
pub const EFCI_HIGH_CELLS: Ints = BUFFER_CELLS;
/// EFCI's low threshold, cells (at most the high one).
pub const EFCI_LOW_CELLS: Ints = Ints {
    min: 0,
    max: BUFFER_CELLS.max,
};

/// ABR PCR, ICR and TCR: positive, at most the fastest link's cell rate
/// (and PCR at most the VC's first link's, ICR and TCR at most PCR: checked).
pub const ABR_RATE_CPS: Reals = Reals {
    min: 0.0,
    min_open: true,
    max: CELL_RATE_CPS.max,
};
/// ABR MCR: [0, PCR].
pub const ABR_MCR_CPS: Reals = Reals {
    min: 0.0,
    min_open: false,
    max: CELL_RATE_CPS.max,
};
/// Nrm (ATM Forum Traffic Management Specification 4.0): 2 to 256.
pub const ABR_NRM: Ints = Ints { min: 2, max: 256 };
/// Mrm: 1 to Nrm.
pub const ABR_MRM: Ints = Ints { min: 1, max: 256 };
/// Trm: [100 us, 10^6 s].
pub const ABR_TRM_PS: Ints = Ints {
    min: PS_PER_S / 10_000,
    max: MAX_TIME_PS,
};
/// CRM = ceil(TBE / Nrm), TBE a 24-bit field: 1 to 2^24 - 1.
pub const ABR_CRM: Ints = Ints {
    min: 1,
    max: (1 << 24) - 1,
};
/// ADTF (ATM Forum Traffic Management Specification 4.0): [10 ms, 10.23 s].
pub const ABR_ADTF_PS: Ints = Ints {
    min: PS_PER_S / 100,
    max: 10_230 * (PS_PER_S / 1_000),
};

/// TCP MSS, bytes: a datagram of MSS + 40 header bytes fits 65,535.
pub const MSS_BYTES: Ints = Ints {
    min: 1,
    max: 65_495,
};
/// Receiver window, bytes: at most the 16-bit field at the largest shift
/// (and at least the MSS: checked).
pub const RCV_WINDOW_BYTES: Ints = Ints {
    min: 1,
    max: 65_535 << 14,
};
/// Window-scale shift (RFC 1323).
pub const WINDOW_SCALE: Ints = Ints { min: 0, max: 14 };
/// Initial congestion window, segments.
pub const INITIAL_CWND_SEGMENTS: Ints = Ints {
    min: 1,
    max: 1_000_000,
};
/// Byte counts kept exact as doubles: initial ssthresh, finite transfer.
pub const BYTES_2_53: Ints = Ints {
    min: 1,
    max: 1 << 53,
};
/// Coarse timer tick: [1 us, 1000 s].
pub const TICK_PS: Ints = Ints {
    min: PS_PER_S / 1_000_000,
    max: 1_000 * PS_PER_S,
};
/// Most SACK blocks per ACK.
pub const SACK_BLOCKS: Ints = Ints { min: 1, max: 4 };

/// Probe period: [1 ns, 10^6 s] (0: no probes).
pub const PROBE_PERIOD_PS: Ints = Ints {
    min: PS_PER_S / 1_000_000_000,
    max: MAX_TIME_PS,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_are_included_or_not_as_written() {
        assert!(FRACTION.contains(1.0) && !FRACTION.contains(0.0));
        assert!(!FRACTION.contains(f64::NAN) && !FRACTION.contains(1.0 + 1e-15));
        assert!(ERICA_DELTA.contains(0.0));
        assert!(MSS_BYTES.contains(65_495) && !MSS_BYTES.contains(65_496));
        assert_eq!(
            DELAY_PS.check("links[3].delay_ps", 1_000_000_000_000_001),
            Err("links[3].delay_ps = 1000000000000001 is outside [0, 1000000000000000]".into())
        );
        assert_eq!(
            FRACTION.check("x", 0.0),
            Err("x = 0.0 is outside (0.0, 1.0]".into())
        );
    }

    #[test]
    fn the_cell_rate_bounds_follow_the_line_rate_bounds() {
        // 1 kbit/s with SONET: 1000 x 26/27 / 424 cells/s; 1 Tbit/s: 10^12 / 424.
        assert!((CELL_RATE_CPS.min - 2.271_139_8).abs() < 1e-6);
        assert_eq!(CELL_RATE_CPS.max, 1e12 / 424.0);
    }
}
