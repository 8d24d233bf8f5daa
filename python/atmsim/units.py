"""Quantities with their units written out, as scenario files spell them.

Every parser takes a string such as ``"30 s"`` or ``"155.52 Mbps"`` and returns a
number in the canonical unit of the core (see docs/core-interface.md):

- time: integer picoseconds (``parse_time_ps``),
- bit rate: float bit/s, cell rate: float cells/s (``parse_bit_rate_bps``,
  ``parse_cell_rate_cps``; one cell is 53 bytes = 424 bits on the wire),
- length: float km (``parse_length_km``), turned into a propagation delay of
  5 us/km by ``propagation_delay_ps``,
- size: integer bytes (``parse_size_bytes``); ``KB`` means 1024 bytes, as in
  the papers' "64 kB windows".

A string that does not parse raises ``ValueError`` with a one-line message that
says what is allowed, e.g. ``expected a time like "30 s" (units: ps, ns, us, ms, s), got
"fast"``. Negative quantities are rejected.
"""

from __future__ import annotations

import functools
import re
from decimal import (
    MAX_EMAX,
    MIN_EMIN,
    Context,
    Decimal,
    DivisionByZero,
    InvalidOperation,
    localcontext,
)

from .errors import show_value

CELL_BITS = 424
"""Bits of one ATM cell on the wire (53 bytes)."""

PAYLOAD_BITS = 384
"""Bits of one ATM cell's payload (48 bytes): GFR buffer management (Goyal et al., 1998) gives its
MCRs in Mbps of cell payload (12 kcells/s = 4.61 Mbps)."""

PROPAGATION_PS_PER_KM = 5_000_000
"""Propagation delay of a link: 5 us per km, in picoseconds per km."""

MAX_TIME_PS = 10**18
"""Largest time anywhere in a scenario: 10^6 s (about 11.6 days) in picoseconds. The core
counts picoseconds in 64 bits (at most 1.8e19), so a sum of a few times cannot overflow."""

MAX_TIME_TEXT = "1000000 s"
"""MAX_TIME_PS as a scenario file writes it."""

MAX_SIZE_BYTES = 2**53
"""Largest size anywhere in a scenario (8 PiB): every byte count is exact in a float64."""

# Units and their size in the canonical unit.
TIME_UNITS_PS = {
    "ps": 1,
    "ns": 10**3,
    "us": 10**6,
    "\u00b5s": 10**6,  # micro sign
    "\u03bcs": 10**6,  # Greek small letter mu
    "ms": 10**9,
    "s": 10**12,
}
BIT_RATE_UNITS_BPS = {"bps": 1, "kbps": 10**3, "Mbps": 10**6, "Gbps": 10**9, "Tbps": 10**12}
"""Up to Tbps: a line rate may be as high as 1 Tbps (``scenario.limits.LINK_RATE_BPS``)."""
LENGTH_UNITS_KM = {"m": Decimal("0.001"), "km": Decimal(1)}
SIZE_UNITS_BYTES = {
    "B": 1,
    "bytes": 1,
    "KB": 2**10,
    "kB": 2**10,  # as the papers write it ("64 kB windows"): 1024 bytes too
    "KiB": 2**10,
    "MB": 2**20,
    "MiB": 2**20,
    "GB": 2**30,
    "GiB": 2**30,
}
"""Sizes are binary: KB = KiB = 1024 bytes, MB = MiB = 2^20, GB = GiB = 2^30."""

TIME_HELP = 'a time like "30 s" (units: ps, ns, us, ms, s)'
RATE_HELP = 'a rate like "155.52 Mbps" (units: bps, kbps, Mbps, Gbps, Tbps, cells/s)'
LENGTH_HELP = 'a length like "1000 km" (units: m, km)'
SIZE_HELP = (
    'a size like "64 KB" or a whole number of bytes (units: B, bytes, KB = KiB = 1024 B, '
    "MB = MiB, GB = GiB)"
)

_QUANTITY = re.compile(
    r"^\s*(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
    r"\s*(?P<unit>\S+)\s*$"
)


_ARITHMETIC = Context(
    prec=28, Emax=MAX_EMAX, Emin=MIN_EMIN, traps=[InvalidOperation, DivisionByZero]
)
"""Quantities are computed in Decimal with 28 digits (the default) and no exponent limit, so that
"1e999999 s" is a number too large (reported as such) and never an overflow."""


def _split(text: object, units: dict, help_text: str) -> tuple[Decimal, str]:
    """Split ``"<number> <unit>"`` into a non-negative Decimal and a known unit."""
    match = _QUANTITY.match(text) if isinstance(text, str) else None
    if match is None or match.group("unit") not in units:
        raise ValueError(f"expected {help_text}, got {show_value(text)}")
    try:
        number = Decimal(match.group("number"))
    except InvalidOperation:
        raise ValueError(f"expected {help_text}, got {show_value(text)}") from None
    if number < 0:
        raise ValueError(f"must not be negative: expected {help_text}, got {show_value(text)}")
    return number, match.group("unit")


