"""Where a whole run of many VCs spends its CPU time and memory, phase by phase.

Runs ``atmsim.validation.bench.scale_scenario(N, seconds)`` (N geometric on/off VCs
into one OC-48 port) through the steps ``atmsim.run`` takes, one by one, with the
cyclic collector off as ``atmsim.run`` holds it, and prints each step's CPU seconds
(``time.process_time``) and the process's resident memory after it (VmRSS) and at
its peak so far (VmHWM), from /proc (Linux)::

    .venv/bin/python -m devtools.run_phases 100000 1

docs/performance.md ("100,000 and 1,000,000 VCs") keeps the figures. The steps are
the functions ``atmsim.run`` calls, not a copy of them; what the command adds around
them (start-up, the printed tables) is in ``atmsim bench --whole-scale``.
"""

from __future__ import annotations

import gc
import json
import sys
import time
from typing import Optional


def _status_mib(key: str) -> int:
    """A VmRSS-like line of /proc/self/status, in MiB (0 without /proc)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) // 1024
    except OSError:
        pass
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m devtools.run_phases N SECONDS", file=sys.stderr)
        return 2
    n, seconds = int(args[0]), float(args[1])
    collecting = gc.isenabled()
    gc.disable()
    try:
        _phases(n, seconds)
    finally:
        if collecting:
            gc.enable()
    return 0


def _phases(n: int, seconds: float) -> None:
    """Run and time the steps (the module's docstring)."""
    clock = [time.process_time()]

    def phase(name: str) -> None:
        now = time.process_time()
        print(
            f"{name:<22} {now - clock[0]:6.2f} CPU-s   RSS {_status_mib('VmRSS'):5d} MiB"
            f"   peak {_status_mib('VmHWM'):5d} MiB",
            flush=True,
        )
        clock[0] = now

    from atmsim.api import prepare
    from atmsim.binding import import_core
    from atmsim.columnar import parquet_bytes, split_summary
    from atmsim.rundir import complete_summary, summary_text
    from atmsim.scenario import to_core
    from atmsim.validation.bench import scale_scenario

    core = import_core()
    phase("imports")
    started = time.perf_counter()
    scenario = prepare(scale_scenario(n, seconds))
    phase("validation")
    core_input = to_core(scenario)
    phase("to_core")
    text = json.dumps(core_input, separators=(",", ":"), check_circular=False)
    phase("json.dumps")
    sim = core.Simulation(text)
    del text
    phase("core set-up")
    sim.advance(core_input["duration_ps"])
    phase("loop")
    summary_json, _series = sim.finish()
    phase("finish")
    summary = json.loads(summary_json)
    del summary_json
    phase("json.loads")
    complete_summary(summary, core_input, scenario.name, started)
    phase("complete_summary")
    light, tables = split_summary(summary)
    files = {name: parquet_bytes(rows) for name, rows in tables.items()}
    phase("Parquet files")
    text = summary_text(light)
    phase("summary.json")
    sizes = ", ".join(f"{name} {len(data):,} B" for name, data in files.items())
    print(f"{n:,} VCs, {seconds:g} s simulated; {sizes}; summary.json {len(text):,} B")


if __name__ == "__main__":
    sys.exit(main())
