"""Scenario files: loading, defaults, overrides, the resolved TOML and the core JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from atmsim import ScenarioError, load_scenario
from atmsim.scenario import flatten, resolved_toml, to_core, tomllib

from conftest import FLOW_TINY, SCENARIOS, TINY, error_of, load_text, write


def test_tiny_scenario_to_core(tmp_path: Path) -> None:
    core = to_core(load_text(tmp_path, TINY))
    assert core == {
        "duration_ps": 10 * 10**9,
        "seed": 1,
        "fast_paths": True,
        "arbitration": "slotted",
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
        (
            '{ kind = "epd", threshold = 2000 }',
            "1000",
            "links.ab.policy.threshold",
            "from 1 to the buffer",
        ),
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
        ("run.seed=-1", "run.seed", "expected a whole number from 0 to 18446744073709551615"),
    ],
)
def test_bad_overrides(tmp_path: Path, override: str, key: str, words: str) -> None:
    error = error_of(tmp_path, TINY, (override,))
    assert error.key == key
    assert words in error.message


def test_override_without_equals(tmp_path: Path) -> None:
    error = error_of(tmp_path, TINY, ("links.ab.buffer",))
    assert "expected key=value" in str(error)


def assert_round_trip(tmp_path: Path, scenario, name: str) -> str:
    """The resolved TOML of ``scenario`` loads back to the same core input, and writing
    the reloaded scenario gives the same file (a fixed point). Returns the file."""
    text = resolved_toml(scenario)
    again = load_scenario(write(tmp_path, text, f"resolved-{name}.toml"))
    assert to_core(again) == to_core(scenario), name
    assert resolved_toml(again) == text, name
    return text


def test_resolved_toml_round_trip(tmp_path: Path) -> None:
    for path in sorted(SCENARIOS.glob("*.toml")):
        assert_round_trip(tmp_path, load_scenario(path), path.stem)


VC_CLASSES = ["ubr", "gfr", "abr", "cbr", "vbr"]


@st.composite
def vc_table(draw, path: list[str]) -> dict:
    """A [vcs] table of any class, with the class's own parameters when it has any."""
    vc_class = draw(st.sampled_from(VC_CLASSES))
    table: dict = {"path": path, "class": vc_class}
    if vc_class == "gfr":
        gfr: dict = {"mcr": f"{draw(st.integers(1000, 300000))} cells/s"}
        if draw(st.booleans()):
            gfr["mfs"] = draw(st.integers(1, 400))
            gfr["tagging"] = draw(st.booleans())
        table["gfr"] = gfr
    elif vc_class == "abr" and draw(st.booleans()):
        table["abr"] = {"tbe": draw(st.integers(1, 4096)), "nrm": draw(st.sampled_from([8, 32]))}
    return table


