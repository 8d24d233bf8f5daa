"""The ``atmsim`` command: run, validate, plot, reproduce, bench, validate-model.

Argument parsing only (argparse, see ``build_parser``): the work is done by the
package (``atmsim.api`` runs, ``atmsim.results`` prints tables and ledgers,
``atmsim.plots`` draws, ``atmsim.reproduce`` compares with the papers,
``atmsim.validation.bench`` measures).

Exit codes: 0 success; 1 a conservation ledger does not balance, the core is
missing, or an internal error (one line ``error: internal error: <type>:
<message> (please report it; ...)``; ``atmsim --debug ...`` shows the traceback
instead); 2 bad input (scenario, flag, file), always one line ``error: <file>:
<key>: <what is allowed>`` on stderr, never a traceback, and also a file or
stdout that cannot be written (a full disk, stdout closed: one line, the
command's files written); 130 interrupted by
Ctrl-C (SIGINT), 143 by SIGTERM (a run writes its partial results, a sweep its
results table; ``atmsim.workers``); 141 stdout's reader left early
(``atmsim run ... | head``), quietly, the run's files written.

The parser is the standard library's argparse rather than typer: typer, its
click and the building of every command's parameters at each start cost a
good part of what ``atmsim validate`` may take (docs/performance.md, "CLI
start-up").
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Callable, Optional

from ._lazy import argparse, rich
from .determinism import seed_note
from .errors import ScenarioError, one_line
from .failures import internal_error_message, os_error_message
from .resources import resolve_scenario
from .scenario import Network, load_scenario

# atmsim.api and atmsim.results are imported by the commands that use them,
# not here, and pandas, numpy and pyarrow only where a frame is built:
# `atmsim validate` and `--help` start in a third of the time without them,
# and `atmsim run` loads none of the three (the core writes the series).

DESCRIPTION = "Cell-level simulator of TCP/IP over ATM networks."


class CliError(Exception):
    """Bad input to a command that is not a scenario (e.g. a run dir without series)."""


class UsageError(Exception):
    """A command line the parser rejects: unknown command or flag, bad or missing value."""


class _Done(Exception):
    """Stops the command line's parsing with exit code ``code`` (``--version``)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class _Options:
    """The global options of the last ``main`` call."""

    debug = False


class _Parser(argparse.ArgumentParser):
    """argparse, whose errors become a `UsageError` (``main`` prints them in one line)
    instead of the usage text and an exit."""

    def error(self, message: str):  # type: ignore[override]
        raise UsageError(f"{message} (see {self.prog} --help)")


class _Version(argparse.Action):
    """``atmsim --version``: the installed version, then exit (before any command)."""

    def __init__(self, option_strings, dest, **kwargs) -> None:
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        from .api import package_version

        print(f"atmsim {package_version()}")
        raise _Done(0)


def _at_least_1(text: str) -> int:
    """An argparse type: a whole number of at least 1 (``--runs``, ``--jobs``)."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return n


def _vc_count(text: str) -> int:
    """An argparse type: a number of VCs from 1 to 1,000,000 (``bench --whole-scale``)."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if not 1 <= n <= 1_000_000:
        raise argparse.ArgumentTypeError(
            f"expected a number of VCs from 1 to 1000000, got {text!r}"
        )
    return n


# --- commands: each takes the parsed arguments and returns its exit code ------------------


def run_command(args: argparse.Namespace) -> int:
    """Run a scenario; write scenario.toml, summary.json and series.parquet to the run dir."""
    scenario = resolve_scenario(args.scenario)
    from .api import RunInterrupted, run
    from .results import print_result

    out_dir = args.out if args.out is not None else default_run_dir(scenario)
    overrides = list(args.sets or [])
    if args.capture:
        overrides.append("probes.capture=" + json.dumps(args.capture))
    if args.capture_limit is not None:
        overrides.append("probes.capture_limit=" + json.dumps(args.capture_limit))
    try:
        result = run(
            scenario,
            seed=args.seed,
            overrides=overrides,
            out=out_dir,
            progress=False if args.no_progress else None,
            fast_paths=args.fast_paths,
        )
    except RunInterrupted as interrupted:
        summary = interrupted.result.summary
        print_result(interrupted.result, out_dir)
        show_fairness(interrupted.result, show=False)
        print(
            f"interrupted at {summary.get('sim_time_s')} s simulated; partial results in {out_dir}",
            file=sys.stderr,
        )
        from .workers import exit_code

        return exit_code()
    balanced = print_result(result, out_dir)
    show_fairness(result, show=True)
    if args.seed is not None and result.core_input is not None:
        note = seed_note(result.core_input, args.seed)
        if note:
            print(note, file=sys.stderr)
    if not balanced:
        # A ledger that does not balance is a bug of the simulator, not of the
        # scenario: said on stderr too, where a script looks for errors.
        print(
            f"error: a conservation ledger does not balance (an atmsim bug); "
            f"the run is in {out_dir}",
            file=sys.stderr,
        )
    return 0 if balanced else 1


