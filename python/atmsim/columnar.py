"""Per-VC and per-flow results in Parquet files, for runs with many of them.

A run with more than ``SUMMARY_MAX_ROWS`` VCs and flows together (a large run)
writes its per-entity lists into columnar files of its run directory instead of
summary.json:

- ``vcs.parquet``: ``summary["vcs"]``, one row per VC;
- ``flows.parquet``: ``summary["flows"]``, one row per TCP flow;
- ``vc_tcp.parquet``: ``summary["vc_tcp"]``, one row per VC carrying several flows;
- ``fairness.parquet``: ``summary["fairness"]["entities"]``, one row per VC or flow.

A nested object of a row (a VC's ``abr``, ``gfr``, ``ctd``; a flow's ``delay``,
``rtt``, ``rate_control``) becomes columns named ``<object>_<key>``, as
``pandas.json_normalize(..., sep="_")`` names them (what ``Result.vcs`` shows):
``pandas.read_parquet("vcs.parquet")`` gives the table a pandas user expects.

summary.json then keeps what a person reads: the ports, the conservation ledger,
the fairness report without its rows (the Jain index, the rule), ``vc_totals``
and ``flow_totals`` (sums over the rows), and ``tables``: each file with its
number of rows. Runs of up to ``SUMMARY_MAX_ROWS`` VCs and flows write exactly
the summary.json they always did, and no Parquet file of these.

``read_tables`` puts the rows back into a summary read from a run directory
(``atmsim.results.read_summary``), so that every reader of run directories sees
one shape of summary whichever the run's size. The in-memory ``Result.summary``
of a run always holds the lists: the split is made when the files are written.
The files are written by the core's own Parquet writer (no pyarrow); they are
read back with pyarrow.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ._lazy import pyarrow as pa
from .binding import import_core

SUMMARY_MAX_ROWS = 1000
"""Runs with more VCs and flows than this (together) write them to Parquet files."""

TABLE_FILES = {
    "vcs": "vcs.parquet",
    "flows": "flows.parquet",
    "vc_tcp": "vc_tcp.parquet",
    "fairness": "fairness.parquet",
}
"""Each per-entity list of a large run's summary and its file in the run directory
(``fairness``: the fairness report's ``entities``)."""

TOTALS = {
    "vcs": (
        "vc_totals",
        (
            "cells_sent",
            "cells_delivered",
            "frames_sent",
            "frames_delivered",
            "frames_corrupted",
            "frames_merged",
            "cells_discarded_aal5",
            "frame_goodput_cps",
        ),
    ),
    "flows": (
        "flow_totals",
        (
            "goodput_mbps",
            "bytes_delivered",
            "bytes_sent",
            "bytes_retransmitted",
            "segments_sent",
            "timeouts",
            "fast_retransmits",
        ),
    ),
}
"""The sums summary.json keeps in place of a moved list: key, and the summed fields."""

NESTED_KEY = b"atmsim.nested"
"""Parquet key-value metadata: the nested objects flattened into columns (JSON: object
name -> its keys), to put the rows back as the summary had them."""

OPTIONAL_KEY = b"atmsim.optional"
"""Parquet key-value metadata: the keys some rows lacked (JSON list); a null there is
an absent key again when the rows are put back."""


def entity_count(summary: dict) -> int:
    """The VCs and flows of a summary."""
    return len(summary.get("vcs") or ()) + len(summary.get("flows") or ())


def is_large(summary: dict) -> bool:
    """True when ``summary``'s per-entity lists go to Parquet files (module docstring)."""
    return entity_count(summary) > SUMMARY_MAX_ROWS


def split_summary(summary: dict) -> tuple[dict, dict[str, list[dict]]]:
    """summary.json's content for ``summary`` and the rows of each Parquet file
    (``TABLE_FILES`` name -> rows); ``summary`` unchanged, and returned as it is with
    no rows when the run is not large."""
    if not is_large(summary):
        return summary, {}
    moved: dict[str, list[dict]] = {}
    light: dict[str, Any] = {}
    for key, value in summary.items():
        if key in ("vcs", "flows", "vc_tcp") and isinstance(value, list) and value:
            # "tables" takes the place of the first list moved, its totals follow it
            light.setdefault("tables", {})
            moved[key] = value
            if key in TOTALS:
                name, fields = TOTALS[key]
                light[name] = _totals(value, fields)
            continue
        if key == "fairness" and isinstance(value, dict) and value.get("entities"):
            moved["fairness"] = value["entities"]
            value = {k: v for k, v in value.items() if k != "entities"}
        light[key] = value
    light["tables"].update(
        {name: {"file": TABLE_FILES[name], "rows": len(rows)} for name, rows in moved.items()}
    )
    return light, moved


def _totals(rows: list[dict], fields: Iterable[str]) -> dict[str, Any]:
    """The sum of each of ``fields`` over ``rows`` (those a row lacks count 0)."""
    return {field: sum(row.get(field) or 0 for row in rows) for field in fields}


def parquet_bytes(rows: list[dict]) -> bytes:
    """The rows as the bytes of a Parquet file: one column per key, nested objects
    flattened to ``<object>_<key>`` columns (module docstring), nulls where a row lacks
    a key; the nesting and the keys some rows lack are kept in the file's metadata.

    Written by the core's Parquet writer (``atmsim_core::stats::parquet``), as the
    series is: a run does not load pyarrow, numpy and pandas for it (0.4 CPU-s and
    110 MiB at 100,000 VCs). ValueError for a column mixing strings and numbers."""
    core = import_core()
    columns, nested, optional = _columns(rows)
    typed = [(name, _kind(name, values), values) for name, values in columns.items()]
    metadata = [
        (NESTED_KEY.decode(), json.dumps(nested)),
        (OPTIONAL_KEY.decode(), json.dumps(optional)),
    ]
    return bytes(core.table_parquet(typed, metadata, f"atmsim {core.version()}"))


def _kind(name: str, values: list) -> str:
    """A column's kind for the core's writer: "bool", "int" (whole numbers only),
    "float" (any other numbers, and a column of nulls alone) or "str"."""
    types = set(map(type, values))
    types.discard(type(None))
    if not types or types <= {int, float}:
        return "int" if types == {int} else "float"
    if types == {bool}:
        return "bool"
    if types == {str}:
        return "str"
    found = ", ".join(sorted(t.__name__ for t in types))
    raise ValueError(f"column {name}: values of several kinds ({found})")


def _columns(rows: list[dict]) -> tuple[dict[str, list], dict[str, list[str]], list[str]]:
    """The rows' columns (in the order keys first appear), their nested objects (name ->
    keys) and the top-level keys some rows lack. The work per row is done by C loops
    (``map``, list building, ``in``), not by Python per cell: a 100,000-VC run's rows
    take about 0.2 s."""
    shapes = dict.fromkeys(map(tuple, rows))  # each distinct key order, first seen first
    keys: dict[str, None] = {}
    for shape in shapes:
        keys.update(dict.fromkeys(shape))
    columns: dict[str, list] = {}
    nested: dict[str, list[str]] = {}
    optional: list[str] = []
    for key in keys:
        if len(shapes) > 1 and any(key not in shape for shape in shapes):
            optional.append(key)
        values = [row.get(key) for row in rows]
        if dict not in set(map(type, values)):
            columns[key] = values
            continue
        objects = [v for v in values if isinstance(v, dict)]
        inner = dict.fromkeys(k for shape in dict.fromkeys(map(tuple, objects)) for k in shape)
        nested[key] = list(inner)
        for sub in inner:
            columns[f"{key}_{sub}"] = [v.get(sub) if isinstance(v, dict) else None for v in values]
    return columns, nested, optional


def rows_of(path: Path) -> list[dict]:
    """The rows of a Parquet file ``parquet_bytes`` wrote, as the summary had them:
    nested objects rebuilt (absent where all their columns are null), the keys some
    rows lacked left out where null."""
    table = pa.parquet.read_table(path)
    meta = table.schema.metadata or {}
    nested: dict[str, list[str]] = json.loads(meta.get(NESTED_KEY, b"{}"))
    optional = set(json.loads(meta.get(OPTIONAL_KEY, b"[]")))
    flat = table.to_pydict()
    grouped = {f"{name}_{sub}" for name, subs in nested.items() for sub in subs}
    n = table.num_rows
    order: list[str] = []
    for column in table.column_names:
        if column not in grouped:
            order.append(column)
        else:
            name = next(g for g, subs in nested.items() if column in {f"{g}_{s}" for s in subs})
            if name not in order:
                order.append(name)
    rows: list[dict] = [{} for _ in range(n)]
    for name in order:
        if name in nested:
            subs = nested[name]
            values = [flat[f"{name}_{sub}"] for sub in subs]
            for i, row in enumerate(rows):
                got = {sub: column[i] for sub, column in zip(subs, values)}
                if any(v is not None for v in got.values()):
                    row[name] = got
            continue
        column = flat[name]
        if name in optional:
            for row, value in zip(rows, column):
                if value is not None:
                    row[name] = value
        else:
            for row, value in zip(rows, column):
                row[name] = value
    return rows


def read_tables(summary: dict, directory: Path) -> dict:
    """``summary`` (read from ``directory``'s summary.json) with the rows of its Parquet
    files put back (``vcs``, ``flows``, ``vc_tcp``, ``fairness.entities``) in place of
    ``tables`` and the totals: the summary as the run had it in memory. A summary
    without ``tables`` is returned as it is."""
    tables = summary.get("tables")
    if not isinstance(tables, dict):
        return summary
    rows = {name: rows_of(Path(directory) / TABLE_FILES[name]) for name in tables}
    totals = {name for name, _ in TOTALS.values()}
    full: dict[str, Any] = {}
    for key, value in summary.items():
        if key in totals:
            continue
        if key == "tables":
            for name in ("vcs", "flows", "vc_tcp"):
                if name in rows:
                    full[name] = rows[name]
            continue
        if key == "fairness" and isinstance(value, dict) and "fairness" in rows:
            value = {**value, "entities": rows["fairness"]}
            value = {k: value[k] for k in _fairness_order(value)}
        full[key] = value
    return full


def _fairness_order(report: dict) -> list[str]:
    """A fairness report's keys in the order ``atmsim.fairness.fairness`` writes them."""
    first = ["rule", "gfr_rule", "entities", "jain_normalised"]
    return [k for k in first if k in report] + [k for k in report if k not in first]


def table_file(summary: dict, name: str) -> str:
    """Where the rows of ``name`` of a run's summary are read in full: its Parquet file
    for a large run, summary.json otherwise."""
    return TABLE_FILES[name] if is_large(summary) else "summary.json"
