#!/usr/bin/env python3
"""Compare atmsim with ns-2 on the IP dumbbell (docs/validation.md).

    .venv/bin/python scripts/validate_ns2.py [--variants tahoe,reno,newreno,sack]
                                             [--duration S] [--csv PATH]

Prints the comparison table and writes runs/validation/ns2_comparison.csv.
Exit 0 with the report (even when a metric misses its tolerance); 2 with one
line when ns-2 is not installed. The logic lives in devtools.ns2_compare.main.
"""

import sys
from pathlib import Path

# devtools/ is a package at the repository root, not part of the installed atmsim.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from devtools.ns2_compare import main  # noqa: E402 (after the path)

if __name__ == "__main__":
    sys.exit(main())
