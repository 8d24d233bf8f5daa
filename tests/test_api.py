"""atmsim.run and the CLI around it, on small scenarios run by the real core: slicing,
Ctrl-C, series decoding, the files of a run directory, the printed tables and exit
codes. Faults the core rarely shows (Ctrl-C in slice k, an unbalanced ledger, a core
exception) are injected by tests/faulty_core.py around the real core."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest

import atmsim
from atmsim import api
from atmsim.api import RunInterrupted

from conftest import FLOW_TINY, TINY, balanced, cli_main, needs_core

PROBES = '[probes]\nperiod = "1 ms"\nqueue = "all"\nutilization = ["ab"]\nvc_rate = "all"\n'

TINY_CELLS = 236
"""TINY's CBR source: 10 Mbps is one cell per 42.4 us, the first at t = 0, so 236 cells
(0 .. 235 x 42.4 us) start within the 10 ms."""

CELL_RATE_CPS = 10e6 / 424
"""TINY's source in cells per second."""


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY + PROBES, encoding="utf-8")
    return path


def test_run_returns_result(faulty, tiny: Path) -> None:
    result = atmsim.run(tiny, seed=7, progress=False)
    # Slices double from 10 ms / 1000 (the fixture): 10 us x (1 + 2 + ... + 512) covers
    # 10.23 ms, so the 10th slice, cut at 10 ms, ends the run.
    assert faulty.Simulation.last.calls == 10
    assert faulty.Simulation.last.reached_ps == 10 * 10**9
    summary = result.summary
    assert summary["completed"] is True and result.completed
    assert summary["seed"] == 7
    assert summary["scenario"] == "tiny"
    assert summary["sim_time_s"] == pytest.approx(0.01)
    assert summary["wall_s"] >= 0 and "atmsim_version" in summary
    assert summary["conservation"]["cells_generated"] == TINY_CELLS
    assert balanced(summary)
    ports = result.ports
    assert list(ports["name"]) == ["ab"]
    assert "drops_tail" in ports.columns  # the drops table flattened
    assert ports["cells_in"][0] == TINY_CELLS and ports["cells_dropped"][0] == 0
    assert ports["utilization"][0] == pytest.approx(TINY_CELLS * 424 / 155.52e6 / 0.01)
    assert list(result.vcs["name"]) == ["s"]
    series = result.series
    assert list(series.columns) == ["time_s", "entity", "metric", "value"]
    assert set(series["metric"]) == {"queue_cells", "utilization", "vc_rate_cps"}
    assert set(series["entity"]) == {"ab", "s"}
    assert len(series) == 3 * 10  # 3 series, 10 ms sampled every 1 ms
    assert series["time_s"].min() == pytest.approx(0.001)
    assert series["time_s"].max() == pytest.approx(0.01)
    rate = series[series["metric"] == "vc_rate_cps"]["value"]
    # Cells delivered per 1 ms sample: 23 or 24 of the 23.58 the source sends.
    assert rate.between(23_000, 24_000).all()
    assert rate.mean() == pytest.approx(CELL_RATE_CPS, rel=0.03)
    assert (series[series["metric"] == "queue_cells"]["value"] == 0).all()  # 6 % load


def test_out_dir_and_scenario_written_first(
    faulty, tiny: Path, tmp_path: Path, monkeypatch
) -> None:
    out = tmp_path / "run1"

    class CheckFirst(faulty.Simulation):
        def __init__(self, core_json: str) -> None:
            assert (out / "scenario.toml").is_file(), "scenario.toml must exist before the run"
            assert (out / "INCOMPLETE").is_file(), "the run is marked unfinished until saved"
            assert not (out / "summary.json").exists()
            super().__init__(core_json)

    monkeypatch.setattr(faulty, "Simulation", CheckFirst)
    result = atmsim.run(tiny, out=out, progress=False, overrides=["links.ab.buffer=50"])
    assert sorted(p.name for p in out.iterdir()) == [
        ".atmsim",
        "scenario.toml",
        "series.parquet",
        "summary.json",
    ]
    assert json.loads((out / "summary.json").read_text())["wall_s"] == result.summary["wall_s"]
    saved = pd.read_parquet(out / "series.parquet")
    pd.testing.assert_frame_equal(saved, result.series, check_dtype=False)
    rerun = atmsim.load_scenario(out / "scenario.toml")
    assert rerun.links["ab"].buffer == 50


