"""The one error a person sees for a bad scenario: file, key, and what is allowed.

``str(ScenarioError)`` is always one line, e.g.::

    scenarios/x.toml: links.bottleneck.rate: expected a rate like "155.52 Mbps" (units: bps,
    kbps, Mbps, Gbps, Tbps, cells/s), got "fast"

(shown wrapped here). The CLI prints it after ``error: `` and exits with code 2.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Iterator
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
        return one_line(": ".join([*parts, self.message]))


SHOW_LIMIT = 60
"""Values in error messages are cut to this many characters (with "...")."""

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+\Z")


def show_value(value: Any) -> str:
    """A value as TOML spells it, on one line and short, for error messages.

    ``true``, ``"fast"``, ``1e+30``, ``inf``, ``["a", "a"]``, ``{ kind = "atm" }``;
    anything longer than 60 characters is cut with "...". Only as much of a large
    table or list is looked at as is shown.
    """
    text = ""
    for part in _toml_parts(value, 0):
        text += part
        if len(text) > SHOW_LIMIT:
            return text[: SHOW_LIMIT - 3] + "..."
    return text


def _toml_parts(value: Any, depth: int) -> Iterator[str]:
    """The pieces of ``value`` spelled as a TOML value (inline tables and arrays)."""
    if depth > 20:
        yield "..."
    elif isinstance(value, bool):
        yield "true" if value else "false"
    elif isinstance(value, int):
        yield _int_text(value)
    elif isinstance(value, float):
        if math.isnan(value):
            yield "nan"
        elif math.isinf(value):
            yield "inf" if value > 0 else "-inf"
        else:
            yield repr(value)
    elif isinstance(value, str):
        yield _toml_string(value[: SHOW_LIMIT + 1])
    elif isinstance(value, (datetime.date, datetime.time)):  # datetime is a date
        yield value.isoformat()
    elif isinstance(value, dict):
        if not value:
            yield "{}"
            return
        yield "{ "
        for n, (key, item) in enumerate(value.items()):
            if n:
                yield ", "
            key = str(key)
            yield key if _BARE_KEY.match(key) else _toml_string(key[: SHOW_LIMIT + 1])
            yield " = "
            yield from _toml_parts(item, depth + 1)
        yield " }"
    elif isinstance(value, (list, tuple)):
        yield "["
        for n, item in enumerate(value):
            if n:
                yield ", "
            yield from _toml_parts(item, depth + 1)
        yield "]"
    elif value is None:
        yield "nothing"
    else:
        yield str(value)


_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def _toml_string(text: str) -> str:
    """A TOML basic string: quotes, backslashes and unprintable characters escaped."""
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif char.isprintable():
            out.append(char)
        elif ord(char) <= 0xFFFF:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(f"\\U{ord(char):08X}")
    return '"' + "".join(out) + '"'


def one_line(text: str) -> str:
    """``text`` on one printable line: line breaks and tabs become spaces, other
    unprintable characters (a DEL, a zero-width space) their escapes."""
    if text.isprintable():
        return text
    return "".join(
        char
        if char.isprintable()
        else " "
        if char.isspace()
        else char.encode("unicode_escape", "backslashreplace").decode("ascii")
        for char in text
    )


def _int_text(value: int) -> str:
    """An integer's digits; one too long to print (Python's 4300-digit limit) by its size."""
    if value.bit_length() > 256:
        return f"a {value.bit_length()}-bit integer"
    return str(value)


_NAME_KEY = re.compile(r"^[A-Za-z0-9_{}-]+\Z")
"""A key shown as it is in a dotted key: a bare TOML key, or a name with {i} (\\Z, not $,
which would take a name ending in a line break for a bare one)."""


def key_part(name: str) -> str:
    """One part of a dotted key as TOML writes it: ``sw1``, ``s{i}``, or quoted when it is
    not a bare key (``"bad name"``, ``"a.b"``, ``""``), so that the key is unambiguous."""
    return name if _NAME_KEY.match(name) else _toml_string(name[: SHOW_LIMIT + 1])


def dotted_key(loc: tuple | list) -> str:
    """Turn a pydantic location such as ``("vcs", "v1", "path", 2)`` into ``vcs.v1.path[2]``
    (a name that is not a bare key quoted: ``nodes."bad name".kind``)."""
    key = ""
    for part in loc:
        if isinstance(part, int):
            key += f"[{part}]"
        else:
            text = key_part(str(part))
            key += f".{text}" if key else text
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
    key = dotted_key(first["loc"])
    extra_key = (first.get("ctx") or {}).get("key")
    if extra_key:  # already dotted, with its names quoted where they need it
        key = f"{key}.{extra_key}" if key else extra_key
    return ScenarioError(file, key, _message(first))
