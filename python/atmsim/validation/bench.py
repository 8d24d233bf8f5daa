"""The benchmarks of ``atmsim bench``.

Every figure is the **median over ``runs`` runs with the spread (min - max)**;
docs/performance.md keeps the history. Four groups:

- ``bench_cells``: scenarios/mux_onoff.toml in this process, simulated cells
  and events per wall-second and per CPU-second of the advance loop
  (``Result.loop_wall_s``, ``Result.loop_cpu_s``: building the network and
  writing results are not counted).
- ``bench_process``: whole ``atmsim`` processes, as a user starts them:
  ``validate scenarios/md1.toml``, ``run`` of md1 for 1 ms (with its probe,
  which writes a series, and without), ``run`` of mux_onoff (30 s simulated,
  its default probes); wall, CPU (user + system) and peak resident memory of
  each.
- ``bench_scale``: N geometric on/off VCs (N = 10 ... 100,000) into one OC-48
  port (2488.32 Mbps, 1000-cell buffer) at load 0.9, each with a peak of 2/N
  and a mean of 0.9/N of the link (N = 10 is mux_onoff's shape), 1 s
  simulated: cells per CPU-second of the loop against N, and the cost per
  cell relative to N = 10 (the same series as ``cargo bench -- scale``).
- ``bench_whole_scale`` (``--whole-scale N``): whole ``atmsim run`` processes of
  the same scenario at N VCs over 1 s and 10 s simulated: wall and CPU against
  the simulated time, peak resident memory, and the set-up before the loop.
- ``bench_memory`` (``--memory``): what the core holds per VC, per cell in
  flight on a link and per queued cell, and whether its memory stays flat over
  a long run (``atmsim.validation.memory_bench``).
- ``bench_dumbbell``: the IP dumbbell (scenarios/ip_dumbbell.toml; see
  ``atmsim.validation.ns2`` and docs/validation.md) in atmsim and, when ns-2
  is installed, in ns-2, **alternating** (atmsim, ns-2, atmsim, ns-2, ...) so
  that both sides see the same moments of a shared machine, and the
  **median of the paired ratios**, for the loop alone and for the whole
  process.

Definitions for the dumbbell, the same for both simulators: **packets** = IP
packet transmissions on all links, data and ACKs, every hop counted (a data
packet crossing s_i -> r1 -> r2 -> d_i counts 3; one dropped at the
bottleneck counts 1). atmsim counts them exactly (``packets_out`` summed
over its IP ports); ns-2 counts them from its agents (3 x data packets sent
+ 3 x ACKs received; run without the flow monitor, so drops count 3 instead
of 1, an overcount of about 0.2 % in ns-2's favour). The **loop** is
atmsim's advance loop (``Result.loop_wall_s``) and ns-2's ``$ns run``
(timed inside Tcl), in wall time. The **whole process** is ``atmsim run``
of the scenario file (start-up, building, the run, writing its run
directory) and the ``ns`` process, in CPU time (user + system).
"""

from __future__ import annotations

import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Callable, Optional

from .._lazy import tomli_w
from ..api import prepare, run
from ..binding import package_version
from ..reproduce import registry
from ..reproduce.runner import seed_override
from ..resources import scenario_dir
from ..scenario.limits import MAX_COUNT, MAX_EXPANDED
from .ns2 import (
    Dumbbell,
    atmsim_metrics,
    atmsim_overrides,
    default_params,
    find_ns,
    ns2_args,
    params_from_scenario,
    run_atmsim_dumbbell,
    run_ns2_dumbbell,
)

BENCH_SCENARIO = scenario_dir() / "mux_onoff.toml"
"""The cell-level benchmark (a shipped example); ``bench_cells`` runs it."""

LONG_S = 300.0
"""mux_onoff's loop is also measured over this many simulated seconds (ten times its
own 30 s), as the target asks: a loop that slowed as its run went on (a growing
series, a structure that grows with time) would show there."""

BENCH_DUMBBELL = scenario_dir() / "ip_dumbbell.toml"
"""The dumbbell (a shipped example); ``bench_dumbbell`` runs it in both simulators."""

STARTUP_SCENARIO = scenario_dir() / "md1.toml"
"""The small scenario ``bench_process`` validates and runs for 1 ms."""

SCALE_VCS = (10, 100, 1_000, 10_000, 100_000)
"""The numbers of VCs of the scale series."""

TARGETS = {
    "cells_per_cpu_s": 1.0e8,
    "validate_wall_s": 0.15,
    "run_1ms_wall_s": 0.25,
    "peak_mib": 60.0,
    "mux_process_cpu_s": 0.27,
    "scale_cost_10000": 1.5,
    "dumbbell_loop_ratio": 10.0,
    "dumbbell_process_ratio": 1.0,
    "whole_scale_peak_mib": 250.0,
    "whole_scale_setup_s": 0.5,
}
"""The performance targets (docs/performance.md); the report says which are met."""

Echo = Callable[[str], Any]


def _quiet(line: str) -> None:
    """An echo that prints nothing."""


def spread(values: Sequence[float]) -> dict[str, Any]:
    """``median``, ``min``, ``max``, ``n`` and the ``values`` of a list of figures."""
    if not values:
        raise ValueError("no values")
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "n": len(values),
        "values": list(values),
    }


