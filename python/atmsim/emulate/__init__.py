"""Emulation: real Linux hosts (network namespaces with TUN devices) exchanging real
TCP through a simulated network in real time (docs/emulation.md).

    from atmsim.emulate import emulate
    done = emulate("emulate_ubr", nbytes=2_000_000, cc="cubic", out="runs/emu")
    done.transfers_ok                  # every byte arrived intact
    done.report["lateness"]["max_s"]   # how late the simulation wrote a datagram

``atmsim emulate SCENARIO`` is the command.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .hosts import EmulationError, PrivilegeError, clean_stale, missing_privileges
    from .run import CONGESTION_CONTROLS, Emulation, emulate

_EXPORTS = {
    "CONGESTION_CONTROLS": "run",
    "Emulation": "run",
    "EmulationError": "hosts",
    "PrivilegeError": "hosts",
    "clean_stale": "hosts",
    "emulate": "run",
    "missing_privileges": "hosts",
}
"""Public name -> its module, imported on first use: ``python -m
atmsim.emulate.traffic``, which runs in the namespaces, loads none of the rest."""

__all__ = [
    "CONGESTION_CONTROLS",
    "Emulation",
    "EmulationError",
    "PrivilegeError",
    "clean_stale",
    "emulate",
    "missing_privileges",
]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
