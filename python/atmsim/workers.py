"""Worker processes for ``atmsim sweep`` and ``atmsim reproduce``, and how the
``atmsim`` command answers SIGINT and SIGTERM.

The command (``atmsim._entry``) installs ``on_signal`` for SIGINT and SIGTERM
before it loads anything else. The first of them raises KeyboardInterrupt in the
main thread: whatever runs then finishes what it was writing (a run's partial
summary, a sweep's results table) and the command exits 128 + the signal's
number: 130 for SIGINT, 143 for SIGTERM (``exit_code``). The same signal often
comes twice: a Ctrl-C from a terminal reaches the whole process group, and
coreutils ``timeout`` sends it to the command and then to the command's group.
A repeat within ``REPEAT_S`` of the first is ignored, so that it cannot
interrupt that clean-up or the interpreter's exit (a traceback, or a lock
released twice). A signal after that, from someone waiting for a clean-up that
takes too long, ends the process at once (``os._exit``) with the same code.

``imap_unordered`` runs tasks on worker processes that leave both signals to the
parent: they ignore SIGINT and SIGTERM, and the parent kills them (SIGKILL) when
it is interrupted, before the exception goes on. A worker also dies with its
parent, even one killed with SIGKILL: on Linux the kernel sends it SIGKILL then
(``prctl(PR_SET_PDEATHSIG)``), elsewhere a thread of the worker checks every
second that its parent lives. A worker whose parent has gone ends quietly: no
BrokenPipeError when it answers. The parent waits on the workers' pipes alone,
with no thread and no lock that an interrupt could leave held.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any, Callable, Optional

REPEAT_S = 2.0
"""A repeat of the signal within this many seconds of the first is ignored."""

SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals the command answers, in its main process."""

STOP_S = 5.0
"""How long a worker that was told to stop may take to end before it is killed."""

_first: Optional[tuple[int, float]] = None
"""The first signal received (its number, when), or None."""


_forks_reset = False
"""Whether forked children are set to put Python's own handlers back (``install``)."""


def install() -> None:
    """Answer SIGINT and SIGTERM with ``on_signal`` (from the main thread only). A child
    forked from then on gets Python's handlers back (``_python_handlers``)."""
    global _first, _forks_reset
    _first = None
    for number in SIGNALS:
        signal.signal(number, on_signal)
    if not _forks_reset and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_python_handlers)
        _forks_reset = True


def _python_handlers() -> None:
    """In a forked child: SIGINT raises KeyboardInterrupt and SIGTERM kills, as in any
    Python process. The pools of other commands (multiprocessing.Pool, whose terminate()
    sends SIGTERM) count on a worker dying of SIGTERM quietly, not raising in it."""
    if signal.getsignal(signal.SIGINT) is on_signal:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGTERM) is on_signal:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def on_signal(number: int, frame: Any) -> None:
    """The first SIGINT or SIGTERM raises KeyboardInterrupt; a repeat within REPEAT_S is
    ignored; a later one ends the process at once."""
    global _first
    if _first is None:
        _first = (number, time.monotonic())
        raise KeyboardInterrupt
    if time.monotonic() - _first[1] < REPEAT_S:
        return
    for stream in (sys.stdout, sys.stderr):  # what was printed stays printed
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(128 + _first[0])


def quiet() -> None:
    """Ignore SIGINT and SIGTERM from now on: the command is done and exiting, and a
    signal then could only interrupt the interpreter's exit with a traceback."""
    for number in SIGNALS:
        signal.signal(number, signal.SIG_IGN)


def exit_code() -> int:
    """The exit code of a command stopped by a KeyboardInterrupt: 128 + the number of the
    signal that raised it (130 when it came from elsewhere: SIGINT's)."""
    return 128 + (_first[0] if _first is not None else signal.SIGINT)


# --- worker processes -----------------------------------------------------------------------


class WorkerDied(RuntimeError):
    """A worker process ended while it ran a task (a crash, or killed from outside)."""


def imap_unordered(
    function: Callable[[Any], Any],
    tasks: Iterable[Any],
    jobs: int,
    died: Optional[Callable[[Any, str], Any]] = None,
) -> Iterator[Any]:
    """``function(task)`` for each task on ``jobs`` worker processes (in this process when
    ``jobs`` is 1 or there is one task), the answers in the order they finish.

    A worker that dies while it runs a task is replaced; the task's answer is then
    ``died(task, description)``, or WorkerDied is raised when ``died`` is None. An
    exception of ``function`` in a worker is raised here as a RuntimeError naming it
    (the tasks of sweeps and reproduce catch their own). Closing the iterator, or an
    exception in this process (Ctrl-C), kills the workers before it goes on."""
    tasks = list(tasks)
    if jobs <= 1 or len(tasks) <= 1:
        for task in tasks:
            yield function(task)
        return
    pool = _Pool(function, min(jobs, len(tasks)))
    try:
        yield from pool.run(tasks, died)
        pool.stop()
    finally:
        pool.kill()


