"""atmsim: a fast, faithful cell-level simulator of TCP/IP over ATM networks.

    import atmsim
    result = atmsim.run("scenarios/mux_onoff.toml", seed=2, overrides=["run.duration=5 s"])
    result.ports       # one row per output port
    result.series      # tidy time series: time_s, entity, metric, value

The Python package validates scenarios, drives the Rust core (``atmsim._core``)
and writes results; see docs/core-interface.md for the boundary between them.

The names below are imported on first use: ``import atmsim`` itself loads
nothing heavy, so that the ``atmsim`` command can answer a Ctrl-C during its
start-up (``atmsim._entry``) before pandas, pyarrow and pydantic are loaded.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .api import Result, run
    from .errors import ScenarioError
    from .scenario import Scenario, load_scenario
    from .sweeps import sweep

    __version__: str

_EXPORTS = {
    "Result": "api",
    "run": "api",
    "ScenarioError": "errors",
    "Scenario": "scenario",
    "load_scenario": "scenario",
    "sweep": "sweeps",
}
"""Public name -> the module that defines it."""

__all__ = ["Result", "Scenario", "ScenarioError", "__version__", "load_scenario", "run", "sweep"]


def __getattr__(name: str) -> Any:
    """The public names, imported when first asked for (PEP 562)."""
    if name == "__version__":
        value: Any = importlib.import_module(".api", __name__).package_version()
    elif name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
