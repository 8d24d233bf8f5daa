"""Fairness judged against theory: each VC's (or TCP flow's) achieved rate against its
max-min fair rate, computed from the topology, the link capacities and the demands.

The allocation is max-min fairness with demands (D. Bertsekas and R. Gallager,
"Data Networks", 2nd ed., 1992, section 6.5.2, the progressive filling algorithm):
every entity's rate rises together until a link is full (its entities are then
fixed) or an entity reaches its demand; repeat with the others. Generalised to
floors and weights, entity i gets min(demand_i, floor_i + weight_i x t) where t is
the level at which its bottleneck fills:

- ABR and UBR VCs and TCP flows: floor = MCR (0 for UBR), weight 1 ("MCR plus
  equal share", one of the sharing criteria listed by the ATM Forum's Traffic
  Management Specification 4.0; with MCR 0 it is plain max-min);
- GFR VCs, ``gfr_rule = "proportional"`` (default): floor 0, weight MCR: the
  bandwidth is shared in proportion to the MCRs (TM 4.0's "allocation
  proportional to MCR"), so each VC gets its MCR and a share of the excess in
  proportion to it, the allocation GFR buffer management (Goyal et al., "Buffer Management
  for the GFR Service", ATM Forum 98-0405) judges DFBA by in its Table 6;
  ``gfr_rule = "equal"``: floor MCR, weight 1 (MCR plus an equal share of the
  excess).

What counts:

- Entities: each VC that carries a cell source (its cells), each TCP flow with a
  VC or an IP path of its own (its goodput), and each VC that carries several
  TCP flows (the sum of their goodputs, as the GFR buffer management paper counts a GFR VC). ACK VCs
  and the reverse direction are left out: the allocation is of the data direction.
- Capacity: each link's rate on the wire (ATM: cells/s x 424 bits, the SONET
  payload when ``sonet = true``; IP: the bit rate), less the mean rate of the CBR
  and VBR VCs crossing it (they have priority over ABR, UBR and GFR).
- Demand: a greedy source's PCR (ABR) or its first link's rate; a CBR, Poisson
  or frame source's rate; an on/off source's mean rate. A TCP flow's is its
  window over its base round trip (propagation and one segment's and one ACK's
  transmission at every hop, no queueing): a window-limited flow cannot use more.
- Rates are compared on the wire for cells (Mbps of 53-byte cells) and as TCP
  goodput for flows: a flow's fair goodput is its fair wire rate times the share
  of its segments' wire bits that is payload (ATM: MSS over the cells of one
  segment, 12 cells for MSS 512; IP: MSS / (MSS + 40)).
- Achieved rates are averages over the entity's active time (from its start to
  the end of the run, its stop or its transfer's end), start-up included.

The normalised rate of an entity is achieved / fair; the Jain index of the
normalised rates (R. Jain, D. Chiu, W. Hawe, DEC TR-301, 1984, with the optimal
allocation as the reference: R. Jain, "The Art of Computer Systems Performance
Analysis", 1991) is 1 when every entity gets the same fraction of its fair rate,
whatever that fraction (an ERICA port aiming at 90 % of the link keeps 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

from .columnar import TABLE_FILES, parquet_bytes
from .compare import jain
from .errors import ScenarioError
from .jsontext import json_text
from .outputs import write_file
from .results import MAX_TABLE_ROWS, RunDirError, bad_summary, read_summary
from .scenario import load_scenario, to_core
from .tables import Table
from .units import CELL_BITS

IP_HEADER_BYTES = 40
ACK_CELLS = 2
AAL5_OVERHEAD_BYTES = 40 + 16
"""TCP/IP headers (40) and LLC/SNAP with the AAL5 trailer (16) around a segment's
payload: ceil((mss + 56) / 48) cells a segment (docs/scenarios.md, "TCP flows")."""
GFR_RULES = ("proportional", "equal")
PRIORITY_CLASSES = ("cbr", "vbr")
EPSILON = 1e-9


@dataclass
class Entity:
    """One VC or flow in the allocation (rates in bits/s on the wire)."""

    name: str
    kind: str
    """"cells" (a VC with a cell source), "flow" (a TCP flow), "flows" (a VC of flows)."""
    service: str
    links: list[int]
    demand_bps: float
    floor_bps: float = 0.0
    weight: float = 1.0
    payload_share: float = 1.0
    """Achieved and fair rates are reported x this (TCP goodput for flows)."""
    achieved_bps: float = 0.0
    """As measured: cells on the wire, or goodput."""
    mcr_bps: float = 0.0
    fair_bps: float = math.nan
    bottleneck: Optional[str] = None
    flows: list[str] = field(default_factory=list)


def _cells_per_segment(mss: int) -> int:
    return math.ceil((mss + AAL5_OVERHEAD_BYTES) / 48)


def _demand_bps(model: dict, first_link_cps: float, abr: Optional[dict]) -> float:
    """A cell source's offered rate on the wire."""
    kind = model["kind"]
    if kind == "greedy":
        cps = abr["pcr_cps"] if abr else first_link_cps
    elif kind in ("cbr", "poisson", "frames"):
        cps = model["rate_cps"]
    elif kind == "vbr_onoff":
        on, off = model["on_ps"], model["off_ps"]
        cps = model["peak_cps"] * on / (on + off)
    elif kind == "geometric_onoff":
        cps = model["mean_cps"]
    else:  # pragma: no cover - the scenario models list them all
        raise ValueError(f"unknown source kind {kind!r}")
    if abr:
        cps = min(cps, abr["pcr_cps"])
    return cps * CELL_BITS


