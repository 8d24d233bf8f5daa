"""``atmsim.emulate``: real Linux TCP through the simulated network, in real time.

A scenario's flows chosen as real (all by default) lose their model TCP: their two
end hosts become network namespaces (``atmsim.emulate.hosts``), each flow with a TUN
device at each end, and the project's own sender and receiver
(``atmsim.emulate.traffic``), or iperf3, run a real TCP connection between them
with the Linux congestion control asked for. Every IP datagram the kernel writes
into a TUN enters the simulated network at the flow's first link or VC
(``Simulation.inject``: AAL5 cells on its VC over ATM, a packet on its IP path),
crosses the same model of switches, ports and drop policies as in ``atmsim run``,
and what is delivered at the far end is written into the far host's TUN
(``take_delivered``), unchanged but for a window lowered by rate control (below).

The simulation follows the wall clock: each turn of the loop advances it to the
time elapsed since the start, injects what the TUNs gave meanwhile (at that time),
and writes what was delivered. A datagram delivered at simulated time t is written
at wall time t' >= t; t' - t is its lateness, reported (largest, percentiles) with
the number written later than ``max_lateness_s``: the run says it fell behind when
there is one.

Rate control on real TCP: a router or ATM edge with ``ack_control`` lowers the window
of the receiver's real segments as it does the model's ACKs (min(window, ER x T), not
below one segment), read and written with the window scale the real SYNs negotiated
(``tcpheader.Handshake``); the loop writes the lowered window into the real TCP
header and updates its checksum incrementally (RFC 1624), and reports how many it
rewrote and how many segments with a bad checksum the sender's kernel counted.

An ack bucket holds the real ACKs as the model's, paced by the data each newly
acknowledges (``tcpheader.Handshake.acknowledged``).

What is not done yet (docs/emulation.md): IPv6.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..api import Result, prepare
from ..binding import import_core
from ..errors import ScenarioError
from ..rundir import complete_summary, start_run_dir
from ..scenario import resolved_toml, to_core
from ..scenario.network import Network
from . import tcpheader, traffic
from .hosts import MAX_FLOWS, EmulationError, Hosts, PrivilegeError, Tun, clean_stale
from .hosts import missing_privileges as _missing_privileges

CONGESTION_CONTROLS = ("reno", "cubic")
"""The Linux congestion controls a real flow may use (``TCP_CONGESTION``)."""

PORT = 5001
"""The receivers' TCP port (the project's receiver)."""

IPERF3_PORT = 5201
"""iperf3's port."""

TRAFFIC = ("own", "iperf3")
"""The traffic: the project's sender and receiver (``atmsim.emulate.traffic``, which
check every byte by its SHA-256), or iperf3 (which counts them)."""

IDLE_WAIT_S = 0.01
"""How long the loop waits for a datagram when none is in the network."""

BUSY_WAIT_S = 0.0002
"""How long it sleeps between turns while datagrams are in the network: what a
delivery may be late by on an idle machine."""

READ_BATCH = 16
"""Datagrams read from one TUN per turn of the loop."""

INFO_EVERY_MS = 5.0
"""With a run directory, the project's sender samples its ``TCP_INFO`` this often
(``tcp_info_<flow>.csv``): a few samples per round trip of the examples (16 ms)."""

START_TIMEOUT_S = 10.0
"""How long a receiver may take to listen."""


def missing_privileges() -> Optional[str]:
    """What this process lacks to emulate (``atmsim.emulate.hosts.missing_privileges``)."""
    return _missing_privileges()


@dataclass
class RealFlow:
    """A flow of the scenario whose ends are real hosts."""

    index: int
    """Its index among the scenario's flows (the core's)."""
    k: int
    """Its number among the real flows (its addresses: 10.201.k.1 and .2)."""
    name: str
    sender: str
    receiver: str
    cc: str = "cubic"
    """Its Linux congestion control."""
    tx: Optional[Tun] = None
    rx: Optional[Tun] = None
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)
    reports: dict[str, dict] = field(default_factory=dict)
    """Per role ("send", "recv"): the JSON its process printed last."""
    handshake: tcpheader.Handshake = field(default_factory=tcpheader.Handshake)
    acks_rewritten: int = 0
    """The receiver's segments whose window the simulated network lowered."""
    sender_csum_errors: Optional[int] = None
    """TCP segments with a bad checksum the sender's kernel counted (InCsumErrors)."""
    tun_dropped: dict[str, Optional[int]] = field(default_factory=dict)
    """Per end ("sender", "receiver"): datagrams its kernel dropped at the TUN device,
    before the model (the device's queue full)."""


