"""``atmsim.run``: one call from a scenario to its results.

The core (``atmsim._core``, Rust) is driven in about 200 slices of simulated
time, so a progress bar can be shown and Ctrl-C stops the run cleanly: the
results up to the time reached are returned (and written) with
``completed = false``.
"""

from __future__ import annotations

import copy
import gc
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Callable, Optional

from ._lazy import numpy as np
from ._lazy import pandas as pd
from ._lazy import rich
from .binding import CoreUnavailable, import_core, package_version  # noqa: F401 (re-exported)
from .errors import ScenarioError
from .fairness import fairness
from .resources import resolve_scenario
from .results import PERSIST_KEYS
from .rundir import (
    complete_summary,
    series_columns,
    series_parquet,
    start_run_dir,
    write_run_dir,
)
from .scenario import (
    Scenario,
    apply_overrides,
    load_scenario,
    resolved_toml,
    scenario_dict,
    to_core,
    validate_scenario,
)

FIRST_SLICES = 1000
"""The first slice of simulated time is the run's duration over this."""

SLICE_WALL_S = (0.05, 0.2)
"""Slices of simulated time are doubled while one takes less wall time than
the first bound and halved when one takes more than the second: the progress
bar moves and Ctrl-C is heard within a fraction of a second, and long runs
cross few slice ends (a receiver that could take a segment early waits for
the slice its arrival falls in, so fewer ends mean fewer events)."""

EVENTS_PER_CALL = 1 << 22
"""Events the core runs before it returns to Python within a slice (tens of ms): the
time Ctrl-C may wait."""

STEP_HOOK: Optional[Callable[[], None]] = None
"""Called after each return of the core (the fuzzer counts them: it judges a hang by
simulated work, not by wall time)."""

PROGRESS_AFTER_S = 1.0
"""Show a progress bar only once a run has taken this long (wall seconds)."""

ABR_COLUMNS = (
    "acr_cps",
    "last_er_cps",
    "frms_sent",
    "brms_received",
    "rule6_cuts",
    "source_queue_cells",
)
"""The per-VC ABR summary of docs/core-interface.md ("ABR", Summary)."""

RATE_CONTROL_COLUMNS = (
    "er_bps",
    "window_written_bytes",
    "acks_rewritten",
    "acks_released",
    "acks_held",
    "acks_held_max",
    "ack_hold_mean_s",
)
"""A rate-controlled flow's summary (docs/core-interface.md, FlowRateSummary)."""

PERSIST_COLUMNS = PERSIST_KEYS
"""A TCP flow's persist-timer counters (docs/core-interface.md, "Flows", Summary): the
core writes them only when not 0; ``Result.flows`` gives them for every flow."""

GFR_COLUMNS = ("mcr_cps", "frames_tested", "frames_ineligible", "cells_tagged")
"""The per-VC GFR summary of docs/core-interface.md (GfrSummary)."""

VC_TCP_COLUMNS = (
    "vc",
    "flows",
    "goodput_mbps",
    "bytes_delivered",
    "bytes_retransmitted",
    "timeouts",
)
"""The per-VC totals of the TCP flows a VC carries (``atmsim.results.vc_tcp_totals``)."""

DELAY_KEYS = ("count", "mean_s", "min_s", "max_s", "p50_s", "p95_s", "p99_s", "std_s", "p2p_cdv_s")
"""A delay summary's keys (docs/core-interface.md, DelaySummary; docs/model.md, "Delay
statistics")."""

CTD_COLUMNS = tuple(f"ctd_{key}" for key in DELAY_KEYS)
"""A VC's cell transfer delay columns in ``Result.vcs`` (with ``probes.delay``)."""

FLOW_DELAY_COLUMNS = (
    *(f"delay_{key}" for key in DELAY_KEYS),
    "rtt_count",
    "rtt_mean_s",
    "rtt_min_s",
    "rtt_max_s",
)
"""A flow's segment delay and RTT sample columns in ``Result.flows`` (with
``probes.delay``)."""

