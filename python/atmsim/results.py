"""What a run gives, as a person reads it: the port, VC, flow and ABR tables, the
conservation ledgers and their verdict, and the rule for run directories.

``print_result`` prints a ``Result`` as ``atmsim run`` does and says whether its
ledgers balance; ``ledger_lines`` is the verdict alone (``atmsim reproduce`` uses
it for every run); ``check_out_dir`` (``atmsim.outputs``) decides whether a
directory may receive a run's files.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ._lazy import pandas as pd
from .columnar import TABLE_FILES, is_large, read_tables
from .tables import Table, print_tables
from .units import CELL_BITS, PAYLOAD_BITS

if TYPE_CHECKING:  # the API imports pandas; the tables need only the summary
    from .api import Result

MAX_TABLE_ROWS = 50
"""Longer port and VC tables are cut here (the full lists are in summary.json)."""

PERSIST_KEYS = ("persist_expiries", "window_probes", "zero_window_acks")
"""A TCP flow's persist-timer counters (docs/core-interface.md, "Flows", Summary), which
the core writes into its summary only when not 0."""


def _count(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def _table(
    title: str, columns: list[str], rows: list[list[str]], total: Optional[int] = None
) -> Table:
    """A table of names (first column, left-justified) and numbers (right-justified),
    cut at ``MAX_TABLE_ROWS`` rows with a caption saying how many more there are
    (``total``: the rows there are, when ``rows`` holds only the first ones)."""
    table = Table(title, columns, [k > 0 for k in range(len(columns))], rows[:MAX_TABLE_ROWS])
    total = len(rows) if total is None else total
    if total > MAX_TABLE_ROWS:
        table.caption = f"{total - MAX_TABLE_ROWS} more in summary.json"
    return table


ROWS_FILE = {
    "VCs": "vcs",
    "VC cell transfer delay (us)": "vcs",
    "ABR": "vcs",
    "GFR": "vcs",
    "Flows": "flows",
    "Flow delay and RTT (ms)": "flows",
    "Rate control": "flows",
    "TCP per VC": "vc_tcp",
}
"""Which list of the summary each table of ``result_tables`` shows: a large run's are
in Parquet files (``atmsim.columnar``), which its captions name."""


def print_result(result: Result, out_dir: Path, width: Optional[int] = None) -> bool:
    """Print the tables (``result_tables``, cut to ``width``: the terminal's by default),
    the conservation ledgers, the simulated and wall time and the run directory; True
    if every ledger balances."""
    summary = result.summary
    print_tables(result_tables(summary), width)
    balanced = True
    for line, ok in ledger_lines(summary):
        print(line)
        balanced = balanced and ok
    for line in capture_lines(summary):
        print(line)
    print(
        f"simulated {summary.get('sim_time_s')} s, {summary.get('events', 0):,} events, "
        f"{summary.get('wall_s', 0):.2f} s wall"
    )
    print(f"run dir: {out_dir}")
    return balanced


def capture_lines(summary: dict) -> list[str]:
    """One line per packet capture: its files, what they hold, and whether a file
    reached its size bound (the capture then ends before the run)."""
    lines = []
    for cap in summary.get("captures", []):
        name = cap["name"]
        line = (
            f"capture {name}: capture/{name}.pcap ({cap['packets']:,} packets), "
            f"capture/{name}.drops.pcap ({cap['drops']:,} drops)"
        )
        if cap["full"]:
            line += (
                f"; stopped at its limit of {cap['max_bytes']:,} bytes "
                "(raise probes.capture_limit or --capture-limit)"
            )
        lines.append(line)
    return lines


def result_tables(summary: dict) -> list[Table]:
    """The tables of a summary, in order: ATM ports ("Ports"), IP ports, VCs, TCP flows,
    ABR VCs. A pure IP run has no ATM port or VC table; a run without flows or ABR VCs
    has no flow or ABR table."""
    tables = []
    ports = summary.get("ports", [])
    atm_ports = [port for port in ports if port.get("layer", "atm") != "ip"]
    ip_ports = [port for port in ports if port.get("layer") == "ip"]
    if atm_ports or not ip_ports:
        tables.append(
            _table(
                "Ports",
                [
                    "port",
                    "cells in",
                    "out",
                    "dropped",
                    "CLR",
                    "max queue",
                    "mean queue",
                    "utilization",
                ],
                [
                    [
                        port["name"],
                        _count(port["cells_in"]),
                        _count(port["cells_out"]),
                        _count(port["cells_dropped"]),
                        f"{port['clr']:.3g}",
                        _count(port["max_queue_cells"]),
                        f"{port['mean_queue_cells']:.1f}",
                        f"{port['utilization']:.4f}",
                    ]
                    for port in atm_ports
                ],
            )
        )
    if ip_ports:
        tables.append(
            _table(
                "IP ports",
                [
                    "port",
                    "packets in",
                    "out",
                    "dropped",
                    "loss",
                    "max queue",
                    "mean queue",
                    "utilization",
                ],
                [
                    [
                        port["name"],
                        _count(port.get("packets_in", 0)),
                        _count(port.get("packets_out", 0)),
                        _count(port.get("packets_dropped", 0)),
                        f"{_ratio(port.get('packets_dropped', 0), port.get('packets_in', 0)):.3g}",
                        _count(port.get("max_queue_packets", 0)),
                        f"{port.get('mean_queue_packets', 0.0):.1f}",
                        f"{port['utilization']:.4f}",
                    ]
                    for port in ip_ports
                ],
            )
        )
    vc_rows = [
        [
            vc["name"],
            _count(vc["cells_sent"]),
            _count(vc["cells_delivered"]),
            _count(vc["frames_sent"]),
            _count(vc["frames_delivered"]),
            _count(vc["frames_corrupted"]),
            _count(vc["frames_merged"]),
            f"{vc['frame_goodput_cps']:,.0f}",
        ]
        # only the rows shown are formatted: a run may have a million VCs
        for vc in summary.get("vcs", [])[:MAX_TABLE_ROWS]
    ]
    if vc_rows or not ip_ports:
        tables.append(
            _table(
                "VCs",
                [
                    "vc",
                    "cells sent",
                    "delivered",
                    "frames sent",
                    "delivered",
                    "corrupted",
                    "merged",
                    "goodput (cells/s)",
                ],
                vc_rows,
                total=len(summary.get("vcs", [])),
            )
        )
    delayed_vcs = [vc for vc in summary.get("vcs", []) if isinstance(vc.get("ctd"), dict)]
    if delayed_vcs:
        tables.append(_ctd_table(delayed_vcs))
    drops = _drops_table(atm_ports)
    if drops is not None:
        tables.append(drops)
    flows = summary.get("flows", [])
    if flows:
        tables.append(_flows_table(flows))
    timed_flows = [flow for flow in flows if isinstance(flow.get("delay"), dict)]
    if timed_flows:
        tables.append(_flow_delay_table(timed_flows))
    if summary.get("vc_tcp"):
        tables.append(_vc_tcp_table(summary["vc_tcp"]))
    controlled = [flow for flow in flows if isinstance(flow.get("rate_control"), dict)]
    if controlled:
        tables.append(_rate_control_table(controlled))
    abr_vcs = [vc for vc in summary.get("vcs", []) if isinstance(vc.get("abr"), dict)]
    if abr_vcs:
        tables.append(_abr_table(abr_vcs))
    gfr_vcs = [vc for vc in summary.get("vcs", []) if isinstance(vc.get("gfr"), dict)]
    if gfr_vcs:
        tables.append(_gfr_table(gfr_vcs, summary.get("vc_tcp", [])))
    if is_large(summary):
        for table in tables:
            if table.caption and table.title in ROWS_FILE:
                where = TABLE_FILES[ROWS_FILE[table.title]]
                table.caption = table.caption.replace("in summary.json", f"in {where}")
    return tables


def _ms(seconds: float) -> str:
    """A delay in ms, to four significant digits."""
    return f"{seconds * 1e3:.4g}"


def _us(seconds: float) -> str:
    """A delay in microseconds, to four significant digits."""
    return f"{seconds * 1e6:.4g}"


def _ctd_table(vcs: list[dict]) -> Table:
    """The cell transfer delay of the VCs that have one (``probes.delay``), in us:
    mean, percentiles, the greatest, and the delay variation as the standard
    deviation and the peak-to-peak CDV, p99 - min (docs/model.md, "Delay
    statistics")."""
    rows = [
        [
            vc["name"],
            _count(vc["ctd"]["count"]),
            *(_us(vc["ctd"][key]) for key in ("mean_s", "p50_s", "p95_s", "p99_s", "max_s")),
            _us(vc["ctd"]["std_s"]),
            _us(vc["ctd"]["p2p_cdv_s"]),
        ]
        for vc in vcs
    ]
    columns = ["vc", "cells", "CTD mean", "p50", "p95", "p99", "max", "std", "CDV p99-min"]
    table = _table("VC cell transfer delay (us)", columns, rows)
    note = "percentiles within 0.8 %; CDV: peak-to-peak, p99 - min"
    table.caption = f"{table.caption}; {note}" if table.caption else note
    return table


def _flow_delay_table(flows: list[dict]) -> Table:
    """Each timed flow's data-segment delay and RTT samples (``probes.delay``), in ms."""
    rows = []
    for flow in flows:
        delay, rtt = flow["delay"], flow.get("rtt")
        row = [
            flow["name"],
            _count(delay["count"]),
            *(_ms(delay[key]) for key in ("mean_s", "p50_s", "p99_s", "max_s")),
        ]
        if isinstance(rtt, dict):
            row += [_count(rtt["count"]), *(_ms(rtt[key]) for key in ("mean_s", "min_s", "max_s"))]
        else:
            row += ["0", "-", "-", "-"]
        rows.append(row)
    columns = [
        "flow",
        "segments",
        "delay mean",
        "p50",
        "p99",
        "max",
        "RTT samples",
        "RTT mean",
        "min",
        "max",
    ]
    return _table("Flow delay and RTT (ms)", columns, rows)


def _drops_table(ports: list[dict]) -> Optional[Table]:
    """Cells dropped per port and reason, for the ports that dropped any (none: no
    table). Reasons are the policies' own: tail, epd, ppd, intelligent_tail, and
    ``<policy>:<reason>`` such as ``dfba:clp1`` (docs/model.md, "Drop policies")."""
    rows = [
        [port["name"], reason, _count(count)]
        for port in ports
        for reason, count in sorted(port.get("drops", {}).items())
        if count
    ]
    if not rows:
        return None
    return _table("Drops", ["port", "reason", "cells"], rows)


def _rate_control_table(flows: list[dict]) -> Table:
    """One row per flow whose ACKs a router controls (Explicit rate control of TCP (Satyavolu et
    al., 1998)): its explicit rate, the last window written, and what its ack bucket did."""
    rows = []
    for flow in flows:
        rc = flow["rate_control"]
        rows.append(
            [
                flow["name"],
                f"{rc['er_bps'] / 1e6:.3f}",
                f"{rc['window_written_bytes'] / 1024:,.1f}",
                _count(rc["acks_rewritten"]),
                _count(rc["acks_released"]),
                _count(rc["acks_held_max"]),
                f"{rc['ack_hold_mean_s'] * 1e3:.2f}",
            ]
        )
    return _table(
        "Rate control",
        [
            "flow",
            "ER (Mbps)",
            "window written (KB)",
            "ACKs rewritten",
            "ACKs released",
            "most held",
            "mean hold (ms)",
        ],
        rows,
    )


def _vc_tcp_table(rows: list[dict]) -> Table:
    """One row per VC carrying several TCP flows: their totals."""
    return _table(
        "TCP per VC",
        ["vc", "flows", "goodput (Mbps)", "delivered (B)", "retransmitted (B)", "timeouts"],
        [
            [
                row["vc"],
                _count(row["flows"]),
                f"{row['goodput_mbps']:.3f}",
                _count(row["bytes_delivered"]),
                _count(row["bytes_retransmitted"]),
                _count(row["timeouts"]),
            ]
            for row in rows
        ],
    )


def _gfr_table(vcs: list[dict], vc_tcp: list[dict]) -> Table:
    """One row per GFR VC: its MCR and how its first switch's frame-based GCRA judged
    its frames; with TCP flows on it, their goodput against the MCR (MCR in Mbps of
    cell payload, 384 bits a cell, as GFR buffer management (Goyal et al., 1998) counts it)."""
    goodput = {row["vc"]: row["goodput_mbps"] for row in vc_tcp}
    rows = []
    for vc in vcs:
        gfr = vc["gfr"]
        mcr_mbps = gfr["mcr_cps"] * PAYLOAD_BITS / 1e6
        achieved = goodput.get(vc["name"])
        rows.append(
            [
                vc["name"],
                f"{gfr['mcr_cps']:,.0f}",
                f"{mcr_mbps:.3f}",
                "-" if achieved is None else f"{achieved:.3f}",
                _count(gfr["frames_tested"]),
                _count(gfr["frames_ineligible"]),
                _count(gfr["cells_tagged"]),
            ]
        )
    return _table(
        "GFR",
        [
            "vc",
            "MCR (cells/s)",
            "MCR (Mbps)",
            "TCP goodput (Mbps)",
            "frames tested",
            "not eligible",
            "cells tagged",
        ],
        rows,
    )


def _ratio(part: float, whole: float) -> float:
    return part / whole if whole else 0.0


def _mbps(cells_per_s: float) -> str:
    """A cell rate in Mbps on the wire (CELL_BITS = 424 bits per cell)."""
    return f"{cells_per_s * CELL_BITS / 1e6:.3f}"


def _abr_table(vcs: list[dict]) -> Table:
    """One row per ABR VC: its source end system at the end of the run."""
    return _table(
        "ABR",
        [
            "vc",
            "ACR (Mbps)",
            "last ER (Mbps)",
            "FRMs sent",
            "BRMs received",
            "rule-6 cuts",
            "source queue (cells)",
        ],
        [
            [
                vc["name"],
                _mbps(vc["abr"]["acr_cps"]),
                _mbps(vc["abr"]["last_er_cps"]),
                _count(vc["abr"]["frms_sent"]),
                _count(vc["abr"]["brms_received"]),
                _count(vc["abr"]["rule6_cuts"]),
                _count(vc["abr"]["source_queue_cells"]),
            ]
            for vc in vcs
        ],
    )


def _flows_table(flows: list[dict]) -> Table:
    finite = any(flow.get("completed_at_s") is not None for flow in flows)
    # The persist timer's counters, written by the core only when not 0: shown
    # when some flow met a window too small to send into.
    persisted = any(flow.get(key) for flow in flows for key in PERSIST_KEYS)
    columns = [
        "flow",
        "goodput (Mbps)",
        "delivered (B)",
        "retransmitted (B)",
        "timeouts",
        "fast retransmits",
        "final cwnd (B)",
    ]
    if persisted:
        columns += ["persist expiries", "window probes", "zero-window ACKs"]
    if finite:
        columns.append("completed at (s)")
    rows = []
    for flow in flows:
        row = [
            flow["name"],
            f"{flow['goodput_mbps']:.3f}",
            _count(flow["bytes_delivered"]),
            _count(flow["bytes_retransmitted"]),
            _count(flow["timeouts"]),
            _count(flow["fast_retransmits"]),
            f"{flow['final_cwnd_bytes']:,.0f}",
        ]
        if persisted:
            row += [_count(flow.get(key, 0)) for key in PERSIST_KEYS]
        if finite:
            done = flow.get("completed_at_s")
            row.append("-" if done is None else f"{done:.4f}")
        rows.append(row)
    total = sum(flow["goodput_mbps"] for flow in flows)
    table = _table("Flows", columns, rows)
    table.caption = (table.caption + "; " if table.caption else "") + (
        f"total goodput {total:.3f} Mbps"
    )
    return table


def vc_tcp_totals(summary: dict, core_input: dict) -> list[dict]:
    """Per VC that carries the data of more than one TCP flow (an edge router's
    connections multiplexed onto one VC, as in the GFR buffer management paper): the VC, its number
    of flows and their totals (goodput, bytes delivered and retransmitted, timeouts); empty when
    every VC carries at most one flow (the VC's own row and the flow's say it all)."""
    flows = core_input.get("flows", [])
    vcs = core_input.get("vcs", [])
    by_vc: dict[int, list[dict]] = {}
    for spec, flow in zip(flows, summary.get("flows", [])):
        if spec.get("data_vc") is not None:
            by_vc.setdefault(spec["data_vc"], []).append(flow)
    if not any(len(members) > 1 for members in by_vc.values()):
        return []
    rows = []
    for index in sorted(by_vc):
        members = by_vc[index]
        rows.append(
            {
                "vc": vcs[index]["name"],
                "flows": len(members),
                "goodput_mbps": sum(f["goodput_mbps"] for f in members),
                "bytes_delivered": sum(f["bytes_delivered"] for f in members),
                "bytes_retransmitted": sum(f["bytes_retransmitted"] for f in members),
                "timeouts": sum(f["timeouts"] for f in members),
            }
        )
    return rows


def ledger_lines(summary: dict) -> list[tuple[str, bool]]:
    """The conservation ledger lines to print, each with whether it balances.

    The cell ledger; with TCP flows also the packet and byte ledgers
    (docs/core-interface.md). A ledger balances when the core says so and its
    terms add up here too. A balanced ledger with nothing in it (all zero: the
    packet ledger of TCP over ATM, the cell ledger of a pure IP run) is left out;
    when every ledger is empty, one line says so.
    """
    ledger = summary["conservation"]
    lines = []
    cells = (
        ("delivered", ledger["cells_delivered"]),
        ("dropped", ledger["cells_dropped"]),
        ("queued", ledger["cells_queued"]),
        ("on links", ledger["cells_on_links"]),
    )
    has_sub = "packets" in ledger or "bytes" in ledger
    cell_ok = ledger["cells_generated"] == sum(n for _, n in cells)
    if not has_sub:
        cell_ok = cell_ok and bool(ledger["ok"])
    empty: set[int] = set()  # the lines of ledgers with nothing in them
    if _nothing_in(ledger["cells_generated"], cells):
        empty.add(len(lines))
    lines.append(
        _ledger_line("conservation ledger", "generated", ledger["cells_generated"], cells, cell_ok)
    )
    if summary.get("flows"):
        packets = ledger.get("packets")
        if packets is None:
            lines.append(("packet ledger: MISSING from the core's summary", False))
        else:
            terms = (
                ("delivered", packets["delivered"]),
                ("dropped", packets["dropped"]),
                ("queued", packets["queued"]),
                ("on links", packets["on_links"]),
            )
            held = packets.get("held_at_routers", 0)
            if held:  # ACKs in ack buckets (explicit-rate control of TCP)
                terms = (*terms, ("held at routers", held))
            ok = bool(packets["ok"]) and packets["generated"] == sum(n for _, n in terms)
            if _nothing_in(packets["generated"], terms):
                empty.add(len(lines))
            lines.append(
                _ledger_line("packet ledger", "generated", packets["generated"], terms, ok)
            )
        nbytes = ledger.get("bytes")
        if nbytes is None:
            lines.append(("byte ledger: MISSING from the core's summary", False))
        else:
            terms = (
                ("delivered", nbytes["delivered"]),
                ("dropped in network", nbytes["dropped_in_network"]),
                ("dropped by AAL5", nbytes["dropped_aal5"]),
                ("duplicates", nbytes["duplicates"]),
                ("held out of order", nbytes["held_out_of_order"]),
                ("in path", nbytes["in_path"]),
            )
            beyond = nbytes.get("dropped_beyond_window", 0)
            if beyond:  # window probes into a closed window, dropped by the receiver
                terms = (*terms, ("dropped beyond window", beyond))
            once = nbytes["sent_once"] + nbytes["retransmitted"]
            ok = (
                bool(nbytes["ok"])
                and nbytes["sent"] == once
                and nbytes["sent"] == sum(n for _, n in terms)
            )
            split = f"sent once {nbytes['sent_once']:,} + retransmitted {nbytes['retransmitted']:,}"
            if _nothing_in(nbytes["sent"], terms):
                empty.add(len(lines))
            lines.append(_ledger_line("byte ledger", "sent", nbytes["sent"], terms, ok, split))
    if not ledger["ok"] and all(ok for _, ok in lines):
        problems = "; ".join(str(p) for p in ledger.get("problems", [])) or "no details"
        lines.append((f"conservation: the core reports a problem ({problems})", False))
    # A balanced ledger with nothing in it (the packet ledger of TCP over ATM, the
    # cell ledger of a pure IP run) says nothing: it is left out.
    kept = [(line, ok) for n, (line, ok) in enumerate(lines) if not (ok and n in empty)]
    if lines and not kept:
        kept = [("conservation ledgers: balanced (nothing was generated)", True)]
    return kept


def _nothing_in(total: int, terms: tuple[tuple[str, int], ...]) -> bool:
    """True for a ledger whose total and every term are 0."""
    return total == 0 and all(n == 0 for _, n in terms)


def _ledger_line(
    name: str,
    left: str,
    total: int,
    terms: tuple[tuple[str, int], ...],
    ok: bool,
    split: str = "",
) -> tuple[str, bool]:
    right = " + ".join(f"{label} {n:,}" for label, n in terms)
    middle = f"{split} = " if split else ""
    if ok:
        return f"{name}: balanced ({left} {total:,} = {middle}{right})", True
    accounted = sum(n for _, n in terms)
    extra = f"; {split}" if split else ""
    return f"{name}: UNBALANCED ({left} {total:,} != {right} = {accounted:,}{extra})", False


# --- run directories ----------------------------------------------------------------------
# The rule for output directories is atmsim.outputs'; these names stay importable here.
from .outputs import OutDirError, check_out_dir  # noqa: E402, F401

INCOMPLETE = "INCOMPLETE"
"""In a run directory while its files are being written (``Result.save`` removes it
last): a run killed, failed or out of disk space before the end keeps it, and
``atmsim report``, ``fairness`` and ``plot`` refuse the directory."""

INCOMPLETE_TEXT = (
    "atmsim has not finished writing this run directory (it is running, or it was "
    "stopped or failed while writing): run it again.\n"
)

SERIES_COLUMNS = ("time_s", "entity", "metric", "value")
"""The columns of series.parquet (docs/core-interface.md): tidy, one sample a row."""

LEDGER_COUNTS = (
    "cells_generated",
    "cells_delivered",
    "cells_dropped",
    "cells_queued",
    "cells_on_links",
)


class RunDirError(ValueError):
    """A run directory that ``atmsim report``, ``fairness`` or ``plot`` cannot read:
    incomplete, or a summary.json or series.parquet that is not atmsim's. One line
    naming the directory or the file and what is wrong; the CLI exits 2."""


def check_complete(run_dir: Path) -> None:
    """RunDirError when ``run_dir`` holds the INCOMPLETE mark (``Result.save``)."""
    if (Path(run_dir) / INCOMPLETE).exists():
        raise RunDirError(
            f"{run_dir}: an incomplete run directory (it holds {INCOMPLETE}: the run was "
            "stopped or failed before all its files were written); run it again"
        )


def read_summary(run_dir: Path) -> dict:
    """The summary.json of a complete run directory, checked to be atmsim's: a JSON
    object with the conservation ledger's counts, and lists of named ports, VCs and
    flows. A large run's rows are read back from its Parquet files
    (``atmsim.columnar.read_tables``): the summary has one shape whatever the run's
    size. RunDirError (one line naming the file) otherwise."""
    check_complete(run_dir)
    path = Path(run_dir) / "summary.json"
    if not path.is_file():
        raise RunDirError(f"{run_dir}: no summary.json (not a finished run directory)")
    import json

    try:
        summary = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise RunDirError(f"{path}: not a summary (not UTF-8 text)") from None
    except (ValueError, RecursionError) as error:
        detail = " ".join(str(error).split()) or "nested too deeply"
        raise RunDirError(f"{path}: not a summary (invalid JSON: {detail})") from None
    problem = summary_problem(summary)
    if problem:
        raise RunDirError(f"{path}: not an atmsim summary ({problem})")
    return with_tables(summary, Path(run_dir))


def with_tables(summary: dict, run_dir: Path) -> dict:
    """``summary`` with a large run's rows put back from the Parquet files of ``run_dir``
    (``atmsim.columnar.read_tables``); RunDirError naming a file that is missing or
    not atmsim's."""
    tables = summary.get("tables")
    if tables is None:
        return summary
    if not isinstance(tables, dict) or any(name not in TABLE_FILES for name in tables):
        known = ", ".join(TABLE_FILES)
        raise RunDirError(
            f"{run_dir / 'summary.json'}: not an atmsim summary (tables: expected an "
            f"object of {known})"
        )
    for name in tables:
        if not (run_dir / TABLE_FILES[name]).is_file():
            missing = run_dir / TABLE_FILES[name]
            raise RunDirError(f"{missing}: no such file (summary.json names it)")
    try:
        return read_tables(summary, run_dir)
    except (OSError, ValueError, KeyError, TypeError, StopIteration) as error:
        detail = " ".join(str(error).split())
        raise RunDirError(
            f"{run_dir}: a Parquet file of the run is not atmsim's ({detail})"
        ) from None


def summary_problem(summary: object) -> str:
    """What makes ``summary`` unlike the core's (empty when nothing does)."""
    if not isinstance(summary, dict):
        return f"expected a JSON object, got {type(summary).__name__}"
    ledger = summary.get("conservation")
    if not isinstance(ledger, dict):
        return 'no "conservation" object'
    for key in LEDGER_COUNTS:
        if not isinstance(ledger.get(key), int) or isinstance(ledger.get(key), bool):
            return f"conservation.{key}: expected a whole number"
    if not isinstance(ledger.get("ok"), bool):
        return "conservation.ok: expected true or false"
    sim_time = summary.get("sim_time_s")
    if not isinstance(sim_time, (int, float)) or isinstance(sim_time, bool):
        return "sim_time_s: expected a number"
    for section in ("ports", "vcs", "flows"):
        rows = summary.get(section, [])
        if not isinstance(rows, list):
            return f"{section}: expected a list"
        for n, row in enumerate(rows):
            if not isinstance(row, dict) or not isinstance(row.get("name"), str):
                return f"{section}[{n}]: expected an object with a name"
    return ""


def read_series(path: Path):
    """series.parquet as a DataFrame, checked to be atmsim's (SERIES_COLUMNS, numeric
    time_s and value); RunDirError (one line naming the file) otherwise."""
    try:
        series = pd.read_parquet(path)
    except (OSError, ValueError) as error:  # pyarrow's errors derive from these
        detail = " ".join(str(error).split())
        raise RunDirError(f"{path}: not a series file ({detail})") from None
    missing = [column for column in SERIES_COLUMNS if column not in series.columns]
    if missing:
        found = ", ".join(map(str, series.columns[:10])) or "none"
        raise RunDirError(
            f"{path}: not an atmsim series (columns {found}; expected {', '.join(SERIES_COLUMNS)})"
        )
    for column in ("time_s", "value"):
        if not pd.api.types.is_numeric_dtype(series[column]):
            raise RunDirError(
                f"{path}: not an atmsim series ({column} holds {series[column].dtype}, "
                "expected numbers)"
            )
    return series


def bad_summary(path: Path, error: Exception) -> RunDirError:
    """The RunDirError for a summary that passed ``summary_problem`` but lacks a field a
    table or the fairness needs (``error``: the KeyError or TypeError it raised)."""
    what = f"no {error}" if isinstance(error, KeyError) else " ".join(str(error).split())
    return RunDirError(f"{path}: not an atmsim summary ({what})")
