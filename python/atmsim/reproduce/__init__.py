"""``atmsim reproduce``: the published experiments of the seeds, side by side with ours.

An ``Experiment`` names one published result (a section, a table row, a figure
comparison, a claim across rows): the scenario files it runs
(``scenarios/reproduce/*.toml``, with every parameter the seed does not state
chosen there with a comment), and the published quantities with their
tolerances.

Every experiment runs once per run seed (``RUN_SEEDS``: ``run.seed`` = 1..10).
The core takes cells that reach a port at the same instant in an order drawn
from the seed, so the seeds are samples of one configuration; lossy TCP runs,
where that order decides which source loses, differ most. Each quantity is
computed per seed, judged on its mean (``atmsim.compare.Tolerance``), and
reported with the Student-t 95 % interval of that mean and the number of seeds
(``stats``). The files of run seed 1 (scenario.toml, summary.json,
series.parquet, figures) are written; every seed's value goes to seeds.csv.

A published value is judged once. Where a seed publishes one configuration's
value in several tables, the other places get a row that names the experiment
judging it (``Quantity.see``, verdict n/a) and run nothing.

A match counts only if it discriminates. Each judged quantity carries the
predictions of one or more null models (``NullModel``: a prediction from the
seed's inputs alone, with no simulation, such as "each VC gets exactly its MCR"
or "every source gets an equal share"), judged by the same tolerance; a row
that a null model also matches tests nothing about the mechanism, and the
counts set the matches that beat every null model apart (``beats_nulls``). A row
that a null model matches whatever we simulate is shown, not judged
(``Quantity.unjudged``: the reason), with its tolerance and the null models'
verdicts kept so that the reason can be checked.

``run_experiments`` runs (experiment, seed) tasks on a process pool and returns
one ``Outcome`` per experiment, its rows: published, simulated (the mean),
ci95_low, ci95_high, n_seeds, tolerance, verdict.

One module per seed (``seed000`` .. ``seed004``) lists its
experiments; ``registry()`` gathers them. docs/reproduction.md lists which
tolerance each kind of published number gets and why.
"""

from __future__ import annotations

import csv
import io
import math
import textwrap
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Union

from ..compare import Tolerance
from ..outputs import write_file
from ..resources import reproduce_dir
from ..workers import imap_unordered
from .stats import spread

SCENARIO_DIR = reproduce_dir()
"""The experiments' scenario files: package data (``atmsim/data/scenarios/reproduce``,
``scenarios/reproduce`` in a source checkout)."""

SEEDS = ("seed000", "seed001", "seed002", "seed003", "seed004")
"""The documents reproduced, in order."""

RUN_SEEDS = tuple(range(1, 11))
"""The ``run.seed`` values every experiment runs with: ten samples, enough for a
Student-t interval (t(0.975, 9) = 2.26) at about ten times one run's cost."""

FIGURE_KINDS = (
    "window",
    "acr",
    "sequence",
    "queue",
    "ip_queue",
    "abr_queue",
    "throughput",
    "vc_queue",
)
"""Figures an experiment may ask for (``atmsim.plots.EXPERIMENT_FIGURES``)."""

CSV_COLUMNS = (
    "experiment",
    "quantity",
    "unit",
    "published",
    "simulated",
    "ci95_low",
    "ci95_high",
    "n_seeds",
    "tolerance",
    "verdict",
    "note",
    "tolerance_reason",
    "null_models",
    "beats_nulls",
)
"""table.csv: ``simulated`` is the mean over the run seeds, ``ci95_low`` and
``ci95_high`` the 95 % interval of that mean, ``n_seeds`` the seeds it counts;
``null_models`` each null model's prediction and verdict ("mcr-only 23.04
match; equal-share 25.4 miss"), ``beats_nulls`` "yes" for a match that no null
model matches, "no" for a match that one does, empty otherwise."""

SEED_COLUMNS = ("experiment", "quantity", "seed", "simulated", "note")
"""seeds.csv: every seed's value of every quantity."""

# --- the model --------------------------------------------------------------------------

Extracted = Union[float, tuple[float, str]]
"""What an extractor returns: the simulated value, optionally with a note."""


def _no_value(results: dict) -> float:
    return math.nan