@st.composite
def tcp_over_vcs(draw) -> dict:
    """TCP flows over explicit VCs of any class (data and ACK VCs of their own classes,
    the ACK VC named or the default "<vc>-ack"), some flows sharing a VC, and now and
    then a flow over a path beside them."""
    link = {"rate": "155.52 Mbps", "length": "10 km", "duplex": True}
    scenario: dict = {
        "run": {"duration": "10 ms"},
        "nodes": {"a": {"kind": "host"}, "sw": {}, "b": {"kind": "host"}},
        "links": {
            "a-sw": {"from": "a", "to": "sw", **link},
            "sw-b": {"from": "sw", "to": "b", **link},
        },
        "vcs": {},
        "flows": {},
    }
    for k in range(draw(st.integers(1, 3))):
        data = f"v{k}"
        scenario["vcs"][data] = draw(vc_table(["a", "sw", "b"]))
        flow: dict = {"vc": data, "variant": draw(st.sampled_from(["tahoe", "reno", "sack"]))}
        ack = f"{data}-ack"
        if draw(st.booleans()):
            ack = f"back{k}"
            flow["ack_vc"] = ack
        scenario["vcs"][ack] = draw(vc_table(["b", "sw", "a"]))
        count = draw(st.integers(1, 3))
        name = f"f{k}" if count == 1 else f"f{k}-{{i}}"
        if count > 1:
            flow["count"] = count
        scenario["flows"][name] = flow
    if draw(st.booleans()):
        path_flow: dict = {"path": ["a", "sw", "b"]}
        vc_class = draw(st.sampled_from([None, "ubr", "abr", "cbr"]))
        if vc_class is not None:
            path_flow["class"] = vc_class
        scenario["flows"]["p"] = path_flow
    return scenario


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=tcp_over_vcs())
def test_tcp_over_explicit_vcs_round_trips(tmp_path: Path, data: dict) -> None:
    """A flow over VCs of [vcs] takes its class from them: the resolved file writes no
    class into the flow's table (the loader refuses one there), whatever the VCs'
    classes; a flow over a path gets its class, "ubr" by default."""
    scenario = load_text(tmp_path, tomli_w.dumps(data))
    text = assert_round_trip(tmp_path, scenario, "tcp-over-vcs")
    flows = tomllib.loads(text)["flows"]
    for name, flow in data["flows"].items():
        if "vc" in flow:
            assert "class" not in flows[name], name
        else:
            assert flows[name]["class"] == flow.get("class", "ubr")


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
            "must be from 0.001 cells/s (0.424 bps) to the cell rate",
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
            "unknown key; allowed: vc, path, class, abr, gfr, kind, count, start, stop",
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
        '(units: bps, kbps, Mbps, Gbps, Tbps, cells/s), got "fast"'
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


# --- templates, duplex links, IP links, TCP flows -------------------------------------

STAR = """
[run]
duration = "1 s"
[nodes]
"h{i}" = { kind = "host", count = 3 }
sw = {}
[links."h{i}-sw"]
count = 3
from = "h{i}"
to = "sw"
rate = "155.52 Mbps"
[sources."src{i}"]
count = 3
kind = "cbr"
path = ["h{i}", "sw"]
rate = "1 Mbps"
"""


def test_templates_expand_names_and_strings(tmp_path: Path) -> None:
    scenario = load_text(tmp_path, STAR)
    core = to_core(scenario)
    names = [node["name"] for node in core["nodes"]]
    assert names == ["h1", "h2", "h3", "sw"]
    assert [node["kind"] for node in core["nodes"]] == ["host"] * 3 + ["switch"]
    links = [(link["name"], names[link["from"]], names[link["to"]]) for link in core["links"]]
    assert links == [("h1-sw", "h1", "sw"), ("h2-sw", "h2", "sw"), ("h3-sw", "h3", "sw")]
    assert [(vc["name"], vc["links"]) for vc in core["vcs"]] == [
        ("src1", [0]),
        ("src2", [1]),
        ("src3", [2]),
    ]
    assert [(s["name"], s["vc"]) for s in core["sources"]] == [
        ("src1", 0),
        ("src2", 1),
        ("src3", 2),
    ]
    # The resolved file keeps the templates and reloads to the same core JSON.
    resolved = resolved_toml(scenario)
    assert '[nodes."h{i}"]' in resolved and '[links."h{i}-sw"]' in resolved
    assert 'from = "h{i}"' in resolved and "count = 3" in resolved
    again = load_scenario(write(tmp_path, resolved, "again.toml"))
    assert to_core(again) == core


def test_template_override_changes_every_copy(tmp_path: Path) -> None:
    core = to_core(
        load_text(
            tmp_path,
            STAR,
            ("links.h{i}-sw.buffer=50", "links.h{i}-sw.count=2", "sources.src{i}.count=2"),
        )
    )
    assert [link["name"] for link in core["links"]] == ["h1-sw", "h2-sw"]
    assert [link["buffer_cells"] for link in core["links"]] == [50, 50]


