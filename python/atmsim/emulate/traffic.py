"""The project's own TCP sender and receiver, run in the real hosts' namespaces.

``python -m atmsim.emulate.traffic recv --bind ADDR --port P`` listens, takes one
connection, reads it to its end and prints one JSON line: the bytes received and
their SHA-256. ``... send --to ADDR --port P --bytes N --cc NAME --seed S`` connects
(retrying while the receiver is not listening yet), chooses the connection's Linux
congestion control (the ``TCP_CONGESTION`` socket option: ``reno``, ``cubic``),
sends N bytes drawn from the seed, closes, and prints one JSON line with what it
sent, their SHA-256, its time and its retransmissions (``TCP_INFO``). So the emulation
can tell that every byte crossed the simulated network intact: the two digests are
equal. With ``--info-out PATH`` the sender also samples its connection's ``TCP_INFO``
every ``--info-every-ms`` milliseconds (cwnd, ssthresh, RTT, retransmissions, the
window the peer offers) and writes the samples as CSV, their times in seconds from
``--clock-zero`` (a ``CLOCK_MONOTONIC`` reading, which network namespaces share: the
emulation passes its start, so the samples are on the simulated time axis). The
sender's report also gives the kernel's TcpExt counters of its namespace (timeouts,
loss probes, recoveries). Only the standard library is used (argparse through
``atmsim._lazy``), and ``atmsim.emulate`` loads its other modules on first use: the
module starts fast in a namespace.
"""

from __future__ import annotations

import hashlib
import json
import random
import socket
import struct
import sys
import threading
import time

from .._lazy import argparse

BLOCK = 64 * 1024
"""Bytes per send and receive call."""

READY = "listening"
"""The receiver's first line once it listens (the emulation starts the sender then)."""


# struct tcp_info (linux/tcp.h): 8 one-byte fields, then 32-bit fields from tcpi_rto
# to tcpi_total_retrans; later kernels append fields, among them tcpi_snd_wnd (the
# window the peer offers, after the scale; Linux 5.4 and later) at byte 228. Only the
# fields below are read; a shorter answer from an older kernel leaves snd_wnd out.
_INFO_HEAD = struct.Struct("8B24I")
_INFO_FIELDS = {
    "snd_mss": 10,
    "unacked": 12,
    "lost": 14,
    "retrans": 15,
    "rtt_us": 23,
    "snd_ssthresh": 25,
    "snd_cwnd": 26,
    "total_retrans": 31,
}
_SND_WND_AT = 228
INFO_LEN = 232
"""Bytes of TCP_INFO asked for: up to and including tcpi_snd_wnd."""
INFO_COLUMNS = (
    "time_s",
    "cwnd_bytes",
    "ssthresh_bytes",
    "snd_wnd_bytes",
    "unacked_segments",
    "rtt_s",
    "total_retrans",
)
"""The columns of the samples' CSV: cwnd and ssthresh in bytes (segments x the
sender's MSS; ssthresh empty while it is the kernel's "infinite"), the peer's window
(empty where the kernel does not report it), RTT the kernel's smoothed estimate."""


def parse_tcp_info(raw: bytes) -> dict:
    """The fields of a ``TCP_INFO`` answer this module uses (``_INFO_FIELDS``, and
    ``snd_wnd`` when the answer is long enough)."""
    values = _INFO_HEAD.unpack_from(raw)
    info = {name: values[k] for name, k in _INFO_FIELDS.items()}
    if len(raw) >= _SND_WND_AT + 4:
        info["snd_wnd"] = struct.unpack_from("I", raw, _SND_WND_AT)[0]
    return info


def tcp_info(sock: socket.socket) -> dict:
    """The connection's ``TCP_INFO`` (Linux), parsed by ``parse_tcp_info``."""
    return parse_tcp_info(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, INFO_LEN))


def info_row(info: dict, time_s: float) -> tuple:
    """One CSV row of ``INFO_COLUMNS`` from a parsed ``TCP_INFO``."""
    mss = info["snd_mss"]
    # The kernel's ssthresh starts at TCP_INFINITE_SSTHRESH (0x7fffffff): no value yet.
    ssthresh = info["snd_ssthresh"] * mss if info["snd_ssthresh"] < 0x7FFFFFFF else ""
    return (
        round(time_s, 6),
        info["snd_cwnd"] * mss,
        ssthresh,
        info.get("snd_wnd", ""),
        info["unacked"],
        info["rtt_us"] / 1e6,
        info["total_retrans"],
    )


