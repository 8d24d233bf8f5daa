"""GFR in scenario files: the ``gfr`` contract, the Selective Drop, FBA and DFBA
policies, many TCP flows on one VC, per-VC queue probes; their errors, their core JSON
and real runs (ledgers balanced with many flows per VC, per-VC totals, drop reasons)."""

from __future__ import annotations

from pathlib import Path

import pytest

from atmsim.scenario import resolved_toml, to_core

from conftest import balanced, error_of, load_text, needs_core

BACKBONE = """\
[run]
duration = "300 ms"

[nodes]
"e{i}" = { count = 2 }
"x{i}" = { count = 2 }
b1 = {}
b2 = {}

[links."e{i}-b1"]
count = 2
from = "e{i}"
to = "b1"
rate = "155.52 Mbps"
length = "10 km"
duplex = true

[links.b1-b2]
from = "b1"
to = "b2"
rate = "155.52 Mbps"
length = "1000 km"
duplex = true
buffer = 2000
policy = "dfba"

[links."b2-x{i}"]
count = 2
from = "b2"
to = "x{i}"
rate = "155.52 Mbps"
length = "10 km"
duplex = true

[vcs]
v1 = { path = ["e1", "b1", "b2", "x1"], class = "gfr", gfr = { mcr = "60000 cells/s" } }
v1-ack = { path = ["x1", "b2", "b1", "e1"] }
v2 = { path = ["e2", "b1", "b2", "x2"], class = "gfr", gfr = { mcr = "180000 cells/s" } }
v2-ack = { path = ["x2", "b2", "b1", "e2"] }

[flows]
"a{i}" = { count = 3, vc = "v1", variant = "sack", mss = 1024, window = "256 KB" }
"b{i}" = { count = 3, vc = "v2", variant = "sack", mss = 1024, window = "256 KB" }

[probes]
period = "10 ms"
vc_queue = ["b1-b2"]
"""
"""Two GFR VCs of three SACK connections each through a DFBA backbone port."""


def with_policy(policy: str) -> str:
    return BACKBONE.replace('policy = "dfba"', f"policy = {policy}")


def without_buffer(policy: str) -> str:
    return with_policy(policy).replace("buffer = 2000\n", "")


# --- defaults and the core JSON ----------------------------------------------------------


def test_defaults_are_written_out(tmp_path: Path) -> None:
    scenario = load_text(tmp_path, BACKBONE)
    policy = scenario.links["b1-b2"].policy
    assert (policy.low, policy.high, policy.alpha, policy.z) == (1000, 1800, 0.5, 1.0)
    gfr = scenario.vcs["v1"].gfr
    assert (gfr.mfs, gfr.mbs, gfr.tagging) == (192, 384, True)
    assert scenario.flows["a{i}"].ack_vc == "v1-ack"
    text = resolved_toml(scenario)
    assert 'ack_vc = "v1-ack"' in text and "mbs = 384" in text


def test_core_json_of_the_contract_the_policy_and_shared_vcs(tmp_path: Path) -> None:
    core = to_core(load_text(tmp_path, BACKBONE))
    names = [vc["name"] for vc in core["vcs"]]
    assert names == ["v1", "v1-ack", "v2", "v2-ack"]
    assert core["vcs"][0]["gfr"] == {
        "mcr_cps": 60000.0,
        "mbs_cells": 384,
        "mfs_cells": 192,
        "tagging": True,
    }
    assert "gfr" not in core["vcs"][1]
    link = next(link for link in core["links"] if link["name"] == "b1-b2")
    assert link["policy"] == {
        "kind": "dfba",
        "low": 1000,
        "high": 1800,
        "alpha": 0.5,
        "z": {"kind": "constant", "value": 1.0},
    }
    # Three flows on each pair of VCs.
    assert [(f["data_vc"], f["ack_vc"]) for f in core["flows"]] == [(0, 1)] * 3 + [(2, 3)] * 3
    assert core["probes"]["vc_queue"] == [
        i for i, link in enumerate(core["links"]) if link["name"] == "b1-b2"
    ]


