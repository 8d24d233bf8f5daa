"""Emulation: real Linux TCP between network namespaces through the simulated network
(docs/emulation.md).

The tests that create namespaces and TUN devices run where this process may (root, or
CAP_NET_ADMIN and CAP_SYS_ADMIN, with /dev/net/tun and iproute2) and skip saying what
is missing elsewhere. The core's part (datagrams in, datagrams out, their ledger) and
the messages run everywhere."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

from atmsim.emulate import hosts, tcpheader, traffic
from atmsim.emulate.run import lateness_report

from conftest import CORE_BUILT, SCENARIOS, balanced, cli_env, needs_core

MISSING = hosts.missing_privileges()
needs_privileges = pytest.mark.skipif(
    MISSING is not None or not CORE_BUILT,
    reason=f"emulation {MISSING}" if MISSING else "atmsim._core is not built",
)

EXAMPLE = SCENARIOS / "emulate_ubr.toml"


def atmsim(*args: str, timeout: float = 120, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "atmsim", *args],
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        **kwargs,
    )


def leftovers(pid: int) -> list[str]:
    """The namespaces and devices of emulation ``pid`` that still exist."""
    names = [n for n in hosts.list_namespaces() if n.startswith(f"{hosts.PREFIX}{pid}-")]
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    devices = re.findall(rf"\d+: (at{pid}f\d+[sr])[:@]", links)
    return names + devices


# --- everywhere ------------------------------------------------------------------------


def test_missing_privileges_name_what_is_missing(tmp_path):
    assert "CAP_NET_ADMIN and CAP_SYS_ADMIN" in hosts.missing_privileges("CapEff:\t0\n")
    only_net = f"CapEff:\t{1 << hosts.CAP_NET_ADMIN:016x}\n"
    assert "needs CAP_SYS_ADMIN " in hosts.missing_privileges(only_net)
    everything = f"CapEff:\t{(1 << 40) - 1:016x}\n"
    no_tun = hosts.missing_privileges(everything, tun=tmp_path / "tun")
    if no_tun is not None and "ip command" not in no_tun:
        assert str(tmp_path / "tun") in no_tun and "modprobe tun" in no_tun


def test_congestion_control_per_flow():
    from atmsim.emulate.run import RealFlow, congestion_controls

    real = [RealFlow(0, 1, "tcp1", "s1", "d1"), RealFlow(1, 2, "tcp2", "s2", "d2")]
    assert congestion_controls("reno", real) == {"tcp1": "reno", "tcp2": "reno"}
    assert congestion_controls(["tcp2=reno"], real) == {"tcp1": "cubic", "tcp2": "reno"}
    assert congestion_controls(["reno", "tcp1=cubic"], real) == {"tcp1": "cubic", "tcp2": "reno"}


def test_the_scenario_marks_real_hosts_and_each_flow_s_congestion_control(tmp_path):
    """Hosts marked ``real`` choose the real flows (those between two of them); a flow's
    ``congestion_control`` is its default, which --cc overrides; a flow with one real
    end, or a real switch, is refused at the key."""
    from atmsim.api import prepare
    from atmsim.emulate.run import _choose, congestion_controls
    from atmsim.errors import ScenarioError
    from atmsim.scenario import to_core
    from atmsim.scenario.network import Network

    text = EXAMPLE.read_text()
    text = text.replace('h1 = { kind = "host" }', 'h1 = { kind = "host", real = true }')
    text = text.replace('h2 = { kind = "host" }', 'h2 = { kind = "host", real = true }')
    text += '\n[flows.other]\npath = ["sw1", "sw2"]\n'
    path = tmp_path / "marked.toml"
    path.write_text(text)
    loaded = prepare(path)
    network = Network(loaded)
    marked = {n.name for n in network.nodes.values() if n.node.real}
    assert marked == {"h1", "h2"}
    real = _choose(to_core(loaded), None, path, marked)
    assert [f.name for f in real] == [next(iter(loaded.flows))]
    # Every flow when none is marked; --flow names them whatever is marked.
    assert len(_choose(to_core(loaded), None, path, set())) == 2
    assert [f.name for f in _choose(to_core(loaded), ["other"], path, marked)] == ["other"]
    with pytest.raises(ScenarioError, match=r"nodes\.sw1\.real: flow other joins"):
        _choose(to_core(loaded), None, path, {"h1", "h2", "sw2"})
    # The congestion control: the flow's own, else cubic; --cc over it.
    name = real[0].name
    assert congestion_controls((), real, {name: "reno"}) == {name: "reno"}
    assert congestion_controls((), real, {name: None}) == {name: "cubic"}
    assert congestion_controls(["cubic"], real, {name: "reno"}) == {name: "cubic"}
    # A switch is never real: one line at the key, exit 2.
    bad = tmp_path / "bad.toml"
    bad.write_text(
        text.replace('sw1 = { kind = "switch" }', 'sw1 = { kind = "switch", real = true }')
    )
    done = atmsim("validate", str(bad))
    assert done.returncode == 2
    assert done.stderr.strip().endswith(
        'nodes.sw1.real: only a host can be real (kind = "host"), not a switch'
    ), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_acknowledgements_count_bytes_from_the_sender_s_syn_across_the_wrap():
    """What an ack bucket paces a real ACK by: the bytes it acknowledges since the
    sender's SYN, the 32-bit field unwrapped; an older ACK stays behind the highest."""
    shake = tcpheader.Handshake()
    isn = (1 << 32) - 1000

    def segment(flags: int, seq: int = 0, ack: int = 0) -> tcpheader.Segment:
        return tcpheader.Segment(0, flags, 1000, None, None, seq % (1 << 32), ack % (1 << 32))

    assert shake.acknowledged(segment(tcpheader.ACK, ack=5)) == 0  # before the SYN
    shake.from_sender(segment(tcpheader.SYN, seq=isn))
    assert shake.acknowledged(segment(tcpheader.SYN | tcpheader.ACK, ack=isn + 1)) == 0
    assert shake.acknowledged(segment(tcpheader.ACK, ack=isn + 1 + 500)) == 500
    assert shake.acknowledged(segment(tcpheader.ACK, ack=isn + 1 + 3000)) == 3000  # wrapped
    assert shake.acknowledged(segment(tcpheader.ACK, ack=isn + 1 + 2000)) == 2000  # older
    for k in range(1, 6):  # steps below half the space, across several wraps
        got = shake.acknowledged(segment(tcpheader.ACK, ack=isn + 1 + 3000 + (k << 30)))
        assert got == 3000 + (k << 30)
    assert shake.acknowledged(segment(0, ack=123)) == 0  # no ACK flag


