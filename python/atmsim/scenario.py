"""The TOML scenario: its models, loading with ``--set`` overrides, and the core JSON.

A scenario file has the sections ``[run]``, ``[nodes]``, ``[links.<name>]``,
``[vcs.<name>]``, ``[sources.<name>]``, ``[flows.<name>]`` and ``[probes]``
(docs/scenarios.md and the docstrings of the table classes below describe
every key). Quantities carry their units as strings (``"155.52 Mbps"``,
``"1000 km"``, ``"100 ms"``, ``"64 KB"``); the models keep those strings as
written and ``to_core`` converts them to the canonical units of
docs/core-interface.md.

Tables under ``[nodes]``, ``[links]``, ``[sources]`` and ``[flows]`` whose
name contains ``{i}`` are templates: with ``count = N`` they stand for N
entries, ``{i}`` replaced by 1..N in the name and in every string value.
A link with ``duplex = true`` also stands for its reverse, ``<name>-rev``.
The models keep templates as written; ``Network`` is the expanded network
(what the core sees), built once to validate and again by ``to_core``.

Validation happens in two layers, both inside pydantic so that every problem
comes out as one ``ScenarioError`` naming the file and the dotted key:

- each table checks its own keys, types, units and defaults;
- ``Scenario`` builds the ``Network``, which checks the cross references
  (names, paths, layers, rates against links).

After validation every default is filled in, so ``resolved_toml`` is a plain
dump of the model.
"""

from __future__ import annotations

import re
import sys
from copy import deepcopy
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple, Optional, Union

import tomli_w
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from .errors import ScenarioError, from_validation_error, show_value
from .units import (
    bps_to_cps,
    parse_bit_rate_bps,
    parse_cell_rate_cps,
    parse_length_km,
    parse_size_bytes,
    parse_time_ps,
    propagation_delay_ps,
    sonet_payload_bps,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SECTIONS = ("run", "nodes", "links", "vcs", "sources", "flows", "probes")
"""Top-level tables of a scenario file, in the order they are written."""

NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]+$")
"""Names of nodes, links, VCs, sources and flows: TOML bare keys, so --set paths stay simple."""

TEMPLATE = "{i}"
"""In a name (with ``count = N``): replaced by 1..N in the name and every string value."""

VC_CLASSES = ("cbr", "vbr", "abr", "ubr", "gfr")

IP_HEADER_BYTES = 40
"""TCP + IP headers: an IP datagram is the TCP payload + 40 bytes."""

MAX_MSS_BYTES = 65535 - IP_HEADER_BYTES
"""The largest MSS: an IP datagram is at most 65535 bytes."""

MAX_WINDOW_FIELD = 65535
"""The TCP header's 16-bit window field."""

MAX_WINDOW_SCALE = 14
"""RFC 1323: the largest window scale shift."""


def _fail(key: str, message: str) -> PydanticCustomError:
    """An error at ``key``, dotted and relative to the table being validated."""
    return PydanticCustomError("scenario", "{message}", {"key": key, "message": message})


def _quoted(names: Any) -> str:
    """``a, b, c`` for a list of names, or ``(none)``."""
    names = list(names)
    return ", ".join(names) if names else "(none)"


# --- quantities: kept as the strings people wrote, checked when loaded ------------------


def _check_time(value: Any) -> str:
    parse_time_ps(value)
    return value.strip()


def _check_rate(value: Any) -> str:
    parse_bit_rate_bps(value)
    return value.strip()


def _check_length(value: Any) -> str:
    parse_length_km(value)
    return value.strip()


def _check_size(value: Any) -> Any:
    parse_size_bytes(value)
    return value.strip() if isinstance(value, str) else value


def _check_buffer(value: Any) -> Any:
    """ "inf", a whole number, or a string; the link checks it against its layer."""
    if value == "inf" or value == float("inf"):  # bare `inf` is a TOML float
        return "inf"
    if type(value) is int or isinstance(value, str):
        return value.strip() if isinstance(value, str) else value
    raise ValueError(
        'expected a number of cells (ATM) or packets (IP) >= 1, a size like "64 KB" (IP), '
        f'or "inf", got {show_value(value)}'
    )


def _check_threshold(value: Any) -> Any:
    """A RED threshold: a positive number (packets, or bytes), or a size like "10 KB"."""
    if isinstance(value, str):
        if parse_size_bytes(value) <= 0:
            raise ValueError(f"must be > 0, got {show_value(value)}")
        return value.strip()
    if type(value) in (int, float) and 0 < value < float("inf"):
        return value
    raise ValueError(
        f'expected a number > 0 (in the buffer\'s unit) or a size like "10 KB", '
        f"got {show_value(value)}"
    )


def _check_frame_cells(value: Any) -> Any:
    if type(value) is int and value >= 1:
        return value
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(type(n) is int for n in value)
        and 1 <= value[0] <= value[1]
    ):
        return value
    raise ValueError(
        f"expected a number of cells >= 1 or [lo, hi] with 1 <= lo <= hi, got {show_value(value)}"
    )


def _check_names(value: Any) -> Any:
    if value == "all" or (isinstance(value, list) and all(isinstance(n, str) for n in value)):
        return value
    raise ValueError(f'expected "all" or a list of names, got {show_value(value)}')


def _check_window_scale(value: Any) -> Any:
    if value == "auto" or (type(value) is int and 0 <= value <= MAX_WINDOW_SCALE):
        return value
    raise ValueError(f'expected "auto" or a whole number 0..14, got {show_value(value)}')


def _check_size_or_auto(value: Any) -> Any:
    return "auto" if value == "auto" else _check_size(value)


def _check_time_or_auto(value: Any) -> Any:
    return "auto" if value == "auto" else _check_time(value)


def _check_rate_or_auto(value: Any) -> Any:
    return "auto" if value == "auto" else _check_rate(value)


_FRACTION = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?)\s*/\s*([0-9]+(?:\.[0-9]*)?)\s*$")


def fraction_value(value: Any) -> float:
    """A number, or a fraction string such as "1/512", as a float."""
    if isinstance(value, str):
        match = _FRACTION.match(value)
        if match is None or float(match.group(2)) == 0:
            raise ValueError(
                f'expected a number or a fraction like "1/512", got {show_value(value)}'
            )
        return float(match.group(1)) / float(match.group(2))
    return float(value)


def _check_fraction(value: Any) -> Any:
    """A number (0.5) or a fraction string ("1/512"), kept as written."""
    if type(value) in (int, float) and abs(value) < float("inf"):
        return value
    if isinstance(value, str):
        fraction_value(value)
        return value.strip()
    raise ValueError(f'expected a number or a fraction like "1/512", got {show_value(value)}')


def _check_timer(value: Any) -> Any:
    if value == "fine":
        return value
    try:
        tick_ps = parse_time_ps(value)
    except ValueError:
        raise ValueError(
            f'expected "fine" or a tick like "100 ms" (units: ps, ns, us, ms, s), '
            f"got {show_value(value)}"
        ) from None
    if tick_ps == 0:
        raise ValueError(f'the tick must be > 0 (or "fine"), got {show_value(value)}')
    return value.strip()


