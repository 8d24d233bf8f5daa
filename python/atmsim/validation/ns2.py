"""Validation against ns-2: the IP dumbbell driven in both simulators.

ns-2 (2.35, Debian package ``ns2``) is the reference simulator of the era.
``atmsim/data/ns2/dumbbell.tcl`` (package data) builds the dumbbell in ns-2::

    s_i --access--> r1 ==bottleneck==> r2 --access--> d_i      i = 1..n

and this module builds the same network as an atmsim scenario, runs both,
and measures per-flow goodput, aggregate goodput, bottleneck drops,
timeouts, fast retransmits and retransmitted packets. The parameter mapping
and every difference between the two models are in docs/validation.md.

Entry points:

- ``find_ns()``: the ``ns`` binary, or None (``$ATMSIM_NS`` overrides PATH);
- ``run_ns2_dumbbell(params)``: run ns-2, timed, and parse its output;
- ``atmsim_dumbbell_scenario(params)``: the same dumbbell as a TOML-shaped
  atmsim scenario; ``run_atmsim_dumbbell(params)`` runs it;
- ``atmsim_metrics`` and ``ns2_metrics``: the compared quantities of each.

``atmsim bench`` times both simulators on this dumbbell. The comparison itself
(tolerances, verdicts, the CSV: ``python scripts/validate_ns2.py``) is developer
tooling, outside the package: ``devtools/ns2_compare.py``.

The test suite never needs ns-2: the parser is tested on captured output
(``tests/data/``) and ``find_ns`` is monkeypatched.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ..api import prepare, run
from ..compare import jain
from ..resources import ns2_script
from ..scenario import read_toml, to_core

NS2_SCRIPT = ns2_script()
"""The ns-2 script, shipped as package data; run with ``ns dumbbell.tcl key=value ...``."""

SHARED_VARIANTS = ("tahoe", "reno", "newreno", "sack")
"""Variants both simulators implement (docs/validation.md compares them all)."""

ALL_VARIANTS = ("tahoe_nofr", *SHARED_VARIANTS)
"""Also Tahoe without fast retransmit: ns-2's Agent/TCP with noFastRetrans_."""

NS2_CLASSES = {
    "tahoe_nofr": ("Agent/TCP (noFastRetrans_ true)", "Agent/TCPSink"),
    "tahoe": ("Agent/TCP", "Agent/TCPSink"),
    "reno": ("Agent/TCP/Reno", "Agent/TCPSink"),
    "newreno": ("Agent/TCP/Newreno", "Agent/TCPSink"),
    "sack": ("Agent/TCP/Sack1", "Agent/TCPSink/Sack1"),
}
"""ns-2 sender and sink classes per variant (what dumbbell.tcl instantiates)."""

TCPIP_HEADER_BYTES = 40
"""TCP + IP headers: atmsim and ns-2 both put payload + 40 bytes on the wire."""

# --------------------------------------------------------------------------- parameters