def _fmt(value: float, unit: str = "") -> str:
    """A figure with three significant digits (large ones as a x 10^k)."""
    if value != 0 and (abs(value) >= 1e4 or abs(value) < 1e-3):
        mantissa, exponent = f"{value:.2e}".split("e")
        text = f"{mantissa} x 10^{int(exponent)}"
    else:
        text = f"{value:.3g}"
    return f"{text} {unit}".rstrip()


def format_spread(s: dict[str, Any], unit: str = "") -> str:
    """``median (min - max, n runs)``."""
    if s["n"] == 1:
        return f"{_fmt(s['median'], unit)} (1 run)"
    return f"{_fmt(s['median'], unit)} (min {_fmt(s['min'])}, max {_fmt(s['max'])}, {s['n']} runs)"


def _verdict(value: float, target: float, at_most: bool) -> str:
    met = value <= target if at_most else value >= target
    sign = "<=" if at_most else ">="
    return f"target {sign} {_fmt(target)}: {'met' if met else 'not met'}"


def _check_runs(runs: int) -> None:
    if runs < 1:
        raise ValueError("runs must be >= 1")


# --------------------------------------------------------------------------- in process


def bench_cells(runs: int = 5, echo: Echo = _quiet, long_s: float = LONG_S) -> dict[str, Any]:
    """mux_onoff in this process: cells and events per wall- and CPU-second of the loop.

    Returns ``cells_per_s``, ``cells_per_cpu_s``, ``events_per_s`` (each a
    ``spread``), ``cells``, ``events``, ``sim_time_s`` and ``runs``; ``echo``
    gets a line per run and the summary lines. Then the same scenario over
    ``long_s`` simulated seconds (0: not), ``max(1, runs // 2)`` runs:
    ``long`` = ``cells_per_cpu_s`` (a ``spread``), ``cells``, ``sim_time_s``
    and ``runs``.
    """
    _check_runs(runs)
    per_wall, per_cpu, events_wall = [], [], []
    cells = events = 0
    sim_time = None
    for attempt in range(1, runs + 1):
        result = run(BENCH_SCENARIO, progress=False)
        wall = max(result.loop_wall_s, 1e-9)
        cpu = max(result.loop_cpu_s, 1e-9)
        cells = result.summary["conservation"]["cells_generated"]
        events = result.summary["events"]
        sim_time = result.summary["sim_time_s"]
        per_wall.append(cells / wall)
        per_cpu.append(cells / cpu)
        events_wall.append(events / wall)
        echo(
            f"mux_onoff run {attempt}/{runs}: {wall:.3f} s wall, {cpu:.3f} s CPU, "
            f"{cells / cpu:,.0f} cells per CPU-second"
        )
    out: dict[str, Any] = {
        "cells_per_s": spread(per_wall),
        "cells_per_cpu_s": spread(per_cpu),
        "events_per_s": spread(events_wall),
        "cells": cells,
        "events": events,
        "sim_time_s": sim_time,
        "runs": runs,
    }
    if long_s > 0:
        long_runs = max(1, runs // 2)
        rates = []
        for attempt in range(1, long_runs + 1):
            result = run(BENCH_SCENARIO, overrides=[f"run.duration={long_s:g} s"], progress=False)
            long_cells = result.summary["conservation"]["cells_generated"]
            rates.append(long_cells / max(result.loop_cpu_s, 1e-9))
            echo(
                f"mux_onoff over {long_s:g} s, run {attempt}/{long_runs}: "
                f"{rates[-1]:,.0f} cells per CPU-second"
            )
        out["long"] = {
            "cells_per_cpu_s": spread(rates),
            "cells": long_cells,
            "sim_time_s": result.summary["sim_time_s"],
            "runs": long_runs,
        }
    echo(format_cells(out))
    return out


def format_cells(out: dict[str, Any]) -> str:
    """The summary lines of ``bench_cells``."""
    cpu = out["cells_per_cpu_s"]["median"]
    lines = [
        f"mux_onoff ({BENCH_SCENARIO.name}, {out['sim_time_s']} s simulated, "
        f"{out['cells']:,} cells, {out['events']:,} events), the loop:",
        f"  simulated cells per wall-second: {format_spread(out['cells_per_s'])}",
        f"  simulated cells per CPU-second: {format_spread(out['cells_per_cpu_s'])}; "
        + _verdict(cpu, TARGETS["cells_per_cpu_s"], at_most=False),
        f"  events per wall-second: {format_spread(out['events_per_s'])}",
    ]
    if "long" in out:
        long = out["long"]
        lines.append(
            f"  over {long['sim_time_s']} s simulated ({long['cells']:,} cells), per CPU-second: "
            f"{format_spread(long['cells_per_cpu_s'])}; "
            + _verdict(long["cells_per_cpu_s"]["median"], TARGETS["cells_per_cpu_s"], at_most=False)
        )
    return "\n".join(lines)


GENERAL = (
    (
        "abr",
        "seed002-table1-n15",
        "main",
        "TCP over ABR: 15 Reno flows, ERICA (abr-ubr-buffers Table 1)",
    ),
    (
        "ubr",
        "seed002-ubr-windows",
        "sum-n15",
        "TCP over UBR: 15 Reno flows, tail drop (abr-ubr-buffers)",
    ),
    ("gfr", "seed004-table1", "run", "TCP over GFR: DFBA backbone (gfr-dfba Table 1)"),
)
"""The cell-level TCP configurations of ``bench_general``: (name, experiment, run, what it is).
Each is an ``atmsim reproduce`` run at run seed 1, as reproduce runs it."""

GENERAL_BEFORE = {"mux_plain": 1.66e7, "abr": 5.46e6, "ubr": 8.35e6, "gfr": 7.04e6}
"""Cells per CPU-second of the general path's benchmarks when the target was set (2026-11-27,
docs/performance.md, "The general path measured by atmsim bench"): the target is
``GENERAL_GAIN`` times these; LuaYATS's mux_onoff is 4.8 x 10^7."""

GENERAL_GAIN = 3.0
"""The speed-up of the TCP configurations the target asks for."""

MUX_PLAIN_TARGET = 1.5 * 4.8e7
"""mux_onoff with every fast path off: 1.5 times LuaYATS's cells per CPU-second."""


def bench_general(runs: int = 5, echo: Echo = _quiet) -> dict[str, Any]:
    """The general path: mux_onoff with every fast path off, and TCP over ABR, UBR and GFR
    at cell level on the papers' own configurations (``GENERAL``; their fast paths as
    ``atmsim reproduce`` leaves them, which serve none of their cells). Cells per
    CPU-second of the loop and events per cell, each a median of ``runs`` runs.

    Returns ``{name: {"cells_per_cpu_s": spread, "cells", "events", "sim_time_s",
    "what", "target"}}`` for ``mux_plain`` and each of ``GENERAL``.
    """
    _check_runs(runs)
    experiments = registry()
    cases: list[tuple[str, str, Any, dict]] = [
        (
            "mux_plain",
            f"{BENCH_SCENARIO.name} with every fast path off",
            BENCH_SCENARIO,
            {"fast_paths": False},
        ),
    ]
    for name, key, run_name, what in GENERAL:
        spec = experiments[key].runs[run_name]
        scenario = prepare(spec.path, overrides=[*spec.overrides, seed_override(1)])
        cases.append((name, what, scenario, {}))
    out: dict[str, Any] = {}
    for name, what, scenario, options in cases:
        rates = []
        for attempt in range(1, runs + 1):
            result = run(scenario, progress=False, **options)
            cells = result.summary["conservation"]["cells_generated"]
            rates.append(cells / max(result.loop_cpu_s, 1e-9))
            echo(f"{name} run {attempt}/{runs}: {rates[-1]:,.0f} cells per CPU-second")
        target = MUX_PLAIN_TARGET if name == "mux_plain" else GENERAL_GAIN * GENERAL_BEFORE[name]
        out[name] = {
            "what": what,
            "cells_per_cpu_s": spread(rates),
            "cells": cells,
            "events": result.summary["events"],
            "sim_time_s": result.summary["sim_time_s"],
            "before": GENERAL_BEFORE[name],
            "target": target,
        }
    echo(format_general(out))
    return out


def format_general(out: dict[str, Any]) -> str:
    """The summary lines of ``bench_general``."""
    lines = ["the general path, cells per CPU-second of the loop:"]
    for name, r in out.items():
        rate = r["cells_per_cpu_s"]["median"]
        lines.append(
            f"  {name}: {r['what']} ({r['sim_time_s']:g} s simulated, {r['cells']:,} cells, "
            f"{r['events'] / max(r['cells'], 1):.2f} events per cell): "
            f"{format_spread(r['cells_per_cpu_s'])}, x {rate / r['before']:.2f} the "
            f"2026-11-27 figure; " + _verdict(rate, r["target"], at_most=False)
        )
    return "\n".join(lines)


def bench_reproduce(jobs: int = 2, echo: Echo = _quiet) -> dict[str, Any]:
    """``atmsim reproduce`` of all five papers, as a user runs it (``--jobs``, every run
    seed, figures), into a temporary folder: wall and CPU seconds (user + system of the
    command and its workers). Once: it takes minutes."""
    with tempfile.TemporaryDirectory() as work:
        command = [
            *atmsim_command(),
            "reproduce",
            *PAPERS,
            "--jobs",
            str(jobs),
            "--out",
            str(Path(work) / "out"),
        ]
        before = os.times()
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        wall = time.perf_counter() - started
        after = os.times()
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:]
        raise RuntimeError(f"atmsim reproduce exited {done.returncode}: {' '.join(tail)}")
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    out = {"jobs": jobs, "wall_s": wall, "cpu_s": cpu, "target_wall_s": REPRODUCE_TARGET_S}
    echo(format_reproduce(out))
    return out