PROBE_LISTS = (
    "queue",
    "utilization",
    "vc_rate",
    "vc_losses",
    "vc_queue",
    "flows",
    "abr_vcs",
    "abr_ports",
)
"""The lists of the core JSON's ``probes``: a run with any of them writes series.parquet."""


def _with_columns(frame: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    """``frame`` with each of ``columns`` it lacks added as NaN (a summary leaves a
    delay out where nothing was measured)."""
    for column in columns:
        if column not in frame:
            frame[column] = float("nan")
    return frame


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a run; ``.result`` holds what was simulated until then."""

    def __init__(self, result: Result) -> None:
        super().__init__()
        self.result = result


def series_frame(series: dict | None) -> pd.DataFrame:
    """The core's columnar series as a tidy DataFrame: time_s, entity, metric, value.

    ``entity`` and ``metric`` are names (strings). Empty (with those columns)
    when the run had no probes.
    """
    if not series or len(series.get("time_s", b"")) == 0:
        empty_numbers = np.array([], dtype="float64")
        empty_names = np.array([], dtype=object)
        return pd.DataFrame(
            {
                "time_s": empty_numbers,
                "entity": empty_names,
                "metric": empty_names,
                "value": empty_numbers,
            }
        )
    entity_names = np.asarray(series["entity_names"], dtype=object)
    metric_names = np.asarray(series["metric_names"], dtype=object)
    return pd.DataFrame(
        {
            "time_s": np.frombuffer(series["time_s"], dtype="<f8"),
            "entity": entity_names[np.frombuffer(series["entity"], dtype="<u4")],
            "metric": metric_names[np.frombuffer(series["metric"], dtype="u1")],
            "value": np.frombuffer(series["value"], dtype="<f8"),
        }
    )


def write_series_parquet(series: dict | None, path: Path) -> None:
    """Write the core's columnar series to ``path`` as Parquet, by the core's own
    writer (``atmsim.rundir.series_parquet``): the columns of ``series_frame``."""
    Path(path).write_bytes(series_parquet(series))


class Result:
    """The results of one run.

    - ``summary``: dict, the core summary (docs/core-interface.md) plus what
      ``atmsim.rundir.complete_summary`` adds: each port's ``layer``, ``vc_tcp``,
      ``wall_s`` (wall seconds of the whole run), ``scenario`` (its name),
      ``atmsim_version`` and ``fairness``: what summary.json holds;
    - ``ports``, ``vcs``: one row per port / VC (``drops`` flattened to
      ``drops_tail``, ``drops_epd``, ...); ports have a ``layer`` ("atm" or
      "ip"; IP ports count packets);
    - ``flows``: one row per TCP flow (goodput, bytes, retransmissions, ...);
    - ``abr``: one row per ABR VC (ACR, last ER, RM cells, rule-6 cuts, source queue);
    - ``series``: tidy time series (time_s, entity, metric, value);
    - ``scenario_toml``: the resolved scenario;
    - ``loop_wall_s``: wall seconds spent inside the core's advance loop;
    - ``loop_cpu_s``: CPU seconds of the calling thread in that loop (the core
      runs on it), what ``atmsim bench`` reports per CPU-second;
    - ``setup_wall_s``, ``setup_cpu_s``: wall and thread CPU seconds from the call of
      ``atmsim.run`` to the loop's start (validation, the core JSON, the core's
      building), what ``atmsim bench --whole-scale`` reports as set-up;
    - ``core_input``: the core JSON the run was made from (docs/core-interface.md),
      for what is computed from the scenario and the summary together
      (``fairness``, ``atmsim.determinism``);
    - ``scenario_header``: comment lines at the top of the run directory's
      scenario.toml (``atmsim.rundir.scenario_text``);
    - ``notes``: one-line notes about the run (the fairness not computed);
    - ``captures``: the packet captures' pcap files, file name to bytes
      (``probes.capture``; written under ``capture/`` of the run directory).
    """

    def __init__(
        self,
        summary: dict,
        series: pd.DataFrame | dict | None,
        scenario_toml: str,
        has_probes: bool,
        loop_wall_s: float = 0.0,
        core_input: dict | None = None,
        loop_cpu_s: float = 0.0,
        scenario_header: tuple[str, ...] = (),
        notes: tuple[str, ...] = (),
        captures: dict[str, bytes] | None = None,
        setup_wall_s: float = 0.0,
        setup_cpu_s: float = 0.0,
    ) -> None:
        self.summary = summary
        self.setup_wall_s = setup_wall_s
        self.setup_cpu_s = setup_cpu_s
        self.captures = dict(captures or {})
        # The series stays in the core's columns until it is asked for, so that a
        # run that only writes its files does not load pandas (docs/performance.md,
        # "CLI start-up"); the columns are kept after that too, for series.parquet.
        if series is None or isinstance(series, dict):
            self._series_columns, self._series = series, None
        else:
            self._series_columns, self._series = None, series
        self.scenario_header = tuple(scenario_header)
        self.notes = tuple(notes)
        self.scenario_toml = scenario_toml
        self.has_probes = has_probes
        self.loop_wall_s = loop_wall_s
        self.core_input = core_input
        self.loop_cpu_s = loop_cpu_s

    @property
    def series(self) -> pd.DataFrame:
        """The probes' tidy time series: time_s, entity, metric, value (``series_frame``)."""
        if self._series is None:
            self._series = series_frame(self._series_columns)
        return self._series

    @series.setter
    def series(self, frame: pd.DataFrame) -> None:
        self._series, self._series_columns = frame, None

    def series_parquet(self) -> bytes | None:
        """series.parquet's bytes, by the core's writer (``atmsim.rundir.series_parquet``);
        None for a run without probes."""
        if not self.has_probes:
            return None
        if self._series_columns is None and self._series is not None:
            self._series_columns = series_columns(self._series)
        return series_parquet(self._series_columns)

    def fairness(self, gfr_rule: str = "proportional") -> dict:
        """Each VC's (or flow's) achieved rate against its max-min fair rate, and the
        Jain index of the normalised rates (``atmsim.fairness.fairness``; with the
        default ``gfr_rule``, what ``summary["fairness"]`` holds)."""
        if self.core_input is None:
            raise ValueError("this Result has no core input (it was not made by atmsim.run)")
        return fairness(self.core_input, self.summary, gfr_rule)

    @property
    def ports(self) -> pd.DataFrame:
        """One row per output port (= link): cells in/out/dropped, CLR, queue, utilization."""
        return pd.json_normalize(self.summary.get("ports", []), sep="_")

    @property
    def vcs(self) -> pd.DataFrame:
        """One row per VC: cells and AAL5 frames sent and delivered, goodput in cells/s,
        and the cell transfer delay columns ``CTD_COLUMNS`` (``ctd_mean_s``,
        ``ctd_p99_s``, ``ctd_p2p_cdv_s``, ...; NaN without ``probes.delay`` or without
        a delivered cell)."""
        vcs = self.summary.get("vcs", [])
        return _with_columns(pd.json_normalize(vcs, sep="_"), CTD_COLUMNS if vcs else ())

    @property
    def flows(self) -> pd.DataFrame:
        """One row per TCP flow: goodput in Mbps, bytes sent and delivered, timeouts, cwnd,
        the persist timer's ``persist_expiries``, ``window_probes`` and
        ``zero_window_acks`` (0 where the summary leaves them out), and the delay
        columns ``FLOW_DELAY_COLUMNS`` (``delay_mean_s``, ``delay_p99_s``,
        ``rtt_mean_s``, ...; NaN without ``probes.delay`` or without a sample)."""
        flows = self.summary.get("flows", [])
        frame = pd.json_normalize(flows, sep="_")
        if flows:
            for column in PERSIST_COLUMNS:
                frame[column] = frame[column].fillna(0).astype("int64") if column in frame else 0
        return _with_columns(frame, FLOW_DELAY_COLUMNS if flows else ())

    @property
    def abr(self) -> pd.DataFrame:
        """One row per ABR VC: ``name``, then its ``abr`` summary (``acr_cps``,
        ``last_er_cps``, ``frms_sent``, ``brms_received``, ``rule6_cuts``,
        ``source_queue_cells``). Empty when the run has no ABR VC."""
        rows = [
            {"name": vc["name"], **vc["abr"]}
            for vc in self.summary.get("vcs", [])
            if isinstance(vc.get("abr"), dict)
        ]
        return pd.DataFrame(rows, columns=["name", *ABR_COLUMNS] if not rows else None)

    @property
    def vc_tcp(self) -> pd.DataFrame:
        """One row per VC carrying several TCP flows (``summary["vc_tcp"]``): ``vc``,
        ``flows``, ``goodput_mbps``, ``bytes_delivered``, ``bytes_retransmitted``,
        ``timeouts``. Empty when every VC carries at most one flow."""
        return pd.DataFrame(self.summary.get("vc_tcp", []), columns=VC_TCP_COLUMNS)

    @property
    def gfr(self) -> pd.DataFrame:
        """One row per GFR VC: ``name``, then its ``gfr`` summary (``mcr_cps``,
        ``frames_tested``, ``frames_ineligible``, ``cells_tagged``). Empty when the run
        has no GFR VC."""
        rows = [
            {"name": vc["name"], **vc["gfr"]}
            for vc in self.summary.get("vcs", [])
            if isinstance(vc.get("gfr"), dict)
        ]
        return pd.DataFrame(rows, columns=["name", *GFR_COLUMNS])

    @property
    def rate_control(self) -> pd.DataFrame:
        """One row per TCP flow whose ACKs a router controls (Explicit rate control of TCP
        (Satyavolu et al., 1998)): ``name``, then its ``rate_control`` summary (``er_bps``,
        ``window_written_bytes``, ``acks_rewritten``, ``acks_released``, ``acks_held``,
        ``acks_held_max``, ``ack_hold_mean_s``). Empty when no router controls a flow."""
        rows = [
            {"name": flow["name"], **flow["rate_control"]}
            for flow in self.summary.get("flows", [])
            if isinstance(flow.get("rate_control"), dict)
        ]
        return pd.DataFrame(rows, columns=["name", *RATE_CONTROL_COLUMNS])

    @property
    def completed(self) -> bool:
        """False when the run was interrupted before its duration."""
        return bool(self.summary.get("completed", False))

    def save(self, directory: str | Path) -> Path:
        """Write the run directory (``atmsim.rundir.write_run_dir``): scenario.toml,
        series.parquet (with probes) and summary.json into ``directory``, a new or empty
        directory or a run directory (``atmsim.outputs.check_out_dir``; OutDirError
        otherwise); the same files as ``atmsim run`` writes.

        The directory is marked INCOMPLETE first and summary.json is written last, each
        file through a temporary file renamed into place, and the mark is removed at the
        end: a save stopped half way (a kill, a full disk) leaves a directory that
        ``atmsim report``, ``fairness`` and ``plot`` refuse, never one that looks whole.
        """
        return self._save(directory)

    def _save(self, directory: str | Path, scenario_written: bool = False) -> Path:
        """``save``; ``scenario_written``: ``atmsim.run`` wrote scenario.toml before the
        run (``atmsim.rundir.start_run_dir``), and it is not written twice."""
        return write_run_dir(
            directory,
            self.scenario_toml,
            self.summary,
            self.series_parquet(),
            self.scenario_header,
            self.captures,
            scenario_written=scenario_written,
        )

    def __repr__(self) -> str:
        state = "completed" if self.completed else "interrupted"
        return (
            f"<atmsim.Result {self.summary.get('scenario')!r}: {state}, "
            f"{self.summary.get('sim_time_s')} s simulated, "
            f"{self.summary.get('wall_s', 0):.3g} s wall>"
        )