def parse_time_ps(text: str) -> int:
    """Parse a time such as ``"100 ms"`` or ``"5 µs"`` into integer picoseconds.

    The value must be a whole number of picoseconds ("0.5 ps" is rejected) and at
    most 10^6 s.
    """
    if type(text) is str:
        return _time_ps(text)
    _split(text, TIME_UNITS_PS, TIME_HELP)  # raises: not a string
    raise AssertionError("unreachable")


@functools.lru_cache(maxsize=4096)
def _time_ps(text: str) -> int:
    number, unit = _split(text, TIME_UNITS_PS, TIME_HELP)
    with localcontext(_ARITHMETIC):
        ps = number * TIME_UNITS_PS[unit]
        if ps > MAX_TIME_PS:
            raise ValueError(f"must be at most {MAX_TIME_TEXT}, got {show_value(text)}")
        if ps != ps.to_integral_value():
            raise ValueError(f"must be a whole number of picoseconds, got {show_value(text)}")
    return int(ps)


def parse_bit_rate_bps(text: str) -> float:
    """Parse a rate into bit/s. A rate in cells/s counts 424 bits per cell."""
    return _rate(text)[0]


def parse_cell_rate_cps(text: str) -> float:
    """Parse a rate into cells/s: ``"366792 cells/s"`` as written, bit rates / 424."""
    return _rate(text)[1]


def _rate(text: object) -> tuple[float, float]:
    """(bit/s, cells/s) of a rate; a huge rate is inf, a tiny one 0 (ranges reject both)."""
    if type(text) is str:
        return _rate_cached(text)
    _split(text, {}, RATE_HELP)  # raises: not a string
    raise AssertionError("unreachable")


@functools.lru_cache(maxsize=4096)
def _rate_cached(text: str) -> tuple[float, float]:
    number, unit = _split(text, {**BIT_RATE_UNITS_BPS, "cells/s": None}, RATE_HELP)
    with localcontext(_ARITHMETIC):
        if unit == "cells/s":
            return float(number * CELL_BITS), float(number)
        bps = number * BIT_RATE_UNITS_BPS[unit]
        return float(bps), float(bps / CELL_BITS)


def parse_length_km(text: str) -> float:
    """Parse a length such as ``"1000 km"`` or ``"50 m"`` into km (a huge one is inf)."""
    if type(text) is str:
        return _length_km(text)
    _split(text, LENGTH_UNITS_KM, LENGTH_HELP)  # raises: not a string
    raise AssertionError("unreachable")


@functools.lru_cache(maxsize=4096)
def _length_km(text: str) -> float:
    number, unit = _split(text, LENGTH_UNITS_KM, LENGTH_HELP)
    with localcontext(_ARITHMETIC):
        return float(number * LENGTH_UNITS_KM[unit])


def parse_size_bytes(value: int | str) -> int:
    """Parse a size into whole bytes: a plain integer is bytes, ``"64 KB"`` is 65536.

    KB = KiB = 1024 bytes, MB = MiB = 2^20, GB = GiB = 2^30 (binary, as the
    papers count windows). The result must be a whole number of bytes, at most 2^53.
    """
    if type(value) is int:
        if value < 0:
            raise ValueError(f"must not be negative: expected {SIZE_HELP}, got {show_value(value)}")
        if value > MAX_SIZE_BYTES:
            raise ValueError(f"must be at most 2^53 bytes (8 PiB), got {show_value(value)}")
        return value
    if type(value) is str:
        return _size_bytes(value)
    _split(value, SIZE_UNITS_BYTES, SIZE_HELP)  # raises: not a string
    raise AssertionError("unreachable")


@functools.lru_cache(maxsize=4096)
def _size_bytes(text: str) -> int:
    number, unit = _split(text, SIZE_UNITS_BYTES, SIZE_HELP)
    with localcontext(_ARITHMETIC):
        size = number * SIZE_UNITS_BYTES[unit]
        if size > MAX_SIZE_BYTES:
            raise ValueError(f"must be at most 2^53 bytes (8 PiB), got {show_value(text)}")
        if size != size.to_integral_value():
            raise ValueError(f"must be a whole number of bytes, got {show_value(text)}")
    return int(size)


def propagation_delay_ps(length_km: float) -> int:
    """Propagation delay of a link of ``length_km`` km at 5 us/km, rounded to 1 ps."""
    return round(length_km * PROPAGATION_PS_PER_KM)


def sonet_payload_bps(line_rate_bps: float) -> float:
    """Bit rate left for cells on a SONET (STS-3c) link: 155.52 Mbps -> 149.76 Mbps.

    The payload fraction 149.76/155.52 is exactly 26/27.
    """
    return line_rate_bps * 26 / 27


def bps_to_cps(bit_rate_bps: float) -> float:
    """Cells/s carried by a bit rate (424 bits per cell)."""
    return bit_rate_bps / CELL_BITS
