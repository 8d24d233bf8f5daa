"""The ``atmsim`` command: run, validate, plot, bench.

Exit codes: 0 success; 1 the run finished but its conservation ledger does not
balance (or the core is missing); 2 bad input (scenario, flag, file), always as
one line ``error: <file>: <key>: <what is allowed>`` on stderr, never a
traceback; 130 interrupted by Ctrl-C (partial results are written).
"""

from __future__ import annotations

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
from .scenario import Network, load_scenario
from .units import CELL_BITS

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
    network = Network(loaded)
    made_by = f'template "{loaded.template["kind"]}": ' if loaded.template else ""
    print(
        f"ok: {scenario} ({made_by}{len(network.nodes)} nodes, {len(network.links)} links, "
        f"{len(network.vcs)} vcs, {len(network.sources)} sources, {len(network.flows)} flows)"
    )


@app.command("plot")
def plot_command(
    run_dir: Annotated[
        Path, typer.Argument(metavar="RUN_DIR", help="A run directory.", show_default=False)
    ],
) -> None:
    """Plot a run's time series: queue.png, ip_queue.png, utilization.png, vc_rate.png,
    per TCP flow window.png, sequence.png, srtt.png, and for ABR acr.png, er.png,
    abr_queue.png, load_factor.png, fair_share.png."""
    from .plots import PlotInputError, plot_run_dir

    try:
        written = plot_run_dir(run_dir)
    except PlotInputError as error:
        raise CliError(str(error)) from None
    for path in written:
        print(path)


