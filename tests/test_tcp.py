"""TCP flows over ATM and IP, run by the real core: physical facts checked by hand.

Skipped (with the reason) only while the built core rejects the ``flows`` key
of docs/core-interface.md (an older core); a core that accepts
flows runs them all.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import atmsim
from atmsim.scenario import tomllib

from conftest import SCENARIOS, balanced, needs_core, run_cli

pytestmark = needs_core

CELL_TIME_S = 424 / 155.52e6
"""One cell at 155.52 Mbps."""

TWO_HOPS = """
[run]
duration = "5 s"
[nodes]
a = { kind = "host" }
sw = {}
b = { kind = "host" }
[links.a-sw]
from = "a"
to = "sw"
rate = "155.52 Mbps"
length = "1000 km"
duplex = true
[links.sw-b]
from = "sw"
to = "b"
rate = "155.52 Mbps"
length = "1000 km"
duplex = true
[flows.tcp]
path = ["a", "sw", "b"]
[probes]
period = "10 ms"
flows = "all"
"""
"""One TCP flow (the defaults: Tahoe without FR, MSS 512, 64 KB window) over an
idle ATM path a -> sw -> b, 2 x 1000 km each way."""

IP_PATH = """
[run]
duration = "20 s"
[nodes]
a = { kind = "host" }
r = {}
b = { kind = "host" }
[links.a-r]
from = "a"
to = "r"
layer = "ip"
rate = "1 Gbps"
delay = "1 ms"
duplex = true
[links.r-b]
from = "r"
to = "b"
layer = "ip"
rate = "10 Mbps"
delay = "10 ms"
duplex = true
[flows.tcp]
path = ["a", "r", "b"]
variant = "reno"
mss = 1000
window = "256 KB"
timer = "fine"
"""
"""One Reno flow through a 10 Mbps router bottleneck (unlimited buffer unless set)."""


def run_text(text: str, *overrides: str) -> atmsim.Result:
    return atmsim.run(tomllib.loads(text), overrides=list(overrides), progress=False)


def port(result: atmsim.Result, name: str) -> dict:
    return next(p for p in result.summary["ports"] if p["name"] == name)


def test_window_limited_flow_sends_one_window_per_round_trip() -> None:
    """Without loss, a flow whose 64 KB window is far below the path's
    bandwidth-delay product sends exactly one window per round trip:
    RTT = 4 x 5 ms of propagation + 12 cells of a segment leaving the host +
    1 cell through the switch + 2 + 1 cells of the ACK = 20 ms + 16 cell times."""
    result = run_text(TWO_HOPS)
    (flow,) = result.summary["flows"]
    assert balanced(result.summary)
    assert (flow["timeouts"], flow["bytes_retransmitted"], flow["bytes_duplicate"]) == (0, 0, 0)
    assert flow["bytes_delivered"] % 512 == 0
    rtt_s = 0.020 + 16 * CELL_TIME_S
    window_rate = 65536 / rtt_s  # bytes/s
    seq = result.series[result.series["metric"] == "seq_bytes"].set_index("time_s")["value"]
    slope = (seq.loc[5.0] - seq.loc[1.0]) / 4.0  # after slow start (7 round trips)
    assert slope == pytest.approx(window_rate, rel=0.01)
    # Goodput: never above a window per (propagation) round trip, and slow
    # start costs less than 0.3 s of it.
    assert flow["goodput_mbps"] <= 65536 * 8 / 0.020 / 1e6
    assert flow["goodput_mbps"] >= window_rate * 8 / 1e6 * (5.0 - 0.3) / 5.0
    window = result.series[result.series["metric"] == "window_bytes"]["value"]
    assert window.max() == 65536  # the advertised window (scale 1: 32768 << 1)


def test_ip_flow_fills_the_bottleneck_and_queues_the_rest_of_its_window() -> None:
    """An unlimited router buffer: no loss, the 10 Mbps link stays busy, and the
    packets of the window that do not fit in the pipe wait at the router."""
    result = run_text(IP_PATH)
    (flow,) = result.summary["flows"]
    assert balanced(result.summary)
    assert flow["timeouts"] == flow["fast_retransmits"] == flow["bytes_retransmitted"] == 0
    payload_mbps = 10 * 1000 / 1040  # 40 bytes of TCP/IP headers per 1000-byte segment
    assert flow["goodput_mbps"] <= payload_mbps
    assert flow["goodput_mbps"] >= 0.98 * payload_mbps
    bottleneck = port(result, "r-b")
    assert bottleneck["packets_dropped"] == 0
    assert bottleneck["utilization"] > 0.98
    # Window: 262 segments (256 KB / 1000 B). Pipe: RTT 22 ms + 0.832 ms of
    # transmission at 10 Mbps = 22.8 ms x 10 Mbps / 8320 bits = 27.4 packets.
    pipe_packets = 0.0228 * 10e6 / (1040 * 8)
    assert bottleneck["max_queue_packets"] == pytest.approx(262 - pipe_packets, abs=3)


def test_ip_buffer_in_bytes_bounds_the_queue() -> None:
    result = run_text(IP_PATH, "links.r-b.buffer=20 KB")
    bottleneck = port(result, "r-b")
    assert bottleneck["packets_dropped"] > 0
    assert bottleneck["max_queue_packets"] * 1040 <= 20 * 1024  # 19 packets of 1040 bytes
    (flow,) = result.summary["flows"]
    assert flow["fast_retransmits"] > 0  # Reno recovers most losses without a timeout
    assert balanced(result.summary)


def test_finite_transfer_completes() -> None:
    result = run_text(IP_PATH, "flows.tcp.transfer=1 MB")
    (flow,) = result.summary["flows"]
    assert flow["bytes_delivered"] == 1_048_576
    # Not faster than the bottleneck can carry it (1040 bytes per 1000 of payload).
    assert 1_048_576 * 8 * 1.04 / 10e6 < flow["completed_at_s"] < 20
    assert balanced(result.summary)


def test_red_keeps_the_queue_shorter_than_tail_drop() -> None:
    path = SCENARIOS / "ip_dumbbell.toml"
    tail = port(atmsim.run(path, progress=False), "r1-r2")
    red = port(
        atmsim.run(path, overrides=['links.r1-r2.policy={kind="red", min_th=20}'], progress=False),
        "r1-r2",
    )
    assert red["packets_dropped"] > 0
    assert red["mean_queue_packets"] < tail["mean_queue_packets"]


def test_ubr_tcp_buffer_holds_the_windows() -> None:
    """The sw1 -> sw2 buffer is the sum of the 5 windows in cells: no loss at all;
    with a buffer well below the slow-start peak, losses, retransmissions and
    timeouts (Tahoe without fast retransmit has no other way to recover)."""
    result = atmsim.run(SCENARIOS / "ubr_tcp.toml", progress=False)
    assert balanced(result.summary)
    assert port(result, "sw1-sw2")["cells_dropped"] == 0
    flows = result.flows
    assert len(flows) == 5 and (flows["bytes_retransmitted"] == 0).all()
    # Each flow is window-limited: 64 KB per round trip of 30 ms (and a bit).
    assert (flows["goodput_mbps"] < 65536 * 8 / 0.030 / 1e6).all()
    small = atmsim.run(
        SCENARIOS / "ubr_tcp.toml", overrides=["links.sw1-sw2.buffer=2000"], progress=False
    )
    assert balanced(small.summary)
    assert port(small, "sw1-sw2")["cells_dropped"] > 0
    assert small.flows["timeouts"].sum() > 0
    assert small.flows["goodput_mbps"].sum() < flows["goodput_mbps"].sum()


def test_same_seed_same_tcp_results() -> None:
    """Receiver processing with jitter draws random numbers: the run seed fixes them."""
    jitter = (
        "run.duration=1 s",
        "flows.tcp.processing=200 us",
        "flows.tcp.processing_jitter=50 us",
    )
    first = run_text(TWO_HOPS, *jitter).summary
    again = run_text(TWO_HOPS, *jitter).summary
    other = run_text(TWO_HOPS, *jitter, "run.seed=2").summary
    for summary in (first, again, other):
        summary.pop("wall_s")
    assert first == again
    assert other["flows"] != first["flows"]


def test_cli_run_and_plot_tcp(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = run_cli(
        "run", str(SCENARIOS / "ip_dumbbell.toml"), "--out", str(out), "--set", "run.duration=2 s"
    )
    assert result.returncode == 0, result.stderr
    for line in ("packet ledger: balanced", "byte ledger: balanced"):
        assert line in result.stdout
    assert "conservation ledger" not in result.stdout  # no cells: not printed
    assert "Flows" in result.stdout and "IP ports" in result.stdout
    assert json.loads((out / "summary.json").read_text())["flows"][0]["name"] == "tcp1"
    result = run_cli("plot", str(out))
    assert result.returncode == 0, result.stderr
    for name in ("window.png", "sequence.png", "srtt.png", "ip_queue.png"):
        assert (out / name).stat().st_size > 1000, name


def test_ubr_needs_the_sum_of_the_windows_when_they_exceed_the_pipe() -> None:
    """ABR and UBR buffering (Kalyanaraman et al., 1998): TCP over UBR needs buffers equal to the
    sum of the receiver windows for zero loss. With 256 KB windows the five windows (5 x 512
    segments x 12 cells = 30720 cells) exceed the 30 ms pipe (11,004 cells),
    so the queue settles at their difference, 19,716 cells: a buffer of the
    sum loses nothing; half of it loses cells and goodput."""
    wide = ("flows.tcp{i}.window=256 KB",)
    full = atmsim.run(
        SCENARIOS / "ubr_tcp.toml",
        overrides=[*wide, "links.sw1-sw2.buffer=30720"],
        progress=False,
    )
    assert balanced(full.summary)
    bottleneck = port(full, "sw1-sw2")
    assert bottleneck["cells_dropped"] == 0
    pipe = 155.52e6 / 424 * 0.030
    assert bottleneck["max_queue_cells"] == pytest.approx(30720 - pipe, abs=60)
    half = atmsim.run(
        SCENARIOS / "ubr_tcp.toml",
        overrides=[*wide, "links.sw1-sw2.buffer=15360"],
        progress=False,
    )
    assert balanced(half.summary)
    assert port(half, "sw1-sw2")["cells_dropped"] > 0
    assert half.flows["bytes_retransmitted"].sum() > 0
    assert half.flows["goodput_mbps"].sum() < full.flows["goodput_mbps"].sum()


def test_single_flow_on_an_idle_atm_path_reaches_the_aal5_limit() -> None:
    """MSS 512 rides in 12 cells: goodput = 155.52 Mbps x 512 / (12 x 53) =
    125.2 Mbps once the window (1 MB) covers the pipe. Short (1 km) links make
    slow start negligible against 3 s."""
    result = run_text(
        TWO_HOPS,
        "links.a-sw.length=1 km",
        "links.sw-b.length=1 km",
        "flows.tcp.window=1 MB",
        "run.duration=3 s",
    )
    assert balanced(result.summary)
    limit = 155.52 * 512 / (12 * 53)
    (goodput,) = result.flows["goodput_mbps"]
    assert goodput == pytest.approx(limit, rel=0.02)
