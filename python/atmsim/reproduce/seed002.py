"""Seed 002: Kalyanaraman, Jain, Fahmy, Goyal, "Performance and Buffering Requirements
of Internet Protocols over ATM ABR and UBR Services" (IEEE Comm. Mag. 1998): the n
source configuration (Figure 5), Tables 1-4 (maximum queue and throughput).

One experiment per table row; Table 1's 15-source row, Table 2's 1000 km row and
Table 4's RTT 30 ms / feedback delay 10 ms row are one configuration with one
published result, judged in seed002-table1-n15 (the other two rows refer to it).
Experiments across rows: the buffer's growth with the number of sources and its
bound in RTTs (seed002-scaling), and UBR's sum-of-windows rule (seed002-ubr-windows).
Scenario files: scenarios/reproduce/seed002-*.toml.
Link lengths: all equal in Tables 1-3 (RTT = 2 x 5 us/km x 3L, feedback delay =
2 x 5 us/km x L); in Table 4 the access links set the feedback delay and the
bottleneck and exit links share the rest of the RTT equally (the files show the
arithmetic).
"""

from __future__ import annotations

import math
from typing import Callable, Optional

from ..compare import ABOVE, BELOW, EXACT, REPORT, absolute, relative
from . import Experiment, Quantity, Run
from .measures import LINK_MBPS, cells_per_segment, clr_percent, fairness, max_queue, total_goodput

QUEUE = relative(0.25)
QUEUE_WHY = (
    "a transient peak of one run, set in the first round trips by slow start against "
    "ERICA's averaging intervals and by the unstated ABR source parameters; the seed "
    "itself only bounds it ((a x RTT + c x feedback delay) x bandwidth, in RTTs to two "
    "digits): we ask for the same value within a quarter"
)
THROUGHPUT = relative(0.05)
THROUGHPUT_WHY = (
    "loss-free and rate-limited TCP: set by ERICA's 90 % target and the cell, header "
    "and RM overheads (seed 000 section 8's formula); what remains is the start-up "
    "fraction of the unstated run length, about ±5 % between 2 and 5 s"
)
NA_WHY = "the seed prints NA: 'the throughput did not reach a steady state'"
FAIR = absolute(0.01)
FAIR_WHY = (
    "the seed: 'the rate allocations among contending sources were found to be fair in "
    "all cases'; 'fair' read as Jain's index within 0.01 of 1"
)


def _lengths(access: float, bottleneck: float, exit_km: float) -> tuple[str, ...]:
    return (
        f"template.access_km={access:g}",
        f"template.bottleneck_km={bottleneck:g}",
        f"template.exit_km={exit_km:g}",
    )


SAME_AS_N15 = "seed002-table1-n15"
"""Where the configuration of Table 1 n = 15, Table 2 1000 km and Table 4 RTT 30 ms /
feedback delay 10 ms (15 sources, three 1000 km links) is judged."""


def _row(
    id: str,
    title: str,
    source: str,
    run: Run,
    queue: float,
    throughput: Optional[float],
    fair: bool = False,
    weight: float = 1.0,
    see: Optional[str] = None,
    note: str = "",
) -> Experiment:
    """One table row: its maximum queue and throughput (and fairness). With ``see``,
    the row is judged in that experiment: its quantities refer there and nothing runs."""
    quantities = [
        Quantity(
            "maximum queue at the bottleneck",
            queue,
            "cells",
            QUEUE,
            QUEUE_WHY,
            lambda r: max_queue(r["main"]),
            note=note,
            see=see,
        ),
        Quantity(
            "total TCP throughput",
            throughput,
            "Mbps",
            THROUGHPUT if throughput is not None else REPORT,
            THROUGHPUT_WHY if throughput is not None else NA_WHY,
            lambda r: total_goodput(r["main"]),
            note=note,
            see=see,
        ),
    ]
    if fair:
        quantities.append(
            Quantity(
                "fairness (Jain index of the throughputs)",
                1.0,
                "",
                FAIR,
                FAIR_WHY,
                lambda r: fairness(r["main"]),
            )
        )
    return Experiment(
        id=id,
        title=title,
        source=source,
        runs={} if see is not None else {"main": run},
        published=tuple(quantities),
        weight=weight,
    )


