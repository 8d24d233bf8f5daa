//! The allowed range of every scenario value, in the core JSON's units.
//!
//! Each range is declared once, by the model whose parameter it bounds
//! (a `const` in its `params` module, see [`crate::param`], named by the
//! field's `#[param(range = ...)]`), and used twice: by the JSON Schema and
//! by the generated `check_ranges`, which [`super::Scenario::check`] calls
//! through the models' checks. Ranges that depend on another value
//! (a threshold below its buffer, a rate below the first link's,
//! `min <= initial <= max` RTOs) are checked there too, and told in the
//! fields' descriptions.
//!
//! Declared here: the ranges of the network's own values (how many objects,
//! how long a path, the probe period). Re-exported here: every model's
//! ranges, so that one list shows them all.

use crate::engine::time::MAX_TIME_PS;
use crate::engine::PS_PER_S;

pub use crate::abr::params::{
    ABR_ADTF_PS, ABR_CRM, ABR_MCR_CPS, ABR_MRM, ABR_NRM, ABR_RATE_CPS, ABR_TRM_PS, EFCI_HIGH_CELLS,
    EFCI_LOW_CELLS, ERICA_DELTA, ERICA_PLUS_A, ERICA_PLUS_B, INTERVAL_CELLS, INTERVAL_PS,
};
pub use crate::atm::params::{BIT_RATE_BPS, CELL_RATE_CPS};
pub use crate::buffer::params::{
    BUFFER_CELLS, DFBA_THRESHOLD_CELLS, RED_THRESHOLD, THRESHOLD_CELLS,
};
pub use crate::gfr::params::{GFR_CELLS, GFR_MCR_CPS};
pub use crate::ip::params::{BUFFER_BYTES, BUFFER_PACKETS, RATE_INCREASE};
pub use crate::param::{
    Ints, Limit, Reals, ZeroOr, ANY_U64, DELAY_PS, FRACTION, POSITIVE_TIME_PS, RATE_TOLERANCE,
    TIME_PS, UNIT_INTERVAL,
};
pub use crate::tcp::config::{
    BYTES_2_53, INITIAL_CWND_SEGMENTS, MSS_BYTES, RCV_WINDOW_BYTES, SACK_BLOCKS, TICK_PS,
    WINDOW_SCALE,
};
pub use crate::traffic::params::{FRAME_CELLS, MEAN_BURST_CELLS, SOURCE_RATE_CPS};

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

/// Probe period: [1 ns, 10^6 s] (0: no probes).
pub const PROBE_PERIOD_PS: Ints = Ints {
    min: PS_PER_S / 1_000_000_000,
    max: MAX_TIME_PS,
};

/// Links of a capture.
pub const CAPTURE_LINKS: Ints = Ints {
    min: 1,
    max: ENTITIES.max,
};

/// A capture file's size bound, bytes: room for its header and one
/// record, at most 1 TiB.
pub const CAPTURE_BYTES: Ints = Ints {
    min: 24 + 16 + 40,
    max: 1 << 40,
};
