"""atmsim reproduce: the registry, the verdict logic (every tolerance can fail), the
spread over run seeds, the judged-once rule, the sorted comparison of identical sources,
the command's errors, conservation in every reproduced experiment (shortened runs), and
one experiment end to end."""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from atmsim import load_scenario
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
    relative,
)
from atmsim.reproduce import (
    CSV_COLUMNS,
    FIGURE_KINDS,
    RUN_SEEDS,
    SCENARIO_DIR,
    SEED_COLUMNS,
    SEEDS,
    NullModel,
    NullPrediction,
    Outcome,
    Quantity,
    UnknownExperiment,
    crosses_bound,
    evaluate,
    judge,
    null_text,
    registry,
    run_experiments,
    seed_ids,
    seed_override,
    select,
    valid_ids,
)
from atmsim.reproduce.measures import cells_per_segment, on_share, vbr_edges
from atmsim.reproduce.papers import BY_SEED, PAPERS
from atmsim.reproduce.report import (
    combined_name,
    counts_text,
    interval,
    number,
    seed_summaries,
)
from atmsim.reproduce.stats import spread, t_cdf, t_quantile
from atmsim.scenario import resolved_toml, to_core

from conftest import needs_core, run_cli, write

# --- the registry -----------------------------------------------------------------------


def test_every_seed_has_its_experiments():
    counts = {seed: len(seed_ids(seed)) for seed in SEEDS}
    # sections 8, 9, 11, the 8 rows of Table 1 and the claims across them
    assert counts["seed000"] == 12
    # Tables 1-4, one per row; the sources / RTT claims; the buffer formula; UBR's sum
    # of windows
    assert counts["seed002"] == 3 + 4 + 4 + 9 + 3
    # one per observation of section 4.2 (each claim judged once over its configurations)
    assert counts["seed003"] == 5
    # Tables 1-6 (the buffer occupancy figure with Table 3, whose configuration it shares)
    assert counts["seed004"] == 6
    assert sum(counts.values()) == len(registry())
    for row in range(1, 9):
        assert f"seed000-table1-row{row}" in registry()
    for key in ("seed000-sec8", "seed000-sec9", "seed000-sec11"):
        assert key in registry()


def test_ids_are_unique_stable_lowercase_and_start_with_their_seed():
    ids = list(registry())
    assert len(ids) == len(set(ids))
    for key, experiment in registry().items():
        assert key == experiment.id
        assert re.fullmatch(r"seed\d{3}(-[a-z0-9]+)+", key), key
        assert experiment.seed in SEEDS


def test_every_quantity_has_a_tolerance_and_its_reason():
    for experiment in registry().values():
        assert experiment.published, experiment.id
        # The source names the paper by its short title, not by its old seedNNN id.
        short_title = BY_SEED[experiment.seed].short_title
        assert experiment.title and experiment.source.startswith(short_title + ", ")
        names = [q.name for q in experiment.published]
        assert len(names) == len(set(names)), experiment.id
        for quantity in experiment.published:
            assert isinstance(quantity.tolerance, Tolerance)
            assert len(quantity.reason) > 10, (experiment.id, quantity.name)
            # "not published" and "nothing to compare" go together
            assert (quantity.published is None) == (quantity.tolerance.kind == "report"), (
                experiment.id,
                quantity.name,
            )
        compared = [q for q in experiment.published if q.tolerance.kind != "report"]
        assert compared, experiment.id
        # an experiment either runs or refers every quantity to the one that judges it
        referring = [q for q in experiment.published if q.see is not None]
        assert (not experiment.runs) == (len(referring) == len(experiment.published))


def test_every_run_loads_its_scenario_file_and_figures_are_known():
    files = set()
    for experiment in registry().values():
        assert experiment.runs or all(q.see for q in experiment.published), experiment.id
        for run in experiment.runs.values():
            assert run.path.is_file(), run.path
            files.add(run.path.name)
            load_scenario(run.path, list(run.overrides))  # validates, does not run
        assert set(experiment.figures) <= set(FIGURE_KINDS)
        assert set(experiment.figure_runs or ()) <= set(experiment.runs)
    # every scenario file of scenarios/reproduce is used, and each explains its choices
    on_disk = {path.name for path in SCENARIO_DIR.glob("*.toml")}
    assert files == on_disk
    for name in on_disk:
        text = (SCENARIO_DIR / name).read_text()
        assert "Chosen here" in text and "CHOSEN" in text, name


