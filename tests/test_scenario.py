"""Scenario files: loading, defaults, overrides, the resolved TOML and the core JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from atmsim import ScenarioError, load_scenario
from atmsim.scenario import flatten, resolved_toml, to_core

from conftest import SCENARIOS, TINY


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def load_text(tmp_path: Path, text: str, overrides: tuple[str, ...] = ()):
    return load_scenario(write(tmp_path, text), list(overrides))


def error_of(tmp_path: Path, text: str, overrides: tuple[str, ...] = ()) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        load_text(tmp_path, text, overrides)
    return info.value


def test_tiny_scenario_to_core(tmp_path: Path) -> None:
    core = to_core(load_text(tmp_path, TINY))
    assert core == {
        "duration_ps": 10 * 10**9,
        "seed": 1,
        "nodes": [{"name": "a", "kind": "host"}, {"name": "b", "kind": "host"}],
        "links": [
            {
                "name": "ab",
                "from": 0,
                "to": 1,
                "bit_rate_bps": 155_520_000.0,
                "cell_rate_cps": 155_520_000.0 / 424,
                "delay_ps": 50_000_000,  # 10 km at 5 us/km
                "buffer_cells": 100,
                "policy": {"kind": "tail"},
            }
        ],
        "vcs": [{"name": "s", "class": "ubr", "links": [0]}],
        "sources": [
            {
                "name": "s",
                "vc": 0,
                "start_ps": 0,
                "stop_ps": None,
                "model": {"kind": "cbr", "rate_cps": 10e6 / 424},
            }
        ],
        "probes": {"period_ps": 0, "queue": [], "utilization": [], "vc_rate": []},
    }
    json.dumps(core)  # plain JSON types only


def test_defaults_are_resolved(tmp_path: Path) -> None:
    text = """
