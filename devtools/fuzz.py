"""The scenario fuzzer: mutants of the repository's scenarios, each run through the real
``atmsim`` command, must run with a balanced ledger or be refused with one line.

The project's rule for input (README.md, "Exit codes"): a good scenario runs and exits 0
with balanced conservation ledgers; bad input (a scenario file, a ``--set`` or another
flag, a value out of range) exits 2 with ONE line on stderr that begins ``error: ``
and names the file and the key. Anything else is a bug: exit 1 (an internal error), a
traceback, a panic, several lines, a hang, a crash or a memory blow-up.

A case is a mutant of one of ``scenarios/*.toml`` and ``scenarios/reproduce/*.toml``:
one to six mutations (``MUTATIONS``: delete a key or a table, retype a value, mangle a
unit or a number, huge counts, tiny probe periods, unknown and duplicate keys, wrong
references, renamed and copied tables, other kinds and classes, new optional keys,
``--set`` and ``--seed`` flags, broken TOML text), drawn from a ``random.Random``
seeded with ``(seed, case index)``, so that every case can be made again from its two
numbers. Its simulated duration is forced to a few milliseconds (``DURATIONS``) unless
a mutation targets the duration itself, so that a valid mutant is a real but short run
through the core (1 us when a count is 1000 or more: such a case tests building the
network). A share of the cases (``GENTLE_SHARE``) take only mutations that keep close
to valid scenarios, so that many mutants reach the core.

Cases run in worker processes, each reused for many cases: the worker calls the
command's entry point (``atmsim._entry.main``, what the ``atmsim`` console script
calls) in its own process with stdout and stderr captured, at the Python level and at
the file descriptors (where the core would write a panic or an allocation failure).
A worker runs under an address-space limit (``--memory-gb``); a case that takes longer
than ``--timeout`` wall seconds, or that kills its worker, is a failure, and the
worker is replaced.

Every case is classified (``classify``): ``ok``, ``bad-input`` or ``failure``; every
failure is kept in the output directory (``failures/<id>.toml`` and a line of
``failures.jsonl`` with the case id, its mutations, the command, the exit code and
the output), and ``summary.json`` counts the classes and the kinds of failure::

    .venv/bin/python -m devtools.fuzz --cases 100000 --seed 1 --out runs/fuzz --jobs 2

Ctrl-C stops the campaign; the cases done so far are counted and kept.
"""

from __future__ import annotations

import copy
import datetime
import io
import json
import math
import multiprocessing
import os
import platform
import queue
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

import tomli_w

from atmsim import _entry, api
from atmsim._lazy import argparse
from atmsim.results import ledger_lines
from atmsim.scenario import load_scenario, resolved_toml, to_core, tomllib
from atmsim.scenario.templates import expand

REPO_ROOT = Path(__file__).resolve().parents[1]
"""The source checkout this module sits in."""

SEED_DIRS = (REPO_ROOT / "scenarios", REPO_ROOT / "scenarios" / "reproduce")
"""The scenarios that mutants are made from: every ``*.toml`` directly in these."""

DURATIONS = ("2 ms", "5 ms", "10 ms", "20 ms", "50 ms")
"""The simulated durations a mutant runs for (unless a mutation targets the duration)."""

CASE_TIMEOUT_S = 60.0
"""Wall seconds a case may go without simulated work (validation, a step of the core that
never returns, output) before it counts as a hang. The slowest valid mutants take up to
about 30 s on a busy 2-core machine: those near the memory limit, e.g. 2e7 probe
samples or 27,000 TCP flows."""

SLOW_FACTOR = 5
"""A case that keeps simulating (the core returns from a step at least every
``CASE_TIMEOUT_S``) may take this many times ``CASE_TIMEOUT_S`` in all before it counts
as too slow: a hang is judged by simulated work, not by wall time alone."""

WORKER_MEMORY_BYTES = 4 << 30
"""Address-space limit of a worker (RLIMIT_AS): a memory blow-up fails the case, not the
machine. Validation reads the limit and refuses runs that would not fit under it."""

WORKER_CASES = 2000
"""A worker is replaced after this many cases, so that nothing one case leaves behind
(caches, fragmented memory) grows without bound."""

OK, BAD_INPUT, FAILURE = "ok", "bad-input", "failure"
"""The classes of a case."""


# --- the seed scenarios -------------------------------------------------------------------


@dataclass(frozen=True)
class Seed:
    """A scenario that mutants are made from."""

    name: str
    """Its path relative to scenarios/, without ``.toml``: "mux_onoff", "reproduce/seed000-sec8"."""
    data: dict
    """The TOML file as a dict."""
    expansion: Optional[dict]
    """For a file with a ``[template]``: the general form it expands into, whose keys
    mutations may override (a table of the file merges onto the expansion key by key)."""


def load_seeds(dirs: tuple[Path, ...] = SEED_DIRS) -> list[Seed]:
    """The seed scenarios, in a fixed order (sorted by name)."""
    seeds = []
    for directory in dirs:
        for path in sorted(directory.glob("*.toml")):
            data = tomllib.loads(path.read_text(encoding="utf-8"))
            expansion = expand(data, str(path))[0] if "template" in data else None
            try:
                name = str(path.relative_to(REPO_ROOT / "scenarios").with_suffix(""))
            except ValueError:  # scenarios from elsewhere
                name = path.stem
            seeds.append(Seed(name, data, expansion))
    if not seeds:
        raise FileNotFoundError(f"no scenarios in {', '.join(str(d) for d in dirs)}")
    return seeds


# --- cases --------------------------------------------------------------------------------


@dataclass
class Case:
    """One mutant: the scenario file's bytes and the command line around it."""

    id: str
    """``<seed>-<index>`` of the campaign; a case is made again from these two numbers."""
    source: str
    """The seed scenario's name."""
    mutations: list[str] = field(default_factory=list)
    """What was done, in order, one line each."""
    text: bytes = b""
    """The scenario file."""
    command: str = "run"
    """"run" or "validate"."""
    args: list[str] = field(default_factory=list)
    """Arguments after the file (``--set``, ``--seed``, ...)."""
    flag_error_possible: bool = False
    """True when a mutated flag may make a usage error, which names no file."""
    gentle: bool = False
    """Made with GENTLE_MUTATIONS only."""

    def argv(self, path: str, out: str) -> list[str]:
        """The command line: ``run PATH ARGS --out OUT --no-progress`` or ``validate PATH ARGS``."""
        if self.command == "run":
            return ["run", path, *self.args, "--out", out, "--no-progress"]
        return ["validate", path, *self.args]


Path_ = tuple  # a path into the scenario dict: keys (str) and list indices (int)


def _paths(node: Any, prefix: Path_ = ()) -> list[Path_]:
    """Every path below ``node`` (tables, lists and values), depth first."""
    found = []
    if isinstance(node, dict):
        items: Any = node.items()
    elif isinstance(node, list):
        items = enumerate(node)
    else:
        return found
    for key, value in items:
        path = (*prefix, key)
        found.append(path)
        found.extend(_paths(value, path))
    return found


def _get(doc: Any, path: Path_) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def _set(doc: dict, path: Path_, value: Any) -> None:
    """Set ``path`` in ``doc``, creating the tables on the way (for overrides of a
    template's expansion)."""
    node = doc
    for part in path[:-1]:
        if isinstance(node, dict):
            if not isinstance(part, str):
                raise TypeError("a list index into a table")
            if not isinstance(node.get(part), (dict, list)):
                node[part] = {}
            node = node[part]
        else:
            node = node[part]
    if isinstance(node, dict) and not isinstance(path[-1], str):
        raise TypeError("a list index into a table")
    node[path[-1]] = value


def _delete(doc: dict, path: Path_) -> None:
    parent = _get(doc, path[:-1])
    del parent[path[-1]]


def _dotted(path: Path_) -> str:
    """A path as mutations print it: ``links.sw1-sw2.policy.threshold``, ``sources.s.path[1]``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def _show(value: Any) -> str:
    """A value in a mutation's description: short, on one line."""
    if isinstance(value, (bytes, str)) and len(value) > 40:
        return repr(value[:37]) + "..."
    text = (
        repr(value)
        if not isinstance(value, int) or abs(value) < 10**30
        else f"<{value.bit_length()}-bit int>"
    )
    return text if len(text) <= 60 else text[:57] + "..."


QUANTITY = re.compile(r"^\s*([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)\s*(\S+)\s*$")

