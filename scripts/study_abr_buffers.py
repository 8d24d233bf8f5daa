"""The switch buffer of TCP over ABR with ERICA against the number of sources and the RTT.

ABR and UBR buffering (Kalyanaraman, Jain, Fahmy, Goyal, "Performance and Buffering Requirements
of Internet Protocols over ATM ABR and UBR Services") claims that with a good
switch algorithm and the right parameters the buffer for zero loss is bounded by
(a x RTT + c x feedback delay) x link rate, "typical WAN buffer requirements were
under 3 x RTT x link bandwidth", and nearly independent of the number of sources.
This study runs the ``n-source`` template (python/atmsim/scenario/templates.py) with n = 5,
10, 15 and 30 sources and three links of equal length L, RTT = 6 x L x 5 us/km
(167, 333, 667, 1333 km: RTT 5, 10, 20, 40 ms), an unlimited buffer, TCP as
the ABR and UBR buffering paper states it (MSS 512, window 16 x 64 KB, infinite sources; the
template's Tahoe), ERICA at 90 % with (1 ms, 100 cells), and the ABR source parameters of
the ABR and UBR buffering reproduction (TM 4.0's defaults: ICR = PCR, RIF = RDF = CDF = 1/16,
TBE 16,777,215, ADTF 0.5 s), 2 s per run, run seeds 1-3.

Configurations (docs/model.md, "ABR", says which sources each option follows):

- defaults: the project's defaults (ERICA takes CCR from the forward RM cells
  and counts a VC seen by its backward RM cells as active; no source
  use-it-or-lose-it);
- measured rate: the defaults with ERICA's per-VC CCR measurement option (each
  VC's rate over the averaging interval instead of the CCR field);
- no bidirectional count: the defaults, counting only the VCs whose forward
  cells were seen (the earlier default);
- measured rate, no bidirectional count;
- source UILI: the defaults with the source's use-it-or-lose-it option (a
  no-op here: it lowers ACR to the rate used but not below ICR, which is PCR).

Printed: a Markdown table with, per configuration and RTT, the maximum queue at
the bottleneck (the largest over the run seeds) for each n, in cells and in RTT x
link rate (366,792 cells/s), the mean goodput of all the connections (Mbps, mean
over the run seeds), whether every n stays within 3 RTT x link rate, and whether the
queue is nearly independent of n (largest less smallest over n at most 0.5 RTT x
link rate). Usage: .venv/bin/python scripts/study_abr_buffers.py [--seeds N]
[--jobs N] [--duration "2 s"]
"""

from __future__ import annotations

import argparse
import statistics
from concurrent.futures import ProcessPoolExecutor

LINK_CPS = 155.52e6 / (53 * 8)
SOURCES = (5, 10, 15, 30)
LENGTHS_KM = (167, 333, 667, 1333)
CONFIGS = {
    "defaults": {},
    "measured rate": {"measured_rate": True},
    "no bidirectional count": {"bidirectional_count": False},
    "measured rate, no bidirectional count": {"measured_rate": True, "bidirectional_count": False},
    "source UILI": {"use_it_or_lose_it": True},
}
"""Each configuration's departures from the defaults."""


def rtt_s(km: float) -> float:
    """Round trip of three links of ``km`` each: 2 x 3 x km x 5 us/km."""
    return 6 * km * 5e-6


def scenario(n: int, km: float, config: dict, duration: str) -> dict:
    """The n-source template with ABR and UBR buffering's source parameters and ``config``."""
    abr = {"icr": "auto", "rif": "1/16", "rdf": "1/16", "cdf": "1/16"}
    algorithm: dict = {"kind": "erica"}
    for key, value in config.items():
        if key == "use_it_or_lose_it":
            abr[key] = value
        else:
            algorithm[key] = value
    return {
        "template": {
            "kind": "n-source",
            "n": n,
            "access_km": km,
            "bottleneck_km": km,
            "exit_km": km,
            "buffer": "inf",
            "tbe": 16777215,
            "duration": duration,
        },
        "flows": {"tcp{i}": {"abr": abr}},
        "links": {"sw1-sw2": {"algorithm": algorithm}},
        "probes": {"flows": [], "queue": []},
    }


def one(n: int, km: float, name: str, seed: int, duration: str) -> dict:
    import atmsim

    result = atmsim.run(scenario(n, km, CONFIGS[name], duration), seed=seed, progress=False)
    port = next(p for p in result.summary["ports"] if p["name"] == "sw1-sw2")
    return {
        "max_queue": port["max_queue_cells"],
        "goodput": sum(flow["goodput_mbps"] for flow in result.summary["flows"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--duration", default="2 s")
    args = parser.parse_args()
    seeds = range(1, args.seeds + 1)
    keys = [(name, km, n) for name in CONFIGS for km in LENGTHS_KM for n in SOURCES]
    with ProcessPoolExecutor(args.jobs) as pool:
        futures = {
            (key, seed): pool.submit(one, key[2], key[1], key[0], seed, args.duration)
            for key in keys
            for seed in seeds
        }
        results = {key: future.result() for key, future in futures.items()}
    header = " | ".join(f"n = {n}: max queue (RTTs), goodput" for n in SOURCES)
    print(f"| configuration | RTT | {header} | within 3 RTT | nearly independent of n |")
    print("|---|---|" + "---|" * len(SOURCES) + "---|---|")
    for name in CONFIGS:
        for km in LENGTHS_KM:
            rtt_cells = rtt_s(km) * LINK_CPS
            cells, in_rtts = [], []
            for n in SOURCES:
                runs = [results[((name, km, n), seed)] for seed in seeds]
                worst = max(run["max_queue"] for run in runs)
                cells.append(
                    f"{worst:,} ({worst / rtt_cells:.2f}), "
                    f"{statistics.fmean(run['goodput'] for run in runs):.1f}"
                )
                in_rtts.append(worst / rtt_cells)
            within = "yes" if max(in_rtts) <= 3 else "no"
            spread = max(in_rtts) - min(in_rtts)
            flat = f"{'yes' if spread <= 0.5 else 'no'} ({spread:.2f})"
            print(
                f"| {name} | {rtt_s(km) * 1e3:.0f} ms | {' | '.join(cells)} | {within} | {flat} |"
            )


if __name__ == "__main__":
    main()
