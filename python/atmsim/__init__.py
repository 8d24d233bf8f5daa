"""atmsim: a fast, faithful cell-level simulator of TCP/IP over ATM networks.

    import atmsim
    result = atmsim.run("scenarios/mux_onoff.toml", seed=2, overrides=["run.duration=5 s"])
    result.ports       # one row per output port
    result.series      # tidy time series: time_s, entity, metric, value

The Python package validates scenarios, drives the Rust core (``atmsim._core``)
and writes results; see docs/core-interface.md for the boundary between them.
"""

from __future__ import annotations

from .api import Result, package_version, run
from .errors import ScenarioError
from .scenario import Scenario, load_scenario

__version__ = package_version()

__all__ = ["Result", "Scenario", "ScenarioError", "__version__", "load_scenario", "run"]