def _table1() -> list[Experiment]:
    rows = ((5, 10597, 104.89), (10, 14460, 105.84), (15, 15073, 107.13))
    return [
        _row(
            f"seed002-table1-n{n}",
            f"{n} sources, RTT 30 ms, feedback delay 10 ms",
            "seed 002 Table 1",
            Run("seed002-table1.toml", (f"template.n={n}",)),
            queue,
            throughput,
            fair=True,
            note="also Table 2's 1000 km row and Table 4's RTT 30 ms / 10 ms row"
            if n == 15
            else "",
        )
        for n, queue, throughput in rows
    ]


def _table2() -> list[Experiment]:
    rows = (
        (1000, 30, 10, 15073, 107.13),
        (500, 15, 5, 12008, 108.00),
        (200, 6, 2, 6223, 109.99),
        (50, 1.5, 0.5, 1596, 110.56),
    )
    return [
        _row(
            f"seed002-table2-{km}km",
            f"15 sources, links {km} km: RTT {rtt:g} ms, feedback delay {fb:g} ms",
            "seed 002 Table 2",
            Run("seed002-table2.toml", _lengths(km, km, km)),
            queue,
            throughput,
            see=SAME_AS_N15 if km == 1000 else None,
        )
        for km, rtt, fb, queue, throughput in rows
    ]


def _table3() -> list[Experiment]:
    rows = (
        (500, 50, 1.5, 0.5, 2511, 109.46),
        (1000, 50, 1.5, 0.5, 2891, 109.23),
        (500, 1, 0.030, 0.010, 2253, 109.34),
        (1000, 1, 0.030, 0.010, 3597, 109.81),
    )
    return [
        _row(
            f"seed002-table3-{km}km-{cells}cells",
            f"15 sources, averaging (10 ms, {cells} cells), RTT {rtt:g} ms, "
            f"feedback delay {fb:g} ms",
            "seed 002 Table 3",
            Run(
                "seed002-table3.toml",
                (*_lengths(km, km, km), f"template.interval_cells={cells}"),
            ),
            queue,
            throughput,
        )
        for cells, km, rtt, fb, queue, throughput in rows
    ]


FB_NAMES = {0.01: "10us", 1: "1ms", 10: "10ms"}
"""Feedback delay (ms) -> id part."""


def _table4() -> list[Experiment]:
    rows = (
        (15, 0.01, 709, 113.37),
        (15, 1, 3193, 112.87),
        (15, 10, 17833, 109.86),
        (30, 0.01, 719, 105.94),
        (30, 1, 2928, 106.9),
        (30, 10, 15073, 107.13),
        (550, 0.01, 2059, None),
        (550, 1, 15307, None),
        (550, 10, 17309, None),
    )
    experiments = []
    for rtt, fb, queue, throughput in rows:
        access = fb / 0.01  # feedback delay = 2 x 5 us/km x access
        rest = (rtt / 0.01 - access) / 2  # RTT = 2 x 5 us/km x (access + 2 x rest)
        satellite = rtt == 550
        scenario = "seed002-table4-satellite.toml" if satellite else "seed002-table4.toml"
        experiments.append(
            _row(
                f"seed002-table4-rtt{rtt}-fb{FB_NAMES[fb]}",
                f"15 sources, RTT {rtt} ms, feedback delay {fb:g} ms "
                f"(links {access:g} / {rest:g} / {rest:g} km)",
                "seed 002 Table 4",
                Run(scenario, _lengths(access, rest, rest)),
                queue,
                throughput,
                weight=10.0 if satellite else 1.0,
                see=SAME_AS_N15 if (rtt, fb) == (30, 10) else None,
            )
        )
    return experiments


# --- claims across rows -----------------------------------------------------------------

CELLS_PER_S = LINK_MBPS * 1e6 / 424
"""The link's cell rate: "RTT x link bandwidth" in cells is RTT x 366,792 cells/s (the
seed's own "15,073 = 1.36*RTT" at 30 ms)."""

SCALING_RUNS = {
    # run name: (run, sources, RTT in ms): Tables 1 and 2 (their 15 sources / 1000 km
    # configuration once)
    "n5": (Run("seed002-table1.toml", ("template.n=5",)), 5, 30.0),
    "n10": (Run("seed002-table1.toml", ("template.n=10",)), 10, 30.0),
    "n15": (Run("seed002-table1.toml", ("template.n=15",)), 15, 30.0),
    "500km": (Run("seed002-table2.toml", _lengths(500, 500, 500)), 15, 15.0),
    "200km": (Run("seed002-table2.toml", _lengths(200, 200, 200)), 15, 6.0),
    "50km": (Run("seed002-table2.toml", _lengths(50, 50, 50)), 15, 1.5),
}


