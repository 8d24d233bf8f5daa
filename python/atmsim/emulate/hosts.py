"""The real hosts of an emulation: Linux network namespaces, TUN devices, and cleaning up.

Each real host is a network namespace named ``atmsim-<pid>-<n>-<host>`` (``pid``: the
emulating process). Each real flow has one TUN device in each of its two hosts'
namespaces, ``at<pid>f<k>s`` at the sender and ``at<pid>f<k>r`` at the receiver,
addressed point to point: 10.201.<k>.1 (sender) and 10.201.<k>.2 (receiver), so
that the kernel routes every datagram for the peer into the TUN, where the emulation
reads it. The devices are opened here (``/dev/net/tun``, ``TUNSETIFF`` with
``IFF_TUN | IFF_NO_PI``: bare IP datagrams, no packet-information header), then moved
into their namespace; the file descriptor stays with this process, and a TUN device
that is not persistent disappears when the last descriptor closes, so a killed
emulation leaves no device behind, only its namespaces.

Those are removed by ``Hosts.close`` (on the way out of the run, also on Ctrl-C and on
failure) and, after a ``kill -9``, by the next emulation: every emulation writes
``<pid>.json`` (its pid, the process's start time, its namespaces) into
``RUN_DIR`` before it creates anything, and at its start removes each
``atmsim-<pid>-*`` namespace whose process is gone (or whose pid now belongs to a
process started at another time), with the processes left in it.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

PREFIX = "atmsim-"
"""The first characters of every namespace an emulation creates."""

RUN_DIR = Path("/run/atmsim-emulate")
"""Where each running emulation says which namespaces are its own (``<pid>.json``)."""

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000

CAP_NET_ADMIN = 12
CAP_SYS_ADMIN = 21

SUBNET = "10.201.{k}.{host}"
"""The addresses of real flow k: host 1 its sender, host 2 its receiver."""

MAX_FLOWS = 250
"""Real flows per emulation: one /24 of 10.201.0.0/16 each."""


class EmulationError(Exception):
    """An emulation that cannot start, in one line (the command exits 2)."""


class PrivilegeError(EmulationError):
    """What the emulation needs and the process lacks: one line naming it."""


def missing_privileges(
    status_text: Optional[str] = None, tun: Path = Path("/dev/net/tun")
) -> Optional[str]:
    """What this process lacks to emulate, in words, or None when it has everything:
    Linux, the capabilities CAP_NET_ADMIN (TUN devices, addresses, routes) and
    CAP_SYS_ADMIN (``ip netns add`` mounts the namespace), the ``ip`` command
    (iproute2) and ``/dev/net/tun``. ``status_text``: /proc/self/status (for the tests)."""
    if not sys.platform.startswith("linux"):
        return f"needs Linux (network namespaces and TUN devices); this is {sys.platform}"
    if status_text is None:
        try:
            status_text = Path("/proc/self/status").read_text()
        except OSError as error:
            return f"cannot read /proc/self/status for the capabilities: {error.strerror}"
    found = re.search(r"^CapEff:\s*([0-9a-fA-F]+)", status_text, re.MULTILINE)
    caps = int(found.group(1), 16) if found else 0
    lacking = [
        name
        for name, bit in (("CAP_NET_ADMIN", CAP_NET_ADMIN), ("CAP_SYS_ADMIN", CAP_SYS_ADMIN))
        if not caps >> bit & 1
    ]
    if lacking:
        return (
            f"needs {' and '.join(lacking)} to create network namespaces and TUN devices "
            "(run it as root)"
        )
    if shutil.which("ip") is None:
        return "needs the ip command (iproute2) to set up network namespaces"
    if not tun.exists():
        return f"needs {tun} (the tun module: modprobe tun)"
    return None


def _ip(*args: str, netns: Optional[str] = None) -> None:
    """Run ``ip`` (in namespace ``netns``); a failure is an EmulationError naming it."""
    command = ["ip"] + (["-n", netns] if netns else []) + list(args)
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        message = " ".join(done.stderr.split()) or f"exit {done.returncode}"
        raise EmulationError(f"{' '.join(command)}: {message}")


def _start_time(pid: int) -> Optional[str]:
    """The start time of process ``pid`` (field 22 of /proc/<pid>/stat), None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces.
    return stat.rsplit(")", 1)[1].split()[19]


def list_namespaces() -> list[str]:
    """The names of the network namespaces ``ip netns`` knows."""
    done = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return [line.split()[0] for line in done.stdout.splitlines() if line.strip()]


def remove_namespace(name: str) -> None:
    """Kill the processes left in namespace ``name``, then delete it (quietly)."""
    done = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True)
    for word in done.stdout.split():
        try:
            os.kill(int(word), signal.SIGKILL)
        except (ValueError, ProcessLookupError, PermissionError):
            pass
    subprocess.run(["ip", "netns", "delete", name], capture_output=True)