UNITS = (
    "ps", "ns", "us", "µs", "ms", "s", "bps", "kbps", "Mbps", "Gbps", "cells/s",
    "m", "km", "B", "bytes", "KB", "kB", "KiB", "MB", "MiB", "GB", "GiB",
)  # fmt: skip
"""Every unit of a scenario file, of every dimension."""

BAD_UNITS = ("furlongs", "", "MBPS", "Tbps", "h", "min", "cells", "%", "Ms", "Kb", "s s")
NUMBER_TEXTS = (
    "0", "-3", "-0", "1e30", "1e-30", "0.001", "nan", "inf", "-inf", "1e999999",
    "1e-999999", "0.5", ".5", "5.", "+5", "0x10", "1_000", "123456789012345678901234567890",
    "2e8", "1000000", "1000001", "4294967295", "18446744073709551616", "1e-12", "3.14159",
)  # fmt: skip
"""Numbers a quantity may be given instead of its own."""

NUMBERS = (
    0, -1, 1, 2, -0.0, 0.5, 1.5, 100.5, 1e30, -1e30, 1e-30, 1e300, 2**31, 2**32 - 2,
    2**32 - 1, 2**32, 2**53, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 2**100,
    -(2**63), 255, 256, 65535, 65536, 100000, 100001, 10**6, 10**9, math.nan, math.inf,
    -math.inf,
)  # fmt: skip
"""Extreme numbers, whole and fractional, in and out of every range."""

COUNTS = (0, -1, 1, 2, 3, 1.5, 2.0, 50, 1000, 100000, 100001, 10**6, 2**31, 2**63, 2**64,
          1e30, "5", True, math.nan)  # fmt: skip
"""Values for ``count`` and a template's ``n``."""
GENTLE_COUNTS = (1, 2, 3, 7, 50)

PERIODS = ("1 ns", "1 ps", "0 s", "10 ns", "1 us", "-1 ms", "1e-9 s", "0.5 ps", "100 ns",
           "7 us", "1 ms", "1 s", 0, 1e-9)  # fmt: skip
"""Probe periods, from the tiny to the refused."""
GENTLE_PERIODS = ("100 ns", "1 us", "7 us", "1 ms", "1 s")

BAD_DURATIONS = ("0 s", "-1 s", "1e30 s", "nan s", "inf s", "1000001 s", "0.5 ps", "1 ps",
                 "1 ns", "", "50ms", "50 ms ms", 0, 1.5, "2 ms", "1 us")  # fmt: skip
"""Durations a mutation may give: refused ones, and valid ones that stay short."""

STRINGS = (
    "", " ", "\t", "\x00", "\x7f", "é", "日本", "a" * 300, "inf", "-inf", "nan", "auto",
    "all", "none", "fine", "true", "1/0", "0/0", "1/512", "{i}", "s{i}", "..", "a.b",
    "a b", "\u200b", "0", "-1", "1e30", "fast", "\n", '"', "\\", "[1]",
)  # fmt: skip
"""Strings in place of any value."""

DATES = (datetime.date(1979, 5, 27), datetime.datetime(1979, 5, 27, 7, 32), datetime.time(7, 32))

ENUMS: dict[str, tuple[tuple, tuple]] = {
    "layer": (("atm", "ip"), ("ATM", "eth")),
    "class": (("cbr", "vbr", "abr", "ubr"), ("gfr", "CBR", "best-effort")),
    "variant": (("tahoe-nofr", "tahoe", "reno", "newreno", "sack", "max_min", "basic"),
                ("vegas",)),
    "erica_variant": (("max_min", "basic"), ("fair",)),
    "arrivals": (("periodic", "poisson"), ("bursty",)),
    "distribution": (("fixed", "exponential"), ("pareto",)),
    "timer": (("fine", "1 us", "100 ms", "1000 s"), ("1001 s", "0 s", "coarse")),
    "window_scale": (("auto", 0, 1, 14), (15, -1)),
    "arbitration": (("slotted", "random", "scheduling_order"), ("fifo", "slots")),
    "algorithm": (("erica", "erica_plus", "efci", "fmmra", "none", {"kind": "efci", "high": 1},
                   {"kind": "efci", "high": 300, "low": 0},
                   {"kind": "erica", "interval_cells": 1, "interval": "1 us"},
                   {"kind": "erica", "variant": "basic", "measured_rate": True,
                    "bidirectional_count": True, "target_utilization": 1, "delta": 0},
                   {"kind": "erica_plus", "t0": "1 us", "a": 10, "b": 10, "qdlf": 1e-9},
                   {"kind": "fmmra", "interval": "10 s", "interval_cells": 1000000000}),
                  ("dfba", {"kind": "efci"}, {"kind": "erica", "delta": -1})),
    "policy": (("tail", "ppd", "epd", "intelligent_tail", {"kind": "epd", "threshold": 1},
                {"kind": "red", "min_th": 5}, {"kind": "red", "min_th": 1, "max_th": 2,
                                               "w_q": 1, "max_p": 1},
                {"kind": "red", "min_th": 1e-300}, {"kind": "ppd", "keep_eom": False},
                {"kind": "intelligent_tail", "threshold": 1}),
               ("red", "dfba", {"kind": "epd"}, {"kind": "intelligent_tail",
                                                 "threshold": 4294967295})),
    "kind": (("host", "switch", "cbr", "greedy", "poisson", "vbr_onoff", "geometric_onoff",
              "frames", "tail", "ppd", "epd", "intelligent_tail", "red", "erica",
              "erica_plus", "efci", "fmmra", "n-source-vbr", "n-source", "fmmra-lan", "gfc2"),
             ("router", "gfr", "none")),
    "buffer": (("inf", 1, 2, 12, 13, 4294967294, "64 KB", "1 B"),
               (4294967295, "0 B", -5, "INF")),
}  # fmt: skip
"""Values for keys that take one of a few: (valid ones, ones that are not) (a "kind" is
valid in some table or other)."""

BOOLS = ("duplex", "sonet", "fast_paths", "keep_eom", "measured_rate", "bidirectional_count",
         "use_it_or_lose_it", "vbr")  # fmt: skip