def emulate_command(args: argparse.Namespace) -> int:
    """Run a scenario with real hosts: the ends of its TCP flows (all, or --flow) become
    Linux network namespaces with TUN devices, and a real TCP transfer of --bytes with
    the Linux congestion control --cc crosses the simulated network in real time. Needs
    root (CAP_NET_ADMIN and CAP_SYS_ADMIN). Prints the run's tables and ledgers, each
    transfer, and the lateness of the datagrams written (docs/emulation.md)."""
    from .emulate import EmulationError, emulate
    from .results import print_result

    scenario = resolve_scenario(args.scenario)
    out_dir = args.out if args.out is not None else default_run_dir(scenario)
    try:
        done = emulate(
            scenario,
            flows=args.flows,
            nbytes=args.bytes,
            cc=args.cc or (),
            overrides=list(args.sets or []),
            seed=args.seed,
            out=out_dir,
            max_lateness_s=args.max_lateness_ms / 1e3,
            mtu=args.mtu,
            traffic_kind=args.traffic,
        )
    except EmulationError as error:
        raise CliError(str(error)) from None
    balanced = print_result(done.result, out_dir)
    external = done.result.summary["conservation"].get("external")
    if external is not None:
        verdict = "balanced" if external["ok"] else "NOT BALANCED"
        print(
            f"real datagrams ledger: {verdict} (injected {external['injected']:,} = delivered "
            f"{external['delivered']:,} + lost {external['lost']:,} + in network "
            f"{external['in_network']:,})"
        )
        balanced = balanced and external["ok"]
    for flow in done.report["flows"]:
        if flow["ok"]:
            verdict = (
                "every byte delivered"
                if flow["traffic"] == "own"
                else "as counted by the iperf3 server at its test's end"
            )
        else:
            verdict = "INCOMPLETE"
        errors = f" ({'; '.join(flow['errors'])})" if flow["errors"] else ""
        dropped = sum(n or 0 for n in flow["dropped_before_the_model"].values())
        if dropped:
            errors += f", {dropped:,} datagrams dropped by the hosts before the model"
        if flow.get("retransmissions") is not None:
            errors += f", {flow['retransmissions']:,} segments retransmitted"
        print(
            f"real flow {flow['flow']} {flow['sender']} -> {flow['receiver']} ({flow['cc']}): "
            f"{flow['bytes_received']:,} of {flow['bytes']:,} bytes, {verdict}, "
            f"{flow['seconds']:.3f} s, {flow['goodput_mbps']:.2f} Mbps{errors}"
        )
    late = done.report["lateness"]
    print(
        f"lateness of {late['datagrams']:,} datagrams written: max {late['max_s'] * 1e3:.3f} ms, "
        f"p50 {late['p50_s'] * 1e3:.3f} ms, p99 {late['p99_s'] * 1e3:.3f} ms, "
        f"p99.9 {late['p999_s'] * 1e3:.3f} ms"
    )
    if late["fell_behind"]:
        print(
            f"warning: the simulation fell behind the wall clock: {late['later_than_bound']:,} "
            f"datagrams written more than {late['bound_s'] * 1e3:g} ms late",
            file=sys.stderr,
        )
    if not balanced:
        print(
            f"error: a conservation ledger does not balance (an atmsim bug); "
            f"the run is in {out_dir}",
            file=sys.stderr,
        )
    if not done.transfers_ok:
        print("error: a real transfer failed", file=sys.stderr)
    return 0 if balanced and done.transfers_ok else 1


def show_fairness(result, show: bool = False) -> None:
    """Print the run's fairness table (``summary["fairness"]``, computed by
    ``atmsim.run`` and written into summary.json with the rest) when asked and there
    are two entities or more, and the run's notes (the fairness not computed)."""
    from .columnar import table_file
    from .fairness import fairness_table
    from .tables import print_tables

    for note in result.notes:
        print(note, file=sys.stderr)
    report = result.summary.get("fairness")
    if show and report is not None and len(report["entities"]) > 1:
        print_tables([fairness_table(report, table_file(result.summary, "fairness"))])


