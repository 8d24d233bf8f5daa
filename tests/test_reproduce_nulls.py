"""Every paper of atmsim reproduce: every judged quantity carries a null model, a row a
null model matches is shown unjudged, every judged row is in the inventory, each
TCP over FMMRA (An et al., 1998) claim is judged once, and the extractors of the instants (losses,
timeouts, merges), of ABR and UBR buffering's (Kalyanaraman et al., 1998) formula coefficient c and
of TCP over FMMRA's comparisons."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from atmsim.compare import BELOW, relative
from atmsim.reproduce import NullModel, NullPrediction, Quantity, judge, registry
from atmsim.reproduce.measures import (
    episodes,
    loss_instants,
    merge_instants,
    nth,
    slow_start_fill_s,
    timeout_instants,
)
from atmsim.reproduce.nulls import matching, unless_a_null_matches

SEEDS = ("seed000", "seed001", "seed002", "seed003", "seed004")


def _judged(seed: str):
    for experiment in registry().values():
        if experiment.seed != seed:
            continue
        for quantity in experiment.published:
            if quantity.see is None and quantity.tolerance.kind != "report":
                yield experiment, quantity


@pytest.mark.parametrize("seed", SEEDS)
def test_every_judged_quantity_has_a_null_model(seed):
    for experiment, quantity in _judged(seed):
        assert quantity.nulls, (experiment.id, quantity.name)
        for null in quantity.nulls:
            assert isinstance(null, NullPrediction) and null.model.id and null.model.title
            assert isinstance(null.value, float), (experiment.id, quantity.name)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_row_a_null_model_matches_is_not_judged(seed):
    """The rule of atmsim.reproduce.nulls, applied to every row: no judged row has a null
    model that matches its published value; every unjudged row says why."""
    for experiment, quantity in _judged(seed):
        if quantity.unjudged:
            assert len(quantity.unjudged) > 20, (experiment.id, quantity.name)
            continue
        assert not matching(quantity), (experiment.id, quantity.name)


@pytest.mark.parametrize("seed", SEEDS)
def test_every_judged_quantity_is_in_the_inventory(seed):
    """Coverage counts what the paper publishes: a row that judges a published number
    must be the row of one of the inventory's entries, or its verdict is not counted."""
    from atmsim.reproduce import inventory

    rows = {(entry.experiment, entry.row) for entry in inventory.load() if entry.seed == seed}
    for experiment, quantity in _judged(seed):
        if quantity.published is None:
            continue
        assert (experiment.id, quantity.name) in rows, (experiment.id, quantity.name)


def test_null_models_come_from_the_inputs():
    """Spot checks of predictions against the papers' numbers."""
    experiments = registry()

    def nulls(experiment: str, name: str) -> dict:
        quantity = next(q for q in experiments[experiment].published if q.name.startswith(name))
        return {null.model.id: null.value for null in quantity.nulls}

    # TCP over ABR (Kalyanaraman et al., 1996) section 8's own arithmetic: 155 x 0.9 x 48/53 x
    # 512/568 x 31/32 x 0.9
    assert nulls("seed000-sec8", "total TCP throughput")["seed-check"] == pytest.approx(99.29, 1e-3)
    # the ABR and UBR buffering paper: ERICA's target in 12-cell segments, 31 data cells in 32
    assert nulls("seed002-table2-50km", "total TCP throughput")["target"] == pytest.approx(
        109.157, 1e-4
    )
    # one round trip of 30 ms at 366,792 cells/s; 5 windows of 2048 segments of 12 cells
    queue = nulls("seed002-table1-n5", "maximum queue")
    assert queue == {"one-rtt": pytest.approx(11003.77, 1e-4), "window-sum": 122880.0}
    # the TCP over FMMRA paper: 10 windows of 64 KB in 9180-byte segments of 193 cells
    assert nulls("seed003-queue-10tcp-10ms", "max queue, ERICA")["window-sum"] == 10 * 8 * 193


def test_unless_a_null_matches_follows_the_tolerance():
    model = NullModel("m", "a model")
    inside = Quantity("q", 100.0, "", relative(0.05), "r", nulls=(NullPrediction(model, 104.0),))
    outside = Quantity("q", 100.0, "", relative(0.05), "r", nulls=(NullPrediction(model, 106.0),))
    assert unless_a_null_matches(inside, "why").unjudged.endswith("; why")
    assert "m (104)" in unless_a_null_matches(inside).unjudged
    assert unless_a_null_matches(outside) is outside
    bound = Quantity("b", 3.0, "", BELOW, "r", nulls=(NullPrediction(model, 1.0),))
    row = judge("e", unless_a_null_matches(bound), [3.9])
    assert row["verdict"] == "n/a" and "it would be a miss" in row["note"]