Time = Annotated[str, BeforeValidator(_check_time)]
"""A time such as "100 ms" (units: ps, ns, us, ms, s)."""
Rate = Annotated[str, BeforeValidator(_check_rate)]
"""A rate such as "155.52 Mbps" or "366792 cells/s"."""
Length = Annotated[str, BeforeValidator(_check_length)]
"""A length such as "1000 km" or "50 m"."""
Size = Annotated[Union[int, str], BeforeValidator(_check_size)]
"""A size: whole bytes, or "64 KB" (KB = KiB = 1024 bytes, MB = MiB = 2^20)."""
Buffer = Annotated[Union[int, str], BeforeValidator(_check_buffer)]
"""Cells (ATM) or packets (IP) >= 1, a size in bytes (IP), or "inf"."""
Threshold = Annotated[Union[int, float, str], BeforeValidator(_check_threshold)]
"""A RED threshold in the buffer's unit."""
FrameCells = Annotated[Union[int, list[int]], BeforeValidator(_check_frame_cells)]
"""Cells per frame: a fixed number, or [lo, hi] drawn uniformly."""
NameList = Annotated[Union[str, list[str]], BeforeValidator(_check_names)]
"""A list of names, or "all"."""
WindowScale = Annotated[Union[int, str], BeforeValidator(_check_window_scale)]
"""An RFC 1323 shift 0..14, or "auto"."""
SizeOrAuto = Annotated[Union[int, str], BeforeValidator(_check_size_or_auto)]
TimeOrAuto = Annotated[str, BeforeValidator(_check_time_or_auto)]
Timer = Annotated[str, BeforeValidator(_check_timer)]
"""A coarse timer tick such as "100 ms", or "fine"."""
RateOrAuto = Annotated[str, BeforeValidator(_check_rate_or_auto)]
"""A rate, or "auto" (ABR: the cell rate of the VC's first link)."""
Fraction = Annotated[Union[int, float, str], BeforeValidator(_check_fraction)]
"""A number or a fraction string such as "1/512"."""
VcClass = Literal["cbr", "vbr", "abr", "ubr", "gfr"]


class Table(BaseModel):
    """A TOML table: strict types, and unknown keys are errors that list the allowed ones."""

    model_config = ConfigDict(extra="forbid", strict=True)

    @classmethod
    def allowed_keys(cls, data: dict) -> list[str]:
        """Keys this table accepts (given its contents, for tables whose keys depend on kind)."""
        return [field.alias or name for name, field in cls.model_fields.items()]

    @model_validator(mode="before")
    @classmethod
    def _only_known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            allowed = cls.allowed_keys(data)
            for key in data:
                if key not in allowed:
                    raise _fail(key, "unknown key; allowed: " + ", ".join(allowed))
        return data


class Run(Table):
    """``[run]``: how long to simulate and with which random seed."""

    duration: Time
    """Simulated time, > 0."""
    seed: int = Field(1, ge=0)
    """Seed of all random streams; same scenario + seed = same results."""

    @field_validator("duration")
    @classmethod
    def _positive(cls, value: str) -> str:
        if parse_time_ps(value) == 0:
            raise ValueError(f'must be > 0, got "{value}"')
        return value


class Node(Table):
    """``[nodes]``: ``name = { kind = "host" }``. The kind is informational.

    ``"s{i}" = { kind = "host", count = 5 }`` is a template for s1..s5.
    """

    kind: Literal["host", "switch"] = "switch"
    count: Optional[int] = Field(None, ge=1)
    """Copies of a template (a name with {i})."""


ATM_POLICIES = ("tail", "ppd", "epd", "intelligent_tail")
IP_POLICIES = ("tail", "red")
POLICY_KINDS = ATM_POLICIES + ("red",)
POLICY_KEYS = {
    "tail": ["kind"],
    "ppd": ["kind", "keep_eom"],
    "epd": ["kind", "threshold"],
    "intelligent_tail": ["kind", "threshold"],
    "red": ["kind", "min_th", "max_th", "w_q", "max_p"],
}
INTELLIGENT_TAIL_MARGIN_CELLS = 12
"""Default intelligent-tail threshold = buffer - 12: one 12-cell frame (MSS 512) below K."""
RED_MAX_TH_FACTOR = 3
"""Default RED max_th = 3 x min_th (SPEC section 4)."""
RED_W_Q = 0.002
"""Default RED queue weight (SPEC section 4)."""
RED_MAX_P = 0.02
"""Default RED maximum drop probability (SPEC section 4)."""


class Policy(Table):
    """Drop policy of a link's output port (docs/core-interface.md, SPEC section 4).

    Written as a kind (``policy = "epd"``) or a table
    (``policy = { kind = "epd", threshold = 800 }``).

    ATM links: tail, ppd, epd, intelligent_tail. Defaults: epd threshold =
    floor(0.8 * buffer); intelligent_tail threshold = buffer - 12; both need a
    finite buffer unless the threshold is given. ppd keep_eom = true.

    IP links: tail, red (``min_th`` required; ``max_th`` = 3 x min_th,
    ``w_q`` = 0.002, ``max_p`` = 0.02; thresholds in the buffer's unit).
    """

    kind: Literal["tail", "ppd", "epd", "intelligent_tail", "red"]
    threshold: Optional[int] = Field(None, ge=1)
    """Cells (epd, intelligent_tail)."""
    keep_eom: Optional[bool] = None
    """ppd: keep the EOM cell of a frame whose other cells are being dropped."""
    min_th: Optional[Threshold] = None
    """red: below this average queue nothing is dropped."""
    max_th: Optional[Threshold] = None
    """red: above this average queue every packet is dropped."""
    w_q: Optional[float] = Field(None, gt=0, le=1, allow_inf_nan=False)
    """red: weight of the queue's moving average."""
    max_p: Optional[float] = Field(None, gt=0, le=1, allow_inf_nan=False)
    """red: drop probability when the average reaches max_th."""

    @classmethod
    def allowed_keys(cls, data: dict) -> list[str]:
        kind = data.get("kind")
        if isinstance(kind, str) and kind in POLICY_KEYS:
            return POLICY_KEYS[kind]
        return super().allowed_keys(data)

    @model_validator(mode="after")
    def _defaults(self) -> Policy:
        if self.kind == "ppd" and self.keep_eom is None:
            self.keep_eom = True
        return self


