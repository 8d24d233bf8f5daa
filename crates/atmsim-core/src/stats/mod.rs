//! What a run reports: the summary (scalars per port, per VC and per run),
//! the conservation ledger, and the time series of the probes.
//!
//! The counters themselves live in the components (ports, reassembly);
//! this module only defines the shapes handed back to Python.

pub mod delay;
pub mod ledger;
pub mod parquet;
pub mod pcap;
pub mod series;

pub use delay::{DelayStats, DelaySummary, RttSummary};
pub use ledger::{ByteLedger, ExternalLedger, Ledger, PacketLedger};
pub use series::{Metric, Series};

use ledger::is_zero;
use serde::Serialize;

/// Counters of one output port.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PortSummary {
    /// The port's link name.
    pub name: String,
    /// "atm" or "ip".
    pub layer: &'static str,
    /// Cells offered to the port.
    pub cells_in: u64,
    /// Cells that finished transmission.
    pub cells_out: u64,
    /// Cells dropped.
    pub cells_dropped: u64,
    /// Drops by reason (tail, intelligent_tail, ppd, epd).
    pub drops: std::collections::BTreeMap<String, u64>,
    /// Cell loss ratio: dropped / offered.
    pub clr: f64,
    /// Largest number of waiting cells.
    pub max_queue_cells: u32,
    /// Time-average number of waiting cells.
    pub mean_queue_cells: f64,
    /// Busy fraction of the link.
    pub utilization: f64,
    /// IP ports: packets offered.
    pub packets_in: u64,
    /// IP ports: packets that finished transmission.
    pub packets_out: u64,
    /// IP ports: packets dropped (tail and RED).
    pub packets_dropped: u64,
    /// IP ports: packets dropped early by RED.
    pub packets_dropped_red: u64,
    /// IP ports: largest number of waiting packets.
    pub max_queue_packets: u32,
    /// IP ports: time-average number of waiting packets.
    pub mean_queue_packets: f64,
}

/// Counters of one TCP connection.
#[derive(Clone, Debug, Serialize)]
pub struct FlowSummary {
    /// Name.
    pub name: String,
    /// Variant.
    pub variant: &'static str,
    /// Bytes delivered to the receiving application * 8 / time, Mbit/s.
    pub goodput_mbps: f64,
    /// Bytes delivered to the receiving application.
    pub bytes_delivered: u64,
    /// Bytes transmitted.
    pub bytes_sent: u64,
    /// Bytes transmitted once.
    pub bytes_sent_once: u64,
    /// Bytes transmitted again.
    pub bytes_retransmitted: u64,
    /// Bytes the receiver got twice.
    pub bytes_duplicate: u64,
    /// Segments transmitted.
    pub segments_sent: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Fast retransmits.
    pub fast_retransmits: u64,
    /// Expiries of the persist timer (absent when 0).
    #[serde(skip_serializing_if = "is_zero")]
    pub persist_expiries: u64,
    /// Window probes: one byte sent into a zero window (absent when 0).
    #[serde(skip_serializing_if = "is_zero")]
    pub window_probes: u64,
    /// ACKs that offered a zero window (absent when 0).
    #[serde(skip_serializing_if = "is_zero")]
    pub zero_window_acks: u64,
    /// Congestion window at the end, bytes.
    pub final_cwnd_bytes: f64,
    /// Slow-start threshold at the end, bytes.
    pub final_ssthresh_bytes: f64,
    /// Smoothed RTT at the end, s.
    pub srtt_s: f64,
    /// RTO at the end, s.
    pub rto_s: f64,
    /// Finite transfer: when its last byte was acknowledged, s.
    pub completed_at_s: Option<f64>,
    /// A flow whose ACKs a router controls (Explicit rate control of TCP,
    /// Satyavolu et al., 1998): its explicit rate and what the router did to
    /// its ACKs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_control: Option<FlowRateSummary>,
    /// With `probes.delay`: the delay of the flow's data segments that
    /// reached the receiver whole, from the sender's hand-over to the
    /// first link or VC (absent otherwise, or without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay: Option<DelaySummary>,
    /// With `probes.delay`: the RTT samples the sender's estimator took
    /// (absent otherwise, or without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt: Option<RttSummary>,
}

