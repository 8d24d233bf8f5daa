"""Computing and judging: a quantity's value in one run seed's results (``measure``),
the row of table.csv from its values over the run seeds (``judge``: the mean, its 95 %
interval, the verdict, the null models' verdicts), and an experiment's outcome from
its run seeds (``aggregate``, which writes table.csv and seeds.csv)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..compare import Tolerance
from .csv_tables import write_csv, write_seed_csv
from .experiments import Experiment, Quantity
from .stats import spread


def measure(quantity: Quantity, results: dict) -> tuple[float, str]:
    """The quantity's value in one run seed's results, and the extractor's note; NaN
    and "not computed: ..." when it cannot be computed (a short run may leave too
    little)."""
    try:
        extracted = quantity.extract(results)
        if isinstance(extracted, tuple):
            value, note = extracted
        else:
            value, note = extracted, ""
        return float(value), note
    except Exception as error:
        return math.nan, f"not computed: {error}"


def judge(
    experiment_id: str,
    quantity: Quantity,
    values: list[float],
    notes: Optional[list[str]] = None,
    seeds: Optional[tuple] = None,
) -> dict:
    """One row of table.csv from the quantity's values over the run seeds: the mean,
    its 95 % interval, and the verdict of the mean. A value that could not be computed
    in some run seed makes the row a miss (its mean counts the others), as a value that
    cannot be computed is a miss. A quantity judged elsewhere (``see``) is n/a; so is
    one shown but not judged (``unjudged``), whose note gives the reason and the
    verdict it would have had, and whose null models are still judged."""
    seeds = tuple(seeds) if seeds is not None else tuple(range(1, len(values) + 1))
    notes = list(notes) if notes is not None else [""] * len(values)
    parts = [quantity.note] if quantity.note else []
    if quantity.see is not None:
        stats = spread([])
        verdict = "n/a"
        parts.append(f"judged in {quantity.see} (the same configuration and published value)")
    else:
        stats = spread(values)
        verdict = quantity.tolerance.verdict(quantity.published, stats.mean)
        if stats.missing and verdict == "match":
            verdict = "miss"
        if quantity.unjudged and verdict != "n/a":
            parts.append(f"not judged: {quantity.unjudged} (judged, it would be a {verdict})")
            verdict = "n/a"
        first = notes[0] if notes else ""
        if first:
            label = f"run seed {seeds[0]}: " if len(values) > 1 else ""
            parts.append(label + first)
        if not quantity.unjudged and crosses_bound(
            quantity.tolerance, quantity.published, stats.low, stats.high
        ):
            parts.append("the 95 % interval crosses the tolerance's bound")
        if stats.missing:
            failed = [(s, n) for s, v, n in zip(seeds, values, notes) if not math.isfinite(v)]
            parts.append(
                f"not computed in {len(failed)} of {len(values)} run seeds "
                f"(run seed {failed[0][0]}: {failed[0][1] or 'NaN'})"
            )
    judged = (
        quantity.see is None
        and quantity.published is not None
        and quantity.tolerance.kind != "report"
    )
    nulls = [
        (null.model.id, null.value, quantity.tolerance.verdict(quantity.published, null.value))
        for null in (quantity.nulls if judged else ())
    ]
    if verdict == "match" and nulls:
        beats = "no" if any(v == "match" for _, _, v in nulls) else "yes"
    else:
        beats = ""
    return {
        "experiment": experiment_id,
        "quantity": quantity.name,
        "unit": quantity.unit,
        "published": quantity.published,
        "published_text": quantity.tolerance.published_text(quantity.published),
        "simulated": stats.mean,
        "ci95_low": stats.low,
        "ci95_high": stats.high,
        "n_seeds": stats.n,
        "values": list(values),
        "seeds": seeds,
        "seed_notes": notes,
        "tolerance": "-" if quantity.see is not None else quantity.tolerance.text(),
        "verdict": verdict,
        "note": "; ".join(parts),
        "reason": quantity.reason,
        "see": quantity.see,
        "nulls": nulls,
        "beats_nulls": beats,
    }


def accepted_range(tolerance: Tolerance, published: float) -> tuple[float, float]:
    """The simulated values a tolerance accepts around ``published``, as [low, high]
    (infinite for a one-sided bound)."""
    kind, value = tolerance.kind, tolerance.value
    if kind == "relative":
        allowed = max(value * abs(published), tolerance.floor)
        return published - allowed, published + allowed
    if kind == "absolute":
        return published - value, published + value
    if kind == "factor":
        return published / value, published * value
    if kind == "exact":
        return published, published
    if kind == "above":
        return published + value, math.inf
    if kind == "below":
        return -math.inf, published - value
    raise ValueError(f"{kind!r} accepts nothing")


def crosses_bound(
    tolerance: Tolerance, published: Optional[float], low: float, high: float
) -> bool:
    """True when the interval [low, high] holds both accepted and rejected values: the
    verdict of the mean would differ for another mean inside its own interval."""
    if tolerance.kind == "report" or published is None:
        return False
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return False
    first, last = accepted_range(tolerance, published)
    return low < first <= high or low <= last < high


def evaluate(experiment_id: str, quantity: Quantity, results: dict) -> dict:
    """One row from the results of one run seed (``judge`` of one value)."""
    value, note = measure(quantity, results)
    return judge(experiment_id, quantity, [value], [note])


@dataclass
class Outcome:
    """What running one experiment gave: its rows (CSV_COLUMNS, with each run seed's
    values), the ledgers' verdict, the files written, the wall time (summed over its
    run seeds), and if it could not run, the error as one line (``error``) and its
    traceback (``traceback``, shown with ``atmsim --debug``)."""

    experiment: str
    rows: list = field(default_factory=list)
    ledgers_ok: bool = True
    ledger_problems: list = field(default_factory=list)
    figures: list = field(default_factory=list)
    wall_s: float = 0.0
    out_dir: Optional[Path] = None
    error: Optional[str] = None
    traceback: Optional[str] = None
    seeds: tuple = ()

    def count(self, verdict: str) -> int:
        return sum(row["verdict"] == verdict for row in self.rows)


@dataclass
class SeedOutcome:
    """One run seed of one experiment: each quantity's value and note (in the order of
    ``Experiment.published``), ledger problems, figures, wall time, error."""

    experiment: str
    seed: int
    values: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    ledger_problems: list = field(default_factory=list)
    figures: list = field(default_factory=list)
    wall_s: float = 0.0
    error: Optional[str] = None
    traceback: Optional[str] = None


def aggregate(experiment: Experiment, parts: list[SeedOutcome], out_root: Path) -> Outcome:
    """The experiment's outcome from its run seeds: rows judged on the means, table.csv
    and seeds.csv written. An error in any run seed is the experiment's error."""
    parts = sorted(parts, key=lambda part: part.seed)
    out_dir = Path(out_root) / experiment.id
    outcome = Outcome(
        experiment=experiment.id,
        out_dir=out_dir,
        wall_s=sum(part.wall_s for part in parts),
        seeds=tuple(part.seed for part in parts),
    )
    for part in parts:
        outcome.ledger_problems.extend(part.ledger_problems)
        outcome.figures.extend(part.figures)
        if part.error and outcome.error is None:
            prefix = f"run seed {part.seed}: " if len(parts) > 1 else ""
            outcome.error = prefix + part.error
            outcome.traceback = part.traceback
    outcome.ledgers_ok = not outcome.ledger_problems
    if outcome.error is not None:
        return outcome
    seeds = outcome.seeds
    for k, quantity in enumerate(experiment.published):
        values = [part.values[k] for part in parts]
        notes = [part.notes[k] for part in parts]
        outcome.rows.append(judge(experiment.id, quantity, values, notes, seeds))
    write_csv(out_dir / "table.csv", outcome.rows)
    write_seed_csv(out_dir / "seeds.csv", outcome.rows)
    return outcome