@dataclass(frozen=True)
class Dumbbell:
    """One dumbbell, in the units of neither simulator (SI, bytes, packets).

    ``access_delays_s`` and ``starts_s`` hold one value for all flows or one
    per flow. The access links of flow i (s_i - r1 and r2 - d_i) both have
    delay ``access_delays_s[i]``.
    """

    n: int = 5
    variant: str = "reno"
    duration_s: float = 100.0
    access_rate_bps: float = 100e6
    access_delays_s: tuple = (0.001,)
    bottleneck_rate_bps: float = 10e6
    bottleneck_delay_s: float = 0.020
    buffer_packets: int = 50
    """Packets waiting at the bottleneck, not counting the one in transmission."""
    access_buffer_packets: int = 100_000
    """Access and reverse-path buffers: large, so the bottleneck is the only loss point."""
    mss_bytes: int = 960
    """TCP payload per segment; the IP packet is mss + 40 bytes (1000)."""
    window_segments: int = 256
    """Receiver window in segments (atmsim: window_segments * mss bytes = 245,760 B).

    Larger than the path's whole capacity (BDP + buffer, about 105 packets), so
    no flow is window-limited: a window-limited flow paces its packets into
    the slots the departures free and locks the others out of a DropTail
    queue (a phase effect that makes per-flow shares meaningless to compare)."""
    initial_cwnd_segments: int = 1
    min_rto_s: float = 0.2
    max_rto_s: float = 64.0
    initial_rto_s: float = 3.0
    tcp_tick_s: float = 0.001
    """ns-2 tcpTick_: granularity of its RTT samples and RTO (atmsim runs the fine timer)."""
    starts_s: tuple = (0.0,)
    """Start times: one per flow, or one base time staggered by ``start_step_s``."""
    start_step_s: float = 0.1
    bug_fix: bool = True
    """ns-2 bugFix_: at most one fast retransmit per window of data (its default)."""
    max_sack_blocks: int = 3
    seed: int = 1
    """atmsim run seed (the dumbbell has no randomness; kept for the record)."""
    scenario: Optional[str] = None
    """A scenario file this dumbbell was read from (``params_from_scenario``):
    atmsim then runs that file (variant and duration set by overrides)."""
    flow_names: tuple = ()
    """atmsim flow names in flow order (default tcp1..tcpN)."""
    bottleneck_name: str = "r1-r2"
    """atmsim name of the bottleneck link r1 -> r2."""

    def __post_init__(self) -> None:
        if self.variant not in ALL_VARIANTS:
            raise ValueError(f"variant {self.variant!r}: expected one of {', '.join(ALL_VARIANTS)}")
        if self.n < 1:
            raise ValueError(f"n = {self.n}: expected >= 1")
        for name in ("access_delays_s", "starts_s"):
            values = getattr(self, name)
            if len(values) not in (1, self.n):
                raise ValueError(f"{name} has {len(values)} values, expected 1 or n = {self.n}")

    def per_flow(self, name: str) -> list[float]:
        """``access_delays_s`` or ``starts_s`` expanded to one value per flow.

        A single start time t gives t, t + step, t + 2 step, ...
        """
        values = [float(v) for v in getattr(self, name)]
        if len(values) == self.n:
            return values
        if name == "starts_s":
            return [round(values[0] + k * self.start_step_s, 9) for k in range(self.n)]
        return values * self.n

    def atmsim_flow_names(self) -> list[str]:
        return list(self.flow_names) or [f"tcp{i}" for i in range(1, self.n + 1)]

    @property
    def packet_bytes(self) -> int:
        """IP packet of a full segment: payload + TCP and IP headers."""
        return self.mss_bytes + TCPIP_HEADER_BYTES

    @property
    def window_bytes(self) -> int:
        return self.window_segments * self.mss_bytes

    def with_(self, **changes: Any) -> Dumbbell:
        return dataclasses.replace(self, **changes)


def _num(value: float) -> str:
    """A number as ns-2's Tcl reads it: no exponent surprises, no trailing noise."""
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


def ns2_args(p: Dumbbell, monitor: bool = True) -> list[str]:
    """The ``key=value`` arguments of dumbbell.tcl for this dumbbell."""
    return [
        f"n={p.n}",
        f"variant={p.variant}",
        f"duration={_num(p.duration_s)}",
        f"access_rate={_num(p.access_rate_bps)}",
        "access_delays=" + ",".join(_num(d) for d in p.access_delays_s),
        f"access_limit={p.access_buffer_packets}",
        f"bottleneck_rate={_num(p.bottleneck_rate_bps)}",
        f"bottleneck_delay={_num(p.bottleneck_delay_s)}",
        f"buffer={p.buffer_packets}",
        f"mss={p.mss_bytes}",
        f"window={p.window_segments}",
        f"window_init={p.initial_cwnd_segments}",
        f"tcp_tick={_num(p.tcp_tick_s)}",
        f"min_rto={_num(p.min_rto_s)}",
        f"max_rto={_num(p.max_rto_s)}",
        f"initial_rto={_num(p.initial_rto_s)}",
        "starts=" + ",".join(_num(s) for s in p.per_flow("starts_s")),
        f"bug_fix={int(p.bug_fix)}",
        f"max_sack_blocks={p.max_sack_blocks}",
        f"monitor={int(monitor)}",
    ]