/// What the explicit-rate control of TCP did to one flow (Explicit rate control of TCP).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowRateSummary {
    /// The flow's explicit rate at its controlling port at the end, bits/s.
    pub er_bps: f64,
    /// The last window written into its ACKs, bytes (0: none written).
    pub window_written_bytes: f64,
    /// ACKs whose window field the router lowered.
    pub acks_rewritten: u64,
    /// ACKs that went through its ack bucket.
    pub acks_released: u64,
    /// ACKs held in its ack bucket at the end (a term of the packet ledger).
    pub acks_held: u64,
    /// Most ACKs held at once.
    pub acks_held_max: u64,
    /// Mean time an ACK released by the bucket was held, s.
    pub ack_hold_mean_s: f64,
}

/// Counters of one VC.
#[derive(Clone, Debug, Serialize)]
pub struct VcSummary {
    /// Name.
    pub name: String,
    /// Cells generated by the VC's source.
    pub cells_sent: u64,
    /// Cells that reached the VC's sink.
    pub cells_delivered: u64,
    /// Frames generated.
    pub frames_sent: u64,
    /// Frames reassembled intact.
    pub frames_delivered: u64,
    /// Single frames that lost cells.
    pub frames_corrupted: u64,
    /// Frames lost by merging after a lost EOM.
    pub frames_merged: u64,
    /// Cells discarded by failed reassembly.
    pub cells_discarded_aal5: u64,
    /// Cells of intact frames per second.
    pub frame_goodput_cps: f64,
    /// ABR VCs: the source end system at the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub abr: Option<AbrSummary>,
    /// GFR VCs: the conformance of their frames at the first switch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gfr: Option<GfrSummary>,
    /// With `probes.delay`: the cell transfer delay of the data cells that
    /// reached the VC's end, and its variation (absent otherwise, or
    /// without a delivered cell).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ctd: Option<DelaySummary>,
}

/// A GFR VC's frames as its first switch's frame-based GCRA judged them.
#[derive(Clone, Debug, Serialize)]
pub struct GfrSummary {
    /// The VC's minimum cell rate, cells/s.
    pub mcr_cps: f64,
    /// Frames tested (data frames that reached the first switch).
    pub frames_tested: u64,
    /// Frames not eligible for the MCR guarantee.
    pub frames_ineligible: u64,
    /// Cells tagged CLP = 1 (with tagging on).
    pub cells_tagged: u64,
}

/// The state of an ABR source end system at the end of a run.
#[derive(Clone, Debug, Serialize)]
pub struct AbrSummary {
    /// Allowed cell rate, cells/s.
    pub acr_cps: f64,
    /// ER of the last backward RM cell, cells/s.
    pub last_er_cps: f64,
    /// Forward RM cells sent.
    pub frms_sent: u64,
    /// Backward RM cells received.
    pub brms_received: u64,
    /// Times rule 6 (no feedback for CRM RM cells) cut ACR.
    pub rule6_cuts: u64,
    /// Cells waiting in the source queue.
    pub source_queue_cells: u64,
}

/// The whole-run summary.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Simulated time covered, s.
    pub sim_time_s: f64,
    /// Events processed.
    pub events: u64,
    /// Seed of the run.
    pub seed: u64,
    /// False when the run was stopped before its duration.
    pub completed: bool,
    /// One entry per output port.
    pub ports: Vec<PortSummary>,
    /// One entry per VC.
    pub vcs: Vec<VcSummary>,
    /// One entry per TCP connection.
    pub flows: Vec<FlowSummary>,
    /// The cell conservation ledger.
    pub conservation: Ledger,
    /// What each packet capture wrote (absent without captures).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub captures: Vec<CaptureSummary>,
}

/// What a packet capture wrote.
#[derive(Clone, Debug, Serialize)]
pub struct CaptureSummary {
    /// The capture's name (its files: `<name>.pcap`, `<name>.drops.pcap`).
    pub name: String,
    /// Packets written to `<name>.pcap`.
    pub packets: u64,
    /// Drops written to `<name>.drops.pcap`.
    pub drops: u64,
    /// The size bound of each file, bytes.
    pub max_bytes: u64,
    /// A file reached its bound: the capture ends before the run does.
    pub full: bool,
}
