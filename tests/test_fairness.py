"""Fairness against theory: max-min fair rates computed from the topology, checked on
configurations whose fair rates are known by hand (GFC-2, a parking lot, two GFR VCs,
a window-limited TCP flow), and the atmsim fairness command."""

from __future__ import annotations

import json

import pytest

import atmsim
from atmsim.fairness import fairness
from atmsim.scenario import load_scenario, to_core
from atmsim.scenario.templates import GFC2_MAX_MIN_MBPS

from conftest import SCENARIOS, cli_main, needs_core, write

PARKING_LOT = """\
[run]
duration = "50 ms"

[nodes]
a = {}
b = {}
c = {}
d = {}
"h{i}" = { kind = "host", count = 4 }
"k{i}" = { kind = "host", count = 4 }

[links.a-b]
from = "a"
to = "b"
rate = "100 Mbps"
[links.b-c]
from = "b"
to = "c"
rate = "60 Mbps"
[links.c-d]
from = "c"
to = "d"
rate = "100 Mbps"
[links.h1-a]
from = "h1"
to = "a"
rate = "155.52 Mbps"
[links.h2-a]
from = "h2"
to = "a"
rate = "155.52 Mbps"
[links.h3-b]
from = "h3"
to = "b"
rate = "155.52 Mbps"
[links.h4-c]
from = "h4"
to = "c"
rate = "155.52 Mbps"
[links.d-k1]
from = "d"
to = "k1"
rate = "155.52 Mbps"
[links.b-k2]
from = "b"
to = "k2"
rate = "155.52 Mbps"
[links.c-k3]
from = "c"
to = "k3"
rate = "155.52 Mbps"
[links.d-k4]
from = "d"
to = "k4"
rate = "155.52 Mbps"

[sources.long]
kind = "greedy"
path = ["h1", "a", "b", "c", "d", "k1"]
[sources.x1]
kind = "greedy"
path = ["h2", "a", "b", "k2"]
[sources.x2]
kind = "greedy"
path = ["h3", "b", "c", "k3"]
[sources.x3]
kind = "greedy"
path = ["h4", "c", "d", "k4"]
"""
"""A parking lot: the long VC crosses a-b (100), b-c (60) and c-d (100 Mbps); one cross
VC on each. By hand: b-c splits 60 into 30 and 30; the long VC keeps 30 on the other
links, where the cross VCs get the 70 left."""

TWO_GFR = """\
[run]
duration = "20 ms"

[nodes]
a = {}
b = {}
"h{i}" = { kind = "host", count = 2 }
"k{i}" = { kind = "host", count = 2 }

[links.a-b]
from = "a"
to = "b"
rate = "100 Mbps"
[links."h{i}-a"]
count = 2
from = "h{i}"
to = "a"
rate = "155.52 Mbps"
[links."b-k{i}"]
count = 2
from = "b"
to = "k{i}"
rate = "155.52 Mbps"

[sources.g1]
kind = "greedy"
path = ["h1", "a", "b", "k1"]
class = "gfr"
gfr = { mcr = "10 Mbps" }
[sources.g2]
kind = "greedy"
path = ["h2", "a", "b", "k2"]
class = "gfr"
gfr = { mcr = "30 Mbps" }
"""


def fair_rates(tmp_path, text: str, **kwargs) -> dict:
    core = to_core(load_scenario(write(tmp_path, text)))
    report = fairness(core, {"sim_time_s": core["duration_ps"] / 1e12}, **kwargs)
    return {row["name"]: row for row in report["entities"]}


def test_gfc2_max_min_rates_are_the_hand_computed_ones():
    core = to_core(load_scenario(SCENARIOS / "abr_gfc2.toml"))
    report = fairness(core, {"sim_time_s": 1.0})
    rows = report["entities"]
    assert len(rows) == 22
    for row in rows:
        assert row["fair_mbps"] == pytest.approx(GFC2_MAX_MIN_MBPS[row["name"][0]]), row
        assert row["service"] == "abr" and row["measured"] == "cells"
    bottlenecks = {row["name"][0]: row["bottleneck"] for row in rows}
    assert bottlenecks["h"] == "sw4-sw5" and bottlenecks["b"] == "sw6-sw7"


def test_parking_lot(tmp_path):
    rows = fair_rates(tmp_path, PARKING_LOT)
    assert {name: round(row["fair_mbps"], 6) for name, row in rows.items()} == {
        "long": 30.0,
        "x1": 70.0,
        "x2": 30.0,
        "x3": 70.0,
    }
    assert rows["long"]["bottleneck"] == "b-c" and rows["x1"]["bottleneck"] == "a-b"


def test_gfr_shares_in_proportion_to_mcr_or_mcr_plus_equal_share(tmp_path):
    proportional = fair_rates(tmp_path, TWO_GFR)
    assert proportional["g1"]["fair_mbps"] == pytest.approx(25.0)
    assert proportional["g2"]["fair_mbps"] == pytest.approx(75.0)
    equal = fair_rates(tmp_path, TWO_GFR, gfr_rule="equal")
    assert equal["g1"]["fair_mbps"] == pytest.approx(40.0)
    assert equal["g2"]["fair_mbps"] == pytest.approx(60.0)