@dataclass
class Emulation:
    """An emulation's results: the run's ``Result`` (its summary holds
    ``"emulation"``, the dict ``report``), and whether every transfer was whole."""

    result: Result
    report: dict
    out: Optional[Path]

    @property
    def transfers_ok(self) -> bool:
        return all(f.get("ok") for f in self.report["flows"])


def _ends(core_input: dict, flow: dict) -> tuple[str, str]:
    """The names of a core flow's sender and receiver hosts."""
    links = core_input["links"]
    if flow.get("layer", "atm") == "ip":
        path = flow["data_links"]
    else:
        path = core_input["vcs"][flow["data_vc"]]["links"]
    nodes = core_input["nodes"]
    return nodes[links[path[0]]["from"]]["name"], nodes[links[path[-1]]["to"]]["name"]


def _choose(
    core_input: dict, names: Optional[Sequence[str]], file, marked: Collection[str] = ()
) -> list[RealFlow]:
    """The real flows: ``names`` (--flow), else the flows between two hosts of
    ``marked`` (the nodes the scenario marks ``real``), else every flow. A flow with one
    end marked and the other not is an error: a real TCP connection has two real ends."""
    flows = core_input.get("flows", [])
    known = [f["name"] for f in flows]
    if not flows:
        raise ScenarioError(file, "flows", "emulation needs a TCP flow to make real; none here")
    wanted = list(names) if names else known
    if not names and marked:
        wanted = []
        for flow in flows:
            ends = _ends(core_input, flow)
            if all(end in marked for end in ends):
                wanted.append(flow["name"])
            elif any(end in marked for end in ends):
                real_end, other = ends if ends[0] in marked else ends[::-1]
                raise ScenarioError(
                    file,
                    f"nodes.{other}.real",
                    f"flow {flow['name']} joins the real host {real_end} to {other}, which is "
                    "not real: mark both ends of a flow real, or neither",
                )
        if not wanted:
            raise ScenarioError(
                file, "nodes", "no flow joins two real hosts: mark both ends of a flow real"
            )
    chosen = []
    for name in wanted:
        if name not in known:
            raise EmulationError(
                f"--flow {name}: no such flow in the scenario; its flows: {', '.join(known)}"
            )
        index = known.index(name)
        sender, receiver = _ends(core_input, flows[index])
        chosen.append(RealFlow(index, len(chosen) + 1, name, sender, receiver))
    if len(chosen) > MAX_FLOWS:
        raise EmulationError(f"--flow: at most {MAX_FLOWS} real flows, got {len(chosen)}")
    return chosen


def congestion_controls(
    cc: str | Sequence[str],
    real: list[RealFlow],
    from_scenario: Optional[dict[str, Optional[str]]] = None,
) -> dict[str, str]:
    """Each real flow's congestion control from ``cc``: a name for every flow, or a
    list of ``NAME`` (every flow) and ``FLOW=NAME`` (that flow) items, later ones
    winning; where none is given, the flow's ``congestion_control`` in
    ``from_scenario``, else cubic."""
    items = [cc] if isinstance(cc, str) else list(cc)
    given = from_scenario or {}
    chosen = {flow.name: given.get(flow.name) or "cubic" for flow in real}
    for item in items:
        flow, _, name = item.rpartition("=")
        if name not in CONGESTION_CONTROLS:
            raise EmulationError(
                f"--cc {item}: expected one of {', '.join(CONGESTION_CONTROLS)}, "
                "or FLOW=one of them"
            )
        if not flow:
            chosen = dict.fromkeys(chosen, name)
        elif flow not in chosen:
            raise EmulationError(
                f"--cc {item}: {flow} is not a real flow; they are {', '.join(chosen)}"
            )
        else:
            chosen[flow] = name
    return chosen


