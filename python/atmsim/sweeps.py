"""``atmsim sweep``: a parameter study, resumable, on a process pool, Dask or Ray.

A sweep specification (TOML, docs/sweeps.md)::

    [sweep]
    base = "ubr_epd"              # a scenario file (relative to the spec) or a shipped example
    seeds = 5                     # run seeds 1..5, or a list: [1, 7, 9]

    [set]                         # overrides of every run ("key" = value, as --set)
    "run.duration" = "1 s"

    [grid]                        # every combination of these
    "links.sw1-sw2.buffer" = [500, 1000, 2000]

    [zip]                         # lists of one length, varied together (crossed with grid)
    "sources.f.rate" = ["100 Mbps", "120 Mbps"]
    "sources.f.start" = ["0 s", "1 ms"]

    [metrics]
    collect = ["goodput_mbps", "clr", "jain"]    # default: DEFAULT_METRICS
    links = ["sw1-sw2"]           # adds utilization:<link> and max_queue:<link>

Each run (a point of the grid and zip, with one run seed) is resolved in this process
to its scenario, and named by a hash of the resolved core input (which holds the
run seed): the run id. Its files go to ``OUT/runs/<run id>/`` (scenario.toml,
summary.json, and series.parquet with ``series = true``), written into a
temporary directory and renamed into place, so a run directory is either whole or
absent. ``OUT/results.parquet`` (one row per run: run id, each swept parameter,
the run seed, the metrics, the status) is rebuilt from the run directories, also
atomically, after every few runs and at the end. Running the same sweep again
runs only the runs whose directory holds no summary.json: a sweep stopped in any
way (Ctrl-C, SIGKILL, a power cut) loses at most the runs in progress.

Runs go to a local process pool (default, ``jobs`` processes), to Dask (a
scheduler's address, or a LocalCluster) or to Ray (an address, or a local
instance). The workers simulate and return the summary; this process writes every
file, so remote workers need atmsim installed but no shared filesystem.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import json
import math
import os
import re
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import Any, Callable, Optional, Union

from ._lazy import pandas as pd
from ._lazy import rich
from .api import run
from .columnar import read_tables
from .compare import jain
from .determinism import seed_dependence
from .errors import ScenarioError, show_value
from .failures import internal_error_message
from .fairness import fairness
from .outputs import (
    MARKER,
    check_out_dir,
    marker_text,
    naming,
    prepare_out_dir,
    replacing,
    write_file,
)
from .resources import shipped_example, shipped_sweep
from .results import ledger_lines
from .rundir import SCENARIO_FILE, scenario_text
from .rundir import write_run_dir as write_files
from .scenario import load_scenario, read_toml, resolved_toml, to_core, tomllib, validate_scenario
from .units import CELL_BITS
from .workers import imap_unordered

EXECUTORS = ("local", "dask", "ray")

DEFAULT_METRICS = ("goodput_mbps", "clr", "jain", "fair_jain", "ledger_ok")
"""Collected when the spec names none (``[metrics] links`` adds per-link metrics)."""

LINK_METRICS = ("utilization", "max_queue", "mean_queue", "clr", "dropped")
"""``<metric>:<link>``: of the link's output port (queues in cells, or packets on IP)."""

FLOW_METRICS = ("goodput_mbps", "timeouts", "retransmitted_bytes")
"""``<metric>:<flow>``: of one TCP flow."""

RUN_METRICS = (
    "goodput_mbps",
    "clr",
    "jain",
    "fair_jain",
    "ledger_ok",
    "timeouts",
    "completed",
)
"""Metrics of the whole run (module docs/sweeps.md)."""

SPEC_SECTIONS = ("sweep", "set", "grid", "zip", "metrics")
SWEEP_KEYS = ("base", "seeds", "name", "series")
METRIC_KEYS = ("collect", "links")
MAX_RUNS = 100_000

STATUS_OK = "ok"
STATUS_UNBALANCED = "unbalanced"
STATUS_FAILED = "failed"
STATUS_INVALID = "invalid"
STATUS_PENDING = "pending"

RESULTS_FILE = "results.parquet"
RUNS_DIR = "runs"
SPEC_COPY = "sweep.toml"
WRITE_EVERY_S = 10.0
"""results.parquet is rewritten at most this often while a sweep runs."""