OPTIONAL_KEYS: dict[str, tuple[tuple[str, tuple, tuple], ...]] = {
    "run": (
        ("seed", (0, 2, 2**64 - 1), (2**64, -1)),
        ("fast_paths", (False, True), ()),
        ("arbitration", ("scheduling_order", "random", "slotted"), ()),
    ),
    "links": (
        ("sonet", (True, False), ()),
        ("duplex", (True, False), ()),
        ("layer", ("ip", "atm"), ()),
        ("buffer", ENUMS["buffer"][0], ENUMS["buffer"][1]),
        ("delay", ("0 s", "1 ps", "1000 s"), ("1001 s",)),
        ("length", ("0 km", "1 m", "200000000 km"), ("200000001 km",)),
        ("policy", *ENUMS["policy"]),
        ("algorithm", *ENUMS["algorithm"]),
        (
            "rate",
            ("1 kbps", "1000 Gbps", "1 Tbps", "3 cells/s", "10 Mbps"),
            ("999 bps", "2000 Gbps", "1.5 Tbps"),
        ),
        # The explicit-rate controller and the ACK control at the edges of their ranges.
        (
            "rate_control",
            (
                "erica_plus",
                {},
                {
                    "interval": "1 us",
                    "t0": "1 us",
                    "a": 1,
                    "b": 1,
                    "qdlf": 1,
                    "delta": 0,
                    "max_increase": 1,
                    "active_decay": 1,
                },
                {"active_decay": 0, "qdlf": 0},
            ),
            ({"interval": "0 s"}, {"active_decay": 2}, {"a": -1}),
        ),
        # DFBA's thresholds and RED's parameters at the edges.
        (
            "policy",
            (
                {"kind": "dfba", "low": 1, "high": 2, "alpha": 0},
                {"kind": "dfba", "low": 1, "high": 4294967294, "alpha": 1},
                {"kind": "fba"},
                {"kind": "selective_drop"},
                {"kind": "red", "min_th": 1, "max_th": 1e9, "w_q": 1e-9, "max_p": 1e-9},
            ),
            ({"kind": "dfba", "low": 5, "high": 4}, {"kind": "red", "w_q": 0}),
        ),
    ),
    "sources": (
        ("start", ("0 s", "1 ms", "999999.99 s", "1000000 s"), ("-1 s",)),
        ("stop", ("1 ms", "1 s"), ("0 s",)),
        ("class", *ENUMS["class"]),
        (
            "abr",
            (
                {},
                {"tbe": 1},
                {"nrm": 2, "mrm": 1},
                {"icr": "1 cells/s", "tcr": "1 cells/s"},
                {"rif": 1, "rdf": 1, "cdf": "1/1", "trm": "100 us", "adtf": "10 ms"},
                {"use_it_or_lose_it": True, "crm": 16777215},
            ),
            ({"pcr": "2000 Gbps"}, {"tbe": 1, "crm": 1}),
        ),
        ("count", (2, 3, 50), (0, 100001)),
        ("kind", ENUMS["kind"][0][2:8], ()),
        ("rate", ("1 cells/s", "0.001 cells/s", "155.52 Mbps", "1 Mbps"), ("0 cells/s",)),
        # On/off sources at the edges: periods far below and far above a cell time.
        ("on", ("1 ps", "1 us", "100 ms", "1000000 s"), ("0 s",)),
        ("off", ("1 ps", "1 us", "1000000 s"), ("0 s",)),
        ("peak", ("1 kbps", "1 Mbps", "155.52 Mbps"), ("0 bps",)),
        ("distribution", ("fixed", "exponential"), ("pareto",)),
        ("frame_cells", (1, 65535, [1, 1], [1, 65535]), ([5, 2], 0)),
    ),
    "flows": (
        ("variant", ENUMS["variant"][0][:5], ENUMS["variant"][1]),
        ("mss", (1, 65495, 9180), (65496, 0)),
        ("window", ("1 KB", "1073725440", 1073725440, "64 KB"), ("1 B", "1 GB")),
        ("window_scale", (0, 14, "auto"), (15,)),
        ("initial_cwnd", (1, 1000000), (1000001,)),
        ("initial_ssthresh", ("1 B", "auto", "2 KB"), ("0 B",)),
        ("timer", ("fine", "1 us", "1000 s"), ("1001 s",)),
        ("initial_rto", ("1 s", "3 s"), ("1 ps",)),
        ("min_rto", ("1 ps", "auto", "1 ms"), ("0 s",)),
        ("max_rto", ("64 s", "1000000 s"), ("1 ps",)),
        ("delayed_ack", ("1 ps", "200 ms", "1000 s"), ("1001 s",)),
        ("processing", ("1 us", "1000 s"), ("-1 us",)),
        ("processing_jitter", ("0 us",), ("1001 s",)),
        ("start", ("1 ms", "1000000 s"), ("1000001 s",)),
        ("transfer", ("1 B", "1 KB", "10 MB", 1), (0,)),
        ("max_sack_blocks", (1, 4), (5,)),
        ("class", *ENUMS["class"]),
        (
            "abr",
            ({}, {"tbe": 1}, {"crm": 1}, {"pcr": "1 kbps"}, {"use_it_or_lose_it": True}),
            ({"pcr": "0 bps"},),
        ),
    ),
    "probes": (
        ("period", ("1 us", "7 us", "1 ms", "1 s", "100 ns"), PERIODS),
        ("queue", ("all", []), (["ghost"],)),
        ("utilization", ("all",), ()),
        ("vc_rate", ("all",), ()),
        ("flows", ("all",), ()),
        ("abr_vcs", ("all",), ()),
        ("abr_ports", ("all",), ()),
    ),
}
"""Keys a table may have that the seed's table may lack: (key, valid values, others)."""

DURATION_PATHS = (("run", "duration"), ("template", "duration"))

PROBE_LISTS = ("queue", "utilization", "vc_rate", "flows", "abr_vcs", "abr_ports")

REFERENCE_KEYS = ("from", "to", "path", "ack_path", "vc", "queue", "utilization", "vc_rate",
                  "flows", "abr_vcs", "abr_ports")  # fmt: skip
"""Keys whose values name nodes, links, VCs or flows."""

SECTIONS = ("nodes", "links", "vcs", "sources", "flows")

UNKNOWN_KEYS = ("colour", "rate2", "Rate", "path ", "kind", "count", "duplex", "abr", "algorithm",
                "policy", "{i}", "", "template", "run", "x.y", "nodes")  # fmt: skip

SET_VALUES = (
    "1e30", "-1", "nan", "inf", "18446744073709551616", "0", "1.5", '"fast"', "fast",
    "{ kind = \"epd\" }", "[1, 2]", "[", "{", '"unterminated', "true", "'x'", "1979-05-27",
    "", "5 parsecs", "10 ms", "155.52 Mbps", "all", "[\"a\", \"b\"]", "{}", "1/0", "=",
    "{ kind = \"red\", min_th = 5 }", "\"inf\"", "1 ps", "-1 ms",
)  # fmt: skip
"""Values of ``--set`` overrides (read as TOML when they parse, else as text)."""

BAD_SET_KEYS = ("=1", ".=1", "a..b=1", "run=5", "run.duration.x=1", "nope.x=1",
                "links.x.y.z=1", "noequals", " = ", "template.n=3", "probes=1",
                "links=5", "run.seed.x=1", "nodes.a.kind.x=1")  # fmt: skip

SEEDS = ("-1", "abc", "1e3", "18446744073709551616", "0", "18446744073709551615", "", "1.0")


def _float(text: str) -> Optional[float]:
    try:
        return float(text)
    except ValueError:
        return None


def _names_something(path: Path_) -> bool:
    """Whether the value at ``path`` names nodes, links, VCs or flows (or is one of
    those names in a list)."""
    keys = [k for k in path if isinstance(k, str)]
    key = keys[-1]
    if key in PROBE_LISTS:
        return path[0] == "probes"
    return key in REFERENCE_KEYS