PAPERS = ("seed000", "seed001", "seed002", "seed003", "seed004")
"""The five papers ``bench_reproduce`` reproduces."""

REPRODUCE_TARGET_S = 60.0
"""``atmsim reproduce`` of all five papers on 2 cores, wall seconds."""


def format_reproduce(out: dict[str, Any]) -> str:
    """The summary line of ``bench_reproduce``."""
    return (
        f"atmsim reproduce, all five papers, --jobs {out['jobs']}: {out['wall_s']:.0f} s wall, "
        f"{out['cpu_s']:.0f} CPU-s; " + _verdict(out["wall_s"], out["target_wall_s"], at_most=True)
    )


def onoff_mux(
    n: int,
    link_mbps: float,
    peak_mbps: float,
    mean_mbps: float,
    duration: str,
    delay: str = "0 ms",
    buffer: int = 1000,
) -> dict:
    """A scenario dict: ``n`` geometric on/off sources (bursts of 100 cells on
    average), each on its own VC, into one tail-drop port of ``buffer`` cells on
    a link of ``link_mbps``, no probes."""
    return {
        "run": {"duration": duration, "seed": 1},
        "nodes": {"mux": {"kind": "host"}, "sink": {"kind": "host"}},
        "links": {
            "mux-out": {
                "from": "mux",
                "to": "sink",
                "rate": f"{link_mbps} Mbps",
                "delay": delay,
                "buffer": buffer,
                "policy": "tail",
            }
        },
        "sources": {
            "s": {
                "count": n,
                "path": ["mux", "sink"],
                "class": "ubr",
                "kind": "geometric_onoff",
                "peak": f"{peak_mbps!r} Mbps",
                "mean": f"{mean_mbps!r} Mbps",
                "mean_burst": 100,
            }
        },
    }


