#!/usr/bin/env python3
"""Compare atmsim with ns-2 on the IP dumbbell (docs/validation.md).

    .venv/bin/python scripts/validate_ns2.py [--variants tahoe,reno,newreno,sack]
                                             [--duration S] [--csv PATH]

Prints the comparison table and writes runs/validation/ns2_comparison.csv.
Exit 0 with the report (even when a metric misses its tolerance); 2 with one
line when ns-2 is not installed. The logic lives in atmsim.validation.ns2.main.
"""

import sys

from atmsim.validation.ns2 import main

if __name__ == "__main__":
    sys.exit(main())
