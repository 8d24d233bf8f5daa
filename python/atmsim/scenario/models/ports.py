"""What an output port does, the tables under a link: its drop policy (``Policy``),
its ABR switch algorithm (``Algorithm``), the explicit-rate control of TCP windows
(``RateControl``) and the pacing of acknowledgements (``AckControl``)."""

# No `from __future__ import annotations`: pydantic would then parse and evaluate
# every field's annotation string when the classes are built (see base.py).

from typing import Annotated, Any, Literal, Optional

from pydantic import BeforeValidator, model_validator

from ...errors import show_value
from ...units import (
    parse_size_bytes,
    parse_time_ps,
)
from ..common import _fail
from ..core_schema import core_default, core_time_default
from ..limits import (
    check_time,
)
from ..quantities import (
    Threshold,
)
from .base import (
    CellsOrShare,
    Delta,
    DfbaLow,
    EfciHigh,
    EfciLow,
    EricaA,
    EricaB,
    Interval,
    IntervalCells,
    RateIncrease,
    Table,
    UnitFraction,
    UnitInterval,
)

ATM_POLICIES = ("tail", "ppd", "epd", "intelligent_tail", "selective_drop", "fba", "dfba")
IP_POLICIES = ("tail", "red")
POLICY_KINDS = ATM_POLICIES + ("red",)
POLICY_KEYS = {
    "tail": ["kind"],
    "ppd": ["kind", "keep_eom"],
    "epd": ["kind", "threshold"],
    "intelligent_tail": ["kind", "threshold"],
    "selective_drop": ["kind", "threshold", "z"],
    "fba": ["kind", "threshold", "z"],
    "dfba": ["kind", "low", "high", "alpha", "z"],
    "red": ["kind", "min_th", "max_th", "w_q", "max_p"],
}
SHARE_POLICIES = ("selective_drop", "fba")
"""Policies that enforce equal buffer shares above a threshold R (GFR buffer management's (Goyal et
al., 1998) section 6)."""
SHARE_THRESHOLD_FRACTION = 0.5
"""Default R of Selective Drop and FBA: half the buffer. Our choice: the GFR buffer management paper
gives R "as a fraction of the buffer capacity K" without a value; at half the buffer the shares act
well before the buffer is full, and FBA's scaled share Z (K - R) / (X - R) has room to
shrink (docs/model.md, "Drop policies", and the sensitivity table of
docs/reproduction.md)."""
DFBA_LOW_FRACTION = 0.5
"""Default DFBA L: half the buffer (our choice; the GFR buffer management paper calls L the knee of
the load curve without a value)."""
DFBA_HIGH_FRACTION = 0.9
"""Default DFBA H: 90 % of the buffer (our choice; the GFR buffer management paper calls H the
cliff)."""
DFBA_ALPHA = core_default("PolicySpec[dfba].alpha")
"""DFBA's alpha (the core's default, with its source: GFR buffer management's section 4)."""
DFBA_Z = core_default("PolicySpec[dfba].z")["value"]
"""DFBA's Z_i when not given: a constant (the core's default, GFR buffer management's
Table 1)."""
SHARE_Z = core_default("PolicySpec[selective_drop].z")
"""Selective Drop's and FBA's Z when not given (the core's default)."""
PPD_KEEP_EOM = core_default("PolicySpec[ppd].keep_eom")
DFBA_Z_RULES = ("one_minus_share", "one_minus_share_squared")
"""DFBA's Z_i besides a number: 1 - W_i/W and (1 - W_i/W)^2 (GFR buffer management's Table 6)."""
INTELLIGENT_TAIL_MARGIN_CELLS = 12
"""Default intelligent-tail threshold = buffer - 12: one 12-cell frame (MSS 512) below K."""
RED_MAX_TH_FACTOR = 3
"""Default RED max_th = 3 x min_th (Floyd's recommendation for RED, max_th at least twice
min_th; 3 as ns-2's examples use it)."""
RED_W_Q = core_default("PolicySpec[red].w_q")
"""Default RED queue weight (the core's, with its source: Floyd and Jacobson 1993)."""
RED_MAX_P = core_default("PolicySpec[red].max_p")
"""Default RED maximum drop probability (the core's: Floyd and Jacobson 1993)."""


