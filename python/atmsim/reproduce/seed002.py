"""ABR and UBR buffering: Kalyanaraman, Jain, Fahmy, Goyal, "Performance and Buffering Requirements
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
from dataclasses import replace
from typing import Callable, Optional

from ..compare import ABOVE, BELOW, EXACT, REPORT, absolute, relative
from .experiments import Experiment, NullModel, Quantity, Run
from .measures import (
    LINK_MBPS,
    cells_per_segment,
    clr_percent,
    fairness,
    max_queue,
    payload_rate,
    total_goodput,
)
from .nulls import EQUAL_SHARE, NO_LOSS, predict, unless_a_null_matches

QUEUE = relative(0.25)
QUEUE_WHY = (
    "a transient peak of one run, set in the first round trips by slow start against "
    "ERICA's averaging intervals and by the unstated ABR source parameters; the paper "
    "itself only bounds it ((a x RTT + c x feedback delay) x bandwidth, in RTTs to two "
    "digits): we ask for the same value within a quarter"
)
THROUGHPUT = relative(0.05)
THROUGHPUT_WHY = (
    "loss-free and rate-limited TCP: set by ERICA's 90 % target and the cell, header "
    "and RM overheads (TCP over ABR, section 8's formula); what remains is the start-up "
    "fraction of the unstated run length, about ±5 % between 2 and 5 s"
)
NA_WHY = "the paper prints NA: 'the throughput did not reach a steady state'"
THROUGHPUT_NOT_TIGHTENED = (
    "the paper's throughputs lie within 104.89-113.37 Mbps, all within ±5 % of that "
    "constant, and ±5 % is what the unstated run length leaves, so a tighter band would "
    "judge our run length, not the mechanism"
)
SYMMETRY = "identical sources: symmetry alone predicts it"
FAIR = absolute(0.01)
FAIR_WHY = (
    "the paper: 'the rate allocations among contending sources were found to be fair in "
    "all cases'; 'fair' read as Jain's index within 0.01 of 1"
)


# --- null models: predictions from the paper's inputs alone ------------------------------

MSS = 512  # "TCP and ABR options"
NRM = 32  # TM 4.0's default (ABR and UBR buffering: "after every n (default 31) data cells")
TARGET = 0.9  # "the target utilization is set at 90 percent"
CELLS_PER_S = LINK_MBPS * 1e6 / 424
"""The link's cell rate: "RTT x link bandwidth" in cells is RTT x 366,792 cells/s (the
paper's own "15,073 = 1.36*RTT" at 30 ms)."""
WINDOW = 65535 << 4
"""The advertised window: 16 x 64 KB with window scale 4 (the ABR and UBR buffering paper, "TCP and
ABR options"; docs/scenarios.md: 1,048,560 bytes advertised)."""
SATELLITE_WINDOW = 34000 << 8  # "34,000 x 2^8 bytes" for the 550 ms rows
TARGET_MBPS = payload_rate(TARGET * CELLS_PER_S, MSS, NRM) * 8 / 1e6
"""ERICA's target rate as TCP payload: 0.9 x 155.52 Mbps of cells, 31 in 32 of them data,
12 cells per 512-byte segment: 109.16 Mbps."""

TARGET_NULL = NullModel(
    "target",
    "loss-free, rate-limited TCP carries ERICA's target (0.9 x 155.52 Mbps) times the "
    f"cell, header and RM overheads in whole cells: {TARGET_MBPS:.2f} Mbps in every row",
)
ONE_RTT = NullModel(
    "one-rtt",
    "the maximum queue is one round trip at the link rate (RTT x 366,792 cells/s), the "
    "bandwidth-delay product: the same for any number of sources and feedback delay",
)
WINDOW_SUM = NullModel(
    "window-sum",
    "without rate control the windows end up queued: the maximum queue is the sum of "
    "the n windows in cells (whole 12-cell segments of 512 bytes)",
)
ONE_RTT_ENOUGH = NullModel(
    "one-rtt-buffer",
    "a buffer of one round trip at the link rate (11,004 cells at 30 ms) loses nothing, "
    "so any larger buffer loses nothing: CLR 0",
)
ONE_FEEDBACK = NullModel(
    "one-feedback",
    "the sources learn of the overload one feedback delay late: the maximum queue is one "
    "feedback delay at the link rate, so it grows by 1 feedback delay per feedback delay",
)


