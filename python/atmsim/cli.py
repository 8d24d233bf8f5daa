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
from .scenario import Network, load_scenario

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


PLOTS = {
    "queue_cells": ("queue.png", "queue (cells)", "Queue at each ATM port"),
    "ip_queue_packets": ("ip_queue.png", "queue (packets)", "Queue at each IP port"),
    "utilization": ("utilization.png", "utilization (busy fraction)", "Port utilization"),
    "vc_rate_cps": ("vc_rate.png", "delivered rate (cells/s)", "Cell rate delivered per VC"),
    "srtt_s": ("srtt.png", "smoothed RTT (ms)", "Smoothed round-trip time per flow"),
    "acr_cps": ("acr.png", "ACR (Mbps)", "Allowed cell rate per ABR VC"),
    "abr_queue_cells": ("abr_queue.png", "ABR queue (cells)", "ABR queue at each switch port"),
    "load_factor": ("load_factor.png", "load factor z", "ABR load factor at each switch port"),
    "fair_share_cps": (
        "fair_share.png",
        "fair share (Mbps)",
        "Fair share (ERICA) or advertised rate (FMMRA) at each switch port",
    ),
}
"""metric -> (file name, y-axis label with units, title). The TCP windows and
sequence numbers get their own figures (window.png, sequence.png), and so does
the explicit rate (er.png: received per VC, written per port)."""

CELL_BITS = 424
SCALES = {
    "srtt_s": 1e3,  # seconds -> ms
    "acr_cps": CELL_BITS / 1e6,  # cells/s -> Mbps on the wire (424 bits per cell)
    "fair_share_cps": CELL_BITS / 1e6,
    "er_cps": CELL_BITS / 1e6,
}
"""Plot units: metric -> factor from the series' unit."""

MAX_LEGEND_LINES = 48
"""Axes with more lines than this get no legend (up to 12 it sits inside the axes)."""

WINDOW_METRICS = ("cwnd_bytes", "window_bytes")
KB = 1024
MB = 1024 * 1024
"""Sizes in plots are binary, as in scenario files: 1 KB = 1024 bytes."""


@app.command("plot")
def plot_command(
    run_dir: Annotated[
        Path, typer.Argument(metavar="RUN_DIR", help="A run directory.", show_default=False)
    ],
) -> None:
    """Plot a run's time series: queue.png, ip_queue.png, utilization.png, vc_rate.png,
    per TCP flow window.png, sequence.png, srtt.png, and for ABR acr.png, er.png,
    abr_queue.png, load_factor.png, fair_share.png."""
    import matplotlib

    matplotlib.use("Agg")
    import pandas as pd

    series_path = run_dir / "series.parquet"
    if not run_dir.is_dir():
        raise CliError(f"{run_dir}: no such run directory")
    if not series_path.is_file():
        raise CliError(f"{run_dir}: no series.parquet (the run had no [probes])")
    series = pd.read_parquet(series_path)
    if series.empty:
        raise CliError(f"{series_path}: no samples")
    summary: dict = {}
    summary_path = run_dir / "summary.json"
    if summary_path.is_file():
        summary = json.loads(summary_path.read_text())
    suffix = f" ({summary['scenario']})" if summary.get("scenario") else ""
    ip_ports = {port["name"] for port in summary.get("ports", []) if port.get("layer") == "ip"}
    by_metric = {str(metric): rows for metric, rows in series.groupby("metric", sort=False)}
    written = []
    if any(metric in by_metric for metric in WINDOW_METRICS):
        written.append(_plot_windows(run_dir, by_metric, suffix))
    if "seq_bytes" in by_metric:
        written.append(_plot_sequence(run_dir, by_metric["seq_bytes"], suffix))
    if "er_cps" in by_metric:
        written.append(_plot_er(run_dir, by_metric, suffix))
    for metric, rows in by_metric.items():
        if metric in WINDOW_METRICS or metric in ("seq_bytes", "er_cps"):
            continue
        if metric == "queue_cells":
            rows = rows[~rows["entity"].isin(ip_ports)]  # IP ports are in ip_queue.png
            if rows.empty:
                continue
        file_name, y_label, title = PLOTS.get(metric, (f"{metric}.png", metric, metric))
        figure, axes = _new_figure()
        _plot_lines(axes, rows, SCALES.get(metric, 1.0), skip_zero=metric == "srtt_s")
        if metric == "load_factor":
            _clip_load_factor(axes, rows)
        _finish(figure, axes, y_label, title + suffix, run_dir / file_name)
        written.append(run_dir / file_name)
    for path in written:
        print(path)


def _new_figure(rows: int = 1):
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(rows, 1, figsize=(9, 4.5 if rows == 1 else 7), sharex=True)
    return figure, axes


