"""The ``atmsim reproduce`` command: select, run, print and write the comparison."""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time
from pathlib import Path
from typing import Optional

from .._lazy import rich
from ..html_report import write_report
from ..outputs import check_out_dir, prepare_out_dir
from ..tables import RunProgress, rich_console
from . import inventory
from .catalog import UnknownExperiment, registry, select, valid_ids
from .csv_tables import write_csv
from .display import number
from .experiments import SCENARIO_DIR, SEEDS
from .judging import Outcome
from .papers import BY_SEED, PAPERS, canonical, readable
from .runner import run_experiments

VERDICT_STYLE = {"match": "green", "miss": "bold red", "n/a": "dim"}


class ReproduceInputError(ValueError):
    """Bad input to ``atmsim reproduce`` (one line)."""


def _console() -> rich.console.Console:
    # A file or a pipe: 200 columns, not to squeeze the table; a reader that
    # leaves the pipe: exit 141 (see ``rich_console``).
    return rich_console()


def plural(count: int, noun: str) -> str:
    """ "1 experiment", "2 experiments"."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def list_experiments() -> None:
    """The documents with their citations, each followed by its experiments: readable id
    (and the ``seedNNN`` alias), source, title, number of quantities compared."""
    console = _console()
    for paper in PAPERS:
        keys = [key for key, experiment in registry().items() if experiment.seed == paper.seed]
        table = rich.table.Table(
            title=f"[bold]{paper.id}[/] (alias {paper.seed}): {paper.citation}",
            title_justify="left",
            caption=f"atmsim reproduce {paper.id}: all {plural(len(keys), 'experiment')}",
            caption_justify="left",
        )
        for column in ("id", "alias", "source", "what", "quantities"):
            table.add_column(
                column,
                justify="right" if column == "quantities" else "left",
                no_wrap=column == "id",
                overflow="fold",
            )
        for key in keys:
            experiment = registry()[key]
            compared = sum(
                q.tolerance.kind != "report" and q.see is None for q in experiment.published
            )
            # Listed under its paper's heading: the source without the paper's title.
            source = experiment.source.removeprefix(f"{paper.short_title}, ")
            table.add_row(readable(key), key, source, experiment.title, str(compared))
        console.print(table)
    print(
        "documents: "
        + ", ".join(f"{paper.id} ({paper.seed})" for paper in PAPERS)
        + "; every id in either form"
    )


def interval(row: dict) -> str:
    """The 95 % interval of the mean as printed: "[103.1, 104.9]"; "-" for one run seed."""
    low, high = row.get("ci95_low"), row.get("ci95_high")
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return "-"
    return f"[{number(low)}, {number(high)}]"


PRINTED_COLUMNS = (
    "experiment",
    "quantity",
    "unit",
    "published",
    "simulated",
    "ci95",
    "run seeds",
    "tolerance",
    "verdict",
    "nulls",
    "note",
)
"""The printed table: table.csv's columns less the reason, the interval in one column;
``nulls`` "beats" for a match no null model matches, else the null models that also
match."""


def results_table(outcomes: list[Outcome]) -> rich.table.Table:
    table = rich.table.Table(
        title="Published and simulated (simulated: mean over the run seeds; ci95: its 95 % "
        "interval)",
        title_justify="left",
    )
    for column in PRINTED_COLUMNS:
        right = column in ("published", "simulated", "ci95", "run seeds", "tolerance")
        table.add_column(column, justify="right" if right else "left", overflow="fold")
    for outcome in outcomes:
        if outcome.error:
            table.add_row(outcome.experiment, f"[bold red]error: {outcome.error}[/]")
        for row in outcome.rows:
            style = VERDICT_STYLE.get(row["verdict"], "")
            reference = row.get("see") is not None
            table.add_row(
                row["experiment"],
                row["quantity"],
                row["unit"],
                row["published_text"],
                f"see {row['see']}" if reference else number(row["simulated"]),
                "" if reference else interval(row),
                "" if reference else str(row["n_seeds"]),
                row["tolerance"],
                f"[{style}]{row['verdict']}[/]",
                _nulls_cell(row),
                row["note"],
            )
    return table


WIDE_TABLE = 160
"""Below this many columns the comparison is printed experiment by experiment
(``narrow_results``): the one wide table would fold its numbers."""


def narrow_results(outcomes: list[Outcome], width: int) -> list:
    """The comparison for a narrow screen (80 columns and up): per experiment, a table of
    quantity, published, simulated (with its interval), tolerance and verdict, and under
    it each row's null models and note, wrapped to ``width``."""
    parts: list = []
    for outcome in outcomes:
        table = rich.table.Table(
            title=f"[bold]{outcome.experiment}[/]", title_justify="left", width=width
        )
        table.add_column("quantity", ratio=1, overflow="fold")
        for column in ("published", "simulated", "tolerance", "verdict"):
            table.add_column(
                column, justify="left" if column == "verdict" else "right", no_wrap=True
            )
        notes = []
        if outcome.error:
            notes.append(rich.text.Text(f"  error: {outcome.error}", style="bold red"))
        for row in outcome.rows:
            reference = row.get("see") is not None
            simulated = f"see {row['see']}" if reference else number(row["simulated"])
            spread_text = "" if reference else interval(row)
            if spread_text not in ("", "-"):
                simulated += f"\n{spread_text}"
            unit = f" ({row['unit']})" if row["unit"] else ""
            style = VERDICT_STYLE.get(row["verdict"], "")
            table.add_row(
                row["quantity"] + unit,
                row["published_text"],
                simulated,
                row["tolerance"],
                f"[{style}]{row['verdict']}[/]",
            )
            said = "; ".join(text for text in (_nulls_cell(row), row["note"]) if text)
            if said:
                notes.append(rich.text.Text(f"  {row['quantity']}: {said}"))
        parts.append(table)
        parts.extend(notes)
    return parts


