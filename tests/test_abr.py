"""ABR in scenario files: parameters, backward paths, switch algorithms, probes, the
named templates, the ABR table and figures; and real runs through the core."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import atmsim
from atmsim import load_scenario
from atmsim.scenario import Network, resolved_toml, to_core
from atmsim.scenario.templates import GFC2_GROUPS, GFC2_LINKS, GFC2_MAX_MIN_MBPS, merge_tables

from conftest import (
    SCENARIOS,
    TINY,
    balanced,
    cli_main,
    error_of,
    load_text,
    needs_core,
    run_cli,
    write,
)

OC3_CPS = 155.52e6 / 424
"""Cells/s of a 155.52 Mbps link."""

ABR_TINY = """\
[run]
duration = "10 ms"

[nodes]
a = { kind = "host" }
sw = {}
b = { kind = "host" }

[links.a-sw]
from = "a"
to = "sw"
rate = "155.52 Mbps"
length = "10 km"
duplex = true

[links.sw-b]
from = "sw"
to = "b"
rate = "155.52 Mbps"
length = "10 km"
duplex = true
algorithm = "erica"

[vcs.v1]
path = ["a", "sw", "b"]
class = "abr"
abr = { icr = "10 Mbps", rif = 1, rdf = "1/512", tbe = 512, cdf = 0.5 }

[sources.g]
kind = "greedy"
vc = "v1"

