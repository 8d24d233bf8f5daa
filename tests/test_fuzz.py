"""The scenario fuzzer (devtools/fuzz.py): its property as a hypothesis
test, and its own machinery.

The property: every mutant of an example scenario either runs with balanced ledgers
(exit 0) or is refused with one line on stderr beginning ``error: `` and naming the file
(exit 2). The draws are derandomized, so the suite runs the same cases every time; a
failure shrinks to a small mutant and prints its mutations and its output.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from devtools import fuzz

from conftest import SCENARIOS, TINY, needs_core

EXAMPLES = fuzz.load_seeds((SCENARIOS,))
"""The example scenarios (scenarios/*.toml), which the property test mutates."""


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory):
    """One worker process for the module's cases, as a campaign runs them."""
    here = fuzz.Worker(
        tmp_path_factory.mktemp("fuzz-worker"), fuzz.WORKER_MEMORY_BYTES, fuzz.CASE_TIMEOUT_S
    )
    yield here
    here.stop()


@needs_core
@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(rng=st.randoms(use_true_random=False))
def test_every_mutant_runs_or_is_refused_in_one_line(
    worker: fuzz.Worker, rng: random.Random
) -> None:
    case = fuzz.make_case(EXAMPLES, rng, "hypothesis")
    outcome = worker.run(case)
    assert outcome is not None
    verdict, kind = fuzz.classify(case, outcome, str(worker.workdir / "case.toml"))
    assert verdict in (fuzz.OK, fuzz.BAD_INPUT), (
        f"{kind}\nsource: {case.source}\nmutations: {case.mutations}\nargs: {case.args}\n"
        f"stderr: {outcome.stderr[-2000:]}"
    )


def test_a_case_is_made_again_from_its_two_numbers() -> None:
    seeds = fuzz.load_seeds()
    first = fuzz.campaign_case(seeds, 7, 1234)
    again = fuzz.campaign_case(seeds, 7, 1234)
    assert (first.text, first.mutations, first.args) == (again.text, again.mutations, again.args)
    assert first.id == "7-1234"
    other = fuzz.campaign_case(seeds, 7, 1235)
    assert (other.text, other.mutations) != (first.text, first.mutations)


def test_mutants_stay_short_unless_the_duration_is_mutated() -> None:
    """Every case runs a few milliseconds at most (1 us with a count of 1000 or more),
    except where a mutation gave the duration itself."""
    seeds = fuzz.load_seeds()
    for index in range(300):
        case = fuzz.campaign_case(seeds, 1, index)
        if any(m.startswith(("duration:", "text:", "delete_table:", "table_to_list:",
                             "swap:", "retype:", "template_kind:"))
               for m in case.mutations):  # fmt: skip
            continue
        text = case.text.decode("utf-8", "replace")
        assert any(f'duration = "{d}"' in text for d in (*fuzz.DURATIONS, "1 us")), case


def outcome(code: int | None, stderr: str = "", **fields) -> fuzz.Outcome:
    return fuzz.Outcome(code, stderr=stderr, **fields)


CASE = fuzz.Case(id="1-0", source="md1", text=b"")


@pytest.mark.parametrize(
    ("result", "verdict", "kind"),
    [
        (outcome(0, ledger_ok=True), fuzz.OK, None),
        (outcome(0, ledger_ok=False), fuzz.FAILURE, "exit 0 without balanced ledgers"),
        (outcome(2, "error: /w/case.toml: run.duration: required\n"), fuzz.BAD_INPUT, None),
        (outcome(2, "error: a\nerror: b\n"), fuzz.FAILURE, "exit 2 with 2 lines"),
        (outcome(2, "oops /w/case.toml\n"), fuzz.FAILURE, "without 'error: '"),
        (outcome(2, "error: --seed: bad\n"), fuzz.FAILURE, "without naming the file"),
        (
            outcome(2, "error: /w/case.toml: the simulation core rejects this scenario: x\n"),
            fuzz.FAILURE,
            "validation let through what the core rejects",
        ),
        (
            outcome(1, "error: internal error: ValueError: 12 (please report it)\n"),
            fuzz.FAILURE,
            "exit 1: error: internal error: ValueError: N",
        ),
        (
            outcome(2, 'Traceback (most recent call last):\n  File "x"\nKeyError: 3\n'),
            fuzz.FAILURE,
            "traceback: KeyError: N",
        ),  # fmt: skip
        (
            outcome(None, timed_out=True, wall_s=60),
            fuzz.FAILURE,
            "timeout: no simulated work (a hang)",
        ),
        (
            outcome(None, timed_out=True, wall_s=300, hung=False),
            fuzz.FAILURE,
            "timeout: too slow, still simulating after 300 s",
        ),
        (
            outcome(None, "memory allocation of 8 bytes failed\n", died="killed by signal 6"),
            fuzz.FAILURE,
            "crash: worker killed by signal 6: memory allocation of N bytes",
        ),  # fmt: skip
        (outcome(130), fuzz.FAILURE, "exit 130"),
    ],
)
def test_classify(result: fuzz.Outcome, verdict: str, kind: str | None) -> None:
    got, got_kind = fuzz.classify(CASE, result, "/w/case.toml")
    assert got == verdict
    if kind is None:
        assert got_kind is None
    else:
        assert got_kind is not None and kind in got_kind, got_kind


@needs_core
def test_a_case_that_hangs_is_a_timeout_and_the_worker_is_replaced(tmp_path: Path) -> None:
    worker = fuzz.Worker(tmp_path, fuzz.WORKER_MEMORY_BYTES, timeout_s=0.2)
    try:
        slow = fuzz.Case(
            id="slow", source="tiny", text=TINY.replace('"10 ms"', '"1000 s"').encode()
        )
        result = worker.run(slow)
        assert result is not None and result.timed_out
        assert fuzz.classify(slow, result)[1].startswith("timeout: ")
        worker.timeout_s = 60
        quick = fuzz.Case(id="quick", source="tiny", text=TINY.encode())
        result = worker.run(quick)
        assert result is not None and result.code == 0 and result.ledger_ok
    finally:
        worker.stop()


@needs_core
def test_a_short_campaign_keeps_its_summary(tmp_path: Path) -> None:
    lines: list[str] = []
    summary = fuzz.campaign(12, seed=3, out=tmp_path, jobs=1, echo=lines.append)
    assert summary["cases"] == 12 and not summary["interrupted"]
    assert summary["ok"] + summary["bad_input"] + summary["failures"] == 12
    assert summary["failures"] == 0, summary["failure_kinds"]
    assert json.loads((tmp_path / "summary.json").read_text(encoding="utf-8")) == summary
    assert lines[-1] == f"summary: {tmp_path / 'summary.json'}"
    assert not (tmp_path / "failures.jsonl").exists()


@needs_core
def test_an_accepted_run_is_checked_for_its_record_fast_paths_and_physics(tmp_path: Path) -> None:
    """A run the fuzzer accepts reloads, reruns the same with the fast paths off, and
    keeps its sources under their peak; a summary that breaks the physics is caught."""
    from atmsim import api
    from atmsim.scenario import load_scenario, to_core

    out = tmp_path / "run"
    api.run(SCENARIOS / "mux_onoff.toml", overrides=['run.duration="5 ms"'], out=out)
    assert fuzz.accepted_run_problems(out) == []
    summary = json.loads((out / "summary.json").read_text())
    core = to_core(load_scenario(out / "scenario.toml"))
    summary["vcs"][0]["cells_sent"] *= 10
    summary["ports"][0]["utilization"] = 1.5
    problems = fuzz.physics_problems(core, summary)
    assert any("sources' peak allows" in p for p in problems), problems
    assert any("busy 1.5 of its time" in p for p in problems), problems
    # A failing check makes the case a failure.
    outcome = fuzz.Outcome(0, ledger_ok=True, problems=["round trip: x"])
    case = fuzz.campaign_case(fuzz.load_seeds(), 1, 0)
    verdict, kind = fuzz.classify(case, outcome)
    assert verdict == fuzz.FAILURE and kind.startswith("accepted run: round trip")


@needs_core
def test_a_case_that_keeps_simulating_is_not_a_hang(tmp_path: Path) -> None:
    """A hang is judged by simulated work: a run that keeps coming back from the core's
    steps outlives the timeout, and only after SLOW_FACTOR timeouts counts as too slow."""
    worker = fuzz.Worker(tmp_path, fuzz.WORKER_MEMORY_BYTES, timeout_s=1.0)
    try:
        long = fuzz.Case(
            id="long", source="tiny", text=TINY.replace('"10 ms"', '"100000 s"').encode()
        )
        result = worker.run(long)
        assert result is not None and result.timed_out and not result.hung
        assert result.wall_s >= fuzz.SLOW_FACTOR * 1.0
        assert fuzz.classify(long, result)[1].startswith("timeout: too slow")
    finally:
        worker.stop()