def _link_bps(link: dict) -> float:
    if link.get("layer") == "ip":
        return float(link["bit_rate_bps"])
    return float(link["cell_rate_cps"]) * CELL_BITS


def _active_s(start_ps: int, end_ps: Optional[int], sim_s: float) -> float:
    end = sim_s if end_ps is None else min(sim_s, end_ps / 1e12)
    return max(0.0, end - start_ps / 1e12)


def _base_rtt_s(core: dict, flow: dict, data_links: list[int], ack_links: list[int]) -> float:
    """A segment's and its ACK's way without queueing: propagation at every hop; an IP
    router stores and forwards the packet, so its transmission counts at every hop; ATM
    switches forward cells one by one, so a frame of c cells counts one cell time per
    hop and c - 1 more at its slowest link (as the core's ``base_rtt`` counts it)."""
    links = core["links"]
    mss = flow["mss_bytes"]
    total = 0.0
    for path, atm_cells, ip_bytes in (
        (data_links, _cells_per_segment(mss), mss + IP_HEADER_BYTES),
        (ack_links, ACK_CELLS, IP_HEADER_BYTES),
    ):
        slowest_cell_s = 0.0
        for index in path:
            link = links[index]
            total += link["delay_ps"] / 1e12
            if link.get("layer") == "ip":
                total += ip_bytes * 8 / link["bit_rate_bps"]
            else:
                cell_s = 1 / link["cell_rate_cps"]
                total += cell_s
                slowest_cell_s = max(slowest_cell_s, cell_s)
        total += (atm_cells - 1) * slowest_cell_s
    return total + flow.get("processing_ps", 0) / 1e12


