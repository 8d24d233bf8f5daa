"""Running experiments: one (experiment, run seed) simulates the experiment's runs and
computes every quantity (``run_seed``); ``run_experiments`` runs them on a process pool
and aggregates each experiment's run seeds as they finish.

A configuration is simulated once per run seed however many experiments run it
(``seed002-formula`` reruns the runs of Tables 1, 2 and 4): the experiments that share
one (the same core JSON) go to one task, which runs each of its configurations once
and gives the result to every experiment that asks (``SharedRuns``). A run that draws
no random number (``atmsim.determinism.seed_dependence`` empty: the seed provably
changes nothing) is simulated once, with the first run seed, and its result stands
for every run seed; the experiments sharing such a run run all their seeds in one task."""

from __future__ import annotations

import json
import math
import textwrap
import time
import traceback
from pathlib import Path
from typing import Callable, Optional, Union

from ..api import CoreUnavailable, Result, prepare, run
from ..determinism import seed_dependence
from ..errors import ScenarioError
from ..failures import internal_error_message
from ..plots import experiment_figure
from ..results import ledger_lines
from ..rundir import write_run_dir
from ..scenario import to_core
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
    shared: Optional[SharedRuns] = None,
) -> SeedOutcome:
    """Simulate an experiment's runs with ``run.seed = seed`` and compute every
    quantity. With ``write``, each run's scenario.toml, summary.json and series.parquet
    and (with ``figures``) the experiment's figures are written under ``out_root``.
    With ``shared``, a configuration it has simulated already is not simulated again
    (``SharedRuns``)."""

    started = time.perf_counter()
    experiment = registry()[experiment_id]
    outcome = SeedOutcome(experiment=experiment.id, seed=seed)
    try:
        results = {}
        for name, spec in experiment.runs.items():
            overrides = [*spec.overrides, seed_override(seed), *extra_overrides]
            directory = run_dir(experiment, Path(out_root), name) if write else None
            header = scenario_header(experiment, name, spec, overrides)
            if shared is None:
                result = run(
                    spec.path,
                    overrides=overrides,
                    progress=False,
                    out=directory,
                    scenario_header=header,
                )
            else:
                result = shared.run(spec, overrides, directory, header)
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


def config_key(core: dict) -> tuple[str, bool]:
    """The key of a run's configuration, and whether it stands for every run seed: its core
    JSON, without the run seed when the run seed provably changes nothing
    (``atmsim.determinism.seed_dependence`` empty). Runs of equal keys give equal
    results."""
    any_seed = not seed_dependence(core)
    if any_seed:
        core = {**core, "seed": None}
    return json.dumps(core, sort_keys=True), any_seed


class SharedRuns:
    """The runs one task has simulated, by ``config_key``: an experiment that asks for a
    configuration simulated before gets its result (the same object; extractors and
    figures only read it) and, when it writes, its own run directory with the same
    files under its own scenario.toml header. A run whose key has no seed stands for
    every seed (its files are written only for the seed it ran with)."""

    def __init__(self) -> None:
        self.results: dict[str, Result] = {}
        self.any_seed: set[str] = set()
        """The keys whose result stands for every run seed."""

    def run(self, spec: Run, overrides: list, directory: Optional[Path], header: list) -> Result:
        scenario = prepare(spec.path, overrides=overrides)
        core = to_core(scenario)
        key, any_seed = config_key(core)
        result = self.results.get(key)
        if result is None or (directory is not None and result.core_input != core):
            result = run(scenario, progress=False, out=directory, scenario_header=header)
            self.results.setdefault(key, result)
            if any_seed:
                self.any_seed.add(key)
        elif directory is not None:
            write_run_dir(
                directory, result.scenario_toml, result.summary, result.series_parquet(), header
            )
        return result

    def forget_seeded(self) -> None:
        """Drop the results that hold for one run seed only (the next run seed cannot use them)."""
        self.results = {key: self.results[key] for key in self.any_seed}


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