@dataclass(frozen=True)
class NullModel:
    """A way to predict a seed's numbers from its inputs alone, with no simulation
    ("each VC gets exactly its MCR and nothing more"). A row that a null model also
    matches tests arithmetic, not the mechanism."""

    id: str
    """Short and stable, e.g. ``mcr-only``."""
    title: str
    """What it assumes, in one sentence."""


@dataclass(frozen=True)
class NullPrediction:
    """A null model's prediction of one quantity."""

    model: NullModel
    value: float


@dataclass(frozen=True)
class Quantity:
    """One published number (or claim) and how to compute ours from the runs' results.

    ``extract(results)`` gets ``{run name: atmsim.Result}`` of one run seed and returns
    the simulated value, or ``(value, note)``. ``published`` None means "not
    published" ("NA"). ``see``: the id of the experiment that judges this same
    published value (the seed prints it in several places); the row then shows the
    published value, refers there, and is not judged again."""

    name: str
    published: Optional[float]
    unit: str
    tolerance: Tolerance
    reason: str
    extract: Callable[[dict], Extracted] = _no_value
    note: str = ""
    see: Optional[str] = None
    nulls: tuple = ()
    """NullPrediction's of this quantity, judged by the same tolerance."""
    unjudged: str = ""
    """Not empty: the published value is shown with its tolerance, the simulated mean
    and the null models' verdicts, but not judged (verdict n/a), for this reason
    (typically: a null model already matches it, so no simulation can add evidence).
    The note says what the verdict would have been."""


@dataclass(frozen=True)
class Run:
    """One simulation: a scenario file of ``scenarios/reproduce`` and its overrides."""

    scenario: str
    overrides: tuple[str, ...] = ()

    @property
    def path(self) -> Path:
        return SCENARIO_DIR / self.scenario


def seed_override(seed: int) -> str:
    """The override that sets a run's seed."""
    return f"run.seed={seed}"


@dataclass(frozen=True)
class Experiment:
    """One published experiment.

    - ``id``: stable, lowercase, starts with its seed (``seed000-sec8``);
    - ``source``: where it is published (seed, section, table or figure);
    - ``runs``: run name -> Run. One run: its files go to ``<out>/<id>/``; several
      (a comparison, or a reference such as section 8's peak for section 9): to
      ``<out>/<id>/<run name>/``. None: every quantity refers to another experiment;
    - ``published``: the quantities compared;
    - ``figures``: kinds of FIGURE_KINDS drawn as ``<out>/<id>/<kind>.png``, one panel
      per run of ``figure_runs`` (default: every run);
    - ``notes``: what the experiment chose and why (also in docs/reproduction.md),
      written at the top of each run's scenario.toml;
    - ``weight``: relative run time of one seed, to start the longest first;
    - ``seeds``: the ``run.seed`` values it runs with (``RUN_SEEDS``);
    - ``port``: the bottleneck link the ``queue``, ``abr_queue`` and ``vc_queue``
      figures show.
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
    seeds: tuple = RUN_SEEDS
    port: str = "sw1-sw2"

    @property
    def seed(self) -> str:
        return self.id.split("-", 1)[0]


# --- the registry -----------------------------------------------------------------------

_REGISTRY: Optional[dict[str, Experiment]] = None


def registry() -> dict[str, Experiment]:
    """Every experiment by id, in document order (seeds 000 to 004)."""
    global _REGISTRY
    if _REGISTRY is None:
        from . import seed000, seed001, seed002, seed003, seed004

        experiments: dict[str, Experiment] = {}
        for module in (seed000, seed001, seed002, seed003, seed004):
            for experiment in module.EXPERIMENTS:
                if experiment.id in experiments:
                    raise ValueError(f"duplicate experiment id {experiment.id!r}")
                experiments[experiment.id] = experiment
        for experiment in experiments.values():
            for quantity in experiment.published:
                if quantity.see is not None and quantity.see not in experiments:
                    raise ValueError(
                        f"{experiment.id}: {quantity.name!r} refers to an unknown "
                        f"experiment {quantity.see!r}"
                    )
        _REGISTRY = experiments
    return _REGISTRY


def seed_ids(seed: str) -> list[str]:
    """The experiment ids of one seed, in order."""
    return [key for key, experiment in registry().items() if experiment.seed == seed]


class UnknownExperiment(ValueError):
    """An id that is neither a seed nor an experiment."""


def select(ids: list[str]) -> list[str]:
    """Experiment ids for the given document and experiment ids, readable
    (``tcp-over-abr``, ``tcp-over-abr-sec8``) or not (``seed000``, ``seed000-sec8``),
    in the order given, each once. Raises UnknownExperiment naming the first unknown
    id."""
    from .papers import canonical

    known = registry()
    chosen: list[str] = []
    for name in ids:
        key = canonical(name)
        if key in SEEDS:
            expanded = seed_ids(key)
        elif key in known:
            expanded = [key]
        else:
            raise UnknownExperiment(name)
        chosen.extend(item for item in expanded if item not in chosen)
    return chosen


def valid_ids() -> list[str]:
    """What ``atmsim reproduce`` accepts: the documents' readable ids, then every
    experiment's readable id (each ``seedNNN`` form is an alias)."""
    from .papers import PAPERS, readable

    return [*(paper.id for paper in PAPERS), *(readable(key) for key in registry())]


