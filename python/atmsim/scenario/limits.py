"""The allowed range of every value of a scenario, and the checks that enforce them.

The Python validation and the Rust core's ``Scenario::check`` enforce the same
ranges (docs/scenarios.md, "Allowed ranges", lists them per key): nothing a
scenario file can say makes a time, a count or a size wrap or overflow in the
core. Times lie in [0, 10^6 s] everywhere (``units.MAX_TIME_PS``), sizes in
[0, 2^53 bytes] (``units.MAX_SIZE_BYTES``); the constants below are the tighter
ranges of particular keys. Those the core shares (counts, sizes, rates and
times) are read from the core's schema (``core_schema.core_range``, and
``core_time_range`` for a time, written in the scenario's units), not restated.

The checks are annotated types for the table models (``whole``, ``number``,
``time_in``) and functions for the checks that need other keys (``check_time``,
``check_rate``). Every failure is a ``ValueError`` (or a scenario error at the
key) whose message states the range, e.g. ``must be from 1 kbps to 1 Tbps, got
"0.001 bps"``.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Optional

from pydantic import BeforeValidator, Field

from ..errors import show_value
from ..units import (
    CELL_BITS,
    MAX_SIZE_BYTES,
    MAX_TIME_TEXT,
    parse_bit_rate_bps,
    parse_time_ps,
)
from .core_schema import core_range, core_time_range

MAX_COUNT = 100_000
"""``count`` of any table and the size parameters of templates (``n``)."""

MAX_EXPANDED = core_range("nodes").hi
"""Nodes, links, VCs, sources and flows of the expanded network, each."""

MAX_PATH_LINKS = core_range("VcSpec.links").hi
"""Links of a VC's or an IP flow's path: the core counts hops in 8 bits."""

LINK_RATE_BPS = core_range("LinkSpec.bit_rate_bps")[:2]
"""Line rates, ATM and IP: 1 kbps to 1 Tbps."""
LINK_RATE_TEXT = ("1 kbps", "1 Tbps")

MAX_LINK_DELAY = core_time_range("LinkSpec.delay_ps")[1]
"""Propagation delay of a link (and so a length of at most 2e8 km at 5 us/km)."""
MAX_LINK_KM = 2e8

MIN_SOURCE_CPS = core_range("SourceModel[cbr].rate_cps").lo
"""Least rate of a source (rate, peak, mean): gaps of at most 1000 s between cells."""

MAX_ATM_BUFFER_CELLS = core_range("LinkSpec.buffer_cells").hi
"""The core keeps ATM buffers in 32 bits; 2^32 - 1 means unlimited ("inf")."""
MAX_IP_BUFFER_PACKETS = core_range("LinkSpec.buffer_packets").hi

MAX_FRAME_CELLS = core_range("FrameSize.fixed").hi
"""Cells per AAL5 frame of a frames source (16 bits in the core)."""

MAX_MEAN_BURST_CELLS = core_range("SourceModel[geometric_onoff].mean_burst_cells").hi

MAX_INTERVAL_CELLS = core_range("AlgorithmSpec[erica].interval_cells").hi
"""ERICA, ERICA+, FMMRA: the averaging interval's cell bound."""

MAX_EFCI_CELLS = core_range("AlgorithmSpec[efci].high_cells").hi

INTERVAL_RANGE = core_time_range("AlgorithmSpec[erica].interval_ps")
"""ERICA, ERICA+, FMMRA averaging interval and ERICA+'s T0."""

ABR_NRM = core_range("AbrParams.nrm")[:2]
"""TM 4.0: Nrm is a power of two from 2 to 256; any whole number in that range here."""
ABR_MAX_CRM = core_range("AbrParams.crm").hi
"""TM 4.0: TBE is a 24-bit field; CRM = ceil(TBE / Nrm) at most as large."""
ABR_TRM = core_time_range("AbrParams.trm_ps")
ABR_ADTF = core_time_range("AbrParams.adtf_ps")
"""TM 4.0: ADTF from 0.01 s to 10.23 s in steps of 10 ms (any time in that range here)."""

TCP_MAX_CWND_SEGMENTS = core_range("FlowSpec.initial_cwnd_segments").hi
TCP_TICK = core_time_range("TimerMode[coarse].tick_ps")
"""A coarse TCP timer's tick."""
TCP_MAX_RECEIVER_TIME = core_time_range("FlowSpec.delayed_ack_ps")[1]
"""delayed_ack, processing and processing_jitter."""

PROBE_PERIOD = core_time_range("ProbeSpec.period_ps")

MAX_SEED = core_range("seed").hi


def _range_text(lo: str, hi: str, lo_open: bool = False) -> str:
    """ "from lo to hi", or "> lo and at most hi" when lo itself is excluded."""
    return f"> {lo} and at most {hi}" if lo_open else f"from {lo} to {hi}"


