"""Packet captures (``probes.capture``, ``atmsim run --capture``): pcap files read back
by readers nobody here wrote (dpkt always, tshark where it is installed), checked
against atmsim's own summary of the same run."""

from __future__ import annotations

import shutil
import struct
import subprocess
from collections import Counter
from pathlib import Path

import dpkt
import pytest

import atmsim

from conftest import SCENARIOS, needs_core, run_cli

pytestmark = needs_core

DUMBBELL = SCENARIOS / "ip_dumbbell.toml"
UBR_PLUS = SCENARIOS / "ubr_plus.toml"
HETERO = SCENARIOS / "reproduce" / "seed001-hetero.toml"


def records(path: Path) -> list[tuple[float, bytes, int]]:
    """(time in s, captured bytes, original length) of each record, read by dpkt; the
    file must be nanosecond pcap of raw IP or of RFC 2684 (LLC/SNAP) AAL5 frames."""
    with open(path, "rb") as handle:
        reader = dpkt.pcap.Reader(handle)
        assert reader.datalink() in (dpkt.pcap.DLT_RAW, 101, 100)
        out = []
        for ts, buf in reader:
            out.append((float(ts), bytes(buf), len(buf)))
        return out


def ip_of(buf: bytes) -> dpkt.ip.IP:
    """The IP datagram of a record: after the LLC/SNAP header of an AAL5 frame."""
    if buf[:8] == bytes.fromhex("AAAA030000000800"):
        buf = buf[8:]
    return dpkt.ip.IP(buf)


def tcp_checksum_ok(ip: dpkt.ip.IP) -> bool:
    """The receiver's check of the TCP checksum: over the pseudo-header, the header and
    a payload of zeros (the model has no payload bytes), the sum is all ones."""
    header = bytes(ip.data)[:20]
    tcp_len = ip.len - 20
    words = ip.src + ip.dst + struct.pack("!HH", 6, tcp_len) + header
    total = sum(struct.unpack(f"!{len(words) // 2}H", words))
    while total > 0xFFFF:
        total = (total & 0xFFFF) + (total >> 16)
    return total == 0xFFFF


def sender(flow: int) -> bytes:
    """Flow ``flow``'s sender's address (0-based, as the core numbers flows)."""
    return struct.pack("!I", 0x0A000000 + 2 * flow + 1)


def retransmitted(ips: list[dpkt.ip.IP], flow: int) -> int:
    """Data segments of ``flow`` sent again: a sequence number below the highest sent."""
    highest = -1
    count = 0
    for ip in ips:
        tcp = ip.data
        if ip.src != sender(flow) or ip.len == 40:
            continue
        if tcp.seq < highest:
            count += 1
        highest = max(highest, tcp.seq)
    return count


@pytest.fixture(scope="module")
def dumbbell(tmp_path_factory):
    out = tmp_path_factory.mktemp("dumbbell")
    result = atmsim.run(
        DUMBBELL,
        overrides=['probes.capture=["s1", "r1-r2"]', 'run.duration="4 s"'],
        out=out,
    )
    return result, out


