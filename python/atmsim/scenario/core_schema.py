"""The ranges of the core JSON's values, read from the schema the Rust core generates.

Each range of the core is declared once, by the Rust model whose parameter it
bounds, and written into the JSON Schema of the core JSON (docs/core-schema.json;
the package ships the same text as ``core-schema.json`` beside this module, and
the core's test ``tests/schema.rs`` fails when either is not current). Python
reads the ranges it shares with the core from here instead of restating them;
``limits.py`` turns them into the checks of the scenario's keys, in the
scenario's units.

A value is named by where it sits in the schema: ``"seed"`` (a key of the
scenario), ``"LinkSpec.buffer_cells"`` (a key of a definition), or
``"AlgorithmSpec[erica].delta"`` (a key of the variant of a tagged definition
whose ``kind`` is ``erica``). For a list the range is its number of items.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path
from typing import Any, NamedTuple, Union

SCHEMA: dict[str, Any] = json.loads(
    Path(__file__).with_name("core-schema.json").read_text(encoding="utf-8")
)
"""The JSON Schema of the core JSON."""

Number = Union[int, float]

_WHERE = re.compile(r"^(?:(?P<definition>\w+)(?:\[(?P<kind>\w+)\])?\.)?(?P<key>\w+)$")


class CoreRange(NamedTuple):
    """A range of the core: [lo, hi], or (lo, hi] when ``lo_open``."""

    lo: Number
    hi: Number
    lo_open: bool = False


def _property(where: str) -> dict[str, Any]:
    match = _WHERE.match(where)
    if match is None:
        raise KeyError(f"not a place in the core schema: {where!r}")
    definition, kind, key = match.group("definition", "kind", "key")
    schema = SCHEMA["$defs"][definition] if definition else SCHEMA
    variants = schema.get("oneOf", [schema])
    for variant in variants:
        properties = variant.get("properties", {})
        if kind is not None and properties.get("kind", {}).get("const") != kind:
            continue
        if key in properties:
            return properties[key]
    raise KeyError(f"no key {key!r} at {where!r} in the core schema")


def core_range(where: str) -> CoreRange:
    """The range the core allows for the value at ``where`` (see the module's doc)."""
    value = _property(where)
    # A value where 0 means "none" (the probe period): 0, or one in the range.
    value = next((v for v in value.get("anyOf", []) if "maximum" in v), value)
    if value.get("type") == "array":
        return CoreRange(value["minItems"], value["maxItems"])
    if "exclusiveMinimum" in value:
        return CoreRange(value["exclusiveMinimum"], value["maximum"], lo_open=True)
    return CoreRange(value["minimum"], value["maximum"])


def core_default(where: str) -> Any:
    """The default the core declares for the value at ``where`` (see the module's doc).

    Each model declares its parameters' defaults beside their ranges, with the source of
    each in its doc (the ``#[param(default = ...)]`` of the Rust model); the scenario's keys
    that map one to one onto a core value take their defaults from here.
    """
    value = _property(where)
    if "default" not in value:
        raise KeyError(f"no default for {where!r} in the core schema")
    return value["default"]


_TIME_UNITS = (("s", 10**12), ("ms", 10**9), ("us", 10**6), ("ns", 10**3), ("ps", 1))


def time_text(ps: int) -> str:
    """A time in picoseconds as a scenario writes it, in the largest unit it reaches:
    ``"1.5 ms"``, ``"3 s"``, ``"1000000 s"``, ``"0 s"``."""
    if ps == 0:
        return "0 s"
    unit, scale = next((u, s) for u, s in _TIME_UNITS if ps >= s)
    return f"{(Decimal(ps) / scale).normalize():f} {unit}"


def core_time_range(where: str) -> tuple[str, str]:
    """The core's range of the time at ``where`` (a ``..._ps`` key), as a scenario
    writes its ends: ``("1 us", "10 s")``."""
    lo, hi, _ = core_range(where)
    return time_text(int(lo)), time_text(int(hi))


def core_time_default(where: str) -> str:
    """The core's default time at ``where`` (a ``..._ps`` key), as a scenario writes it."""
    return time_text(core_default(where))


def size_text(n: int) -> str:
    """A size in bytes as a scenario writes it: ``"64 KB"`` for 65536, else ``"1500"``."""
    for unit, scale in (("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if n and n % scale == 0:
            return f"{n // scale} {unit}"
    return str(n)


def factor_text(x: float) -> object:
    """A factor as a scenario writes it: ``"1/16"`` for 1/n (TM 4.0 writes its factors
    so), else the number."""
    if 0 < x < 1 and (1 / x).is_integer():
        return f"1/{int(1 / x)}"
    return x
