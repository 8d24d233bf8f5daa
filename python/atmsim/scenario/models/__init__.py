"""The tables of a scenario file as pydantic models, one module per table, and
``Scenario``, the whole file (root.py).

Each table checks its own keys, types, units and defaults; ``Scenario`` builds
the ``Network`` (network.py), which checks the cross references. The modules, each
importing only those listed before it:

- base.py: the field types the tables share and ``Table``, their base;
- run.py: ``[run]``;
- nodes.py: ``[nodes]``;
- ports.py: a port's tables: drop policy, ABR algorithm, rate control, ack control;
- links.py: ``[links.<name>]``;
- vcs.py: ``[vcs.<name>]`` with its ABR and GFR parameters;
- sources.py: ``[sources.<name>]``;
- flows.py: ``[flows.<name>]``;
- probes.py: ``[probes]``;
- root.py: ``Scenario``.
"""

from __future__ import annotations

from .base import (
    AdtfTime,
    Cells,
    CellsOrShare,
    Count,
    Crm,
    Delta,
    DfbaLow,
    Duration,
    EfciHigh,
    EfciLow,
    EricaA,
    EricaB,
    InitialCwnd,
    Interval,
    IntervalCells,
    LinkDelay,
    MeanBurst,
    Mrm,
    Mss,
    Nrm,
    PositiveTime,
    ProbePeriod,
    RateIncrease,
    ReceiverTime,
    SackBlocks,
    Seed,
    StartTime,
    Table,
    TrmTime,
    UnitFraction,
    UnitInterval,
    cells_or_share,
    share_of,
)
from .flows import COARSE_MIN_RTO_TICKS, FINE_MIN_RTO, TCP_VARIANTS, Flow, auto_window_scale
from .links import Link
from .nodes import Node
from .ports import (
    ALGORITHM_DEFAULTS,
    ALGORITHM_KEYS,
    ALGORITHM_KINDS,
    ATM_POLICIES,
    DFBA_ALPHA,
    DFBA_HIGH_FRACTION,
    DFBA_LOW_FRACTION,
    DFBA_Z_RULES,
    INTELLIGENT_TAIL_MARGIN_CELLS,
    IP_POLICIES,
    POLICY_KEYS,
    POLICY_KINDS,
    RATE_CONTROL_DEFAULTS,
    RED_MAX_P,
    RED_MAX_TH_FACTOR,
    RED_W_Q,
    SHARE_POLICIES,
    SHARE_THRESHOLD_FRACTION,
    WINDOW_RULES,
    AckControl,
    Algorithm,
    Policy,
    RateControl,
    TimeOrRule,
    red_threshold,
)
from .probes import Probes
from .root import Scenario
from .run import Run
from .sources import SOURCE_COMMON_KEYS, SOURCE_DEFAULTS, SOURCE_KIND_KEYS, Source
from .vcs import ABR_FACTOR_DEFAULT, GFR_MBS_FRAMES, GFR_MFS_CELLS, TBE_MAX, Abr, Gfr, GfrCells, Vc

__all__ = [
    "ABR_FACTOR_DEFAULT",
    "ALGORITHM_DEFAULTS",
    "ALGORITHM_KEYS",
    "ALGORITHM_KINDS",
    "ATM_POLICIES",
    "Abr",
    "AckControl",
    "AdtfTime",
    "Algorithm",
    "COARSE_MIN_RTO_TICKS",
    "Cells",
    "CellsOrShare",
    "Count",
    "Crm",
    "DFBA_ALPHA",
    "DFBA_HIGH_FRACTION",
    "DFBA_LOW_FRACTION",
    "DFBA_Z_RULES",
    "Delta",
    "DfbaLow",
    "Duration",
    "EfciHigh",
    "EfciLow",
    "EricaA",
    "EricaB",
    "FINE_MIN_RTO",
    "Flow",
    "GFR_MBS_FRAMES",
    "GFR_MFS_CELLS",
    "Gfr",
    "GfrCells",
    "INTELLIGENT_TAIL_MARGIN_CELLS",
    "IP_POLICIES",
    "InitialCwnd",
    "Interval",
    "IntervalCells",
    "Link",
    "LinkDelay",
    "MeanBurst",
    "Mrm",
    "Mss",
    "Node",
    "Nrm",
    "POLICY_KEYS",
    "POLICY_KINDS",
    "Policy",
    "PositiveTime",
    "ProbePeriod",
    "Probes",
    "RATE_CONTROL_DEFAULTS",
    "RED_MAX_P",
    "RED_MAX_TH_FACTOR",
    "RED_W_Q",
    "RateControl",
    "RateIncrease",
    "ReceiverTime",
    "Run",
    "SHARE_POLICIES",
    "SHARE_THRESHOLD_FRACTION",
    "SOURCE_COMMON_KEYS",
    "SOURCE_DEFAULTS",
    "SOURCE_KIND_KEYS",
    "SackBlocks",
    "Scenario",
    "Seed",
    "Source",
    "StartTime",
    "TBE_MAX",
    "TCP_VARIANTS",
    "Table",
    "TimeOrRule",
    "TrmTime",
    "UnitFraction",
    "UnitInterval",
    "Vc",
    "WINDOW_RULES",
    "auto_window_scale",
    "cells_or_share",
    "red_threshold",
    "share_of",
]