def test_tcp_info_is_parsed_at_the_kernel_s_offsets():
    import struct

    # struct tcp_info: 8 bytes, then 32-bit fields from tcpi_rto; tcpi_snd_wnd at 228.
    head = [0] * 8 + list(range(100, 124))
    raw = bytearray(struct.pack("8B24I", *head)) + bytearray(232 - 104)
    struct.pack_into("I", raw, 228, 65535 << 3)
    info = traffic.parse_tcp_info(bytes(raw))
    assert info["snd_mss"] == 102 and info["rtt_us"] == 115 and info["snd_cwnd"] == 118
    assert info["snd_ssthresh"] == 117 and info["total_retrans"] == 123
    assert info["snd_wnd"] == 65535 << 3
    # An older kernel's shorter answer has no snd_wnd.
    assert "snd_wnd" not in traffic.parse_tcp_info(bytes(raw[:104]))
    row = traffic.info_row({**info, "snd_ssthresh": 0x7FFFFFFF}, 0.25)
    assert row[:4] == (0.25, 118 * 102, "", 65535 << 3)


def test_tcp_ext_counters_are_read_from_netstat():
    text = (
        "TcpExt: SyncookiesSent TCPTimeouts TCPLossProbes TCPSackRecovery\n"
        "TcpExt: 0 3 2 5\n"
        "IpExt: InNoRoutes TCPTimeouts\n"
        "IpExt: 7 9\n"
    )
    assert traffic.tcp_ext(text) == {"TCPTimeouts": 3, "TCPLossProbes": 2, "TCPSackRecovery": 5}
    assert traffic.tcp_ext("") == {}


