"""Worker processes and signals (atmsim.workers): the pool of sweeps and reproduce, and
SIGINT / SIGTERM at any moment of ``atmsim sweep`` and ``atmsim reproduce``, sent to
the command alone or to its process group, under coreutils ``timeout`` or not: exit
130 or 143, no traceback, no deadlock, no worker left, the finished runs kept."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from atmsim import workers
from atmsim.sweeps import RESULTS_FILE, RUNS_DIR

from conftest import cli_env, needs_core

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads /proc to find the worker processes"
)

SLOW_SPEC = """\
[sweep]
base = "ubr_tcp"
seeds = 8
[set]
"run.duration" = "30 s"
"""
"""Eight runs of about 1.5 s each: a sweep still running a few seconds after its start."""

STOPPED_S = 30.0
"""How long a signalled command may take to end; longer is a deadlock."""


def told(stderr: str) -> bool:
    """The one line a sweep or reproduce stopped by a signal writes: what is kept."""
    return stderr.count("\n") == 1 and stderr.startswith("interrupted: ")


def quiet_or_told(stderr: str) -> bool:
    """Nothing (a signal during start-up, before the command runs) or ``told``."""
    return stderr == "" or told(stderr)


# --- the pool -------------------------------------------------------------------------------


def _square(x: int) -> int:
    return x * x


def _crash_on_three(x: int) -> int:
    if x == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return x


def _fail_on_two(x: int) -> int:
    if x == 2:
        raise ValueError("two")
    return x


def _sleep(x: float) -> float:
    time.sleep(x)
    return x


PYTHON_HELPERS = (b"multiprocessing.resource_tracker", b"multiprocessing.forkserver")
"""Python's own helper processes, which other tests in the same process may have started
(a multiprocessing pool starts a resource tracker that lives on): not workers."""


def _children(pid: int) -> set[int]:
    """The live (not zombie) processes whose parent is ``pid``, from /proc, Python's own
    helper processes aside."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        helper = any(name in command for name in PYTHON_HELPERS)
        if fields[0] != "Z" and int(fields[1]) == pid and not helper:
            found.add(int(entry.name))
    return found


def _alive(pids: set[int], wait_s: float = 5.0) -> set[int]:
    """Those of ``pids`` still running after ``wait_s`` (a process that has closed its
    files is not yet a zombie: it is given that long to finish exiting)."""
    deadline = time.monotonic() + wait_s
    while True:
        alive = set()
        for pid in pids:
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                continue
            if stat[stat.rindex(")") + 2] != "Z":
                alive.add(pid)
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)


@pytest.mark.parametrize("jobs", [1, 3])
def test_every_task_is_answered(jobs: int) -> None:
    answers = list(workers.imap_unordered(_square, range(10), jobs))
    assert sorted(answers) == [x * x for x in range(10)]


def test_a_signal_before_the_command_catches_it_exits_with_its_code(monkeypatch) -> None:
    """A signal answered once the handlers are set may land before the CLI's own
    handling (between two lines of the entry point): the exit code is the signal's, not
    a death by SIGINT from an uncaught KeyboardInterrupt (a race the SIGINT-at-any-moment
    test met)."""
    from atmsim import _entry

    def interrupted() -> None:
        workers.on_signal(signal.SIGTERM, None)

    monkeypatch.setattr(_entry, "_main", interrupted)
    monkeypatch.setattr(workers, "install", lambda: None)
    monkeypatch.setattr(workers, "quiet", lambda: None)
    monkeypatch.setattr(workers, "_first", None)
    with pytest.raises(SystemExit) as stopped:
        _entry.main()
    assert stopped.value.code == 143


@linux_only
def test_a_worker_that_dies_is_replaced_and_its_task_answered() -> None:
    answers = list(
        workers.imap_unordered(_crash_on_three, range(6), 2, died=lambda task, why: (task, why))
    )
    assert sorted(a for a in answers if isinstance(a, int)) == [0, 1, 2, 4, 5]
    assert (3, "the worker process was killed by SIGKILL") in answers
    assert not _children(os.getpid())
    with pytest.raises(workers.WorkerDied, match="killed by SIGKILL"):
        list(workers.imap_unordered(_crash_on_three, range(6), 2))
    assert not _children(os.getpid())


def test_an_error_in_a_task_is_raised_here() -> None:
    with pytest.raises(RuntimeError, match="in a worker process: ValueError: two"):
        list(workers.imap_unordered(_fail_on_two, range(4), 2))