def _percentile(ordered: list[float], q: float) -> float:
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def lateness_report(lateness: list[float], max_lateness_s: float) -> dict:
    """The lateness of the datagrams written (seconds): count, largest, percentiles, and
    how many were later than ``max_lateness_s`` (the run fell behind if any)."""
    ordered = sorted(lateness)
    late = sum(1 for x in ordered if x > max_lateness_s)
    return {
        "datagrams": len(ordered),
        "max_s": ordered[-1] if ordered else 0.0,
        "mean_s": sum(ordered) / len(ordered) if ordered else 0.0,
        "p50_s": _percentile(ordered, 0.50),
        "p99_s": _percentile(ordered, 0.99),
        "p999_s": _percentile(ordered, 0.999),
        "bound_s": max_lateness_s,
        "later_than_bound": late,
        "fell_behind": late > 0,
    }


def _module_command(netns: str, *args: str) -> list[str]:
    return ["ip", "netns", "exec", netns, sys.executable, "-m", "atmsim.emulate.traffic", *args]


def _receiver_command(flow: RealFlow, kind: str) -> list[str]:
    assert flow.rx is not None
    if kind == "iperf3":
        return ["ip", "netns", "exec", flow.rx.netns, "iperf3", "-s", "-1", "-J"] + [
            "-B",
            flow.rx.address,
            "-p",
            str(IPERF3_PORT),
        ]
    return _module_command(flow.rx.netns, "recv", "--bind", flow.rx.address, "--port", str(PORT))


def info_file(flow_name: str) -> str:
    """The name, in the run directory, of a real flow's ``TCP_INFO`` samples."""
    return f"tcp_info_{flow_name}.csv"


def _sender_command(
    flow: RealFlow,
    kind: str,
    nbytes: int,
    seed: int,
    info_dir: Optional[Path] = None,
    clock_zero: float = 0.0,
) -> list[str]:
    assert flow.tx is not None and flow.rx is not None
    if kind == "iperf3":
        return ["ip", "netns", "exec", flow.tx.netns, "iperf3", "-c", flow.rx.address, "-J"] + [
            "-p",
            str(IPERF3_PORT),
            "-n",
            str(nbytes),
            "-C",
            flow.cc,
        ]
    return _module_command(
        flow.tx.netns,
        "send",
        "--to",
        flow.rx.address,
        "--port",
        str(PORT),
        "--bytes",
        str(nbytes),
        "--cc",
        flow.cc,
        "--seed",
        str(seed),
        *(
            ()
            if info_dir is None
            else (
                "--info-out",
                str(info_dir / info_file(flow.name)),
                "--info-every-ms",
                str(INFO_EVERY_MS),
                "--clock-zero",
                repr(clock_zero),
            )
        ),
    )


def _wait_ready(process: subprocess.Popen, flow: RealFlow, kind: str) -> None:
    """Wait until the receiver listens, at most START_TIMEOUT_S: the project's prints a
    first line then; iperf3's socket shows in ``ss`` (it prints nothing before its end
    with -J)."""
    assert flow.rx is not None
    if kind == "own":
        ready, _, _ = select.select([process.stdout], [], [], START_TIMEOUT_S)
        line = process.stdout.readline() if ready else ""
        if line.strip() != traffic.READY:
            raise EmulationError(f"flow {flow.name}: the receiver did not start ({line.strip()!r})")
        return
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline and process.poll() is None:
        listening = subprocess.run(
            ["ip", "netns", "exec", flow.rx.netns, "ss", "-Hltn", f"sport = :{IPERF3_PORT}"],
            capture_output=True,
            text=True,
        )
        if listening.stdout.strip():
            return
        time.sleep(0.05)
    raise EmulationError(f"flow {flow.name}: iperf3 -s did not start listening")