@pytest.mark.skipif(sys.platform != "linux", reason="TCP_INFO is Linux's")
def test_the_sender_samples_tcp_info_over_loopback(tmp_path):
    # No namespace needed: the project's sender and receiver over 127.0.0.1.
    import socket
    import threading

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    got: dict = {}
    receiver = threading.Thread(
        target=lambda: got.update(traffic.receive("127.0.0.1", port, 10.0)), daemon=True
    )
    receiver.start()
    path = tmp_path / "info.csv"
    sent = traffic.send("127.0.0.1", port, 3_000_000, "reno", 1, 10.0, str(path), 0.001)
    receiver.join(10)
    assert got["sha256"] == sent["sha256"] and sent["retransmissions"] == 0
    lines = path.read_text().splitlines()
    assert lines[0] == ",".join(traffic.INFO_COLUMNS) and len(lines) >= 3
    assert all(int(line.split(",")[1]) > 0 for line in lines[1:])


def test_lateness_percentiles_and_falling_behind():
    report = lateness_report([0.0002] * 98 + [0.0005, 0.004], 1e-3)
    assert (report["datagrams"], report["later_than_bound"], report["fell_behind"]) == (
        100,
        1,
        True,
    )
    assert report["max_s"] == 0.004 and report["p50_s"] == 0.0002
    assert not lateness_report([], 1e-3)["fell_behind"]


def internet_checksum(data: bytes) -> int:
    """RFC 1071's one's complement sum, written here from the RFC (not the core's)."""
    if len(data) % 2:
        data += b"\0"
    total = sum(int.from_bytes(data[k : k + 2], "big") for k in range(0, len(data), 2))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def tcp_datagram(flags: int, window: int, options: bytes = b"", payload: bytes = b"") -> bytes:
    """An IPv4 datagram 10.201.1.2 -> 10.201.1.1 carrying a TCP segment with a correct
    checksum (over the pseudo-header, RFC 9293 section 3.1)."""
    offset = (20 + len(options)) // 4
    tcp = bytearray(
        (5001).to_bytes(2, "big")
        + (40000).to_bytes(2, "big")
        + (123456789).to_bytes(4, "big")
        + (987654321).to_bytes(4, "big")
        + bytes([offset << 4, flags])
        + window.to_bytes(2, "big")
        + b"\0\0\0\0"
        + options
        + payload
    )
    src, dst = bytes([10, 201, 1, 2]), bytes([10, 201, 1, 1])
    pseudo = src + dst + bytes([0, 6]) + len(tcp).to_bytes(2, "big")
    tcp[16:18] = internet_checksum(pseudo + bytes(tcp)).to_bytes(2, "big")
    ip = (
        bytearray([0x45, 0])
        + (20 + len(tcp)).to_bytes(2, "big")
        + bytes([0, 1, 0x40, 0, 64, 6, 0, 0])
        + src
        + dst
    )
    ip[10:12] = internet_checksum(bytes(ip)).to_bytes(2, "big")
    return bytes(ip + tcp)


def tcp_checksum_ok(datagram: bytes) -> bool:
    tcp = datagram[20:]
    pseudo = datagram[12:20] + bytes([0, 6]) + len(tcp).to_bytes(2, "big")
    return internet_checksum(pseudo + tcp) == 0


def test_syn_options_are_read_and_the_handshake_settles_the_scale():
    syn = tcp_datagram(tcpheader.SYN, 64240, bytes([2, 4, 5, 0xB4, 1, 3, 3, 7]))
    segment = tcpheader.parse(syn)
    assert (segment.syn, segment.mss, segment.wscale, segment.window) == (True, 1460, 7, 64240)
    synack = tcpheader.parse(
        tcp_datagram(tcpheader.SYN | tcpheader.ACK, 65160, bytes([2, 4, 5, 0xAC, 3, 3, 10, 0]))
    )
    handshake = tcpheader.Handshake()
    handshake.from_sender(segment)
    assert handshake.from_receiver(synack)
    assert (handshake.scale, handshake.mss) == (10, 1452)
    # Without the option in the SYN, the receiver's windows are not scaled.
    plain = tcpheader.Handshake()
    plain.from_sender(tcpheader.parse(tcp_datagram(tcpheader.SYN, 64240)))
    assert plain.from_receiver(synack) and (plain.scale, plain.mss) == (0, 536)
    assert tcpheader.parse(b"\x60" + bytes(60)) is None  # IPv6


@needs_core
def test_a_lowered_window_keeps_the_real_checksum_valid():
    from atmsim.binding import import_core

    update = import_core().checksum_update
    for window, new, payload in [(501, 31, b""), (65535, 0, b"x" * 101), (4242, 4241, b"ab")]:
        datagram = tcp_datagram(tcpheader.ACK, window, payload=payload)
        assert tcp_checksum_ok(datagram)
        segment = tcpheader.parse(datagram)
        out = tcpheader.rewrite_window(datagram, segment, new, update)
        assert tcpheader.parse(out).window == new and tcp_checksum_ok(out), (window, new)
        assert out[:34] == datagram[:34] and out[38:] == datagram[38:]


