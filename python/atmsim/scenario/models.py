"""The tables of a scenario file as pydantic models, and ``Scenario``, the whole file.

Each table checks its own keys, types, units and defaults; ``Scenario`` builds
the ``Network`` (network.py), which checks the cross references.
"""

# No `from __future__ import annotations` here: pydantic would then parse and
# evaluate every field's annotation string when the classes are built (2 % of
# the instructions of importing this module, on every command's start-up).

import re
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Optional, Union

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    field_validator,
    model_validator,
)

from ..errors import key_part, show_value
from ..units import (
    MAX_SIZE_BYTES,
    MAX_TIME_TEXT,
    bps_to_cps,
    parse_bit_rate_bps,
    parse_cell_rate_cps,
    parse_length_km,
    parse_size_bytes,
    parse_time_ps,
    propagation_delay_ps,
    sonet_payload_bps,
)
from .common import MAX_MSS_BYTES, MAX_WINDOW_FIELD, MAX_WINDOW_SCALE, TEMPLATE, _fail
from .limits import (
    ABR_ADTF,
    ABR_MAX_CRM,
    ABR_NRM,
    ABR_TRM,
    INTERVAL_RANGE,
    MAX_ATM_BUFFER_CELLS,
    MAX_COUNT,
    MAX_EFCI_CELLS,
    MAX_INTERVAL_CELLS,
    MAX_IP_BUFFER_PACKETS,
    MAX_LINK_DELAY,
    MAX_LINK_KM,
    MAX_MEAN_BURST_CELLS,
    MAX_SEED,
    MIN_SOURCE_CPS,
    PROBE_PERIOD,
    TCP_MAX_CWND_SEGMENTS,
    TCP_MAX_RECEIVER_TIME,
    NodePath,
    cells_text,
    check_link_rate,
    check_time,
    core_number,
    core_whole,
    int_range_text,
    number,
    time_in,
    whole,
)
from .memory import MemoryEstimate, estimate, memory_problem
from .network import Network
from .quantities import (
    Buffer,
    Fraction,
    FrameCells,
    Length,
    NameList,
    Rate,
    RateOrAuto,
    Size,
    SizeOrAuto,
    Threshold,
    TimeOrAuto,
    Timer,
    VcClass,
    WindowScale,
    fraction_value,
)

# The ranges of the keys (limits.py; docs/scenarios.md, "Allowed ranges").
Duration = time_in("0 s", lo_open=True)
Seed = whole(0, MAX_SEED)
Count = whole(1, MAX_COUNT)
StartTime = time_in("0 s")
PositiveTime = time_in("0 s", lo_open=True)
LinkDelay = time_in("0 s", MAX_LINK_DELAY)
Interval = time_in(*INTERVAL_RANGE)
TrmTime = time_in(*ABR_TRM)
AdtfTime = time_in(*ABR_ADTF)
ReceiverTime = time_in("0 s", TCP_MAX_RECEIVER_TIME)
ProbePeriod = time_in(*PROBE_PERIOD)
Cells = whole(1, MAX_ATM_BUFFER_CELLS)
IntervalCells = whole(1, MAX_INTERVAL_CELLS)
EfciHigh = whole(1, MAX_EFCI_CELLS)
EfciLow = whole(0, MAX_EFCI_CELLS)
UnitFraction = number(0, 1, lo_open=True)
"""(0, 1]: ERICA's target utilization, ERICA+'s qdlf, RED's w_q and max_p."""
UnitInterval = number(0, 1)
"""[0, 1]: DFBA's alpha."""

_SHARE = re.compile(r"^\s*(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*%\s*$")


def cells_or_share(lo: int) -> Any:
    """A threshold in cells, ``lo`` .. 4294967294, or a share of the port's buffer written
    ``"80 %"`` (more than 0 % for ``lo`` = 1, up to 100 %), resolved against the buffer."""
    low = "0 %" if lo == 0 else "more than 0 %"
    allowed = (
        f"expected {int_range_text(lo, MAX_ATM_BUFFER_CELLS)} of cells or a share of the "
        f'buffer like "80 %" ({low} to 100 %)'
    )

    def check(value: Any) -> Any:
        if type(value) is int and lo <= value <= MAX_ATM_BUFFER_CELLS:
            return value
        if isinstance(value, str):
            match = _SHARE.match(value)
            if match is not None:
                share = float(match.group("number"))
                if (share > 0 or lo == 0) and share <= 100:
                    return value
        raise ValueError(f"{allowed}, got {show_value(value)}")

    return Annotated[Union[int, str], BeforeValidator(check)]


CellsOrShare = cells_or_share(1)
"""EPD, intelligent tail, Selective Drop and FBA thresholds, DFBA's H."""
DfbaLow = cells_or_share(0)
"""DFBA's L: 0 (no region below L) to the buffer, or a share of it."""


def share_of(value: str) -> float:
    """The fraction of a share of the buffer written "80 %" (0.8)."""
    match = _SHARE.match(value)
    if match is None:  # pragma: no cover - validated before
        raise ValueError(f"not a share of the buffer: {show_value(value)}")
    return float(match.group("number")) / 100


Delta = core_number("AlgorithmSpec[erica].delta")
EricaA = core_number("AlgorithmSpec[erica_plus].a")
EricaB = core_number("AlgorithmSpec[erica_plus].b")
RateIncrease = core_number("RateControlSpec.max_increase")
"""The largest increase of an explicit rate per interval, a fraction (seed 001: 0.1)."""
Nrm = whole(*ABR_NRM)
Mrm = whole(1, ABR_NRM[1])
Crm = whole(1, ABR_MAX_CRM)
Mss = whole(1, MAX_MSS_BYTES)
InitialCwnd = whole(1, TCP_MAX_CWND_SEGMENTS)
SackBlocks = core_whole("FlowSpec.max_sack_blocks")
MeanBurst = number(1, MAX_MEAN_BURST_CELLS)


class Table(BaseModel):
    """A TOML table: strict types, and unknown keys are errors that list the allowed ones."""

    model_config = ConfigDict(extra="forbid", strict=True)

    keys_by_kind: ClassVar[Optional[dict[str, list[str]]]] = None
    """For a table whose keys depend on its ``kind``: kind -> the keys it accepts."""

    @classmethod
    def allowed_keys(cls, data: dict) -> list[str]:
        """Keys this table accepts (given its contents, for tables whose keys depend on kind)."""
        kind = data.get("kind")
        if cls.keys_by_kind is not None and isinstance(kind, str) and kind in cls.keys_by_kind:
            return cls.keys_by_kind[kind]
        return [field.alias or name for name, field in cls.model_fields.items()]

    @model_validator(mode="before")
    @classmethod
    def _only_known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            allowed = cls.allowed_keys(data)
            for key in data:
                if key not in allowed:
                    raise _fail(key_part(key), "unknown key; allowed: " + ", ".join(allowed))
        return data


