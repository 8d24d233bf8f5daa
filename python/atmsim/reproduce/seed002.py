"""Seed 002: Kalyanaraman, Jain, Fahmy, Goyal, "Performance and Buffering Requirements
of Internet Protocols over ATM ABR and UBR Services" (IEEE Comm. Mag. 1998): the n
source configuration (Figure 5), Tables 1-4 (maximum queue and throughput).

One experiment per table row. Scenario files: scenarios/reproduce/seed002-*.toml.
Link lengths: all equal in Tables 1-3 (RTT = 2 x 5 us/km x 3L, feedback delay =
2 x 5 us/km x L); in Table 4 the access links set the feedback delay and the
bottleneck and exit links share the rest of the RTT equally (the files show the
arithmetic).
"""

from __future__ import annotations

from typing import Optional

from ..compare import REPORT, absolute, relative
from . import Experiment, Quantity, Run
from .measures import fairness, max_queue, total_goodput

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


def _row(
    id: str,
    title: str,
    source: str,
    run: Run,
    queue: float,
    throughput: Optional[float],
    fair: bool = False,
    weight: float = 1.0,
) -> Experiment:
    quantities = [
        Quantity(
            "maximum queue at the bottleneck",
            queue,
            "cells",
            QUEUE,
            QUEUE_WHY,
            lambda r: max_queue(r["main"]),
        ),
        Quantity(
            "total TCP throughput",
            throughput,
            "Mbps",
            THROUGHPUT if throughput is not None else REPORT,
            THROUGHPUT_WHY if throughput is not None else NA_WHY,
            lambda r: total_goodput(r["main"]),
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
        runs={"main": run},
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
            )
        )
    return experiments


EXPERIMENTS = [*_table1(), *_table2(), *_table3(), *_table4()]