@needs_core
def test_the_core_carries_real_datagrams_and_balances_their_ledger():
    from atmsim.api import prepare
    from atmsim.binding import import_core
    from atmsim.scenario import to_core

    core_input = to_core(prepare(EXAMPLE, fast_paths=False))
    sim = import_core().Simulation(json.dumps(core_input))
    sim.set_external(0)
    # A SYN-sized datagram each way and a full-sized one: 2 ms per link, 4 links, and
    # the cells' transmission at 25.6 Mbps.
    sim.inject(0, True, 60, 1)
    sim.inject(0, False, 52, 2)
    sim.inject(0, True, 1500, 3)
    sim.advance(7_000_000_000)
    assert sim.take_delivered() == []
    sim.advance(20_000_000_000)
    delivered = {tag: (at, to_receiver) for tag, at, to_receiver, _ in sim.take_delivered()}
    assert set(delivered) == {1, 2, 3}
    assert delivered[1][1] and not delivered[2][1] and delivered[3][1]
    # 60 + 16 bytes: 2 cells, through 4 hops of 2 ms and a cell time of 16.56 us each:
    # at least 5 cell times (the two cells onto the first link, then one per hop), and
    # less than a cell time more per switch (the cell slots of their outputs).
    cell_s = 424 / 25.6e6
    assert (8e-3 + 5 * cell_s) * 1e12 <= delivered[1][0] <= (8e-3 + 8 * cell_s) * 1e12
    assert delivered[3][0] > delivered[1][0] + 30 * cell_s * 1e12
    summary = json.loads(sim.finish()[0])
    assert balanced(summary)
    assert summary["conservation"]["external"] == {
        "ok": True,
        "injected": 3,
        "delivered": 3,
        "lost": 0,
        "in_network": 0,
    }
    assert summary["flows"][0]["bytes_sent"] == 0  # the model's TCP stayed quiet


@needs_core
def test_a_rate_controlling_router_lowers_the_window_of_a_real_ack():
    from atmsim.api import prepare
    from atmsim.binding import import_core
    from atmsim.scenario import to_core

    core_input = to_core(prepare(SCENARIOS / "emulate_er_router.toml", fast_paths=False))
    sim = import_core().Simulation(json.dumps(core_input))
    sim.set_external(0)
    with pytest.raises(ValueError, match="window scale 15"):
        sim.set_external_tcp(0, 15, 1460)
    sim.set_external_tcp(0, 7, 1460)
    # Data at about 10 Mbps for 50 ms (ten of r1's 5 ms intervals), and an ACK with a
    # zero window, then one with the largest, each towards the sender.
    for k in range(40):
        sim.advance(k * 1_250_000_000)
        sim.inject(0, True, 1500, k)
    sim.inject(0, False, 52, 101, 0)
    sim.inject(0, False, 52, 100, 65535)
    sim.advance(100_000_000_000)
    windows = {tag: wnd for tag, _, to_receiver, wnd in sim.take_delivered() if not to_receiver}
    summary = json.loads(sim.finish()[0])
    rate = summary["flows"][0]["rate_control"]
    # min(65535, ER x base RTT >> 7), the last window written: lowered, and at least
    # one segment (ceil(1460 / 128)).
    expected = rate["window_written_bytes"] / 128
    assert 12 <= windows[100] == expected < 65535
    assert windows[101] == 0  # a zero window is never raised
    assert rate["acks_rewritten"] == 1
    assert summary["conservation"]["external"]["delivered"] == 42


@needs_core
def test_real_hosts_need_a_run_without_the_fast_paths():
    from atmsim.api import prepare
    from atmsim.binding import import_core
    from atmsim.scenario import to_core

    sim = import_core().Simulation(json.dumps(to_core(prepare(EXAMPLE))))
    with pytest.raises(ValueError, match="fast paths"):
        sim.set_external(0)
    with pytest.raises(ValueError, match="not a flow of real hosts"):
        sim.inject(0, True, 100, 0)


