"""Seed 004's configuration: the MCR sets against the seed's printed weights and Mbps,
the gfr-backbone template's expansion, and how the reproduction judges its tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from atmsim.reproduce import registry
from atmsim.reproduce.seed004 import (
    GFR_CAPACITY_CPS,
    MCR_50,
    MCR_85,
    TABLE6_CONFIG,
    _mbps,
    max_goodput_mbps,
)
from atmsim.scenario import to_core

from conftest import SCENARIOS, load_text


def test_the_gfr_capacity_is_the_sonet_payload():
    assert GFR_CAPACITY_CPS == pytest.approx(353_207.5, abs=1)


@pytest.mark.parametrize(
    "mcrs, weights",
    [
        (MCR_50, (0.034, 0.068, 0.102, 0.136, 0.170)),  # seed 004 section 5, Table 1
        (MCR_85, (0.057, 0.113, 0.17, 0.23, 0.28)),  # Table 2
    ],
)
def test_the_mcr_sets_give_the_seeds_weights(mcrs, weights):
    # W_i = MCR_i / GFR capacity, printed to 2 or 3 digits; the fifth MCR of the 50 %
    # set is 60 kcells/s (the text's "69" would give 0.195).
    for mcr, weight in zip(mcrs, weights):
        assert mcr / GFR_CAPACITY_CPS == pytest.approx(weight, abs=0.005)


def test_mcrs_in_the_seeds_mbps():
    # 12 kcells/s = 4.61 Mbps and 100 kcells/s = 38.40 Mbps: 384 bits a cell.
    assert _mbps(12000) == pytest.approx(4.61, abs=0.005)
    assert _mbps(100000) == pytest.approx(38.40, abs=0.005)
    assert sum(_mbps(m) for m in MCR_50) == pytest.approx(69.12, abs=0.01)
    assert sum(_mbps(m) for m in MCR_85) == pytest.approx(115.2, abs=0.01)


def test_the_most_goodput_the_capacity_carries():
    # MSS 1460: 1516 bytes with LLC/SNAP and the AAL5 trailer, 32 cells a segment.
    assert max_goodput_mbps(1460) == pytest.approx(353207.5 / 32 * 1460 * 8 / 1e6)
    assert max_goodput_mbps(1460) == pytest.approx(128.93, abs=0.01)


def test_the_template_builds_five_vcs_of_n_flows(tmp_path: Path):
    text = (SCENARIOS / "reproduce" / "seed004.toml").read_text()
    core = to_core(load_text(tmp_path, text, ("template.n=3",)))
    gfr = [vc for vc in core["vcs"] if "gfr" in vc]
    assert [vc["name"] for vc in gfr] == [f"vc{i}" for i in range(1, 6)]
    assert [vc["gfr"]["mcr_cps"] for vc in gfr] == [float(m) for m in MCR_50]
    assert all(not vc["gfr"]["tagging"] for vc in gfr)
    assert len(core["flows"]) == 15
    names = {i: vc["name"] for i, vc in enumerate(core["vcs"])}
    assert [names[f["data_vc"]] for f in core["flows"][:3]] == ["vc1"] * 3
    assert [names[f["ack_vc"]] for f in core["flows"][:3]] == ["vc1-ack"] * 3
    # Starts spread evenly over 10 ms within each VC.
    assert [f["start_ps"] for f in core["flows"][:3]] == [0, 3_333_333_333, 6_666_666_666]
    assert all(f["variant"] == "sack" and f["mss_bytes"] == 1460 for f in core["flows"])
    links = {link["name"]: link for link in core["links"]}
    assert links["bb1-bb2"]["cell_rate_cps"] == pytest.approx(GFR_CAPACITY_CPS)
    assert links["bb1-bb2"]["buffer_cells"] == 25000
    assert links["bb1-bb2"]["policy"] == {
        "kind": "dfba",
        "low": 12500,
        "high": 22500,
        "alpha": 0.5,
        "z": {"kind": "constant", "value": 1.0},
    }
    assert links["bb1-bb2"]["delay_ps"] == 5_000_000_000  # 1000 km
    assert links["edge1-bb1"]["delay_ps"] == 50_000_000  # 10 km


def test_tables_judge_throughputs_and_show_the_excess():
    table1 = registry()["seed004-table1"]
    judged = {q.name: q for q in table1.published if q.tolerance.kind != "report"}
    assert judged["VC5 achieved throughput (MCR 23.04)"].published == 38.60
    assert judged["total achieved throughput"].published == 126.88
    assert judged["VC1 achieved / MCR"].tolerance.kind == "above"
    shown = {q.name: q for q in table1.published if q.tolerance.kind == "report"}
    assert "published 15.56" in shown["VC5 excess"].note
    assert "published 1.57" in shown["VC1 excess / MCR"].note


def test_table6_runs_table3s_configuration_with_both_z_rules():
    table6 = registry()["seed004-table6"]
    assert set(table6.runs) == {"one_minus_share", "one_minus_share_squared"}
    for name, run in table6.runs.items():
        assert run.overrides[: len(TABLE6_CONFIG)] == TABLE6_CONFIG
        assert run.overrides[-1] == f'template.policy.z="{name}"'
    table3 = registry()["seed004-table3"]
    assert table3.runs["run"].overrides == TABLE6_CONFIG
    achieved = {q.name: q.published for q in table6.published if q.tolerance.kind != "report"}
    # MCR + the printed excess: 7.68 + 3.84 and 38.40 + 3.14
    assert achieved["Z_i = 1 - W_i/W: VC1 achieved, MCR + excess (MCR 7.68)"] == 11.52
    assert achieved["Z_i = (1 - W_i/W)^2: VC5 achieved, MCR + excess (MCR 38.40)"] == 41.54
