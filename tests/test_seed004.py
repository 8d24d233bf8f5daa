"""GFR buffer management's (Goyal et al., 1998) configuration: the MCR sets against the paper's
printed weights and Mbps, the gfr-backbone template's expansion, and how the reproduction judges its
tables."""

from __future__ import annotations

import math
import types
from pathlib import Path

import pytest

from atmsim.compare import absolute
from atmsim.reproduce import NullPrediction, Quantity, registry
from atmsim.reproduce.seed004 import (
    EQUAL_EXCESS,
    EQUAL_SHARE,
    GFR_CAPACITY_CPS,
    LINK_MBPS,
    MCR_50,
    MCR_85,
    MCR_ONLY,
    PROPORTIONAL,
    TABLE1,
    TABLE6_CONFIG,
    TOTAL_SPREAD_MBPS,
    VC_SPREAD_MBPS,
    _mbps,
    allocation,
    judged_unless_null,
    max_goodput_mbps,
    null_excess,
    null_occupancy_share,
    slope,
    slope_tolerance,
)
from atmsim.scenario import to_core

from conftest import SCENARIOS, load_text


def test_the_gfr_capacity_is_the_sonet_payload():
    assert GFR_CAPACITY_CPS == pytest.approx(353_207.5, abs=1)


@pytest.mark.parametrize(
    "mcrs, weights",
    [
        (MCR_50, (0.034, 0.068, 0.102, 0.136, 0.170)),  # GFR buffer management's section 5, Table 1
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
    # Tagging on (the paper's DFBA drops CLP = 1 frames): the F-GCRA at the VC's first
    # switch, MFS 192 and MBS 2 x MFS (the model's defaults).
    assert all(vc["gfr"]["tagging"] for vc in gfr)
    assert all((vc["gfr"]["mfs_cells"], vc["gfr"]["mbs_cells"]) == (192, 384) for vc in gfr)
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


def test_tables_judge_the_excess_and_show_what_repeats_it():
    table1 = registry()["seed004-table1"]
    judged = {q.name: q for q in table1.published if q.tolerance.kind != "report"}
    assert judged["VC5 excess"].published == 15.56
    assert judged["VC5 excess"].tolerance == absolute(1.21)
    assert "excess / MCR published 0.68" in judged["VC5 excess"].note
    assert judged["total excess"].published == 57.77
    assert judged["total excess"].tolerance == absolute(0.29)
    assert judged["excess against MCR: least-squares slope"].published == 0.472
    # The achieved throughput and excess / MCR are the excess again (the MCR an input):
    # shown with their published values, not judged a second time.
    shown = {q.name: q for q in table1.published if q.tolerance.kind == "report"}
    assert shown["VC5 achieved throughput (MCR 23.04)"].note == "published 38.60"
    assert shown["VC1 excess / MCR"].note == "published 1.57"
    assert shown["total achieved throughput"].note == "published 126.88"


def test_the_tolerances_come_from_the_seeds_spread():
    # Tables 1 and 2 share the weights W_i / W: a VC's throughput differs by up to
    # 1.21 Mbps (VC4: 32.99 against 31.78); the five totals lie within 0.29 Mbps.
    assert VC_SPREAD_MBPS == 1.21
    assert TOTAL_SPREAD_MBPS == 0.29
    # carried to the slope: 1.21 x sum |x - mean| / sum (x - mean)^2
    assert slope_tolerance(MCR_50).value == pytest.approx(1.21 * 6 / (10 * 4.608), abs=5e-4)
    assert slope_tolerance(MCR_85).value == pytest.approx(1.21 * 6 / (10 * 7.68), abs=5e-4)


def test_slope_of_the_excess():
    mcrs = [_mbps(m) for m in MCR_50]
    assert slope(mcrs, [3.0] * 5) == pytest.approx(0.0)
    assert slope(mcrs, [0.5 * m for m in mcrs]) == pytest.approx(0.5)
    assert slope(mcrs, [row[1] for row in TABLE1]) == pytest.approx(0.472, abs=5e-4)


def test_null_models_from_the_mcrs_and_the_link():
    link = max_goodput_mbps()
    assert LINK_MBPS == pytest.approx(128.92, abs=0.01)
    assert allocation(MCR_ONLY, MCR_85) == pytest.approx([7.68, 15.36, 23.04, 30.72, 38.40])
    equal = allocation(EQUAL_EXCESS, MCR_85)
    assert [x - _mbps(m) for x, m in zip(equal, MCR_85)] == pytest.approx([(link - 115.2) / 5] * 5)
    assert allocation(PROPORTIONAL, MCR_50)[0] == pytest.approx(link / 15)
    assert allocation(EQUAL_SHARE, MCR_50) == pytest.approx([link / 5] * 5)
    for model in (EQUAL_EXCESS, PROPORTIONAL, EQUAL_SHARE):
        assert sum(allocation(model, MCR_85)) == pytest.approx(link)
    assert null_excess(MCR_ONLY, MCR_50) == [0.0] * 5
    # Little's law in one FIFO: throughputs in proportion to the MCRs hold the buffer
    # in proportion to them; an equal share holds it equally.
    assert null_occupancy_share(PROPORTIONAL, MCR_85) == pytest.approx([1.0] * 5)
    assert null_occupancy_share(EQUAL_SHARE, MCR_85) == pytest.approx([3, 1.5, 1, 0.75, 0.6])


def _seed004_quantities():
    for key, experiment in registry().items():
        if experiment.seed == "seed004":
            for quantity in experiment.published:
                yield key, quantity


def test_every_judged_quantity_has_a_null_model_and_none_matches_it():
    judged = [
        (key, q)
        for key, q in _seed004_quantities()
        if q.see is None and q.tolerance.kind != "report" and not q.unjudged
    ]
    assert len(judged) >= 15
    for key, quantity in judged:
        assert quantity.nulls, f"{key}: {quantity.name} has no null model"
        for null in quantity.nulls:
            assert math.isfinite(null.value), (key, quantity.name, null.model.id)
            verdict = quantity.tolerance.verdict(quantity.published, null.value)
            assert verdict == "miss", (key, quantity.name, null.model.id, null.value)


def test_a_row_a_null_model_matches_is_shown_with_the_model_named():
    table2 = {q.name: q for q in registry()["seed004-table2"].published}
    vc5 = table2["VC5 excess"]
    # shown unjudged by the rule every paper applies: its published value, tolerance
    # and null models kept, the model that matches named
    assert vc5.unjudged.startswith("null model mcr-only") and vc5.published == 0.32
    assert vc5.nulls and vc5.tolerance.kind != "report"
    assert vc5.note.startswith("excess / MCR published 0.01")
    assert "DFBA from arithmetic" in vc5.unjudged
    # every VC above its MCR: what the null models that share the excess assume
    claim = table2["VC5 achieved / MCR"]
    assert claim.unjudged and "mcr-plus-equal-excess" in claim.unjudged
    quantity = Quantity(
        "q", 2.0, "Mbps", absolute(0.5), "r", nulls=(NullPrediction(MCR_ONLY, 0.0),)
    )
    assert judged_unless_null(quantity) is quantity


def test_excess_rows_measure_the_goodput_less_the_mcr():
    table1 = {q.name: q for q in registry()["seed004-table1"].published}
    rows = [{"vc": f"vc{k}", "goodput_mbps": 10.0 * k} for k in range(1, 6)]
    result = types.SimpleNamespace(summary={"vc_tcp": rows})
    value, note = table1["VC2 excess"].extract({"run": result})
    assert value == pytest.approx(20.0 - 9.216)
    assert note == "achieved 20.00 of MCR 9.22 Mbps"
    value, _ = table1["excess against MCR: least-squares slope"].extract({"run": result})
    expected = [10.0 * k - _mbps(m) for k, m in enumerate(MCR_50, start=1)]
    assert value == pytest.approx(slope([_mbps(m) for m in MCR_50], expected))
    total = table1["total excess"].extract({"run": result})
    assert total == pytest.approx(150.0 - 69.12)


def test_table6_runs_table3s_configuration_with_both_z_rules():
    table6 = registry()["seed004-table6"]
    assert set(table6.runs) == {"one_minus_share", "one_minus_share_squared"}
    for name, run in table6.runs.items():
        assert run.overrides[: len(TABLE6_CONFIG)] == TABLE6_CONFIG
        assert run.overrides[-1] == f'template.policy.z="{name}"'
    table3 = registry()["seed004-table3"]
    assert table3.runs["run"].overrides == TABLE6_CONFIG
    judged = {
        q.name: q for q in table6.published if q.tolerance.kind != "report" and not q.unjudged
    }
    # the per-VC excesses of both rules lie within the spread of an equal or no excess:
    # judged are the slope of 1 - W_i/W and the claim that the squared rule shares more
    # in proportion to the MCRs
    assert set(judged) == {
        "Z_i = 1 - W_i/W: excess against MCR: least-squares slope",
        "excess / MCR spread, (1 - W_i/W)^2 over 1 - W_i/W",
    }
    shown = {q.name: q for q in table6.published}
    assert shown["Z_i = 1 - W_i/W: VC5 excess"].published == 0.02
    assert "inconsistent last row" in shown["Z_i = 1 - W_i/W: VC5 excess / MCR"].note
