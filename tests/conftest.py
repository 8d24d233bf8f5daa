"""Shared helpers: the repository paths, a tiny valid scenario, the core switch, scenario
files written for a test, and the stand-in core."""

from __future__ import annotations

import importlib.util
import json
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

import fake_core  # noqa: E402

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


def core_tcp_problem() -> str | None:
    """None when the built core runs TCP flows; else why the TCP tests are skipped.

    A core that rejects the ``flows`` key (built before issue 3) skips them;
    any other error from a tiny flow scenario is raised, so a broken core fails.
    """
    if not CORE_BUILT:
        return "atmsim._core is not built"
    from atmsim._core import Simulation
    from atmsim.scenario import to_core, tomllib, validate_scenario

    core_json = json.dumps(to_core(validate_scenario(tomllib.loads(FLOW_TINY))))
    try:
        Simulation(core_json)
    except ValueError as error:
        if "unknown field `flows`" in str(error) or "unknown field `layer`" in str(error):
            return f"atmsim._core does not run TCP flows yet (issue 3): {error}"
        raise
    return None


TCP_PROBLEM = core_tcp_problem()
needs_tcp_core = pytest.mark.skipif(TCP_PROBLEM is not None, reason=str(TCP_PROBLEM))
"""Mark for real simulations with TCP flows: skipped only while the built core
rejects ``flows`` (see core_tcp_problem)."""


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
        terms = ("delivered", "dropped", "queued", "on_links")
        ok = ok and packets["ok"] and packets["generated"] == sum(packets[k] for k in terms)
    if "bytes" in ledger:
        b = ledger["bytes"]
        terms = (
            "delivered",
            "dropped_in_network",
            "dropped_aal5",
            "duplicates",
            "held_out_of_order",
            "in_path",
        )
        ok = ok and b["ok"] and b["sent"] == b["sent_once"] + b["retransmitted"]
        ok = ok and b["sent"] == sum(b[k] for k in terms)
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
def fake(monkeypatch: pytest.MonkeyPatch):
    """Install the stand-in core as atmsim._core for one test."""
    monkeypatch.setitem(sys.modules, "atmsim._core", fake_core)
    monkeypatch.setattr(fake_core.Simulation, "interrupt_at_slice", None)
    monkeypatch.setattr(fake_core.Simulation, "ledger_ok", True)
    monkeypatch.setattr(fake_core.Simulation, "bytes_ok", True)
    return fake_core


def cli_main(*args: str) -> int:
    """Run ``atmsim ARGS`` in this process; its exit code."""
    with pytest.raises(SystemExit) as info:
        cli.main(list(args))
    return info.value.code