class Mutator:
    """Draws the mutations of one case with ``rng`` (a ``random.Random``; the property
    test hands it hypothesis's, so that a failure shrinks)."""

    def __init__(self, rng: random.Random, seed: Seed, gentle: bool = False) -> None:
        self.rng = rng
        self.seed = seed
        self.gentle = gentle
        """Keep close to valid scenarios (GENTLE_MUTATIONS): valid values where a
        mutation has a choice."""
        self.doc = copy.deepcopy(seed.data)
        self.args: list[str] = []
        self.text_ops: list[Callable[[bytes], bytes]] = []
        self.flag_error_possible = False
        self.command = "validate" if rng.random() < 0.1 else "run"

    # -- picking paths -------------------------------------------------------------------

    def _pick(self, paths: list[Path_]) -> Optional[Path_]:
        return self.rng.choice(paths) if paths else None

    def _doc_paths(self, keep: Callable[[Path_, Any], bool] = lambda p, v: True) -> list[Path_]:
        """Paths of the file that ``keep`` accepts, except the duration (which only the
        duration mutation changes: a deleted one would fall back to a template's
        default of seconds, too long for a campaign)."""
        return [
            p for p in _paths(self.doc) if p not in DURATION_PATHS and keep(p, _get(self.doc, p))
        ]

    def _any_paths(self, keep: Callable[[Path_, Any], bool] = lambda p, v: True) -> list[Path_]:
        """Paths of the file, and for a template also of its expansion (which a table of
        the file overrides)."""
        found = self._doc_paths(keep)
        expansion = self.seed.expansion
        if expansion is not None and "template" in self.doc:
            seen = set(_paths(self.doc))
            for p in _paths(expansion):
                if p in seen or p[0] == "template" or p in DURATION_PATHS:
                    continue
                if keep(p, _get(expansion, p)):
                    found.append(p)
        return found

    def _value_at(self, path: Path_) -> Any:
        try:
            return _get(self.doc, path)
        except (KeyError, IndexError, TypeError):
            return _get(self.seed.expansion or {}, path)

    def _write(self, path: Path_, value: Any) -> bool:
        """Set a value; False when the path crosses a value that a mutation replaced. A
        list of a template's expansion is copied into the file before an item is set."""
        expansion = self.seed.expansion or {}
        for k, part in enumerate(path):
            if isinstance(part, int):
                try:
                    _get(self.doc, path[:k])
                except (KeyError, IndexError, TypeError):
                    try:
                        _set(self.doc, path[:k], copy.deepcopy(_get(expansion, path[:k])))
                    except (KeyError, IndexError, TypeError):
                        return False
        try:
            _set(self.doc, path, value)
        except (KeyError, IndexError, TypeError):
            return False
        return True

    # -- the mutations -------------------------------------------------------------------

    def delete_key(self) -> Optional[str]:
        path = self._pick(self._doc_paths(lambda p, v: not isinstance(v, dict)))
        if path is None:
            return None
        _delete(self.doc, path)
        return f"delete {_dotted(path)}"

    def delete_table(self) -> Optional[str]:
        path = self._pick(self._doc_paths(lambda p, v: isinstance(v, dict)))
        if path is None:
            return None
        _delete(self.doc, path)
        return f"delete table {_dotted(path)}"

    def retype(self) -> Optional[str]:
        path = self._pick(self._any_paths())
        if path is None:
            return None
        old = self._value_at(path)
        options: list[Any] = [
            "fast",
            7,
            2.5,
            True,
            False,
            {},
            {"kind": "x"},
            [],
            [1, "a"],
            [old] if not isinstance(old, list) else old[0] if old else 0,
            self.rng.choice(DATES),
        ]
        if isinstance(old, (int, float)) and not isinstance(old, bool):
            options.append(str(old))
        if isinstance(old, str):
            match = QUANTITY.match(old)
            number = _float(match.group(1)) if match else None
            if number is not None:
                options.append(number)
            options.append({"value": old})
        value = self.rng.choice([v for v in options if type(v) is not type(old)] or options)
        if not self._write(path, value):
            return None
        return f"retype {_dotted(path)} = {_show(value)}"

    def unit(self) -> Optional[str]:
        paths = self._any_paths(lambda p, v: isinstance(v, str) and QUANTITY.match(v) is not None)
        path = self._pick(paths)
        if path is None:
            return None
        match = QUANTITY.match(self._value_at(path))
        assert match is not None
        number, unit = match.group(1), match.group(2)
        how = 2 if self.gentle else self.rng.randrange(6)
        if how == 0:
            value = f"{number} {self.rng.choice(UNITS + BAD_UNITS)}"
        elif how == 1:
            value = f"{self.rng.choice(NUMBER_TEXTS)} {unit}"
        elif how == 2:
            factor = self.rng.choice((0, 1e-9, 0.001, 0.1, 0.5, 2, 10, 1000, 1e6, 1e12))
            value = f"{(_float(number) or 1.0) * factor:g} {unit}"
        elif how == 3:
            value = self.rng.choice(
                (f"{number}{unit}", f"{unit} {number}", f"{number} {unit} {unit}",
                 f" {number}  {unit} ", f"{number} {unit.upper()}", f"{number} {unit}s",
                 f"{number},0 {unit}", f"{number} {unit}\n", f"١٠ {unit}")
            )  # fmt: skip
        elif how == 4:
            value = f"{self.rng.choice(NUMBER_TEXTS)} {self.rng.choice(UNITS + BAD_UNITS)}"
        else:
            value = self.rng.choice(("1e30 Mbps", "-3 ms", "0.001 bps", "nan s", "155.52 km",
                                     "inf km", "1e-30 s", "0 bps", "1e400 KB"))  # fmt: skip
        if not self._write(path, value):
            return None
        return f"unit {_dotted(path)} = {_show(value)}"

    def number(self) -> Optional[str]:
        paths = self._any_paths(
            lambda p, v: isinstance(v, (int, float)) and not isinstance(v, bool)
        )
        path = self._pick(paths)
        if path is None:
            return None
        old = self._value_at(path)
        if self.gentle or self.rng.random() < 0.4:
            value = self.rng.choice((old * 2, old // 2 if isinstance(old, int) else old / 2,
                                     old + 1, old - 1, 1, 0))  # fmt: skip
        else:
            value = self.rng.choice(NUMBERS)
        if not self._write(path, value):
            return None
        return f"number {_dotted(path)} = {_show(value)}"

    def count(self) -> Optional[str]:
        paths = self._any_paths(lambda p, v: p[-1] in ("count", "n") and not isinstance(v, dict))
        if paths and self.rng.random() < 0.7:
            path = self.rng.choice(paths)
        else:
            tables = self._any_paths(
                lambda p, v: len(p) == 2 and p[0] in SECTIONS and isinstance(v, dict)
            )
            table = self._pick(tables)
            if table is None:
                return None
            path = (*table, "count")
        value = self.rng.choice(GENTLE_COUNTS if self.gentle else COUNTS)
        if not self._write(path, value):
            return None
        return f"count {_dotted(path)} = {_show(value)}"

    def period(self) -> Optional[str]:
        if isinstance(self.doc.get("template"), dict) and self.rng.random() < 0.5:
            path: Path_ = ("template", "period")
        else:
            path = ("probes", "period")
        value = self.rng.choice(GENTLE_PERIODS if self.gentle else PERIODS)
        if not self._write(path, value):
            return None
        if path[0] == "probes" and self.rng.random() < 0.5:
            self._write(("probes", "queue"), "all")
        return f"period {_dotted(path)} = {_show(value)}"

    def duration(self) -> Optional[str]:
        if isinstance(self.doc.get("template"), dict):
            path: Path_ = ("template", "duration")
        else:
            path = ("run", "duration")
        value = self.rng.choice(BAD_DURATIONS)
        if not self._write(path, value):
            return None
        return f"duration {_dotted(path)} = {_show(value)}"

    def unknown_key(self) -> Optional[str]:
        tables = self._any_paths(lambda p, v: isinstance(v, dict))
        tables.append(())
        path = self.rng.choice(tables)
        key = self.rng.choice(UNKNOWN_KEYS)
        value = self.rng.choice((1, "x", True, {}, []))
        if not self._write((*path, key), value):
            return None
        return f"unknown key {_dotted((*path, key))} = {_show(value)}"

    def duplicate(self) -> Optional[str]:
        """A key or a table header given twice in the text (TOML forbids both)."""
        which = self.rng.randrange(2)

        def op(text: bytes, which: int = which, at: float = self.rng.random()) -> bytes:
            lines = text.split(b"\n")
            pattern = rb"^\[" if which else rb"^[^\[#\s].*="
            indices = [i for i, line in enumerate(lines) if re.match(pattern, line)]
            if not indices:
                return text
            i = indices[int(at * len(indices))]
            if which:  # the header again at the end, with a key under it
                lines += [lines[i], b"dup = 1"]
            else:
                lines.insert(i + 1, lines[i])
            return b"\n".join(lines)

        self.text_ops.append(op)
        return "duplicate a table header" if which else "duplicate a key"

    def reference(self) -> Optional[str]:
        paths = self._any_paths(lambda p, v: _names_something(p) and isinstance(v, (str, list)))
        path = self._pick(paths)
        if path is None:
            return None
        old = self._value_at(path)
        names = [
            name
            for section in ("nodes", "links")
            if isinstance(self.doc.get(section), dict)
            for name in self.doc[section]
        ] or ["sw1"]
        if isinstance(old, str):
            value: Any = self.rng.choice(
                ("ghost", "", self.rng.choice(names), old + "-rev", old + "{i}", old.upper(),
                 old.replace("{i}", "0"), old.replace("{i}", "{j}"), 1)
            )  # fmt: skip
        else:
            items = list(old)
            how = self.rng.randrange(9)
            if how == 0:
                value = items[::-1]
            elif how == 1:
                value = items[1:]
            elif how == 2:
                value = items + items[-1:]
            elif how == 3:
                value = items + ["ghost"]
            elif how == 4:
                value = items[:1]
            elif how == 5:
                value = []
            elif how == 6:
                value = (items * 300)[:300]
            elif how == 7:
                value = items[:1] + [1] + items[1:]
            else:
                value = self.rng.sample(items, len(items))
        if not self._write(path, value):
            return None
        return f"reference {_dotted(path)} = {_show(value)}"

    def rename(self) -> Optional[str]:
        tables = self._doc_paths(
            lambda p, v: len(p) == 2 and p[0] in SECTIONS and isinstance(v, dict)
        )
        path = self._pick(tables)
        if path is None:
            return None
        section, name = path
        others = [n for n in self.doc[section] if n != name]
        new = self.rng.choice(
            (f"{name}x", "bad name", "a.b", "", "é", f"{name}{{i}}", f"{name}-rev", "{i}",
             "x" * 300, f"{name}\n", *(others[:1]))
        )  # fmt: skip
        table = self.doc[section]
        table[new] = table.pop(name)
        return f"rename {section}.{name} -> {_show(new)}"

    def copy_table(self) -> Optional[str]:
        tables = self._any_paths(
            lambda p, v: len(p) == 2 and p[0] in SECTIONS and isinstance(v, dict)
        )
        path = self._pick(tables)
        if path is None:
            return None
        section, name = path
        new = self.rng.choice((f"{name}2", f"{name}-rev", f"{name}-ack", "copy"))
        if not self._write((section, new), copy.deepcopy(self._value_at(path))):
            return None
        return f"copy {section}.{name} -> {section}.{new}"

    def enum(self) -> Optional[str]:
        paths = self._any_paths(
            lambda p, v: isinstance(p[-1], str) and (p[-1] in ENUMS or p[-1] in BOOLS)
        )
        path = self._pick(paths)
        if path is None:
            return None
        key = path[-1]
        if key in ENUMS:
            valid, invalid = ENUMS[key]
            value = self.rng.choice(valid if self.gentle else valid + invalid)
        else:
            value = self.rng.choice((True, False))
        if not self._write(path, copy.deepcopy(value)):
            return None
        return f"enum {_dotted(path)} = {_show(value)}"

    def optional_key(self) -> Optional[str]:
        section = self.rng.choice(list(OPTIONAL_KEYS))
        if section in ("run", "probes"):
            table: Path_ = (section,)
        else:
            tables = self._any_paths(
                lambda p, v: len(p) == 2 and p[0] == section and isinstance(v, dict)
            )
            if not tables:
                return None
            table = self.rng.choice(tables)
        key, valid, invalid = self.rng.choice(OPTIONAL_KEYS[section])
        value = copy.deepcopy(self.rng.choice(valid if self.gentle else valid + invalid))
        if not self._write((*table, key), value):
            return None
        return f"add {_dotted((*table, key))} = {_show(value)}"

    def swap(self) -> Optional[str]:
        paths = self._doc_paths(lambda p, v: not isinstance(v, (dict, list)))
        if len(paths) < 2:
            return None
        a, b = self.rng.sample(paths, 2)
        va, vb = _get(self.doc, a), _get(self.doc, b)
        _set(self.doc, a, vb)
        _set(self.doc, b, va)
        return f"swap {_dotted(a)} <-> {_dotted(b)}"

    def string(self) -> Optional[str]:
        path = self._pick(self._any_paths(lambda p, v: isinstance(v, str)))
        if path is None:
            return None
        value = self.rng.choice(STRINGS)
        if not self._write(path, value):
            return None
        return f"string {_dotted(path)} = {_show(value)}"

    def table_to_list(self) -> Optional[str]:
        """A table as an array of tables (``[[links]]``), or a list as a table."""
        path = self._pick(self._doc_paths(lambda p, v: isinstance(v, (dict, list))))
        if path is None:
            return None
        old = _get(self.doc, path)
        value = [old, old] if isinstance(old, dict) else {str(i): v for i, v in enumerate(old)}
        _set(self.doc, path, value)
        return f"restructure {_dotted(path)}"

    def template_kind(self) -> Optional[str]:
        if not isinstance(self.doc.get("template"), dict):
            return self.enum()
        value = self.rng.choice(("n-source-vbr", "n-source", "fmmra-lan", "gfc2", "dumbbell"))
        self.doc["template"]["kind"] = value
        return f"template.kind = {_show(value)}"

    def set_flag(self) -> Optional[str]:
        """A ``--set`` override: a key of the file (or of a template's expansion) with a
        mangled value, or a malformed one."""
        if self.rng.random() < 0.2:
            item = self.rng.choice(BAD_SET_KEYS)
        else:
            paths = [p for p in self._any_paths() if all(isinstance(k, str) for k in p)]
            path = self._pick(paths)
            if path is None:
                return None
            value = self.rng.choice(SET_VALUES)
            old = self._value_at(path)
            if isinstance(old, str) and QUANTITY.match(old) and self.rng.random() < 0.5:
                match = QUANTITY.match(old)
                assert match is not None
                value = f"{self.rng.choice(NUMBER_TEXTS)} {match.group(2)}"
            item = f"{'.'.join(path)}={value}"
        self.args += ["--set", item]
        return f"--set {_show(item)}"

    def seed_flag(self) -> Optional[str]:
        how = self.rng.randrange(3)
        if how == 0:
            value = self.rng.choice(SEEDS)
            self.args += ["--seed", value]
            self.flag_error_possible = True
            return f"--seed {_show(value)}"
        if how == 1 and self.command == "run":
            flag = self.rng.choice(("--fast-paths", "--no-fast-paths"))
            self.args.append(flag)
            return flag
        flag = self.rng.choice(("--bogus", "--set", "--seed", "--out"))
        self.args.append(flag)
        self.flag_error_possible = True
        return f"flag {flag} (no value, or unknown)"

    def text(self) -> Optional[str]:
        """The file's bytes, broken: cut short, not UTF-8, a BOM, a NUL, deep nesting, a
        5000-digit integer, CRLF line ends, or nothing at all."""
        how = self.rng.randrange(8)
        at = self.rng.random()
        ops: list[tuple[str, Callable[[bytes], bytes]]] = [
            ("cut short", lambda t: t[: int(at * len(t))]),
            (
                "an invalid UTF-8 byte",
                lambda t: t[: int(at * len(t))] + b"\xff" + t[int(at * len(t)) :],
            ),  # noqa: E501
            ("a byte order mark", lambda t: b"\xef\xbb\xbf" + t),
            ("a NUL byte", lambda t: t[: int(at * len(t))] + b"\x00" + t[int(at * len(t)) :]),
            ("deep nesting", lambda t: b"deep = " + b"[" * 5000 + b"]" * 5000 + b"\n" + t),
            ("a 5000-digit integer", lambda t: b"huge = " + b"9" * 5000 + b"\n" + t),
            ("CRLF line ends", lambda t: t.replace(b"\n", b"\r\n")),
            ("an empty file", lambda t: b""),
        ]
        name, op = ops[how]
        self.text_ops.append(op)
        return f"text: {name}"