class SweepError(ValueError):
    """Bad input to a sweep (one line: the spec file, the key, what is allowed)."""


class ExecutorUnavailable(SweepError):
    """Dask or Ray asked for but not installed."""


# --- the specification ----------------------------------------------------------------------


@dataclass
class Spec:
    """A parsed sweep specification."""

    file: str
    base: Path
    seeds: list[int]
    fixed: dict[str, Any]
    grid: dict[str, list]
    zipped: dict[str, list]
    metrics: list[str]
    name: str
    series: bool = False
    text: str = ""

    @property
    def parameters(self) -> list[str]:
        """The swept keys: the grid's, then the zip's."""
        return [*self.grid, *self.zipped]

    def points(self) -> list[dict[str, Any]]:
        """Every combination of the grid, crossed with each row of the zip."""
        grid_keys = list(self.grid)
        rows = list(product(*(self.grid[k] for k in grid_keys))) if grid_keys else [()]
        zip_keys = list(self.zipped)
        length = len(next(iter(self.zipped.values()))) if zip_keys else 1
        points = []
        for row in rows:
            for z in range(length):
                point = dict(zip(grid_keys, row))
                point.update({key: self.zipped[key][z] for key in zip_keys})
                points.append(point)
        return points


def _fail(file: str, key: Optional[str], message: str) -> SweepError:
    return SweepError(str(ScenarioError(file, key, message)))


def load_spec(spec: Union[str, Path, dict], base_dir: Optional[Path] = None) -> Spec:
    """Parse and check a spec: a TOML file, the name of a shipped sweep, or a dict shaped
    like the file (``base`` then relative to ``base_dir``, default the current directory).
    Raises SweepError."""
    if isinstance(spec, dict):
        data, file, text = copy.deepcopy(spec), "<sweep spec>", ""
        folder = Path(base_dir or ".")
    else:
        path = Path(spec)
        if not path.exists() and shipped_sweep(str(spec)) is not None:
            path = shipped_sweep(str(spec))  # type: ignore[assignment]
        file = str(path)
        try:
            data = read_toml(path)
        except ScenarioError as error:
            raise SweepError(str(error)) from None
        text = path.read_text(encoding="utf-8")
        folder = path.parent
    for section in data:
        if section not in SPEC_SECTIONS:
            raise _fail(file, section, f"unknown table; allowed: {', '.join(SPEC_SECTIONS)}")
    for section in SPEC_SECTIONS:
        if section in data and not isinstance(data[section], dict):
            raise _fail(file, section, "must be a table")
    sweep = data.get("sweep", {})
    for key in sweep:
        if key not in SWEEP_KEYS:
            raise _fail(file, f"sweep.{key}", f"unknown key; allowed: {', '.join(SWEEP_KEYS)}")
    if "base" not in sweep or not isinstance(sweep["base"], str) or not sweep["base"]:
        raise _fail(
            file, "sweep.base", "required: a scenario file or the name of a shipped example"
        )
    base = folder / sweep["base"]
    if not base.is_file():
        found = shipped_example(sweep["base"])
        if found is None:
            raise _fail(
                file,
                "sweep.base",
                f'"{sweep["base"]}": no such file (relative to the spec) and no shipped '
                "example of that name (atmsim examples)",
            )
        base = found
    seeds = _seeds(file, sweep.get("seeds", 1))
    grid = _lists(file, "grid", data.get("grid", {}))
    zipped = _lists(file, "zip", data.get("zip", {}))
    lengths = {len(values) for values in zipped.values()}
    if len(lengths) > 1:
        sizes = ", ".join(f"{k}: {len(v)}" for k, v in zipped.items())
        raise _fail(file, "zip", f"lists of one length are varied together; got {sizes}")
    both = set(grid) & set(zipped)
    if both:
        raise _fail(file, f"zip.{sorted(both)[0]}", "is also in [grid]; sweep a key once")
    fixed = data.get("set", {})
    for key in fixed:
        if key in grid or key in zipped:
            raise _fail(file, f"set.{key}", "is also swept ([grid] or [zip]); set it once")
        if key == "run.seed":
            raise _fail(file, "set.run.seed", "give the run seeds in [sweep] seeds")
    for key in (*grid, *zipped):
        if key == "run.seed":
            raise _fail(file, key, "give the run seeds in [sweep] seeds, not as a parameter")
    metrics = _metrics(file, data.get("metrics", {}))
    series = sweep.get("series", False)
    if not isinstance(series, bool):
        raise _fail(file, "sweep.series", "true or false")
    if "name" in sweep:
        name = _name(file, sweep["name"])
    else:
        name = Path(file).stem if file != "<sweep spec>" else base.stem
    # The number of runs is the product of the lists' lengths: counted before the
    # grid is built, which for a spec asking 10^8 points would fill the memory first.
    count = math.prod(len(values) for values in grid.values())
    count *= len(next(iter(zipped.values()))) if zipped else 1
    count *= len(seeds)
    if count > MAX_RUNS:
        raise _fail(file, "grid", f"makes {count:,} runs; at most {MAX_RUNS:,}")
    return Spec(file, base, seeds, fixed, grid, zipped, metrics, name, series, text)