def fairness_command(args: argparse.Namespace) -> int:
    """Each VC's or flow's achieved rate against its max-min fair rate (from the
    topology, the capacities and the demands) and the Jain index of the normalised
    rates; written into the run's summary.json as "fairness"."""
    from .fairness import (
        GFR_RULES,
        FairnessInputError,
        fairness_of_run_dir,
        fairness_table,
        rows_file,
        write_fairness,
    )
    from .tables import print_tables

    if args.gfr_rule not in GFR_RULES:
        raise CliError(f"--gfr-rule {args.gfr_rule}: expected one of {', '.join(GFR_RULES)}")
    try:
        report = fairness_of_run_dir(args.run_dir, args.gfr_rule)
    except FairnessInputError as error:
        raise CliError(str(error)) from None
    where = rows_file(args.run_dir)
    print_tables([fairness_table(report, where)])
    write_fairness(args.run_dir, report)
    if where == "summary.json":
        print(f"wrote the fairness into {args.run_dir / 'summary.json'}")
    else:
        print(f"wrote the fairness into {args.run_dir / 'summary.json'} and {args.run_dir / where}")
    return 0


def validate_command(args: argparse.Namespace) -> int:
    """Check a scenario (with any --set overrides) without running it."""
    scenario = resolve_scenario(args.scenario)
    loaded = load_scenario(scenario, args.sets or [])
    network = Network(loaded)
    made_by = f'template "{loaded.template["kind"]}": ' if loaded.template else ""
    print(
        f"ok: {scenario} ({made_by}{len(network.nodes)} nodes, {len(network.links)} links, "
        f"{len(network.vcs)} vcs, {len(network.sources)} sources, {len(network.flows)} flows)"
    )
    return 0


def plot_command(args: argparse.Namespace) -> int:
    """Plot a run's time series: queue.png, ip_queue.png, utilization.png, vc_rate.png,
    per TCP flow window.png, sequence.png, srtt.png, and for ABR acr.png, er.png,
    abr_queue.png, load_factor.png, fair_share.png."""
    from .plots import PlotInputError, plot_run_dir

    try:
        with working("drawing the figures"):
            written = plot_run_dir(args.run_dir)
    except PlotInputError as error:
        raise CliError(str(error)) from None
    for path in written:
        print(path)
    return 0


def reproduce_command(args: argparse.Namespace) -> int:
    """Run the papers' published experiments and compare: published and simulated
    values, tolerance and verdict per quantity; table.csv, figures and run files per
    experiment in OUT/<id>/, all rows in OUT/<seedNNN or selected>.csv. Exit 0 with the
    report whatever the verdicts; 1 if a conservation ledger does not balance."""
    from .reproduce.report import ReproduceInputError, main

    try:
        return main(
            args.ids or [],
            args.out,
            args.jobs,
            args.list_only,
            debug=_Options.debug,
            report=args.report,
            coverage=args.coverage,
        )
    except ReproduceInputError as error:
        raise CliError(str(error)) from None


def report_command(args: argparse.Namespace) -> int:
    """Write a static, self-contained HTML report (figures embedded) of a reproduce
    output (published against simulated, verdicts, figures, the misses' analysis), a
    sweep (metrics against parameters, mean and 95 % interval over the run seeds) or a run."""
    from .html_report import ReportInputError, write_report

    try:
        with working("writing the report"):
            path = write_report(args.directory, args.out)
    except ReportInputError as error:
        raise CliError(str(error)) from None
    print(path)
    return 0


def bench_command(args: argparse.Namespace) -> int:
    """Benchmarks, each the median of --runs runs with its spread: cells per second on
    mux_onoff, whole-process start-up and memory, the cost per cell against the number
    of VCs, and the IP dumbbell against ns-2 (paired runs)."""
    import json

    from .validation import bench

    if not bench.BENCH_SCENARIO.is_file():
        raise CliError(
            f"{bench.BENCH_SCENARIO}: no such file (the package data is missing: reinstall atmsim)"
        )
    runs, json_out = args.runs, args.json_out
    vcs = parse_scale(args.scale)
    if json_out is not None:
        from .outputs import OutDirError, check_out_file

        try:
            check_out_file(json_out)
        except OutDirError as error:
            raise CliError(f"--json {error}") from None
    report: dict = {"machine": bench.machine(), "runs": runs}
    print(bench.machine_line(report["machine"]))
    try:
        report["mux_onoff"] = bench.bench_cells(runs, echo=print)
        if args.general:
            report["general"] = bench.bench_general(runs, echo=print)
        if args.process:
            report["process"] = bench.bench_process(runs, echo=print)
        if vcs:
            report["scale"] = bench.bench_scale(runs, vcs, echo=print)
        if args.whole_scale is not None:
            report["whole_scale"] = bench.bench_whole_scale(args.whole_scale, runs=runs, echo=print)
        if args.memory:
            report["memory"] = bench.bench_memory(echo=print)
        if args.dumbbell:
            out = bench.bench_dumbbell(runs, process=args.process, echo=print)
            out["params"] = out["params"].scenario or "validation dumbbell"
            report["dumbbell"] = out
        if args.reproduce:
            report["reproduce"] = bench.bench_reproduce(echo=print)
    except RuntimeError as error:
        raise CliError(f"bench: {error}") from None
    if json_out is not None:
        from .outputs import naming, write_file

        with naming(json_out.parent):
            json_out.parent.mkdir(parents=True, exist_ok=True)
        write_file(json_out, json.dumps(report, indent=1, default=str) + "\n")
        print(f"figures written to {json_out}")
    return 0


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
        if n in counts:
            # The series pairs each round's runs by N: name each N once.
            raise CliError(f"--scale {text}: {n} given twice; name each VC count once")
        counts.append(n)
    return counts


