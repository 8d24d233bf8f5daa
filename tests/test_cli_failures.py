"""How the CLI fails: an internal error is one line and exit 1 (the traceback only with
--debug), and Ctrl-C at any moment, start-up included, is exit 130 without a
traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import atmsim
from atmsim import cli, results
from atmsim.failures import internal_error_message, os_error_message

from conftest import CORE_BUILT, TINY, cli_env, cli_main, needs_core, write

HINT = "(please report it; run with --debug for the traceback)"


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return write(tmp_path, TINY, "tiny.toml")


# --- internal errors ----------------------------------------------------------------------


def test_core_exception_is_one_line_and_keeps_the_scenario(
    faulty, tiny: Path, tmp_path: Path, capsys
) -> None:
    """A Rust panic (RuntimeError "internal error: ...") in the third slice: one line,
    "internal error:" said once, exit 1, and the run dir keeps scenario.toml."""
    faulty.Simulation.fail_at_slice = 3
    out = tmp_path / "r"
    assert cli_main("run", str(tiny), "--out", str(out)) == 1
    captured = capsys.readouterr()
    assert captured.err == (
        "error: internal error: RuntimeError: panicked at "
        f"crates/atmsim-core/src/engine.rs:1:1: injected fault {HINT}\n"
    )
    # the mark of atmsim's directories, and of a run that did not finish
    assert sorted(path.name for path in out.iterdir()) == [".atmsim", "INCOMPLETE", "scenario.toml"]
    atmsim.load_scenario(out / "scenario.toml")  # the case to rerun and report


def test_debug_shows_the_traceback(faulty, tiny: Path, tmp_path: Path, capsys) -> None:
    faulty.Simulation.fail_at_slice = 3
    out = tmp_path / "r"
    assert cli_main("--debug", "run", str(tiny), "--out", str(out)) == 1
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):")
    assert err.rstrip().endswith(f"RuntimeError: {faulty.PANIC}")
    assert "please report" not in err
    assert sorted(path.name for path in out.iterdir()) == [".atmsim", "INCOMPLETE", "scenario.toml"]


@needs_core
def test_a_python_bug_is_one_line(monkeypatch, tiny: Path, tmp_path: Path, capsys) -> None:
    monkeypatch.setattr(results, "result_tables", lambda summary: 1 / 0)
    out = tmp_path / "r"
    assert cli_main("run", str(tiny), "--out", str(out)) == 1
    captured = capsys.readouterr()
    assert captured.err == f"error: internal error: ZeroDivisionError: division by zero {HINT}\n"
    assert (out / "summary.json").is_file()  # the run was over before the tables


BUG = """\
import sys
from atmsim import results
results.result_tables = lambda summary: {}["no such key"]
sys.argv = ["atmsim", *sys.argv[1:]]
from atmsim._entry import main
main()
"""
"""The command, as its console script starts it, with a bug in the tables."""


@needs_core
@pytest.mark.parametrize("debug", [False, True])
def test_internal_error_in_a_real_process(tiny: Path, tmp_path: Path, debug: bool) -> None:
    args = [*(["--debug"] if debug else []), "run", str(tiny), "--out", str(tmp_path / "r")]
    done = subprocess.run(
        [sys.executable, "-c", BUG, *args],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    if debug:
        assert "Traceback (most recent call last)" in done.stderr
        assert done.stderr.rstrip().endswith("KeyError: 'no such key'")
    else:
        assert done.stderr == f"error: internal error: KeyError: 'no such key' {HINT}\n"


def test_internal_error_message() -> None:
    panic = RuntimeError("internal error: index out of bounds:\n  the len is 3 but the index is 7")
    assert internal_error_message(panic) == (
        "internal error: RuntimeError: index out of bounds: the len is 3 but the index is 7 " + HINT
    )
    assert internal_error_message(ValueError()) == f"internal error: ValueError {HINT}"
    assert internal_error_message(KeyError("x")) == f"internal error: KeyError: 'x' {HINT}"


def test_os_error_message() -> None:
    error = PermissionError(13, "Permission denied", "/srv/runs/x")
    assert os_error_message(error) == "/srv/runs/x: Permission denied"
    assert os_error_message(OSError("disk\nfull")) == "disk full"


def test_debug_is_a_global_option(tiny: Path, capsys) -> None:
    assert cli_main("validate", "--debug", str(tiny)) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unrecognized arguments: --debug") and err.count("\n") == 1


# --- a full disk, files that are not atmsim's -----------------------------------------------

PROBES = '[probes]\nperiod = "1 ms"\nqueue = "all"\n'


class _FullDisk:
    """``open`` for atmsim.outputs whose files of one name take no byte: ENOSPC."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, path, mode="r", *args, **kwargs):
        handle = open(path, mode, *args, **kwargs)
        if Path(path).name.startswith(f".{self.name}.") and "w" in mode:
            handle.close()
            raise OSError(28, "No space left on device")
        return handle


