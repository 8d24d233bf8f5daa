"""atmsim.compare: the one Tolerance (its verdicts and how they print) and the one
Jain fairness index, as ``atmsim reproduce`` and the ns-2 comparison use them."""

from __future__ import annotations

import math
import types

import pandas as pd
import pytest

from atmsim.compare import (
    ABOVE,
    BELOW,
    EXACT,
    REPORT,
    Tolerance,
    above,
    absolute,
    below,
    factor,
    jain,
    relative,
)
from atmsim.reproduce.measures import fairness, worst_cumulative_jain
from atmsim.validation import ns2
from atmsim.validation.ns2 import Dumbbell
from devtools import ns2_compare

# --- verdicts ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tolerance", "published", "simulated", "verdict"),
    [
        (relative(0.05), 100.0, 105.0, "match"),
        (relative(0.05), 100.0, 94.9, "miss"),
        (relative(0.25), 8.0, 10.0, "match"),
        (relative(0.25), 8.0, 10.1, "miss"),
        (absolute(0.01), 1.0, 0.99, "match"),
        (absolute(0.01), 1.0, 0.98, "miss"),
        (factor(2), 1.0, 0.5, "match"),
        (factor(2), 1.0, 2.0, "match"),
        (factor(2), 1.0, 0.49, "miss"),
        (factor(2), 1.0, 2.01, "miss"),
        (EXACT, 0.0, 0.0, "match"),
        (EXACT, 0.0, 1e-6, "miss"),
        (ABOVE, 7000.0, 7001.0, "match"),
        (ABOVE, 7000.0, 7000.0, "miss"),
        (BELOW, 1.0, 0.99, "match"),
        (BELOW, 1.0, 1.0, "miss"),
        (above(0.01), 0.0, 0.02, "match"),
        (above(0.01), 0.0, 0.005, "miss"),
        (below(0.1), 1.0, 0.85, "match"),
        (below(0.1), 1.0, 0.95, "miss"),
        (REPORT, None, 82.0, "n/a"),
        (relative(0.05), 100.0, math.nan, "miss"),
        (ABOVE, 0.0, math.nan, "miss"),
    ],
)
def test_verdict(tolerance, published, simulated, verdict):
    assert tolerance.verdict(published, simulated) == verdict


def test_tolerance_and_published_text():
    assert relative(0.05).text() == "±5 %"
    assert absolute(0.01).text() == "±0.01"
    assert factor(2).text() == "×/÷ 2"
    assert EXACT.text() == "exact"
    assert ABOVE.published_text(7000.0) == "> 7000"
    assert BELOW.published_text(1.0) == "< 1"
    assert above(0.01).text() == "one-sided, margin 0.01"
    assert REPORT.published_text(None) == "NA"
    assert relative(0.05).published_text(103.32) == "103.32"


@pytest.mark.parametrize(
    ("tolerance", "reference", "simulated", "verdict"),
    [
        (relative(0.1, floor=5), 100.0, 110.0, "match"),  # 10 % of 100 > 5
        (relative(0.1, floor=5), 100.0, 111.0, "miss"),
        (relative(0.1, floor=5), 0.0, 5.0, "match"),  # the floor counts near 0
        (relative(0.1, floor=5), 0.0, 6.0, "miss"),
        (relative(0.1, floor=5), 20.0, 25.0, "match"),  # 10 % of 20 < 5
        (relative(0.1), 20.0, 25.0, "miss"),
        (relative(0.1), None, 25.0, "n/a"),  # nothing published
        (absolute(0.02), 1.0, None, "miss"),  # nothing simulated
    ],
)
def test_relative_with_a_floor(tolerance, reference, simulated, verdict):
    assert tolerance.verdict(reference, simulated) == verdict
    assert tolerance.allows(simulated, reference) is (verdict == "match")


def test_relative_or_absolute_text():
    assert relative(0.1, floor=5).text() == "±10 % or 5"
    assert relative(0.03).text() == "±3 %"


def test_the_ns2_comparison_uses_the_one_tolerance():
    assert all(isinstance(tol, Tolerance) for tol in ns2_compare.TOLERANCES.values())
    assert set(ns2_compare.TOLERANCE_REASONS) == set(ns2_compare.TOLERANCES)
    assert ns2_compare.TOLERANCES["bottleneck_drops"] == relative(0.2, floor=10)
    assert not hasattr(ns2, "Tolerance") and not hasattr(ns2, "jain_index")


# --- Jain's index ------------------------------------------------------------------------


def test_jain_index():
    assert jain([1, 1, 1]) == pytest.approx(1.0)
    assert jain([5.0, 5.0]) == pytest.approx(1.0)  # scale-free
    assert jain([1, 0]) == pytest.approx(0.5)
    assert jain([3, 0, 0, 0]) == pytest.approx(0.25)  # one of n takes everything: 1/n
    assert jain([2, 2, 0, 0]) == pytest.approx(0.5)  # k of n share equally: k/n
    assert jain([1, 2, 3]) == pytest.approx(36 / 42)


@pytest.mark.parametrize("values", [[0, 0], [0.0], []])
def test_jain_of_nothing_is_nan(values):
    """All-zero allocations (and none at all) leave nothing to judge: NaN, never 1."""
    assert math.isnan(jain(values))


def _result(goodputs: list[float], seq_rows: list[list[float]]) -> types.SimpleNamespace:
    """The parts of an atmsim.Result that fairness and worst_cumulative_jain read."""
    names = [f"tcp{i}" for i in range(1, len(goodputs) + 1)]
    series = pd.DataFrame(
        [
            {"time_s": 0.1 * (k + 1), "entity": name, "metric": "seq_bytes", "value": value}
            for k, row in enumerate(seq_rows)
            for name, value in zip(names, row)
        ]
    )
    flows = pd.DataFrame({"name": names, "goodput_mbps": goodputs})
    return types.SimpleNamespace(flows=flows, series=series)


def test_fairness_of_starved_flows_is_nan_and_a_miss():
    starved = _result([0.0, 0.0], [[0, 0]])
    assert math.isnan(fairness(starved))
    assert absolute(0.01).verdict(1.0, fairness(starved)) == "miss"  # not "fair"
    assert fairness(_result([10.0, 30.0], [[0, 0]])) == pytest.approx(0.8)


def test_worst_cumulative_jain_skips_samples_before_any_byte():
    result = _result([1.0, 1.0], [[0, 0], [100, 300], [300, 300]])
    assert worst_cumulative_jain(result, start_s=0.1) == pytest.approx(0.8)
    assert math.isnan(worst_cumulative_jain(_result([0, 0], [[0, 0]]), start_s=0.1))


def test_ns2_metrics_use_the_one_jain_index():
    params = Dumbbell(n=2, duration_s=1.0)
    starved = ns2._metrics(
        params,
        goodput_bytes=[0, 0],
        timeouts=[0, 0],
        fast_retransmits=[0, 0],
        retransmitted=[0, 0],
        segments_sent=[0, 0],
        bottleneck_drops=0,
        flow_drops=None,
        link_transmissions=0,
    )
    assert math.isnan(starved["jain_index"])
    fair = dict(starved, goodput_mbps=[1.0, 1.0], jain_index=1.0)
    rows = {row["metric"]: row for row in ns2_compare.compare(params, fair, starved)}
    assert rows["jain_index"]["ok"] is False  # a starved run is no match for a fair one
    assert "jain_index" in ns2_compare.format_table(list(rows.values()))