def window_cells(n: int, window: int = WINDOW) -> int:
    """The sum of n windows in cells: each in whole segments of MSS 512, 12 cells each
    (the cells a window can put in the network)."""
    return n * math.ceil(window / MSS) * cells_per_segment(MSS)


def queue_nulls(n: int, rtt_ms: float, window: int = WINDOW) -> tuple:
    return (
        predict(ONE_RTT, rtt_ms / 1e3 * CELLS_PER_S),
        predict(WINDOW_SUM, window_cells(n, window)),
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
    n: int = 15,
    rtt_ms: float = 30.0,
    window: int = WINDOW,
) -> Experiment:
    """One table row: its maximum queue and throughput (and fairness), with their null
    models (n sources, round trip rtt_ms, each window ``window`` bytes); a row a null
    model matches is shown, not judged. With ``see``, the row is judged in that
    experiment: its quantities refer there and nothing runs."""
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
            nulls=queue_nulls(n, rtt_ms, window),
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
            nulls=(predict(TARGET_NULL, TARGET_MBPS),) if throughput is not None else (),
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
                nulls=(predict(EQUAL_SHARE, 1.0),),
            )
        )
    quantities = [
        unless_a_null_matches(
            q,
            THROUGHPUT_NOT_TIGHTENED
            if q.name == "total TCP throughput"
            else (SYMMETRY if q.name.startswith("fairness") else ""),
        )
        for q in quantities
    ]
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
            "ABR and UBR buffering, Table 1",
            Run("seed002-table1.toml", (f"template.n={n}",)),
            queue,
            throughput,
            fair=True,
            note="also Table 2's 1000 km row and Table 4's RTT 30 ms / 10 ms row"
            if n == 15
            else "",
            n=n,
            rtt_ms=30.0,
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
            "ABR and UBR buffering, Table 2",
            Run("seed002-table2.toml", _lengths(km, km, km)),
            queue,
            throughput,
            see=SAME_AS_N15 if km == 1000 else None,
            rtt_ms=rtt,
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
            "ABR and UBR buffering, Table 3",
            Run(
                "seed002-table3.toml",
                (*_lengths(km, km, km), f"template.interval_cells={cells}"),
            ),
            queue,
            throughput,
            rtt_ms=rtt,
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
                "ABR and UBR buffering, Table 4",
                Run(scenario, _lengths(access, rest, rest)),
                queue,
                throughput,
                weight=10.0 if satellite else 1.0,
                see=SAME_AS_N15 if (rtt, fb) == (30, 10) else None,
                rtt_ms=rtt,
                window=SATELLITE_WINDOW if satellite else WINDOW,
            )
        )
    return experiments


