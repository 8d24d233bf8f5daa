"""Figures of a run's time series (``atmsim plot``) and of reproduced experiments.

``plot_run_dir`` draws every figure of a run directory (queue.png, window.png,
acr.png, ..., and delay.png from the summary of a run with ``probes.delay``);
``plot_series`` does the same from a series DataFrame;
``experiment_figure`` draws one figure of an ``atmsim reproduce`` experiment,
one panel per run when it compares several (EFCI, ERICA, FMMRA).

matplotlib (Agg backend), pandas and numpy come from ``atmsim._lazy``: each is
imported when a figure first needs it, so importing this module stays cheap.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from ._lazy import matplotlib
from ._lazy import numpy as np
from ._lazy import pandas as pd
from ._lazy import pyplot as plt
from .outputs import replacing
from .results import check_complete, read_series, read_summary
from .units import CELL_BITS


class PlotInputError(Exception):
    """A run directory that cannot be plotted (missing, no series, no samples); one that
    is incomplete or holds files that are not atmsim's is a ``results.RunDirError``."""


PLOTS = {
    "queue_cells": ("queue.png", "queue (cells)", "Queue at each ATM port"),
    "ip_queue_packets": ("ip_queue.png", "queue (packets)", "Queue at each IP port"),
    "utilization": ("utilization.png", "utilization (busy fraction)", "Port utilization"),
    "vc_rate_cps": ("vc_rate.png", "delivered rate (cells/s)", "Cell rate delivered per VC"),
    "srtt_s": ("srtt.png", "smoothed RTT (ms)", "Smoothed round-trip time per flow"),
    "acr_cps": ("acr.png", "ACR (Mbps)", "Allowed cell rate per ABR VC"),
    "abr_queue_cells": ("abr_queue.png", "ABR queue (cells)", "ABR queue at each switch port"),
    "load_factor": ("load_factor.png", "load factor z", "ABR load factor at each switch port"),
    "er_bps": (
        "er_tcp.png",
        "explicit rate (Mbps)",
        "Explicit rate of each TCP flow at its router",
    ),
    "rwnd_written_bytes": (
        "rwnd_written.png",
        "window written (KB)",
        "Window written into each flow's ACKs (min(window, ER x T))",
    ),
    "vc_queue_cells": ("vc_queue.png", "cells per VC", "Cells of each VC at the port"),
    "fair_share_cps": (
        "fair_share.png",
        "fair share (Mbps)",
        "Fair share (ERICA) or advertised rate (FMMRA) at each switch port",
    ),
}
"""metric -> (file name, y-axis label with units, title). The TCP windows and
sequence numbers get their own figures (window.png, sequence.png), and so does
the explicit rate (er.png: received per VC, written per port)."""

SCALES = {
    "srtt_s": 1e3,  # seconds -> ms
    "acr_cps": CELL_BITS / 1e6,  # cells/s -> Mbps on the wire (424 bits per cell)
    "fair_share_cps": CELL_BITS / 1e6,
    "er_cps": CELL_BITS / 1e6,
    "er_bps": 1e-6,  # bits/s -> Mbps
    "rwnd_written_bytes": 1 / 1024,  # bytes -> KB
}
"""Plot units: metric -> factor from the series' unit."""

MAX_LEGEND_LINES = 48
"""Axes with more lines than this get no legend (up to 12 it sits inside the axes)."""

WINDOW_METRICS = ("cwnd_bytes", "window_bytes")
KB = 1024
MB = 1024 * 1024
"""Sizes in plots are binary, as in scenario files: 1 KB = 1024 bytes."""


def _agg() -> None:
    matplotlib.use("Agg")


def plot_run_dir(run_dir: Path) -> list[Path]:
    """Every figure of a run directory's series.parquet, written into it."""
    series_path = run_dir / "series.parquet"
    if not run_dir.is_dir():
        raise PlotInputError(f"{run_dir}: no such run directory")
    check_complete(run_dir)  # RunDirError, as a series or summary that is not atmsim's
    summary = read_summary(run_dir) if (run_dir / "summary.json").exists() else {}
    delays = plot_delays(summary, run_dir)
    if not series_path.is_file():
        if delays:
            return delays
        raise PlotInputError(f"{run_dir}: no series.parquet (the run had no [probes])")
    series = read_series(series_path)
    if series.empty:
        if delays:
            return delays
        raise PlotInputError(f"{series_path}: no samples")
    return plot_series(series, summary, run_dir) + delays