def test_a_cbr_background_leaves_its_rate_out_of_the_capacity(tmp_path):
    # 30 Mbps of CBR (priority) on b-c leaves 30 for the long VC and x2: 15 each
    text = PARKING_LOT + (
        '[sources.cbr]\nkind = "cbr"\nrate = "30 Mbps"\npath = ["h3", "b", "c", "k3"]\n'
        'class = "cbr"\n'
    )
    rows = fair_rates(tmp_path, text)
    assert "cbr" not in rows  # CBR is not in the allocation: it takes its rate first
    assert {name: round(row["fair_mbps"], 6) for name, row in rows.items()} == {
        "long": 15.0,
        "x1": 85.0,
        "x2": 15.0,
        "x3": 85.0,
    }


def test_a_window_limited_tcp_flow_is_fair_at_its_window_over_its_round_trip():
    core = to_core(load_scenario(SCENARIOS / "ubr_tcp.toml"))
    report = fairness(core, {"sim_time_s": 5.0})
    # 64 KB windows over a 30 ms round trip (plus one segment's and ACK's transmission
    # per hop): about 17.4 Mbps of goodput each, far below the link's fifth (about 25)
    for row in report["entities"]:
        assert row["fair_mbps"] == pytest.approx(65536 * 8 / 0.030 / 1e6, rel=0.01)
        assert row["bottleneck"] is None and row["measured"] == "goodput"


@needs_core
def test_run_and_fairness_commands(tmp_path, capsys):
    out = tmp_path / "run"
    assert cli_main("run", str(SCENARIOS / "ubr_tcp.toml"), "--out", str(out)) == 0
    printed = capsys.readouterr().out
    assert "Fairness: achieved against the max-min fair rate" in printed
    summary = json.loads((out / "summary.json").read_text())
    index = summary["fairness"]["jain_normalised"]
    assert 0.99 <= index <= 1.0  # five identical window-limited flows
    for row in summary["fairness"]["entities"]:
        assert 0.9 < row["normalised"] <= 1.0  # below the ideal by the slow start
    # the API's summary has the fairness too (what summary.json holds); the method
    # computes it again, with a GFR rule of one's choice
    result = atmsim.run(SCENARIOS / "ubr_tcp.toml", progress=False, overrides=["run.duration=1 s"])
    assert result.summary["fairness"] == result.fairness()
    assert len(result.fairness()["entities"]) == 5
    assert len(result.fairness("equal")["entities"]) == 5
    del summary["fairness"]
    (out / "summary.json").write_text(json.dumps(summary))
    assert cli_main("fairness", str(out)) == 0
    assert "Jain index of the normalised rates" in capsys.readouterr().out
    assert "fairness" in json.loads((out / "summary.json").read_text())
    assert cli_main("fairness", str(tmp_path / "nothing")) == 2
    assert capsys.readouterr().err.startswith("error: ")
    assert cli_main("fairness", str(out), "--gfr-rule", "best") == 2


@needs_core
def test_gfc2_run_reaches_its_fair_rates():
    result = atmsim.run(SCENARIOS / "abr_gfc2.toml", progress=False)
    report = result.fairness()
    # FMMRA allocates the max-min rates; the averages include the first round trips
    assert report["jain_normalised"] > 0.95


def test_many_entities_are_allocated_and_the_printed_table_is_cut() -> None:
    """Regression: the fuzzer's 100,000 Poisson sources on one port took minutes after
    the run, in an allocation quadratic in the number of VCs and in printing every row.
    Each round of the filling now costs the entities' path lengths, and the table shows
    the first rows as the run's other tables do."""
    from atmsim.fairness import Entity, allocate, fairness_table
    from atmsim.results import MAX_TABLE_ROWS

    n = 20_000
    found = [
        Entity(name=f"v{k}", kind="cells", service="ubr", links=[k % 2, 2], demand_bps=1e9)
        for k in range(n)
    ]
    found.append(Entity(name="small", kind="cells", service="ubr", links=[2], demand_bps=1.0))
    allocate(found, [1e6, 1e6, 3e6], ["a", "b", "shared"])
    assert found[-1].fair_bps == 1.0 and found[-1].bottleneck is None
    for k, e in enumerate(found[:-1]):  # half on each 1 Mbps link; the shared one has room
        assert e.fair_bps == pytest.approx(1e6 / (n / 2))
        assert e.bottleneck == "ab"[k % 2]
    rows = [
        {
            "name": e.name,
            "service": e.service,
            "measured": "cells",
            "fair_mbps": e.fair_bps / 1e6,
            "achieved_mbps": 0.0,
            "normalised": 0.0,
            "bottleneck": e.bottleneck,
        }
        for e in found
    ]
    table = fairness_table({"jain_normalised": 1.0, "rule": "max-min", "entities": rows})
    assert len(table.rows) == MAX_TABLE_ROWS
    assert f"{n + 1 - MAX_TABLE_ROWS} more rows in summary.json" in str(table.caption)
