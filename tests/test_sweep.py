"""atmsim sweep: the spec, the run ids, the results table, resuming after SIGKILL, and the
three executors (a local process pool, a Dask LocalCluster, a local Ray instance)."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import atmsim
from atmsim.scenario import load_scenario, resolved_toml, to_core, tomllib, validate_scenario
from atmsim.sweeps import (
    RESULTS_FILE,
    RUNS_DIR,
    SweepError,
    load_spec,
    plan,
    run_id_of,
    run_sweep,
    toml_value,
)

from conftest import cli_env, cli_main, needs_core, run_cli

SPEC = """\
[sweep]
base = "ubr_epd"
seeds = 2

[set]
"run.duration" = "0.1 s"

[grid]
"links.sw1-sw2.buffer" = [300, 1000]

[metrics]
links = ["sw1-sw2"]
"""


def write_spec(tmp_path: Path, text: str = SPEC, name: str = "spec.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- the spec -------------------------------------------------------------------------------


def test_spec_points_cross_the_grid_with_the_zip(tmp_path):
    spec = load_spec(
        write_spec(
            tmp_path,
            """\
[sweep]
base = "ubr_epd"
seeds = [3, 4]
[grid]
"links.sw1-sw2.buffer" = [300, 1000]
[zip]
"sources.f.rate" = ["20 Mbps", "30 Mbps", "40 Mbps"]
"sources.f.start" = ["0 s", "1 ms", "2 ms"]
""",
        )
    )
    points = spec.points()
    assert len(points) == 6 and spec.seeds == [3, 4]
    assert points[0] == {
        "links.sw1-sw2.buffer": 300,
        "sources.f.rate": "20 Mbps",
        "sources.f.start": "0 s",
    }
    assert spec.parameters == ["links.sw1-sw2.buffer", "sources.f.rate", "sources.f.start"]
    assert spec.metrics[:5] == ["goodput_mbps", "clr", "jain", "fair_jain", "ledger_ok"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[sweep]\nseeds = 2\n", "sweep.base: required"),
        ('[sweep]\nbase = "nope"\n', 'sweep.base: "nope": no such file'),
        ('[sweep]\nbase = "ubr_epd"\nseeds = 0\n', "sweep.seeds: a number of run seeds"),
        ('[sweep]\nbase = "ubr_epd"\n[grids]\n', "grids: unknown table; allowed: sweep"),
        (
            '[sweep]\nbase = "ubr_epd"\n[zip]\n"a.b" = [1, 2]\n"a.c" = [1]\n',
            "zip: lists of one length",
        ),
        ('[sweep]\nbase = "ubr_epd"\n[grid]\nlinks.x = [1]\n', "quote dotted keys"),
        ('[sweep]\nbase = "ubr_epd"\n[grid]\n"run.seed" = [1, 2]\n', "give the run seeds"),
        ('[sweep]\nbase = "ubr_epd"\n[metrics]\ncollect = ["speed"]\n', 'unknown metric "speed"'),
        # a name is one plain path component: it names runs/sweep-<name>
        ('[sweep]\nbase = "ubr_epd"\nname = "../../../x"\n', "sweep.name: expected a name"),
        ('[sweep]\nbase = "ubr_epd"\nname = "a/b"\n', "sweep.name: expected a name"),
        ('[sweep]\nbase = "ubr_epd"\nname = "/tmp/x"\n', "sweep.name: expected a name"),
        ('[sweep]\nbase = "ubr_epd"\nname = ".."\n', "sweep.name: expected a name"),
        ('[sweep]\nbase = "ubr_epd"\nname = "a\\\\b"\n', "sweep.name: expected a name"),
        ('[sweep]\nbase = "ubr_epd"\nname = ""\n', "sweep.name: expected a name"),
        ('[sweep]\nbase = "ubr_epd"\nname = 3\n', "sweep.name: expected a name"),
    ],
)
def test_bad_specs_are_one_line_errors(tmp_path, text, expected):
    with pytest.raises(SweepError) as info:
        load_spec(write_spec(tmp_path, text))
    assert expected in str(info.value)
    assert "\n" not in str(info.value)


def test_a_grid_too_large_is_refused_before_it_is_built(tmp_path):
    """10^8 points: refused from the lists' lengths at once, not after filling the memory."""
    axes = "\n".join(f'"links.k{k}.buffer" = [{", ".join(map(str, range(10)))}]' for k in range(8))
    text = f'[sweep]\nbase = "ubr_epd"\nseeds = 2\n[grid]\n{axes}\n'
    started = time.perf_counter()
    with pytest.raises(SweepError) as info:
        load_spec(write_spec(tmp_path, text))
    assert time.perf_counter() - started < 2
    assert "grid: makes 200,000,000 runs; at most 100,000" in str(info.value)