def scale_scenario(n: int, duration_s: float = 1.0) -> dict:
    """N geometric on/off VCs into one OC-48 port at load 0.9 (see the module's docstring).

    A table's ``count`` is at most ``MAX_COUNT`` (100,000): above that the sources are
    several alike tables, ``s`` then ``sb``, ``sc``, ... (VCs ``s1`` .. ``s100000``,
    ``sb1`` ..), up to the 1,000,000 VCs a scenario may expand to."""
    if n < 1:
        raise ValueError("the number of VCs must be >= 1")
    if n > MAX_EXPANDED:
        raise ValueError(f"at most {MAX_EXPANDED} VCs")
    link = 2488.32
    scenario = onoff_mux(n, link, link * 2.0 / n, link * 0.9 / n, f"{duration_s:g} s")
    template = scenario["sources"].pop("s")
    for k, first in enumerate(range(0, n, MAX_COUNT)):
        name = "s" if k == 0 else "s" + "abcdefghij"[k]
        scenario["sources"][name] = {**template, "count": min(MAX_COUNT, n - first)}
    return scenario


def bench_scale(
    runs: int = 3,
    vcs: Sequence[int] = SCALE_VCS,
    duration_s: float = 1.0,
    echo: Echo = _quiet,
) -> dict[str, Any]:
    """Cells per CPU-second of the loop against the number of VCs (``scale_scenario``).

    The runs go in rounds, each round one run of every N (N = 10, 100, ...,
    then again), so that every N sees the same minutes of a shared machine
    and the ratios compare like with like. Returns ``rows`` (one per N:
    ``vcs``, ``cells``, ``cells_per_cpu_s`` as a ``spread``,
    ``cost_vs_first``: the median cost per cell over that of the first N,
    ``paired_cost_vs_first``: the spread of the same ratio taken round by
    round), ``duration_s`` and ``runs``.
    """
    _check_runs(runs)
    if len(set(vcs)) != len(vcs):
        raise ValueError(f"each number of VCs once, not {list(vcs)}")
    rates: dict[int, list[float]] = {n: [] for n in vcs}
    cells: dict[int, int] = {n: 0 for n in vcs}
    for attempt in range(1, runs + 1):
        for n in vcs:
            result = run(scale_scenario(n, duration_s), progress=False)
            cells[n] = result.summary["conservation"]["cells_generated"]
            rate = cells[n] / max(result.loop_cpu_s, 1e-9)
            rates[n].append(rate)
            echo(f"scale N={n} round {attempt}/{runs}: {rate:,.0f} cells per CPU-second")
    rows: list[dict[str, Any]] = []
    for n in vcs:
        row: dict[str, Any] = {"vcs": n, "cells": cells[n], "cells_per_cpu_s": spread(rates[n])}
        if rows:
            first = rows[0]
            row["cost_vs_first"] = (
                first["cells_per_cpu_s"]["median"] / row["cells_per_cpu_s"]["median"]
            )
            row["paired_cost_vs_first"] = spread(
                [a / b for a, b in zip(rates[first["vcs"]], rates[n])]
            )
        else:
            row["cost_vs_first"] = 1.0
            row["paired_cost_vs_first"] = spread([1.0] * runs)
        rows.append(row)
    out = {"rows": rows, "duration_s": duration_s, "runs": runs}
    echo(format_scale(out))
    return out


WHOLE_SCALE_SECONDS = (1.0, 10.0)
"""The simulated durations of ``bench_whole_scale`` (the target is stated over 10 s)."""