@needs_core
def test_without_privileges_one_line_and_exit_2():
    if MISSING is None:
        # Privileged here: run it without the two capabilities (setpriv, util-linux,
        # takes them out of the bounding set before it runs the command).
        if shutil.which("setpriv") is None:
            pytest.skip("setpriv (util-linux) is not installed: cannot drop capabilities")
        prefix = ["setpriv", "--bounding-set", "-net_admin,-sys_admin"]
    else:
        prefix = []
    done = subprocess.run(
        [*prefix, sys.executable, "-m", "atmsim", "emulate", str(EXAMPLE)],
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: atmsim emulate needs "), lines
    if not prefix or os.geteuid() == 0:
        assert "CAP_NET_ADMIN and CAP_SYS_ADMIN" in lines[0] and "run it as root" in lines[0]


@needs_privileges
def test_bad_flow_and_congestion_control_are_one_line_errors():
    done = atmsim("emulate", str(EXAMPLE), "--flow", "nope")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "error: --flow nope: no such flow in the scenario; its flows: tcp1"
    )
    done = atmsim("emulate", str(EXAMPLE), "--cc", "vegas")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "error: --cc vegas: expected one of reno, cubic, or FLOW=one of them"
    )
    done = atmsim("emulate", str(EXAMPLE), "--traffic", "netperf")
    assert done.returncode == 2
    assert done.stderr.strip() == "error: --traffic netperf: expected one of own, iperf3"
    done = atmsim("emulate", str(EXAMPLE), "--cc", "tcp9=reno")
    assert done.returncode == 2
    assert done.stderr.strip() == "error: --cc tcp9=reno: tcp9 is not a real flow; they are tcp1"


# --- with namespaces and TUN devices -------------------------------------------------