@pytest.mark.parametrize(
    ("text", "key", "words"),
    [
        (STAR.replace("count = 3\nfrom", "from"), "links.h{i}-sw.count", "template"),
        (
            STAR.replace('[links."h{i}-sw"]\ncount = 3', '[links."h{i}-sw"]\ncount = 4'),
            "links.h{i}-sw.from",
            'no node "h4" (in h4-sw)',
        ),
        (
            STAR.replace("sw = {}", 'sw = {}\nh2 = { kind = "host" }'),
            "nodes.h2",
            'the name "h2" is also made by nodes.h{i}',
        ),
        (
            TINY.replace("buffer = 100", "buffer = 100\ncount = 2"),
            "links.ab.count",
            "put {i} in the name",
        ),
        (STAR.replace('"h{i}" = {', '"h{j}" = {'), "nodes.h{j}", "names may only use"),
    ],
)
def test_template_errors(tmp_path: Path, text: str, key: str, words: str) -> None:
    error = error_of(tmp_path, text)
    assert error.key == key, str(error)
    assert words in error.message, str(error)


def test_duplex_creates_the_reverse_link(tmp_path: Path) -> None:
    core = to_core(load_text(tmp_path, TINY, ("links.ab.duplex=true",)))
    forward, back = core["links"]
    assert back["name"] == "ab-rev"
    assert (back["from"], back["to"]) == (forward["to"], forward["from"])
    for key in ("bit_rate_bps", "cell_rate_cps", "delay_ps", "buffer_cells", "policy"):
        assert back[key] == forward[key]


@pytest.mark.parametrize(
    ("extra", "key", "words"),
    [
        (
            '[links.ab-rev]\nfrom = "a"\nto = "b"\nrate = "1 Mbps"\n',
            "links.ab-rev",
            'the name "ab-rev" is also made by duplex = true on links.ab',
        ),
        (
            '[links.ba]\nfrom = "b"\nto = "a"\nrate = "1 Mbps"\n',
            "links.ba",
            'which link "ab-rev" (duplex = true on links.ab) already joins',
        ),
    ],
)
def test_duplex_clashes(tmp_path: Path, extra: str, key: str, words: str) -> None:
    text = TINY.replace("buffer = 100", "buffer = 100\nduplex = true") + extra
    error = error_of(tmp_path, text)
    assert error.key == key, str(error)
    assert words in error.message, str(error)


def ip_link(tmp_path: Path, *overrides: str) -> dict:
    text = TINY.replace("buffer = 100", 'layer = "ip"').replace(
        '[sources.s]\nkind = "cbr"\npath = ["a", "b"]\nrate = "10 Mbps"\n', ""
    )
    return to_core(load_text(tmp_path, text, overrides))["links"][0]


def test_ip_link_buffers(tmp_path: Path) -> None:
    link = ip_link(tmp_path)
    assert link["layer"] == "ip"
    assert link["cell_rate_cps"] == 0.0 and link["bit_rate_bps"] == 155_520_000.0
    assert (link["buffer_cells"], link["buffer_packets"], link["buffer_bytes"]) == (None,) * 3
    assert link["policy"] == {"kind": "tail"}
    link = ip_link(tmp_path, "links.ab.buffer=100")
    assert (link["buffer_packets"], link["buffer_bytes"]) == (100, None)
    link = ip_link(tmp_path, "links.ab.buffer=64 KB")
    assert (link["buffer_packets"], link["buffer_bytes"]) == (None, 65536)
    link = ip_link(tmp_path, "links.ab.buffer=1.5 MB")
    assert link["buffer_bytes"] == 1_572_864


def test_red_defaults_and_units(tmp_path: Path) -> None:
    link = ip_link(tmp_path, "links.ab.buffer=100", 'links.ab.policy={kind="red", min_th=5}')
    assert link["policy"] == {
        "kind": "red",
        "min_th": 5.0,
        "max_th": 15.0,  # 3 x min_th
        "w_q": 0.002,
        "max_p": 0.02,
    }
    link = ip_link(
        tmp_path,
        "links.ab.buffer=64 KB",
        'links.ab.policy={kind="red", min_th="10 KB", w_q=0.01, max_p=0.1}',
    )
    assert link["policy"] == {
        "kind": "red",
        "min_th": 10240.0,
        "max_th": 30720.0,
        "w_q": 0.01,
        "max_p": 0.1,
    }
    link = ip_link(tmp_path, 'links.ab.policy={kind="red", min_th=2.5, max_th=4}')
    assert (link["policy"]["min_th"], link["policy"]["max_th"]) == (2.5, 4.0)