[probes]
period = "1 ms"
abr_vcs = "all"
abr_ports = ["sw-b"]
"""
"""One greedy ABR source a -> sw -> b with ERICA at sw -> b (TCP over ABR's (Kalyanaraman et
al., 1996) source parameters)."""


# --- parameters and the core JSON ---------------------------------------------------------


def test_abr_vc_to_core_exact(tmp_path: Path) -> None:
    core = to_core(load_text(tmp_path, ABR_TINY))
    # Core order: a-sw 0, a-sw-rev 1, sw-b 2, sw-b-rev 3.
    assert core["vcs"] == [
        {
            "name": "v1",
            "class": "abr",
            "links": [0, 2],
            "back_links": [3, 1],  # b -> sw -> a
            "abr": {
                "pcr_cps": OC3_CPS,  # "auto": the first link's cell rate
                "mcr_cps": 0.0,
                "icr_cps": 10e6 / 424,
                "rif": 1.0,
                "rdf": 1 / 512,
                "nrm": 32,
                "mrm": 2,
                "trm_ps": 100 * 10**9,
                "crm": 16,  # ceil(512 / 32)
                "cdf": 0.5,
                "adtf_ps": 500 * 10**9,
                "tcr_cps": 10.0,
                "use_it_or_lose_it": False,
            },
        }
    ]
    erica = {
        "kind": "erica",
        "variant": "max_min",
        "target_utilization": 0.9,
        "interval_ps": 10**9,
        "interval_cells": 100,
        "delta": 0.1,
        "measured_rate": False,
        "bidirectional_count": True,
    }
    assert [link.get("algorithm") for link in core["links"]] == [None, None, erica, erica]
    assert core["sources"][0]["model"] == {"kind": "greedy"}
    assert core["probes"] == {
        "period_ps": 10**9,
        "queue": [],
        "utilization": [],
        "vc_rate": [],
        "abr_vcs": [0],
        "abr_ports": [2],
    }
    json.dumps(core)


def test_tm40_defaults(tmp_path: Path) -> None:
    text = ABR_TINY.replace(
        'abr = { icr = "10 Mbps", rif = 1, rdf = "1/512", tbe = 512, cdf = 0.5 }', ""
    )
    scenario = load_text(tmp_path, text)
    abr = scenario.vcs["v1"].abr
    # TM 4.0's defaults, as the core declares them (AbrParams in the core schema).
    assert (abr.pcr, abr.mcr, abr.icr, abr.rif, abr.rdf, abr.cdf) == (
        "auto",
        "0 cells/s",
        "auto",
        "1/16",
        "1/16",
        "1/16",
    )
    assert (abr.nrm, abr.mrm, abr.trm, abr.tbe, abr.crm, abr.adtf, abr.tcr) == (
        32,
        2,
        "100 ms",
        16_777_215,
        None,
        "500 ms",
        "10 cells/s",
    )
    core = to_core(scenario)["vcs"][0]["abr"]
    assert core["pcr_cps"] == core["icr_cps"] == OC3_CPS
    assert core["rif"] == core["rdf"] == core["cdf"] == 1 / 16
    assert core["crm"] == math.ceil(16_777_215 / 32) == 524_288
    resolved = resolved_toml(scenario)
    for line in ('pcr = "auto"', 'icr = "auto"', 'rif = "1/16"', "tbe = 16777215"):
        assert line in resolved


@pytest.mark.parametrize(
    ("abr", "crm"),
    [
        ("tbe = 512", 16),
        ("tbe = 513", 17),
        ("tbe = 128", 4),
        ("tbe = 640, nrm = 16", 40),
        ("crm = 20", 20),  # TCP over FMMRA (An et al., 1998) gives CRM directly
        ("tbe = 1", 1),
    ],
)
def test_crm_is_ceil_tbe_over_nrm(tmp_path: Path, abr: str, crm: int) -> None:
    text = ABR_TINY.replace("tbe = 512, cdf = 0.5", abr)
    assert to_core(load_text(tmp_path, text))["vcs"][0]["abr"]["crm"] == crm


def test_rates_in_any_unit_and_fractions(tmp_path: Path) -> None:
    text = ABR_TINY.replace(
        'abr = { icr = "10 Mbps", rif = 1, rdf = "1/512", tbe = 512, cdf = 0.5 }',
        'abr = { pcr = "100000 cells/s", mcr = "1000 cells/s", icr = "21.2 Mbps", '
        'rif = "1 / 8", rdf = 0.25, cdf = "3/4", tcr = "4240 bps" }',
    )
    core = to_core(load_text(tmp_path, text))["vcs"][0]["abr"]
    assert core["pcr_cps"] == 100_000.0
    assert core["mcr_cps"] == 1000.0
    assert core["icr_cps"] == pytest.approx(50_000.0)
    assert (core["rif"], core["rdf"], core["cdf"]) == (0.125, 0.25, 0.75)
    assert core["tcr_cps"] == pytest.approx(10.0)


@pytest.mark.parametrize(
    ("abr", "key", "words"),
    [
        ("rif = 0", "vcs.v1.abr.rif", "> 0 and <= 1"),
        ("rif = 1.5", "vcs.v1.abr.rif", "> 0 and <= 1"),
        ('rdf = "1/0"', "vcs.v1.abr.rdf", 'fraction like "1/512"'),
        ('cdf = "half"', "vcs.v1.abr.cdf", 'fraction like "1/512"'),
        ("tbe = 512, crm = 16", "vcs.v1.abr.crm", "not both"),
        ("tbe = 0", "vcs.v1.abr.tbe", "from 1 to 16777215"),
        ("tbe = 16777216", "vcs.v1.abr.tbe", "from 1 to 16777215"),
        ("nrm = 1", "vcs.v1.abr.nrm", "from 2 to 256"),
        ("mrm = 0", "vcs.v1.abr.mrm", "from 1 to 256"),
        ('trm = "0 ms"', "vcs.v1.abr.trm", "from 100 us to 1000000 s"),
        ('tcr = "0 cells/s"', "vcs.v1.abr.tcr", "> 0"),
        ('pcr = "fast"', "vcs.v1.abr.pcr", "expected a rate"),
        ('icr = "200 Mbps"', "vcs.v1.abr.icr", "<= pcr (366792 cells/s (the cell rate"),
        ('pcr = "5 Mbps", icr = "10 Mbps"', "vcs.v1.abr.icr", "<= pcr"),
        ('mcr = "20 Mbps", icr = "10 Mbps"', "vcs.v1.abr.mcr", "<= icr"),
        ('mcr = "200 Mbps"', "vcs.v1.abr.mcr", "<= icr"),
        ("colour = 1", "vcs.v1.abr.colour", "unknown key; allowed: pcr, mcr, icr"),
    ],
)
def test_abr_errors(tmp_path: Path, abr: str, key: str, words: str) -> None:
    text = ABR_TINY.replace(
        'abr = { icr = "10 Mbps", rif = 1, rdf = "1/512", tbe = 512, cdf = 0.5 }',
        f"abr = {{ {abr} }}",
    )
    error = error_of(tmp_path, text)
    assert error.key == key, str(error)
    assert words in error.message, str(error)
    assert "\n" not in str(error)


def test_abr_needs_class_abr(tmp_path: Path) -> None:
    error = error_of(tmp_path, ABR_TINY.replace('class = "abr"', 'class = "ubr"'))
    assert error.key == "vcs.v1.abr"
    assert 'need class = "abr", got class = "ubr"' in error.message
    source_vc = ABR_TINY + '[sources.h]\nkind = "greedy"\nvc = "v1"\nabr = { tbe = 5 }\n'
    error = error_of(tmp_path, source_vc)
    assert error.key == "sources.h.abr" and "set them in [vcs.v1]" in error.message


def test_source_with_path_makes_an_abr_vc(tmp_path: Path) -> None:
    text = TINY.replace(
        'path = ["a", "b"]', 'path = ["a", "b"]\nclass = "abr"\nabr = { icr = "1 Mbps" }'
    ).replace('length = "10 km"', 'length = "10 km"\nduplex = true')
    core = to_core(load_text(tmp_path, text))
    (vc,) = core["vcs"]
    assert (vc["class"], vc["links"], vc["back_links"]) == ("abr", [0], [1])
    assert vc["abr"]["icr_cps"] == pytest.approx(1e6 / 424)
    assert "abr_vcs" in core["probes"] and core["probes"]["abr_vcs"] == []


def test_backward_path_needs_the_reverse_links(tmp_path: Path) -> None:
    text = ABR_TINY.replace(
        'length = "10 km"\nduplex = true\nalgorithm', 'length = "10 km"\nalgorithm'
    )
    error = error_of(tmp_path, text)
    assert error.key == "vcs.v1.path"
    assert 'no link from "b" to "sw" for the backward RM cells' in error.message
    assert "set duplex = true on links.sw-b" in error.message


def test_backward_path_of_a_template_copy_names_the_copy(tmp_path: Path) -> None:
    text = """
