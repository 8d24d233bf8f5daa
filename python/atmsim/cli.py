"""The ``atmsim`` command: run, validate, plot, reproduce, bench.

Argument parsing only: the work is done by the package (``atmsim.api`` runs,
``atmsim.results`` prints tables and ledgers, ``atmsim.plots`` draws,
``atmsim.reproduce`` compares with the seeds, ``atmsim.validation.bench``
measures).

Exit codes: 0 success; 1 a conservation ledger does not balance, the core is
missing, or an internal error (one line ``error: internal error: <type>:
<message> (please report it; ...)``; ``atmsim --debug ...`` shows the traceback
instead); 2 bad input (scenario, flag, file), always one line ``error: <file>:
<key>: <what is allowed>`` on stderr, never a traceback; 130 interrupted by
Ctrl-C (a run writes its partial results).
"""

# No `from __future__ import annotations` here: typer reads every command's
# annotations at each start, and as strings it would evaluate them one by one
# (4.5 % of the instructions of `atmsim validate`).

import os
import sys
import time
import traceback
from pathlib import Path
from typing import Annotated, Optional

import typer

from .determinism import seed_note
from .errors import ScenarioError
from .failures import internal_error_message, os_error_message
from .resources import resolve_scenario
from .scenario import Network, load_scenario

# atmsim.api and atmsim.results (rich) are imported by the commands that use
# them, not here, and pandas, numpy and pyarrow only where a frame is built:
# `atmsim validate` and `--help` start in a third of the time without them,
# and `atmsim run` loads none of the three (the core writes the series).

try:  # recent typer ships its own copy of click
    from typer._click.exceptions import ClickException
except ImportError:  # pragma: no cover - older typer depends on click
    from click.exceptions import ClickException

app = typer.Typer(
    add_completion=False,
    pretty_exceptions_enable=False,
    help="Cell-level simulator of TCP/IP over ATM networks.",
)


class CliError(Exception):
    """Bad input to a command that is not a scenario (e.g. a run dir without series)."""


class _Options:
    """The global options of the last ``main`` call (set by the app's callback)."""

    debug = False


def _print_version(value: bool) -> None:
    """``atmsim --version``: the installed version, then exit."""
    if value:
        from .api import package_version

        print(f"atmsim {package_version()}")
        raise typer.Exit(0)


@app.callback()
def _global_options(
    debug: Annotated[
        bool,
        typer.Option(
            "--debug", help="On an internal error, show the full traceback instead of one line."
        ),
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Print the atmsim version and exit.",
        ),
    ] = False,
) -> None:
    """Cell-level simulator of TCP/IP over ATM networks."""
    _Options.debug = debug


SetOption = Annotated[
    Optional[list[str]],
    typer.Option(
        "--set",
        metavar="KEY=VALUE",
        help="Override a scenario key (repeatable), e.g. --set links.bottleneck.buffer=500 "
        'or --set "run.duration=5 s".',
    ),
]
ScenarioArgument = Annotated[
    Path,
    typer.Argument(
        metavar="SCENARIO",
        help="Scenario file (TOML), or the name of a shipped example (atmsim examples).",
        show_default=False,
    ),
]


