//! The IP layer's parameters as the core JSON gives them: the buffer of a
//! router port, and the explicit-rate control of TCP (Explicit rate control of
//! TCP, Satyavolu et al., 1998) at an IP or ATM port and at the node that
//! receives the ACKs, with their ranges and checks. The rate computation is
//! ERICA+'s, so its ranges are those of [`crate::abr::params`]. RED's
//! parameters are a port's drop policy, declared with the others in
//! [`crate::buffer::params`].

use crate::abr::params::{ERICA_DELTA, ERICA_PLUS_A, ERICA_PLUS_B, INTERVAL_PS};
use crate::engine::Time;
use crate::param::{Ints, Limit, Reals, FRACTION, POSITIVE_TIME_PS, UNIT_INTERVAL};
use schemars::JsonSchema;
use serde::Deserialize;

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
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RateControlSpec {
    /// Averaging interval, ps.
    #[schemars(transform = Limit(INTERVAL_PS))]
    pub interval_ps: Time,
    /// Target queueing delay T0, ps.
    #[schemars(transform = Limit(INTERVAL_PS))]
    pub t0_ps: Time,
    /// The target curve above T0.
    #[schemars(transform = Limit(ERICA_PLUS_A))]
    pub a: f64,
    /// The target curve below T0.
    #[schemars(transform = Limit(ERICA_PLUS_B))]
    pub b: f64,
    /// Queue drain limit factor: the floor of the target factor.
    #[schemars(transform = Limit(FRACTION))]
    pub qdlf: f64,
    /// Overload band: z > 1 + delta counts as overload.
    #[schemars(transform = Limit(ERICA_DELTA))]
    pub delta: f64,
    /// Largest increase of a flow's rate per interval, a fraction of it.
    #[schemars(transform = Limit(RATE_INCREASE))]
    pub max_increase: f64,
    /// The number of active sources: decay per interval of a silent
    /// session's activity (0: the flows seen in the interval; 1: every
    /// flow ever seen).
    #[schemars(transform = Limit(UNIT_INTERVAL))]
    pub active_decay: f64,
}

/// How a flow's explicit rate becomes the window written into its ACKs:
/// W = ER x T.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum WindowRule {
    /// ACK windows are left alone.
    None,
    /// One time T for every flow.
    Fixed {
        /// T, ps.
        #[schemars(transform = Limit(POSITIVE_TIME_PS))]
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
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct AckControlSpec {
    /// The link whose port computes the rates, with `rate_control`: on an IP
    /// link, an IP link leaving the node this link reaches; on an ATM link,
    /// an ATM link on the controlled flows' data VCs.
    pub rates_from: u32,
    /// Writes min(window, ER x T) into each ACK (RFC 1624 checksum update).
    pub window: WindowRule,
    /// Holds the ACKs and releases them at the flow's rate (the ack bucket;
    /// IP links only).
    pub ack_bucket: bool,
}

impl RateControlSpec {
    /// Rejects a parameter of the rate computation at path `p` outside its
    /// range.
    pub fn check(&self, p: &str) -> Result<(), String> {
        let rc = self;
        INTERVAL_PS.check(format_args!("{p}.interval_ps"), rc.interval_ps)?;
        INTERVAL_PS.check(format_args!("{p}.t0_ps"), rc.t0_ps)?;
        ERICA_PLUS_A.check(format_args!("{p}.a"), rc.a)?;
        ERICA_PLUS_B.check(format_args!("{p}.b"), rc.b)?;
        FRACTION.check(format_args!("{p}.qdlf"), rc.qdlf)?;
        ERICA_DELTA.check(format_args!("{p}.delta"), rc.delta)?;
        RATE_INCREASE.check(format_args!("{p}.max_increase"), rc.max_increase)?;
        UNIT_INTERVAL.check(format_args!("{p}.active_decay"), rc.active_decay)
    }
}

impl WindowRule {
    /// Rejects the rule at path `p` when its time is outside its range.
    pub fn check(&self, p: &str) -> Result<(), String> {
        match *self {
            WindowRule::Fixed { t_ps } => POSITIVE_TIME_PS.check(format_args!("{p}.t_ps"), t_ps),
            WindowRule::None | WindowRule::Rtt | WindowRule::BaseRtt => Ok(()),
        }
    }
}