def test_a_safe_name_names_the_default_output(tmp_path):
    spec = load_spec(write_spec(tmp_path, '[sweep]\nbase = "ubr_epd"\nname = "tbe_1.5"\n'))
    assert spec.name == "tbe_1.5"


def test_toml_values_round_trip_through_set():
    for value in (500, 0.5, "inf", "2 s", True, [1, 2], {"kind": "epd", "threshold": "80 %"}):
        assert tomllib.loads(f"v = {toml_value(value)}")["v"] == value


@needs_core
def test_cli_bad_spec_and_unknown_link_exit_2_with_one_line(tmp_path):
    bad = write_spec(tmp_path, '[sweep]\nbase = "ubr_epd"\nseeds = "many"\n', "bad.toml")
    result = run_cli("sweep", str(bad), "--out", str(tmp_path / "o1"))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {bad}: sweep.seeds: a number of run seeds (1..10000) or a list of run seeds [1, 7]"
    ]
    link = write_spec(tmp_path, SPEC.replace('links = ["sw1-sw2"]', 'links = ["nowhere"]'))
    result = run_cli("sweep", str(link), "--out", str(tmp_path / "o2"))
    assert result.returncode == 2
    assert 'no link "nowhere"' in result.stderr and len(result.stderr.splitlines()) == 1


# --- run ids --------------------------------------------------------------------------------


@needs_core
def test_run_ids_hash_the_resolved_scenario_and_seed(tmp_path):
    spec = load_spec(write_spec(tmp_path))
    planned = plan(spec)
    assert len(planned) == 4 and len({item.run_id for item in planned}) == 4
    again = plan(load_spec(write_spec(tmp_path)))
    assert [item.run_id for item in again] == [item.run_id for item in planned]
    # what the worker resolves from the written scenario is the same run
    for item in planned:
        scenario = validate_scenario(tomllib.loads(item.scenario_toml), "ubr_epd.toml")
        assert run_id_of(to_core(scenario)) == item.run_id
    # the same configuration written another way is the same run
    direct = load_scenario(spec.base, ["run.duration=0.1 s", "links.sw1-sw2.buffer=300"])
    assert run_id_of(to_core(direct)) == planned[0].run_id  # the file's run seed is 1


# --- running --------------------------------------------------------------------------------


@needs_core
def test_local_sweep_writes_a_tidy_table_and_resumes(tmp_path):
    out = tmp_path / "out"
    spec = load_spec(write_spec(tmp_path))
    first = run_sweep(spec, out, jobs=2, progress=False)
    frame = pd.read_parquet(out / RESULTS_FILE)
    assert len(frame) == 4 and set(frame["status"]) == {"ok"}
    assert list(frame.columns[:3]) == ["run_id", "links.sw1-sw2.buffer", "seed"]
    for column in ("goodput_mbps", "clr", "jain", "fair_jain", "ledger_ok"):
        assert column in frame
    assert "utilization:sw1-sw2" in frame and "max_queue:sw1-sw2" in frame
    assert frame["ledger_ok"].all()
    assert (frame["max_queue:sw1-sw2"] <= frame["links.sw1-sw2.buffer"]).all()
    for run_id in frame["run_id"]:
        files = sorted(path.name for path in (out / RUNS_DIR / run_id).iterdir())
        assert files == [".atmsim", "scenario.toml", "summary.json"]
    assert first.ran == 4 and first.skipped == 0
    second = run_sweep(spec, out, jobs=2, progress=False)
    assert second.ran == 0 and second.skipped == 4
    pd.testing.assert_frame_equal(
        second.frame.drop(columns="wall_s"), first.frame.drop(columns="wall_s")
    )


@needs_core
def test_invalid_points_and_failures_are_counted_without_stopping(tmp_path):
    # an EPD threshold of 800 cells is above a 500-cell buffer: that point is invalid
    text = SPEC.replace("[300, 1000]", "[500, 1000]").replace(
        '"run.duration" = "0.1 s"',
        '"run.duration" = "0.1 s"\n"links.sw1-sw2.policy.threshold" = 800',
    )
    result = run_cli("sweep", str(write_spec(tmp_path, text)), "--out", str(tmp_path / "o"))
    assert result.returncode == 0, result.stderr
    frame = pd.read_parquet(tmp_path / "o" / RESULTS_FILE)
    assert sorted(frame["status"]) == ["invalid", "invalid", "ok", "ok"]
    assert "2 failed:" in result.stdout and "threshold" in result.stdout
    every = text.replace("[500, 1000]", "[500, 600]")
    result = run_cli(
        "sweep", str(write_spec(tmp_path, every, "all.toml")), "--out", str(tmp_path / "p")
    )
    assert result.returncode == 2 and "every run is invalid" in result.stderr


