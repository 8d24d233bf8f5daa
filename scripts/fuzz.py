#!/usr/bin/env python3
"""Fuzz the scenario input (docs/validation.md, "Fuzzing the scenario input").

    .venv/bin/python scripts/fuzz.py --cases 100000 --seed 1 --out runs/fuzz --jobs 2

Mutants of scenarios/*.toml and scenarios/reproduce/*.toml run through the atmsim
command in worker processes; each must run with balanced ledgers (exit 0) or be refused
with one line (exit 2). Prints a progress line and the failure kinds, writes
OUT/summary.json and keeps every failing case in OUT/failures/ and OUT/failures.jsonl.
Exit 0 when no case failed, 1 otherwise, 130 on Ctrl-C (what was found is kept). The
logic lives in devtools.fuzz.main.
"""

import sys
from pathlib import Path

# devtools/ is a package at the repository root, not part of the installed atmsim.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from devtools.fuzz import main  # noqa: E402 (after the path)

if __name__ == "__main__":
    sys.exit(main())
