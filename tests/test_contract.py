"""Python and the Rust core agree on one contract: docs/core-schema.json.

The JSON Schema of the core JSON is generated from the Rust scenario types (the
Rust test tests/schema.rs of atmsim-core fails when the checked-in file is not
theirs). Here: the core JSON of every example and every reproduce run validates
against it; the schema and the core reject the same broken documents (an unknown
key, a value just out of range); and the key tables of docs/core-interface.md are
rendered from it. Regenerate the schema and the tables with
``bash scripts/update_contract.sh``.
"""

from __future__ import annotations

import copy
import importlib.util
import json
from typing import Any, Callable

import pytest
from jsonschema import Draft202012Validator

from atmsim.scenario import limits, load_scenario, to_core, tomllib, validate_scenario
from atmsim.scenario.core_schema import core_range
from atmsim.units import parse_time_ps
from devtools.fingerprints import fingerprint_runs

from conftest import FLOW_TINY, REPO, TINY, needs_core

SCHEMA = json.loads((REPO / "docs" / "core-schema.json").read_text(encoding="utf-8"))
VALIDATOR = Draft202012Validator(SCHEMA)
RUNS = fingerprint_runs()


def schema_errors(core: dict) -> list[str]:
    """The schema's complaints about `core`, as 'path: message'."""
    errors = sorted(VALIDATOR.iter_errors(core), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors]


def core_json(text: str) -> dict:
    """The core JSON of a scenario given as TOML text, as sent (through json)."""
    return json.loads(json.dumps(to_core(validate_scenario(tomllib.loads(text)))))


def test_the_schema_is_a_draft_2020_12_schema():
    Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize("name", sorted(RUNS))
def test_the_core_json_of_every_run_validates(name: str):
    path, overrides = RUNS[name]
    core = json.loads(json.dumps(to_core(load_scenario(path, overrides))))
    assert schema_errors(core) == []


def set_at(doc: dict, path: tuple, value: Any) -> None:
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value


# (what, scenario, change, JSON path the core names)
BROKEN: list[tuple[str, str, Callable[[dict], None], str]] = [
    ("an unknown top-level key", TINY, lambda c: c.update(extra=1), "extra"),
    (
        "an unknown link key",
        TINY,
        lambda c: set_at(c, ("links", 0, "rate"), 1),
        "links[0].rate",
    ),
    (
        "an unknown key of a parameterless policy",
        TINY,
        lambda c: set_at(c, ("links", 0, "policy", "threshold"), 5),
        "links[0].policy",
    ),
    (
        "a misspelt TCP key of a flow",
        FLOW_TINY,
        lambda c: set_at(c, ("flows", 0, "windw_scale"), 3),
        "flows[0]",
    ),
    (
        "a delay just above 1000 s",
        TINY,
        lambda c: set_at(c, ("links", 0, "delay_ps"), 10**15 + 1),
        "links[0].delay_ps",
    ),
    (
        "an IP link at 0.001 bit/s",
        FLOW_TINY.replace('rate = "155.52 Mbps"', 'rate = "155.52 Mbps"\nlayer = "ip"'),
        lambda c: set_at(c, ("links", 0, "bit_rate_bps"), 0.001),
        "links[0].bit_rate_bps",
    ),
    (
        "a duration of 0",
        TINY,
        lambda c: c.update(duration_ps=0),
        "duration_ps",
    ),
    (
        "an MSS above 65495 bytes",
        FLOW_TINY,
        lambda c: set_at(c, ("flows", 0, "mss_bytes"), 65496),
        "flows[0].mss_bytes",
    ),
    (
        "a probe period below 1 ns",
        TINY,
        lambda c: set_at(c, ("probes", "period_ps"), 999),
        "probes.period_ps",
    ),
]


@pytest.mark.parametrize("what, text, change, path", BROKEN, ids=[b[0] for b in BROKEN])
def test_the_schema_rejects_a_broken_document(
    what: str, text: str, change: Callable[[dict], None], path: str
):
    core = core_json(text)
    assert schema_errors(core) == []
    broken = copy.deepcopy(core)
    change(broken)
    assert schema_errors(broken), f"the schema accepts {what}"


