"""The inventory of the papers' published numerical results, and its coverage.

One CSV per paper (``atmsim/data/reproduce/inventory/seedNNN.csv``) lists every
number a paper publishes as a result (a table's cell, a value in the text, a
bound a sentence states), whether atmsim judges it or not:

- ``seed``: the paper, ``seed000`` .. ``seed004``;
- ``source``: where it is printed (``Table 1 row 2``, ``section 9``);
- ``quantity``: what it is, in the paper's words;
- ``configuration``: the configuration it belongs to;
- ``published``: the value as printed (``10.5``, ``> 7000``, ``NA``);
- ``unit``;
- ``experiment`` and ``row``: the ``atmsim reproduce`` experiment and the
  quantity (``Quantity.name``) that judge it, empty when no row does.

``atmsim reproduce --coverage`` counts, per paper, the published results, those
covered by a row, the verdicts of those rows in a reproduce output (match,
miss, n/a, or not run), and those not covered. The counts in the README and the
docs come from it.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..resources import data_dir
from .catalog import registry
from .experiments import SEEDS
from .papers import BY_SEED

COLUMNS = (
    "seed",
    "source",
    "quantity",
    "configuration",
    "published",
    "unit",
    "experiment",
    "row",
)
"""The columns of every inventory file, in order."""


@dataclass(frozen=True)
class Entry:
    """One published result."""

    seed: str
    source: str
    quantity: str
    configuration: str
    published: str
    unit: str
    experiment: Optional[str]
    row: Optional[str]

    @property
    def covered(self) -> bool:
        return self.experiment is not None and self.row is not None


def inventory_dir() -> Path:
    """Where the inventory files are (package data)."""
    return data_dir() / "reproduce" / "inventory"


def load(directory: Optional[Path] = None) -> list[Entry]:
    """Every entry of every paper's file, in the papers' order. Raises ValueError naming the
    file and line of a malformed entry."""
    directory = directory or inventory_dir()
    entries: list[Entry] = []
    for seed in SEEDS:
        path = directory / f"{seed}.csv"
        if not path.is_file():
            continue
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            if tuple(reader.fieldnames or ()) != COLUMNS:
                raise ValueError(f"{path}: columns {reader.fieldnames}; expected {list(COLUMNS)}")
            for line, record in enumerate(reader, start=2):
                if record["seed"] != seed:
                    raise ValueError(f"{path}:{line}: seed {record['seed']!r} in {seed}'s file")
                if not record["quantity"] or not record["published"]:
                    raise ValueError(f"{path}:{line}: quantity and published are required")
                entries.append(
                    Entry(
                        seed=seed,
                        source=record["source"],
                        quantity=record["quantity"],
                        configuration=record["configuration"],
                        published=record["published"],
                        unit=record["unit"],
                        experiment=record["experiment"] or None,
                        row=record["row"] or None,
                    )
                )
    return entries


def problems(entries: Iterable[Entry]) -> list[str]:
    """Entries that name an experiment or a row the registry does not have, or a row
    another experiment judges (``Quantity.see``: the entry should name that one)."""
    experiments = registry()
    found = []
    for entry in entries:
        if entry.experiment is None and entry.row is None:
            continue
        if entry.experiment is None or entry.row is None:
            found.append(
                f"{entry.seed} {entry.source} {entry.quantity}: experiment and row go together"
            )
            continue
        experiment = experiments.get(entry.experiment)
        if experiment is None:
            found.append(f"{entry.seed} {entry.source}: unknown experiment {entry.experiment!r}")
            continue
        quantity = next((q for q in experiment.published if q.name == entry.row), None)
        if quantity is None:
            found.append(f"{entry.experiment}: no row {entry.row!r}")
        elif quantity.see is not None:
            found.append(f"{entry.experiment}: {entry.row!r} is judged in {quantity.see}")
    return found


def verdicts_in(out: Path) -> dict[tuple[str, str], str]:
    """(experiment, quantity) -> verdict, from the table.csv files of a reproduce
    output (empty when there is none)."""
    verdicts: dict[tuple[str, str], str] = {}
    if not out.is_dir():
        return verdicts
    for table in sorted(out.glob("*/table.csv")):
        with table.open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                verdicts[(row["experiment"], row["quantity"])] = row["verdict"]
    return verdicts


COUNTS = ("published", "covered", "match", "miss", "n/a", "not-run", "uncovered")
"""What the coverage counts per paper: every published result, those a row covers
(then by that row's verdict, or "not-run" when the output has none), those none
does."""


def coverage(entries: Iterable[Entry], verdicts: dict[tuple[str, str], str]) -> dict[str, dict]:
    """Per paper, the COUNTS."""
    table: dict[str, dict] = {}
    for entry in entries:
        counts = table.setdefault(entry.seed, dict.fromkeys(COUNTS, 0))
        counts["published"] += 1
        if not entry.covered:
            counts["uncovered"] += 1
            continue
        counts["covered"] += 1
        verdict = verdicts.get((entry.experiment, entry.row))  # type: ignore[arg-type]
        counts[verdict if verdict in ("match", "miss", "n/a") else "not-run"] += 1
    return table


def coverage_lines(table: dict[str, dict]) -> list[str]:
    """The coverage as an aligned text table (80 columns)."""
    header = ["document", *COUNTS]
    rows = [[BY_SEED[seed].id if seed in BY_SEED else seed, *map(str, c.values())]
            for seed, c in table.items()]  # fmt: skip
    if table:
        totals = [sum(c[key] for c in table.values()) for key in COUNTS]
        rows.append(["all", *map(str, totals)])
    widths = [max(len(r[k]) for r in [header, *rows]) for k in range(len(header))]
    lines = []
    for row in [header, *rows]:
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
        lines.append(" ".join(cells))
    return lines