def _owner_alive(pid: int) -> bool:
    """Whether emulation ``pid`` still runs: its record exists and names the start time
    of the process that has that pid now."""
    try:
        record = json.loads((RUN_DIR / f"{pid}.json").read_text())
    except (OSError, ValueError):
        return False
    return record.get("start_time") == _start_time(pid)


def clean_stale() -> list[str]:
    """Remove what emulations that are gone left behind (a ``kill -9``): their
    namespaces (with the processes in them) and records. Returns the namespaces removed."""
    removed = []
    for name in list_namespaces():
        match = re.match(re.escape(PREFIX) + r"(\d+)-", name)
        if match and not _owner_alive(int(match.group(1))):
            remove_namespace(name)
            removed.append(name)
    if RUN_DIR.is_dir():
        for record in RUN_DIR.glob("*.json"):
            if record.stem.isdigit() and not _owner_alive(int(record.stem)):
                record.unlink(missing_ok=True)
    return removed


def _safe(name: str) -> str:
    """A host name as part of a namespace name: letters, digits, ``_.-``, at most 40."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:40]


@dataclass
class Tun:
    """One TUN device of a real flow: its descriptor (non-blocking), name and host."""

    fd: int
    name: str
    netns: str
    address: str
    peer: str


@dataclass
class Hosts:
    """The namespaces and TUN devices of one emulation, removed by ``close``."""

    pid: int = field(default_factory=os.getpid)
    namespaces: dict[str, str] = field(default_factory=dict)
    """Host name -> its namespace."""
    tuns: list[Tun] = field(default_factory=list)
    mtu: int = 1500

    def _record(self) -> None:
        RUN_DIR.mkdir(parents=True, exist_ok=True)
        record = {
            "pid": self.pid,
            "start_time": _start_time(self.pid),
            "namespaces": sorted(self.namespaces.values()),
        }
        path = RUN_DIR / f"{self.pid}.json"
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(record))
        temporary.replace(path)

    def namespace(self, host: str) -> str:
        """The namespace of real host ``host``, created on first use (recorded first, so
        that a kill between the two leaves nothing the next emulation misses)."""
        if host in self.namespaces:
            return self.namespaces[host]
        name = f"{PREFIX}{self.pid}-{len(self.namespaces)}-{_safe(host)}"
        self.namespaces[host] = name
        self._record()
        _ip("netns", "add", name)
        _ip("link", "set", "lo", "up", netns=name)
        # IPv4 only: no IPv6 router solicitations or duplicate address probes in the TUNs.
        for key in ("all", "default"):
            subprocess.run(
                [
                    "ip",
                    "netns",
                    "exec",
                    name,
                    "sysctl",
                    "-qw",
                    f"net.ipv6.conf.{key}.disable_ipv6=1",
                ],
                capture_output=True,
            )
        return name

    def add_tun(self, host: str, flow_index: int, end: str) -> Tun:
        """A TUN device for real flow ``flow_index`` (its k) at ``host``, the flow's sender
        (``end`` "s") or receiver ("r"), up, addressed to its peer, in ``host``'s namespace."""
        netns = self.namespace(host)
        name = f"at{self.pid}f{flow_index}{end}"
        if len(name) > 15:
            raise EmulationError(f"TUN name {name} is longer than 15 characters")
        fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
            _ip("link", "set", "dev", name, "netns", netns)
        except BaseException:
            os.close(fd)
            raise
        mine, theirs = ("1", "2") if end == "s" else ("2", "1")
        address = SUBNET.format(k=flow_index, host=mine)
        peer = SUBNET.format(k=flow_index, host=theirs)
        tun = Tun(fd, name, netns, address, peer)
        self.tuns.append(tun)
        _ip("addr", "add", address, "peer", peer, "dev", name, netns=netns)
        _ip("link", "set", "dev", name, "mtu", str(self.mtu), "up", netns=netns)
        return tun

    def tx_dropped(self, tun: Tun) -> Optional[int]:
        """Datagrams the kernel of ``tun``'s host dropped before they reached the TUN
        device's reader (its queue full: the loop fell behind), None if unreadable.
        Those never entered the simulated network."""
        done = subprocess.run(
            ["ip", "-n", tun.netns, "-j", "-s", "link", "show", "dev", tun.name],
            capture_output=True,
            text=True,
        )
        try:
            return int(json.loads(done.stdout)[0]["stats64"]["tx"]["dropped"])
        except (ValueError, LookupError, TypeError):
            return None

    def close(self) -> None:
        """Close the TUN devices (they disappear with their descriptors), remove the
        namespaces with any process left in them, then the record."""
        for tun in self.tuns:
            try:
                os.close(tun.fd)
            except OSError:
                pass
        self.tuns.clear()
        for name in self.namespaces.values():
            remove_namespace(name)
        self.namespaces.clear()
        (RUN_DIR / f"{self.pid}.json").unlink(missing_ok=True)