def _rtts(name: str) -> Callable[[dict], float]:
    """A run's maximum queue in RTTs of cells at the link rate."""
    rtt_ms = SCALING_RUNS[name][2]

    def extract(results):
        return max_queue(results[name]) / (rtt_ms / 1e3 * CELLS_PER_S)

    return extract


def _largest_rtts(results) -> tuple[float, str]:
    ratios = {name: _rtts(name)(results) for name in SCALING_RUNS}
    worst = max(ratios, key=ratios.get)
    return ratios[worst], f"largest: {worst}"


def _growth(results) -> tuple[float, str]:
    """The smaller of Q(10) / Q(5) and Q(15) / Q(10)."""
    q = {n: max_queue(results[f"n{n}"]) for n in (5, 10, 15)}
    ratios = {"10/5": q[10] / q[5], "15/10": q[15] / q[10]}
    worst = min(ratios, key=ratios.get)
    return ratios[worst], f"Q(5), Q(10), Q(15) = {q[5]:.0f}, {q[10]:.0f}, {q[15]:.0f} cells"


def _increments(results) -> float:
    """(Q(15) - Q(10)) - (Q(10) - Q(5)): the second increase less the first."""
    q = {n: max_queue(results[f"n{n}"]) for n in (5, 10, 15)}
    return (q[15] - q[10]) - (q[10] - q[5])


def _per_source(results) -> tuple[float, str]:
    """The largest of (Q(n) / Q(5)) / (n / 5) for n = 10, 15: below 1 when the queue
    grows more slowly than the number of sources."""
    q = {n: max_queue(results[f"n{n}"]) for n in (5, 10, 15)}
    ratios = {n: (q[n] / q[5]) / (n / 5) for n in (10, 15)}
    worst = max(ratios, key=ratios.get)
    return ratios[worst], f"largest at n = {worst}"


PUBLISHED_Q = {5: 10597, 10: 14460, 15: 15073}
PUBLISHED_RTTS = {"n5": 0.95, "n10": 1.31, "n15": 1.36, "500km": 2.18, "200km": 2.82, "50km": 2.89}


def _scaling() -> Experiment:
    q = PUBLISHED_Q
    return Experiment(
        id="seed002-scaling",
        title="the maximum queue against the number of sources and in RTTs (Tables 1-2)",
        source="seed 002 abstract, Tables 1-2 and 'The effect of the number of sources'",
        runs={name: run for name, (run, _, _) in SCALING_RUNS.items()},
        figures=(),
        published=(
            Quantity(
                "growth with sources: smaller of Q(10)/Q(5) and Q(15)/Q(10)",
                1.0,
                "ratio",
                ABOVE,
                "the seed (Table 1): 'the buffering required increases as the number of "
                "sources increases'; both steps must increase the maximum queue",
                _growth,
                note=f"seed: {q[10] / q[5]:.2f}, {q[15] / q[10]:.2f}",
            ),
            Quantity(
                "second increase less the first: (Q(15) - Q(10)) - (Q(10) - Q(5))",
                0.0,
                "cells",
                BELOW,
                "the seed (Table 1): 'the amount of increase slowly decreases'",
                _increments,
                note=f"seed: {q[15] - q[10]} - {q[10] - q[5]} = {(q[15] - q[10]) - (q[10] - q[5])}",
            ),
            Quantity(
                "sublinear: largest (Q(n)/Q(5)) / (n/5), n = 10, 15",
                1.0,
                "ratio",
                BELOW,
                "the seed (abstract): the buffer requirement 'is a sublinear function of the "
                "number of TCP connections': the queue grows more slowly than n",
                _per_source,
                note=f"seed: {q[10] / q[5] / 2:.2f}, {q[15] / q[5] / 3:.2f}",
            ),
            Quantity(
                "largest maximum queue in RTTs (Tables 1-2)",
                3.0,
                "RTT x link rate",
                BELOW,
                "the seed: 'three RTTs worth of buffers are sufficient even for a large "
                "number of sources' (Table 1) and 'typical WAN buffer requirements were "
                "under 3 x RTT x link bandwidth' (the bound is the claim; its own Table 2 "
                "reaches 2.89)",
                _largest_rtts,
            ),
            *(
                Quantity(
                    f"maximum queue in RTTs, {name} (RTT {rtt:g} ms)",
                    None,
                    "RTT x link rate",
                    REPORT,
                    "one configuration of the bound above, shown",
                    _rtts(name),
                    note=f"seed: {PUBLISHED_RTTS[name]:g}",
                )
                for name, (_, _, rtt) in SCALING_RUNS.items()
            ),
        ),
        notes=(
            "The runs of seed002-table1-n5/-n10/-n15 and seed002-table2-500km/-200km/-50km "
            "again (same scenarios and seeds), compared seed by seed. RTT x link rate = RTT "
            "x 366,792 cells/s.",
        ),
    )