def validate_model_command(args: argparse.Namespace) -> int:
    """Check the simulator against truths that do not come from its own runs (queueing
    theory, max-min fairness, TCP's ceilings and sawtooth, explicit-rate windows,
    RFC 1624, the papers' buffer claims), each over a grid of parameters: per grid
    point the simulated and theoretical values, the accepted range with its reason, and
    a verdict. The fast grids by default, the full ones with --full. Exit 0 when every
    truth passes, 1 when one fails (the table names the truth and the point)."""
    import shlex

    from .tables import RunProgress
    from .validation import truths

    try:
        chosen = truths.select(args.only)
    except truths.TruthInputError as error:
        raise CliError(str(error)) from None
    if args.out is not None:
        from .outputs import prepare_out_dir

        # Created and marked before the suite runs: a directory that cannot be
        # written, or one that is not atmsim's, is found before minutes of work.
        prepare_out_dir(args.out, "validate-model")
    jobs = args.jobs or os.cpu_count() or 1
    with RunProgress("validate-model") as progress:
        outcome = truths.run_suite(chosen, full=args.full, jobs=jobs, progress=progress)
    for line in truths.table_lines(outcome):
        print(line)
    if args.out is not None:
        command = shlex.join(["atmsim", "validate-model", *sys.argv[2:]])
        try:
            written = truths.write_outputs(outcome, args.out, command)
        except truths.TruthInputError as error:
            raise CliError(str(error)) from None
        print("wrote " + " and ".join(str(path) for path in written))
    return 1 if outcome.failed else 0


def examples_command(args: argparse.Namespace) -> int:
    """List the example scenarios and sweeps that ship with atmsim, or copy one out to
    start from: atmsim examples ubr_epd --to mine/."""
    from .resources import copy_example, description, examples, shipped, sweeps

    name, to = args.name, args.to
    if name is None:
        if to is not None:
            raise CliError("--to: name the example to copy (atmsim examples NAME --to DIR)")
        Table = rich.table.Table

        from .tables import rich_console

        # rich, for the descriptions folded in their column; as wide as the tables.
        console = rich_console()
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
            console.print(table)
        return 0
    if shipped(name) is None:
        known = ", ".join([*examples(), *sweeps()])
        raise CliError(f"examples: no shipped example {name!r}; choose from: {known}")
    try:
        written = copy_example(name, to if to is not None else Path("."))
    except FileExistsError as error:
        raise CliError(f"--to: {error}: exists; not overwritten") from None
    print(written)
    return 0


def sweep_command(args: argparse.Namespace) -> int:
    """Run a parameter study: a base scenario over a grid and/or zipped lists of --set
    keys and several run seeds; one row per run in OUT/results.parquet, each run's files in
    OUT/runs/<run id>/. Running it again on the same OUT runs only what is missing."""
    from .sweeps import SweepError, load_spec, run_sweep

    dask, ray, jobs = args.dask, args.ray, args.jobs
    if dask is not None and ray is not None:
        raise CliError("--dask and --ray: choose one executor")
    executor, address = "local", None
    if dask is not None:
        executor, address = "dask", (None if dask == LOCAL else dask)
    elif ray is not None:
        executor, address = "ray", (None if ray == LOCAL else ray)
    try:
        loaded = load_spec(args.spec)
        outcome = run_sweep(
            loaded,
            args.out,
            jobs=jobs,
            executor=executor,
            address=address,
            progress=False if args.no_progress else None,
            echo=print,
        )
    except SweepError as error:
        raise CliError(str(error)) from None
    except KeyboardInterrupt:
        print(
            "interrupted: the runs finished before are written, with results.parquet; "
            "the same command runs the rest",
            file=sys.stderr,
        )
        raise
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
    if counts and set(counts) <= {"invalid"}:  # nothing ran: say so, exit 1
        run_id, error = outcome.failures[0] if outcome.failures else ("", "")
        _error(f"every point of sweep {loaded.name} is invalid; the first ({run_id}): {error}")
        return 1
    return sweep_exit_code(counts, outcome.total, outcome.failures)