# --- computing and judging --------------------------------------------------------------


def measure(quantity: Quantity, results: dict) -> tuple[float, str]:
    """The quantity's value in one run seed's results, and the extractor's note; NaN
    and "not computed: ..." when it cannot be computed (a short run may leave too
    little)."""
    try:
        extracted = quantity.extract(results)
        if isinstance(extracted, tuple):
            value, note = extracted
        else:
            value, note = extracted, ""
        return float(value), note
    except Exception as error:
        return math.nan, f"not computed: {error}"


def judge(
    experiment_id: str,
    quantity: Quantity,
    values: list[float],
    notes: Optional[list[str]] = None,
    seeds: Optional[tuple] = None,
) -> dict:
    """One row of table.csv from the quantity's values over the run seeds: the mean,
    its 95 % interval, and the verdict of the mean. A value that could not be computed
    in some seed makes the row a miss (its mean counts the others), as a value that
    cannot be computed is a miss. A quantity judged elsewhere (``see``) is n/a; so is
    one shown but not judged (``unjudged``), whose note gives the reason and the
    verdict it would have had, and whose null models are still judged."""
    seeds = tuple(seeds) if seeds is not None else tuple(range(1, len(values) + 1))
    notes = list(notes) if notes is not None else [""] * len(values)
    parts = [quantity.note] if quantity.note else []
    if quantity.see is not None:
        stats = spread([])
        verdict = "n/a"
        parts.append(f"judged in {quantity.see} (the same configuration and published value)")
    else:
        stats = spread(values)
        verdict = quantity.tolerance.verdict(quantity.published, stats.mean)
        if stats.missing and verdict == "match":
            verdict = "miss"
        if quantity.unjudged and verdict != "n/a":
            parts.append(f"not judged: {quantity.unjudged} (judged, it would be a {verdict})")
            verdict = "n/a"
        first = notes[0] if notes else ""
        if first:
            label = f"seed {seeds[0]}: " if len(values) > 1 else ""
            parts.append(label + first)
        if not quantity.unjudged and crosses_bound(
            quantity.tolerance, quantity.published, stats.low, stats.high
        ):
            parts.append("the 95 % interval crosses the tolerance's bound")
        if stats.missing:
            failed = [(s, n) for s, v, n in zip(seeds, values, notes) if not math.isfinite(v)]
            parts.append(
                f"not computed in {len(failed)} of {len(values)} seeds "
                f"(seed {failed[0][0]}: {failed[0][1] or 'NaN'})"
            )
    judged = (
        quantity.see is None
        and quantity.published is not None
        and quantity.tolerance.kind != "report"
    )
    nulls = [
        (null.model.id, null.value, quantity.tolerance.verdict(quantity.published, null.value))
        for null in (quantity.nulls if judged else ())
    ]
    if verdict == "match" and nulls:
        beats = "no" if any(v == "match" for _, _, v in nulls) else "yes"
    else:
        beats = ""
    return {
        "experiment": experiment_id,
        "quantity": quantity.name,
        "unit": quantity.unit,
        "published": quantity.published,
        "published_text": quantity.tolerance.published_text(quantity.published),
        "simulated": stats.mean,
        "ci95_low": stats.low,
        "ci95_high": stats.high,
        "n_seeds": stats.n,
        "values": list(values),
        "seeds": seeds,
        "seed_notes": notes,
        "tolerance": "-" if quantity.see is not None else quantity.tolerance.text(),
        "verdict": verdict,
        "note": "; ".join(parts),
        "reason": quantity.reason,
        "see": quantity.see,
        "nulls": nulls,
        "beats_nulls": beats,
    }