SWEEP_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}\Z")
"""A sweep's name: one plain path component (it names ``runs/sweep-<name>``), so it can
hold no separator, no ``..`` and no absolute path."""


def _name(file: str, value: Any) -> str:
    """``[sweep] name``, or a SweepError naming the key."""
    if not isinstance(value, str) or not SWEEP_NAME.match(value):
        raise _fail(
            file,
            "sweep.name",
            "expected a name of 1 to 100 letters, digits, '_', '-' and '.', not starting "
            f"with '.' or '-' (it names the folder runs/sweep-<name>), got {show_value(value)}",
        )
    return value


def _seeds(file: str, value: Any) -> list[int]:
    if isinstance(value, bool):
        value = None
    if isinstance(value, int):
        if not 1 <= value <= 10_000:
            raise _fail(file, "sweep.seeds", "a number of run seeds from 1 to 10000, or a list")
        return list(range(1, value + 1))
    if (
        isinstance(value, list)
        and value
        and all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**64 for v in value)
    ):
        if len(set(value)) != len(value):
            raise _fail(file, "sweep.seeds", "a run seed is listed twice")
        return list(value)
    raise _fail(
        file, "sweep.seeds", "a number of run seeds (1..10000) or a list of run seeds [1, 7]"
    )


def _lists(file: str, section: str, table: dict) -> dict[str, list]:
    out = {}
    for key, values in table.items():
        if isinstance(values, dict):
            raise _fail(
                file,
                f"{section}.{key}",
                'quote dotted keys: "links.sw1-sw2.buffer" = [500, 1000] (a list of values)',
            )
        if not isinstance(values, list) or not values:
            raise _fail(file, f"{section}.{key}", "a non-empty list of values")
        out[key] = values
    return out


def _metrics(file: str, table: dict) -> list[str]:
    for key in table:
        if key not in METRIC_KEYS:
            raise _fail(file, f"metrics.{key}", f"unknown key; allowed: {', '.join(METRIC_KEYS)}")
    collect = table.get("collect", list(DEFAULT_METRICS))
    links = table.get("links", [])
    for key, value in (("collect", collect), ("links", links)):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _fail(file, f"metrics.{key}", "a list of strings")
    metrics = list(collect)
    for link in links:
        metrics.extend(f"{metric}:{link}" for metric in ("utilization", "max_queue"))
    for metric in metrics:
        name, sep, entity = metric.partition(":")
        allowed = (LINK_METRICS + FLOW_METRICS) if sep else RUN_METRICS
        if name not in allowed or (sep and not entity):
            raise _fail(
                file,
                "metrics.collect",
                f'unknown metric "{metric}"; allowed: {", ".join(RUN_METRICS)}; per link '
                f"{'/'.join(LINK_METRICS)}:<link>; per flow {'/'.join(FLOW_METRICS)}:<flow>",
            )
    return list(dict.fromkeys(metrics))


# --- runs -----------------------------------------------------------------------------------