MUTATIONS: dict[str, tuple[float, Callable[[Mutator], Optional[str]]]] = {
    "delete_key": (6, Mutator.delete_key),
    "delete_table": (3, Mutator.delete_table),
    "retype": (8, Mutator.retype),
    "unit": (10, Mutator.unit),
    "number": (8, Mutator.number),
    "count": (5, Mutator.count),
    "period": (3, Mutator.period),
    "duration": (2, Mutator.duration),
    "unknown_key": (4, Mutator.unknown_key),
    "duplicate": (2, Mutator.duplicate),
    "reference": (7, Mutator.reference),
    "rename": (3, Mutator.rename),
    "copy_table": (3, Mutator.copy_table),
    "enum": (10, Mutator.enum),
    "optional_key": (12, Mutator.optional_key),
    "swap": (2, Mutator.swap),
    "string": (4, Mutator.string),
    "table_to_list": (1, Mutator.table_to_list),
    "template_kind": (1, Mutator.template_kind),
    "set_flag": (6, Mutator.set_flag),
    "seed_flag": (2, Mutator.seed_flag),
    "text": (1, Mutator.text),
}
"""The mutations and their weights (how often each is drawn)."""

MUTATIONS_PER_CASE = (1, 1, 1, 2, 2, 2, 3, 3, 4, 6)
"""How many mutations a case gets: drawn uniformly from this."""


GENTLE_SHARE = 0.3
"""The share of cases whose mutations keep close to valid scenarios (GENTLE_MUTATIONS):
other kinds, classes and policies, new optional keys, numbers and quantities scaled,
so that many mutants run through the core rather than stop at validation."""

GENTLE_MUTATIONS = ("enum", "optional_key", "number", "unit", "count", "period", "copy_table")

LARGE_COUNT = 1000
LARGE_COUNT_DURATION = "1 us"
"""A case with a ``count`` (or a template's ``n``) of at least LARGE_COUNT runs for
LARGE_COUNT_DURATION of simulated time: it tests building and checking a large network.
Simulating one is work in proportion to its size (100,000 on/off sources take minutes
for 50 ms), which is not a failure of input handling."""


def _large_count(doc: Any) -> bool:
    """Whether ``doc`` has a whole-number ``count`` or ``n`` of at least LARGE_COUNT."""
    for path in _paths(doc):
        if path and path[-1] in ("count", "n"):
            value = _get(doc, path)
            if type(value) is int and value >= LARGE_COUNT:
                return True
    return False


