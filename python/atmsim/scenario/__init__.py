"""The TOML scenario: its models, loading with ``--set`` overrides, and the core JSON.

A scenario file has the sections ``[run]``, ``[nodes]``, ``[links.<name>]``,
``[vcs.<name>]``, ``[sources.<name>]``, ``[flows.<name>]`` and ``[probes]``
(docs/scenarios.md and the docstrings of the table classes below describe
every key). Quantities carry their units as strings (``"155.52 Mbps"``,
``"1000 km"``, ``"100 ms"``, ``"64 KB"``); the models keep those strings as
written and ``to_core`` converts them to the canonical units of
docs/core-interface.md.

Tables under ``[nodes]``, ``[links]``, ``[sources]`` and ``[flows]`` whose
name contains ``{i}`` are templates: with ``count = N`` they stand for N
entries, ``{i}`` replaced by 1..N in the name and in every string value.
A link with ``duplex = true`` also stands for its reverse, ``<name>-rev``.
The models keep templates as written; ``Network`` is the expanded network
(what the core sees), built once to validate and again by ``to_core``.

Validation happens in two layers, both inside pydantic so that every problem
comes out as one ``ScenarioError`` naming the file and the dotted key:

- each table checks its own keys, types, units and defaults;
- ``Scenario`` builds the ``Network``, which checks the cross references
  (names, paths, layers, rates against links).

After validation every default is filled in, so ``resolved_toml`` is a plain
dump of the model.
"""

# The modules, each importing only those listed before it (network.py and memory.py
# import the models for annotations only, under TYPE_CHECKING):
#
# - common.py: names and limits shared by the others, and the error helpers;
# - limits.py: the allowed ranges of the keys and their checks;
# - quantities.py: the validators and annotated types of quantities (Time, Rate, ...);
# - network.py: template and copy expansion, the Flat* tuples, Network, flatten;
# - memory.py: the estimate of a run's memory;
# - models/: the table models, one module per table (Run, Node, Link, ...), and Scenario;
# - templates.py: the named topology templates (``[template]``), expanded to tables;
# - load.py: reading the TOML, --set overrides, validate_scenario, load_scenario;
# - core_json.py: scenario_dict, expanded_dict, resolved_toml and to_core.
#
# Everything the old single module offered is re-exported here, so importers keep
# writing ``from atmsim.scenario import ...``.

from __future__ import annotations

from .common import (
    IP_HEADER_BYTES,
    MAX_MSS_BYTES,
    MAX_WINDOW_FIELD,
    MAX_WINDOW_SCALE,
    NAME_PATTERN,
    SECTIONS,
    TEMPLATE,
    VC_CLASSES,
    _fail,
)
from .core_json import expanded_dict, resolved_toml, scenario_dict, to_core
from .load import (
    apply_overrides,
    load_scenario,
    parse_override_value,
    read_toml,
    tomllib,
    validate_scenario,
)
from .models import (
    ABR_FACTOR_DEFAULT,
    ALGORITHM_DEFAULTS,
    ALGORITHM_KEYS,
    ALGORITHM_KINDS,
    ATM_POLICIES,
    COARSE_MIN_RTO_TICKS,
    FINE_MIN_RTO,
    INTELLIGENT_TAIL_MARGIN_CELLS,
    IP_POLICIES,
    POLICY_KEYS,
    POLICY_KINDS,
    RED_MAX_P,
    RED_MAX_TH_FACTOR,
    RED_W_Q,
    SOURCE_COMMON_KEYS,
    SOURCE_DEFAULTS,
    SOURCE_KIND_KEYS,
    TBE_MAX,
    TCP_VARIANTS,
    Abr,
    Algorithm,
    Flow,
    Link,
    Node,
    Policy,
    Probes,
    Run,
    Scenario,
    Source,
    Table,
    Vc,
    auto_window_scale,
    red_threshold,
)
from .network import FlatFlow, FlatLink, FlatNode, FlatSource, FlatVc, Network, flatten
from .quantities import (
    Buffer,
    Fraction,
    FrameCells,
    Length,
    NameList,
    Rate,
    RateOrAuto,
    Size,
    SizeOrAuto,
    Threshold,
    Time,
    TimeOrAuto,
    Timer,
    VcClass,
    WindowScale,
    fraction_value,
)

__all__ = [
    "SECTIONS",
    "NAME_PATTERN",
    "TEMPLATE",
    "VC_CLASSES",
    "IP_HEADER_BYTES",
    "MAX_MSS_BYTES",
    "MAX_WINDOW_FIELD",
    "MAX_WINDOW_SCALE",
    "fraction_value",
    "Time",
    "Rate",
    "Length",
    "Size",
    "Buffer",
    "Threshold",
    "FrameCells",
    "NameList",
    "WindowScale",
    "SizeOrAuto",
    "TimeOrAuto",
    "Timer",
    "RateOrAuto",
    "Fraction",
    "VcClass",
    "Table",
    "Run",
    "Node",
    "ATM_POLICIES",
    "IP_POLICIES",
    "POLICY_KINDS",
    "POLICY_KEYS",
    "INTELLIGENT_TAIL_MARGIN_CELLS",
    "RED_MAX_TH_FACTOR",
    "RED_W_Q",
    "RED_MAX_P",
    "Policy",
    "ALGORITHM_KINDS",
    "ALGORITHM_KEYS",
    "ALGORITHM_DEFAULTS",
    "Algorithm",
    "Link",
    "red_threshold",
    "TBE_MAX",
    "ABR_FACTOR_DEFAULT",
    "Abr",
    "Vc",
    "SOURCE_COMMON_KEYS",
    "SOURCE_KIND_KEYS",
    "SOURCE_DEFAULTS",
    "Source",
    "TCP_VARIANTS",
    "FINE_MIN_RTO",
    "COARSE_MIN_RTO_TICKS",
    "Flow",
    "auto_window_scale",
    "Probes",
    "FlatNode",
    "FlatLink",
    "FlatVc",
    "FlatSource",
    "FlatFlow",
    "Scenario",
    "Network",
    "flatten",
    "read_toml",
    "parse_override_value",
    "apply_overrides",
    "validate_scenario",
    "load_scenario",
    "scenario_dict",
    "expanded_dict",
    "resolved_toml",
    "to_core",
    "_fail",
    "tomllib",
]