def bench_whole_scale(
    n: int,
    seconds: Sequence[float] = WHOLE_SCALE_SECONDS,
    runs: int = 1,
    echo: Echo = _quiet,
) -> dict[str, Any]:
    """Whole ``atmsim run`` processes of ``scale_scenario(n, s)`` for each ``s`` of
    ``seconds``, as a user starts them (``atmsim run file.toml --out dir``): wall and CPU
    seconds (user + system), the ratio simulated / wall (above 1: faster than real
    time) and the peak resident memory (``measure_process``); and the set-up, the wall
    and CPU seconds from the call of ``atmsim.run`` to the loop's start
    (``Result.setup_wall_s``), measured by running the same scenario in this process
    (the process's start-up, about 0.15 s, is not in it). ``runs`` runs of each,
    alternating between the durations. Returns ``vcs``, ``runs`` and ``rows``: one per
    duration, with ``simulated_s``, ``wall_s``, ``cpu_s``, ``peak_mib``,
    ``times_real_time``, ``setup_wall_s``, ``setup_cpu_s`` (spreads) and
    ``bytes_per_vc`` (the median peak over ``n``)."""
    _check_runs(runs)
    if n < 1:
        raise ValueError("the number of VCs must be >= 1")
    got: dict[float, dict[str, list[float]]] = {s: {} for s in seconds}
    with tempfile.TemporaryDirectory(prefix="atmsim-whole-scale-") as tmp:
        work = Path(tmp)
        for s in seconds:
            (work / f"scale_{s:g}s.toml").write_text(tomli_w.dumps(scale_scenario(n, s)))
        for attempt in range(1, runs + 1):
            for s in seconds:
                command = [
                    *atmsim_command(),
                    "run",
                    str(work / f"scale_{s:g}s.toml"),
                    "--no-progress",
                    "--out",
                    str(work / f"run_{s:g}s"),
                ]
                measured = _measured(f"atmsim run of {n} VCs over {s:g} s", command, work)
                result = run(scale_scenario(n, s), progress=False)
                figures = {
                    "wall_s": measured["wall_s"],
                    "cpu_s": measured["cpu_s"],
                    "peak_mib": measured["peak_mib"],
                    "times_real_time": s / max(measured["wall_s"], 1e-9),
                    "setup_wall_s": result.setup_wall_s,
                    "setup_cpu_s": result.setup_cpu_s,
                }
                del result
                for key, value in figures.items():
                    got[s].setdefault(key, []).append(value)
                echo(
                    f"whole run N={n} over {s:g} s, {attempt}/{runs}: "
                    f"{measured['wall_s']:.2f} s wall, {measured['cpu_s']:.2f} CPU-s, "
                    f"{measured['peak_mib']:.0f} MiB, set-up {figures['setup_wall_s']:.2f} s"
                )
    rows = []
    for s in seconds:
        row: dict[str, Any] = {"simulated_s": s}
        row.update({key: spread(values) for key, values in got[s].items()})
        row["bytes_per_vc"] = row["peak_mib"]["median"] * 2**20 / n
        rows.append(row)
    out = {"vcs": n, "runs": runs, "rows": rows}
    echo(format_whole_scale(out))
    return out


def format_whole_scale(out: dict[str, Any]) -> str:
    """The summary lines of ``bench_whole_scale``, with the targets' verdicts (faster
    than real time: wall <= simulated)."""

    def verdict(value: float, target: float, unit: str) -> str:
        return f"target <= {target:g} {unit}: {'met' if value <= target else 'not met'}"

    lines = []
    for row in out["rows"]:
        wall, peak, setup = row["wall_s"], row["peak_mib"], row["setup_wall_s"]
        simulated = row["simulated_s"]
        lines += [
            f"whole atmsim run, {out['vcs']:,} VCs over {simulated:g} s simulated:",
            f"  wall {format_spread(wall, 's')}, "
            f"{row['times_real_time']['median']:.2f} x real time "
            f"({verdict(wall['median'], simulated, 's')})",
            f"  CPU {format_spread(row['cpu_s'], 's')}",
            f"  peak {format_spread(peak, 'MiB')}, "
            f"{row['bytes_per_vc']:,.0f} bytes per VC (peak / N) "
            f"({verdict(peak['median'], TARGETS['whole_scale_peak_mib'], 'MiB')})",
            f"  set-up {format_spread(setup, 's')} wall, "
            f"{format_spread(row['setup_cpu_s'], 's')} CPU "
            f"({verdict(setup['median'], TARGETS['whole_scale_setup_s'], 's')})",
        ]
    return "\n".join(lines)


def format_scale(out: dict[str, Any]) -> str:
    """The summary lines of ``bench_scale``."""
    rows = out["rows"]
    if not rows:
        return "scale: no N"
    lines = [
        f"scale: N on/off VCs into one OC-48 port at load 0.9, {out['duration_s']:g} s "
        f"simulated; cells per CPU-second of the loop, cost per cell against N = {rows[0]['vcs']}:"
    ]
    for row in rows:
        paired = row["paired_cost_vs_first"]
        line = (
            f"  N = {row['vcs']:>7,}: {format_spread(row['cells_per_cpu_s'])}, "
            f"cost x {row['cost_vs_first']:.2f} (round by round: x {paired['median']:.2f}, "
            f"{paired['min']:.2f} - {paired['max']:.2f})"
        )
        if row["vcs"] == 10_000 and rows[0]["vcs"] == 10:
            line += "; " + _verdict(row["cost_vs_first"], TARGETS["scale_cost_10000"], True)
        lines.append(line)
    return "\n".join(lines)


# --------------------------------------------------------------------------- processes


def atmsim_command() -> list[str]:
    """How to start the ``atmsim`` command: the console script beside this Python, or
    ``python -m atmsim``."""
    script = Path(sys.executable).with_name("atmsim")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "atmsim"]


def _hwm_kib(pid: int) -> Optional[int]:
    """The peak resident set of process ``pid`` so far (Linux's VmHWM, KiB), or None."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def measure_process(
    command: Sequence[str], cwd: Optional[Path] = None, timeout_s: float = 600.0
) -> dict[str, Any]:
    """Run ``command`` to its end; its ``wall_s``, ``cpu_s`` (user + system), ``peak_mib``
    (largest resident set) and ``returncode``, with the last line of its stderr
    as ``error`` when it failed. Output goes to a temporary file, not a pipe,
    so that a talkative process cannot block.

    The peak is the child's VmHWM, read every millisecond while it runs (on
    Linux the ``ru_maxrss`` of a child also counts the memory of the parent
    it was forked from: 126 MiB for a 34 MiB ``atmsim validate`` started
    from here). A process frees memory as it exits, so the last reading
    holds the peak. Without /proc, ``ru_maxrss`` is used."""
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(list(command), cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        deadline = started + timeout_s
        peak_kib: Optional[int] = None
        while True:
            hwm = _hwm_kib(process.pid)
            if hwm is not None:
                peak_kib = max(peak_kib or 0, hwm)
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                process.kill()
                pid, status, usage = os.wait4(process.pid, 0)
                break
            time.sleep(0.001)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        lines = err.read().decode("utf-8", "replace").strip().splitlines()
    if peak_kib is None:
        peak_kib = usage.ru_maxrss  # KiB on Linux
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_mib": peak_kib / 1024.0,
        "returncode": process.returncode,
        "error": lines[-1] if process.returncode and lines else None,
    }


def _measured(name: str, command: Sequence[str], cwd: Path) -> dict[str, Any]:
    """``measure_process``, raising RuntimeError with the command's last error line."""
    got = measure_process(command, cwd=cwd)
    if got["returncode"] != 0:
        raise RuntimeError(f"{name} exited with {got['returncode']}: {got['error']}")
    return got


