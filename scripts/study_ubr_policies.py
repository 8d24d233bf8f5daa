"""UBR+: tail drop, EPD, Selective Drop, FBA and DFBA compared for TCP over UBR.

Runs scenarios/ubr_plus.toml (greedy SACK connections over UBR, one shared
155.52 Mbps port with a 1000-cell buffer, 1000 km links) with 5 and 15
connections under each policy at its default parameters (EPD at 0.8 K;
Selective Drop and FBA R = 0.5 K, Z = 1; DFBA L = 0.5 K, H = 0.9 K, alpha 0.5,
Z = 1, the VCs weighted equally as none has an MCR), over run seeds 1..N, and
prints a Markdown table (docs/model.md, "UBR+: the buffer policies compared") of:

- efficiency: total goodput over the most the link carries as TCP payload
  (155.52 Mbps x 512 / (12 x 53) = 125.2 Mbps with MSS 512);
- Jain's fairness index of the connections' goodputs;
- the cells dropped per cell sent, and the timeouts per connection;

each as the mean over the run seeds with its 95 % interval (Student t).

Usage: .venv/bin/python scripts/study_ubr_policies.py [--seeds N] [--jobs N]
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "ubr_plus.toml"
MAX_GOODPUT_MBPS = 155.52 * 512 / (12 * 53)
POLICIES = ("tail", "epd", "selective_drop", "fba", "dfba")


def one(n: int, policy: str, seed: int) -> dict:
    import atmsim
    from atmsim.compare import jain

    overrides = [f"template.n={n}", f"template.policy={policy}", "probes.flows=[]"]
    result = atmsim.run(SCENARIO, overrides=overrides, seed=seed, progress=False)
    summary = result.summary
    assert summary["conservation"]["ok"], summary["conservation"]
    goodputs = [flow["goodput_mbps"] for flow in summary["flows"]]
    ledger = summary["conservation"]
    return {
        "efficiency": sum(goodputs) / MAX_GOODPUT_MBPS,
        "jain": jain(goodputs),
        "loss": ledger["cells_dropped"] / ledger["cells_generated"],
        "timeouts": sum(flow["timeouts"] for flow in summary["flows"]) / n,
    }


def main() -> None:
    from atmsim.reproduce.stats import spread

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    cases = [(n, policy) for n in (5, 15) for policy in POLICIES]
    seeds = range(1, args.seeds + 1)
    with ProcessPoolExecutor(args.jobs) as pool:
        futures = {(case, seed): pool.submit(one, *case, seed) for case in cases for seed in seeds}
        results = {key: future.result() for key, future in futures.items()}

    def cell(values: list, percent: bool, digits: int) -> str:
        s = spread(values)
        scale, unit = (100, " %") if percent else (1, "")
        low, high = s.low * scale, s.high * scale
        return f"{s.mean * scale:.{digits}f}{unit} [{low:.{digits}f}, {high:.{digits}f}]"

    print("| TCPs | policy | efficiency | Jain index | cells lost | timeouts per TCP |")
    print("|---|---|---|---|---|---|")
    for case in cases:
        rows = [results[(case, seed)] for seed in seeds]
        n, policy = case
        print(
            f"| {n} | {policy.replace('_', ' ')} "
            f"| {cell([r['efficiency'] for r in rows], True, 1)} "
            f"| {cell([r['jain'] for r in rows], False, 3)} "
            f"| {cell([r['loss'] for r in rows], True, 3)} "
            f"| {cell([r['timeouts'] for r in rows], False, 1)} |"
        )


if __name__ == "__main__":
    main()
