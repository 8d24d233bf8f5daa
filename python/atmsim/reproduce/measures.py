"""What the experiments measure in a Result: throughputs, CLR, queues, fairness, and
the time-series measures of TCP over FMMRA (An et al., 1998; transient fairness, ACR settling and
error).

Every function takes an ``atmsim.Result`` (or several) and returns a float. Rates
in Mbps count 424 bits per cell, as scenario files do.
"""

from __future__ import annotations

import math
import weakref

from .._lazy import numpy as np
from .._lazy import pandas as pd
from ..compare import jain
from ..units import CELL_BITS

LINK_MBPS = 155.52
"""Every link of the papers' configurations (the TCP over FMMRA paper writes "155 Mbps")."""
BOTTLENECK = "sw1-sw2"
"""The bottleneck port of the n-source, n-source-vbr and fmmra-lan templates."""


def flow_names(result) -> list[str]:
    """The TCP flows, in order (tcp1, tcp2, ...)."""
    return [str(name) for name in result.flows["name"]]


def goodput(result, flow: str) -> float:
    """A flow's TCP throughput in Mbps: bytes delivered to the application x 8 /
    simulated time (TCP over ABR (Kalyanaraman et al., 1996) section 7's definition)."""
    flows = result.flows.set_index("name")
    return float(flows.loc[flow, "goodput_mbps"])


def goodputs(result) -> list[float]:
    return [float(x) for x in result.flows["goodput_mbps"]]


def total_goodput(result) -> float:
    return float(sum(goodputs(result)))


def fairness(result) -> float:
    """Jain's index (``atmsim.compare.jain``) of the flows' whole-run throughputs; NaN
    when no flow delivered anything."""
    return jain(goodputs(result))


def clr_percent(result) -> float:
    """Cells dropped / cells sent by every source during the run, in % (TCP over ABR's
    section 7: "the number of cells dropped to the number of cells sent")."""
    ledger = result.summary["conservation"]
    sent = ledger["cells_generated"]
    return 100.0 * ledger["cells_dropped"] / sent if sent else 0.0


def clr_with_note(result) -> tuple[float, str]:
    """clr_percent, with the other reading in the note: dropped / cells sent on the TCP
    data VCs alone (the VBR and ACK cells left out)."""
    ledger = result.summary["conservation"]
    vcs = result.vcs.set_index("name")
    tcp_cells = sum(int(vcs.loc[flow, "cells_sent"]) for flow in flow_names(result))
    other = 100.0 * ledger["cells_dropped"] / tcp_cells if tcp_cells else 0.0
    return clr_percent(result), f"dropped / TCP data cells: {other:.3g} %"


def port(result, name: str = BOTTLENECK) -> pd.Series:
    return result.ports.set_index("name").loc[name]


def max_queue(result, name: str = BOTTLENECK) -> float:
    """The largest number of cells waiting at a port (exact, not sampled)."""
    return float(port(result, name)["max_queue_cells"])


def utilization(result, name: str = BOTTLENECK) -> float:
    return float(port(result, name)["utilization"])


def frames_merged(result) -> float:
    """AAL5 frames lost by merging (an EOM dropped) over the TCP data VCs."""
    vcs = result.vcs.set_index("name")
    return float(sum(vcs.loc[flow, "frames_merged"] for flow in flow_names(result)))