def print_results(outcomes: list[Outcome]) -> None:
    """The comparison: one wide table, or experiment by experiment below WIDE_TABLE
    columns (``COLUMNS``, the terminal's width)."""
    console = _console()
    if console.width >= WIDE_TABLE:
        console.print(results_table(outcomes))
        return
    console.print(
        "Published and simulated (simulated: mean over the run seeds, under it its 95 % interval)"
    )
    for part in narrow_results(outcomes, console.width):
        console.print(part)


def _nulls_cell(row: dict) -> str:
    """ "beats" for a match that no null model matches; the null models that also match
    (or all of them, with their verdicts, for a miss); "" when there is nothing to
    judge."""
    nulls = row.get("nulls") or []
    if row.get("beats_nulls") == "yes":
        return "beats"
    matching = [model for model, _, verdict in nulls if verdict == "match"]
    if matching:
        return "also: " + ", ".join(matching)
    return ""


def verdict_counts(rows: list[dict]) -> tuple[int, int, int]:
    """(match, miss, n/a) among rows."""
    return (
        sum(row["verdict"] == "match" for row in rows),
        sum(row["verdict"] == "miss" for row in rows),
        sum(row["verdict"] == "n/a" for row in rows),
    )


def beating_nulls(rows: list[dict]) -> int:
    """The matches among rows that no null model matches (``beats_nulls``)."""
    return sum(row.get("beats_nulls") == "yes" for row in rows)


def counts_text(rows: list[dict]) -> str:
    """ "44 match (30 beat every null model), 17 miss (2 n/a)"."""
    matches, misses, na = verdict_counts(rows)
    return (
        f"{matches} match ({beating_nulls(rows)} beat every null model), {misses} miss ({na} n/a)"
    )


def seed_summaries(outcomes: list[Outcome]) -> list[str]:
    """One line per document among the outcomes: "tcp-over-abr (seed000): 44 match (30
    beat every null model), 17 miss (2 n/a) in 11 experiments"."""
    lines = []
    for seed in SEEDS:
        mine = [outcome for outcome in outcomes if registry()[outcome.experiment].seed == seed]
        if not mine:
            continue
        paper = BY_SEED[seed]
        lines.append(
            f"{paper.id} ({seed}): {counts_text([row for o in mine for row in o.rows])} in "
            f"{plural(len(mine), 'experiment')}"
        )
    return lines


