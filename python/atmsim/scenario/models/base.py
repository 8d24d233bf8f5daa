"""The field types the tables share (durations, counts, cell shares, ABR and TCP
parameters, with their ranges) and ``Table``, the base of every table model."""

# No `from __future__ import annotations` here nor in the other table modules:
# pydantic would then parse and evaluate every field's annotation string when the
# classes are built (2 % of the instructions of importing the models, on every
# command's start-up).

import re
from typing import Annotated, Any, ClassVar, Optional, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, model_validator

from ...errors import key_part, show_value
from ..common import _fail
from ..limits import (
    ABR_ADTF,
    ABR_NRM,
    ABR_TRM,
    INTERVAL_RANGE,
    MAX_ATM_BUFFER_CELLS,
    MAX_COUNT,
    MAX_LINK_DELAY,
    PROBE_PERIOD,
    TCP_MAX_RECEIVER_TIME,
    core_number,
    core_whole,
    int_range_text,
    time_in,
    whole,
)

# The ranges of the keys (limits.py; docs/scenarios.md, "Allowed ranges").
Duration = time_in("0 s", lo_open=True)
Seed = core_whole("seed")
Count = whole(1, MAX_COUNT)
StartTime = time_in("0 s")
PositiveTime = time_in("0 s", lo_open=True)
LinkDelay = time_in("0 s", MAX_LINK_DELAY)
Interval = time_in(*INTERVAL_RANGE)
TrmTime = time_in(*ABR_TRM)
AdtfTime = time_in(*ABR_ADTF)
ReceiverTime = time_in("0 s", TCP_MAX_RECEIVER_TIME)
ProbePeriod = time_in(*PROBE_PERIOD)
Cells = core_whole("LinkSpec.buffer_cells")
IntervalCells = core_whole("AlgorithmSpec[erica].interval_cells")
EfciHigh = core_whole("AlgorithmSpec[efci].high_cells")
EfciLow = core_whole("AlgorithmSpec[efci].low_cells")
UnitFraction = core_number("AlgorithmSpec[erica].target_utilization")
"""(0, 1], the core's fraction: ERICA's target utilization, ERICA+'s qdlf, RED's w_q
and max_p, ABR's factors."""
UnitInterval = core_number("PolicySpec[dfba].alpha")
"""[0, 1], the core's unit interval: DFBA's alpha."""

_SHARE = re.compile(r"^\s*(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*%\s*$")


def cells_or_share(lo: int) -> Any:
    """A threshold in cells, ``lo`` .. 4294967294, or a share of the port's buffer written
    ``"80 %"`` (more than 0 % for ``lo`` = 1, up to 100 %), resolved against the buffer."""
    low = "0 %" if lo == 0 else "more than 0 %"
    allowed = (
        f"expected {int_range_text(lo, MAX_ATM_BUFFER_CELLS)} of cells or a share of the "
        f'buffer like "80 %" ({low} to 100 %)'
    )

    def check(value: Any) -> Any:
        if type(value) is int and lo <= value <= MAX_ATM_BUFFER_CELLS:
            return value
        if isinstance(value, str):
            match = _SHARE.match(value)
            if match is not None:
                share = float(match.group("number"))
                if (share > 0 or lo == 0) and share <= 100:
                    return value
        raise ValueError(f"{allowed}, got {show_value(value)}")

    return Annotated[Union[int, str], BeforeValidator(check)]


CellsOrShare = cells_or_share(1)
"""EPD, intelligent tail, Selective Drop and FBA thresholds, DFBA's H."""
DfbaLow = cells_or_share(0)
"""DFBA's L: 0 (no region below L) to the buffer, or a share of it."""


def share_of(value: str) -> float:
    """The fraction of a share of the buffer written "80 %" (0.8)."""
    match = _SHARE.match(value)
    if match is None:  # pragma: no cover - validated before
        raise ValueError(f"not a share of the buffer: {show_value(value)}")
    return float(match.group("number")) / 100


Delta = core_number("AlgorithmSpec[erica].delta")
EricaA = core_number("AlgorithmSpec[erica_plus].a")
EricaB = core_number("AlgorithmSpec[erica_plus].b")
RateIncrease = core_number("RateControlSpec.max_increase")
"""The largest increase of an explicit rate per interval, a fraction (Explicit rate control
of TCP (Satyavolu et al., 1998): 0.1)."""
Nrm = core_whole("AbrParams.nrm")
Mrm = whole(1, ABR_NRM[1])
Crm = core_whole("AbrParams.crm")
Mss = core_whole("FlowSpec.mss_bytes")
InitialCwnd = core_whole("FlowSpec.initial_cwnd_segments")
SackBlocks = core_whole("FlowSpec.max_sack_blocks")
MeanBurst = core_number("SourceModel[geometric_onoff].mean_burst_cells")


class Table(BaseModel):
    """A TOML table: strict types, and unknown keys are errors that list the allowed ones."""

    # A table is validated as a part of ``Scenario``, whose validator holds the
    # table's own schema; the table's separate validator (pydantic-core builds one per
    # model, the whole subtree again) is built only when the table itself is validated
    # or constructed (a default such as ``Policy(kind="tail")``, a template's links),
    # not by every command's start-up. ``Scenario`` is built at import.
    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    keys_by_kind: ClassVar[Optional[dict[str, list[str]]]] = None
    """For a table whose keys depend on its ``kind``: kind -> the keys it accepts."""

    @classmethod
    def allowed_keys(cls, data: dict) -> list[str]:
        """Keys this table accepts (given its contents, for tables whose keys depend on kind)."""
        kind = data.get("kind")
        if cls.keys_by_kind is not None and isinstance(kind, str) and kind in cls.keys_by_kind:
            return cls.keys_by_kind[kind]
        return [field.alias or name for name, field in cls.model_fields.items()]

    @model_validator(mode="before")
    @classmethod
    def _only_known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            allowed = cls.allowed_keys(data)
            for key in data:
                if key not in allowed:
                    raise _fail(key_part(key), "unknown key; allowed: " + ", ".join(allowed))
        return data
