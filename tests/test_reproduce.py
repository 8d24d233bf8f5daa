"""atmsim reproduce: the registry, the verdict logic, the command's errors, conservation
in every reproduced experiment (shortened runs), and one experiment end to end."""

from __future__ import annotations

import csv
import math
import re

import pytest

from atmsim import load_scenario
from atmsim.compare import EXACT, Tolerance, relative
from atmsim.reproduce import (
    CSV_COLUMNS,
    FIGURE_KINDS,
    SCENARIO_DIR,
    SEEDS,
    Quantity,
    UnknownExperiment,
    evaluate,
    registry,
    run_experiments,
    seed_ids,
    select,
    valid_ids,
)
from atmsim.reproduce.measures import vbr_edges
from atmsim.reproduce.report import combined_name, number

from conftest import needs_core, run_cli

# --- the registry -----------------------------------------------------------------------


def test_every_seed_has_its_experiments():
    counts = {seed: len(seed_ids(seed)) for seed in SEEDS}
    assert counts["seed000"] == 11  # sections 8, 9, 11 and the 8 rows of Table 1
    assert counts["seed002"] == 3 + 4 + 4 + 9  # Tables 1-4, one per row
    assert counts["seed003"] >= 6
    assert sum(counts.values()) == len(registry())
    for row in range(1, 9):
        assert f"seed000-table1-row{row}" in registry()
    for key in ("seed000-sec8", "seed000-sec9", "seed000-sec11"):
        assert key in registry()


def test_ids_are_unique_stable_lowercase_and_start_with_their_seed():
    ids = list(registry())
    assert len(ids) == len(set(ids))
    for key, experiment in registry().items():
        assert key == experiment.id
        assert re.fullmatch(r"seed\d{3}(-[a-z0-9]+)+", key), key
        assert experiment.seed in SEEDS


def test_every_quantity_has_a_tolerance_and_its_reason():
    for experiment in registry().values():
        assert experiment.published, experiment.id
        assert experiment.title and experiment.source.startswith("seed ")
        names = [q.name for q in experiment.published]
        assert len(names) == len(set(names)), experiment.id
        for quantity in experiment.published:
            assert isinstance(quantity.tolerance, Tolerance)
            assert len(quantity.reason) > 10, (experiment.id, quantity.name)
            # "not published" and "nothing to compare" go together
            assert (quantity.published is None) == (quantity.tolerance.kind == "report"), (
                experiment.id,
                quantity.name,
            )
        compared = [q for q in experiment.published if q.tolerance.kind != "report"]
        assert compared, experiment.id


def test_every_run_loads_its_scenario_file_and_figures_are_known():
    files = set()
    for experiment in registry().values():
        assert experiment.runs
        for run in experiment.runs.values():
            assert run.path.is_file(), run.path
            files.add(run.path.name)
            load_scenario(run.path, list(run.overrides))  # validates, does not run
        assert set(experiment.figures) <= set(FIGURE_KINDS)
        assert set(experiment.figure_runs or ()) <= set(experiment.runs)
    # every scenario file of scenarios/reproduce is used, and each explains its choices
    on_disk = {path.name for path in SCENARIO_DIR.glob("*.toml")}
    assert files == on_disk
    for name in on_disk:
        text = (SCENARIO_DIR / name).read_text()
        assert "Chosen here" in text and "CHOSEN" in text, name


def test_select_expands_seeds_keeps_order_and_rejects_unknown_ids():
    assert select(["seed000"]) == seed_ids("seed000")
    assert select(["SEED000-sec8", "seed000"])[0] == "seed000-sec8"
    assert len(select(["seed000-sec8", "seed000"])) == len(seed_ids("seed000"))
    with pytest.raises(UnknownExperiment):
        select(["seed000-sec8", "seed001"])
    assert valid_ids()[: len(SEEDS)] == list(SEEDS)
    assert combined_name(["seed002"]) == "seed002"
    assert combined_name(["seed000", "seed002"]) == "selected"
    assert combined_name(["seed000-sec8"]) == "selected"


# --- rows ---------------------------------------------------------------------------------


def test_evaluate_carries_notes_and_survives_a_failing_extractor():
    ok = Quantity("x", 2.0, "Mbps", relative(0.1), "because", lambda r: (2.1, "detail"), "n")
    row = evaluate("e", ok, {})
    assert row["verdict"] == "match" and row["note"] == "n; detail"
    assert row["reason"] == "because"

    def broken(results):
        raise ValueError("no samples")

    row = evaluate("e", Quantity("y", 1.0, "", EXACT, "because", broken), {})
    assert math.isnan(row["simulated"]) and row["verdict"] == "miss"
    assert "not computed: no samples" in row["note"]