def test_an_ip_capture_holds_the_flows_as_the_summary_counts_them(dumbbell):
    result, out = dumbbell
    files = sorted(p.name for p in (out / "capture").iterdir())
    assert files == ["r1-r2.drops.pcap", "r1-r2.pcap", "s1.drops.pcap", "s1.pcap"]
    flow = result.summary["flows"][0]
    mss = 1000
    ips = [ip_of(buf) for _, buf, _ in records(out / "capture" / "s1.pcap")]
    data = [ip for ip in ips if ip.src == sender(0)]
    acks = [ip for ip in ips if ip.dst == sender(0)]
    # Every segment the sender sent crossed its first link within the run (a few may
    # still be waiting in its port at the end).
    assert 0 <= flow["segments_sent"] - len(data) <= 5
    assert retransmitted(ips, 0) == flow["bytes_retransmitted"] // mss
    assert all(ip.len == 40 + mss for ip in data)
    assert acks and all(ip.len == 40 for ip in acks)
    # Checksums: the IP header's, and the TCP checksum carried from the model's.
    assert all(tcp_checksum_ok(ip) for ip in ips)
    assert all(dpkt.in_cksum(bytes(ip)[:20]) == 0 for ip in ips[:100])
    # The drops file holds what the bottleneck dropped, and the summary says so.
    summary = {c["name"]: c for c in result.summary["captures"]}
    drops = records(out / "capture" / "r1-r2.drops.pcap")
    port = next(p for p in result.summary["ports"] if p["name"] == "r1-r2")
    assert len(drops) == summary["r1-r2"]["drops"] == port["packets_dropped"]
    assert summary["s1"]["packets"] == len(ips)
    assert not summary["s1"]["full"]


def test_records_are_in_time_order_within_the_run(dumbbell):
    result, out = dumbbell
    for name in ("s1.pcap", "r1-r2.pcap", "r1-r2.drops.pcap"):
        times = [t for t, _, _ in records(out / "capture" / name)]
        assert times == sorted(times)
        assert times and times[-1] <= result.summary["sim_time_s"]


def test_captures_are_the_same_bytes_with_the_fast_paths_off(tmp_path):
    overrides = ['probes.capture=["r1", "r1-r2"]', 'run.duration="1 s"']
    on = atmsim.run(DUMBBELL, overrides=overrides, fast_paths=True)
    off = atmsim.run(DUMBBELL, overrides=overrides, fast_paths=False)
    assert on.captures and on.captures == off.captures
    overrides = ['probes.capture=["sw1-sw2", "s1"]', 'run.duration="1 s"']
    on = atmsim.run(UBR_PLUS, overrides=overrides, fast_paths=True)
    off = atmsim.run(UBR_PLUS, overrides=overrides, fast_paths=False)
    assert on.captures and on.captures == off.captures


def test_an_atm_capture_holds_the_tcp_frames_with_llc_snap(tmp_path):
    result = atmsim.run(
        UBR_PLUS,
        overrides=['probes.capture=["sw1-sw2", "s1"]', 'run.duration="3 s"'],
        out=tmp_path,
    )
    crossed = records(tmp_path / "capture" / "sw1-sw2.pcap")
    dropped = records(tmp_path / "capture" / "sw1-sw2.drops.pcap")
    assert crossed and dropped
    assert all(buf[:8] == bytes.fromhex("AAAA030000000800") for _, buf, _ in crossed)
    ips = [ip_of(buf) for _, buf, _ in crossed]
    assert all(tcp_checksum_ok(ip) for ip in ips)
    # What the sender's node saw leave it: every retransmission the summary counts.
    at_s1 = [ip_of(buf) for _, buf, _ in records(tmp_path / "capture" / "s1.pcap")]
    flow = result.summary["flows"][0]
    assert retransmitted(at_s1, 0) == flow["bytes_retransmitted"] // 512
    # A frame that lost a cell at the bottleneck is in the drops file, and the data
    # frames of each flow there are those it lost: the byte ledger's drops.
    lost = Counter(ip_of(buf).src for _, buf, _ in dropped if ip_of(buf).len > 40)
    lost_bytes = sum(lost.values()) * 512
    assert lost_bytes == result.summary["conservation"]["bytes"]["dropped_in_network"]