# --- claims across rows -----------------------------------------------------------------

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
        source=(
            "ABR and UBR buffering, abstract, Tables 1-2 and 'The effect of the number of sources'"
        ),
        runs={name: run for name, (run, _, _) in SCALING_RUNS.items()},
        figures=(),
        published=(
            unless_a_null_matches(
                Quantity(
                    "growth with sources: smaller of Q(10)/Q(5) and Q(15)/Q(10)",
                    1.0,
                    "ratio",
                    ABOVE,
                    "the paper (Table 1): 'the buffering required increases as the number of "
                    "sources increases'; both steps must increase the maximum queue",
                    _growth,
                    note=f"paper: {q[10] / q[5]:.2f}, {q[15] / q[10]:.2f}",
                    nulls=(predict(ONE_RTT, 1.0), predict(WINDOW_SUM, 1.5)),
                ),
                "a queue in proportion to n grows too; the sentence's second half, "
                "judged in the next row, tells them apart",
            ),
            Quantity(
                "second increase less the first: (Q(15) - Q(10)) - (Q(10) - Q(5))",
                0.0,
                "cells",
                BELOW,
                "the paper (Table 1): 'the amount of increase slowly decreases'",
                _increments,
                note=f"paper: {q[15] - q[10]} - {q[10] - q[5]} = "
                f"{(q[15] - q[10]) - (q[10] - q[5])}",
                nulls=(predict(ONE_RTT, 0.0), predict(WINDOW_SUM, 0.0)),
            ),
            unless_a_null_matches(
                Quantity(
                    "sublinear: largest (Q(n)/Q(5)) / (n/5), n = 10, 15",
                    1.0,
                    "ratio",
                    BELOW,
                    "the paper (abstract): the buffer requirement 'is a sublinear function "
                    "of the number of TCP connections': the queue grows more slowly than n",
                    _per_source,
                    note=f"paper: {q[10] / q[5] / 2:.2f}, {q[15] / q[5] / 3:.2f}",
                    nulls=(predict(ONE_RTT, 0.5), predict(WINDOW_SUM, 1.0)),
                ),
                "a queue that does not depend on n at all is sublinear",
            ),
            unless_a_null_matches(
                Quantity(
                    "largest maximum queue in RTTs (Tables 1-2)",
                    3.0,
                    "RTT x link rate",
                    BELOW,
                    "the paper: 'three RTTs worth of buffers are sufficient even for a large "
                    "number of sources' (Table 1) and 'typical WAN buffer requirements were "
                    "under 3 x RTT x link bandwidth' (the bound is the claim; its own Table "
                    "2 reaches 2.89)",
                    _largest_rtts,
                    nulls=(
                        predict(ONE_RTT, 1.0),
                        predict(WINDOW_SUM, window_cells(15) / (1.5e-3 * CELLS_PER_S)),
                    ),
                ),
                "a bound that the bandwidth-delay product meets; the queues it bounds are "
                "judged row by row in Tables 1-2",
            ),
            replace(
                Quantity(
                    "maximum queue in RTTs, 5 sources (RTT 30 ms)",
                    1.0,
                    "RTT x link rate",
                    BELOW,
                    "the paper: 'one RTT worth of buffering is sufficient in many cases (e.g., "
                    "where the number of sources is small)' (its Table 1: 0.95 with 5 "
                    "sources)",
                    _rtts("n5"),
                    nulls=(
                        predict(ONE_RTT, 1.0),
                        predict(WINDOW_SUM, window_cells(5) / (0.03 * CELLS_PER_S)),
                    ),
                ),
                unjudged="null model one-rtt (1) meets it (one RTT is 'sufficient'; the "
                "one-sided test is strict only to need a side); the queue itself is judged "
                "in seed002-table1-n5",
            ),
            *(
                Quantity(
                    f"maximum queue in RTTs, {name} (RTT {rtt:g} ms)",
                    None,
                    "RTT x link rate",
                    REPORT,
                    "one configuration of the bound above, shown",
                    _rtts(name),
                    note=f"paper: {PUBLISHED_RTTS[name]:g}",
                )
                for name, (_, _, rtt) in SCALING_RUNS.items()
                if name != "n5"
            ),
        ),
        notes=(
            "The runs of seed002-table1-n5/-n10/-n15 and seed002-table2-500km/-200km/-50km "
            "again (same scenarios and run seeds), compared run seed by run seed. RTT x link "
            "rate = RTT x 366,792 cells/s.",
        ),
    )


UBR_SOURCES = (5, 15)
"""Table 1's fewest and most sources."""