def int_range_text(lo: int, hi: int) -> str:
    return f"a whole number from {_int(lo)} to {_int(hi)}"


def _int(n: int) -> str:
    """Large limits as they are usually written: 2^53, 2^32 - 2, ..."""
    names = {
        MAX_SIZE_BYTES: "2^53",
        MAX_ATM_BUFFER_CELLS: "4294967294 (2^32 - 2)",
        MAX_IP_BUFFER_PACKETS: "4294967295 (2^32 - 1)",
        ABR_MAX_CRM: "16777215 (2^24 - 1)",
        MAX_SEED: "18446744073709551615 (2^64 - 1)",
    }
    return names.get(n, str(n))


def whole(lo: int, hi: int, unit: str = "") -> Any:
    """An integer field that must lie in [lo, hi]: ``count: whole(1, MAX_COUNT)``.

    A float (``5.0``, ``1e30``), a bool or a string is refused with the range, so that
    the core never sees a fraction or a number too large for its integer fields.
    """
    suffix = f" {unit}" if unit else ""

    def check(value: Any) -> int:
        if type(value) is not int or not lo <= value <= hi:
            raise ValueError(f"expected {int_range_text(lo, hi)}{suffix}, got {show_value(value)}")
        return value

    return Annotated[int, BeforeValidator(check)]


def number(
    lo: float, hi: float, lo_open: bool = False, hi_open: bool = False, unit: str = ""
) -> Any:
    """A float field (an integer is taken too) that must lie between lo and hi."""
    low = f"> {lo:g}" if lo_open else f">= {lo:g}"
    high = f"< {hi:g}" if hi_open else f"<= {hi:g}"
    suffix = f" {unit}" if unit else ""
    allowed = f"expected a number {low} and {high}{suffix}"

    def check(value: Any) -> float:
        if type(value) not in (int, float):
            raise ValueError(f"{allowed}, got {show_value(value)}")
        x = float(value) if type(value) is float or abs(value) < 2**1000 else math.inf
        if not (
            math.isfinite(x)
            and (lo < x if lo_open else lo <= x)
            and (x < hi if hi_open else x <= hi)
        ):
            raise ValueError(f"{allowed}, got {show_value(value)}")
        return x

    return Annotated[float, BeforeValidator(check)]


def check_time(value: Any, lo: str, hi: str, lo_open: bool = False) -> int:
    """The time ``value`` in ps, or ValueError if it is not a time in [lo, hi]."""
    ps = parse_time_ps(value)
    lo_ps, hi_ps = parse_time_ps(lo), parse_time_ps(hi)
    if ps > hi_ps or ps < lo_ps or (lo_open and ps == lo_ps):
        raise ValueError(f"must be {_range_text(lo, hi, lo_open)}, got {show_value(value)}")
    return ps


def time_in(lo: str, hi: str = MAX_TIME_TEXT, lo_open: bool = False) -> Any:
    """A time field (kept as written) that must lie in [lo, hi]; (lo, hi] with lo_open."""

    def check(value: Any) -> str:
        check_time(value, lo, hi, lo_open)
        return value.strip()

    return Annotated[str, BeforeValidator(check)]


def check_link_rate(value: str) -> Optional[str]:
    """The problem with a link's line rate, or None."""
    bps = parse_bit_rate_bps(value)
    if not LINK_RATE_BPS[0] <= bps <= LINK_RATE_BPS[1]:
        return f"must be {_range_text(*LINK_RATE_TEXT)}, got {show_value(value)}"
    return None


def cells_text(cps: float) -> str:
    """A cell rate for a message: "366792 cells/s (155.52 Mbps)"."""
    return f"{cps:.6g} cells/s ({cps * CELL_BITS / 1e6:.6g} Mbps)"


def _check_path(value: Any) -> Any:
    if isinstance(value, list) and len(value) > MAX_PATH_LINKS + 1:
        raise ValueError(
            f"a path has at most {MAX_PATH_LINKS + 1} nodes ({MAX_PATH_LINKS} links: the core "
            f"counts hops in 8 bits), got {len(value)} nodes"
        )
    return value


NodePath = Annotated[list[str], BeforeValidator(_check_path), Field(min_length=2)]
"""A path of node names: 2 to 256 nodes (1 to 255 links)."""


def core_whole(where: str, unit: str = "") -> Any:
    """An integer field with the core's range of the value at ``where`` (``core_schema``)."""
    lo, hi, _ = core_range(where)
    return whole(lo, hi, unit)


def core_number(where: str, unit: str = "") -> Any:
    """A float field with the core's range of the value at ``where`` (``core_schema``)."""
    lo, hi, lo_open = core_range(where)
    return number(lo, hi, lo_open=lo_open, unit=unit)
