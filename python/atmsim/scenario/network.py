"""The expanded network: templates, ``count`` copies and duplex links made explicit.

``Network`` is what the core sees; building it checks every cross reference of a
``Scenario`` (models.py). The table models are imported here for annotations only:
at run time models.py imports this module, not the other way round.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple, Optional

from ..errors import key_part
from ..units import parse_cell_rate_cps
from .common import NAME_PATTERN, SECTIONS, TEMPLATE, _fail, _quoted
from .limits import MAX_EXPANDED
from .memory import entities_problem

if TYPE_CHECKING:
    from .models import Abr, Flow, Gfr, Link, Node, Scenario, Source


class FlatNode(NamedTuple):
    """A node after template expansion."""

    name: str
    node: Node
    key: str
    """Where it was defined, for error messages: "nodes.s{i}"."""


class FlatLink(NamedTuple):
    """A link after template and duplex expansion (``link`` has the copy's from/to)."""

    name: str
    link: Link
    key: str
    """Where it was defined, for error messages: "links.s{i}-sw1"."""
    reverse: bool
    """The ``-rev`` link made by ``duplex = true``."""


class FlatVc(NamedTuple):
    """A VC after expansion: explicit ones, implicit ones of sources, then two per ATM flow."""

    name: str
    vc_class: str
    nodes: list[str]
    key: str
    """Where it was defined, for error messages: "vcs.v1", "sources.s" or "flows.tcp{i}"."""
    abr: Optional[Abr] = None
    """class "abr": the source end system's parameters."""
    gfr: Optional[Gfr] = None
    """class "gfr": the traffic contract."""


class FlatSource(NamedTuple):
    """A source after count expansion."""

    name: str
    vc: str
    source: Source
    key: str
    """Where it was defined, for error messages: "sources.s"."""


class FlatFlow(NamedTuple):
    """A TCP flow after template expansion, with its paths as link names."""

    name: str
    flow: Flow
    key: str
    """Where it was defined, for error messages: "flows.tcp{i}"."""
    layer: str
    """"atm" or "ip": the layer of every link of both paths."""
    data_links: list[str]
    ack_links: list[str]
    data_vc: str = ""
    """ATM: the VC carrying the data ("<flow>", or the flow's ``vc``)."""
    ack_vc: str = ""
    """ATM: the VC carrying the ACKs ("<flow>-ack", or the flow's ``ack_vc``)."""


def _template_fields(entry: Any) -> list[str]:
    """The fields of a table whose string value (or list of strings) holds {i}."""
    fields = []
    for field in type(entry).model_fields:
        value = getattr(entry, field)
        if (isinstance(value, str) and TEMPLATE in value) or (
            isinstance(value, list) and any(isinstance(v, str) and TEMPLATE in v for v in value)
        ):
            fields.append(field)
    return fields


def _copy_with(entry: Any, changes: dict[str, Any]) -> Any:
    """``entry.model_copy(update=changes)`` at a fraction of its cost in time and memory
    (a template is copied up to 100,000 times): nested tables, the set of fields given
    and the private attributes are shared with ``entry``, not copied. Copies are only
    read, never assigned to."""
    cls = type(entry)
    copy = cls.__new__(cls)
    object.__setattr__(copy, "__dict__", {**entry.__dict__, **changes})
    object.__setattr__(copy, "__pydantic_fields_set__", entry.__pydantic_fields_set__)
    object.__setattr__(copy, "__pydantic_extra__", entry.__pydantic_extra__)
    object.__setattr__(copy, "__pydantic_private__", entry.__pydantic_private__)
    return copy


def _check_name(section: str, name: str, template_ok: bool = True) -> None:
    plain = name.replace(TEMPLATE, "1") if template_ok else name
    if not NAME_PATTERN.match(plain):
        allowed = "letters, digits, _ and -" + (" (and {i} in a template)" if template_ok else "")
        raise _fail(f"{section}.{key_part(name)}", f"names may only use {allowed}")


def _copies(section: str, name: str, entry: Any) -> list[tuple[str, Optional[int]]]:
    """The names a table stands for, with the value of {i} (None for a plain table).

    A name with {i} needs ``count``; ``count`` on a plain name is an error, except
    for sources, where ``count = N > 1`` makes ``<name>1`` .. ``<name>N``.
    """
    key = f"{section}.{name}"
    if TEMPLATE in name:
        if "count" not in entry.model_fields_set or entry.count is None:
            raise _fail(
                f"{key}.count", "required: a name with {i} is a template for count = N copies"
            )
        return [(name.replace(TEMPLATE, str(i)), i) for i in range(1, entry.count + 1)]
    if section == "sources":
        if entry.count == 1:
            return [(name, None)]
        return [(f"{name}{i}", None) for i in range(1, entry.count + 1)]
    if entry.count is not None:
        raise _fail(
            f"{key}.count",
            f'count makes copies of a template: put {{i}} in the name (e.g. "{name}{{i}}"), '
            "which is replaced by 1..count",
        )
    return [(name, None)]


def _in(copy: str, i: Optional[int]) -> str:
    """`` (in s3)`` for a copy of a template, so errors at the template key name the copy."""
    return "" if i is None else f" (in {copy})"


class Network:
    """The scenario as the core sees it: templates and duplex links expanded.

    Building it checks every cross reference (names, link endpoints, paths,
    layers, one source per VC, rates, probe names) and raises the scenario
    error at the key that causes the problem. Order (= core indices): nodes
    and links in file order, each template's copies in place and a duplex
    link's ``-rev`` right after it; VCs of ``[vcs]``, then of sources, then
    two per ATM flow (``<flow>``, ``<flow>-ack``); sources; flows.
    """

    def __new__(cls, scenario: Scenario) -> Network:
        """The network the scenario's validation built, if it has one: a scenario is
        expanded once (up to a million entities take seconds), not again for the
        core JSON or the validate command. A Scenario is not changed after validation
        (overrides make a new one)."""
        built = (scenario.__pydantic_private__ or {}).get("_network")
        if isinstance(built, cls):
            return built
        return super().__new__(cls)

    def __init__(self, scenario: Scenario) -> None:
        if getattr(self, "scenario", None) is scenario:  # the one validation built
            return
        enabled = gc.isenabled()
        gc.disable()  # a million small objects, no cycles: the collector would only scan
        try:
            self._build(scenario)
        finally:
            if enabled:
                gc.enable()

    def _build(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.nodes: dict[str, FlatNode] = {}
        self.links: dict[str, FlatLink] = {}
        self.vcs: list[FlatVc] = []
        self.sources: list[FlatSource] = []
        self.flows: list[FlatFlow] = []
        self._pairs: dict[tuple[str, str], str] = {}
        self._made_by: dict[str, dict[str, str]] = {section: {} for section in SECTIONS}
        self._vc_links: dict[str, list[str]] = {}
        self._vc_back_links: dict[str, list[str]] = {}
        self._template_fields: dict[int, list[str]] = {}
        self._rate_problems: dict[tuple[int, float], Any] = {}
        self._check_totals()
        self._expand_nodes()
        self._expand_links()
        self._check_ack_controls()
        self._expand_vcs_and_sources()
        self._expand_flows()
        self._check_atm_edges()
        self._check_sources()
        self._check_probes()

    # -- sizes -------------------------------------------------------------------------

    def _check_totals(self) -> None:
        """At most 1,000,000 nodes, links, sources and flows after expansion, and few
        enough to fit in memory, checked before anything is expanded (VCs are counted
        as they are made)."""
        sizes: dict[str, tuple[int, str]] = {}
        for section in ("nodes", "links", "sources", "flows"):
            total = 0
            biggest = ("", 0)
            for name, entry in getattr(self.scenario, section).items():
                copies = entry.count if entry.count is not None else 1
                if section == "links" and entry.duplex:
                    copies *= 2
                total += copies
                if copies > biggest[1]:
                    biggest = (name, copies)
            name, copies = biggest
            key = section
            if name:
                entry = getattr(self.scenario, section)[name]
                key = f"{section}.{name}" + (".count" if entry.count is not None else "")
            if total > MAX_EXPANDED:
                raise _fail(
                    key,
                    f"the scenario makes {total} {section} (this table {copies}); at most "
                    f"{MAX_EXPANDED} {section} after expanding count and duplex",
                )
            sizes[section] = (total, key)
        problem = entities_problem(sizes)
        if problem is not None:
            raise _fail(*problem)

    # -- names -------------------------------------------------------------------------

    def _substituted(self, entry: Any, i: Optional[int]) -> Any:
        """A copy of a template's table with {i} replaced by ``i`` in every string value
        (the fields holding {i} are found once per table)."""
        if i is None:
            return entry
        fields = self._template_fields.get(id(entry))
        if fields is None:
            fields = self._template_fields[id(entry)] = _template_fields(entry)
        if not fields:
            return entry
        text = str(i)
        changes: dict[str, Any] = {}
        for field in fields:
            value = getattr(entry, field)
            if isinstance(value, str):
                changes[field] = value.replace(TEMPLATE, text)
            else:
                changes[field] = [
                    v.replace(TEMPLATE, text) if isinstance(v, str) else v for v in value
                ]
        return _copy_with(entry, changes)

    def _claim(self, section: str, name: str, key: str, how: str) -> None:
        """Record that ``how`` makes ``name``; a name made twice is an error at ``key``."""
        made = self._made_by[section]
        if name in made:
            raise _fail(key, f'the name "{name}" is also made by {made[name]}')
        made[name] = how

    def _entries(self, section: str) -> Iterator[tuple[str, Any, str, Optional[int]]]:
        """Each table of ``[section]`` once per name it stands for: (its key, the table
        as written, the copy's name, the value of {i}); each table's name is checked
        before its copies come."""
        for name, entry in getattr(self.scenario, section).items():
            _check_name(section, name)
            key = f"{section}.{name}"
            for copy, i in _copies(section, name, entry):
                yield key, entry, copy, i

    def _expand_nodes(self) -> None:
        for key, node, copy, _ in self._entries("nodes"):
            self._claim("nodes", copy, key, key)
            self.nodes[copy] = FlatNode(copy, node, key)

    def _expand_links(self) -> None:
        for key, link, copy, i in self._entries("links"):
            here = self._substituted(link, i)
            for end, node in (("from", here.from_), ("to", here.to)):
                if node not in self.nodes:
                    raise _fail(
                        f"{key}.{end}",
                        f'no node "{node}"{_in(copy, i)}; nodes: {_quoted(self.nodes)}',
                    )
            if here.from_ == here.to:
                raise _fail(
                    f"{key}.to",
                    f'a link cannot end where it starts ("{here.to}"){_in(copy, i)}',
                )
            self._add_link(FlatLink(copy, here, key, False), key, key)
            if here.duplex:
                # The reverse link gets the same parameters but ack_control: that acts
                # on the ACKs arriving over this link, for the rates of a port at the
                # node it reaches, which the reverse link does not reach.
                back = _copy_with(here, {"from_": here.to, "to": here.from_, "ack_control": None})
                how = f"duplex = true on {key}"
                self._add_link(FlatLink(f"{copy}-rev", back, key, True), f"{key}.duplex", how)

    def _check_ack_controls(self) -> None:
        """An ack_control's rates_from is an IP link with rate_control that leaves the
        node where the controlled link ends."""
        for flat in self.links.values():
            control = flat.link.ack_control
            if control is None:
                continue
            key = f"{flat.key}.ack_control.rates_from"
            name = control.rates_from
            source = self.links.get(name)
            if source is None:
                raise _fail(key, f'no link "{name}"; links: {_quoted(self.links)}')
            layer = flat.link.layer
            if source.link.layer != layer:
                raise _fail(
                    key,
                    f'link "{name}" is an {source.link.layer.upper()} link, but "{flat.name}" '
                    f"is {layer.upper()}: the rates come from a port of the same network",
                )
            if source.link.rate_control is None:
                raise _fail(key, f'link "{name}" computes no rates: give it rate_control')
            if layer == "atm":
                # An ATM edge takes the rates of any ATM port on the flows' data VCs
                # (_check_atm_edges, once the flows' VCs are known).
                continue
            if source.link.from_ != flat.link.to:
                raise _fail(
                    key,
                    f'link "{name}" leaves "{source.link.from_}", but the ACKs over '
                    f'"{flat.name}" reach "{flat.link.to}": the router there controls them '
                    f"with the rates of one of its own ports",
                )

    def _check_atm_edges(self) -> None:
        """An ATM link's ack_control acts where ACK frames leave the ATM network: the
        link must be the last link of some flow's ACK VC."""
        ends = {f.ack_links[-1] for f in self.flows if f.layer == "atm" and f.ack_links}
        for flat in self.links.values():
            if flat.link.layer != "atm" or flat.link.ack_control is None:
                continue
            if flat.name not in ends:
                raise _fail(
                    f"{flat.key}.ack_control",
                    f'no flow\'s ACK VC ends with link "{flat.name}": an ATM edge writes the '
                    "windows of the ACK frames it reassembles, on the last link of their VC "
                    f"(towards the TCP sender)",
                )

    def _add_link(self, flat: FlatLink, key: str, how: str) -> None:
        self._claim("links", flat.name, key, how)
        pair = (flat.link.from_, flat.link.to)
        if pair in self._pairs:
            other = self.links[self._pairs[pair]]
            made = f" (duplex = true on {other.key})" if other.reverse else ""
            what = f'"{flat.name}" would join' if flat.reverse else "joins"
            raise _fail(
                key,
                f'{what} "{pair[0]}" to "{pair[1]}", which link "{other.name}"{made} already '
                "joins; one link per direction",
            )
        self._pairs[pair] = flat.name
        self.links[flat.name] = flat

    # -- paths -------------------------------------------------------------------------

    def path_links(
        self,
        nodes: list[str],
        key: str,
        copy: str = "",
        i: Optional[int] = None,
        note: str = "",
        flow: bool = False,
    ) -> list[str]:
        """The link names joining consecutive ``nodes``; an error at ``key`` for a gap
        (suggesting ``duplex = true`` when the link exists the other way)."""
        links = []
        for n, node in enumerate(nodes):
            if node not in self.nodes:
                raise _fail(key, f'no node "{node}"{_in(copy, i)}; nodes: {_quoted(self.nodes)}')
            if n == 0:
                continue
            here = nodes[n - 1]
            name = self._pairs.get((here, node))
            if name is None:
                leaving = [
                    f"{flat.link.to} (links.{flat.name})"
                    for flat in self.links.values()
                    if flat.link.from_ == here
                ]
                back = self._pairs.get((node, here))
                if back is not None and not self.links[back].reverse:
                    hint = f"; set duplex = true on {self.links[back].key} to create it"
                elif flow:
                    hint = "; add one (duplex = true on a link also makes the way back)"
                else:
                    hint = ""
                raise _fail(
                    key,
                    f'no link from "{here}" to "{node}"{_in(copy, i)}{note}; links from "{here}" '
                    f"go to: {_quoted(leaving)}{hint}",
                )
            links.append(name)
        return links

    def _layer(self, links: list[str], key: str, copy: str, i: Optional[int]) -> str:
        """The one layer of all ``links``; a mix is an error at ``key``."""
        first = self.links[links[0]]
        for name in links[1:]:
            other = self.links[name]
            if other.link.layer != first.link.layer:
                raise _fail(
                    key,
                    f'mixes layers{_in(copy, i)}: link "{first.name}" is {first.link.layer} and '
                    f'"{other.name}" is {other.link.layer}; all links of a path must have the '
                    "same layer",
                )
        return first.link.layer

    # -- VCs, sources, flows -------------------------------------------------------------

    def _add_vc(
        self,
        vc: FlatVc,
        links: list[str],
        what: str = "",
        path_key: str = "",
        copy: str = "",
        i: Optional[int] = None,
    ) -> None:
        """Record a VC; an ABR VC also gets its backward RM path (``path_key``: the
        key of its path, for errors) and its parameters checked against its first link."""
        made = self._made_by["vcs"]
        if len(made) >= MAX_EXPANDED:
            raise _fail(
                vc.key,
                f"makes VC {len(made) + 1} of the scenario; at most {MAX_EXPANDED} VCs after "
                "expanding count (an ATM flow makes two)",
            )
        if vc.name in made:
            raise _fail(vc.key, f'{what}VC name "{vc.name}" is also used by {made[vc.name]}')
        made[vc.name] = vc.key
        self._vc_links[vc.name] = links
        self.vcs.append(vc)
        if vc.vc_class == "gfr" and vc.gfr is not None:
            problem = vc.gfr.rate_problem(self.links[links[0]].link.cell_rate_cps())
            if problem is not None:
                key, message = problem
                named = vc.key.startswith("flows.") or i is not None
                raise _fail(
                    f"{vc.key}.gfr.{key}", message + (f' (VC "{vc.name}")' if named else "")
                )
        if vc.vc_class != "abr" or vc.abr is None:
            return
        self._vc_back_links[vc.name] = self.path_links(
            list(reversed(vc.nodes)),
            path_key or f"{vc.key}.path",
            copy,
            i,
            ' for the backward RM cells (class = "abr" sends them back along the path in reverse)',
        )
        link_cps = self.links[links[0]].link.cell_rate_cps()
        memo = (id(vc.abr), link_cps)  # the copies of a template share their abr table
        problem = self._rate_problems.get(memo, False)
        if problem is False:
            problem = self._rate_problems[memo] = vc.abr.rate_problem(link_cps)
        if problem is not None:
            key, message = problem
            named = vc.key.startswith("flows.") or i is not None
            raise _fail(f"{vc.key}.abr.{key}", message + (f' (VC "{vc.name}")' if named else ""))

    def _vc_path(self, nodes: list[str], key: str, copy: str = "", i: Optional[int] = None):
        links = self.path_links(nodes, key, copy, i)
        for name in links:
            if self.links[name].link.layer != "atm":
                raise _fail(
                    key,
                    f'link "{name}" is an IP link (layer = "ip"){_in(copy, i)}; VCs and cell '
                    "sources run over ATM links",
                )
        return links

    def _expand_vcs_and_sources(self) -> None:
        for name, vc in self.scenario.vcs.items():
            _check_name("vcs", name, template_ok=False)
            key = f"vcs.{name}"
            links = self._vc_path(vc.path, f"{key}.path")
            self._add_vc(FlatVc(name, vc.class_, list(vc.path), key, vc.abr, vc.gfr), links)
        for key, source, copy, i in self._entries("sources"):
            here = self._substituted(source, i)
            self._claim("sources", copy, key, key)
            if here.path is not None:
                links = self._vc_path(here.path, f"{key}.path", copy, i)
                flat = FlatVc(copy, here.class_ or "ubr", list(here.path), key, here.abr, here.gfr)
                self._add_vc(flat, links, "", f"{key}.path", copy, i)
                self.sources.append(FlatSource(copy, copy, here, key))
            else:
                self.sources.append(FlatSource(copy, here.vc or "", here, key))

    def _expand_flows(self) -> None:
        self._flow_vcs: dict[str, str] = {}
        """VC name -> the key of a flow that uses it."""
        for key, flow, copy, i in self._entries("flows"):
            here = self._substituted(flow, i)
            self._claim("flows", copy, key, key)
            if here.vc is not None:
                self.flows.append(self._flow_over_vcs(here, key, copy, i))
                continue
            note = (
                " for the ACKs (ack_path defaults to the reverse of path)"
                if flow._ack_path_default
                else ""
            )
            data = self.path_links(here.path, f"{key}.path", copy, i, flow=True)
            acks = self.path_links(here.ack_path or [], f"{key}.ack_path", copy, i, note, flow=True)
            layer = self._layer(data, f"{key}.path", copy, i)
            ack_layer = self._layer(acks, f"{key}.ack_path", copy, i)
            if ack_layer != layer:
                raise _fail(
                    f"{key}.ack_path",
                    f"the ACKs cross {ack_layer} links but the data {layer} links"
                    f"{_in(copy, i)}; both paths of a flow must have the same layer",
                )
            if layer == "atm":
                vc_class = here.class_ or "ubr"
                what = f'flow "{copy}" makes VCs "{copy}" and "{copy}-ack", but '
                data_vc = FlatVc(copy, vc_class, list(here.path), key, here.abr, here.gfr)
                self._add_vc(data_vc, data, what, f"{key}.path", copy, i)
                ack_nodes = list(here.ack_path or [])
                ack_vc = FlatVc(f"{copy}-ack", vc_class, ack_nodes, key, here.abr, here.gfr)
                self._add_vc(ack_vc, acks, what, f"{key}.ack_path", copy, i)
                self._flow_vcs[copy] = self._flow_vcs[f"{copy}-ack"] = key
            elif here.class_ == "abr":
                raise _fail(
                    f"{key}.class",
                    f"ABR is an ATM service; {copy} runs over IP links: remove class "
                    '(and abr), or use ATM links (layer = "atm")',
                )
            elif here.class_ is not None:
                raise _fail(
                    f"{key}.class",
                    f"is the class of an ATM flow's VCs; {copy} runs over IP links: remove it",
                )
            names = (copy, f"{copy}-ack") if layer == "atm" else ("", "")
            self.flows.append(FlatFlow(copy, here, key, layer, data, acks, *names))

    def _flow_over_vcs(self, here: Flow, key: str, copy: str, i: Optional[int]) -> FlatFlow:
        """A flow whose data and ACKs ride VCs of [vcs] (which other flows may share)."""
        explicit = self.scenario.vcs
        ends: list[list[str]] = []
        for field, name in (("vc", here.vc or ""), ("ack_vc", here.ack_vc or "")):
            if name not in explicit:
                hint = ' (the default of ack_vc is "<vc>-ack")' if field == "ack_vc" else ""
                raise _fail(
                    f"{key}.{field}",
                    f'no VC "{name}" in [vcs]{_in(copy, i)}{hint}; vcs: {_quoted(explicit)}',
                )
            ends.append(explicit[name].path)
        if here.vc == here.ack_vc:
            raise _fail(
                f"{key}.ack_vc",
                f'must differ from vc ("{here.vc}"){_in(copy, i)}: the ACKs need a VC of '
                "their own, from the receiver back to the sender",
            )
        data_nodes, ack_nodes = ends
        if ack_nodes[0] != data_nodes[-1] or ack_nodes[-1] != data_nodes[0]:
            raise _fail(
                f"{key}.ack_vc",
                f'VC "{here.ack_vc}" runs from "{ack_nodes[0]}" to "{ack_nodes[-1]}"'
                f'{_in(copy, i)}; the ACKs of a flow over "{here.vc}" (from '
                f'"{data_nodes[0]}" to "{data_nodes[-1]}") must run from "{data_nodes[-1]}" '
                f'back to "{data_nodes[0]}"',
            )
        for name in (here.vc or "", here.ack_vc or ""):
            self._flow_vcs.setdefault(name, key)
        return FlatFlow(
            copy,
            here,
            key,
            "atm",
            self._vc_links[here.vc or ""],
            self._vc_links[here.ack_vc or ""],
            here.vc or "",
            here.ack_vc or "",
        )

    def _check_sources(self) -> None:
        used_by: dict[str, str] = {}
        flow_vcs = self._flow_vcs
        for flat in self.sources:
            if flat.vc not in self._vc_links:
                raise _fail(
                    f"{flat.key}.vc", f'no VC "{flat.vc}"; vcs: {_quoted(self.scenario.vcs)}'
                )
            if flat.vc in used_by:
                raise _fail(
                    f"{flat.key}.vc",
                    f'VC "{flat.vc}" already has a source ({used_by[flat.vc]}); one source per VC',
                )
            if flat.vc in flow_vcs:
                raise _fail(
                    f"{flat.key}.vc",
                    f'VC "{flat.vc}" carries a TCP flow ({flow_vcs[flat.vc]}); a VC carries '
                    "either one source or TCP flows",
                )
            used_by[flat.vc] = flat.key
            rate_key = flat.source.offered_rate_key()
            if rate_key is None:
                continue
            rate = getattr(flat.source, rate_key)
            link_name = self._vc_links[flat.vc][0]
            link_cps = self.links[link_name].link.cell_rate_cps()
            if parse_cell_rate_cps(rate) > link_cps * (1 + 1e-12):
                raise _fail(
                    f"{flat.key}.{rate_key}",
                    f'"{rate}" ({parse_cell_rate_cps(rate):.6g} cells/s) exceeds the '
                    f'cell rate of its first link "{link_name}" ({link_cps:.6g} cells/s)',
                )

    def _check_probes(self) -> None:
        probes = self.scenario.probes
        vcs = [vc.name for vc in self.vcs]
        for key, names, known in (
            ("queue", probes.queue, list(self.links)),
            ("utilization", probes.utilization, list(self.links)),
            ("vc_rate", probes.vc_rate, vcs),
            ("vc_losses", probes.vc_losses, vcs),
            ("vc_queue", probes.vc_queue, self.atm_links()),
            ("flows", probes.flows, [flow.name for flow in self.flows]),
            ("abr_vcs", probes.abr_vcs, self.abr_vcs()),
            ("abr_ports", probes.abr_ports, self.abr_ports()),
        ):
            if names == "all":
                continue
            for name in names:
                if name in known:
                    continue
                if key == "abr_vcs" and name in vcs:
                    problem = f'"{name}" is not an ABR VC (class = "abr")'
                elif key == "abr_ports" and name in self.links:
                    problem = f'link "{name}" has no switch algorithm'
                elif key == "vc_queue" and name in self.links:
                    problem = f'link "{name}" is an IP link; VCs cross ATM ports'
                else:
                    problem = f'no "{name}"'
                raise _fail(f"probes.{key}", f"{problem}; choose from: {_quoted(known)}")
        if not probes.capture:
            return
        targets = self.capture_targets()
        names = list(targets) if probes.capture == "all" else probes.capture
        for name in names:
            if name not in targets:
                problem = f'no link or node "{name}"'
                raise _fail("probes.capture", f"{problem}; choose from: {_quoted(targets)}")

    def capture_targets(self) -> dict[str, list[tuple[str, str]]]:
        """What can be captured, by name: each link (its packets, or on an ATM link its
        TCP flows' AAL5 frames, stamped as their transmission starts) and each node
        (those leaving it stamped at the start, those reaching it at the arrival), as
        (link name, stamp) pairs. A capture holds links of one layer: a node with IP
        and ATM links is two targets, "<node>" (IP) and "<node>-atm"."""
        targets: dict[str, list[tuple[str, str]]] = {name: [(name, "start")] for name in self.links}
        # Each node's links, by layer, in link order: one pass over the links.
        touching: dict[str, dict[str, list[tuple[str, str]]]] = {}
        for name, flat in self.links.items():
            for node, stamp in ((flat.link.from_, "start"), (flat.link.to, "arrival")):
                layers = touching.setdefault(node, {"ip": [], "atm": []})
                layers[flat.link.layer].append((name, stamp))
        for node in self.nodes:
            layers = touching.get(node, {"ip": [], "atm": []})
            for layer in ("ip", "atm"):
                taps = layers[layer]
                if not taps:
                    continue
                name = f"{node}-atm" if layer == "atm" and layers["ip"] else node
                if name not in targets:
                    targets[name] = taps
        return targets

    def vc_links(self, name: str) -> list[str]:
        """The link names of a VC's path."""
        return self._vc_links[name]

    def vc_back_links(self, name: str) -> list[str]:
        """An ABR VC's backward RM path: the links joining its nodes in reverse."""
        return self._vc_back_links[name]

    def abr_vcs(self) -> list[str]:
        """Names of the ABR VCs, in core order."""
        return [vc.name for vc in self.vcs if vc.vc_class == "abr"]

    def abr_ports(self) -> list[str]:
        """Names of the links whose output port runs a switch algorithm."""
        return [name for name, flat in self.links.items() if flat.link.algorithm is not None]

    def atm_links(self) -> list[str]:
        """Names of the ATM links, in core order."""
        return [name for name, flat in self.links.items() if flat.link.layer == "atm"]

    def policy_ports(self) -> list[str]:
        """Names of the links whose port keeps its cells per VC for its drop policy
        (Selective Drop, FBA, DFBA)."""
        kinds = ("selective_drop", "fba", "dfba")
        return [name for name, flat in self.links.items() if flat.link.policy.kind in kinds]

    def vcs_through(self, link: str) -> int:
        """How many VCs cross ``link``'s port (the series a vc_queue probe there records)."""
        counts = getattr(self, "_vcs_through", None)
        if counts is None:
            counts = {}
            for links in self._vc_links.values():
                for name in links:
                    counts[name] = counts.get(name, 0) + 1
            self._vcs_through = counts
        return counts.get(link, 0)


def flatten(scenario: Scenario) -> tuple[list[FlatVc], list[FlatSource]]:
    """VCs and sources after expansion, in core order (see ``Network``).

    A source ``s`` with ``count = 3`` becomes ``s1``, ``s2``, ``s3``.
    """
    network = Network(scenario)
    return network.vcs, network.sources
