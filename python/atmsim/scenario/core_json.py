"""Output: the resolved TOML and the core JSON (docs/core-interface.md)."""

from __future__ import annotations

from copy import deepcopy
from typing import Any

from .._lazy import tomli_w
from ..units import (
    parse_cell_rate_cps,
    parse_size_bytes,
    parse_time_ps,
)
from .models import (
    RED_MAX_P,
    RED_W_Q,
    Algorithm,
    Policy,
    Scenario,
    Source,
    red_threshold,
)
from .network import FlatFlow, FlatLink, FlatVc, Network


def scenario_dict(scenario: Scenario) -> dict:
    """The resolved scenario as a TOML-ready dict (no None values, aliases as keys).

    A scenario made from a ``[template]`` gives its source form: the template table
    with every parameter written out, and the tables merged on top as given.
    """
    if scenario._source is not None:
        return deepcopy(scenario._source)
    return scenario.model_dump(by_alias=True, exclude_none=True)


def expanded_dict(scenario: Scenario) -> dict:
    """The scenario in the general form (a template expanded, every default written out)."""
    return scenario.model_dump(by_alias=True, exclude_none=True)


def resolved_toml(scenario: Scenario) -> str:
    """The scenario with every default filled in, as TOML that loads back to the same run.

    Templates and ``count`` are kept (not expanded), and so are ``"auto"`` values. A
    scenario made from a ``[template]`` is written as that table (every parameter)
    followed by the tables that override its expansion.
    """
    header = "# Resolved by atmsim: every default is written out.\n"
    if scenario._source is not None:
        kind = scenario._source["template"]["kind"]
        header += (
            f'# [template] kind = "{kind}" expands into nodes, links, flows or sources and\n'
            "# probes (docs/scenarios.md); the tables after it are merged on top of that\n"
            "# expansion, key by key.\n"
        )
    return header + "\n" + tomli_w.dumps(scenario_dict(scenario))


def _policy_json(policy: Policy) -> dict:
    if policy.kind == "tail":
        return {"kind": "tail"}
    if policy.kind == "ppd":
        return {"kind": "ppd", "keep_eom": policy.keep_eom}
    if policy.kind == "red":
        return {
            "kind": "red",
            "min_th": red_threshold(policy.min_th),
            "max_th": red_threshold(policy.max_th),
            "w_q": float(policy.w_q or RED_W_Q),
            "max_p": float(policy.max_p or RED_MAX_P),
        }
    if policy.kind in ("selective_drop", "fba"):
        return {"kind": policy.kind, "threshold": policy.threshold, "z": float(policy.z)}
    if policy.kind == "dfba":
        if isinstance(policy.z, str):
            z: dict[str, Any] = {"kind": policy.z}
        else:
            z = {"kind": "constant", "value": float(policy.z)}
        return {
            "kind": "dfba",
            "low": policy.low,
            "high": policy.high,
            "alpha": float(policy.alpha),
            "z": z,
        }
    return {"kind": policy.kind, "threshold": policy.threshold}


def _link_json(flat: FlatLink, node_index: dict[str, int], link_index: dict[str, int]) -> dict:
    """A link of the core JSON; ATM links keep the fields of the first interface."""
    link = flat.link
    entry: dict[str, Any] = {"name": flat.name}
    if link.layer == "ip":
        entry["layer"] = "ip"
    entry.update(
        {
            "from": node_index[link.from_],
            "to": node_index[link.to],
            "bit_rate_bps": link.bit_rate_bps(),
            "cell_rate_cps": link.cell_rate_cps(),
            "delay_ps": link.delay_ps(),
            "buffer_cells": link.buffer_cells(),
        }
    )
    if link.layer == "ip":
        entry["buffer_packets"] = link.buffer_packets()
        entry["buffer_bytes"] = link.buffer_bytes()
    entry["policy"] = _policy_json(link.policy)
    if link.algorithm is not None:
        entry["algorithm"] = _algorithm_json(link.algorithm)
    if link.rate_control is not None:
        entry["rate_control"] = link.rate_control.core_json()
    if link.ack_control is not None:
        entry["ack_control"] = {
            "rates_from": link_index[link.ack_control.rates_from],
            "window": link.ack_control.window_json(),
            "ack_bucket": link.ack_control.ack_bucket,
        }
    return entry