[run]
duration = "1 ms"
[nodes]
"h{i}" = { kind = "host", count = 2 }
sw = {}
[links."h{i}-sw"]
count = 2
from = "h{i}"
to = "sw"
rate = "155.52 Mbps"
[links.sw-h2]
from = "sw"
to = "h2"
rate = "155.52 Mbps"
[sources."g{i}"]
count = 2
kind = "greedy"
path = ["h{i}", "sw"]
class = "abr"
"""
    error = error_of(tmp_path, text)
    assert error.key == "sources.g{i}.path"
    assert 'no link from "sw" to "h1" (in g1)' in error.message
    assert "duplex = true on links.h{i}-sw" in error.message


def test_abr_flow_makes_two_abr_vcs(tmp_path: Path) -> None:
    # The receiver's link back to the switch is slower: the ACK VC's PCR ("auto")
    # is that link's rate, the data VC's its own first link's.
    text = """
[run]
duration = "10 ms"
[nodes]
a = { kind = "host" }
sw = {}
b = { kind = "host" }
[links.a-sw]
from = "a"
to = "sw"
rate = "155.52 Mbps"
duplex = true
[links.sw-b]
from = "sw"
to = "b"
rate = "155.52 Mbps"
algorithm = { kind = "fmmra" }
[links.b-sw]
from = "b"
to = "sw"
rate = "10 Mbps"
[flows.tcp]
path = ["a", "sw", "b"]
class = "abr"
abr = { icr = "5 Mbps", tbe = 128 }
"""
    scenario = load_text(tmp_path, text)
    core = to_core(scenario)
    data, ack = core["vcs"]
    assert (data["name"], ack["name"]) == ("tcp", "tcp-ack")
    assert data["class"] == ack["class"] == "abr"
    # Links: a-sw 0, a-sw-rev 1, sw-b 2, b-sw 3.
    assert (data["links"], data["back_links"]) == ([0, 2], [3, 1])
    assert (ack["links"], ack["back_links"]) == ([3, 1], [0, 2])
    assert data["abr"]["pcr_cps"] == OC3_CPS
    assert ack["abr"]["pcr_cps"] == 10e6 / 424
    assert data["abr"]["icr_cps"] == ack["abr"]["icr_cps"] == 5e6 / 424
    assert data["abr"]["crm"] == ack["abr"]["crm"] == 4
    assert core["links"][2]["algorithm"] == {
        "kind": "fmmra",
        "interval_ps": 10**9,
        "interval_cells": 100,
    }
    # An ICR above the ACK link's rate is an error naming the ACK VC.
    error = error_of(tmp_path, text.replace('icr = "5 Mbps"', 'icr = "20 Mbps"'))
    assert error.key == "flows.tcp.abr.icr"
    assert 'VC "tcp-ack"' in error.message


@pytest.mark.parametrize(
    ("flow", "key", "words"),
    [
        ("abr = { tbe = 5 }", "flows.tcp.abr", 'need class = "abr"'),
        ('class = "ubr"\nabr = { tbe = 5 }', "flows.tcp.abr", 'got class = "ubr"'),
    ],
)
def test_flow_abr_errors(tmp_path: Path, flow: str, key: str, words: str) -> None:
    from conftest import FLOW_TINY

    error = error_of(tmp_path, FLOW_TINY + flow + "\n")
    assert error.key == key and words in error.message, str(error)


def test_abr_over_ip_is_an_error(tmp_path: Path) -> None:
    from conftest import FLOW_TINY

    ip = FLOW_TINY.replace("duplex = true", 'duplex = true\nlayer = "ip"')
    error = error_of(tmp_path, ip + 'class = "abr"\n')
    assert error.key == "flows.tcp.class"
    assert "ABR is an ATM service" in error.message
    error = error_of(tmp_path, ip.replace('layer = "ip"', 'layer = "ip"\nalgorithm = "erica"', 1))
    assert error.key == "links.a-sw.algorithm"
    assert "ATM ports" in error.message


# --- switch algorithms --------------------------------------------------------------------


def algorithm_json(tmp_path: Path, spec: str) -> dict | None:
    text = ABR_TINY.replace('algorithm = "erica"', f"algorithm = {spec}").replace(
        'abr_ports = ["sw-b"]', "abr_ports = []"
    )
    return to_core(load_text(tmp_path, text))["links"][2].get("algorithm")


def test_algorithm_forms_and_defaults(tmp_path: Path) -> None:
    assert algorithm_json(tmp_path, '"none"') is None
    assert algorithm_json(tmp_path, '{ kind = "erica", target_utilization = 1 }') == {
        "kind": "erica",
        "variant": "max_min",
        "target_utilization": 1.0,
        "interval_ps": 10**9,
        "interval_cells": 100,
        "delta": 0.1,
        "measured_rate": False,
        "bidirectional_count": True,
    }
    assert algorithm_json(tmp_path, '{ kind = "erica_plus", interval = "5 ms", b = 1 }') == {
        "kind": "erica_plus",
        "interval_ps": 5 * 10**9,
        "interval_cells": 100,
        "delta": 0.1,
        "measured_rate": False,
        "bidirectional_count": True,
        "t0_ps": 1_500_000_000,
        "a": 1.15,
        "b": 1.0,
        "qdlf": 0.5,
    }
    assert algorithm_json(tmp_path, '{ kind = "efci", high = 300 }') == {
        "kind": "efci",
        "high_cells": 300,
        "low_cells": 300,
    }
    assert algorithm_json(tmp_path, '{ kind = "efci", high = 300, low = 100 }') == {
        "kind": "efci",
        "high_cells": 300,
        "low_cells": 100,
    }
    assert algorithm_json(tmp_path, '"fmmra"') == {
        "kind": "fmmra",
        "interval_ps": 10**9,
        "interval_cells": 100,
    }


@pytest.mark.parametrize(
    ("spec", "key", "words"),
    [
        ('"efci"', "links.sw-b.algorithm.high", "required for efci"),
        ('{ kind = "efci", high = 10, low = 20 }', "links.sw-b.algorithm.low", "<= high (10)"),
        (
            '{ kind = "fmmra", target_utilization = 0.9 }',
            "links.sw-b.algorithm.target_utilization",
            "unknown key; allowed: kind, interval, interval_cells",
        ),
        ('"phantom"', "links.sw-b.algorithm", '"erica", "erica_plus", "efci", "fmmra", "none"'),
        (
            '{ kind = "erica", target_utilization = 1.2 }',
            "links.sw-b.algorithm.target_utilization",
            "<= 1",
        ),
        (
            '{ kind = "erica", interval = "0 s" }',
            "links.sw-b.algorithm.interval",
            "from 1 us to 10 s",
        ),
        ('{ kind = "erica_plus", a = 0.5 }', "links.sw-b.algorithm.a", ">= 1"),
    ],
)
def test_algorithm_errors(tmp_path: Path, spec: str, key: str, words: str) -> None:
    text = ABR_TINY.replace('algorithm = "erica"', f"algorithm = {spec}")
    error = error_of(tmp_path, text)
    assert error.key == key, str(error)
    assert words in error.message, str(error)


@pytest.mark.parametrize(
    ("probes", "key", "words"),
    [
        ('abr_vcs = ["v2"]', "probes.abr_vcs", 'no "v2"; choose from: v1'),
        ('abr_ports = ["a-sw"]', "probes.abr_ports", 'link "a-sw" has no switch algorithm'),
    ],
)
def test_abr_probe_errors(tmp_path: Path, probes: str, key: str, words: str) -> None:
    text = ABR_TINY.replace('abr_vcs = "all"\nabr_ports = ["sw-b"]', probes)
    error = error_of(tmp_path, text)
    assert error.key == key and words in error.message, str(error)


def test_abr_probe_of_a_ubr_vc(tmp_path: Path) -> None:
    text = ABR_TINY + '[vcs.u]\npath = ["a", "sw", "b"]\n'
    error = error_of(tmp_path, text.replace('abr_vcs = "all"', 'abr_vcs = ["u"]'))
    assert error.key == "probes.abr_vcs"
    assert '"u" is not an ABR VC' in error.message
    assert to_core(load_text(tmp_path, text))["probes"]["abr_vcs"] == [0]  # "all": ABR only


def test_abr_resolved_toml_round_trip(tmp_path: Path) -> None:
    scenario = load_text(tmp_path, ABR_TINY)
    again = load_text(tmp_path, resolved_toml(scenario))
    assert to_core(again) == to_core(scenario)


def test_scenario_without_abr_keeps_the_old_json(tmp_path: Path) -> None:
    core = to_core(load_text(tmp_path, TINY))
    assert "algorithm" not in core["links"][0]
    assert set(core["vcs"][0]) == {"name", "class", "links"}
    assert set(core["probes"]) == {"period_ps", "queue", "utilization", "vc_rate"}


# --- templates ----------------------------------------------------------------------------


def template(kind: str, *lines: str) -> str:
    return "\n".join(["[template]", f'kind = "{kind}"', *lines]) + "\n"


@pytest.mark.parametrize(
    ("text", "counts"),
    [
        # nodes: n senders + n receivers + 2 switches + 2 VBR hosts; links: 2n access
        # (duplex) + 2 bottleneck + 2n exit + 2 VBR; VCs: 2 per flow + the VBR source's.
        (template("n-source-vbr", "n = 5"), (5 + 5 + 2 + 2, 10 + 2 + 10 + 2, 11, 1, 5)),
        (template("n-source-vbr"), (2 + 2 + 2 + 2, 4 + 2 + 4 + 2, 5, 1, 2)),
        (template("n-source-vbr", "vbr = false", "n = 1"), (1 + 1 + 2, 2 + 2 + 2, 2, 0, 1)),
        (template("n-source", "n = 3"), (3 + 3 + 2, 6 + 2 + 6, 6, 0, 3)),
        (template("n-source"), (5 + 5 + 2, 10 + 2 + 10, 10, 0, 5)),
        (template("fmmra-lan", "n = 5"), (5 + 5 + 2 + 2, 10 + 2 + 10 + 2, 11, 1, 5)),
        # gfc2: 7 switches + 22 x (host, sink); 6 chain links and 22 x 2 host links,
        # all duplex; 22 greedy sources, each with its own VC.
        (template("gfc2"), (7 + 44, 12 + 88, 22, 22, 0)),
    ],
)
def test_templates_expand(tmp_path: Path, text: str, counts: tuple) -> None:
    network = Network(load_text(tmp_path, text))
    got = (
        len(network.nodes),
        len(network.links),
        len(network.vcs),
        len(network.sources),
        len(network.flows),
    )
    assert got == counts


def test_n_source_vbr_expansion(tmp_path: Path) -> None:
    scenario = load_text(tmp_path, template("n-source-vbr", "n = 2", "buffer = 2048"))
    assert scenario.template["kind"] == "n-source-vbr"
    assert scenario.run.duration == "2 s"
    bottleneck = scenario.links["sw1-sw2"]
    assert (bottleneck.buffer, bottleneck.length, bottleneck.duplex) == (2048, "1000 km", True)
    assert bottleneck.algorithm.kind == "erica"
    assert bottleneck.algorithm.target_utilization == 0.9
    vbr = scenario.sources["vbr"]
    assert (vbr.kind, vbr.class_, vbr.peak, vbr.on, vbr.off, vbr.start) == (
        "vbr_onoff",
        "vbr",
        "124.41 Mbps",
        "100 ms",
        "100 ms",
        "2 ms",
    )
    flow = scenario.flows["tcp{i}"]
    assert (flow.variant, flow.mss, flow.window, flow.window_scale, flow.timer) == (
        "tahoe-nofr",
        512,
        "1024 KB",
        4,
        "100 ms",
    )
    # TCP over ABR's 100 ms granularity is a BSD timer's: BSD's RTO arithmetic.
    assert flow.rtt_arithmetic == "bsd"
    core = to_core(scenario)
    by_name = {vc["name"]: vc for vc in core["vcs"]}
    assert {by_name[n]["class"] for n in ("tcp1", "tcp1-ack", "tcp2", "tcp2-ack")} == {"abr"}
    abr = by_name["tcp1"]["abr"]
    assert (abr["icr_cps"], abr["rif"], abr["rdf"], abr["cdf"], abr["crm"]) == (
        10e6 / 424,
        1.0,
        1 / 512,
        0.5,
        16,
    )
    assert by_name["vbr"]["class"] == "vbr" and "abr" not in by_name["vbr"]
    names = [link["name"] for link in core["links"]]
    assert [names[i] for i in core["probes"]["abr_ports"]] == ["sw1-sw2", "sw1-sw2-rev"]
    assert len(core["probes"]["abr_vcs"]) == 4
    assert core["probes"]["period_ps"] == 10**9


def test_seed002_scenarios_use_tm4_default_source_parameters() -> None:
    """ABR and UBR buffering's (Kalyanaraman et al., 1998) "default values" of the ABR source
    parameters are TM 4.0's: ICR = PCR, RIF = RDF = CDF = 1/16, TBE 2^24 - 1 (CRM = ceil(TBE /
    Nrm)), in every ABR scenario of the ABR and UBR buffering paper; the UBR one has no ABR."""
    folder = Path(__file__).resolve().parents[1] / "scenarios" / "reproduce"
    files = sorted(folder.glob("seed002-table*.toml"))
    assert len(files) == 5
    for path in files:
        vcs = {vc["name"]: vc for vc in to_core(load_scenario(path))["vcs"]}
        abr = vcs["tcp1"]["abr"]
        pcr = 155.52e6 / 424
        assert abr["icr_cps"] == pytest.approx(pcr), path.name
        assert (abr["rif"], abr["rdf"], abr["cdf"]) == (1 / 16, 1 / 16, 1 / 16), path.name
        assert abr["crm"] == math.ceil((2**24 - 1) / 32), path.name


def test_template_algorithm_none_is_ubr(tmp_path: Path) -> None:
    core = to_core(load_text(tmp_path, template("n-source-vbr", 'algorithm = "none"')))
    assert {vc["class"] for vc in core["vcs"]} == {"ubr", "vbr"}
    assert all("algorithm" not in link for link in core["links"])
    assert "abr_vcs" not in core["probes"]


def test_fmmra_lan_rif_rdf_follow_the_algorithm(tmp_path: Path) -> None:
    def abr(algorithm: str) -> dict:
        text = template("fmmra-lan", f'algorithm = "{algorithm}"')
        vcs = to_core(load_text(tmp_path, text))["vcs"]
        return next(vc for vc in vcs if vc["name"] == "tcp1")["abr"]

    assert (abr("erica")["rif"], abr("erica")["rdf"]) == (1.0, 1 / 512)
    assert (abr("fmmra")["rif"], abr("fmmra")["rdf"]) == (1.0, 1 / 512)
    efci = abr("efci")
    assert (efci["rif"], efci["rdf"], efci["crm"]) == (0.1, 1 / 16, 20)
    scenario = load_text(tmp_path, template("fmmra-lan", 'algorithm = "efci"', "buffer = 1500"))
    assert scenario.links["sw1-sw2"].algorithm.high == 300
    flow = scenario.flows["tcp{i}"]
    assert (flow.mss, flow.window, flow.timer, flow.processing, flow.processing_jitter) == (
        9180,
        "64 KB",
        "fine",
        "200 us",
        "50 us",
    )
    lan = load_text(tmp_path, template("fmmra-lan", 'vbr_period = "10 ms"'))
    assert (lan.sources["vbr"].on, lan.sources["vbr"].off, lan.sources["vbr"].start) == (
        "10 ms",
        "10 ms",
        "300 ms",
    )
    assert lan.links["sw1-sw2"].length == "1 km"


def max_min_mbps(paths: dict[str, list[str]], rates: dict[str, float]) -> dict[str, float]:
    """Max-min fair rates by water filling: raise all unfrozen rates together until a link
    fills, freeze the sources through it, repeat."""
    rate = {s: 0.0 for s in paths}
    frozen: set[str] = set()
    left = dict(rates)
    while len(frozen) < len(paths):
        share = {
            link: left[link] / n
            for link in rates
            if (n := sum(1 for s in paths if s not in frozen and link in paths[s]))
        }
        link, step = min(share.items(), key=lambda item: item[1])
        for s in paths:
            if s not in frozen:
                rate[s] += step
                for other in paths[s]:
                    left[other] -= step
        frozen |= {s for s in paths if link in paths[s]}
    return rate


def test_gfc2_groups_give_the_spec_max_min_rates(tmp_path: Path) -> None:
    network = Network(load_text(tmp_path, template("gfc2")))
    chain = {f"{a}-{b}": float(rate.split()[0]) for a, b, rate in GFC2_LINKS}
    paths = {
        flat.name: [n for n in network.vc_links(flat.vc) if n in chain] for flat in network.sources
    }
    assert len(paths) == sum(len(members) for members in GFC2_GROUPS.values()) == 22
    for name, rate in max_min_mbps(paths, chain).items():
        assert rate == pytest.approx(GFC2_MAX_MIN_MBPS[name[0]]), name
    core = to_core(load_text(tmp_path, template("gfc2")))
    assert all(vc["class"] == "abr" for vc in core["vcs"])
    assert {source["model"]["kind"] for source in core["sources"]} == {"greedy"}
    rates = {link["name"]: link["bit_rate_bps"] for link in core["links"]}
    assert rates["sw4-sw5"] == 150e6 and rates["a1-in"] == 155.52e6


def test_merging_tables_onto_a_template(tmp_path: Path) -> None:
    text = (
        template("n-source-vbr", "n = 3")
        + """
