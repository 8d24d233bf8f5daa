"""How much memory a run needs, estimated before anything is built, and the machine's.

A run that would need more memory than the machine has is refused at validation
with one line (exit 2) instead of being killed, or aborting in the core, once the
memory runs out. The estimate counts:

- the probes' samples: ceil(duration / period) ticks x the number of series, at
  ``BYTES_PER_SAMPLE`` each;
- each expanded node, link, VC, source and flow at ``BYTES_PER`` (the tables, the
  core JSON, the core's state and the summary handed back to Python);
- each (port with a switch algorithm, VC) pair: the algorithm keeps per-VC state;
- the interpreter and its libraries, ``BASE_BYTES``.

The constants were measured as peak resident memory of ``atmsim run`` (Linux,
x86-64, Python 3.11): 10^7 samples in one series or in three took 0.89 and 0.92
GB more than none; 20,000 TCP flows over ATM (n-source: 40,002 nodes, 80,002
links, 40,000 VCs), 100,000 CBR sources and 100,000 links between 200,000 nodes
took 1.0, 0.39 and 0.80 GB. Each constant is rounded up.

The machine's memory is the least of its physical memory, the cgroup limit
(``memory.max``, in a container) and what the process's address-space and data
limits (``ulimit -v``, ``ulimit -d``) leave.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Optional

try:
    import resource
except ImportError:  # pragma: no cover - not on Windows
    resource = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from .models import Scenario
    from .network import Network

BYTES_PER_SAMPLE = 96
"""Per probe sample: the core's four columns (8 + 4 + 1 + 8 bytes, up to twice that
while a column grows), their copy handed to Python, the DataFrame (two float64
and two object columns) and the Parquet writer: 89 to 92 bytes measured."""

BYTES_PER = {
    "nodes": 1 << 10,
    "links": 8 << 10,
    "vcs": 2 << 10,
    "sources": 2 << 10,
    "flows": 12 << 10,
}
"""Per expanded entity; a link's output port and its summary (as a Python dict and
a DataFrame row) weigh the most among the small ones, a TCP flow (two ends, their
buffers and summary) the most."""

BYTES_PER_ALGORITHM_VC = 48
"""Per port with a switch algorithm and per VC of the scenario: ERICA keeps a
measured rate and a cached ER per VC, the averaging interval three counters."""

BYTES_PER_POLICY_VC = 16
"""Per port with a per-VC buffer policy (Selective Drop, FBA, DFBA) and per VC of the
scenario: the port's cells per VC, the frame gate's state and DFBA's weight and Z_i."""

BASE_BYTES = 150 << 20
"""Python, numpy, pandas, pyarrow and the core, before the scenario."""

SERIES_PER = {
    "queue": 1,
    "utilization": 1,
    "vc_rate": 1,
    "vc_queue": 1,  # per VC crossing each listed port
    "flows": 4,  # cwnd, window, sequence number, srtt
    "abr_vcs": 2,  # ACR, last ER received
    "abr_ports": 4,  # load factor, fair share, ER written, ABR queue
}
"""Series recorded per name listed in each probe list."""


class MemoryEstimate(NamedTuple):
    """The memory a run needs, in bytes, and what it is made of."""

    total: int
    samples: int
    """Probe ticks in the run (0 without probes)."""
    series: int
    """Series sampled at each tick."""
    probes: int
    """Bytes of the samples."""

    def __str__(self) -> str:
        return f"~{format_bytes(self.total)}"


