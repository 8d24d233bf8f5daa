"""The ``atmsim`` command: run, validate, plot, bench.

Exit codes: 0 success; 1 the run finished but its conservation ledger does not
balance (or the core is missing); 2 bad input (scenario, flag, file), always as
one line ``error: <file>: <key>: <what is allowed>`` on stderr, never a
traceback; 130 interrupted by Ctrl-C (partial results are written).
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from .api import CoreUnavailable, Result, RunInterrupted, package_version, run
from .errors import ScenarioError
from .scenario import flatten, load_scenario

try:  # recent typer ships its own copy of click
    from typer._click.exceptions import ClickException
except ImportError:  # pragma: no cover - older typer depends on click
    from click.exceptions import ClickException

BENCH_SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "mux_onoff.toml"
"""The repository's benchmark scenario, found relative to this package."""

MAX_TABLE_ROWS = 50
"""Longer port and VC tables are cut here (the full lists are in summary.json)."""

app = typer.Typer(
    add_completion=False,
    pretty_exceptions_enable=False,
    help="Cell-level simulator of TCP/IP over ATM networks.",
)


class CliError(Exception):
    """Bad input to a command that is not a scenario (e.g. a run dir without series)."""


SetOption = Annotated[
    Optional[list[str]],
    typer.Option(
        "--set",
        metavar="KEY=VALUE",
        help="Override a scenario key (repeatable), e.g. --set links.bottleneck.buffer=500 "
        'or --set "run.duration=5 s".',
    ),
]
ScenarioArgument = Annotated[
    Path, typer.Argument(metavar="SCENARIO", help="Scenario file (TOML).", show_default=False)
]


@app.command("run")
def run_command(
    scenario: ScenarioArgument,
    out: Annotated[
        Optional[Path],
        typer.Option("--out", help="Run directory (default: runs/<scenario>-<YYYYmmdd-HHMMSS>)."),
    ] = None,
    seed: Annotated[Optional[int], typer.Option("--seed", help="Replace run.seed.")] = None,
    sets: SetOption = None,
    no_progress: Annotated[
        bool, typer.Option("--no-progress", help="Never show a progress bar.")
    ] = False,
) -> None:
    """Run a scenario; write scenario.toml, summary.json and series.parquet to the run dir."""
    out_dir = out if out is not None else default_run_dir(scenario)
    try:
        result = run(
            scenario,
            seed=seed,
            overrides=sets or [],
            out=out_dir,
            progress=False if no_progress else None,
        )
    except RunInterrupted as interrupted:
        summary = interrupted.result.summary
        print_result(interrupted.result, out_dir)
        print(
            f"interrupted at {summary.get('sim_time_s')} s simulated; partial results in {out_dir}",
            file=sys.stderr,
        )
        raise typer.Exit(130) from None
    if not print_result(result, out_dir):
        raise typer.Exit(1)


@app.command("validate")
def validate_command(scenario: ScenarioArgument, sets: SetOption = None) -> None:
    """Check a scenario (with any --set overrides) without running it."""
    loaded = load_scenario(scenario, sets or [])
    vcs, sources = flatten(loaded)
    print(
        f"ok: {scenario} ({len(loaded.nodes)} nodes, {len(loaded.links)} links, "
        f"{len(vcs)} vcs, {len(sources)} sources)"
    )


PLOTS = {
    "queue_cells": ("queue.png", "queue length (cells)", "Queue at each port"),
    "utilization": ("utilization.png", "utilization (busy fraction)", "Port utilization"),
    "vc_rate_cps": ("vc_rate.png", "delivered rate (cells/s)", "Cell rate delivered per VC"),
}
"""metric -> (file name, y-axis label with units, title)."""


