"""A run directory: the files of one run, the same whatever started it.

``atmsim run``, ``atmsim.run(out=...)`` (and ``Result.save``), a sweep's runs and
``atmsim reproduce`` all write a run directory through this module, so that
``atmsim report``, ``plot`` and ``fairness`` read one kind of directory:

- ``.atmsim``: the marker of an atmsim run directory (``atmsim.outputs``);
- ``scenario.toml``: the resolved scenario (``resolved_toml``), every default
  written out; a sweep's and ``atmsim reproduce``'s start with comment lines
  saying where the run comes from (the overrides, the experiment);
- ``series.parquet``: the probes' series, when the run has probes, written by
  the core's Parquet writer (``atmsim_core::stats::parquet``) alone;
- ``capture/<name>.pcap`` and ``capture/<name>.drops.pcap``: the packet captures
  (``probes.capture``), written by the core;
- ``summary.json``: the core's summary with what Python adds
  (``complete_summary``): each port's ``layer``, ``vc_tcp``, ``wall_s``,
  ``scenario``, ``atmsim_version`` and ``fairness``;
- ``vcs.parquet``, ``flows.parquet``, ``vc_tcp.parquet``, ``fairness.parquet``: a
  run with more than ``atmsim.columnar.SUMMARY_MAX_ROWS`` VCs and flows keeps its
  per-entity rows there rather than in summary.json (``atmsim.columnar``);
- ``INCOMPLETE``: present while the files are written.

Writing is atomic in the way ``atmsim.outputs`` does it: the marker first, then
INCOMPLETE, then each file through a temporary file renamed into place,
summary.json last, and INCOMPLETE removed at the end. A directory that still
holds INCOMPLETE (a run killed, failed or out of disk space part way) is refused
by the commands that read run directories.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Optional

from ._lazy import numpy as np
from ._lazy import pandas as pd
from .binding import import_core, package_version
from .columnar import TABLE_FILES, parquet_bytes, split_summary
from .failures import internal_error_message
from .fairness import fairness
from .jsontext import json_text
from .outputs import PathLike, naming, prepare_out_dir, write_file
from .results import INCOMPLETE, INCOMPLETE_TEXT, vc_tcp_totals

SCENARIO_FILE = "scenario.toml"
SUMMARY_FILE = "summary.json"
SERIES_FILE = "series.parquet"
CAPTURE_DIR = "capture"

EARLIER_RUN_FILES = (SUMMARY_FILE, SERIES_FILE, *TABLE_FILES.values())
"""Removed from a run directory when a new run starts in it: they belong to the earlier
run, and would sit next to the new scenario.toml if the new run failed, had no
probes or was not large (``atmsim.columnar``). (Figures of ``atmsim plot`` stay until
it is run again.)"""


def scenario_text(scenario_toml: str, header: Sequence[str] = ()) -> str:
    """scenario.toml's text: ``header`` lines as TOML comments, then the resolved
    scenario (comments only: the file reads as the same scenario either way)."""
    if not header:
        return scenario_toml
    lines = [line if line.startswith("#") else f"# {line}" for line in header]
    return "\n".join(lines) + "\n\n" + scenario_toml


def complete_summary(
    summary: dict, core_input: dict, scenario_name: str, started: float
) -> Optional[str]:
    """Add to the core's ``summary`` (in place) what Python computes: each port's
    ``layer``, ``vc_tcp`` (VCs carrying several TCP flows), ``wall_s`` (wall seconds
    since ``started``, a ``time.perf_counter()`` value), ``scenario``,
    ``atmsim_version`` and ``fairness`` (``atmsim.fairness.fairness``).

    Returns None, or a one-line note when the fairness could not be computed (the
    run's results stand without it)."""
    layers = {link["name"]: link.get("layer", "atm") for link in core_input["links"]}
    for port in summary.get("ports", []):
        port.setdefault("layer", layers.get(port["name"], "atm"))
    vc_tcp = vc_tcp_totals(summary, core_input)
    if vc_tcp:
        summary["vc_tcp"] = vc_tcp
    summary["wall_s"] = time.perf_counter() - started
    summary["scenario"] = scenario_name
    summary["atmsim_version"] = package_version()
    try:
        summary["fairness"] = fairness(core_input, summary)
    except Exception as error:  # a bug of the fairness module: say it, keep the run
        return f"note: fairness not computed ({internal_error_message(error)})"
    return None


def series_parquet(series: Optional[dict]) -> bytes:
    """The core's columnar series (``sim.finish()``; docs/core-interface.md, "Series")
    as the bytes of series.parquet, by the core's writer: read back by
    ``pandas.read_parquet`` as ``atmsim.api.series_frame`` builds it, without loading
    pandas, numpy or pyarrow."""
    core = import_core()
    series = series or {}
    return bytes(
        core.series_parquet(
            series.get("time_s", b""),
            series.get("entity", b""),
            [str(n) for n in series.get("entity_names", [])],
            series.get("metric", b""),
            [str(n) for n in series.get("metric_names", [])],
            series.get("value", b""),
            f"atmsim {core.version()}",
        )
    )


def series_columns(frame: pd.DataFrame) -> dict:
    """A tidy series DataFrame (time_s, entity, metric, value) back in the core's
    columns, for ``series_parquet``: names in order of first appearance."""
    entity_codes, entity_names = pd.factorize(frame["entity"].astype(str), sort=False)
    metric_codes, metric_names = pd.factorize(frame["metric"].astype(str), sort=False)
    if len(metric_names) > 256:
        raise ValueError(f"a series of {len(metric_names)} metrics; at most 256")
    return {
        "time_s": np.ascontiguousarray(frame["time_s"], dtype="<f8").tobytes(),
        "entity": np.asarray(entity_codes, dtype="<u4").tobytes(),
        "entity_names": [str(n) for n in entity_names],
        "metric": np.asarray(metric_codes, dtype="u1").tobytes(),
        "metric_names": [str(n) for n in metric_names],
        "value": np.ascontiguousarray(frame["value"], dtype="<f8").tobytes(),
    }


def start_run_dir(directory: PathLike, scenario_toml: str, header: Sequence[str] = ()) -> Path:
    """Make ``directory`` a run directory about to receive a run (before it starts):
    checked and marked (``atmsim.outputs.prepare_out_dir``), INCOMPLETE written, an
    earlier run's summary.json and series.parquet removed, scenario.toml written. A run
    that fails leaves it so: scenario.toml to rerun it, INCOMPLETE so that no command
    takes it for a finished run."""
    directory = prepare_out_dir(directory, "run")
    write_file(directory / INCOMPLETE, INCOMPLETE_TEXT)
    for stale in EARLIER_RUN_FILES:
        with naming(directory / stale):
            (directory / stale).unlink(missing_ok=True)
    _remove_captures(directory)
    write_file(directory / SCENARIO_FILE, scenario_text(scenario_toml, header))
    return directory


def _remove_captures(directory: Path, keep: Sequence[str] = ()) -> None:
    """Remove an earlier run's capture files (all but ``keep``), and the folder when
    nothing is left in it."""
    folder = directory / CAPTURE_DIR
    if not folder.is_dir():
        return
    for stale in folder.glob("*.pcap"):
        if stale.name not in keep:
            with naming(stale):
                stale.unlink(missing_ok=True)
    with naming(folder):
        if not any(folder.iterdir()):
            folder.rmdir()


def write_run_dir(
    directory: PathLike,
    scenario_toml: str,
    summary: dict,
    series: Optional[bytes],
    header: Sequence[str] = (),
    captures: Optional[Mapping[str, bytes]] = None,
    scenario_written: bool = False,
) -> Path:
    """Write a run's files into ``directory`` (module docstring): a new or empty
    directory, or a run directory (OutDirError otherwise). ``series``: series.parquet's
    bytes (``series_parquet``), None for a run without probes (an earlier
    series.parquet is then removed). A large run's per-VC and per-flow rows go to
    Parquet files beside summary.json (``atmsim.columnar``). ``captures``: the capture
    files, name to bytes (an earlier run's others are removed). ``scenario_written``:
    ``start_run_dir`` wrote this scenario.toml (the same text) before the run; it is not
    written again.

    INCOMPLETE is written first unless ``start_run_dir`` did, summary.json last, and
    INCOMPLETE removed at the end: a write stopped half way leaves a directory the
    readers refuse, never one that looks whole."""
    directory = prepare_out_dir(directory, "run")
    incomplete = directory / INCOMPLETE
    if not incomplete.exists():
        write_file(incomplete, INCOMPLETE_TEXT)
    if not scenario_written:
        write_file(directory / SCENARIO_FILE, scenario_text(scenario_toml, header))
    if series is not None:
        write_file(directory / SERIES_FILE, series)
    else:
        with naming(directory / SERIES_FILE):
            (directory / SERIES_FILE).unlink(missing_ok=True)
    captures = captures or {}
    _remove_captures(directory, keep=list(captures))
    if captures:
        folder = directory / CAPTURE_DIR
        with naming(folder):
            folder.mkdir(exist_ok=True)
        for name, data in captures.items():
            write_file(folder / name, bytes(data))
    light, tables = split_summary(summary)
    for name, file in TABLE_FILES.items():
        if name in tables:
            write_file(directory / file, parquet_bytes(tables[name]))
        else:
            with naming(directory / file):
                (directory / file).unlink(missing_ok=True)
    write_file(directory / SUMMARY_FILE, summary_text(light))
    with naming(incomplete):
        incomplete.unlink()
    return directory


def summary_text(summary: dict) -> str:
    """summary.json's text: indented JSON (a long list one item per line), one final
    newline (``atmsim.jsontext``)."""
    return json_text(summary)