def format_bytes(n: float) -> str:
    """``12 MiB``, ``1.5 GiB``, ``931 GiB``: binary units, two or three digits."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if n >= 10 or unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def probe_ticks(duration_ps: int, period_ps: Optional[int]) -> int:
    """Probe ticks of a run (the core samples at period, 2 x period, ... <= duration)."""
    if not period_ps:
        return 0
    return math.ceil(duration_ps / period_ps)


def estimate(scenario: Scenario, network: Network) -> MemoryEstimate:
    """The memory a run of ``scenario`` needs; ``network`` is its expansion."""
    from ..units import parse_time_ps

    probes = scenario.probes
    counts = {
        "queue": len(network.links),
        "utilization": len(network.links),
        "vc_rate": len(network.vcs),
        "vc_queue": sum(network.vcs_through(name) for name in network.atm_links()),
        "flows": len(network.flows),
        "abr_vcs": len(network.abr_vcs()),
        "abr_ports": len(network.abr_ports()),
    }
    series = 0
    for key, per in SERIES_PER.items():
        names = getattr(probes, key)
        if key == "vc_queue" and names != "all":
            series += per * sum(network.vcs_through(name) for name in names)
            continue
        series += per * (counts[key] if names == "all" else len(names))
    period = None if probes.period is None else parse_time_ps(probes.period)
    samples = probe_ticks(parse_time_ps(scenario.run.duration), period) if series else 0
    probe_bytes = samples * series * BYTES_PER_SAMPLE
    entities = (
        len(network.nodes) * BYTES_PER["nodes"]
        + len(network.links) * BYTES_PER["links"]
        + len(network.vcs) * BYTES_PER["vcs"]
        + len(network.sources) * BYTES_PER["sources"]
        + len(network.flows) * BYTES_PER["flows"]
        + counts["abr_ports"] * len(network.vcs) * BYTES_PER_ALGORITHM_VC
        + len(network.policy_ports()) * len(network.vcs) * BYTES_PER_POLICY_VC
    )
    return MemoryEstimate(BASE_BYTES + entities + probe_bytes, samples, series, probe_bytes)


def machine_memory() -> tuple[Optional[int], str]:
    """(bytes, what they are) of the memory a run may need (on the scale of the
    estimate, which counts the interpreter as BASE_BYTES), or (None, "") if unknown.

    The least of the physical memory, a container's limit (cgroup ``memory.max``) and
    what the process's address-space and data limits (``ulimit -v``, ``ulimit -d``)
    leave beyond what it already uses (the libraries alone map more than a GB).
    """
    limits: list[tuple[int, str]] = []
    try:
        pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        if pages > 0 and page_size > 0:
            limits.append((pages * page_size, "this machine's memory"))
    except (ValueError, OSError, AttributeError):
        pass
    try:
        text = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if text.isdigit():
            limits.append((int(text), "the container's memory limit"))
    except OSError:
        pass
    for name, what, used in (
        ("RLIMIT_AS", "ulimit -v", "VmSize"),
        ("RLIMIT_DATA", "ulimit -d", "VmData"),
    ):
        if resource is None or not hasattr(resource, name):
            continue
        soft = resource.getrlimit(getattr(resource, name))[0]
        if soft != resource.RLIM_INFINITY and soft > 0:
            left = soft - _status_bytes(used) + BASE_BYTES
            limits.append((max(left, 0), f"what this process may still map under {what}"))
    if not limits:
        return None, ""
    return min(limits)


def _status_bytes(field: str) -> int:
    """A size from /proc/self/status (``VmSize``, ``VmData``), or 0 where unknown."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def memory_problem(scenario: Scenario, network: Network) -> Optional[tuple[str, str]]:
    """(key, message) when the run would need more memory than the machine has."""
    need = estimate(scenario, network)
    have, what = machine_memory()
    if have is None or need.total <= have:
        return None
    if need.probes >= need.total - need.probes:
        return "probes.period", (
            f"the run needs {need} of memory for its probes ({need.samples} ticks x "
            f"{need.series} series, ~{BYTES_PER_SAMPLE} bytes a sample), more than "
            f"{what} ({format_bytes(have)}): raise probes.period or shorten run.duration"
        )
    sizes = {
        "nodes": len(network.nodes),
        "links": len(network.links),
        "vcs": len(network.vcs),
        "sources": len(network.sources),
        "flows": len(network.flows),
    }
    return _entities_message(sizes, need.total, have, what)


def entities_problem(sizes: dict[str, tuple[int, str]]) -> Optional[tuple[str, str]]:
    """(key, message) when the expanded tables alone would not fit, judged before they
    are expanded: ``sizes`` maps a section to (its expanded size, the key of its largest
    table)."""
    need = BASE_BYTES + sum(BYTES_PER[section] * n for section, (n, _) in sizes.items())
    have, what = machine_memory()
    if have is None or need <= have:
        return None
    section = max(sizes, key=lambda s: BYTES_PER[s] * sizes[s][0])
    key, message = _entities_message({s: n for s, (n, _) in sizes.items()}, need, have, what)
    return sizes[section][1], message


def _entities_message(sizes: dict[str, int], need: int, have: int, what: str) -> tuple[str, str]:
    section = max(sizes, key=lambda s: BYTES_PER[s] * sizes[s])
    made = ", ".join(f"{n} {s}" for s, n in sizes.items() if n)
    return section, (
        f"the run needs ~{format_bytes(need)} of memory for {made}, more than {what} "
        f"({format_bytes(have)}): make the network smaller (count, template n)"
    )
