"""atmsim.run and the CLI around it, driven by a stand-in core (tests/fake_core.py).

These check the Python layer alone: slicing, Ctrl-C, series decoding, the
files of a run directory, the printed tables and exit codes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest

import atmsim
from atmsim import api
from atmsim.api import RunInterrupted

import fake_core
from conftest import FLOW_TINY, TINY, cli_main

PROBES = '[probes]\nperiod = "1 ms"\nqueue = "all"\nutilization = ["ab"]\nvc_rate = "all"\n'


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY + PROBES, encoding="utf-8")
    return path


def test_run_returns_result(fake, tiny: Path) -> None:
    result = atmsim.run(tiny, seed=7, progress=False)
    # The fake core is instant, so every slice doubles: 10 ms in 10 slices.
    assert fake.Simulation.last.calls == 10
    assert fake.Simulation.last.now_ps == 10 * 10**9
    summary = result.summary
    assert summary["completed"] is True
    assert summary["seed"] == 7
    assert summary["scenario"] == "tiny"
    assert summary["wall_s"] >= 0 and "atmsim_version" in summary
    assert list(result.ports["name"]) == ["ab"]
    assert "drops_tail" in result.ports.columns
    assert list(result.vcs["name"]) == ["s"]
    series = result.series
    assert list(series.columns) == ["time_s", "entity", "metric", "value"]
    assert set(series["metric"]) == {"queue_cells", "utilization", "vc_rate_cps"}
    assert set(series["entity"]) == {"ab", "s"}
    assert len(series) == 3 * 10  # 3 series, 10 ms sampled every 1 ms
    assert series["time_s"].max() == pytest.approx(0.01)


def test_out_dir_and_scenario_written_first(fake, tiny: Path, tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "run1"

    class CheckFirst(fake_core.Simulation):
        def __init__(self, core_json: str) -> None:
            assert (out / "scenario.toml").is_file(), "scenario.toml must exist before the run"
            super().__init__(core_json)

    monkeypatch.setattr(fake_core, "Simulation", CheckFirst)
    result = atmsim.run(tiny, out=out, progress=False, overrides=["links.ab.buffer=50"])
    assert sorted(p.name for p in out.iterdir()) == [
        "scenario.toml",
        "series.parquet",
        "summary.json",
    ]
    assert json.loads((out / "summary.json").read_text())["wall_s"] == result.summary["wall_s"]
    saved = pd.read_parquet(out / "series.parquet")
    pd.testing.assert_frame_equal(saved, result.series, check_dtype=False)
    rerun = atmsim.load_scenario(out / "scenario.toml")
    assert rerun.links["ab"].buffer == 50


def test_no_probes_no_series(fake, tmp_path: Path) -> None:
    path = tmp_path / "plain.toml"
    path.write_text(TINY, encoding="utf-8")
    result = atmsim.run(path, out=tmp_path / "out", progress=False)
    assert result.series.empty
    assert list(result.series.columns) == ["time_s", "entity", "metric", "value"]
    assert not (tmp_path / "out" / "series.parquet").exists()


def test_ctrl_c_finishes_and_writes(fake, tiny: Path, tmp_path: Path) -> None:
    # Slices double from 10 ms / 1000: slices 1..8 done make 255 x 10 us.
    fake.Simulation.interrupt_at_slice = 9
    with pytest.raises(RunInterrupted) as info:
        atmsim.run(tiny, out=tmp_path / "out", progress=False)
    summary = info.value.result.summary
    assert summary["completed"] is False
    assert summary["sim_time_s"] == pytest.approx(0.00255)
    saved = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert saved["completed"] is False
    assert isinstance(info.value, KeyboardInterrupt)


def test_slices_keep_their_size_while_they_take_between_the_bounds(
    fake, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(api, "SLICE_WALL_S", (-1.0, 1e9))
    atmsim.run(tiny, progress=False)
    assert fake.Simulation.last.calls == api.FIRST_SLICES
    assert fake.Simulation.last.now_ps == 10 * 10**9


def test_scenario_object_with_overrides(fake, tiny: Path) -> None:
    scenario = atmsim.load_scenario(tiny)
    result = atmsim.run(scenario, overrides=["run.duration=20 ms"], progress=False)
    assert result.summary["sim_time_s"] == pytest.approx(0.02)
    with pytest.raises(atmsim.ScenarioError, match="run.duration"):
        atmsim.run(scenario, overrides=["run.duration=fast"], progress=False)


def test_missing_core_is_reported(monkeypatch, tiny: Path) -> None:
    monkeypatch.setitem(sys.modules, "atmsim._core", None)  # import raises ImportError
    with pytest.raises(api.CoreUnavailable, match="maturin develop"):
        atmsim.run(tiny, progress=False)


def test_cli_run_and_plot(fake, tiny: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    assert cli_main("run", str(tiny), "--out", str(out), "--no-progress") == 0
    printed = capsys.readouterr().out
    assert "conservation ledger: balanced (generated" in printed
    assert f"run dir: {out}" in printed
    assert "ab" in printed and "utilization" in printed
    assert cli_main("plot", str(out)) == 0
    for name in ("queue.png", "utilization.png", "vc_rate.png"):
        assert (out / name).stat().st_size > 1000


def test_cli_default_run_dir(fake, tiny: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli_main("run", str(tiny)) == 0
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert run_dir.name.startswith("tiny-")
    assert (run_dir / "summary.json").is_file()


def test_cli_unbalanced_ledger_exits_1(fake, tiny: Path, tmp_path: Path, capsys) -> None:
    fake.Simulation.ledger_ok = False
    assert cli_main("run", str(tiny), "--out", str(tmp_path / "r")) == 1
    assert "conservation ledger: UNBALANCED" in capsys.readouterr().out


def test_cli_ctrl_c_exits_130(fake, tiny: Path, tmp_path: Path, capsys) -> None:
    fake.Simulation.interrupt_at_slice = 5
    assert cli_main("run", str(tiny), "--out", str(tmp_path / "r")) == 130
    assert "interrupted" in capsys.readouterr().err
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["completed"] is False


def test_run_from_a_dict(fake) -> None:
    from atmsim.scenario import tomllib  # tomli before Python 3.11

    data = tomllib.loads(TINY)
    result = atmsim.run(data, overrides=["links.ab.buffer=7"], progress=False)
    assert result.summary["scenario"] == "scenario"
    assert "buffer = 7" in result.scenario_toml
    assert "buffer = 7" not in TINY and data["links"]["ab"]["buffer"] == 100  # not modified


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


def test_flows_table_and_ledgers(fake, flow_file, tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    assert cli_main("run", str(flow_file()), "--out", str(out), "--no-progress") == 0
    printed = capsys.readouterr().out
    assert "Flows" in printed and "goodput (Mbps)" in printed and "fast retransmits" in printed
    assert "conservation ledger: balanced (generated" in printed
    assert "packet ledger: balanced (generated" in printed
    assert "byte ledger: balanced (sent " in printed
    assert "dropped by AAL5" in printed and "held out of order" in printed
    assert "IP ports" not in printed  # ATM flows: the ports are ATM ports
    result = atmsim.run(flow_file(), progress=False)
    flows = result.flows
    assert list(flows["name"]) == ["tcp"]
    assert flows["goodput_mbps"][0] == pytest.approx(10.0, rel=1e-3)  # the fake's 10 Mbps
    assert list(result.vcs["name"]) == ["tcp", "tcp-ack"]
    assert set(result.ports["layer"]) == {"atm"}


def test_ip_ports_table(fake, flow_file, tmp_path: Path, capsys) -> None:
    assert cli_main("run", str(flow_file(ip=True)), "--out", str(tmp_path / "r")) == 0
    printed = capsys.readouterr().out
    assert "IP ports" in printed and "packets in" in printed
    assert "VCs" not in printed  # no VCs in a pure IP scenario
    result = atmsim.run(flow_file(ip=True), progress=False)
    assert set(result.ports["layer"]) == {"ip"}
    assert "packets_in" in result.ports.columns


def test_unbalanced_byte_ledger_exits_1(fake, flow_file, tmp_path: Path, capsys) -> None:
    fake.Simulation.bytes_ok = False
    assert cli_main("run", str(flow_file()), "--out", str(tmp_path / "r")) == 1
    printed = capsys.readouterr().out
    assert "conservation ledger: balanced" in printed  # the cells are fine
    assert "byte ledger: UNBALANCED (sent " in printed


def test_flow_probes_alone_write_the_series(fake, flow_file, tmp_path: Path) -> None:
    path = flow_file(probes='[probes]\nperiod = "10 ms"\nflows = ["tcp"]\n')
    result = atmsim.run(path, out=tmp_path / "r", progress=False)
    assert (tmp_path / "r" / "series.parquet").is_file()
    assert set(result.series["metric"]) == {"cwnd_bytes", "window_bytes", "seq_bytes", "srtt_s"}
    assert set(result.series["entity"]) == {"tcp"}


@pytest.mark.parametrize("ip", [False, True])
def test_plot_tcp_figures(fake, flow_file, tmp_path: Path, ip: bool, capsys) -> None:
    out = tmp_path / "run"
    assert cli_main("run", str(flow_file(ip=ip)), "--out", str(out)) == 0
    assert cli_main("plot", str(out)) == 0
    queue = "ip_queue.png" if ip else "queue.png"
    for name in ("window.png", "sequence.png", "srtt.png", queue):
        assert (out / name).stat().st_size > 1000, name
    other = "queue.png" if ip else "ip_queue.png"
    assert not (out / other).exists()
