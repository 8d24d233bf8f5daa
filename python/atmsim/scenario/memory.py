"""How much memory a run needs, estimated before anything is built, and the machine's.

A run that would need more memory than the machine has is refused at validation
with one line (exit 2) instead of being killed, or aborting in the core, once the
memory runs out. The estimate counts:

- the probes' samples: ceil(duration / period) ticks x the number of series, at
  ``BYTES_PER_SAMPLE`` each;
- each expanded node, link, VC, source and flow at ``BYTES_PER`` (the tables, the
  core JSON, the core's state and the summary handed back to Python);
- each (port with a switch algorithm, VC) pair: the algorithm keeps per-VC state; so
  does each (port with a ppd or epd policy, VC) pair;
- the cells and packets the run may hold at once (``cells_held``), at
  ``BYTES_PER_CELL`` each: what may pile up in an unlimited buffer offered more than
  its link's rate, the cells on the links, what may wait in the queue of an ABR
  source, and up to two windows of every TCP flow;
- with ``probes.delay``, each VC's and flow's delay record at its largest,
  ``BYTES_PER_DELAY``;
- the interpreter and its libraries, ``BASE_BYTES``.

The constants were measured as peak resident memory of ``atmsim run`` (Linux,
x86-64, Python 3.11): 10^7 samples in one series or in three took 0.89 and 0.92
GB more than none; 20,000 TCP flows over ATM (n-source: 40,002 nodes, 80,002
links, 40,000 VCs), 100,000 CBR sources and 100,000 links between 200,000 nodes
took 1.0, 0.39 and 0.80 GB. Each constant is rounded up.

The machine's memory is the least of its physical memory, the cgroup limit
(``memory.max``, in a container) and what the process's address-space and data
limits (``ulimit -v``, ``ulimit -d``) leave. Those limits count the address space a
run maps, not the memory it touches, and a run maps up to about twice what it touches
(``ADDRESS_SPACE_FACTOR``): the room they leave counts half.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable, NamedTuple, Optional

from ..units import parse_cell_rate_cps, parse_time_ps

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

BYTES_PER_FRAME_VC = 24
"""Per port with a frame-aware policy (ppd, epd, Selective Drop, FBA, DFBA) and per VC of
the scenario: the frame each VC is in, the decision on it and whether its cells are being
dropped."""

BYTES_PER_POLICY_VC = 16
"""Per port with a per-VC buffer policy (Selective Drop, FBA, DFBA) and per VC of the
scenario, besides the frame state: the port's cells per VC, DFBA's weight and Z_i."""

BYTES_PER_CELL = 72
"""Per cell held at once: 24 bytes in a port's queue (32 with its arrival time on a
link), up to three times that while a queue grows (its old buffer and the one of twice
the size). A queue of 18.3 million cells took 0.69 GB (38 bytes a cell)."""

PACKET_CELLS = 2
"""An IP packet held counts as this many cells (40 to 56 bytes in a queue or on a link)."""

ADDRESS_SPACE_FACTOR = 2
"""Under ``ulimit -v`` or ``-d``: address space a run needs per byte of the estimate
beyond BASE_BYTES. Growing arrays keep their old copy while they grow and allocators
keep what they freed: the least address-space limits under which runs passed were, over
the interpreter's ~350 MiB, 184 bytes per probe sample (10^7 samples in one series,
86 bytes resident) and 1.6 times the resident memory of 6,000 TCP flows over ATM."""

ADDRESS_SPACE_MARGIN = 128 << 20
"""Under ``ulimit -v`` or ``-d``: address space kept free besides (threads' stacks)."""

BASE_BYTES = 150 << 20
"""Python, numpy, pandas, pyarrow and the core, before the scenario."""

BYTES_PER_DELAY = 8 << 10
"""With ``probes.delay``, per VC and per flow: the core's delay record at its largest
(its histogram holds at most 1,024 buckets of 8 bytes, docs/model.md, "Delay
statistics"; most hold far fewer)."""

SERIES_PER = {
    "queue": 1,
    "utilization": 1,
    "vc_rate": 1,
    "vc_losses": 2,  # cells dropped, frames merged
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
    cells: int = 0
    """Cells and packets the run may hold at once (``cells_held``)."""
    cells_bytes: int = 0
    """Their bytes."""
    cells_at: tuple[str, str, str] = ("", "", "")
    """(key, what, how to hold fewer) of the part of the network that holds the most."""

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
    probes = scenario.probes
    counts = {
        "queue": len(network.links),
        "utilization": len(network.links),
        "vc_rate": len(network.vcs),
        "vc_losses": len(network.vcs),
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
    frame_ports = sum(
        1
        for flat in network.links.values()
        if flat.link.layer == "atm" and flat.link.policy.kind in ("ppd", "epd")
    ) + len(network.policy_ports())
    entities = (
        len(network.nodes) * BYTES_PER["nodes"]
        + len(network.links) * BYTES_PER["links"]
        + len(network.vcs) * BYTES_PER["vcs"]
        + len(network.sources) * BYTES_PER["sources"]
        + len(network.flows) * BYTES_PER["flows"]
        + counts["abr_ports"] * len(network.vcs) * BYTES_PER_ALGORITHM_VC
        + frame_ports * len(network.vcs) * BYTES_PER_FRAME_VC
        + len(network.policy_ports()) * len(network.vcs) * BYTES_PER_POLICY_VC
        + (len(network.vcs) + len(network.flows)) * BYTES_PER_DELAY * probes.delay
    )
    cells, at = cells_held(parse_time_ps(scenario.run.duration), network)
    cells_bytes = math.ceil(cells) * BYTES_PER_CELL
    total = BASE_BYTES + entities + probe_bytes + cells_bytes
    return MemoryEstimate(total, samples, series, probe_bytes, math.ceil(cells), cells_bytes, at)


def cells_held(duration_ps: int, network: Network) -> tuple[float, tuple[str, str, str]]:
    """An upper bound on the cells and IP packets a run of ``duration_ps`` may hold at
    once, and (key, what, how to hold fewer) of the part of the network holding the most
    of them.

    - An ATM port with an unlimited buffer may queue what its sources offer above the
      link's cell rate over the whole run (a source offers its rate, an on/off source
      its peak, a greedy one its first link's rate; no more than the links feeding the
      port carry, for the sources that do not start there); a finite buffer holds at
      most its size; neither more than the sources send over the run.
    - An ATM link carries at most its cell rate x its delay.
    - A source on an ABR VC (not greedy, whose backlog is a count) may have everything
      it sends over the run waiting in its source queue.
    - A TCP flow holds at most two advertised windows in the network (a retransmission
      may overtake copies still queued): its segments' cells and ACK cells over ATM,
      data and ACK packets over IP; and no more than its first link can send over the run.

    Cell sources never cross IP links, so the cells of sources count at ATM links only.
    """
    run_s = duration_ps / 1e12
    offered: dict[str, float] = {}
    """Link -> the cells/s its sources offer (their rates added up)."""
    starting: dict[str, float] = {}
    """Link -> the cells/s of the sources whose first link it is."""
    feeding: dict[str, set[str]] = {}
    """Link -> the links that bring it the cells of the other sources."""
    sent: dict[str, float] = {}
    """Link -> the cells its sources send over the run."""
    top = (0.0, "", "", "")

    def count(held: float, key: str, what: str, advice: str) -> None:
        nonlocal top
        if held > top[0]:
            top = (held, key, what, advice)

    classes = {vc.name: vc.vc_class for vc in network.vcs}
    total = 0.0
    # The copies of a template share their Source: its rate and times are parsed once
    # per table and first link, not once per copy (100,000 copies: 0.7 -> 0.3 CPU-s).
    parsed: dict[tuple[int, str], tuple[Optional[str], float, float]] = {}
    for flat in network.sources:
        source = flat.source
        links = network.vc_links(flat.vc)
        if not links:
            continue
        memo = (id(source), links[0])
        known = parsed.get(memo)
        if known is None:
            first_cps = network.links[links[0]].link.cell_rate_cps()
            key = source.offered_rate_key()
            cps = first_cps if key is None else parse_cell_rate_cps(getattr(source, key))
            stop_s = run_s if source.stop is None else min(run_s, parse_time_ps(source.stop) / 1e12)
            cells = cps * max(0.0, stop_s - parse_time_ps(source.start) / 1e12)
            known = parsed[memo] = (key, cps, cells)
        key, cps, cells = known
        starting[links[0]] = starting.get(links[0], 0.0) + cps
        for k, name in enumerate(links):
            offered[name] = offered.get(name, 0.0) + cps
            sent[name] = sent.get(name, 0.0) + cells
            if k:
                feeding.setdefault(name, set()).add(links[k - 1])
        if classes.get(flat.vc) == "abr" and key is not None:
            total += cells
            count(
                cells,
                f"{flat.key}.{key}",
                f'the ABR source queue of "{flat.name}"',
                "lower the source's rate or shorten run.duration",
            )
    for name, flat in network.links.items():
        link = flat.link
        if link.layer != "atm" or name not in sent:
            continue
        cps = link.cell_rate_cps()
        buffer = link.buffer_cells()
        feed = sum(network.links[f].link.cell_rate_cps() for f in feeding.get(name, ()))
        offered[name] = min(offered[name], starting.get(name, 0.0) + feed)
        growth = max(0.0, offered[name] - cps) * run_s
        queued = min(sent[name], growth if buffer is None else float(buffer))
        on_wire = min(sent[name], cps * min(run_s, link.delay_ps() / 1e12))
        total += queued + on_wire
        if buffer is None:
            count(
                queued,
                f"{flat.key}.buffer",
                f'link "{name}" (buffer "inf", offered {offered[name]:.6g} cells/s against '
                f"{cps:.6g} cells/s)",
                "give the link a finite buffer, offer less or shorten run.duration",
            )
        count(
            on_wire,
            f"{flat.key}.{'delay' if link.length is None else 'length'}",
            f'link "{name}" (cells on the wire)',
            "shorten the link or lower its rate",
        )
    total += _flows_held(run_s, network, count)
    return total, (top[1], top[2], top[3])


def _flows_held(run_s: float, network: Network, count: Callable[..., None]) -> float:
    """The cells (an IP packet counting PACKET_CELLS) the TCP flows may hold at once.

    A flow holds at most two of its windows in the network (a retransmission may overtake
    copies still queued), and no more segments than its first link sends over the run.
    The flows together hold at most twice their congestion windows, which start at
    initial_cwnd and grow by at most one segment per segment delivered (slow start, and
    the inflation of fast recovery); the flows crossing a link deliver no more than that
    link carries over the run, so each flow is charged to the link of its path that
    carries the fewest of its segments per flow crossing it.
    """
    crossing: dict[str, int] = {}
    for flat in network.flows:
        for name in flat.data_links:
            crossing[name] = crossing.get(name, 0) + 1
    by_window = 0.0
    initial = 0.0
    charged: dict[str, tuple[float, float]] = {}
    """Link -> (segments it may deliver over the run, the flows' largest cells a segment)."""
    for flat in network.flows:
        flow = flat.flow
        shift = flow.window_shift()
        advertised = min(65535, flow.window_bytes() >> shift) << shift
        segments = -(-advertised // flow.mss)
        if flat.layer == "atm":
            data_cells = -(-(flow.mss + 56) // 48)  # the segment's AAL5 frame
            per_segment = data_cells + 2  # and an ACK
        else:
            per_segment = 2 * PACKET_CELLS  # the data packet and its ACK
        carried = {}
        """Link of the data path -> the segments of this flow it carries over the run."""
        for name in flat.data_links:
            link = network.links[name].link
            if flat.layer == "atm":
                carried[name] = link.cell_rate_cps() * run_s / data_cells
            else:
                carried[name] = link.bit_rate_bps() * run_s / (8 * (flow.mss + 40))
        held = 2 * min(segments, carried[flat.data_links[0]] + 1) * per_segment
        by_window += held
        initial += 2 * flow.initial_cwnd * per_segment
        bottleneck = min(carried, key=lambda name: carried[name] / crossing[name])
        delivered, cells = charged.get(bottleneck, (0.0, 0.0))
        charged[bottleneck] = (max(delivered, carried[bottleneck]), max(cells, per_segment))
        count(
            held,
            f"{flat.key}.window",
            f'TCP flow "{flat.name}" (two windows)',
            "lower the window or shorten run.duration",
        )
    by_acks = initial + sum(2 * (delivered + 1) * cells for delivered, cells in charged.values())
    return min(by_window, by_acks)


def machine_memory() -> tuple[Optional[int], str]:
    """(bytes, what they are) of the memory a run may need (on the scale of the
    estimate, which counts the interpreter as BASE_BYTES), or (None, "") if unknown.

    The least of the physical memory, a container's limit (cgroup ``memory.max``) and
    what the process's address-space and data limits (``ulimit -v``, ``ulimit -d``)
    leave beyond what it already uses (the libraries alone map more than a GB), less
    ADDRESS_SPACE_MARGIN, over ADDRESS_SPACE_FACTOR.
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
            # The room left, as memory the run may touch (the estimate's scale).
            room = soft - _status_bytes(used) - ADDRESS_SPACE_MARGIN
            left = max(room, 0) // ADDRESS_SPACE_FACTOR + BASE_BYTES
            limits.append((left, f"what this process may still map under {what}"))
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
    if need.cells_bytes >= max(need.probes, need.total - need.probes - need.cells_bytes):
        key, where, advice = need.cells_at
        return key, (
            f"the run needs {need} of memory: it may hold ~{need.cells} cells and packets at "
            f"once (~{BYTES_PER_CELL} bytes each), most of them at {where}; more than {what} "
            f"({format_bytes(have)}): {advice}"
        )
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