class Policy(Table):
    """Drop policy of a link's output port (docs/core-interface.md, docs/model.md).

    Written as a kind (``policy = "epd"``) or a table
    (``policy = { kind = "epd", threshold = 800 }``).

    ATM links: tail, ppd, epd, intelligent_tail. Defaults: epd threshold =
    floor(0.8 * buffer); intelligent_tail threshold = buffer - 12; both need a
    finite buffer unless the threshold is given. ppd keep_eom = true.

    IP links: tail, red (``min_th`` required; ``max_th`` = 3 x min_th,
    ``w_q`` = 0.002, ``max_p`` = 0.02; thresholds in the buffer's unit).
    """

    keys_by_kind = POLICY_KEYS

    kind: Literal["tail", "ppd", "epd", "intelligent_tail", "selective_drop", "fba", "dfba", "red"]
    threshold: Optional[CellsOrShare] = None
    """Cells (epd, intelligent_tail; R of selective_drop and fba), 1 to the buffer, or a
    share of the buffer ("80 %")."""
    keep_eom: Optional[bool] = None
    """ppd: keep the EOM cell of a frame whose other cells are being dropped."""
    z: Optional[Any] = None
    """selective_drop, fba: the share factor Z in (0, 1]; dfba: Z_i, a number in [0, 1]
    or "one_minus_share" (1 - W_i/W) or "one_minus_share_squared" ((1 - W_i/W)^2)."""
    low: Optional[DfbaLow] = None
    """dfba: L, cells or a share of the buffer; below it every frame is accepted."""
    high: Optional[CellsOrShare] = None
    """dfba: H, cells (L to the buffer) or a share of the buffer; above it every frame is
    refused (EPD)."""
    alpha: Optional[UnitInterval] = None
    """dfba: the weight of the fairness term of the drop probability, [0, 1]."""
    min_th: Optional[Threshold] = None
    """red: below this average queue nothing is dropped."""
    max_th: Optional[Threshold] = None
    """red: above this average queue every packet is dropped."""
    w_q: Optional[UnitFraction] = None
    """red: weight of the queue's moving average."""
    max_p: Optional[UnitFraction] = None
    """red: drop probability when the average reaches max_th."""

    @model_validator(mode="after")
    def _defaults(self) -> "Policy":
        if self.kind == "ppd" and self.keep_eom is None:
            self.keep_eom = PPD_KEEP_EOM
        if self.kind in SHARE_POLICIES:
            if self.z is None:
                self.z = SHARE_Z
            elif type(self.z) not in (int, float) or not 0 < self.z <= 1:
                raise _fail("z", f"expected a number > 0 and <= 1, got {show_value(self.z)}")
        if self.kind == "dfba":
            if self.alpha is None:
                self.alpha = DFBA_ALPHA
            if self.z is None:
                self.z = DFBA_Z
            elif self.z not in DFBA_Z_RULES and (
                type(self.z) not in (int, float) or not 0 <= self.z <= 1
            ):
                raise _fail(
                    "z",
                    'expected a number >= 0 and <= 1, "one_minus_share" or '
                    f'"one_minus_share_squared", got {show_value(self.z)}',
                )
        return self


ALGORITHM_KINDS = ("erica", "erica_plus", "efci", "fmmra")
ALGORITHM_KEYS = {
    "erica": [
        "kind",
        "variant",
        "target_utilization",
        "interval",
        "interval_cells",
        "delta",
        "measured_rate",
        "bidirectional_count",
    ],
    "erica_plus": [
        "kind",
        "interval",
        "interval_cells",
        "delta",
        "measured_rate",
        "bidirectional_count",
        "t0",
        "a",
        "b",
        "qdlf",
    ],
    "efci": ["kind", "high", "low"],
    "fmmra": ["kind", "interval", "interval_cells"],
}
ALGORITHM_DEFAULTS: dict[str, Any] = {
    "variant": core_default("AlgorithmSpec[erica].variant"),
    "target_utilization": core_default("AlgorithmSpec[erica].target_utilization"),
    "interval": core_time_default("AlgorithmSpec[erica].interval_ps"),
    "interval_cells": core_default("AlgorithmSpec[erica].interval_cells"),
    "delta": core_default("AlgorithmSpec[erica].delta"),
    "measured_rate": core_default("AlgorithmSpec[erica].measured_rate"),
    "bidirectional_count": core_default("AlgorithmSpec[erica].bidirectional_count"),
    "t0": core_time_default("AlgorithmSpec[erica_plus].t0_ps"),
    "a": core_default("AlgorithmSpec[erica_plus].a"),
    "b": core_default("AlgorithmSpec[erica_plus].b"),
    "qdlf": core_default("AlgorithmSpec[erica_plus].qdlf"),
}
"""Defaults of the switch algorithms' keys (every kind that has the key): the core's,
declared with each parameter and its source (docs/core-interface.md). ERICA's serve
ERICA+ and FMMRA too: the core declares the same values for the keys they share."""