@app.command("run")
def run_command(
    scenario: ScenarioArgument,
    out: Annotated[
        Optional[Path],
        typer.Option(
            "--out",
            help="Run directory: a new or empty directory, or an earlier run's "
            "(default: runs/<scenario>-<YYYYmmdd-HHMMSS>).",
        ),
    ] = None,
    seed: Annotated[Optional[int], typer.Option("--seed", help="Replace run.seed.")] = None,
    sets: SetOption = None,
    no_progress: Annotated[
        bool, typer.Option("--no-progress", help="Never show a progress bar.")
    ] = False,
    fast_paths: Annotated[
        Optional[bool],
        typer.Option(
            "--fast-paths/--no-fast-paths",
            help="Replace run.fast_paths: --no-fast-paths sends every cell and packet "
            "through the plain event path (same results, more events).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Run a scenario; write scenario.toml, summary.json and series.parquet to the run dir."""
    scenario = resolve_scenario(scenario)
    from .api import RunInterrupted, run
    from .results import print_result

    out_dir = out if out is not None else default_run_dir(scenario)
    try:
        result = run(
            scenario,
            seed=seed,
            overrides=sets or [],
            out=out_dir,
            progress=False if no_progress else None,
            fast_paths=fast_paths,
        )
    except RunInterrupted as interrupted:
        summary = interrupted.result.summary
        print_result(interrupted.result, out_dir)
        add_fairness(interrupted.result, out_dir)
        print(
            f"interrupted at {summary.get('sim_time_s')} s simulated; partial results in {out_dir}",
            file=sys.stderr,
        )
        raise typer.Exit(130) from None
    balanced = print_result(result, out_dir)
    add_fairness(result, out_dir, show=True)
    if seed is not None and result.core_input is not None:
        note = seed_note(result.core_input, seed)
        if note:
            print(note, file=sys.stderr)
    if not balanced:
        raise typer.Exit(1)


def add_fairness(result, out_dir: Path, show: bool = False) -> None:
    """Compute the run's fairness (``atmsim.fairness``), print its table when asked and
    there are two entities or more, and add it to the run's summary.json."""
    from .fairness import fairness, fairness_table, write_fairness
    from .results import print_tables, wide_console

    if result.core_input is None:
        return
    try:
        report = fairness(result.core_input, result.summary)
    except Exception as error:  # the run's results stand; say what is missing
        print(f"note: fairness not computed ({internal_error_message(error)})", file=sys.stderr)
        return
    if show and len(report["entities"]) > 1:
        print_tables(wide_console(), [fairness_table(report)])
    write_fairness(out_dir, report)


@app.command("fairness")
def fairness_command(
    run_dir: Annotated[
        Path, typer.Argument(metavar="RUN_DIR", help="A run directory.", show_default=False)
    ],
    gfr_rule: Annotated[
        str,
        typer.Option(
            "--gfr-rule",
            help='GFR VCs share in proportion to their MCRs ("proportional") or get their '
            'MCR plus an equal share ("equal").',
        ),
    ] = "proportional",
) -> None:
    """Each VC's or flow's achieved rate against its max-min fair rate (from the topology,
    the capacities and the demands) and the Jain index of the normalised rates; written
    into the run's summary.json as "fairness"."""
    from .fairness import (
        GFR_RULES,
        FairnessInputError,
        fairness_of_run_dir,
        fairness_table,
        write_fairness,
    )
    from .results import print_tables, wide_console

    if gfr_rule not in GFR_RULES:
        raise CliError(f"--gfr-rule {gfr_rule}: expected one of {', '.join(GFR_RULES)}")
    try:
        report = fairness_of_run_dir(run_dir, gfr_rule)
    except FairnessInputError as error:
        raise CliError(str(error)) from None
    print_tables(wide_console(), [fairness_table(report)])
    write_fairness(run_dir, report)
    print(f"wrote the fairness into {run_dir / 'summary.json'}")


@app.command("validate")
def validate_command(scenario: ScenarioArgument, sets: SetOption = None) -> None:
    """Check a scenario (with any --set overrides) without running it."""
    scenario = resolve_scenario(scenario)
    loaded = load_scenario(scenario, sets or [])
    network = Network(loaded)
    made_by = f'template "{loaded.template["kind"]}": ' if loaded.template else ""
    print(
        f"ok: {scenario} ({made_by}{len(network.nodes)} nodes, {len(network.links)} links, "
        f"{len(network.vcs)} vcs, {len(network.sources)} sources, {len(network.flows)} flows)"
    )


@app.command("plot")
def plot_command(
    run_dir: Annotated[
        Path, typer.Argument(metavar="RUN_DIR", help="A run directory.", show_default=False)
    ],
) -> None:
    """Plot a run's time series: queue.png, ip_queue.png, utilization.png, vc_rate.png,
    per TCP flow window.png, sequence.png, srtt.png, and for ABR acr.png, er.png,
    abr_queue.png, load_factor.png, fair_share.png."""
    from .plots import PlotInputError, plot_run_dir

    try:
        written = plot_run_dir(run_dir)
    except PlotInputError as error:
        raise CliError(str(error)) from None
    for path in written:
        print(path)


@app.command("reproduce")
def reproduce_command(
    ids: Annotated[
        Optional[list[str]],
        typer.Argument(
            metavar="[ID]...",
            help="Experiment ids (seed000-sec8, ...) or seeds (seed000, seed002, seed003); "
            "none: list them.",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            help="Output directory, one folder per experiment: a new or empty directory, "
            "or an earlier reproduce --out.",
        ),
    ] = Path("runs/reproduce"),
    list_only: Annotated[
        bool, typer.Option("--list", help="List the experiments and exit.")
    ] = False,
    jobs: Annotated[
        Optional[int],
        typer.Option("--jobs", min=1, help="Experiments run at once (default: the cores)."),
    ] = None,
    report: Annotated[
        bool,
        typer.Option("--report", help="At the end, write OUT/report.html (atmsim report)."),
    ] = False,
) -> None:
    """Run the seeds' published experiments and compare: published and simulated values,
    tolerance and verdict per quantity; table.csv, figures and run files per experiment
    in OUT/<id>/, all rows in OUT/<seed or selected>.csv. Exit 0 with the report
    whatever the verdicts; 1 if a conservation ledger does not balance."""
    from .reproduce.report import ReproduceInputError, main

    try:
        code = main(ids or [], out, jobs, list_only, debug=_Options.debug, report=report)
    except ReproduceInputError as error:
        raise CliError(str(error)) from None
    if code:
        raise typer.Exit(code)


@app.command("report")
def report_command(
    directory: Annotated[
        Path,
        typer.Argument(
            metavar="DIR",
            help="A reproduce --out, a sweep --out, or a run directory.",
            show_default=False,
        ),
    ],
    out: Annotated[
        Optional[Path],
        typer.Option("--out", help="The HTML file to write (default: DIR/report.html)."),
    ] = None,
) -> None:
    """Write a static, self-contained HTML report (figures embedded) of a reproduce
    output (published against simulated, verdicts, figures, the misses' analysis), a
    sweep (metrics against parameters, mean and 95 % interval over the seeds) or a run."""
    from .html_report import ReportInputError, write_report

    try:
        path = write_report(directory, out)
    except ReportInputError as error:
        raise CliError(str(error)) from None
    print(path)


@app.command("bench")
def bench_command(
    runs: Annotated[
        int,
        typer.Option(
            "--runs",
            "--repeat",
            min=1,
            help="Runs of each benchmark; every figure is their median with min and max.",
        ),
    ] = 5,
    dumbbell: Annotated[
        bool,
        typer.Option(
            "--dumbbell/--no-dumbbell",
            help="The IP dumbbell, alternating with ns-2 when ns-2 is installed.",
        ),
    ] = True,
    process: Annotated[
        bool,
        typer.Option(
            "--process/--no-process",
            help="Whole atmsim processes: validate, a 1 ms run, mux_onoff (and the dumbbell).",
        ),
    ] = True,
    scale: Annotated[
        str,
        typer.Option(
            "--scale",
            metavar="N,N,...",
            help="Numbers of on/off VCs on one OC-48 port for the scale series; "
            "'none' leaves it out.",
        ),
    ] = "10,100,1000,10000,100000",
    memory: Annotated[
        bool,
        typer.Option(
            "--memory",
            help="Also measure the core's memory per VC and per cell in flight, and that "
            "it stays flat over a 3000 s run (about a minute).",
        ),
    ] = False,
    json_out: Annotated[
        Optional[Path],
        typer.Option("--json", help="Also write every figure and the machine to this file."),
    ] = None,
) -> None:
    """Benchmarks, each the median of --runs runs with its spread: cells per second on
    mux_onoff, whole-process start-up and memory, the cost per cell against the
    number of VCs, and the IP dumbbell against ns-2 (paired runs)."""
    import json

    from .validation import bench

    if not bench.BENCH_SCENARIO.is_file():
        raise CliError(
            f"{bench.BENCH_SCENARIO}: no such file (the package data is missing: reinstall atmsim)"
        )
    vcs = parse_scale(scale)
    if json_out is not None and json_out.is_dir():
        raise CliError(f"--json {json_out}: is a directory; give a file name")
    report: dict = {"machine": bench.machine(), "runs": runs}
    print(bench.machine_line(report["machine"]))
    try:
        report["mux_onoff"] = bench.bench_cells(runs, echo=print)
        if process:
            report["process"] = bench.bench_process(runs, echo=print)
        if vcs:
            report["scale"] = bench.bench_scale(runs, vcs, echo=print)
        if memory:
            report["memory"] = bench.bench_memory(echo=print)
        if dumbbell:
            out = bench.bench_dumbbell(runs, process=process, echo=print)
            out["params"] = out["params"].scenario or "validation dumbbell"
            report["dumbbell"] = out
    except RuntimeError as error:
        raise CliError(f"bench: {error}") from None
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report, indent=1, default=str) + "\n", encoding="utf-8")
        print(f"figures written to {json_out}")


def parse_scale(text: str) -> list[int]:
    """The VC counts of ``atmsim bench --scale`` ('none' or empty: no series)."""
    if text.strip().lower() in ("", "none"):
        return []
    counts = []
    for item in text.split(","):
        try:
            n = int(item.strip())
        except ValueError:
            n = 0
        if not 1 <= n <= 1_000_000:
            raise CliError(
                f"--scale {text}: expected comma-separated VC counts from 1 to 1000000, or none"
            )
        counts.append(n)
    return counts


@app.command("examples")
def examples_command(
    name: Annotated[
        Optional[str],
        typer.Argument(
            metavar="[NAME]",
            help="A shipped example or sweep to copy out (with --to); none: list them.",
            show_default=False,
        ),
    ] = None,
    to: Annotated[
        Optional[Path],
        typer.Option(
            "--to",
            help="Directory to copy NAME into (created), or a file name ending in .toml "
            "(default: the current directory).",
        ),
    ] = None,
) -> None:
    """List the example scenarios and sweeps that ship with atmsim, or copy one out to
    start from: atmsim examples ubr_epd --to mine/."""
    from .resources import copy_example, description, examples, shipped, sweeps

    if name is None:
        if to is not None:
            raise CliError("--to: name the example to copy (atmsim examples NAME --to DIR)")
        from rich.table import Table

        from .results import wide_console

        for title, found, how in (
            ("Example scenarios", examples(), "atmsim run NAME"),
            ("Example sweeps", sweeps(), "atmsim sweep NAME"),
        ):
            table = Table(
                title=f"{title} ({how}; copy: atmsim examples NAME --to DIR)",
                title_justify="left",
            )
            table.add_column("name", no_wrap=True)
            table.add_column("what", overflow="fold")
            for key, path in found.items():
                table.add_row(key, description(path))
            wide_console().print(table)
        return
    if shipped(name) is None:
        known = ", ".join([*examples(), *sweeps()])
        raise CliError(f"examples: no shipped example {name!r}; choose from: {known}")
    try:
        written = copy_example(name, to if to is not None else Path("."))
    except FileExistsError as error:
        raise CliError(f"--to: {error}: exists; not overwritten") from None
    print(written)


@app.command("sweep")
def sweep_command(
    spec: Annotated[
        Path,
        typer.Argument(
            metavar="SPEC",
            help="Sweep specification (TOML, docs/sweeps.md), or a shipped sweep's name.",
            show_default=False,
        ),
    ],
    out: Annotated[
        Optional[Path],
        typer.Option(
            "--out",
            help="Output directory: new, empty, or an earlier sweep's (which resumes it). "
            "Default: runs/sweep-<name>.",
        ),
    ] = None,
    jobs: Annotated[
        Optional[int],
        typer.Option("--jobs", min=1, help="Runs at once (default: the cores)."),
    ] = None,
    dask: Annotated[
        Optional[str],
        typer.Option(
            "--dask",
            metavar="[ADDRESS]",
            help="Run on Dask: the scheduler at ADDRESS, or a LocalCluster of --jobs "
            "workers when none is given.",
        ),
    ] = None,
    ray: Annotated[
        Optional[str],
        typer.Option(
            "--ray",
            metavar="[ADDRESS]",
            help="Run on Ray: the cluster at ADDRESS (auto: a running one), or a local "
            "instance of --jobs CPUs when none is given.",
        ),
    ] = None,
    no_progress: Annotated[
        bool, typer.Option("--no-progress", help="A line per run instead of a progress bar.")
    ] = False,
) -> None:
    """Run a parameter study: a base scenario over a grid and/or zipped lists of --set
    keys and several seeds; one row per run in OUT/results.parquet, each run's files in
    OUT/runs/<run id>/. Running it again on the same OUT runs only what is missing."""
    from .sweeps import SweepError, load_spec, run_sweep

    if dask is not None and ray is not None:
        raise CliError("--dask and --ray: choose one executor")
    executor, address = "local", None
    if dask is not None:
        executor, address = "dask", (None if dask == LOCAL else dask)
    elif ray is not None:
        executor, address = "ray", (None if ray == LOCAL else ray)
    try:
        loaded = load_spec(spec)
        outcome = run_sweep(
            loaded,
            out,
            jobs=jobs,
            executor=executor,
            address=address,
            progress=False if no_progress else None,
            echo=print,
        )
    except SweepError as error:
        raise CliError(str(error)) from None
    for note in outcome.notes:
        print(note, file=sys.stderr)
    frame = outcome.frame
    counts = frame["status"].value_counts().to_dict() if len(frame) else {}
    done = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    print(
        f"sweep {loaded.name}: {outcome.total} runs ({done}); ran {outcome.ran}, "
        f"{outcome.skipped} already done; {outcome.wall_s:.1f} s wall, --jobs "
        f"{jobs or os.cpu_count()}, {executor}"
    )
    if outcome.failures:
        print(f"{len(outcome.failures)} failed:")
        for run_id, error in outcome.failures[:20]:
            print(f"  {run_id}: {error}")
        if len(outcome.failures) > 20:
            print(f"  ... and {len(outcome.failures) - 20} more (status in results.parquet)")
    print(f"wrote {outcome.out / 'results.parquet'} and {outcome.out / 'runs'}/<run id>/")


LOCAL = "local"
"""The value --dask and --ray take when given without an address (see ``main``)."""


def _optional_values(argv: list[str]) -> list[str]:
    """``--dask`` and ``--ray`` take an optional address: without one (the next word is
    missing, another option, or a spec file rather than an address), "local" is put in."""
    out: list[str] = []
    for k, word in enumerate(argv):
        out.append(word)
        if word in ("--dask", "--ray"):
            following = argv[k + 1] if k + 1 < len(argv) else None
            looks_like_address = following is not None and (
                "://" in following or following == "auto" or ":" in following
            )
            if not looks_like_address:
                out.append(LOCAL)
    return out


def default_run_dir(scenario: Path) -> Path:
    """``runs/<scenario stem>-<YYYYmmdd-HHMMSS>``, with -2, -3, ... if it exists."""
    base = Path("runs") / f"{scenario.stem}-{time.strftime('%Y%m%d-%H%M%S')}"
    candidate, n = base, 1
    while candidate.exists():
        n += 1
        candidate = base.with_name(f"{base.name}-{n}")
    return candidate


class _NeverRaised(Exception):
    """Stands for an error class of a module not imported: nothing raised it."""


def _loaded(module: str, name: str) -> type[Exception]:
    """Error class `name` of atmsim module `module` if that module was imported (only
    its code raises it), else `_NeverRaised`; an `except` clause evaluates this only
    when an error reaches it."""
    loaded = sys.modules.get(f"atmsim.{module}")
    return getattr(loaded, name) if loaded is not None else _NeverRaised


def _error(message: str) -> None:
    print(f"error: {message}".replace("\n", " "), file=sys.stderr)


def main(argv: Optional[list[str]] = None) -> None:
    """Entry point of the ``atmsim`` command (through ``atmsim._entry``) and of
    ``python -m atmsim``: run the command, turn every failure into an exit code and
    at most one line on stderr."""
    _Options.debug = False
    argv = _optional_values(list(sys.argv[1:] if argv is None else argv))
    try:
        code = app(args=argv, prog_name="atmsim", standalone_mode=False)
    except ClickException as error:  # typer's usage errors: bad flag, missing argument
        _error(f"{error.format_message()} (see atmsim --help)")
        code = 2
    except _loaded("results", "OutDirError") as error:
        _error(f"--out {error}")
        code = 2
    except (ScenarioError, CliError) as error:
        _error(str(error))
        code = 2
    except OSError as error:  # e.g. an --out directory that cannot be written
        _error(os_error_message(error))
        code = 2
    except _loaded("api", "CoreUnavailable") as error:
        _error(str(error))
        code = 1
    except typer.Abort as error:  # click's answer to Ctrl-C (typer answers Exit(130))
        code = 130 if isinstance(error.__cause__, KeyboardInterrupt) else 1
    except KeyboardInterrupt:
        code = 130
    except Exception as error:
        if _Options.debug:
            traceback.print_exc()
        else:
            _error(internal_error_message(error))
        code = 1
    sys.exit(code or 0)