@app.command("reproduce")
def reproduce_command(
    ids: Annotated[
        Optional[list[str]],
        typer.Argument(
            metavar="[ID]...",
            help="Experiment ids (seed000-sec8, ...) or seeds (seed000, seed002, seed003); "
            "none: list them.",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", help="Output directory: one folder per experiment.")
    ] = Path("runs/reproduce"),
    list_only: Annotated[
        bool, typer.Option("--list", help="List the experiments and exit.")
    ] = False,
    jobs: Annotated[
        Optional[int],
        typer.Option("--jobs", min=1, help="Experiments run at once (default: the cores)."),
    ] = None,
) -> None:
    """Run the seeds' published experiments and compare: published and simulated values,
    tolerance and verdict per quantity; table.csv, figures and run files per experiment
    in OUT/<id>/, all rows in OUT/<seed or selected>.csv. Exit 0 with the report
    whatever the verdicts; 1 if a conservation ledger does not balance."""
    from .reproduce.report import ReproduceInputError, main

    try:
        code = main(ids or [], out, jobs, list_only)
    except ReproduceInputError as error:
        raise CliError(str(error)) from None
    if code:
        raise typer.Exit(code)


@app.command("bench")
def bench_command(
    repeat: Annotated[int, typer.Option("--repeat", min=1, help="Runs; the best counts.")] = 3,
    dumbbell: Annotated[
        bool, typer.Option("--dumbbell/--no-dumbbell", help="Also bench the IP dumbbell.")
    ] = True,
) -> None:
    """Cells per wall-second on mux_onoff; packets per wall-second on the IP dumbbell
    and the ratio to ns-2 when ns-2 is installed."""
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
    if dumbbell:
        from .validation.bench import bench_dumbbell, format_bench

        print(format_bench(bench_dumbbell(repeat)))
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
    """Print the port, VC and flow tables and the conservation ledgers; True if they balance."""
    console = Console()
    if not console.is_terminal:  # a file or a pipe: do not squeeze the tables into 80 columns
        console = Console(width=200)
    summary = result.summary
    ports = summary.get("ports", [])
    atm_ports = [port for port in ports if port.get("layer", "atm") != "ip"]
    ip_ports = [port for port in ports if port.get("layer") == "ip"]
    if atm_ports or not ip_ports:
        console.print(
            _table(
                "Ports",
                [
                    "port",
                    "cells in",
                    "out",
                    "dropped",
                    "CLR",
                    "max queue",
                    "mean queue",
                    "utilization",
                ],
                [
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
                    for port in atm_ports
                ],
            )
        )
    if ip_ports:
        console.print(
            _table(
                "IP ports",
                [
                    "port",
                    "packets in",
                    "out",
                    "dropped",
                    "loss",
                    "max queue",
                    "mean queue",
                    "utilization",
                ],
                [
                    [
                        port["name"],
                        _count(port.get("packets_in", 0)),
                        _count(port.get("packets_out", 0)),
                        _count(port.get("packets_dropped", 0)),
                        f"{_ratio(port.get('packets_dropped', 0), port.get('packets_in', 0)):.3g}",
                        _count(port.get("max_queue_packets", 0)),
                        f"{port.get('mean_queue_packets', 0.0):.1f}",
                        f"{port['utilization']:.4f}",
                    ]
                    for port in ip_ports
                ],
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
    if vc_rows or not ip_ports:
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
    flows = summary.get("flows", [])
    if flows:
        console.print(_flows_table(flows))
    abr_vcs = [vc for vc in summary.get("vcs", []) if isinstance(vc.get("abr"), dict)]
    if abr_vcs:
        console.print(_abr_table(abr_vcs))
    balanced = True
    for line, ok in ledger_lines(summary):
        print(line)
        balanced = balanced and ok
    print(
        f"simulated {summary.get('sim_time_s')} s, {summary.get('events', 0):,} events, "
        f"{summary.get('wall_s', 0):.2f} s wall"
    )
    print(f"run dir: {out_dir}")
    return balanced


def _ratio(part: float, whole: float) -> float:
    return part / whole if whole else 0.0


def _mbps(cells_per_s: float) -> str:
    """A cell rate in Mbps on the wire (424 bits per cell)."""
    return f"{cells_per_s * CELL_BITS / 1e6:.3f}"


def _abr_table(vcs: list[dict]) -> Table:
    """One row per ABR VC: its source end system at the end of the run."""
    return _table(
        "ABR",
        [
            "vc",
            "ACR (Mbps)",
            "last ER (Mbps)",
            "FRMs sent",
            "BRMs received",
            "rule-6 cuts",
            "source queue (cells)",
        ],
        [
            [
                vc["name"],
                _mbps(vc["abr"]["acr_cps"]),
                _mbps(vc["abr"]["last_er_cps"]),
                _count(vc["abr"]["frms_sent"]),
                _count(vc["abr"]["brms_received"]),
                _count(vc["abr"]["rule6_cuts"]),
                _count(vc["abr"]["source_queue_cells"]),
            ]
            for vc in vcs
        ],
    )


def _flows_table(flows: list[dict]) -> Table:
    finite = any(flow.get("completed_at_s") is not None for flow in flows)
    columns = [
        "flow",
        "goodput (Mbps)",
        "delivered (B)",
        "retransmitted (B)",
        "timeouts",
        "fast retransmits",
        "final cwnd (B)",
    ]
    if finite:
        columns.append("completed at (s)")
    rows = []
    for flow in flows:
        row = [
            flow["name"],
            f"{flow['goodput_mbps']:.3f}",
            _count(flow["bytes_delivered"]),
            _count(flow["bytes_retransmitted"]),
            _count(flow["timeouts"]),
            _count(flow["fast_retransmits"]),
            f"{flow['final_cwnd_bytes']:,.0f}",
        ]
        if finite:
            done = flow.get("completed_at_s")
            row.append("-" if done is None else f"{done:.4f}")
        rows.append(row)
    total = sum(flow["goodput_mbps"] for flow in flows)
    table = _table("Flows", columns, rows)
    table.caption = (table.caption + "; " if table.caption else "") + (
        f"total goodput {total:.3f} Mbps"
    )
    return table


def ledger_lines(summary: dict) -> list[tuple[str, bool]]:
    """The conservation ledger lines to print, each with whether it balances.

    Always the cell ledger; with TCP flows also the packet and byte ledgers
    (docs/core-interface.md). A ledger balances when the core says so and its
    terms add up here too.
    """
    ledger = summary["conservation"]
    lines = []
    cells = (
        ("delivered", ledger["cells_delivered"]),
        ("dropped", ledger["cells_dropped"]),
        ("queued", ledger["cells_queued"]),
        ("on links", ledger["cells_on_links"]),
    )
    has_sub = "packets" in ledger or "bytes" in ledger
    cell_ok = ledger["cells_generated"] == sum(n for _, n in cells)
    if not has_sub:
        cell_ok = cell_ok and bool(ledger["ok"])
    lines.append(
        _ledger_line("conservation ledger", "generated", ledger["cells_generated"], cells, cell_ok)
    )
    if summary.get("flows"):
        packets = ledger.get("packets")
        if packets is None:
            lines.append(("packet ledger: MISSING from the core's summary", False))
        else:
            terms = (
                ("delivered", packets["delivered"]),
                ("dropped", packets["dropped"]),
                ("queued", packets["queued"]),
                ("on links", packets["on_links"]),
            )
            ok = bool(packets["ok"]) and packets["generated"] == sum(n for _, n in terms)
            lines.append(
                _ledger_line("packet ledger", "generated", packets["generated"], terms, ok)
            )
        nbytes = ledger.get("bytes")
        if nbytes is None:
            lines.append(("byte ledger: MISSING from the core's summary", False))
        else:
            terms = (
                ("delivered", nbytes["delivered"]),
                ("dropped in network", nbytes["dropped_in_network"]),
                ("dropped by AAL5", nbytes["dropped_aal5"]),
                ("duplicates", nbytes["duplicates"]),
                ("held out of order", nbytes["held_out_of_order"]),
                ("in path", nbytes["in_path"]),
            )
            once = nbytes["sent_once"] + nbytes["retransmitted"]
            ok = (
                bool(nbytes["ok"])
                and nbytes["sent"] == once
                and nbytes["sent"] == sum(n for _, n in terms)
            )
            split = f"sent once {nbytes['sent_once']:,} + retransmitted {nbytes['retransmitted']:,}"
            lines.append(_ledger_line("byte ledger", "sent", nbytes["sent"], terms, ok, split))
    if not ledger["ok"] and all(ok for _, ok in lines):
        problems = "; ".join(str(p) for p in ledger.get("problems", [])) or "no details"
        lines.append((f"conservation: the core reports a problem ({problems})", False))
    return lines


def _ledger_line(
    name: str,
    left: str,
    total: int,
    terms: tuple[tuple[str, int], ...],
    ok: bool,
    split: str = "",
) -> tuple[str, bool]:
    right = " + ".join(f"{label} {n:,}" for label, n in terms)
    middle = f"{split} = " if split else ""
    if ok:
        return f"{name}: balanced ({left} {total:,} = {middle}{right})", True
    accounted = sum(n for _, n in terms)
    extra = f"; {split}" if split else ""
    return f"{name}: UNBALANCED ({left} {total:,} != {right} = {accounted:,}{extra})", False


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
