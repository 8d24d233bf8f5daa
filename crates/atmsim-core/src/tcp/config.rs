//! Parameters of one TCP connection: each declared once, with its doc,
//! default and range (`#[params]`), and their check. The core JSON gives
//! them among a flow's keys (the flow's object flattens [`TcpConfig`]).

use crate::engine::{Time, PS_PER_S};
use crate::param::{strict_tagged, Ints, DELAY_PS, POSITIVE_TIME_PS};
use atmsim_params::params;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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

/// Congestion-control variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    /// Tahoe without fast retransmit: only timeouts recover losses (TCP over
    /// ABR (Kalyanaraman et al., 1996), ABR and UBR buffering (Kalyanaraman et
    /// al., 1998) and TCP over FMMRA (An et al., 1998)).
    TahoeNofr,
    /// Tahoe: fast retransmit on 3 duplicate ACKs, then slow start from one segment.
    Tahoe,
    /// Reno: fast retransmit and fast recovery.
    Reno,
    /// NewReno (RFC 6582): partial ACKs keep fast recovery going.
    Newreno,
    /// SACK (RFC 2018 blocks) with Fall & Floyd's pipe-based recovery.
    Sack,
}

/// How retransmission timers and RTT samples are timed.
#[params]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TimerMode {
    /// BSD: a global tick of `tick_ps`; RTT measured and RTO kept in ticks.
    Coarse {
        /// Timer granularity G, ps.
        #[param(range = TICK_PS)]
        tick_ps: Time,
    },
    /// Exact times ("fine-grained double-precision timing", as in TCP over FMMRA).
    Fine,
}

/// How the RTT estimator computes with a coarse timer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RttArithmetic {
    /// srtt and rttvar as real numbers (RFC 6298's form of Jacobson and
    /// Karels), samples in whole ticks crossed, the RTO rounded up to whole
    /// ticks. The only arithmetic of the fine timer.
    #[default]
    Real,
    /// 4.4BSD's fixed-point integers (tcp_xmit_timer in W. R. Stevens and
    /// G. R. Wright, "TCP/IP Illustrated, Volume 2", 1995, section 25.10):
    /// the timed segment counts ticks from 1, the first sample sets srtt to
    /// it and rttvar to half of it (a first RTO of 3 samples), later ones
    /// update srtt (scaled by 8) and rttvar (scaled by 4) with truncating
    /// shifts, and the RTO is srtt (truncated) + 4 rttvar in ticks. Coarse
    /// timer only.
    Bsd,
}

/// Everything that sets the behaviour of one connection (the core JSON
/// gives it among the keys of a flow's object). The defaults are those of
/// the TCP over ABR paper (Kalyanaraman et al., 1996) and of the other
/// papers where they agree: Tahoe without fast retransmit, MSS 512 bytes, a
/// 64 KB window, BSD's 100 ms coarse timer (docs/model.md, "TCP").
#[params]
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpConfig {
    /// Congestion-control variant.
    #[param(default = Variant::TahoeNofr)]
    pub variant: Variant,
    /// Maximum segment size, payload bytes.
    #[param(default = 512, range = MSS_BYTES)]
    pub mss_bytes: u32,
    /// Receiver buffer: the largest window it advertises, bytes (at least
    /// the MSS).
    #[param(default = 65_536, range = RCV_WINDOW_BYTES)]
    pub rcv_window_bytes: u64,
    /// Window-scale shift (RFC 1323); the 16-bit field is
    /// min(65535, rcv_window_bytes >> shift). 1: the smallest shift that
    /// fits the default window.
    #[param(default = 1, range = WINDOW_SCALE)]
    pub window_scale: u8,
    /// Initial congestion window, segments.
    #[param(default = 1, range = INITIAL_CWND_SEGMENTS)]
    pub initial_cwnd_segments: u32,
    /// Initial slow-start threshold, bytes (null: the largest window).
    #[param(default = None, range = BYTES_2_53)]
    pub initial_ssthresh_bytes: Option<u64>,
    /// Retransmission timer: coarse (BSD ticks) or fine. A 100 ms tick:
    /// TCP over ABR's "TCP timer granularity 100 ms".
    #[serde(deserialize_with = "strict_tagged")]
    #[param(default = TimerMode::Coarse { tick_ps: PS_PER_S / 10 })]
    pub timer: TimerMode,
    /// The RTT estimator's arithmetic: "real" (default) or "bsd" (4.4BSD's
    /// fixed-point code; coarse timer only).
    #[param(default = RttArithmetic::Real)]
    pub rtt_arithmetic: RttArithmetic,
    /// RTO before the first RTT sample, ps (min_rto_ps <= it <=
    /// max_rto_ps): 3 s, RFC 1122's initial RTO.
    #[param(default = 3 * PS_PER_S, range = POSITIVE_TIME_PS)]
    pub initial_rto_ps: Time,
    /// Smallest RTO, ps (rounded up to whole ticks with a coarse timer).
    /// No default here: the scenario's is 2 ticks with a coarse timer, as
    /// BSD's (TCP/IP Illustrated, Volume 2), and 200 ms with a fine one.
    #[param(range = POSITIVE_TIME_PS)]
    pub min_rto_ps: Time,
    /// Largest RTO, ps: 64 s, BSD's TCPTV_REXMTMAX (TCP/IP Illustrated,
    /// Volume 2).
    #[param(default = 64 * PS_PER_S, range = POSITIVE_TIME_PS)]
    pub max_rto_ps: Time,
    /// Delayed-ACK timeout, ps (0: every segment is ACKed at once, as the
    /// papers' receivers do).
    #[param(default = 0, range = DELAY_PS)]
    pub delayed_ack_ps: Time,
    /// Bytes the application sends (null: an infinite source).
    #[param(default = None, range = BYTES_2_53)]
    pub app_bytes: Option<u64>,
    /// Most SACK blocks per ACK: 3, as many as fit beside the timestamp
    /// option (RFC 2018).
    #[param(default = 3, range = SACK_BLOCKS)]
    pub max_sack_blocks: u8,
}

