"""How contention at a switch output changes TCP over UBR under each drop policy.

Greedy SACK connections (MSS 512) share one 155.52 Mbps UBR port, in a LAN and
in a WAN, with the buffer sizes of the UBR+ studies of Goyal, Jain et al.
("Improving the Performance of TCP over the ATM-UBR Service", Computer
Communications 21(10), 1998): 1000 and 3000 cells in the LAN, 12,000 and 36,000
in the WAN. The n-source configuration (s{i} -> sw1 -> sw2 -> d{i}, every link
155.52 Mbps) with:

- LAN: every link 1 km, 64 KB windows, 10 s simulated;
- WAN: every link 1000 km (30 ms round trip), 600,000-byte windows (the UBR+
  studies' WAN window, with window scaling), 10 s simulated.

Each access link s{i} -> sw1 is longer than the others by a length drawn
uniformly within one cell time of propagation (2.73 us, 0.545 km at 5 us/km),
from the run seed: the connections' cells then reach the switch at sub-cell
phase offsets that stay fixed, as real links of unequal length give them,
while the round trips differ by less than 0.02 %. Under each policy at its
defaults (EPD at 0.8 K; Selective Drop and FBA R = 0.5 K, Z = 1; DFBA L = 0.5 K,
H = 0.9 K, alpha 0.5, Z = 1, the VCs weighted equally as none has an MCR), with
5 and 15 connections, contention "random" (continuous time: the earlier model)
and "slotted" (cell slots: the model), over run seeds 1..N. Prints a Markdown
table (docs/model.md, "Time and order") of means with 95 % intervals (Student
t) of:

- efficiency: total goodput over the most the link carries as TCP payload
  (155.52 Mbps x 512 / (12 x 53) = 125.2 Mbps with MSS 512);
- Jain's fairness index of the connections' goodputs, with the lowest over the
  run seeds;
- partial frames: of the TCP payload lost, the share in frames that lost only
  some of their cells (AAL5 discards the rest at the receiver).

Usage: .venv/bin/python scripts/study_contention.py [--seeds N] [--jobs N]
       [--only lan|wan] [--policies tail,epd,...]
"""

from __future__ import annotations

import argparse
import copy
import random
from concurrent.futures import ProcessPoolExecutor

MAX_GOODPUT_MBPS = 155.52 * 512 / (12 * 53)
POLICIES = ("tail", "epd", "selective_drop", "fba", "dfba")
NETWORKS = {
    # name: (km per link, window, duration, buffers)
    "lan": (1.0, "64 KB", "10 s", (1000, 3000)),
    "wan": (1000.0, "600000 B", "10 s", (12000, 36000)),
}
CELL_KM = 2_726_337e-12 / 5e-6
"""One cell time at 155.52 Mbps in km of propagation at 5 us/km (0.545 km)."""


def scenario(network: str, n: int, buffer: int, policy: str, arbitration: str, seed: int) -> dict:
    """The TOML-shaped scenario of one case: the n-source template, expanded, with
    each access link its own length."""
    from atmsim.scenario.templates import expand

    km, window, duration, _ = NETWORKS[network]
    data = {
        "template": {
            "kind": "n-source",
            "algorithm": "none",
            "n": n,
            "access_km": km,
            "bottleneck_km": km,
            "exit_km": km,
            "buffer": buffer,
            "policy": policy,
            "window": window,
            "window_scale": "auto",
            "duration": duration,
            "period": "100 ms",
        },
        "flows": {"tcp{i}": {"variant": "sack"}},
    }
    merged, _, _ = expand(data)
    merged["run"] = {**merged["run"], "seed": seed, "arbitration": arbitration}
    merged["probes"] = {"period": "100 ms"}
    access = merged["links"].pop("s{i}-sw1")
    draw = random.Random(f"access lengths {network} {n} {seed}")
    for i in range(1, n + 1):
        link = copy.deepcopy(access)
        del link["count"]
        link = {key: value.replace("{i}", str(i)) if isinstance(value, str) else value
                for key, value in link.items()}  # fmt: skip
        link["length"] = f"{km + draw.uniform(0.0, CELL_KM):.6f} km"
        merged["links"][f"s{i}-sw1"] = link
    return merged


def one(network: str, n: int, buffer: int, policy: str, arbitration: str, seed: int) -> dict:
    import atmsim
    from atmsim.compare import jain

    sc = scenario(network, n, buffer, policy, arbitration, seed)
    summary = atmsim.run(sc, progress=False).summary
    assert summary["conservation"]["ok"], summary["conservation"]
    ledger = summary["conservation"]["bytes"]
    lost = ledger["dropped_aal5"] + ledger["dropped_in_network"]
    goodputs = [flow["goodput_mbps"] for flow in summary["flows"]]
    return {
        "efficiency": sum(goodputs) / MAX_GOODPUT_MBPS,
        "jain": jain(goodputs),
        "partial": ledger["dropped_aal5"] / lost if lost else float("nan"),
    }


def main() -> None:
    from atmsim.reproduce.stats import spread

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", choices=sorted(NETWORKS), default=None)
    parser.add_argument("--policies", default=",".join(POLICIES))
    args = parser.parse_args()
    policies = args.policies.split(",")
    networks = [args.only] if args.only else list(NETWORKS)
    cases = [
        (network, n, buffer, policy, arbitration)
        for network in networks
        for n in (5, 15)
        for buffer in NETWORKS[network][3]
        for policy in policies
        for arbitration in ("random", "slotted")
    ]
    seeds = range(1, args.seeds + 1)
    with ProcessPoolExecutor(args.jobs) as pool:
        futures = {(case, s): pool.submit(one, *case, s) for case in cases for s in seeds}
        results = {key: future.result() for key, future in futures.items()}

    def cell(values: list, percent: bool, digits: int) -> str:
        values = [v for v in values if v == v]  # no loss: no share of partial frames
        if not values:
            return "no loss"
        if len(values) == 1:
            return f"{values[0] * (100 if percent else 1):.{digits}f}"
        s = spread(values)
        scale, unit = (100, " %") if percent else (1, "")
        low, high = s.low * scale, s.high * scale
        return f"{s.mean * scale:.{digits}f}{unit} [{low:.{digits}f}, {high:.{digits}f}]"

    print("| network | TCPs | buffer | policy | contention | efficiency | Jain index (lowest) "
          "| partial frames among losses |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for case in cases:
        rows = [results[(case, s)] for s in seeds]
        network, n, buffer, policy, arbitration = case
        jains = [r["jain"] for r in rows]
        print(
            f"| {network.upper()} | {n} | {buffer} | {policy.replace('_', ' ')} "
            f"| {'slots' if arbitration == 'slotted' else 'continuous'} "
            f"| {cell([r['efficiency'] for r in rows], True, 1)} "
            f"| {cell(jains, False, 3)} ({min(jains):.3f}) "
            f"| {cell([r['partial'] for r in rows], True, 0)} |"
        )


if __name__ == "__main__":
    main()