def emulate(
    scenario,
    *,
    flows: Optional[Sequence[str]] = None,
    nbytes: int = 1_000_000,
    cc: str | Sequence[str] = (),
    overrides: Sequence[str] = (),
    seed: Optional[int] = None,
    out: Optional[Path] = None,
    max_lateness_s: float = 1e-3,
    mtu: int = 1500,
    traffic_kind: str = "own",
) -> Emulation:
    """Emulate ``scenario`` (a path, a name or a Scenario) with real hosts for ``flows``
    (names; by default the flows between the hosts the scenario marks ``real``, or all
    its flows when it marks none): each sends ``nbytes`` over real TCP with Linux
    congestion control ``cc`` (a name, or ``NAME`` and ``FLOW=NAME`` items:
    ``congestion_controls``; by default each flow's ``congestion_control``, else
    cubic). Runs until every transfer has ended, or the scenario's
    duration. ``out``: a run directory to write as ``atmsim run`` does, with
    ``summary.json``'s ``"emulation"``: the flows' transfers and the lateness.
    ``traffic_kind``: "own" (the project's sender and receiver, every byte checked by
    SHA-256) or "iperf3" (its byte counts; it must be installed).

    Raises PrivilegeError (what is missing, one line) without the privileges,
    EmulationError or ScenarioError for bad input, KeyboardInterrupt after writing
    what was done when interrupted."""
    started = time.perf_counter()
    missing = missing_privileges()
    if missing:
        raise PrivilegeError(f"atmsim emulate {missing}")
    if nbytes < 1:
        raise EmulationError(f"--bytes {nbytes}: expected at least 1")
    if not 576 <= mtu <= 65535:
        raise EmulationError(f"--mtu {mtu}: expected 576 to 65535")
    if traffic_kind not in TRAFFIC:
        raise EmulationError(f"--traffic {traffic_kind}: expected one of {', '.join(TRAFFIC)}")
    if traffic_kind == "iperf3" and shutil.which("iperf3") is None:
        raise EmulationError("--traffic iperf3: iperf3 is not installed (apt-get install iperf3)")
    loaded = prepare(scenario, seed, list(overrides), fast_paths=False)
    core_input = to_core(loaded)
    network = Network(loaded)
    marked = {n.name for n in network.nodes.values() if n.node.real}
    real = _choose(core_input, flows, loaded.file, marked)
    from_scenario = {f.name: f.flow.congestion_control for f in network.flows}
    chosen_cc = congestion_controls(cc, real, from_scenario)
    for flow in real:
        flow.cc = chosen_cc[flow.name]
    scenario_toml = resolved_toml(loaded)
    core = import_core()
    if out is not None:
        out = start_run_dir(out, scenario_toml, ("emulation: atmsim emulate",))
    sim = core.Simulation(json.dumps(core_input))
    for flow in real:
        sim.set_external(flow.index)
    clean_stale()
    hosts = Hosts(mtu=mtu)
    interrupted = False
    lateness: list[float] = []
    counts: dict[str, int] = {}
    try:
        for flow in real:
            flow.tx = hosts.add_tun(flow.sender, flow.k, "s")
            flow.rx = hosts.add_tun(flow.receiver, flow.k, "r")
        interrupted = _run(
            sim, real, nbytes, traffic_kind, core_input["seed"], lateness, counts, out
        )
    except KeyboardInterrupt:
        interrupted = True
    finally:
        for flow in real:
            if flow.tx is not None:
                flow.sender_csum_errors = _in_csum_errors(flow.tx.netns)
            for end, tun in (("sender", flow.tx), ("receiver", flow.rx)):
                if tun is not None:
                    flow.tun_dropped[end] = hosts.tx_dropped(tun)
            for role, process in flow.processes.items():
                if process.poll() is None:
                    process.kill()
                output = process.communicate()[0] or ""
                flow.reports[role] = _last_json(output)
        hosts.close()
    summary_json, series = sim.finish()
    series.pop("captures", None)
    summary = json.loads(summary_json)
    if interrupted:
        summary["completed"] = False
    report = {
        "flows": [_flow_report(flow, nbytes, traffic_kind) for flow in real],
        "lateness": lateness_report(lateness, max_lateness_s),
        "datagrams": counts,
        "interrupted": interrupted,
    }
    summary["emulation"] = report
    complete_summary(summary, core_input, loaded.name, started)
    has_probes = bool(series.get("time_s"))
    result = Result(summary, series, scenario_toml, has_probes, core_input=core_input)
    if out is not None:
        result._save(out, scenario_written=True)
    if interrupted:
        raise KeyboardInterrupt
    return Emulation(result, report, out)