@pytest.mark.parametrize("name", ["summary.json", "scenario.toml"])
def test_a_full_disk_names_the_file_and_leaves_the_run_incomplete(
    faulty, tmp_path: Path, monkeypatch, capsys, name: str
) -> None:
    """ENOSPC while a run directory is written: one line naming the file, exit 2, and a
    directory that report, fairness and plot refuse as incomplete (summary.json is
    written last, the INCOMPLETE mark removed after it)."""
    from atmsim import outputs

    scenario = write(tmp_path, TINY + PROBES, "tiny.toml")
    out = tmp_path / "r"
    monkeypatch.setattr(outputs, "open", _FullDisk(name), raising=False)
    assert cli_main("run", str(scenario), "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert err == f"error: {out / name}: No space left on device\n"
    assert (out / "INCOMPLETE").is_file() and not (out / "summary.json").exists()
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    monkeypatch.undo()
    for command in ("report", "fairness", "plot"):
        assert cli_main(command, str(out)) == 2
        assert capsys.readouterr().err == (
            f"error: {out}: an incomplete run directory (it holds INCOMPLETE: the run was "
            "stopped or failed before all its files were written); run it again\n"
        )


# --- Ctrl-C -------------------------------------------------------------------------------


def test_ctrl_c_outside_a_run_exits_130_quietly(monkeypatch, tiny: Path, capsys) -> None:
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "load_scenario", interrupted)
    assert cli_main("validate", str(tiny)) == 130
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


START_UP = """\
import os, signal, sys

class Interrupt:
    \"\"\"Ctrl-C while {module} is being imported.\"\"\"

    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            sys.meta_path.remove(self)
            {action}
        return None

sys.meta_path.insert(0, Interrupt())
sys.argv = ["atmsim", *sys.argv[1:]]
{launch}
"""

LAUNCHERS = {
    "python -m atmsim": "import runpy; runpy.run_module('atmsim', run_name='__main__')",
    "console script": "from atmsim._entry import main; sys.exit(main())",
}
ACTIONS = {
    "SIGINT": "os.kill(os.getpid(), signal.SIGINT)",
    "KeyboardInterrupt": "raise KeyboardInterrupt",
}


@pytest.mark.parametrize("module", ["argparse", "numpy", "pandas", "atmsim._core", "pydantic"])
@pytest.mark.parametrize("action", sorted(ACTIONS))
@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
def test_ctrl_c_at_start_up(
    tiny: Path, tmp_path: Path, module: str, action: str, launcher: str
) -> None:
    """A Ctrl-C while the CLI's dependencies load: exit 130, nothing printed. Each
    loads only when a command uses it: the core with ``atmsim run``, numpy and pandas
    when ``atmsim plot`` reads a run's series (``atmsim run`` has the core write its
    series, and ``atmsim validate`` needs none of the three)."""
    code = START_UP.format(module=module, action=ACTIONS[action], launch=LAUNCHERS[launcher])
    if module in ("numpy", "pandas"):
        if not CORE_BUILT:
            pytest.skip("atmsim._core is not built")
        scenario = write(tmp_path, TINY + PROBES, "probed.toml")
        run_dir = tmp_path / "run"
        assert cli_main("run", str(scenario), "--no-progress", "--out", str(run_dir)) == 0
        command = ["plot", str(run_dir)]
    elif module == "atmsim._core":
        command = ["run", str(tiny), "--no-progress", "--out", str(tmp_path / "out")]
    else:
        command = ["validate", str(tiny)]
    done = subprocess.run(
        [sys.executable, "-c", code, *command],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=60,
    )
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "")


@needs_core
def test_ctrl_c_during_reproduce_with_workers(tmp_path: Path) -> None:
    """Ctrl-C from a terminal reaches the whole process group, the worker processes
    too: exit 130, no traceback from any of them."""
    out = tmp_path / "reproduce"
    process = subprocess.Popen(
        [sys.executable, "-m", "atmsim", "reproduce", "seed000", "seed002", "--jobs", "2"]
        + ["--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not any(out.glob("*/scenario.toml")) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # the workers are simulating
    os.killpg(process.pid, signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stdout + stderr
    # one line: what is kept
    assert stderr.startswith("interrupted: the experiments finished before are written in ")
    assert stderr.count("\n") == 1