def test_every_runs_resolved_scenario_reloads_to_the_same_run(tmp_path):
    """The scenario.toml a run writes (resolved_toml: what atmsim.run writes, without
    simulating) of every run of every experiment, at its first run seed: it loads back
    to the same core input, and writing it again gives the same file."""
    for experiment in registry().values():
        for name, run in experiment.runs.items():
            overrides = [*run.overrides, seed_override(experiment.seeds[0])]
            scenario = load_scenario(run.path, overrides)
            text = resolved_toml(scenario)
            label = f"{experiment.id}/{name}"
            again = load_scenario(write(tmp_path, text, "scenario.toml"))
            assert to_core(again) == to_core(scenario), label
            assert resolved_toml(again) == text, label


def test_select_expands_seeds_keeps_order_and_rejects_unknown_ids():
    assert select(["seed000"]) == seed_ids("seed000")
    assert select(["SEED000-sec8", "seed000"])[0] == "seed000-sec8"
    assert len(select(["seed000-sec8", "seed000"])) == len(seed_ids("seed000"))
    with pytest.raises(UnknownExperiment):
        select(["seed000-sec8", "seed005"])
    assert valid_ids()[: len(SEEDS)] == [paper.id for paper in PAPERS]
    # readable ids are accepted and map onto the seedNNN ones
    assert select(["tcp-over-abr-sec8", "Gfr-Dfba"]) == ["seed000-sec8", *seed_ids("seed004")]
    assert select(["fmmra"]) == seed_ids("seed003")
    assert combined_name(["seed002"]) == "seed002"
    assert combined_name(["seed000", "seed002"]) == "selected"
    assert combined_name(["seed000-sec8"]) == "selected"


# --- rows ---------------------------------------------------------------------------------


def test_evaluate_carries_notes_and_survives_a_failing_extractor():
    ok = Quantity("x", 2.0, "Mbps", relative(0.1), "because", lambda r: (2.1, "detail"), "n")
    row = evaluate("e", ok, {})
    assert row["verdict"] == "match" and row["note"] == "n; detail"
    assert row["reason"] == "because"

    def broken(results):
        raise ValueError("no samples")

    row = evaluate("e", Quantity("y", 1.0, "", EXACT, "because", broken), {})
    assert math.isnan(row["simulated"]) and row["verdict"] == "miss"
    assert "not computed: no samples" in row["note"]


def test_measures_helpers():
    assert vbr_edges(0.3, 0.1, 1.0) == pytest.approx([0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9])
    assert vbr_edges(0.3, 0.1, 0.2) == []
    assert number(18040.0) == "18,040" and number(109.58) == "109.6"
    assert number(math.nan) == "NaN"


def test_cells_and_vbr_share():
    assert cells_per_segment(512) == 12  # 512 + 56 bytes in 48-byte payloads
    assert cells_per_segment(9180) == 193
    # TCP over ABR's (Kalyanaraman et al., 1996) VBR: on 100 ms from 2 ms, off 100 ms, over 2 s: on
    # half the time
    assert on_share(0.002, 0.1, 0.1, 2.0) == pytest.approx(0.5)
    assert on_share(0.0, 0.1, 0.3, 1.0) == pytest.approx(0.3)  # on at 0, 0.4, 0.8 (cut)


# --- every verdict can fail ---------------------------------------------------------------


