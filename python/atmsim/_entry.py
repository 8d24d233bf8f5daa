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
import types

from . import workers

PLUGIN_LOADER = "pydantic.plugin._loader"
"""pydantic's module that finds its plugins (see ``skip_pydantic_plugins``)."""


def skip_pydantic_plugins() -> bool:
    """Lets pydantic find no plugins in this process, unless ``PYDANTIC_DISABLE_PLUGINS``
    is set (then pydantic follows it; set it empty to load every plugin).

    pydantic looks for plugins (packages' entry points of group "pydantic", used
    by tools that trace validation) when it builds its first model, and imports
    ``importlib.metadata`` to do it: 14 ms of the 0.14 s of ``atmsim validate``
    (docs/performance.md, "CLI start-up"). The atmsim command needs none, so it
    answers as ``PYDANTIC_DISABLE_PLUGINS=__all__`` would, without that import:
    a stand-in module whose ``get_plugins`` returns none. Any other name pydantic
    asks of it comes from the real module, loaded then. True if it was put in.
    """
    if "PYDANTIC_DISABLE_PLUGINS" in os.environ or PLUGIN_LOADER in sys.modules:
        return False
    stand_in = types.ModuleType(PLUGIN_LOADER, "No pydantic plugins (atmsim._entry).")

    def get_plugins() -> tuple:
        return ()

    def real(name: str):
        if name.startswith("__"):  # the import system asks for __path__: none
            raise AttributeError(name)
        # A name this stand-in lacks (a later pydantic's): the real loader.
        del sys.modules[PLUGIN_LOADER]
        import importlib

        return getattr(importlib.import_module(PLUGIN_LOADER), name)

    stand_in.get_plugins = get_plugins  # type: ignore[attr-defined]
    stand_in.__getattr__ = real  # type: ignore[method-assign]
    sys.modules[PLUGIN_LOADER] = stand_in
    return True


def main() -> None:
    """Load the CLI and run it (``atmsim.cli.main`` exits with the command's code)."""
    workers.install()
    try:
        _main()
    finally:
        workers.quiet()


def _main() -> None:
    skip_pydantic_plugins()
    # Loading the CLI builds pydantic's schemas and the scenario models: tens of
    # thousands of objects that live as long as the process, which the cyclic
    # collector would walk again and again while they are made (about 10 ms of
    # the 0.15 s of ``atmsim validate``). It waits until they are made, then
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
