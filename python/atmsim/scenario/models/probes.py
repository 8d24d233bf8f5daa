"""``[probes]``: the time series sampled and how often."""

# No `from __future__ import annotations`: pydantic would then parse and evaluate
# every field's annotation string when the classes are built (see base.py).

from typing import Optional

from pydantic import model_validator

from ...errors import show_value
from ...units import parse_size_bytes
from ..common import _fail
from ..core_schema import core_default, core_range, size_text
from ..quantities import (
    NameList,
    Size,
)
from .base import ProbePeriod, Table


class Probes(Table):
    """``[probes]``: time series sampled every ``period``.

    ``queue`` and ``utilization`` list link names, ``vc_rate`` VC names (after
    count expansion, e.g. "s1"; a flow's VCs are "<flow>" and "<flow>-ack"),
    ``vc_losses`` VC names whose data cells dropped and AAL5 frames lost by merging
    so far are recorded (metrics ``cells_dropped``, ``frames_merged``: when each
    loss and merge happened, to a period),
    ``vc_queue`` ATM links whose port's cells of each VC are sampled (entities
    "<link>/<vc>"), ``flows`` flow names (window, sequence number, RTT),
    ``abr_vcs`` ABR VC names (ACR, last ER received), ``abr_ports`` links with a
    switch algorithm (load factor, fair share, ER written, ABR queue); each may be
    "all". ``delay = true`` adds delay statistics to the summary (no series, no
    period needed): each VC's cell transfer delay and its variation, each TCP
    flow's data-segment delay and RTT samples (docs/model.md, "Delay statistics").

    ``capture`` lists links and nodes whose packets are written as pcap files
    (``capture/<name>.pcap`` and, for the packets their ports drop,
    ``capture/<name>.drops.pcap`` in the run directory): a link's packets stamped as
    their transmission onto it starts, a node's from all its links (leaving it: as
    they start; reaching it: as they arrive), each file at most ``capture_limit``. On
    ATM links the TCP flows' AAL5 frames are written, with LLC/SNAP (docs/scenarios.md,
    "Packet captures").
    """

    period: Optional[ProbePeriod] = None
    """Sampling period, 1 ns to 10^6 s; required when any list is non-empty."""
    queue: NameList = []
    utilization: NameList = []
    vc_rate: NameList = []
    vc_losses: NameList = []
    vc_queue: NameList = []
    flows: NameList = []
    abr_vcs: NameList = []
    abr_ports: NameList = []
    capture: NameList = []
    """Links and nodes whose packets are captured (pcap files; docs/scenarios.md,
    "Packet captures"); a node with IP and ATM links is "<node>" and "<node>-atm"."""
    capture_limit: Size = size_text(core_default("CaptureSpec.max_bytes"))
    """The largest size of each capture file ("100 MB" by default); a capture that
    reaches it stops there, and the run's summary says so."""
    delay: bool = False
    """Measure delays into summary.json (off by default: it costs work per cell)."""

    @model_validator(mode="after")
    def _period(self) -> "Probes":
        lists = (
            self.queue,
            self.utilization,
            self.vc_rate,
            self.vc_losses,
            self.vc_queue,
            self.flows,
        )
        if any(lists) or self.abr_vcs or self.abr_ports:
            if self.period is None:
                raise _fail("period", "required when a probe list is set")
        lo, hi, _ = core_range("CaptureSpec.max_bytes")
        if not lo <= parse_size_bytes(self.capture_limit) <= hi:
            raise _fail(
                "capture_limit",
                f"must be from {lo} bytes (a file header and one packet) to 1 TB, "
                f"got {show_value(self.capture_limit)}",
            )
        return self
