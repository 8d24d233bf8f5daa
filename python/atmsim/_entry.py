"""The entry point of the ``atmsim`` command (``[project.scripts]`` in pyproject.toml)
and of ``python -m atmsim``.

Loading the CLI and what a command needs takes up to half a second (pydantic
and the scenario models, rich; pandas, pyarrow or matplotlib for the
commands that use them). A Ctrl-C in that time would stop some import half way
and print its traceback. This module and ``import atmsim`` load nothing heavy,
so the interrupt is caught here: exit 130, quietly, as for a Ctrl-C later on
(``atmsim.cli.main`` answers those).

SIGINT and SIGTERM are answered from the start (``atmsim.workers.install``): the
first raises KeyboardInterrupt, a repeat soon after is ignored, and the exit code
is 130 or 143. Once the command is done they are ignored, so that neither can
interrupt the interpreter's exit.
"""

from __future__ import annotations

import gc
import os
import sys

from . import workers

PLUGINS_SETTING = "PYDANTIC_DISABLE_PLUGINS"
"""pydantic's documented switch for its plugins: ``__all__`` disables every one."""


def main() -> None:
    """Load the CLI and run it (``atmsim.cli.main`` exits with the command's code).

    A signal answered from the moment ``install`` sets the handlers may land anywhere
    before the command catches it (between two lines of this module): it exits with
    the signal's code here, never as an uncaught KeyboardInterrupt, which would end
    the process by SIGINT itself."""
    try:
        workers.install()
        _main()
    except KeyboardInterrupt:
        sys.exit(workers.exit_code())
    finally:
        workers.quiet()


def _main() -> None:
    # pydantic looks for plugins (packages' entry points of group "pydantic", used by
    # tools that trace validation) when it builds its first model: a scan of every
    # installed package's metadata, a measurable part of ``atmsim validate``
    # (docs/performance.md, "CLI start-up"). The command
    # needs none, so it runs, with the processes it starts, as with
    # PYDANTIC_DISABLE_PLUGINS=__all__, unless that variable is set (then pydantic
    # follows it; set it empty to load every plugin).
    os.environ.setdefault(PLUGINS_SETTING, "__all__")
    # Loading the CLI builds pydantic's schemas and the scenario models: tens of
    # thousands of objects that live as long as the process, which the cyclic
    # collector would walk again and again while they are made (docs/performance.md,
    # "CLI start-up"). It waits until they are made, then
    # leaves them out of its walks (``gc.freeze``).
    collecting = gc.isenabled()
    gc.disable()
    try:
        from .cli import main as cli_main
    except KeyboardInterrupt:
        sys.exit(workers.exit_code())
    finally:
        gc.freeze()
        if collecting:
            gc.enable()
    cli_main()
