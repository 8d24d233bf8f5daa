"""Explicit rate control of TCP's (Satyavolu et al., 1998) reproduction ("Explicit rate control of
TCP applications"): every judged row carries a null model, the null models are computed from the
configuration alone (and agree with ``atmsim.fairness`` on it), one run seed because nothing is
random, and the readings of Figure 3's levels."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from atmsim import load_scenario
from atmsim.compare import jain
from atmsim.determinism import seed_dependence
from atmsim.fairness import _base_rtt_s, allocate, capacities, entities
from atmsim.reproduce import registry, run_seed, seed_ids
from atmsim.reproduce import seed001 as s
from atmsim.scenario import to_core

from conftest import needs_core


def _experiments():
    return [registry()[key] for key in seed_ids("seed001")]


def _core(run) -> dict:
    return to_core(load_scenario(run.path, list(run.overrides)))


def test_every_judged_quantity_has_a_null_model():
    judged = 0
    for experiment in _experiments():
        for quantity in experiment.published:
            if quantity.see is not None or quantity.tolerance.kind == "report":
                continue
            judged += 1
            assert quantity.nulls, (experiment.id, quantity.name)
            for null in quantity.nulls:
                assert null.model in s.NULL_MODELS
                assert math.isfinite(null.value), (experiment.id, quantity.name)
    assert judged >= 5


def test_rows_shown_for_a_null_model_say_which_and_its_value():
    """A published claim made n/a because a null model predicts it names the model."""
    for experiment in _experiments():
        for quantity in experiment.published:
            if "; n/a: " in quantity.reason:
                assert quantity.tolerance.kind == "report" and quantity.published is None
                assert "the paper" in quantity.reason
                assert "null model" in quantity.reason.split("; n/a: ")[1]


def test_every_run_draws_no_random_number_and_runs_one_seed():
    for experiment in _experiments():
        assert experiment.seeds == s.SEEDS == (1,), experiment.id
        for run in experiment.runs.values():
            assert seed_dependence(_core(run)) == [], (experiment.id, run)


def test_base_round_trips_are_the_scenarios():
    """The null models' round trips are those atmsim.fairness reads from the scenarios."""
    hetero = _core(registry()["seed001-fig3"].runs["run"])
    by_name = {flow["name"]: flow for flow in hetero["flows"]}
    for group, flows in s.GROUPS.items():
        for k in flows:
            flow = by_name[f"tcp{k}"]
            rtt = _base_rtt_s(hetero, flow, flow["data_links"], flow["ack_links"])
            assert rtt == pytest.approx(s.BASE_RTT_S[group], rel=1e-9)
    # the paper's 10, 16 and 70 ms (2012, 3200 and 14000 km) plus the transmissions
    assert [round(1e3 * s.BASE_RTT_S[g], 1) for g in (1, 2, 3)] == [10.2, 16.2, 70.2]
    gfc2 = _core(registry()["seed001-fig6"].runs["fixed"])
    for flow in gfc2["flows"]:
        rtt = _base_rtt_s(gfc2, flow, flow["data_links"], flow["ack_links"])
        assert rtt == pytest.approx(s.GFC2_RTTS[flow["name"]], rel=1e-9), flow["name"]


def test_gfc2_max_min_rates_and_bottlenecks_are_the_scenarios():
    core = _core(registry()["seed001-fig6"].runs["rtt"])
    found = entities(core, {})
    names = [link["name"] for link in core["links"]]
    allocate(found, capacities(core), names)
    for entity in found:
        assert entity.fair_bps == pytest.approx(s.GFC2_FAIR_BPS[entity.name], rel=1e-9)
        assert entity.bottleneck == s.CHAIN[s.gfc2_bottlenecks()[entity.name]]
    # the max-min rates fill every chain link: vanilla windows are never the limit
    assert s.gfc2_utilization(s.GFC2_OWN) == pytest.approx(1.0)
    assert s.gfc2_jain(s.GFC2_VANILLA) == pytest.approx(1.0)


def test_window_limited_state():
    # the link is full: the windows' IP bytes per round trip equal its capacity
    wire = s.PACKET_BYTES / s.MSS
    for windows, delay, rates in (
        ([s.WINDOW_BYTES] * 15, s.VANILLA_DELAY, s.VANILLA_RATES),
        ([s.FIXED_WINDOW] * 15, s.FIXED_DELAY, s.FIXED_RATES),
    ):
        assert delay > 0
        assert sum(rates) * wire == pytest.approx(s.LINK_BYTES, rel=1e-9)
        assert rates == pytest.approx([w / (r + delay) for w, r in zip(windows, s.FLOW_RTTS)])
    # vanilla: 15 windows of 600,000 bytes less the pipe, about the paper's 8000 packets
    assert s.queue_packets(s.VANILLA_DELAY) == pytest.approx(8227, abs=1)
    # T = 30 ms: the equal share x 30 ms, 38,880 bytes; unfair as section 4.2.1 says
    assert s.FIXED_WINDOW == pytest.approx(38880)
    assert s.queue_packets(s.FIXED_DELAY) == pytest.approx(201, abs=1)
    assert jain(s.FIXED_RATES) == pytest.approx(0.829, abs=0.001)
    assert s.TARGET_QUEUE == pytest.approx(27.4, abs=0.05)
    # windows that do not fill the link leave no queue
    delay, rates = s.fill([1000.0] * 2, [0.1, 0.1], 1e9)
    assert delay == 0.0 and rates == [10000.0, 10000.0]


def test_level_readings_of_a_triangle_wave():
    """A queue swinging between 100 and 150 over 70 ms periods, with one spike."""
    step = 0.005
    times = np.arange(1.0, 5.0, step)
    phase = ((times - 1.0) / 0.07) % 1.0
    wave = 100 + 50 * (1 - abs(2 * phase - 1))
    wave[200] = 300  # one sample far above the oscillation
    frame = pd.Series(wave, index=times)
    readings = s.level_readings(frame, 0.07)
    assert list(readings) == list(s.READINGS)
    low, high = readings["10th / 90th percentiles"]
    assert 100 < low < 112 and 138 < high < 150
    assert readings["least / most"] == (pytest.approx(100, abs=4), 300)
    troughs, crests = readings["troughs / crests"]
    assert troughs == pytest.approx(100, abs=8) and crests == pytest.approx(150, abs=8)
    # one column per curve (the flows' windows) reads the same way
    both = s.level_readings(pd.DataFrame({"a": wave, "b": wave}, index=times), 0.07)
    assert both["10th / 90th percentiles"] == pytest.approx(readings["10th / 90th percentiles"])


@needs_core
def test_two_run_seeds_give_the_same_values(tmp_path):
    """Shortened runs of every Explicit rate control of TCP experiment, simulated with run
    seeds 1 and 2 (each seed on its own: ``atmsim reproduce`` would simulate the runs
    once for both): identical."""
    for key in seed_ids("seed001"):
        first, second = (
            run_seed(key, seed, tmp_path, ("run.duration=0.3 s",), figures=False, write=False)
            for seed in (1, 2)
        )
        assert first.error is None and second.error is None, (key, first.error, second.error)
        for one, two in zip(first.values, second.values):
            assert one == two or (math.isnan(one) and math.isnan(two)), (key, one, two)
