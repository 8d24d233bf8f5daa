"""Seed 003: An, Ansari, Arulambalam, "TCP/IP traffic over ATM networks with FMMRA ABR
flow and congestion control" (1998): EFCI, ERICA and FMMRA compared in a LAN
(section 4, Fig. 2) with N TCP connections and a VBR on/off background.

The seed publishes figures and claims, few numbers: most quantities are
comparisons (a ratio FMMRA / ERICA with the published direction as tolerance,
``atmsim.compare``), next to "n/a" rows that show the simulated values behind
them. atmsim's FMMRA is our reconstruction of the seed's description
(docs/model.md, section "ABR"): exact max-min rates at 100 % of the capacity,
no queue control. Scenario files: scenarios/reproduce/seed003-*.toml.
"""

from __future__ import annotations

from ..compare import ABOVE, BELOW, EXACT, REPORT, above, absolute
from . import Experiment, Quantity, Run
from .measures import (
    acr_error,
    acr_settling_ms,
    clr_percent,
    fairness,
    max_queue,
    total_goodput,
    utilization,
    worst_cumulative_jain,
)

ALGORITHMS = ("efci", "erica", "fmmra")
NAMES = {"efci": "EFCI", "erica": "ERICA", "fmmra": "FMMRA"}
VBR_START_S = 0.3  # seed 003 section 4: the VBR starts at t = 300 ms
VBR_MBPS = 100.0  # seed 003 section 4

CLAIM_WHY = "a direction stated by the seed, no number: the ratio must be on its side of 1"
FAIRER = above(0.01)
FAIRER_WHY = "'fairer' read as a Jain index higher by more than 0.01 (the resolution of 'fair')"
FIGURES = ("abr_queue", "acr", "window", "sequence")
"""The figures of every comparison (one panel per algorithm); "throughput" is added
where the seed plots effective throughput (Figs. 9-11, 15-17)."""
TRANSIENT_START_S = 0.1
"""Transient fairness is measured from 0.1 s on: by then each flow has sent at least
about ten 9180-byte segments, so one segment more or less no longer moves the index."""


def _runs(scenario: str, algorithms=ALGORITHMS, overrides=()) -> dict:
    return {
        algorithm: Run(scenario, (*overrides, f"template.algorithm={algorithm}"))
        for algorithm in algorithms
    }


def _lan(n: int, period_ms: int, buffer="inf") -> tuple[str, ...]:
    return (
        f"template.n={n}",
        f"template.vbr_period={period_ms} ms",
        f"template.buffer={buffer}",
    )


def _ratio(value, a: str, b: str):
    """value(run a) / value(run b), with both in the note."""

    def extract(results):
        x, y = value(results[a]), value(results[b])
        return x / y, f"{NAMES[a]} {x:.4g}, {NAMES[b]} {y:.4g}"

    return extract


def _difference(value, a: str, b: str):
    """value(run a) - value(run b), with both in the note."""

    def extract(results):
        x, y = value(results[a]), value(results[b])
        return x - y, f"{NAMES[a]} {x:.4g}, {NAMES[b]} {y:.4g}"

    return extract


def _report(name: str, unit: str, value, run: str) -> Quantity:
    return Quantity(
        f"{name}, {NAMES[run]}",
        None,
        unit,
        REPORT,
        "not published (figures only)",
        lambda results: value(results[run]),
    )


def _queue(n: int, period_ms: int) -> Experiment:
    figs = "3-5" if n == 2 else "6-8"
    return Experiment(
        id=f"seed003-queue-{n}tcp-{period_ms}ms",
        title=f"ABR queue, {n} TCP + VBR {period_ms} ms on/off: EFCI, ERICA, FMMRA",
        source=f"seed 003 section 4.2 observations 1 and 4, Figs. {figs}",
        runs=_runs("seed003-lan.toml", overrides=_lan(n, period_ms)),
        figures=FIGURES,
        published=(
            Quantity(
                "max queue, FMMRA / ERICA",
                1.0,
                "ratio",
                BELOW,
                "the seed: FMMRA keeps the smallest ABR queue; " + CLAIM_WHY,
                _ratio(max_queue, "fmmra", "erica"),
            ),
            Quantity(
                "max queue, FMMRA / EFCI",
                1.0,
                "ratio",
                BELOW,
                "the seed: FMMRA keeps the smallest ABR queue; " + CLAIM_WHY,
                _ratio(max_queue, "fmmra", "efci"),
            ),
            Quantity(
                "link utilization, FMMRA / ERICA",
                1.0,
                "ratio",
                BELOW,
                "the seed (observation 4): EFCI and ERICA have bigger queues than FMMRA "
                "'and thus higher overall link utilization'; " + CLAIM_WHY,
                _ratio(utilization, "fmmra", "erica"),
            ),
            Quantity(
                "link utilization, FMMRA / EFCI",
                1.0,
                "ratio",
                BELOW,
                "the seed (observation 4), as above; " + CLAIM_WHY,
                _ratio(utilization, "fmmra", "efci"),
            ),
            *(_report("max queue", "cells", max_queue, a) for a in ALGORITHMS),
        ),
        notes=(
            "The seed does not say which VBR period Figs. 3-8 use: we run both, 10 and "
            "100 ms. The queue is the port's largest number of waiting cells over the "
            "run (VBR cells have priority and barely wait).",
        ),
    )


