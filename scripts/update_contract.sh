#!/usr/bin/env bash
# Regenerates the contract between Python and the Rust core after a change to
# the scenario types: docs/core-schema.json (the JSON Schema generated from
# them, by the atmsim-core test tests/schema.rs), its copy in the Python
# package (python/atmsim/scenario/core-schema.json, where Python reads the
# core's ranges) and the key tables of docs/core-interface.md rendered from
# it (scripts/core_interface.py).
set -euo pipefail
cd "$(dirname "$0")/.."
ATMSIM_UPDATE_SCHEMA=1 cargo test -q -p atmsim-core --test schema
python=.venv/bin/python
[ -x "$python" ] || python=python3
"$python" scripts/core_interface.py
git status --short docs/core-schema.json python/atmsim/scenario/core-schema.json \
    docs/core-interface.md