@linux_only
def test_closing_the_iterator_kills_the_workers() -> None:
    stream = workers.imap_unordered(_sleep, [0.0, 60.0, 60.0, 60.0], 3)
    assert next(stream) == 0.0
    assert len(_children(os.getpid())) == 3
    started = time.monotonic()
    stream.close()
    assert time.monotonic() - started < 5
    assert not _children(os.getpid())


def test_the_first_signal_raises_a_repeat_is_ignored(monkeypatch) -> None:
    monkeypatch.setattr(workers, "_first", None)
    assert workers.exit_code() == 130
    with pytest.raises(KeyboardInterrupt):
        workers.on_signal(signal.SIGTERM, None)
    workers.on_signal(signal.SIGINT, None)  # coreutils timeout sends it twice
    assert workers.exit_code() == 143
    exits = []
    monkeypatch.setattr(workers.os, "_exit", exits.append)
    monkeypatch.setattr(workers, "_first", (signal.SIGINT, time.monotonic() - workers.REPEAT_S))
    workers.on_signal(signal.SIGINT, None)  # still there after REPEAT_S: ends at once
    assert exits == [130]


@linux_only
def test_a_forked_child_gets_pythons_own_handlers_back() -> None:
    """Other commands' pools (multiprocessing.Pool) fork workers that must die of the
    SIGTERM their terminate() sends, quietly, as before the command's handlers."""
    code = (
        "import os, signal\n"
        "from atmsim import workers\n"
        "workers.install()\n"
        "assert signal.getsignal(signal.SIGTERM) is workers.on_signal\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    ok = signal.getsignal(signal.SIGTERM) == signal.SIG_DFL\n"
        "    ok = ok and signal.getsignal(signal.SIGINT) is signal.default_int_handler\n"
        "    os._exit(0 if ok else 1)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "raise SystemExit(os.waitstatus_to_exitcode(status))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], env=cli_env(), capture_output=True)
    assert done.returncode == 0, done.stderr


# --- signals to the commands ------------------------------------------------------------------


def _answering_signals(pid: int) -> bool:
    """Whether process ``pid`` runs atmsim and catches SIGTERM: the command's handlers are
    in place (Python catches SIGINT from its start, SIGTERM only when atmsim asks).
    Before that, a signal meets the interpreter's own start-up, which atmsim cannot
    answer (Python dies of SIGINT, or prints a KeyboardInterrupt traceback)."""
    try:
        if b"atmsim" not in Path(f"/proc/{pid}/cmdline").read_bytes():
            return False
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) >> (signal.SIGTERM - 1) & 1)


def _command(kind: str, out: Path, jobs: int, spec: Path) -> list[str]:
    if kind == "sweep":
        return ["sweep", str(spec), "--jobs", str(jobs), "--no-progress", "--out", str(out)]
    return ["reproduce", "seed000", "--jobs", str(jobs), "--out", str(out)]