# --------------------------------------------------------------------------- ns-2


def find_ns() -> Optional[str]:
    """Path of the ns-2 ``ns`` binary: ``$ATMSIM_NS`` if set, else ``ns`` on PATH, else None."""
    override = os.environ.get("ATMSIM_NS")
    if override:
        return override if Path(override).is_file() else None
    return shutil.which("ns")


def _value(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def _fields(words: list[str], line: str) -> dict:
    record = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or not key:
            raise ValueError(f"ns-2 output: field {word!r} is not key=value in line {line!r}")
        record[key] = _value(value)
    return record


def parse_ns2_output(text: str) -> dict:
    """Parse what dumbbell.tcl prints into ``{"header", "flows", "total", "run_s"}``.

    ``flows`` is a list of dicts ordered by flow id (1..n); every field is an
    int or a float (see docs/validation.md for their meaning). Lines that are
    not records (ns-2's own warnings) are ignored. Raises ValueError when a
    record is missing or malformed.
    """
    header: Optional[dict] = None
    total: Optional[dict] = None
    run_s: Optional[float] = None
    flows: list[dict] = []
    for line in text.splitlines():
        words = line.split()
        if not words:
            continue
        kind, rest = words[0], words[1:]
        if kind == "ns2":
            header = _fields(rest, line)
        elif kind == "flow":
            flows.append(_fields(rest, line))
        elif kind == "total":
            total = _fields(rest, line)
        elif kind == "wall":
            run_s = float(_fields(rest, line)["run_s"])
    if header is None or total is None or run_s is None:
        raise ValueError("ns-2 output: missing the 'ns2', 'total' or 'wall' record")
    flows.sort(key=lambda f: f["id"])
    if [f["id"] for f in flows] != list(range(1, int(header["n"]) + 1)):
        raise ValueError(f"ns-2 output: expected flows 1..{header['n']}, got {len(flows)} records")
    return {"header": header, "flows": flows, "total": total, "run_s": run_s}


def run_ns2_dumbbell(
    params: Dumbbell,
    ns: Optional[str] = None,
    script: Optional[Path] = None,
    monitor: bool = True,
    timeout_s: Optional[float] = None,
) -> dict:
    """Run the dumbbell in ns-2 and return the parsed results.

    Adds ``wall_s`` (the whole process, wall seconds), ``args`` (the command)
    and ``stdout``. ``run_s`` is the wall time of ``$ns run`` alone. With
    ``monitor=False`` the bottleneck flow monitor is left out (for timing);
    per-flow drops are then -1 and ``link_transmissions`` counts dropped
    packets as if they crossed every link (an overcount of 2 per drop).
    Raises FileNotFoundError without ns-2 and RuntimeError if ns fails.
    """
    ns = ns or find_ns()
    if ns is None:
        raise FileNotFoundError("ns-2 is not installed (no `ns` on PATH; apt-get install ns2)")
    script = Path(script or NS2_SCRIPT)
    command = [ns, str(script), *ns2_args(params, monitor=monitor)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
    wall_s = time.perf_counter() - started
    if done.returncode != 0:
        message = (done.stderr or done.stdout).strip().splitlines()
        raise RuntimeError(
            f"ns-2 exited with {done.returncode}: {message[-1] if message else 'no output'}"
        )
    result = parse_ns2_output(done.stdout)
    result.update(wall_s=wall_s, args=command, stdout=done.stdout)
    return result


def ns2_metrics(result: dict, params: Dumbbell) -> dict:
    """The comparison metrics from parsed ns-2 output (same keys as ``atmsim_metrics``)."""
    flows = result["flows"]
    return _metrics(
        params,
        goodput_bytes=[f["goodput_bytes"] for f in flows],
        timeouts=[f["timeouts"] for f in flows],
        fast_retransmits=[f["fast_retransmits"] for f in flows],
        retransmitted=[f["retransmitted_packets"] for f in flows],
        segments_sent=[f["data_packets_sent"] for f in flows],
        bottleneck_drops=result["total"]["bottleneck_drops"],
        flow_drops=[f["bottleneck_drops"] for f in flows],
        link_transmissions=result["total"]["link_transmissions"],
    )


# --------------------------------------------------------------------------- atmsim


def _time(seconds: float) -> str:
    """A time as an atmsim unit string: whole seconds in s, else ms (exact to 1 ns)."""
    if float(seconds).is_integer():
        return f"{int(seconds)} s"
    return f"{round(seconds * 1e3, 6):.10g} ms"


def _rate(bps: float) -> str:
    return f"{bps / 1e6:.10g} Mbps"


def atmsim_dumbbell_scenario(params: Dumbbell) -> dict:
    """The dumbbell as a TOML-shaped atmsim scenario (explicit nodes, links and flows).

    Links are IP links (``layer = "ip"``) with ``duplex = true``: the ACKs
    return over the reverse direction, as in ns-2's duplex-link. Flows are
    named ``tcp1..tcpN``; flow i runs s_i -> r1 -> r2 -> d_i.
    """
    p = params
    nodes: dict[str, dict] = {"r1": {"kind": "switch"}, "r2": {"kind": "switch"}}
    links: dict[str, dict] = {
        "r1-r2": {
            "layer": "ip",
            "from": "r1",
            "to": "r2",
            "duplex": True,
            "rate": _rate(p.bottleneck_rate_bps),
            "delay": _time(p.bottleneck_delay_s),
            "buffer": p.buffer_packets,
        }
    }
    flows: dict[str, dict] = {}
    delays = p.per_flow("access_delays_s")
    starts = p.per_flow("starts_s")
    for i in range(1, p.n + 1):
        nodes[f"s{i}"] = {"kind": "host"}
        nodes[f"d{i}"] = {"kind": "host"}
        for a, b in ((f"s{i}", "r1"), ("r2", f"d{i}")):
            links[f"{a}-{b}"] = {
                "layer": "ip",
                "from": a,
                "to": b,
                "duplex": True,
                "rate": _rate(p.access_rate_bps),
                "delay": _time(delays[i - 1]),
                "buffer": p.access_buffer_packets,
            }
        flows[f"tcp{i}"] = {
            "path": [f"s{i}", "r1", "r2", f"d{i}"],
            "variant": p.variant.replace("_", "-"),
            "mss": p.mss_bytes,
            "window": f"{p.window_bytes} B",
            "initial_cwnd": p.initial_cwnd_segments,
            "timer": "fine",
            "min_rto": _time(p.min_rto_s),
            "max_rto": _time(p.max_rto_s),
            "initial_rto": _time(p.initial_rto_s),
            "delayed_ack": "0 s",
            "max_sack_blocks": p.max_sack_blocks,
            "start": _time(starts[i - 1]),
        }
    return {
        "run": {"duration": _time(p.duration_s), "seed": p.seed},
        "nodes": nodes,
        "links": links,
        "flows": flows,
    }


def atmsim_overrides(params: Dumbbell) -> list[str]:
    """``--set`` overrides that give a scenario file this dumbbell's variant and duration."""
    out = [f"run.duration={_time(params.duration_s)}"]
    for key in _flow_keys(params):
        out.append(f"{key}.variant={params.variant.replace('_', '-')}")
    return out


def _flow_keys(params: Dumbbell) -> list[str]:
    """The ``flows.<name>`` tables of the scenario file (templates kept as written)."""
    if params.scenario is None:
        return [f"flows.{name}" for name in params.atmsim_flow_names()]
    return [f"flows.{name}" for name in read_toml(params.scenario).get("flows", {})]


def run_atmsim_dumbbell(params: Dumbbell) -> Any:
    """Run the dumbbell in atmsim; returns the ``atmsim.Result``.

    A dumbbell read from a scenario file runs that file, with the variant
    and duration set by overrides; otherwise ``atmsim_dumbbell_scenario``.
    """
    if params.scenario is not None:
        return run(params.scenario, overrides=atmsim_overrides(params), progress=False)
    return run(atmsim_dumbbell_scenario(params), progress=False)


def params_from_scenario(source: Any, variant: Optional[str] = None) -> Dumbbell:
    """The Dumbbell of an atmsim scenario (a path, dict or Scenario) shaped as one.

    The scenario must be the dumbbell of this module: N IP flows, each
    s_i -> r1 -> r2 -> d_i over three links with the middle one shared,
    equal access rates, the same delay on both access links of a flow, tail
    drop with a buffer in packets at the bottleneck, and the same TCP
    settings for every flow (fine timer, no delayed ACK, no processing
    time, infinite sources). Raises ValueError naming what does not fit.
    """
    core = to_core(prepare(source))
    links = core["links"]
    flows = core["flows"]
    if not flows:
        raise ValueError("not a dumbbell: the scenario has no flows")

    def fail(message: str) -> ValueError:
        return ValueError(f"not an ns-2 dumbbell: {message}")

    first = flows[0]
    for flow in flows:
        if flow["layer"] != "ip" or len(flow["data_links"]) != 3:
            raise fail(f"flow {flow['name']} is not an IP flow over 3 links")
        for key in (
            "variant",
            "mss_bytes",
            "rcv_window_bytes",
            "initial_cwnd_segments",
            "initial_ssthresh_bytes",
            "timer",
            "initial_rto_ps",
            "min_rto_ps",
            "max_rto_ps",
            "max_sack_blocks",
        ):
            if flow[key] != first[key]:
                raise fail(f"flows differ in {key}")
        if flow["timer"]["kind"] != "fine":
            raise fail('ns-2 has no global-tick timer: compare with timer = "fine"')
        if flow["delayed_ack_ps"] or flow["processing_ps"] or flow["app_bytes"] is not None:
            raise fail(f"flow {flow['name']} has delayed ACKs, processing or a finite transfer")
        if first["initial_ssthresh_bytes"] is not None:
            raise fail("initial_ssthresh must be auto (ns-2 starts at the window)")
    middle = {flow["data_links"][1] for flow in flows}
    if len(middle) != 1:
        raise fail("the flows do not share one middle link")
    bottleneck = links[middle.pop()]
    if bottleneck["policy"]["kind"] != "tail" or bottleneck["buffer_packets"] is None:
        raise fail("the bottleneck must be tail drop with a buffer in packets")
    access_rates, delays, access_buffers = set(), [], []
    for flow in flows:
        a, _, b = (links[k] for k in flow["data_links"])
        access_rates.update({a["bit_rate_bps"], b["bit_rate_bps"]})
        if a["delay_ps"] != b["delay_ps"]:
            raise fail(f"flow {flow['name']}: its two access links have different delays")
        delays.append(a["delay_ps"] / 1e12)
        ends = flow["data_links"][::2] + flow["ack_links"][::2]
        for k in ends:
            access_buffers.append(links[k]["buffer_packets"])
    if len(access_rates) != 1:
        raise fail("the access links have different rates")
    mss = first["mss_bytes"]
    starts = [flow["start_ps"] / 1e12 for flow in flows]
    chosen = variant or first["variant"].replace("-", "_")
    finite = [b for b in access_buffers if b is not None]
    return Dumbbell(
        n=len(flows),
        variant=chosen,
        duration_s=core["duration_ps"] / 1e12,
        access_rate_bps=access_rates.pop(),
        access_delays_s=tuple(delays) if len(set(delays)) > 1 else (delays[0],),
        bottleneck_rate_bps=bottleneck["bit_rate_bps"],
        bottleneck_delay_s=bottleneck["delay_ps"] / 1e12,
        buffer_packets=bottleneck["buffer_packets"],
        access_buffer_packets=min(finite) if finite else 100_000,
        mss_bytes=mss,
        window_segments=first["rcv_window_bytes"] // mss,
        initial_cwnd_segments=first["initial_cwnd_segments"],
        min_rto_s=first["min_rto_ps"] / 1e12,
        max_rto_s=first["max_rto_ps"] / 1e12,
        initial_rto_s=first["initial_rto_ps"] / 1e12,
        starts_s=tuple(starts),
        max_sack_blocks=first["max_sack_blocks"],
        seed=core.get("seed", 1),
        scenario=str(source) if isinstance(source, (str, Path)) else None,
        flow_names=tuple(flow["name"] for flow in flows),
        bottleneck_name=bottleneck["name"],
    )


def _ip_ports(summary: dict) -> list[dict]:
    return [port for port in summary.get("ports", []) if "packets_out" in port]


def atmsim_metrics(summary: dict, params: Dumbbell) -> dict:
    """The comparison metrics from an atmsim summary (same keys as ``ns2_metrics``).

    atmsim reports drops per port, not per flow: ``flow_drops`` is None.
    ``link_transmissions`` is the sum of ``packets_out`` over the IP ports.
    """
    flows = {flow["name"]: flow for flow in summary["flows"]}
    ordered = [flows[name] for name in params.atmsim_flow_names()]
    ports = {port["name"]: port for port in _ip_ports(summary)}
    bottleneck = ports.get(params.bottleneck_name, {})
    return _metrics(
        params,
        goodput_bytes=[f["bytes_delivered"] for f in ordered],
        timeouts=[f["timeouts"] for f in ordered],
        fast_retransmits=[f["fast_retransmits"] for f in ordered],
        retransmitted=[f["bytes_retransmitted"] // params.mss_bytes for f in ordered],
        segments_sent=[f["segments_sent"] for f in ordered],
        bottleneck_drops=bottleneck.get("packets_dropped", 0),
        flow_drops=None,
        link_transmissions=sum(port["packets_out"] for port in ports.values()),
    )


def _metrics(
    params: Dumbbell,
    goodput_bytes: list[int],
    timeouts: list[int],
    fast_retransmits: list[int],
    retransmitted: list[int],
    segments_sent: list[int],
    bottleneck_drops: int,
    flow_drops: Optional[list[int]],
    link_transmissions: int,
) -> dict:
    mbps = [8 * b / params.duration_s / 1e6 for b in goodput_bytes]
    return {
        "goodput_mbps": mbps,
        "aggregate_goodput_mbps": sum(mbps),
        "jain_index": jain(mbps),
        "timeouts": list(timeouts),
        "total_timeouts": sum(timeouts),
        "fast_retransmits": list(fast_retransmits),
        "total_fast_retransmits": sum(fast_retransmits),
        "retransmitted_packets": list(retransmitted),
        "total_retransmitted_packets": sum(retransmitted),
        "segments_sent": list(segments_sent),
        "bottleneck_drops": bottleneck_drops,
        "flow_drops": flow_drops,
        "link_transmissions": link_transmissions,
    }


def default_params(variant: str = "reno", **changes: Any) -> Dumbbell:
    """The validation dumbbell (docs/validation.md, "Parameters") for one variant."""
    return Dumbbell(variant=variant).with_(**changes)
