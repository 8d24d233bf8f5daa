"""The truth suite: the simulator checked against results that do not come from its
own runs (queueing theory, max-min fairness, TCP's ceilings and sawtooth, the
papers' claims, RFC 1624), each over a grid of parameters (``atmsim
validate-model``, docs/validation.md, "The truth suite").

A truth has a name, the source it comes from, a grid (a small one, the fast set,
and the full one), a measurement (one simulation, or two, per grid point and run
seed) and a judgement: for each grid point the simulated value, the theoretical
value, the accepted range with the reason for its width, and a verdict. Statistical
tolerances are confidence intervals over run seeds; deterministic ones are exact up
to a stated granularity.

Warm-up: a quantity measured "over [W, T]" comes from two runs with the same run seed,
one of duration W and one of T. A run's first W seconds do not depend on its
duration (the random streams and the order of events are the run seed's alone), so
the difference of their counters (cells offered, dropped, delivered, the time
integral of the queue, busy time, bytes delivered) is exactly the count of the
interval [W, T]: the start-up transient is discarded without a statistic of its own.

Verdicts: ``pass``; ``FAIL`` (the simulator disagrees with the theory: a model
defect, or a claim that does not hold; ``known`` gives the likely cause when it is
understood).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from ..api import run
from ..binding import import_core
from ..compare import jain
from ..fairness import allocate, capacities, entities
from ..outputs import prepare_out_dir, replacing, write_file
from ..reproduce.stats import spread
from ..scenario.templates import Gfc2, HeteroRtt, NSource, gfc2, hetero_rtt, n_source
from ..units import parse_time_ps
from ..workers import imap_unordered
from . import theory
from .bench import machine

CONFIDENCE = 0.999
"""The level of the intervals over run seeds. The full grids hold about 35 statistical
points: at 95 % one or two would fail by chance alone; at 99.9 % the chance that any
does is about 3 %, and a point that fails is then looked at, not loosened. (The run
seeds are fixed, 1 to n: a result is the same on every machine.)"""

OC3 = "155.52 Mbps"
OC3_CPS = 155.52e6 / 424
CELL_PS = round(1e12 / OC3_CPS)
"""The port's cell time, rounded to the picosecond as the core rounds it."""
CELL_S = CELL_PS / 1e12


# --- what a truth produces ------------------------------------------------------------------


@dataclass
class Check:
    """One judged value at one grid point."""

    truth: str
    point: str
    """The grid point, as ``key=value`` pairs."""
    metric: str
    simulated: float
    theory: float
    low: float
    high: float
    """The accepted range of the simulated value."""
    tolerance: str
    """How wide the range is and why, in a few words."""
    known: Optional[str] = None
    """The likely cause, when the check fails for a known reason."""

    @property
    def within(self) -> bool:
        return (
            math.isfinite(self.simulated)
            and self.low - 1e-12 * abs(self.low) <= self.simulated
            and self.simulated <= self.high + 1e-12 * abs(self.high)
        )

    @property
    def verdict(self) -> str:
        return "pass" if self.within else "FAIL"

    def row(self) -> dict:
        return {
            "truth": self.truth,
            "point": self.point,
            "metric": self.metric,
            "simulated": self.simulated,
            "theory": self.theory,
            "low": self.low,
            "high": self.high,
            "tolerance": self.tolerance,
            "verdict": self.verdict,
            "known_cause": self.known if self.verdict == "FAIL" else None,
        }


Measure = Callable[[dict, int], dict]
Judge = Callable[[dict, list[dict]], list[Check]]


@dataclass
class Truth:
    """A truth: what it checks, against which source, over which grid."""

    name: str
    title: str
    source: str
    tolerance: str
    """Why the accepted ranges are as wide as they are."""
    fast: list[dict]
    full: list[dict]
    seeds_fast: int
    seeds_full: int
    measure: Measure
    judge: Judge
    known: Optional[str] = None
    """The likely cause of a failure the project already knows of."""
    notes: list[str] = field(default_factory=list)

    def grid(self, full: bool) -> list[dict]:
        return self.full if full else self.fast

    def seeds(self, full: bool) -> list[int]:
        return list(range(1, 1 + (self.seeds_full if full else self.seeds_fast)))


def point_text(params: dict) -> str:
    return " ".join(f"{key}={value}" for key, value in params.items() if not key.startswith("_"))


# --- running ----------------------------------------------------------------------------------


def _run(scenario: dict, seed: int):
    return run(scenario, seed=seed, progress=False)


def _with_duration(scenario: dict, seconds: float) -> dict:
    import copy

    out = copy.deepcopy(scenario)
    out.setdefault("run", {})["duration"] = _ps(seconds)
    return out


def _ps(seconds: float) -> str:
    """A time for a scenario, in whole picoseconds (a float's decimal expansion may not
    be one)."""
    return f"{round(seconds * 1e12)} ps"


def _window(scenario: dict, warmup_s: float, seed: int):
    """(summary at W, summary at T, T - W, full Result): the two runs whose difference
    is the interval [W, T] (module docstring)."""
    total_s = _seconds(scenario["run"]["duration"])
    early = _run(_with_duration(scenario, warmup_s), seed).summary
    late = _run(scenario, seed)
    return early, late.summary, total_s - warmup_s, late


def _seconds(text: str) -> float:
    return parse_time_ps(text) / 1e12


def _by_name(summary: dict, kind: str) -> dict:
    return {item["name"]: item for item in summary.get(kind, [])}


def _port_delta(early: dict, late: dict, name: str, key: str) -> float:
    return _by_name(late, "ports")[name][key] - _by_name(early, "ports")[name][key]


def _port_integral(early: dict, late: dict, name: str, key: str) -> float:
    """The time integral over [W, T] of a port's time-averaged ``key`` (a mean queue or
    the utilisation, averages over each run's own length)."""
    return (
        _by_name(late, "ports")[name][key] * late["sim_time_s"]
        - _by_name(early, "ports")[name][key] * early["sim_time_s"]
    )


def _statistical(
    truth: str,
    point: str,
    metric: str,
    samples: Sequence[float],
    expected: float,
) -> Check:
    """The mean of ``samples`` (one per run seed) against ``expected``: it passes when
    the theory lies in the CONFIDENCE interval of the mean (Student's t over run seeds)."""
    s = spread(list(samples), CONFIDENCE)
    half = s.half_width if math.isfinite(s.half_width) else math.inf
    return Check(
        truth,
        point,
        metric,
        s.mean,
        expected,
        expected - half,
        expected + half,
        f"+-{half:.3g}: {CONFIDENCE:.1%} t-interval over {s.n} run seeds",
    )


# --- 1. queueing ----------------------------------------------------------------------------


def _poisson_port(load: float, duration_s: float, buffer: Any = "inf") -> dict:
    """Poisson cells (one source, or two when the load exceeds one source's ceiling of
    the link's rate) straight into one port at their own node: an M/D/1 queue whose
    service is the port's cell time. A source feeding its own node's port is not
    slotted (no link before it), so arrivals fall anywhere in time."""
    rate_cps = load / CELL_S
    pieces = 1 if rate_cps <= OC3_CPS * 0.999 else 2
    sources = {
        f"p{k}": {
            "path": ["src", "sink"],
            "kind": "poisson",
            "rate": f"{rate_cps / pieces!r} cells/s",
        }
        for k in range(1, pieces + 1)
    }
    return {
        "run": {"duration": _ps(duration_s)},
        "nodes": {"src": {"kind": "host"}, "sink": {"kind": "host"}},
        "links": {
            "port": {
                "from": "src",
                "to": "sink",
                "rate": OC3,
                "delay": "0 ms",
                "buffer": buffer,
                "policy": "tail",
            }
        },
        "sources": sources,
    }


MD1_WARMUP_S = 0.1
"""Discarded: the M/D/1 queue forgets its empty start within a few relaxation times,
about (1 + rho) / (1 - sqrt(rho))^2 service times (3000 cell times, 8 ms, at rho
0.95); 0.1 s is more than ten of them at every load of the grid."""


def _measure_md1(params: dict, seed: int) -> dict:
    scenario = _poisson_port(params["load"], params["_duration_s"])
    early, late, span, _ = _window(scenario, MD1_WARMUP_S, seed)
    waiting = _port_integral(early, late, "port", "mean_queue_cells") / span
    return {"wait_cells": waiting / params["load"]}  # Little: W_q = L_q / lambda


def _judge_md1(params: dict, runs: list[dict]) -> list[Check]:
    load = params["load"]
    return [
        _statistical(
            "md1-wait",
            point_text(params),
            "wait (cells)",
            [r["wait_cells"] for r in runs],
            theory.md1_mean_wait(load),
        )
    ]


