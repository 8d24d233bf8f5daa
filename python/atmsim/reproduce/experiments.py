"""What an experiment of ``atmsim reproduce`` is: the published quantities (``Quantity``),
their null models (``NullModel``, ``NullPrediction``), the runs (``Run``) and the
experiment (``Experiment``), with the run seeds every experiment runs with. The paper
modules (``seed000`` .. ``seed004``) build their experiments from these."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Union

from ..compare import Tolerance
from ..resources import reproduce_dir

SCENARIO_DIR = reproduce_dir()
"""The experiments' scenario files: package data (``atmsim/data/scenarios/reproduce``,
``scenarios/reproduce`` in a source checkout)."""

SEEDS = ("seed000", "seed001", "seed002", "seed003", "seed004")
"""The documents reproduced, in order."""

RUN_SEEDS = tuple(range(1, 11))
"""The ``run.seed`` values every experiment runs with: ten samples, enough for a
Student-t interval (t(0.975, 9) = 2.26) at about ten times one run's cost."""

FIGURE_KINDS = (
    "window",
    "acr",
    "sequence",
    "queue",
    "ip_queue",
    "abr_queue",
    "throughput",
    "vc_queue",
)
"""Figures an experiment may ask for (``atmsim.plots.EXPERIMENT_FIGURES``)."""


Extracted = Union[float, tuple[float, str]]
"""What an extractor returns: the simulated value, optionally with a note."""


def _no_value(results: dict) -> float:
    return math.nan


@dataclass(frozen=True)
class NullModel:
    """A way to predict a paper's numbers from its inputs alone, with no simulation
    ("each VC gets exactly its MCR and nothing more"). A row that a null model also
    matches tests arithmetic, not the mechanism."""

    id: str
    """Short and stable, e.g. ``mcr-only``."""
    title: str
    """What it assumes, in one sentence."""


@dataclass(frozen=True)
class NullPrediction:
    """A null model's prediction of one quantity."""

    model: NullModel
    value: float


@dataclass(frozen=True)
class Quantity:
    """One published number (or claim) and how to compute ours from the runs' results.

    ``extract(results)`` gets ``{run name: atmsim.Result}`` of one run seed and returns
    the simulated value, or ``(value, note)``. ``published`` None means "not
    published" ("NA"). ``see``: the id of the experiment that judges this same
    published value (the paper prints it in several places); the row then shows the
    published value, refers there, and is not judged again."""

    name: str
    published: Optional[float]
    unit: str
    tolerance: Tolerance
    reason: str
    extract: Callable[[dict], Extracted] = _no_value
    note: str = ""
    see: Optional[str] = None
    nulls: tuple = ()
    """NullPrediction's of this quantity, judged by the same tolerance."""
    unjudged: str = ""
    """Not empty: the published value is shown with its tolerance, the simulated mean
    and the null models' verdicts, but not judged (verdict n/a), for this reason
    (typically: a null model already matches it, so no simulation can add evidence).
    The note says what the verdict would have been."""


@dataclass(frozen=True)
class Run:
    """One simulation: a scenario file of ``scenarios/reproduce`` and its overrides."""

    scenario: str
    overrides: tuple[str, ...] = ()

    @property
    def path(self) -> Path:
        return SCENARIO_DIR / self.scenario


def seed_override(seed: int) -> str:
    """The override that sets the run seed."""
    return f"run.seed={seed}"


@dataclass(frozen=True)
class Experiment:
    """One published experiment.

    - ``id``: stable, lowercase, starts with its paper's id (``seed000-sec8``);
    - ``source``: where it is published (paper, section, table or figure);
    - ``runs``: run name -> Run. One run: its files go to ``<out>/<id>/``; several
      (a comparison, or a reference such as section 8's peak for section 9): to
      ``<out>/<id>/<run name>/``. None: every quantity refers to another experiment;
    - ``published``: the quantities compared;
    - ``figures``: kinds of FIGURE_KINDS drawn as ``<out>/<id>/<kind>.png``, one panel
      per run of ``figure_runs`` (default: every run);
    - ``notes``: what the experiment chose and why (also in docs/reproduction.md),
      written at the top of each run's scenario.toml;
    - ``weight``: relative run time of one run seed, to start the longest first;
    - ``seeds``: the ``run.seed`` values it runs with (``RUN_SEEDS``);
    - ``port``: the bottleneck link the ``queue``, ``abr_queue`` and ``vc_queue``
      figures show.
    """

    id: str
    title: str
    source: str
    runs: dict
    published: tuple
    figures: tuple = ("window", "acr", "sequence", "queue")
    figure_runs: Optional[tuple] = None
    notes: tuple = ()
    weight: float = 1.0
    seeds: tuple = RUN_SEEDS
    port: str = "sw1-sw2"

    @property
    def seed(self) -> str:
        return self.id.split("-", 1)[0]
