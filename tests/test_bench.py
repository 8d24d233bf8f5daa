"""``atmsim bench``'s memory measures (``atmsim.validation.memory_bench``): each runs in
a fresh process and reports what the core holds; the slopes between two sizes are
the bytes per VC and per cell in flight. (The dumbbell's pairing is tested in
test_ns2_harness.py, the command end to end in test_end_to_end.py.)"""

from __future__ import annotations

import pytest

from atmsim.validation import bench, memory_bench

from conftest import cli_main, needs_core


@needs_core
def test_each_memory_measure_runs_in_a_fresh_process() -> None:
    vcs = bench._memory_measure("vcs", "100")
    assert vcs["vcs"] == 100 and vcs["core_kib"] >= 0
    flight = bench._memory_measure("flight", "0.01")
    # 10 ms of a link at 0.9 x 366,792 cells/s holds about 3,300 cells.
    assert 2_000 < flight["on_links"] < 5_000
    queue = bench._memory_measure("queue", "2000")
    assert queue["queued"] >= 2000  # the buffer, full, and the cell in service
    flat = bench._memory_measure("flat", "2.0", "4")
    assert len(flat["core_kib"]) == 4 and flat["cells"] > 500_000


def test_a_failing_measure_says_why() -> None:
    with pytest.raises(RuntimeError, match="unknown measure 'bogus'"):
        bench._memory_measure("bogus")


def test_the_slopes_and_the_flatness(monkeypatch) -> None:
    answers = {
        ("vcs", "1000"): {"vcs": 1000, "core_kib": 1000},
        ("vcs", "100000"): {"vcs": 100000, "core_kib": 100000},
        ("flight", "0"): {"delay_s": 0.0, "on_links": 0, "core_kib": 500},
        ("flight", "1"): {"delay_s": 1.0, "on_links": 1024, "core_kib": 550},
        ("queue", "1000"): {"buffer": 1000, "queued": 1000, "core_kib": 500},
        ("queue", "1000000"): {"buffer": 10**6, "queued": 1000 + 1024 * 32, "core_kib": 1524},
    }

    def fake(*args: str) -> dict:
        if args[0] == "flat":
            return {"duration_s": 3000.0, "cells": 10**9, "core_kib": [512] * 9 + [4096]}
        return answers[args]

    monkeypatch.setattr(bench, "_memory_measure", fake)
    out = bench.bench_memory()
    assert out["bytes_per_vc"] == pytest.approx(1024.0)
    assert out["bytes_per_cell_on_link"] == pytest.approx(50.0)
    assert out["bytes_per_queued_cell"] == pytest.approx(32.0)
    assert out["flat"]["growth_kib"] == 3584 and not out["flat"]["ok"]
    assert "NOT flat" in bench.format_memory(out)


def test_the_memory_child_refuses_no_measure(capsys) -> None:
    assert memory_bench.main([]) == 2
    assert "usage" in capsys.readouterr().out


@needs_core
def test_the_scale_series_runs_in_rounds_and_pairs_its_ratios() -> None:
    said: list[str] = []
    out = bench.bench_scale(runs=2, vcs=[10, 20], duration_s=0.01, echo=said.append)
    # One run of every N a round, so that each N sees the same minutes.
    rounds = [line.split(":")[0] for line in said if line.startswith("scale N=")]
    assert rounds == [
        "scale N=10 round 1/2",
        "scale N=20 round 1/2",
        "scale N=10 round 2/2",
        "scale N=20 round 2/2",
    ]
    first, second = out["rows"]
    assert first["cost_vs_first"] == 1.0 and first["paired_cost_vs_first"]["median"] == 1.0
    rates = (first["cells_per_cpu_s"]["values"], second["cells_per_cpu_s"]["values"])
    paired = sorted(a / b for a, b in zip(*rates))
    assert second["paired_cost_vs_first"]["values"] == [a / b for a, b in zip(*rates)]
    assert second["paired_cost_vs_first"]["median"] == pytest.approx(sum(paired) / 2)
    assert second["cells"] > first["cells"] > 0
    assert "round by round" in said[-1]


@needs_core
def test_the_whole_scale_runs_whole_processes_and_measures_the_set_up() -> None:
    said: list[str] = []
    out = bench.bench_whole_scale(20, seconds=(0.01, 0.02), runs=1, echo=said.append)
    assert out["vcs"] == 20 and [row["simulated_s"] for row in out["rows"]] == [0.01, 0.02]
    for row in out["rows"]:
        assert row["wall_s"]["n"] == 1 and row["wall_s"]["median"] > 0
        assert row["cpu_s"]["median"] > 0 and row["peak_mib"]["median"] > 10
        # the set-up is a part of the run before its loop, well under the whole process
        assert 0 < row["setup_wall_s"]["median"] < row["wall_s"]["median"]
        assert row["times_real_time"]["median"] == pytest.approx(
            row["simulated_s"] / row["wall_s"]["median"]
        )
        assert row["bytes_per_vc"] == pytest.approx(row["peak_mib"]["median"] * 2**20 / 20)
    assert said[0].startswith("whole run N=20 over 0.01 s, 1/1: ")
    assert "whole atmsim run, 20 VCs over 0.02 s simulated:" in said[-1]
    assert "target <= 250 MiB: met" in said[-1] or "target <= 250 MiB: not met" in said[-1]


def test_the_whole_scale_option_refuses_a_bad_count(capsys) -> None:
    assert cli_main("bench", "--whole-scale", "0") == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: argument --whole-scale: expected a number of VCs from 1 to 1000000, got '0' "
        "(see atmsim bench --help)"
    ]


@needs_core
def test_the_phases_of_a_run_are_each_timed(capsys) -> None:
    from devtools import run_phases

    assert run_phases.main(["2000", "0.01"]) == 0
    lines = capsys.readouterr().out.splitlines()
    steps = [line.split("  ")[0].strip() for line in lines[:-1]]
    assert steps == [
        *("imports", "validation", "to_core", "json.dumps", "core set-up", "loop", "finish"),
        *("json.loads", "complete_summary", "Parquet files", "summary.json"),
    ]
    assert all("CPU-s" in line and "peak" in line for line in lines[:-1])
    # 2,000 VCs are a large run: the rows go to Parquet files
    assert lines[-1].startswith("2,000 VCs, 0.01 s simulated; vcs ")
    assert run_phases.main(["1"]) == 2