def _plot_lines(axes, rows, scale: float = 1.0, skip_zero: bool = False) -> None:
    """One line per entity; values x ``scale``; zeros left out (no sample yet) if asked;
    infinite values (a load factor over an interval without ABR capacity) left out.
    A flow's ACK VC (``<flow>-ack``) is dashed."""
    import matplotlib
    import numpy as np

    groups = list(rows.groupby("entity", sort=False))
    many = len(groups) > 10  # more lines than the default colour cycle: use 20 colours
    for n, (entity, samples) in enumerate(groups):
        values = samples["value"] * scale
        values = values.where(np.isfinite(values))
        if skip_zero:
            values = values.where(samples["value"] != 0)
        style = "--" if str(entity).endswith("-ack") else "-"
        extra = {"color": matplotlib.colormaps["tab20"](n % 20)} if many else {}
        axes.plot(samples["time_s"], values, style, label=str(entity), linewidth=1, **extra)


LOAD_FACTOR_TOP = 5.0
"""load_factor.png shows z up to this; higher samples are clipped at the top edge."""


def _clip_load_factor(axes, rows) -> None:
    """Keep z readable: the y axis stops at LOAD_FACTOR_TOP when samples go beyond it."""
    import numpy as np

    values = rows["value"].to_numpy()
    finite = values[np.isfinite(values)]
    if finite.size and finite.max() > LOAD_FACTOR_TOP:
        axes.set_ylim(0, LOAD_FACTOR_TOP)
        axes.text(
            0.99,
            0.98,
            f"clipped at z = {LOAD_FACTOR_TOP:g}",
            transform=axes.transAxes,
            ha="right",
            va="top",
            fontsize="small",
        )


def _finish(figure, axes, y_label: str, title: str, path: Path) -> None:
    """Grid, legends (up to 12 lines), time axis, title; save as ``path``."""
    import matplotlib.pyplot as plt

    for ax in axes if isinstance(axes, (list, tuple)) else [axes]:
        ax.grid(True, alpha=0.3)
        lines = len(ax.get_lines())
        if lines <= 12:
            ax.legend(loc="best", fontsize="small")
        elif lines <= MAX_LEGEND_LINES:  # beside the axes, in columns
            ax.legend(
                loc="upper left",
                bbox_to_anchor=(1.01, 1.0),
                fontsize="x-small",
                ncol=1 + (lines - 1) // 16,
            )
    last = axes[-1] if isinstance(axes, (list, tuple)) else axes
    last.set_xlabel("time (s)")
    if y_label:
        last.set_ylabel(y_label)
    first = axes[0] if isinstance(axes, (list, tuple)) else axes
    first.set_title(title)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def _plot_windows(run_dir: Path, by_metric: dict, suffix: str) -> Path:
    """window.png: congestion window (top) and actual window (bottom) in KB, per flow."""
    panels = [
        (metric, label)
        for metric, label in (
            ("cwnd_bytes", "congestion window (KB)"),
            ("window_bytes", "actual window (KB)\nmin(cwnd, advertised)"),
        )
        if metric in by_metric
    ]
    figure, axes = _new_figure(len(panels))
    axes = list(axes) if len(panels) > 1 else [axes]
    for ax, (metric, label) in zip(axes, panels):
        _plot_lines(ax, by_metric[metric], 1 / KB)
        ax.set_ylabel(label)
    path = run_dir / "window.png"
    _finish(figure, axes, "", "TCP windows" + suffix, path)
    return path


def _plot_er(run_dir: Path, by_metric: dict, suffix: str) -> Path:
    """er.png in Mbps: the last ER each ABR VC received (entities that also have an ACR)
    and the last ER each switch port wrote (the other entities)."""
    rows = by_metric["er_cps"]
    vcs = set(by_metric["acr_cps"]["entity"]) if "acr_cps" in by_metric else set()
    panels = [
        (rows[rows["entity"].isin(vcs)], "ER received (Mbps)\nlast backward RM cell"),
        (rows[~rows["entity"].isin(vcs)], "ER written (Mbps)\nby each switch port"),
    ]
    panels = [(part, label) for part, label in panels if not part.empty]
    figure, axes = _new_figure(len(panels))
    axes = list(axes) if len(panels) > 1 else [axes]
    for ax, (part, label) in zip(axes, panels):
        _plot_lines(ax, part, SCALES["er_cps"])
        ax.set_ylabel(label)
    path = run_dir / "er.png"
    _finish(figure, axes, "", "Explicit rate" + suffix, path)
    return path


def _plot_sequence(run_dir: Path, rows, suffix: str) -> Path:
    """sequence.png: highest byte sent + 1, in MB (KB when every flow sent less than 1 MB)."""
    unit, size = ("MB", MB) if rows["value"].max() >= MB else ("KB", KB)
    figure, axes = _new_figure()
    _plot_lines(axes, rows, 1 / size)
    path = run_dir / "sequence.png"
    _finish(figure, axes, f"sequence number ({unit})", "TCP sequence number" + suffix, path)
    return path


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
        from .bench import bench_dumbbell, format_bench

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