def sweep_exit_code(counts: dict, total: int, failures: list = ()) -> int:
    """1 when a run failed in the core or its ledgers do not balance (as ``atmsim run``
    and ``reproduce`` answer one such run), with a line on stderr saying how many; 0
    otherwise. Invalid points alone are part of the grid (docs/sweeps.md): 0, unless
    every point is invalid (above)."""
    failed = counts.get("failed", 0)
    unbalanced = counts.get("unbalanced", 0)
    if not failed and not unbalanced:
        return 0
    parts = []
    if failed:
        every = "every run" if failed + counts.get("invalid", 0) == total else None
        parts.append(f"{every} failed" if every else f"{failed} of {total} runs failed")
        if every and failures:
            run_id, error = failures[0]
            parts[-1] += f"; the first ({run_id}): {one_line(str(error))}"
    if unbalanced:
        parts.append(f"{unbalanced} of {total} runs do not balance their ledgers")
    print(f"sweep: {'; '.join(parts)} (status in results.parquet)", file=sys.stderr)
    return 1


# --- the parser -----------------------------------------------------------------------------

SET_HELP = (
    "Override a scenario key (repeatable), e.g. --set links.bottleneck.buffer=500 "
    'or --set "run.duration=5 s".'
)
SCENARIO_HELP = "Scenario file (TOML), or the name of a shipped example (atmsim examples)."
RUN_DIR_HELP = "A run directory."


COMMAND_NAMES = (
    "run",
    "fairness",
    "validate",
    "plot",
    "reproduce",
    "report",
    "bench",
    "validate-model",
    "examples",
    "sweep",
    "emulate",
)
"""The commands, in the order ``atmsim --help`` lists them (``build_parser``)."""


def _paragraph(command: Callable) -> str:
    """A command's docstring in one paragraph (argparse wraps it to the terminal)."""
    return " ".join((command.__doc__ or "").split())


