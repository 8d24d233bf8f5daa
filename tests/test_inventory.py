"""The inventory of the papers' published results and ``atmsim reproduce --coverage``."""

from __future__ import annotations

from pathlib import Path

import pytest

from atmsim.reproduce import inventory

from conftest import run_cli

HEADER = ",".join(inventory.COLUMNS)


def _write(directory: Path, seed: str, lines: list[str]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{seed}.csv").write_text("\n".join([HEADER, *lines]) + "\n")


def test_the_shipped_inventory_loads_and_names_only_real_rows():
    entries = inventory.load()
    assert inventory.problems(entries) == []
    assert all(entry.seed.startswith("seed") for entry in entries)


def test_entries_load_and_coverage_counts_them(tmp_path):
    _write(
        tmp_path,
        "seed000",
        [
            "seed000,section 8,total TCP throughput,2 sources,103.32,Mbps,seed000-sec8,"
            "total TCP throughput",
            "seed000,section 8,CLR,2 sources,0,%,seed000-sec8,CLR",
            "seed000,section 9,time of the first loss,2 sources,0.2,s,,",
        ],
    )
    entries = inventory.load(tmp_path)
    assert [entry.covered for entry in entries] == [True, True, False]
    assert inventory.problems(entries) == []
    verdicts = {("seed000-sec8", "total TCP throughput"): "miss"}
    table = inventory.coverage(entries, verdicts)
    assert table["seed000"] == {
        "published": 3,
        "covered": 2,
        "match": 0,
        "miss": 1,
        "n/a": 0,
        "not-run": 1,
        "uncovered": 1,
    }
    lines = inventory.coverage_lines(table)
    assert lines[0].split() == ["document", *inventory.COUNTS]
    assert lines[1].split()[0] == "tcp-over-abr" and lines[-1].split()[0] == "all"
    assert all(len(line) <= 80 for line in lines)


def test_a_wrong_entry_is_named(tmp_path):
    _write(
        tmp_path,
        "seed000",
        [
            "seed000,section 8,x,c,1,Mbps,seed000-nosuch,x",
            "seed000,section 8,y,c,1,Mbps,seed000-sec8,no such row",
            "seed000,section 8,z,c,1,Mbps,seed000-sec8,",
        ],
    )
    found = inventory.problems(inventory.load(tmp_path))
    assert "unknown experiment 'seed000-nosuch'" in found[0]
    assert "no row 'no such row'" in found[1]
    assert "experiment and row go together" in found[2]


def test_a_malformed_file_is_refused(tmp_path):
    (tmp_path / "seed001.csv").write_text("seed,where\nseed001,x\n")
    with pytest.raises(ValueError, match="columns"):
        inventory.load(tmp_path)
    _write(tmp_path, "seed001", ["seed002,Fig 2,q,c,1,Mbps,,"])
    with pytest.raises(ValueError, match="seed 'seed002' in seed001's file"):
        inventory.load(tmp_path)


def test_verdicts_are_read_from_a_reproduce_output(tmp_path):
    folder = tmp_path / "seed000-sec8"
    folder.mkdir()
    (folder / "table.csv").write_text(
        "experiment,quantity,verdict\nseed000-sec8,CLR,match\nseed000-sec8,x,miss\n"
    )
    assert inventory.verdicts_in(tmp_path) == {
        ("seed000-sec8", "CLR"): "match",
        ("seed000-sec8", "x"): "miss",
    }
    assert inventory.verdicts_in(tmp_path / "nowhere") == {}


def test_cli_coverage_runs_nothing(tmp_path):
    result = run_cli("reproduce", "--coverage", "--out", str(tmp_path / "none"))
    assert result.returncode == 0, result.stderr
    assert "atmsim reproduce --coverage" in result.stdout
    assert "not-run" in result.stdout
    assert not (tmp_path / "none").exists()
