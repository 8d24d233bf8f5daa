"""How the order of simultaneous arrivals at a port changes TCP over UBR.

Runs scenarios/ubr_tcp.toml (greedy Tahoe connections over UBR, one shared
155.52 Mbps port) with 5 and 15 connections and a 1000-cell buffer, under tail
drop and EPD (threshold 800 cells), with the arbitration of simultaneous
arrivals random (atmsim's model) and in scheduling order (one fixed order, the
earlier model), over seeds 1-5, and prints a Markdown table (docs/model.md,
"Time and order") of:

- partial frames: of the TCP payload lost, the share in frames that lost only
  some of their cells (AAL5 discards the rest at the receiver); the rest was
  lost in frames dropped whole;
- efficiency: total goodput over the most the link can carry as TCP payload
  (155.52 Mbps x 512 / (12 x 53) = 125.2 Mbps with MSS 512);
- Jain's fairness index of the connections' goodputs.

Each cell is the mean over the seeds, with the spread (min-max) of the Jain
index. Usage: .venv/bin/python scripts/study_arbitration.py [--seeds N] [--jobs N]
"""

from __future__ import annotations

import argparse
import statistics
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "ubr_tcp.toml"
MAX_GOODPUT_MBPS = 155.52 * 512 / (12 * 53)


def one(n: int, policy: str, arbitration: str, seed: int) -> dict:
    import atmsim
    from atmsim.compare import jain

    overrides = [
        f"nodes.s{{i}}.count={n}",
        f"nodes.d{{i}}.count={n}",
        f"links.s{{i}}-sw1.count={n}",
        f"links.sw2-d{{i}}.count={n}",
        f"flows.tcp{{i}}.count={n}",
        "links.sw1-sw2.buffer=1000",
        "probes.flows=[]",
        "probes.queue=[]",
        f"run.arbitration={arbitration}",
    ]
    if policy == "epd":
        overrides.append('links.sw1-sw2.policy={ kind = "epd", threshold = 800 }')
    result = atmsim.run(SCENARIO, overrides=overrides, seed=seed, progress=False)
    ledger = result.summary["conservation"]["bytes"]
    lost = ledger["dropped_aal5"] + ledger["dropped_in_network"]
    goodputs = [flow["goodput_mbps"] for flow in result.summary["flows"]]
    return {
        "partial": ledger["dropped_aal5"] / lost if lost else float("nan"),
        "efficiency": sum(goodputs) / MAX_GOODPUT_MBPS,
        "jain": jain(goodputs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    cases = [
        (n, policy, arbitration)
        for n in (5, 15)
        for policy in ("tail", "epd")
        for arbitration in ("scheduling_order", "random")
    ]
    seeds = range(1, args.seeds + 1)
    with ProcessPoolExecutor(args.jobs) as pool:
        futures = {(case, seed): pool.submit(one, *case, seed) for case in cases for seed in seeds}
        results = {key: future.result() for key, future in futures.items()}
    print(
        "| TCPs | policy | arbitration | partial frames among losses | efficiency "
        "| Jain index (min-max) |"
    )
    print("|---|---|---|---|---|---|")
    for case in cases:
        rows = [results[(case, seed)] for seed in seeds]
        mean = {key: statistics.fmean(row[key] for row in rows) for key in rows[0]}
        jains = [row["jain"] for row in rows]
        n, policy, arbitration = case
        partial = "-" if mean["partial"] != mean["partial"] else f"{mean['partial']:.0%}"
        print(
            f"| {n} | {policy} | {arbitration.replace('_', ' ')} | {partial} "
            f"| {mean['efficiency']:.1%} | {mean['jain']:.3f} ({min(jains):.3f}-{max(jains):.3f}) |"
        )


if __name__ == "__main__":
    main()