def process_commands(work: Path) -> dict[str, list[str]]:
    """The whole-process benchmarks: name -> command (run directories under ``work``)."""
    atmsim = atmsim_command()
    return {
        "validate md1": [*atmsim, "validate", str(STARTUP_SCENARIO)],
        "run md1 1 ms": [
            *atmsim,
            "run",
            str(STARTUP_SCENARIO),
            "--set",
            "run.duration=1 ms",
            "--no-progress",
            "--out",
            str(work / "md1"),
        ],
        "run md1 1 ms, no probes": [
            *atmsim,
            "run",
            str(STARTUP_SCENARIO),
            "--set",
            "run.duration=1 ms",
            "--set",
            "probes.queue=[]",
            "--no-progress",
            "--out",
            str(work / "md1-bare"),
        ],
        "run mux_onoff": [
            *atmsim,
            "run",
            str(BENCH_SCENARIO),
            "--no-progress",
            "--out",
            str(work / "mux_onoff"),
        ],
    }


NO_SERIES = ("validate md1", "run md1 1 ms, no probes")
"""The whole-process benchmarks that write no series (no pyarrow): the peak-memory
target is for these."""

PROCESS_TARGETS = {
    "validate md1": ("wall_s", "validate_wall_s"),
    "run md1 1 ms": ("wall_s", "run_1ms_wall_s"),
    "run md1 1 ms, no probes": ("wall_s", "run_1ms_wall_s"),
    "run mux_onoff": ("cpu_s", "mux_process_cpu_s"),
}
"""Which figure of each whole-process benchmark has a target, and which."""


def bench_process(runs: int = 5, echo: Echo = _quiet) -> dict[str, Any]:
    """Whole ``atmsim`` processes (``process_commands``), each run ``runs`` times in turn.

    Returns ``rows``: name -> {``command``, ``wall_s``, ``cpu_s``,
    ``peak_mib`` (each a ``spread``)}, and ``runs``. Raises RuntimeError
    when a command fails.
    """
    _check_runs(runs)
    measured: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="atmsim-bench-") as tmp:
        work = Path(tmp)
        commands = process_commands(work)
        for attempt in range(1, runs + 1):
            for name, command in commands.items():
                for stale in (work / "md1", work / "md1-bare", work / "mux_onoff"):
                    shutil.rmtree(stale, ignore_errors=True)
                got = _measured(f"atmsim {name}", command, work)
                measured.setdefault(name, []).append(got)
                echo(
                    f"{name} run {attempt}/{runs}: {got['wall_s']:.3f} s wall, "
                    f"{got['cpu_s']:.3f} s CPU, {got['peak_mib']:.0f} MiB"
                )
    skip = len(atmsim_command())
    rows = {
        name: {
            "command": "atmsim " + " ".join(commands[name][skip:]),
            **{key: spread([g[key] for g in got]) for key in ("wall_s", "cpu_s", "peak_mib")},
        }
        for name, got in measured.items()
    }
    out = {"rows": rows, "runs": runs}
    echo(format_process(out))
    return out


def format_process(out: dict[str, Any]) -> str:
    """The summary lines of ``bench_process``."""
    lines = ["whole processes (start-up included):"]
    peak = 0.0
    for name, row in out["rows"].items():
        lines.append(
            f"  {name}: {format_spread(row['wall_s'], 's')} wall, "
            f"{format_spread(row['cpu_s'], 's')} CPU, {row['peak_mib']['median']:.0f} MiB peak"
        )
        key, target = PROCESS_TARGETS.get(name, (None, None))
        if key is not None:
            figure = "wall" if key == "wall_s" else "CPU"
            lines.append(
                f"    {figure}: " + _verdict(row[key]["median"], TARGETS[target], at_most=True)
            )
        if name in NO_SERIES:
            peak = max(peak, row["peak_mib"]["median"])
    lines.append(
        f"  peak memory without a series to write ({', '.join(NO_SERIES)}): {peak:.0f} MiB; "
        + _verdict(peak, TARGETS["peak_mib"], at_most=True)
    )
    return "\n".join(lines)


# --------------------------------------------------------------------------- memory


FLAT_SLACK_KIB = 1024
"""How much the core's memory may grow over the long run and still count as flat:
a few pages of allocator slack, far below what growing with time would show
(mux_onoff makes 3.3 x 10^5 cells a simulated second)."""


