"""The ns-2 validation harness, without ns-2: output parser, parameter mapping, exit codes.

The parser is checked on real ns-2.35 output captured in tests/data/
(the command line is the first line of each file).
"""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from atmsim.validation import bench, ns2
from atmsim.validation.ns2 import Dumbbell
from devtools import ns2_compare

DATA = Path(__file__).resolve().parent / "data"
RENO = DATA / "ns2_dumbbell_reno.txt"
TAHOE_NOFR = DATA / "ns2_dumbbell_tahoe_nofr.txt"


def captured_args(path: Path) -> dict[str, str]:
    """The key=value arguments written in the first (comment) line of a capture."""
    first = path.read_text().splitlines()[0]
    words = first.split("dumbbell.tcl", 1)[1].split()
    return dict(word.split("=", 1) for word in words)


# --------------------------------------------------------------------------- parser


@pytest.mark.parametrize("path", [RENO, TAHOE_NOFR])
def test_parser_reads_captured_output(path: Path) -> None:
    result = ns2.parse_ns2_output(path.read_text())
    header, flows, total = result["header"], result["flows"], result["total"]
    assert header["version"] == 2.35 and header["n"] == 5 and header["mss"] == 960
    assert [f["id"] for f in flows] == [1, 2, 3, 4, 5]
    assert result["run_s"] > 0
    for flow in flows:
        assert flow["goodput_bytes"] == flow["delivered_packets"] * 960
        # every data packet sent reaches the bottleneck or is still on the access link
        assert 0 <= flow["data_packets_sent"] - flow["bottleneck_arrivals"] <= 2
        assert flow["bottleneck_drops"] <= flow["retransmitted_packets"] + 200
    for key in ("goodput_bytes", "timeouts", "fast_retransmits", "bottleneck_drops"):
        assert total[key] == sum(f[key] for f in flows), key
    hops = 3 * total["data_packets_sent"] - 2 * total["bottleneck_drops"]
    assert total["link_transmissions"] == hops + 3 * total["acks_received"]


def test_captured_numbers() -> None:
    """Spot values from the Reno capture, so a parser change that shifts fields fails."""
    result = ns2.parse_ns2_output(RENO.read_text())
    assert result["header"]["variant"] == "reno"
    assert result["flows"][0]["delivered_packets"] == 25879
    assert result["flows"][4]["final_cwnd_packets"] == pytest.approx(13.9839)
    assert result["total"]["timeouts"] == 5
    assert result["total"]["fast_retransmits"] == 543
    assert result["total"]["bottleneck_drops"] == 649
    tahoe = ns2.parse_ns2_output(TAHOE_NOFR.read_text())
    assert tahoe["total"]["fast_retransmits"] == 0
    assert tahoe["total"]["timeouts"] == 408


def test_metrics_from_captured_output() -> None:
    params = Dumbbell(variant="reno")
    metrics = ns2.ns2_metrics(ns2.parse_ns2_output(RENO.read_text()), params)
    # 118,984,320 payload bytes in 100 s
    assert metrics["aggregate_goodput_mbps"] == pytest.approx(9.5187456)
    assert len(metrics["goodput_mbps"]) == 5
    assert 0.99 < metrics["jain_index"] <= 1
    assert metrics["bottleneck_drops"] == 649
    assert metrics["flow_drops"] == [195, 125, 112, 109, 108]


def test_parser_ignores_noise_and_rejects_broken_output() -> None:
    text = RENO.read_text()
    noisy = "warning: something from ns-2\n\n" + text
    assert ns2.parse_ns2_output(noisy)["total"]["timeouts"] == 5
    without_total = "\n".join(line for line in text.splitlines() if not line.startswith("total"))
    with pytest.raises(ValueError, match="missing"):
        ns2.parse_ns2_output(without_total)
    one_flow_lost = "\n".join(
        line for line in text.splitlines() if not line.startswith("flow id=3 ")
    )
    with pytest.raises(ValueError, match="flows 1..5"):
        ns2.parse_ns2_output(one_flow_lost)
    with pytest.raises(ValueError, match="not key=value"):
        ns2.parse_ns2_output(text.replace("timeouts=1 ", "timeouts ", 1))


# --------------------------------------------------------------------------- parameters