_WIDE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Each Result's tables of ``wide``: (the series they come from, {metric: table}). The
quantities of one run seed, and the experiments sharing its runs, ask for the same
tables again and again."""


def wide(result, metric: str) -> pd.DataFrame:
    """One column per entity of a metric's samples, indexed by time (s). A copy: the
    table is computed once per Result and metric."""
    series = result.series
    try:
        seen, tables = _WIDE.get(result, (None, None))
    except TypeError:  # a result that cannot be weakly referenced: nothing kept
        seen, tables = None, None
    if seen is not series or tables is None:
        tables = {}
        try:
            _WIDE[result] = (series, tables)
        except TypeError:
            pass
    if metric not in tables:
        rows = series[series["metric"] == metric]
        if rows.empty:
            raise ValueError(f"no {metric} samples")
        tables[metric] = rows.pivot_table(
            index="time_s", columns="entity", values="value", aggfunc="last"
        )
    return tables[metric].copy()


def worst_cumulative_jain(result, start_s: float = 0.1) -> float:
    """The lowest Jain index, from ``start_s`` on, of the flows' cumulative effective
    throughputs (highest byte sent / elapsed time, sampled every probe period).

    The index is scale-free, so it is that of the bytes sent so far. While nothing is
    lost, bytes sent = bytes delivered + at most one window (64 KB) in flight."""
    seq = wide(result, "seq_bytes")[flow_names(result)]
    seq = seq[seq.index >= start_s]
    if seq.empty:
        raise ValueError(f"no samples after {start_s} s")
    index = np.array([jain(row) for row in seq.to_numpy()])
    if np.isnan(index).all():  # no flow had sent a byte: nothing to judge (see jain)
        return math.nan
    return float(np.nanmin(index))


def vbr_edges(start_s: float, half_period_s: float, end_s: float) -> list[float]:
    """The VBR on/off edges (on at start_s, off after half_period_s, ...) whose whole
    following period lies before end_s."""
    edges = []
    k = 0
    while start_s + (k + 1) * half_period_s <= end_s + 1e-12:
        edges.append(start_s + k * half_period_s)
        k += 1
    return edges


def acr_settling_ms(result, start_s: float, half_period_s: float, band: float = 0.1) -> float:
    """Mean time (ms) for each flow's ACR to settle after each VBR edge: the first
    sample after which the ACR stays within ``band`` (10 %) of its level over the
    second half of that on (or off) period. A period in which it never settles counts
    as the whole period."""
    acr = wide(result, "acr_cps")[flow_names(result)]
    end = float(result.summary["sim_time_s"])
    edges = vbr_edges(start_s, half_period_s, end)
    if not edges:
        raise ValueError(f"no whole VBR period between {start_s} s and {end} s")
    times = acr.index.to_numpy()
    settle = []
    for edge in edges:
        inside = (times >= edge) & (times < edge + half_period_s)
        late = (times >= edge + half_period_s / 2) & (times < edge + half_period_s)
        for flow in acr.columns:
            values = acr[flow].to_numpy()
            level = float(np.median(values[late]))
            near = np.abs(values[inside] - level) <= band * abs(level)
            t = times[inside]
            outside = np.flatnonzero(~near)
            if len(outside) == 0:
                settle.append(0.0)
            elif outside[-1] + 1 < len(t):
                settle.append(t[outside[-1] + 1] - edge)
            else:
                settle.append(half_period_s)
    return 1e3 * float(np.mean(settle))


def acr_error(
    result, vbr_mbps: float, start_s: float, half_period_s: float, target: float = 1.0
) -> float:
    """Mean |ACR - max-min share| / share from the first VBR edge to the end, over the
    flows; the share is (target x link rate - VBR rate while on) / number of flows: the
    ABR capacity the paper's "accurate response" follows, of the whole link (target 1)
    or of the part a scheme aims at (ERICA's 0.9)."""
    acr = wide(result, "acr_cps")[flow_names(result)] * CELL_BITS / 1e6
    acr = acr[acr.index >= start_s]
    if acr.empty:
        raise ValueError(f"no ACR samples after {start_s} s")
    times = acr.index.to_numpy()
    on = (np.floor((times - start_s) / half_period_s + 1e-9) % 2) == 0
    share = (target * LINK_MBPS - np.where(on, vbr_mbps, 0.0)) / acr.shape[1]
    errors = np.abs(acr.to_numpy() - share[:, None]) / share[:, None]
    return float(errors.mean())


def cells_per_segment(mss: int) -> int:
    """AAL5 cells of one TCP segment: MSS + 40 bytes of TCP/IP headers + 8 of LLC/SNAP
    (RFC 1577) + 8 of AAL5 trailer, padded to whole 48-byte cell payloads (12 for
    MSS 512; docs/scenarios.md, "TCP flows")."""
    return math.ceil((mss + 40 + 16) / 48)


def payload_rate(cells_per_s, mss: int, nrm: int = 32):
    """The TCP payload rate (bytes/s) that an ABR cell rate carries: of every Nrm cells
    one is an RM cell, and each segment of ``mss`` bytes takes cells_per_segment(mss)."""
    return cells_per_s * (nrm - 1) / nrm * mss / cells_per_segment(mss)


def rate_limited_share(
    result, rtt_s: float, start_s: float, mss: int, nrm: int = 32
) -> tuple[float, str]:
    """The share of time, from ``start_s`` to the end and over the flows, in which a
    TCP source is rate-limited by ABR rather than window-limited by TCP (ABR and UBR buffering
    (Kalyanaraman et al., 1998), "The nature of TCP traffic at the ATM layer"): its window allows
    more than its ACR carries in one round trip, window > payload_rate(ACR) x ``rtt_s``, with
    ``rtt_s`` the round trip without queues. The note gives each flow's share and mean ACR."""
    flows = flow_names(result)
    acr = wide(result, "acr_cps")[flows]
    window = wide(result, "window_bytes")[flows]
    times = acr.index.intersection(window.index)
    times = times[times >= start_s]
    if len(times) == 0:
        raise ValueError(f"no ACR and window samples after {start_s} s")
    allowed = payload_rate(acr.loc[times].to_numpy(), mss, nrm) * rtt_s
    limited = window.loc[times].to_numpy() > allowed
    per_flow = ", ".join(f"{share:.2f}" for share in limited.mean(axis=0))
    return float(limited.mean()), f"per flow {per_flow}"


def mean_acr_mbps(result, start_s: float) -> float:
    """The flows' ACR averaged over time from ``start_s`` and over the flows, in Mbps."""
    acr = wide(result, "acr_cps")[flow_names(result)]
    acr = acr[acr.index >= start_s]
    if acr.empty:
        raise ValueError(f"no ACR samples after {start_s} s")
    return float(acr.to_numpy().mean()) * CELL_BITS / 1e6


def on_share(start_s: float, on_s: float, off_s: float, end_s: float) -> float:
    """The share of [0, end_s] during which an on/off source (on from start_s for on_s,
    then off for off_s, repeating) is on."""
    total, t = 0.0, start_s
    while t < end_s:
        total += max(0.0, min(t + on_s, end_s) - t)
        t += on_s + off_s
    return total / end_s


# --- instants (TCP over ABR's sections 9 and 11) ----------------------------------------------


def episodes(times, gap_s: float) -> list[float]:
    """The first instant of each run of ``times`` (sorted) whose members lie less than
    ``gap_s`` apart: the starts of the episodes."""
    starts: list[float] = []
    last = -math.inf
    for t in times:
        if t - last > gap_s:
            starts.append(float(t))
        last = t
    return starts


EPISODE_GAP_S = 0.1
"""Losses (or merges) less than this apart are one episode: the TCP over ABR paper gives its
instants in round hundreds of milliseconds, so two losses it tells apart are 100 ms apart or
more (and its VBR is on for 100 ms at a time)."""


def loss_instants(result, flow: str, gap_s: float = EPISODE_GAP_S) -> list[float]:
    """When a flow's data VC lost cells: the first probe instant of each episode in
    which its count of cells dropped at ports grows (``probes.vc_losses``), episodes
    more than ``gap_s`` apart."""
    dropped = wide(result, "cells_dropped")[flow]
    grew = dropped.index[dropped.diff().fillna(dropped) > 0]
    return episodes(grew, gap_s)


def merge_instants(result, flow: str, gap_s: float = EPISODE_GAP_S) -> list[float]:
    """When a flow's data VC lost frames by AAL5 merging (an EOM cell dropped): the
    first probe instant of each episode in which its count of merged frames grows."""
    merged = wide(result, "frames_merged")[flow]
    grew = merged.index[merged.diff().fillna(merged) > 0]
    return episodes(grew, gap_s)


def timeout_instants(result, flow: str, mss: int) -> list[float]:
    """The probe instants at which a flow's congestion window falls to one segment from
    more: its timeouts (TCP Tahoe without fast retransmit sets cwnd to one segment at a
    timeout and at no other time). A timeout while cwnd is already one segment (a
    second retransmission at once) does not show."""
    cwnd = wide(result, "cwnd_bytes")[flow]
    fell = (cwnd <= mss) & (cwnd.shift(1) > mss)
    return [float(t) for t in cwnd.index[fell]]


def nth(values: list[float], k: int, what: str) -> float:
    """The k-th (1-based) of ``values``; ValueError naming ``what`` when there are fewer."""
    if len(values) < k:
        raise ValueError(f"{len(values)} {what}, not {k}")
    return values[k - 1]


def slow_start_fill_s(rtt_s: float, cells: float, n: int, cells_per_segment: int) -> float:
    """When n TCP windows that start at one segment and double every round trip first
    hold ``cells`` cells (the pipe and a buffer): RTT x log2(cells / (n x cells per
    segment)). A prediction with no simulation: no ABR, no queueing delay."""
    return rtt_s * math.log2(cells / (n * cells_per_segment))
