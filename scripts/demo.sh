#!/usr/bin/env bash
# Sets up atmsim (scripts/setup.sh) and runs the main job: the mux_onoff
# scenario (10 bursty sources into one 1000-cell port), printing the summary
# table and writing runs/mux_onoff/{summary.json,series.parquet,queue.png}.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/atmsim run scenarios/mux_onoff.toml --out runs/mux_onoff
.venv/bin/atmsim plot runs/mux_onoff
