"""The third-party libraries that are slow to import, handed out lazily. Every atmsim
module takes them from here, at its top:

    from ._lazy import numpy as np, pandas as pd

    def frame(columns):
        return pd.DataFrame(columns)  # pandas is imported here, on first use

Each name is a stand-in module (``LazyModule``) that imports the real one the first
time one of its attributes is read, so importing an atmsim module costs only its own
code: ``atmsim validate`` loads neither pandas nor matplotlib (nor tomli_w, which only
writes a resolved scenario), ``atmsim run`` no matplotlib, whatever the modules they
load import. Type checkers see the real modules (``TYPE_CHECKING``).

pydantic is not here: the scenario models are pydantic classes, so defining them
imports pydantic anyway, and the modules that build them (``atmsim.scenario``) and
read its errors (``atmsim.errors``) import it directly. tests/test_layering.py checks
that no other module imports these libraries itself.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any

__all__ = ["argparse", "matplotlib", "numpy", "pandas", "pyarrow", "pyplot", "rich", "tomli_w"]


class LazyModule(ModuleType):
    """A module that imports ``name`` when one of its attributes is first read, then
    answers from it: the real module's attributes are copied in, so later reads cost
    what a module's do. A submodule not imported yet is imported when asked for
    (``rich.console`` of ``rich``), as ``import rich.console`` would."""

    def __init__(self, name: str) -> None:
        super().__init__(name, f"{name}, imported on first use (atmsim._lazy)")

    def __getattr__(self, attribute: str) -> Any:
        module = importlib.import_module(self.__name__)
        try:
            value = getattr(module, attribute)
        except AttributeError:
            if attribute.startswith("__"):
                raise
            try:
                value = importlib.import_module(f"{self.__name__}.{attribute}")
            except ModuleNotFoundError as error:
                if error.name != f"{self.__name__}.{attribute}":
                    raise  # the submodule exists but needs a module that does not
                raise AttributeError(
                    f"module {self.__name__!r} has no attribute {attribute!r}"
                ) from None
        self.__dict__.update(module.__dict__)
        self.__dict__[attribute] = value
        return value

    def __dir__(self) -> list[str]:
        return dir(importlib.import_module(self.__name__))


if TYPE_CHECKING:
    import argparse

    import matplotlib
    import numpy
    import pandas
    import pyarrow
    import pyarrow.parquet
    import rich
    import rich.console
    import rich.progress
    import rich.table
    import tomli_w
    from matplotlib import pyplot
else:
    argparse = LazyModule("argparse")
    matplotlib = LazyModule("matplotlib")
    numpy = LazyModule("numpy")
    pandas = LazyModule("pandas")
    pyarrow = LazyModule("pyarrow")
    pyplot = LazyModule("matplotlib.pyplot")
    rich = LazyModule("rich")
    tomli_w = LazyModule("tomli_w")