def build_parser(only: Optional[str] = None) -> _Parser:
    """The ``atmsim`` command line: global options, then a command and its own; with
    ``only``, the parser of that command alone (``command_named``), which parses a
    command line naming it as the whole parser would."""
    parser = _Parser(prog="atmsim", description=DESCRIPTION, allow_abbrev=False)
    parser.add_argument(
        "--debug",
        action="store_true",
        help="On an internal error, show the full traceback instead of one line.",
    )
    parser.add_argument("--version", action=_Version, help="Print the atmsim version and exit.")
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=_Parser, required=True
    )

    def wanted(name: str) -> bool:
        return only is None or name == only

    def command(name: str, function: Callable, summary: str) -> _Parser:
        sub = commands.add_parser(
            name, help=summary, description=_paragraph(function), allow_abbrev=False
        )
        sub.set_defaults(handler=function)
        return sub

    if wanted("run"):
        run = command(
            "run", run_command, "Run a scenario and write its results to a run directory."
        )
        run.add_argument("scenario", type=Path, metavar="SCENARIO", help=SCENARIO_HELP)
        run.add_argument(
            "--out",
            type=Path,
            metavar="DIR",
            help="Run directory: a new or empty directory, or an earlier run's (marked .atmsim) "
            "(default: runs/<scenario>-<YYYYmmdd-HHMMSS>).",
        )
        run.add_argument("--seed", type=int, metavar="N", help="Replace run.seed.")
        run.add_argument("--set", dest="sets", action="append", metavar="KEY=VALUE", help=SET_HELP)
        run.add_argument("--no-progress", action="store_true", help="Never show a progress bar.")
        run.add_argument(
            "--capture",
            action="append",
            metavar="NAME",
            help="Capture the packets of a link or node as pcap files (capture/NAME.pcap, "
            "and capture/NAME.drops.pcap for its drops) for Wireshark or tshark; "
            "repeatable. Replaces probes.capture.",
        )
        run.add_argument(
            "--capture-limit",
            metavar="SIZE",
            help='The largest size of each capture file (default "100 MB"); replaces '
            "probes.capture_limit.",
        )
        run.add_argument(
            "--fast-paths",
            action=argparse.BooleanOptionalAction,
            help="Replace run.fast_paths: --no-fast-paths sends every cell and packet "
            "through the plain event path (same results, more events).",
        )

    if wanted("fairness"):
        fair = command(
            "fairness",
            fairness_command,
            "Achieved against max-min fair rates, and the Jain index, of a run.",
        )
        fair.add_argument("run_dir", type=Path, metavar="RUN_DIR", help=RUN_DIR_HELP)
        fair.add_argument(
            "--gfr-rule",
            default="proportional",
            help='GFR VCs share in proportion to their MCRs ("proportional", the default) or '
            'get their MCR plus an equal share ("equal").',
        )

    if wanted("validate"):
        validate = command("validate", validate_command, "Check a scenario without running it.")
        validate.add_argument("scenario", type=Path, metavar="SCENARIO", help=SCENARIO_HELP)
        validate.add_argument(
            "--set", dest="sets", action="append", metavar="KEY=VALUE", help=SET_HELP
        )

    if wanted("plot"):
        plot = command("plot", plot_command, "Plot a run's time series.")
        plot.add_argument("run_dir", type=Path, metavar="RUN_DIR", help=RUN_DIR_HELP)

    if wanted("reproduce"):
        reproduce = command(
            "reproduce", reproduce_command, "Run the papers' published experiments and compare."
        )
        reproduce.add_argument(
            "ids",
            nargs="*",
            metavar="ID",
            help="Experiment ids (seed000-sec8, ...) or papers (seed000, seed002, seed003); "
            "none: list them.",
        )
        reproduce.add_argument(
            "--out",
            type=Path,
            default=Path("runs/reproduce"),
            help="Output directory, one folder per experiment: a new or empty directory, "
            "or an earlier reproduce --out (default: runs/reproduce).",
        )
        reproduce.add_argument(
            "--list", dest="list_only", action="store_true", help="List the experiments and exit."
        )
        reproduce.add_argument(
            "--jobs", type=_at_least_1, help="Experiments run at once (default: the cores)."
        )
        reproduce.add_argument(
            "--report",
            action="store_true",
            help="At the end, write OUT/report.html (atmsim report).",
        )
        reproduce.add_argument(
            "--coverage",
            action="store_true",
            help="Count, per document, the published results of the inventory, those a row "
            "judges (with their verdicts in OUT, an earlier reproduce --out) and those none "
            "does; runs nothing.",
        )

    if wanted("report"):
        report = command(
            "report",
            report_command,
            "Write an HTML report of a reproduce output, a sweep or a run.",
        )
        report.add_argument(
            "directory",
            type=Path,
            metavar="DIR",
            help="A reproduce --out, a sweep --out, or a run directory.",
        )
        report.add_argument(
            "--out", type=Path, help="The HTML file to write (default: DIR/report.html)."
        )

    if wanted("bench"):
        bench = command("bench", bench_command, "Benchmarks: speed, start-up, scale, memory, ns-2.")
        bench.add_argument(
            "--runs",
            "--repeat",
            type=_at_least_1,
            default=5,
            help="Runs of each benchmark; every figure is their median with min and max "
            "(default: 5).",
        )
        bench.add_argument(
            "--dumbbell",
            action=argparse.BooleanOptionalAction,
            default=True,
            help="The IP dumbbell, alternating with ns-2 when ns-2 is installed (default: on).",
        )
        bench.add_argument(
            "--general",
            action=argparse.BooleanOptionalAction,
            default=True,
            help="The general path: mux_onoff with every fast path off, and TCP over ABR, "
            "UBR and GFR at cell level on the papers' configurations (default: on).",
        )
        bench.add_argument(
            "--reproduce",
            action="store_true",
            help="Also time atmsim reproduce of all five papers on 2 workers (minutes).",
        )
        bench.add_argument(
            "--process",
            action=argparse.BooleanOptionalAction,
            default=True,
            help="Whole atmsim processes: validate, a 1 ms run, mux_onoff (and the dumbbell) "
            "(default: on).",
        )
        bench.add_argument(
            "--scale",
            default="10,100,1000,10000,100000",
            metavar="N,N,...",
            help="Numbers of on/off VCs on one OC-48 port for the scale series; 'none' leaves "
            "it out (default: 10,100,1000,10000,100000).",
        )
        bench.add_argument(
            "--whole-scale",
            type=_vc_count,
            metavar="N",
            help="Also run whole 'atmsim run' processes of N on/off VCs on one OC-48 port over "
            "1 s and 10 s simulated: wall and CPU against simulated time, peak memory, "
            "set-up before the loop.",
        )
        bench.add_argument(
            "--memory",
            action="store_true",
            help="Also measure the core's memory per VC and per cell in flight, and that it "
            "stays flat over a 3000 s run (about a minute).",
        )
        bench.add_argument(
            "--json",
            dest="json_out",
            type=Path,
            help="Also write every figure and the machine to this file.",
        )

    if wanted("validate-model"):
        model = command(
            "validate-model",
            validate_model_command,
            "Check the model against theory (queueing, fairness, TCP, RFC 1624) over grids.",
        )
        model.add_argument(
            "--full", action="store_true", help="The full grids (minutes) instead of the fast ones."
        )
        model.add_argument(
            "--jobs", type=_at_least_1, help="Simulations at once (default: the cores)."
        )
        model.add_argument(
            "--out",
            type=Path,
            metavar="DIR",
            help="Also write DIR/truths.csv (every checked point) and DIR/truths.json.",
        )
        model.add_argument(
            "--only",
            nargs="+",
            metavar="NAME",
            help="Only these truths (by name, as the table shows them).",
        )

    if wanted("examples"):
        examples = command(
            "examples", examples_command, "List the shipped examples, or copy one out."
        )
        examples.add_argument(
            "name",
            nargs="?",
            metavar="NAME",
            help="A shipped example or sweep to copy out (with --to); none: list them.",
        )
        examples.add_argument(
            "--to",
            type=Path,
            help="Directory to copy NAME into (created), or a file name ending in .toml "
            "(default: the current directory).",
        )

    if wanted("sweep"):
        sweep = command(
            "sweep", sweep_command, "Run a parameter study over a grid of keys and run seeds."
        )
        sweep.add_argument(
            "spec",
            type=Path,
            metavar="SPEC",
            help="Sweep specification (TOML, docs/sweeps.md), or a shipped sweep's name.",
        )
        sweep.add_argument(
            "--out",
            type=Path,
            help="Output directory: new, empty, or an earlier sweep's (which resumes it). "
            "Default: runs/sweep-<name>.",
        )
        sweep.add_argument("--jobs", type=_at_least_1, help="Runs at once (default: the cores).")
        sweep.add_argument(
            "--dask",
            metavar="[ADDRESS]",
            help="Run on Dask: the scheduler at ADDRESS, or a LocalCluster of --jobs workers "
            "when none is given.",
        )
        sweep.add_argument(
            "--ray",
            metavar="[ADDRESS]",
            help="Run on Ray: the cluster at ADDRESS (auto: a running one), or a local instance "
            "of --jobs CPUs when none is given.",
        )
        sweep.add_argument(
            "--no-progress", action="store_true", help="A line per run instead of a progress bar."
        )
    if wanted("emulate"):
        emu = command(
            "emulate",
            emulate_command,
            "Run a scenario in real time with real Linux hosts and TCP (needs root).",
        )
        emu.add_argument("scenario", type=Path, metavar="SCENARIO", help=SCENARIO_HELP)
        emu.add_argument(
            "--flow",
            dest="flows",
            action="append",
            metavar="NAME",
            help="A flow whose ends become real hosts (repeatable; default: the flows between "
            "the hosts the scenario marks real = true, or every flow when it marks none).",
        )
        emu.add_argument(
            "--bytes",
            type=_at_least_1,
            default=1_000_000,
            metavar="N",
            help="Bytes each real flow sends (default 1000000).",
        )
        emu.add_argument(
            "--cc",
            action="append",
            metavar="[FLOW=]NAME",
            help="The Linux congestion control of every real flow, or of FLOW: reno or cubic; "
            "repeatable (default: each flow's congestion_control, else cubic).",
        )
        emu.add_argument(
            "--out",
            type=Path,
            metavar="DIR",
            help="Run directory, as for atmsim run (default: runs/<scenario>-<YYYYmmdd-HHMMSS>).",
        )
        emu.add_argument("--seed", type=int, metavar="N", help="Replace run.seed.")
        emu.add_argument("--set", dest="sets", action="append", metavar="KEY=VALUE", help=SET_HELP)
        emu.add_argument(
            "--max-lateness-ms",
            type=float,
            default=1.0,
            metavar="MS",
            help="A datagram written later than this after its simulated arrival counts as "
            "late; the run says it fell behind when one is (default 1).",
        )
        emu.add_argument(
            "--mtu", type=int, default=1500, help="MTU of the TUN devices (default 1500)."
        )
        emu.add_argument(
            "--traffic",
            default="own",
            help='The transfers: "own" (atmsim\'s sender and receiver, every byte checked '
            'by its SHA-256; the default) or "iperf3" (its byte counts; iperf3 installed).',
        )
    return parser