@pytest.mark.parametrize(
    "policy, expected",
    [
        ('"selective_drop"', {"kind": "selective_drop", "threshold": 1000, "z": 1.0}),
        (
            '{ kind = "fba", threshold = 1500, z = 0.8 }',
            {"kind": "fba", "threshold": 1500, "z": 0.8},
        ),
        (
            '{ kind = "dfba", low = 100, high = 200, alpha = 0.2, z = "one_minus_share" }',
            {
                "kind": "dfba",
                "low": 100,
                "high": 200,
                "alpha": 0.2,
                "z": {"kind": "one_minus_share"},
            },
        ),
        (
            '{ kind = "dfba", z = "one_minus_share_squared" }',
            {
                "kind": "dfba",
                "low": 1000,
                "high": 1800,
                "alpha": 0.5,
                "z": {"kind": "one_minus_share_squared"},
            },
        ),
    ],
)
def test_policy_json(tmp_path: Path, policy: str, expected: dict) -> None:
    core = to_core(load_text(tmp_path, with_policy(policy)))
    link = next(link for link in core["links"] if link["name"] == "b1-b2")
    assert link["policy"] == expected


def test_a_flow_with_a_path_and_class_gfr_gives_both_vcs_the_contract(tmp_path: Path) -> None:
    text = BACKBONE.replace(
        '"a{i}" = { count = 3, vc = "v1", variant = "sack", mss = 1024, window = "256 KB" }',
        'solo = { path = ["e1", "b1", "b2", "x1"], class = "gfr", gfr = { mcr = "1 Mbps" } }',
    )
    core = to_core(load_text(tmp_path, text))
    by_name = {vc["name"]: vc for vc in core["vcs"]}
    assert by_name["solo"]["gfr"]["mcr_cps"] == pytest.approx(1e6 / 424)
    assert by_name["solo-ack"]["gfr"] == by_name["solo"]["gfr"]


# --- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "old, new, key, words",
    [
        (
            'class = "gfr", gfr = { mcr = "60000 cells/s" }',
            'class = "gfr"',
            "vcs.v1.gfr",
            'required for class = "gfr"',
        ),
        (
            'v1-ack = { path = ["x1", "b2", "b1", "e1"] }',
            'v1-ack = { path = ["x1", "b2", "b1", "e1"], gfr = { mcr = "1 Mbps" } }',
            "vcs.v1-ack.gfr",
            'GFR parameters need class = "gfr"',
        ),
        (
            'gfr = { mcr = "60000 cells/s" }',
            'gfr = { mcr = "200 Mbps" }',
            "vcs.v1.gfr.mcr",
            "at most the cell rate of the VC's first link",
        ),
        ('gfr = { mcr = "60000 cells/s" }', 'gfr = { mcr = "0 bps" }', "vcs.v1.gfr.mcr", ""),
        (
            'gfr = { mcr = "60000 cells/s" }',
            'gfr = { mcr = "1 Mbps", mbs = 0 }',
            "vcs.v1.gfr.mbs",
            "",
        ),
        (
            'gfr = { mcr = "60000 cells/s" }',
            'gfr = { mcr = "1 Mbps", mfs = 70000 }',
            "vcs.v1.gfr.mfs",
            "",
        ),
        (
            'gfr = { mcr = "60000 cells/s" }',
            'gfr = { mcr = "1 Mbps", pcr = "1 Mbps" }',
            "vcs.v1.gfr.pcr",
            "unknown key",
        ),
        (
            'policy = "dfba"',
            'policy = { kind = "dfba", low = 1900, high = 1500 }',
            "links.b1-b2.policy.low",
            "at most high",
        ),
        (
            'policy = "dfba"',
            'policy = { kind = "dfba", high = 2500 }',
            "links.b1-b2.policy.high",
            "to the buffer (2000)",
        ),
        (
            'policy = "dfba"',
            'policy = { kind = "dfba", alpha = 1.5 }',
            "links.b1-b2.policy.alpha",
            "",
        ),
        (
            'policy = "dfba"',
            'policy = { kind = "dfba", z = "half" }',
            "links.b1-b2.policy.z",
            "one_minus_share",
        ),
        ('policy = "dfba"', 'policy = { kind = "dfba", z = -0.5 }', "links.b1-b2.policy.z", ""),
        (
            'policy = "dfba"',
            'policy = { kind = "dfba", threshold = 5 }',
            "links.b1-b2.policy.threshold",
            "unknown key",
        ),
        ('policy = "dfba"', 'policy = { kind = "fba", z = 0 }', "links.b1-b2.policy.z", "> 0"),
        (
            'policy = "dfba"',
            'policy = { kind = "selective_drop", z = true }',
            "links.b1-b2.policy.z",
            "",
        ),
        (
            'policy = "dfba"',
            'policy = { kind = "selective_drop", threshold = 2001 }',
            "links.b1-b2.policy.threshold",
            "to the buffer (2000)",
        ),
        ('vc = "v1", variant', 'vc = "v9", variant', "flows.a{i}.vc", 'no VC "v9" in [vcs]'),
        (
            'v1-ack = { path = ["x1", "b2", "b1", "e1"] }',
            'w1-ack = { path = ["x1", "b2", "b1", "e1"] }',
            "flows.a{i}.ack_vc",
            '"<vc>-ack"',
        ),
        (
            'vc = "v1", variant',
            'vc = "v1", ack_vc = "v2-ack", variant',
            "flows.a{i}.ack_vc",
            "must run from",
        ),
        (
            'vc = "v1", variant',
            'vc = "v1", ack_vc = "v1", variant',
            "flows.a{i}.ack_vc",
            "must differ",
        ),
        (
            'vc = "v1", variant',
            'vc = "v1", class = "gfr", variant',
            "flows.a{i}.class",
            "remove class",
        ),
        (
            'vc = "v1", variant',
            'vc = "v1", path = ["e1", "b1"], variant',
            "flows.a{i}.path",
            "remove path",
        ),
        ('vc_queue = ["b1-b2"]', 'vc_queue = ["nowhere"]', "probes.vc_queue", 'no "nowhere"'),
    ],
)
def test_errors(tmp_path: Path, old: str, new: str, key: str, words: str) -> None:
    assert old in BACKBONE
    error = error_of(tmp_path, BACKBONE.replace(old, new, 1))
    assert error.key == key, str(error)
    assert words in error.message, str(error)


