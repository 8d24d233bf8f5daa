#!/usr/bin/env bash
# Sets up atmsim in ./.venv: a virtual environment with the Python
# dependencies, and the Rust core built in release mode and installed as
# atmsim._core (editable: Python changes need no rebuild; Rust changes need
# this script again). Safe to run repeatedly.
#
#   bash scripts/setup.sh         what running atmsim needs (scripts/demo.sh)
#   bash scripts/setup.sh --dev   and what testing needs: pytest, ruff, hypothesis,
#                                 jsonschema, Dask and Ray (scripts/test.sh)
set -euo pipefail
extras=()
case "${1:-}" in
  "") ;;
  --dev) extras=(--extras dev) ;;
  *) echo "usage: bash scripts/setup.sh [--dev]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip "maturin>=1.5,<2"
# maturin installs the package's dependencies (with --dev, the dev extras too).
VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH" \
  .venv/bin/maturin develop --release "${extras[@]}" -q
# Compile the package's bytecode now, as pip does when it installs a wheel:
# the editable install imports python/atmsim from source, and where
# PYTHONDONTWRITEBYTECODE is set (as on this project's machines) Python would
# compile the CLI's modules again at every start, about 40 ms of each command.
# A module edited later is recompiled from its source, as usual.
.venv/bin/python -m compileall -q python/atmsim > /dev/null