def entities(core: dict, summary: dict, gfr_rule: str = "proportional") -> list[Entity]:
    """The entities of the allocation with their routes, demands, floors and weights
    and what they achieved (module docstring)."""
    if gfr_rule not in GFR_RULES:
        raise ValueError(f"gfr_rule: {gfr_rule!r}; allowed: {', '.join(GFR_RULES)}")
    sim_s = float(summary.get("sim_time_s") or core["duration_ps"] / 1e12)
    links = core["links"]
    vcs = core.get("vcs", [])
    vc_summary = {vc["name"]: vc for vc in summary.get("vcs", [])}
    flow_summary = {flow["name"]: flow for flow in summary.get("flows", [])}
    found: list[Entity] = []

    for source in core.get("sources", []):
        vc = vcs[source["vc"]]
        if vc["class"] in PRIORITY_CLASSES:
            continue
        first_cps = links[vc["links"][0]]["cell_rate_cps"]
        abr = vc.get("abr")
        delivered = vc_summary.get(vc["name"], {}).get("cells_delivered", 0)
        active = _active_s(source["start_ps"], source.get("stop_ps"), sim_s)
        mcr_cps = (abr or {}).get("mcr_cps", 0.0) or (vc.get("gfr") or {}).get("mcr_cps", 0.0)
        found.append(
            Entity(
                name=vc["name"],
                kind="cells",
                service=vc["class"],
                links=list(vc["links"]),
                demand_bps=_demand_bps(source["model"], first_cps, abr),
                achieved_bps=delivered * CELL_BITS / active if active > 0 else math.nan,
                mcr_bps=mcr_cps * CELL_BITS,
            )
        )

    by_vc: dict[int, list[dict]] = {}
    for flow in core.get("flows", []):
        if flow.get("data_vc") is not None:
            by_vc.setdefault(flow["data_vc"], []).append(flow)
    for flow in core.get("flows", []):
        atm = flow["layer"] == "atm"
        shared = atm and len(by_vc.get(flow["data_vc"], [])) > 1
        if shared:
            continue
        if atm:
            vc = vcs[flow["data_vc"]]
            route = list(vc["links"])
            back = list(vcs[flow["ack_vc"]]["links"])
            share = flow["mss_bytes"] * 8 / (_cells_per_segment(flow["mss_bytes"]) * CELL_BITS)
            service = vc["class"]
            abr = vc.get("abr")
            mcr_cps = (abr or {}).get("mcr_cps", 0.0) or (vc.get("gfr") or {}).get("mcr_cps", 0.0)
        else:
            route, back = list(flow["data_links"]), list(flow["ack_links"])
            share = flow["mss_bytes"] / (flow["mss_bytes"] + IP_HEADER_BYTES)
            service, abr, mcr_cps = "ip", None, 0.0
        if service in PRIORITY_CLASSES:
            continue
        found.append(_flow_entity(core, summary, flow, flow_summary, route, back, share, sim_s))
        found[-1].service = service
        found[-1].mcr_bps = mcr_cps * CELL_BITS
        if abr:
            found[-1].demand_bps = min(found[-1].demand_bps, abr["pcr_cps"] * CELL_BITS)

    for vc_index, members in by_vc.items():
        if len(members) < 2:
            continue
        vc = vcs[vc_index]
        if vc["class"] in PRIORITY_CLASSES:
            continue
        parts = [
            _flow_entity(
                core,
                summary,
                flow,
                flow_summary,
                list(vc["links"]),
                list(vcs[flow["ack_vc"]]["links"]),
                flow["mss_bytes"] * 8 / (_cells_per_segment(flow["mss_bytes"]) * CELL_BITS),
                sim_s,
            )
            for flow in members
        ]
        goodput = sum(p.achieved_bps for p in parts if math.isfinite(p.achieved_bps))
        # The VC's payload share: that of its flows, weighted by their demands.
        share = sum(p.payload_share for p in parts) / len(parts)
        mcr_cps = (vc.get("gfr") or {}).get("mcr_cps", 0.0) or (vc.get("abr") or {}).get(
            "mcr_cps", 0.0
        )
        found.append(
            Entity(
                name=vc["name"],
                kind="flows",
                service=vc["class"],
                links=list(vc["links"]),
                demand_bps=min(
                    sum(p.demand_bps for p in parts), links[vc["links"][0]]["cell_rate_cps"] * 424
                ),
                payload_share=share,
                achieved_bps=goodput,
                mcr_bps=mcr_cps * CELL_BITS,
                flows=[flow["name"] for flow in members],
            )
        )

    for entity in found:
        if entity.service == "gfr" and gfr_rule == "proportional" and entity.mcr_bps > 0:
            entity.weight = entity.mcr_bps
            entity.floor_bps = 0.0
        else:
            entity.floor_bps = entity.mcr_bps
    # Weights of one scale: GFR weights (MCRs in bits/s) over their mean, others 1.
    gfr_weights = [e.weight for e in found if e.weight != 1.0]
    if gfr_weights:
        mean = sum(gfr_weights) / len(gfr_weights)
        for entity in found:
            if entity.weight != 1.0:
                entity.weight /= mean
    return found


def _flow_entity(
    core: dict,
    summary: dict,
    flow: dict,
    flow_summary: dict,
    route: list[int],
    back: list[int],
    share: float,
    sim_s: float,
) -> Entity:
    """A TCP flow: its window over its base round trip is its demand (on the wire)."""
    rtt = _base_rtt_s(core, flow, route, back)
    window_bytes = (
        min(65535, flow["rcv_window_bytes"] >> flow["window_scale"]) << flow["window_scale"]
    )
    demand_payload = window_bytes * 8 / rtt if rtt > 0 else math.inf
    demand = demand_payload / share
    first = core["links"][route[0]]
    demand = min(demand, _link_bps(first))
    measured = flow_summary.get(flow["name"], {})
    done = measured.get("completed_at_s")
    end_ps = None if done is None else int(done * 1e12)
    active = _active_s(flow["start_ps"], end_ps, sim_s)
    delivered = measured.get("bytes_delivered", 0)
    return Entity(
        name=flow["name"],
        kind="flow",
        service="",
        links=route,
        demand_bps=demand,
        payload_share=share,
        achieved_bps=delivered * 8 / active if active > 0 else math.nan,
        flows=[flow["name"]],
    )