ALGORITHM_KINDS = ("erica", "erica_plus", "efci", "fmmra")
ALGORITHM_KEYS = {
    "erica": [
        "kind",
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
    "target_utilization": 0.9,  # seed 000 section 5, seed 002, seed 003 section 4.1
    "interval": "1 ms",  # seed 000 section 5: 100 cells or 1 ms, whichever first
    "interval_cells": 100,
    "delta": 0.1,  # SPEC section 3.4
    "measured_rate": False,
    "bidirectional_count": False,
    "t0": "1.5 ms",  # ERICA+: seed 001 section 6
    "a": 1.15,  # seed 001
    "b": 1.05,  # the literature's default (seed 001 uses 1)
    "qdlf": 0.5,  # seed 001
}
"""Defaults of the switch algorithms' keys (every kind that has the key)."""


class Algorithm(Table):
    """The ABR switch algorithm of a link's output port (SPEC section 3.4).

    Written as a kind (``algorithm = "erica"``), ``"none"``, or a table
    (``algorithm = { kind = "efci", high = 300 }``). Keys per kind:

    - erica: target_utilization (0.9), interval ("1 ms"), interval_cells (100),
      delta (0.1), measured_rate (false), bidirectional_count (false);
    - erica_plus: interval, interval_cells, delta, measured_rate,
      bidirectional_count as erica, t0 ("1.5 ms"), a (1.15), b (1.05), qdlf (0.5);
    - efci: high (cells, required), low (default: high);
    - fmmra: interval ("1 ms"), interval_cells (100).
    """

    kind: Literal["erica", "erica_plus", "efci", "fmmra"]
    target_utilization: Optional[float] = Field(None, gt=0, le=1, allow_inf_nan=False)
    """ERICA: the fraction U of the link's cell rate offered to ABR and VBR/CBR."""
    interval: Optional[Time] = None
    """Averaging interval: ends after this time or interval_cells ABR input cells."""
    interval_cells: Optional[int] = Field(None, ge=1)
    delta: Optional[float] = Field(None, ge=0, allow_inf_nan=False)
    """Overload band: z > 1 + delta counts as overload."""
    measured_rate: Optional[bool] = None
    """Use each VC's measured rate instead of the CCR field of its RM cells."""
    bidirectional_count: Optional[bool] = None
    """Count VCs seen by their backward RM cells as active too."""
    t0: Optional[Time] = None
    """ERICA+: target queueing delay."""
    a: Optional[float] = Field(None, ge=1, allow_inf_nan=False)
    """ERICA+: the target curve above t0 (>= 1)."""
    b: Optional[float] = Field(None, gt=0, allow_inf_nan=False)
    """ERICA+: the target curve below t0."""
    qdlf: Optional[float] = Field(None, gt=0, le=1, allow_inf_nan=False)
    """ERICA+: queue drain limit factor, the floor of the target factor."""
    high: Optional[int] = Field(None, ge=1)
    """EFCI: ABR queue (cells) above which data cells are marked."""
    low: Optional[int] = Field(None, ge=0)
    """EFCI: ABR queue (cells) below which marking stops (hysteresis)."""

    @classmethod
    def allowed_keys(cls, data: dict) -> list[str]:
        kind = data.get("kind")
        if isinstance(kind, str) and kind in ALGORITHM_KEYS:
            return ALGORITHM_KEYS[kind]
        return super().allowed_keys(data)

    @model_validator(mode="after")
    def _defaults(self) -> Algorithm:
        for key in ALGORITHM_KEYS[self.kind][1:]:
            if getattr(self, key) is None and key in ALGORITHM_DEFAULTS:
                setattr(self, key, ALGORITHM_DEFAULTS[key])
        for key in ("interval", "t0"):
            value = getattr(self, key)
            if value is not None and parse_time_ps(value) == 0:
                raise _fail(key, f'must be > 0, got "{value}"')
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
    """Propagation delay 5 us/km. Give ``length`` or ``delay``, not both."""
    delay: Optional[Time] = None
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
    count: Optional[int] = Field(None, ge=1)
    """Copies of a template (a name with {i})."""

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
            'expected "tail", "ppd", "epd", "intelligent_tail" (ATM), "tail" (IP) or a table '
            'like { kind = "epd", threshold = 800 } or { kind = "red", min_th = 5 }, '
            f"got {show_value(value)}"
        )

    @model_validator(mode="after")
    def _resolve(self) -> Link:
        if self.length is not None and self.delay is not None:
            raise _fail("delay", "give length or delay, not both")
        if self.length is None and self.delay is None:
            self.delay = "0 s"
        if parse_bit_rate_bps(self.rate) <= 0:
            raise _fail("rate", f'must be > 0, got "{self.rate}"')
        if self.layer == "atm":
            self._resolve_atm()
        else:
            self._resolve_ip()
        return self

    def _resolve_atm(self) -> None:
        if self.sonet is None:
            self.sonet = False
        buffer = self.buffer
        if buffer != "inf" and not (type(buffer) is int and buffer >= 1):
            raise _fail(
                "buffer",
                f'expected a number of cells >= 1 or "inf" (ATM buffers count cells), '
                f"got {show_value(buffer)}",
            )
        policy = self.policy
        if policy.kind not in ATM_POLICIES:
            raise _fail(
                "policy",
                f'{policy.kind} is for IP links (layer = "ip"); ATM links allow '
                '"tail", "ppd", "epd", "intelligent_tail"',
            )
        buffer = None if buffer == "inf" else buffer
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
                    f"must be <= buffer ({buffer}), got {policy.threshold}",
                )

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
            'expected a number of packets >= 1, a size in bytes like "64 KB", or "inf", '
            f"got {show_value(buffer)}"
        )
        if isinstance(buffer, str) and buffer != "inf":
            try:
                size = parse_size_bytes(buffer)
            except ValueError:
                raise _fail("buffer", problem) from None
            if size < 1:
                raise _fail("buffer", f"must be at least 1 byte, got {show_value(buffer)}")
        elif buffer != "inf" and buffer < 1:
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
"""TM 4.0's default RIF, RDF and CDF (SPEC section 3.1)."""


class Abr(Table):
    """``abr = { ... }``: an ABR VC's source end system parameters (SPEC section 3.1).

    Every key is optional; where absent, TM 4.0's default: pcr "auto" (the
    cell rate of the VC's first link), mcr "0 Mbps", icr "auto" (= pcr),
    rif = rdf = cdf = 1/16, nrm 32, mrm 2, trm "100 ms", tbe 16777215, adtf
    "500 ms", tcr "10 cells/s". Rates take any rate unit; the factors a
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
    nrm: int = Field(32, ge=2)
    """In-rate cells per forward RM cell."""
    mrm: int = Field(2, ge=1)
    """Fewest in-rate cells between forward RM cells sent on the trm timer."""
    trm: Time = "100 ms"
    """Upper bound on the time between forward RM cells."""
    tbe: Optional[int] = Field(None, ge=1, le=TBE_MAX)
    """Transient buffer exposure, cells; default 16777215 unless crm is given."""
    crm: Optional[int] = Field(None, ge=1)
    """Forward RM cells without feedback before ACR is cut; default ceil(tbe / nrm)."""
    adtf: Time = "500 ms"
    """ACR decrease time factor (rule 5)."""
    tcr: Rate = "10 cells/s"
    """Tagged cell rate: the least rate of forward RM cells."""

    @model_validator(mode="after")
    def _resolve(self) -> Abr:
        for key in ("rif", "rdf", "cdf"):
            value = fraction_value(getattr(self, key))
            if not 0 < value <= 1:
                raise _fail(key, f"must be > 0 and <= 1, got {show_value(getattr(self, key))}")
        if self.tbe is not None and self.crm is not None:
            raise _fail("crm", "give tbe or crm (crm = ceil(tbe / nrm)), not both")
        if self.tbe is None and self.crm is None:
            self.tbe = TBE_MAX
        for key in ("trm", "adtf"):
            if parse_time_ps(getattr(self, key)) == 0:
                raise _fail(key, f'must be > 0, got "{getattr(self, key)}"')
        for key in ("pcr", "icr", "tcr"):
            value = getattr(self, key)
            if value != "auto" and parse_cell_rate_cps(value) <= 0:
                raise _fail(key, f'must be > 0, got "{value}"')
        if self.pcr != "auto":
            problem = self.rate_problem(parse_cell_rate_cps(self.pcr))
            if problem is not None:
                raise _fail(*problem)
        elif self.icr != "auto" and parse_cell_rate_cps(self.mcr) > parse_cell_rate_cps(self.icr):
            raise _fail("mcr", f'must be <= icr ("{self.icr}"), got "{self.mcr}"')
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
        """(key, message) when mcr <= icr <= pcr does not hold on a first link of ``link_cps``."""
        pcr = self.pcr_cps(link_cps)
        icr = self.icr_cps(link_cps)
        mcr = parse_cell_rate_cps(self.mcr)
        where = " (the cell rate of the first link)" if self.pcr == "auto" else ""
        if icr > pcr * (1 + 1e-12):
            return "icr", f'must be <= pcr ({pcr:.6g} cells/s{where}), got "{self.icr}"'
        if mcr > icr * (1 + 1e-12):
            return "mcr", f'must be <= icr ({icr:.6g} cells/s), got "{self.mcr}"'
        return None

    def core_json(self, link_cps: float) -> dict:
        """The ``abr`` object of a VC in the core JSON (docs/core-interface.md, "ABR")."""
        return {
            "pcr_cps": self.pcr_cps(link_cps),
            "mcr_cps": parse_cell_rate_cps(self.mcr),
            "icr_cps": self.icr_cps(link_cps),
            "rif": fraction_value(self.rif),
            "rdf": fraction_value(self.rdf),
            "nrm": self.nrm,
            "mrm": self.mrm,
            "trm_ps": parse_time_ps(self.trm),
            "crm": self.crm_value(),
            "cdf": fraction_value(self.cdf),
            "adtf_ps": parse_time_ps(self.adtf),
            "tcr_cps": parse_cell_rate_cps(self.tcr),
        }


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

    path: list[str] = Field(min_length=2)
    class_: VcClass = Field("ubr", alias="class")
    """Service class; priority at a port: cbr > vbr > abr = ubr = gfr."""
    abr: Optional[Abr] = None
    """class = "abr": the source end system's parameters (all have defaults)."""

    @model_validator(mode="after")
    def _abr(self) -> Vc:
        _abr_class(self, self.class_)
        return self