@pytest.mark.parametrize(
    ("overrides", "key", "words"),
    [
        (('links.ab.policy="red"',), "links.ab.policy.min_th", "required for red"),
        (
            ('links.ab.policy={kind="red", min_th=10, max_th=10}',),
            "links.ab.policy.max_th",
            "must be above min_th",
        ),
        (
            ("links.ab.buffer=100", 'links.ab.policy={kind="red", min_th="2 KB"}'),
            "links.ab.policy.min_th",
            "thresholds are numbers of packets",
        ),
        (('links.ab.policy={kind="red", min_th=5, w_q=2}',), "links.ab.policy.w_q", "<= 1"),
        (("links.ab.sonet=true",), "links.ab.sonet", "sonet is for ATM links"),
        (("links.ab.policy=ppd",), "links.ab.policy", "ppd is a cell policy"),
        (("links.ab.buffer=0",), "links.ab.buffer", "from 1 to 4294967295 (2^32 - 1) of packets"),
        (("links.ab.buffer=lots",), "links.ab.buffer", 'a size in bytes like "64 KB"'),
    ],
)
def test_ip_link_errors(tmp_path: Path, overrides: tuple, key: str, words: str) -> None:
    with pytest.raises(ScenarioError) as info:
        ip_link(tmp_path, *overrides)
    assert info.value.key == key, str(info.value)
    assert words in info.value.message, str(info.value)


def test_atm_buffer_in_bytes_is_an_error(tmp_path: Path) -> None:
    error = error_of(tmp_path, TINY, ("links.ab.buffer=64 KB",))
    assert error.key == "links.ab.buffer"
    assert "ATM buffers count cells" in error.message


def flow_core(tmp_path: Path, *overrides: str, ip: bool = False) -> dict:
    text = FLOW_TINY.replace("duplex = true", 'duplex = true\nlayer = "ip"') if ip else FLOW_TINY
    return to_core(load_text(tmp_path, text, overrides))


def test_atm_flow_gets_two_vcs(tmp_path: Path) -> None:
    core = flow_core(tmp_path)
    links = [link["name"] for link in core["links"]]
    assert links == ["a-sw", "a-sw-rev", "sw-b", "sw-b-rev"]
    assert core["vcs"] == [
        {"name": "tcp", "class": "ubr", "links": [0, 2]},  # a -> sw -> b
        {"name": "tcp-ack", "class": "ubr", "links": [3, 1]},  # b -> sw -> a
    ]
    assert core["sources"] == []
    assert core["flows"] == [
        {
            "name": "tcp",
            "layer": "atm",
            "data_vc": 0,
            "ack_vc": 1,
            "data_links": [],
            "ack_links": [],
            "variant": "tahoe_nofr",
            "mss_bytes": 512,
            "rcv_window_bytes": 65536,
            "window_scale": 1,
            "initial_cwnd_segments": 1,
            "initial_ssthresh_bytes": None,
            "timer": {"kind": "coarse", "tick_ps": 100 * 10**9},
            "rtt_arithmetic": "real",
            "initial_rto_ps": 3 * 10**12,
            "min_rto_ps": 200 * 10**9,  # 2 ticks
            "max_rto_ps": 64 * 10**12,
            "delayed_ack_ps": 0,
            "processing_ps": 0,
            "processing_jitter_ps": 0,
            "start_ps": 0,
            "app_bytes": None,
            "max_sack_blocks": 3,
        }
    ]
    assert core["probes"]["flows"] == []
    json.dumps(core)