def capacities(core: dict) -> list[float]:
    """Each link's capacity for ABR, UBR, GFR and TCP: its wire rate less the mean rate
    of the CBR and VBR sources crossing it (at least 0)."""
    caps = [_link_bps(link) for link in core["links"]]
    vcs = core.get("vcs", [])
    for source in core.get("sources", []):
        vc = vcs[source["vc"]]
        if vc["class"] not in PRIORITY_CLASSES:
            continue
        first_cps = core["links"][vc["links"][0]]["cell_rate_cps"]
        rate = _demand_bps(source["model"], first_cps, None)
        for index in vc["links"]:
            caps[index] = max(0.0, caps[index] - rate)
    return caps


def allocate(found: list[Entity], caps: list[float], link_names: list[str]) -> None:
    """Progressive filling (module docstring): sets each entity's ``fair_bps`` and the
    link that bottlenecks it (None when its demand does).

    Each round costs the sum of the active entities' path lengths (the entities of each
    link are listed once), so a network of 100,000 VCs is allocated in well under a
    second; there are at most as many rounds as links and distinct demands."""
    active = [k for k, e in enumerate(found) if e.links]
    members: dict[int, list[int]] = {}  # link -> the entities crossing it
    for k in active:
        for index in found[k].links:
            members.setdefault(index, []).append(k)
    fixed: dict[int, float] = {}  # link -> bits/s of the entities already fixed there
    level = 0.0
    while active:
        live = set(active)
        here = {link: [k for k in crossing if k in live] for link, crossing in members.items()}
        here = {link: ks for link, ks in here.items() if ks}
        best = math.inf
        for link, ks in here.items():
            weight = sum(found[k].weight for k in ks)
            room = caps[link] - fixed.get(link, 0.0) - sum(found[k].floor_bps for k in ks)
            best = min(best, room / weight)
        for k in active:
            e = found[k]
            if math.isfinite(e.demand_bps):
                best = min(best, (e.demand_bps - e.floor_bps) / e.weight)
        level = max(best, 0.0) if math.isfinite(best) else level
        done: list[int] = []  # in the order they are fixed (the sums below keep it)
        fixed_now: set[int] = set()
        for k in active:
            e = found[k]
            if math.isfinite(e.demand_bps) and (
                e.demand_bps - e.floor_bps
            ) / e.weight <= level + EPSILON * max(1.0, level):
                e.fair_bps, e.bottleneck = e.demand_bps, None
                done.append(k)
                fixed_now.add(k)
        full = set()
        for link, ks in here.items():
            used = fixed.get(link, 0.0) + sum(
                min(found[k].demand_bps, found[k].floor_bps + found[k].weight * level) for k in ks
            )
            if used >= caps[link] * (1 - EPSILON) - EPSILON:
                full.add(link)
        for k in active:
            if k in fixed_now:
                continue
            e = found[k]
            hit = [index for index in e.links if index in full]
            if hit:
                e.fair_bps = e.floor_bps + e.weight * level
                e.bottleneck = link_names[hit[0]]
                done.append(k)
                fixed_now.add(k)
        if not done:  # cannot happen: a finite level fixes an entity or fills a link
            for k in active:
                found[k].fair_bps = found[k].floor_bps + found[k].weight * level
            break
        for k in done:
            for index in found[k].links:
                fixed[index] = fixed.get(index, 0.0) + found[k].fair_bps
        active = [k for k in active if k not in fixed_now]


def fairness(core: dict, summary: dict, gfr_rule: str = "proportional") -> dict:
    """The fairness of a run: per entity (VC or flow) its fair rate, achieved rate and
    normalised rate; the Jain index of the normalised rates. Rates in Mbps, on the wire
    for VCs of cells and as goodput for TCP (module docstring). JSON-ready."""
    found = entities(core, summary, gfr_rule)
    names = [link["name"] for link in core["links"]]
    allocate(found, capacities(core), names)
    rows = []
    for e in found:
        fair = e.fair_bps * e.payload_share
        achieved = e.achieved_bps
        if e.kind == "cells":
            measured = "cells"
        else:
            measured = "goodput"
        normalised = achieved / fair if fair > 0 and math.isfinite(achieved) else math.nan
        rows.append(
            {
                "name": e.name,
                "service": e.service,
                "measured": measured,
                "flows": len(e.flows) if e.kind == "flows" else None,
                "mcr_mbps": e.mcr_bps * e.payload_share / 1e6,
                "demand_mbps": _json_number(e.demand_bps * e.payload_share / 1e6),
                "fair_mbps": _json_number(fair / 1e6),
                "achieved_mbps": _json_number(achieved / 1e6),
                "normalised": _json_number(normalised),
                "bottleneck": e.bottleneck,
            }
        )
    values = [row["normalised"] for row in rows if row["normalised"] is not None]
    # the index is at most 1; rounding can put it a few ulps above
    index = min(1.0, jain(values)) if len(values) == len(rows) else math.nan
    return {
        "rule": "max-min with demands; GFR "
        + ("in proportion to MCR" if gfr_rule == "proportional" else "MCR plus equal share"),
        "gfr_rule": gfr_rule,
        "entities": rows,
        "jain_normalised": _json_number(index) if rows else None,
    }