def test_ns2_args_match_the_captured_run() -> None:
    """The default dumbbell is exactly what produced the captured output."""
    args = dict(a.split("=", 1) for a in ns2.ns2_args(Dumbbell(variant="reno")))
    assert args == captured_args(RENO)


def test_same_dumbbell_in_both_simulators() -> None:
    p = Dumbbell(
        n=3,
        variant="newreno",
        access_delays_s=(0.001, 0.002, 0.005),
        starts_s=(0.0, 0.25, 0.5),
        buffer_packets=40,
        bottleneck_rate_bps=45e6,
        bottleneck_delay_s=0.0125,
        window_segments=100,
        duration_s=7.5,
    )
    args = dict(a.split("=", 1) for a in ns2.ns2_args(p))
    scenario = ns2.atmsim_dumbbell_scenario(p)

    assert args["n"] == "3" and len(scenario["flows"]) == 3
    assert args["variant"] == "newreno"
    assert {f["variant"] for f in scenario["flows"].values()} == {"newreno"}
    # bottleneck: rate, delay, buffer (ns-2 adds the packet in transmission itself)
    bottleneck = scenario["links"]["r1-r2"]
    assert (args["bottleneck_rate"], bottleneck["rate"]) == ("45000000", "45 Mbps")
    assert (args["bottleneck_delay"], bottleneck["delay"]) == ("0.0125", "12.5 ms")
    assert (args["buffer"], bottleneck["buffer"]) == ("40", 40)
    # access links: one pair per flow, same delay on both sides
    assert args["access_delays"] == "0.001,0.002,0.005"
    for i, delay in zip((1, 2, 3), ("1 ms", "2 ms", "5 ms")):
        for name in (f"s{i}-r1", f"r2-d{i}"):
            link = scenario["links"][name]
            assert (link["rate"], link["delay"], link["layer"]) == ("100 Mbps", delay, "ip")
            assert link["duplex"] is True
    assert len(scenario["links"]) == 2 * 3 + 1
    # TCP: MSS, window (segments in ns-2, bytes in atmsim), timers, starts
    flow = scenario["flows"]["tcp2"]
    assert flow["path"] == ["s2", "r1", "r2", "d2"]
    assert (args["mss"], flow["mss"]) == ("960", 960)
    assert (args["window"], flow["window"]) == ("100", "96000 B")
    assert (args["min_rto"], flow["min_rto"]) == ("0.2", "200 ms")
    assert (args["max_rto"], flow["max_rto"]) == ("64", "64 s")
    assert (args["initial_rto"], flow["initial_rto"]) == ("3", "3 s")
    assert (args["window_init"], flow["initial_cwnd"]) == ("1", 1)
    assert flow["timer"] == "fine" and flow["delayed_ack"] == "0 s"
    assert args["starts"] == "0,0.25,0.5"
    assert [f["start"] for f in scenario["flows"].values()] == ["0 s", "250 ms", "500 ms"]
    assert scenario["run"]["duration"] == "7500 ms"


def test_staggered_starts_and_checks() -> None:
    p = Dumbbell(n=4, starts_s=(1.0,), start_step_s=0.5)
    assert p.per_flow("starts_s") == [1.0, 1.5, 2.0, 2.5]
    assert p.per_flow("access_delays_s") == [0.001] * 4
    assert p.packet_bytes == 1000 and p.window_bytes == 256 * 960
    with pytest.raises(ValueError, match="variant"):
        Dumbbell(variant="vegas")
    with pytest.raises(ValueError, match="expected 1 or n"):
        Dumbbell(n=3, starts_s=(0.0, 1.0))
    assert ns2.atmsim_dumbbell_scenario(Dumbbell(variant="tahoe_nofr"))["flows"]["tcp1"][
        "variant"
    ] == ("tahoe-nofr")


def fake_summary(params: Dumbbell) -> dict:
    """An atmsim summary shaped like docs/core-interface.md for the dumbbell."""
    flows = [
        {
            "name": f"tcp{i}",
            "bytes_delivered": 960 * 1000 * i,
            "timeouts": i,
            "fast_retransmits": 10,
            "bytes_retransmitted": 960 * 12,
            "segments_sent": 1000 * i + 12,
        }
        for i in range(1, params.n + 1)
    ]
    names = ["r1-r2", "r2-r1"] + [f"s{i}-r1" for i in range(1, params.n + 1)]
    ports = [
        {"name": name, "packets_out": 100, "packets_dropped": 7 if name == "r1-r2" else 0}
        for name in names
    ]
    ports.append({"name": "an-atm-port", "cells_out": 5})
    return {"flows": flows, "ports": ports}