SOURCE_COMMON_KEYS = ["vc", "path", "class", "abr", "kind", "count", "start", "stop"]
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

    kind: Literal["cbr", "greedy", "poisson", "vbr_onoff", "geometric_onoff", "frames"]
    vc: Optional[str] = None
    path: Optional[list[str]] = Field(None, min_length=2)
    class_: Optional[VcClass] = Field(None, alias="class")
    abr: Optional[Abr] = None
    """With path and class = "abr": the source end system's parameters."""
    count: int = Field(1, ge=1)
    start: Time = "0 s"
    stop: Optional[Time] = None
    """No more cells from this time on; none = until the end of the run."""
    rate: Optional[Rate] = None
    peak: Optional[Rate] = None
    mean: Optional[Rate] = None
    mean_burst: Optional[float] = Field(None, gt=0, allow_inf_nan=False)
    """Mean burst length in cells (geometric)."""
    on: Optional[Time] = None
    off: Optional[Time] = None
    distribution: Optional[Literal["fixed", "exponential"]] = None
    frame_cells: Optional[FrameCells] = None
    arrivals: Optional[Literal["periodic", "poisson"]] = None

    @classmethod
    def allowed_keys(cls, data: dict) -> list[str]:
        kind = data.get("kind")
        if isinstance(kind, str) and kind in SOURCE_KIND_KEYS:
            return SOURCE_COMMON_KEYS + SOURCE_KIND_KEYS[kind]
        return super().allowed_keys(data)

    @model_validator(mode="after")
    def _resolve(self) -> Source:
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
        if self.path is not None and self.class_ is None:
            self.class_ = "ubr"
        if self.path is not None:
            _abr_class(self, self.class_)
        if self.count > 1 and self.vc is not None and TEMPLATE not in self.vc:
            raise _fail(
                "count",
                "count > 1 needs path (each copy gets its own VC), not vc (or a vc with {i})",
            )
        if self.stop is not None and parse_time_ps(self.stop) <= parse_time_ps(self.start):
            raise _fail("stop", f'must be after start ("{self.start}"), got "{self.stop}"')
        for key in ("rate", "peak", "mean"):
            value = getattr(self, key)
            if value is not None and parse_cell_rate_cps(value) <= 0:
                raise _fail(key, f'must be > 0, got "{value}"')
        for key in ("on", "off"):
            value = getattr(self, key)
            if value is not None and parse_time_ps(value) <= 0:
                raise _fail(key, f'must be > 0, got "{value}"')
        if self.kind == "geometric_onoff":
            if parse_cell_rate_cps(self.mean) >= parse_cell_rate_cps(self.peak):
                raise _fail("mean", f'must be below peak ("{self.peak}"), got "{self.mean}"')
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
"""Default min_rto with a coarse timer: 2 ticks (SPEC section 2)."""


