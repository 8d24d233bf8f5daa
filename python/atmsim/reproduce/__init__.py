"""``atmsim reproduce``: the published experiments of the seeds, side by side with ours.

An ``Experiment`` names one published result (a section, a table row, a figure
comparison): the scenario files it runs (``scenarios/reproduce/*.toml``, with
every parameter the seed does not state chosen there with a comment), and the
published quantities with their tolerances. ``run_experiment`` runs it, writes
``<out>/<id>/`` (scenario.toml, summary.json, series.parquet, table.csv, PNGs)
and returns one row per quantity: published, simulated, tolerance, verdict.

One module per seed (``seed000``, ``seed002``, ``seed003``) lists its
experiments; ``registry()`` gathers them. The tolerances and their verdicts
(match, miss, n/a) are those of ``atmsim.compare``; docs/reproduction.md lists
which tolerance each kind of published number gets and why.
"""

from __future__ import annotations

import csv
import math
import multiprocessing
import signal
import textwrap
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Union

from ..compare import Tolerance

SCENARIO_DIR = Path(__file__).resolve().parents[3] / "scenarios" / "reproduce"
"""The experiments' scenario files (a source checkout, as for ``atmsim bench``)."""

SEEDS = ("seed000", "seed002", "seed003")
"""The documents reproduced, in order."""

FIGURE_KINDS = ("window", "acr", "sequence", "queue", "abr_queue", "throughput")
"""Figures an experiment may ask for (``atmsim.plots.EXPERIMENT_FIGURES``)."""

CSV_COLUMNS = (
    "experiment",
    "quantity",
    "unit",
    "published",
    "simulated",
    "tolerance",
    "verdict",
    "note",
    "tolerance_reason",
)

# --- the model --------------------------------------------------------------------------

Extracted = Union[float, tuple[float, str]]
"""What an extractor returns: the simulated value, optionally with a note."""


@dataclass(frozen=True)
class Quantity:
    """One published number (or claim) and how to compute ours from the runs' results.

    ``extract(results)`` gets ``{run name: atmsim.Result}`` and returns the simulated
    value, or ``(value, note)``. ``published`` None means "not published" ("NA")."""

    name: str
    published: Optional[float]
    unit: str
    tolerance: Tolerance
    reason: str
    extract: Callable[[dict], Extracted]
    note: str = ""


@dataclass(frozen=True)
class Run:
    """One simulation: a scenario file of ``scenarios/reproduce`` and its overrides."""

    scenario: str
    overrides: tuple[str, ...] = ()

    @property
    def path(self) -> Path:
        return SCENARIO_DIR / self.scenario


@dataclass(frozen=True)
class Experiment:
    """One published experiment.

    - ``id``: stable, lowercase, starts with its seed (``seed000-sec8``);
    - ``source``: where it is published (seed, section, table or figure);
    - ``runs``: run name -> Run. One run: its files go to ``<out>/<id>/``; several
      (a comparison, or a reference such as section 8's peak for section 9): to
      ``<out>/<id>/<run name>/``;
    - ``published``: the quantities compared;
    - ``figures``: kinds of FIGURE_KINDS drawn as ``<out>/<id>/<kind>.png``, one panel
      per run of ``figure_runs`` (default: every run);
    - ``notes``: what the experiment chose and why (also in docs/reproduction.md),
      written at the top of each run's scenario.toml;
    - ``weight``: relative run time, to start the longest first.
    """

    id: str
    title: str
    source: str
    runs: dict
    published: tuple
    figures: tuple = ("window", "acr", "sequence", "queue")
    figure_runs: Optional[tuple] = None
    notes: tuple = ()
    weight: float = 1.0

    @property
    def seed(self) -> str:
        return self.id.split("-", 1)[0]


# --- the registry -----------------------------------------------------------------------

_REGISTRY: Optional[dict[str, Experiment]] = None


def registry() -> dict[str, Experiment]:
    """Every experiment by id, in document order (seed 000, 002, 003)."""
    global _REGISTRY
    if _REGISTRY is None:
        from . import seed000, seed002, seed003

        experiments: dict[str, Experiment] = {}
        for module in (seed000, seed002, seed003):
            for experiment in module.EXPERIMENTS:
                if experiment.id in experiments:
                    raise ValueError(f"duplicate experiment id {experiment.id!r}")
                experiments[experiment.id] = experiment
        _REGISTRY = experiments
    return _REGISTRY


