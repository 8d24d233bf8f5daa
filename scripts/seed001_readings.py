"""How Explicit rate control of TCP's (Satyavolu et al., 1998) Figure 3 levels are read: "queue
lengths which oscillate between about 100 and 150 packets", "the actual window size oscillates
between 30000 and 40000 bytes" (section 6.1).

Runs seed001-fig3's scenario once per number-of-active-sources decay given, reads the
queue at r1 -> r2 and the flows' actual windows from 1 s on four ways
(``atmsim.reproduce.seed001.level_readings``: the 10th / 90th percentiles that
``atmsim reproduce`` judges, the 5th / 95th, the least / most sample, the median trough
/ crest over stretches of one longest round trip) and judges each end with the rows'
tolerance (+-10 %). Prints a Markdown table (docs/reproduction.md, "Explicit rate
control of TCP's reading of Figure 3").

    python scripts/seed001_readings.py            # decays 0 (chosen) and 0.9 (before)
    python scripts/seed001_readings.py 0 0.5 0.9 1
"""

from __future__ import annotations

import sys

from atmsim import run
from atmsim.reproduce import registry
from atmsim.reproduce.seed001 import LEVEL, READINGS, figure3_readings

PUBLISHED = {"queue": (100.0, 150.0), "windows": (30000.0, 40000.0)}
"""The paper's low and high ends (packets, bytes)."""


def readings_for(decay: str) -> dict:
    """Figure 3's readings with ``template.active_decay = decay``."""
    spec = registry()["seed001-fig3"].runs["run"]
    result = run(spec.path, overrides=[*spec.overrides, f"template.active_decay={decay}"])
    return figure3_readings(result)


def table(decays: list[str]) -> str:
    lines = [
        "| decay | reading | queue low / high (100 / 150) | windows low / high (30,000 / "
        "40,000) | of the four ends, match |",
        "|---|---|---|---|---|",
    ]
    for decay in decays:
        readings = readings_for(decay)
        for reading in READINGS:
            cells, matches = [], 0
            for level in ("queue", "windows"):
                ends = readings[level][reading]
                for value, published in zip(ends, PUBLISHED[level]):
                    matches += LEVEL.verdict(published, value) == "match"
                cells.append(f"{ends[0]:,.0f} / {ends[1]:,.0f}")
            lines.append(f"| {decay} | {reading} | {cells[0]} | {cells[1]} | {matches} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    print(table(argv or ["0", "0.9"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