def null_text(nulls: list) -> str:
    """The null models' predictions and verdicts as one cell: "mcr-only 23.04 match;
    equal-share 25.4 miss"."""
    return "; ".join(f"{model} {value:.6g} {verdict}" for model, value, verdict in nulls)


def accepted_range(tolerance: Tolerance, published: float) -> tuple[float, float]:
    """The simulated values a tolerance accepts around ``published``, as [low, high]
    (infinite for a one-sided bound)."""
    kind, value = tolerance.kind, tolerance.value
    if kind == "relative":
        allowed = max(value * abs(published), tolerance.floor)
        return published - allowed, published + allowed
    if kind == "absolute":
        return published - value, published + value
    if kind == "factor":
        return published / value, published * value
    if kind == "exact":
        return published, published
    if kind == "above":
        return published + value, math.inf
    if kind == "below":
        return -math.inf, published - value
    raise ValueError(f"{kind!r} accepts nothing")


def crosses_bound(
    tolerance: Tolerance, published: Optional[float], low: float, high: float
) -> bool:
    """True when the interval [low, high] holds both accepted and rejected values: the
    verdict of the mean would differ for another mean inside its own interval."""
    if tolerance.kind == "report" or published is None:
        return False
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return False
    first, last = accepted_range(tolerance, published)
    return low < first <= high or low <= last < high


def evaluate(experiment_id: str, quantity: Quantity, results: dict) -> dict:
    """One row from the results of one run seed (``judge`` of one value)."""
    value, note = measure(quantity, results)
    return judge(experiment_id, quantity, [value], [note])


# --- running ----------------------------------------------------------------------------


@dataclass
class Outcome:
    """What running one experiment gave: its rows (CSV_COLUMNS, with each seed's
    values), the ledgers' verdict, the files written, the wall time (summed over its
    seeds), and if it could not run, the error as one line (``error``) and its
    traceback (``traceback``, shown with ``atmsim --debug``)."""

    experiment: str
    rows: list = field(default_factory=list)
    ledgers_ok: bool = True
    ledger_problems: list = field(default_factory=list)
    figures: list = field(default_factory=list)
    wall_s: float = 0.0
    out_dir: Optional[Path] = None
    error: Optional[str] = None
    traceback: Optional[str] = None
    seeds: tuple = ()

    def count(self, verdict: str) -> int:
        return sum(row["verdict"] == verdict for row in self.rows)


@dataclass
class SeedOutcome:
    """One run seed of one experiment: each quantity's value and note (in the order of
    ``Experiment.published``), ledger problems, figures, wall time, error."""

    experiment: str
    seed: int
    values: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    ledger_problems: list = field(default_factory=list)
    figures: list = field(default_factory=list)
    wall_s: float = 0.0
    error: Optional[str] = None
    traceback: Optional[str] = None


def run_dir(experiment: Experiment, out_root: Path, run_name: str) -> Path:
    base = Path(out_root) / experiment.id
    return base if len(experiment.runs) == 1 else base / run_name


def run_seed(
    experiment_id: str,
    seed: int,
    out_root: Union[str, Path],
    extra_overrides: tuple = (),
    figures: bool = True,
    write: bool = True,
) -> SeedOutcome:
    """Simulate an experiment's runs with ``run.seed = seed`` and compute every
    quantity. With ``write``, each run's scenario.toml, summary.json and series.parquet
    and (with ``figures``) the experiment's figures are written under ``out_root``."""
    from ..api import CoreUnavailable, run
    from ..errors import ScenarioError
    from ..failures import internal_error_message
    from ..results import ledger_lines

    started = time.perf_counter()
    experiment = registry()[experiment_id]
    outcome = SeedOutcome(experiment=experiment.id, seed=seed)
    try:
        results = {}
        for name, spec in experiment.runs.items():
            overrides = [*spec.overrides, seed_override(seed), *extra_overrides]
            directory = run_dir(experiment, Path(out_root), name) if write else None
            result = run(
                spec.path,
                overrides=overrides,
                progress=False,
                out=directory,
                scenario_header=scenario_header(experiment, name, spec, overrides),
            )
            results[name] = result
            for line, ok in ledger_lines(result.summary):
                if not ok:
                    outcome.ledger_problems.append(f"seed {seed}: {name}: {line}")
        for quantity in experiment.published:
            value, note = measure(quantity, results) if quantity.see is None else (math.nan, "")
            outcome.values.append(value)
            outcome.notes.append(note)
        if write and figures and results:
            outcome.figures = draw_figures(experiment, results, Path(out_root) / experiment.id)
    except (ScenarioError, CoreUnavailable) as error:  # a scenario file edited badly
        outcome.error = str(error)
        outcome.traceback = traceback.format_exc()
    except Exception as error:
        outcome.error = internal_error_message(error)
        outcome.traceback = traceback.format_exc()
    outcome.wall_s = time.perf_counter() - started
    return outcome