def seed_ids(seed: str) -> list[str]:
    """The experiment ids of one seed, in order."""
    return [key for key, experiment in registry().items() if experiment.seed == seed]


class UnknownExperiment(ValueError):
    """An id that is neither a seed nor an experiment."""


def select(ids: list[str]) -> list[str]:
    """Experiment ids for the given seed and experiment ids (in the order given, each
    once). Raises UnknownExperiment naming the first unknown id."""
    known = registry()
    chosen: list[str] = []
    for name in ids:
        key = name.strip().lower()
        if key in SEEDS:
            expanded = seed_ids(key)
        elif key in known:
            expanded = [key]
        else:
            raise UnknownExperiment(name)
        chosen.extend(item for item in expanded if item not in chosen)
    return chosen


def valid_ids() -> list[str]:
    """What ``atmsim reproduce`` accepts: the seeds, then every experiment id."""
    return [*SEEDS, *registry()]


# --- running ----------------------------------------------------------------------------


@dataclass
class Outcome:
    """What running one experiment gave: its rows (CSV_COLUMNS), the ledgers' verdict,
    the files written, the wall time, and if it could not run, the error as one line
    (``error``) and its traceback (``traceback``, shown with ``atmsim --debug``)."""

    experiment: str
    rows: list = field(default_factory=list)
    ledgers_ok: bool = True
    ledger_problems: list = field(default_factory=list)
    figures: list = field(default_factory=list)
    wall_s: float = 0.0
    out_dir: Optional[Path] = None
    error: Optional[str] = None
    traceback: Optional[str] = None

    def count(self, verdict: str) -> int:
        return sum(row["verdict"] == verdict for row in self.rows)


def evaluate(experiment_id: str, quantity: Quantity, results: dict) -> dict:
    """One row of table.csv: the quantity computed from the results, with its verdict."""
    note = quantity.note
    try:
        extracted = quantity.extract(results)
        if isinstance(extracted, tuple):
            simulated, extra = extracted
            note = "; ".join(part for part in (note, extra) if part)
        else:
            simulated = extracted
        simulated = float(simulated)
    except Exception as error:  # a short run may leave too little to compute
        simulated = math.nan
        note = "; ".join(part for part in (note, f"not computed: {error}") if part)
    verdict = quantity.tolerance.verdict(quantity.published, simulated)
    return {
        "experiment": experiment_id,
        "quantity": quantity.name,
        "unit": quantity.unit,
        "published": quantity.published,
        "published_text": quantity.tolerance.published_text(quantity.published),
        "simulated": simulated,
        "tolerance": quantity.tolerance.text(),
        "verdict": verdict,
        "note": note,
        "reason": quantity.reason,
    }


def run_dir(experiment: Experiment, out_root: Path, run_name: str) -> Path:
    base = Path(out_root) / experiment.id
    return base if len(experiment.runs) == 1 else base / run_name


def run_experiment(
    experiment_id: str,
    out_root: Union[str, Path],
    extra_overrides: tuple = (),
    figures: bool = True,
) -> Outcome:
    """Run one experiment: simulate its runs (writing each run's scenario.toml,
    summary.json, series.parquet), compare, write table.csv and the figures."""
    from ..api import CoreUnavailable, run
    from ..errors import ScenarioError
    from ..failures import internal_error_message
    from ..results import ledger_lines

    started = time.perf_counter()
    experiment = registry()[experiment_id]
    out_dir = Path(out_root) / experiment.id
    outcome = Outcome(experiment=experiment.id, out_dir=out_dir)
    try:
        results = {}
        for name, spec in experiment.runs.items():
            directory = run_dir(experiment, Path(out_root), name)
            overrides = [*spec.overrides, *extra_overrides]
            result = run(spec.path, overrides=overrides, progress=False, out=directory)
            _label_scenario(directory, experiment, name, spec, overrides)
            results[name] = result
            for line, ok in ledger_lines(result.summary):
                if not ok:
                    outcome.ledgers_ok = False
                    outcome.ledger_problems.append(f"{name}: {line}")
        outcome.rows = [evaluate(experiment.id, q, results) for q in experiment.published]
        write_csv(out_dir / "table.csv", outcome.rows)
        if figures:
            outcome.figures = draw_figures(experiment, results, out_dir)
    except (ScenarioError, CoreUnavailable) as error:  # a scenario file edited badly
        outcome.error = str(error)
        outcome.traceback = traceback.format_exc()
    except Exception as error:
        outcome.error = internal_error_message(error)
        outcome.traceback = traceback.format_exc()
    outcome.wall_s = time.perf_counter() - started
    return outcome


