"""The one error a person sees for a bad scenario: file, key, and what is allowed.

``str(ScenarioError)`` is always one line, e.g.::

    scenarios/x.toml: links.bottleneck.rate: expected a rate like "155.52 Mbps" (units: bps,
    kbps, Mbps, Gbps, cells/s), got "fast"

(shown wrapped here). The CLI prints it after ``error: `` and exits with code 2.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError


class ScenarioError(ValueError):
    """A scenario that cannot be run, with the file and the dotted key at fault.

    ``file`` or ``key`` may be None (a scenario built in memory, a TOML syntax
    error that has a line instead of a key).
    """

    def __init__(self, file: str | None, key: str | None, message: str) -> None:
        self.file = None if file is None else str(file)
        self.key = key or None
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        parts = [part for part in (self.file, self.key) if part]
        return ": ".join([*parts, self.message]).replace("\n", " ")


def show_value(value: Any) -> str:
    """A value as TOML would spell it, on one line and short, for error messages."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    text = text.replace("\n", " ")
    return text if len(text) <= 60 else text[:57] + "..."


def dotted_key(loc: tuple | list) -> str:
    """Turn a pydantic location such as ``("vcs", "v1", "path", 2)`` into ``vcs.v1.path[2]``."""
    key = ""
    for part in loc:
        if isinstance(part, int):
            key += f"[{part}]"
        elif part != "":
            key += f".{part}" if key else str(part)
    return key


def _message(error: dict) -> str:
    """A short message for one pydantic error, naming what would have been accepted."""
    kind = error["type"]
    ctx = error.get("ctx") or {}
    got = show_value(error.get("input"))
    if kind == "scenario":  # raised by our own validators, already phrased for people
        return ctx["message"]
    if kind == "value_error":  # a ValueError from a validator (units, buffer, ...)
        return str(ctx.get("error", error["msg"]))
    if kind == "missing":
        return "required key is missing"
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "literal_error":
        return f"expected {ctx['expected'].replace(chr(39), chr(34))}, got {got}"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return f"expected a table, got {got}"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return f"expected a whole number, got {got}"
    if kind in ("float_type", "float_parsing", "finite_number"):
        return f"expected a finite number, got {got}"
    if kind in ("bool_type", "bool_parsing"):
        return f"expected true or false, got {got}"
    if kind in ("string_type", "str_type"):
        return f"expected a string, got {got}"
    if kind == "list_type":
        return f"expected a list, got {got}"
    if kind == "greater_than_equal":
        return f"must be >= {ctx['ge']}, got {got}"
    if kind == "greater_than":
        return f"must be > {ctx['gt']}, got {got}"
    if kind == "less_than_equal":
        return f"must be <= {ctx['le']}, got {got}"
    if kind == "less_than":
        return f"must be < {ctx['lt']}, got {got}"
    if kind == "too_short":
        return f"needs at least {ctx['min_length']} items, got {got}"
    return f"{error['msg']}, got {got}"


def from_validation_error(error: ValidationError, file: str | None) -> ScenarioError:
    """The first error of a pydantic ValidationError, as a ScenarioError.

    Our own validators raise ``PydanticCustomError("scenario", ...)`` with a
    ``key`` in the context, relative to the table they check; it is appended
    to the location so the message names the exact key.
    """
    first = error.errors(include_url=False)[0]
    loc = list(first["loc"])
    extra_key = (first.get("ctx") or {}).get("key")
    if extra_key:
        loc.append(extra_key)
    return ScenarioError(file, dotted_key(loc), _message(first))