UBR_SOURCES = (5, 15)
"""Table 1's fewest and most sources."""
UBR_WINDOW = 65535 << 4
"""The advertised window: 16 x 64 KB with window scale 4 (seed 002, "TCP and ABR
options"; docs/scenarios.md: 1,048,560 bytes advertised)."""
UBR_MSS = 512


def window_sum_cells(n: int) -> int:
    """The sum of n windows in cells: each window in whole segments of MSS 512, 12 cells
    each (the cells a window can put in the network)."""
    return n * math.ceil(UBR_WINDOW / UBR_MSS) * cells_per_segment(UBR_MSS)


def _ubr_runs() -> dict:
    runs = {}
    for n in UBR_SOURCES:
        total = window_sum_cells(n)
        runs[f"sum-n{n}"] = Run("seed002-ubr.toml", (f"template.n={n}", f"template.buffer={total}"))
        runs[f"half-n{n}"] = Run(
            "seed002-ubr.toml", (f"template.n={n}", f"template.buffer={total // 2}")
        )
    return runs


def _largest_clr(prefix: str):
    def extract(results):
        values = {n: clr_percent(results[f"{prefix}-n{n}"]) for n in UBR_SOURCES}
        return max(values.values()), ", ".join(f"{n} sources {v:.3g} %" for n, v in values.items())

    return extract


def _smallest_clr(prefix: str):
    def extract(results):
        values = {n: clr_percent(results[f"{prefix}-n{n}"]) for n in UBR_SOURCES}
        return min(values.values()), ", ".join(f"{n} sources {v:.3g} %" for n, v in values.items())

    return extract


def _clr_of(run: str):
    def extract(results):
        return clr_percent(results[run])

    return extract


def _queue_share(n: int):
    def extract(results):
        return max_queue(results[f"sum-n{n}"]) / window_sum_cells(n)

    return extract


def _ubr() -> Experiment:
    sums = ", ".join(f"{window_sum_cells(n):,} cells for {n}" for n in UBR_SOURCES)
    return Experiment(
        id="seed002-ubr-windows",
        title="UBR: a buffer of the sum of the windows loses nothing, half of it loses",
        source="seed 002 'Buffering requirements for TCP over UBR', summary",
        runs=_ubr_runs(),
        figures=("window", "queue"),
        figure_runs=tuple(f"half-n{n}" for n in UBR_SOURCES),
        published=(
            Quantity(
                "CLR with a buffer of the sum of the windows (largest over 5, 15 sources)",
                0.0,
                "%",
                EXACT,
                "the seed: 'TCP using UBR requires network buffers equal to the sum of the "
                "MAXWINs of all TCP connections to avoid cell loss': that much suffices",
                _largest_clr("sum"),
            ),
            Quantity(
                "CLR with half that buffer (smallest over 5, 15 sources)",
                0.0,
                "%",
                ABOVE,
                "the seed, as above: the sum is required ('UBR service is not scalable'); "
                "half of it must lose cells",
                _smallest_clr("half"),
            ),
            *(
                Quantity(
                    f"CLR, {prefix} buffer, {n} sources",
                    None,
                    "%",
                    REPORT,
                    "one configuration of the claims above, shown",
                    _clr_of(f"{prefix}-n{n}"),
                )
                for prefix in ("sum", "half")
                for n in UBR_SOURCES
            ),
            *(
                Quantity(
                    f"maximum queue / sum of the windows, {n} sources",
                    None,
                    "ratio",
                    REPORT,
                    "shown: what the windows leave queued beyond the pipe (RTT 30 ms)",
                    _queue_share(n),
                )
                for n in UBR_SOURCES
            ),
        ),
        notes=(
            f"Sum of the windows: {sums} (each 1,048,560-byte window in whole 512-byte "
            "segments of 12 cells). Tail drop at the bottleneck, no ABR.",
        ),
    )


EXPERIMENTS = [*_table1(), *_table2(), *_table3(), *_table4(), _scaling(), _ubr()]