def window_sum_cells(n: int) -> int:
    """The sum of n windows in cells (``window_cells``)."""
    return window_cells(n)


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
        source="ABR and UBR buffering, 'Buffering requirements for TCP over UBR', summary",
        runs=_ubr_runs(),
        figures=("window", "queue"),
        figure_runs=tuple(f"half-n{n}" for n in UBR_SOURCES),
        published=(
            unless_a_null_matches(
                Quantity(
                    "CLR with a buffer of the sum of the windows (largest over 5, 15 sources)",
                    0.0,
                    "%",
                    EXACT,
                    "the paper: 'TCP using UBR requires network buffers equal to the sum of "
                    "the MAXWINs of all TCP connections to avoid cell loss': that much "
                    "suffices",
                    _largest_clr("sum"),
                    nulls=(predict(NO_LOSS, 0.0), predict(ONE_RTT_ENOUGH, 0.0)),
                ),
                "that the sum is required, not merely enough, is judged in the next row",
            ),
            Quantity(
                "CLR with half that buffer (smallest over 5, 15 sources)",
                0.0,
                "%",
                ABOVE,
                "the paper, as above: the sum is required ('UBR service is not scalable'); "
                "half of it must lose cells",
                _smallest_clr("half"),
                nulls=(predict(NO_LOSS, 0.0), predict(ONE_RTT_ENOUGH, 0.0)),
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


# --- the buffer formula: (a x RTT + c x feedback delay) x link bandwidth ------------------

FORMULA_RUNS = {
    # run name: (run, sources, RTT ms, feedback delay ms): Tables 1, 2 and 4 up to 30 ms
    # (the satellite rows' 550 ms aside), each configuration once
    "n5": (Run("seed002-table1.toml", ("template.n=5",)), 5, 30.0, 10.0),
    "n10": (Run("seed002-table1.toml", ("template.n=10",)), 10, 30.0, 10.0),
    "n15": (Run("seed002-table1.toml", ("template.n=15",)), 15, 30.0, 10.0),
    "500km": (Run("seed002-table2.toml", _lengths(500, 500, 500)), 15, 15.0, 5.0),
    "200km": (Run("seed002-table2.toml", _lengths(200, 200, 200)), 15, 6.0, 2.0),
    "50km": (Run("seed002-table2.toml", _lengths(50, 50, 50)), 15, 1.5, 0.5),
    "rtt15-fb10us": (Run("seed002-table4.toml", _lengths(1, 749.5, 749.5)), 15, 15.0, 0.01),
    "rtt15-fb1ms": (Run("seed002-table4.toml", _lengths(100, 700, 700)), 15, 15.0, 1.0),
    "rtt15-fb10ms": (Run("seed002-table4.toml", _lengths(1000, 250, 250)), 15, 15.0, 10.0),
    "rtt30-fb10us": (Run("seed002-table4.toml", _lengths(1, 1499.5, 1499.5)), 15, 30.0, 0.01),
    "rtt30-fb1ms": (Run("seed002-table4.toml", _lengths(100, 1450, 1450)), 15, 30.0, 1.0),
}
"""The RTT 30 ms, feedback delay 10 ms configuration of Table 4 is Table 1's n = 15."""
C_RUNS = {15: ("rtt15-fb10us", "rtt15-fb10ms"), 30: ("rtt30-fb10us", "n15")}
"""Per RTT (ms), Table 4's runs at feedback delays 10 us and 10 ms."""
PUBLISHED_C = {15: (709, 17833), 30: (719, 15073)}
"""Table 4's maximum queues at feedback delays 10 us and 10 ms, per RTT (ms)."""
A, C_BOUND = 3, 4
"""The paper: 'the coefficient a was a small constant (3)'; 'the value of c was observed
to be not greater than 4'."""


def c_of(low: float, high: float) -> float:
    """The growth of the maximum queue from feedback delay 10 us to 10 ms, in feedback
    delays x link rate: the coefficient c of (a x RTT + c x feedback delay)."""
    return (high - low) / (9.99e-3 * CELLS_PER_S)


def _c(rtt: int):
    def extract(results):
        low, high = (max_queue(results[name]) for name in C_RUNS[rtt])
        return c_of(low, high), f"Q(10 us) {low:.0f}, Q(10 ms) {high:.0f} cells"

    return extract


def _largest_c(results) -> tuple[float, str]:
    values = {rtt: _c(rtt)(results)[0] for rtt in C_RUNS}
    worst = max(values, key=values.get)
    return values[worst], ", ".join(f"RTT {rtt} ms {v:.2f}" for rtt, v in values.items())


def formula_cells(rtt_ms: float, fb_ms: float) -> float:
    """(3 x RTT + 4 x feedback delay) x link rate, in cells."""
    return (A * rtt_ms + C_BOUND * fb_ms) / 1e3 * CELLS_PER_S


def _largest_in_formula(results) -> tuple[float, str]:
    ratios = {
        name: max_queue(results[name]) / formula_cells(rtt, fb)
        for name, (_, _, rtt, fb) in FORMULA_RUNS.items()
    }
    worst = max(ratios, key=ratios.get)
    return ratios[worst], f"largest: {worst}"


def _formula() -> Experiment:
    c_published = {rtt: c_of(*PUBLISHED_C[rtt]) for rtt in C_RUNS}
    one_rtt_in_formula = max(
        rtt / (A * rtt + C_BOUND * fb) for _, _, rtt, fb in FORMULA_RUNS.values()
    )
    window_in_formula = max(
        window_cells(n) / formula_cells(rtt, fb) for _, n, rtt, fb in FORMULA_RUNS.values()
    )
    c_nulls = (predict(ONE_RTT, 0.0), predict(WINDOW_SUM, 0.0), predict(ONE_FEEDBACK, 1.0))
    c_why = (
        "the coefficient c of the paper's formula, measured as its own Table 4 allows: the "
        "growth of the maximum queue from feedback delay 10 us to 10 ms at one RTT, in "
        "feedback delays x link rate; the maximum-queue rule (±25 %), the 10 ms queue "
        "making most of the difference"
    )
    return Experiment(
        id="seed002-formula",
        title="the buffer formula (a x RTT + c x feedback delay) x link: a = 3, c <= 4",
        source="ABR and UBR buffering, 'Buffering requirements for TCP over ABR', Table 4",
        runs={name: run for name, (run, _, _, _) in FORMULA_RUNS.items()},
        figures=(),
        published=(
            *(
                Quantity(
                    f"c at RTT {rtt} ms: (Q(fb 10 ms) - Q(fb 10 us)) / (9.99 ms x link rate)",
                    round(c_published[rtt], 2),
                    "feedback delays",
                    QUEUE,
                    c_why + f" (the paper's {PUBLISHED_C[rtt][1]:,} and {PUBLISHED_C[rtt][0]} "
                    "cells)",
                    _c(rtt),
                    nulls=c_nulls,
                )
                for rtt in C_RUNS
            ),
            unless_a_null_matches(
                Quantity(
                    "c not greater than 4: the larger of c at RTT 15 and 30 ms",
                    float(C_BOUND),
                    "feedback delays",
                    BELOW,
                    "the paper: 'in all our simulations [7] the value of c was observed to "
                    "be not greater than 4' (its own Table 4 gives "
                    + ", ".join(f"{c_published[rtt]:.2f}" for rtt in C_RUNS)
                    + " at RTT 15 and 30 ms)",
                    _largest_c,
                    nulls=c_nulls,
                ),
                "a queue that does not grow with the feedback delay meets the bound; c's "
                "value is judged in the rows above",
            ),
            unless_a_null_matches(
                Quantity(
                    "largest maximum queue / ((3 x RTT + 4 x feedback delay) x link rate)",
                    1.0,
                    "ratio",
                    BELOW,
                    "the paper: the buffer requirement 'is approximately (a x RTT + c x "
                    "feedback delay) x link bandwidth', 'the coefficient a was a small "
                    "constant (3)', c not greater than 4: a bound on every maximum queue of "
                    "Tables 1, 2 and 4 up to RTT 30 ms (the LAN rows of Table 3 are the "
                    "averaging interval's, as the paper says, and the satellite rows have NA "
                    "throughputs)",
                    _largest_in_formula,
                    nulls=(
                        predict(ONE_RTT, one_rtt_in_formula),
                        predict(WINDOW_SUM, window_in_formula),
                    ),
                ),
                "a bound that the bandwidth-delay product meets; the queues it bounds are "
                "judged row by row",
            ),
        ),
        notes=(
            "The runs of Tables 1, 2 and 4 up to RTT 30 ms again (the same scenarios and "
            "run seeds); Table 4's RTT 30 ms / 10 ms row is Table 1's n = 15.",
        ),
    )


EXPERIMENTS = [*_table1(), *_table2(), *_table3(), *_table4(), _scaling(), _formula(), _ubr()]