class _Pool:
    def __init__(self, function: Callable[[Any], Any], size: int) -> None:
        import multiprocessing

        # fork: a worker starts at once and is its parent's child, whose death the
        # kernel reports to it; spawn where there is no fork.
        methods = multiprocessing.get_all_start_methods()
        self.context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        self.function = function
        self.size = size
        self.workers: list[Any] = []

    def _start(self) -> Any:
        parent_end, child_end = self.context.Pipe()
        process = self.context.Process(
            target=_worker_main,
            args=(child_end, self.function, os.getpid()),
            daemon=True,
        )
        worker = _Worker(process, parent_end)
        # The child inherits this process's signal handlers until it sets its own:
        # with SIGINT and SIGTERM blocked across the fork, neither can reach it then.
        # Blocked until the worker is listed too, so that kill() finds every worker:
        # one left running would hang this process's exit (multiprocessing joins its
        # children then, and a worker ignores the SIGTERM it is sent first).
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
        try:
            process.start()
            self.workers.append(worker)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        child_end.close()
        return worker

    def run(self, tasks: list, died: Optional[Callable[[Any, str], Any]]) -> Iterator[Any]:
        from multiprocessing.connection import wait

        queue = list(reversed(tasks))
        for _ in range(self.size):
            self._start()
        for worker in self.workers:
            worker.give(queue.pop())
        while any(worker.task is not None for worker in self.workers):
            busy = {worker.conn: worker for worker in self.workers if worker.task is not None}
            for conn in wait(list(busy)):
                worker = busy[conn]
                task = worker.task
                try:
                    status, value = conn.recv()
                except (EOFError, OSError):
                    description = worker.end()
                    self.workers.remove(worker)
                    if died is None:
                        raise WorkerDied(f"a worker process {description}") from None
                    answer = died(task, f"the worker process {description}")
                    if queue:
                        self._start().give(queue.pop())
                else:
                    worker.task = None
                    if status == "raised":
                        raise RuntimeError(f"in a worker process: {value}")
                    answer = value
                    if queue:
                        worker.give(queue.pop())
                yield answer

    def stop(self) -> None:
        """Tell the idle workers to end, and wait for them (killed after STOP_S)."""
        for worker in self.workers:
            worker.send(None)
        deadline = time.monotonic() + STOP_S
        for worker in self.workers:
            worker.process.join(max(0.0, deadline - time.monotonic()))

    def kill(self) -> None:
        """Kill the workers still running and reap them all. A second signal while this
        runs is held until it is done, so that no worker is left behind."""
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
        try:
            for worker in self.workers:
                if worker.process.exitcode is None:
                    worker.process.kill()
            for worker in self.workers:
                worker.process.join()
                worker.conn.close()
            self.workers = []
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


class _Worker:
    def __init__(self, process: Any, conn: Any) -> None:
        self.process = process
        self.conn = conn
        self.task: Any = None

    def give(self, task: Any) -> None:
        self.task = task
        self.send(task)

    def send(self, message: Any) -> None:
        try:
            self.conn.send(message)
        except OSError:  # it has died: its pipe's end says so (EOF) in run()
            pass

    def end(self) -> str:
        """Reap a worker whose pipe has closed; how it ended."""
        self.process.join(STOP_S)
        if self.process.exitcode is None:
            self.process.kill()
            self.process.join()
        self.conn.close()
        code = self.process.exitcode
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"was killed by {name}"
        return f"exited with code {code}"


def _worker_main(conn: Any, function: Callable[[Any], Any], parent: int) -> None:
    """A worker: answer each task received on ``conn`` with ("ok", answer) or ("raised",
    the error in one line) until None comes or the parent has gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALS)
    _die_with(parent)
    try:
        while True:
            task = conn.recv()
            if task is None:
                break
            try:
                answer: tuple = ("ok", function(task))
            except BaseException as error:  # noqa: B036 - any error goes to the parent
                answer = ("raised", f"{type(error).__name__}: {error}".replace("\n", " "))
            conn.send(answer)
    except (EOFError, OSError):  # the parent has gone (BrokenPipeError is an OSError)
        pass
    finally:
        # Straight out: no flush of streams shared with the parent, no atexit hooks
        # (multiprocessing's own exit path may print a traceback to a closed stderr).
        os._exit(0)


def _die_with(parent: int) -> None:
    """End this process when ``parent`` dies, whatever it dies of."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            PR_SET_PDEATHSIG = 1
            if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0:
                if os.getppid() != parent:  # it died before the prctl
                    os._exit(0)
                return
        except (OSError, AttributeError):
            pass
    import threading

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="atmsim-parent-watch", daemon=True).start()