@pytest.mark.parametrize(
    "tolerance, published, matching, missing",
    [
        (relative(0.05), 100.0, (95.0, 105.0, 100.0), (94.9, 105.1)),
        (relative(0.1, floor=5), 10.0, (5.0, 15.0), (4.9, 15.1)),
        (absolute(0.01), 1.0, (0.99, 1.01), (0.989, 1.011)),
        (factor(2.0), 0.18, (0.09, 0.36), (0.089, 0.361, 0.0)),
        (EXACT, 0.0, (0.0,), (1e-9, -1e-9)),
        (ABOVE, 0.0, (1e-9, 176.0), (0.0, -1.0)),
        (above(0.01), 0.0, (0.0101,), (0.01, 0.005)),
        (BELOW, 1.0, (0.99, 0.0), (1.0, 1.5)),
        (below(0.01), 0.0, (-0.02,), (-0.01, 0.0)),
    ],
)
def test_every_tolerance_matches_and_misses(tolerance, published, matching, missing):
    for value in matching:
        assert tolerance.verdict(published, value) == "match", (tolerance, value)
    for value in missing:
        assert tolerance.verdict(published, value) == "miss", (tolerance, value)
    # a value that cannot be computed is a miss, whatever the tolerance
    assert tolerance.verdict(published, math.nan) == "miss"
    assert tolerance.verdict(published, None) == "miss"
    # nothing published: nothing to judge
    assert tolerance.verdict(None, published) == "n/a"


def test_report_is_never_judged():
    assert REPORT.verdict(1.0, 1.0) == "n/a" and REPORT.verdict(1.0, 1e9) == "n/a"


# --- the spread over run seeds ----------------------------------------------------------


def test_student_t_quantiles_are_the_tabulated_ones():
    # two-sided 95 % points of Student's t (any statistics table)
    for dof, expected in ((1, 12.706), (2, 4.303), (4, 2.776), (9, 2.262), (30, 2.042)):
        assert t_quantile(0.975, dof) == pytest.approx(expected, abs=1e-3)
    assert t_quantile(0.975, 1e6) == pytest.approx(1.960, abs=1e-3)
    assert t_quantile(0.025, 9) == pytest.approx(-t_quantile(0.975, 9))
    assert t_cdf(0.0, 5) == pytest.approx(0.5)
    assert t_cdf(t_quantile(0.9, 7), 7) == pytest.approx(0.9, abs=1e-9)


def test_spread_mean_and_interval_on_known_numbers():
    result = spread([1.0, 2.0, 3.0, 4.0, 5.0])
    # mean 3, s = sqrt(2.5), half width t(0.975, 4) x s / sqrt(5) = 2.7764 x 0.7071
    assert result.mean == 3.0 and result.n == 5 and result.missing == 0
    assert result.half_width == pytest.approx(2.776445 * math.sqrt(2.5 / 5), rel=1e-6)
    assert (result.low, result.high) == pytest.approx((1.036757, 4.963243), abs=1e-6)
    same = spread([7.5] * 10)
    assert (same.mean, same.low, same.high) == (7.5, 7.5, 7.5)
    one = spread([4.0])
    assert one.mean == 4.0 and math.isnan(one.low) and math.isnan(one.high)
    gaps = spread([1.0, math.nan, 3.0])
    assert gaps.mean == 2.0 and gaps.n == 2 and gaps.missing == 1
    assert math.isnan(spread([]).mean)


def test_judge_uses_the_mean_and_shows_the_interval():
    quantity = Quantity("x", 10.0, "Mbps", relative(0.1), "because", note="n")
    # one run seed far off, the mean within 10 %: judged on the mean
    row = judge("e", quantity, [10.0, 10.0, 12.9], ["a", "b", "c"], (1, 2, 3))
    assert row["simulated"] == pytest.approx(10.966667) and row["verdict"] == "match"
    assert row["ci95_low"] < 10.0 < 12.0 < row["ci95_high"] and row["n_seeds"] == 3
    # the interval reaches past 11 (10 % above 10): the match is flagged as fragile
    assert row["note"] == "n; run seed 1: a; the 95 % interval crosses the tolerance's bound"
    # the mean outside: a miss, although two run seeds of three are exact
    assert judge("e", quantity, [10.0, 10.0, 14.0])["verdict"] == "miss"
    # a run seed whose value cannot be computed makes the row a miss
    row = judge("e", quantity, [10.0, math.nan], ["", "not computed: no samples"], (1, 2))
    assert row["verdict"] == "miss" and row["n_seeds"] == 1
    assert "not computed in 1 of 2 run seeds (run seed 2: not computed: no samples)" in row["note"]
    # one run seed: no interval, no run seed label
    row = judge("e", quantity, [10.5], ["a"])
    assert math.isnan(row["ci95_low"]) and row["note"] == "n; a"
    assert interval(row) == "-"
    assert interval({"ci95_low": 1.0, "ci95_high": 2.5}) == "[1, 2.5]"