def _measure_md1k(params: dict, seed: int) -> dict:
    scenario = _poisson_port(params["load"], params["_duration_s"], params["buffer"])
    early, late, _, _ = _window(scenario, MD1_WARMUP_S, seed)
    offered = _port_delta(early, late, "port", "cells_in")
    dropped = _port_delta(early, late, "port", "cells_dropped")
    return {"loss": dropped / offered}


def _judge_md1k(params: dict, runs: list[dict]) -> list[Check]:
    return [
        _statistical(
            "md1k-loss",
            point_text(params),
            "loss prob.",
            [r["loss"] for r in runs],
            theory.md1k_loss(params["load"], params["buffer"]),
        )
    ]


def _measure_karol(params: dict, seed: int) -> dict:
    """N inputs, each a link from its own host into switch ``sw``, every input a
    Bernoulli process of p / N cells per slot (a geometric on/off source with bursts of
    mean 1 at the link's cell rate: each slot busy independently with probability
    mean / peak; its slots start at a random phase, as independent lines do), all for
    one output port ``out``."""
    n, p = params["n"], params["p"]
    nodes = {f"h{i}": {"kind": "host"} for i in range(1, n + 1)}
    nodes.update({"sw": {"kind": "switch"}, "sink": {"kind": "host"}})
    links: dict[str, Any] = {
        f"in{i}": {"from": f"h{i}", "to": "sw", "rate": OC3, "delay": "10 us"}
        for i in range(1, n + 1)
    }
    links["out"] = {"from": "sw", "to": "sink", "rate": OC3, "delay": "0 ms"}
    sources = {
        f"s{i}": {
            "kind": "geometric_onoff",
            "path": [f"h{i}", "sw", "sink"],
            "peak": OC3,
            "mean": f"{p / n * OC3_CPS!r} cells/s",
            "mean_burst": 1,
        }
        for i in range(1, n + 1)
    }
    # Slotted contention (the default, written out): the cells of one slot contend.
    run: dict[str, Any] = {"duration": _ps(params["_duration_s"]), "arbitration": "slotted"}
    scenario = {"run": run, "nodes": nodes, "links": links, "sources": sources}
    early, late, span, _ = _window(scenario, MD1_WARMUP_S, seed)
    waiting = _port_integral(early, late, "out", "mean_queue_cells") / span
    return {"wait_slots": waiting / p}


def _judge_karol(params: dict, runs: list[dict]) -> list[Check]:
    return [
        _statistical(
            "karol-output-queue",
            point_text(params),
            "wait (slots)",
            [r["wait_slots"] for r in runs],
            theory.karol_output_wait(params["n"], params["p"]),
        )
    ]


# --- 2. max-min fair rates of ABR -----------------------------------------------------------

ABR_SOURCE = {
    "pcr": OC3,
    "mcr": "0 Mbps",
    "icr": "10 Mbps",
    "rif": 1,
    "rdf": "1/512",
    "cdf": 0.5,
    "nrm": 32,
    "mrm": 2,
    "trm": "100 ms",
    "crm": 20,
    "adtf": "500 ms",
    "tcr": "10 cells/s",
}
"""TCP over FMMRA's (An et al., 1998) source parameters for explicit-rate switches (the gfc2
template's)."""

RATE_PRECISION = 1.0 / 512
"""TM 4.0's RM-cell rate precision (a 9-bit mantissa)."""

DELTA = 0.1
"""ERICA's overload band (the ERICA description's value, the core's default)."""


def _algorithm(kind: str) -> dict:
    if kind == "erica":
        return {"kind": "erica", "target_utilization": 0.9}
    return {"kind": kind}


def _target(kind: str) -> float:
    """The share of a link's capacity each algorithm aims the ABR input at: ERICA its
    target utilisation U = 0.9; ERICA+ the whole link (its target f(Tq) is 1 at the
    queue it aims at); FMMRA the whole link (utilisation 1.0)."""
    return 0.9 if kind == "erica" else 1.0


def _abr_scenario(params: dict) -> dict:
    """The topology of a max-min grid point, greedy ABR sources."""
    topology, algorithm = params["topology"], params["algorithm"]
    if topology == "gfc2":
        scenario = gfc2(Gfc2.model_validate({"kind": "gfc2", "algorithm": algorithm}))
        scenario["probes"] = {}
        scenario["run"]["duration"] = _ps(params["_duration_s"])
        return scenario
    nodes: dict[str, Any] = {}
    links: dict[str, Any] = {}
    sources: dict[str, Any] = {}
    hop = {"length": "100 km", "duplex": True}

    def switch_link(a: str, b: str, rate: str) -> None:
        nodes.setdefault(a, {"kind": "switch"})
        nodes.setdefault(b, {"kind": "switch"})
        links[f"{a}-{b}"] = {"from": a, "to": b, "rate": rate, **hop}
        links[f"{a}-{b}"]["algorithm"] = _algorithm(algorithm)

    def source(name: str, switches: list[str], mcr_mbps: float = 0.0) -> None:
        nodes[f"{name}-src"] = {"kind": "host"}
        nodes[f"{name}-dst"] = {"kind": "host"}
        links[f"{name}-in"] = {"from": f"{name}-src", "to": switches[0], "rate": OC3, **hop}
        links[f"{name}-out"] = {"from": switches[-1], "to": f"{name}-dst", "rate": OC3, **hop}
        abr = dict(ABR_SOURCE)
        if mcr_mbps:
            abr["mcr"] = f"{mcr_mbps} Mbps"
            abr["icr"] = f"{max(mcr_mbps, 10.0)} Mbps"
        sources[name] = {
            "kind": "greedy",
            "path": [f"{name}-src", *switches, f"{name}-dst"],
            "class": "abr",
            "abr": abr,
        }

    if topology == "single":
        switch_link("sw1", "sw2", OC3)
        for i in range(1, params["n"] + 1):
            source(f"v{i}", ["sw1", "sw2"])
    elif topology == "mcr":
        switch_link("sw1", "sw2", OC3)
        for i, mcr in enumerate(float(m) for m in params["mcrs"].split("/")):
            source(f"v{i + 1}", ["sw1", "sw2"], mcr)
    elif topology == "parking":
        # A long VC over three links of falling capacity and one short VC per link: its
        # max-min rates are all different (progressive filling fills the 50 Mbps link
        # first, then the 100, then the 155.52).
        switch_link("sw1", "sw2", OC3)
        switch_link("sw2", "sw3", "100 Mbps")
        switch_link("sw3", "sw4", "50 Mbps")
        source("long", ["sw1", "sw2", "sw3", "sw4"])
        source("a", ["sw1", "sw2"])
        source("b", ["sw2", "sw3"])
        source("c", ["sw3", "sw4"])
    else:  # pragma: no cover - the grids name the topologies above
        raise ValueError(topology)
    return {
        "run": {"duration": _ps(params["_duration_s"])},
        "nodes": nodes,
        "links": links,
        "sources": sources,
    }


def _measure_abr(params: dict, seed: int) -> dict:
    """Each VC's rate on the wire over [W, T] (its data cells and its forward RM cells,
    which the switch counts as its input too) and each link's ABR load, against the
    max-min allocation of the capacities times the algorithm's target share."""
    scenario = _abr_scenario(params)
    early, late, span, result = _window(scenario, params["_warmup_s"], seed)
    core = result.core_input
    found = entities(core, late)
    target = _target(params["algorithm"])
    caps = [c * target for c in capacities(core)]
    names = [link["name"] for link in core["links"]]
    allocate(found, caps, names)
    vcs_early, vcs_late = _by_name(early, "vcs"), _by_name(late, "vcs")
    rates = {}
    for e in found:
        cells = vcs_late[e.name]["cells_delivered"] - vcs_early[e.name]["cells_delivered"]
        rms = vcs_late[e.name]["abr"]["frms_sent"] - vcs_early[e.name]["abr"]["frms_sent"]
        rates[e.name] = (cells + rms) * 424 / span
    fair = {e.name: e.fair_bps for e in found}
    # The load of every link that bottlenecks some VC, against its target: the ABR cells
    # offered to its port over [W, T] (data and forward RM cells, what the switch
    # measures as its input), as a rate on the wire.
    loads = {}
    for link in {e.bottleneck for e in found if e.bottleneck}:
        index = names.index(link)
        offered = _port_delta(early, late, link, "cells_in") * 424 / span
        loads[link] = offered / caps[index]
    normalised = [rates[name] / fair[name] for name in rates]
    return {
        "jain": min(1.0, jain(normalised)),
        "worst_load": min(loads.values()),
        "most_load": max(loads.values()),
        "min_normalised": min(normalised),
        "max_normalised": max(normalised),
    }