def print_coverage(out: Path) -> int:
    """``atmsim reproduce --coverage``: per document, the published results of the
    inventory (``reproduce.inventory``), those a row covers with that row's verdict in
    ``out`` (an earlier reproduce output; "not run" without one), and those none
    covers. 1 when the inventory names a row the experiments do not have."""
    entries = inventory.load()
    wrong = inventory.problems(entries)
    for line in wrong:
        print(f"inventory: {line}")
    verdicts = inventory.verdicts_in(Path(out))
    where = f"verdicts from {out}" if verdicts else f"no reproduce output in {out}: not run"
    print(f"atmsim reproduce --coverage: the papers' published results ({where})")
    for line in inventory.coverage_lines(inventory.coverage(entries, verdicts)):
        print(line)
    return 1 if wrong else 0


def combined_name(requested: list[str]) -> str:
    """``seed000`` when exactly one paper was asked for, else ``selected``."""
    keys = [canonical(name) for name in requested]
    if len(keys) == 1 and keys[0] in SEEDS:
        return keys[0]
    return "selected"


def check_reproduce_dir(out: Path) -> Path:
    """``out`` if it may receive the experiments' folders (``atmsim.outputs``): a new or
    empty directory, or one an earlier ``atmsim reproduce`` wrote (marked as such).
    Raises OutDirError."""
    return check_out_dir(out, "reproduce")


def main(
    requested: list[str],
    out: Path,
    jobs: Optional[int],
    list_only: bool,
    debug: bool = False,
    report: bool = False,
    coverage: bool = False,
) -> int:
    """Run ``atmsim reproduce``; the exit code (0: the report, whatever the verdicts;
    1: an experiment failed to run or a conservation ledger did not balance).
    Raises ReproduceInputError on an unknown id and OutDirError (``atmsim.results``)
    on an ``out`` that may not receive the results. With ``debug``, the traceback of
    an experiment that failed is printed (stderr) after its one-line error. With
    ``coverage``, print the inventory's coverage (verdicts from ``out``) and run
    nothing."""
    if coverage:
        return print_coverage(out)
    if list_only or not requested:
        list_experiments()
        return 0
    try:
        ids = select(requested)
    except UnknownExperiment as error:
        raise ReproduceInputError(
            f"unknown experiment {str(error)!r}; valid: "
            + ", ".join(valid_ids())
            + " (or their seedNNN aliases)"
        ) from None
    if not SCENARIO_DIR.is_dir():
        raise ReproduceInputError(
            f"{SCENARIO_DIR}: no such directory (the package data is missing: reinstall atmsim)"
        )
    # Created and marked before any experiment runs: a directory that cannot be
    # written is found now, not after the runs.
    prepare_out_dir(out, "reproduce")
    jobs = jobs or os.cpu_count() or 1
    started = time.perf_counter()
    print(f"atmsim reproduce: {plural(len(ids), 'experiment')}, --jobs {jobs}, into {out}")

    def progress(outcome: Outcome, k: int, total: int) -> None:
        width = len(str(total))
        state = (
            f"error: {outcome.error}"
            if outcome.error
            else f"{outcome.count('match')} match, {outcome.count('miss')} miss"
        )
        seeds = f"{len(outcome.seeds)} run seeds" if outcome.seeds else "no runs"
        print(
            f"[{k:>{width}}/{total}] {outcome.experiment:<36} {state:<22} {seeds:>12} "
            f"{outcome.wall_s:6.1f} s in runs"
        )

    # A bar on a terminal; in a pipe the lines of the finished experiments suffice.
    bar = RunProgress("runs") if sys.stderr.isatty() else None
    try:
        with bar or contextlib.nullcontext():
            outcomes = run_experiments(ids, out, jobs=jobs, on_done=progress, on_seed=bar)
    except KeyboardInterrupt:
        print(
            f"interrupted: the experiments finished before are written in {out}; "
            "the others are not (run them again)",
            file=sys.stderr,
        )
        raise
    rows = [row for outcome in outcomes for row in outcome.rows]
    combined = write_csv(Path(out) / f"{combined_name(requested)}.csv", rows)
    print_results(outcomes)
    wall = time.perf_counter() - started
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
    print(
        f"wrote {combined} and {out}/<experiment>/ (table.csv, seeds.csv, figures and run "
        "files of run seed 1)"
    )
    for line in seed_summaries(outcomes):
        print(line)
    print(
        f"{counts_text(rows)} in {plural(len(ids), 'experiment')}; {wall:.1f} s wall, --jobs {jobs}"
    )
    if report:
        print(f"report: {write_report(Path(out))}")
    return code
