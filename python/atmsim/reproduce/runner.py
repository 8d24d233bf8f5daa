"""Running experiments: one (experiment, run seed) task simulates the experiment's runs
and computes every quantity (``run_seed``); ``run_experiments`` runs the tasks on a
process pool and aggregates each experiment's run seeds as they finish."""

from __future__ import annotations

import math
import textwrap
import time
import traceback
from pathlib import Path
from typing import Callable, Optional, Union

from ..api import CoreUnavailable, run
from ..errors import ScenarioError
from ..failures import internal_error_message
from ..plots import experiment_figure
from ..results import ledger_lines
from ..workers import imap_unordered
from .catalog import registry
from .experiments import Experiment, Run, seed_override
from .judging import Outcome, SeedOutcome, aggregate, measure


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
                    outcome.ledger_problems.append(f"run seed {seed}: {name}: {line}")
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


def _seeds_of(experiment: Experiment, seeds: Optional[tuple]) -> tuple:
    """The run seeds an experiment runs: none without runs, else ``seeds`` or its own."""
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
            "table.csv has their mean and 95 % interval, seeds.csv each run seed's values"
        )
        header.extend("# " + line for line in textwrap.wrap(text, 86))
    for note in experiment.notes:
        header.extend("# " + line for line in textwrap.wrap(note, 86, initial_indent="note: "))
    return header


def draw_figures(experiment: Experiment, results: dict, out_dir: Path) -> list[Path]:
    """The experiment's figures, one panel per run of ``figure_runs``."""

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


def run_experiments(
    ids: list[str],
    out_root: Union[str, Path],
    jobs: int = 1,
    extra_overrides: tuple = (),
    figures: bool = True,
    on_done: Optional[Callable[[Outcome, int, int], None]] = None,
    seeds: Optional[tuple] = None,
    on_seed: Optional[Callable[[int, int], None]] = None,
) -> list[Outcome]:
    """Run experiments: every (experiment, run seed) is one task, ``jobs`` tasks at a
    time (processes), the heaviest experiments first; the first run seed of each writes its
    files. ``seeds`` replaces every experiment's own run seeds (tests use one or two).
    ``on_done(outcome, k, total)`` is called as each experiment's last run seed finishes,
    ``on_seed(done, total)`` as each task (experiment, run seed) finishes and once before
    the first. Returns the outcomes in the order of ``ids``.

    Ctrl-C and SIGTERM are this process's to answer (``atmsim.workers``): the worker
    processes ignore both, and this process kills them and raises KeyboardInterrupt,
    so that one process answers, without a traceback from each worker. The run
    seeds finished before keep their files; a run cut short keeps its scenario.toml
    alone (a run in this process, with ``jobs`` 1, writes its partial summary)."""
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
    if on_seed is not None:
        on_seed(0, len(tasks))
    try:
        for done, part in enumerate(stream, start=1):
            collect(part)
            if on_seed is not None:
                on_seed(done, len(tasks))
    finally:
        stream.close()  # the workers end now, before the exception goes on
    return [outcomes[key] for key in ids]


def _worker_died(task: tuple, description: str) -> SeedOutcome:
    """The outcome of a run seed whose worker process died under it: an error."""
    return SeedOutcome(experiment=task[0], seed=task[1], error=description)


def _run_task(task: tuple) -> SeedOutcome:
    return run_seed(*task)