def prepare(
    scenario: Scenario | dict | str | Path,
    seed: int | None = None,
    overrides: list[str] | tuple[str, ...] = (),
    fast_paths: bool | None = None,
) -> Scenario:
    """The validated scenario with overrides (and ``seed``, ``fast_paths``) applied.

    ``scenario``: a Scenario, a dict shaped like the TOML file, or a path.
    """
    overrides = list(overrides)
    if seed is not None:
        overrides.append(f"run.seed={seed}")
    if fast_paths is not None:
        overrides.append(f"run.fast_paths={'true' if fast_paths else 'false'}")
    if isinstance(scenario, (str, Path)):
        return load_scenario(resolve_scenario(scenario), overrides)
    if isinstance(scenario, Scenario):
        if not overrides:
            return scenario
        file, data = scenario.file, scenario_dict(scenario)
    else:
        file, data = None, copy.deepcopy(scenario)
    apply_overrides(data, overrides, file)
    return validate_scenario(data, file, overrides)


def _want_progress(progress: bool | None) -> bool:
    if progress is None:
        return sys.stderr.isatty()
    return progress


def run(
    scenario_or_path: Scenario | dict | str | Path,
    *,
    seed: int | None = None,
    overrides: list[str] | tuple[str, ...] = (),
    out: str | Path | None = None,
    progress: bool | None = None,
    fast_paths: bool | None = None,
    scenario_header: Sequence[str] = (),
) -> Result:
    """Run a scenario (a ``Scenario``, a TOML-shaped dict or a path) and return its Result.

    - ``seed`` replaces ``run.seed``; ``overrides`` are ``key=value`` strings
      as for ``atmsim run --set``.
    - ``out``: a directory to write scenario.toml (before the run starts),
      summary.json and series.parquet into: a new or empty directory, or a run
      directory (one atmsim marked with its ``.atmsim`` file; the earlier run's
      files are replaced, ``atmsim.rundir.EARLIER_RUN_FILES`` removed first); anything else
      raises OutDirError (``atmsim.outputs``). The directory holds an INCOMPLETE
      file until every file of the run is written (summary.json last).
    - ``progress``: True / False, or None to show a bar when stderr is a
      terminal. The bar appears only after the run has taken 1 s.
    - ``fast_paths``: replaces ``run.fast_paths``; False sends every cell and
      packet through the plain event path (same results, more events).
    - ``scenario_header``: lines written as comments at the top of ``out``'s
      scenario.toml (where the run comes from: ``atmsim reproduce`` names its
      experiment there).

    ``out`` is written by ``atmsim.rundir`` (``start_run_dir`` before the run,
    ``Result.save`` after it), as every entry point writes a run directory.
    ``Result.notes`` holds a one-line note when the fairness (``summary["fairness"]``)
    could not be computed.

    Raises ScenarioError for a bad scenario. On Ctrl-C the results so far are
    finished and written, and RunInterrupted (a KeyboardInterrupt) is raised
    with them in ``.result``. An exception from the core leaves ``out`` with
    scenario.toml and the INCOMPLETE mark, to rerun the case.
    """
    # The run's Python work makes an object or more per VC (the core JSON, the summary,
    # the fairness rows), none in a cycle: the cyclic collector would only walk them
    # again and again (0.5 of 3.8 CPU-s at 100,000 VCs). It runs again at the end.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _run(scenario_or_path, seed, overrides, out, progress, fast_paths, scenario_header)
    finally:
        if collecting:
            gc.enable()


