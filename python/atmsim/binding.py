"""The compiled core, ``atmsim._core``: importing it (``import_core``, which raises
``CoreUnavailable`` when it is not built) and the installed version it reports
(``package_version``). The run API, the run directories' markers and the HTML report
all ask for the version; they import it from here."""

from __future__ import annotations

import importlib
from typing import Any


def package_version() -> str:
    """The installed atmsim version: the core's, which is the package's by construction
    (pyproject.toml declares the version dynamic, so maturin takes the Cargo
    workspace's); the package metadata's when the core cannot be imported; "unknown"
    in a bare source tree. Asking the core spares ``atmsim run``, which records the
    version in summary.json, the import of ``importlib.metadata`` (docs/performance.md,
    "CLI start-up")."""
    try:
        return str(import_core().version())
    except CoreUnavailable:
        pass
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("atmsim")
    except PackageNotFoundError:
        return "unknown"


class CoreUnavailable(RuntimeError):
    """The compiled core ``atmsim._core`` is not built or cannot be imported."""


def import_core() -> Any:
    """The ``atmsim._core`` extension module."""
    try:
        return importlib.import_module("atmsim._core")
    except ImportError as error:
        raise CoreUnavailable(
            f"the simulation core atmsim._core is not available ({error}); "
            "build it with `maturin develop --release`"
        ) from None
