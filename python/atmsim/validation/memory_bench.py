"""The memory benchmark of ``atmsim bench --memory``: what the simulation core holds.

Each measure runs in a fresh process (``python -m atmsim.validation.memory_bench
KIND ARGS``, started by ``atmsim.validation.bench.bench_memory``) and prints one
JSON line. Resident memory (Linux's VmRSS) is read before the core is given its
scenario (the scenario already validated and turned into the core's JSON, kept
alive) and after it has run, so the difference is what the core allocated and
still holds: its network, its VCs and sources, and the cells in flight.

- ``vcs N``: ``bench.scale_scenario(N)`` (N on/off VCs into one OC-48 port) run
  for 10 ms: the core's memory with N VCs. The slope between two N is the
  memory per VC.
- ``flight DELAY_S``: mux_onoff's sources, with the output link's delay set to
  DELAY_S: the cells on the link at the end (the conservation ledger's "on
  links") against the memory. The slope between two delays is the memory per
  cell in flight on a link.
- ``queue BUFFER``: mux_onoff's sources at twice the link's rate into a buffer
  of BUFFER cells, run until it is full: the memory per queued cell.
- ``flat DURATION_S SLICES``: mux_onoff without probes for DURATION_S simulated
  seconds in SLICES slices, the resident memory after each: it should not grow
  (memory O(VCs + cells in flight), not O(time)).

Glibc may hand the core memory that Python freed before the first reading, so
a figure can be a little low; it cannot include anything the core does not
hold at the second reading.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from ..api import import_core, prepare
from ..scenario import to_core
from .bench import onoff_mux, scale_scenario


def rss_kib() -> int:
    """This process's resident set now (VmRSS, KiB); 0 without /proc."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _core_json(scenario: dict) -> str:
    return json.dumps(to_core(prepare(scenario)))


def mux_scenario(duration_s: float, delay_s: float = 0.0, buffer: int = 1000, load: float = 0.9):
    """mux_onoff (10 on/off sources, peak 0.2 of the link each) at ``load``, no probes."""
    link = 155.52
    return onoff_mux(
        10,
        link,
        link * max(0.2, load / 10 * 2),
        link * load / 10,
        f"{max(1, round(duration_s * 1e6))} us",
        delay=f"{round(delay_s * 1e6)} us",
        buffer=buffer,
    )


def _run(core_json: str, slices: int = 1) -> tuple[list[int], dict]:
    """Run the core on ``core_json`` in ``slices`` equal slices; the resident memory
    before the core and after each slice (KiB), and the summary."""
    import gc

    core = import_core()
    duration_ps = json.loads(core_json)["duration_ps"]
    gc.collect()
    readings = [rss_kib()]
    sim = core.Simulation(core_json)
    for i in range(1, slices + 1):
        sim.advance(duration_ps * i // slices)
        readings.append(rss_kib())
    summary_json, _ = sim.finish()
    return readings, json.loads(summary_json)


def measure(kind: str, args: list[str]) -> dict[str, Any]:
    """One measure (see the module's docstring)."""
    if kind == "vcs":
        n = int(args[0])
        readings, summary = _run(_core_json(scale_scenario(n, 0.01)))
        return {"vcs": n, "core_kib": readings[-1] - readings[0]}
    if kind == "flight":
        delay = float(args[0])
        readings, summary = _run(_core_json(mux_scenario(max(1.0, 3 * delay), delay_s=delay)))
        on_links = summary["conservation"]["cells_on_links"]
        return {"delay_s": delay, "on_links": on_links, "core_kib": readings[-1] - readings[0]}
    if kind == "queue":
        buffer = int(args[0])
        # At twice the link's rate the queue grows by half the link's cell rate.
        fill_s = 2.5 * buffer / (155.52e6 / 424 / 2)
        scenario = mux_scenario(fill_s, buffer=buffer, load=2.0)
        readings, summary = _run(_core_json(scenario))
        queued = summary["conservation"]["cells_queued"]
        return {"buffer": buffer, "queued": queued, "core_kib": readings[-1] - readings[0]}
    if kind == "flat":
        duration, slices = float(args[0]), int(args[1])
        readings, summary = _run(_core_json(mux_scenario(duration)), slices)
        base = readings[0]
        return {
            "duration_s": duration,
            "cells": summary["conservation"]["cells_generated"],
            "core_kib": [r - base for r in readings[1:]],
        }
    raise ValueError(f"unknown measure {kind!r}: vcs, flight, queue or flat")


def main(argv: list[str]) -> int:
    """``python -m atmsim.validation.memory_bench KIND ARGS...``: print one JSON line."""
    if not argv:
        print("usage: python -m atmsim.validation.memory_bench vcs|flight|queue|flat ARGS")
        return 2
    print(json.dumps(measure(argv[0], argv[1:])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