def toml_value(value: Any) -> str:
    """A value as an inline TOML value, for a ``key=value`` override."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return "inf" if value > 0 else "-inf" if value < 0 else "nan"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot write {value!r} as TOML")


@dataclass
class Planned:
    """One run of the sweep, resolved in this process."""

    point: dict[str, Any]
    seed: int
    overrides: list[str]
    run_id: str = ""
    scenario_toml: str = ""
    core: Optional[dict] = None
    error: Optional[str] = None


def run_id_of(core: dict) -> str:
    """A run's id: the hash of its resolved core input (which holds the run seed)."""
    text = json.dumps(core, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def plan(spec: Spec) -> list[Planned]:
    """Every run of the spec, resolved: its id, resolved scenario and core input; a
    point whose scenario is invalid (e.g. a threshold above the buffer) keeps the
    error instead."""
    fixed = [f"{key}={toml_value(value)}" for key, value in spec.fixed.items()]
    planned = []
    for point in spec.points():
        swept = [f"{key}={toml_value(value)}" for key, value in point.items()]
        for seed in spec.seeds:
            overrides = [*fixed, *swept, f"run.seed={seed}"]
            item = Planned(point, seed, overrides)
            try:
                scenario = load_scenario(spec.base, overrides)
                item.core = to_core(scenario)
                item.scenario_toml = resolved_toml(scenario)
                item.run_id = run_id_of(item.core)
            except ScenarioError as error:
                item.error = str(error)
                digest = hashlib.sha256(json.dumps([str(spec.base), overrides]).encode())
                item.run_id = "invalid-" + digest.hexdigest()[:8]
            planned.append(item)
    return planned


def run_task(task: dict) -> dict:
    """Simulate one run (in a worker): the resolved scenario in, the summary out.

    Returns ``run_id``, ``summary`` (or None), ``error`` (one line, or None),
    ``wall_s`` and ``series`` (Parquet bytes, when asked for)."""
    started = time.perf_counter()
    out: dict[str, Any] = {"run_id": task["run_id"], "summary": None, "error": None}
    try:
        data = tomllib.loads(task["scenario_toml"])
        scenario = validate_scenario(data, task["file"])
        result = run(scenario, progress=False)
        out["summary"] = result.summary
        if task.get("series") and result.has_probes:
            out["series"] = result.series_parquet()  # the core's writer, as atmsim run
        if result.captures:
            out["captures"] = result.captures
    except KeyboardInterrupt:
        raise
    except Exception as error:
        out["error"] = (
            internal_error_message(error) if not isinstance(error, ScenarioError) else str(error)
        )
    out["wall_s"] = time.perf_counter() - started
    return out


def _worker_died(task: dict, description: str) -> dict:
    """The answer for a run whose worker process died under it: a failed run."""
    return {"run_id": task["run_id"], "summary": None, "error": description, "wall_s": math.nan}


def execute_local(tasks: list[dict], jobs: int) -> Iterator[dict]:
    """Run the tasks on ``jobs`` processes (in this process when 1), as they finish
    (``atmsim.workers``: Ctrl-C and SIGTERM are the sweep process's, which ends the
    workers; a worker ends with it)."""
    return imap_unordered(run_task, tasks, jobs, died=_worker_died)


EXECUTOR_MODULES = {
    "dask": (
        "dask.distributed",
        "--dask: dask[distributed] is not installed (pip install 'atmsim[dask]')",
    ),
    "ray": ("ray", "--ray: ray is not installed (pip install 'atmsim[ray]')"),
}
"""Executor -> (the module it needs, the message when that module is missing)."""


def check_executor(executor: str) -> None:
    """Raise ExecutorUnavailable when ``executor`` needs a package that is not installed:
    found without importing it, before a sweep writes anything."""
    needed = EXECUTOR_MODULES.get(executor)
    if needed is None:
        return
    module, message = needed
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing or broken
        found = False
    if not found:
        raise ExecutorUnavailable(message)


def execute_dask(tasks: list[dict], jobs: int, address: Optional[str]) -> Iterator[dict]:
    """Run the tasks on a Dask cluster: the scheduler at ``address``, or a LocalCluster of
    ``jobs`` single-threaded worker processes on the loopback interface."""
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ExecutorUnavailable(EXECUTOR_MODULES["dask"][1]) from None
    cluster = None
    if address:
        client = Client(address)
    else:
        cluster = LocalCluster(
            n_workers=jobs,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        )
        client = Client(cluster)
    try:
        futures = [client.submit(run_task, task, pure=False) for task in tasks]
        for future in as_completed(futures):
            yield future.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def execute_ray(tasks: list[dict], jobs: int, address: Optional[str]) -> Iterator[dict]:
    """Run the tasks on Ray: the cluster at ``address`` ("auto" finds a running one), or
    a local instance of ``jobs`` CPUs on the loopback interface."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        import ray
    except ImportError:
        raise ExecutorUnavailable(EXECUTOR_MODULES["ray"][1]) from None
    started = False
    if not ray.is_initialized():
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(
                num_cpus=jobs,
                include_dashboard=False,
                log_to_driver=False,
                _node_ip_address="127.0.0.1",
            )
        started = True
    try:
        remote = ray.remote(num_cpus=1)(run_task)
        pending = [remote.remote(task) for task in tasks]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield ray.get(done[0])
    finally:
        if started:
            ray.shutdown()


# --- files ----------------------------------------------------------------------------------


def _write_json(path: Path, data: Any) -> None:
    write_file(path, json.dumps(data, indent=2) + "\n")


def sweep_header(item: Planned) -> list[str]:
    """The comment lines at the top of a sweep run's scenario.toml."""
    return ["# atmsim sweep run; overrides: " + ", ".join(item.overrides)]


def write_run_dir(runs: Path, item: Planned, summary: Optional[dict], extra: dict) -> Path:
    """``runs/<run id>/``: the run directory of a finished run, written as every run
    directory is (``atmsim.rundir.write_run_dir``; series.parquet only with the spec's
    ``series``), or for a failed run its scenario.toml and failed.json. Written into a
    temporary directory and renamed into place: a run directory is whole or absent. A
    directory of an earlier failed attempt is replaced."""
    final = runs / item.run_id
    temporary = runs / f".{item.run_id}.{os.getpid()}.tmp"
    if temporary.exists():
        shutil.rmtree(temporary)
    header = sweep_header(item)
    if summary is not None:
        with naming(final):  # a full disk names the run's directory
            write_files(
                temporary,
                item.scenario_toml,
                summary,
                extra.get("series"),
                header,
                extra.get("captures"),
            )
    else:
        with naming(temporary):
            temporary.mkdir(parents=True)
        files = {
            MARKER: marker_text("run"),
            SCENARIO_FILE: scenario_text(item.scenario_toml, header),
            "failed.json": json.dumps(extra, indent=2) + "\n",
        }
        for name, text in files.items():
            with naming(final / name):  # a full disk names the file of the run
                (temporary / name).write_text(text, encoding="utf-8")
    with naming(final):
        if final.exists():
            old = runs / f".{item.run_id}.{os.getpid()}.old"
            os.rename(final, old)
            os.rename(temporary, final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(temporary, final)
    return final


def done_summary(runs: Path, run_id: str) -> Optional[dict]:
    """The summary of a finished run (None when it has not run or failed)."""
    path = runs / run_id / "summary.json"
    if not path.is_file():
        return None
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:  # cannot happen with the atomic rename; rerun it then
        return None
    # a large run's rows are in its Parquet files (atmsim.columnar)
    return read_tables(summary, runs / run_id)


def failure_of(runs: Path, run_id: str) -> Optional[str]:
    path = runs / run_id / "failed.json"
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("error")
    except ValueError:
        return None


# --- metrics --------------------------------------------------------------------------------


def metric_value(metric: str, summary: dict, core: Optional[dict]) -> Any:
    """One metric of a run's summary (NaN when it does not apply: a link or flow the
    run does not have, a Jain index without flows or sources)."""
    name, sep, entity = metric.partition(":")
    if sep:
        if name in FLOW_METRICS:
            flow = next((f for f in summary.get("flows", []) if f["name"] == entity), None)
            if flow is None:
                return math.nan
            key = {"retransmitted_bytes": "bytes_retransmitted"}.get(name, name)
            return flow[key]
        port = next((p for p in summary.get("ports", []) if p["name"] == entity), None)
        if port is None:
            return math.nan
        ip = port.get("layer") == "ip"
        if name == "utilization":
            return port["utilization"]
        if name == "max_queue":
            return port["max_queue_packets" if ip else "max_queue_cells"]
        if name == "mean_queue":
            return port["mean_queue_packets" if ip else "mean_queue_cells"]
        if name == "dropped":
            return port["packets_dropped" if ip else "cells_dropped"]
        if ip:
            arrived = port.get("packets_in", 0)
            return port.get("packets_dropped", 0) / arrived if arrived else 0.0
        return port["clr"]
    flows = summary.get("flows", [])
    source_vcs = set()
    if core is not None:
        source_vcs = {core["vcs"][s["vc"]]["name"] for s in core.get("sources", [])}
    if name == "goodput_mbps":
        if flows:
            return sum(f["goodput_mbps"] for f in flows)
        return sum(
            vc["frame_goodput_cps"] * CELL_BITS / 1e6
            for vc in summary.get("vcs", [])
            if vc["name"] in source_vcs
        )
    if name == "clr":
        ledger = summary["conservation"]
        generated = ledger.get("cells_generated", 0)
        return ledger.get("cells_dropped", 0) / generated if generated else 0.0
    if name == "jain":
        if flows:
            return jain([f["goodput_mbps"] for f in flows])
        return jain(
            [vc["frame_goodput_cps"] for vc in summary.get("vcs", []) if vc["name"] in source_vcs]
        )
    if name == "fair_jain":
        # The run's own fairness (``atmsim.rundir.complete_summary``); computed here
        # only for a summary written before runs carried it.
        report = summary.get("fairness")
        if report is None:
            if core is None:
                return math.nan
            report = fairness(core, summary)
        value = report["jain_normalised"]
        return math.nan if value is None else value
    if name == "ledger_ok":
        return all(ok for _, ok in ledger_lines(summary))
    if name == "timeouts":
        return sum(f["timeouts"] for f in flows)
    if name == "completed":
        return bool(summary.get("completed", False))
    raise ValueError(f"unknown metric {metric!r}")


def _column_values(values: list) -> list:
    """A parameter's values as one Parquet type: numbers stay numbers when all are,
    everything else is written as its TOML text."""
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return [float(v) if any(isinstance(x, float) for x in values) else v for v in values]
    if all(isinstance(v, bool) for v in values):
        return values
    return [v if isinstance(v, str) else toml_value(v) for v in values]


def results_frame(spec: Spec, planned: list[Planned], runs: Path, walls: dict):
    """The tidy table: one row per run of ``planned``, from the run directories."""
    rows = []
    for item in planned:
        row: dict[str, Any] = {"run_id": item.run_id}
        row.update(item.point)
        row["seed"] = item.seed
        summary = None if item.error else done_summary(runs, item.run_id)
        for metric in spec.metrics:
            row[metric] = math.nan
        if item.error:
            row["status"], row["error"] = STATUS_INVALID, item.error
        elif summary is None:
            error = failure_of(runs, item.run_id)
            row["status"] = STATUS_FAILED if error else STATUS_PENDING
            row["error"] = error or ""
        else:
            for metric in spec.metrics:
                try:
                    row[metric] = metric_value(metric, summary, item.core)
                except (KeyError, ValueError, TypeError, ZeroDivisionError):
                    row[metric] = math.nan
            ok = all(
                ok for ok in [metric_value("ledger_ok", summary, item.core)] if isinstance(ok, bool)
            )
            row["status"] = STATUS_OK if ok else STATUS_UNBALANCED
            row["error"] = "" if ok else "a conservation ledger did not balance"
        row["wall_s"] = walls.get(item.run_id, (summary or {}).get("wall_s", math.nan))
        rows.append(row)
    frame = pd.DataFrame(rows)
    for key in spec.parameters:
        if key in frame:
            frame[key] = _column_values(list(frame[key]))
    for metric in spec.metrics:
        if metric in frame and frame[metric].map(lambda v: isinstance(v, bool)).all():
            frame[metric] = frame[metric].astype(bool)
    return frame


def write_results(frame, path: Path) -> None:
    """results.parquet, written to a temporary file and renamed."""
    with replacing(path) as temporary:
        frame.to_parquet(temporary, index=False)


# --- the sweep ------------------------------------------------------------------------------


@dataclass
class SweepOutcome:
    """What a sweep did: the results table, counts, failures and where it wrote."""

    frame: Any
    out: Path
    total: int
    ran: int
    skipped: int
    failures: list = field(default_factory=list)
    wall_s: float = 0.0
    notes: list = field(default_factory=list)


def check_sweep_dir(out: Path) -> Path:
    """``out`` if it may receive a sweep: new, empty, or an earlier sweep's output (one
    marked as a sweep's: ``atmsim.outputs``). Raises OutDirError."""
    return check_out_dir(out, "sweep")


def default_out(spec: Spec) -> Path:
    return Path("runs") / f"sweep-{spec.name}"


def run_sweep(
    spec: Spec,
    out: Optional[Path] = None,
    jobs: Optional[int] = None,
    executor: str = "local",
    address: Optional[str] = None,
    progress: Optional[bool] = None,
    echo: Optional[Callable[[str], Any]] = None,
) -> SweepOutcome:
    """Run the spec's missing runs and write the results (module docstring).

    ``progress``: a rich progress bar on stderr (default: when stderr is a terminal);
    ``echo`` gets a line per finished run otherwise (None: silent). Raises SweepError
    for bad input, ExecutorUnavailable when Dask or Ray is asked for but missing,
    OutDirError for an ``out`` that may not receive the sweep, and KeyboardInterrupt
    (after writing the results so far) on Ctrl-C."""
    if executor not in EXECUTORS:
        raise SweepError(f"executor {executor!r}: expected one of {', '.join(EXECUTORS)}")
    check_executor(executor)  # before anything is written
    started = time.perf_counter()
    out = check_sweep_dir(Path(out) if out is not None else default_out(spec))
    jobs = jobs or os.cpu_count() or 1
    planned = plan(spec)
    valid = [item for item in planned if item.error is None]
    if planned and not valid:
        first = planned[0]
        raise SweepError(f"every run is invalid; the first ({_describe(first)}): {first.error}")
    notes = []
    _check_metrics(spec, valid)
    if spec.seeds and len(spec.seeds) > 1 and valid and valid[0].core is not None:
        if not seed_dependence(valid[0].core):
            notes.append(
                f"note: the {len(spec.seeds)} run seeds give identical runs: the scenario draws "
                "no random number"
            )
    prepare_out_dir(out, "sweep")  # before any run: a directory that cannot be written
    runs = out / RUNS_DIR
    with naming(runs):
        runs.mkdir(parents=True, exist_ok=True)
    if spec.text:
        write_file(out / SPEC_COPY, spec.text)
    _write_json(
        out / "sweep.json",
        {
            "name": spec.name,
            "base": str(spec.base),
            "parameters": spec.parameters,
            "grid": list(spec.grid),
            "zip": list(spec.zipped),
            "seeds": spec.seeds,
            "metrics": spec.metrics,
            "runs": len(planned),
        },
    )
    for stale in runs.glob(".*.tmp"):  # a run killed while being written
        shutil.rmtree(stale, ignore_errors=True)
    by_id: dict[str, Planned] = {}
    for item in valid:
        by_id.setdefault(item.run_id, item)
    todo = [item for item in by_id.values() if done_summary(runs, item.run_id) is None]
    skipped = len(by_id) - len(todo)
    tasks = [
        {
            "run_id": item.run_id,
            "scenario_toml": item.scenario_toml,
            "file": f"{spec.base.stem}.toml",
            "series": spec.series,
        }
        for item in todo
    ]
    walls: dict[str, float] = {}
    failures: list[tuple[str, str]] = []
    results_path = out / RESULTS_FILE
    bar = _Progress(spec.name, len(by_id), skipped) if _want_bar(progress) else None
    last_write = time.perf_counter()
    finished = 0
    stream: Optional[Iterator[dict]] = None
    try:
        if executor == "dask":
            stream = execute_dask(tasks, jobs, address)
        elif executor == "ray":
            stream = execute_ray(tasks, jobs, address)
        else:
            stream = execute_local(tasks, jobs)
        for answer in stream:
            item = by_id[answer["run_id"]]
            walls[item.run_id] = answer.get("wall_s", math.nan)
            if answer["summary"] is not None:
                extra = {"series": answer.get("series"), "captures": answer.get("captures")}
                write_run_dir(runs, item, answer["summary"], extra)
            else:
                write_run_dir(runs, item, None, {"error": answer["error"]})
                failures.append((item.run_id, answer["error"]))
            finished += 1
            state = "failed: " + answer["error"] if answer["summary"] is None else "ok"
            if bar is not None:
                bar.advance(len(failures))
            elif echo is not None:
                echo(
                    f"[{skipped + finished}/{len(by_id)}] {item.run_id} {_describe(item)}: "
                    f"{state} ({walls[item.run_id]:.1f} s)"
                )
            if time.perf_counter() - last_write > WRITE_EVERY_S:
                write_results(results_frame(spec, planned, runs, walls), results_path)
                last_write = time.perf_counter()
    finally:
        if stream is not None and hasattr(stream, "close"):
            stream.close()  # the workers end now, before the results are written
        if bar is not None:
            bar.stop()
        frame = results_frame(spec, planned, runs, walls)
        write_results(frame, results_path)
    invalid = [(item.run_id, item.error) for item in planned if item.error]
    return SweepOutcome(
        frame=frame,
        out=out,
        total=len(planned),
        ran=finished,
        skipped=skipped,
        failures=[*invalid, *failures],
        wall_s=time.perf_counter() - started,
        notes=notes,
    )


def _check_metrics(spec: Spec, valid: list[Planned]) -> None:
    """Per-link and per-flow metrics must name links and flows of the scenario."""
    if not valid or valid[0].core is None:
        return
    core = valid[0].core
    links = {link["name"] for link in core["links"]}
    flows = {flow["name"] for flow in core.get("flows", [])}
    for metric in spec.metrics:
        name, sep, entity = metric.partition(":")
        if not sep:
            continue
        known, what = (links, "links") if name in LINK_METRICS else (flows, "flows")
        if entity not in known:
            raise _fail(
                spec.file,
                "metrics",
                f'"{metric}": no {what[:-1]} "{entity}" in {spec.base.name}; {what}: '
                + ", ".join(sorted(known)[:20]),
            )


def _describe(item: Planned) -> str:
    parts = [f"{key}={toml_value(value)}" for key, value in item.point.items()]
    return ", ".join([*parts, f"run seed {item.seed}"])


def _want_bar(progress: Optional[bool]) -> bool:
    return sys.stderr.isatty() if progress is None else progress


class _Progress:
    """A rich progress bar on stderr: runs done of the total, failures, ETA."""

    def __init__(self, name: str, total: int, done: int) -> None:
        Console = rich.console.Console
        BarColumn = rich.progress.BarColumn
        MofNCompleteColumn = rich.progress.MofNCompleteColumn
        Progress = rich.progress.Progress
        TextColumn = rich.progress.TextColumn
        TimeElapsedColumn = rich.progress.TimeElapsedColumn
        TimeRemainingColumn = rich.progress.TimeRemainingColumn

        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]} failed"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self.task = self.progress.add_task(f"sweep {name}", total=total, completed=done, failed=0)
        self.progress.start()

    def advance(self, failed: int) -> None:
        self.progress.update(self.task, advance=1, failed=failed)

    def stop(self) -> None:
        self.progress.stop()


def sweep(
    spec: Union[str, Path, dict],
    out: Union[str, Path, None] = None,
    jobs: Optional[int] = None,
    executor: str = "local",
    address: Optional[str] = None,
    progress: Optional[bool] = False,
):
    """Run a sweep (a spec file, a shipped sweep's name, or a dict shaped like the
    file) and return its results as a pandas DataFrame, one row per run: run_id, each
    swept parameter, seed (the run seed), the metrics, status ("ok", "unbalanced", "failed",
    "invalid"), error, wall_s. Writes ``out`` (default ``runs/sweep-<name>``) as
    ``atmsim sweep`` does; running it again runs only what is missing."""
    loaded = load_spec(spec)
    outcome = run_sweep(
        loaded,
        Path(out) if out is not None else None,
        jobs=jobs,
        executor=executor,
        address=address,
        progress=progress,
    )
    return outcome.frame
