"""What a new user meets first: atmsim --version, the shipped examples (listed, copied out,
run by name), the note that a run seed changes nothing, tables that fit 80 columns."""

from __future__ import annotations

import importlib.metadata
import io
import json
import os
import re
import subprocess
import sys

import pytest

import atmsim
from atmsim.determinism import seed_dependence
from atmsim.resources import examples, reproduce_dir, resolve_scenario, scenario_dir, sweeps
from atmsim.results import result_tables
from atmsim.scenario import load_scenario, to_core
from atmsim.tables import fit, print_tables

from conftest import REPO, SCENARIOS, TINY, cli_env, cli_main, needs_core, write


def test_version(capsys):
    # The core's version (asked first: cheap) is the installed package's.
    assert atmsim.__version__ == importlib.metadata.version("atmsim")
    assert cli_main("--version") == 0
    assert capsys.readouterr().out == f"atmsim {atmsim.__version__}\n"
    # Eager, as a global option: before any command's own checks.
    assert cli_main("--version", "run") == 0
    assert capsys.readouterr().out == f"atmsim {atmsim.__version__}\n"


def test_help_lists_every_command_and_its_options(capsys):
    assert cli_main("--help") == 0
    out = capsys.readouterr().out
    for command in ("run", "validate", "plot", "reproduce", "report", "bench", "sweep"):
        assert f"\n    {command}" in out
    assert cli_main("run", "--help") == 0
    out = capsys.readouterr().out
    for option in ("--out DIR", "--seed N", "--set KEY=VALUE", "--no-fast-paths", "SCENARIO"):
        assert option in out
    assert cli_main("bench", "--help") == 0
    assert "--no-dumbbell" in capsys.readouterr().out


def test_options_are_never_abbreviated(tiny_path, capsys):
    # argparse would take --no-prog for --no-progress: a typo must not run.
    assert cli_main("run", str(tiny_path), "--no-prog") == 2
    assert capsys.readouterr().err.startswith("error: unrecognized arguments: --no-prog")


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "a.toml", "--set", "run.seed=2"],
        ["--debug", "run", "a.toml", "--no-fast-paths", "--seed", "3"],
        ["sweep", "spec.toml", "--dask", "local", "--jobs", "2"],
        ["bench", "--runs", "3", "--no-dumbbell", "--scale", "none"],
        ["validate-model", "--only", "md1", "lindley"],
        ["examples"],
        ["reproduce", "seed000", "--list"],
    ],
)
def test_the_parser_of_the_named_command_parses_as_the_whole_one(argv):
    """``main`` builds the parser of the command the line names (cheaper than every
    command's): it reads the line as the whole parser does."""
    from atmsim.cli import COMMAND_NAMES, build_parser, command_named

    named = command_named(argv)
    assert named in COMMAND_NAMES
    assert vars(build_parser(named).parse_args(argv)) == vars(build_parser().parse_args(argv))


def test_every_command_has_a_name_and_a_parser_of_its_own():
    from atmsim.cli import COMMAND_NAMES, UsageError, build_parser, command_named

    listed = re.findall(r"^    (\S+)", build_parser().format_help(), re.MULTILINE)
    assert listed == list(COMMAND_NAMES)
    for name in COMMAND_NAMES:
        parser = build_parser(name)
        assert re.findall(r"^    (\S+)", parser.format_help(), re.MULTILINE) == [name]
        for other in set(COMMAND_NAMES) - {name}:
            with pytest.raises(UsageError, match="invalid choice"):
                parser.parse_args([other])
        assert command_named(["--debug", name, "--help"]) == name
    for argv in ([], ["--help"], ["--version", "run"], ["frobnicate"], ["-h", "run"]):
        assert command_named(argv) is None  # the whole parser answers or lists them


@pytest.fixture
def tiny_path(tmp_path):
    return write(tmp_path, TINY, "tiny.toml")