@needs_core
def test_no_probes_no_series(tmp_path: Path) -> None:
    path = tmp_path / "plain.toml"
    path.write_text(TINY, encoding="utf-8")
    result = atmsim.run(path, out=tmp_path / "out", progress=False)
    assert result.series.empty
    assert list(result.series.columns) == ["time_s", "entity", "metric", "value"]
    assert not (tmp_path / "out" / "series.parquet").exists()
    assert balanced(result.summary)


def test_ctrl_c_finishes_and_writes(faulty, tiny: Path, tmp_path: Path) -> None:
    # Slices double from 10 ms / 1000: slices 1..8 done make 255 x 10 us.
    faulty.Simulation.interrupt_at_slice = 9
    with pytest.raises(RunInterrupted) as info:
        atmsim.run(tiny, out=tmp_path / "out", progress=False)
    assert isinstance(info.value, KeyboardInterrupt)
    result = info.value.result
    summary = result.summary
    assert summary["completed"] is False and not result.completed
    assert summary["sim_time_s"] == pytest.approx(0.00255)
    assert balanced(summary)  # the partial run's ledger balances too
    assert 0 < summary["conservation"]["cells_generated"] < TINY_CELLS
    assert result.series["time_s"].max() <= 0.00255
    saved = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert saved["completed"] is False
    assert (tmp_path / "out" / "series.parquet").is_file()


