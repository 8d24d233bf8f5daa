"""``Scenario``: the whole scenario file, its tables and the checks across them
(the ``Network``)."""

# No `from __future__ import annotations`: pydantic would then parse and evaluate
# every field's annotation string when the classes are built (see base.py).

from pathlib import Path
from typing import Optional

from pydantic import ConfigDict, Field, PrivateAttr, model_validator

from ..common import _fail
from ..memory import MemoryEstimate, estimate, memory_problem
from ..network import Network
from .base import Table
from .flows import Flow
from .links import Link
from .nodes import Node
from .probes import Probes
from .run import Run
from .sources import Source
from .vcs import Vc


class Scenario(Table):
    """A whole scenario file; see the module docstring and the table classes."""

    # Built at import, with its tables' schemas inside (see ``Table``): loading a
    # scenario is what importing the models is for.
    model_config = ConfigDict(defer_build=False)

    run: Run
    nodes: dict[str, Node] = {}
    links: dict[str, Link] = {}
    vcs: dict[str, Vc] = {}
    sources: dict[str, Source] = {}
    flows: dict[str, Flow] = {}
    probes: Probes = Field(default_factory=Probes)

    _file: Optional[str] = PrivateAttr(None)
    _source: Optional[dict] = PrivateAttr(None)
    _network: Optional[Network] = PrivateAttr(None)
    """The expanded network, built once by validation (``Network(scenario)`` returns it)."""

    @property
    def file(self) -> Optional[str]:
        """The file it was loaded from, if any."""
        return self._file

    @property
    def template(self) -> Optional[dict]:
        """The resolved ``[template]`` table this scenario was expanded from, if any."""
        return None if self._source is None else self._source["template"]

    @property
    def name(self) -> str:
        """The scenario's name: its file name without ``.toml``."""
        return Path(self._file).stem if self._file else "scenario"

    @model_validator(mode="after")
    def _check_references(self) -> "Scenario":
        """Build the expanded network (which checks every cross reference); resolve
        the class of ATM flows over a path. A flow over VCs of [vcs] keeps none: its
        VCs' tables hold it, and a class written into the flow's table would make the
        resolved scenario.toml refuse to load."""
        network = Network(self)
        for flat in network.flows:
            template = self.flows[flat.key.split(".", 1)[1]]
            if flat.layer == "atm" and template.class_ is None and template.vc is None:
                template.class_ = "ubr"
        problem = memory_problem(self, network)
        if problem is not None:
            raise _fail(*problem)
        self._network = network
        return self

    def memory_estimate(self) -> MemoryEstimate:
        """The memory a run of this scenario needs (``str()``: "~12 MiB"); validation
        refuses a scenario whose estimate exceeds the machine's memory."""
        return estimate(self, Network(self))