def test_ip_flow_uses_link_indices(tmp_path: Path) -> None:
    core = flow_core(tmp_path, "flows.tcp.variant=sack", "flows.tcp.transfer=1 MB", ip=True)
    (flow,) = core["flows"]
    assert core["vcs"] == [] and core["sources"] == []
    assert (flow["layer"], flow["data_vc"], flow["ack_vc"]) == ("ip", None, None)
    assert (flow["data_links"], flow["ack_links"]) == ([0, 2], [3, 1])
    assert flow["variant"] == "sack"
    assert flow["app_bytes"] == 1_048_576


def test_flow_parameters_to_core(tmp_path: Path) -> None:
    (flow,) = flow_core(
        tmp_path,
        "flows.tcp.mss=9180",
        "flows.tcp.window=1 MB",
        "flows.tcp.window_scale=4",
        "flows.tcp.initial_cwnd=2",
        "flows.tcp.initial_ssthresh=600000",
        "flows.tcp.timer=500 ms",
        "flows.tcp.initial_rto=6 s",
        "flows.tcp.max_rto=30 s",
        "flows.tcp.delayed_ack=200 ms",
        "flows.tcp.processing=200 us",
        "flows.tcp.processing_jitter=50 us",
        "flows.tcp.start=10 ms",
        "flows.tcp.max_sack_blocks=4",
        'flows.tcp.class="vbr"',
    )["flows"]
    assert flow["mss_bytes"] == 9180
    # TCP over ABR (Kalyanaraman et al., 1996)
    assert (flow["rcv_window_bytes"], flow["window_scale"]) == (1_048_576, 4)
    assert flow["initial_cwnd_segments"] == 2
    assert flow["initial_ssthresh_bytes"] == 600_000
    assert flow["timer"] == {"kind": "coarse", "tick_ps": 500 * 10**9}
    assert flow["min_rto_ps"] == 10**12  # 2 ticks of 500 ms
    assert (flow["initial_rto_ps"], flow["max_rto_ps"]) == (6 * 10**12, 30 * 10**12)
    assert flow["delayed_ack_ps"] == 200 * 10**9
    assert (flow["processing_ps"], flow["processing_jitter_ps"]) == (200 * 10**6, 50 * 10**6)
    assert (flow["start_ps"], flow["max_sack_blocks"]) == (10**10, 4)


@pytest.mark.parametrize(
    ("window", "shift"),
    [
        ('"64 KB"', 1),  # 65536 >> 0 = 65536 > 65535
        ("65535", 0),
        ('"1 MB"', 5),  # 1048576 >> 4 = 65536 > 65535; >> 5 = 32768
        ("1048575", 4),  # >> 4 = 65535
        ('"256 KB"', 3),
        ("1000", 0),
    ],
)
def test_window_scale_auto(tmp_path: Path, window: str, shift: int) -> None:
    (flow,) = flow_core(tmp_path, f"flows.tcp.window={window}", "flows.tcp.mss=512")["flows"]
    assert flow["window_scale"] == shift


@pytest.mark.parametrize(
    ("timer", "min_rto", "ps"),
    [
        ('"100 ms"', '"auto"', 200 * 10**9),  # 2 ticks
        ('"500 ms"', '"auto"', 10**12),
        ('"fine"', '"auto"', 200 * 10**9),  # 200 ms
        ('"fine"', '"1 s"', 10**12),
        ('"100 ms"', '"50 ms"', 50 * 10**9),  # as written; the core rounds up to ticks
    ],
)
def test_min_rto(tmp_path: Path, timer: str, min_rto: str, ps: int) -> None:
    core = flow_core(tmp_path, f"flows.tcp.timer={timer}", f"flows.tcp.min_rto={min_rto}")
    (flow,) = core["flows"]
    assert flow["min_rto_ps"] == ps
    expected = {"kind": "fine"} if timer == '"fine"' else {"kind": "coarse"}
    assert {k: v for k, v in flow["timer"].items() if k == "kind"} == expected