[run]
duration = "1 s"
[nodes]
a = {}
b = { kind = "host" }
[links.ab]
from = "a"
to = "b"
rate = "1 Mbps"
[sources.s]
kind = "vbr_onoff"
path = ["a", "b"]
peak = "1 Mbps"
on = "10 ms"
off = "10 ms"
"""
    scenario = load_text(tmp_path, text)
    assert scenario.run.seed == 1
    assert scenario.nodes["a"].kind == "switch"
    link = scenario.links["ab"]
    assert (link.delay, link.length, link.sonet, link.buffer) == ("0 s", None, False, "inf")
    assert link.policy.kind == "tail"
    source = scenario.sources["s"]
    assert (source.class_, source.count, source.start, source.stop) == ("ubr", 1, "0 s", None)
    assert source.distribution == "fixed"
    resolved = resolved_toml(scenario)
    for line in [
        "seed = 1",
        'kind = "switch"',
        'delay = "0 s"',
        'buffer = "inf"',
        'class = "ubr"',
        'start = "0 s"',
        'distribution = "fixed"',
    ]:
        assert line in resolved


def test_policy_forms_and_defaults(tmp_path: Path) -> None:
    def policy(spec: str, buffer: str = "1000") -> dict:
        text = TINY.replace("buffer = 100", f"buffer = {buffer}\npolicy = {spec}")
        return to_core(load_text(tmp_path, text))["links"][0]["policy"]

    assert policy('"tail"') == {"kind": "tail"}
    assert policy('"epd"') == {"kind": "epd", "threshold": 800}  # 0.8 x buffer
    assert policy('{ kind = "epd", threshold = 700 }') == {"kind": "epd", "threshold": 700}
    assert policy('"intelligent_tail"') == {"kind": "intelligent_tail", "threshold": 988}
    assert policy('"ppd"') == {"kind": "ppd", "keep_eom": True}
    assert policy('{ kind = "ppd", keep_eom = false }') == {"kind": "ppd", "keep_eom": False}
    assert policy('{ kind = "epd", threshold = 50 }', '"inf"') == {"kind": "epd", "threshold": 50}


@pytest.mark.parametrize(
    ("spec", "buffer", "key", "words"),
    [
        ('"epd"', '"inf"', "links.ab.policy.threshold", "required for epd"),
        ('{ kind = "epd", threshold = 2000 }', "1000", "links.ab.policy.threshold", "<= buffer"),
        ('"intelligent_tail"', "10", "links.ab.policy.threshold", "buffer > 12"),
        ('{ kind = "tail", threshold = 5 }', "1000", "links.ab.policy.threshold", "allowed: kind"),
        ('"red"', "1000", "links.ab.policy", '"tail", "ppd", "epd", "intelligent_tail"'),
    ],
)
def test_policy_errors(tmp_path: Path, spec: str, buffer: str, key: str, words: str) -> None:
    text = TINY.replace("buffer = 100", f"buffer = {buffer}\npolicy = {spec}")
    error = error_of(tmp_path, text)
    assert error.key == key
    assert words in error.message


def test_sonet_link_carries_the_payload_rate(tmp_path: Path) -> None:
    core = to_core(load_text(tmp_path, TINY, ("links.ab.sonet=true",)))
    link = core["links"][0]
    assert link["bit_rate_bps"] == 155_520_000.0  # the line rate, as written
    assert link["cell_rate_cps"] == pytest.approx(149_760_000 / 424)
    assert round(link["cell_rate_cps"]) == 353_208


def test_link_rate_in_cells(tmp_path: Path) -> None:
    link = to_core(load_text(tmp_path, TINY, ("links.ab.rate=366792 cells/s",)))["links"][0]
    assert link["cell_rate_cps"] == 366_792.0
    assert link["bit_rate_bps"] == 366_792.0 * 424


def test_overrides(tmp_path: Path) -> None:
    scenario = load_text(
        tmp_path,
        TINY,
        (
            "links.ab.buffer=500",
            "run.seed=3",
            "run.duration=5 s",
            "links.ab.policy=epd",
            'sources.s.path=["a", "b"]',
            "probes.queue=all",  # [probes] is absent from the file: the section is created
            "probes.period=1 ms",
        ),
    )
    core = to_core(scenario)
    assert core["links"][0]["buffer_cells"] == 500
    assert core["links"][0]["policy"] == {"kind": "epd", "threshold": 400}
    assert core["seed"] == 3
    assert core["duration_ps"] == 5 * 10**12
    assert core["probes"]["queue"] == [0]
    assert core["probes"]["period_ps"] == 10**9


@pytest.mark.parametrize(
    ("override", "key", "words"),
    [
        (
            "links.nope.buffer=5",
            "links.nope.buffer",
            'no table "links.nope" in the scenario; links has: ab',
        ),
        ("links.ab.rate.x=5", "links.ab.rate.x", '"links.ab.rate" is a value'),
        ("links.ab.buffer=-1", "links.ab.buffer", "(from --set links.ab.buffer=-1)"),
        ("run.seed=-1", "run.seed", "must be >= 0"),
    ],
)
def test_bad_overrides(tmp_path: Path, override: str, key: str, words: str) -> None:
    error = error_of(tmp_path, TINY, (override,))
    assert error.key == key
    assert words in error.message


def test_override_without_equals(tmp_path: Path) -> None:
    error = error_of(tmp_path, TINY, ("links.ab.buffer",))
    assert "expected key=value" in str(error)


def test_resolved_toml_round_trip(tmp_path: Path) -> None:
    for path in sorted(SCENARIOS.glob("*.toml")):
        scenario = load_scenario(path)
        again = load_scenario(write(tmp_path, resolved_toml(scenario), f"resolved-{path.name}"))
        assert to_core(again) == to_core(scenario), path.name
        assert resolved_toml(again) == resolved_toml(scenario)


def test_count_expansion(tmp_path: Path) -> None:
    text = TINY + 'count = 3\n[probes]\nperiod = "1 ms"\nvc_rate = ["s2"]\n'
    scenario = load_text(tmp_path, text)
    core = to_core(scenario)
    assert [source["name"] for source in core["sources"]] == ["s1", "s2", "s3"]
    assert [vc["name"] for vc in core["vcs"]] == ["s1", "s2", "s3"]
    assert [source["vc"] for source in core["sources"]] == [0, 1, 2]
    assert core["probes"]["vc_rate"] == [1]
    assert "count = 3" in resolved_toml(scenario)  # not expanded in the resolved file
    vcs, sources = flatten(scenario)
    assert len(vcs) == len(sources) == 3


def test_explicit_vcs_come_first(tmp_path: Path) -> None:
    text = (
        TINY + '[vcs.v]\npath = ["a", "b"]\nclass = "cbr"\n[sources.t]\nkind = "greedy"\nvc = "v"\n'
    )
    core = to_core(load_text(tmp_path, text))
    assert core["vcs"] == [
        {"name": "v", "class": "cbr", "links": [0]},
        {"name": "s", "class": "ubr", "links": [0]},
    ]
    assert [(s["name"], s["vc"]) for s in core["sources"]] == [("s", 1), ("t", 0)]
    assert core["sources"][1]["model"] == {"kind": "greedy"}


def test_multi_hop_path_and_every_source_kind(tmp_path: Path) -> None:
    text = """
