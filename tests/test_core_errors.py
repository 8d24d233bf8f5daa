"""Errors out of the compiled core reach Python as one-line exceptions, never as a crash.

A core JSON the core rejects is a ``ValueError`` with one line naming the JSON path.
A panic in the core (a bug: no valid input reaches one, so the binding has a hidden
``_panic_for_test`` to cause one) is a ``RuntimeError`` whose one-line message starts
with "internal error:", with nothing printed on stderr; the simulation it happened in
is poisoned, and every later call on it raises the same kind of error.
"""

from __future__ import annotations

import json

import pytest

from atmsim.scenario import to_core, tomllib, validate_scenario

from conftest import REPO, TINY, needs_core


def core_json(text: str = TINY) -> dict:
    return json.loads(json.dumps(to_core(validate_scenario(tomllib.loads(text)))))


@needs_core
def test_a_panic_is_a_one_line_internal_error_with_nothing_on_stderr(capfd):
    from atmsim import _core

    for _ in range(2):  # the quiet hook stays in place
        with pytest.raises(RuntimeError) as error:
            _core._panic_for_test()
        message = str(error.value)
        # The two-line panic message comes out on one line, with its location.
        assert message.startswith("internal error: a deliberate panic / for the tests at ")
        assert "lib.rs:" in message
        assert "\n" not in message
    assert capfd.readouterr().err == ""


@needs_core
def test_a_panic_poisons_its_simulation(capfd):
    from atmsim import _core

    sim = _core.Simulation(json.dumps(core_json()))
    sim.advance(1_000_000)
    assert sim.now_ps == 1_000_000
    with pytest.raises(RuntimeError, match="^internal error: a deliberate panic for the tests"):
        sim._panic_for_test()
    later_calls = [
        lambda: sim.advance(2_000_000),
        lambda: sim.now_ps,
        lambda: sim.duration_ps,
        lambda: sim.events,
        sim.finish,
        sim._panic_for_test,
    ]
    for call in later_calls:
        with pytest.raises(RuntimeError) as error:
            call()
        message = str(error.value)
        assert message.startswith("internal error: the simulation is unusable"), message
        assert "a deliberate panic for the tests" in message and "\n" not in message
    assert capfd.readouterr().err == ""
    # Other simulations are not affected.
    other = _core.Simulation(json.dumps(core_json()))
    other.advance(other.duration_ps)
    summary, _ = other.finish()
    assert json.loads(summary)["completed"] is True


@needs_core
def test_a_scenario_error_stays_a_one_line_value_error():
    from atmsim import _core

    core = core_json()
    core["links"][0]["delay_ps"] = 10**16
    with pytest.raises(ValueError) as error:
        _core.Simulation(json.dumps(core))
    assert str(error.value) == (
        "core scenario: links[0].delay_ps = 10000000000000000 is outside [0, 1000000000000000]"
    )
    for text in ("{", '{"duration_ps": 1,\n "seed": "x"}', "[]"):
        with pytest.raises(ValueError) as error:
            _core.Simulation(text)
        assert str(error.value).startswith("core scenario: ")
        assert "\n" not in str(error.value)


@needs_core
def test_a_finished_simulation_says_so():
    from atmsim import _core

    sim = _core.Simulation(json.dumps(core_json()))
    sim.finish()
    with pytest.raises(RuntimeError, match="^simulation already finished$"):
        sim.advance(1)


def test_release_builds_unwind_on_panic():
    # The binding can catch a panic only if it unwinds.
    profile = tomllib.loads((REPO / "Cargo.toml").read_text(encoding="utf-8"))["profile"]
    assert profile["release"]["panic"] == "unwind"
    assert profile.get("bench", {}).get("panic", "unwind") == "unwind"
