"""Shared helpers: the repository paths, tiny valid scenarios, the mark for tests that
need the built core, scenario files written for a test, the CLI in a subprocess or in
this process, and the core with faults injected (tests/faulty_core.py)."""

from __future__ import annotations

import importlib.util
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "scenarios"

try:  # a source checkout without `maturin develop`: test the package in python/
    import atmsim  # noqa: F401
except ImportError:  # pragma: no cover
    sys.path.insert(0, str(REPO / "python"))

from atmsim import ScenarioError, cli, load_scenario  # noqa: E402 (after the path fallback)

import faulty_core  # noqa: E402

CORE_BUILT = importlib.util.find_spec("atmsim._core") is not None
"""True once `maturin develop` has put the Rust core next to the package."""

needs_core = pytest.mark.skipif(not CORE_BUILT, reason="atmsim._core is not built")
"""Mark for tests that run real simulations. They run as soon as the core is built;
a core that is built but fails to import makes them fail, not skip."""

TINY = """\
[run]
duration = "10 ms"

[nodes]
a = { kind = "host" }
b = { kind = "host" }

[links.ab]
from = "a"
to = "b"
rate = "155.52 Mbps"
length = "10 km"
buffer = 100

[sources.s]
kind = "cbr"
path = ["a", "b"]
rate = "10 Mbps"
"""
"""A small valid scenario: one CBR source on one link."""


FLOW_TINY = """\
[run]
duration = "100 ms"

[nodes]
a = { kind = "host" }
sw = {}
b = { kind = "host" }

[links.a-sw]
from = "a"
to = "sw"
rate = "155.52 Mbps"
length = "10 km"
duplex = true

[links.sw-b]
from = "sw"
to = "b"
rate = "155.52 Mbps"
length = "10 km"
duplex = true

[flows.tcp]
path = ["a", "sw", "b"]
"""
"""A small valid scenario with one TCP flow over ATM (add layer = "ip" to both links for IP)."""


def balanced(summary: dict) -> bool:
    """The cell ledger (and, when the core reports them, the packet and byte ledgers)."""
    ledger = summary["conservation"]
    right = sum(
        ledger[key]
        for key in ("cells_delivered", "cells_dropped", "cells_queued", "cells_on_links")
    )
    ok = ledger["ok"] and ledger["cells_generated"] == right
    if "packets" in ledger:
        packets = ledger["packets"]
        terms = ("delivered", "dropped", "queued", "on_links", "held_at_routers")
        ok = ok and packets["ok"] and packets["generated"] == sum(packets.get(k, 0) for k in terms)
    if "bytes" in ledger:
        b = ledger["bytes"]
        terms = (
            "delivered",
            "dropped_in_network",
            "dropped_aal5",
            "duplicates",
            "held_out_of_order",
            "in_path",
            "dropped_beyond_window",
        )
        ok = ok and b["ok"] and b["sent"] == b["sent_once"] + b["retransmitted"]
        ok = ok and b["sent"] == sum(b.get(k, 0) for k in terms)
    return ok


def cli_env() -> dict[str, str]:
    """The environment for ``python -m atmsim`` in a subprocess (finds python/atmsim)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO / "python"), *filter(None, [env.get("PYTHONPATH")])]
    )
    return env


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run ``python -m atmsim ARGS`` in a subprocess, as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "atmsim", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=cli_env(),
        timeout=300,
    )


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def load_text(tmp_path: Path, text: str, overrides: tuple[str, ...] = ()):
    return load_scenario(write(tmp_path, text), list(overrides))


def error_of(tmp_path: Path, text: str, overrides: tuple[str, ...] = ()) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        load_text(tmp_path, text, overrides)
    return info.value


@pytest.fixture
def faulty(monkeypatch: pytest.MonkeyPatch):
    """Install the real core with fault injection (tests/faulty_core.py) as atmsim._core
    for one test, no fault set; slices of simulated time always double, so that slice
    numbers do not depend on the machine's speed."""
    if not CORE_BUILT:
        pytest.skip("atmsim._core is not built")
    from atmsim import api

    monkeypatch.setitem(sys.modules, "atmsim._core", faulty_core)
    for name in ("interrupt_at_slice", "fail_at_slice", "unbalance", "last"):
        monkeypatch.setattr(faulty_core.Simulation, name, None)
    monkeypatch.setattr(api, "SLICE_WALL_S", (math.inf, math.inf))
    return faulty_core


def cli_main(*args: str) -> int:
    """Run ``atmsim ARGS`` in this process; its exit code."""
    with pytest.raises(SystemExit) as info:
        cli.main(list(args))
    return info.value.code


@pytest.fixture(autouse=True)
def _no_columns_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables are drawn for COLUMNS when it is set: the tests draw them as for a pipe
    without it, whatever the shell that runs pytest sets (a test sets it when it is
    about the width)."""
    monkeypatch.delenv("COLUMNS", raising=False)