def _label_scenario(
    directory: Path, experiment: Experiment, name: str, spec: Run, overrides: list
) -> None:
    """Put a header on the run's resolved scenario.toml: where it comes from."""
    path = directory / "scenario.toml"
    if not path.is_file():
        return
    header = [
        f"# atmsim reproduce {experiment.id} ({experiment.source}), run {name!r}",
        f"# from scenarios/reproduce/{spec.scenario}; the choices are commented there",
    ]
    if overrides:
        header.append("# overrides: " + ", ".join(overrides))
    for note in experiment.notes:
        header.extend("# " + line for line in textwrap.wrap(note, 86, initial_indent="note: "))
    path.write_text("\n".join(header) + "\n\n" + path.read_text(encoding="utf-8"))


def draw_figures(experiment: Experiment, results: dict, out_dir: Path) -> list[Path]:
    """The experiment's figures, one panel per run of ``figure_runs``."""
    from ..plots import experiment_figure

    names = experiment.figure_runs or tuple(experiment.runs)
    series = {name: results[name].series for name in names}
    written = []
    for kind in experiment.figures:
        path = experiment_figure(
            kind, series, out_dir / f"{kind}.png", f"{experiment.id}\n{experiment.title}"
        )
        if path is not None:
            written.append(path)
    return written


def write_csv(path: Path, rows: list[dict]) -> Path:
    """table.csv: CSV_COLUMNS, published "NA" when not published."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_COLUMNS)
        for row in rows:
            writer.writerow(
                [
                    row["experiment"],
                    row["quantity"],
                    row["unit"],
                    row["published_text"],
                    _csv_number(row["simulated"]),
                    row["tolerance"],
                    row["verdict"],
                    row["note"],
                    row["reason"],
                ]
            )
    return path


def _csv_number(value: float) -> str:
    if value is None or not math.isfinite(value):
        return "NaN"
    return f"{value:.6g}"


def run_experiments(
    ids: list[str],
    out_root: Union[str, Path],
    jobs: int = 1,
    extra_overrides: tuple = (),
    figures: bool = True,
    on_done: Optional[Callable[[Outcome, int, int], None]] = None,
) -> list[Outcome]:
    """Run experiments, ``jobs`` at a time (processes), the heaviest first; call
    ``on_done(outcome, k, total)`` as each finishes. Returns the outcomes in the order
    of ``ids``.

    Ctrl-C reaches the whole process group from a terminal: the worker processes
    ignore it, and this process stops them and raises KeyboardInterrupt, so that one
    process answers it, without a traceback from each worker."""
    experiments = registry()
    order = sorted(ids, key=lambda key: -experiments[key].weight)
    total = len(ids)
    outcomes: dict[str, Outcome] = {}
    if jobs <= 1 or total <= 1:
        for k, key in enumerate(order, start=1):
            outcomes[key] = run_experiment(key, out_root, tuple(extra_overrides), figures)
            if on_done is not None:
                on_done(outcomes[key], k, total)
        return [outcomes[key] for key in ids]
    tasks = [(key, out_root, tuple(extra_overrides), figures) for key in order]
    pool = multiprocessing.get_context().Pool(min(jobs, total), initializer=_ignore_sigint)
    try:
        for k, outcome in enumerate(pool.imap_unordered(_run_task, tasks), start=1):
            outcomes[outcome.experiment] = outcome
            if on_done is not None:
                on_done(outcome, k, total)
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()
    return [outcomes[key] for key in ids]


def _ignore_sigint() -> None:
    """Worker processes leave Ctrl-C to the parent (run_experiments)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run_task(task: tuple) -> Outcome:
    return run_experiment(*task)