def _fairness() -> Experiment:
    return Experiment(
        id="seed003-fairness-5tcp-10ms",
        title="fairness of TCP throughput, 5 TCP + VBR 10 ms on/off: EFCI, ERICA, FMMRA",
        source="seed 003 section 4.2 observation 2, Figs. 9-11",
        runs=_runs("seed003-lan.toml", overrides=_lan(5, 10)),
        figures=("throughput", *FIGURES),
        published=(
            Quantity(
                "FMMRA: Jain index of the 5 throughputs",
                1.0,
                "",
                absolute(0.01),
                "the seed: 'using FMMRA, every TCP source achieves the same effective "
                "throughput'; 'the same' read as Jain's index within 0.01 of 1",
                lambda results: fairness(results["fmmra"]),
            ),
            Quantity(
                "worst transient Jain index, FMMRA - ERICA",
                0.0,
                "",
                FAIRER,
                "the seed: ERICA 'leads to some unfairness among the individual TCP sources "
                "during the transient period', FMMRA does not; " + FAIRER_WHY,
                _difference(_worst_jain, "fmmra", "erica"),
            ),
            Quantity(
                "worst transient Jain index, FMMRA - EFCI",
                0.0,
                "",
                FAIRER,
                "the seed: so does EFCI; " + FAIRER_WHY,
                _difference(_worst_jain, "fmmra", "efci"),
            ),
            *(_report("worst transient Jain index", "", _worst_jain, a) for a in ALGORITHMS),
        ),
        notes=(
            "Transient fairness: the lowest Jain index, from 0.1 s to the end, of the "
            "flows' cumulative effective throughputs (bytes sent / time, sampled every "
            "1 ms; nothing is lost with the unlimited buffer).",
        ),
    )


def _worst_jain(result) -> float:
    return worst_cumulative_jain(result, TRANSIENT_START_S)


def _settling(result) -> float:
    return acr_settling_ms(result, VBR_START_S, 0.1)


def _acr_error(result) -> float:
    return acr_error(result, VBR_MBPS, VBR_START_S, 0.1)


def _acr() -> Experiment:
    return Experiment(
        id="seed003-acr-2tcp-100ms",
        title="ACR response, 2 TCP + VBR 100 ms on/off: EFCI, ERICA, FMMRA",
        source="seed 003 section 4.2 observation 3, Figs. 12-14",
        runs=_runs("seed003-acr.toml"),
        figures=FIGURES,
        published=(
            Quantity(
                "ACR settling time after VBR edges, FMMRA / ERICA",
                1.0,
                "ratio",
                BELOW,
                "the seed: FMMRA has 'the fastest ... response to the changes of "
                "available network ABR capacity'; " + CLAIM_WHY,
                _ratio(_settling, "fmmra", "erica"),
            ),
            Quantity(
                "ACR settling time after VBR edges, FMMRA / EFCI",
                1.0,
                "ratio",
                BELOW,
                "as above; " + CLAIM_WHY,
                _ratio(_settling, "fmmra", "efci"),
            ),
            Quantity(
                "ACR error against the max-min share, FMMRA / ERICA",
                1.0,
                "ratio",
                BELOW,
                "the seed: FMMRA's response is 'the most accurate'; " + CLAIM_WHY,
                _ratio(_acr_error, "fmmra", "erica"),
            ),
            Quantity(
                "ACR error against the max-min share, FMMRA / EFCI",
                1.0,
                "ratio",
                BELOW,
                "as above; " + CLAIM_WHY,
                _ratio(_acr_error, "fmmra", "efci"),
            ),
            *(_report("ACR settling time", "ms", _settling, a) for a in ALGORITHMS),
            *(_report("ACR error", "fraction", _acr_error, a) for a in ALGORITHMS),
        ),
        notes=(
            "Settling time (our proxy for 'fastest'): after each VBR edge (0.3, 0.4, ... "
            "0.9 s), the time until each flow's ACR stays within 10 % of its level over "
            "the second half of that 100 ms period (the whole period if never), averaged "
            "over edges and flows; probes every 0.1 ms. ACR error (our proxy for 'most "
            "accurate'): mean |ACR - share| / share from 0.3 s, where the share is "
            "(155.52 Mbps - VBR while on) / 2, the max-min share of the ABR capacity.",
        ),
    )