def test_a_router_rewrites_the_window_the_capture_shows(tmp_path):
    result = atmsim.run(
        HETERO,
        overrides=[
            'template.window_rule="30 ms"',
            'run.duration="0.5 s"',
            'probes.capture=["r2-r1", "s1-r1-rev"]',
        ],
        out=tmp_path,
    )
    before = {}
    for _, buf, _ in records(tmp_path / "capture" / "r2-r1.pcap"):
        ip = ip_of(buf)
        if ip.dst == sender(0):
            before[ip.data.ack] = ip.data.win
    after = [ip_of(buf) for _, buf, _ in records(tmp_path / "capture" / "s1-r1-rev.pcap")]
    after = [ip for ip in after if ip.dst == sender(0)]
    assert after and all(tcp_checksum_ok(ip) for ip in after)
    pairs = [(before[ip.data.ack], ip.data.win) for ip in after if ip.data.ack in before]
    assert pairs and all(new <= old for old, new in pairs)
    assert any(new < old for old, new in pairs)
    # The last window written, times the flow's scale, is what the summary reports.
    control = result.summary["flows"][0]["rate_control"]
    assert control is not None


def test_a_capture_stops_at_its_limit_and_says_so(tmp_path):
    result = run_cli(
        "run",
        str(DUMBBELL),
        "--out",
        str(tmp_path),
        "--capture",
        "r1-r2",
        "--capture-limit",
        "100 KB",
        "--set",
        'run.duration="1 s"',
    )
    assert result.returncode == 0, result.stderr
    assert "stopped at its limit of 102,400 bytes" in result.stdout
    size = (tmp_path / "capture" / "r1-r2.pcap").stat().st_size
    assert 102_400 - 56 < size <= 102_400


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--capture", "nowhere"], 'probes.capture: no link or node "nowhere"'),
        (["--capture", "r1", "--capture-limit", "10 B"], "probes.capture_limit: must be"),
    ],
)
def test_bad_capture_input_is_one_line_and_exit_2(tmp_path, flags, message):
    result = run_cli("run", str(DUMBBELL), "--out", str(tmp_path / "o"), *flags)
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_reused_run_directory_drops_the_earlier_captures(tmp_path):
    atmsim.run(DUMBBELL, overrides=['probes.capture=["s1"]', 'run.duration="0.1 s"'], out=tmp_path)
    assert (tmp_path / "capture" / "s1.pcap").exists()
    atmsim.run(DUMBBELL, overrides=['run.duration="0.1 s"'], out=tmp_path)
    assert not (tmp_path / "capture").exists()


TSHARK = shutil.which("tshark")


@pytest.mark.skipif(TSHARK is None, reason="tshark is not installed (apt-get install tshark)")
def test_tshark_analysis_agrees_with_the_summary(dumbbell):
    """tshark's TCP analysis of the sender's node capture: its retransmissions (which
    it calls retransmissions, fast retransmissions or out-of-order segments) are the
    summary's, the window it reads (with the flow's scale) is the receiver's, and its
    mean ACK round trip is within 5 % of the flow's smoothed RTT."""
    result, out = dumbbell
    flow = result.summary["flows"][0]
    scale = 3  # the dumbbell's 256 KB window needs a shift of 3 (window_scale "auto")
    fields = subprocess.run(
        [
            TSHARK,
            "-r",
            str(out / "capture" / "s1.pcap"),
            "-o",
            f"tcp.default_window_scaling:{scale}",
            "-T",
            "fields",
            "-e",
            "ip.src",
            "-e",
            "tcp.analysis.retransmission",
            "-e",
            "tcp.analysis.fast_retransmission",
            "-e",
            "tcp.analysis.out_of_order",
            "-e",
            "tcp.analysis.ack_rtt",
            "-e",
            "tcp.window_size",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    rows = [line.split("\t") for line in fields]
    again = sum(1 for r in rows if r[0] == "10.0.0.1" and any(r[1:4]))
    assert again == flow["bytes_retransmitted"] // 1000
    acks = [r for r in rows if r[0] == "10.0.0.2"]
    rtts = [float(r[4]) for r in acks if r[4]]
    assert abs(sum(rtts) / len(rtts) - flow["srtt_s"]) <= 0.05 * flow["srtt_s"]
    assert {int(r[5]) for r in acks} == {262_144}