def plan(
    ids: list[str],
    seeds: Optional[tuple] = None,
    extra_overrides: tuple = (),
    figures: bool = True,
) -> list[tuple]:
    """The tasks that run experiments ``ids``, heaviest first. A task is (the (experiment,
    run seed, write) it runs, in order, then ``extra_overrides`` and ``figures``); the
    first run seed of each experiment writes its files.

    Experiments that share a configuration (``config_key`` at their first run seed) are one
    family, run by one task per run seed, so that the configuration runs once per run seed
    (``SharedRuns``). A family with a run that stands for every run seed runs all its run seeds
    in one task, which simulates that run once. A run whose scenario cannot be loaded
    shares nothing: its experiment's task reports the error."""
    experiments = registry()
    chosen = {key: _seeds_of(experiments[key], seeds) for key in ids}
    runnable = [key for key in ids if chosen[key]]
    parent = {key: key for key in runnable}

    def root(key: str) -> str:
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    owner: dict[str, str] = {}
    weight: dict[str, float] = {}
    configs: dict[str, list[str]] = {key: [] for key in runnable}
    for_every_seed: set[str] = set()
    for key in runnable:
        experiment = experiments[key]
        for spec in experiment.runs.values():
            overrides = [*spec.overrides, seed_override(chosen[key][0]), *extra_overrides]
            try:
                config, any_seed = config_key(to_core(prepare(spec.path, overrides=overrides)))
            except Exception:  # the task runs it again and reports the error
                continue
            if config in owner:
                parent[root(key)] = root(owner[config])
            else:
                owner[config] = key
            weight[config] = max(weight.get(config, 0.0), experiment.weight)
            configs[key].append(config)
            if any_seed:
                for_every_seed.add(key)
    families: dict[str, list[str]] = {}
    for key in runnable:
        families.setdefault(root(key), []).append(key)

    weighted = []
    for members in families.values():
        family_seeds = sorted({seed for key in members for seed in chosen[key]})
        runs = {config for key in members for config in configs[key]}
        run_weight = sum(weight[config] for config in runs) or sum(
            experiments[key].weight * len(experiments[key].runs) for key in members
        )
        together = any(key in for_every_seed for key in members)
        groups = [family_seeds] if together else [[seed] for seed in family_seeds]
        for group in groups:
            items = tuple(
                (key, seed, seed == chosen[key][0])
                for seed in group
                for key in members
                if seed in chosen[key]
            )
            drawn = sum(len(experiments[key].figures) for key, _, write in items if write)
            cost = run_weight * len(group) + (drawn if figures else 0)
            weighted.append((cost, items))
    weighted.sort(key=lambda item: -item[0])
    return [(items, tuple(extra_overrides), figures) for _, items in weighted]


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
    """Run experiments: every (experiment, run seed) once, in the tasks of ``plan`` (an
    experiment's run seeds, or a family of experiments sharing configurations), ``jobs``
    tasks at a time (processes), the heaviest first; the first run seed of each experiment
    writes its files. ``seeds`` replaces every experiment's own run seeds (tests use one or
    two). ``on_done(outcome, k, total)`` is called as each experiment's last run seed
    finishes, ``on_seed(done, total)`` as each task finishes (``done`` counting the
    (experiment, run seed) pairs) and once before the first. Returns the outcomes in the
    order of ``ids``.

    Ctrl-C and SIGTERM are this process's to answer (``atmsim.workers``): the worker
    processes ignore both, and this process kills them and raises KeyboardInterrupt,
    so that one process answers, without a traceback from each worker. The run
    seeds finished before keep their files; a run cut short keeps its scenario.toml
    alone (a run in this process, with ``jobs`` 1, writes its partial summary)."""
    experiments = registry()
    total = len(ids)
    outcomes: dict[str, Outcome] = {}
    pending: dict[str, list[SeedOutcome]] = {key: [] for key in ids}
    expected = {key: len(_seeds_of(experiments[key], seeds)) for key in ids}
    planned = plan(ids, seeds, extra_overrides, figures)
    tasks = [(items, out_root, extra, draw) for items, extra, draw in planned]
    pairs = sum(expected.values())

    def finish(key: str) -> None:
        outcomes[key] = aggregate(experiments[key], pending.pop(key), Path(out_root))
        if on_done is not None:
            on_done(outcomes[key], len(outcomes), total)

    for key in ids:  # experiments that only refer to others run nothing
        if expected[key] == 0:
            finish(key)

    def collect(part: SeedOutcome) -> None:
        pending[part.experiment].append(part)
        if len(pending[part.experiment]) == expected[part.experiment]:
            finish(part.experiment)

    stream = imap_unordered(_run_task, tasks, jobs, died=_worker_died)
    if on_seed is not None:
        on_seed(0, pairs)
    done = 0
    try:
        for parts in stream:
            for part in parts:
                collect(part)
            done += len(parts)
            if on_seed is not None:
                on_seed(done, pairs)
    finally:
        stream.close()  # the workers end now, before the exception goes on
    return [outcomes[key] for key in ids]


def _worker_died(task: tuple, description: str) -> list[SeedOutcome]:
    """The outcomes of a task whose worker process died under it: errors."""
    return [SeedOutcome(experiment=key, seed=seed, error=description) for key, seed, _ in task[0]]


def _run_task(task: tuple) -> list[SeedOutcome]:
    """Run one task of ``plan``: its (experiment, run seed) pairs in order, each configuration
    simulated once (``SharedRuns``)."""
    items, out_root, extra_overrides, figures = task
    shared = SharedRuns()
    parts = []
    current = None
    for key, seed, write in items:
        if seed != current:
            shared.forget_seeded()
            current = seed
        parts.append(run_seed(key, seed, out_root, extra_overrides, figures, write, shared))
    return parts