def test_an_interval_across_the_tolerance_is_flagged():
    assert crosses_bound(relative(0.25), 64.0, 47.0, 49.0)  # 48 is the lower bound
    assert not crosses_bound(relative(0.25), 64.0, 48.7, 48.9)
    assert crosses_bound(above(0.01), 0.0, -0.004, 0.05)
    assert not crosses_bound(above(0.01), 0.0, 0.02, 0.05)
    assert crosses_bound(EXACT, 0.0, -0.01, 0.05) and not crosses_bound(EXACT, 0.0, 0.0, 0.0)
    assert not crosses_bound(EXACT, 0.0, 0.002, 0.05)  # a miss whatever the mean
    assert crosses_bound(factor(2.0), 1.0, 1.5, 2.5) and not crosses_bound(REPORT, 1.0, 0, 9)
    assert not crosses_bound(BELOW, 1.0, math.nan, math.nan)  # one run seed: no interval
    quantity = Quantity("gain", 0.0, "", above(0.01), "because")
    row = judge("e", quantity, [0.05, -0.01, 0.04, 0.0])  # mean 0.02: a fragile match
    assert row["verdict"] == "match"
    assert "the 95 % interval crosses the tolerance's bound" in row["note"]


def test_a_quantity_judged_elsewhere_is_not_judged_again():
    quantity = Quantity("q", 15073.0, "cells", relative(0.25), "because", see="seed002-table1-n15")
    row = judge("e", quantity, [])
    assert row["verdict"] == "n/a" and row["tolerance"] == "-"
    assert "judged in seed002-table1-n15" in row["note"]


def test_a_match_that_a_null_model_also_gives_is_set_apart():
    mcr = NullModel("mcr-only", "each VC gets exactly its MCR")
    equal = NullModel("equal-share", "every VC gets an equal share")
    quantity = Quantity(
        "VC1",
        11.86,
        "Mbps",
        relative(0.25),
        "because",
        nulls=(NullPrediction(mcr, 11.0), NullPrediction(equal, 25.4)),
    )
    row = judge("e", quantity, [12.0, 12.2])
    # 11.0 is within 25 % of 11.86: the MCR alone would match; the equal share not
    assert row["verdict"] == "match" and row["beats_nulls"] == "no"
    assert row["nulls"] == [("mcr-only", 11.0, "match"), ("equal-share", 25.4, "miss")]
    assert null_text(row["nulls"]) == "mcr-only 11 match; equal-share 25.4 miss"
    lonely = Quantity(
        "VC1", 11.86, "Mbps", relative(0.25), "because", nulls=(NullPrediction(equal, 25.4),)
    )
    beating = judge("e", lonely, [12.0, 12.2])
    assert beating["beats_nulls"] == "yes"
    # a miss is neither; a row without null models neither
    assert judge("e", lonely, [30.0])["beats_nulls"] == ""
    assert judge("e", Quantity("q", 1.0, "", relative(0.1), "r"), [1.0])["beats_nulls"] == ""
    assert counts_text([row, beating, {"verdict": "miss"}]) == (
        "2 match (1 beat every null model), 1 miss (0 n/a)"
    )


def test_a_row_a_null_model_matches_can_be_shown_unjudged():
    """``Quantity.unjudged``: the published value, the tolerance and the null models'
    verdicts stay, the verdict is n/a, and the note says why and what it would be."""
    formula = NullModel("formula", "ERICA's target times the overheads")
    quantity = Quantity(
        "throughput",
        107.13,
        "Mbps",
        relative(0.05),
        "because",
        nulls=(NullPrediction(formula, 109.16),),
        unjudged="the formula matches within the tolerance",
    )
    row = judge("e", quantity, [104.0, 104.6])
    assert row["verdict"] == "n/a" and row["beats_nulls"] == ""
    assert row["published_text"] == "107.13" and row["tolerance"] == "±5 %"
    assert row["nulls"] == [("formula", 109.16, "match")]
    assert "not judged: the formula matches within the tolerance" in row["note"]
    assert "it would be a match" in row["note"]
    assert "would be a miss" in judge("e", quantity, [90.0])["note"]