[run]
seed = 7

[links.sw1-sw2]
buffer = 500
policy = { kind = "epd", threshold = 400 }

[flows."tcp{i}".abr]
icr = "20 Mbps"

[nodes]
spare = { kind = "host" }
"""
    )
    scenario = load_text(tmp_path, text)
    assert (scenario.run.seed, scenario.run.duration) == (7, "2 s")
    link = scenario.links["sw1-sw2"]
    assert (link.buffer, link.policy.kind, link.policy.threshold) == (500, "epd", 400)
    assert link.algorithm.kind == "erica" and link.length == "1000 km"  # kept
    abr = scenario.flows["tcp{i}"].abr
    assert (abr.icr, abr.rdf, abr.tbe, abr.pcr) == ("20 Mbps", "1/512", 512, "155.52 Mbps")
    assert "spare" in scenario.nodes and scenario.nodes["s{i}"].count == 3
    # The resolved TOML keeps the template and the overrides, and reloads identically.
    resolved = resolved_toml(scenario)
    assert "[template]" in resolved and "[links.sw1-sw2]" in resolved
    assert 'nodes."s{i}"' not in resolved  # not expanded
    again = load_text(tmp_path, resolved)
    assert to_core(again) == to_core(scenario)


def test_merge_tables_rules() -> None:
    base = {"links": {"l": {"rate": "1 Mbps", "policy": {"kind": "epd", "threshold": 5}}}}
    assert merge_tables(base, {"links": {"l": {"policy": {"threshold": 7}}}}) == {
        "links": {"l": {"rate": "1 Mbps", "policy": {"kind": "epd", "threshold": 7}}}
    }
    assert merge_tables(base, {"links": {"l": {"policy": {"kind": "ppd"}}}}) == {
        "links": {"l": {"rate": "1 Mbps", "policy": {"kind": "ppd"}}}
    }
    assert merge_tables(base, {"links": {"l": {"policy": "tail"}, "m": {"rate": "2 Mbps"}}}) == {
        "links": {"l": {"rate": "1 Mbps", "policy": "tail"}, "m": {"rate": "2 Mbps"}}
    }
    assert base["links"]["l"]["policy"]["threshold"] == 5  # not modified


def test_set_on_a_template_and_its_expansion(tmp_path: Path) -> None:
    path = write(tmp_path, template("n-source-vbr"))
    scenario = load_scenario(
        path, ["template.n=4", "links.sw1-sw2.buffer=700", "flows.tcp{i}.abr.tbe=128"]
    )
    assert scenario.nodes["s{i}"].count == 4
    assert scenario.links["sw1-sw2"].buffer == 700
    tcp1 = next(vc for vc in to_core(scenario)["vcs"] if vc["name"] == "tcp1")
    assert tcp1["abr"]["crm"] == 4
    resolved = resolved_toml(scenario)
    assert "n = 4" in resolved and "buffer = 700" in resolved
    again = load_text(tmp_path, resolved)
    assert to_core(again) == to_core(scenario)


@pytest.mark.parametrize(
    ("text", "overrides", "key", "words"),
    [
        (template("n-source", "colour = 1"), (), "template.colour", "unknown key; allowed: "),
        (template("dumbbell"), (), "template.kind", 'templates: "n-source-vbr", "n-source"'),
        ("[template]\nn = 2\n", (), "template.kind", "required key is missing"),
        (template("n-source", "vbr = true"), (), "template.vbr", "unknown key"),
        (template("n-source-vbr"), ("template.n=0",), "template.n", "(from --set template.n=0)"),
        (
            template("n-source-vbr", "buffer = -3"),
            (),
            "template.buffer",
            "from 1 to 4294967294 (2^32 - 2) of cells",
        ),
        (template("n-source-vbr", 'policy = "red"'), (), "template.policy", "for IP links"),
        (template("gfc2", 'algorithm = "none"'), (), "template.algorithm", "fmmra"),
        (
            template("fmmra-lan", 'algorithm = "efci"', "buffer = 200"),
            (),
            "template.efci_high",
            "below the buffer (200 cells)",
        ),
        (
            template("n-source") + "[links.sw1-sw3]\nbuffer = 5\n",
            (),
            "links.sw1-sw3.from",
            'the template does not make; [template] kind = "n-source" makes links: s{i}-sw1',
        ),
        (
            template("n-source"),
            ('links.sw1-sw2.policy={kind="epd"}',),
            "links.sw1-sw2.policy.threshold",
            "required for epd",
        ),
    ],
)
def test_template_errors(
    tmp_path: Path, text: str, overrides: tuple[str, ...], key: str, words: str
) -> None:
    error = error_of(tmp_path, text, overrides)
    assert error.key == key, str(error)
    assert words in error.message, str(error)
    assert "\n" not in str(error)


@pytest.mark.parametrize("name", ["abr_2src_vbr.toml", "abr_gfc2.toml"])
def test_example_files_round_trip(name: str, tmp_path: Path) -> None:
    scenario = load_scenario(SCENARIOS / name)
    resolved = resolved_toml(scenario)
    assert resolved.count("\n[template]\n") == 1
    again = load_text(tmp_path, resolved)
    assert resolved_toml(again) == resolved
    assert to_core(again) == to_core(scenario)


def test_example_abr_2src_vbr_is_seed_000_table_1_row(tmp_path: Path) -> None:
    scenario = load_scenario(SCENARIOS / "abr_2src_vbr.toml")
    core = to_core(scenario)
    bottleneck = next(link for link in core["links"] if link["name"] == "sw1-sw2")
    assert bottleneck["buffer_cells"] == 2048 == 512 * 2 * 2  # TBE x n x 2
    assert core["vcs"][1]["name"] == "tcp1" and core["vcs"][1]["abr"]["crm"] == 16
    assert len(core["flows"]) == 2 and len(core["sources"]) == 1


# --- the ABR table and figures -------------------------------------------------------------


@needs_core
def test_abr_table_result_and_figures(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, ABR_TINY, "abr.toml")
    out = tmp_path / "run"
    assert cli_main("run", str(path), "--out", str(out), "--no-progress") == 0
    printed = capsys.readouterr().out
    assert "ABR" in printed
    for column in ("ACR (Mbps)", "last ER (Mbps)", "FRMs sent", "BRMs received", "rule-6 cuts"):
        assert column in printed
    (vc,) = [vc for vc in json.loads((out / "summary.json").read_text())["vcs"] if "abr" in vc]
    assert f"{vc['abr']['acr_cps'] * 424 / 1e6:.3f}" in printed  # the ACR, in Mbps
    result = atmsim.run(path, progress=False)
    abr = result.abr
    assert list(abr.columns) == [
        "name",
        "acr_cps",
        "last_er_cps",
        "frms_sent",
        "brms_received",
        "rule6_cuts",
        "source_queue_cells",
    ]
    assert list(abr["name"]) == ["v1"]
    # One greedy source alone: ERICA gives it its target, U = 0.9 of the link.
    assert abr["acr_cps"][0] == pytest.approx(0.9 * OC3_CPS, rel=1e-6)
    assert abr["frms_sent"][0] > 0 and abr["brms_received"][0] > 0
    assert set(result.series["metric"]) == {
        "acr_cps",
        "er_cps",
        "load_factor",
        "fair_share_cps",
        "abr_queue_cells",
    }
    assert cli_main("plot", str(out)) == 0
    written = capsys.readouterr().out
    for name in ("acr.png", "er.png", "abr_queue.png", "load_factor.png", "fair_share.png"):
        assert (out / name).stat().st_size > 1000, name
        assert name in written
    assert not (out / "er_cps.png").exists()


@needs_core
def test_template_scenario_object_takes_overrides(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, template("n-source-vbr")))
    result = atmsim.run(
        scenario,
        overrides=["template.n=3", "links.sw1-sw2.buffer=100", "template.duration=20 ms"],
        progress=False,
    )
    assert list(result.abr["name"]) == [
        "tcp1",
        "tcp1-ack",
        "tcp2",
        "tcp2-ack",
        "tcp3",
        "tcp3-ack",
    ]
    assert "[template]" in result.scenario_toml and "buffer = 100" in result.scenario_toml
    ports = result.ports.set_index("name")
    assert ports.loc["sw1-sw2", "max_queue_cells"] <= 100
    assert scenario.nodes["s{i}"].count == 2  # the object itself is unchanged


@needs_core
def test_no_abr_no_abr_table(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, TINY, "plain.toml")
    assert cli_main("run", str(path), "--out", str(tmp_path / "r")) == 0
    assert "ABR" not in capsys.readouterr().out
    result = atmsim.run(path, progress=False)
    assert result.abr.empty and "acr_cps" in result.abr.columns


# --- real runs ----------------------------------------------------------------------------


@needs_core
@pytest.mark.parametrize(
    ("kind", "overrides"),
    [
        ("n-source-vbr", ("template.duration=200 ms",)),
        ("n-source-vbr", ("template.duration=200 ms", "template.algorithm=none")),
        ("n-source", ("template.duration=100 ms", "template.n=2", "template.algorithm=erica_plus")),
        ("fmmra-lan", ("template.duration=400 ms", "template.algorithm=fmmra")),
        (
            "fmmra-lan",
            ("template.duration=400 ms", "template.algorithm=efci", "template.buffer=1500"),
        ),
        ("gfc2", ("template.duration=100 ms",)),
    ],
)
def test_templates_run_with_balanced_ledgers(
    tmp_path: Path, kind: str, overrides: tuple[str, ...]
) -> None:
    path = write(tmp_path, template(kind), f"{kind}.toml")
    result = atmsim.run(path, overrides=list(overrides), progress=False)
    assert result.completed
    assert balanced(result.summary)
    assert (result.ports["utilization"] <= 1 + 1e-9).all()


@needs_core
def test_n_source_vbr_acr_series_and_figures(tmp_path: Path) -> None:
    """ACR starts at ICR (10 Mbps), never leaves [0, PCR], and ERICA never grants more
    than U = 0.9 of the link to ABR; the figures are written."""
    path = write(tmp_path, template("n-source-vbr", "buffer = 2048"), "nsv.toml")
    out = tmp_path / "run"
    result = run_cli("run", str(path), "--out", str(out), "--set", "template.duration=400 ms")
    assert result.returncode == 0, result.stderr
    assert "ABR" in result.stdout and "rule-6 cuts" in result.stdout
    import pandas as pd

    series = pd.read_parquet(out / "series.parquet")
    acr = series[series["metric"] == "acr_cps"]
    assert set(acr["entity"]) == {"tcp1", "tcp1-ack", "tcp2", "tcp2-ack"}
    assert acr["value"].between(0, OC3_CPS * (1 + 1e-9)).all()
    first = acr[acr["time_s"] == acr["time_s"].min()]
    assert first["value"].to_numpy() == pytest.approx(10e6 / 424)  # ICR, before any feedback
    assert acr["value"].max() <= 0.9 * OC3_CPS * (1 + 1e-6)  # ERICA: ER <= U x capacity
    summary = json.loads((out / "summary.json").read_text())
    assert balanced(summary)
    abr = {vc["name"]: vc["abr"] for vc in summary["vcs"] if "abr" in vc}
    assert set(abr) == {"tcp1", "tcp1-ack", "tcp2", "tcp2-ack"}
    assert all(0 <= entry["acr_cps"] <= OC3_CPS * (1 + 1e-9) for entry in abr.values())
    assert all(entry["frms_sent"] > 0 and entry["brms_received"] > 0 for entry in abr.values())
    queue = series[(series["metric"] == "abr_queue_cells") & (series["entity"] == "sw1-sw2")]
    assert queue["value"].max() <= 2048
    result = run_cli("plot", str(out))
    assert result.returncode == 0, result.stderr
    for name in (
        "acr.png",
        "er.png",
        "abr_queue.png",
        "load_factor.png",
        "fair_share.png",
        "window.png",
        "queue.png",
    ):
        assert (out / name).stat().st_size > 1000, name


@needs_core
def test_gfc2_fmmra_reaches_the_max_min_rates() -> None:
    """FMMRA computes exact max-min rates: after 1 s every greedy source's ACR is its
    group's max-min rate (docs/model.md, "ABR")."""
    result = atmsim.run(SCENARIOS / "abr_gfc2.toml", progress=False)
    assert balanced(result.summary)
    for _, row in result.abr.iterrows():
        mbps = row["acr_cps"] * 424 / 1e6
        assert mbps == pytest.approx(GFC2_MAX_MIN_MBPS[row["name"][0]], rel=0.01), row["name"]