class Run(Table):
    """``[run]``: how long to simulate and with which random seed."""

    duration: Duration
    """Simulated time, > 0 and at most 10^6 s."""
    seed: Seed = 1
    """Seed of all random streams; same scenario + seed = same results."""
    fast_paths: bool = True
    """Take the simulator's fast paths (events skipped because their outcome is already
    known); false sends every cell and packet through the plain event path, with the
    same results at a higher cost (docs/model.md, "Fast paths")."""
    arbitration: Literal["slotted", "random", "scheduling_order"] = "slotted"
    """How cells that reach a switch output port together contend for it: "slotted"
    (the cells that reach it over links within one of its cell times contend at the
    end of that slot, in a random order drawn per slot from the seed: an output-queued
    switch), "random" (continuous time: only arrivals at the same picosecond are put
    in a random order) or "scheduling_order" (continuous time, one fixed order); the
    last two for comparison (docs/model.md, "Time and order")."""


class Node(Table):
    """``[nodes]``: ``name = { kind = "host" }``. The kind is informational.

    ``"s{i}" = { kind = "host", count = 5 }`` is a template for s1..s5.
    """

    kind: Literal["host", "switch"] = "switch"
    count: Optional[Count] = None
    """Copies of a template (a name with {i}), 1 to 100000."""


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
"""Policies that enforce equal buffer shares above a threshold R (seed 004 section 6)."""
SHARE_THRESHOLD_FRACTION = 0.5
"""Default R of Selective Drop and FBA: half the buffer. Our choice: seed 004 gives R "as
a fraction of the buffer capacity K" without a value; at half the buffer the shares act
well before the buffer is full, and FBA's scaled share Z (K - R) / (X - R) has room to
shrink (docs/model.md, "Drop policies", and the sensitivity table of
docs/reproduction.md)."""
DFBA_LOW_FRACTION = 0.5
"""Default DFBA L: half the buffer (our choice; seed 004 calls L the knee of the load
curve without a value)."""
DFBA_HIGH_FRACTION = 0.9
"""Default DFBA H: 90 % of the buffer (our choice; seed 004 calls H the cliff)."""
DFBA_ALPHA = 0.5
"""DFBA's alpha: seed 004 section 4, "alpha was fixed to 0.5"."""
DFBA_Z_RULES = ("one_minus_share", "one_minus_share_squared")
"""DFBA's Z_i besides a number: 1 - W_i/W and (1 - W_i/W)^2 (seed 004 Table 6)."""
INTELLIGENT_TAIL_MARGIN_CELLS = 12
"""Default intelligent-tail threshold = buffer - 12: one 12-cell frame (MSS 512) below K."""
RED_MAX_TH_FACTOR = 3
"""Default RED max_th = 3 x min_th (Floyd's recommendation for RED, max_th at least twice
min_th; 3 as ns-2's examples use it)."""
RED_W_Q = 0.002
"""Default RED queue weight (Floyd and Jacobson, "Random Early Detection Gateways for
Congestion Avoidance", 1993)."""
RED_MAX_P = 0.02
"""Default RED maximum drop probability (Floyd and Jacobson 1993: 1/50)."""


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
            self.keep_eom = True
        if self.kind in SHARE_POLICIES:
            if self.z is None:
                self.z = 1.0
            elif type(self.z) not in (int, float) or not 0 < self.z <= 1:
                raise _fail("z", f"expected a number > 0 and <= 1, got {show_value(self.z)}")
        if self.kind == "dfba":
            if self.alpha is None:
                self.alpha = DFBA_ALPHA
            if self.z is None:
                self.z = 1.0
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
    "variant": "max_min",  # the ERICA description's max-min version (docs/model.md, ERICA)
    "target_utilization": 0.9,  # seed 000 section 5, seed 002, seed 003 section 4.1
    "interval": "1 ms",  # seed 000 section 5: 100 cells or 1 ms, whichever first
    "interval_cells": 100,
    "delta": 0.1,  # the ERICA description (Jain et al., ATM Forum 96-1172)
    # CCR from the forward RM cells, as the seeds' ERICA had it (seed 000 section 9:
    # window-limited sources keep ACRs at 90 % of the link); the ERICA description's
    # per-VC CCR measurement is an option (docs/model.md, "ABR").
    "measured_rate": False,
    # A VC whose backward RM cell passes counts as active: Kalyanaraman's dissertation
    # marks a VC seen on every backward RM cell; the TCP buffer study seed 002 grew
    # from ran ERICA with "correct counting of bursty sources" (docs/model.md, "ABR").
    "bidirectional_count": True,
    "t0": "1.5 ms",  # ERICA+: seed 001 section 6
    "a": 1.15,  # seed 001
    "b": 1.05,  # the literature's default (seed 001 uses 1)
    "qdlf": 0.5,  # seed 001
}
"""Defaults of the switch algorithms' keys (every kind that has the key)."""


class Algorithm(Table):
    """The ABR switch algorithm of a link's output port (docs/model.md, "ABR").

    Written as a kind (``algorithm = "erica"``), ``"none"``, or a table
    (``algorithm = { kind = "efci", high = 300 }``). Keys per kind:

    - erica: variant ("max_min": the ERICA description's max-min version; "basic":
      seed 000 section 3.2's ER = max(FairShare, VCShare)), target_utilization (0.9),
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
    enhancement) or "basic" (seed 000 section 3.2)."""
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
    "interval": "5 ms",  # seed 001 Table 1: the switch averaging interval
    "t0": "1.5 ms",  # seed 001 Table 1: target queueing delay
    "a": 1.15,  # seed 001 Table 1
    "b": 1.0,  # seed 001 Table 1
    "qdlf": 0.5,  # seed 001 Table 1: queue drain limit factor
    "delta": 0.1,  # the ERICA description's (seed 001 section 5 names delta, no value)
    "max_increase": 0.1,  # seed 001 section 5: "limit rate increases to 10 %"
    "active_decay": 0.0,  # seed 001 section 5: "Measure number of active sources" (below)
}
"""The simplified ERICA+ of seed 001 (sections 5 and 6, Table 1)."""


class RateControl(Table):
    """``rate_control = { ... }`` (or ``"erica_plus"``) on an IP or ATM link: its port
    computes an explicit rate per TCP flow (per VC at an ATM port, in cell payload
    bytes) with seed 001's simplified ERICA+
    (docs/model.md, "Explicit-rate control of TCP"). Every key has seed 001's value as
    its default: interval "5 ms", t0 "1.5 ms", a 1.15, b 1, qdlf 0.5, delta 0.1,
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
    interval alone; 1: every flow ever seen). Default 0: seed 001's pseudo-code measures
    the number of active sources at each interval's end, as it measures the rates, and
    Kalyanaraman's dissertation (the seed's reference [3]) counts the VCs seen in the
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
    flow's ER (seed 001 section 4.1)."""

    rates_from: str
    """The link whose port computes the rates (IP for an IP link, ATM for an ATM one)."""
    window: TimeOrRule = "rtt"
    """"none", "rtt" (default), "base_rtt" or a time T (0 < T <= 1000 s)."""
    ack_bucket: bool = False
    """Hold the ACKs and release them at the flow's explicit rate (IP links only)."""

    def window_json(self) -> dict:
        if self.window in WINDOW_RULES:
            return {"kind": self.window}
        return {"kind": "fixed", "t_ps": parse_time_ps(self.window)}