def _in_csum_errors(netns: str) -> Optional[int]:
    """The TCP segments with a bad checksum the kernel of ``netns`` received
    (``InCsumErrors`` of /proc/net/snmp's Tcp lines), None if unreadable."""
    done = subprocess.run(
        ["ip", "netns", "exec", netns, "cat", "/proc/net/snmp"], capture_output=True, text=True
    )
    rows = [line.split() for line in done.stdout.splitlines() if line.startswith("Tcp:")]
    if len(rows) != 2 or "InCsumErrors" not in rows[0]:
        return None
    return int(rows[1][rows[0].index("InCsumErrors")])


def _last_json(output: str) -> dict:
    """The last JSON object a traffic process printed: the project's print one line,
    iperf3 -J one indented document. {} when there is none (killed early)."""
    text = output.strip()
    for candidate in (text, *reversed(text.splitlines())):
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return {}


def _transfer(flow: RealFlow, kind: str) -> dict:
    """What a flow's traffic says it did: bytes sent and received, whether they were
    all delivered intact, its time, its congestion control and errors."""
    sent, got = flow.reports.get("send", {}), flow.reports.get("recv", {})
    if kind == "iperf3":
        # The client's report holds the server's count too (end.sum_received). With
        # -n the client ends the test once it has written the bytes into its socket,
        # and the server counts what it received by then: less than was sent (what
        # was in flight is not counted), so iperf3 gives a rate, not a check that
        # every byte arrived (the project's sender and receiver give that).
        end = sent.get("end", {})
        n_sent = end.get("sum_sent", {}).get("bytes", 0)
        n_got = end.get("sum_received", {}).get("bytes", 0)
        return {
            "sent": n_sent,
            "received": n_got,
            "ok": "error" not in sent and n_sent > 0 and n_got > 0,
            "seconds": end.get("sum_received", {}).get("seconds", 0.0),
            "cc": end.get("sender_tcp_congestion", flow.cc),
            "errors": [r["error"] for r in (sent, got) if "error" in r],
            "retransmissions": end.get("sum_sent", {}).get("retransmits"),
            "tcp_ext": {},
        }
    return {
        "sent": sent.get("bytes", 0),
        "received": got.get("bytes", 0),
        "ok": bool(sent.get("sha256")) and sent.get("sha256") == got.get("sha256"),
        "seconds": sent.get("seconds") or 0.0,
        "cc": sent.get("cc", flow.cc),
        "errors": [r["error"] for r in (sent, got) if "error" in r],
        "retransmissions": sent.get("retransmissions"),
        "tcp_ext": sent.get("tcp_ext", {}),
    }


def _flow_report(flow: RealFlow, nbytes: int, kind: str) -> dict:
    done = _transfer(flow, kind)
    ok, seconds = done["ok"], done["seconds"]
    return {
        "flow": flow.name,
        "sender": flow.sender,
        "receiver": flow.receiver,
        "traffic": kind,
        "cc": done["cc"],
        "bytes": nbytes,
        "bytes_received": done["received"],
        "ok": ok,
        "seconds": seconds,
        "goodput_mbps": done["received"] * 8 / seconds / 1e6 if ok and seconds > 0 else 0.0,
        "errors": done["errors"],
        "retransmissions": done["retransmissions"],
        "tcp_ext": done["tcp_ext"],
        "window_scale": flow.handshake.scale,
        "mss": flow.handshake.mss if flow.handshake.scale is not None else None,
        "acks_rewritten": flow.acks_rewritten,
        "sender_in_csum_errors": flow.sender_csum_errors,
        "dropped_before_the_model": flow.tun_dropped,
    }


