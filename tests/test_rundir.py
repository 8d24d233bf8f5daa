"""One run directory whatever the entry point: ``atmsim run``, ``atmsim.run(out=...)``,
a sweep's run and an ``atmsim reproduce`` run of one scenario hold the same files with
the same content (``atmsim.rundir``), and ``atmsim report``, ``plot`` and ``fairness``
read every one of them."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import atmsim
from atmsim import reproduce
from atmsim.rundir import series_columns, series_parquet
from atmsim.scenario import tomllib
from atmsim.sweeps import RUNS_DIR, load_spec, run_sweep

from conftest import cli_main, needs_core, write

SCENARIO = """\
[run]
duration = "60 ms"

[nodes]
a = { kind = "host" }
sw = {}
b = { kind = "host" }

[links.a-sw]
from = "a"
to = "sw"
rate = "155.52 Mbps"
length = "10 km"
duplex = true

[links.sw-b]
from = "sw"
to = "b"
rate = "155.52 Mbps"
length = "10 km"
duplex = true
buffer = 200

[sources.cbr]
kind = "poisson"
path = ["a", "sw", "b"]
rate = "60 Mbps"

[flows.tcp]
path = ["a", "sw", "b"]

[probes]
period = "5 ms"
queue = ["sw-b"]
flows = ["tcp"]
"""
"""Small, seeded (Poisson), with probes, a TCP flow and a cell source: every file of a
run directory, and a fairness of two entities."""

SEED = 3

WALL_CLOCK_FIELDS = ("wall_s",)
"""summary.json fields that legitimately differ between two runs of one scenario: the
wall seconds the run took."""


def scenario_body(text: str) -> str:
    """scenario.toml without its leading comment lines: a sweep and ``atmsim reproduce``
    say there where the run comes from (its overrides, its experiment), which is the
    one legitimate difference of that file."""
    lines = text.splitlines(keepends=True)
    while lines and (lines[0].startswith("#") or not lines[0].strip()):
        lines.pop(0)
    return "".join(lines)


def comparable(directory: Path) -> dict[str, object]:
    """A run directory's files, name -> content, less what legitimately differs."""
    files: dict[str, object] = {}
    for path in sorted(directory.iterdir()):
        data = path.read_bytes()
        if path.name == "summary.json":
            summary = json.loads(data)
            for key in WALL_CLOCK_FIELDS:
                assert key in summary, key
                summary.pop(key)
            files[path.name] = summary
        elif path.name == "scenario.toml":
            files[path.name] = scenario_body(data.decode("utf-8"))
        else:
            files[path.name] = data
    return files


