"""Real simulations through the Rust core: physical facts, determinism, the CLI.

Skipped until `maturin develop` has built atmsim._core; they run as soon as it
exists (a built core that fails to import fails them).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import atmsim
from atmsim.scenario import Network

from conftest import SCENARIOS, balanced, cli_env, needs_core, run_cli

pytestmark = needs_core


@pytest.mark.parametrize("name", sorted(p.stem for p in SCENARIOS.glob("*.toml")))
def test_every_scenario_runs_and_conserves_cells(name: str) -> None:
    result = atmsim.run(SCENARIOS / f"{name}.toml", overrides=["run.duration=200 ms"])
    summary = result.summary
    assert summary["completed"] is True
    assert summary["sim_time_s"] == pytest.approx(0.2)
    ledger = summary["conservation"]
    assert ledger["cells_generated"] + ledger.get("packets", {}).get("generated", 0) > 0
    assert balanced(summary)
    ports = result.ports
    assert (ports["utilization"] <= 1 + 1e-9).all()
    assert (ports["cells_in"] >= ports["cells_out"] + ports["cells_dropped"]).all()
    links = Network(atmsim.load_scenario(SCENARIOS / f"{name}.toml")).links
    for _, port in ports.iterrows():
        link = links[port["name"]].link
        if link.buffer_cells() is not None:
            assert port["max_queue_cells"] <= link.buffer_cells()
        if link.buffer_packets() is not None:
            assert port["max_queue_packets"] <= link.buffer_packets()


def test_same_seed_same_results_other_seed_differs() -> None:
    path = SCENARIOS / "mux_onoff.toml"
    first = atmsim.run(path, overrides=["run.duration=1 s"]).summary
    second = atmsim.run(path, overrides=["run.duration=1 s"]).summary
    other = atmsim.run(path, seed=2, overrides=["run.duration=1 s"]).summary
    for summary in (first, second, other):
        summary.pop("wall_s")
    assert first == second
    assert other["conservation"] != first["conservation"]


def test_md1_mean_queue() -> None:
    """Poisson cells at load 0.8 into a fixed-rate port: M/D/1, mean waiting
    rho^2 / (2 (1 - rho)) = 1.6 cells."""
    result = atmsim.run(SCENARIOS / "md1.toml")
    (mean_queue,) = result.ports["mean_queue_cells"]
    assert mean_queue == pytest.approx(1.6, rel=0.05)
    (utilization,) = result.ports["utilization"]
    assert utilization == pytest.approx(0.8, rel=0.01)


def test_series_from_the_core() -> None:
    result = atmsim.run(SCENARIOS / "mux_onoff.toml", overrides=["run.duration=100 ms"])
    series = result.series
    assert list(series.columns) == ["time_s", "entity", "metric", "value"]
    assert {"queue_cells", "utilization"} <= set(series["metric"])
    assert set(series["entity"]) >= {"mux-out"}
    assert series["time_s"].max() <= 0.1 + 1e-12


RERUN = [
    *(f"example:{p.stem}" for p in sorted(SCENARIOS.glob("*.toml"))),
    "tcp-over-vcs",
    "reproduce:seed004-table1",
    "reproduce:seed000-sec8",
]


@pytest.mark.parametrize("case", RERUN)
def test_resolved_scenario_reruns_identically(tmp_path: Path, case: str) -> None:
    """The scenario.toml a run writes, run again, gives the same summary (all but its
    wall time and the scenario's name, the file's): every example, flows over VCs of
    [vcs], and runs of the reproduced experiments, each 50 ms long."""
    overrides = ["run.duration=50 ms"]
    kind, _, name = case.partition(":")
    if kind == "example":
        path = SCENARIOS / f"{name}.toml"
    elif kind == "tcp-over-vcs":
        from test_gfr import BACKBONE

        path = tmp_path / "backbone.toml"
        path.write_text(BACKBONE, encoding="utf-8")
    else:
        from atmsim.reproduce import registry, seed_override

        experiment_id, _, run_name = name.partition("/")
        experiment = registry()[experiment_id]
        run = experiment.runs[run_name or next(iter(experiment.runs))]
        path = run.path
        overrides = [*run.overrides, seed_override(1), *overrides]
    first = atmsim.run(path, out=tmp_path / "a", overrides=overrides, progress=False)
    again = atmsim.run(tmp_path / "a" / "scenario.toml", out=tmp_path / "b", progress=False)
    assert (tmp_path / "b" / "scenario.toml").read_text() == (
        tmp_path / "a" / "scenario.toml"
    ).read_text()
    for result in (first, again):
        result.summary.pop("wall_s")
        result.summary.pop("scenario")
    assert first.summary == again.summary


def test_cli_run_plot_bench(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = run_cli(
        "run", str(SCENARIOS / "mux_onoff.toml"), "--out", str(out), "--set", "run.duration=1 s"
    )
    assert result.returncode == 0, result.stderr
    assert "conservation ledger: balanced" in result.stdout
    names = {p.name for p in out.iterdir()}  # no INCOMPLETE: the run finished
    assert names == {".atmsim", "scenario.toml", "summary.json", "series.parquet"}
    assert json.loads((out / "summary.json").read_text())["completed"] is True
    result = run_cli("plot", str(out))
    assert result.returncode == 0, result.stderr
    assert (out / "queue.png").is_file() and (out / "utilization.png").is_file()
    figures = tmp_path / "bench.json"
    result = run_cli("bench", "--runs", "1", "--scale", "10,100", "--json", str(figures))
    assert result.returncode == 0, result.stderr
    for line in (
        "simulated cells per wall-second",
        "simulated cells per CPU-second",
        "events per wall-second",
        "over 300.0 s simulated",
        "validate md1",
        "run mux_onoff",
        "peak memory",
        "N =     100",
        "dumbbell",
        "machine:",
        "the general path, cells per CPU-second of the loop:",
        "mux_plain: mux_onoff.toml with every fast path off",
        "gfr: TCP over GFR",
    ):
        assert line in result.stdout, line
    report = json.loads(figures.read_text())
    # The general path: the plain mux dispatches two events a cell (a source's
    # emission, the arrival at the sink); each TCP configuration ran the papers' run.
    general = report["general"]
    assert sorted(general) == ["abr", "gfr", "mux_plain", "ubr"]
    assert general["mux_plain"]["events"] >= 2 * general["mux_plain"]["cells"] * 0.99
    for name in ("abr", "ubr", "gfr"):
        assert general[name]["cells"] > 100_000 and general[name]["target"] > 0
    assert report["mux_onoff"]["cells"] > 9_000_000
    long = report["mux_onoff"]["long"]
    assert long["sim_time_s"] == 300.0 and long["cells"] > 90_000_000 and long["runs"] == 1
    assert [row["vcs"] for row in report["scale"]["rows"]] == [10, 100]
    validate = report["process"]["rows"]["validate md1"]
    # The child's own peak, not the bench process's (which is over 100 MiB here).
    assert 5 < validate["peak_mib"]["median"] < 100
    assert report["machine"]["cores"] >= 1


def test_bench_refuses_a_bad_scale(tmp_path: Path) -> None:
    for bad in ("0", "ten", "10,,100", "2000000", "10,100,10"):
        result = run_cli("bench", "--runs", "1", "--scale", bad)
        assert result.returncode == 2
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: --scale"), result.stderr


def test_ctrl_c_writes_partial_results(tmp_path: Path) -> None:
    out = tmp_path / "run"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "atmsim",
            "run",
            str(SCENARIOS / "mux_onoff.toml"),
            "--out",
            str(out),
            "--set",
            "run.duration=100000 s",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
    )
    deadline = time.monotonic() + 60
    while not (out / "scenario.toml").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)  # well inside the advance loop
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["completed"] is False
    assert 0 < summary["sim_time_s"] < 100000
    assert balanced(summary)
