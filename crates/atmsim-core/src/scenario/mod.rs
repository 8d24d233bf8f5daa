//! The typed scenario handed over by the Python layer, in canonical units
//! (picoseconds, cells/s, bits/s) with references as indices: this module
//! assembles the models' parameters into a network and checks the whole.
//!
//! These types are the one definition of the core JSON: serde reads it
//! with them (every object rejects unknown keys), and the JSON Schema in
//! `docs/core-schema.json` is generated from them ([`json_schema`]), with
//! the allowed range of every value. `docs/core-interface.md` describes
//! the format; its key tables are rendered from that schema.
//! [`Scenario::check`] rejects a value outside its range, or an
//! inconsistent model, with a message naming its JSON path; Python
//! validates the same ranges first, so a failure here is a bug in
//! validation, never a user error.
//!
//! Each model declares its own parameter types, their ranges and the check
//! of their values in its `params` module ([`crate::abr::params`],
//! [`crate::atm::params`], [`crate::buffer::params`],
//! [`crate::gfr::params`], [`crate::ip::params`],
//! [`crate::traffic::params`], [`crate::tcp::config`]). Here:
//! - [`input`]: the network's own objects (nodes, links, VCs, sources,
//!   flows, probes) as serde reads them;
//! - `check`: the checks across objects (references, paths,
//!   where explicit-rate control may act), calling each model's check;
//! - [`limits`]: the network's own ranges, and every model's ranges
//!   listed in one place.

mod check;
pub mod input;
pub mod limits;

pub use crate::abr::{AbrParams, AlgorithmSpec};
pub use crate::atm::Arbitration;
pub use crate::buffer::{DfbaZ, PolicySpec};
pub use crate::gfr::GfrParams;
pub use crate::ip::{AckControlSpec, RateControlSpec, WindowRule};
pub use crate::traffic::{Arrivals, Distribution, FrameSize, SourceModel};
pub use input::{
    CaptureLink, CaptureSpec, CaptureStamp, FlowKeys, FlowSpec, Layer, LinkSpec, NodeKind,
    NodeSpec, ProbeSpec, Scenario, SourceSpec, VcSpec,
};

/// The JSON Schema of the core JSON (draft 2020-12), generated from the
/// types of [`input`] and the models' parameter types, with their ranges:
/// what `docs/core-schema.json` holds.
pub fn json_schema() -> schemars::Schema {
    schemars::schema_for!(Scenario)
}

/// The schema as the checked-in file writes it: pretty JSON and a newline.
pub fn json_schema_text() -> String {
    let mut text = serde_json::to_string_pretty(&json_schema()).expect("a schema is JSON");
    text.push('\n');
    text
}
