#!/usr/bin/env bash
# Sets up atmsim (scripts/setup.sh) and runs every check: formatting and
# lints (cargo fmt, cargo clippy, ruff), the Rust tests and the Python tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets -q -- -D warnings
echo "== ruff"
.venv/bin/ruff check python tests scripts
.venv/bin/ruff format --check python tests scripts
echo "== cargo test"
cargo test --workspace -q
echo "== pytest"
.venv/bin/python -m pytest -q