def test_seed003_judges_each_claim_once():
    """One judged row per claim of section 4.2; the configurations are shown, not
    judged."""
    judged = {
        experiment.id: [] for experiment in registry().values() if experiment.seed == "seed003"
    }
    for experiment, quantity in _judged("seed003"):
        if not quantity.unjudged:
            judged[experiment.id].append(quantity.name)
    assert {key: len(names) for key, names in judged.items()} == {
        "seed003-queue": 2,  # observation 1's queue, observation 4's utilization
        "seed003-fairness-5tcp-10ms": 1,  # observation 2
        "seed003-acr-2tcp-100ms": 2,  # observation 3: fastest, most accurate
        "seed003-buffer1500-2tcp": 2,  # observation 4: highest throughput, EFCI unfair
        "seed003-queue-10tcp-10ms": 1,  # observation 5: ERICA's queue the larger
    }


# --- extractors ---------------------------------------------------------------------------


class _Series:
    """Just enough of a Result for the series extractors."""

    def __init__(self, rows: list[tuple[float, str, str, float]], flows=("tcp1", "tcp2")):
        self.series = pd.DataFrame(rows, columns=["time_s", "entity", "metric", "value"])
        self.flows = pd.DataFrame({"name": list(flows), "goodput_mbps": [1.0] * len(flows)})


def test_episodes_and_instants():
    assert episodes([0.2, 0.21, 0.25, 0.5, 0.55, 1.3], 0.1) == [0.2, 0.5, 1.3]
    assert episodes([], 0.1) == []
    times = [round(0.001 * k, 3) for k in range(1, 1501)]
    rows = []
    for t in times:
        dropped = 0 if t < 0.4 else (12 if t < 1.3 else 30)
        merged = 0 if t < 1.3 else 2
        cwnd = 512 if (0.9 <= t < 0.95) else 4096
        rows += [
            (t, "tcp2", "cells_dropped", dropped),
            (t, "tcp2", "frames_merged", merged),
            (t, "tcp2", "cwnd_bytes", cwnd),
        ]
    result = _Series(rows, flows=("tcp2",))
    assert loss_instants(result, "tcp2") == [0.4, 1.3]
    assert merge_instants(result, "tcp2") == [1.3]
    assert timeout_instants(result, "tcp2", 512) == [0.9]
    assert nth([0.4, 1.3], 2, "losses") == 1.3
    with pytest.raises(ValueError, match="1 timeouts, not 2"):
        nth([0.9], 2, "timeouts")


def test_slow_start_fill():
    # 2 windows of 12-cell segments doubling every 30 ms fill 11,004 + 2048 cells after
    # log2(13,052 / 24) round trips
    assert slow_start_fill_s(0.03, 13052, 2, 12) == pytest.approx(0.03 * math.log2(13052 / 24))
    from atmsim.reproduce.seed000 import slow_start_cycle

    cycle = slow_start_cycle(2, 2048)
    assert cycle["timeout1"] - cycle["loss1"] == pytest.approx(0.3)
    assert cycle["loss2"] == pytest.approx(2 * cycle["loss1"] + 0.3)


def test_seed002_coefficient_c():
    from atmsim.reproduce.seed002 import CELLS_PER_S, c_of

    # the paper's Table 4 at RTT 30 ms: (15,073 - 719) cells over 9.99 ms at the link rate
    assert c_of(719, 15073) == pytest.approx(14354 / (9.99e-3 * CELLS_PER_S))
    assert round(c_of(719, 15073), 2) == 3.92 and round(c_of(709, 17833), 2) == 4.67


def test_seed003_compares_fmmra_with_the_best_other_in_the_worst_configuration():
    from atmsim.reproduce.seed003 import _against_others

    class Run:
        def __init__(self, value):
            self.value = value

    results = {
        "fmmra-a": Run(10.0),
        "erica-a": Run(20.0),
        "efci-a": Run(40.0),
        "fmmra-b": Run(30.0),
        "erica-b": Run(25.0),
        "efci-b": Run(50.0),
    }
    smaller = _against_others(lambda r: r.value, ("-a", "-b"), "smaller")
    value, note = smaller(results)
    assert value == pytest.approx(30 / 25) and "b, against ERICA" in note
    larger = _against_others(lambda r: r.value, ("-a", "-b"), "larger")
    value, note = larger(results)
    assert value == pytest.approx(10 / 40) and "a, against EFCI" in note
