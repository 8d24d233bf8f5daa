"""The TOML scenario: its models, loading with ``--set`` overrides, and the core JSON.

A scenario file has the sections ``[run]``, ``[nodes]``, ``[links.<name>]``,
``[vcs.<name>]``, ``[sources.<name>]`` and ``[probes]`` (docs/scenarios.md and
the docstrings of the table classes below describe every key). Quantities carry their
units as strings (``"155.52 Mbps"``, ``"1000 km"``, ``"100 ms"``); the models
keep those strings as written and ``to_core`` converts them to the canonical
units of docs/core-interface.md.

Validation happens in two layers, both inside pydantic so that every problem
comes out as one ``ScenarioError`` naming the file and the dotted key:

- each table checks its own keys, types, units and defaults;
- ``Scenario`` checks the cross references (names, paths, rates against links).

After validation every default is filled in, so ``resolved_toml`` is a plain
dump of the model.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple, Optional, Union

import tomli_w
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from .errors import ScenarioError, from_validation_error, show_value
from .units import (
    bps_to_cps,
    parse_bit_rate_bps,
    parse_cell_rate_cps,
    parse_length_km,
    parse_time_ps,
    propagation_delay_ps,
    sonet_payload_bps,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SECTIONS = ("run", "nodes", "links", "vcs", "sources", "probes")
"""Top-level tables of a scenario file, in the order they are written."""

NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]+$")
"""Names of nodes, links, VCs and sources: TOML bare keys, so --set paths stay simple."""

VC_CLASSES = ("cbr", "vbr", "abr", "ubr", "gfr")


def _fail(key: str, message: str) -> PydanticCustomError:
    """An error at ``key``, dotted and relative to the table being validated."""
    return PydanticCustomError("scenario", "{message}", {"key": key, "message": message})


def _quoted(names: Any) -> str:
    """``a, b, c`` for a list of names, or ``(none)``."""
    names = list(names)
    return ", ".join(names) if names else "(none)"


# --- quantities: kept as the strings people wrote, checked when loaded ------------------


def _check_time(value: Any) -> str:
    parse_time_ps(value)
    return value.strip()


def _check_rate(value: Any) -> str:
    parse_bit_rate_bps(value)
    return value.strip()


def _check_length(value: Any) -> str:
    parse_length_km(value)
    return value.strip()


def _check_buffer(value: Any) -> Any:
    if value == "inf" or value == float("inf"):  # bare `inf` is a TOML float
        return "inf"
    if type(value) is int and value >= 1:
        return value
    raise ValueError(f'expected a number of cells >= 1 or "inf", got {show_value(value)}')


def _check_frame_cells(value: Any) -> Any:
    if type(value) is int and value >= 1:
        return value
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(type(n) is int for n in value)
        and 1 <= value[0] <= value[1]
    ):
        return value
    raise ValueError(
        f"expected a number of cells >= 1 or [lo, hi] with 1 <= lo <= hi, got {show_value(value)}"
    )


def _check_names(value: Any) -> Any:
    if value == "all" or (isinstance(value, list) and all(isinstance(n, str) for n in value)):
        return value
    raise ValueError(f'expected "all" or a list of names, got {show_value(value)}')


Time = Annotated[str, BeforeValidator(_check_time)]
"""A time such as "100 ms" (units: ps, ns, us, ms, s)."""
Rate = Annotated[str, BeforeValidator(_check_rate)]
"""A rate such as "155.52 Mbps" or "366792 cells/s"."""
Length = Annotated[str, BeforeValidator(_check_length)]
"""A length such as "1000 km" or "50 m"."""
Buffer = Annotated[Union[int, str], BeforeValidator(_check_buffer)]
"""A buffer size in cells (>= 1) or "inf"."""
FrameCells = Annotated[Union[int, list[int]], BeforeValidator(_check_frame_cells)]
"""Cells per frame: a fixed number, or [lo, hi] drawn uniformly."""
NameList = Annotated[Union[str, list[str]], BeforeValidator(_check_names)]
"""A list of names, or "all"."""
VcClass = Literal["cbr", "vbr", "abr", "ubr", "gfr"]


class Table(BaseModel):
    """A TOML table: strict types, and unknown keys are errors that list the allowed ones."""

    model_config = ConfigDict(extra="forbid", strict=True)

    @classmethod
    def allowed_keys(cls, data: dict) -> list[str]:
        """Keys this table accepts (given its contents, for tables whose keys depend on kind)."""
        return [field.alias or name for name, field in cls.model_fields.items()]

    @model_validator(mode="before")
    @classmethod
    def _only_known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            allowed = cls.allowed_keys(data)
            for key in data:
                if key not in allowed:
                    raise _fail(key, "unknown key; allowed: " + ", ".join(allowed))
        return data


class Run(Table):
    """``[run]``: how long to simulate and with which random seed."""

    duration: Time
    """Simulated time, > 0."""
    seed: int = Field(1, ge=0)
    """Seed of all random streams; same scenario + seed = same results."""

    @field_validator("duration")
    @classmethod
    def _positive(cls, value: str) -> str:
        if parse_time_ps(value) == 0:
            raise ValueError(f'must be > 0, got "{value}"')
        return value


class Node(Table):
    """``[nodes]``: ``name = { kind = "host" }``. The kind is informational."""

    kind: Literal["host", "switch"] = "switch"


POLICY_KINDS = ("tail", "ppd", "epd", "intelligent_tail")
POLICY_KEYS = {
    "tail": ["kind"],
    "ppd": ["kind", "keep_eom"],
    "epd": ["kind", "threshold"],
    "intelligent_tail": ["kind", "threshold"],
}
INTELLIGENT_TAIL_MARGIN_CELLS = 12
"""Default intelligent-tail threshold = buffer - 12: one 12-cell frame (MSS 512) below K."""


class Policy(Table):
    """Drop policy of a link's output port (docs/core-interface.md, SPEC section 4).

    Written as a kind (``policy = "epd"``) or a table
    (``policy = { kind = "epd", threshold = 800 }``).
    Defaults: epd threshold = floor(0.8 * buffer); intelligent_tail threshold =
    buffer - 12; both need a finite buffer unless the threshold is given.
    ppd keep_eom = true.
    """

    kind: Literal["tail", "ppd", "epd", "intelligent_tail"]
    threshold: Optional[int] = Field(None, ge=1)
    """Cells (epd, intelligent_tail)."""
    keep_eom: Optional[bool] = None
    """ppd: keep the EOM cell of a frame whose other cells are being dropped."""

    @classmethod
    def allowed_keys(cls, data: dict) -> list[str]:
        kind = data.get("kind")
        if isinstance(kind, str) and kind in POLICY_KEYS:
            return POLICY_KEYS[kind]
        return super().allowed_keys(data)

    @model_validator(mode="after")
    def _defaults(self) -> Policy:
        if self.kind == "ppd" and self.keep_eom is None:
            self.keep_eom = True
        return self


class Link(Table):
    """``[links.<name>]``: a unidirectional link fed by the output port at ``from``."""

    from_: str = Field(alias="from")
    to: str
    rate: Rate
    """Line rate; cells/s = bits/s / 424 (of the SONET payload when ``sonet``)."""
    length: Optional[Length] = None
    """Propagation delay 5 us/km. Give ``length`` or ``delay``, not both."""
    delay: Optional[Time] = None
    """Propagation delay; "0 s" when neither length nor delay is given."""
    sonet: bool = False
    """Carry cells in the STS-3c payload (149.76 of 155.52 Mbps)."""
    buffer: Buffer = "inf"
    """Cells waiting at the output port (not counting the one in transmission)."""
    policy: Policy = Field(default_factory=lambda: Policy(kind="tail"))

    @field_validator("policy", mode="before")
    @classmethod
    def _policy_kind(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return value
        if isinstance(value, str) and value in POLICY_KINDS:
            return {"kind": value}
        raise ValueError(
            'expected "tail", "ppd", "epd", "intelligent_tail" or a table like '
            f'{{ kind = "epd", threshold = 800 }}, got {show_value(value)}'
        )

    @model_validator(mode="after")
    def _resolve(self) -> Link:
        if self.length is not None and self.delay is not None:
            raise _fail("delay", "give length or delay, not both")
        if self.length is None and self.delay is None:
            self.delay = "0 s"
        if parse_bit_rate_bps(self.rate) <= 0:
            raise _fail("rate", f'must be > 0, got "{self.rate}"')
        policy = self.policy
        buffer = None if self.buffer == "inf" else self.buffer
        if policy.kind in ("epd", "intelligent_tail"):
            if policy.threshold is None:
                if buffer is None:
                    raise _fail(
                        "policy.threshold",
                        f'required for {policy.kind} when buffer = "inf" '
                        "(the default is derived from the buffer size)",
                    )
                if policy.kind == "epd":
                    policy.threshold = max(1, buffer * 4 // 5)
                elif buffer > INTELLIGENT_TAIL_MARGIN_CELLS:
                    policy.threshold = buffer - INTELLIGENT_TAIL_MARGIN_CELLS
                else:
                    raise _fail(
                        "policy.threshold",
                        f"the default (buffer - 12) needs buffer > 12, got buffer = {buffer}; "
                        "set threshold",
                    )
            elif buffer is not None and policy.threshold > buffer:
                raise _fail(
                    "policy.threshold",
                    f"must be <= buffer ({buffer}), got {policy.threshold}",
                )
        return self

    def bit_rate_bps(self) -> float:
        """Line rate in bit/s, as written (before the SONET overhead)."""
        return parse_bit_rate_bps(self.rate)

    def cell_rate_cps(self) -> float:
        """Cells/s the link carries: rate / 424, or the SONET payload rate / 424."""
        if self.sonet:
            return bps_to_cps(sonet_payload_bps(parse_bit_rate_bps(self.rate)))
        return parse_cell_rate_cps(self.rate)

    def delay_ps(self) -> int:
        """Propagation delay in ps (5 us/km when given as a length)."""
        if self.length is not None:
            return propagation_delay_ps(parse_length_km(self.length))
        return parse_time_ps(self.delay or "0 s")


class Vc(Table):
    """``[vcs.<name>]``: a virtual circuit along a path of node names."""

    path: list[str] = Field(min_length=2)
    class_: VcClass = Field("ubr", alias="class")
    """Service class; priority at a port: cbr > vbr > abr = ubr = gfr."""


SOURCE_COMMON_KEYS = ["vc", "path", "class", "kind", "count", "start", "stop"]
SOURCE_KIND_KEYS = {
    "cbr": ["rate"],
    "greedy": [],
    "poisson": ["rate"],
    "vbr_onoff": ["peak", "on", "off", "distribution"],
    "geometric_onoff": ["peak", "mean", "mean_burst"],
    "frames": ["frame_cells", "rate", "arrivals"],
}
SOURCE_DEFAULTS = {"distribution": "fixed", "arrivals": "periodic"}
"""Per-kind keys that have a default; every other per-kind key is required."""


class Source(Table):
    """``[sources.<name>]``: a cell source on a VC.

    Either ``vc = "<name>"`` or ``path = [...]`` (with an optional ``class``,
    default "ubr"), which creates a VC named like the source. ``count = N > 1``
    makes N copies named ``<name>1`` .. ``<name>N``, each with its own VC
    (needs ``path``). Per ``kind``:

    - cbr: ``rate``; poisson: ``rate`` (mean); greedy: nothing (one cell per
      cell time of the first link);
    - vbr_onoff: ``peak``, ``on``, ``off``, ``distribution`` ("fixed" |
      "exponential", default "fixed");
    - geometric_onoff: ``peak``, ``mean`` (0 < mean < peak), ``mean_burst`` (cells);
    - frames: ``frame_cells`` (n or [lo, hi]), ``rate`` (offered), ``arrivals``
      ("periodic" | "poisson", default "periodic").
    """

    kind: Literal["cbr", "greedy", "poisson", "vbr_onoff", "geometric_onoff", "frames"]
    vc: Optional[str] = None
    path: Optional[list[str]] = Field(None, min_length=2)
    class_: Optional[VcClass] = Field(None, alias="class")
    count: int = Field(1, ge=1)
    start: Time = "0 s"
    stop: Optional[Time] = None
    """No more cells from this time on; none = until the end of the run."""
    rate: Optional[Rate] = None
    peak: Optional[Rate] = None
    mean: Optional[Rate] = None
    mean_burst: Optional[float] = Field(None, gt=0, allow_inf_nan=False)
    """Mean burst length in cells (geometric)."""
    on: Optional[Time] = None
    off: Optional[Time] = None
    distribution: Optional[Literal["fixed", "exponential"]] = None
    frame_cells: Optional[FrameCells] = None
    arrivals: Optional[Literal["periodic", "poisson"]] = None

    @classmethod
    def allowed_keys(cls, data: dict) -> list[str]:
        kind = data.get("kind")
        if isinstance(kind, str) and kind in SOURCE_KIND_KEYS:
            return SOURCE_COMMON_KEYS + SOURCE_KIND_KEYS[kind]
        return super().allowed_keys(data)

    @model_validator(mode="after")
    def _resolve(self) -> Source:
        for key in SOURCE_KIND_KEYS[self.kind]:
            if getattr(self, key) is None:
                if key not in SOURCE_DEFAULTS:
                    raise _fail(key, f'required for kind = "{self.kind}"')
                setattr(self, key, SOURCE_DEFAULTS[key])
        if self.vc is None and self.path is None:
            raise _fail("", 'needs vc = "<vc name>" or path = [<node names>]')
        if self.vc is not None and self.path is not None:
            raise _fail("path", "give vc or path, not both")
        if self.vc is not None and self.class_ is not None:
            raise _fail("class", f"the class belongs to the VC: set it in [vcs.{self.vc}]")
        if self.path is not None and self.class_ is None:
            self.class_ = "ubr"
        if self.count > 1 and self.vc is not None:
            raise _fail("count", "count > 1 needs path (each copy gets its own VC), not vc")
        if self.stop is not None and parse_time_ps(self.stop) <= parse_time_ps(self.start):
            raise _fail("stop", f'must be after start ("{self.start}"), got "{self.stop}"')
        for key in ("rate", "peak", "mean"):
            value = getattr(self, key)
            if value is not None and parse_cell_rate_cps(value) <= 0:
                raise _fail(key, f'must be > 0, got "{value}"')
        for key in ("on", "off"):
            value = getattr(self, key)
            if value is not None and parse_time_ps(value) <= 0:
                raise _fail(key, f'must be > 0, got "{value}"')
        if self.kind == "geometric_onoff":
            if parse_cell_rate_cps(self.mean) >= parse_cell_rate_cps(self.peak):
                raise _fail("mean", f'must be below peak ("{self.peak}"), got "{self.mean}"')
        return self

    def offered_rate_key(self) -> Optional[str]:
        """The key whose rate must fit the first link: peak for on/off, else rate."""
        if self.kind in ("vbr_onoff", "geometric_onoff"):
            return "peak"
        if self.kind == "greedy":
            return None
        return "rate"


class Probes(Table):
    """``[probes]``: time series sampled every ``period``.

    ``queue`` and ``utilization`` list link names, ``vc_rate`` VC names (after
    count expansion, e.g. "s1"); each may be "all".
    """

    period: Optional[Time] = None
    """Sampling period, > 0; required when any list is non-empty."""
    queue: NameList = []
    utilization: NameList = []
    vc_rate: NameList = []

    @model_validator(mode="after")
    def _period(self) -> Probes:
        if self.queue or self.utilization or self.vc_rate:
            if self.period is None:
                raise _fail("period", "required when a probe list is set")
        if self.period is not None and parse_time_ps(self.period) == 0:
            raise _fail("period", f'must be > 0, got "{self.period}"')
        return self


class FlatVc(NamedTuple):
    """A VC after count expansion: explicit ones, then implicit ones of sources."""

    name: str
    vc_class: str
    nodes: list[str]
    key: str
    """Where it was defined, for error messages: "vcs.v1" or "sources.s"."""


class FlatSource(NamedTuple):
    """A source after count expansion."""

    name: str
    vc: str
    source: Source
    key: str
    """Where it was defined, for error messages: "sources.s"."""


class Scenario(Table):
    """A whole scenario file; see the module docstring and the table classes."""

    run: Run
    nodes: dict[str, Node] = {}
    links: dict[str, Link] = {}
    vcs: dict[str, Vc] = {}
    sources: dict[str, Source] = {}
    probes: Probes = Field(default_factory=Probes)

    _file: Optional[str] = PrivateAttr(None)

    @property
    def file(self) -> Optional[str]:
        """The file it was loaded from, if any."""
        return self._file

    @property
    def name(self) -> str:
        """The scenario's name: its file name without ``.toml``."""
        return Path(self._file).stem if self._file else "scenario"

    @model_validator(mode="after")
    def _check_references(self) -> Scenario:
        """Names, link endpoints, VC paths, one source per VC, rates, probe names."""
        self._check_names()
        self._check_links()
        vcs, sources = flatten(self)
        first_links = self._check_vcs(vcs)
        self._check_sources(sources, first_links)
        self._check_probes([vc.name for vc in vcs])
        return self

    def _check_names(self) -> None:
        for section in ("nodes", "links", "vcs", "sources"):
            for name in getattr(self, section):
                if not NAME_PATTERN.match(name):
                    raise _fail(f"{section}.{name}", "names may only use letters, digits, _ and -")

    def _check_links(self) -> None:
        joined: dict[tuple[str, str], str] = {}
        for name, link in self.links.items():
            for key, node in (("from", link.from_), ("to", link.to)):
                if node not in self.nodes:
                    raise _fail(
                        f"links.{name}.{key}", f'no node "{node}"; nodes: {_quoted(self.nodes)}'
                    )
            if link.from_ == link.to:
                raise _fail(f"links.{name}.to", f'a link cannot end where it starts ("{link.to}")')
            pair = (link.from_, link.to)
            if pair in joined:
                raise _fail(
                    f"links.{name}",
                    f'links.{joined[pair]} already joins "{link.from_}" to "{link.to}"',
                )
            joined[pair] = name

    def _check_vcs(self, vcs: list[FlatVc]) -> dict[str, str]:
        """Check paths and names of all VCs; return VC name -> name of its first link."""
        first_links: dict[str, str] = {}
        defined_at: dict[str, str] = {}
        for vc in vcs:
            links = path_links(self, vc.nodes, f"{vc.key}.path")
            if vc.name in defined_at:
                raise _fail(vc.key, f'VC name "{vc.name}" is also used by {defined_at[vc.name]}')
            defined_at[vc.name] = vc.key
            first_links[vc.name] = links[0]
        return first_links

    def _check_sources(self, sources: list[FlatSource], first_links: dict[str, str]) -> None:
        used_by: dict[str, str] = {}
        for flat in sources:
            if flat.vc not in first_links:
                raise _fail(f"{flat.key}.vc", f'no VC "{flat.vc}"; vcs: {_quoted(self.vcs)}')
            if flat.vc in used_by:
                raise _fail(
                    f"{flat.key}.vc",
                    f'VC "{flat.vc}" already has a source ({used_by[flat.vc]}); one source per VC',
                )
            used_by[flat.vc] = flat.key
            rate_key = flat.source.offered_rate_key()
            if rate_key is None:
                continue
            rate = getattr(flat.source, rate_key)
            link_name = first_links[flat.vc]
            link_cps = self.links[link_name].cell_rate_cps()
            if parse_cell_rate_cps(rate) > link_cps * (1 + 1e-12):
                raise _fail(
                    f"{flat.key}.{rate_key}",
                    f'"{rate}" ({parse_cell_rate_cps(rate):.6g} cells/s) exceeds the '
                    f'cell rate of its first link "{link_name}" ({link_cps:.6g} cells/s)',
                )

    def _check_probes(self, vc_names: list[str]) -> None:
        for key, names, known in (
            ("queue", self.probes.queue, list(self.links)),
            ("utilization", self.probes.utilization, list(self.links)),
            ("vc_rate", self.probes.vc_rate, vc_names),
        ):
            if names == "all":
                continue
            for name in names:
                if name not in known:
                    raise _fail(f"probes.{key}", f'no "{name}"; choose from: {_quoted(known)}')