MAX_DELAY_ROWS = 40
"""delay.png shows the first this many VCs and flows with delays."""


def plot_delays(summary: dict, out_dir: Path) -> list[Path]:
    """delay.png, from a summary with delay statistics (``probes.delay``): a row per VC
    (cell transfer delay, us) and per flow (segment delay, ms), the line from the least
    to the greatest delay, a bar from p50 to p99, ticks at p95 and the mean as a dot;
    none without them."""
    panels = [
        (
            [(vc["name"], vc["ctd"]) for vc in summary.get("vcs", []) if vc.get("ctd")],
            1e6,
            "cell transfer delay (us)",
        ),
        (
            [(f["name"], f["delay"]) for f in summary.get("flows", []) if f.get("delay")],
            1e3,
            "segment delay (ms)",
        ),
    ]
    panels = [(rows[:MAX_DELAY_ROWS], scale, label) for rows, scale, label in panels if rows]
    if not panels:
        return []
    _agg()
    height = 1.5 + 0.25 * sum(len(rows) for rows, _, _ in panels)
    figure, axes = plt.subplots(len(panels), 1, figsize=(9, max(3.0, height)), squeeze=False)
    for ax, (rows, scale, label) in zip(axes[:, 0], panels):
        for y, (_, d) in enumerate(rows):
            ax.plot([d["min_s"] * scale, d["max_s"] * scale], [y, y], "-", color="0.6", lw=1)
            ax.plot([d["p50_s"] * scale, d["p99_s"] * scale], [y, y], "-", color="C0", lw=5)
            ax.plot(d["p95_s"] * scale, y, "|", color="C3", markersize=10)
            ax.plot(d["mean_s"] * scale, y, "o", color="k", markersize=3)
        ax.set_yticks(range(len(rows)), [name for name, _ in rows], fontsize="small")
        ax.invert_yaxis()
        ax.set_xlabel(label)
        ax.grid(True, axis="x", alpha=0.3)
    suffix = f" ({summary['scenario']})" if summary.get("scenario") else ""
    axes[0, 0].set_title(
        "Delays: min to max, p50 to p99 (bar), p95 (red), mean (dot)" + suffix, fontsize="medium"
    )
    figure.tight_layout()
    path = out_dir / "delay.png"
    save_figure(figure, path)
    plt.close(figure)
    return [path]


def _one_line(error: Exception) -> str:
    return " ".join(str(error).split())


def plot_series(series: pd.DataFrame, summary: dict, out_dir: Path) -> list[Path]:
    """Every figure of a run's series (``summary`` names the run and its IP ports)."""
    _agg()
    suffix = f" ({summary['scenario']})" if summary.get("scenario") else ""
    ip_ports = {port["name"] for port in summary.get("ports", []) if port.get("layer") == "ip"}
    by_metric = {str(metric): rows for metric, rows in series.groupby("metric", sort=False)}
    written = []
    if any(metric in by_metric for metric in WINDOW_METRICS):
        written.append(_plot_windows(out_dir, by_metric, suffix))
    if "seq_bytes" in by_metric:
        written.append(_plot_sequence(out_dir, by_metric["seq_bytes"], suffix))
    if "er_cps" in by_metric:
        written.append(_plot_er(out_dir, by_metric, suffix))
    for metric, rows in by_metric.items():
        if metric in WINDOW_METRICS or metric in ("seq_bytes", "er_cps"):
            continue
        if metric == "queue_cells":
            rows = rows[~rows["entity"].isin(ip_ports)]  # IP ports are in ip_queue.png
            if rows.empty:
                continue
        file_name, y_label, title = PLOTS.get(metric, (f"{metric}.png", metric, metric))
        figure, axes = _new_figure()
        if metric in QUEUE_METRICS:
            _plot_smoothed(axes, rows)
            ccdf = _plot_ccdf(out_dir, rows, metric, y_label, suffix)
            if ccdf is not None:
                written.append(ccdf)
        else:
            _plot_lines(axes, rows, SCALES.get(metric, 1.0), skip_zero=metric == "srtt_s")
        if metric == "load_factor":
            _clip_load_factor(axes, rows)
        _finish(figure, axes, y_label, title + suffix, out_dir / file_name)
        written.append(out_dir / file_name)
    return written