@pytest.mark.parametrize(("fail_every", "line"), [(True, "every run failed"), (False, None)])
def test_runs_that_fail_in_the_core_exit_1(faulty, tmp_path, capsys, monkeypatch, fail_every, line):
    """A sweep whose runs failed exited 0: now 1, with a line on stderr saying how many
    (as atmsim run and reproduce answer a run that fails); the table keeps their status."""
    spec = write_spec(tmp_path, SPEC.replace('"0.1 s"', '"0.01 s"'))
    made = []

    class FailingHalf(faulty.Simulation):
        def advance(self, until_ps: int, max_events: int | None = None) -> bool:
            if fail_every or len(made) % 2:
                raise RuntimeError("internal error: injected fault")
            return super().advance(until_ps, max_events)

        def __init__(self, core_json: str) -> None:
            made.append(self)
            super().__init__(core_json)

    monkeypatch.setattr(faulty, "Simulation", FailingHalf)
    code = cli_main("sweep", str(spec), "--out", str(tmp_path / "o"), "--jobs", "1")
    err = capsys.readouterr().err
    frame = pd.read_parquet(tmp_path / "o" / RESULTS_FILE)
    failed = int((frame["status"] == "failed").sum())
    assert code == 1 and failed >= 1
    expected = line or f"{failed} of 4 runs failed"
    last = err.splitlines()[-1]
    assert last.startswith(f"sweep: {expected}") and last.endswith("(status in results.parquet)")
    if fail_every:  # the first failure named
        assert "injected fault" in last


@needs_core
def test_a_sweep_over_flows_on_shared_vcs_runs_and_its_records_reload(tmp_path):
    """Flows over VCs of [vcs] (the class is the VCs'): every run is ok, and each run's
    scenario.toml reloads as the same run, for `atmsim fairness` too."""
    from test_gfr import BACKBONE

    (tmp_path / "backbone.toml").write_text(BACKBONE, encoding="utf-8")
    text = """\
[sweep]
base = "backbone.toml"
seeds = 1
[set]
"run.duration" = "50 ms"
[grid]
"links.b1-b2.buffer" = [2000, 3000]
"""
    out = tmp_path / "out"
    result = run_cli("sweep", str(write_spec(tmp_path, text)), "--jobs", "1", "--out", str(out))
    assert result.returncode == 0, result.stderr
    frame = pd.read_parquet(out / RESULTS_FILE)
    assert list(frame["status"]) == ["ok", "ok"]
    for run_id in frame["run_id"]:
        written = out / RUNS_DIR / run_id / "scenario.toml"
        scenario = load_scenario(written)
        assert written.read_text().endswith(resolved_toml(scenario))
        assert run_id_of(to_core(scenario)) == run_id
        fairness = run_cli("fairness", str(written.parent))
        assert fairness.returncode == 0, fairness.stderr


@needs_core
def test_a_sweep_whose_every_run_fails_exits_1(tmp_path, monkeypatch, capsys):
    from atmsim import sweeps

    def fails(task: dict) -> dict:
        return {"run_id": task["run_id"], "summary": None, "error": "boom", "wall_s": 0.0}

    monkeypatch.setattr(sweeps, "run_task", fails)
    spec = write_spec(tmp_path, SPEC.replace("seeds = 2", "seeds = 1"))
    assert cli_main("sweep", str(spec), "--jobs", "1", "--out", str(tmp_path / "o")) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("sweep: every run failed; the first (")
    assert err[0].endswith(": boom (status in results.parquet)")
    frame = pd.read_parquet(tmp_path / "o" / RESULTS_FILE)
    assert set(frame["status"]) == {"failed"}


@needs_core
def test_api_returns_a_dataframe(tmp_path):
    spec = {
        "sweep": {"base": "ubr_epd", "seeds": 1},
        "set": {"run.duration": "0.05 s"},
        "grid": {"links.sw1-sw2.buffer": [400, 800]},
    }
    frame = atmsim.sweep(spec, out=tmp_path / "api", jobs=1)
    assert isinstance(frame, pd.DataFrame) and len(frame) == 2
    assert list(frame["links.sw1-sw2.buffer"]) == [400, 800]