class InfoSampler:
    """Samples a connection's ``TCP_INFO`` every ``period_s`` in a thread (the send
    loop blocks in ``sendall`` without the interpreter lock, so the thread runs)."""

    def __init__(self, sock: socket.socket, period_s: float, clock_zero: float) -> None:
        self.sock, self.period_s, self.clock_zero = sock, period_s, clock_zero
        self.rows: list[tuple] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def sample(self) -> None:
        try:
            info = tcp_info(self.sock)
        except OSError:
            return
        self.rows.append(info_row(info, time.monotonic() - self.clock_zero))

    def _loop(self) -> None:
        while not self._stop.wait(self.period_s):
            self.sample()

    def start(self) -> None:
        self.sample()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()

    def write(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as out:
            out.write(",".join(INFO_COLUMNS) + "\n")
            for row in self.rows:
                out.write(",".join(str(v) for v in row) + "\n")


TCP_EXT = (
    "TCPTimeouts",
    "TCPLossProbes",
    "TCPSackRecovery",
    "TCPRenoRecovery",
    "TCPFastRetrans",
    "TCPSlowStartRetrans",
    "TCPSpuriousRTOs",
    "TCPLostRetransmit",
    "TCPHystartTrainDetect",
    "TCPHystartDelayDetect",
)
"""The kernel's TcpExt counters the sender reports (``/proc/net/netstat`` of its
network namespace, in which its connection is the only one): retransmission
timeouts, tail loss probes, SACK and Reno recoveries, fast and slow-start
retransmissions, RTOs found spurious, retransmissions lost again (found by RACK),
HyStart's exits from slow start."""


def tcp_ext(text: str) -> dict:
    """The ``TCP_EXT`` counters of a ``/proc/net/netstat`` text (pairs of lines, one
    of names and one of values, each starting with its group)."""
    lines = [line.split() for line in text.splitlines()]
    for names, values in zip(lines[::2], lines[1::2]):
        if names and names[0] == "TcpExt:":
            found = dict(zip(names[1:], values[1:]))
            return {name: int(found[name]) for name in TCP_EXT if name in found}
    return {}


def payload(n: int, seed: int) -> bytes:
    """The ``n`` bytes a sender of run seed ``seed`` sends."""
    return random.Random(seed).randbytes(n)


def receive(bind: str, port: int, timeout_s: float) -> dict:
    """Accept one connection on (bind, port), read it to its end: bytes, SHA-256."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((bind, port))
    listener.listen(1)
    print(READY, flush=True)
    listener.settimeout(timeout_s)
    connection, _ = listener.accept()
    connection.settimeout(timeout_s)
    digest, count, started = hashlib.sha256(), 0, time.monotonic()
    while True:
        data = connection.recv(BLOCK)
        if not data:
            break
        digest.update(data)
        count += len(data)
    connection.close()
    return {
        "bytes": count,
        "sha256": digest.hexdigest(),
        "seconds": time.monotonic() - started,
    }


def send(
    to: str,
    port: int,
    n: int,
    cc: str,
    seed: int,
    timeout_s: float,
    info_out: str | None = None,
    info_every_s: float = 0.005,
    clock_zero: float | None = None,
) -> dict:
    """Connect to (to, port) with congestion control ``cc``, send ``n`` bytes, close.
    With ``info_out``, sample ``TCP_INFO`` every ``info_every_s`` into that CSV file."""
    data = payload(n, seed)
    deadline = time.monotonic() + timeout_s
    while True:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
        sock.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            sock.connect((to, port))
            break
        except ConnectionRefusedError:
            sock.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    used = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16)
    started = time.monotonic()
    sampler = None
    if info_out is not None:
        zero = started if clock_zero is None else clock_zero
        sampler = InfoSampler(sock, info_every_s, zero)
        sampler.start()
    view = memoryview(data)
    for k in range(0, n, BLOCK):
        sock.sendall(view[k : k + BLOCK])
    sock.shutdown(socket.SHUT_WR)
    # The receiver closes once it has read everything: then every byte is delivered.
    sock.recv(1)
    seconds = time.monotonic() - started
    final = tcp_info(sock)
    if sampler is not None:
        sampler.stop()
        sampler.write(info_out)
    sock.close()
    return {
        "bytes": n,
        "sha256": hashlib.sha256(data).hexdigest(),
        "cc": used.split(b"\0", 1)[0].decode(),
        "seconds": seconds,
        "retransmissions": final["total_retrans"],
        "tcp_ext": tcp_ext(_read("/proc/net/netstat")),
    }


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii") as f:
            return f.read()
    except OSError:
        return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m atmsim.emulate.traffic")
    sub = parser.add_subparsers(dest="role", required=True)
    recv = sub.add_parser("recv")
    recv.add_argument("--bind", required=True)
    recv.add_argument("--port", type=int, default=5001)
    recv.add_argument("--timeout", type=float, default=60.0)
    snd = sub.add_parser("send")
    snd.add_argument("--to", required=True)
    snd.add_argument("--port", type=int, default=5001)
    snd.add_argument("--bytes", type=int, required=True)
    snd.add_argument("--cc", default="cubic")
    snd.add_argument("--seed", type=int, default=1)
    snd.add_argument("--timeout", type=float, default=60.0)
    snd.add_argument("--info-out", default=None)
    snd.add_argument("--info-every-ms", type=float, default=5.0)
    snd.add_argument("--clock-zero", type=float, default=None)
    args = parser.parse_args(argv)
    try:
        if args.role == "recv":
            report = receive(args.bind, args.port, args.timeout)
        else:
            report = send(
                args.to,
                args.port,
                args.bytes,
                args.cc,
                args.seed,
                args.timeout,
                args.info_out,
                args.info_every_ms / 1e3,
                args.clock_zero,
            )
    except KeyboardInterrupt:
        return 130
    except OSError as error:
        print(json.dumps({"error": f"{type(error).__name__}: {error}"}), flush=True)
        return 1
    print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