ABR_KNOWN = {
    "mcr": (
        "the switch algorithms share the ABR capacity max-min without regard to MCR "
        "(ERICA's fair share is target / N; FMMRA's advertised rate is (C - elsewhere) "
        "/ N); a source's MCR acts only as the floor of its ACR (TM 4.0 source rules), "
        "so a VC with a large MCR gets max(MCR, max-min share), not MCR plus an equal "
        "share of the excess; and an MCR above the share comes on top of what the "
        "others are given, so the ABR load exceeds the target (ERICA with MCRs 0, 20, "
        "60 Mbps: 1.13 of it, 102 % of the link: its queue grows)"
    ),
}


def _judge_abr(params: dict, runs: list[dict]) -> list[Check]:
    # The bands below are the algorithms' own, not intervals over run seeds: one run seed
    # (it orders simultaneous arrivals only; greedy sources draw nothing).
    run = runs[0]
    kind = params["algorithm"]
    point = point_text(params)
    name = "abr-mcr-share" if params["topology"] == "mcr" else "abr-max-min"
    known = ABR_KNOWN.get(params["topology"])
    least = theory.least_jain_in_band(1.0 + DELTA)
    checks = [
        Check(
            name,
            point,
            "Jain(norm.)",
            run["jain"],
            1.0,
            least,
            1.0,
            f">= {least:.4f}: rates anywhere in ERICA's band [1, 1+delta]",
            known=known,
        )
    ]
    # Each band is widened by TM 4.0's rate precision, 1/512 (the RM cells' rate
    # format; the switches take a rate within it of the fair share as at it).
    eps = RATE_PRECISION
    if kind == "erica":
        low, high = 1.0 - eps, 1.0 + DELTA + eps
        why = "z in [1, 1+delta] is a fixed point"
    else:
        low, high = 1.0 / (1.0 + DELTA) - eps, 1.0 + eps
        why = "a full link, z within the band"
    checks.append(
        Check(
            name,
            point,
            "load/target",
            run["worst_load"],
            1.0,
            low,
            high,
            f"[{low:.3f}, {high:.3f}]: {why}",
            known=known,
        )
    )
    return checks


# --- 3. TCP ------------------------------------------------------------------------------------


def _tcp_path(layer: str, rate: str, length: str, hops: int = 2) -> tuple[dict, dict, list]:
    """Nodes and links of a chain s -> sw1 (-> sw2 ...) -> d, duplex, equal rates."""
    names = ["s", *[f"sw{k}" for k in range(1, hops)], "d"]
    nodes = {name: {"kind": "host" if name in ("s", "d") else "switch"} for name in names}
    links = {}
    for a, b in zip(names, names[1:]):
        links[f"{a}-{b}"] = {
            "from": a,
            "to": b,
            "rate": rate,
            "length": length,
            "duplex": True,
        }
        if layer == "ip":
            links[f"{a}-{b}"]["layer"] = "ip"
    return nodes, links, names


def _tcp_flow(params: dict, **extra: Any) -> dict:
    flow = {
        "variant": "reno",
        "mss": params["mss"],
        "timer": "fine",
        "delayed_ack": "0 ms",
        **extra,
    }
    return flow


def _measure_ceiling(params: dict, seed: int) -> dict:
    """One greedy TCP connection (a 16 MB window, far above the pipe) over a two-hop
    path of equal rates, 1 km links, unlimited buffers: nothing but the link's rate
    limits it."""
    service = params["service"]
    layer = "ip" if service == "ip" else "atm"
    nodes, links, names = _tcp_path(layer, f"{params['mbps']} Mbps", "1 km")
    flow = _tcp_flow(params, path=names, window="16 MB")
    if service != "ip":
        flow["class"] = service
    if service == "abr":
        # No switch algorithm: backward RM cells come back unmarked and the ACR rises
        # to the PCR (the link's rate) and stays there.
        flow["abr"] = {"pcr": "auto", "icr": "auto", "nrm": 32}
    scenario = {
        "run": {"duration": _ps(params["_duration_s"])},
        "nodes": nodes,
        "links": links,
        "flows": {"tcp": flow},
    }
    return _tcp_goodput(scenario, params["_warmup_s"], seed)


def _tcp_goodput(scenario: dict, warmup_s: float, seed: int) -> dict:
    """Flow ``tcp``'s goodput over [warm-up, end] of ``scenario`` (``_window``)."""
    early, late, span, _ = _window(scenario, warmup_s, seed)
    delivered = (
        _by_name(late, "flows")["tcp"]["bytes_delivered"]
        - _by_name(early, "flows")["tcp"]["bytes_delivered"]
    )
    return {"goodput_bps": delivered * 8 / span, "span_s": span}


def _judge_ceiling(params: dict, runs: list[dict]) -> list[Check]:
    run = runs[0]
    rate_bps = params["mbps"] * 1e6
    mss = params["mss"]
    if params["service"] == "ip":
        ceiling = theory.ip_goodput_ceiling(rate_bps, mss)
    else:
        nrm = 32 if params["service"] == "abr" else None
        ceiling = theory.aal5_goodput_ceiling(rate_bps / 424, mss, nrm)
    # Bytes are counted in whole segments as they are delivered: over the interval the
    # count is off by at most one segment at each end.
    slack = 2 * mss * 8 / run["span_s"]
    return [
        Check(
            "tcp-aal5-ceiling",
            point_text(params),
            "goodput Mbps",
            run["goodput_bps"] / 1e6,
            ceiling / 1e6,
            (ceiling - slack) / 1e6,
            ceiling / 1e6 + slack / 1e6,
            f"-{slack / 1e6:.3g}/+{slack / 1e6:.3g}: one segment at each end of [W, T]",
        )
    ]


def _measure_window(params: dict, seed: int) -> dict:
    """One TCP connection whose receiver window (k segments) is well below the pipe,
    over three hops of 155.52 Mbps of the given length, ATM (UBR) or IP."""
    layer, k, mss = params["layer"], params["k"], params["mss"]
    km = params["km"]
    nodes, links, names = _tcp_path(layer, OC3, f"{km} km", hops=3)
    flow = _tcp_flow(params, path=names, window=f"{k * mss} B", window_scale=0)
    scenario = {
        "run": {"duration": _ps(params["_duration_s"])},
        "nodes": nodes,
        "links": links,
        "flows": {"tcp": flow},
    }
    return _tcp_goodput(scenario, params["_warmup_s"], seed)


def _window_rtt(params: dict) -> float:
    delay = params["km"] * 5e-6
    delays = [delay] * 3
    if params["layer"] == "atm":
        return theory.atm_base_rtt(CELL_S, delays, params["mss"])
    return theory.ip_base_rtt([155.52e6] * 3, delays, params["mss"])


def _judge_window(params: dict, runs: list[dict]) -> list[Check]:
    run = runs[0]
    rtt = _window_rtt(params)
    window_bits = params["k"] * params["mss"] * 8
    expected = window_bits / rtt
    # A window's segments arrive together once per round trip: a count over [W, T]
    # is off by at most one window.
    slack = window_bits / run["span_s"]
    # ATM switch outputs work in cell slots: at each of the two switches, each way, a
    # frame's first cell may wait up to one cell time for its slot to end.
    slot_waits = 4 * CELL_S if params["layer"] == "atm" else 0.0
    slowest = window_bits / (rtt + slot_waits)
    note = "; a cell time a switch for the slots" if slot_waits else ""
    return [
        Check(
            "tcp-window-limited",
            point_text(params),
            "goodput Mbps",
            run["goodput_bps"] / 1e6,
            expected / 1e6,
            (slowest - slack) / 1e6,
            (expected + slack) / 1e6,
            f"+-{slack / 1e6:.3g}: one window over [W, T]{note}",
        )
    ]


RENO_MSS = 960
RENO_PACKET_BITS = (RENO_MSS + 40) * 8
RENO_RATE = 10e6
RENO_ACCESS = 100e6
RENO_ACCESS_DELAY = 1e-3


