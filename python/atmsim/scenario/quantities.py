"""Quantities: kept as the strings people wrote, checked when loaded.

The ``_check_*`` validators behind the annotated types (``Time``, ``Rate``,
``Size``, ``Buffer``, ...) that the table models use for their fields.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Union

from pydantic import BeforeValidator

from ..errors import show_value
from ..units import (
    MAX_SIZE_BYTES,
    parse_bit_rate_bps,
    parse_length_km,
    parse_size_bytes,
    parse_time_ps,
)
from .common import MAX_WINDOW_SCALE
from .limits import MAX_FRAME_CELLS, TCP_TICK, check_time


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
        "expected a whole number of cells (ATM: 1 to 4294967294) or packets (IP: 1 to "
        f'4294967295), a size like "64 KB" (IP), or "inf", got {show_value(value)}'
    )


def _check_threshold(value: Any) -> Any:
    """A RED threshold: a positive number (packets, or bytes), or a size like "10 KB"."""
    if isinstance(value, str):
        if parse_size_bytes(value) <= 0:
            raise ValueError(f"must be > 0, got {show_value(value)}")
        return value.strip()
    if type(value) in (int, float) and 0 < value <= MAX_SIZE_BYTES:
        return value
    raise ValueError(
        f"expected a number > 0 and at most 2^53 (in the buffer's unit) or a size like "
        f'"10 KB", got {show_value(value)}'
    )


def _check_frame_cells(value: Any) -> Any:
    if type(value) is int and 1 <= value <= MAX_FRAME_CELLS:
        return value
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(type(n) is int for n in value)
        and 1 <= value[0] <= value[1] <= MAX_FRAME_CELLS
    ):
        return value
    raise ValueError(
        f"expected a number of cells from 1 to {MAX_FRAME_CELLS} or [lo, hi] with "
        f"1 <= lo <= hi <= {MAX_FRAME_CELLS}, got {show_value(value)}"
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
        parse_time_ps(value)
    except ValueError:
        raise ValueError(
            f'expected "fine" or a tick like "100 ms" (units: ps, ns, us, ms, s), '
            f"got {show_value(value)}"
        ) from None
    try:
        check_time(value, *TCP_TICK)
    except ValueError:
        raise ValueError(
            f'must be "fine" or a tick from {TCP_TICK[0]} to {TCP_TICK[1]}, got {show_value(value)}'
        ) from None
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
