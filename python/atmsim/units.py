"""Quantities with their units written out, as scenario files spell them.

Every parser takes a string such as ``"30 s"`` or ``"155.52 Mbps"`` and returns a
number in the canonical unit of the core (see docs/core-interface.md):

- time: integer picoseconds (``parse_time_ps``),
- bit rate: float bit/s, cell rate: float cells/s (``parse_bit_rate_bps``,
  ``parse_cell_rate_cps``; one cell is 53 bytes = 424 bits on the wire),
- length: float km (``parse_length_km``), turned into a propagation delay of
  5 us/km by ``propagation_delay_ps``,
- size: integer bytes (``parse_size_bytes``); ``KB`` means 1024 bytes, as in
  the seeds' "64 kB windows".

A string that does not parse raises ``ValueError`` with a one-line message that
says what is allowed, e.g. ``expected a time like "30 s" (units: ps, ns, us, ms, s), got
"fast"``. Negative quantities are rejected.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

CELL_BITS = 424
"""Bits of one ATM cell on the wire (53 bytes)."""

PROPAGATION_PS_PER_KM = 5_000_000
"""Propagation delay of a link: 5 us per km, in picoseconds per km."""

MAX_TIME_PS = 2**63 - 1
"""Largest time the core can represent (about 106 days)."""

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
BIT_RATE_UNITS_BPS = {"bps": 1, "kbps": 10**3, "Mbps": 10**6, "Gbps": 10**9}
LENGTH_UNITS_KM = {"m": Decimal("0.001"), "km": Decimal(1)}
SIZE_UNITS_BYTES = {
    "B": 1,
    "bytes": 1,
    "KB": 2**10,
    "kB": 2**10,  # as the seeds write it ("64 kB windows"): 1024 bytes too
    "KiB": 2**10,
    "MB": 2**20,
    "MiB": 2**20,
    "GB": 2**30,
    "GiB": 2**30,
}
"""Sizes are binary: KB = KiB = 1024 bytes, MB = MiB = 2^20, GB = GiB = 2^30."""

TIME_HELP = 'a time like "30 s" (units: ps, ns, us, ms, s)'
RATE_HELP = 'a rate like "155.52 Mbps" (units: bps, kbps, Mbps, Gbps, cells/s)'
LENGTH_HELP = 'a length like "1000 km" (units: m, km)'
SIZE_HELP = (
    'a size like "64 KB" or a whole number of bytes (units: B, bytes, KB = KiB = 1024 B, '
    "MB = MiB, GB = GiB)"
)

_QUANTITY = re.compile(
    r"^\s*(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
    r"\s*(?P<unit>\S+)\s*$"
)


def _show(value: object) -> str:
    """The offending input, quoted and on one line, for an error message."""
    if isinstance(value, str):
        text = '"' + value.replace("\n", " ") + '"'
    else:
        text = repr(value).replace("\n", " ")
    return text if len(text) <= 60 else text[:57] + "..."


def _split(text: object, units: dict, help_text: str) -> tuple[Decimal, str]:
    """Split ``"<number> <unit>"`` into a non-negative Decimal and a known unit."""
    problem = f"expected {help_text}, got {_show(text)}"
    if not isinstance(text, str):
        raise ValueError(problem)
    match = _QUANTITY.match(text)
    if match is None or match.group("unit") not in units:
        raise ValueError(problem)
    try:
        number = Decimal(match.group("number"))
    except InvalidOperation:
        raise ValueError(problem) from None
    if number < 0:
        raise ValueError(f"must not be negative: expected {help_text}, got {_show(text)}")
    return number, match.group("unit")


def parse_time_ps(text: str) -> int:
    """Parse a time such as ``"100 ms"`` or ``"5 µs"`` into integer picoseconds.

    The value must be a whole number of picoseconds ("0.5 ps" is rejected).
    """
    number, unit = _split(text, TIME_UNITS_PS, TIME_HELP)
    ps = number * TIME_UNITS_PS[unit]
    if ps != ps.to_integral_value():
        raise ValueError(f"must be a whole number of picoseconds, got {_show(text)}")
    if ps > MAX_TIME_PS:
        raise ValueError(f"too large: at most about 106 days, got {_show(text)}")
    return int(ps)


def parse_bit_rate_bps(text: str) -> float:
    """Parse a rate into bit/s. A rate in cells/s counts 424 bits per cell."""
    number, unit = _split(text, {**BIT_RATE_UNITS_BPS, "cells/s": None}, RATE_HELP)
    if unit == "cells/s":
        return float(number * CELL_BITS)
    return float(number * BIT_RATE_UNITS_BPS[unit])


def parse_cell_rate_cps(text: str) -> float:
    """Parse a rate into cells/s: ``"366792 cells/s"`` as written, bit rates / 424."""
    number, unit = _split(text, {**BIT_RATE_UNITS_BPS, "cells/s": None}, RATE_HELP)
    if unit == "cells/s":
        return float(number)
    return float(number * BIT_RATE_UNITS_BPS[unit] / CELL_BITS)


def parse_length_km(text: str) -> float:
    """Parse a length such as ``"1000 km"`` or ``"50 m"`` into km."""
    number, unit = _split(text, LENGTH_UNITS_KM, LENGTH_HELP)
    return float(number * LENGTH_UNITS_KM[unit])


def parse_size_bytes(value: int | str) -> int:
    """Parse a size into whole bytes: a plain integer is bytes, ``"64 KB"`` is 65536.

    KB = KiB = 1024 bytes, MB = MiB = 2^20, GB = GiB = 2^30 (binary, as the
    seeds count windows). The result must be a whole number of bytes.
    """
    if type(value) is int:
        if value < 0:
            raise ValueError(f"must not be negative: expected {SIZE_HELP}, got {value}")
        return value
    number, unit = _split(value, SIZE_UNITS_BYTES, SIZE_HELP)
    size = number * SIZE_UNITS_BYTES[unit]
    if size != size.to_integral_value():
        raise ValueError(f"must be a whole number of bytes, got {_show(value)}")
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