def _signal_and_check(
    command: list[str], delay: float, number: int, to: str, wrapper: tuple = ()
) -> None:
    """Start ``atmsim COMMAND`` in a session of its own, send ``number`` ``delay`` seconds
    after it answers signals to it alone, to its process group, or to both (coreutils
    timeout's way), and check the exit code, stderr and that no process it started is
    left."""
    process = subprocess.Popen(
        [*wrapper, sys.executable, "-m", "atmsim", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
        start_new_session=True,
    )
    deadline = time.monotonic() + STOPPED_S
    while not _answering_signals(process.pid) and time.monotonic() < deadline:
        time.sleep(0.002)
    time.sleep(delay)
    started = _children(process.pid) | {
        grandchild for child in _children(process.pid) for grandchild in _children(child)
    }
    if to in ("parent", "both"):
        process.send_signal(number)
    if to in ("group", "both"):
        os.killpg(process.pid, number)
    what = f"{signal.Signals(number).name} to the {to} after {delay} s: {command}"
    try:
        # stdout and stderr close when every process holding them has ended: the
        # workers as well as the command
        stdout, stderr = process.communicate(timeout=STOPPED_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail(f"still running {STOPPED_S} s after {what}")
    assert process.returncode == 128 + number, f"{what}: {stderr}"
    assert "Traceback" not in stdout + stderr, f"{what}: {stderr}"
    assert quiet_or_told(stderr), what
    assert not _alive(started), f"{what}: processes left"


@needs_core
@linux_only
@pytest.mark.parametrize("kind", ["sweep", "reproduce"])
def test_sigint_at_any_moment_with_workers(tmp_path: Path, kind: str) -> None:
    """Ctrl-C as soon as the command answers signals (it is still loading), while
    the workers start, while they simulate, and while the first runs are written;
    to the command alone (as when it runs under coreutils timeout, out of the
    terminal's foreground group), to the group (a terminal's Ctrl-C) and to both
    (timeout's own way)."""
    spec = tmp_path / "spec.toml"
    spec.write_text(SLOW_SPEC, encoding="utf-8")
    trials = [(0.0, "group"), (0.3, "parent"), (0.8, "both"), (1.4, "parent"), (2.1, "group")]
    for k, (delay, to) in enumerate(trials):
        out = tmp_path / f"out{k}"
        _signal_and_check(_command(kind, out, 2, spec), delay, signal.SIGINT, to)
        shutil.rmtree(out, ignore_errors=True)


@needs_core
@linux_only
@pytest.mark.parametrize(
    "kind, jobs, delay, to",
    [
        ("sweep", 2, 1.2, "parent"),
        ("sweep", 1, 0.9, "both"),
        ("reproduce", 2, 1.4, "group"),
        ("reproduce", 1, 1.1, "parent"),
    ],
)
def test_sigterm_exits_143_quietly(tmp_path: Path, kind: str, jobs: int, delay, to) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(SLOW_SPEC, encoding="utf-8")
    _signal_and_check(_command(kind, tmp_path / "out", jobs, spec), delay, signal.SIGTERM, to)


@needs_core
@linux_only
def test_reproduce_with_one_job_sigint_twice(tmp_path: Path) -> None:
    """The run in the command's own process: its partial results are written while
    the second SIGINT (timeout sends it to the command, then to its group) arrives."""
    command = _command("reproduce", tmp_path / "out", 1, tmp_path)
    _signal_and_check(command, 1.5, signal.SIGINT, "both")


@needs_core
@pytest.mark.skipif(shutil.which("timeout") is None, reason="coreutils timeout is not installed")
def test_sweep_under_coreutils_timeout(tmp_path: Path) -> None:
    """``timeout -s INT 2 atmsim sweep ... --jobs 2``: the sweep stops with exit 130
    (``--preserve-status``; ``-k`` kills it after 30 s more, a deadlock)."""
    spec = tmp_path / "spec.toml"
    spec.write_text(SLOW_SPEC, encoding="utf-8")
    out = tmp_path / "out"
    done = subprocess.run(
        ["timeout", "--preserve-status", "-k", "30", "-s", "INT", "2"]
        + [sys.executable, "-m", "atmsim", *_command("sweep", out, 2, spec)],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=60,
    )
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stdout + done.stderr and quiet_or_told(done.stderr)
    frame = pd.read_parquet(out / RESULTS_FILE)  # written on the way out
    assert len(frame) == 8 and set(frame["status"]) <= {"ok", "pending"}


@needs_core
@linux_only
def test_finished_runs_stay_written_after_sigint(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(SLOW_SPEC, encoding="utf-8")
    out = tmp_path / "out"
    runs = out / RUNS_DIR
    process = subprocess.Popen(
        [sys.executable, "-m", "atmsim", *_command("sweep", out, 2, spec)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if runs.is_dir() and len([p for p in runs.iterdir() if not p.name.startswith(".")]) >= 2:
            break
        time.sleep(0.02)
    before = {p.name: (p / "summary.json").read_bytes() for p in runs.glob("[!.]*")}
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=STOPPED_S)
    assert process.returncode == 130 and told(stderr)
    assert 2 <= len(before) < 8
    frame = pd.read_parquet(out / RESULTS_FILE)
    ok = set(frame.loc[frame["status"] == "ok", "run_id"])
    assert set(before) <= ok
    for name, content in before.items():
        assert (runs / name / "summary.json").read_bytes() == content
    assert not list(runs.glob(".*"))  # no run directory half written


@linux_only
@needs_core
def test_workers_end_with_a_sweep_killed_with_sigkill(tmp_path: Path) -> None:
    """SIGKILL to the sweep's process alone: its workers end too, quietly (no
    BrokenPipeError when they answer a parent that has gone)."""
    spec = tmp_path / "spec.toml"
    spec.write_text(SLOW_SPEC, encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "atmsim", *_command("sweep", tmp_path / "out", 2, spec)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while len(_children(process.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    started = _children(process.pid)
    assert len(started) == 2
    time.sleep(0.5)
    process.kill()
    _, stderr = process.communicate(timeout=STOPPED_S)  # the workers hold stderr too
    assert stderr == ""
    assert not _alive(started)