@needs_core
@pytest.mark.parametrize("km", [667, 1333])
def test_abr_buffer_is_bounded_by_rtts_and_nearly_independent_of_sources(km: int) -> None:
    """ABR and UBR buffering's central claim with the default ERICA (bidirectional counting, CCR
    from the RM cells: docs/model.md, "ABR"): with 5 and 15 TCP sources (ABR and UBR buffering's
    source and TCP parameters) and three links of ``km`` (WAN round trips of 20 and
    40 ms), the maximum queue stays within 3 RTT x link rate ("typical WAN buffer
    requirements were under 3 x RTT x link bandwidth": one RTT for the doubling of
    the TCP load after the pipe fills, one for the backlog of bursts shorter than an
    RTT, one for bursty ACKs), and 15 sources add less than one RTT x link rate to
    the queue of 5 ("this bound depends more on the RTT ... and less on the number
    of connections"). Without bidirectional counting 15 sources add 2.1 and 1.3
    RTT (scripts/study_abr_buffers.py runs the wider grid)."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "scripts" / "study_abr_buffers.py"
    spec = importlib.util.spec_from_file_location("study_abr_buffers", path)
    assert spec is not None and spec.loader is not None
    study = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(study)
    rtt_cells = study.rtt_s(km) * OC3_CPS
    queues = {n: study.one(n, km, "defaults", 1, "1 s")["max_queue"] for n in (5, 15)}
    assert max(queues.values()) <= 3 * rtt_cells, queues
    assert queues[15] - queues[5] <= rtt_cells, queues
