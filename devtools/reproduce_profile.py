"""Where ``atmsim reproduce`` spends its CPU time, per experiment and per document.

Runs each experiment's first run seed (with its files and figures, as reproduce
writes them) and its second (without files) in this one process, and splits the
thread CPU time into the core's loop (``Result.loop_cpu_s``), set-up and finish
(the rest of ``atmsim.run``: the scenario, the core JSON, ``sim.finish()``, the
summary's fairness), measuring (the extractors and ledgers), files and figures. Ten
seeds are extrapolated from the two, and the runs counted before and after identical
runs are shared (``atmsim.reproduce.runner.plan``). Prints two Markdown tables, per
document and per experiment (docs/performance.md, "Reproduce: where the time goes")::

    .venv/bin/python -m devtools.reproduce_profile [--out DIR] [ID ...]

The first experiment's measuring holds the first import of pandas and pyarrow.
"""

from __future__ import annotations

import collections
import sys
import tempfile
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Optional

from atmsim import api
from atmsim._lazy import argparse
from atmsim.reproduce import registry, runner, select
from atmsim.reproduce.papers import BY_SEED

WRAPPED = (
    (api, "prepare", "setup"),
    (api, "to_core", "setup"),
    (api, "resolved_toml", "setup"),
    (api, "start_run_dir", "write"),
    (api.Result, "_save", "write"),
    (runner, "measure", "measure"),
    (runner, "ledger_lines", "measure"),
    (runner, "draw_figures", "figures"),
)
"""The functions timed, and the phase each counts to (``atmsim.run`` itself is timed
whole: its loop, and the rest)."""


@contextmanager
def _timed(owner: Any, name: str, phase: str, cost: collections.Counter, key: list):
    """Add the thread CPU time of every call of ``owner.name`` to ``cost[(key[0], phase)]``
    while the block runs."""
    real = getattr(owner, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.thread_time()
        try:
            return real(*args, **kwargs)
        finally:
            cost[(key[0], phase)] += time.thread_time() - started

    setattr(owner, name, timed)
    try:
        yield
    finally:
        setattr(owner, name, real)


def profile(ids: list[str], out: Path) -> dict[str, dict[str, float]]:
    """Per experiment, over its first two seeds: ``runs`` (simulated), and CPU-s of
    ``loop``, ``run`` (all of ``atmsim.run``), ``setup``, ``write``, ``measure`` and
    ``figures``."""
    cost: collections.Counter = collections.Counter()
    key = [""]

    def run(*args: Any, **kwargs: Any) -> api.Result:
        started = time.thread_time()
        result = real_run(*args, **kwargs)
        cost[(key[0], "run")] += time.thread_time() - started
        cost[(key[0], "loop")] += result.loop_cpu_s
        cost[(key[0], "runs")] += 1
        return result

    real_run = runner.run
    with ExitStack() as stack:
        for owner, name, phase in WRAPPED:
            stack.enter_context(_timed(owner, name, phase, cost, key))
        runner.run = run
        stack.callback(setattr, runner, "run", real_run)
        for experiment_id in ids:
            key[0] = experiment_id
            for k, seed in enumerate(registry()[experiment_id].seeds[:2]):
                part = runner.run_seed(experiment_id, seed, out, (), True, k == 0)
                if part.error:
                    raise RuntimeError(f"{experiment_id}, seed {seed}: {part.error}")
    table: dict[str, dict[str, float]] = {
        experiment_id: dict.fromkeys(("runs", "loop", "run", *PHASES), 0.0) for experiment_id in ids
    }
    for (experiment_id, name), value in cost.items():
        table[experiment_id][name] = value
    return table


PHASES = ("setup", "write", "measure", "figures")


def simulated_after(ids: list[str]) -> collections.Counter:
    """The runs each experiment simulates over its seeds when identical runs are shared
    (a shared run counts for the first experiment of its task)."""
    counts: collections.Counter = collections.Counter()
    for items, _, _ in runner.plan(ids):
        seen: set = set()
        for experiment_id, seed, _ in items:
            for spec in registry()[experiment_id].runs.values():
                overrides = [*spec.overrides, runner.seed_override(seed)]
                config = runner.config_key(
                    runner.to_core(runner.prepare(spec.path, overrides=overrides))
                )
                # a run for every seed counts once, whatever the seed
                mark = config if config[1] else (config, seed)
                if mark not in seen:
                    seen.add(mark)
                    counts[experiment_id] += 1
    return counts


def tables(ids: list[str], measured: dict[str, dict[str, float]]) -> str:
    """The per-document and per-experiment Markdown tables."""
    after = simulated_after(ids)
    lines = [
        "| experiment | runs before | runs after | loop CPU-s per run | set-up + finish per "
        "run | measuring per seed | seed 1: files / figures | CPU-s before | CPU-s after |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    documents: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for experiment_id in ids:
        experiment = registry()[experiment_id]
        row = measured.get(experiment_id, {})
        seeds = len(experiment.seeds)
        before = len(experiment.runs) * seeds
        if not before:
            lines.append(f"| {experiment_id} | 0 | 0 | | | | | 0 | 0 |")
            continue
        runs = row["runs"]
        loop = row["loop"] / runs
        rest = (row["run"] - row["write"]) / runs - loop
        measure = row["measure"] / min(2, seeds)
        files, figures = row["write"], row["figures"]
        cost_before = before * (loop + rest) + seeds * measure + files + figures
        cost_after = after[experiment_id] * (loop + rest) + seeds * measure + files + figures
        documents[experiment.seed].update(
            {
                "before": before,
                "after": after[experiment_id],
                "loop before": before * loop,
                "loop after": after[experiment_id] * loop,
                "rest before": before * rest,
                "rest after": after[experiment_id] * rest,
                "measure": seeds * measure,
                "files": files,
                "figures": figures,
                "cost before": cost_before,
                "cost after": cost_after,
            }
        )
        lines.append(
            f"| {experiment_id} | {before} | {after[experiment_id]} | {loop:.3f} | {rest:.3f} "
            f"| {measure:.3f} | {files:.2f} / {figures:.2f} | {cost_before:.1f} "
            f"| {cost_after:.1f} |"
        )
    total: collections.Counter = collections.Counter()
    for counts in documents.values():
        total.update(counts)
    head = [
        "| document | runs (before -> after) | loop | set-up + finish | measuring | "
        "files + figures (seed 1) | CPU-s before -> after |",
        "|---|---|---|---|---|---|---|",
    ]
    named = [(f"{BY_SEED[seed].id} ({seed})", c) for seed, c in documents.items()]
    for name, c in [*named, ("**all**", total)]:
        head.append(
            f"| {name} | {c['before']} -> {c['after']} | {c['loop before']:.1f} -> "
            f"{c['loop after']:.1f} | {c['rest before']:.1f} -> {c['rest after']:.1f} | "
            f"{c['measure']:.1f} | {c['files']:.1f} + {c['figures']:.1f} | "
            f"{c['cost before']:.1f} -> {c['cost after']:.1f} |"
        )
    return "\n".join(head) + "\n\n" + "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.reproduce_profile")
    parser.add_argument("ids", nargs="*", help="Documents or experiments (default: all).")
    parser.add_argument("--out", type=Path, help="Where seed 1's files go (default: a temp dir).")
    args = parser.parse_args(argv)
    ids = select(args.ids) if args.ids else list(registry())
    with tempfile.TemporaryDirectory() as scratch:
        measured = profile(ids, args.out or Path(scratch))
    print(tables(ids, measured))
    return 0


if __name__ == "__main__":
    sys.exit(main())
