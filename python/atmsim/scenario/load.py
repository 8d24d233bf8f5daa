"""Loading: the TOML file, ``--set`` overrides, and validation into a ``Scenario``."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import ScenarioError, from_validation_error, key_part, show_value
from .common import SECTIONS, _quoted
from .models import Scenario

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


MAX_FILE_BYTES = 16 * 2**20
"""A scenario or sweep file is at most 16 MiB (the largest shipped one is 5 KB): checked
before it is read, so that a huge file or a device is refused at once."""

MAX_NESTING = 32
"""Tables and lists nest at most 32 deep (a scenario needs 4): deeper data would
exhaust Python's recursion in validation."""

MAX_STRING_CHARS = 4096
"""Keys and string values are at most 4096 characters (names and quantities need a few)."""


def read_toml(path: str | Path) -> dict:
    """The TOML file as a dict; a missing file, one that is not a regular file or is
    larger than MAX_FILE_BYTES, a syntax error, or data nested deeper than MAX_NESTING
    is a ScenarioError."""
    file = str(path)
    try:
        # Regular files only, sized first: /dev/zero would be read until the memory is
        # full, and opening a FIFO waits for a writer.
        mode = os.stat(path).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError
        if not stat.S_ISREG(mode):
            raise ScenarioError(file, None, "not a regular file, expected a .toml file")
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_size > MAX_FILE_BYTES:
                raise ScenarioError(file, None, f"larger than {_mib(MAX_FILE_BYTES)}")
            data = handle.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:  # it grew while being read
            raise ScenarioError(file, None, f"larger than {_mib(MAX_FILE_BYTES)}")
        text = data.decode("utf-8")
    except ScenarioError:
        raise
    except FileNotFoundError:
        raise ScenarioError(file, None, "no such file") from None
    except IsADirectoryError:
        raise ScenarioError(file, None, "is a directory, expected a .toml file") from None
    except UnicodeDecodeError:
        raise ScenarioError(file, None, "not a UTF-8 text file") from None
    except OSError as error:
        raise ScenarioError(file, None, f"cannot read: {error.strerror}") from None
    except ValueError as error:  # a path with a NUL character
        raise ScenarioError(file, None, f"cannot read: {error}") from None
    try:
        data = tomllib.loads(text)
        check_nesting(data, file)
        return data
    except ScenarioError:
        raise
    except tomllib.TOMLDecodeError as error:
        raise ScenarioError(file, None, f"invalid TOML: {error}") from None
    except ValueError:  # Python reads integers of at most 4300 digits
        raise ScenarioError(
            file, None, "invalid TOML: an integer of more than 4300 digits"
        ) from None
    except RecursionError:
        raise ScenarioError(
            file, None, "invalid TOML: arrays or tables nested too deeply"
        ) from None


def _mib(size: int) -> str:
    return f"{size // 2**20} MiB"


def check_nesting(data: Any, file: str | None, key: str | None = None) -> None:
    """ScenarioError unless ``data`` nests at most MAX_NESTING tables and lists deep and
    every key and string is at most MAX_STRING_CHARS long. Walked with a stack, not by
    recursion, so that any depth is measured."""
    stack: list[tuple[Any, int, str | None]] = [(data, 0, key)]
    while stack:
        value, depth, where = stack.pop()
        if isinstance(value, str):
            if len(value) > MAX_STRING_CHARS:
                raise ScenarioError(
                    file,
                    where,
                    f"a string of {len(value):,} characters; at most {MAX_STRING_CHARS}",
                )
            continue
        if not isinstance(value, (dict, list)):
            continue
        if depth >= MAX_NESTING:
            raise ScenarioError(
                file, where, f"tables and lists nested more than {MAX_NESTING} deep"
            )
        if isinstance(value, dict):
            for name, item in value.items():
                name = str(name)
                if len(name) > MAX_STRING_CHARS:
                    raise ScenarioError(
                        file,
                        where,
                        f"a key of {len(name):,} characters; at most {MAX_STRING_CHARS}",
                    )
                inner = key_part(name)
                stack.append((item, depth + 1, f"{where}.{inner}" if where else inner))
        else:
            stack.extend((item, depth + 1, f"{where}[{n}]") for n, item in enumerate(value))


def parse_override_value(text: str) -> Any:
    """A --set value: a TOML value if it parses as one (500, true, ["a", "b"]), else the text."""
    try:
        return tomllib.loads(f"value = {text}")["value"]
    except (ValueError, RecursionError):  # TOMLDecodeError is a ValueError
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

    A dict with a ``[template]`` table is first expanded (python/atmsim/scenario/templates.py)
    and the other tables merged on top; the Scenario keeps that source form for
    ``resolved_toml``.
    """
    check_nesting(data, file)
    source = None
    try:
        if "template" in data:
            from .templates import expand  # its models load only for a [template]

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
    """The error, naming the --set that made the bad value: the last one that set the
    key or a table holding it (of two --set of one key, the later is in effect)."""
    for item in reversed(overrides):
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
