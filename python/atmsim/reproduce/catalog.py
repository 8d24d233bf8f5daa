"""The registry of the experiments: every paper module's experiments by id
(``registry``), one paper's (``seed_ids``), and the ids ``atmsim reproduce`` accepts
(``select``, ``valid_ids``)."""

from __future__ import annotations

from typing import Optional

from . import seed000, seed001, seed002, seed003, seed004
from .experiments import SEEDS, Experiment
from .papers import PAPERS, canonical, readable

_REGISTRY: Optional[dict[str, Experiment]] = None


def registry() -> dict[str, Experiment]:
    """Every experiment by id, in document order (TCP over ABR (Kalyanaraman et al., 1996) to GFR
    buffer management (Goyal et al., 1998))."""
    global _REGISTRY
    if _REGISTRY is None:
        experiments: dict[str, Experiment] = {}
        for module in (seed000, seed001, seed002, seed003, seed004):
            for experiment in module.EXPERIMENTS:
                if experiment.id in experiments:
                    raise ValueError(f"duplicate experiment id {experiment.id!r}")
                experiments[experiment.id] = experiment
        for experiment in experiments.values():
            for quantity in experiment.published:
                if quantity.see is not None and quantity.see not in experiments:
                    raise ValueError(
                        f"{experiment.id}: {quantity.name!r} refers to an unknown "
                        f"experiment {quantity.see!r}"
                    )
        _REGISTRY = experiments
    return _REGISTRY


def seed_ids(seed: str) -> list[str]:
    """The experiment ids of one paper, in order."""
    return [key for key, experiment in registry().items() if experiment.seed == seed]


class UnknownExperiment(ValueError):
    """An id that is neither a paper nor an experiment."""


def select(ids: list[str]) -> list[str]:
    """Experiment ids for the given document and experiment ids, readable
    (``tcp-over-abr``, ``tcp-over-abr-sec8``) or not (``seed000``, ``seed000-sec8``),
    in the order given, each once. Raises UnknownExperiment naming the first unknown
    id."""

    known = registry()
    chosen: list[str] = []
    for name in ids:
        key = canonical(name)
        if key in SEEDS:
            expanded = seed_ids(key)
        elif key in known:
            expanded = [key]
        else:
            raise UnknownExperiment(name)
        chosen.extend(item for item in expanded if item not in chosen)
    return chosen


def valid_ids() -> list[str]:
    """What ``atmsim reproduce`` accepts: the documents' readable ids, then every
    experiment's readable id (each ``seedNNN`` form is an alias)."""

    return [*(paper.id for paper in PAPERS), *(readable(key) for key in registry())]