def _json_number(value: float) -> Optional[float]:
    return None if value is None or not math.isfinite(value) else float(value)


class FairnessInputError(ValueError):
    """A run directory whose fairness cannot be computed (one line)."""


def fairness_of_run_dir(run_dir, gfr_rule: str = "proportional") -> dict:
    """The fairness of a run directory from its scenario.toml and summary.json."""
    from pathlib import Path

    run_dir = Path(run_dir)
    scenario_path, summary_path = run_dir / "scenario.toml", run_dir / "summary.json"
    try:
        summary = read_summary(run_dir)  # complete, and atmsim's
    except RunDirError as error:
        raise FairnessInputError(str(error)) from None
    if not scenario_path.is_file():
        raise FairnessInputError(f"{run_dir}: no scenario.toml (not a finished run directory)")
    try:
        core = to_core(load_scenario(scenario_path))
    except ScenarioError as error:
        raise FairnessInputError(str(error)) from None
    try:
        return fairness(core, summary, gfr_rule)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
        # a summary shaped like the core's whose rows lack what the rates need
        raise FairnessInputError(str(bad_summary(summary_path, error))) from None


def rows_file(run_dir) -> str:
    """Where a run directory keeps its fairness rows: fairness.parquet for a large run
    (its summary.json names its ``tables``, ``atmsim.columnar``), summary.json otherwise."""
    import json
    from pathlib import Path

    try:
        summary = json.loads((Path(run_dir) / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "summary.json"
    large = isinstance(summary, dict) and isinstance(summary.get("tables"), dict)
    return TABLE_FILES["fairness"] if large else "summary.json"


def write_fairness(run_dir, report: dict) -> None:
    """Add ``report`` to the run directory's summary.json as "fairness" (written to a
    temporary file and renamed, so the summary is never left half written); a large
    run's rows go to its fairness.parquet (``atmsim.columnar``)."""
    import json
    from pathlib import Path

    path = Path(run_dir) / "summary.json"
    if not path.is_file():
        return
    summary = json.loads(path.read_text(encoding="utf-8"))
    tables = summary.get("tables")
    if isinstance(tables, dict):
        # a large run (atmsim.columnar): the rows go to fairness.parquet, the rest here
        rows = report["entities"]
        write_file(Path(run_dir) / TABLE_FILES["fairness"], parquet_bytes(rows))
        tables["fairness"] = {"file": TABLE_FILES["fairness"], "rows": len(rows)}
        report = {key: value for key, value in report.items() if key != "entities"}
    summary["fairness"] = report
    write_file(path, json_text(summary))


def fairness_table(report: dict, where: str = "summary.json"):
    """The table of ``atmsim fairness`` and ``atmsim run`` (``atmsim.tables``); ``where``:
    the file holding all its rows (fairness.parquet for a large run, ``atmsim.columnar``)."""

    def number(value: Optional[float], digits: str = ".3f") -> str:
        return "-" if value is None else format(value, digits)

    index = report.get("jain_normalised")
    entities = report["entities"]
    caption = f"Jain index of the normalised rates: {number(index, '.4f')}; {report['rule']}"
    if len(entities) > MAX_TABLE_ROWS:
        caption += f"; {len(entities) - MAX_TABLE_ROWS} more rows in {where}"
    headers = ["vc/flow", "service", "measured", "fair", "achieved", "achieved/fair", "bottleneck"]
    table = Table(
        title="Fairness: achieved against the max-min fair rate (Mbps)",
        headers=headers,
        right=[header not in ("vc/flow", "bottleneck") for header in headers],
        caption=caption,
    )
    for row in entities[:MAX_TABLE_ROWS]:
        table.add_row(
            row["name"],
            row["service"],
            row["measured"],
            number(row["fair_mbps"]),
            number(row["achieved_mbps"]),
            number(row["normalised"]),
            row["bottleneck"] or "demand",
        )
    return table