def aggregate(experiment: Experiment, parts: list[SeedOutcome], out_root: Path) -> Outcome:
    """The experiment's outcome from its seeds: rows judged on the means, table.csv and
    seeds.csv written. An error in any seed is the experiment's error."""
    parts = sorted(parts, key=lambda part: part.seed)
    out_dir = Path(out_root) / experiment.id
    outcome = Outcome(
        experiment=experiment.id,
        out_dir=out_dir,
        wall_s=sum(part.wall_s for part in parts),
        seeds=tuple(part.seed for part in parts),
    )
    for part in parts:
        outcome.ledger_problems.extend(part.ledger_problems)
        outcome.figures.extend(part.figures)
        if part.error and outcome.error is None:
            prefix = f"seed {part.seed}: " if len(parts) > 1 else ""
            outcome.error = prefix + part.error
            outcome.traceback = part.traceback
    outcome.ledgers_ok = not outcome.ledger_problems
    if outcome.error is not None:
        return outcome
    seeds = outcome.seeds
    for k, quantity in enumerate(experiment.published):
        values = [part.values[k] for part in parts]
        notes = [part.notes[k] for part in parts]
        outcome.rows.append(judge(experiment.id, quantity, values, notes, seeds))
    write_csv(out_dir / "table.csv", outcome.rows)
    write_seed_csv(out_dir / "seeds.csv", outcome.rows)
    return outcome


def run_experiment(
    experiment_id: str,
    out_root: Union[str, Path],
    extra_overrides: tuple = (),
    figures: bool = True,
    seeds: Optional[tuple] = None,
) -> Outcome:
    """Run one experiment in this process, every seed (``seeds``, default the
    experiment's): the files of the first seed, table.csv and seeds.csv."""
    experiment = registry()[experiment_id]
    chosen = _seeds_of(experiment, seeds)
    parts = [
        run_seed(experiment_id, seed, out_root, tuple(extra_overrides), figures, k == 0)
        for k, seed in enumerate(chosen)
    ]
    return aggregate(experiment, parts, Path(out_root))


def _seeds_of(experiment: Experiment, seeds: Optional[tuple]) -> tuple:
    """The seeds an experiment runs: none without runs, else ``seeds`` or its own."""
    if not experiment.runs:
        return ()
    return tuple(seeds) if seeds else tuple(experiment.seeds)


def scenario_header(experiment: Experiment, name: str, spec: Run, overrides: list) -> list[str]:
    """The comment lines at the top of a run's scenario.toml: where it comes from
    (``atmsim.rundir.scenario_text``)."""
    header = [
        f"# atmsim reproduce {experiment.id} ({experiment.source}), run {name!r}",
        f"# from scenarios/reproduce/{spec.scenario}; the choices are commented there",
    ]
    if overrides:
        header.append("# overrides: " + ", ".join(overrides))
    if len(experiment.seeds) > 1:
        seeds = ", ".join(map(str, experiment.seeds))
        text = (
            f"the experiment runs with run seeds {seeds}; these files are one of them, "
            "table.csv has their mean and 95 % interval, seeds.csv each seed's values"
        )
        header.extend("# " + line for line in textwrap.wrap(text, 86))
    for note in experiment.notes:
        header.extend("# " + line for line in textwrap.wrap(note, 86, initial_indent="note: "))
    return header