@needs_privileges
@pytest.mark.parametrize("cc", ["reno", "cubic"])
def test_a_real_transfer_through_ubr_delivers_every_byte(tmp_path, cc):
    out = tmp_path / "emu"
    done = atmsim("emulate", str(EXAMPLE), "--bytes", "600000", "--cc", cc, "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "600,000 of 600,000 bytes, every byte delivered" in done.stdout
    summary = json.loads((out / "summary.json").read_text())
    (flow,) = summary["emulation"]["flows"]
    assert flow["ok"] and flow["bytes_received"] == 600_000 and flow["cc"] == cc
    assert set(flow["dropped_before_the_model"]) == {"sender", "receiver"}
    assert all(isinstance(n, int) for n in flow["dropped_before_the_model"].values())
    # The path carries at most 25.6 Mbps of cells: 48/53 of it is payload, less
    # LLC/SNAP, the AAL5 trailer and the TCP/IP headers.
    assert 0 < flow["goodput_mbps"] < 25.6 * 48 / 53
    assert balanced(summary)
    external = summary["conservation"]["external"]
    assert external["ok"] and external["injected"] >= 600_000 // 1500
    assert external["injected"] == external["delivered"] + external["lost"] + external["in_network"]
    # Every datagram delivered was written into the far TUN, its lateness measured.
    counts = summary["emulation"]["datagrams"]
    assert (
        counts["written"] == external["delivered"] == summary["emulation"]["lateness"]["datagrams"]
    )
    assert counts["write_errors"] == 0
    # The real flow's cells are the VCs' cells: one AAL5 frame per datagram.
    vcs = {vc["name"]: vc for vc in summary["vcs"]}
    assert vcs["tcp1"]["frames_sent"] + vcs["tcp1-ack"]["frames_sent"] == external["injected"]
    assert "lateness of" in done.stdout
    # The sender's TCP_INFO samples (every 5 ms, on the simulated time axis) and its
    # kernel's counters: a lossless path, nothing retransmitted, no timeout.
    assert flow["retransmissions"] == 0 and flow["tcp_ext"]["TCPTimeouts"] == 0
    samples = (out / "tcp_info_tcp1.csv").read_text().splitlines()
    assert samples[0].split(",") == list(traffic.INFO_COLUMNS)
    rows = [line.split(",") for line in samples[1:]]
    times = [float(row[0]) for row in rows]
    assert len(rows) >= 10 and times == sorted(times)
    assert 0 < times[0] and times[-1] < summary["sim_time_s"] + 0.1
    # Linux starts at 10 segments (RFC 6928) of the MSS less the timestamp option's 12
    # bytes (sampled at the connect, before any data), and the path loses nothing.
    assert int(rows[0][1]) == 10 * (flow["mss"] - 12)
    assert max(int(row[1]) for row in rows) > int(rows[0][1])
    assert not leftovers_of_children()


@needs_privileges
def test_real_flows_share_an_ip_router_with_simulated_ones(tmp_path):
    # ip_dumbbell: 5 flows through a 155.52 Mbps router port of 100 packets; two are
    # made real, the other three stay the model's Reno.
    out = tmp_path / "emu"
    done = atmsim(
        "emulate", "ip_dumbbell", "--flow", "tcp1", "--flow", "tcp2", "--bytes", "1000000",
        "--cc", "tcp1=reno", "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    real = summary["emulation"]["flows"]
    assert [f["flow"] for f in real] == ["tcp1", "tcp2"] and all(f["ok"] for f in real)
    assert [f["cc"] for f in real] == ["reno", "cubic"]  # as the sockets report it
    flows = {f["name"]: f for f in summary["flows"]}
    assert flows["tcp1"]["bytes_sent"] == 0 and flows["tcp3"]["bytes_delivered"] > 0
    assert balanced(summary) and summary["conservation"]["external"]["ok"]
    packets = summary["conservation"]["packets"]
    assert packets["generated"] > summary["conservation"]["external"]["injected"]
    assert not leftovers_of_children()


@needs_privileges
def test_a_rate_controlled_router_holds_a_real_flow_near_its_explicit_rate(tmp_path):
    out = tmp_path / "emu"
    done = atmsim(
        "emulate", "emulate_er_router", "--bytes", "3000000", "--cc", "cubic", "--out", str(out)
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    (real,) = summary["emulation"]["flows"]
    assert real["ok"] and real["window_scale"] is not None
    # The router lowered the window of the real ACKs, and the sender's kernel took
    # every one of them: no segment with a bad checksum.
    assert real["acks_rewritten"] > 100 and real["sender_in_csum_errors"] == 0
    (flow,) = summary["flows"]
    assert flow["rate_control"]["acks_rewritten"] == real["acks_rewritten"]
    er_mbps = flow["rate_control"]["er_bps"] / 1e6
    # Held near the ER: below it by the headers (3.5 %), the start, and the real RTT,
    # which exceeds the base RTT the window is computed with by the loop's lateness
    # (measured 15-19 Mbps at an ER of 20 Mbps on a loaded 2-core machine), without
    # filling r1's 100-packet buffer or losing a packet there.
    assert 0.6 * er_mbps < real["goodput_mbps"] < 1.02 * er_mbps
    r1 = next(p for p in summary["ports"] if p["name"] == "r1-r2")
    assert r1["packets_dropped"] == 0 and r1["max_queue_packets"] < 50
    assert balanced(summary)


@needs_privileges
def test_an_ack_bucket_paces_a_real_flow_s_acks(tmp_path):
    """The router's ack bucket instead of its windows (Explicit rate control of TCP,
    section 4.1): the real ACKs wait and leave at the flow's ER, each after the time of
    the data it newly acknowledges, so that the real sender's ACK clock follows the
    rate and r1's queue stays short."""
    out = tmp_path / "emu"
    done = atmsim(
        "emulate", "emulate_er_router", "--bytes", "3000000", "--cc", "cubic", "--out", str(out),
        "--set", "links.r2-r1.ack_control.window=none",
        "--set", "links.r2-r1.ack_control.ack_bucket=true",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    (real,) = summary["emulation"]["flows"]
    assert real["ok"] and real["acks_rewritten"] == 0
    control = summary["flows"][0]["rate_control"]
    assert control["acks_released"] > 100 and control["acks_held_max"] > 1
    assert control["ack_hold_mean_s"] > 0.001
    r1 = next(p for p in summary["ports"] if p["name"] == "r1-r2")
    assert r1["packets_dropped"] == 0 and r1["max_queue_packets"] < 50
    assert summary["conservation"]["external"]["in_network"] == 0
    assert balanced(summary)


@needs_privileges
def test_an_atm_edge_rate_controls_a_real_flow(tmp_path):
    # emulate_ubr with ERICA+ rates at the sw2 -> sw3 port and the window written where
    # the ACK VC's frames are reassembled, at the end of its last link sw1 -> h1.
    text = EXAMPLE.read_text()
    text = text.replace(
        'policy = { kind = "epd", threshold = 240 }',
        'policy = { kind = "epd", threshold = 240 }\nrate_control = "erica_plus"',
    )
    text = text.replace(
        'to = "sw1"\nrate = "25.6 Mbps"\ndelay = "2 ms"\nduplex = true',
        'to = "sw1"\nrate = "25.6 Mbps"\ndelay = "2 ms"\n\n'
        '[links.sw1-h1]\nfrom = "sw1"\nto = "h1"\nrate = "25.6 Mbps"\ndelay = "2 ms"\n'
        'ack_control = { rates_from = "sw2-sw3", window = "base_rtt" }',
    )
    assert "ack_control" in text and "rate_control" in text
    scenario = tmp_path / "edge.toml"
    scenario.write_text(text)
    out = tmp_path / "emu"
    done = atmsim("emulate", str(scenario), "--bytes", "2000000", "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    (real,) = summary["emulation"]["flows"]
    assert real["ok"] and real["acks_rewritten"] > 100 and real["sender_in_csum_errors"] == 0
    # Without the windows the sender's kernel piles its whole window into the host's
    # port (tens of thousands of cells); with them it holds about ER x base RTT.
    host = next(p for p in summary["ports"] if p["name"] == "h1-sw1")
    assert host["max_queue_cells"] < 3000
    assert balanced(summary)


@needs_privileges
@pytest.mark.skipif(shutil.which("iperf3") is None, reason="iperf3 is not installed")
def test_iperf3_as_the_traffic_through_a_rate_controlled_router(tmp_path):
    out = tmp_path / "emu"
    done = atmsim(
        "emulate", "emulate_er_router", "--traffic", "iperf3", "--bytes", "3000000",
        "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    (real,) = summary["emulation"]["flows"]
    assert real["traffic"] == "iperf3" and real["ok"] and real["cc"] == "cubic"
    # iperf3's server counts what arrived before the test's end: most of the bytes.
    assert 0.8 * 3_000_000 < real["bytes_received"] <= 3_000_000
    er_mbps = summary["flows"][0]["rate_control"]["er_bps"] / 1e6
    assert 0.6 * er_mbps < real["goodput_mbps"] < 1.02 * er_mbps
    assert real["acks_rewritten"] > 100 and real["sender_in_csum_errors"] == 0
    assert balanced(summary)


def leftovers_of_children() -> list[str]:
    """Namespaces and devices of emulations that are gone (none may be left). Those of
    an emulation still running (another process on this machine) are its own."""

    def gone(pid: str) -> bool:
        return not os.path.exists(f"/proc/{pid}")

    names = [
        n
        for n in hosts.list_namespaces()
        if n.startswith(hosts.PREFIX) and gone(n[len(hosts.PREFIX) :].split("-")[0])
    ]
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    devices = re.findall(r"\d+: at(\d+)(f\d+[sr])[:@]", links)
    return names + [f"at{pid}{rest}" for pid, rest in devices if gone(pid)]


@needs_privileges
def test_ctrl_c_writes_what_was_done_and_removes_everything(tmp_path):
    out = tmp_path / "emu"
    process = subprocess.Popen(
        [sys.executable, "-m", "atmsim", "emulate", str(EXAMPLE), "--bytes", "50000000"]
        + ["--out", str(out)],
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not leftovers(process.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)  # the transfer runs
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["completed"] is False and summary["emulation"]["interrupted"]
    assert summary["emulation"]["lateness"]["datagrams"] > 0
    assert balanced(summary)
    assert leftovers(process.pid) == []


@needs_privileges
def test_the_next_emulation_cleans_up_after_a_kill_9(tmp_path):
    process = subprocess.Popen(
        [sys.executable, "-m", "atmsim", "emulate", str(EXAMPLE), "--bytes", "50000000"]
        + ["--out", str(tmp_path / "killed")],
        env=cli_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while len(leftovers(process.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)  # the transfer runs (it takes seconds)
    assert process.poll() is None
    process.kill()
    process.wait()
    left = leftovers(process.pid)
    # The namespaces stay, with the traffic processes in them; the TUN devices went
    # with their descriptors.
    assert len(left) == 2 and all(name.startswith(hosts.PREFIX) for name in left)
    for name in left:
        links = subprocess.run(["ip", "-n", name, "-o", "link"], capture_output=True, text=True)
        assert f"at{process.pid}f" not in links.stdout
    removed = hosts.clean_stale()
    assert sorted(removed) == sorted(left)
    assert leftovers(process.pid) == []
    assert not (hosts.RUN_DIR / f"{process.pid}.json").exists()