class Flow(Table):
    """``[flows.<name>]``: a TCP connection from ``path[0]`` to ``path[-1]``.

    ``path`` carries the data, ``ack_path`` (default: the reverse of path) the
    ACKs; both over ATM links (the flow gets two VCs, ``<name>`` and
    ``<name>-ack``, of ``class``) or both over IP links.
    """

    path: list[str] = Field(min_length=2)
    ack_path: Optional[list[str]] = Field(None, min_length=2)
    """Default: the reverse of path."""
    count: Optional[int] = Field(None, ge=1)
    """Copies of a template (a name with {i})."""
    class_: Optional[VcClass] = Field(None, alias="class")
    """ATM flows: class of the data VC and of the ACK VC (default "ubr")."""
    abr: Optional[Abr] = None
    """class = "abr": the parameters of both VCs' source end systems (pcr "auto":
    each VC's own first link)."""
    variant: Literal["tahoe-nofr", "tahoe", "reno", "newreno", "sack"] = "tahoe-nofr"
    mss: int = Field(512, ge=1, le=MAX_MSS_BYTES)
    """Bytes of TCP payload per segment."""
    window: Size = "64 KB"
    """Receiver buffer: the largest window the receiver advertises."""
    window_scale: WindowScale = "auto"
    """RFC 1323 shift; auto = the smallest with window >> shift <= 65535."""
    initial_cwnd: int = Field(1, ge=1)
    """Segments."""
    initial_ssthresh: SizeOrAuto = "auto"
    """auto: the largest advertised window."""
    timer: Timer = "100 ms"
    """Coarse timer granularity (timers fire on a global tick), or "fine"."""
    initial_rto: Time = "3 s"
    min_rto: TimeOrAuto = "auto"
    """auto: 2 ticks with a coarse timer, 200 ms with "fine"."""
    max_rto: Time = "64 s"
    delayed_ack: Time = "0 ms"
    """0 = every segment is ACKed at once."""
    processing: Time = "0 us"
    """Receiver time per data segment."""
    processing_jitter: Time = "0 us"
    """Processing is uniform in [processing - jitter, processing + jitter]."""
    start: Time = "0 s"
    transfer: Optional[Size] = None
    """A finite transfer of this size; none = the source always has data."""
    max_sack_blocks: int = Field(3, ge=1, le=4)

    _ack_path_default: bool = PrivateAttr(False)

    @model_validator(mode="after")
    def _resolve(self) -> Flow:
        if self.abr is not None and self.class_ is None:
            raise _fail("abr", 'ABR parameters need class = "abr" (the class of both VCs)')
        _abr_class(self, self.class_)
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
        if self.window_scale == "auto" and window >> MAX_WINDOW_SCALE > MAX_WINDOW_FIELD:
            raise _fail(
                "window",
                "must be below 1 GB: TCP advertises at most 65535 << 14 bytes, "
                f"got {show_value(self.window)}",
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
            raise _fail("initial_ssthresh", f'must be > 0 or "auto", got {self.initial_ssthresh}')
        if self.transfer is not None and parse_size_bytes(self.transfer) <= 0:
            raise _fail("transfer", f"must be > 0, got {show_value(self.transfer)}")
        if parse_time_ps(self.initial_rto) == 0:
            raise _fail("initial_rto", f'must be > 0, got "{self.initial_rto}"')
        if self.min_rto != "auto" and parse_time_ps(self.min_rto) == 0:
            raise _fail("min_rto", f'must be > 0 or "auto", got "{self.min_rto}"')
        if self.min_rto_ps() > parse_time_ps(self.max_rto):
            raise _fail(
                "max_rto",
                f'must be >= min_rto ({self.min_rto_ps() / 1e9:g} ms), got "{self.max_rto}"',
            )
        if parse_time_ps(self.initial_rto) > parse_time_ps(self.max_rto):
            raise _fail(
                "initial_rto", f'must be <= max_rto ("{self.max_rto}"), got "{self.initial_rto}"'
            )
        if parse_time_ps(self.processing_jitter) > parse_time_ps(self.processing):
            raise _fail(
                "processing_jitter",
                f'must be <= processing ("{self.processing}"), got "{self.processing_jitter}"',
            )
        return self

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
    ``flows`` flow names (window, sequence number, RTT), ``abr_vcs`` ABR VC
    names (ACR, last ER received), ``abr_ports`` links with a switch algorithm
    (load factor, fair share, ER written, ABR queue); each may be "all".
    """

    period: Optional[Time] = None
    """Sampling period, > 0; required when any list is non-empty."""
    queue: NameList = []
    utilization: NameList = []
    vc_rate: NameList = []
    flows: NameList = []
    abr_vcs: NameList = []
    abr_ports: NameList = []

    @model_validator(mode="after")
    def _period(self) -> Probes:
        lists = (self.queue, self.utilization, self.vc_rate, self.flows)
        if any(lists) or self.abr_vcs or self.abr_ports:
            if self.period is None:
                raise _fail("period", "required when a probe list is set")
        if self.period is not None and parse_time_ps(self.period) == 0:
            raise _fail("period", f'must be > 0, got "{self.period}"')
        return self


class FlatNode(NamedTuple):
    """A node after template expansion."""

    name: str
    node: Node
    key: str
    """Where it was defined, for error messages: "nodes.s{i}"."""


class FlatLink(NamedTuple):
    """A link after template and duplex expansion (``link`` has the copy's from/to)."""

    name: str
    link: Link
    key: str
    """Where it was defined, for error messages: "links.s{i}-sw1"."""
    reverse: bool
    """The ``-rev`` link made by ``duplex = true``."""


class FlatVc(NamedTuple):
    """A VC after expansion: explicit ones, implicit ones of sources, then two per ATM flow."""

    name: str
    vc_class: str
    nodes: list[str]
    key: str
    """Where it was defined, for error messages: "vcs.v1", "sources.s" or "flows.tcp{i}"."""
    abr: Optional[Abr] = None
    """class "abr": the source end system's parameters."""


class FlatSource(NamedTuple):
    """A source after count expansion."""

    name: str
    vc: str
    source: Source
    key: str
    """Where it was defined, for error messages: "sources.s"."""


class FlatFlow(NamedTuple):
    """A TCP flow after template expansion, with its paths as link names."""

    name: str
    flow: Flow
    key: str
    """Where it was defined, for error messages: "flows.tcp{i}"."""
    layer: str
    """"atm" or "ip": the layer of every link of both paths."""
    data_links: list[str]
    ack_links: list[str]


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
    def _check_references(self) -> Scenario:
        """Build the expanded network (which checks every cross reference); resolve
        the class of ATM flows."""
        network = Network(self)
        for flat in network.flows:
            template = self.flows[flat.key.split(".", 1)[1]]
            if flat.layer == "atm" and template.class_ is None:
                template.class_ = "ubr"
        return self


def _substituted(entry: Any, i: Optional[int]) -> Any:
    """A copy of a template's table with {i} replaced by ``i`` in every string value."""
    if i is None:
        return entry
    text = str(i)
    changes: dict[str, Any] = {}
    for field in type(entry).model_fields:
        value = getattr(entry, field)
        if isinstance(value, str) and TEMPLATE in value:
            changes[field] = value.replace(TEMPLATE, text)
        elif isinstance(value, list) and any(isinstance(v, str) and TEMPLATE in v for v in value):
            changes[field] = [v.replace(TEMPLATE, text) if isinstance(v, str) else v for v in value]
    return entry.model_copy(update=changes) if changes else entry


def _check_name(section: str, name: str, template_ok: bool = True) -> None:
    plain = name.replace(TEMPLATE, "1") if template_ok else name
    if not NAME_PATTERN.match(plain):
        allowed = "letters, digits, _ and -" + (" (and {i} in a template)" if template_ok else "")
        raise _fail(f"{section}.{name}", f"names may only use {allowed}")


def _copies(section: str, name: str, entry: Any) -> list[tuple[str, Optional[int]]]:
    """The names a table stands for, with the value of {i} (None for a plain table).

    A name with {i} needs ``count``; ``count`` on a plain name is an error, except
    for sources, where ``count = N > 1`` makes ``<name>1`` .. ``<name>N``.
    """
    key = f"{section}.{name}"
    if TEMPLATE in name:
        if "count" not in entry.model_fields_set or entry.count is None:
            raise _fail(
                f"{key}.count", "required: a name with {i} is a template for count = N copies"
            )
        return [(name.replace(TEMPLATE, str(i)), i) for i in range(1, entry.count + 1)]
    if section == "sources":
        if entry.count == 1:
            return [(name, None)]
        return [(f"{name}{i}", None) for i in range(1, entry.count + 1)]
    if entry.count is not None:
        raise _fail(
            f"{key}.count",
            f'count makes copies of a template: put {{i}} in the name (e.g. "{name}{{i}}"), '
            "which is replaced by 1..count",
        )
    return [(name, None)]


def _in(copy: str, i: Optional[int]) -> str:
    """`` (in s3)`` for a copy of a template, so errors at the template key name the copy."""
    return "" if i is None else f" (in {copy})"


class Network:
    """The scenario as the core sees it: templates and duplex links expanded.

    Building it checks every cross reference (names, link endpoints, paths,
    layers, one source per VC, rates, probe names) and raises the scenario
    error at the key that causes the problem. Order (= core indices): nodes
    and links in file order, each template's copies in place and a duplex
    link's ``-rev`` right after it; VCs of ``[vcs]``, then of sources, then
    two per ATM flow (``<flow>``, ``<flow>-ack``); sources; flows.
    """

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.nodes: dict[str, FlatNode] = {}
        self.links: dict[str, FlatLink] = {}
        self.vcs: list[FlatVc] = []
        self.sources: list[FlatSource] = []
        self.flows: list[FlatFlow] = []
        self._pairs: dict[tuple[str, str], str] = {}
        self._made_by: dict[str, dict[str, str]] = {section: {} for section in SECTIONS}
        self._vc_links: dict[str, list[str]] = {}
        self._vc_back_links: dict[str, list[str]] = {}
        self._expand_nodes()
        self._expand_links()
        self._expand_vcs_and_sources()
        self._expand_flows()
        self._check_sources()
        self._check_probes()

    # -- names -------------------------------------------------------------------------

    def _claim(self, section: str, name: str, key: str, how: str) -> None:
        """Record that ``how`` makes ``name``; a name made twice is an error at ``key``."""
        made = self._made_by[section]
        if name in made:
            raise _fail(key, f'the name "{name}" is also made by {made[name]}')
        made[name] = how

    def _expand_nodes(self) -> None:
        for name, node in self.scenario.nodes.items():
            _check_name("nodes", name)
            key = f"nodes.{name}"
            for copy, _ in _copies("nodes", name, node):
                self._claim("nodes", copy, key, key)
                self.nodes[copy] = FlatNode(copy, node, key)

    def _expand_links(self) -> None:
        for name, link in self.scenario.links.items():
            _check_name("links", name)
            key = f"links.{name}"
            for copy, i in _copies("links", name, link):
                here = _substituted(link, i)
                for end, node in (("from", here.from_), ("to", here.to)):
                    if node not in self.nodes:
                        raise _fail(
                            f"{key}.{end}",
                            f'no node "{node}"{_in(copy, i)}; nodes: {_quoted(self.nodes)}',
                        )
                if here.from_ == here.to:
                    raise _fail(
                        f"{key}.to",
                        f'a link cannot end where it starts ("{here.to}"){_in(copy, i)}',
                    )
                self._add_link(FlatLink(copy, here, key, False), key, key)
                if here.duplex:
                    back = here.model_copy(update={"from_": here.to, "to": here.from_})
                    how = f"duplex = true on {key}"
                    self._add_link(FlatLink(f"{copy}-rev", back, key, True), f"{key}.duplex", how)

    def _add_link(self, flat: FlatLink, key: str, how: str) -> None:
        self._claim("links", flat.name, key, how)
        pair = (flat.link.from_, flat.link.to)
        if pair in self._pairs:
            other = self.links[self._pairs[pair]]
            made = f" (duplex = true on {other.key})" if other.reverse else ""
            what = f'"{flat.name}" would join' if flat.reverse else "joins"
            raise _fail(
                key,
                f'{what} "{pair[0]}" to "{pair[1]}", which link "{other.name}"{made} already '
                "joins; one link per direction",
            )
        self._pairs[pair] = flat.name
        self.links[flat.name] = flat

    # -- paths -------------------------------------------------------------------------

    def path_links(
        self,
        nodes: list[str],
        key: str,
        copy: str = "",
        i: Optional[int] = None,
        note: str = "",
        flow: bool = False,
    ) -> list[str]:
        """The link names joining consecutive ``nodes``; an error at ``key`` for a gap
        (suggesting ``duplex = true`` when the link exists the other way)."""
        links = []
        for n, node in enumerate(nodes):
            if node not in self.nodes:
                raise _fail(key, f'no node "{node}"{_in(copy, i)}; nodes: {_quoted(self.nodes)}')
            if n == 0:
                continue
            here = nodes[n - 1]
            name = self._pairs.get((here, node))
            if name is None:
                leaving = [
                    f"{flat.link.to} (links.{flat.name})"
                    for flat in self.links.values()
                    if flat.link.from_ == here
                ]
                back = self._pairs.get((node, here))
                if back is not None and not self.links[back].reverse:
                    hint = f"; set duplex = true on {self.links[back].key} to create it"
                elif flow:
                    hint = "; add one (duplex = true on a link also makes the way back)"
                else:
                    hint = ""
                raise _fail(
                    key,
                    f'no link from "{here}" to "{node}"{_in(copy, i)}{note}; links from "{here}" '
                    f"go to: {_quoted(leaving)}{hint}",
                )
            links.append(name)
        return links

    def _layer(self, links: list[str], key: str, copy: str, i: Optional[int]) -> str:
        """The one layer of all ``links``; a mix is an error at ``key``."""
        first = self.links[links[0]]
        for name in links[1:]:
            other = self.links[name]
            if other.link.layer != first.link.layer:
                raise _fail(
                    key,
                    f'mixes layers{_in(copy, i)}: link "{first.name}" is {first.link.layer} and '
                    f'"{other.name}" is {other.link.layer}; all links of a path must have the '
                    "same layer",
                )
        return first.link.layer

    # -- VCs, sources, flows -------------------------------------------------------------

    def _add_vc(
        self,
        vc: FlatVc,
        links: list[str],
        what: str = "",
        path_key: str = "",
        copy: str = "",
        i: Optional[int] = None,
    ) -> None:
        """Record a VC; an ABR VC also gets its backward RM path (``path_key``: the
        key of its path, for errors) and its parameters checked against its first link."""
        made = self._made_by["vcs"]
        if vc.name in made:
            raise _fail(vc.key, f'{what}VC name "{vc.name}" is also used by {made[vc.name]}')
        made[vc.name] = vc.key
        self._vc_links[vc.name] = links
        self.vcs.append(vc)
        if vc.vc_class != "abr" or vc.abr is None:
            return
        self._vc_back_links[vc.name] = self.path_links(
            list(reversed(vc.nodes)),
            path_key or f"{vc.key}.path",
            copy,
            i,
            ' for the backward RM cells (class = "abr" sends them back along the path in reverse)',
        )
        link_cps = self.links[links[0]].link.cell_rate_cps()
        problem = vc.abr.rate_problem(link_cps)
        if problem is not None:
            key, message = problem
            named = vc.key.startswith("flows.") or i is not None
            raise _fail(f"{vc.key}.abr.{key}", message + (f' (VC "{vc.name}")' if named else ""))

    def _vc_path(self, nodes: list[str], key: str, copy: str = "", i: Optional[int] = None):
        links = self.path_links(nodes, key, copy, i)
        for name in links:
            if self.links[name].link.layer != "atm":
                raise _fail(
                    key,
                    f'link "{name}" is an IP link (layer = "ip"){_in(copy, i)}; VCs and cell '
                    "sources run over ATM links",
                )
        return links

    def _expand_vcs_and_sources(self) -> None:
        for name, vc in self.scenario.vcs.items():
            _check_name("vcs", name, template_ok=False)
            key = f"vcs.{name}"
            links = self._vc_path(vc.path, f"{key}.path")
            self._add_vc(FlatVc(name, vc.class_, list(vc.path), key, vc.abr), links)
        for name, source in self.scenario.sources.items():
            _check_name("sources", name)
            key = f"sources.{name}"
            for copy, i in _copies("sources", name, source):
                here = _substituted(source, i)
                self._claim("sources", copy, key, key)
                if here.path is not None:
                    links = self._vc_path(here.path, f"{key}.path", copy, i)
                    flat = FlatVc(copy, here.class_ or "ubr", list(here.path), key, here.abr)
                    self._add_vc(flat, links, "", f"{key}.path", copy, i)
                    self.sources.append(FlatSource(copy, copy, here, key))
                else:
                    self.sources.append(FlatSource(copy, here.vc or "", here, key))

    def _expand_flows(self) -> None:
        for name, flow in self.scenario.flows.items():
            _check_name("flows", name)
            key = f"flows.{name}"
            for copy, i in _copies("flows", name, flow):
                here = _substituted(flow, i)
                self._claim("flows", copy, key, key)
                note = (
                    " for the ACKs (ack_path defaults to the reverse of path)"
                    if flow._ack_path_default
                    else ""
                )
                data = self.path_links(here.path, f"{key}.path", copy, i, flow=True)
                acks = self.path_links(
                    here.ack_path or [], f"{key}.ack_path", copy, i, note, flow=True
                )
                layer = self._layer(data, f"{key}.path", copy, i)
                ack_layer = self._layer(acks, f"{key}.ack_path", copy, i)
                if ack_layer != layer:
                    raise _fail(
                        f"{key}.ack_path",
                        f"the ACKs cross {ack_layer} links but the data {layer} links"
                        f"{_in(copy, i)}; both paths of a flow must have the same layer",
                    )
                if layer == "atm":
                    vc_class = here.class_ or "ubr"
                    what = f'flow "{copy}" makes VCs "{copy}" and "{copy}-ack", but '
                    data_vc = FlatVc(copy, vc_class, list(here.path), key, here.abr)
                    self._add_vc(data_vc, data, what, f"{key}.path", copy, i)
                    ack_nodes = list(here.ack_path or [])
                    ack_vc = FlatVc(f"{copy}-ack", vc_class, ack_nodes, key, here.abr)
                    self._add_vc(ack_vc, acks, what, f"{key}.ack_path", copy, i)
                elif here.class_ == "abr":
                    raise _fail(
                        f"{key}.class",
                        f"ABR is an ATM service; {copy} runs over IP links: remove class "
                        '(and abr), or use ATM links (layer = "atm")',
                    )
                elif here.class_ is not None:
                    raise _fail(
                        f"{key}.class",
                        f"is the class of an ATM flow's VCs; {copy} runs over IP links: remove it",
                    )
                self.flows.append(FlatFlow(copy, here, key, layer, data, acks))

    def _check_sources(self) -> None:
        used_by: dict[str, str] = {}
        flow_vcs = {vc.name for vc in self.vcs if vc.key.startswith("flows.")}
        for flat in self.sources:
            if flat.vc not in self._vc_links:
                raise _fail(
                    f"{flat.key}.vc", f'no VC "{flat.vc}"; vcs: {_quoted(self.scenario.vcs)}'
                )
            if flat.vc in used_by:
                raise _fail(
                    f"{flat.key}.vc",
                    f'VC "{flat.vc}" already has a source ({used_by[flat.vc]}); one source per VC',
                )
            if flat.vc in flow_vcs:
                raise _fail(f"{flat.key}.vc", f'VC "{flat.vc}" belongs to a TCP flow')
            used_by[flat.vc] = flat.key
            rate_key = flat.source.offered_rate_key()
            if rate_key is None:
                continue
            rate = getattr(flat.source, rate_key)
            link_name = self._vc_links[flat.vc][0]
            link_cps = self.links[link_name].link.cell_rate_cps()
            if parse_cell_rate_cps(rate) > link_cps * (1 + 1e-12):
                raise _fail(
                    f"{flat.key}.{rate_key}",
                    f'"{rate}" ({parse_cell_rate_cps(rate):.6g} cells/s) exceeds the '
                    f'cell rate of its first link "{link_name}" ({link_cps:.6g} cells/s)',
                )

    def _check_probes(self) -> None:
        probes = self.scenario.probes
        vcs = [vc.name for vc in self.vcs]
        for key, names, known in (
            ("queue", probes.queue, list(self.links)),
            ("utilization", probes.utilization, list(self.links)),
            ("vc_rate", probes.vc_rate, vcs),
            ("flows", probes.flows, [flow.name for flow in self.flows]),
            ("abr_vcs", probes.abr_vcs, self.abr_vcs()),
            ("abr_ports", probes.abr_ports, self.abr_ports()),
        ):
            if names == "all":
                continue
            for name in names:
                if name in known:
                    continue
                if key == "abr_vcs" and name in vcs:
                    problem = f'"{name}" is not an ABR VC (class = "abr")'
                elif key == "abr_ports" and name in self.links:
                    problem = f'link "{name}" has no switch algorithm'
                else:
                    problem = f'no "{name}"'
                raise _fail(f"probes.{key}", f"{problem}; choose from: {_quoted(known)}")

    def vc_links(self, name: str) -> list[str]:
        """The link names of a VC's path."""
        return self._vc_links[name]

    def vc_back_links(self, name: str) -> list[str]:
        """An ABR VC's backward RM path: the links joining its nodes in reverse."""
        return self._vc_back_links[name]

    def abr_vcs(self) -> list[str]:
        """Names of the ABR VCs, in core order."""
        return [vc.name for vc in self.vcs if vc.vc_class == "abr"]

    def abr_ports(self) -> list[str]:
        """Names of the links whose output port runs a switch algorithm."""
        return [name for name, flat in self.links.items() if flat.link.algorithm is not None]


def flatten(scenario: Scenario) -> tuple[list[FlatVc], list[FlatSource]]:
    """VCs and sources after expansion, in core order (see ``Network``).

    A source ``s`` with ``count = 3`` becomes ``s1``, ``s2``, ``s3``.
    """
    network = Network(scenario)
    return network.vcs, network.sources


# --- loading ------------------------------------------------------------------------------


def read_toml(path: str | Path) -> dict:
    """The TOML file as a dict; a missing file or a syntax error is a ScenarioError."""
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(file, None, "no such file") from None
    except IsADirectoryError:
        raise ScenarioError(file, None, "is a directory, expected a .toml file") from None
    except UnicodeDecodeError:
        raise ScenarioError(file, None, "not a UTF-8 text file") from None
    except OSError as error:
        raise ScenarioError(file, None, f"cannot read: {error.strerror}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ScenarioError(file, None, f"invalid TOML: {error}") from None


def parse_override_value(text: str) -> Any:
    """A --set value: a TOML value if it parses as one (500, true, ["a", "b"]), else the text."""
    try:
        return tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        return text.strip()


def apply_overrides(data: dict, overrides: list[str] | tuple[str, ...], file: str | None) -> None:
    """Apply ``key=value`` overrides (dotted keys into the TOML tables) to ``data`` in place.

    The table holding the key must exist, except a missing top-level section
    (e.g. ``probes``), which is created empty.
    """
    for item in overrides:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ScenarioError(file, None, f"--set: expected key=value, got {show_value(item)}")
        parts = key.split(".")
        if any(not part for part in parts):
            raise ScenarioError(file, key, "--set: empty name in the dotted key")
        table = data
        templated = "template" in data  # tables merge onto the expansion: create them
        for depth, part in enumerate(parts[:-1]):
            here = ".".join(parts[: depth + 1])
            if part not in table:
                if (depth == 0 and part in SECTIONS) or (templated and parts[0] != "template"):
                    table[part] = {}
                else:
                    where = ".".join(parts[:depth]) or "the file"
                    raise ScenarioError(
                        file,
                        key,
                        f'--set: no table "{here}" in the scenario; {where} has: {_quoted(table)}',
                    )
            table = table[part]
            if not isinstance(table, dict):
                raise ScenarioError(file, key, f'--set: "{here}" is a value, not a table')
        table[parts[-1]] = parse_override_value(text)


def validate_scenario(
    data: dict, file: str | None = None, overrides: list[str] | tuple[str, ...] = ()
) -> Scenario:
    """Validate a TOML dict into a resolved Scenario, or raise a ScenarioError.

    A dict with a ``[template]`` table is first expanded (python/atmsim/templates.py)
    and the other tables merged on top; the Scenario keeps that source form for
    ``resolved_toml``.
    """
    source = None
    try:
        if "template" in data:
            from .templates import expand

            data, expansion, source = expand(data, file)
        scenario = Scenario.model_validate(data)
    except ScenarioError as error:  # a bad [template] table
        raise _with_set_note(error, file, overrides) from None
    except ValidationError as validation_error:
        error = from_validation_error(validation_error, file)
        if source is not None:
            error = _with_template_note(error, file, expansion, source)
        raise _with_set_note(error, file, overrides) from None
    scenario._file = None if file is None else str(file)
    scenario._source = source
    return scenario


def _with_set_note(
    error: ScenarioError, file: str | None, overrides: list[str] | tuple[str, ...]
) -> ScenarioError:
    """The error, naming the --set that made the bad value."""
    for item in overrides:
        set_key = item.partition("=")[0].strip()
        if error.key and (error.key == set_key or error.key.startswith(set_key + ".")):
            return ScenarioError(file, error.key, f"{error.message} (from --set {item})")
    return error


def _with_template_note(
    error: ScenarioError, file: str | None, expansion: dict, source: dict
) -> ScenarioError:
    """The error of an expanded template, saying where the bad table came from."""
    parts = (error.key or "").split(".")
    kind = source["template"]["kind"]
    if len(parts) >= 2 and parts[0] in ("nodes", "links", "vcs", "sources", "flows"):
        section, name = parts[0], parts[1]
        made = expansion.get(section, {})
        if name not in made and name in source.get(section, {}):
            return ScenarioError(
                file,
                error.key,
                f"{error.message} (a table the template does not make; "
                f'[template] kind = "{kind}" makes {section}: {_quoted(made)})',
            )
        if name in made and name not in source.get(section, {}):
            return ScenarioError(
                file, error.key, f'{error.message} (made by [template] kind = "{kind}")'
            )
    return error


def load_scenario(path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> Scenario:
    """Load a scenario file, apply ``key=value`` overrides, validate and resolve defaults.

    Raises ScenarioError (one line: file, dotted key, what is allowed).
    """
    data = read_toml(path)
    apply_overrides(data, overrides, str(path))
    return validate_scenario(data, str(path), overrides)


# --- output: resolved TOML and the core JSON ---------------------------------------------


def scenario_dict(scenario: Scenario) -> dict:
    """The resolved scenario as a TOML-ready dict (no None values, aliases as keys).

    A scenario made from a ``[template]`` gives its source form: the template table
    with every parameter written out, and the tables merged on top as given.
    """
    if scenario._source is not None:
        return deepcopy(scenario._source)
    return scenario.model_dump(by_alias=True, exclude_none=True)


def expanded_dict(scenario: Scenario) -> dict:
    """The scenario in the general form (a template expanded, every default written out)."""
    return scenario.model_dump(by_alias=True, exclude_none=True)


def resolved_toml(scenario: Scenario) -> str:
    """The scenario with every default filled in, as TOML that loads back to the same run.

    Templates and ``count`` are kept (not expanded), and so are ``"auto"`` values. A
    scenario made from a ``[template]`` is written as that table (every parameter)
    followed by the tables that override its expansion.
    """
    header = "# Resolved by atmsim: every default is written out.\n"
    if scenario._source is not None:
        kind = scenario._source["template"]["kind"]
        header += (
            f'# [template] kind = "{kind}" expands into nodes, links, flows or sources and\n'
            "# probes (docs/scenarios.md); the tables after it are merged on top of that\n"
            "# expansion, key by key.\n"
        )
    return header + "\n" + tomli_w.dumps(scenario_dict(scenario))


def _policy_json(policy: Policy) -> dict:
    if policy.kind == "tail":
        return {"kind": "tail"}
    if policy.kind == "ppd":
        return {"kind": "ppd", "keep_eom": policy.keep_eom}
    if policy.kind == "red":
        return {
            "kind": "red",
            "min_th": red_threshold(policy.min_th),
            "max_th": red_threshold(policy.max_th),
            "w_q": float(policy.w_q or RED_W_Q),
            "max_p": float(policy.max_p or RED_MAX_P),
        }
    return {"kind": policy.kind, "threshold": policy.threshold}


def _link_json(flat: FlatLink, node_index: dict[str, int]) -> dict:
    """A link of the core JSON; ATM links keep the fields of the first interface."""
    link = flat.link
    entry: dict[str, Any] = {"name": flat.name}
    if link.layer == "ip":
        entry["layer"] = "ip"
    entry.update(
        {
            "from": node_index[link.from_],
            "to": node_index[link.to],
            "bit_rate_bps": link.bit_rate_bps(),
            "cell_rate_cps": link.cell_rate_cps(),
            "delay_ps": link.delay_ps(),
            "buffer_cells": link.buffer_cells(),
        }
    )
    if link.layer == "ip":
        entry["buffer_packets"] = link.buffer_packets()
        entry["buffer_bytes"] = link.buffer_bytes()
    entry["policy"] = _policy_json(link.policy)
    if link.algorithm is not None:
        entry["algorithm"] = _algorithm_json(link.algorithm)
    return entry


def _algorithm_json(algorithm: Algorithm) -> dict:
    """A port's switch algorithm in the core JSON (docs/core-interface.md, "ABR")."""
    kind = algorithm.kind
    if kind == "efci":
        return {"kind": kind, "high_cells": algorithm.high, "low_cells": algorithm.low}
    entry: dict[str, Any] = {"kind": kind}
    if kind == "erica":
        entry["target_utilization"] = float(algorithm.target_utilization or 0)
    entry["interval_ps"] = parse_time_ps(algorithm.interval or "0 s")
    entry["interval_cells"] = algorithm.interval_cells
    if kind == "fmmra":
        return entry
    entry.update(
        {
            "delta": float(algorithm.delta or 0),
            "measured_rate": bool(algorithm.measured_rate),
            "bidirectional_count": bool(algorithm.bidirectional_count),
        }
    )
    if kind == "erica_plus":
        entry.update(
            {
                "t0_ps": parse_time_ps(algorithm.t0 or "0 s"),
                "a": float(algorithm.a or 0),
                "b": float(algorithm.b or 0),
                "qdlf": float(algorithm.qdlf or 0),
            }
        )
    return entry


def _vc_json(vc: FlatVc, network: Network, link_index: dict[str, int]) -> dict[str, Any]:
    """A VC of the core JSON; an ABR VC adds its backward path and SES parameters."""
    links = network.vc_links(vc.name)
    entry: dict[str, Any] = {
        "name": vc.name,
        "class": vc.vc_class,
        "links": [link_index[n] for n in links],
    }
    if vc.vc_class == "abr" and vc.abr is not None:
        entry["back_links"] = [link_index[n] for n in network.vc_back_links(vc.name)]
        entry["abr"] = vc.abr.core_json(network.links[links[0]].link.cell_rate_cps())
    return entry


def _model_json(source: Source) -> dict:
    """The ``model`` of a source in the core JSON (rates in cells/s, times in ps)."""
    kind = source.kind
    if kind == "greedy":
        return {"kind": "greedy"}
    if kind in ("cbr", "poisson"):
        return {"kind": kind, "rate_cps": parse_cell_rate_cps(source.rate)}
    if kind == "vbr_onoff":
        return {
            "kind": kind,
            "peak_cps": parse_cell_rate_cps(source.peak),
            "on_ps": parse_time_ps(source.on),
            "off_ps": parse_time_ps(source.off),
            "distribution": source.distribution,
        }
    if kind == "geometric_onoff":
        return {
            "kind": kind,
            "peak_cps": parse_cell_rate_cps(source.peak),
            "mean_cps": parse_cell_rate_cps(source.mean),
            "mean_burst_cells": float(source.mean_burst),
        }
    if isinstance(source.frame_cells, list):
        frame_cells = {"uniform": list(source.frame_cells)}
    else:
        frame_cells = {"fixed": source.frame_cells}
    return {
        "kind": "frames",
        "frame_cells": frame_cells,
        "rate_cps": parse_cell_rate_cps(source.rate),
        "arrivals": source.arrivals,
    }


def _flow_json(flat: FlatFlow, vc_index: dict[str, int], link_index: dict[str, int]) -> dict:
    """A flow of the core JSON (docs/core-interface.md, "TCP and IP")."""
    flow = flat.flow
    atm = flat.layer == "atm"
    tick_ps = flow.tick_ps()
    return {
        "name": flat.name,
        "layer": flat.layer,
        "data_vc": vc_index[flat.name] if atm else None,
        "ack_vc": vc_index[f"{flat.name}-ack"] if atm else None,
        "data_links": [] if atm else [link_index[n] for n in flat.data_links],
        "ack_links": [] if atm else [link_index[n] for n in flat.ack_links],
        "variant": flow.variant.replace("-", "_"),
        "mss_bytes": flow.mss,
        "rcv_window_bytes": flow.window_bytes(),
        "window_scale": flow.window_shift(),
        "initial_cwnd_segments": flow.initial_cwnd,
        "initial_ssthresh_bytes": (
            None if flow.initial_ssthresh == "auto" else parse_size_bytes(flow.initial_ssthresh)
        ),
        "timer": {"kind": "fine"} if tick_ps is None else {"kind": "coarse", "tick_ps": tick_ps},
        "initial_rto_ps": parse_time_ps(flow.initial_rto),
        "min_rto_ps": flow.min_rto_ps(),
        "max_rto_ps": parse_time_ps(flow.max_rto),
        "delayed_ack_ps": parse_time_ps(flow.delayed_ack),
        "processing_ps": parse_time_ps(flow.processing),
        "processing_jitter_ps": parse_time_ps(flow.processing_jitter),
        "start_ps": parse_time_ps(flow.start),
        "app_bytes": None if flow.transfer is None else parse_size_bytes(flow.transfer),
        "max_sack_blocks": flow.max_sack_blocks,
    }


def to_core(scenario: Scenario) -> dict:
    """The core JSON of docs/core-interface.md: indices, picoseconds, cells/s, bytes.

    The keys of issue 3 (``layer`` and the packet buffers of a link, ``flows``,
    ``probes.flows``) are written only for IP links and for scenarios with
    flows, and those of issue 4 (``algorithm`` of a link, ``back_links`` and
    ``abr`` of a VC, ``probes.abr_vcs`` and ``probes.abr_ports``) only for
    ports with an algorithm, ABR VCs and scenarios with either: a scenario
    without them gives the same JSON as before them.
    """
    network = Network(scenario)
    node_index = {name: i for i, name in enumerate(network.nodes)}
    link_index = {name: i for i, name in enumerate(network.links)}
    vc_index = {vc.name: i for i, vc in enumerate(network.vcs)}
    flow_index = {flow.name: i for i, flow in enumerate(network.flows)}

    def indices(names: Any, index: dict[str, int]) -> list[int]:
        return list(index.values()) if names == "all" else [index[name] for name in names]

    probes = scenario.probes
    core: dict[str, Any] = {
        "duration_ps": parse_time_ps(scenario.run.duration),
        "seed": scenario.run.seed,
        "nodes": [{"name": flat.name, "kind": flat.node.kind} for flat in network.nodes.values()],
        "links": [_link_json(flat, node_index) for flat in network.links.values()],
        "vcs": [_vc_json(vc, network, link_index) for vc in network.vcs],
        "sources": [
            {
                "name": flat.name,
                "vc": vc_index[flat.vc],
                "start_ps": parse_time_ps(flat.source.start),
                "stop_ps": None if flat.source.stop is None else parse_time_ps(flat.source.stop),
                "model": _model_json(flat.source),
            }
            for flat in network.sources
        ],
        "probes": {
            "period_ps": 0 if probes.period is None else parse_time_ps(probes.period),
            "queue": indices(probes.queue, link_index),
            "utilization": indices(probes.utilization, link_index),
            "vc_rate": indices(probes.vc_rate, vc_index),
        },
    }
    if network.flows:
        core["flows"] = [_flow_json(flat, vc_index, link_index) for flat in network.flows]
        core["probes"]["flows"] = indices(probes.flows, flow_index)
    abr_vcs = {name: vc_index[name] for name in network.abr_vcs()}
    abr_ports = {name: link_index[name] for name in network.abr_ports()}
    if abr_vcs or abr_ports:
        core["probes"]["abr_vcs"] = indices(probes.abr_vcs, abr_vcs)
        core["probes"]["abr_ports"] = indices(probes.abr_ports, abr_ports)
    return core