GLOBAL_FLAGS = ("--debug",)
"""The global options that may stand before the command and take no value."""


def command_named(argv: list[str]) -> Optional[str]:
    """The command a command line names: its first word after the global flags, if that
    is a command's name; else None (no command, ``--help``, ``--version``, a word that
    is no command), when the whole parser is needed, to answer or to list the commands.
    Building the parser of every command costs more than parsing a command line, so
    ``main`` builds only the one named."""
    for word in argv:
        if word not in GLOBAL_FLAGS:
            return word if word in COMMAND_NAMES else None
    return None


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


BROKEN_PIPE = 141
"""The exit code when stdout's reader has gone (128 + SIGPIPE, as a shell reports it)."""


def _stdout_gone() -> int:
    """Points stdout at /dev/null, so that flushing it at exit raises nothing more."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return BROKEN_PIPE


STDOUT_CLOSED = "stdout is closed: nothing was printed (the command's files are written)"


def _open_stdout() -> bool:
    """True if stdout is open. Started with it closed (``atmsim run ... >&-``), Python
    has no ``sys.stdout``: it is pointed at /dev/null so that the command runs and
    writes its files, and ``main`` then says that its output was lost."""
    if sys.stdout is not None:
        return True
    sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (lives to exit)
    return False


class StdoutError(OSError):
    """stdout could not be written (a full disk, an I/O error): see ``_NamedStdout``."""


class _NamedStdout(io.BufferedWriter):
    """stdout's buffer, whose failed writes raise StdoutError: told apart from a file's
    OSError, the CLI says that the output, not a file, was lost. A broken pipe stays a
    BrokenPipeError (exit 141)."""

    unbuffered = False
    """True under ``python -u`` or PYTHONUNBUFFERED: every write is flushed at once."""

    def write(self, data) -> int:  # type: ignore[override]
        try:
            written = super().write(data)
            if self.unbuffered:
                super().flush()
            return written
        except BrokenPipeError:
            raise
        except OSError as error:
            raise StdoutError(error.errno, error.strerror or str(error)) from None

    def flush(self) -> None:
        try:
            super().flush()
        except BrokenPipeError:
            raise
        except OSError as error:
            raise StdoutError(error.errno, error.strerror or str(error)) from None


def _name_stdout() -> None:
    """Put ``_NamedStdout`` under the process's own stdout (not under a stream a caller
    put in its place, such as pytest's capture)."""
    stream = sys.stdout
    if stream is not sys.__stdout__ or not isinstance(stream, io.TextIOWrapper):
        return
    buffer = stream.buffer
    if isinstance(buffer, _NamedStdout):
        return
    unbuffered = isinstance(buffer, io.FileIO)  # python -u: no buffer over the file
    try:
        fd = stream.fileno()
    except (OSError, ValueError):
        return
    stream.flush()
    # A file object of its own on descriptor 1 (never closing it): the old stream's
    # would be closed with that stream when it is collected.
    named = _NamedStdout(io.FileIO(fd, "w", closefd=False))
    named.unbuffered = unbuffered
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(
        named,
        encoding=stream.encoding,
        errors=stream.errors,
        line_buffering=stream.line_buffering,
        write_through=unbuffered,
    )