@pytest.mark.parametrize(
    "policy, key", [('"dfba"', "links.b1-b2.policy.low"), ('"fba"', "links.b1-b2.policy.threshold")]
)
def test_default_thresholds_need_a_finite_buffer(tmp_path: Path, policy: str, key: str) -> None:
    error = error_of(tmp_path, without_buffer(policy))
    assert error.key == key
    assert 'buffer = "inf"' in error.message


def test_a_source_may_not_use_a_vc_that_carries_flows(tmp_path: Path) -> None:
    text = BACKBONE + '\n[sources.s]\nkind = "greedy"\nvc = "v1"\n'
    error = error_of(tmp_path, text)
    assert error.key == "sources.s.vc"
    assert "carries a TCP flow (flows.a{i})" in error.message


def test_a_flow_without_path_or_vc(tmp_path: Path) -> None:
    text = BACKBONE.replace('vc = "v1", ', "", 1)
    error = error_of(tmp_path, text)
    assert error.key == "flows.a{i}.path"
    assert "or vc" in error.message


# --- runs ---------------------------------------------------------------------------------


@needs_core
@pytest.mark.parametrize("policy", ['"dfba"', '"selective_drop"', '"fba"', '"epd"', '"tail"'])
def test_many_flows_per_vc_keep_the_ledgers(policy: str) -> None:
    import atmsim

    result = atmsim.run(_scenario(with_policy(policy)))
    summary = result.summary
    assert balanced(summary), summary["conservation"]
    assert all(flow["bytes_delivered"] > 0 for flow in summary["flows"])
    # Per-VC totals are the sums over each VC's flows.
    totals = {row["vc"]: row for row in summary["vc_tcp"]}
    assert set(totals) == {"v1", "v2"}
    flows = {flow["name"]: flow for flow in summary["flows"]}
    for vc, prefix in (("v1", "a"), ("v2", "b")):
        members = [flow for name, flow in flows.items() if name.startswith(prefix)]
        assert totals[vc]["flows"] == 3
        assert totals[vc]["goodput_mbps"] == pytest.approx(
            sum(flow["goodput_mbps"] for flow in members)
        )
        assert totals[vc]["bytes_delivered"] == sum(f["bytes_delivered"] for f in members)
    # Every data frame of the VC's flows is a frame of the VC.
    vcs = {vc["name"]: vc for vc in summary["vcs"]}
    sent = sum(flow["segments_sent"] for name, flow in flows.items() if name.startswith("a"))
    assert vcs["v1"]["frames_sent"] == sent
    # The first switch tested the GFR VCs' frames; the ACK VCs are UBR.
    assert vcs["v1"]["gfr"]["frames_tested"] > 0
    assert "gfr" not in vcs["v1-ack"]
    assert list(result.gfr["name"]) == ["v1", "v2"]
    assert list(result.vc_tcp["vc"]) == ["v1", "v2"]