impl TcpConfig {
    /// The 16-bit window field the receiver advertises.
    pub fn window_field(&self) -> u16 {
        (self.rcv_window_bytes >> self.window_scale).min(65_535) as u16
    }

    /// The largest window the sender can be offered, bytes.
    pub fn max_window(&self) -> u64 {
        (self.window_field() as u64) << self.window_scale
    }

    /// Rejects a parameter of the flow at path `p` outside its range, or
    /// parameters that contradict each other (a window below one MSS, BSD
    /// arithmetic with a fine timer, RTOs out of order).
    pub fn check(&self, p: &str) -> Result<(), String> {
        self.check_ranges(p)?;
        self.timer.check_ranges(&format!("{p}.timer"))?;
        let t = self;
        Ints {
            min: t.mss_bytes as u64,
            ..RCV_WINDOW_BYTES
        }
        .check(format_args!("{p}.rcv_window_bytes"), t.rcv_window_bytes)?;
        if t.max_window() < t.mss_bytes as u64 {
            return Err(format!(
                "{p}: the advertised window ({} bytes at shift {}) is below one MSS",
                t.max_window(),
                t.window_scale
            ));
        }
        if t.rtt_arithmetic == RttArithmetic::Bsd && t.timer == TimerMode::Fine {
            return Err(format!(
                "{p}.rtt_arithmetic = \"bsd\" needs a coarse timer (BSD counts in ticks)"
            ));
        }
        if t.min_rto_ps > t.initial_rto_ps {
            return Err(format!(
                "{p}.min_rto_ps = {} is above {p}.initial_rto_ps = {}",
                t.min_rto_ps, t.initial_rto_ps
            ));
        }
        if t.initial_rto_ps > t.max_rto_ps {
            return Err(format!(
                "{p}.initial_rto_ps = {} is above {p}.max_rto_ps = {}",
                t.initial_rto_ps, t.max_rto_ps
            ));
        }
        Ok(())
    }

    /// A configuration for tests and examples: MSS 512, 64 KB window, coarse
    /// 100 ms timer, the given variant.
    pub fn example(variant: Variant) -> Self {
        TcpConfig {
            variant,
            mss_bytes: 512,
            rcv_window_bytes: 65_536,
            window_scale: 1,
            initial_cwnd_segments: 1,
            initial_ssthresh_bytes: None,
            timer: TimerMode::Coarse {
                tick_ps: 100_000_000_000,
            },
            rtt_arithmetic: RttArithmetic::Real,
            initial_rto_ps: 3_000_000_000_000,
            min_rto_ps: 200_000_000_000,
            max_rto_ps: 64_000_000_000_000,
            delayed_ack_ps: 0,
            app_bytes: None,
            max_sack_blocks: 3,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_scaling() {
        let mut c = TcpConfig::example(Variant::Reno);
        // 64 KB with shift 1: field 32768, window 65536.
        assert_eq!((c.window_field(), c.max_window()), (32_768, 65_536));
        // TCP over ABR: 16 x 64 KB = 1024 KB with shift 4: the field saturates at
        // 65535, so the window is 65535 x 16 = 1,048,560 bytes.
        c.rcv_window_bytes = 1 << 20;
        c.window_scale = 4;
        assert_eq!(c.max_window(), 1_048_560);
        // The satellite case of ABR and UBR buffering: 34000 x 2^8 bytes.
        c.rcv_window_bytes = 34_000 << 8;
        c.window_scale = 8;
        assert_eq!((c.window_field(), c.max_window()), (34_000, 8_704_000));
        // Without scaling a 64 KB buffer advertises 65535.
        c.rcv_window_bytes = 65_536;
        c.window_scale = 0;
        assert_eq!(c.max_window(), 65_535);
    }
}