def _memory_measure(*args: str) -> dict[str, Any]:
    """One measure of ``atmsim.validation.memory_bench`` in a fresh process."""
    command = [sys.executable, "-m", "atmsim.validation.memory_bench", *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        raise RuntimeError(
            f"memory measure {' '.join(args)} exited with {done.returncode}: "
            + (lines[-1] if lines else "no output")
        )
    return json.loads(done.stdout.strip().splitlines()[-1])


def bench_memory(duration_s: float = 3000.0, echo: Echo = _quiet) -> dict[str, Any]:
    """What the core holds (``atmsim.validation.memory_bench``): bytes per VC, per cell
    in flight on a link and per queued cell (slopes between two sizes), and its
    memory after each tenth of a ``duration_s`` run of mux_onoff without probes.

    Returns ``bytes_per_vc``, ``bytes_per_cell_on_link``, ``bytes_per_queued_cell``,
    ``flat`` (the readings in KiB, ``growth_kib``, ``ok``) and the raw ``measures``.
    """
    small, large = _memory_measure("vcs", "1000"), _memory_measure("vcs", "100000")
    idle, delayed = _memory_measure("flight", "0"), _memory_measure("flight", "1")
    short, full = _memory_measure("queue", "1000"), _memory_measure("queue", "1000000")
    echo("memory: VCs, cells on a link and queued cells measured")
    flat = _memory_measure("flat", repr(float(duration_s)), "10")
    readings = flat["core_kib"]
    growth = readings[-1] - readings[0]

    def slope(a: dict, b: dict, key: str) -> float:
        return (b["core_kib"] - a["core_kib"]) * 1024.0 / max(1, b[key] - a[key])

    out = {
        "bytes_per_vc": slope(small, large, "vcs"),
        "bytes_per_cell_on_link": slope(idle, delayed, "on_links"),
        "bytes_per_queued_cell": slope(short, full, "queued"),
        "flat": {
            "duration_s": duration_s,
            "cells": flat["cells"],
            "core_kib": readings,
            "growth_kib": growth,
            "ok": growth <= FLAT_SLACK_KIB,
        },
        "measures": {
            "vcs": [small, large],
            "flight": [idle, delayed],
            "queue": [short, full],
        },
    }
    echo(format_memory(out))
    return out


def format_memory(out: dict[str, Any]) -> str:
    """The summary lines of ``bench_memory``."""
    vcs, flight, queue = (out["measures"][k] for k in ("vcs", "flight", "queue"))
    flat = out["flat"]
    mib = 1.0 / 1024
    return "\n".join(
        [
            "memory the core holds (resident, each measure in a fresh process):",
            f"  per VC: {out['bytes_per_vc']:.0f} bytes ({vcs[0]['vcs']:,} VCs "
            f"{vcs[0]['core_kib'] * mib:.1f} MiB, {vcs[1]['vcs']:,} VCs "
            f"{vcs[1]['core_kib'] * mib:.1f} MiB)",
            f"  per cell in flight on a link: {out['bytes_per_cell_on_link']:.0f} bytes "
            f"({flight[1]['on_links']:,} cells on a 1 s link: "
            f"{flight[1]['core_kib'] * mib:.1f} MiB)",
            f"  per queued cell: {out['bytes_per_queued_cell']:.0f} bytes "
            f"({queue[1]['queued']:,} cells queued: {queue[1]['core_kib'] * mib:.1f} MiB)",
            f"  mux_onoff for {flat['duration_s']:g} s ({flat['cells']:,} cells), after "
            f"each tenth: {', '.join(str(k) for k in flat['core_kib'])} KiB; grew "
            f"{flat['growth_kib']} KiB: " + ("flat" if flat["ok"] else "NOT flat"),
        ]
    )


# --------------------------------------------------------------------------- against ns-2


def bench_params() -> Dumbbell:
    """The dumbbell to benchmark: scenarios/ip_dumbbell.toml, else the validation dumbbell."""
    if BENCH_DUMBBELL.is_file():
        return params_from_scenario(BENCH_DUMBBELL)
    return default_params("reno")


def atmsim_process_command(params: Dumbbell, out: Path) -> Optional[list[str]]:
    """``atmsim run`` of the dumbbell's scenario file (None without a file)."""
    if params.scenario is None:
        return None
    command = [*atmsim_command(), "run", str(params.scenario), "--no-progress"]
    for item in atmsim_overrides(params):
        command += ["--set", item]
    return command + ["--out", str(out)]


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def bench_dumbbell(
    runs: int = 5,
    params: Optional[Dumbbell] = None,
    process: bool = True,
    echo: Echo = _quiet,
) -> dict[str, Any]:
    """atmsim against ns-2 on the dumbbell, in pairs: atmsim then ns-2, ``runs`` times.

    Each pair gives the loop ratio (atmsim's packets per wall-second of its
    loop over ns-2's) and, with ``process``, the whole-process ratio (ns-2's
    CPU seconds over those of ``atmsim run``): above 1, atmsim is faster.
    Returns ``atmsim_packets``, ``atmsim_loop_s``, ``atmsim_packets_per_s``,
    ``atmsim_process_cpu_s`` and, with ns-2 installed, ``ns2_packets``,
    ``ns2_loop_s``, ``ns2_packets_per_s``, ``ns2_process_cpu_s``,
    ``loop_ratio`` and ``process_ratio`` (``spread``s; the ratios are
    medians of the paired ratios); without ns-2 those are None and ``note``
    says so. Also ``params``, ``ns2_args``, ``runs`` and the targets.
    """
    _check_runs(runs)
    params = params or bench_params()
    ns = find_ns()
    out: dict[str, Any] = {
        "params": params,
        "runs": runs,
        "ns2_args": ns2_args(params, monitor=False),
        "target_loop_ratio": TARGETS["dumbbell_loop_ratio"],
        "target_process_ratio": TARGETS["dumbbell_process_ratio"],
    }
    atm_loop, atm_rate, atm_cpu = [], [], []
    ns_loop, ns_rate, ns_cpu = [], [], []
    loop_ratio, process_ratio = [], []
    atm_packets = ns_packets = 0
    with tempfile.TemporaryDirectory(prefix="atmsim-bench-") as tmp:
        work = Path(tmp)
        for attempt in range(1, runs + 1):
            result = run_atmsim_dumbbell(params)
            atm_packets = atmsim_metrics(result.summary, params)["link_transmissions"]
            wall = max(result.loop_wall_s, 1e-9)
            atm_loop.append(wall)
            atm_rate.append(atm_packets / wall)
            command = atmsim_process_command(params, work / f"run{attempt}") if process else None
            if command is not None:
                atm_cpu.append(_measured("atmsim run", command, work)["cpu_s"])
            line = f"dumbbell pair {attempt}/{runs}: atmsim loop {wall:.3f} s"
            if atm_cpu:
                line += f", process {atm_cpu[-1]:.3f} s CPU"
            if ns is not None:
                before = _children_cpu_s()
                parsed = run_ns2_dumbbell(params, ns=ns, monitor=False)
                cpu = _children_cpu_s() - before
                ns_packets = parsed["total"]["link_transmissions"]
                ns_wall = max(parsed["run_s"], 1e-9)
                ns_loop.append(ns_wall)
                ns_rate.append(ns_packets / ns_wall)
                loop_ratio.append(atm_rate[-1] / ns_rate[-1])
                line += f"; ns-2 loop {ns_wall:.3f} s"
                if command is not None:
                    ns_cpu.append(cpu)
                    process_ratio.append(cpu / max(atm_cpu[-1], 1e-9))
                    line += f", process {cpu:.3f} s CPU"
                line += f"; loop ratio {loop_ratio[-1]:.1f}"
            echo(line)

    def maybe(values: list[float]) -> Optional[dict[str, Any]]:
        return spread(values) if values else None

    out.update(
        atmsim_packets=atm_packets,
        atmsim_loop_s=spread(atm_loop),
        atmsim_packets_per_s=spread(atm_rate),
        atmsim_process_cpu_s=maybe(atm_cpu),
        ns2_packets=ns_packets if ns is not None else None,
        ns2_loop_s=maybe(ns_loop),
        ns2_packets_per_s=maybe(ns_rate),
        ns2_process_cpu_s=maybe(ns_cpu),
        loop_ratio=maybe(loop_ratio),
        process_ratio=maybe(process_ratio),
        note=f"ns-2 at {ns}" if ns else "ns-2 is not installed (apt-get install ns2): no ratio",
    )
    echo(format_bench(out))
    return out


def format_bench(result: dict[str, Any]) -> str:
    """The summary lines of ``bench_dumbbell``."""
    p: Dumbbell = result["params"]
    name = p.scenario or "validation dumbbell"
    lines = [
        f"dumbbell ({name}): {p.n} {p.variant} flows, {p.bottleneck_rate_bps / 1e6:g} Mbps "
        f"bottleneck, {p.duration_s:g} s simulated, {result['runs']} runs"
        + (", alternating atmsim and ns-2" if result["loop_ratio"] else ""),
        f"  atmsim loop: {result['atmsim_packets']:,} packets, "
        f"{format_spread(result['atmsim_packets_per_s'])} packets per wall-second",
    ]
    if result["atmsim_process_cpu_s"]:
        lines.append(
            f"  atmsim whole process: {format_spread(result['atmsim_process_cpu_s'], 's')} CPU"
        )
    if result["loop_ratio"] is None:
        lines.append("  " + result["note"])
        return "\n".join(lines)
    lines.append(
        f"  ns-2 loop: {result['ns2_packets']:,} packets, "
        f"{format_spread(result['ns2_packets_per_s'])} packets per wall-second"
    )
    if result["ns2_process_cpu_s"]:
        lines.append(f"  ns-2 whole process: {format_spread(result['ns2_process_cpu_s'], 's')} CPU")
    loop = result["loop_ratio"]
    lines.append(
        f"  ratio atmsim / ns-2, loop (median of pairs): {format_spread(loop)}; "
        + _verdict(loop["median"], result["target_loop_ratio"], at_most=False)
    )
    if result["process_ratio"]:
        whole = result["process_ratio"]
        lines.append(
            f"  ratio atmsim / ns-2, whole process CPU (median of pairs): "
            f"{format_spread(whole)}; "
            + _verdict(whole["median"], result["target_process_ratio"], at_most=False)
        )
    return "\n".join(lines)


# --------------------------------------------------------------------------- the machine


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo (Linux), else what platform knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def machine() -> dict[str, Any]:
    """The machine a benchmark ran on, and how busy it was."""
    try:
        load = list(os.getloadavg())
    except OSError:
        load = None
    return {
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "atmsim": package_version(),
        "load_average": load,
        "date": time.strftime("%Y-%m-%d %H:%M"),
    }


def machine_line(m: Optional[dict[str, Any]] = None) -> str:
    """One line naming the machine (``machine()``)."""
    m = m or machine()
    load = m["load_average"]
    return (
        f"machine: {m['platform']}, {m['cpu']}, {m['cores']} cores, Python {m['python']}, "
        f"atmsim {m['atmsim']}, {m['date']}" + (f", load {load[0]:.1f}" if load else "")
    )