@needs_core
def test_dfba_drops_carry_its_reasons_and_per_vc_queues_are_probed() -> None:
    import atmsim

    result = atmsim.run(_scenario(BACKBONE.replace('duration = "300 ms"', 'duration = "1 s"')))
    port = next(p for p in result.summary["ports"] if p["name"] == "b1-b2")
    dropped = {reason: n for reason, n in port["drops"].items() if n}
    assert dropped and all(reason.startswith("dfba:") for reason in dropped), dropped
    assert sum(dropped.values()) == port["cells_dropped"]
    series = result.series
    queued = series[series["metric"] == "vc_queue_cells"]
    assert set(queued["entity"]) >= {"b1-b2/v1", "b1-b2/v2"}
    # At each tick the VCs' cells add up to at most the buffer and the cell in service.
    per_tick = queued.groupby("time_s")["value"].sum()
    assert (per_tick <= 2001).all() and per_tick.max() > 0


@needs_core
def test_tagging_off_tags_nothing() -> None:
    import atmsim

    text = BACKBONE.replace('mcr = "60000 cells/s" }', 'mcr = "60000 cells/s", tagging = false }')
    vcs = {vc["name"]: vc for vc in atmsim.run(_scenario(text)).summary["vcs"]}
    assert vcs["v1"]["gfr"]["cells_tagged"] == 0
    assert vcs["v1"]["gfr"]["frames_ineligible"] > 0
    assert vcs["v2"]["gfr"]["cells_tagged"] >= 0


def _scenario(text: str) -> dict:
    from atmsim.scenario import tomllib

    return tomllib.loads(text)


@pytest.mark.parametrize(
    "policy, expected",
    [
        ('{ kind = "dfba", low = "30 %", high = "70 %" }', {"low": 600, "high": 1400}),
        ('{ kind = "dfba", low = "0 %", high = "100 %" }', {"low": 0, "high": 2000}),
        ('{ kind = "selective_drop", threshold = "25 %" }', {"threshold": 500}),
        ('{ kind = "epd", threshold = "80.5 %" }', {"threshold": 1610}),
    ],
)
def test_thresholds_as_shares_of_the_buffer(tmp_path: Path, policy: str, expected: dict) -> None:
    core = to_core(load_text(tmp_path, with_policy(policy)))
    link = next(link for link in core["links"] if link["name"] == "b1-b2")
    for key, value in expected.items():
        assert link["policy"][key] == value


@pytest.mark.parametrize(
    "policy, key, words",
    [
        ('{ kind = "epd", threshold = "120 %" }', "links.b1-b2.policy.threshold", '"80 %"'),
        ('{ kind = "epd", threshold = "0 %" }', "links.b1-b2.policy.threshold", "more than 0 %"),
        ('{ kind = "dfba", low = "-5 %" }', "links.b1-b2.policy.low", "0 % to 100 %"),
        ('{ kind = "dfba", low = "half" }', "links.b1-b2.policy.low", ""),
    ],
)
def test_bad_shares(tmp_path: Path, policy: str, key: str, words: str) -> None:
    error = error_of(tmp_path, with_policy(policy))
    assert error.key == key, str(error)
    assert words in error.message, str(error)


def test_a_share_needs_a_finite_buffer(tmp_path: Path) -> None:
    error = error_of(tmp_path, without_buffer('{ kind = "fba", threshold = "50 %" }'))
    assert error.key == "links.b1-b2.policy.threshold"
    assert 'buffer = "inf"' in error.message