def _reno_setup(params: dict) -> tuple[dict, float, int, float]:
    """The dumbbell s -> r1 -> r2 -> d (access 100 Mbps, 1 ms; bottleneck 10 Mbps, its
    delay set so that the pipe P = rate x base RTT is the grid's value), one Reno
    connection (MSS 960: 1000-byte packets), the bottleneck's buffer B = beta x P
    packets (at least 1). Returns the scenario, P, B and the base RTT."""
    pipe = params["pipe"]
    rtt = pipe * RENO_PACKET_BITS / RENO_RATE
    transmissions = theory.ip_base_rtt(
        [RENO_ACCESS, RENO_RATE, RENO_ACCESS], [0.0, 0.0, 0.0], RENO_MSS
    )
    bottleneck_delay = (rtt - transmissions) / 2 - 2 * RENO_ACCESS_DELAY
    buffer = max(1, round(params["beta"] * pipe))
    access = {"layer": "ip", "rate": "100 Mbps", "delay": "1 ms", "duplex": True}
    scenario = {
        "run": {"duration": _ps(params["_duration_s"])},
        "nodes": {name: {"kind": "switch"} for name in ("s", "r1", "r2", "d")},
        "links": {
            "s-r1": {"from": "s", "to": "r1", **access},
            "r1-r2": {
                "from": "r1",
                "to": "r2",
                "layer": "ip",
                "rate": "10 Mbps",
                "delay": f"{round(bottleneck_delay * 1e12)} ps",
                "buffer": buffer,
            },
            "r2-r1": {"from": "r2", "to": "r1", "layer": "ip", "rate": "10 Mbps"},
            "r2-d": {"from": "r2", "to": "d", **access},
        },
        "flows": {
            "tcp": {
                "path": ["s", "r1", "r2", "d"],
                "variant": "reno",
                "mss": RENO_MSS,
                "window": f"{8 * (round(pipe) + buffer) * RENO_MSS} B",
                # Start in congestion avoidance near the sawtooth's bottom: the slow
                # start's overshoot would lose a whole window and time out first.
                "initial_ssthresh": f"{max(2, (round(pipe) + buffer) // 2) * RENO_MSS} B",
                "timer": "fine",
                "delayed_ack": "0 ms",
            }
        },
        "probes": {"period": "10 ms", "utilization": ["r1-r2"], "flows": ["tcp"]},
    }
    scenario["links"]["r2-r1"]["delay"] = scenario["links"]["r1-r2"]["delay"]
    return scenario, pipe, buffer, rtt


def _measure_reno(params: dict, seed: int) -> dict:
    """The bottleneck's utilisation over whole sawtooth cycles: from the first window
    halving after the warm-up to the last one (the cwnd series gives the halvings; the
    10 ms utilisation samples between them give the utilisation)."""
    scenario, _, _, _ = _reno_setup(params)
    result = _run(scenario, seed)
    series = result.series
    cwnd = series[(series.metric == "cwnd_bytes")].sort_values("time_s")
    times, values = cwnd.time_s.to_numpy(), cwnd.value.to_numpy()
    # A halving shows as a fall to under 0.7 of the sample before; a recovery's
    # inflated window can show a second fall within its round trip: keep the first.
    _, _, _, rtt = _reno_setup(params)
    cuts: list[float] = []
    for k in range(1, len(values)):
        if values[k] < 0.7 * values[k - 1] and times[k] >= params["_warmup_s"]:
            if not cuts or times[k] - cuts[-1] > 3 * rtt:
                cuts.append(float(times[k]))
    util = series[series.metric == "utilization"]
    if len(cuts) < 3:
        return {"utilisation": math.nan, "cycles": max(0, len(cuts) - 1), "timeouts": 0}
    inside = util[(util.time_s > cuts[0]) & (util.time_s <= cuts[-1])]
    flow = _by_name(result.summary, "flows")["tcp"]
    return {
        "utilisation": float(inside.value.mean()),
        "cycles": len(cuts) - 1,
        "timeouts": flow.get("timeouts", 0),
    }


def _judge_reno(params: dict, runs: list[dict]) -> list[Check]:
    run = runs[0]
    _, pipe, buffer, _ = _reno_setup(params)
    expected = theory.reno_sawtooth_utilisation(pipe, buffer)
    # The formula's window is a real number; TCP's is whole segments (it sends whole
    # segments of its window, which halves to whole segments). While the window is
    # below the pipe, one segment of window is 1 / P of the link.
    half = 1.0 / pipe
    return [
        Check(
            "tcp-reno-sawtooth",
            point_text(params) + f" B={buffer}",
            "utilisation",
            run["utilisation"],
            expected,
            expected - half,
            min(1.0, expected + half),
            f"+-{half:.3g}: one segment of window is 1/P of the link ({run['cycles']} cycles)",
        )
    ]


# --- 4. explicit-rate windows (Explicit rate control of TCP (Satyavolu et al., 1998)) -------------

ER_RATE = 155.52e6


def _er_setup(params: dict) -> tuple[dict, float]:
    """s -> r1 -> r2 -> d over IP links of 155.52 Mbps, each of length km; r1 -> r2
    computes the flow's ER (Explicit rate control of TCP's ERICA+), r1 writes min(window, ER x T)
    into the ACKs arriving from r2. One connection, window 65535 << scale."""
    km, mss, scale = params["km"], params["mss"], params["scale"]
    nodes, links, names = _tcp_path("ip", OC3, f"{km} km", hops=3)
    rtt = theory.ip_base_rtt([ER_RATE] * 3, [km * 5e-6] * 3, mss)
    links["sw1-sw2"]["rate_control"] = "erica_plus"
    rule = params["rule"]
    if rule == "base_rtt":
        window_rule = "base_rtt"
    elif rule == "floor":
        # T so short that ER x T is half a segment: the window is the one-segment floor.
        window_rule = f"{round(mss / 2 / (ER_RATE / 8) * 1e12)} ps"
    else:
        window_rule = f"{round(float(rule) * rtt * 1e12)} ps"
    # duplex made sw2-sw1: the ACKs' hop into r1 (sw1), where the router acts on them.
    links["sw1-sw2"]["duplex"] = False
    links["sw2-sw1"] = {
        "from": "sw2",
        "to": "sw1",
        "layer": "ip",
        "rate": OC3,
        "length": f"{km} km",
        "ack_control": {"rates_from": "sw1-sw2", "window": window_rule},
    }
    flow = _tcp_flow(
        params,
        path=names,
        window=f"{65535 << scale} B",
        window_scale=scale,
    )
    scenario = {
        "run": {"duration": _ps(params["_duration_s"])},
        "nodes": nodes,
        "links": links,
        "flows": {"tcp": flow},
        "probes": {"period": "5 ms", "flows": ["tcp"]},
    }
    return scenario, rtt


def _measure_er(params: dict, seed: int) -> dict:
    scenario, rtt = _er_setup(params)
    early, late, span, result = _window(scenario, params["_warmup_s"], seed)
    delivered = (
        _by_name(late, "flows")["tcp"]["bytes_delivered"]
        - (_by_name(early, "flows")["tcp"]["bytes_delivered"])
    )
    series = result.series
    er = series[(series.metric == "er_bps") & (series.time_s > params["_warmup_s"])]
    # The mean wait of a data packet in the ports of its path over [W, T], by Little's
    # law: the time integral of each port's queue over the packets that entered it
    # (the sender's own port too, where a window sent at once waits).
    delay = 0.0
    for port in ("s-sw1", "sw1-sw2", "sw2-d"):
        entered = _port_delta(early, late, port, "packets_in")
        if entered > 0:
            delay += _port_integral(early, late, port, "mean_queue_packets") / entered
    return {
        "goodput_bps": delivered * 8 / span,
        "er_bps": float(er.value.mean()) if len(er) else math.nan,
        "er_min_bps": float(er.value.min()) if len(er) else math.nan,
        "er_max_bps": float(er.value.max()) if len(er) else math.nan,
        "queue_delay_s": delay,
        "span_s": span,
    }


def _er_t(params: dict, base: float) -> float:
    rule = params["rule"]
    if rule == "base_rtt":
        return base
    if rule == "floor":
        return params["mss"] / 2 / (ER_RATE / 8)
    return float(rule) * base


def _judge_er(params: dict, runs: list[dict]) -> list[Check]:
    """Goodput against usable(ER x T) / RTT, with ER the router's own (its mean over
    [W, T]) and RTT the base round trip plus the controlled port's mean queueing
    delay. The range: the windows of the least and the largest ER of the interval
    (the window follows the ER from interval to interval), and one window more or
    less over [W, T] (a window's segments arrive together once per round trip)."""
    run = runs[0]
    _, base = _er_setup(params)
    mss, scale = params["mss"], params["scale"]
    t = _er_t(params, base)
    receiver = 65535 << scale

    def window(er_bps: float) -> int:
        return theory.usable_window(er_bps / 8 * t, mss, scale, receiver)

    rtt = base + run["queue_delay_s"]
    expected = window(run["er_bps"]) * 8 / rtt
    low = window(run["er_min_bps"]) * 8 / rtt
    high = window(run["er_max_bps"]) * 8 / rtt
    ends = window(run["er_max_bps"]) * 8 / run["span_s"]
    return [
        Check(
            "er-window",
            point_text(params),
            "goodput Mbps",
            run["goodput_bps"] / 1e6,
            expected / 1e6,
            (low - ends) / 1e6,
            (high + ends) / 1e6,
            f"ER's range over [W, T], +-{ends / 1e6:.3g} (one window)",
        )
    ]