def test_rtt_arithmetic(tmp_path: Path) -> None:
    """BSD's fixed-point arithmetic reaches the core with a coarse timer; with the fine
    timer (exact times, no ticks) it is an error naming the key."""
    (flow,) = flow_core(tmp_path, "flows.tcp.rtt_arithmetic=bsd")["flows"]
    assert flow["rtt_arithmetic"] == "bsd"
    with pytest.raises(ScenarioError) as caught:
        flow_core(tmp_path, "flows.tcp.rtt_arithmetic=bsd", "flows.tcp.timer=fine")
    assert caught.value.key == "flows.tcp.rtt_arithmetic"
    assert 'must be "real" with timer = "fine"' in str(caught.value)
    with pytest.raises(ScenarioError) as caught:
        flow_core(tmp_path, "flows.tcp.rtt_arithmetic=fixed")
    assert caught.value.key == "flows.tcp.rtt_arithmetic"


def test_flow_defaults_are_written_out(tmp_path: Path) -> None:
    resolved = resolved_toml(load_text(tmp_path, FLOW_TINY))
    for line in [
        'class = "ubr"',
        'variant = "tahoe-nofr"',
        "mss = 512",
        'window = "64 KB"',
        'window_scale = "auto"',
        'initial_ssthresh = "auto"',
        'timer = "100 ms"',
        'rtt_arithmetic = "real"',
        'min_rto = "auto"',
        'max_rto = "64 s"',
        'delayed_ack = "0 s"',
        "max_sack_blocks = 3",
    ]:
        assert line in resolved, line
    assert 'ack_path = [\n    "b",\n    "sw",\n    "a",\n]' in resolved
    ip = load_text(tmp_path, FLOW_TINY.replace("duplex = true", 'duplex = true\nlayer = "ip"'))
    assert "class" not in resolved_toml(ip)  # no VCs, so no class
    assert "sonet" not in resolved_toml(ip)


def test_flow_ack_path_and_probes(tmp_path: Path) -> None:
    text = FLOW_TINY.replace(
        "[links.sw-b]", '[links.b-a]\nfrom = "b"\nto = "a"\nrate = "1 Mbps"\n[links.sw-b]'
    )
    text += 'ack_path = ["b", "a"]\n[probes]\nperiod = "1 ms"\nflows = ["tcp"]\n'
    text += 'vc_rate = ["tcp-ack"]\nqueue = ["sw-b"]\n'
    core = to_core(load_text(tmp_path, text))
    names = [link["name"] for link in core["links"]]
    assert core["vcs"][1] == {"name": "tcp-ack", "class": "ubr", "links": [names.index("b-a")]}
    assert core["probes"]["flows"] == [0]
    assert core["probes"]["vc_rate"] == [1]
    assert core["probes"]["queue"] == [names.index("sw-b")]


FLOW_ERRORS = [
    (("flows.tcp.window=100",), "flows.tcp.window", "at least one segment"),
    (("flows.tcp.window=2 GB",), "flows.tcp.window", "to 1073725440 bytes"),
    (
        ("flows.tcp.window=8 KB", "flows.tcp.window_scale=14"),
        "flows.tcp.window_scale",
        "less than one segment",
    ),
    (("flows.tcp.window_scale=15",), "flows.tcp.window_scale", '"auto" or a whole number 0..14'),
    (("flows.tcp.mss=65496",), "flows.tcp.mss", "from 1 to 65495"),
    (("flows.tcp.timer=0 s",), "flows.tcp.timer", '"fine" or a tick from 1 us to 1000 s'),
    (("flows.tcp.timer=coarse",), "flows.tcp.timer", '"fine" or a tick'),
    (("flows.tcp.min_rto=2 s", "flows.tcp.max_rto=1 s"), "flows.tcp.max_rto", ">= min_rto"),
    (("flows.tcp.transfer=0",), "flows.tcp.transfer", "from 1 byte to 2^53"),
    (("flows.tcp.max_sack_blocks=5",), "flows.tcp.max_sack_blocks", "from 1 to 4"),
    (("flows.tcp.count=2",), "flows.tcp.count", "put {i} in the name"),
    (('flows.tcp.path=["a", "b"]',), "flows.tcp.path", 'no link from "a" to "b"'),
    (("probes.flows=all", "probes.period=0 s"), "probes.period", "from 1 ns to 1000000 s"),
    (('probes.flows=["nope"]', "probes.period=1 ms"), "probes.flows", 'no "nope"'),
]