class Algorithm(Table):
    """The ABR switch algorithm of a link's output port (docs/model.md, "ABR").

    Written as a kind (``algorithm = "erica"``), ``"none"``, or a table
    (``algorithm = { kind = "efci", high = 300 }``). Keys per kind:

    - erica: variant ("max_min": the ERICA description's max-min version; "basic":
      TCP over ABR section 3.2's ER = max(FairShare, VCShare)), target_utilization (0.9),
      interval ("1 ms"), interval_cells (100), delta (0.1), measured_rate (false),
      bidirectional_count (true);
    - erica_plus: interval, interval_cells, delta, measured_rate,
      bidirectional_count as erica, t0 ("1.5 ms"), a (1.15), b (1.05), qdlf (0.5);
    - efci: high (cells, required), low (default: high);
    - fmmra: interval ("1 ms"), interval_cells (100).
    """

    keys_by_kind = ALGORITHM_KEYS

    kind: Literal["erica", "erica_plus", "efci", "fmmra"]
    variant: Optional[Literal["max_min", "basic"]] = None
    """ERICA: "max_min" (the description's version with its max-min fairness
    enhancement) or "basic" (TCP over ABR's section 3.2)."""
    target_utilization: Optional[UnitFraction] = None
    """ERICA: the fraction U of the link's cell rate offered to ABR and VBR/CBR."""
    interval: Optional[Interval] = None
    """Averaging interval: ends after this time or interval_cells ABR input cells."""
    interval_cells: Optional[IntervalCells] = None
    delta: Optional[Delta] = None
    """Overload band: z > 1 + delta counts as overload."""
    measured_rate: Optional[bool] = None
    """Use each VC's measured rate instead of the CCR field of its RM cells."""
    bidirectional_count: Optional[bool] = None
    """Count VCs seen by their backward RM cells as active too."""
    t0: Optional[Interval] = None
    """ERICA+: target queueing delay."""
    a: Optional[EricaA] = None
    """ERICA+: the target curve above t0 (>= 1)."""
    b: Optional[EricaB] = None
    """ERICA+: the target curve below t0."""
    qdlf: Optional[UnitFraction] = None
    """ERICA+: queue drain limit factor, the floor of the target factor."""
    high: Optional[EfciHigh] = None
    """EFCI: ABR queue (cells) above which data cells are marked."""
    low: Optional[EfciLow] = None
    """EFCI: ABR queue (cells) below which marking stops (hysteresis)."""

    @model_validator(mode="after")
    def _defaults(self) -> "Algorithm":
        for key in ALGORITHM_KEYS[self.kind][1:]:
            if getattr(self, key) is None and key in ALGORITHM_DEFAULTS:
                setattr(self, key, ALGORITHM_DEFAULTS[key])
        if self.kind == "efci":
            if self.high is None:
                raise _fail(
                    "high",
                    "required for efci: the ABR queue (cells) above which data cells get EFCI set",
                )
            if self.low is None:
                self.low = self.high
            elif self.low > self.high:
                raise _fail("low", f"must be <= high ({self.high}), got {self.low}")
        return self


WINDOW_RULES = ("none", "rtt", "base_rtt")
"""Window rules besides a time T: none, the flow's RTT as a ping from the router
measures it (base + the controlling port's queueing delay), its base RTT alone."""


def _check_window_rule(value: Any) -> Any:
    if value in WINDOW_RULES:
        return value
    try:
        check_time(value, "0 s", "1000 s", lo_open=True)
    except ValueError:
        raise ValueError(
            'expected "none", "rtt", "base_rtt" or a time T like "30 ms" (> 0 s, at most '
            "1000 s), "
            f"got {show_value(value)}"
        ) from None
    return value


TimeOrRule = Annotated[str, BeforeValidator(_check_window_rule)]
"""How an explicit rate becomes a window: "none", "rtt", "base_rtt", or a time T."""

RATE_CONTROL_DEFAULTS: dict[str, Any] = {
    "interval": core_time_default("RateControlSpec.interval_ps"),
    "t0": core_time_default("RateControlSpec.t0_ps"),
    "a": core_default("RateControlSpec.a"),
    "b": core_default("RateControlSpec.b"),
    "qdlf": core_default("RateControlSpec.qdlf"),
    "delta": core_default("RateControlSpec.delta"),
    "max_increase": core_default("RateControlSpec.max_increase"),
    "active_decay": core_default("RateControlSpec.active_decay"),
}
"""The simplified ERICA+ of the Explicit rate control of TCP paper: the core's defaults,
that paper's values (sections 5 and 6, Table 1), each declared with its source."""


