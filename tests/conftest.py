"""Shared helpers: the repository paths, a tiny valid scenario, and the core switch."""

from __future__ import annotations

import importlib.util
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