def make_case(seeds: list[Seed], rng: random.Random, case_id: str) -> Case:
    """A mutant of one of ``seeds``, drawn with ``rng``."""
    seed = seeds[rng.randrange(len(seeds))]
    gentle = rng.random() < GENTLE_SHARE
    mutator = Mutator(rng, seed, gentle)
    duration = rng.choice(DURATIONS)
    doc = mutator.doc
    if isinstance(doc.get("template"), dict):
        doc["template"]["duration"] = duration
    else:
        doc.setdefault("run", {})["duration"] = duration
    names = list(GENTLE_MUTATIONS if gentle else MUTATIONS)
    weights = [MUTATIONS[name][0] for name in names]
    mutations = []
    for _ in range(rng.choice(MUTATIONS_PER_CASE)):
        name = rng.choices(names, weights)[0]
        try:
            described = MUTATIONS[name][1](mutator)
        except (KeyError, IndexError, TypeError, AttributeError, ValueError):
            # An earlier mutation reshaped the file under this one's feet (a table is now
            # a number, a list a table): this one is left out.
            described = None
        if described is not None:
            mutations.append(f"{name}: {described}")
    if _large_count(mutator.doc) and not any(m.startswith("duration:") for m in mutations):
        if isinstance(doc.get("template"), dict):
            doc["template"]["duration"] = LARGE_COUNT_DURATION
        elif isinstance(doc.get("run"), dict):
            doc["run"]["duration"] = LARGE_COUNT_DURATION
        mutations.append(f"large_count: duration {LARGE_COUNT_DURATION} (a count >= {LARGE_COUNT})")
    text = tomli_w.dumps(mutator.doc).encode("utf-8")
    for op in mutator.text_ops:
        text = op(text)
    return Case(
        id=case_id,
        source=seed.name,
        mutations=mutations,
        text=text,
        command=mutator.command,
        args=mutator.args,
        flag_error_possible=mutator.flag_error_possible,
        gentle=gentle,
    )


def case_rng(seed: int, index: int) -> random.Random:
    """The random stream of case ``index`` of the campaign with ``seed``."""
    return random.Random(f"atmsim-fuzz:{seed}:{index}")


def campaign_case(seeds: list[Seed], seed: int, index: int) -> Case:
    """Case ``index`` of the campaign with ``seed``: the same case on every machine."""
    return make_case(seeds, case_rng(seed, index), f"{seed}-{index}")


# --- running a case -----------------------------------------------------------------------


@dataclass
class Outcome:
    """What a case did."""

    code: Optional[int]
    """The command's exit code; None when it did not finish (timeout, crash)."""
    stdout: str = ""
    stderr: str = ""
    """Python's stderr, then whatever was written to the file descriptors 1 and 2 below
    it (a panic message, an allocation failure)."""
    ledger_ok: Optional[bool] = None
    """For a run that exited 0: whether summary.json's ledgers balance."""
    problems: list = field(default_factory=list)
    """For a run that exited 0 with balanced ledgers: what the checks of an accepted run
    found (``accepted_run_problems``): the record that does not reload, fast paths that
    change the results, a source above its peak, a port above its rate."""
    timed_out: bool = False
    hung: bool = True
    """For a case that timed out: no simulated work for the timeout (a hang), or too
    slow though working."""
    died: Optional[str] = None
    """How the worker died during the case (a signal, an exit code)."""
    wall_s: float = 0.0


def run_case(case: Case, workdir: Path) -> Outcome:
    """Run ``case`` in this process through the command's entry point; ``workdir`` is a
    directory of this process's own (the scenario file and the run directory go there,
    and the run directory is removed afterwards)."""
    scenario = workdir / "case.toml"
    out = workdir / "run"
    shutil.rmtree(out, ignore_errors=True)
    scenario.write_bytes(case.text)
    argv = case.argv(str(scenario), str(out))
    native = workdir / "native.txt"
    started = time.perf_counter()
    with _captured(native) as (stdout, stderr):
        saved_argv = sys.argv
        sys.argv = ["atmsim", *argv]
        code: Optional[int]
        try:
            _entry.main()
            code = 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
            if not isinstance(stop.code, (int, type(None))):
                print(stop.code, file=sys.stderr)
        except Exception:  # escaped the command's own handling: a traceback, a failure
            import traceback

            traceback.print_exc()
            code = 1
        finally:
            sys.argv = saved_argv
    wall = time.perf_counter() - started
    outcome = Outcome(code, stdout.getvalue(), stderr.getvalue() + _read_text(native), wall_s=wall)
    if case.command == "run" and code == 0:
        outcome.ledger_ok = _ledgers_balance(out / "summary.json")
        # A case of the large-count class tests building a large network in 1 us: its
        # checks would load and run that network twice more in the same worker (over
        # the case's time, and under its memory limit beside the first run's).
        large = any(m.startswith("large_count:") for m in case.mutations)
        if outcome.ledger_ok and not large:
            try:
                outcome.problems = accepted_run_problems(out)
            except Exception as error:  # a check that cannot run is a finding too
                outcome.problems = [f"check failed: {type(error).__name__}: {error}"]
    shutil.rmtree(out, ignore_errors=True)
    return outcome


_VOLATILE = ("wall_s", "events", "scenario")
"""Summary keys that differ between two runs of one scenario (the wall clock, the events
the fast paths save), or between the run of a file and that of its reloaded record (the
scenario's name)."""


def accepted_run_problems(out: Path) -> list[str]:
    """The checks of a run that exited 0 with balanced ledgers, from its directory:

    - its record reloads: ``scenario.toml`` loads to the same core input as the run's,
      and writing it again gives the same file;
    - the fast paths change nothing: the reloaded scenario run with them off gives the
      same summary (the wall clock aside);
    - physics: no open-loop source sends above its peak (its rate for CBR) over its
      time, and no port sends above its line rate.
    """
    problems: list[str] = []
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    written = (out / "scenario.toml").read_text(encoding="utf-8")
    again = load_scenario(out / "scenario.toml")
    if resolved_toml(again) != written:
        problems.append("round trip: scenario.toml written again differs")
    core = to_core(again)
    plain = api.run(again, fast_paths=False, progress=False).summary
    seed = summary.get("seed")
    if plain.get("seed") != seed:
        problems.append("round trip: the reloaded scenario runs another run seed")

    def comparable(s: dict) -> dict:
        return {k: v for k, v in s.items() if k not in _VOLATILE}

    if comparable(plain) != comparable(summary):
        keys = sorted(k for k in comparable(summary) if plain.get(k) != summary.get(k))
        problems.append(f"fast paths change the results (or the record does not rerun): {keys}")
    problems.extend(physics_problems(core, summary))
    return problems


def physics_problems(core: dict, summary: dict) -> list[str]:
    """Sources above their peak, ports above their line rate (see accepted_run_problems)."""
    problems = []
    duration_s = core["duration_ps"] / 1e12
    for port in summary.get("ports", []):
        if port.get("utilization", 0.0) > 1.0 + 1e-9:
            problems.append(f"port {port['name']} busy {port['utilization']:.6g} of its time")
    vc_names = [vc["name"] for vc in core.get("vcs", [])]
    flow_vcs = {f.get("data_vc") for f in core.get("flows", [])} | {
        f.get("ack_vc") for f in core.get("flows", [])
    }
    most: dict[str, float] = {}
    for source in core.get("sources", []):
        model = source["model"]
        kind = model.get("kind")
        rate = model.get("peak_cps", model.get("rate_cps"))
        if kind not in ("cbr", "vbr_onoff", "geometric_onoff") or rate is None:
            most[vc_names[source["vc"]]] = math.inf  # Poisson, frames, greedy: unbounded here
            continue
        start_s = (source.get("start_ps") or 0) / 1e12
        stop_s = duration_s if source.get("stop_ps") is None else source["stop_ps"] / 1e12
        span = max(0.0, min(stop_s, duration_s) - start_s)
        name = vc_names[source["vc"]]
        most[name] = most.get(name, 0.0) + rate * span + 1
    index_of = {name: i for i, name in enumerate(vc_names)}
    for vc in summary.get("vcs", []):
        name = vc["name"]
        index = index_of.get(name)
        if name not in most or index in flow_vcs or not math.isfinite(most[name]):
            continue
        if vc["cells_sent"] > most[name] + 1e-6 * most[name]:
            sent, allowed = vc["cells_sent"], most[name]
            problems.append(f"VC {name} sent {sent} cells, its sources' peak allows {allowed:.0f}")
    return problems


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return ""


def _ledgers_balance(summary_path: Path) -> bool:
    try:
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
        return all(ok for _, ok in ledger_lines(summary))
    except (OSError, ValueError, KeyError, TypeError):
        return False


