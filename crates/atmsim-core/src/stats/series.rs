//! Time series of the probes, kept as four columns (tidy form: time, entity,
//! metric, value) so Python can wrap them without copying row by row.

/// What a sample measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Cells waiting at a port at the sampling instant.
    QueueCells = 0,
    /// Busy fraction of a port's link over the last period.
    Utilization = 1,
    /// Cells delivered to a VC's sink over the last period, per second.
    VcRateCps = 2,
    /// A flow's congestion window, bytes.
    CwndBytes = 3,
    /// A flow's usable window min(cwnd, advertised window), bytes.
    WindowBytes = 4,
    /// A flow's highest byte sent + 1.
    SeqBytes = 5,
    /// A flow's smoothed RTT, s.
    SrttS = 6,
    /// Packets waiting at an IP port.
    IpQueuePackets = 7,
    /// An ABR source's allowed cell rate, cells/s.
    AcrCps = 8,
    /// The explicit rate: last received by a source, or last written by a port, cells/s.
    ErCps = 9,
    /// A port's ERICA load factor z.
    LoadFactor = 10,
    /// A port's fair share (ERICA) or advertised rate (FMMRA), cells/s.
    FairShareCps = 11,
    /// Cells waiting in a port's ABR queue.
    AbrQueueCells = 12,
    /// Cells of one VC in one port (the one being sent included).
    VcQueueCells = 13,
    /// A TCP flow's explicit rate at the router port controlling it, bits/s.
    ErBps = 14,
    /// The last window a router wrote into a flow's ACKs, bytes.
    RwndWrittenBytes = 15,
    /// AAL5 frames a VC's reassembly lost by merging (an EOM cell dropped), so far.
    FramesMerged = 16,
    /// A VC's data cells dropped at ports, so far.
    CellsDropped = 17,
}

/// Names of the metrics, indexed by [`Metric`].
pub const METRIC_NAMES: [&str; 18] = [
    "queue_cells",
    "utilization",
    "vc_rate_cps",
    "cwnd_bytes",
    "window_bytes",
    "seq_bytes",
    "srtt_s",
    "ip_queue_packets",
    "acr_cps",
    "er_cps",
    "load_factor",
    "fair_share_cps",
    "abr_queue_cells",
    "vc_queue_cells",
    "er_bps",
    "rwnd_written_bytes",
    "frames_merged",
    "cells_dropped",
];

/// The recorded samples.
#[derive(Clone, Debug, Default)]
pub struct Series {
    /// Sample times, s.
    pub time_s: Vec<f64>,
    /// Index into `entity_names`.
    pub entity: Vec<u32>,
    /// [`Metric`] code.
    pub metric: Vec<u8>,
    /// Sample values.
    pub value: Vec<f64>,
    /// Names of the entities (ports first, then VCs, then flows).
    pub entity_names: Vec<String>,
}

impl Series {
    /// Appends one sample.
    pub fn push(&mut self, time_s: f64, entity: u32, metric: Metric, value: f64) {
        self.time_s.push(time_s);
        self.entity.push(entity);
        self.metric.push(metric as u8);
        self.value.push(value);
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.time_s.len()
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.time_s.is_empty()
    }
}
