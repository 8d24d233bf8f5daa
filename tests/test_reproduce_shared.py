"""atmsim reproduce runs identical runs once: a configuration two experiments share
(the same core JSON, the same run seed) is simulated once per seed and its result
serves both, and a run that draws no random number is simulated once for every seed.
The values and files are those of the runs simulated one by one."""

from __future__ import annotations

import json

import pytest

import atmsim.reproduce.runner as runner
from atmsim.reproduce import registry, run_experiments, run_seed
from atmsim.reproduce.runner import config_key, plan

from conftest import needs_core

SHORT = ("run.duration=0.2 s",)


@pytest.fixture
def simulations(monkeypatch):
    """The core JSON of every run simulated in this process (``jobs`` 1 runs the
    tasks here), in order."""
    simulated: list[dict] = []
    real = runner.run

    def counting(*args, **kwargs):
        result = real(*args, **kwargs)
        simulated.append(result.core_input)
        return result

    monkeypatch.setattr(runner, "run", counting)
    return simulated


def _values(outcome) -> list:
    return [(row["quantity"], row["values"], row["seed_notes"]) for row in outcome.rows]


def test_experiments_that_share_a_configuration_are_one_family():
    """seed000-sec9's "peak" run is seed000-sec8's run: one task per seed runs both
    experiments; an experiment sharing nothing has its own tasks."""
    tasks = plan(["seed000-sec8", "seed000-sec9", "seed000-sec11"], seeds=(1, 2))
    together = [items for items, _, _ in tasks if len({key for key, _, _ in items}) > 1]
    assert sorted(together) == [
        (("seed000-sec8", 1, True), ("seed000-sec9", 1, True)),
        (("seed000-sec8", 2, False), ("seed000-sec9", 2, False)),
    ]
    alone = [items for items, _, _ in tasks if items[0][0] == "seed000-sec11"]
    assert sorted(alone) == [(("seed000-sec11", 1, True),), (("seed000-sec11", 2, False),)]


@needs_core
def test_a_configuration_two_experiments_share_runs_once_per_seed(tmp_path, simulations):
    ids = ["seed000-sec8", "seed000-sec9"]
    outcomes = run_experiments(
        ids, tmp_path / "both", jobs=1, extra_overrides=SHORT, figures=False, seeds=(1, 2)
    )
    # sec8's run (sec9's "peak" too) and sec9's "finite", once per seed: 4, not 6
    assert len(simulations) == 4
    assert sorted(core["seed"] for core in simulations) == [1, 1, 2, 2]
    assert len({json.dumps(core, sort_keys=True) for core in simulations}) == 4
    # the same values as each experiment run on its own
    for outcome in outcomes:
        alone = run_experiments(
            [outcome.experiment],
            tmp_path / outcome.experiment,
            jobs=1,
            extra_overrides=SHORT,
            figures=False,
            seeds=(1, 2),
        )[0]
        assert _values(outcome) == _values(alone)
    assert len(simulations) == 4 + 2 + 4  # alone, each simulates all its own runs
    # each experiment has its own run files of seed 1, under its own header
    sec8 = tmp_path / "both" / "seed000-sec8"
    peak = tmp_path / "both" / "seed000-sec9" / "peak"
    for directory, experiment in ((sec8, "seed000-sec8"), (peak, "seed000-sec9")):
        assert (
            (directory / "scenario.toml")
            .read_text()
            .startswith(f"# atmsim reproduce {experiment} ")
        )
        assert not (directory / "INCOMPLETE").exists()
    assert (sec8 / "series.parquet").read_bytes() == (peak / "series.parquet").read_bytes()
    first, second = (json.loads((d / "summary.json").read_text()) for d in (sec8, peak))
    first.pop("wall_s"), second.pop("wall_s")
    assert first == second


@needs_core
def test_a_run_without_randomness_runs_once_for_every_seed(tmp_path, simulations):
    """seed001-fig2 draws no random number (``atmsim.determinism.seed_dependence`` is
    empty): over three run seeds it is simulated once, with the first seed, and each
    seed's values are those of a run simulated with that seed."""
    experiment = registry()["seed001-fig2"]
    (spec,) = experiment.runs.values()
    outcome = run_experiments(
        ["seed001-fig2"], tmp_path / "shared", jobs=1, extra_overrides=SHORT, seeds=(1, 2, 3)
    )[0]
    assert outcome.error is None and outcome.seeds == (1, 2, 3)
    assert [core["seed"] for core in simulations] == [1]
    assert config_key(simulations[0])[1]  # it stands for every seed
    # seed 3 simulated on its own gives the values the shared run gave it
    alone = run_seed("seed001-fig2", 3, tmp_path / "alone", SHORT, figures=False, write=False)
    assert len(simulations) == 2 and simulations[1]["seed"] == 3
    for row, value, note in zip(outcome.rows, alone.values, alone.notes):
        if row["see"] is None:
            assert row["values"][2] == pytest.approx(value, nan_ok=True, rel=0, abs=0)
            assert row["seed_notes"][2] == note
    # the files are those of the run with seed 1
    text = (tmp_path / "shared" / "seed001-fig2" / "scenario.toml").read_text()
    assert "run.seed=1" in text and spec.scenario in text


@needs_core
def test_a_run_with_randomness_runs_for_each_seed(simulations, tmp_path):
    """seed000-sec8 orders simultaneous cells by the seed: each seed is simulated."""
    run_experiments(
        ["seed000-sec8"], tmp_path, jobs=1, extra_overrides=SHORT, figures=False, seeds=(1, 2)
    )
    assert [core["seed"] for core in simulations] == [1, 2]
    assert not config_key(simulations[0])[1]