@needs_core
@pytest.mark.parametrize("what, text, change, path", BROKEN, ids=[b[0] for b in BROKEN])
def test_the_core_rejects_the_same_document_naming_its_path(
    what: str, text: str, change: Callable[[dict], None], path: str
):
    from atmsim._core import Simulation

    core = core_json(text)
    Simulation(json.dumps(core))
    change(core)
    with pytest.raises(ValueError) as error:
        Simulation(json.dumps(core))
    message = str(error.value)
    assert message.startswith(f"core scenario: {path}"), message
    assert "\n" not in message


def load_generator() -> Any:
    """scripts/core_interface.py as a module."""
    spec = importlib.util.spec_from_file_location(
        "core_interface", REPO / "scripts" / "core_interface.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_key_tables_of_the_docs_are_rendered_from_the_schema():
    generator = load_generator()
    doc = (REPO / "docs" / "core-interface.md").read_text(encoding="utf-8")
    assert generator.rewrite(doc, generator.render(SCHEMA)) == doc, (
        "docs/core-interface.md is not current: run python scripts/core_interface.py"
    )


def test_the_tables_name_every_key_with_its_range():
    text = load_generator().render(SCHEMA)
    # Every object of the schema has its section, every key its row.
    for name, definition in SCHEMA["$defs"].items():
        assert f"### {name}\n" in text
        for key in definition.get("properties", {}):
            assert f"| `{key}` |" in text, f"{name}.{key}"
    assert "| `delay_ps` | integer | required | [0, 10^15] ([0, 1,000 s]) |" in text
    assert "| `w_q` | number | `0.002` | (0, 1] |" in text
    assert "| `period_ps` | integer | `0` | 0 or [1,000, 10^18] ([1 ns, 10^6 s]) |" in text


def test_the_package_ships_the_schema_as_generated():
    """Python reads the core's ranges from its own copy of the schema."""
    shipped = REPO / "python" / "atmsim" / "scenario" / "core-schema.json"
    assert json.loads(shipped.read_text(encoding="utf-8")) == SCHEMA


@pytest.mark.parametrize(
    "where, written",
    [
        ("AlgorithmSpec[erica].interval_ps", limits.INTERVAL_RANGE),
        ("AlgorithmSpec[erica_plus].t0_ps", limits.INTERVAL_RANGE),
        ("RateControlSpec.interval_ps", limits.INTERVAL_RANGE),
        ("AbrParams.trm_ps", limits.ABR_TRM),
        ("AbrParams.adtf_ps", limits.ABR_ADTF),
        ("TimerMode[coarse].tick_ps", limits.TCP_TICK),
        ("FlowSpec.delayed_ack_ps", ("0 s", limits.TCP_MAX_RECEIVER_TIME)),
        ("FlowSpec.processing_ps", ("0 s", limits.TCP_MAX_RECEIVER_TIME)),
        ("LinkSpec.delay_ps", ("0 s", limits.MAX_LINK_DELAY)),
        ("ProbeSpec.period_ps", limits.PROBE_PERIOD),
    ],
)
def test_time_ranges_written_in_the_scenarios_units_are_the_cores(where: str, written: tuple):
    """Times keep their ranges as a person writes them ("1 us"); they are the core's."""
    lo, hi, lo_open = core_range(where)
    assert (parse_time_ps(written[0]), parse_time_ps(written[1]), lo_open) == (lo, hi, False)


def test_core_range_reads_each_kind_of_place():
    assert core_range("seed") == (0, 2**64 - 1, False)
    assert core_range("VcSpec.links") == (1, 255, False)
    assert core_range("AlgorithmSpec[erica_plus].b") == (0.0, 10.0, True)
    assert core_range("FrameSize.fixed").hi == 65535
    with pytest.raises(KeyError):
        core_range("LinkSpec.no_such_key")
