#!/usr/bin/env python3
"""Check (or with --update, write) the fingerprints of every example and reproduce run
(docs/validation.md, "Fingerprints").

    .venv/bin/python scripts/fingerprints.py [--jobs N] [--fast-paths off] [--update] [RUN ...]

The same as ``.venv/bin/python -m devtools.fingerprints`` from the repository root.
Exit 0 when no digest moved, 1 otherwise. The logic lives in devtools.fingerprints.main.
"""

import sys
from pathlib import Path

# devtools/ is a package at the repository root, not part of the installed atmsim.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from devtools.fingerprints import main  # noqa: E402 (after the path)

if __name__ == "__main__":
    sys.exit(main())