def _run(
    scenario_or_path: Scenario | dict | str | Path,
    seed: int | None,
    overrides: list[str] | tuple[str, ...],
    out: str | Path | None,
    progress: bool | None,
    fast_paths: bool | None,
    scenario_header: Sequence[str],
) -> Result:
    """``run`` with the cyclic garbage collector off."""
    started = time.perf_counter()
    started_cpu = time.thread_time()
    scenario = prepare(scenario_or_path, seed, overrides, fast_paths)
    core_input = to_core(scenario)
    scenario_toml = resolved_toml(scenario)
    core = import_core()
    if out is not None:
        # Marked as atmsim's and as incomplete before anything else is written: until
        # Result.save removes the mark, no command takes the directory for a finished run.
        out = start_run_dir(out, scenario_toml, scenario_header)

    try:
        # Compact and without the cycle check (the core JSON is a tree of dicts and
        # lists): 0.41 -> 0.36 CPU-s and 24 -> 22 MB of text at 100,000 VCs.
        text = json.dumps(core_input, separators=(",", ":"), check_circular=False)
        sim = core.Simulation(text)
        del text
    except ValueError as error:
        # The Python validation should have caught it first: say so, in one line.
        raise ScenarioError(
            scenario.file, None, f"the simulation core rejects this scenario: {error}"
        ) from None
    name = scenario.name
    duration_ps = core_input["duration_ps"]
    interrupted = False
    bar = None
    loop_started = time.perf_counter()
    loop_cpu_started = time.thread_time()
    try:
        slice_ps = max(1, duration_ps // FIRST_SLICES)
        t = 0
        while t < duration_ps:
            t = min(duration_ps, t + slice_ps)
            slice_started = time.perf_counter()
            # The core returns every EVENTS_PER_CALL events, so that Ctrl-C is
            # answered however much work one slice of simulated time holds.
            while not sim.advance(t, EVENTS_PER_CALL):
                if STEP_HOOK is not None:
                    STEP_HOOK()
            if STEP_HOOK is not None:
                STEP_HOOK()
            took = time.perf_counter() - slice_started
            if took < SLICE_WALL_S[0]:
                slice_ps *= 2
            elif took > SLICE_WALL_S[1]:
                slice_ps = max(1, slice_ps // 2)
            if bar is None and _want_progress(progress):
                if time.perf_counter() - started > PROGRESS_AFTER_S:
                    bar = _ProgressBar(name, duration_ps, sim.now_ps)
            if bar is not None:
                bar.update(sim.now_ps)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        loop_wall_s = time.perf_counter() - loop_started
        loop_cpu_s = time.thread_time() - loop_cpu_started
        if bar is not None:
            bar.stop()

    summary_json, series = sim.finish()
    captures = series.pop("captures", {})
    summary = json.loads(summary_json)
    if interrupted:
        summary["completed"] = False
    probes = core_input["probes"]
    has_probes = any(probes.get(key) for key in PROBE_LISTS)
    note = complete_summary(summary, core_input, name, started)
    result = Result(
        summary,
        series,
        scenario_toml,
        has_probes,
        loop_wall_s,
        core_input,
        loop_cpu_s,
        scenario_header=tuple(scenario_header),
        notes=(note,) if note else (),
        captures=captures,
        setup_wall_s=loop_started - started,
        setup_cpu_s=loop_cpu_started - started_cpu,
    )
    if out is not None:
        result._save(out, scenario_written=True)
    if interrupted:
        raise RunInterrupted(result)
    return result


class _ProgressBar:
    """A rich progress bar on stderr, in simulated seconds."""

    def __init__(self, name: str, duration_ps: int, now_ps: int) -> None:
        Console = rich.console.Console
        BarColumn = rich.progress.BarColumn
        Progress = rich.progress.Progress
        TaskProgressColumn = rich.progress.TaskProgressColumn
        TextColumn = rich.progress.TextColumn
        TimeRemainingColumn = rich.progress.TimeRemainingColumn

        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            TextColumn("{task.completed:,.1f} of {task.total:,.1f} s simulated"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self.task = self.progress.add_task(name, total=duration_ps / 1e12, completed=now_ps / 1e12)
        self.progress.start()

    def update(self, now_ps: int) -> None:
        self.progress.update(self.task, completed=now_ps / 1e12)

    def stop(self) -> None:
        self.progress.stop()