def test_table_csv_carries_the_null_models(tmp_path):
    from atmsim.reproduce import write_csv

    equal = NullModel("equal-share", "every VC gets an equal share")
    quantity = Quantity(
        "VC1", 11.86, "Mbps", relative(0.25), "because", nulls=(NullPrediction(equal, 25.4),)
    )
    path = write_csv(tmp_path / "table.csv", [judge("e", quantity, [12.0])])
    with path.open() as handle:
        (row,) = list(csv.DictReader(handle))
    assert list(row) == list(CSV_COLUMNS)
    assert row["null_models"] == "equal-share 25.4 miss" and row["beats_nulls"] == "yes"


def test_tables_are_written_whole_or_not_at_all(tmp_path):
    """table.csv and seeds.csv replace an earlier file only once the new one is whole: a
    row that fails leaves the old file as it was and no temporary file behind."""
    from atmsim.reproduce import write_csv, write_seed_csv

    quantity = Quantity("VC1", 11.86, "Mbps", relative(0.25), "because")
    good = judge("e", quantity, [12.0])
    for write_table, name in ((write_csv, "table.csv"), (write_seed_csv, "seeds.csv")):
        path = write_table(tmp_path / name, [good])
        before = path.read_bytes()
        with pytest.raises(KeyError):
            write_table(path, [good, {"experiment": "e"}])
        assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["seeds.csv", "table.csv"]


def test_seed_summaries_count_per_document():
    def outcome(experiment: str, verdicts: list[str]) -> Outcome:
        return Outcome(experiment=experiment, rows=[{"verdict": v} for v in verdicts])

    lines = seed_summaries(
        [
            outcome("seed000-sec8", ["match", "miss", "n/a"]),
            outcome("seed000-sec9", ["match"]),
            outcome("seed003-queue-10tcp-10ms", ["miss", "miss"]),
        ]
    )
    assert lines == [
        "tcp-over-abr (seed000): 2 match (0 beat every null model), 1 miss (1 n/a) in 2 "
        "experiments",
        "fmmra (seed003): 0 match (0 beat every null model), 2 miss (0 n/a) in 1 experiment",
    ]


# --- judged once ----------------------------------------------------------------------


def _configuration(run) -> str:
    """The resolved configuration of a run (its core JSON), whatever file it comes from."""
    core = to_core(load_scenario(run.path, list(run.overrides)))
    return json.dumps(core, sort_keys=True, default=str)


def test_a_published_value_is_judged_once():
    """No two judged quantities compare the same published value, under the same name,
    with the same simulated configurations: a value the paper prints in several tables is
    judged in one experiment and referred to (``see``) from the others."""
    configurations: dict = {}
    judged: dict = {}
    for experiment in registry().values():
        runs = tuple(
            sorted(
                configurations.setdefault((run.scenario, run.overrides), _configuration(run))
                for run in experiment.runs.values()
            )
        )
        for quantity in experiment.published:
            if quantity.see is not None or quantity.tolerance.kind == "report":
                continue
            key = (runs, quantity.name, quantity.published)
            assert key not in judged, (experiment.id, quantity.name, judged.get(key))
            judged[key] = experiment.id


def test_references_point_at_the_same_value_and_configuration():
    experiments = registry()
    for experiment in experiments.values():
        for quantity in experiment.published:
            if quantity.see is None:
                continue
            target = experiments[quantity.see]
            same = [
                q
                for q in target.published
                if q.name == quantity.name and q.published == quantity.published and q.see is None
            ]
            assert same, (experiment.id, quantity.name)
    # ABR and UBR buffering (Kalyanaraman et al., 1998) prints its 15-source, 1000 km result in
    # Tables 1, 2 and 4: one configuration
    n15 = experiments["seed002-table1-n15"].runs["main"]
    table2 = registry()["seed002-table2-1000km"]
    table4 = registry()["seed002-table4-rtt30-fb10ms"]
    assert not table2.runs and not table4.runs
    from atmsim.reproduce.seed002 import _lengths

    for scenario in ("seed002-table2.toml", "seed002-table4.toml"):
        other = type(n15)(scenario, _lengths(1000, 1000, 1000))
        assert _configuration(other) == _configuration(n15), scenario