[run]
duration = "1 s"
[nodes]
h = { kind = "host" }
sw = {}
d = { kind = "host" }
[links.in]
from = "h"
to = "sw"
rate = "155.52 Mbps"
[links.out]
from = "sw"
to = "d"
rate = "155.52 Mbps"
delay = "5 ms"
[sources.p]
kind = "poisson"
path = ["h", "sw", "d"]
rate = "1000 cells/s"
start = "1 ms"
stop = "900 ms"
[sources.g]
kind = "geometric_onoff"
path = ["h", "sw", "d"]
peak = "2000 cells/s"
mean = "1000 cells/s"
mean_burst = 10
[sources.v]
kind = "vbr_onoff"
path = ["sw", "d"]
class = "vbr"
peak = "424 kbps"
on = "10 ms"
off = "30 ms"
distribution = "exponential"
[sources.f]
kind = "frames"
path = ["h", "sw", "d"]
frame_cells = [2, 20]
rate = "5000 cells/s"
arrivals = "poisson"
[sources.c]
kind = "cbr"
path = ["h", "sw"]
rate = "100 cells/s"
"""
    core = to_core(load_text(tmp_path, text))
    assert core["links"][1]["delay_ps"] == 5 * 10**9
    assert [vc["links"] for vc in core["vcs"]] == [[0, 1], [0, 1], [1], [0, 1], [0]]
    models = {source["name"]: source["model"] for source in core["sources"]}
    assert models["p"] == {"kind": "poisson", "rate_cps": 1000.0}
    assert models["g"] == {
        "kind": "geometric_onoff",
        "peak_cps": 2000.0,
        "mean_cps": 1000.0,
        "mean_burst_cells": 10.0,
    }
    assert models["v"] == {
        "kind": "vbr_onoff",
        "peak_cps": 1000.0,
        "on_ps": 10**10,
        "off_ps": 3 * 10**10,
        "distribution": "exponential",
    }
    assert models["f"] == {
        "kind": "frames",
        "frame_cells": {"uniform": [2, 20]},
        "rate_cps": 5000.0,
        "arrivals": "poisson",
    }
    assert core["sources"][0]["start_ps"] == 10**9
    assert core["sources"][0]["stop_ps"] == 9 * 10**11
    assert core["vcs"][2]["class"] == "vbr"


@pytest.mark.parametrize(
    ("extra", "key", "words"),
    [
        ('[vcs.v]\npath = ["a", "c"]\n', "vcs.v.path", 'no node "c"'),
        ('[vcs.v]\npath = ["b", "a"]\n', "vcs.v.path", 'no link from "b" to "a"'),
        ('[sources.t]\nkind = "greedy"\nvc = "nope"\n', "sources.t.vc", 'no VC "nope"'),
        (
            '[vcs.v]\npath = ["a", "b"]\n[sources.t]\nkind = "greedy"\nvc = "v"\n'
            '[sources.u]\nkind = "greedy"\nvc = "v"\n',
            "sources.u.vc",
            "one source per VC",
        ),
        (
            '[sources.t]\nkind = "cbr"\npath = ["a", "b"]\nrate = "200 Mbps"\n',
            "sources.t.rate",
            'exceeds the cell rate of its first link "ab"',
        ),
        (
            '[sources.t]\nkind = "cbr"\npath = ["a", "b"]\nrate = "0 Mbps"\n',
            "sources.t.rate",
            "must be > 0",
        ),
        (
            '[sources.t]\nkind = "geometric_onoff"\npath = ["a", "b"]\npeak = "1 Mbps"\n'
            'mean = "2 Mbps"\nmean_burst = 10\n',
            "sources.t.mean",
            "below peak",
        ),
        (
            '[sources.t]\nkind = "cbr"\npath = ["a", "b"]\n',
            "sources.t.rate",
            'required for kind = "cbr"',
        ),
        ('[sources.t]\nkind = "greedy"\n', "sources.t", "needs vc"),
        (
            '[sources.t]\nkind = "greedy"\npath = ["a", "b"]\npeak = "1 Mbps"\n',
            "sources.t.peak",
            "unknown key; allowed: vc, path, class, kind, count, start, stop",
        ),
        ('[probes]\nqueue = ["ab"]\n', "probes.period", "required"),
        ('[probes]\nperiod = "1 ms"\nqueue = ["zz"]\n', "probes.queue", 'no "zz"'),
        ('[links.ba]\nfrom = "b"\nto = "zz"\nrate = "1 Mbps"\n', "links.ba.to", 'no node "zz"'),
        ('[vcs.s]\npath = ["a", "b"]\n', "sources.s", 'VC name "s" is also used by vcs.s'),
    ],
)
def test_reference_errors(tmp_path: Path, extra: str, key: str, words: str) -> None:
    error = error_of(tmp_path, TINY + extra)
    assert error.key == key, str(error)
    assert words in error.message, str(error)
    assert "\n" not in str(error)


def test_error_format(tmp_path: Path) -> None:
    error = error_of(tmp_path, TINY.replace('"155.52 Mbps"', '"fast"'))
    assert str(error) == (
        f'{tmp_path / "s.toml"}: links.ab.rate: expected a rate like "155.52 Mbps" '
        '(units: bps, kbps, Mbps, Gbps, cells/s), got "fast"'
    )
    unknown = error_of(tmp_path, TINY.replace('length = "10 km"', "colour = 1"))
    assert unknown.key == "links.ab.colour"
    assert unknown.message.startswith("unknown key; allowed: from, to, rate, length, delay")
    literal = error_of(tmp_path, TINY.replace('{ kind = "host" }', '{ kind = "router" }', 1))
    assert literal.key == "nodes.a.kind"
    assert literal.message == 'expected "host" or "switch", got "router"'


def test_scenario_name_and_file(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, TINY, "my_study.toml"))
    assert scenario.name == "my_study"
    assert scenario.file == str(tmp_path / "my_study.toml")