@needs_core
def test_a_sweep_killed_with_sigkill_resumes_and_loses_nothing(tmp_path):
    """SIGKILL the whole sweep (its process group) after some runs, start it again: it
    runs only the missing ones; the finished runs are untouched and no run directory
    is half written."""
    text = """\
[sweep]
base = "ubr_tcp"
seeds = 8
[set]
"run.duration" = "3 s"
"""
    spec = write_spec(tmp_path, text)
    out = tmp_path / "out"
    runs = out / RUNS_DIR
    command = [sys.executable, "-m", "atmsim", "sweep", str(spec), "--out", str(out)]
    process = subprocess.Popen(
        [*command, "--jobs", "1", "--no-progress"],
        env=cli_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    finished: list[Path] = []
    while time.monotonic() < deadline:
        finished = (
            [p for p in runs.glob("*") if (p / "summary.json").is_file()] if runs.is_dir() else []
        )
        if len(finished) >= 2 or process.poll() is not None:
            break
        time.sleep(0.02)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert 2 <= len(finished) < 8, "the sweep should be killed part of the way"
    before = {
        p.name: (p / "summary.json").read_bytes()
        for p in runs.iterdir()
        if not p.name.startswith(".") and (p / "summary.json").is_file()
    }
    for directory in runs.iterdir():  # every run directory is whole
        if not directory.name.startswith("."):
            assert (directory / "summary.json").is_file() and (
                directory / "scenario.toml"
            ).is_file()
    result = subprocess.run(
        [*command, "--jobs", "2", "--no-progress"],
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    done = len(before)
    assert f"ran {8 - done}, {done} already done" in result.stdout
    frame = pd.read_parquet(out / RESULTS_FILE)
    assert len(frame) == 8 and set(frame["status"]) == {"ok"}
    for name, content in before.items():  # nothing written before was rewritten or lost
        assert (runs / name / "summary.json").read_bytes() == content
    assert not [p for p in runs.iterdir() if p.name.startswith(".")]


# --- Dask and Ray ---------------------------------------------------------------------------

EXECUTOR_SPEC = """\
[sweep]
base = "ubr_epd"
seeds = 2
[set]
"run.duration" = "0.05 s"
[grid]
"links.sw1-sw2.buffer" = [400, 900]
"""

HAS_DASK = importlib.util.find_spec("distributed") is not None
HAS_RAY = importlib.util.find_spec("ray") is not None


def _executor_run(tmp_path: Path, executor: str) -> pd.DataFrame:
    spec = load_spec(write_spec(tmp_path, EXECUTOR_SPEC))
    local = run_sweep(spec, tmp_path / "local", jobs=1, progress=False).frame
    other = run_sweep(spec, tmp_path / executor, jobs=2, executor=executor, progress=False)
    assert other.ran == 4
    pd.testing.assert_frame_equal(other.frame.drop(columns="wall_s"), local.drop(columns="wall_s"))
    return other.frame


@needs_core
@pytest.mark.skipif(
    not HAS_DASK, reason="dask[distributed] is not installed (pip install 'atmsim[dask]')"
)
def test_dask_local_cluster_gives_the_same_table(tmp_path):
    frame = _executor_run(tmp_path, "dask")
    assert set(frame["status"]) == {"ok"}


@needs_core
@pytest.mark.skipif(not HAS_RAY, reason="ray is not installed (pip install 'atmsim[ray]')")
def test_ray_local_instance_gives_the_same_table(tmp_path):
    frame = _executor_run(tmp_path, "ray")
    assert set(frame["status"]) == {"ok"}


@needs_core
def test_a_missing_executor_is_a_one_line_error(tmp_path, monkeypatch, capsys):
    """A missing Dask or Ray is refused in one line before the output folder is made."""
    spec = write_spec(tmp_path, EXECUTOR_SPEC)
    for module, flag, extra in (
        ("dask.distributed", "--dask", "atmsim[dask]"),
        ("ray", "--ray", "atmsim[ray]"),
    ):
        monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
        code = cli_main("sweep", str(spec), flag, "--out", str(tmp_path / f"o{flag}"))
        err = capsys.readouterr().err
        assert code == 2, err
        assert err.startswith(f"error: {flag}: ") and extra in err and err.count("\n") == 1
        assert not (tmp_path / f"o{flag}").exists()  # refused before anything is written
        monkeypatch.delitem(sys.modules, module)


def test_dask_and_ray_take_an_optional_address():
    from atmsim.cli import LOCAL, _optional_values

    assert _optional_values(["sweep", "s.toml", "--dask"]) == ["sweep", "s.toml", "--dask", LOCAL]
    assert _optional_values(["sweep", "--ray", "s.toml"]) == ["sweep", "--ray", LOCAL, "s.toml"]
    assert _optional_values(["sweep", "--dask", "tcp://127.0.0.1:8786", "s.toml"])[2] == (
        "tcp://127.0.0.1:8786"
    )
    assert _optional_values(["--ray", "auto"]) == ["--ray", "auto"]