@pytest.mark.parametrize(("overrides", "key", "words"), FLOW_ERRORS)
def test_flow_errors(tmp_path: Path, overrides: tuple, key: str, words: str) -> None:
    error = error_of(tmp_path, FLOW_TINY, overrides)
    assert error.key == key, str(error)
    assert words in error.message, str(error)


@pytest.mark.parametrize(
    ("extra", "key", "words"),
    [
        ('[vcs.tcp-ack]\npath = ["a", "sw"]\n', "flows.tcp", 'VC name "tcp-ack" is also used by'),
        (
            '[sources.x]\nkind = "greedy"\nvc = "tcp"\n',
            "sources.x.vc",
            'VC "tcp" carries a TCP flow (flows.tcp)',
        ),
    ],
)
def test_flow_vc_clashes(tmp_path: Path, extra: str, key: str, words: str) -> None:
    error = error_of(tmp_path, FLOW_TINY + extra)
    assert error.key == key, str(error)
    assert words in error.message, str(error)


def test_missing_ack_hop_suggests_duplex(tmp_path: Path) -> None:
    text = FLOW_TINY.replace(
        'length = "10 km"\nduplex = true\n\n[links.sw-b]', 'length = "10 km"\n\n[links.sw-b]'
    )
    error = error_of(tmp_path, text)
    assert error.key == "flows.tcp.ack_path"
    assert 'no link from "sw" to "a"' in error.message
    assert "ack_path defaults to the reverse of path" in error.message
    assert "set duplex = true on links.a-sw" in error.message


def test_layers_of_a_flow(tmp_path: Path) -> None:
    mixed = FLOW_TINY.replace(
        'length = "10 km"\nduplex = true\n\n[links.sw-b]',
        'length = "10 km"\nduplex = true\nlayer = "ip"\n\n[links.sw-b]',
    )
    error = error_of(tmp_path, mixed)
    assert error.key == "flows.tcp.path"
    assert 'mixes layers: link "a-sw" is ip and "sw-b" is atm' in error.message
    ip = FLOW_TINY.replace("duplex = true", 'duplex = true\nlayer = "ip"')
    error = error_of(tmp_path, ip, ('flows.tcp.class="ubr"',))
    assert error.key == "flows.tcp.class"
    error = error_of(tmp_path, ip + '[sources.s]\nkind = "greedy"\npath = ["a", "sw"]\n')
    assert error.key == "sources.s.path"
    assert "is an IP link" in error.message


def test_flow_templates(tmp_path: Path) -> None:
    text = """
[run]
duration = "1 s"
[nodes]
"s{i}" = { kind = "host", count = 2 }
r = {}
"d{i}" = { kind = "host", count = 2 }
[links."s{i}-r"]
count = 2
from = "s{i}"
to = "r"
layer = "ip"
rate = "1 Gbps"
duplex = true
[links."r-d{i}"]
count = 2
from = "r"
to = "d{i}"
layer = "ip"
rate = "10 Mbps"
buffer = "32 KB"
duplex = true
[flows."f{i}"]
count = 2
path = ["s{i}", "r", "d{i}"]
start = "1 ms"
[probes]
period = "1 ms"
flows = "all"
"""
    core = to_core(load_text(tmp_path, text))
    names = [link["name"] for link in core["links"]]
    assert names == ["s1-r", "s1-r-rev", "s2-r", "s2-r-rev", "r-d1", "r-d1-rev", "r-d2", "r-d2-rev"]
    assert [(f["name"], f["data_links"], f["ack_links"]) for f in core["flows"]] == [
        ("f1", [0, 4], [5, 1]),
        ("f2", [2, 6], [7, 3]),
    ]
    assert core["links"][4]["buffer_bytes"] == 32768
    assert core["links"][5]["buffer_bytes"] == 32768  # the reverse link copies the buffer
    assert core["probes"]["flows"] == [0, 1]
