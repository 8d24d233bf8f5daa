#!/usr/bin/env bash
# Sets up atmsim (scripts/setup.sh) and runs the main job: reproduce one paper,
# Satyavolu, Duvedi and Kalyanaraman, "Explicit rate control of TCP applications"
# (ATM Forum 98-0152, 1998; about 5 s on 2 cores), print the published values
# against ours, and write its HTML report; the last line is the report's path.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/atmsim reproduce tcp-explicit-rate --out runs/demo --report
echo "open this in a browser: $PWD/runs/demo/report.html"