@needs_core
def test_a_reader_that_leaves_early_is_no_error(tiny_path, tmp_path):
    """``atmsim run ... | head -1``: the tables meet a closed pipe; the command ends
    quietly with 141 (128 + SIGPIPE, as a shell says it), its files written."""
    out = tmp_path / "r"
    command = [sys.executable, "-m", "atmsim", "run", str(tiny_path), "--no-progress"]
    process = subprocess.Popen(
        [*command, "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli_env(),
    )
    process.stdout.close()  # before the first table: every write meets a closed pipe
    error = process.stderr.read()
    assert (process.wait(timeout=60), error) == (141, b"")
    assert (out / "summary.json").is_file()


@pytest.mark.parametrize("listing", [["examples"], ["reproduce"]])
def test_a_reader_that_leaves_a_rich_listing_is_no_error(listing):
    """The listings drawn with rich (``atmsim examples | head -1``) end as the others
    do on a closed pipe: quietly, 141 (rich's own answer was exit 1)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "atmsim", *listing],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli_env(),
    )
    process.stdout.close()
    error = process.stderr.read()
    assert (process.wait(timeout=60), error) == (141, b"")


@needs_core
@pytest.mark.parametrize("unbuffered", ["1", ""])
def test_a_closed_or_full_stdout_is_one_line_and_exit_2(tiny_path, tmp_path, unbuffered):
    """``atmsim run ... >&-`` ended in AttributeError after the run, and a full stdout
    lost the tables: each is one line on stderr, exit 2, the run's files written."""
    env = {**cli_env(), "PYTHONUNBUFFERED": unbuffered}
    command = [sys.executable, "-m", "atmsim", "run", str(tiny_path), "--no-progress"]
    closed = tmp_path / "closed"
    done = subprocess.run(
        [*command, "--out", str(closed)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
        timeout=60,
        preexec_fn=lambda: os.close(1),
    )
    assert (done.returncode, done.stderr) == (
        2,
        "error: stdout is closed: nothing was printed (the command's files are written)\n",
    )
    assert (closed / "summary.json").is_file() and not (closed / "INCOMPLETE").exists()
    full = tmp_path / "full"
    with open("/dev/full", "w") as device:
        done = subprocess.run(
            [*command, "--out", str(full)],
            stdout=device,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
            timeout=60,
        )
    assert (done.returncode, done.stderr) == (
        2,
        "error: stdout: No space left on device: output lost (the command's files are written)\n",
    )
    assert (full / "summary.json").is_file() and not (full / "INCOMPLETE").exists()
    for listing in (["examples"], ["validate", str(tiny_path)]):
        with open("/dev/full", "w") as device:
            done = subprocess.run(
                [sys.executable, "-m", "atmsim", *listing],
                stdout=device,
                stderr=subprocess.PIPE,
                env=env,
                text=True,
                timeout=60,
            )
        assert done.returncode == 2 and done.stderr.startswith("error: stdout: No space")


PLUGINS = """\
import os, sys
from atmsim._entry import main
try:
    main()
except SystemExit:
    pass
loader = sys.modules["pydantic.plugin._loader"]
setting = os.environ.get("PYDANTIC_DISABLE_PLUGINS")
print(setting, list(loader.get_plugins()), loader.__file__ is not None)
"""


@pytest.mark.parametrize(
    ("setting", "expected"),
    [(None, "__all__ [] True"), ("", " [] True"), ("__all__", "__all__ [] True")],
)
def test_the_command_disables_pydantic_plugins_unless_told(tiny_path, setting, expected):
    """The command runs as with PYDANTIC_DISABLE_PLUGINS=__all__ (pydantic's own switch:
    no scan of the installed packages for plugins, about 10 ms of its start-up), unless
    that variable is set; pydantic's plugin loader is its own module."""
    env = cli_env()
    env.pop("PYDANTIC_DISABLE_PLUGINS", None)
    if setting is not None:
        env["PYDANTIC_DISABLE_PLUGINS"] = setting
    done = subprocess.run(
        [sys.executable, "-c", PLUGINS, "validate", str(tiny_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    ok, answer = done.stdout.splitlines()
    assert ok.startswith("ok: ")
    assert answer == expected


GC = """\
import gc, sys
from atmsim._entry import main
if sys.argv.pop(1) == "off":
    gc.disable()
try:
    main()
except SystemExit as done:
    assert done.code == 0, done.code
print(gc.isenabled(), gc.get_freeze_count() > 10_000)
"""


@pytest.mark.parametrize(("before", "after"), [("on", "True"), ("off", "False")])
def test_the_command_freezes_what_loading_the_cli_made(tiny_path, before, after):
    """The cyclic collector waits while the CLI loads (pydantic's schemas, the scenario
    models), then leaves those objects out of its walks; it is left as it was found."""
    done = subprocess.run(
        [sys.executable, "-c", GC, before, "validate", str(tiny_path)],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    ok, answer = done.stdout.splitlines()
    assert ok.startswith("ok: ")
    assert answer == f"{after} True"


def test_package_data_is_the_scenarios_directory():
    # scenarios/ in the checkout is a symbolic link to the package data: one copy
    assert (REPO / "scenarios").resolve() == scenario_dir().resolve()
    assert "ubr_epd" in examples() and "mux_onoff" in examples()
    assert (reproduce_dir() / "seed000-sec8.toml").is_file()
    assert "tbe_buffer" in sweeps()


def test_examples_list_and_copy(tmp_path, capsys):
    assert cli_main("examples") == 0
    listed = capsys.readouterr().out
    for name in ("ubr_epd", "mux_onoff", "abr_gfc2", "tbe_buffer"):
        assert name in listed
    assert cli_main("examples", "ubr_epd", "--to", str(tmp_path / "mine")) == 0
    copied = tmp_path / "mine" / "ubr_epd.toml"
    assert capsys.readouterr().out.strip() == str(copied)
    assert copied.read_text() == (SCENARIOS / "ubr_epd.toml").read_text()
    assert cli_main("examples", "ubr_epd", "--to", str(tmp_path / "mine")) == 2  # no overwrite
    assert "exists; not overwritten" in capsys.readouterr().err
    assert cli_main("examples", "nothing") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: examples: no shipped example 'nothing'; choose from: ")


def test_a_bare_name_runs_the_shipped_example(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert resolve_scenario("ubr_epd") == examples()["ubr_epd"]
    assert resolve_scenario("ubr_epd.toml") == examples()["ubr_epd"]
    write(tmp_path, TINY, "ubr_epd.toml")  # a file of that name wins
    assert resolve_scenario("ubr_epd.toml").resolve() == (tmp_path / "ubr_epd.toml").resolve()
    assert resolve_scenario("missing.toml").name == "missing.toml"


@needs_core
def test_validate_and_run_by_name(tmp_path, capsys):
    assert cli_main("validate", "md1") == 0
    assert capsys.readouterr().out.startswith("ok: ")
    assert cli_main("run", "md1", "--set", "run.duration=0.1 s", "--out", str(tmp_path / "r")) == 0
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["scenario"] == "md1"


def test_seed_dependence_is_decided_conservatively():
    def core(name: str, *overrides: str) -> dict:
        return to_core(load_scenario(SCENARIOS / name, list(overrides)))

    assert seed_dependence(core("ip_dumbbell.toml")) == []  # IP, tail drop, no jitter
    assert seed_dependence(core("md1.toml"))  # Poisson cells
    assert seed_dependence(core("ubr_tcp.toml"))  # ties among cells at a port
    assert seed_dependence(core("ubr_tcp.toml", "run.arbitration=scheduling_order")) == []
    red = core("ip_dumbbell.toml", 'links.r1-r2.policy={kind = "red", min_th = 5}')
    assert any("RED" in reason or "red" in reason for reason in seed_dependence(red))


@needs_core
def test_the_seed_note_is_printed_only_when_the_seed_cannot_matter(tmp_path, capsys):
    args = ("--set", "run.duration=1 s", "--seed", "7")
    assert cli_main("run", "ip_dumbbell", *args, "--out", str(tmp_path / "a")) == 0
    assert "note: --seed 7 changes nothing here" in capsys.readouterr().err
    assert cli_main("run", "md1", *args, "--out", str(tmp_path / "b")) == 0
    assert "note:" not in capsys.readouterr().err
    # and it is true: another run seed gives the same summary
    one = atmsim.run(SCENARIOS / "ip_dumbbell.toml", seed=1, progress=False)
    seven = atmsim.run(SCENARIOS / "ip_dumbbell.toml", seed=7, progress=False)
    for summary in (one.summary, seven.summary):
        for key in ("seed", "wall_s", "events"):
            summary.pop(key)
    assert one.summary == seven.summary


@needs_core
def test_tables_fit_80_columns_without_cutting_numbers():
    result = atmsim.run(SCENARIOS / "ubr_tcp.toml", progress=False, overrides=["run.duration=1 s"])
    printed = io.StringIO()
    print_tables(result_tables(result.summary), width=80, file=printed)
    text = printed.getvalue()
    assert "…" not in text and "\x1b" not in text  # not a terminal: no styles
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "Ports (1/2)" in text and "Ports (2/2)" in text
    cells_in = next(p for p in result.summary["ports"] if p["name"] == "sw1-sw2")["cells_in"]
    assert f"{cells_in:,}" in text  # whole, on one line
    assert len(fit(result_tables(result.summary)[0], 200)) == 1


@needs_core
def test_queue_figures_add_a_smoothed_mean_and_the_distribution(tmp_path, capsys):
    out = tmp_path / "mux"
    assert cli_main("run", "mux_onoff", "--set", "run.duration=3 s", "--out", str(out)) == 0
    capsys.readouterr()
    assert cli_main("plot", str(out)) == 0
    written = capsys.readouterr().out.split()
    assert str(out / "queue.png") in written and str(out / "queue_ccdf.png") in written
    assert (out / "queue_ccdf.png").stat().st_size > 10_000
