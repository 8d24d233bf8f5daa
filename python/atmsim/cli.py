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

from __future__ import annotations

import sys
import time
import traceback
from pathlib import Path
from typing import Annotated, Optional

import typer

from .errors import ScenarioError
from .failures import internal_error_message, os_error_message
from .scenario import Network, load_scenario

# atmsim.api (pandas, numpy, pyarrow) and atmsim.results are imported by the
# commands that use them, not here: `atmsim validate` and `--help` start in
# a third of the time without them.

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


@app.callback()
def _global_options(
    debug: Annotated[
        bool,
        typer.Option(
            "--debug", help="On an internal error, show the full traceback instead of one line."
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
    Path, typer.Argument(metavar="SCENARIO", help="Scenario file (TOML).", show_default=False)
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
        print(
            f"interrupted at {summary.get('sim_time_s')} s simulated; partial results in {out_dir}",
            file=sys.stderr,
        )
        raise typer.Exit(130) from None
    if not print_result(result, out_dir):
        raise typer.Exit(1)


@app.command("validate")
def validate_command(scenario: ScenarioArgument, sets: SetOption = None) -> None:
    """Check a scenario (with any --set overrides) without running it."""
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
) -> None:
    """Run the seeds' published experiments and compare: published and simulated values,
    tolerance and verdict per quantity; table.csv, figures and run files per experiment
    in OUT/<id>/, all rows in OUT/<seed or selected>.csv. Exit 0 with the report
    whatever the verdicts; 1 if a conservation ledger does not balance."""
    from .reproduce.report import ReproduceInputError, main

    try:
        code = main(ids or [], out, jobs, list_only, debug=_Options.debug)
    except ReproduceInputError as error:
        raise CliError(str(error)) from None
    if code:
        raise typer.Exit(code)


@app.command("bench")
def bench_command(
    repeat: Annotated[int, typer.Option("--repeat", min=1, help="Runs; the best counts.")] = 3,
    dumbbell: Annotated[
        bool, typer.Option("--dumbbell/--no-dumbbell", help="Also bench the IP dumbbell.")
    ] = True,
) -> None:
    """Cells per wall-second on mux_onoff; packets per wall-second on the IP dumbbell
    and the ratio to ns-2 when ns-2 is installed."""
    from .validation.bench import (
        BENCH_SCENARIO,
        bench_cells,
        bench_dumbbell,
        format_bench,
        machine_line,
    )

    if not BENCH_SCENARIO.is_file():
        raise CliError(f"{BENCH_SCENARIO}: no such file (bench runs from a source checkout)")
    bench_cells(repeat, echo=print)
    if dumbbell:
        print(format_bench(bench_dumbbell(repeat)))
    print(machine_line())


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