def _run(
    sim,
    real: list[RealFlow],
    nbytes: int,
    kind: str,
    seed: int,
    lateness: list[float],
    counts: dict[str, int],
    info_dir: Optional[Path] = None,
) -> bool:
    """Start the traffic and pace the simulation on the wall clock until every
    transfer has ended or the run's duration; True when Ctrl-C (or SIGTERM) stopped
    it. Appends the lateness of each datagram written to ``lateness`` and counts the
    datagrams in ``counts``, so that an interrupted run keeps what it measured."""
    by_fd: dict[int, tuple[RealFlow, bool, int]] = {}
    for flow in real:
        assert flow.tx is not None and flow.rx is not None
        # Read at the sender: to the receiver, written into the receiver's TUN.
        by_fd[flow.tx.fd] = (flow, True, flow.rx.fd)
        by_fd[flow.rx.fd] = (flow, False, flow.tx.fd)
    update = import_core().checksum_update
    for flow in real:
        assert flow.rx is not None and flow.tx is not None
        recv = subprocess.Popen(
            _receiver_command(flow, kind),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        flow.processes["recv"] = recv
        _wait_ready(recv, flow, kind)
    poller = select.epoll()
    for fd in by_fd:
        poller.register(fd, select.EPOLLIN)
    duration_ps = sim.duration_ps
    pending: dict[int, tuple[bytes, int, RealFlow, Optional[tcpheader.Segment]]] = {}
    counts.update(injected=0, written=0, not_ipv4=0, write_errors=0)
    tag = 0
    t0 = time.monotonic()
    for k, flow in enumerate(real):
        assert flow.tx is not None and flow.rx is not None
        flow.processes["send"] = subprocess.Popen(
            _sender_command(flow, kind, nbytes, seed * 1000 + k, info_dir, t0),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
    processes = [p for flow in real for p in flow.processes.values()]
    interrupted = False
    try:
        while True:
            if pending:
                ready = poller.poll(0)
                if not ready:
                    time.sleep(BUSY_WAIT_S)
                    ready = poller.poll(0)
            else:
                ready = poller.poll(IDLE_WAIT_S)
            target = min(duration_ps, int((time.monotonic() - t0) * 1e12))
            sim.advance(target)
            for fd, _ in ready:
                flow, to_receiver, out_fd = by_fd[fd]
                # At most READ_BATCH at a time: the deliveries of the simulated time
                # this takes wait for it (the rest are read on the next turn).
                for _ in range(READ_BATCH):
                    try:
                        datagram = os.read(fd, 65536)
                    except BlockingIOError:
                        break
                    if not datagram or datagram[0] >> 4 != 4:
                        counts["not_ipv4"] += 1
                        continue
                    segment = tcpheader.parse(datagram)
                    wnd = ack = 0
                    if segment is not None and to_receiver:
                        flow.handshake.from_sender(segment)
                    elif segment is not None:
                        if flow.handshake.from_receiver(segment):
                            sim.set_external_tcp(
                                flow.index, flow.handshake.scale, flow.handshake.mss
                            )
                        # The windows of SYNs are never scaled: they are left alone.
                        if flow.handshake.scale is not None and not segment.syn:
                            wnd = segment.window
                        # What an ack bucket paces the segment by.
                        ack = flow.handshake.acknowledged(segment)
                    sim.inject(flow.index, to_receiver, len(datagram), tag, wnd, ack)
                    pending[tag] = (datagram, out_fd, flow, segment if wnd else None)
                    tag += 1
                    counts["injected"] += 1
            for got, at_ps, _, wnd in sim.take_delivered():
                datagram, out_fd, flow, segment = pending.pop(got)
                if segment is not None and wnd < segment.window:
                    # The explicit-rate control lowered the window on the way: into
                    # the real header, with the checksum updated (RFC 1624).
                    datagram = tcpheader.rewrite_window(datagram, segment, wnd, update)
                    flow.acks_rewritten += 1
                try:
                    os.write(out_fd, datagram)
                    counts["written"] += 1
                except OSError:
                    counts["write_errors"] += 1
                lateness.append(time.monotonic() - t0 - at_ps / 1e12)
            if target >= duration_ps or all(p.poll() is not None for p in processes):
                break
    except KeyboardInterrupt:
        interrupted = True
    finally:
        poller.close()
        counts["lost_or_in_network"] = len(pending)
    return interrupted