def test_slices_keep_their_size_while_they_take_between_the_bounds(
    faulty, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(api, "SLICE_WALL_S", (-1.0, 1e9))
    result = atmsim.run(tiny, progress=False)
    assert faulty.Simulation.last.calls == api.FIRST_SLICES
    assert faulty.Simulation.last.reached_ps == 10 * 10**9
    assert result.summary["conservation"]["cells_generated"] == TINY_CELLS


@needs_core
def test_slicing_does_not_change_results(tiny: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One slice or a thousand: the same summary (less wall time and event count) and
    the same series."""
    runs = []
    for bounds in ((1e9, 1e9), (-1.0, 1e9)):  # always double / never resize
        monkeypatch.setattr(api, "SLICE_WALL_S", bounds)
        runs.append(atmsim.run(tiny, progress=False))
    for result in runs:
        for key in ("wall_s", "events"):
            result.summary.pop(key)
    assert runs[0].summary == runs[1].summary
    pd.testing.assert_frame_equal(runs[0].series, runs[1].series)


@needs_core
def test_scenario_object_with_overrides(tiny: Path) -> None:
    scenario = atmsim.load_scenario(tiny)
    result = atmsim.run(scenario, overrides=["run.duration=20 ms"], progress=False)
    assert result.summary["sim_time_s"] == pytest.approx(0.02)
    assert result.summary["conservation"]["cells_generated"] == 472  # 0 .. 471 x 42.4 us
    with pytest.raises(atmsim.ScenarioError, match="run.duration"):
        atmsim.run(scenario, overrides=["run.duration=fast"], progress=False)


def test_missing_core_is_reported(monkeypatch, tiny: Path) -> None:
    monkeypatch.setitem(sys.modules, "atmsim._core", None)  # import raises ImportError
    with pytest.raises(api.CoreUnavailable, match="maturin develop"):
        atmsim.run(tiny, progress=False)


@needs_core
def test_cli_run_and_plot(tiny: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    assert cli_main("run", str(tiny), "--out", str(out), "--no-progress") == 0
    printed = capsys.readouterr().out
    assert f"conservation ledger: balanced (generated {TINY_CELLS}" in printed
    assert f"run dir: {out}" in printed
    assert "Ports" in printed and "VCs" in printed
    assert "Flows" not in printed and "ABR" not in printed
    assert cli_main("plot", str(out)) == 0
    for name in ("queue.png", "utilization.png", "vc_rate.png"):
        assert (out / name).stat().st_size > 1000


@needs_core
def test_cli_default_run_dir(tiny: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli_main("run", str(tiny)) == 0
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert run_dir.name.startswith("tiny-")
    assert (run_dir / "summary.json").is_file()


def test_cli_unbalanced_ledger_exits_1(faulty, tiny: Path, tmp_path: Path, capsys) -> None:
    faulty.Simulation.unbalance = "cells"
    assert cli_main("run", str(tiny), "--out", str(tmp_path / "r")) == 1
    printed = capsys.readouterr().out
    assert f"conservation ledger: UNBALANCED (generated {TINY_CELLS} != " in printed
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["conservation"]["ok"] is False


def test_cli_ctrl_c_exits_130(faulty, tiny: Path, tmp_path: Path, capsys) -> None:
    faulty.Simulation.interrupt_at_slice = 5
    assert cli_main("run", str(tiny), "--out", str(tmp_path / "r")) == 130
    captured = capsys.readouterr()
    assert captured.err.startswith("interrupted at 0.00015 s simulated; partial results in ")
    assert "conservation ledger: balanced" in captured.out  # the partial tables
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["completed"] is False


@needs_core
def test_run_from_a_dict() -> None:
    from atmsim.scenario import tomllib  # tomli before Python 3.11

    data = tomllib.loads(TINY)
    result = atmsim.run(data, overrides=["links.ab.buffer=7"], progress=False)
    assert result.summary["scenario"] == "scenario"
    assert "buffer = 7" in result.scenario_toml
    assert "buffer = 7" not in TINY and data["links"]["ab"]["buffer"] == 100  # not modified
    assert result.summary["conservation"]["cells_generated"] == TINY_CELLS


FLOW_PROBES = '[probes]\nperiod = "10 ms"\nqueue = ["sw-b"]\nflows = "all"\n'


@pytest.fixture
def flow_file(tmp_path: Path):
    """Write FLOW_TINY (ATM, or IP with ip=True) with flow and queue probes."""

    def make(ip: bool = False, probes: str = FLOW_PROBES) -> Path:
        text = (
            FLOW_TINY.replace("duplex = true", 'duplex = true\nlayer = "ip"') if ip else FLOW_TINY
        )
        path = tmp_path / ("ip_flow.toml" if ip else "atm_flow.toml")
        path.write_text(text + probes, encoding="utf-8")
        return path

    return make


@needs_core
def test_flows_table_and_ledgers(flow_file, tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    assert cli_main("run", str(flow_file()), "--out", str(out), "--no-progress") == 0
    printed = capsys.readouterr().out
    assert "Flows" in printed and "goodput (Mbps)" in printed and "fast retransmits" in printed
    assert "conservation ledger: balanced (generated" in printed
    # TCP over ATM carries no IP packets: the empty packet ledger is not printed
    assert "packet ledger" not in printed
    assert "byte ledger: balanced (sent " in printed
    assert "dropped by AAL5" in printed and "held out of order" in printed
    assert "IP ports" not in printed  # ATM flows: the ports are ATM ports
    summary = json.loads((out / "summary.json").read_text())
    (flow,) = summary["flows"]
    assert f"{flow['goodput_mbps']:.3f}" in printed
    result = atmsim.run(flow_file(), progress=False)
    flows = result.flows
    assert list(flows["name"]) == ["tcp"]
    goodput = flows["goodput_mbps"][0]
    assert goodput == pytest.approx(flows["bytes_delivered"][0] * 8 / 0.1 / 1e6)
    assert 0 < goodput < 155.52 * 48 / 53  # below the cell payload rate of the link
    assert list(result.vcs["name"]) == ["tcp", "tcp-ack"]
    assert set(result.ports["layer"]) == {"atm"}
    assert balanced(result.summary)


@needs_core
def test_ip_ports_table(flow_file, tmp_path: Path, capsys) -> None:
    assert cli_main("run", str(flow_file(ip=True)), "--out", str(tmp_path / "r")) == 0
    printed = capsys.readouterr().out
    assert "IP ports" in printed and "packets in" in printed
    assert "VCs" not in printed  # no VCs in a pure IP scenario
    assert "packet ledger: balanced (generated" in printed
    result = atmsim.run(flow_file(ip=True), progress=False)
    assert set(result.ports["layer"]) == {"ip"}
    assert result.vcs.empty
    ports = result.ports.set_index("name")
    assert ports.loc["sw-b", "packets_in"] > 0 and ports.loc["sw-b", "cells_in"] == 0


def test_unbalanced_byte_ledger_exits_1(faulty, flow_file, tmp_path: Path, capsys) -> None:
    faulty.Simulation.unbalance = "bytes"
    assert cli_main("run", str(flow_file()), "--out", str(tmp_path / "r")) == 1
    printed = capsys.readouterr().out
    assert "conservation ledger: balanced" in printed  # the cells are fine
    assert "byte ledger: UNBALANCED (sent " in printed


@needs_core
def test_flow_probes_alone_write_the_series(flow_file, tmp_path: Path) -> None:
    path = flow_file(probes='[probes]\nperiod = "10 ms"\nflows = ["tcp"]\n')
    result = atmsim.run(path, out=tmp_path / "r", progress=False)
    assert (tmp_path / "r" / "series.parquet").is_file()
    assert set(result.series["metric"]) == {"cwnd_bytes", "window_bytes", "seq_bytes", "srtt_s"}
    assert set(result.series["entity"]) == {"tcp"}
    seq = result.series[result.series["metric"] == "seq_bytes"]["value"]
    assert seq.is_monotonic_increasing and seq.iloc[-1] <= result.flows["bytes_sent"][0]


@needs_core
@pytest.mark.parametrize("ip", [False, True])
def test_plot_tcp_figures(flow_file, tmp_path: Path, ip: bool, capsys) -> None:
    out = tmp_path / "run"
    assert cli_main("run", str(flow_file(ip=ip)), "--out", str(out)) == 0
    assert cli_main("plot", str(out)) == 0
    queue = "ip_queue.png" if ip else "queue.png"
    for name in ("window.png", "sequence.png", "srtt.png", queue):
        assert (out / name).stat().st_size > 1000, name
    other = "queue.png" if ip else "ip_queue.png"
    assert not (out / other).exists()


def test_faulty_core_is_the_real_core(faulty, tiny: Path, monkeypatch) -> None:
    """Without a fault the wrapper gives exactly what the core gives."""
    wrapped = atmsim.run(tiny, progress=False)
    monkeypatch.setitem(sys.modules, "atmsim._core", faulty.real_core)
    direct = atmsim.run(tiny, progress=False)
    for result in (wrapped, direct):
        result.summary.pop("wall_s")
    assert wrapped.summary == direct.summary
    pd.testing.assert_frame_equal(wrapped.series, direct.series)
    assert faulty.version() == faulty.real_core.version()


def test_a_new_run_in_a_run_dir_replaces_the_earlier_files(
    faulty, tiny: Path, tmp_path: Path
) -> None:
    """The earlier run's summary and series go when a new run starts, so that a failed
    or probe-less run does not leave them next to its own scenario.toml."""
    out = tmp_path / "r"
    atmsim.run(tiny, out=out, progress=False)
    assert (out / "series.parquet").is_file()
    plain = tmp_path / "plain.toml"
    plain.write_text(TINY, encoding="utf-8")
    atmsim.run(plain, out=out, progress=False)
    assert sorted(p.name for p in out.iterdir()) == [".atmsim", "scenario.toml", "summary.json"]
    faulty.Simulation.fail_at_slice = 2
    with pytest.raises(RuntimeError, match="internal error"):
        atmsim.run(tiny, out=out, progress=False)
    assert sorted(p.name for p in out.iterdir()) == [".atmsim", "INCOMPLETE", "scenario.toml"]
    assert "[probes]" in (out / "scenario.toml").read_text()  # the run that failed


@needs_core
def test_fast_paths_off_changes_the_events_only(tmp_path: Path, capsys) -> None:
    """``--no-fast-paths`` / ``fast_paths=False``: every packet through the plain event
    path, the same summary and series."""
    dumbbell = Path(__file__).resolve().parents[1] / "scenarios" / "ip_dumbbell.toml"
    short = ["run.duration=1 s"]
    fast = atmsim.run(dumbbell, overrides=short, progress=False)
    plain = atmsim.run(dumbbell, overrides=short, progress=False, fast_paths=False)
    fast_events = fast.summary["events"]
    assert plain.summary["events"] > 5 * fast_events
    for result in (fast, plain):
        for key in ("wall_s", "events"):
            result.summary.pop(key)
    assert fast.summary == plain.summary
    pd.testing.assert_frame_equal(fast.series, plain.series)
    out = tmp_path / "plain"
    assert (
        cli_main("run", str(dumbbell), "--set", short[0], "--no-fast-paths", "--out", str(out)) == 0
    )
    assert "fast_paths = false" in (out / "scenario.toml").read_text()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["events"] > 5 * fast_events


@needs_core
def test_a_scenario_the_core_rejects_is_one_line_of_bad_input(
    tiny: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """Should the Python validation let through what the core's ranges refuse, the
    user still gets one line and exit 2, saying the core refused it."""
    real = api.to_core

    def out_of_range(scenario):
        core = real(scenario)
        core["links"][0]["delay_ps"] = 10**19
        return core

    monkeypatch.setattr(api, "to_core", out_of_range)
    with pytest.raises(atmsim.ScenarioError, match="core rejects"):
        atmsim.run(tiny, progress=False)
    assert cli_main("run", str(tiny), "--out", str(tiny.parent / "run")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "links[0].delay_ps" in err, err


@needs_core
def test_the_series_written_without_pandas_reads_back_as_its_frame(
    tiny: Path, tmp_path: Path
) -> None:
    """``write_series_parquet`` (pyarrow alone) and pandas' ``to_parquet`` of
    ``series_frame`` give the same frame, with samples and without (where the
    names are typed as strings, not as pandas' untyped empty columns)."""
    result = atmsim.run(tiny, progress=False)
    columns = result._series_columns
    for name, cols in (("probes", columns), ("none", None)):
        direct, via_pandas = tmp_path / f"{name}-a.parquet", tmp_path / f"{name}-b.parquet"
        api.write_series_parquet(cols, direct)
        frame = api.series_frame(cols)
        frame.to_parquet(via_pandas, index=False)
        check = {"check_dtype": cols is not None, "check_index_type": cols is not None}
        pd.testing.assert_frame_equal(pd.read_parquet(direct), pd.read_parquet(via_pandas), **check)
        pd.testing.assert_frame_equal(pd.read_parquet(direct), frame, check_dtype=False)
    assert len(result.series) > 0 and set(result.series["metric"]) >= {"queue_cells", "utilization"}


@needs_core
def test_the_core_writes_long_series_over_several_pages(tmp_path: Path) -> None:
    """The core's Parquet writer splits a series of more than 2^20 rows into pages
    (names of 300 entities: 9-bit dictionary indices) and pyarrow reads every row
    back; inconsistent columns are refused with a ValueError."""
    import numpy as np

    rows = (1 << 20) + 4321
    rng = np.random.default_rng(5)
    cols = {
        "time_s": (np.arange(rows) * 1e-3).tobytes(),
        "entity": rng.integers(0, 300, rows, dtype="<u4").tobytes(),
        "metric": rng.integers(0, 3, rows, dtype="u1").tobytes(),
        "value": rng.standard_normal(rows).tobytes(),
        "entity_names": [f"e{k}" for k in range(300)],
        "metric_names": ["queue_cells", "utilization", "vc_rate_cps"],
    }
    path = tmp_path / "long.parquet"
    api.write_series_parquet(cols, path)
    pd.testing.assert_frame_equal(pd.read_parquet(path), api.series_frame(cols), check_dtype=False)
    core = api.import_core()
    with pytest.raises(ValueError, match=r"metric: index 7 has no name \(names: 1\)"):
        core.series_parquet(b"\0" * 8, b"\0" * 4, ["a", "b", "c"], b"\7", ["m"], b"\0" * 8, "t")


@needs_core
def test_atmsim_run_does_not_load_pandas(tiny: Path, tmp_path: Path) -> None:
    """``atmsim run`` writes its files and tables from the core's columns: pandas (a
    third of a second and tens of MiB) is loaded only by what needs a frame."""
    import subprocess

    from conftest import cli_env

    code = (
        "import sys\n"
        "from atmsim._entry import main\n"
        f"sys.argv = ['atmsim', 'run', {str(tiny)!r}, '--no-progress', '--out', "
        f"{str(tmp_path / 'out')!r}]\n"
        "try:\n    main()\nexcept SystemExit as done:\n    assert not done.code, done.code\n"
        "print('loaded:', sorted(m for m in ('pandas', 'matplotlib') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(), timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "loaded: []" in done.stdout, done.stdout[-500:]
    assert (tmp_path / "out" / "series.parquet").is_file()


@needs_core
def test_vc_losses_probes_record_when_cells_drop_and_frames_merge() -> None:
    """``probes.vc_losses``: each listed VC's data cells dropped and AAL5 frames merged
    so far, every period; the last sample is the run's total (TCP over ABR (Kalyanaraman et
    al., 1996) section 11's tail-drop run, to 0.45 s: its first overflow is at about 0.4 s)."""
    from atmsim.resources import reproduce_dir
    from atmsim.scenario import to_core

    path = reproduce_dir() / "seed000-sec11.toml"
    overrides = ["run.duration=0.45 s", 'probes.vc_losses=["tcp1", "tcp2"]']
    core = to_core(atmsim.load_scenario(path, overrides))
    assert len(core["probes"]["vc_losses"]) == 2
    # not asked for, the core's input has no such list (every other run's input unchanged)
    plain = atmsim.load_scenario(reproduce_dir() / "seed000-table1.toml", [])
    assert "vc_losses" not in to_core(plain)["probes"]
    result = atmsim.run(path, overrides=overrides, progress=False)
    series = result.series
    losses = series[series["metric"].isin(["cells_dropped", "frames_merged"])]
    wide = losses.pivot_table(index="time_s", columns=["metric", "entity"], values="value")
    assert set(wide.columns) == {
        (metric, flow) for metric in ("cells_dropped", "frames_merged") for flow in ("tcp1", "tcp2")
    }
    assert (wide.diff().dropna() >= 0).all().all()  # running totals
    assert (wide.iloc[0] == 0).all() and (wide.iloc[-1]["cells_dropped"] > 0).all()
    merged = result.vcs.set_index("name")["frames_merged"]
    for flow in ("tcp1", "tcp2"):
        assert wide.iloc[-1][("frames_merged", flow)] == merged[flow]
    dropped = result.ports.set_index("name").loc["sw1-sw2", "cells_dropped"]
    assert wide.iloc[-1]["cells_dropped"].sum() <= dropped  # the VBR's and RM cells besides


@needs_core
def test_ctrl_c_is_answered_within_a_long_slice(tmp_path: Path) -> None:
    """Slices of simulated time grow while they are quick; a burst after a quiet start
    then falls in one long slice (here the last 0.1 s of the run, when 1000 sources at
    155.52 Mbps start: about 37 million events, seconds of work). The core returns
    every EVENTS_PER_CALL events, so Ctrl-C ends the run within a fraction of a second,
    with exit 130 and its partial results."""
    import signal
    import subprocess
    import time

    from conftest import cli_env

    lines = ['[run]\nduration = "1 s"\n\n[nodes]\nsw = {}\nb = { kind = "host" }\n']
    lines.append('[links.sw-b]\nfrom = "sw"\nto = "b"\nrate = "155.52 Mbps"\nbuffer = 100\n')
    for i in range(1000):
        lines.append(
            f'[nodes.h{i}]\nkind = "host"\n[links.h{i}-sw]\nfrom = "h{i}"\nto = "sw"\n'
            f'rate = "155.52 Mbps"\n[sources.s{i}]\npath = ["h{i}", "sw", "b"]\n'
            f'kind = "cbr"\nrate = "155.52 Mbps"\nstart = "0.9 s"\n'
        )
    path = tmp_path / "burst.toml"
    path.write_text("\n".join(lines))
    process = subprocess.Popen(
        [sys.executable, "-m", "atmsim", "run", str(path), "--out", str(tmp_path / "run")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
    )
    time.sleep(4.0)  # inside the burst's slice (the whole run takes far longer)
    sent = time.perf_counter()
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    answered = time.perf_counter() - sent
    assert process.returncode == 130, err
    assert answered < 2.0, answered
    assert "Traceback" not in err


@needs_core
@pytest.mark.parametrize(
    "name", ["ubr_taildrop", "ubr_taildrop.toml", "scenarios/ubr_taildrop.toml"]
)
def test_shipped_examples_run_from_any_directory(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """atmsim.run takes a shipped example by name, and by the checkout's relative path
    that the README shows, from a directory that holds neither, as the CLI does."""
    monkeypatch.chdir(tmp_path)
    result = atmsim.run(name, overrides=["run.duration=1 ms"], progress=False)
    assert result.summary["scenario"] == "ubr_taildrop"
    with pytest.raises(atmsim.ScenarioError, match="elsewhere/ubr_taildrop.toml"):
        atmsim.run("elsewhere/ubr_taildrop.toml", progress=False)


@needs_core
def test_delay_columns_in_result_and_tables(tiny: Path, flow_file, tmp_path: Path, capsys) -> None:
    # TINY's CBR VC over one empty 10 km link: every cell takes one cell time
    # and 50 us, so the CTD has no variation.
    result = atmsim.run(tiny, overrides=["probes.delay=true"], progress=False)
    vcs = result.vcs
    for column in api.CTD_COLUMNS:
        assert column in vcs
    assert vcs["ctd_count"][0] == vcs["cells_delivered"][0] > 0
    exact = 424 / 155.52e6 + 50e-6
    assert vcs["ctd_min_s"][0] == pytest.approx(exact, rel=1e-6)
    assert vcs["ctd_max_s"][0] == pytest.approx(exact, rel=1e-6)
    assert vcs["ctd_p2p_cdv_s"][0] == 0 and vcs["ctd_std_s"][0] == 0
    # Without the key the columns are there, empty.
    plain = atmsim.run(tiny, progress=False).vcs
    assert plain["ctd_mean_s"].isna().all()
    assert "ctd" not in plain.columns
    # A flow: its segment delays and RTT samples, in Result and in the tables.
    out = tmp_path / "flow"
    path = flow_file()
    assert (
        cli_main("run", str(path), "--set", "probes.delay=true", "--out", str(out), "--no-progress")
        == 0
    )
    printed = capsys.readouterr().out
    assert "VC cell transfer delay (us)" in printed and "CDV p99-min" in printed
    assert "Flow delay and RTT (ms)" in printed
    assert cli_main("plot", str(out)) == 0
    assert (out / "delay.png").is_file()
    flows = atmsim.run(path, overrides=["probes.delay=true"], progress=False).flows
    for column in api.FLOW_DELAY_COLUMNS:
        assert column in flows
    assert flows["delay_count"][0] > 0 and flows["rtt_count"][0] > 0
    # The coarse timer's samples are whole ticks: this short path's are 0 ticks.
    assert flows["rtt_min_s"][0] >= 0 and flows["delay_max_s"][0] >= flows["delay_min_s"][0]
    assert atmsim.run(path, progress=False).flows["rtt_mean_s"].isna().all()


@needs_core
def test_a_run_turns_the_cyclic_collector_off_and_back_as_it_found_it(tiny: Path) -> None:
    """The run's per-VC objects are not walked by the cyclic collector (it is off during
    the run), which is on again after it, whether the run ends or fails, and stays off
    for a caller who had turned it off."""
    import gc

    seen: list[bool] = []
    api.STEP_HOOK, hook = (lambda: seen.append(gc.isenabled())), api.STEP_HOOK
    try:
        assert gc.isenabled()
        result = atmsim.run(tiny)
        assert seen and not any(seen) and gc.isenabled() and result.setup_wall_s > 0
        with pytest.raises(atmsim.ScenarioError):
            atmsim.run(tiny, overrides=["run.duration=-1 s"])
        assert gc.isenabled()
        gc.disable()
        atmsim.run(tiny)
        assert not gc.isenabled()
    finally:
        gc.enable()
        api.STEP_HOOK = hook