# --- identical sources are compared as sorted sets ------------------------------------


class _FakeResult:
    """Just enough of a Result for the throughput extractors."""

    def __init__(self, goodputs: list[float]):
        self.flows = pd.DataFrame(
            {"name": [f"tcp{i}" for i in range(1, len(goodputs) + 1)], "goodput_mbps": goodputs}
        )


def test_per_source_throughputs_are_compared_sorted():
    row5 = registry()["seed000-table1-row5"]  # published T1..T5 = 1.5 1.4 3.0 1.6 1.6
    ranked = [q for q in row5.published if q.name.startswith("per-source throughput, rank")]
    assert [q.published for q in ranked] == [3.0, 1.6, 1.6, 1.5, 1.4]
    assert "sorted" in ranked[0].note and "1.5 / 1.4 / 3 / 1.6 / 1.6" in ranked[0].note
    # any numbering of the same throughputs gives the same values, hence the same verdicts
    simulated = [3.1, 1.7, 1.5, 1.45, 1.0]  # the smallest more than 25 % below 1.4
    for order in ([0, 1, 2, 3, 4], [4, 3, 2, 1, 0], [2, 0, 4, 1, 3]):
        results = {"row": _FakeResult([simulated[i] for i in order])}
        rows = [evaluate(row5.id, q, results) for q in ranked]
        assert [r["simulated"] for r in rows] == simulated
        assert [r["verdict"] for r in rows] == ["match", "match", "match", "match", "miss"]
    for row in range(1, 9):
        experiment = registry()[f"seed000-table1-row{row}"]
        published = [q.published for q in experiment.published if "rank" in q.name]
        assert published == sorted(published, reverse=True)


def test_percent_of_max_is_shown_against_an_independent_maximum():
    from atmsim.reproduce.seed000 import IDEAL_MBPS

    # ERICA's 90 % of 155.52 Mbps less 124.41 Mbps of VBR half the time, as ABR cells
    # (31 of 32 carry data) of 12-cell, 512-byte segments
    cells = (0.5 * (0.9 * 155.52 - 124.41) + 0.5 * 0.9 * 155.52) * 1e6 / 424
    assert IDEAL_MBPS == pytest.approx(cells * 31 / 32 * 512 / 12 * 8 / 1e6)
    for row in range(1, 9):
        experiment = registry()[f"seed000-table1-row{row}"]
        percent = next(q for q in experiment.published if q.name == "% of maximum")
        assert percent.tolerance.kind == "report" and percent.published is None
        assert set(experiment.runs) == {"row"}  # no run of row 8 to divide by
        results = {"row": _FakeResult([IDEAL_MBPS / 4, IDEAL_MBPS / 4])}
        assert evaluate(experiment.id, percent, results)["simulated"] == pytest.approx(50.0)


def test_every_experiment_runs_over_the_run_seeds():
    """Ten run seeds, or one where no run draws a random number (ten would be ten
    identical runs)."""
    from atmsim.determinism import seed_dependence

    assert RUN_SEEDS == tuple(range(1, 11))
    for experiment in registry().values():
        if experiment.runs and experiment.seeds != RUN_SEEDS:
            assert len(experiment.seeds) == 1, experiment.id
            for run in experiment.runs.values():
                core = to_core(load_scenario(run.path, list(run.overrides)))
                assert seed_dependence(core) == [], (experiment.id, run)


# --- the command ------------------------------------------------------------------------


def test_cli_unknown_id_exits_2_with_one_line(tmp_path):
    result = run_cli("reproduce", "seed000-sec8", "seed042", "--out", str(tmp_path))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(
        "error: unknown experiment 'seed042'; valid: tcp-over-abr, tcp-explicit-rate, "
        "abr-ubr-buffers"
    )
    assert "tcp-over-abr-table1-row8" in lines[0] and "seedNNN aliases" in lines[0]
    assert not any(tmp_path.iterdir())  # nothing ran


