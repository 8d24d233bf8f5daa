"""The committed example scenarios, run for real: physical facts, not snapshots."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("atmsim._core")

import atmsim  # noqa: E402

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
EXAMPLES = sorted(p.name for p in SCENARIOS.glob("*.toml"))
OC3_CPS = 155.52e6 / 424


def run(name: str, *overrides: str) -> atmsim.Result:
    return atmsim.run(SCENARIOS / name, overrides=list(overrides), progress=False)


def port(summary: dict, name: str) -> dict:
    return next(p for p in summary["ports"] if p["name"] == name)


def test_all_required_examples_exist():
    for name in (
        "mux_onoff.toml",
        "ubr_epd.toml",
        "ubr_taildrop.toml",
        "md1.toml",
        "ubr_tcp.toml",
        "ip_dumbbell.toml",
        "abr_2src_vbr.toml",
        "abr_gfc2.toml",
        "ubr_plus.toml",
    ):
        assert name in EXAMPLES


def test_cbr_on_an_idle_path_delivers_rate_times_duration(tmp_path):
    # A CBR source at r on an idle two-hop path delivers r x T cells, less
    # the cells still in the pipe at the end (2 x 5 ms of propagation).
    scenario = tmp_path / "cbr.toml"
    scenario.write_text(
        """
[run]
duration = "3 s"
[nodes]
a = { kind = "host" }
sw = {}
b = { kind = "host" }
[links.a-sw]
from = "a"
to = "sw"
rate = "155.52 Mbps"
length = "1000 km"
[links.sw-b]
from = "sw"
to = "b"
rate = "155.52 Mbps"
length = "1000 km"
buffer = 10
[sources.c]
path = ["a", "sw", "b"]
class = "cbr"
kind = "cbr"
rate = "10 Mbps"
"""
    )
    result = atmsim.run(scenario, progress=False)
    r = 10e6 / 424
    in_pipe = r * 0.010
    delivered = result.summary["vcs"][0]["cells_delivered"]
    assert abs(delivered - (r * 3.0 - in_pipe)) <= 1.0
    assert result.summary["ports"][1]["cells_dropped"] == 0


def test_epd_beats_tail_drop_on_frame_goodput():
    epd = run("ubr_epd.toml").summary
    tail = run("ubr_taildrop.toml").summary
    goodput = {
        name: sum(v["frame_goodput_cps"] for v in s["vcs"])
        for name, s in (("epd", epd), ("tail", tail))
    }
    # Both push the bottleneck to full utilization ...
    assert port(epd, "sw1-sw2")["utilization"] > 0.99
    assert port(tail, "sw1-sw2")["utilization"] > 0.99
    # ... but tail drop wastes much of it on frames that fail reassembly,
    # while EPD delivers nearly the whole link in intact frames.
    assert goodput["epd"] > 0.95 * OC3_CPS
    assert goodput["epd"] > 1.1 * goodput["tail"]
    assert sum(v["frames_corrupted"] for v in tail["vcs"]) > 0
    assert port(epd, "sw1-sw2")["drops"]["epd"] > 0


def test_mux_onoff_is_a_loaded_multiplexer():
    result = run("mux_onoff.toml", "run.duration=3 s")
    port = result.summary["ports"][0]
    assert port["utilization"] == pytest.approx(0.9, abs=0.03)
    assert 0 < port["max_queue_cells"] <= 1000
    assert set(result.series["metric"]) == {"queue_cells", "utilization"}


def test_ubr_plus_selective_drop_refuses_frames_before_the_buffer_fills():
    # Selective Drop refuses whole frames of the VCs above their share once 500 cells
    # wait: the 1000-cell buffer never fills, so nothing is cut by tail drop; tail drop
    # alone fills it and cuts frames.
    shares = run("ubr_plus.toml", "template.duration=2 s").summary
    tail = run("ubr_plus.toml", "template.duration=2 s", "template.policy=tail").summary
    for summary in (shares, tail):
        assert summary["conservation"]["ok"]
    sd, td = port(shares, "sw1-sw2"), port(tail, "sw1-sw2")
    assert {r for r, n in sd["drops"].items() if n} == {"selective_drop"}
    assert sd["max_queue_cells"] < 1000 and td["max_queue_cells"] == 1000
    assert sd["mean_queue_cells"] < td["mean_queue_cells"]