def flatten(scenario: Scenario) -> tuple[list[FlatVc], list[FlatSource]]:
    """VCs and sources after count expansion, in core order.

    VCs: those of ``[vcs]`` in file order, then one per source given a
    ``path`` (named like the source). A source ``s`` with ``count = 3``
    becomes ``s1``, ``s2``, ``s3``.
    """
    vcs = [
        FlatVc(name, vc.class_, list(vc.path), f"vcs.{name}") for name, vc in scenario.vcs.items()
    ]
    sources = []
    for name, source in scenario.sources.items():
        key = f"sources.{name}"
        names = [name] if source.count == 1 else [f"{name}{i}" for i in range(1, source.count + 1)]
        for copy in names:
            if source.path is not None:
                vcs.append(FlatVc(copy, source.class_ or "ubr", list(source.path), key))
                sources.append(FlatSource(copy, copy, source, key))
            else:
                sources.append(FlatSource(copy, source.vc or "", source, key))
    return vcs, sources


def path_links(scenario: Scenario, nodes: list[str], key: str) -> list[str]:
    """The link names joining consecutive ``nodes``; raises an error at ``key`` for a gap."""
    links = []
    for i, node in enumerate(nodes):
        if node not in scenario.nodes:
            raise _fail(key, f'no node "{node}"; nodes: {_quoted(scenario.nodes)}')
        if i == 0:
            continue
        here = nodes[i - 1]
        match = [n for n, link in scenario.links.items() if (link.from_, link.to) == (here, node)]
        if not match:
            leaving = [
                f"{link.to} (links.{n})" for n, link in scenario.links.items() if link.from_ == here
            ]
            raise _fail(
                key,
                f'no link from "{here}" to "{node}"; links from "{here}" go to: {_quoted(leaving)}',
            )
        links.append(match[0])
    return links


