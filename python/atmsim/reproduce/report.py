"""The ``atmsim reproduce`` command: select, run, print and write the comparison."""

from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path
from typing import Optional

from rich.console import Console
from rich.table import Table

from ..results import check_out_dir
from . import (
    CSV_COLUMNS,
    SCENARIO_DIR,
    SEEDS,
    Outcome,
    UnknownExperiment,
    registry,
    run_experiments,
    select,
    valid_ids,
    write_csv,
)

VERDICT_STYLE = {"match": "green", "miss": "bold red", "n/a": "dim"}


class ReproduceInputError(ValueError):
    """Bad input to ``atmsim reproduce`` (one line)."""


def _console() -> Console:
    console = Console()
    if not console.is_terminal:  # a file or a pipe: do not squeeze the table
        console = Console(width=200)
    return console


def number(value: Optional[float]) -> str:
    """A simulated value as printed: 18,040 / 109.6 / 0.9513 / NaN."""
    if value is None or not math.isfinite(value):
        return "NaN"
    if abs(value) >= 1000 or (value.is_integer() and abs(value) >= 10):
        return f"{value:,.0f}"
    if abs(value) >= 100:
        return f"{value:.1f}"
    return f"{value:.4g}"


def list_experiments() -> None:
    """The experiments, seed by seed: id, source, title, number of quantities."""
    table = Table(title="Experiments (atmsim reproduce ID... or a seed)", title_justify="left")
    for column in ("id", "source", "what", "quantities"):
        table.add_column(column, justify="right" if column == "quantities" else "left")
    for seed in SEEDS:
        for key, experiment in registry().items():
            if experiment.seed == seed:
                compared = sum(q.tolerance.kind != "report" for q in experiment.published)
                table.add_row(key, experiment.source, experiment.title, str(compared))
    _console().print(table)
    print("seeds: " + ", ".join(SEEDS) + " (all the experiments of a document)")


def results_table(outcomes: list[Outcome]) -> Table:
    table = Table(title="Published and simulated", title_justify="left")
    for column in CSV_COLUMNS:
        if column == "tolerance_reason":  # written to table.csv only
            continue
        right = column in ("published", "simulated", "tolerance")
        table.add_column(column, justify="right" if right else "left", overflow="fold")
    for outcome in outcomes:
        if outcome.error:
            table.add_row(outcome.experiment, f"[bold red]error: {outcome.error}[/]")
        for row in outcome.rows:
            style = VERDICT_STYLE.get(row["verdict"], "")
            table.add_row(
                row["experiment"],
                row["quantity"],
                row["unit"],
                row["published_text"],
                number(row["simulated"]),
                row["tolerance"],
                f"[{style}]{row['verdict']}[/]",
                row["note"],
            )
    return table


def combined_name(requested: list[str]) -> str:
    """``seed000`` when exactly one seed was asked for, else ``selected``."""
    keys = [name.strip().lower() for name in requested]
    if len(keys) == 1 and keys[0] in SEEDS:
        return keys[0]
    return "selected"


def check_reproduce_dir(out: Path) -> Path:
    """``out`` if it may receive the experiments' folders (``atmsim.results.check_out_dir``):
    a new or empty directory, or one an earlier ``atmsim reproduce`` wrote (holding an
    experiment folder or a combined CSV). Raises OutDirError."""
    markers = (*registry(), *(f"{seed}.csv" for seed in SEEDS), "selected.csv")
    return check_out_dir(
        out,
        markers,
        kind="an atmsim reproduce directory",
        rule="expected a new or empty directory, or an earlier atmsim reproduce --out "
        "(holding experiment folders such as seed000-sec8/ or seed000.csv)",
    )


def main(
    requested: list[str], out: Path, jobs: Optional[int], list_only: bool, debug: bool = False
) -> int:
    """Run ``atmsim reproduce``; the exit code (0: the report, whatever the verdicts;
    1: an experiment failed to run or a conservation ledger did not balance).
    Raises ReproduceInputError on an unknown id and OutDirError (``atmsim.results``)
    on an ``out`` that may not receive the results. With ``debug``, the traceback of
    an experiment that failed is printed (stderr) after its one-line error."""
    if list_only or not requested:
        list_experiments()
        return 0
    try:
        ids = select(requested)
    except UnknownExperiment as error:
        raise ReproduceInputError(
            f"unknown experiment {str(error)!r}; valid: " + ", ".join(valid_ids())
        ) from None
    if not SCENARIO_DIR.is_dir():
        raise ReproduceInputError(
            f"{SCENARIO_DIR}: no such directory (atmsim reproduce runs from a source checkout)"
        )
    check_reproduce_dir(out)
    jobs = jobs or os.cpu_count() or 1
    started = time.perf_counter()
    print(f"atmsim reproduce: {len(ids)} experiments, --jobs {jobs}, into {out}")

    def progress(outcome: Outcome, k: int, total: int) -> None:
        width = len(str(total))
        state = (
            f"error: {outcome.error}"
            if outcome.error
            else f"{outcome.count('match')} match, {outcome.count('miss')} miss"
        )
        print(f"[{k:>{width}}/{total}] {outcome.experiment:<36} {state:<22} {outcome.wall_s:.1f} s")

    outcomes = run_experiments(ids, out, jobs=jobs, on_done=progress)
    rows = [row for outcome in outcomes for row in outcome.rows]
    combined = write_csv(Path(out) / f"{combined_name(requested)}.csv", rows)
    _console().print(results_table(outcomes))
    wall = time.perf_counter() - started
    matches = sum(row["verdict"] == "match" for row in rows)
    misses = sum(row["verdict"] == "miss" for row in rows)
    na = sum(row["verdict"] == "n/a" for row in rows)
    code = 0
    for outcome in outcomes:
        if outcome.error:
            print(f"{outcome.experiment}: error: {outcome.error}")
            if debug and outcome.traceback:
                print(outcome.traceback, file=sys.stderr, end="")
            code = 1
        for problem in outcome.ledger_problems:
            print(f"{outcome.experiment}: {problem}")
            code = 1
    print(f"wrote {combined} and {out}/<experiment>/ (table.csv, figures, run files)")
    print(
        f"{matches} match, {misses} miss ({na} n/a) in {len(ids)} experiments; "
        f"{wall:.1f} s wall, --jobs {jobs}"
    )
    return code