def test_cli_list(tmp_path):
    for args in (("reproduce", "--list"), ("reproduce",)):
        result = run_cli(*args)
        assert result.returncode == 0, result.stderr
        assert "seed000-sec8" in result.stdout and "seed003-queue-10tcp-10ms" in result.stdout
        # each document's full citation and readable ids, the seedNNN ids as aliases
        for paper in PAPERS:
            assert f"{paper.id} (alias {paper.seed})" in result.stdout
            assert paper.title.split(" ")[0] in result.stdout
        assert "Buffer Management for the GFR Service" in result.stdout
        assert "98-0405" in result.stdout and "tcp-over-abr-sec8" in result.stdout
        # Under its paper's heading an experiment's source omits the paper's title.
        assert "section 8, Figure 5" in result.stdout
        assert "TCP over ABR, section 8" not in result.stdout


def test_short_citations():
    """The short citations the code and the docs use, and docs/model.md's list of them."""
    assert [paper.short_citation for paper in PAPERS] == [
        "TCP over ABR (Kalyanaraman et al., 1996)",
        "Explicit rate control of TCP (Satyavolu et al., 1998)",
        "ABR and UBR buffering (Kalyanaraman et al., 1998)",
        "TCP over FMMRA (An et al., 1998)",
        "GFR buffer management (Goyal et al., 1998)",
    ]
    model = (Path(__file__).resolve().parents[1] / "docs" / "model.md").read_text()
    listed = " ".join(model.split("## The five documents")[1].split("\n## ")[0].split())
    for paper in PAPERS:
        assert paper.short_citation in listed and paper.title in listed


def test_cli_bad_jobs():
    result = run_cli("reproduce", "seed000-sec8", "--jobs", "0")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1


# --- real runs --------------------------------------------------------------------------


@needs_core
def test_conservation_in_every_reproduced_experiment(tmp_path):
    """Every experiment, each run shortened to 0.2 s, over two run seeds: every run's cell,
    packet and byte ledgers balance, every quantity is computed or reported as not
    computed, and the two run seeds make each row's mean, interval and seeds.csv."""
    ids = list(registry())
    outcomes = run_experiments(
        ids,
        tmp_path,
        jobs=2,
        extra_overrides=("run.duration=0.2 s",),
        figures=False,
        seeds=(1, 2),
    )
    assert [o.experiment for o in outcomes] == ids
    for outcome in outcomes:
        assert outcome.error is None, (outcome.experiment, outcome.error)
        assert outcome.ledgers_ok, (outcome.experiment, outcome.ledger_problems)
        experiment = registry()[outcome.experiment]
        assert len(outcome.rows) == len(experiment.published)
        assert (outcome.out_dir / "table.csv").is_file()
        if not experiment.runs:  # refers every quantity to another experiment
            assert outcome.seeds == ()
            assert all(row["verdict"] == "n/a" for row in outcome.rows)
            continue
        assert outcome.seeds == (1, 2)
        for row in outcome.rows:
            assert row["seeds"] == (1, 2) and len(row["values"]) == 2
        with (outcome.out_dir / "seeds.csv").open() as handle:
            lines = list(csv.DictReader(handle))
        assert tuple(lines[0]) == SEED_COLUMNS
        assert len(lines) == 2 * len(experiment.published)
        for name in experiment.runs:  # run seed 1 wrote the run files
            directory = outcome.out_dir if len(experiment.runs) == 1 else outcome.out_dir / name
            assert (directory / "summary.json").is_file()
            header = (directory / "scenario.toml").read_text()
            assert header.startswith("# atmsim reproduce") and "run.seed=1" in header
            # the file as written reloads, and writes back as itself under its label
            assert header.endswith(resolved_toml(load_scenario(directory / "scenario.toml")))