class RateControl(Table):
    """``rate_control = { ... }`` (or ``"erica_plus"``) on an IP or ATM link: its port
    computes an explicit rate per TCP flow (per VC at an ATM port, in cell payload
    bytes) with Explicit rate control of TCP's simplified ERICA+
    (docs/model.md, "Explicit-rate control of TCP"). Every key has Explicit rate control of TCP's
    value as its default: interval "5 ms", t0 "1.5 ms", a 1.15, b 1, qdlf 0.5, delta 0.1,
    max_increase 0.1 (10 % per interval)."""

    interval: Interval = RATE_CONTROL_DEFAULTS["interval"]
    """Averaging interval: rates are measured and ERs computed at its end."""
    t0: Interval = RATE_CONTROL_DEFAULTS["t0"]
    """Target queueing delay T0."""
    a: EricaA = RATE_CONTROL_DEFAULTS["a"]
    """The target curve above T0 (>= 1)."""
    b: EricaB = RATE_CONTROL_DEFAULTS["b"]
    """The target curve below T0."""
    qdlf: UnitFraction = RATE_CONTROL_DEFAULTS["qdlf"]
    """Queue drain limit factor: the floor of the target factor."""
    delta: Delta = RATE_CONTROL_DEFAULTS["delta"]
    """Overload band: z > 1 + delta counts as overload."""
    max_increase: RateIncrease = RATE_CONTROL_DEFAULTS["max_increase"]
    """Largest increase of a flow's ER per interval, a fraction of it (0 .. 10)."""
    active_decay: UnitInterval = RATE_CONTROL_DEFAULTS["active_decay"]
    """The number of active sources: each flow seen in an interval counts 1, and its
    count decays by this factor per interval it is silent (0: the flows seen in the
    interval alone; 1: every flow ever seen). Default 0: Explicit rate control of TCP's pseudo-code
    measures the number of active sources at each interval's end, as it measures the rates, and
    Kalyanaraman's dissertation (the paper's reference [3]) counts the VCs seen in the
    interval unless its "Averaging VCs" option is on, whose decay factor no source we
    could read gives a value for (docs/model.md)."""

    def core_json(self) -> dict:
        return {
            "interval_ps": parse_time_ps(self.interval),
            "t0_ps": parse_time_ps(self.t0),
            "a": float(self.a),
            "b": float(self.b),
            "qdlf": float(self.qdlf),
            "delta": float(self.delta),
            "max_increase": float(self.max_increase),
            "active_decay": float(self.active_decay),
        }


class AckControl(Table):
    """``ack_control = { rates_from = "<link>", window = ..., ack_bucket = ... }`` on an
    IP link: the router at its far end acts on the ACKs arriving over it, for the flows
    whose data leave through ``rates_from`` (an IP link with ``rate_control`` leaving
    that router). On an ATM link (the last link of the flows' ACK VCs): the edge there
    reassembles each ACK frame and writes its window, for the flows whose data VC
    crosses ``rates_from`` (an ATM link with ``rate_control``); no ack bucket.
    ``window``: ``"none"``, ``"rtt"`` (ER x each flow's round-trip time as
    a ping from the router measures it: the base RTT plus the queueing delay at
    ``rates_from``), ``"base_rtt"`` (ER x the base RTT, no queueing) or a time T such
    as ``"30 ms"`` (ER x T), written into each ACK as min(window, ER x T) with the
    checksum updated (RFC 1624); ``ack_bucket``: hold the ACKs and release them at the
    flow's ER (Explicit rate control of TCP's section 4.1)."""

    rates_from: str
    """The link whose port computes the rates (IP for an IP link, ATM for an ATM one)."""
    window: TimeOrRule = core_default("AckControlSpec.window")["kind"]
    """"none", "rtt" (default), "base_rtt" or a time T (0 < T <= 1000 s)."""
    ack_bucket: bool = core_default("AckControlSpec.ack_bucket")
    """Hold the ACKs and release them at the flow's explicit rate (IP links only)."""

    def window_json(self) -> dict:
        if self.window in WINDOW_RULES:
            return {"kind": self.window}
        return {"kind": "fixed", "t_ps": parse_time_ps(self.window)}


def red_threshold(value: Any) -> float:
    """A RED threshold in the core's unit: packets as written, or bytes of a size string."""
    return float(parse_size_bytes(value)) if isinstance(value, str) else float(value)
