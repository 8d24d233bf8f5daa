"""The project's own TCP sender and receiver, run in the real hosts' namespaces.

``python -m atmsim.emulate.traffic recv --bind ADDR --port P`` listens, takes one
connection, reads it to its end and prints one JSON line: the bytes received and
their SHA-256. ``... send --to ADDR --port P --bytes N --cc NAME --seed S`` connects
(retrying while the receiver is not listening yet), chooses the connection's Linux
congestion control (the ``TCP_CONGESTION`` socket option: ``reno``, ``cubic``),
sends N bytes drawn from the seed, closes, and prints one JSON line with what it
sent, their SHA-256 and its time. So the emulation can tell that every byte crossed
the simulated network intact: the two digests are equal. Only the standard library
is used (argparse through ``atmsim._lazy``), and ``atmsim.emulate`` loads its other
modules on first use: the module starts fast in a namespace.
"""

from __future__ import annotations

import hashlib
import json
import random
import socket
import sys
import time

from .._lazy import argparse

BLOCK = 64 * 1024
"""Bytes per send and receive call."""

READY = "listening"
"""The receiver's first line once it listens (the emulation starts the sender then)."""


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


def send(to: str, port: int, n: int, cc: str, seed: int, timeout_s: float) -> dict:
    """Connect to (to, port) with congestion control ``cc``, send ``n`` bytes, close."""
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
    view = memoryview(data)
    for k in range(0, n, BLOCK):
        sock.sendall(view[k : k + BLOCK])
    sock.shutdown(socket.SHUT_WR)
    # The receiver closes once it has read everything: then every byte is delivered.
    sock.recv(1)
    sock.close()
    return {
        "bytes": n,
        "sha256": hashlib.sha256(data).hexdigest(),
        "cc": used.split(b"\0", 1)[0].decode(),
        "seconds": time.monotonic() - started,
    }


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
    args = parser.parse_args(argv)
    try:
        if args.role == "recv":
            report = receive(args.bind, args.port, args.timeout)
        else:
            report = send(args.to, args.port, args.bytes, args.cc, args.seed, args.timeout)
    except KeyboardInterrupt:
        return 130
    except OSError as error:
        print(json.dumps({"error": f"{type(error).__name__}: {error}"}), flush=True)
        return 1
    print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