# --- loading ------------------------------------------------------------------------------


def read_toml(path: str | Path) -> dict:
    """The TOML file as a dict; a missing file or a syntax error is a ScenarioError."""
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(file, None, "no such file") from None
    except IsADirectoryError:
        raise ScenarioError(file, None, "is a directory, expected a .toml file") from None
    except UnicodeDecodeError:
        raise ScenarioError(file, None, "not a UTF-8 text file") from None
    except OSError as error:
        raise ScenarioError(file, None, f"cannot read: {error.strerror}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ScenarioError(file, None, f"invalid TOML: {error}") from None


def parse_override_value(text: str) -> Any:
    """A --set value: a TOML value if it parses as one (500, true, ["a", "b"]), else the text."""
    try:
        return tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        return text.strip()


def apply_overrides(data: dict, overrides: list[str] | tuple[str, ...], file: str | None) -> None:
    """Apply ``key=value`` overrides (dotted keys into the TOML tables) to ``data`` in place.

    The table holding the key must exist, except a missing top-level section
    (e.g. ``probes``), which is created empty.
    """
    for item in overrides:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ScenarioError(file, None, f"--set: expected key=value, got {show_value(item)}")
        parts = key.split(".")
        if any(not part for part in parts):
            raise ScenarioError(file, key, "--set: empty name in the dotted key")
        table = data
        for depth, part in enumerate(parts[:-1]):
            here = ".".join(parts[: depth + 1])
            if part not in table:
                if depth == 0 and part in SECTIONS:
                    table[part] = {}
                else:
                    where = ".".join(parts[:depth]) or "the file"
                    raise ScenarioError(
                        file,
                        key,
                        f'--set: no table "{here}" in the scenario; {where} has: {_quoted(table)}',
                    )
            table = table[part]
            if not isinstance(table, dict):
                raise ScenarioError(file, key, f'--set: "{here}" is a value, not a table')
        table[parts[-1]] = parse_override_value(text)


def validate_scenario(
    data: dict, file: str | None = None, overrides: list[str] | tuple[str, ...] = ()
) -> Scenario:
    """Validate a TOML dict into a resolved Scenario, or raise a ScenarioError."""
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as validation_error:
        error = from_validation_error(validation_error, file)
        for item in overrides:
            set_key = item.partition("=")[0].strip()
            if error.key and (error.key == set_key or error.key.startswith(set_key + ".")):
                error = ScenarioError(file, error.key, f"{error.message} (from --set {item})")
        raise error from None
    scenario._file = None if file is None else str(file)
    return scenario


def load_scenario(path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> Scenario:
    """Load a scenario file, apply ``key=value`` overrides, validate and resolve defaults.

    Raises ScenarioError (one line: file, dotted key, what is allowed).
    """
    data = read_toml(path)
    apply_overrides(data, overrides, str(path))
    return validate_scenario(data, str(path), overrides)


# --- output: resolved TOML and the core JSON ---------------------------------------------


def scenario_dict(scenario: Scenario) -> dict:
    """The resolved scenario as a TOML-ready dict (no None values, aliases as keys)."""
    return scenario.model_dump(by_alias=True, exclude_none=True)


def resolved_toml(scenario: Scenario) -> str:
    """The scenario with every default filled in, as TOML that loads back to the same run.

    ``count`` is kept (not expanded).
    """
    header = "# Resolved by atmsim: every default is written out.\n\n"
    return header + tomli_w.dumps(scenario_dict(scenario))


def _policy_json(policy: Policy) -> dict:
    if policy.kind == "tail":
        return {"kind": "tail"}
    if policy.kind == "ppd":
        return {"kind": "ppd", "keep_eom": policy.keep_eom}
    return {"kind": policy.kind, "threshold": policy.threshold}


def _model_json(source: Source) -> dict:
    """The ``model`` of a source in the core JSON (rates in cells/s, times in ps)."""
    kind = source.kind
    if kind == "greedy":
        return {"kind": "greedy"}
    if kind in ("cbr", "poisson"):
        return {"kind": kind, "rate_cps": parse_cell_rate_cps(source.rate)}
    if kind == "vbr_onoff":
        return {
            "kind": kind,
            "peak_cps": parse_cell_rate_cps(source.peak),
            "on_ps": parse_time_ps(source.on),
            "off_ps": parse_time_ps(source.off),
            "distribution": source.distribution,
        }
    if kind == "geometric_onoff":
        return {
            "kind": kind,
            "peak_cps": parse_cell_rate_cps(source.peak),
            "mean_cps": parse_cell_rate_cps(source.mean),
            "mean_burst_cells": float(source.mean_burst),
        }
    if isinstance(source.frame_cells, list):
        frame_cells = {"uniform": list(source.frame_cells)}
    else:
        frame_cells = {"fixed": source.frame_cells}
    return {
        "kind": "frames",
        "frame_cells": frame_cells,
        "rate_cps": parse_cell_rate_cps(source.rate),
        "arrivals": source.arrivals,
    }


def to_core(scenario: Scenario) -> dict:
    """The core JSON of docs/core-interface.md: indices, picoseconds, cells/s."""
    node_index = {name: i for i, name in enumerate(scenario.nodes)}
    link_index = {name: i for i, name in enumerate(scenario.links)}
    vcs, sources = flatten(scenario)
    vc_index = {vc.name: i for i, vc in enumerate(vcs)}

    def indices(names: Any, index: dict[str, int]) -> list[int]:
        return list(index.values()) if names == "all" else [index[name] for name in names]

    probes = scenario.probes
    return {
        "duration_ps": parse_time_ps(scenario.run.duration),
        "seed": scenario.run.seed,
        "nodes": [{"name": name, "kind": node.kind} for name, node in scenario.nodes.items()],
        "links": [
            {
                "name": name,
                "from": node_index[link.from_],
                "to": node_index[link.to],
                "bit_rate_bps": link.bit_rate_bps(),
                "cell_rate_cps": link.cell_rate_cps(),
                "delay_ps": link.delay_ps(),
                "buffer_cells": None if link.buffer == "inf" else link.buffer,
                "policy": _policy_json(link.policy),
            }
            for name, link in scenario.links.items()
        ],
        "vcs": [
            {
                "name": vc.name,
                "class": vc.vc_class,
                "links": [link_index[n] for n in path_links(scenario, vc.nodes, vc.key)],
            }
            for vc in vcs
        ],
        "sources": [
            {
                "name": flat.name,
                "vc": vc_index[flat.vc],
                "start_ps": parse_time_ps(flat.source.start),
                "stop_ps": None if flat.source.stop is None else parse_time_ps(flat.source.stop),
                "model": _model_json(flat.source),
            }
            for flat in sources
        ],
        "probes": {
            "period_ps": 0 if probes.period is None else parse_time_ps(probes.period),
            "queue": indices(probes.queue, link_index),
            "utilization": indices(probes.utilization, link_index),
            "vc_rate": indices(probes.vc_rate, vc_index),
        },
    }