class _captured:
    """Capture stdout and stderr: Python's in two StringIOs, the file descriptors 1 and
    2 (what native code writes) in the file ``native``, truncated first."""

    def __init__(self, native: Path) -> None:
        self.native = native

    def __enter__(self) -> tuple[io.StringIO, io.StringIO]:
        sys.stdout.flush()
        sys.stderr.flush()
        self.saved_streams = (sys.stdout, sys.stderr)
        self.saved_fds = (os.dup(1), os.dup(2))
        self.file = open(self.native, "wb")  # noqa: SIM115 - closed in __exit__
        os.dup2(self.file.fileno(), 1)
        os.dup2(self.file.fileno(), 2)
        self.streams = (io.StringIO(), io.StringIO())
        sys.stdout, sys.stderr = self.streams
        return self.streams

    def __exit__(self, *exc: object) -> None:
        sys.stdout, sys.stderr = self.saved_streams
        os.dup2(self.saved_fds[0], 1)
        os.dup2(self.saved_fds[1], 2)
        for fd in self.saved_fds:
            os.close(fd)
        self.file.close()


# --- classifying --------------------------------------------------------------------------

_NUMBER = re.compile(r"[-+]?\d[\d.,_eE+-]*")
_QUOTED = re.compile(r'"[^"]*"|\'[^\']*\'')


def _shape(line: str, path: str = "") -> str:
    """A line with its particulars (the file, quoted values, numbers) replaced, so that
    failures of one kind group together."""
    if path:
        line = line.replace(path, "FILE")
    line = _QUOTED.sub('"…"', line)
    line = _NUMBER.sub("N", line)
    return line[:160]


_PART = r'(?:[A-Za-z0-9_{}-]+|"(?:[^"\\]|\\.)*")'
NAMES_A_KEY = re.compile(
    rf"^(?:{_PART}(?:\.{_PART}|\[\d+\])*: |invalid TOML: |not a UTF-8 text file$|"
    r"(?:\S*: )?--set: )"
)
"""What follows the file in a bad-input line: a dotted key (names quoted as TOML quotes
them), or a problem of the whole file (TOML syntax, encoding) or of a --set item (with
the key as the item gives it)."""


def classify(case: Case, outcome: Outcome, path: str = "") -> tuple[str, Optional[str]]:
    """(class, kind): ``ok``, ``bad-input``, or ``failure`` with the kind of failure (a
    line with the particulars replaced, so that failures of one kind group together).
    ``path`` is where the scenario file was (it appears in the error line)."""
    both = outcome.stdout + outcome.stderr
    lines = outcome.stderr.splitlines()
    if outcome.timed_out:
        if outcome.hung:
            return FAILURE, "timeout: no simulated work (a hang)"
        return FAILURE, f"timeout: too slow, still simulating after {outcome.wall_s:.0f} s"
    if outcome.died is not None:
        first = next((line for line in lines if line.strip()), "")
        return FAILURE, f"crash: worker {outcome.died}: {_shape(first, path)}"
    if "Traceback (most recent call last)" in both:
        last = next((line for line in reversed(lines) if line.strip()), "")
        return FAILURE, f"traceback: {_shape(last, path)}"
    if "panicked at" in both or "RUST_BACKTRACE" in both:
        return FAILURE, f"panic: {_shape(lines[0] if lines else '', path)}"
    if outcome.code == 0:
        if case.command == "run" and not outcome.ledger_ok:
            return FAILURE, "exit 0 without balanced ledgers in summary.json"
        if outcome.problems:
            return FAILURE, f"accepted run: {_shape(outcome.problems[0], path)}"
        return OK, None
    if outcome.code == 2:
        if len(lines) != 1:
            first = lines[0] if lines else "(nothing)"
            return FAILURE, f"exit 2 with {len(lines)} lines on stderr: {_shape(first, path)}"
        line = lines[0]
        if not line.startswith("error: "):
            return FAILURE, f"exit 2 without 'error: ': {_shape(line, path)}"
        if "the simulation core rejects this scenario" in line:
            return FAILURE, f"validation let through what the core rejects: {_shape(line, path)}"
        if path and not case.flag_error_possible:
            if not line.startswith(f"error: {path}: "):
                return FAILURE, f"exit 2 without naming the file: {_shape(line, path)}"
            if not NAMES_A_KEY.match(line[len(f"error: {path}: ") :]):
                return FAILURE, f"exit 2 without naming the key: {_shape(line, path)}"
        return BAD_INPUT, None
    first = next((line for line in lines if line.strip()), "")
    return FAILURE, f"exit {outcome.code}: {_shape(first, path)}"


# --- workers ------------------------------------------------------------------------------


def _worker_main(conn: Any, workdir: str, memory_bytes: int, steps: Any = None) -> None:
    """A worker: run the cases sent on ``conn`` one by one, answer each with its
    Outcome; ``None`` ends it. Ctrl-C is the campaign's to handle, not the worker's.
    ``steps`` (a shared counter) counts the core's returns from its steps, the
    simulated work the parent judges a hang by."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if memory_bytes:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    if steps is not None:

        def count_step() -> None:
            steps.value += 1

        api.STEP_HOOK = count_step

    here = Path(workdir)
    here.mkdir(parents=True, exist_ok=True)
    while True:
        case = conn.recv()
        if case is None:
            return
        conn.send(run_case(case, here))


class Worker:
    """A worker process that runs cases in turn, replaced when a case hangs or kills it."""

    def __init__(self, workdir: Path, memory_bytes: int, timeout_s: float) -> None:
        self.workdir = workdir
        self.memory_bytes = memory_bytes
        self.timeout_s = timeout_s
        self.process: Any = None
        self.conn: Any = None
        self.cases = 0

    def _start(self) -> None:
        context = multiprocessing.get_context(
            "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
        )
        parent, child = context.Pipe()
        self.steps = context.Value("Q", 0, lock=False)
        self.process = context.Process(
            target=_worker_main,
            args=(child, str(self.workdir), self.memory_bytes, self.steps),
            daemon=True,
        )
        self.process.start()
        child.close()
        self.conn = parent
        self.cases = 0

    def stop(self) -> None:
        """End the worker process (killed: it may be in the middle of a case)."""
        if self.process is not None:
            self.process.kill()
            self.process.join()
            self.conn.close()
            self.process = None

    def run(self, case: Case, stop: Optional[threading.Event] = None) -> Optional[Outcome]:
        """Run ``case``; None when ``stop`` was set while it ran."""
        if self.process is None or self.cases >= WORKER_CASES:
            self.stop()
            self._start()
        self.cases += 1
        native = self.workdir / "native.txt"
        try:
            self.conn.send(case)
            started = last_work = time.monotonic()
            steps = self.steps.value
            while not self.conn.poll(0.2):
                if stop is not None and stop.is_set():
                    self.stop()
                    return None
                if not self.process.is_alive():
                    break
                now = time.monotonic()
                if self.steps.value != steps:  # the core came back from a step: work
                    steps, last_work = self.steps.value, now
                idle = now - last_work > self.timeout_s
                if idle or now - started > SLOW_FACTOR * self.timeout_s:
                    self.stop()
                    text = _read_text(native)
                    return Outcome(
                        None, stderr=text, timed_out=True, wall_s=now - started, hung=idle
                    )
            outcome: Outcome = self.conn.recv()
            return outcome
        except (EOFError, OSError, BrokenPipeError):
            pass
        self.process.join(5)
        code = self.process.exitcode
        died = f"killed by signal {-code}" if code is not None and code < 0 else f"exited {code}"
        text = _read_text(native)
        self.stop()
        return Outcome(None, stderr=text, died=died)


# --- the campaign -------------------------------------------------------------------------


@dataclass
class Tally:
    """The counts of a campaign so far."""

    cases: int = 0
    classes: dict[str, int] = field(default_factory=lambda: {OK: 0, BAD_INPUT: 0, FAILURE: 0})
    kinds: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Failure kind -> {"count", "first" (a case id)}."""
    by_mutation: dict[str, dict[str, int]] = field(default_factory=dict)
    """Mutation name -> class -> cases that had that mutation."""
    by_source: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, case: Case, verdict: str, kind: Optional[str]) -> None:
        self.cases += 1
        self.classes[verdict] += 1
        if kind is not None:
            entry = self.kinds.setdefault(kind, {"count": 0, "first": case.id})
            entry["count"] += 1
        names = {m.split(":", 1)[0] for m in case.mutations}
        names.add("(gentle case)" if case.gentle else "(any case)")
        for name in names:
            counts = self.by_mutation.setdefault(name, {OK: 0, BAD_INPUT: 0, FAILURE: 0})
            counts[verdict] += 1
        counts = self.by_source.setdefault(case.source, {OK: 0, BAD_INPUT: 0, FAILURE: 0})
        counts[verdict] += 1