def test_atmsim_metrics_and_comparison(tmp_path: Path) -> None:
    params = Dumbbell(n=2, duration_s=10.0)
    atm = ns2.atmsim_metrics(fake_summary(params), params)
    assert atm["goodput_mbps"] == pytest.approx([0.768, 1.536])
    assert atm["total_timeouts"] == 3 and atm["total_retransmitted_packets"] == 24
    assert atm["bottleneck_drops"] == 7 and atm["link_transmissions"] == 400
    assert atm["flow_drops"] is None

    rows = ns2_compare.compare(params, atm, atm)
    assert all(r["ok"] for r in rows)
    assert {r["metric"] for r in rows} >= {"goodput_mbps", "aggregate_goodput_mbps"}
    off = dict(atm, aggregate_goodput_mbps=atm["aggregate_goodput_mbps"] * 1.1)
    verdicts = {r["metric"]: r["ok"] for r in ns2_compare.compare(params, atm, off)}
    assert verdicts["aggregate_goodput_mbps"] is False
    path = ns2_compare.write_csv(rows, tmp_path / "out" / "cmp.csv")
    assert path.read_text().splitlines()[0] == ",".join(ns2_compare.CSV_COLUMNS)
    assert "aggregate_goodput_mbps" in ns2_compare.format_table(rows)


# --------------------------------------------------------------------------- without ns-2


