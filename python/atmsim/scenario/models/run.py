"""``[run]``: how long to simulate and with which random seed."""

# No `from __future__ import annotations`: pydantic would then parse and evaluate
# every field's annotation string when the classes are built (see base.py).

from typing import Literal

from .base import Duration, Seed, Table


class Run(Table):
    """``[run]``: how long to simulate and with which random seed."""

    duration: Duration
    """Simulated time, > 0 and at most 10^6 s."""
    seed: Seed = 1
    """Seed of all random streams; same scenario + seed = same results."""
    fast_paths: bool = True
    """Take the simulator's fast paths (events skipped because their outcome is already
    known); false sends every cell and packet through the plain event path, with the
    same results at a higher cost (docs/model.md, "Fast paths")."""
    arbitration: Literal["slotted", "random", "scheduling_order"] = "slotted"
    """How cells that reach a switch output port together contend for it: "slotted"
    (the cells that reach it over links within one of its cell times contend at the
    end of that slot, in a random order drawn per slot from the run seed: an output-queued
    switch), "random" (continuous time: only arrivals at the same picosecond are put
    in a random order) or "scheduling_order" (continuous time, one fixed order); the
    last two for comparison (docs/model.md, "Time and order")."""