@contextlib.contextmanager
def working(what: str) -> Iterator[None]:
    """A spinner on stderr, when it is a terminal, while ``what`` takes its seconds
    (``atmsim plot``, ``atmsim report``); nothing otherwise."""
    if not sys.stderr.isatty():
        yield
        return
    with rich.console.Console(stderr=True).status(what + " ..."):
        yield


def _error(message: str) -> None:
    print(f"error: {message}".replace("\n", " "), file=sys.stderr)


def main(argv: Optional[list[str]] = None) -> None:
    """Entry point of the ``atmsim`` command (through ``atmsim._entry``) and of
    ``python -m atmsim``: run the command, turn every failure into an exit code and
    at most one line on stderr."""
    _Options.debug = False
    argv = _optional_values(list(sys.argv[1:] if argv is None else argv))
    stdout_open = _open_stdout()
    _name_stdout()
    try:
        args = build_parser(command_named(argv)).parse_args(argv)
        _Options.debug = args.debug
        code = args.handler(args)
        # Written out here, not at exit: a stdout that cannot take the tables (a full
        # disk) is then answered below like any other failure, in one line.
        sys.stdout.flush()
    except _Done as done:
        code = done.code
    except SystemExit as done:  # --help
        code = done.code
    except UsageError as error:  # bad flag, missing argument, unknown command
        _error(str(error))
        code = 2
    except _loaded("outputs", "OutDirError") as error:
        _error(f"--out {error}")
        code = 2
    except (ScenarioError, CliError) as error:
        _error(str(error))
        code = 2
    except _loaded("results", "RunDirError") as error:  # report, plot: not a whole run
        _error(str(error))
        code = 2
    except BrokenPipeError:  # stdout's reader left (atmsim examples | head): quietly
        code = _stdout_gone()
    except OSError as error:  # e.g. an --out directory that cannot be written
        if isinstance(error, StdoutError):
            # stdout cannot take the output (a full disk): said on stderr; the command's
            # files are written, as when stdout's reader leaves.
            _stdout_gone()
            _error(f"stdout: {error.strerror}: output lost (the command's files are written)")
        else:
            _error(os_error_message(error))
        code = 2
    except _loaded("api", "CoreUnavailable") as error:
        _error(str(error))
        code = 1
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM (atmsim.workers): 130 or 143
        from .workers import exit_code

        code = exit_code()
    except Exception as error:
        if _Options.debug:
            import traceback

            traceback.print_exc()
        else:
            _error(internal_error_message(error))
        code = 1
    if not stdout_open:  # the command ran; its output had nowhere to go
        _error(STDOUT_CLOSED)
        code = code or 2
    sys.exit(code or 0)