def _buffer1500(period_ms: int) -> Experiment:
    return Experiment(
        id=f"seed003-buffer1500-2tcp-{period_ms}ms",
        title=f"buffer 1500 cells, 2 TCP + VBR {period_ms} ms on/off: EFCI, ERICA, FMMRA",
        source="seed 003 section 4.2 observation 4, Figs. 15-17",
        runs=_runs("seed003-lan.toml", overrides=_lan(2, period_ms, 1500)),
        figures=("throughput", *FIGURES),
        published=(
            Quantity(
                "CLR, FMMRA",
                0.0,
                "%",
                EXACT,
                "the seed: 'with a switch buffer size of 1500 cells, FMMRA can achieve zero "
                "cell loss'",
                lambda results: clr_percent(results["fmmra"]),
            ),
            Quantity(
                "TCP throughput, FMMRA / the best of ERICA and EFCI",
                1.0,
                "ratio",
                ABOVE,
                "the seed: FMMRA yields 'the highest throughput'; " + CLAIM_WHY,
                _best_ratio,
            ),
            Quantity(
                "fairness: Jain index FMMRA - EFCI",
                0.0,
                "",
                FAIRER,
                "the seed: 'a severe unfairness of bandwidth allocation among TCP "
                "connections for the EFCI algorithm'; " + FAIRER_WHY,
                _difference(fairness, "fmmra", "efci"),
            ),
            *(_report("total TCP throughput", "Mbps", total_goodput, a) for a in ALGORITHMS),
            *(_report("CLR", "%", clr_percent, a) for a in ("efci", "erica")),
        ),
        notes=(
            "The seed does not say which VBR period Figs. 15-17 use: we run both, 10 and "
            "100 ms. Tail drop at the 1500-cell buffer (no policy named).",
        ),
    )


def _best_ratio(results) -> tuple[float, str]:
    ours = total_goodput(results["fmmra"])
    others = {a: total_goodput(results[a]) for a in ("erica", "efci")}
    best = max(others, key=others.get)
    return ours / others[best], f"FMMRA {ours:.4g} Mbps, best other {NAMES[best]} " + (
        f"{others[best]:.4g} Mbps"
    )


def _ten() -> Experiment:
    return Experiment(
        id="seed003-queue-10tcp-10ms",
        title="ABR queue, 10 TCP + VBR 10 ms on/off: ERICA and FMMRA",
        source="seed 003 section 4.2 observation 5, Figs. 18-19",
        runs=_runs("seed003-lan.toml", ("erica", "fmmra"), _lan(10, 10)),
        figures=FIGURES,
        published=(
            Quantity(
                "max queue, ERICA",
                7000.0,
                "cells",
                ABOVE,
                "the seed: the queue 'using ERICA is above 7000 cells' (a bound)",
                lambda results: max_queue(results["erica"]),
            ),
            Quantity(
                "max queue, FMMRA",
                3000.0,
                "cells",
                ABOVE,
                "the seed: the queue 'using FMMRA reaches more than 3000 cells' (a bound)",
                lambda results: max_queue(results["fmmra"]),
            ),
            Quantity(
                "max queue, ERICA / FMMRA",
                1.0,
                "ratio",
                ABOVE,
                "the seed: ERICA's queue is the larger of the two; " + CLAIM_WHY,
                _ratio(max_queue, "erica", "fmmra"),
            ),
        ),
        notes=("The seed: 'high frequency' VBR; we read it as the 10 ms on/off source.",),
    )


EXPERIMENTS = [
    _queue(2, 100),
    _queue(2, 10),
    _queue(5, 100),
    _queue(5, 10),
    _fairness(),
    _acr(),
    _buffer1500(100),
    _buffer1500(10),
    _ten(),
]
