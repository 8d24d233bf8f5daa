"""The real ``atmsim._core`` with faults injected on request.

The ``faulty`` fixture (conftest.py) installs this module as ``atmsim._core`` so
that a test can see how the Python layer answers what the core rarely does:

- ``interrupt_at_slice = k``: the k-th ``advance`` call raises KeyboardInterrupt,
  as Ctrl-C would, before advancing;
- ``fail_at_slice = k``: the k-th ``advance`` call raises the RuntimeError the
  binding raises for a Rust panic (its message begins "internal error:");
- ``unbalance = "cells"`` or ``"bytes"``: ``finish`` reports that ledger as
  unbalanced (one cell or byte missing, ``ok`` false).

Everything else is the real core: every simulation runs, every number is real.
``Simulation.last`` is the most recent simulation; its ``calls`` counts the
``advance`` calls and ``reached_ps`` is the time the last one reached (the real
core's ``now_ps`` is gone once the run is finished), for tests of the slicing.
"""

from __future__ import annotations

import json
from typing import Optional

try:
    from atmsim import _core as real_core
except ImportError:  # the tests that use this module skip without the core
    real_core = None

PANIC = "internal error: panicked at crates/atmsim-core/src/engine.rs:1:1: injected fault"
"""What the binding raises for a Rust panic (a RuntimeError with this prefix)."""


def version() -> str:
    return real_core.version()


def series_parquet(*columns: object) -> bytes:
    return real_core.series_parquet(*columns)


def table_parquet(*columns: object) -> bytes:
    return real_core.table_parquet(*columns)


class Simulation:
    """``atmsim._core.Simulation``, with the faults of the module docstring."""

    interrupt_at_slice: Optional[int] = None
    fail_at_slice: Optional[int] = None
    unbalance: Optional[str] = None
    last: Optional[Simulation] = None

    def __init__(self, core_json: str) -> None:
        self.inner = real_core.Simulation(core_json)
        self.calls = 0
        self.reached_ps = 0
        Simulation.last = self

    def advance(self, until_ps: int, max_events: int | None = None) -> bool:
        self.calls += 1
        if self.calls == Simulation.interrupt_at_slice:
            raise KeyboardInterrupt
        if self.calls == Simulation.fail_at_slice:
            raise RuntimeError(PANIC)
        reached = self.inner.advance(until_ps, max_events)
        self.reached_ps = self.inner.now_ps
        return reached

    @property
    def now_ps(self) -> int:
        return self.inner.now_ps

    @property
    def duration_ps(self) -> int:
        return self.inner.duration_ps

    @property
    def events(self) -> int:
        return self.inner.events

    def finish(self) -> tuple:
        summary_json, series = self.inner.finish()
        if Simulation.unbalance is None:
            return summary_json, series
        summary = json.loads(summary_json)
        ledger = summary["conservation"]
        if Simulation.unbalance == "cells":
            ledger["cells_delivered"] -= 1
        elif Simulation.unbalance == "bytes":
            ledger["bytes"]["held_out_of_order"] += 1
            ledger["bytes"]["ok"] = False
        else:
            raise ValueError(f"unbalance: {Simulation.unbalance!r}, expected cells or bytes")
        ledger["ok"] = False
        return json.dumps(summary), series