class Link(Table):
    """``[links.<name>]``: a unidirectional link fed by the output port at ``from``.

    ``layer = "atm"`` (default) carries cells; ``layer = "ip"`` carries whole
    packets at ``rate`` through a router queue. ``duplex = true`` also
    creates the reverse link ``<name>-rev`` with the same parameters.
    """

    from_: str = Field(alias="from")
    to: str
    rate: Rate
    """Line rate; cells/s = bits/s / 424 (of the SONET payload when ``sonet``)."""
    length: Optional[Length] = None
    """Propagation delay 5 us/km, at most 2e8 km. Give ``length`` or ``delay``, not both."""
    delay: Optional[LinkDelay] = None
    """Propagation delay; "0 s" when neither length nor delay is given."""
    layer: Literal["atm", "ip"] = "atm"
    """"atm": a cell link and switch port; "ip": a packet link and router port."""
    sonet: Optional[bool] = None
    """ATM only: carry cells in the STS-3c payload (149.76 of 155.52 Mbps); default false."""
    buffer: Buffer = "inf"
    """Waiting at the output port (not counting the one in transmission): cells on an
    ATM link; packets (a number) or bytes (a size such as "64 KB") on an IP link."""
    policy: Policy = Field(default_factory=lambda: Policy(kind="tail"))
    duplex: bool = False
    """Also create the reverse link ``<name>-rev`` with the same parameters."""
    algorithm: Optional[Algorithm] = None
    """ATM only: the ABR switch algorithm of the output port; none by default."""
    rate_control: Optional[RateControl] = None
    """The port computes explicit rates for the TCP flows through it: per flow in IP
    bytes/s at an IP port, per VC in cell payload bytes/s at an ATM port."""
    ack_control: Optional[AckControl] = None
    """What is done to the ACKs arriving over this link: on an IP link, by the router at
    its far end (their windows, an ack bucket), from the rates of another of its ports;
    on an ATM link, by the edge that reassembles the ACK frames of the ACK VCs ending
    with it (their windows), from the rates of an ATM port on the flows' data VCs."""
    count: Optional[Count] = None
    """Copies of a template (a name with {i}), 1 to 100000."""

    @field_validator("rate_control", mode="before")
    @classmethod
    def _rate_control_kind(cls, value: Any) -> Any:
        if value == "erica_plus":
            return {}
        if value is None or isinstance(value, dict):
            return value
        raise ValueError(
            'expected "erica_plus" (seed 001\'s values) or a table like '
            f'{{ interval = "5 ms", t0 = "1.5 ms" }}, got {show_value(value)}'
        )

    @field_validator("algorithm", mode="before")
    @classmethod
    def _algorithm_kind(cls, value: Any) -> Any:
        if value is None or value == "none":
            return None
        if isinstance(value, dict):
            return value
        if isinstance(value, str) and value in ALGORITHM_KINDS:
            return {"kind": value}
        raise ValueError(
            'expected "erica", "erica_plus", "efci", "fmmra", "none" or a table like '
            f'{{ kind = "efci", high = 300 }}, got {show_value(value)}'
        )

    @field_validator("policy", mode="before")
    @classmethod
    def _policy_kind(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return value
        if isinstance(value, str) and value in POLICY_KINDS:
            return {"kind": value}
        raise ValueError(
            'expected "tail", "ppd", "epd", "intelligent_tail", "selective_drop", "fba", '
            '"dfba" (ATM), "tail" (IP) or a table like { kind = "epd", threshold = 800 } or '
            f'{{ kind = "red", min_th = 5 }}, got {show_value(value)}'
        )

    @model_validator(mode="after")
    def _resolve(self) -> "Link":
        if self.length is not None and self.delay is not None:
            raise _fail("delay", "give length or delay, not both")
        if self.length is None and self.delay is None:
            self.delay = "0 s"
        problem = check_link_rate(self.rate)
        if problem is not None:
            raise _fail("rate", problem)
        if self.length is not None and parse_length_km(self.length) > MAX_LINK_KM:
            raise _fail(
                "length",
                f"must be at most 200000000 km (a delay of {MAX_LINK_DELAY} at 5 us/km), "
                f"got {show_value(self.length)}",
            )
        if self.layer == "atm":
            if self.ack_control is not None and self.ack_control.ack_bucket:
                raise _fail(
                    "ack_control.ack_bucket",
                    "the ack bucket is modelled at IP routers only: remove it, or use an IP "
                    "network",
                )
            self._resolve_atm()
        else:
            self._resolve_ip()
        return self

    def _resolve_atm(self) -> None:
        if self.sonet is None:
            self.sonet = False
        buffer = self.buffer
        if buffer != "inf" and not (type(buffer) is int and 1 <= buffer <= MAX_ATM_BUFFER_CELLS):
            raise _fail(
                "buffer",
                f"expected {int_range_text(1, MAX_ATM_BUFFER_CELLS)} of cells or "
                f'"inf" (ATM buffers count cells), got {show_value(buffer)}',
            )
        policy = self.policy
        if policy.kind not in ATM_POLICIES:
            raise _fail(
                "policy",
                f'{policy.kind} is for IP links (layer = "ip"); ATM links allow '
                '"tail", "ppd", "epd", "intelligent_tail", "selective_drop", "fba", "dfba"',
            )
        buffer = None if buffer == "inf" else buffer
        for key, least in (("threshold", 1), ("low", 0), ("high", 1)):
            value = getattr(policy, key)
            if isinstance(value, str):
                if buffer is None:
                    raise _fail(
                        f"policy.{key}",
                        f'{show_value(value)} is a share of the buffer, but buffer = "inf": '
                        "give a number of cells",
                    )
                setattr(policy, key, max(least, int(buffer * share_of(value))))
        if policy.kind in SHARE_POLICIES:
            self._resolve_share(policy, buffer)
            return
        if policy.kind == "dfba":
            self._resolve_dfba(policy, buffer)
            return
        if policy.kind in ("epd", "intelligent_tail"):
            if policy.threshold is None:
                if buffer is None:
                    raise _fail(
                        "policy.threshold",
                        f'required for {policy.kind} when buffer = "inf" '
                        "(the default is derived from the buffer size)",
                    )
                if policy.kind == "epd":
                    policy.threshold = max(1, buffer * 4 // 5)
                elif buffer > INTELLIGENT_TAIL_MARGIN_CELLS:
                    policy.threshold = buffer - INTELLIGENT_TAIL_MARGIN_CELLS
                else:
                    raise _fail(
                        "policy.threshold",
                        f"the default (buffer - 12) needs buffer > 12, got buffer = {buffer}; "
                        "set threshold",
                    )
            elif buffer is not None and policy.threshold > buffer:
                raise _fail(
                    "policy.threshold",
                    f"must be from 1 to the buffer ({buffer}), got {policy.threshold}",
                )

    def _resolve_share(self, policy: Policy, buffer: Optional[int]) -> None:
        """Selective Drop and FBA: R defaults to half the buffer, and is at most it."""
        if policy.threshold is None:
            if buffer is None:
                raise _fail(
                    "policy.threshold",
                    f'required for {policy.kind} when buffer = "inf" (R, cells; the default '
                    "is half the buffer)",
                )
            policy.threshold = max(1, int(buffer * SHARE_THRESHOLD_FRACTION))
        elif buffer is not None and policy.threshold > buffer:
            raise _fail(
                "policy.threshold",
                f"must be from 1 to the buffer ({buffer}), got {policy.threshold}",
            )

    def _resolve_dfba(self, policy: Policy, buffer: Optional[int]) -> None:
        """DFBA: L and H default to 50 % and 90 % of the buffer; L <= H <= buffer."""
        for key, fraction in (("low", DFBA_LOW_FRACTION), ("high", DFBA_HIGH_FRACTION)):
            if getattr(policy, key) is None:
                if buffer is None:
                    raise _fail(
                        f"policy.{key}",
                        f'required for dfba when buffer = "inf" (cells; the default is '
                        f"{fraction:.0%} of the buffer)",
                    )
                setattr(policy, key, max(1, int(buffer * fraction)))
        if buffer is not None and policy.high > buffer:
            raise _fail(
                "policy.high",
                f"must be from low ({policy.low}) to the buffer ({buffer}), got {policy.high}",
            )
        if policy.low > policy.high:
            raise _fail("policy.low", f"must be at most high ({policy.high}), got {policy.low}")

    def _resolve_ip(self) -> None:
        if self.algorithm is not None:
            raise _fail(
                "algorithm",
                "ABR switch algorithms run at ATM ports; an IP link has none: remove it "
                'or set layer = "atm"',
            )
        if self.sonet:
            raise _fail(
                "sonet",
                "sonet is for ATM links (cells in the STS-3c payload); "
                'an IP link sends packets at its rate: remove it or set layer = "atm"',
            )
        self.sonet = None
        buffer = self.buffer
        problem = (
            f"expected {int_range_text(1, MAX_IP_BUFFER_PACKETS)} of packets, a size in "
            f'bytes like "64 KB" (1 byte to 2^53), or "inf", got {show_value(buffer)}'
        )
        if isinstance(buffer, str) and buffer != "inf":
            try:
                size = parse_size_bytes(buffer)
            except ValueError:
                raise _fail("buffer", problem) from None
            if size < 1:
                raise _fail("buffer", f"must be at least 1 byte, got {show_value(buffer)}")
        elif buffer != "inf" and not 1 <= buffer <= MAX_IP_BUFFER_PACKETS:
            raise _fail("buffer", problem)
        policy = self.policy
        if policy.kind not in IP_POLICIES:
            raise _fail(
                "policy",
                f'{policy.kind} is a cell policy, for ATM links; IP links allow "tail" or '
                '{ kind = "red", min_th = ... }',
            )
        if policy.kind == "red":
            self._resolve_red(policy)

    def _resolve_red(self, policy: Policy) -> None:
        in_bytes = self.buffer_bytes() is not None
        if policy.min_th is None:
            unit = "bytes" if in_bytes else "packets"
            raise _fail("policy.min_th", f"required for red (average queue, in {unit})")
        for key in ("min_th", "max_th"):
            value = getattr(policy, key)
            if isinstance(value, str) and not in_bytes:
                raise _fail(
                    f"policy.{key}",
                    f"the buffer counts packets ({show_value(self.buffer)}), so thresholds are "
                    f'numbers of packets; got {show_value(value)} (a size needs buffer = "64 KB")',
                )
        if policy.max_th is None:
            if isinstance(policy.min_th, str):
                policy.max_th = RED_MAX_TH_FACTOR * parse_size_bytes(policy.min_th)
            else:
                policy.max_th = RED_MAX_TH_FACTOR * policy.min_th
        if red_threshold(policy.max_th) > MAX_SIZE_BYTES:
            raise _fail(
                "policy.max_th",
                "must be at most 2^53 (the default is 3 x min_th), "
                f"got {show_value(policy.max_th)}",
            )
        if red_threshold(policy.min_th) >= red_threshold(policy.max_th):
            raise _fail(
                "policy.max_th",
                f"must be above min_th ({show_value(policy.min_th)}), got "
                f"{show_value(policy.max_th)}",
            )
        if policy.w_q is None:
            policy.w_q = RED_W_Q
        if policy.max_p is None:
            policy.max_p = RED_MAX_P

    def bit_rate_bps(self) -> float:
        """Line rate in bit/s, as written (before the SONET overhead)."""
        return parse_bit_rate_bps(self.rate)

    def cell_rate_cps(self) -> float:
        """Cells/s the link carries: rate / 424, or the SONET payload rate / 424; 0 on IP."""
        if self.layer == "ip":
            return 0.0
        if self.sonet:
            return bps_to_cps(sonet_payload_bps(parse_bit_rate_bps(self.rate)))
        return parse_cell_rate_cps(self.rate)

    def delay_ps(self) -> int:
        """Propagation delay in ps (5 us/km when given as a length)."""
        if self.length is not None:
            return propagation_delay_ps(parse_length_km(self.length))
        return parse_time_ps(self.delay or "0 s")

    def buffer_cells(self) -> Optional[int]:
        """ATM: the buffer in cells (None = unlimited)."""
        if self.layer != "atm" or self.buffer == "inf":
            return None
        return int(self.buffer)

    def buffer_packets(self) -> Optional[int]:
        """IP: the buffer in packets, if it is given as a number."""
        if self.layer == "ip" and type(self.buffer) is int:
            return self.buffer
        return None

    def buffer_bytes(self) -> Optional[int]:
        """IP: the buffer in bytes, if it is given as a size."""
        if self.layer == "ip" and isinstance(self.buffer, str) and self.buffer != "inf":
            return parse_size_bytes(self.buffer)
        return None


def red_threshold(value: Any) -> float:
    """A RED threshold in the core's unit: packets as written, or bytes of a size string."""
    return float(parse_size_bytes(value)) if isinstance(value, str) else float(value)


TBE_MAX = 2**24 - 1
"""The largest TBE (a 24-bit field), and TM 4.0's default."""
ABR_FACTOR_DEFAULT = "1/16"
"""TM 4.0's default RIF, RDF and CDF (ATM Forum Traffic Management Specification 4.0)."""


class Abr(Table):
    """``abr = { ... }``: an ABR VC's source end system parameters (ATM Forum TM 4.0).

    Every key is optional; where absent, TM 4.0's default: pcr "auto" (the
    cell rate of the VC's first link), mcr "0 Mbps", icr "auto" (= pcr),
    rif = rdf = cdf = 1/16, nrm 32, mrm 2, trm "100 ms", tbe 16777215, adtf
    "500 ms", tcr "10 cells/s", use_it_or_lose_it false. Rates take any rate unit; the
    factors a
    number or a fraction like "1/512". Give ``tbe`` or ``crm``, not both:
    the core gets crm = ceil(tbe / nrm).
    """

    pcr: RateOrAuto = "auto"
    """Peak cell rate; "auto": the cell rate of the VC's first link."""
    mcr: Rate = "0 Mbps"
    """Minimum cell rate."""
    icr: RateOrAuto = "auto"
    """Initial cell rate; "auto": pcr."""
    rif: Fraction = ABR_FACTOR_DEFAULT
    """Rate increase factor: ACR grows by rif x pcr per backward RM cell."""
    rdf: Fraction = ABR_FACTOR_DEFAULT
    """Rate decrease factor (CI = 1)."""
    cdf: Fraction = ABR_FACTOR_DEFAULT
    """Cut-off decrease factor (rule 6)."""
    nrm: Nrm = 32
    """In-rate cells per forward RM cell, 2 to 256."""
    mrm: Mrm = 2
    """Fewest in-rate cells between forward RM cells sent on the trm timer, 1 to nrm."""
    trm: TrmTime = "100 ms"
    """Upper bound on the time between forward RM cells, 100 us to 10^6 s."""
    tbe: Optional[Crm] = None
    """Transient buffer exposure, cells, 1 to 2^24 - 1; default 16777215 unless crm is given."""
    crm: Optional[Crm] = None
    """Forward RM cells without feedback before ACR is cut, 1 to 2^24 - 1; default
    ceil(tbe / nrm)."""
    adtf: AdtfTime = "500 ms"
    """ACR decrease time factor (rule 5), 10 ms to 10.23 s."""
    tcr: Rate = "10 cells/s"
    """Tagged cell rate: the least rate of forward RM cells."""
    use_it_or_lose_it: bool = False
    """Before each forward RM cell, an ACR above the rate the source actually sent at
    since the previous one falls to that rate, not below icr (an option beside TM 4.0's
    mandatory rules; docs/model.md, "ABR")."""

    @model_validator(mode="after")
    def _resolve(self) -> "Abr":
        for key in ("rif", "rdf", "cdf"):
            value = fraction_value(getattr(self, key))
            if not 0 < value <= 1:
                raise _fail(key, f"must be > 0 and <= 1, got {show_value(getattr(self, key))}")
        if self.tbe is not None and self.crm is not None:
            raise _fail("crm", "give tbe or crm (crm = ceil(tbe / nrm)), not both")
        if self.tbe is None and self.crm is None:
            self.tbe = TBE_MAX
        if self.mrm > self.nrm:
            raise _fail("mrm", f"must be from 1 to nrm ({self.nrm}), got {self.mrm}")
        for key in ("pcr", "icr", "tcr"):
            value = getattr(self, key)
            if value != "auto" and parse_cell_rate_cps(value) <= 0:
                raise _fail(key, f"must be > 0, got {show_value(value)}")
        if self.pcr != "auto":
            problem = self.rate_problem(parse_cell_rate_cps(self.pcr))
            if problem is not None:
                raise _fail(*problem)
        elif self.icr != "auto" and parse_cell_rate_cps(self.mcr) > parse_cell_rate_cps(self.icr):
            raise _fail(
                "mcr", f"must be <= icr ({show_value(self.icr)}), got {show_value(self.mcr)}"
            )
        return self

    def pcr_cps(self, link_cps: float) -> float:
        """PCR in cells/s; ``link_cps`` is the cell rate of the VC's first link."""
        return link_cps if self.pcr == "auto" else parse_cell_rate_cps(self.pcr)

    def icr_cps(self, link_cps: float) -> float:
        return self.pcr_cps(link_cps) if self.icr == "auto" else parse_cell_rate_cps(self.icr)

    def crm_value(self) -> int:
        """CRM = ceil(TBE / Nrm), or as given."""
        if self.crm is not None:
            return self.crm
        return -(-(self.tbe or TBE_MAX) // self.nrm)

    def rate_problem(self, link_cps: float) -> Optional[tuple[str, str]]:
        """(key, message) unless pcr <= the first link's cell rate ``link_cps``,
        mcr <= icr <= pcr and tcr <= pcr (TM 4.0; a relative 1e-12 is tolerated, and
        ``core_json`` clamps within it)."""
        pcr = self.pcr_cps(link_cps)
        icr = self.icr_cps(link_cps)
        mcr = parse_cell_rate_cps(self.mcr)
        tcr = parse_cell_rate_cps(self.tcr)
        where = " (the cell rate of the first link)" if self.pcr == "auto" else ""
        if pcr > link_cps * (1 + 1e-12):
            return "pcr", (
                f"must be at most the cell rate of the VC's first link ({cells_text(link_cps)}), "
                f"got {show_value(self.pcr)}"
            )
        if icr > pcr * (1 + 1e-12):
            return (
                "icr",
                f"must be <= pcr ({pcr:.6g} cells/s{where}), got {show_value(self.icr)}",
            )
        if mcr > icr * (1 + 1e-12):
            return "mcr", f"must be <= icr ({icr:.6g} cells/s), got {show_value(self.mcr)}"
        if tcr > pcr * (1 + 1e-12):
            return (
                "tcr",
                f"must be <= pcr ({pcr:.6g} cells/s{where}), got {show_value(self.tcr)}",
            )
        return None

    def core_json(self, link_cps: float) -> dict:
        """The ``abr`` object of a VC in the core JSON (docs/core-interface.md, "ABR")."""
        pcr = self.pcr_cps(link_cps)
        icr = min(self.icr_cps(link_cps), pcr)  # equal within validation's 1e-12
        return {
            "pcr_cps": pcr,
            "mcr_cps": min(parse_cell_rate_cps(self.mcr), icr),
            "icr_cps": icr,
            "rif": fraction_value(self.rif),
            "rdf": fraction_value(self.rdf),
            "nrm": self.nrm,
            "mrm": self.mrm,
            "trm_ps": parse_time_ps(self.trm),
            "crm": self.crm_value(),
            "cdf": fraction_value(self.cdf),
            "adtf_ps": parse_time_ps(self.adtf),
            "tcr_cps": min(parse_cell_rate_cps(self.tcr), pcr),
            "use_it_or_lose_it": self.use_it_or_lose_it,
        }


GfrCells = core_whole("GfrParams.mbs_cells")
"""A GFR VC's MBS or MFS, cells (the length field of an AAL5 frame in cells fits 16 bits)."""
GFR_MFS_CELLS = 192
"""Default MFS: the AAL5 frame of the largest IP datagram of IP over ATM's default MTU
(RFC 1626: 9180 bytes), with LLC/SNAP (8 bytes) and the AAL5 trailer (8), padded to
cells: 192 cells. Every frame a TCP flow of the seeds sends is within it."""
GFR_MBS_FRAMES = 2
"""Default MBS = 2 x MFS (our choice: the ATM Forum's GFR definition leaves MBS to the
contract; two maximum-size frames back to back let a TCP sender's pair of segments in slow
start through without tagging; docs/model.md, "GFR")."""


class Gfr(Table):
    """``gfr = { ... }``: a GFR VC's traffic contract (ATM Forum Traffic Management
    Specification 4.1, Guaranteed Frame Rate).

    ``mcr`` is required (any rate unit; "12000 cells/s"); ``mfs`` defaults to 192 cells,
    ``mbs`` to 2 x mfs, ``tagging`` to true. The VC's first switch tests each frame with
    the frame-based GCRA(1/MCR, (MBS - 1)(1/MCR - 1/PCR)), PCR its first link's cell
    rate; with ``tagging`` the cells of a frame that is not eligible leave it with
    CLP = 1 (docs/model.md, "GFR").
    """

    mcr: Rate
    """Minimum cell rate, above 0 and at most the cell rate of the VC's first link."""
    mbs: Optional[GfrCells] = None
    """Maximum burst size, cells (1 to 65535; default 2 x mfs)."""
    mfs: GfrCells = GFR_MFS_CELLS
    """Maximum frame size, cells (1 to 65535): a longer frame is not eligible."""
    tagging: bool = True
    """Tag (CLP = 1) the frames the frame-based GCRA finds not eligible, at the VC's first
    switch; false: test and count them only."""

    @model_validator(mode="after")
    def _resolve(self) -> "Gfr":
        if not parse_cell_rate_cps(self.mcr) >= MIN_SOURCE_CPS:
            raise _fail(
                "mcr",
                "must be from 0.001 cells/s (0.424 bps) to the cell rate of the first link, "
                f"got {show_value(self.mcr)}",
            )
        if self.mbs is None:
            self.mbs = min(65535, GFR_MBS_FRAMES * self.mfs)
        return self

    def rate_problem(self, link_cps: float) -> Optional[tuple[str, str]]:
        """(key, message) unless mcr <= the first link's cell rate ``link_cps``."""
        if parse_cell_rate_cps(self.mcr) > link_cps * (1 + 1e-12):
            return "mcr", (
                f"must be at most the cell rate of the VC's first link ({cells_text(link_cps)}), "
                f"got {show_value(self.mcr)}"
            )
        return None

    def core_json(self, link_cps: float) -> dict:
        """The ``gfr`` object of a VC in the core JSON (docs/core-interface.md, "GfrParams")."""
        return {
            "mcr_cps": min(parse_cell_rate_cps(self.mcr), link_cps),
            "mbs_cells": self.mbs,
            "mfs_cells": self.mfs,
            "tagging": self.tagging,
        }


def _gfr_class(table: Any, vc_class: Optional[str]) -> None:
    """A GFR VC needs its ``gfr`` table (mcr has no default); ``gfr`` on another class
    is an error."""
    if vc_class == "gfr":
        if table.gfr is None:
            raise _fail(
                "gfr",
                'required for class = "gfr": the traffic contract, e.g. '
                '{ mcr = "12000 cells/s" } (mbs, mfs and tagging have defaults)',
            )
    elif table.gfr is not None:
        raise _fail(
            "gfr",
            f'GFR parameters need class = "gfr", got class = "{vc_class or "ubr"}"',
        )


def _abr_class(table: Any, vc_class: Optional[str]) -> None:
    """Give an ABR VC its default ``abr`` table; ``abr`` on another class is an error."""
    if vc_class == "abr":
        if table.abr is None:
            table.abr = Abr()
    elif table.abr is not None:
        raise _fail(
            "abr",
            f'ABR parameters need class = "abr", got class = "{vc_class or "ubr"}"',
        )


class Vc(Table):
    """``[vcs.<name>]``: a virtual circuit along a path of node names (ATM links)."""

    path: NodePath
    class_: VcClass = Field("ubr", alias="class")
    """Service class; priority at a port: cbr > vbr > abr = ubr = gfr."""
    abr: Optional[Abr] = None
    """class = "abr": the source end system's parameters (all have defaults)."""
    gfr: Optional[Gfr] = None
    """class = "gfr": the traffic contract (mcr required)."""

    @model_validator(mode="after")
    def _abr(self) -> "Vc":
        _abr_class(self, self.class_)
        _gfr_class(self, self.class_)
        return self


SOURCE_COMMON_KEYS = ["vc", "path", "class", "abr", "gfr", "kind", "count", "start", "stop"]
SOURCE_KIND_KEYS = {
    "cbr": ["rate"],
    "greedy": [],
    "poisson": ["rate"],
    "vbr_onoff": ["peak", "on", "off", "distribution"],
    "geometric_onoff": ["peak", "mean", "mean_burst"],
    "frames": ["frame_cells", "rate", "arrivals"],
}
SOURCE_DEFAULTS = {"distribution": "fixed", "arrivals": "periodic"}
"""Per-kind keys that have a default; every other per-kind key is required."""


class Source(Table):
    """``[sources.<name>]``: a cell source on a VC.

    Either ``vc = "<name>"`` or ``path = [...]`` (with an optional ``class``,
    default "ubr"), which creates a VC named like the source. ``count = N > 1``
    makes N copies named ``<name>1`` .. ``<name>N`` (or, in a template
    ``"s{i}"``, with {i} replaced), each with its own VC (needs ``path``, or
    a ``vc`` with {i}). Per ``kind``:

    - cbr: ``rate``; poisson: ``rate`` (mean); greedy: nothing (one cell per
      cell time of the first link);
    - vbr_onoff: ``peak``, ``on``, ``off``, ``distribution`` ("fixed" |
      "exponential", default "fixed");
    - geometric_onoff: ``peak``, ``mean`` (0 < mean < peak), ``mean_burst`` (cells);
    - frames: ``frame_cells`` (n or [lo, hi]), ``rate`` (offered), ``arrivals``
      ("periodic" | "poisson", default "periodic").
    """

    keys_by_kind = {kind: SOURCE_COMMON_KEYS + keys for kind, keys in SOURCE_KIND_KEYS.items()}

    kind: Literal["cbr", "greedy", "poisson", "vbr_onoff", "geometric_onoff", "frames"]
    vc: Optional[str] = None
    path: Optional[NodePath] = None
    class_: Optional[VcClass] = Field(None, alias="class")
    abr: Optional[Abr] = None
    """With path and class = "abr": the source end system's parameters."""
    gfr: Optional[Gfr] = None
    """With path and class = "gfr": the traffic contract."""
    count: Count = 1
    start: StartTime = "0 s"
    stop: Optional[StartTime] = None
    """No more cells from this time on; none = until the end of the run."""
    rate: Optional[Rate] = None
    peak: Optional[Rate] = None
    mean: Optional[Rate] = None
    mean_burst: Optional[MeanBurst] = None
    """Mean burst length in cells (geometric), 1 to 1e9."""
    on: Optional[PositiveTime] = None
    off: Optional[PositiveTime] = None
    distribution: Optional[Literal["fixed", "exponential"]] = None
    frame_cells: Optional[FrameCells] = None
    arrivals: Optional[Literal["periodic", "poisson"]] = None

    @model_validator(mode="after")
    def _resolve(self) -> "Source":
        for key in SOURCE_KIND_KEYS[self.kind]:
            if getattr(self, key) is None:
                if key not in SOURCE_DEFAULTS:
                    raise _fail(key, f'required for kind = "{self.kind}"')
                setattr(self, key, SOURCE_DEFAULTS[key])
        if self.vc is None and self.path is None:
            raise _fail("", 'needs vc = "<vc name>" or path = [<node names>]')
        if self.vc is not None and self.path is not None:
            raise _fail("path", "give vc or path, not both")
        if self.vc is not None and self.class_ is not None:
            raise _fail("class", f"the class belongs to the VC: set it in [vcs.{self.vc}]")
        if self.vc is not None and self.abr is not None:
            raise _fail("abr", f"the ABR parameters belong to the VC: set them in [vcs.{self.vc}]")
        if self.vc is not None and self.gfr is not None:
            raise _fail("gfr", f"the GFR contract belongs to the VC: set it in [vcs.{self.vc}]")
        if self.path is not None and self.class_ is None:
            self.class_ = "ubr"
        if self.path is not None:
            _abr_class(self, self.class_)
            _gfr_class(self, self.class_)
        if self.count > 1 and self.vc is not None and TEMPLATE not in self.vc:
            raise _fail(
                "count",
                "count > 1 needs path (each copy gets its own VC), not vc (or a vc with {i})",
            )
        if self.stop is not None and parse_time_ps(self.stop) <= parse_time_ps(self.start):
            raise _fail(
                "stop",
                f"must be after start ({show_value(self.start)}), got {show_value(self.stop)}",
            )
        for key in ("rate", "peak", "mean"):
            value = getattr(self, key)
            if value is not None and not parse_cell_rate_cps(value) >= MIN_SOURCE_CPS:
                raise _fail(
                    key,
                    "must be from 0.001 cells/s (0.424 bps) to the cell rate of the first "
                    f"link, got {show_value(value)}",
                )
        if self.kind == "geometric_onoff":
            if parse_cell_rate_cps(self.mean) >= parse_cell_rate_cps(self.peak):
                raise _fail(
                    "mean",
                    f"must be below peak ({show_value(self.peak)}), got {show_value(self.mean)}",
                )
        return self

    def offered_rate_key(self) -> Optional[str]:
        """The key whose rate must fit the first link: peak for on/off, else rate."""
        if self.kind in ("vbr_onoff", "geometric_onoff"):
            return "peak"
        if self.kind == "greedy":
            return None
        return "rate"


TCP_VARIANTS = ("tahoe-nofr", "tahoe", "reno", "newreno", "sack")
FINE_MIN_RTO = "200 ms"
"""Default min_rto with a fine-grained timer."""
COARSE_MIN_RTO_TICKS = 2
"""Default min_rto with a coarse timer: 2 ticks, as BSD (TCP/IP Illustrated, Volume 2)."""


class Flow(Table):
    """``[flows.<name>]``: a TCP connection from ``path[0]`` to ``path[-1]``.

    ``path`` carries the data, ``ack_path`` (default: the reverse of path) the
    ACKs; both over ATM links (the flow gets two VCs, ``<name>`` and
    ``<name>-ack``, of ``class``) or both over IP links.

    Or, instead of ``path``: ``vc = "<name>"``, a VC of ``[vcs]`` that carries the
    flow's data, and ``ack_vc`` (default ``"<vc>-ack"``) that carries its ACKs back. Many
    flows may share these VCs, as the TCP connections an edge router multiplexes onto
    one VC (seed 004); the VCs' class and contract are those of their ``[vcs]`` tables.
    """

    path: Optional[NodePath] = None
    """Nodes from the sender to the receiver (or give vc)."""
    ack_path: Optional[NodePath] = None
    """Default: the reverse of path."""
    vc: Optional[str] = None
    """A VC of [vcs] carrying the data (instead of path)."""
    ack_vc: Optional[str] = None
    """With vc: the VC of [vcs] carrying the ACKs back; default "<vc>-ack"."""
    count: Optional[Count] = None
    """Copies of a template (a name with {i}), 1 to 100000."""
    class_: Optional[VcClass] = Field(None, alias="class")
    """ATM flows over a path: class of the data VC and of the ACK VC (default "ubr")."""
    abr: Optional[Abr] = None
    """class = "abr": the parameters of both VCs' source end systems (pcr "auto":
    each VC's own first link)."""
    gfr: Optional[Gfr] = None
    """class = "gfr": the contract of both VCs (each tested at its own first switch)."""
    variant: Literal["tahoe-nofr", "tahoe", "reno", "newreno", "sack"] = "tahoe-nofr"
    mss: Mss = 512
    """Bytes of TCP payload per segment, 1 to 65495."""
    window: Size = "64 KB"
    """Receiver buffer: the largest window the receiver advertises."""
    window_scale: WindowScale = "auto"
    """RFC 1323 shift; auto = the smallest with window >> shift <= 65535."""
    initial_cwnd: InitialCwnd = 1
    """Segments, 1 to 1000000."""
    initial_ssthresh: SizeOrAuto = "auto"
    """auto: the largest advertised window."""
    timer: Timer = "100 ms"
    """Coarse timer granularity (timers fire on a global tick), or "fine"."""
    rtt_arithmetic: Literal["real", "bsd"] = "real"
    """How the RTT estimator computes with a coarse timer: "real", srtt and rttvar as
    real numbers (RFC 6298's form), the RTO rounded up to whole ticks; "bsd", 4.4BSD's
    fixed-point code (W. R. Stevens and G. R. Wright, "TCP/IP Illustrated, Volume 2",
    section 25.10: the timed segment counted from 1 tick, truncating shifts; sub-tick
    RTTs give an RTO of 3 ticks). "bsd" needs a coarse timer."""
    initial_rto: PositiveTime = "3 s"
    min_rto: TimeOrAuto = "auto"
    """auto: 2 ticks with a coarse timer, 200 ms with "fine"."""
    max_rto: PositiveTime = "64 s"
    delayed_ack: ReceiverTime = "0 ms"
    """0 = every segment is ACKed at once."""
    processing: ReceiverTime = "0 us"
    """Receiver time per data segment."""
    processing_jitter: ReceiverTime = "0 us"
    """Processing is uniform in [processing - jitter, processing + jitter]."""
    start: StartTime = "0 s"
    transfer: Optional[Size] = None
    """A finite transfer of this size; none = the source always has data."""
    max_sack_blocks: SackBlocks = 3

    _ack_path_default: bool = PrivateAttr(False)

    @model_validator(mode="after")
    def _resolve(self) -> "Flow":
        if self.vc is not None:
            self._over_vcs()
        elif self.path is None:
            raise _fail(
                "path",
                "required: the nodes from the sender to the receiver (or vc = "
                '"<VC of [vcs]>" for a flow over a VC it may share)',
            )
        elif self.ack_vc is not None:
            raise _fail("ack_vc", "goes with vc (a flow over VCs of [vcs]), not with path")
        else:
            if self.abr is not None and self.class_ is None:
                raise _fail("abr", 'ABR parameters need class = "abr" (the class of both VCs)')
            if self.gfr is not None and self.class_ is None:
                raise _fail("gfr", 'GFR parameters need class = "gfr" (the class of both VCs)')
            _abr_class(self, self.class_)
            _gfr_class(self, self.class_)
            if self.ack_path is None:
                self.ack_path = list(reversed(self.path))
                self._ack_path_default = True
        window = parse_size_bytes(self.window)
        if window < self.mss:
            raise _fail(
                "window",
                f"must hold at least one segment (mss = {self.mss} bytes), "
                f"got {show_value(self.window)}",
            )
        if window >> MAX_WINDOW_SCALE > MAX_WINDOW_FIELD:
            raise _fail(
                "window",
                f"must be from mss ({self.mss} bytes) to 1073725440 bytes: TCP advertises at "
                f"most 65535 << 14 bytes, got {show_value(self.window)}",
            )
        shift = self.window_shift()
        advertised = min(MAX_WINDOW_FIELD, window >> shift) << shift
        if advertised < self.mss:
            raise _fail(
                "window_scale",
                f"with window_scale = {shift} the receiver advertises at most {advertised} "
                f"bytes, less than one segment (mss = {self.mss})",
            )
        if self.initial_ssthresh != "auto" and parse_size_bytes(self.initial_ssthresh) <= 0:
            raise _fail(
                "initial_ssthresh",
                f'must be from 1 byte to 2^53 or "auto", got {show_value(self.initial_ssthresh)}',
            )
        if self.transfer is not None and parse_size_bytes(self.transfer) <= 0:
            raise _fail("transfer", f"must be from 1 byte to 2^53, got {show_value(self.transfer)}")
        if self.rtt_arithmetic == "bsd" and self.timer == "fine":
            raise _fail(
                "rtt_arithmetic",
                'must be "real" with timer = "fine": BSD\'s arithmetic counts in ticks, got "bsd"',
            )
        if self.min_rto != "auto" and parse_time_ps(self.min_rto) == 0:
            raise _fail(
                "min_rto",
                f'must be > 0 s and at most {MAX_TIME_TEXT} or "auto", got "{self.min_rto}"',
            )
        min_rto = self.min_rto_ps()
        min_text = f"{min_rto / 1e12:g} s"
        if self.min_rto == "auto":
            min_text += (
                " with a fine timer" if self.timer == "fine" else f", {COARSE_MIN_RTO_TICKS} ticks"
            )
        if min_rto > parse_time_ps(self.max_rto):
            raise _fail(
                "max_rto", f"must be >= min_rto ({min_text}), got {show_value(self.max_rto)}"
            )
        if parse_time_ps(self.initial_rto) > parse_time_ps(self.max_rto):
            raise _fail(
                "initial_rto",
                f"must be <= max_rto ({show_value(self.max_rto)}), "
                f"got {show_value(self.initial_rto)}",
            )
        if parse_time_ps(self.initial_rto) < min_rto:
            raise _fail(
                "initial_rto",
                f"must be >= min_rto ({min_text}), got {show_value(self.initial_rto)}",
            )
        if parse_time_ps(self.processing_jitter) > parse_time_ps(self.processing):
            raise _fail(
                "processing_jitter",
                f"must be <= processing ({show_value(self.processing)}), "
                f"got {show_value(self.processing_jitter)}",
            )
        return self

    def _over_vcs(self) -> None:
        """A flow over VCs of [vcs]: the VCs carry the path, the class and the contract."""
        for key in ("path", "ack_path", "class_", "abr", "gfr"):
            if getattr(self, key) is not None:
                name = key.rstrip("_")
                raise _fail(
                    name,
                    f"a flow over vc = {show_value(self.vc)} takes its path, class and "
                    f"contract from the VC's [vcs] table: remove {name}",
                )
        if self.ack_vc is None:
            self.ack_vc = f"{self.vc}-ack"

    def window_bytes(self) -> int:
        return parse_size_bytes(self.window)

    def window_shift(self) -> int:
        """The window scale shift: as written, or the smallest that fits the 16-bit field."""
        if self.window_scale != "auto":
            return int(self.window_scale)
        return auto_window_scale(self.window_bytes())

    def tick_ps(self) -> Optional[int]:
        """The coarse timer's tick, or None for a fine-grained timer."""
        return None if self.timer == "fine" else parse_time_ps(self.timer)

    def min_rto_ps(self) -> int:
        if self.min_rto != "auto":
            return parse_time_ps(self.min_rto)
        tick = self.tick_ps()
        return parse_time_ps(FINE_MIN_RTO) if tick is None else COARSE_MIN_RTO_TICKS * tick


def auto_window_scale(window_bytes: int) -> int:
    """The smallest RFC 1323 shift s with window >> s <= 65535 (64 KB -> 1, 65535 -> 0)."""
    shift = 0
    while window_bytes >> shift > MAX_WINDOW_FIELD:
        shift += 1
    return shift


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
    "all".
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
        return self


class Scenario(Table):
    """A whole scenario file; see the module docstring and the table classes."""

    run: Run
    nodes: dict[str, Node] = {}
    links: dict[str, Link] = {}
    vcs: dict[str, Vc] = {}
    sources: dict[str, Source] = {}
    flows: dict[str, Flow] = {}
    probes: Probes = Field(default_factory=Probes)

    _file: Optional[str] = PrivateAttr(None)
    _source: Optional[dict] = PrivateAttr(None)
    _network: Optional[Network] = PrivateAttr(None)
    """The expanded network, built once by validation (``Network(scenario)`` returns it)."""

    @property
    def file(self) -> Optional[str]:
        """The file it was loaded from, if any."""
        return self._file

    @property
    def template(self) -> Optional[dict]:
        """The resolved ``[template]`` table this scenario was expanded from, if any."""
        return None if self._source is None else self._source["template"]

    @property
    def name(self) -> str:
        """The scenario's name: its file name without ``.toml``."""
        return Path(self._file).stem if self._file else "scenario"

    @model_validator(mode="after")
    def _check_references(self) -> "Scenario":
        """Build the expanded network (which checks every cross reference); resolve
        the class of ATM flows over a path. A flow over VCs of [vcs] keeps none: its
        VCs' tables hold it, and a class written into the flow's table would make the
        resolved scenario.toml refuse to load."""
        network = Network(self)
        for flat in network.flows:
            template = self.flows[flat.key.split(".", 1)[1]]
            if flat.layer == "atm" and template.class_ is None and template.vc is None:
                template.class_ = "ubr"
        problem = memory_problem(self, network)
        if problem is not None:
            raise _fail(*problem)
        self._network = network
        return self

    def memory_estimate(self) -> MemoryEstimate:
        """The memory a run of this scenario needs (``str()``: "~12 MiB"); validation
        refuses a scenario whose estimate exceeds the machine's memory."""
        return estimate(self, Network(self))
