"""Large runs keep their per-VC and per-flow rows in Parquet files (``atmsim.columnar``):
summary.json holds the totals and names the files, readers of run directories get the
rows back, and runs below the bound write exactly the summary.json they always did."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import atmsim
from atmsim import columnar
from atmsim.results import RunDirError, read_summary, result_tables
from atmsim.rundir import summary_text

from conftest import cli_main, needs_core, write

SCENARIO = """\
[run]
duration = "40 ms"

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
count = 3
path = ["a", "sw", "b"]
rate = "20 Mbps"

[flows."tcp{i}"]
count = 2
path = ["a", "sw", "b"]

[probes]
delay = true
"""

TABLE_FILES = set(columnar.TABLE_FILES.values())


def run_files(directory: Path) -> set[str]:
    return {path.name for path in directory.iterdir()}


@needs_core
def test_a_small_run_keeps_its_rows_in_summary_json(tmp_path: Path) -> None:
    result = atmsim.run(write(tmp_path, SCENARIO), out=tmp_path / "run")
    assert columnar.entity_count(result.summary) <= columnar.SUMMARY_MAX_ROWS
    assert not run_files(tmp_path / "run") & TABLE_FILES
    text = (tmp_path / "run" / "summary.json").read_text()
    assert text == summary_text(result.summary)  # byte for byte as before the bound
    assert "tables" not in json.loads(text)


@needs_core
def test_a_large_run_writes_parquet_and_reads_back_the_same_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(columnar, "SUMMARY_MAX_ROWS", 4)  # 7 VCs (2 a flow), 2 flows
    result = atmsim.run(write(tmp_path, SCENARIO), out=tmp_path / "run")
    run = tmp_path / "run"
    assert {"vcs.parquet", "flows.parquet", "fairness.parquet"} <= run_files(run)
    on_disk = json.loads((run / "summary.json").read_text())
    assert "vcs" not in on_disk and "flows" not in on_disk
    assert "entities" not in on_disk["fairness"]
    assert on_disk["fairness"]["jain_normalised"] == result.summary["fairness"]["jain_normalised"]
    assert on_disk["tables"]["vcs"] == {"file": "vcs.parquet", "rows": len(result.summary["vcs"])}
    assert on_disk["tables"]["flows"]["rows"] == 2
    assert on_disk["tables"]["fairness"]["rows"] == len(result.summary["fairness"]["entities"])
    vcs = result.summary["vcs"]
    assert on_disk["vc_totals"]["cells_sent"] == sum(vc["cells_sent"] for vc in vcs) > 0
    flows = result.summary["flows"]
    assert on_disk["flow_totals"]["bytes_delivered"] == sum(f["bytes_delivered"] for f in flows)
    # every reader of run directories sees the summary the run had in memory
    assert read_summary(run) == result.summary
    # the nested objects (a VC's ctd, a flow's delay and rtt) are columns for pandas users
    frame = pd.read_parquet(run / "vcs.parquet")
    assert list(frame["name"]) == [vc["name"] for vc in vcs]
    assert "ctd_mean_s" in frame.columns
    pd.testing.assert_frame_equal(
        frame[["name", "cells_sent", "ctd_mean_s"]],
        result.vcs[["name", "cells_sent", "ctd_mean_s"]],
        check_dtype=False,
    )
    assert "delay_p99_s" in pd.read_parquet(run / "flows.parquet").columns
    # the printed tables name the file that holds the rows they leave out
    monkeypatch.setattr("atmsim.results.MAX_TABLE_ROWS", 2)
    captions = {table.title: table.caption for table in result_tables(result.summary)}
    assert captions["VCs"] == f"{len(vcs) - 2} more in vcs.parquet"


@needs_core
def test_a_small_run_after_a_large_one_removes_its_parquet_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, SCENARIO)
    monkeypatch.setattr(columnar, "SUMMARY_MAX_ROWS", 4)
    atmsim.run(path, out=tmp_path / "run")
    assert run_files(tmp_path / "run") & TABLE_FILES
    monkeypatch.setattr(columnar, "SUMMARY_MAX_ROWS", 1000)
    result = atmsim.run(path, out=tmp_path / "run")
    assert not run_files(tmp_path / "run") & TABLE_FILES
    assert read_summary(tmp_path / "run") == result.summary


@needs_core
def test_the_fairness_command_rewrites_a_large_runs_parquet_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setattr(columnar, "SUMMARY_MAX_ROWS", 4)
    atmsim.run(write(tmp_path, SCENARIO), out=tmp_path / "run")
    run = tmp_path / "run"
    (run / "fairness.parquet").unlink()
    summary = json.loads((run / "summary.json").read_text())
    del summary["fairness"], summary["tables"]["fairness"]
    (run / "summary.json").write_text(json.dumps(summary))
    assert cli_main("fairness", str(run), "--gfr-rule", "equal") == 0
    out = capsys.readouterr().out
    assert f"wrote the fairness into {run / 'summary.json'} and {run / 'fairness.parquet'}" in out
    written = json.loads((run / "summary.json").read_text())
    assert written["fairness"]["gfr_rule"] == "equal" and "entities" not in written["fairness"]
    rows = pd.read_parquet(run / "fairness.parquet")
    assert written["tables"]["fairness"]["rows"] == len(rows) == 3 + 2  # sources, flows
    assert read_summary(run)["fairness"]["entities"][0]["name"] == rows["name"][0]


@needs_core
def test_a_missing_parquet_file_is_one_line_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(columnar, "SUMMARY_MAX_ROWS", 4)
    atmsim.run(write(tmp_path, SCENARIO), out=tmp_path / "run")
    (tmp_path / "run" / "vcs.parquet").unlink()
    with pytest.raises(RunDirError) as info:
        read_summary(tmp_path / "run")
    assert str(info.value) == (
        f"{tmp_path / 'run' / 'vcs.parquet'}: no such file (summary.json names it)"
    )


@needs_core
def test_rows_round_trip_with_absent_keys_nulls_and_nested_objects(tmp_path: Path) -> None:
    rows = [
        {"name": "a", "n": 1, "x": 0.5, "when": None, "ok": True, "abr": {"acr": 1.0, "cuts": 2}},
        {"name": "b", "n": 2, "x": 1, "when": 3.0, "ok": False, "probes": 7, "by": "ré"},
        {"name": "c", "n": -3, "x": 2.5, "when": None, "ok": None, "abr": {"acr": 4.0, "cuts": 0}},
    ]
    (tmp_path / "t.parquet").write_bytes(columnar.parquet_bytes(rows))
    back = columnar.rows_of(tmp_path / "t.parquet")
    assert back == rows and type(back[1]["x"]) is float  # a column of numbers is float
    frame = pd.read_parquet(tmp_path / "t.parquet")
    assert list(frame.columns) == [
        *("name", "n", "x", "when", "ok", "abr_acr", "abr_cuts", "probes", "by")
    ]
    assert list(frame["n"]) == [1, 2, -3] and frame["n"].dtype == "int64"
    assert frame["when"].isna().tolist() == [True, False, True]
    assert frame["abr_cuts"].tolist()[0] == 2 and pd.isna(frame["abr_cuts"][1])


@needs_core
def test_a_column_of_strings_and_numbers_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match=r"^column x: values of several kinds \(int, str\)$"):
        columnar.parquet_bytes([{"x": 1}, {"x": "one"}])


@needs_core
def test_nulls_anywhere_in_a_column_are_read_back_where_they_were(tmp_path: Path) -> None:
    rows = [{"k": k, "v": None if k % 3 else k / 2} for k in range(2_500)]
    (tmp_path / "t.parquet").write_bytes(columnar.parquet_bytes(rows))
    frame = pd.read_parquet(tmp_path / "t.parquet")
    assert frame["k"].tolist() == list(range(2_500))
    assert frame["v"].isna().sum() == 2_500 - 834
    assert columnar.rows_of(tmp_path / "t.parquet") == rows