@app.command("plot")
def plot_command(
    run_dir: Annotated[
        Path, typer.Argument(metavar="RUN_DIR", help="A run directory.", show_default=False)
    ],
) -> None:
    """Plot a run's time series: queue.png, utilization.png, vc_rate.png."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    series_path = run_dir / "series.parquet"
    if not run_dir.is_dir():
        raise CliError(f"{run_dir}: no such run directory")
    if not series_path.is_file():
        raise CliError(f"{run_dir}: no series.parquet (the run had no [probes])")
    series = pd.read_parquet(series_path)
    if series.empty:
        raise CliError(f"{series_path}: no samples")
    title_suffix = ""
    summary_path = run_dir / "summary.json"
    if summary_path.is_file():
        title_suffix = f" ({json.loads(summary_path.read_text()).get('scenario', '')})"
    for metric, rows in series.groupby("metric", sort=False):
        file_name, y_label, title = PLOTS.get(
            str(metric), (f"{metric}.png", str(metric), str(metric))
        )
        figure, axes = plt.subplots(figsize=(9, 4.5))
        entities = rows.groupby("entity", sort=False)
        for entity, samples in entities:
            axes.plot(samples["time_s"], samples["value"], label=str(entity), linewidth=1)
        axes.set_xlabel("time (s)")
        axes.set_ylabel(y_label)
        axes.set_title(title + title_suffix)
        axes.grid(True, alpha=0.3)
        if len(entities) <= 12:
            axes.legend(loc="best", fontsize="small")
        figure.tight_layout()
        figure.savefig(run_dir / file_name, dpi=120)
        plt.close(figure)
        print(run_dir / file_name)


@app.command("bench")
def bench_command(
    repeat: Annotated[int, typer.Option("--repeat", min=1, help="Runs; the best counts.")] = 3,
) -> None:
    """Simulated cells and events per wall-second on scenarios/mux_onoff.toml."""
    if not BENCH_SCENARIO.is_file():
        raise CliError(f"{BENCH_SCENARIO}: no such file (bench runs from a source checkout)")
    best_cells = best_events = 0.0
    sim_time = None
    for attempt in range(1, repeat + 1):
        result = run(BENCH_SCENARIO, progress=False)
        loop_s = max(result.loop_wall_s, 1e-9)
        cells = result.summary["conservation"]["cells_generated"] / loop_s
        events = result.summary["events"] / loop_s
        sim_time = result.summary["sim_time_s"]
        print(
            f"run {attempt}/{repeat}: {loop_s:.3f} s wall, "
            f"{cells:,.0f} cells/s, {events:,.0f} events/s"
        )
        best_cells = max(best_cells, cells)
        best_events = max(best_events, events)
    print(f"scenario: {BENCH_SCENARIO} ({sim_time} s simulated), best of {repeat}")
    print(f"simulated cells per wall-second: {best_cells:,.0f}")
    print(f"events per wall-second: {best_events:,.0f}")
    print(
        f"machine: {platform.platform()}, {cpu_model()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, atmsim {package_version()}"
    )


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo (Linux), else what platform knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def default_run_dir(scenario: Path) -> Path:
    """``runs/<scenario stem>-<YYYYmmdd-HHMMSS>``, with -2, -3, ... if it exists."""
    base = Path("runs") / f"{scenario.stem}-{time.strftime('%Y%m%d-%H%M%S')}"
    candidate, n = base, 1
    while candidate.exists():
        n += 1
        candidate = base.with_name(f"{base.name}-{n}")
    return candidate


def _count(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def _table(title: str, columns: list[str], rows: list[list[str]]) -> Table:
    table = Table(title=title, title_justify="left")
    for i, column in enumerate(columns):
        table.add_column(column, justify="left" if i == 0 else "right", no_wrap=i == 0)
    for row in rows[:MAX_TABLE_ROWS]:
        table.add_row(*row)
    if len(rows) > MAX_TABLE_ROWS:
        table.caption = f"{len(rows) - MAX_TABLE_ROWS} more in summary.json"
    return table


def print_result(result: Result, out_dir: Path) -> bool:
    """Print the port and VC tables and the conservation ledger; True if it balances."""
    console = Console()
    if not console.is_terminal:  # a file or a pipe: do not squeeze the tables into 80 columns
        console = Console(width=200)
    summary = result.summary
    port_rows = [
        [
            port["name"],
            _count(port["cells_in"]),
            _count(port["cells_out"]),
            _count(port["cells_dropped"]),
            f"{port['clr']:.3g}",
            _count(port["max_queue_cells"]),
            f"{port['mean_queue_cells']:.1f}",
            f"{port['utilization']:.4f}",
        ]
        for port in summary.get("ports", [])
    ]
    console.print(
        _table(
            "Ports",
            ["port", "cells in", "out", "dropped", "CLR", "max queue", "mean queue", "utilization"],
            port_rows,
        )
    )
    vc_rows = [
        [
            vc["name"],
            _count(vc["cells_sent"]),
            _count(vc["cells_delivered"]),
            _count(vc["frames_sent"]),
            _count(vc["frames_delivered"]),
            _count(vc["frames_corrupted"]),
            _count(vc["frames_merged"]),
            f"{vc['frame_goodput_cps']:,.0f}",
        ]
        for vc in summary.get("vcs", [])
    ]
    console.print(
        _table(
            "VCs",
            [
                "vc",
                "cells sent",
                "delivered",
                "frames sent",
                "delivered",
                "corrupted",
                "merged",
                "goodput (cells/s)",
            ],
            vc_rows,
        )
    )
    ledger = summary["conservation"]
    accounted = (
        ledger["cells_delivered"]
        + ledger["cells_dropped"]
        + ledger["cells_queued"]
        + ledger["cells_on_links"]
    )
    balanced = bool(ledger["ok"]) and ledger["cells_generated"] == accounted
    terms = (
        f"delivered {ledger['cells_delivered']:,} + dropped {ledger['cells_dropped']:,} "
        f"+ queued {ledger['cells_queued']:,} + on links {ledger['cells_on_links']:,}"
    )
    if balanced:
        print(f"conservation ledger: balanced (generated {ledger['cells_generated']:,} = {terms})")
    else:
        print(
            f"conservation ledger: UNBALANCED (generated {ledger['cells_generated']:,} "
            f"!= {terms} = {accounted:,})"
        )
    print(
        f"simulated {summary.get('sim_time_s')} s, {summary.get('events', 0):,} events, "
        f"{summary.get('wall_s', 0):.2f} s wall"
    )
    print(f"run dir: {out_dir}")
    return balanced


def _error(message: str) -> None:
    print(f"error: {message}".replace("\n", " "), file=sys.stderr)


def main(argv: Optional[list[str]] = None) -> None:
    """Entry point of the ``atmsim`` command (and ``python -m atmsim``)."""
    try:
        code = app(args=argv, prog_name="atmsim", standalone_mode=False)
    except ClickException as error:  # typer's usage errors: bad flag, missing argument
        _error(f"{error.format_message()} (see atmsim --help)")
        code = 2
    except (ScenarioError, CliError) as error:
        _error(str(error))
        code = 2
    except OSError as error:  # e.g. an --out directory that cannot be written
        _error(str(error))
        code = 2
    except CoreUnavailable as error:
        _error(str(error))
        code = 1
    except typer.Abort:
        code = 1
    except KeyboardInterrupt:
        code = 130
    sys.exit(code or 0)