def _commit() -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "describe", "--always", "--dirty", "--abbrev=12"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        return done.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _machine() -> str:
    system = f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs"
    return f"{system}, Python {platform.python_version()}"


def keep_failure(out: Path, case: Case, outcome: Outcome, kind: str) -> None:
    """Write the failing case: failures/<id>.toml and a line of failures.jsonl."""
    folder = out / "failures"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{case.id}.toml"
    path.write_bytes(case.text)
    line = {
        "id": case.id,
        "source": case.source,
        "mutations": case.mutations,
        "kind": kind,
        "command": ["atmsim", *case.argv(str(path), "RUN_DIR")],
        "code": outcome.code,
        "timed_out": outcome.timed_out,
        "died": outcome.died,
        "stdout": outcome.stdout[-4000:],
        "stderr": outcome.stderr[-4000:],
        "wall_s": round(outcome.wall_s, 3),
    }
    with open(out / "failures.jsonl", "a", encoding="utf-8") as file:
        file.write(json.dumps(line, ensure_ascii=False) + "\n")


def campaign(
    cases: int,
    seed: int,
    out: Path,
    jobs: int = 1,
    start: int = 0,
    timeout_s: float = CASE_TIMEOUT_S,
    memory_bytes: int = WORKER_MEMORY_BYTES,
    echo: Callable[[str], Any] = print,
) -> dict:
    """Run cases ``start`` .. ``start + cases - 1`` of the campaign with ``seed`` on
    ``jobs`` workers; keep the failures in ``out`` and write ``out/summary.json``.
    Returns the summary. Ctrl-C (KeyboardInterrupt) ends it early, counting the cases
    done."""
    seeds = load_seeds()
    out.mkdir(parents=True, exist_ok=True)
    (out / "failures.jsonl").unlink(missing_ok=True)
    shutil.rmtree(out / "failures", ignore_errors=True)
    scratch = Path(tempfile.mkdtemp(prefix="atmsim-fuzz-"))
    tally = Tally()
    results: queue.Queue = queue.Queue()
    stop = threading.Event()
    lock = threading.Lock()
    indices = iter(range(start, start + cases))
    workers = [Worker(scratch / f"w{k}", memory_bytes, timeout_s) for k in range(jobs)]

    def slot(worker: Worker) -> None:
        try:
            while not stop.is_set():
                with lock:
                    index = next(indices, None)
                if index is None:
                    break
                case = campaign_case(seeds, seed, index)
                outcome = worker.run(case, stop)
                if outcome is None:
                    break
                results.put((case, outcome, str(worker.workdir / "case.toml")))
        except BaseException as error:  # noqa: BLE001 - a bug in the fuzzer ends it loudly
            results.put(error)
        finally:
            worker.stop()
            results.put(None)

    started = time.perf_counter()
    threads = [threading.Thread(target=slot, args=(w,), daemon=True) for w in workers]
    for thread in threads:
        thread.start()
    running = len(threads)
    last_echo = 0.0
    interrupted = False
    try:
        while running:
            item = results.get()
            if item is None:
                running -= 1
                continue
            if isinstance(item, BaseException):
                raise item
            case, outcome, path = item
            verdict, kind = classify(case, outcome, path)
            tally.add(case, verdict, kind)
            if kind is not None:
                keep_failure(out, case, outcome, kind)
            now = time.perf_counter()
            if now - last_echo > 10 or tally.cases == cases:
                last_echo = now
                echo(_progress(tally, cases, now - started))
    except KeyboardInterrupt:
        interrupted = True
        stop.set()
        for thread in threads:
            thread.join()
        while not results.empty():  # cases that finished while stopping
            item = results.get()
            if isinstance(item, tuple):
                case, outcome, path = item
                verdict, kind = classify(case, outcome, path)
                tally.add(case, verdict, kind)
                if kind is not None:
                    keep_failure(out, case, outcome, kind)
    finally:
        stop.set()
        shutil.rmtree(scratch, ignore_errors=True)
    wall = time.perf_counter() - started
    summary = {
        "cases": tally.cases,
        "requested": cases,
        "seed": seed,
        "start": start,
        "jobs": jobs,
        "interrupted": interrupted,
        "ok": tally.classes[OK],
        "bad_input": tally.classes[BAD_INPUT],
        "failures": tally.classes[FAILURE],
        "failure_kinds": dict(sorted(tally.kinds.items(), key=lambda kv: -kv[1]["count"])),
        "wall_s": round(wall, 1),
        "cases_per_s": round(tally.cases / wall, 2) if wall > 0 else None,
        "timeout_s": timeout_s,
        "memory_limit_bytes": memory_bytes,
        "commit": _commit(),
        "machine": _machine(),
        "by_mutation": dict(sorted(tally.by_mutation.items())),
        "by_source": dict(sorted(tally.by_source.items())),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    echo(_progress(tally, cases, wall))
    if interrupted:
        echo(f"interrupted after {tally.cases} cases")
    for kind, entry in summary["failure_kinds"].items():
        echo(f"FAILURE x{entry['count']} (first: {entry['first']}): {kind}")
    echo(f"summary: {out / 'summary.json'}")
    return summary


def _progress(tally: Tally, total: int, wall: float) -> str:
    rate = tally.cases / wall if wall > 0 else 0.0
    left = (total - tally.cases) / rate if rate > 0 else math.inf
    eta = "" if not math.isfinite(left) or left <= 0 else f", {left / 60:.0f} min left"
    return (
        f"{tally.cases}/{total} cases: {tally.classes[OK]} ok, {tally.classes[BAD_INPUT]} "
        f"bad-input, {tally.classes[FAILURE]} failures ({rate:.1f} cases/s{eta})"
    )


def main(argv: Optional[list[str]] = None) -> int:
    """``python -m devtools.fuzz``: exit 0 when no case failed, 1 otherwise,
    130 when interrupted."""
    parser = argparse.ArgumentParser(
        prog="python -m devtools.fuzz",
        description="Mutate the repository's scenarios and check that every mutant runs "
        "with balanced ledgers or is refused with one line (exit 2).",
    )
    parser.add_argument("--cases", type=int, default=1000, help="cases to run (default 1000)")
    parser.add_argument("--seed", type=int, default=1, help="campaign seed (default 1)")
    parser.add_argument("--start", type=int, default=0, help="first case index (default 0)")
    parser.add_argument("--out", type=Path, default=Path("runs/fuzz"), help="output directory")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument(
        "--timeout", type=float, default=CASE_TIMEOUT_S, help="wall seconds per case"
    )
    parser.add_argument(
        "--memory-gb",
        type=float,
        default=WORKER_MEMORY_BYTES / 2**30,
        help="address-space limit per worker, GiB (0: none)",
    )
    parser.add_argument(
        "--show", action="store_true", help="print the cases (id, mutations) without running them"
    )
    args = parser.parse_args(argv)
    if args.cases < 1 or args.jobs < 1 or args.start < 0 or args.timeout <= 0:
        parser.error("--cases and --jobs must be >= 1, --start >= 0, --timeout > 0")
    if args.show:
        seeds = load_seeds()
        for index in range(args.start, args.start + args.cases):
            case = campaign_case(seeds, args.seed, index)
            mode = "gentle" if case.gentle else "any"
            print(f"{case.id} {case.source} {mode} {case.command} {' '.join(case.args)}")
            for mutation in case.mutations:
                print(f"    {mutation}")
        return 0
    try:
        summary = campaign(
            args.cases,
            args.seed,
            args.out,
            args.jobs,
            args.start,
            args.timeout,
            int(args.memory_gb * 2**30),
            echo=lambda line: print(line, flush=True),
        )
    except KeyboardInterrupt:  # pragma: no cover - a second Ctrl-C while stopping
        return 130
    if summary["interrupted"]:
        return 130
    return 1 if summary["failures"] else 0


if __name__ == "__main__":
    # Through the module's own name, so that the cases sent to the workers pickle as
    # devtools.fuzz.Case, not __main__.Case.
    from devtools.fuzz import main as fuzz_main

    sys.exit(fuzz_main())