def test_validate_exits_2_with_one_line_without_ns(monkeypatch, capsys) -> None:
    monkeypatch.setattr(ns2_compare, "find_ns", lambda: None)
    assert ns2_compare.main([]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and "ns-2 is not installed" in lines[0]


def test_validate_rejects_unknown_variant(monkeypatch, capsys) -> None:
    monkeypatch.setattr(ns2_compare, "find_ns", lambda: "/usr/bin/ns")
    assert ns2_compare.main(["--variants", "reno,vegas"]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1


def test_find_ns_honours_environment(monkeypatch, tmp_path: Path) -> None:
    fake = tmp_path / "ns"
    fake.write_text("#!/bin/sh\n")
    monkeypatch.setenv("ATMSIM_NS", str(fake))
    assert ns2.find_ns() == str(fake)
    monkeypatch.setenv("ATMSIM_NS", str(tmp_path / "missing"))
    assert ns2.find_ns() is None


def test_run_ns2_without_ns_raises(monkeypatch) -> None:
    monkeypatch.setattr(ns2, "find_ns", lambda: None)
    with pytest.raises(FileNotFoundError, match="apt-get install ns2"):
        ns2.run_ns2_dumbbell(Dumbbell())


def test_ns2_script_is_in_the_repository() -> None:
    text = ns2.NS2_SCRIPT.read_text()
    for name in ("Agent/TCP/Reno", "Agent/TCP/Newreno", "Agent/TCP/Sack1", "TCPSink/Sack1"):
        assert name in text
    for key in captured_args(RENO):
        assert f"    {key} " in text, key  # every argument has a default in the script


def _fake_result(params: Dumbbell, loop_s: float) -> types.SimpleNamespace:
    return types.SimpleNamespace(summary=fake_summary(params), loop_wall_s=loop_s)


def test_bench_without_ns(monkeypatch) -> None:
    params = Dumbbell(n=2, duration_s=1.0)
    walls = iter([0.5, 0.25, 0.2])
    monkeypatch.setattr(bench, "run_atmsim_dumbbell", lambda p: _fake_result(p, next(walls)))
    monkeypatch.setattr(bench, "find_ns", lambda: None)
    out = bench.bench_dumbbell(runs=3, params=params, process=False)
    assert out["atmsim_packets"] == 400
    assert out["atmsim_loop_s"]["median"] == 0.25
    assert out["atmsim_packets_per_s"]["median"] == 1600
    assert out["atmsim_packets_per_s"]["min"] == 800 and out["atmsim_packets_per_s"]["max"] == 2000
    assert out["loop_ratio"] is None and "not installed" in out["note"]
    assert "not installed" in bench.format_bench(out)


def test_bench_pairs_the_runs_with_a_stand_in_ns(monkeypatch) -> None:
    """The runs alternate atmsim, ns-2, atmsim, ns-2, and the ratio is the median of each
    pair's ratio, not the ratio of the medians."""
    params = Dumbbell(n=2, duration_s=1.0)
    parsed = ns2.parse_ns2_output(RENO.read_text())
    order = []
    atm_walls = iter([0.001, 0.004, 0.002])
    ns_walls = iter([1.0, 1.0, 3.0])

    def atm(p):
        order.append("atmsim")
        return _fake_result(p, next(atm_walls))

    def ns(p, ns, monitor):
        order.append("ns-2")
        assert monitor is False
        return {**parsed, "run_s": next(ns_walls)}

    monkeypatch.setattr(bench, "run_atmsim_dumbbell", atm)
    monkeypatch.setattr(bench, "find_ns", lambda: "/usr/bin/ns")
    monkeypatch.setattr(bench, "run_ns2_dumbbell", ns)
    out = bench.bench_dumbbell(runs=3, params=params, process=False)
    assert order == ["atmsim", "ns-2"] * 3
    packets = parsed["total"]["link_transmissions"]
    ratios = [400 / atm / (packets / ns) for atm, ns in ((0.001, 1.0), (0.004, 1.0), (0.002, 3.0))]
    assert out["loop_ratio"]["median"] == pytest.approx(sorted(ratios)[1])
    assert out["loop_ratio"]["values"] == pytest.approx(ratios)
    assert out["ns2_packets_per_s"]["median"] == pytest.approx(packets / 1.0)
    assert out["process_ratio"] is None
    text = bench.format_bench(out)
    assert "ratio atmsim / ns-2, loop (median of pairs)" in text and "alternating" in text


def test_spread_and_its_format() -> None:
    s = bench.spread([3.0, 1.0, 2.0, 10.0])
    assert (s["median"], s["min"], s["max"], s["n"]) == (2.5, 1.0, 10.0, 4)
    assert bench.format_spread(bench.spread([3.2e7, 3.0e7, 3.1e7])) == (
        "3.10 x 10^7 (min 3.00 x 10^7, max 3.20 x 10^7, 3 runs)"
    )
    assert bench.format_spread(bench.spread([0.25]), "s") == "0.25 s (1 run)"
    with pytest.raises(ValueError):
        bench.spread([])


def test_measure_process_reports_the_childs_own_peak(tmp_path) -> None:
    """A child that holds 200 MiB peaks at 200 MiB or more; a small one far below the
    memory of this test process (ru_maxrss would report this process's)."""
    import sys

    big = bench.measure_process(
        [sys.executable, "-c", "b = bytearray(200 * 2**20); import time; time.sleep(0.05)"]
    )
    assert big["returncode"] == 0 and big["peak_mib"] >= 200
    small = bench.measure_process([sys.executable, "-S", "-c", "pass"])
    assert small["peak_mib"] < 50 and small["cpu_s"] >= 0 and small["wall_s"] > 0
    failed = bench.measure_process([sys.executable, "-c", "import sys; sys.exit('nope')"])
    assert failed["returncode"] == 1 and failed["error"] == "nope"


def test_scale_scenario_has_the_shape_of_mux_onoff_at_ten() -> None:
    from atmsim.api import prepare

    sc = bench.scale_scenario(10)
    assert sc["sources"]["s"]["count"] == 10
    assert sc["sources"]["s"]["peak"] == f"{2488.32 * 0.2!r} Mbps"
    prepare(bench.scale_scenario(1000))  # valid at 1000 VCs
    with pytest.raises(ValueError):
        bench.scale_scenario(0)


# --------------------------------------------------------------------------- scenario files


def test_mapping_round_trips_through_the_scenario_format() -> None:
    """The atmsim scenario built from a Dumbbell validates and reads back as the same Dumbbell."""
    p = Dumbbell(
        n=3,
        variant="sack",
        access_delays_s=(0.001, 0.002, 0.005),
        buffer_packets=40,
        window_segments=100,
        duration_s=7.5,
    )
    back = ns2.params_from_scenario(ns2.atmsim_dumbbell_scenario(p))
    assert back.with_(flow_names=(), starts_s=p.starts_s) == p
    assert back.per_flow("starts_s") == p.per_flow("starts_s")
    assert back.flow_names == ("tcp1", "tcp2", "tcp3")


IP_DUMBBELL_LIKE = """\
[run]
duration = "20 s"

[nodes]
"s{i}" = { kind = "host", count = 4 }
r1 = { kind = "switch" }
r2 = { kind = "switch" }
"d{i}" = { kind = "host", count = 4 }

[links."s{i}-r1"]
count = 4
from = "s{i}"
to = "r1"
layer = "ip"
rate = "1 Gbps"
delay = "2 ms"
duplex = true

[links.bn]
from = "r1"
to = "r2"
layer = "ip"
rate = "155.52 Mbps"
delay = "20 ms"
buffer = 100
duplex = true

[links."r2-d{i}"]
count = 4
from = "r2"
to = "d{i}"
layer = "ip"
rate = "1 Gbps"
delay = "2 ms"
duplex = true

[flows."f{i}"]
count = 4
path = ["s{i}", "r1", "r2", "d{i}"]
variant = "newreno"
mss = 1000
window = "256 KB"
timer = "fine"
"""


def test_params_from_a_template_scenario(tmp_path: Path) -> None:
    path = tmp_path / "dumbbell.toml"
    path.write_text(IP_DUMBBELL_LIKE)
    p = ns2.params_from_scenario(path)
    assert (p.n, p.variant, p.duration_s) == (4, "newreno", 20.0)
    assert (p.bottleneck_rate_bps, p.bottleneck_delay_s, p.buffer_packets) == (155.52e6, 0.02, 100)
    assert (p.access_rate_bps, p.access_delays_s) == (1e9, (0.002,))
    assert p.access_buffer_packets == 100_000  # "inf" access buffers
    assert (p.mss_bytes, p.window_segments) == (1000, 262)  # 262144 bytes: 262 whole segments
    assert (p.min_rto_s, p.max_rto_s, p.initial_rto_s) == (0.2, 64.0, 3.0)
    assert p.per_flow("starts_s") == [0.0] * 4
    assert p.flow_names == ("f1", "f2", "f3", "f4") and p.bottleneck_name == "bn"
    assert p.scenario == str(path)
    sack = ns2.params_from_scenario(path, variant="sack")
    assert ns2.atmsim_overrides(sack) == ["run.duration=20 s", "flows.f{i}.variant=sack"]


def test_params_from_scenario_rejects_other_shapes(tmp_path: Path) -> None:
    path = tmp_path / "coarse.toml"
    path.write_text(IP_DUMBBELL_LIKE.replace('timer = "fine"', 'timer = "100 ms"'))
    with pytest.raises(ValueError, match="global-tick"):
        ns2.params_from_scenario(path)
    path.write_text(IP_DUMBBELL_LIKE.replace('delay = "2 ms"\nduplex', 'delay = "3 ms"\nduplex', 1))
    with pytest.raises(ValueError, match="different delays"):
        ns2.params_from_scenario(path)


def test_scale_scenario_splits_its_vcs_into_tables_of_at_most_max_count(monkeypatch) -> None:
    """A table's count stops at 100,000; 1,000,000 VCs take ten alike tables."""
    from atmsim.api import prepare
    from atmsim.scenario.network import Network

    counts = {name: t["count"] for name, t in bench.scale_scenario(1_000_000)["sources"].items()}
    assert counts == dict.fromkeys(["s", *(f"s{c}" for c in "bcdefghij")], 100_000)
    monkeypatch.setattr(bench, "MAX_COUNT", 4)
    sc = bench.scale_scenario(10)
    assert {name: t["count"] for name, t in sc["sources"].items()} == {"s": 4, "sb": 4, "sc": 2}
    names = [vc.name for vc in Network(prepare(sc)).vcs]
    assert names == ["s1", "s2", "s3", "s4", "sb1", "sb2", "sb3", "sb4", "sc1", "sc2"]
    with pytest.raises(ValueError, match="at most 1000000 VCs"):
        bench.scale_scenario(1_000_001)