def _base_rtt_setup(params: dict) -> tuple[dict, float]:
    """One TCP connection over s -> sw1 -> sw2 -> d (155.52 Mbps, km each), IP routers
    or ATM switches; sw1 -> sw2 computes its ER, and the ACKs' window is written with
    T = "base_rtt" where they arrive (IP: the router sw1, over sw2 -> sw1; ATM: the edge
    where the ACK VC ends, over sw1 -> s). Returns the scenario and the flow's base
    round trip by theory (``ip_base_rtt``, or ``atm_base_rtt``: cells switched one by
    one)."""
    layer, mss, km = params["layer"], params["mss"], params["km"]
    nodes, links, names = _tcp_path(layer, OC3, f"{km} km", hops=3)
    links["sw1-sw2"]["rate_control"] = "erica_plus"
    control = {"rates_from": "sw1-sw2", "window": "base_rtt"}
    back = {"rate": OC3, "length": f"{km} km", "ack_control": control}
    if layer == "ip":
        links["sw1-sw2"]["duplex"] = False
        links["sw2-sw1"] = {"from": "sw2", "to": "sw1", "layer": "ip", **back}
    else:
        links["s-sw1"]["duplex"] = False
        links["sw1-s"] = {"from": "sw1", "to": "s", **back}
    flow = _tcp_flow(params, path=names, window=f"{65535 << 4} B", window_scale=4)
    scenario = {
        "run": {"duration": _ps(params["_duration_s"])},
        "nodes": nodes,
        "links": links,
        "flows": {"tcp": flow},
        "probes": {"period": "5 ms", "flows": ["tcp"]},
    }
    delays = [km * 5e-6] * 3
    if layer == "atm":
        return scenario, theory.atm_base_rtt(CELL_S, delays, mss)
    return scenario, theory.ip_base_rtt([ER_RATE] * 3, delays, mss)


def _measure_base_rtt(params: dict, seed: int) -> dict:
    """The T the router multiplies the ER by: each window it wrote over the ER it had
    (both sampled every 5 ms after the warm-up), their median."""
    scenario, _ = _base_rtt_setup(params)
    series = _run(scenario, seed).series
    series = series[series.time_s > params["_warmup_s"]]
    er = series[series.metric == "er_bps"].set_index("time_s").value
    written = series[series.metric == "rwnd_written_bytes"].set_index("time_s").value
    ratio = (written / (er / 8)).dropna()
    return {
        "t_s": float(ratio.median()) if len(ratio) else math.nan,
        "er_min_bps": float(er.min()) if len(er) else math.nan,
    }


def _judge_base_rtt(params: dict, runs: list[dict]) -> list[Check]:
    run = runs[0]
    _, rtt = _base_rtt_setup(params)
    # The window field holds the window in units of 2^4 bytes: T is known to one unit
    # over the ER, plus the picosecond rounding of the times (1e-6 of T here).
    slack = 16 / (run["er_min_bps"] / 8) + 1e-6 * rtt
    return [
        Check(
            "er-base-rtt",
            point_text(params),
            "T used (ms)",
            run["t_s"] * 1e3,
            rtt * 1e3,
            (rtt - slack) * 1e3,
            (rtt + slack) * 1e3,
            f"+-{slack * 1e6:.2g} us: the window field's unit of 16 bytes over the ER",
        )
    ]


# --- 5. RFC 1624 --------------------------------------------------------------------------------


def _measure_checksum(params: dict, seed: int) -> dict:
    """Random TCP headers (10 words, as the core's ACKs carry) and random new windows,
    the corner words 0x0000 and 0xFFFF included: the core's incremental update of the
    checksum against a full recomputation (RFC 1071) written here."""
    rng = random.Random(seed * 7919 + params["batch"])
    mismatches = 0
    for case in range(params["headers"]):
        words = [rng.randrange(0x10000) for _ in range(10)]
        if case % 7 == 0:
            words[7] = 0xFFFF
        if case % 11 == 0:
            words[7] = 0
        checksum = theory.internet_checksum(words)
        new = [0, 0xFFFF, words[7], rng.randrange(0x10000)][case % 4]
        incremental = import_core().checksum_update(checksum, words[7], new)
        words[7] = new
        if incremental != theory.internet_checksum(words):
            mismatches += 1
    return {"mismatches": mismatches}


def _measure_checksum_in_run(params: dict, seed: int) -> dict:
    """Explicit rate control of TCP's hetero-rtt configuration with windows written by the router:
    every rewritten ACK's checksum is checked by the sender that takes it; a failure unbalances
    the run's ledger."""
    scenario = hetero_rtt(
        HeteroRtt.model_validate({"kind": "hetero-rtt", "window_rule": "30 ms", "n": 2})
    )
    scenario["run"]["duration"] = "1 s"
    scenario["probes"] = {}
    summary = _run(scenario, seed).summary
    rewritten = sum(
        (flow.get("rate_control") or {}).get("acks_rewritten", 0)
        for flow in summary.get("flows", [])
    )
    problems = [p for p in summary["conservation"].get("problems", []) if "checksum" in p]
    return {"mismatches": len(problems), "rewritten": rewritten}


def _judge_checksum(params: dict, runs: list[dict]) -> list[Check]:
    total = sum(r["mismatches"] for r in runs)
    checks = [
        Check(
            "rfc1624-checksum",
            point_text(params),
            "mismatches",
            float(total),
            0.0,
            0.0,
            0.0,
            "exact: one's-complement arithmetic has no tolerance",
        )
    ]
    if "rewritten" in runs[0]:
        rewritten = sum(r["rewritten"] for r in runs)
        checks.append(
            Check(
                "rfc1624-checksum",
                point_text(params),
                "ACKs rewritten",
                float(rewritten),
                float(rewritten),
                1.0,
                math.inf,
                "the run must exercise the rewrite",
            )
        )
    return checks


def _measure_checksum_point(params: dict, seed: int) -> dict:
    if params["batch"] == "run":
        return _measure_checksum_in_run(params, seed)
    return _measure_checksum(params, seed)


# --- 6. the papers' claims ------------------------------------------------------------------------


def _ubr_windows(params: dict) -> tuple[dict, int, int]:
    """ABR and UBR buffering's (Kalyanaraman et al., 1998) n-source configuration over UBR (no
    switch algorithm), 100 km links (RTT 3 ms), MSS 512, n connections of the given window; the
    bottleneck's buffer a factor of the sum of the windows in cells. Returns the scenario, the sum
    of the windows in cells and the pipe in cells."""
    n, window_kb, factor = params["n"], params["window_kb"], params["factor"]
    mss = 512
    segments = window_kb * 1024 // mss
    windows_cells = n * segments * theory.cells_per_segment(mss)
    buffer = max(1, math.floor(factor * windows_cells))
    template = NSource.model_validate(
        {
            "kind": "n-source",
            "n": n,
            "algorithm": "none",
            "access_km": 100,
            "bottleneck_km": 100,
            "exit_km": 100,
            "buffer": buffer,
            "mss": mss,
            "window": f"{window_kb} KB",
            "window_scale": "auto",
            "duration": _ps(params["_duration_s"]),
        }
    )
    scenario = n_source(template)
    scenario["probes"] = {}
    rtt = 2 * 3 * 100 * 5e-6
    pipe = round(OC3_CPS * rtt)
    return scenario, windows_cells, pipe


def _measure_ubr(params: dict, seed: int) -> dict:
    scenario, _, _ = _ubr_windows(params)
    summary = _run(scenario, seed).summary
    port = _by_name(summary, "ports")["sw1-sw2"]
    return {"dropped": port["cells_dropped"], "max_queue": port["max_queue_cells"]}


def _judge_ubr(params: dict, runs: list[dict]) -> list[Check]:
    _, windows, pipe = _ubr_windows(params)
    dropped = float(max(r["dropped"] for r in runs))
    point = point_text(params) + f" windows={windows} pipe={pipe}"
    if params["factor"] >= 1.0:
        return [
            Check(
                "ubr-buffer-windows",
                point,
                "cells dropped",
                dropped,
                0.0,
                0.0,
                0.0,
                "exact: the buffer holds every window",
            )
        ]
    return [
        Check(
            "ubr-buffer-windows",
            point,
            "cells dropped",
            dropped,
            math.nan,
            1.0,
            math.inf,
            "windows exceed buffer + pipe: some loss",
        )
    ]