@needs_core
def test_conservation_and_every_quantity_at_full_length(tmp_path):
    """Every experiment as reproduced, run seed 1 only (full length, no figures): the
    ledgers balance and every quantity is computed."""
    outcomes = run_experiments(list(registry()), tmp_path, jobs=2, figures=False, seeds=(1,))
    for outcome in outcomes:
        assert outcome.error is None, (outcome.experiment, outcome.error)
        assert outcome.ledgers_ok, (outcome.experiment, outcome.ledger_problems)
        for row in outcome.rows:
            if row["see"] is None:
                assert math.isfinite(row["simulated"]), (outcome.experiment, row)
            assert row["verdict"] in ("match", "miss", "n/a")


@needs_core
def test_cli_end_to_end_one_experiment(tmp_path):
    """The cheapest full-length experiment through the command, over its ten run seeds:
    its folder, its tables, the summary lines."""
    result = run_cli("reproduce", "seed000-sec8", "--out", str(tmp_path), "--jobs", "2")
    assert result.returncode == 0, result.stderr
    folder = tmp_path / "seed000-sec8"
    for name in (
        "scenario.toml",
        "summary.json",
        "series.parquet",
        "table.csv",
        "seeds.csv",
        "window.png",
        "acr.png",
        "sequence.png",
        "queue.png",
    ):
        assert (folder / name).is_file(), name
    assert (folder / "scenario.toml").read_text().startswith("# atmsim reproduce seed000-sec8")
    load_scenario(folder / "scenario.toml")  # the resolved scenario reloads
    with (folder / "table.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert tuple(rows[0]) == CSV_COLUMNS
    by_name = {row["quantity"]: row for row in rows}
    assert by_name["total TCP throughput"]["published"] == "103.32"
    # section 8's rows are what null models predict: shown with their values and the
    # null models' verdicts, not judged
    clr = by_name["CLR"]
    assert clr["simulated"] == "0" and clr["verdict"] == "n/a"
    assert clr["null_models"] == "no-loss 0 match" and "it would be a match" in clr["note"]
    for row in rows:
        assert row["verdict"] == "n/a" and "not judged:" in row["note"]
        assert row["n_seeds"] == str(len(RUN_SEEDS))
        low, mean, high = (float(row[key]) for key in ("ci95_low", "simulated", "ci95_high"))
        assert low <= mean <= high
    with (folder / "seeds.csv").open() as handle:
        assert len(list(csv.DictReader(handle))) == len(RUN_SEEDS) * len(rows)
    assert (tmp_path / "selected.csv").is_file()
    assert "[1/1] seed000-sec8" in result.stdout and "10 run seeds" in result.stdout
    assert re.search(
        r"^tcp-over-abr \(seed000\): 0 match \(0 beat every null model\), 0 miss "
        r"\(4 n/a\) in 1 experiment$",
        result.stdout,
        re.M,
    )
    final = r"^0 match \(0 beat every null model\), 0 miss \(4 n/a\) in 1 experiment; .* s wall"
    assert re.search(final, result.stdout, re.M)


@pytest.mark.parametrize("columns", ["80", "120"])
def test_the_comparison_reads_at_80_columns(columns, monkeypatch, capsys):
    """Below 160 columns (COLUMNS, also when piped) the comparison goes experiment by
    experiment: no line wider than the screen, no number folded across lines."""
    from atmsim.reproduce.report import print_results

    monkeypatch.setenv("COLUMNS", columns)
    quantity = Quantity(
        "longest round trip of the 70 ms group, over the whole run",
        600.0,
        "ms",
        relative(0.10),
        "because",
    )
    row = judge("seed001-fig2", quantity, [540.25, 541.75])
    row["note"] = "a long note " * 12
    print_results([Outcome(experiment="seed001-fig2", rows=[row])])
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= int(columns)
    assert any("541" in line and "600" in line and "±10 %" in line for line in lines), out
    assert "a long note" in out and "seed001-fig2" in out


def test_the_comparison_is_one_table_when_wide(monkeypatch, capsys):
    from atmsim.reproduce.report import print_results

    monkeypatch.setenv("COLUMNS", "200")
    quantity = Quantity("VC1", 11.86, "Mbps", relative(0.25), "because")
    print_results([Outcome(experiment="e", rows=[judge("e", quantity, [12.0])])])
    header = [line for line in capsys.readouterr().out.splitlines() if "quantity" in line]
    assert header and "nulls" in header[0] and "note" in header[0]