def _algorithm_json(algorithm: Algorithm) -> dict:
    """A port's switch algorithm in the core JSON (docs/core-interface.md, "ABR")."""
    kind = algorithm.kind
    if kind == "efci":
        return {"kind": kind, "high_cells": algorithm.high, "low_cells": algorithm.low}
    entry: dict[str, Any] = {"kind": kind}
    if kind == "erica":
        entry["variant"] = algorithm.variant or "max_min"
        entry["target_utilization"] = float(algorithm.target_utilization or 0)
    entry["interval_ps"] = parse_time_ps(algorithm.interval or "0 s")
    entry["interval_cells"] = algorithm.interval_cells
    if kind == "fmmra":
        return entry
    entry.update(
        {
            "delta": float(algorithm.delta or 0),
            "measured_rate": bool(algorithm.measured_rate),
            "bidirectional_count": bool(algorithm.bidirectional_count),
        }
    )
    if kind == "erica_plus":
        entry.update(
            {
                "t0_ps": parse_time_ps(algorithm.t0 or "0 s"),
                "a": float(algorithm.a or 0),
                "b": float(algorithm.b or 0),
                "qdlf": float(algorithm.qdlf or 0),
            }
        )
    return entry


def _vc_json(vc: FlatVc, network: Network, link_index: dict[str, int]) -> dict[str, Any]:
    """A VC of the core JSON; an ABR VC adds its backward path and SES parameters."""
    links = network.vc_links(vc.name)
    entry: dict[str, Any] = {
        "name": vc.name,
        "class": vc.vc_class,
        "links": [link_index[n] for n in links],
    }
    if vc.vc_class == "abr" and vc.abr is not None:
        entry["back_links"] = [link_index[n] for n in network.vc_back_links(vc.name)]
        entry["abr"] = vc.abr.core_json(network.links[links[0]].link.cell_rate_cps())
    if vc.vc_class == "gfr" and vc.gfr is not None:
        entry["gfr"] = vc.gfr.core_json(network.links[links[0]].link.cell_rate_cps())
    return entry


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