@pytest.fixture(scope="module")
def run_dirs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """The scenario run with run seed SEED by each entry point, entry point -> run dir (run
    once for the module; the tests that add files work on copies)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield entry_point_dirs(tmp_path_factory.mktemp("rundirs"), monkeypatch)


def entry_point_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    scenario = write(tmp_path, SCENARIO, "tiny.toml")
    dirs = {name: tmp_path / name for name in ("cli", "api")}
    assert cli_main("run", str(scenario), "--seed", str(SEED), "--out", str(dirs["cli"])) == 0
    atmsim.run(scenario, seed=SEED, out=dirs["api"], progress=False)

    spec = write(
        tmp_path,
        f'[sweep]\nbase = "tiny.toml"\nseeds = [{SEED}]\nseries = true\n',
        "spec.toml",
    )
    outcome = run_sweep(load_spec(spec), tmp_path / "sweep", jobs=1, progress=False)
    (run_id,) = outcome.frame["run_id"]
    dirs["sweep"] = tmp_path / "sweep" / RUNS_DIR / run_id

    experiment = reproduce.Experiment(
        id="seed999-tiny",
        title="one run of a tiny scenario",
        source="this test",
        runs={"tiny": reproduce.Run(str(scenario))},  # an absolute path stays itself
        published=(),
        figures=(),
    )
    monkeypatch.setattr(reproduce.catalog, "_REGISTRY", {experiment.id: experiment})
    outcome = reproduce.run_seed(experiment.id, SEED, tmp_path / "reproduce")
    assert outcome.error is None, outcome.error
    dirs["reproduce"] = tmp_path / "reproduce" / experiment.id
    return dirs


@needs_core
def test_every_entry_point_writes_the_same_run_directory(run_dirs: dict[str, Path]) -> None:
    contents = {name: comparable(directory) for name, directory in run_dirs.items()}
    reference = contents["cli"]
    assert sorted(reference) == [".atmsim", "scenario.toml", "series.parquet", "summary.json"]
    summary = reference["summary.json"]
    assert isinstance(summary, dict)
    assert len(summary["fairness"]["entities"]) == 2  # the fairness is in every summary
    assert summary["seed"] == SEED
    for name, files in contents.items():
        assert sorted(files) == sorted(reference), name
        for file in reference:
            assert files[file] == reference[file], f"{name}: {file} differs from atmsim run's"
    # the headers are comments: every scenario.toml reads as the same scenario
    parsed = {
        name: tomllib.loads((directory / "scenario.toml").read_text(encoding="utf-8"))
        for name, directory in run_dirs.items()
    }
    assert all(data == parsed["cli"] for data in parsed.values())


@needs_core
def test_report_plot_and_fairness_read_every_run_directory(
    run_dirs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    for name, original in run_dirs.items():
        directory = Path(shutil.copytree(original, tmp_path / name))
        before = json.loads((directory / "summary.json").read_text(encoding="utf-8"))
        assert cli_main("fairness", str(directory)) == 0, name
        after = json.loads((directory / "summary.json").read_text(encoding="utf-8"))
        assert after == before, name  # atmsim fairness finds what the run wrote
        assert cli_main("plot", str(directory)) == 0, name
        assert (directory / "queue.png").is_file(), name
        assert cli_main("report", str(directory)) == 0, name
        assert (directory / "report.html").is_file(), name
    capsys.readouterr()


@needs_core
def test_a_saved_result_matches_its_run_directory(tmp_path: Path) -> None:
    """``Result.save`` writes what ``run(out=...)`` wrote, also after the series was
    read as a DataFrame or replaced by one (the core's Parquet writer either way)."""
    scenario = write(tmp_path, SCENARIO, "tiny.toml")
    result = atmsim.run(scenario, seed=SEED, out=tmp_path / "out", progress=False)
    written = comparable(tmp_path / "out")
    frame = result.series
    result.save(tmp_path / "saved")
    assert comparable(tmp_path / "saved") == written
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "out" / "series.parquet"), frame)
    # a frame put in its place is written back by the same writer; its bytes may differ
    # (the name dictionaries list only the names the frame holds), its rows do not
    result.series = frame.copy()
    result.save(tmp_path / "replaced")
    replaced = comparable(tmp_path / "replaced")
    assert replaced.pop("series.parquet")[:4] == b"PAR1"
    assert replaced == {k: v for k, v in written.items() if k != "series.parquet"}
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "replaced" / "series.parquet"), frame)


@needs_core
def test_series_columns_round_trip_through_the_core_writer(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {
            "time_s": [0.0, 0.1, 0.1],
            "entity": ["x", "y", "x"],
            "metric": ["queue_cells", "queue_cells", "utilization"],
            "value": [1.0, 2.0, 0.5],
        }
    )
    path = tmp_path / "series.parquet"
    path.write_bytes(series_parquet(series_columns(frame)))
    pd.testing.assert_frame_equal(pd.read_parquet(path), frame)


def test_summary_text_is_indented_json_and_a_long_list_one_line_per_item():
    from atmsim.jsontext import LONG_LIST, json_text

    small = {
        "a": [1, 2.5, None, {"b": [], "c": {}}],
        "d": {"e": "x\u00e9", "f": float("nan"), "g": [True, False]},
        "h": [{"i": k} for k in range(LONG_LIST)],
    }
    assert json_text(small) == json.dumps(small, indent=2) + "\n"
    big = {"vcs": [{"name": f"v{k}", "cells": k} for k in range(LONG_LIST + 1)]}
    text = json_text(big)
    assert json.loads(text) == big
    lines = text.splitlines()
    assert lines[2] == '    {"name": "v0", "cells": 0},'
    assert len(lines) == 3 + LONG_LIST + 1 + 1