def _measure_abr_buffer(params: dict, seed: int) -> dict:
    """ABR and UBR buffering's configuration (the n-source template, its Table 1 and 2 runs): n TCP
    connections over ABR with ERICA through one bottleneck, every link km long, an
    unlimited buffer, and the ABR source parameters of TM 4.0's defaults that the ABR and UBR
    buffering paper says it used ("default values"; ICR = PCR, RIF = RDF = CDF = 1/16, TBE 2^24 -
    1), as scenarios/reproduce/seed002-table1.toml sets them. The largest queue of the
    whole run counts, start-up included, as the paper reports it."""
    km = params["km"]
    template = NSource.model_validate(
        {
            "kind": "n-source",
            "n": params["n"],
            "access_km": km,
            "bottleneck_km": km,
            "exit_km": km,
            "tbe": 16777215,
            "duration": _ps(params["_duration_s"]),
        }
    )
    scenario = n_source(template)
    scenario["flows"]["tcp{i}"]["abr"].update(
        {"icr": "auto", "rif": "1/16", "rdf": "1/16", "cdf": "1/16"}
    )
    scenario["probes"] = {}
    summary = _run(scenario, seed).summary
    return {"max_queue": _by_name(summary, "ports")["sw1-sw2"]["max_queue_cells"]}


ABR_BUFFER_KNOWN_SHORT = (
    "at short round trips ERICA's averaging interval (1 ms or 100 cells) is a large "
    "part of the round trip, so its feedback comes late in round trips (ABR and UBR buffering's "
    "own Table 2 gives 2.89 RTT at 50 km; docs/reproduction.md, ABR and UBR buffering)"
)


def _judge_abr_buffer(params: dict, runs: list[dict]) -> list[Check]:
    rtt = 2 * 3 * params["km"] * 5e-6
    worst = float(max(r["max_queue"] for r in runs))
    known = ABR_BUFFER_KNOWN_SHORT if params["km"] <= 200 else None
    return [
        Check(
            "abr-buffer-rtt",
            point_text(params) + f" RTT={rtt * 1e3:g}ms",
            "maxQ/(RTT x C)",
            worst / (rtt * OC3_CPS),
            math.nan,
            0.0,
            3.0,
            "<= 3: ABR and UBR buffering's WAN buffer requirement (worst run seed)",
            known=known,
        )
    ]


# --- the truths ----------------------------------------------------------------------------------


def _grid(**axes: Sequence[Any]) -> list[dict]:
    points: list[dict] = [{}]
    for key, values in axes.items():
        points = [{**p, key: v} for p in points for v in values]
    return points


def _with(points: list[dict], **fixed: Any) -> list[dict]:
    return [{**p, **fixed} for p in points]


def _md1k_grid(loads: Sequence[float], buffers: Sequence[int]) -> list[dict]:
    """The (load, buffer) points whose loss is large enough to be measured in the run:
    at least 10^-4 (hundreds of losses per run seed)."""
    return [
        p
        for p in _grid(load=loads, buffer=buffers)
        if theory.md1k_loss(p["load"], p["buffer"]) >= 1e-4
    ]


TRUTHS: list[Truth] = [
    Truth(
        name="md1-wait",
        title="M/D/1 mean waiting time",
        source="Pollaczek-Khinchine mean-value formula (Kleinrock, Queueing Systems "
        "Vol. 1, 1975, 5.6): W = rho / (2 (1 - rho)) cell times",
        tolerance="statistical: 99.9 % t-interval of the mean over run seeds",
        fast=_with(_grid(load=[0.5, 0.9]), _duration_s=10),
        full=_with(_grid(load=[0.3, 0.5, 0.7, 0.8, 0.9, 0.95]), _duration_s=20),
        seeds_fast=6,
        seeds_full=10,
        measure=_measure_md1,
        judge=_judge_md1,
    ),
    Truth(
        name="md1k-loss",
        title="M/D/1/K loss probability",
        source="exact M/G/1/K by the embedded Markov chain at departures (Gross and "
        "Harris, Fundamentals of Queueing Theory, 5.1.9), K = buffer + 1",
        tolerance="statistical: 99.9 % t-interval of the mean over run seeds",
        fast=_with(_md1k_grid([0.9], [3]) + _md1k_grid([1.2], [10]), _duration_s=10),
        full=_with(_md1k_grid([0.5, 0.8, 0.9, 1.0, 1.2], [1, 3, 10, 30]), _duration_s=20),
        seeds_fast=6,
        seeds_full=10,
        measure=_measure_md1k,
        judge=_judge_md1k,
    ),
    Truth(
        name="karol-output-queue",
        title="output-queued switch port, N inputs over links",
        source="Karol, Hluchyj and Morgan, Input Versus Output Queueing on a "
        "Space-Division Packet Switch, 1987: W = ((N-1)/N) p / (2 (1-p)) slots",
        tolerance="statistical: 99.9 % t-interval of the mean over run seeds",
        fast=_with(_grid(n=[2], p=[0.8]), _duration_s=5),
        full=_with(_grid(n=[2, 4, 8, 16], p=[0.5, 0.8, 0.9]), _duration_s=10),
        seeds_fast=4,
        seeds_full=8,
        measure=_measure_karol,
        judge=_judge_karol,
        notes=[
            "Switch output ports in cell slots (cells reaching an output over a link "
            'within one cell time contend together, [run] arbitration = "slotted").'
        ],
    ),
    Truth(
        name="abr-max-min",
        title="ABR greedy sources reach max-min fair rates",
        source="max-min fairness by progressive filling (Bertsekas and Gallager, Data "
        "Networks, 1992, 6.5.2) of capacity x target: ERICA 0.9, ERICA+ and FMMRA 1",
        tolerance="exact bands: ERICA's overload band delta = 0.1 (any z in [1, 1.1] is "
        "a fixed point); deterministic sources, one run seed",
        fast=[
            {"algorithm": "erica", "topology": "single", "n": 3},
            {"algorithm": "fmmra", "topology": "parking"},
        ],
        full=[
            *[
                {"algorithm": a, "topology": "single", "n": n}
                for a in ("erica", "erica_plus", "fmmra")
                for n in (2, 5, 10, 20)
            ],
            *[{"algorithm": a, "topology": "parking"} for a in ("erica", "erica_plus", "fmmra")],
            *[{"algorithm": a, "topology": "gfc2"} for a in ("erica", "erica_plus", "fmmra")],
        ],
        seeds_fast=1,
        seeds_full=1,
        measure=_measure_abr,
        judge=_judge_abr,
        notes=[
            "EFCI is left out: it is binary feedback and does not claim max-min "
            "fairness (sources cut and raise their rates on one bit)."
        ],
    ),
    Truth(
        name="abr-mcr-share",
        title="ABR with MCRs: MCR plus an equal share",
        source="TM 4.0's 'MCR plus equal share' criterion (ATM Forum Traffic "
        "Management Specification 4.0), as atmsim's fairness module allocates",
        tolerance="as abr-max-min",
        fast=[{"algorithm": "erica", "topology": "mcr", "mcrs": "0/20/60"}],
        full=[
            {"algorithm": a, "topology": "mcr", "mcrs": mcrs}
            for a in ("erica", "erica_plus", "fmmra")
            for mcrs in ("0/20/60", "10/10/40/40")
        ],
        seeds_fast=1,
        seeds_full=1,
        measure=_measure_abr,
        judge=_judge_abr,
        known=ABR_KNOWN["mcr"],
    ),
    Truth(
        name="tcp-aal5-ceiling",
        title="greedy TCP reaches the AAL5 (or IP) goodput ceiling",
        source="AAL5 with LLC/SNAP framing (RFC 1483) and TM 4.0's in-rate RM cells: "
        "R x 8 MSS / ceil((MSS+56)/48), x (Nrm-1) c / (c Nrm + 2) for ABR",
        tolerance="deterministic: one segment at each end of the measurement",
        fast=[
            {"service": "ubr", "mss": 1460, "mbps": 155.52},
            {"service": "abr", "mss": 512, "mbps": 155.52},
            {"service": "ip", "mss": 9180, "mbps": 155.52},
        ],
        full=_grid(service=["ubr", "abr", "ip"], mss=[512, 1460, 9180], mbps=[155.52, 622.08]),
        seeds_fast=1,
        seeds_full=1,
        measure=_measure_ceiling,
        judge=_judge_ceiling,
    ),
    Truth(
        name="tcp-window-limited",
        title="window-limited TCP: goodput = window / RTT",
        source="the sliding window (Stevens, TCP/IP Illustrated Vol. 1, 20.7): k "
        "segments per round trip; ATM RTT with cells switched one by one",
        tolerance="deterministic: one window at each end of the measurement; over ATM "
        "also up to one cell time per switch crossed, the wait for a slot's end",
        fast=[
            {"layer": "atm", "k": 4, "mss": 1460, "km": 100},
            {"layer": "ip", "k": 8, "mss": 1460, "km": 1000},
        ],
        full=_grid(layer=["atm", "ip"], k=[2, 8], mss=[512, 1460], km=[100, 1000]),
        seeds_fast=1,
        seeds_full=1,
        measure=_measure_window,
        judge=_judge_window,
    ),
    Truth(
        name="tcp-reno-sawtooth",
        title="one Reno flow: utilisation of the bottleneck against B / P",
        source="Lakshman and Madhow, The performance of TCP/IP for networks with high "
        "bandwidth-delay products and random loss, 1997: 3/4 (1+b)^2 / (1+b+b^2)",
        tolerance="deterministic: +-1/P, one segment of window (TCP's window is whole "
        "segments, the formula's a real number)",
        fast=[{"pipe": 40, "beta": 0.25}, {"pipe": 80, "beta": 0.5}, {"pipe": 40, "beta": 1.5}],
        full=_grid(pipe=[40, 80, 160], beta=[0.1, 0.25, 0.5, 0.75, 1.0, 1.5]),
        seeds_fast=1,
        seeds_full=1,
        measure=_measure_reno,
        judge=_judge_reno,
    ),
    Truth(
        name="er-window",
        title="explicit-rate windows: goodput = window(ER x T) / RTT",
        source="Satyavolu, Duvedi and Kalyanaraman, Explicit rate control of TCP "
        "applications, ATM Forum 98-0152, 1998: window = ER x T, at least one MSS",
        tolerance="deterministic: one segment per RTT (whole segments) and one window "
        "at each end of the measurement",
        fast=[
            {"rule": "0.1", "mss": 1460, "scale": 0, "km": 1000},
            {"rule": "floor", "mss": 1460, "scale": 3, "km": 300},
            {"rule": "floor", "mss": 512, "scale": 3, "km": 300},
        ],
        full=_grid(
            rule=["0.1", "0.3", "floor", "base_rtt"],
            mss=[512, 1000, 1460],
            scale=[0, 3, 5],
            km=[300, 1000],
        ),
        seeds_fast=1,
        seeds_full=1,
        measure=_measure_er,
        judge=_judge_er,
    ),
    Truth(
        name="er-base-rtt",
        title="explicit-rate windows: T = base_rtt is the flow's round trip",
        source="Satyavolu, Duvedi and Kalyanaraman, Explicit rate control of TCP "
        "applications, 1998 (Fig. 4: routers know the round trips Ti); the round trip of "
        "store-and-forward IP hops and of cell-switched ATM hops",
        tolerance="deterministic: the window field's unit (16 bytes) over the ER",
        fast=[
            {"layer": "ip", "mss": 1460, "km": 1000},
            {"layer": "atm", "mss": 9180, "km": 100},
        ],
        full=_grid(layer=["ip", "atm"], mss=[512, 1460, 9180], km=[100, 1000]),
        seeds_fast=1,
        seeds_full=1,
        measure=_measure_base_rtt,
        judge=_judge_base_rtt,
    ),
    Truth(
        name="rfc1624-checksum",
        title="incremental checksum update equals a full recomputation",
        source="RFC 1624 (Computation of the Internet Checksum via Incremental "
        "Update), eqn. 3, against RFC 1071's full sum",
        tolerance="exact",
        fast=[{"batch": 1, "headers": 20000}, {"batch": "run"}],
        full=[{"batch": b, "headers": 100000} for b in (1, 2, 3)] + [{"batch": "run"}],
        seeds_fast=1,
        seeds_full=1,
        measure=_measure_checksum_point,
        judge=_judge_checksum,
    ),
    Truth(
        name="ubr-buffer-windows",
        title="UBR: zero loss needs a buffer near the sum of the windows",
        source="Kalyanaraman, Jain, Fahmy, Goyal, Performance and Buffering "
        "Requirements of Internet Protocols over ATM ABR and UBR Services, 1998",
        tolerance="exact: no loss with buffer >= sum of windows, loss with half of it",
        fast=[{"n": 2, "window_kb": 64, "factor": f} for f in (1.0, 0.5)],
        full=_grid(n=[2, 5, 10], window_kb=[64, 128], factor=[1.0, 1.5, 0.5, 0.25]),
        seeds_fast=1,
        seeds_full=2,
        measure=_measure_ubr,
        judge=_judge_ubr,
    ),
    Truth(
        name="abr-buffer-rtt",
        title="ABR: max queue under 3 x RTT x link rate",
        source="Kalyanaraman, Jain, Fahmy, Goyal, Performance and Buffering "
        "Requirements of Internet Protocols over ATM ABR and UBR Services, 1998",
        tolerance="the claim's own bound, 3 x RTT x link rate",
        fast=[{"n": 5, "km": 1000}, {"n": 15, "km": 5000}],
        full=_grid(n=[5, 10, 15], km=[50, 200, 1000, 3000, 5000]),
        seeds_fast=2,
        seeds_full=3,
        measure=_measure_abr_buffer,
        judge=_judge_abr_buffer,
    ),
]


