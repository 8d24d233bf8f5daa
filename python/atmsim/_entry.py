"""The entry point of the ``atmsim`` command (``[project.scripts]`` in pyproject.toml)
and of ``python -m atmsim``.

Loading the CLI and what a command needs takes up to half a second (typer,
pydantic and the scenario models, rich; pandas, pyarrow or matplotlib for the
commands that use them). A Ctrl-C in that time would stop some import half way
and print its traceback. This module and ``import atmsim`` load nothing heavy,
so the interrupt is caught here: exit 130, quietly, as for a Ctrl-C later on
(``atmsim.cli.main`` answers those).
"""

from __future__ import annotations

import sys

INTERRUPTED = 130
"""The exit code of a command stopped by Ctrl-C (128 + SIGINT)."""


def main() -> None:
    """Load the CLI and run it (``atmsim.cli.main`` exits with the command's code)."""
    try:
        from .cli import main as cli_main
    except KeyboardInterrupt:
        sys.exit(INTERRUPTED)
    cli_main()