def _source_json(source: Source, parsed: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """A source's times and ``model`` in the core JSON. The copies of a template share
    their Source, parsed once (``parsed``: by the Source's id); each copy gets its own
    ``model`` dict (a frames model's ``frame_cells`` table is shared: nothing writes
    into the core JSON after it is made)."""
    known = parsed.get(id(source))
    if known is None:
        known = parsed[id(source)] = {
            "start_ps": parse_time_ps(source.start),
            "stop_ps": None if source.stop is None else parse_time_ps(source.stop),
            "model": _model_json(source),
        }
    return {**known, "model": dict(known["model"])}


def _flow_json(flat: FlatFlow, vc_index: dict[str, int], link_index: dict[str, int]) -> dict:
    """A flow of the core JSON (docs/core-interface.md, "TCP and IP")."""
    flow = flat.flow
    atm = flat.layer == "atm"
    tick_ps = flow.tick_ps()
    return {
        "name": flat.name,
        "layer": flat.layer,
        "data_vc": vc_index[flat.data_vc] if atm else None,
        "ack_vc": vc_index[flat.ack_vc] if atm else None,
        "data_links": [] if atm else [link_index[n] for n in flat.data_links],
        "ack_links": [] if atm else [link_index[n] for n in flat.ack_links],
        "variant": flow.variant.replace("-", "_"),
        "mss_bytes": flow.mss,
        "rcv_window_bytes": flow.window_bytes(),
        "window_scale": flow.window_shift(),
        "initial_cwnd_segments": flow.initial_cwnd,
        "initial_ssthresh_bytes": (
            None if flow.initial_ssthresh == "auto" else parse_size_bytes(flow.initial_ssthresh)
        ),
        "timer": {"kind": "fine"} if tick_ps is None else {"kind": "coarse", "tick_ps": tick_ps},
        "rtt_arithmetic": flow.rtt_arithmetic,
        "initial_rto_ps": parse_time_ps(flow.initial_rto),
        "min_rto_ps": flow.min_rto_ps(),
        "max_rto_ps": parse_time_ps(flow.max_rto),
        "delayed_ack_ps": parse_time_ps(flow.delayed_ack),
        "processing_ps": parse_time_ps(flow.processing),
        "processing_jitter_ps": parse_time_ps(flow.processing_jitter),
        "start_ps": parse_time_ps(flow.start),
        "app_bytes": None if flow.transfer is None else parse_size_bytes(flow.transfer),
        "max_sack_blocks": flow.max_sack_blocks,
    }


def to_core(scenario: Scenario) -> dict:
    """The core JSON of docs/core-interface.md: indices, picoseconds, cells/s, bytes.

    Optional keys are written only where they apply: ``layer`` and the packet
    buffers for IP links, ``flows`` and ``probes.flows`` for scenarios with flows,
    ``algorithm`` for ports with a switch algorithm, ``rate_control`` and ``ack_control``
    for IP links that have them, ``back_links`` and ``abr`` for
    ABR VCs, ``gfr`` for GFR VCs, ``probes.abr_vcs`` and ``probes.abr_ports`` for
    scenarios with ABR, ``probes.vc_queue`` when it lists a port. A scenario without
    an element gives the same JSON whatever the keys of that element.
    """
    network = Network(scenario)
    node_index = {name: i for i, name in enumerate(network.nodes)}
    link_index = {name: i for i, name in enumerate(network.links)}
    vc_index = {vc.name: i for i, vc in enumerate(network.vcs)}
    flow_index = {flow.name: i for i, flow in enumerate(network.flows)}

    def indices(names: Any, index: dict[str, int]) -> list[int]:
        return list(index.values()) if names == "all" else [index[name] for name in names]

    probes = scenario.probes
    parsed: dict[int, dict[str, Any]] = {}
    core: dict[str, Any] = {
        "duration_ps": parse_time_ps(scenario.run.duration),
        "seed": scenario.run.seed,
        "fast_paths": scenario.run.fast_paths,
        "arbitration": scenario.run.arbitration,
        "nodes": [{"name": flat.name, "kind": flat.node.kind} for flat in network.nodes.values()],
        "links": [_link_json(flat, node_index, link_index) for flat in network.links.values()],
        "vcs": [_vc_json(vc, network, link_index) for vc in network.vcs],
        "sources": [
            {"name": flat.name, "vc": vc_index[flat.vc], **_source_json(flat.source, parsed)}
            for flat in network.sources
        ],
        "probes": {
            "period_ps": 0 if probes.period is None else parse_time_ps(probes.period),
            "queue": indices(probes.queue, link_index),
            "utilization": indices(probes.utilization, link_index),
            "vc_rate": indices(probes.vc_rate, vc_index),
        },
    }
    if probes.delay:
        core["probes"]["delay"] = True
    vc_losses = indices(probes.vc_losses, vc_index)
    if vc_losses:
        core["probes"]["vc_losses"] = vc_losses
    vc_queue = indices(probes.vc_queue, {name: link_index[name] for name in network.atm_links()})
    if vc_queue:
        core["probes"]["vc_queue"] = vc_queue
    if network.flows:
        core["flows"] = [_flow_json(flat, vc_index, link_index) for flat in network.flows]
        core["probes"]["flows"] = indices(probes.flows, flow_index)
    abr_vcs = {name: vc_index[name] for name in network.abr_vcs()}
    abr_ports = {name: link_index[name] for name in network.abr_ports()}
    if abr_vcs or abr_ports:
        core["probes"]["abr_vcs"] = indices(probes.abr_vcs, abr_vcs)
        core["probes"]["abr_ports"] = indices(probes.abr_ports, abr_ports)
    if probes.capture:
        targets = network.capture_targets()
        names = list(targets) if probes.capture == "all" else probes.capture
        limit = parse_size_bytes(probes.capture_limit)
        core["captures"] = [
            {
                "name": name,
                "links": [
                    {"link": link_index[link], "stamp": stamp} for link, stamp in targets[name]
                ],
                "max_bytes": limit,
            }
            for name in names
        ]
    return core