def draw_figures(experiment: Experiment, results: dict, out_dir: Path) -> list[Path]:
    """The experiment's figures, one panel per run of ``figure_runs``."""
    from ..plots import experiment_figure

    names = experiment.figure_runs or tuple(experiment.runs)
    series = {name: results[name].series for name in names}
    written = []
    for kind in experiment.figures:
        path = experiment_figure(
            kind,
            series,
            out_dir / f"{kind}.png",
            f"{experiment.id}\n{experiment.title}",
            experiment.port,
        )
        if path is not None:
            written.append(path)
    return written


def write_csv(path: Path, rows: list[dict]) -> Path:
    """table.csv: CSV_COLUMNS, published "NA" when not published; a row judged in
    another experiment has no simulated value. Written whole or not at all
    (``atmsim.outputs.write_file``)."""
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        reference = row.get("see") is not None
        writer.writerow(
            [
                row["experiment"],
                row["quantity"],
                row["unit"],
                row["published_text"],
                "" if reference else _csv_number(row["simulated"]),
                "" if reference else _csv_number(row["ci95_low"]),
                "" if reference else _csv_number(row["ci95_high"]),
                row["n_seeds"],
                row["tolerance"],
                row["verdict"],
                row["note"],
                row["reason"],
                null_text(row.get("nulls", [])),
                row.get("beats_nulls", ""),
            ]
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_file(path, text.getvalue())


def write_seed_csv(path: Path, rows: list[dict]) -> Path:
    """seeds.csv: SEED_COLUMNS, one line per quantity and run seed; written whole or not
    at all."""
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(SEED_COLUMNS)
    for row in rows:
        if row.get("see") is not None:
            continue
        for seed, value, note in zip(row["seeds"], row["values"], row["seed_notes"]):
            writer.writerow([row["experiment"], row["quantity"], seed, _csv_number(value), note])
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_file(path, text.getvalue())


def _csv_number(value: Optional[float]) -> str:
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
    seeds: Optional[tuple] = None,
) -> list[Outcome]:
    """Run experiments: every (experiment, run seed) is one task, ``jobs`` tasks at a
    time (processes), the heaviest experiments first; the first seed of each writes its
    files. ``seeds`` replaces every experiment's own seeds (tests use one or two).
    ``on_done(outcome, k, total)`` is called as each experiment's last seed finishes.
    Returns the outcomes in the order of ``ids``.

    Ctrl-C and SIGTERM are this process's to answer (``atmsim.workers``): the worker
    processes ignore both, and this process kills them and raises KeyboardInterrupt,
    so that one process answers, without a traceback from each worker. The seeds
    finished before keep their files; a run cut short keeps its scenario.toml alone
    (a run in this process, with ``jobs`` 1, writes its partial summary)."""
    experiments = registry()
    order = sorted(ids, key=lambda key: -experiments[key].weight * len(experiments[key].runs))
    total = len(ids)
    outcomes: dict[str, Outcome] = {}
    pending: dict[str, list[SeedOutcome]] = {}
    tasks = []
    for key in order:
        chosen = _seeds_of(experiments[key], seeds)
        pending[key] = []
        tasks.extend(
            (key, seed, out_root, tuple(extra_overrides), figures, k == 0)
            for k, seed in enumerate(chosen)
        )
    expected = {key: len(_seeds_of(experiments[key], seeds)) for key in order}

    def finish(key: str) -> None:
        outcomes[key] = aggregate(experiments[key], pending.pop(key), Path(out_root))
        if on_done is not None:
            on_done(outcomes[key], len(outcomes), total)

    for key in order:  # experiments that only refer to others run nothing
        if expected[key] == 0:
            finish(key)

    def collect(part: SeedOutcome) -> None:
        pending[part.experiment].append(part)
        if len(pending[part.experiment]) == expected[part.experiment]:
            finish(part.experiment)

    stream = imap_unordered(_run_task, tasks, jobs, died=_worker_died)
    try:
        for part in stream:
            collect(part)
    finally:
        stream.close()  # the workers end now, before the exception goes on
    return [outcomes[key] for key in ids]


def _worker_died(task: tuple, description: str) -> SeedOutcome:
    """The outcome of a seed whose worker process died under it: an error."""
    return SeedOutcome(experiment=task[0], seed=task[1], error=description)


def _run_task(task: tuple) -> SeedOutcome:
    return run_seed(*task)
