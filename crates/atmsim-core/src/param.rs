//! How a model declares its parameters' ranges: an integer or real range
//! ([`Ints`], [`Reals`]) written once as a `const` beside the parameter
//! type it bounds, and named by the field's `#[param(range = ...)]` (the
//! attribute `#[params]` of the crate `atmsim-params`, which declares a
//! parameter's default there too). It is read twice: by the JSON Schema
//! (the field's [`Limit`] transform writes `minimum`/`maximum`,
//! `exclusiveMinimum` or `minItems`/`maxItems`) and by the generated
//! `check_ranges`, which rejects a value outside it with its JSON path and
//! the range ([`Bound`]). A field `#[params]` cannot reach (an element of a
//! tuple variant) carries the transform itself. Here too the few ranges
//! every model shares (times, fractions), and [`strict_tagged`], the reader
//! of a `kind`-tagged object that refuses stray keys.
//!
//! The bounds keep every computation in range: a time is at most 10^6 s
//! (10^18 ps, while `u64` holds 1.8 x 10^19), so the sum of a few times
//! cannot overflow; rates lie between 1 kbit/s and 1 Tbit/s; a source sends
//! at least one cell every 1000 s.
//!
//! This module sits at the bottom of the core beside [`crate::engine`]: it
//! knows no model.

use crate::engine::time::MAX_TIME_PS;
use crate::engine::PS_PER_S;
use schemars::transform::Transform;
use schemars::Schema;
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer};
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

/// A range a field's value is checked against by the `check_ranges` that
/// `#[params]` (the crate `atmsim-params`) writes: an integer of any width
/// or a list's length against [`Ints`], a real against [`Reals`], either
/// through [`ZeroOr`], an optional value only when present.
pub trait Bound<T: ?Sized> {
    /// Rejects `v` outside the range, naming `path`.
    fn check_value(&self, path: &dyn Display, v: &T) -> Result<(), String>;
}

/// A key's JSON path: `p.key`, or `key` at the top (`p` empty).
pub struct KeyPath<'a>(pub &'a str, pub &'a str);

impl Display for KeyPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            f.write_str(self.1)
        } else {
            write!(f, "{}.{}", self.0, self.1)
        }
    }
}

macro_rules! int_bound {
    ($($t:ty),*) => {$(
        impl Bound<$t> for Ints {
            fn check_value(&self, path: &dyn Display, v: &$t) -> Result<(), String> {
                self.check(path, *v as u64)
            }
        }
        impl Bound<$t> for ZeroOr<Ints> {
            fn check_value(&self, path: &dyn Display, v: &$t) -> Result<(), String> {
                if *v == 0 { Ok(()) } else { self.0.check(path, *v as u64) }
            }
        }
    )*};
}
int_bound!(u8, u16, u32, u64, usize);

impl Bound<f64> for Reals {
    fn check_value(&self, path: &dyn Display, v: &f64) -> Result<(), String> {
        self.check(path, *v)
    }
}

impl Bound<f64> for ZeroOr<Reals> {
    fn check_value(&self, path: &dyn Display, v: &f64) -> Result<(), String> {
        if *v == 0.0 {
            Ok(())
        } else {
            self.0.check(path, *v)
        }
    }
}

impl<T> Bound<Vec<T>> for Ints {
    fn check_value(&self, path: &dyn Display, v: &Vec<T>) -> Result<(), String> {
        self.check_len(path, v.len())
    }
}

impl<T, R: Bound<T>> Bound<Option<T>> for R {
    fn check_value(&self, path: &dyn Display, v: &Option<T>) -> Result<(), String> {
        match v {
            Some(v) => self.check_value(path, v),
            None => Ok(()),
        }
    }
}

/// Reads a `kind`-tagged object (a policy, a source model, a timer),
/// rejecting keys beside `kind` for a kind without parameters: serde
/// ignores them there even with `deny_unknown_fields`. A kind without
/// parameters is one that reads from `{"kind": ...}` with a key no kind
/// has (a kind with parameters, all of them defaulted, refuses that key).
pub fn strict_tagged<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let v = serde_json::Value::deserialize(d)?;
    let t = T::deserialize(&v).map_err(D::Error::custom)?;
    if let (Some(obj), Some(kind)) = (v.as_object(), v.get("kind")) {
        let extra = obj.keys().find(|k| *k != "kind");
        if let Some(key) = extra {
            if T::deserialize(serde_json::json!({ "kind": kind, "\u{0}": 0 })).is_ok() {
                return Err(D::Error::custom(format_args!(
                    "unknown field `{key}`: kind {kind} takes no other key"
                )));
            }
        }
    }
    Ok(t)
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

/// Any `u64` (the run seed).
pub const ANY_U64: Ints = Ints {
    min: 0,
    max: u64::MAX,
};

/// A fraction in (0, 1]: RED's w_q and max_p, ERICA's target utilization,
/// ERICA+'s qdlf, ABR's RIF, RDF and CDF, Selective Drop's and FBA's Z.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_are_included_or_not_as_written() {
        assert!(FRACTION.contains(1.0) && !FRACTION.contains(0.0));
        assert!(!FRACTION.contains(f64::NAN) && !FRACTION.contains(1.0 + 1e-15));
        assert!(UNIT_INTERVAL.contains(0.0));
        let mss = Ints {
            min: 1,
            max: 65_495,
        };
        assert!(mss.contains(65_495) && !mss.contains(65_496));
        assert_eq!(
            DELAY_PS.check("links[3].delay_ps", 1_000_000_000_000_001),
            Err("links[3].delay_ps = 1000000000000001 is outside [0, 1000000000000000]".into())
        );
        assert_eq!(
            FRACTION.check("x", 0.0),
            Err("x = 0.0 is outside (0.0, 1.0]".into())
        );
    }
}
