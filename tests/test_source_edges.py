"""Open-loop sources at the edges of their documented ranges: never above
their peak whatever their on and off times, no hang on a 1 ps period, and
the same rate at the latest start a scenario allows (the core keeps a
source's schedule in fixed-point picoseconds)."""

from __future__ import annotations

import pytest

from atmsim import api

from conftest import needs_core

pytestmark = needs_core


def _one_source(source: dict, duration: str, rate: str = "155.52 Mbps", buffer="inf") -> dict:
    return {
        "run": {"duration": duration, "seed": 1},
        "nodes": {"a": {"kind": "host"}, "b": {"kind": "host"}},
        "links": {
            "l": {
                "from": "a",
                "to": "b",
                "rate": rate,
                "delay": "0 ms",
                "buffer": buffer,
                "policy": "tail",
            }
        },
        "sources": {"s": {"path": ["a", "b"], **source}},
    }


@pytest.mark.parametrize("distribution", ["fixed", "exponential"])
@pytest.mark.parametrize(
    ("peak", "on", "off"),
    [
        ("1 kbps", "1 us", "1 us"),  # on far shorter than a cell time at the peak
        ("1 kbps", "1 ps", "1 ps"),
        ("1 Mbps", "1 ns", "3 ns"),
        ("155.52 Mbps", "1 ps", "1 ps"),
    ],
)
def test_an_on_off_source_never_exceeds_its_peak(peak, on, off, distribution):
    """Once, a source sent a cell at the start of every on period: a 1 kbps
    source with on shorter than a cell time sent 50,001 cells in 100 ms and
    filled a 155.52 Mbps link (and, with an unlimited buffer, aborted)."""
    scenario = _one_source(
        {"kind": "vbr_onoff", "peak": peak, "on": on, "off": off, "distribution": distribution},
        "100 ms",
    )
    result = api.run(scenario)
    peak_cps = {"1 kbps": 1e3, "1 Mbps": 1e6, "155.52 Mbps": 155.52e6}[peak] / 424
    sent = result.summary["vcs"][0]["cells_sent"]
    assert 1 <= sent <= peak_cps * 0.1 + 1
    assert result.summary["ports"][0]["cells_dropped"] == 0
    assert result.summary["conservation"]["ok"]


@pytest.mark.parametrize("distribution", ["fixed", "exponential"])
def test_a_1_ps_on_period_with_a_long_off_ends(distribution):
    """On 1 ps, off 10^5 s: near 10^18 ps a float lost the 1 ps step and the
    source looped for ever inside the core, deaf to Ctrl-C."""
    scenario = _one_source(
        {
            "kind": "vbr_onoff",
            "peak": "155.52 Mbps",
            "on": "1 ps",
            "off": "100000 s",
            "distribution": distribution,
        },
        "900000 s",
    )
    result = api.run(scenario)
    assert result.summary["completed"]
    assert result.summary["conservation"]["ok"]


@pytest.mark.parametrize("rate", ["155.52 Mbps", "10 Gbps", "100 Gbps"])
def test_a_cbr_source_at_the_link_rate_started_late_keeps_its_rate(rate):
    """A CBR source at exactly the link's rate, started at 999,999.99 s (the
    latest a scenario allows is 10^6 s): its float schedule stepped by 128 ps
    there, so at 100 Gbps (a cell each 4,240 ps) it sent 0.4 % too many cells
    in 10 ms and 8,924 were dropped (faster links, more)."""
    scenario = _one_source(
        {"kind": "cbr", "rate": rate, "start": "999999.99 s"},
        "1000000 s",
        rate=rate,
        buffer=10,
    )
    result = api.run(scenario)
    sent = result.summary["vcs"][0]["cells_sent"]
    link_cps = {"155.52 Mbps": 155.52e6, "10 Gbps": 1e10, "100 Gbps": 1e11}[rate] / 424
    assert abs(sent - link_cps * 0.01) <= 1
    assert result.summary["ports"][0]["cells_dropped"] == 0


@pytest.mark.parametrize(
    ("source", "peak_cps", "mean_cps"),
    [
        ({"kind": "greedy"}, 155.52e6 / 424, 155.52e6 / 424),
        ({"kind": "poisson", "rate": "100 Mbps"}, None, 100e6 / 424),
        (
            {"kind": "vbr_onoff", "peak": "100 Mbps", "on": "1 ms", "off": "1 ms"},
            100e6 / 424,
            50e6 / 424,
        ),
        (
            {"kind": "geometric_onoff", "peak": "100 Mbps", "mean": "50 Mbps", "mean_burst": 100},
            100e6 / 424,
            50e6 / 424,
        ),
        ({"kind": "frames", "rate": "100 Mbps", "frame_cells": 10}, None, 100e6 / 424),
    ],
    ids=["greedy", "poisson", "vbr_onoff", "geometric_onoff", "frames"],
)
def test_every_source_kind_keeps_its_rate_at_the_latest_start(source, peak_cps, mean_cps):
    """Each kind started at 999,999 s of a 10^6 s run (the longest allowed) sends at
    its rate over its last second, and no kind with a peak exceeds it."""
    scenario = _one_source({**source, "start": "999999 s"}, "1000000 s")
    result = api.run(scenario)
    sent = result.summary["vcs"][0]["cells_sent"]
    if peak_cps is not None:
        assert sent <= peak_cps * 1.0 + 1
    # Within 5 % of the mean rate over the last second (the on/off sources' periods
    # are far shorter than a second, Poisson's spread about 0.2 %).
    assert abs(sent / mean_cps - 1) < 0.05, sent
    assert result.summary["conservation"]["ok"]