def _set_defaults() -> None:
    """Durations and warm-ups not given in the grids."""
    for truth in TRUTHS:
        for point in truth.fast + truth.full:
            if truth.name.startswith("abr-m"):
                if point["topology"] == "gfc2":
                    point.setdefault("_duration_s", 2.0)
                    point.setdefault("_warmup_s", 1.0)
                else:
                    point.setdefault("_duration_s", 1.0)
                    point.setdefault("_warmup_s", 0.5)
            elif truth.name == "tcp-aal5-ceiling":
                point.setdefault("_duration_s", 1.0)
                point.setdefault("_warmup_s", 0.3)
            elif truth.name == "tcp-window-limited":
                # About 300 round trips after 20 or more of slow start.
                point.setdefault("_duration_s", 10.0 if point["km"] >= 1000 else 1.0)
                point.setdefault("_warmup_s", 0.6 if point["km"] >= 1000 else 0.1)
            elif truth.name == "tcp-reno-sawtooth":
                # A cycle lasts about P round trips of P x 0.8 ms: 20 cycles or more
                # after a warm-up of four (the start in congestion avoidance settles).
                cycle = point["pipe"] * point["pipe"] * 0.8e-3 * 1.2
                point.setdefault("_duration_s", round(24 * cycle, 3))
                point.setdefault("_warmup_s", round(4 * cycle, 3))
            elif truth.name in ("er-window", "er-base-rtt"):
                point.setdefault("_duration_s", 3.0)
                point.setdefault("_warmup_s", 1.0)
            elif truth.name == "ubr-buffer-windows":
                point.setdefault("_duration_s", 0.5)
            elif truth.name == "abr-buffer-rtt":
                # ABR and UBR buffering's 2 s, or 40 round trips at the longest paths.
                point.setdefault("_duration_s", max(2.0, 40 * 6 * point["km"] * 5e-6))


_set_defaults()

BY_NAME = {truth.name: truth for truth in TRUTHS}


# --- the suite: running the grids, the table, the files ----------------------------------------


class TruthInputError(ValueError):
    """Bad input to the suite (an unknown truth, an --out that is a file): one line."""


def select(names: Optional[Sequence[str]]) -> list[Truth]:
    """The truths named (all of them for None), in the suite's order."""
    if not names:
        return list(TRUTHS)
    unknown = [name for name in names if name not in BY_NAME]
    if unknown:
        raise TruthInputError(
            f"--only {unknown[0]}: no such truth; choose from: {', '.join(BY_NAME)}"
        )
    return [truth for truth in TRUTHS if truth.name in names]


@dataclass
class Outcome:
    """The suite's result: every check, grouped by truth, and what it took."""

    truths: list[Truth]
    checks: dict[str, list[Check]]
    full: bool
    jobs: int
    wall_s: float
    runs: int

    def verdict(self, truth: Truth) -> str:
        """A truth fails when any of its checks fails."""
        verdicts = [check.verdict for check in self.checks.get(truth.name, [])]
        return "FAIL" if "FAIL" in verdicts else "pass"

    @property
    def failed(self) -> list[Check]:
        return [c for checks in self.checks.values() for c in checks if c.verdict == "FAIL"]


def _job(name: str, full: bool, index: int, seed: int) -> tuple[str, int, int, Any]:
    """One measurement, in a worker process: (truth, point index, seed, result); the
    result is the measurement, or an error's one-line text."""
    truth = BY_NAME[name]
    try:
        return name, index, seed, truth.measure(truth.grid(full)[index], seed)
    except Exception as error:  # a failed run is a failed check, not a crash
        return name, index, seed, f"{type(error).__name__}: {error}".replace("\n", " ")


def _job_task(job: tuple) -> tuple[str, int, int, Any]:
    return _job(*job)


def _job_died(job: tuple, description: str) -> tuple[str, int, int, Any]:
    """The answer of a measurement whose worker process died under it: its error."""
    name, _full, index, seed = job
    return name, index, seed, description


