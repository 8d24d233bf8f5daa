#!/usr/bin/env bash
# Sets up atmsim with the test tools (scripts/setup.sh --dev) and runs every check: formatting and
# lints (cargo fmt, cargo clippy, ruff), the Rust tests and the Python tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --dev
# The HTML report's test renders it in headless Chromium, Debian's package: install
# it when it is missing and apt-get can (root, or sudo without a password); the test
# is skipped, saying why, only when that fails.
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo -n"; fi
  echo "== apt-get install chromium (for the HTML report's test)"
  if ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
      $sudo apt-get install -y -qq chromium; } >.venv/apt-chromium.log 2>&1; then
    echo "could not install chromium (see .venv/apt-chromium.log): its test will be skipped"
  fi
fi
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets -q -- -D warnings
echo "== ruff"
.venv/bin/ruff check python tests scripts devtools
.venv/bin/ruff format --check python tests scripts devtools
echo "== cargo test"
cargo test --workspace -q
echo "== pytest"
.venv/bin/python -m pytest -q
