"""The CSV files of an experiment: table.csv (one row per published quantity, judged on
the mean over the run seeds) and seeds.csv (every run seed's value), each written whole or
not at all."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Optional

from ..outputs import write_file

CSV_COLUMNS = (
    "experiment",
    "quantity",
    "unit",
    "published",
    "simulated",
    "ci95_low",
    "ci95_high",
    "n_seeds",
    "tolerance",
    "verdict",
    "note",
    "tolerance_reason",
    "null_models",
    "beats_nulls",
)
"""table.csv: ``simulated`` is the mean over the run seeds, ``ci95_low`` and
``ci95_high`` the 95 % interval of that mean, ``n_seeds`` the run seeds it counts;
``null_models`` each null model's prediction and verdict ("mcr-only 23.04
match; equal-share 25.4 miss"), ``beats_nulls`` "yes" for a match that no null
model matches, "no" for a match that one does, empty otherwise."""

SEED_COLUMNS = ("experiment", "quantity", "seed", "simulated", "note")
"""seeds.csv: every run seed's value of every quantity."""


def null_text(nulls: list) -> str:
    """The null models' predictions and verdicts as one cell: "mcr-only 23.04 match;
    equal-share 25.4 miss"."""
    return "; ".join(f"{model} {value:.6g} {verdict}" for model, value, verdict in nulls)


def write_csv(path: Path, rows: list[dict]) -> Path:
    """table.csv: CSV_COLUMNS, published "NA" when not published; a row judged in
    another experiment has no simulated value. Written whole or not at all
    (``atmsim.outputs.write_file``)."""
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        reference = row.get("see") is not None
        writer.writerow(
            [
                row["experiment"],
                row["quantity"],
                row["unit"],
                row["published_text"],
                "" if reference else _csv_number(row["simulated"]),
                "" if reference else _csv_number(row["ci95_low"]),
                "" if reference else _csv_number(row["ci95_high"]),
                row["n_seeds"],
                row["tolerance"],
                row["verdict"],
                row["note"],
                row["reason"],
                null_text(row.get("nulls", [])),
                row.get("beats_nulls", ""),
            ]
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_file(path, text.getvalue())


def write_seed_csv(path: Path, rows: list[dict]) -> Path:
    """seeds.csv: SEED_COLUMNS, one line per quantity and run seed; written whole or not
    at all."""
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(SEED_COLUMNS)
    for row in rows:
        if row.get("see") is not None:
            continue
        for seed, value, note in zip(row["seeds"], row["values"], row["seed_notes"]):
            writer.writerow([row["experiment"], row["quantity"], seed, _csv_number(value), note])
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_file(path, text.getvalue())


def _csv_number(value: Optional[float]) -> str:
    if value is None or not math.isfinite(value):
        return "NaN"
    return f"{value:.6g}"