def _cost(truth: Truth, point: dict) -> float:
    """A rough ordering of the jobs, longest first, so the last ones are short."""
    return float(point.get("_duration_s", 1.0)) * (4.0 if truth.name.startswith("abr") else 1.0)


def run_suite(
    truths: Sequence[Truth],
    full: bool = False,
    jobs: int = 1,
    progress: Optional[Callable[[int, int], None]] = None,
) -> Outcome:
    """Measure every grid point of ``truths`` over its run seeds (``jobs`` worker
    processes) and judge it. ``progress(done, total)`` is called as runs finish.
    Ctrl-C ends the workers and raises KeyboardInterrupt."""
    import time

    started = time.perf_counter()
    work = [
        (truth.name, full, index, seed)
        for truth in truths
        for index, point in enumerate(truth.grid(full))
        for seed in truth.seeds(full)
    ]
    work.sort(key=lambda job: -_cost(BY_NAME[job[0]], BY_NAME[job[0]].grid(full)[job[2]]))
    results: dict[tuple[str, int], dict[int, Any]] = {}
    total = len(work)
    if progress:
        progress(0, total)
    answers = imap_unordered(_job_task, work, jobs, died=_job_died)
    try:
        for done, (name, index, seed, value) in enumerate(answers, start=1):
            results.setdefault((name, index), {})[seed] = value
            if progress:
                progress(done, total)
    finally:
        answers.close()  # the workers end now, before an exception goes on
    checks: dict[str, list[Check]] = {}
    for truth in truths:
        for index, point in enumerate(truth.grid(full)):
            measured = results.get((truth.name, index), {})
            errors = [v for v in measured.values() if isinstance(v, str)]
            found = checks.setdefault(truth.name, [])
            if errors:
                found.append(_error_check(truth, point, errors[0]))
                continue
            runs = [measured[seed] for seed in sorted(measured)]
            found.extend(truth.judge(point, runs))
    return Outcome(list(truths), checks, full, jobs, time.perf_counter() - started, total)


def _error_check(truth: Truth, point: dict, error: str) -> Check:
    return Check(
        truth.name,
        point_text(point),
        "run failed",
        math.nan,
        math.nan,
        math.nan,
        math.nan,
        f"error: {error}",
    )


# The table: 80 columns. A check's line: its point (or the point on a line of its
# own when longer), metric, simulated, theory, accepted range, verdict.
WIDTH = 80
POINT_W, METRIC_W, NUMBER_W, RANGE_W, VERDICT_W = 22, 14, 9, 14, 5


def _number(value: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value != 0 and (abs(value) >= 1e5 or abs(value) < 1e-3):
        return f"{value:.3e}"
    return f"{value:.5g}"


def _range(check: Check) -> str:
    if math.isnan(check.low):
        return "-"
    if check.low == check.high:
        return f"= {_number(check.low)}"
    if math.isinf(check.high):
        return f">= {_number(check.low)}"
    if check.low <= 0 <= check.high and math.isnan(check.theory):
        return f"<= {_number(check.high)}"
    text = f"{_compact(check.low)}..{_compact(check.high)}"
    if len(text) <= RANGE_W:
        return text
    text = f"{check.low:.3g}..{check.high:.3g}"
    if len(text) <= RANGE_W:
        return text
    # Too long for its column: the half-width about the theory (these ranges are
    # symmetric, or nearly).
    half = max(check.high - check.theory, check.theory - check.low)
    return f"+-{half:.2e}"


def _compact(value: float) -> str:
    if value != 0 and (abs(value) >= 1e5 or abs(value) < 1e-3):
        return f"{value:.2e}"
    return f"{value:.4g}"


def _wrap(text: str, indent: str) -> list[str]:
    import textwrap

    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ")


def short_point(point: str) -> str:
    """A grid point for the table: the values of the naming keys alone."""
    for key in ("algorithm=", "topology=", "service=", "layer=", "rule="):
        point = point.replace(key, "")
    return point


def table_lines(outcome: Outcome) -> list[str]:
    """The suite's table, each line at most 80 columns."""
    lines: list[str] = []
    header = (
        f"  {'point':<{POINT_W}} {'metric':<{METRIC_W}} {'simulated':>{NUMBER_W}} "
        f"{'theory':>{NUMBER_W}} {'accepted':>{RANGE_W}} {'':>{VERDICT_W}}"
    )
    for truth in outcome.truths:
        checks = outcome.checks.get(truth.name, [])
        passed = sum(1 for c in checks if c.verdict == "pass")
        verdict = outcome.verdict(truth)
        title = f"{truth.name}: {truth.title}"
        tally = f"{passed}/{len(checks)} pass, {verdict}"
        if len(title) + len(tally) + 1 > WIDTH:
            title = title[: WIDTH - len(tally) - 2] + "~"
        lines.append(f"{title}{' ' * (WIDTH - len(title) - len(tally))}{tally}")
        lines.extend(_wrap(f"source: {truth.source}", "  "))
        lines.extend(_wrap(f"tolerance: {truth.tolerance}", "  "))
        for note in truth.notes:
            lines.extend(_wrap(f"note: {note}", "  "))
        lines.append(header)
        for check in checks:
            point = short_point(check.point)
            if len(point) > POINT_W:
                lines.append(f"  {point[: WIDTH - 2]}")
                point = ""
            lines.append(
                f"  {point:<{POINT_W}} {check.metric[:METRIC_W]:<{METRIC_W}} "
                f"{_number(check.simulated)[:NUMBER_W]:>{NUMBER_W}} "
                f"{_number(check.theory)[:NUMBER_W]:>{NUMBER_W}} "
                f"{_range(check)[:RANGE_W]:>{RANGE_W}} {check.verdict:>{VERDICT_W}}"
            )
        lines.append("")
    failed = outcome.failed
    if failed:
        lines.append("Failures (truth, point, simulated against the accepted range):")
        for truth in outcome.truths:
            mine = [check for check in failed if check.truth == truth.name]
            if not mine:
                continue
            lines.append(f"- {truth.name}: {len(mine)} of {len(outcome.checks[truth.name])} checks")
            for check in mine:
                text = (
                    f"{short_point(check.point)}: {check.metric} "
                    f"{_number(check.simulated)}, accepted {_range(check)}"
                )
                lines.extend(_wrap(text, "    "))
            for cause in dict.fromkeys(check.known for check in mine if check.known):
                lines.extend(_wrap(f"likely cause: {cause}", "    "))
        lines.append("")
    counts: dict[str, int] = {}
    for checks in outcome.checks.values():
        for check in checks:
            counts[check.verdict] = counts.get(check.verdict, 0) + 1
    tally = ", ".join(f"{n} {verdict}" for verdict, n in sorted(counts.items()))
    failing = [t.name for t in outcome.truths if outcome.verdict(t) == "FAIL"]
    summary = (
        f"{len(outcome.truths)} truths ({'full' if outcome.full else 'fast'} grids), "
        f"{sum(counts.values())} checks: {tally}; {outcome.runs} runs in "
        f"{outcome.wall_s:.0f} s wall, --jobs {outcome.jobs}"
    )
    lines.extend(_wrap(summary, ""))
    if failing:
        lines.extend(_wrap(f"failing truths: {', '.join(failing)}", ""))
    return lines


def write_outputs(outcome: Outcome, out: Any, command: str) -> list[Any]:
    """``truths.csv`` (one row per check) and ``truths.json`` (the truths with their
    sources, tolerances and checks, the machine, the command) in directory ``out``."""
    import csv
    import json
    from pathlib import Path

    out = prepare_out_dir(Path(out), "validate-model")
    rows = [check.row() for checks in outcome.checks.values() for check in checks]
    csv_path = out / "truths.csv"
    with replacing(csv_path) as temporary:
        with temporary.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]) if rows else ["truth"])
            writer.writeheader()
            writer.writerows(rows)

    def finite(value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
        return value

    report = {
        "command": command,
        "grids": "full" if outcome.full else "fast",
        "jobs": outcome.jobs,
        "wall_s": outcome.wall_s,
        "runs": outcome.runs,
        "machine": machine(),
        "truths": [
            {
                "name": truth.name,
                "title": truth.title,
                "source": truth.source,
                "tolerance": truth.tolerance,
                "notes": truth.notes,
                "verdict": outcome.verdict(truth),
                "checks": [
                    {key: finite(value) for key, value in check.row().items()}
                    for check in outcome.checks.get(truth.name, [])
                ],
            }
            for truth in outcome.truths
        ],
    }
    json_path = out / "truths.json"
    write_file(json_path, json.dumps(report, indent=1) + "\n")
    return [csv_path, json_path]