def test_measures_helpers():
    assert vbr_edges(0.3, 0.1, 1.0) == pytest.approx([0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9])
    assert vbr_edges(0.3, 0.1, 0.2) == []
    assert number(18040.0) == "18,040" and number(109.58) == "109.6"
    assert number(math.nan) == "NaN"


# --- the command ------------------------------------------------------------------------


def test_cli_unknown_id_exits_2_with_one_line(tmp_path):
    result = run_cli("reproduce", "seed000-sec8", "seed042", "--out", str(tmp_path))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: unknown experiment 'seed042'; valid: seed000, seed002")
    assert "seed000-table1-row8" in lines[0]
    assert not any(tmp_path.iterdir())  # nothing ran


def test_cli_list(tmp_path):
    for args in (("reproduce", "--list"), ("reproduce",)):
        result = run_cli(*args)
        assert result.returncode == 0, result.stderr
        assert "seed000-sec8" in result.stdout and "seed003-queue-10tcp-10ms" in result.stdout


def test_cli_bad_jobs():
    result = run_cli("reproduce", "seed000-sec8", "--jobs", "0")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1


# --- real runs --------------------------------------------------------------------------


@needs_core
def test_conservation_in_every_reproduced_experiment(tmp_path):
    """Every experiment, each run shortened to 0.2 s: every run's cell, packet and byte
    ledgers balance, and every quantity is computed or reported as not computed."""
    ids = list(registry())
    outcomes = run_experiments(
        ids, tmp_path, jobs=2, extra_overrides=("run.duration=0.2 s",), figures=False
    )
    assert [o.experiment for o in outcomes] == ids
    for outcome in outcomes:
        assert outcome.error is None, (outcome.experiment, outcome.error)
        assert outcome.ledgers_ok, (outcome.experiment, outcome.ledger_problems)
        experiment = registry()[outcome.experiment]
        assert len(outcome.rows) == len(experiment.published)
        assert (outcome.out_dir / "table.csv").is_file()
        for name in experiment.runs:
            directory = outcome.out_dir if len(experiment.runs) == 1 else outcome.out_dir / name
            assert (directory / "summary.json").is_file()
            assert (directory / "scenario.toml").read_text().startswith("# atmsim reproduce")


@needs_core
def test_conservation_and_every_quantity_at_full_length(tmp_path):
    """Every experiment as reproduced (full length, no figures: about 7 s on 2 cores):
    the ledgers balance and every quantity is computed."""
    outcomes = run_experiments(list(registry()), tmp_path, jobs=2, figures=False)
    for outcome in outcomes:
        assert outcome.error is None, (outcome.experiment, outcome.error)
        assert outcome.ledgers_ok, (outcome.experiment, outcome.ledger_problems)
        for row in outcome.rows:
            assert math.isfinite(row["simulated"]), (outcome.experiment, row)
            assert row["verdict"] in ("match", "miss", "n/a")


@needs_core
def test_cli_end_to_end_one_experiment(tmp_path):
    """The cheapest full-length experiment through the command: its folder, its table."""
    result = run_cli("reproduce", "seed000-sec8", "--out", str(tmp_path), "--jobs", "1")
    assert result.returncode == 0, result.stderr
    folder = tmp_path / "seed000-sec8"
    for name in (
        "scenario.toml",
        "summary.json",
        "series.parquet",
        "table.csv",
        "window.png",
        "acr.png",
        "sequence.png",
        "queue.png",
    ):
        assert (folder / name).is_file(), name
    assert (folder / "scenario.toml").read_text().startswith("# atmsim reproduce seed000-sec8")
    load_scenario(folder / "scenario.toml")  # the resolved scenario reloads
    with (folder / "table.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert tuple(rows[0]) == CSV_COLUMNS
    by_name = {row["quantity"]: row for row in rows}
    assert by_name["total TCP throughput"]["published"] == "103.32"
    assert by_name["CLR"]["simulated"] == "0" and by_name["CLR"]["verdict"] == "match"
    assert all(row["verdict"] in ("match", "miss") for row in rows)
    assert (tmp_path / "selected.csv").is_file()
    assert "[1/1] seed000-sec8" in result.stdout
    final = r"^\d+ match, \d+ miss \(0 n/a\) in 1 experiments; .* s wall"
    assert re.search(final, result.stdout, re.M)
