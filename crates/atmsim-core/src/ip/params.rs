//! The IP layer's parameters as the core JSON gives them: the buffer of a
//! router port, and the explicit-rate control of TCP (Explicit rate control of
//! TCP, Satyavolu et al., 1998) at an IP or ATM port and at the node that
//! receives the ACKs, with their ranges and checks. The rate computation is
//! ERICA+'s, so its ranges are those of [`crate::abr::params`]. RED's
//! parameters are a port's drop policy, declared with the others in
//! [`crate::buffer::params`].

use crate::abr::params::{ERICA_DELTA, ERICA_PLUS_A, ERICA_PLUS_B, INTERVAL_PS};
use crate::engine::{Time, PS_PER_S};
use crate::param::{Ints, Reals, FRACTION, POSITIVE_TIME_PS, UNIT_INTERVAL};
use atmsim_params::params;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
/// The largest increase of an explicit rate per interval (Explicit rate control of TCP: 10 %).
pub const RATE_INCREASE: Reals = Reals {
    min: 0.0,
    min_open: false,
    max: 10.0,
};

/// The simplified ERICA+ of Explicit rate control of TCP section 5 at a router port.
/// Every parameter's default is that paper's value (sections 5 and 6, Table 1).
#[params]
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RateControlSpec {
    /// Averaging interval, ps: 5 ms, Table 1's switch averaging interval.
    #[param(default = 5 * (PS_PER_S / 1_000), range = INTERVAL_PS)]
    pub interval_ps: Time,
    /// Target queueing delay T0, ps: 1.5 ms (Table 1).
    #[param(default = 1_500 * (PS_PER_S / 1_000_000), range = INTERVAL_PS)]
    pub t0_ps: Time,
    /// The target curve above T0: 1.15 (Table 1).
    #[param(default = 1.15, range = ERICA_PLUS_A)]
    pub a: f64,
    /// The target curve below T0: 1 (Table 1).
    #[param(default = 1.0, range = ERICA_PLUS_B)]
    pub b: f64,
    /// Queue drain limit factor, the floor of the target factor: 0.5
    /// (Table 1).
    #[param(default = 0.5, range = FRACTION)]
    pub qdlf: f64,
    /// Overload band: z > 1 + delta counts as overload. 0.1, the ERICA
    /// description's (Jain et al., ATM Forum 96-1172): section 5 names
    /// delta without a value.
    #[param(default = 0.1, range = ERICA_DELTA)]
    pub delta: f64,
    /// Largest increase of a flow's rate per interval, a fraction of it:
    /// 0.1, section 5's "limit rate increases to 10 %".
    #[param(default = 0.1, range = RATE_INCREASE)]
    pub max_increase: f64,
    /// The number of active sources: decay per interval of a silent
    /// session's activity (0: the flows seen in the interval; 1: every
    /// flow ever seen). 0: section 5's pseudo-code measures the number of
    /// active sources at each interval's end, as it measures the rates
    /// (docs/model.md, "Explicit-rate control of TCP").
    #[param(default = 0.0, range = UNIT_INTERVAL)]
    pub active_decay: f64,
}

/// How a flow's explicit rate becomes the window written into its ACKs:
/// W = ER x T.
#[params]
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum WindowRule {
    /// ACK windows are left alone.
    None,
    /// One time T for every flow.
    Fixed {
        /// T, ps.
        #[param(range = POSITIVE_TIME_PS)]
        t_ps: Time,
    },
    /// Each flow's own round-trip time as a ping from the router measures
    /// it: its base round-trip time plus the queueing delay of the
    /// controlling port at the instant the ACK passes (Explicit rate control of TCP section
    /// 4.2.1: "ping-like ICMP packets to both source and destination").
    Rtt,
    /// Each flow's base round-trip time: its paths' propagation and one
    /// segment's and one ACK's transmission at every hop, no queueing.
    BaseRtt,
}

/// What the router at a link's far end does to the ACKs it receives over
/// the link, for the flows whose data leave through its port `rates_from`.
#[params]
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct AckControlSpec {
    /// The link whose port computes the rates, with `rate_control`: on an IP
    /// link, an IP link leaving the node this link reaches; on an ATM link,
    /// an ATM link on the controlled flows' data VCs.
    pub rates_from: u32,
    /// Writes min(window, ER x T) into each ACK (RFC 1624 checksum update).
    /// By default T is each flow's round-trip time as a ping from the
    /// router measures it (Explicit rate control of TCP section 4.2.1).
    #[param(default = WindowRule::Rtt)]
    pub window: WindowRule,
    /// Holds the ACKs and releases them at the flow's rate (the ack bucket;
    /// IP links only). Off by default: the paper's own method rewrites the
    /// window, and the ack bucket of its references [4,5] is an addition
    /// it studies in sections 4.1 and 4.2.1.
    #[param(default = false)]
    pub ack_bucket: bool,
}

impl RateControlSpec {
    /// Rejects a parameter of the rate computation at path `p` outside its
    /// range (declared with the parameter).
    pub fn check(&self, p: &str) -> Result<(), String> {
        self.check_ranges(p)
    }
}

impl WindowRule {
    /// Rejects the rule at path `p` when its time is outside its range.
    pub fn check(&self, p: &str) -> Result<(), String> {
        self.check_ranges(p)
    }
}