QUEUE_METRICS = ("queue_cells", "ip_queue_packets")
"""Queues get a smoothed mean over their raw trace and a distribution figure."""

SMOOTHING_SAMPLES = 100
"""The moving mean of a queue figure spans 1/SMOOTHING_SAMPLES of the run: a 30 s trace
sampled every 10 ms is a solid band, its mean over 0.3 s shows the level."""


def _plot_smoothed(axes, rows) -> None:
    """Each port's queue samples, faint, and their moving mean over about 1 % of the
    run (by sample count) on top."""
    groups = list(rows.groupby("entity", sort=False))
    for n, (entity, samples) in enumerate(groups):
        color = matplotlib.colormaps["tab20" if len(groups) > 10 else "tab10"](n % 20)
        width = max(1, len(samples) // SMOOTHING_SAMPLES)
        axes.plot(samples["time_s"], samples["value"], "-", color=color, alpha=0.3, linewidth=0.6)
        times = samples["time_s"].to_numpy()
        span = (times[-1] - times[0]) * width / max(1, len(times)) if len(times) > 1 else 0.0
        mean = samples["value"].rolling(width, min_periods=1, center=True).mean()
        label = f"{entity} (mean over {span:.3g} s)" if width > 1 else str(entity)
        axes.plot(samples["time_s"], mean, "-", color=color, linewidth=1.5, label=label)


def _plot_ccdf(out_dir: Path, rows, metric: str, unit: str, suffix: str) -> Optional[Path]:
    """queue_ccdf.png (ip_queue_ccdf.png): per port, the share of the probe samples with
    a queue above x, on a log scale: the tail that a time trace hides."""
    figure, axes = _new_figure()
    drawn = 0
    for entity, samples in rows.groupby("entity", sort=False):
        values = np.sort(samples["value"].to_numpy())
        if values.size == 0 or values[-1] <= 0:
            continue
        levels = np.unique(values)
        above = 1.0 - np.searchsorted(values, levels, side="right") / values.size
        keep = above > 0
        axes.step(levels[keep], above[keep], where="post", label=str(entity), linewidth=1)
        drawn += 1
    if not drawn:
        plt.close(figure)
        return None
    axes.set_yscale("log")
    axes.grid(True, which="both", alpha=0.3)
    if drawn <= 12:
        axes.legend(loc="best", fontsize="small")
    axes.set_xlabel(unit)
    axes.set_ylabel("P(queue > x): share of the samples")
    axes.set_title("Queue length distribution" + suffix)
    name = "queue_ccdf.png" if metric == "queue_cells" else "ip_queue_ccdf.png"
    path = out_dir / name
    figure.tight_layout()
    save_figure(figure, path)
    plt.close(figure)
    return path


def _new_figure(rows: int = 1):
    figure, axes = plt.subplots(rows, 1, figsize=(9, 4.5 if rows == 1 else 7), sharex=True)
    return figure, axes


def _plot_lines(axes, rows, scale: float = 1.0, skip_zero: bool = False) -> None:
    """One line per entity; values x ``scale``; zeros left out (no sample yet) if asked;
    infinite values (a load factor over an interval without ABR capacity) left out.
    A flow's ACK VC (``<flow>-ack``) is dashed."""
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
    save_figure(figure, path)
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


# --- figures of reproduced experiments (atmsim reproduce) ---------------------------------

EXPERIMENT_FIGURES = {
    "window": ("cwnd_bytes", "congestion window (KB)", 1 / KB),
    "sequence": ("seq_bytes", "sequence number (MB)", 1 / MB),
    "acr": ("acr_cps", "ACR (Mbps)", CELL_BITS / 1e6),
    "queue": ("queue_cells", "queue (cells)", 1.0),
    "ip_queue": ("ip_queue_packets", "queue (packets)", 1.0),
    "abr_queue": ("abr_queue_cells", "ABR queue (cells)", 1.0),
    "throughput": ("seq_bytes", "effective throughput (Mbps)\nbytes sent / time", 8 / 1e6),
    "vc_queue": ("vc_queue_cells", "cells per VC at the port\n(mean over 0.5 s)", 1.0),
}
"""Figure kind -> (metric, y label, scale). ``window`` of a single run also shows the
actual window; ``acr`` leaves out the ACK VCs; ``queue``, ``ip_queue`` and
``abr_queue`` show the bottleneck port only; ``throughput`` is each flow's highest byte
sent over the time elapsed (the cumulative effective throughput while nothing is lost);
``vc_queue`` each VC's cells at the bottleneck, as a moving mean over 0.5 s (the samples
swing by the buffer's size within a round trip)."""

VC_QUEUE_MEAN_S = 0.5
"""The window of the moving mean of the ``vc_queue`` figure."""


def _moving_mean(rows: pd.DataFrame, window_s: float = VC_QUEUE_MEAN_S) -> pd.DataFrame:
    """Each entity's values as a moving mean over ``window_s`` (by sample count)."""
    if rows.empty:
        return rows
    times = rows["time_s"].drop_duplicates().sort_values().to_numpy()
    step = float(times[1] - times[0]) if len(times) > 1 else window_s
    width = max(1, round(window_s / step))
    rows = rows.sort_values(["entity", "time_s"]).copy()
    rows["value"] = rows.groupby("entity")["value"].transform(
        lambda values: values.rolling(width, min_periods=1).mean()
    )
    return rows


def experiment_figure(
    kind: str,
    series_by_run: dict[str, pd.DataFrame],
    path: Path,
    title: str,
    port: str = "sw1-sw2",
) -> Optional[Path]:
    """One figure of an experiment: a panel per run (one run: a single panel, two for
    ``window``). None when no run has the figure's samples."""
    _agg()
    metric, y_label, scale = EXPERIMENT_FIGURES[kind]
    panels: list[tuple[str, pd.DataFrame, str, float]] = []
    single = len(series_by_run) == 1
    for run_name, series in series_by_run.items():
        rows = series[series["metric"] == metric]
        if kind == "acr":
            rows = rows[~rows["entity"].astype(str).str.endswith("-ack")]
        elif kind in ("queue", "ip_queue", "abr_queue"):
            rows = rows[rows["entity"] == port]
        elif kind == "vc_queue":
            rows = _moving_mean(rows[rows["entity"].astype(str).str.startswith(port + "/")])
        elif kind == "throughput":
            rows = rows[rows["time_s"] > 0].copy()
            rows["value"] = rows["value"] / rows["time_s"]
        if rows.empty:
            continue
        label = "" if single else run_name
        panels.append((label, rows, y_label, scale))
        if kind == "window" and single:
            actual = series[series["metric"] == "window_bytes"]
            if not actual.empty:
                panels.append(("", actual, "actual window (KB)\nmin(cwnd, advertised)", 1 / KB))
    if not panels:
        return None
    figure, axes = _new_figure(len(panels))
    if len(panels) > 1:
        figure.set_size_inches(9, 1.0 + 2.2 * len(panels))
    axes = list(axes) if len(panels) > 1 else [axes]
    for ax, (label, rows, panel_label, panel_scale) in zip(axes, panels):
        _plot_lines(ax, rows, panel_scale)
        ax.set_ylabel(panel_label)
        if label:
            ax.text(0.01, 0.95, label, transform=ax.transAxes, va="top", fontweight="bold")
    _finish(figure, axes, "", title, path)
    return path


def save_figure(figure, path: Path) -> None:
    """Save a figure as PNG through a temporary file renamed over ``path``
    (``atmsim.outputs.replacing``): a run stopped while it draws leaves the old figure
    or none, never half of one."""
    with replacing(path) as temporary:
        figure.savefig(temporary, dpi=120, format="png")
