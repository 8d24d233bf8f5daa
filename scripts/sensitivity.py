"""Sensitivity of the reproduction's verdicts to the parameters the papers do not state.

Each lever is one unstated parameter: a list of values, each a tuple of ``--set``
overrides applied to every run of the experiments the parameter can affect. For each
value the experiments run as ``atmsim reproduce`` runs them (``run_experiments``, run
seeds 1..10 unless ``--seeds`` says otherwise) and their verdicts are counted; the
table gives, per value, the counts (match / miss / n/a), the verdicts that differ from
those of the chosen value, and a few simulated means that show what moved. The chosen
value is fixed in the lever with its source before any run: the study shows how much
the verdicts depend on it, it does not pick it.

    python scripts/sensitivity.py --list
    nice -n 10 python scripts/sensitivity.py timer erica-interval --jobs 2
    python scripts/sensitivity.py timer --seeds 1,2 --out runs/sensitivity-quick

Writes ``OUT/<lever>.md`` (the table, Markdown), ``OUT/<lever>.csv`` (one line per
value: counts and key values) and ``OUT/<lever>-verdicts.csv`` (every judged row of
every value: experiment, quantity, value label, simulated mean, verdict). The run
files of each value go to ``OUT/<lever>/<value>/`` (table.csv and seeds.csv per
experiment; no figures). docs/reproduction.md, "Sensitivity to the unstated
parameters", holds the tables of the last full run.
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Optional

import atmsim.reproduce.catalog as catalog
from atmsim.reproduce import Run, registry, run_experiments, select


@dataclass(frozen=True)
class Value:
    """One value of a lever: a label for the table and the overrides that set it, on
    every run of the lever's experiments; or, where one value must reach some runs
    only (one run's policy, each row's own link lengths), ``runs``: (experiment id,
    run name, Run) -> the Run to simulate instead."""

    label: str
    overrides: tuple = ()
    runs: Optional[Callable[[str, str, Run], Run]] = None


@contextmanager
def runs_replaced(ids: list, change: Optional[Callable[[str, str, Run], Run]]):
    """The registry with the runs of experiments ``ids`` changed by ``change`` while the
    block runs (the worker processes, forked inside it, inherit it)."""
    if change is None:
        yield
        return
    experiments = registry()
    saved = {key: experiments[key] for key in ids}
    try:
        for key in ids:
            experiment = experiments[key]
            runs = {name: change(key, name, run) for name, run in experiment.runs.items()}
            experiments[key] = replace(experiment, runs=runs)
        yield
    finally:
        experiments.update(saved)
        catalog._REGISTRY = experiments


@dataclass(frozen=True)
class Lever:
    """One unstated parameter: the experiments it can affect, its values, the chosen
    one (by label) and where that choice comes from, and the simulated quantities
    worth showing (experiment id, quantity name)."""

    name: str
    parameter: str
    experiments: tuple
    values: tuple
    chosen: str
    source: str
    key_values: tuple = field(default=())


ALL_TCP = "flows.tcp{i}"
"""The TCP flows of the n-source, n-source-vbr and fmmra-lan templates."""


def _timer(arithmetic: str, min_rto: str) -> tuple:
    return (f"{ALL_TCP}.rtt_arithmetic={arithmetic}", f"{ALL_TCP}.min_rto={min_rto}")


SEED000 = tuple(key for key in registry() if key.startswith("seed000"))
SEED002_ABR = tuple(
    key for key in registry() if key.startswith("seed002") and key != "seed002-ubr-windows"
)
SEED003 = tuple(key for key in registry() if key.startswith("seed003"))
SEED001 = tuple(key for key in registry() if key.startswith("seed001"))
SEED001_KEYS = (
    ("seed001-fig3", "queue at r1 -> r2 from 1 s, 90th percentile"),
    ("seed001-fig3", "Jain index of the 15 throughputs"),
    ("seed001-fig4", "Jain index of the 15 throughputs"),
    ("seed001-fig4", "queue at r1 -> r2 from 1 s, 90th percentile"),
    ("seed001-fig6", "own RTT: Jain index against the max-min rates"),
)
"""Explicit rate control of TCP's (Satyavolu et al., 1998) values worth showing: Figure 3's queue
and unfairness, Figure 4's fairness and queue, Figure 6's fairness with each flow's own round
trip."""
SEED004 = tuple(key for key in registry() if key.startswith("seed004"))
SEED004_KEYS = (
    ("seed004-table1", "VC1 excess"),
    ("seed004-table1", "VC5 excess"),
    ("seed004-table1", "excess against MCR"),
    ("seed004-table1", "total excess"),
    ("seed004-table2", "VC5 achieved / MCR"),
    ("seed004-table6", "Z_i = 1 - W_i/W: excess against MCR"),
)
"""GFR buffer management's (Goyal et al., 1998) values worth showing: the extreme VCs' excess in
Table 1 and the slope of the excess against the MCR, the total excess (the overheads), Table 2's VC5
against its MCR (the smallest margin), and the slope of Table 6's first rule."""


def _dfba(low: str, high: str) -> tuple:
    """L and H as shares of the buffer, keys of the policy table the experiments share
    (Table 6 sets its z beside them)."""
    return (f'template.policy.low="{low}"', f'template.policy.high="{high}"')


def _itd(threshold: int) -> Callable[[str, str, Run], Run]:
    """Intelligent tail drop's threshold in seed000-sec11's ITD run only."""

    def change(key: str, name: str, run: Run) -> Run:
        if name != "itd":
            return run
        policy = f'template.policy={{ kind = "intelligent_tail", threshold = {threshold} }}'
        return Run(run.scenario, (policy,))

    return change


def _split(where: str) -> Callable[[str, str, Run], Run]:
    """ABR and UBR buffering's (Kalyanaraman et al., 1998) Table 4: the RTT beyond the access links
    put on the bottleneck and the exit links equally ("equal"), or all but 1 km on one of them
    ("bottleneck", "exit"). Runs of other files (Table 1's n = 15 for RTT 30 ms / 10 ms) are
    left."""

    def change(key: str, name: str, run: Run) -> Run:
        if not run.scenario.startswith("seed002-table4"):
            return run
        lengths = {o.split("=")[0]: float(o.split("=")[1]) for o in run.overrides if "_km=" in o}
        rest = lengths["template.bottleneck_km"] + lengths["template.exit_km"]
        bottleneck = {"equal": rest / 2, "bottleneck": rest - 1, "exit": 1.0}[where]
        others = tuple(o for o in run.overrides if "_km=" not in o)
        return Run(
            run.scenario,
            (
                *others,
                f"template.access_km={lengths['template.access_km']:g}",
                f"template.bottleneck_km={bottleneck:g}",
                f"template.exit_km={rest - bottleneck:g}",
            ),
        )

    return change


SEED002_TABLE4 = tuple(key for key in registry() if key.startswith("seed002-table4"))
SEED002_SHORT = tuple(key for key in SEED002_ABR if "rtt550" not in key)
"""ABR and UBR buffering's ABR experiments without the satellite rows (whose runs last 20 s)."""
SEED002_QUEUES = (
    ("seed002-table1-n5", "maximum queue at the bottleneck"),
    ("seed002-table1-n15", "maximum queue at the bottleneck"),
    ("seed002-table2-50km", "maximum queue at the bottleneck"),
    ("seed002-table4-rtt15-fb10ms", "maximum queue at the bottleneck"),
    ("seed002-formula", "c at RTT 30 ms"),
)
SEED003_KEYS = (
    ("seed003-queue", "max queue, FMMRA / the smaller"),
    ("seed003-queue", "link utilization, FMMRA / the smaller"),
    ("seed003-fairness-5tcp-10ms", "worst transient Jain index, FMMRA - the fairer"),
    ("seed003-buffer1500-2tcp", "TCP throughput per unit of target"),
    ("seed003-buffer1500-2tcp", "fairness: Jain index FMMRA - EFCI"),
    ("seed003-queue-10tcp-10ms", "max queue, ERICA / FMMRA"),
)

LEVERS = {
    lever.name: lever
    for lever in (
        Lever(
            name="timer",
            parameter="TCP's RTO arithmetic and minimum (coarse 100 ms timer)",
            experiments=(*SEED000, "seed002-ubr-windows"),
            values=(
                Value("real, min 2 ticks", _timer("real", "auto")),
                Value("real, min 300 ms", _timer("real", "300 ms")),
                Value("real, min 400 ms", _timer("real", "400 ms")),
                Value("real, min 500 ms", _timer("real", "500 ms")),
                Value("BSD, min 2 ticks", _timer("bsd", "auto")),
            ),
            chosen="BSD, min 2 ticks",
            source=(
                "TCP over ABR, section 4 gives only the granularity (100 ms), a BSD timer's; "
                "4.4BSD's tcp_xmit_timer and tcp_timers (Stevens and Wright, TCP/IP "
                "Illustrated vol. 2, sections 25.10-25.11) fix the rest: the 2-tick "
                "minimum (TCPTV_MIN), samples counted from 1 tick, fixed-point "
                "truncations that leave 3 ticks for sub-tick RTTs"
            ),
            key_values=(
                ("seed000-sec9", "total TCP throughput, % of section 8's peak"),
                ("seed000-table1-row1", "total TCP throughput"),
                ("seed000-table1-row4", "total TCP throughput"),
                ("seed000-table1-row5", "total TCP throughput"),
                ("seed002-ubr-windows", "CLR with a buffer of the sum of the windows"),
            ),
        ),
        Lever(
            name="runlength",
            parameter="run length of TCP over ABR (throughput over the whole run)",
            experiments=SEED000,
            values=tuple(
                Value(f"{d} s", (f"template.duration={d} s",)) for d in ("1.5", "2", "3", "4", "5")
            ),
            chosen="2 s",
            source=(
                "TCP over ABR's figures of these runs end at about 2 s and section 11 cites a "
                "timeout at 1900 ms; section 7 defines throughput over the total time"
            ),
            key_values=(
                ("seed000-sec8", "total TCP throughput"),
                ("seed000-sec9", "total TCP throughput, % of section 8's peak"),
                ("seed000-table1-row4", "total TCP throughput"),
                ("seed000-table1-row8", "total TCP throughput"),
            ),
        ),
        Lever(
            name="seed002-ses",
            parameter='ABR and UBR buffering\'s ABR source parameters ("default values")',
            experiments=SEED002_ABR,
            values=(
                Value(
                    "TCP over ABR's",
                    (
                        "template.tbe=512",
                        f"{ALL_TCP}.abr.icr=10 Mbps",
                        f"{ALL_TCP}.abr.rif=1",
                        f"{ALL_TCP}.abr.rdf=1/512",
                        f"{ALL_TCP}.abr.cdf=0.5",
                    ),
                ),
                Value(
                    "TM 4.0 defaults",
                    (
                        "template.tbe=16777215",
                        f"{ALL_TCP}.abr.icr=auto",
                        f"{ALL_TCP}.abr.rif=1/16",
                        f"{ALL_TCP}.abr.rdf=1/16",
                        f"{ALL_TCP}.abr.cdf=1/16",
                    ),
                ),
                Value(
                    "TM 4.0 defaults, ICR 10 Mbps",
                    (
                        "template.tbe=16777215",
                        f"{ALL_TCP}.abr.icr=10 Mbps",
                        f"{ALL_TCP}.abr.rif=1/16",
                        f"{ALL_TCP}.abr.rdf=1/16",
                        f"{ALL_TCP}.abr.cdf=1/16",
                    ),
                ),
                Value(
                    "TCP over ABR's, RIF 1/16",
                    (
                        "template.tbe=512",
                        f"{ALL_TCP}.abr.icr=10 Mbps",
                        f"{ALL_TCP}.abr.rif=1/16",
                        f"{ALL_TCP}.abr.rdf=1/512",
                        f"{ALL_TCP}.abr.cdf=0.5",
                    ),
                ),
            ),
            chosen="TM 4.0 defaults",
            source=(
                'ABR and UBR buffering: "Default values are chosen for the ABR source parameters"; '
                "the defaults of its reference for ABR, ATM Forum TM 4.0 (ICR = PCR, "
                "RIF = RDF = CDF = 1/16, TBE 16,777,215); TCP over ABR instead says its "
                'values were "selected to maximize the responsiveness and throughput"'
            ),
            key_values=(
                ("seed002-table1-n5", "maximum queue at the bottleneck"),
                ("seed002-table1-n10", "maximum queue at the bottleneck"),
                ("seed002-table1-n15", "maximum queue at the bottleneck"),
                ("seed002-table2-200km", "maximum queue at the bottleneck"),
                ("seed002-table2-50km", "total TCP throughput"),
                ("seed002-table4-rtt550-fb1ms", "maximum queue at the bottleneck"),
            ),
        ),
        Lever(
            name="erica-interval",
            parameter="averaging interval of ERICA and FMMRA in TCP over FMMRA (T, cells)",
            experiments=SEED003,
            values=tuple(
                Value(
                    f"({t}, {n} cells)",
                    (f"template.interval={t}", f"template.interval_cells={n}"),
                )
                for t, n in (
                    ("1 ms", 100),
                    ("1 ms", 500),
                    ("10 ms", 500),
                    ("10 ms", 1000),
                    ("10 ms", 5000),
                )
            ),
            chosen="(1 ms, 100 cells)",
            source=(
                "TCP over FMMRA gives none; its ERICA reference (Jain et al., ATM Forum 96-1172) "
                "is the one TCP over ABR and the ABR and UBR buffering paper cite, whose authors "
                "use and call default "
                '"100 ABR input cells or 1 ms" (ABR and UBR buffering; TCP over ABR, section 5)'
            ),
            key_values=(
                ("seed003-queue-10tcp-10ms", "max queue, ERICA"),
                ("seed003-queue-10tcp-10ms", "max queue, FMMRA"),
                ("seed003-queue", "max queue, FMMRA / the smaller"),
                ("seed003-buffer1500-2tcp", "TCP throughput per unit of target"),
            ),
        ),
        Lever(
            name="efci-threshold",
            parameter="EFCI's queue threshold in TCP over FMMRA (cells)",
            experiments=SEED003,
            values=tuple(
                Value(f"{n} cells", (f"template.efci_high={n}",)) for n in (100, 300, 750, 1200)
            ),
            chosen="300 cells",
            source=(
                'TCP over FMMRA names a "High Queue length Threshold" without a value: no '
                "source; kept at 20 % of its 1500-cell buffer, chosen before the runs"
            ),
            key_values=(
                ("seed003-queue", "max queue, FMMRA / EFCI, 2 TCP, VBR 100 ms"),
                ("seed003-buffer1500-2tcp", "fairness: Jain index FMMRA - EFCI"),
            ),
        ),
        Lever(
            name="seed000-erica-count",
            parameter="TCP over ABR: ERICA counting a VC seen by its backward RM cells as active",
            experiments=SEED000,
            values=(
                Value("not counted", ("links.sw1-sw2.algorithm.bidirectional_count=false",)),
                Value("counted", ("links.sw1-sw2.algorithm.bidirectional_count=true",)),
            ),
            chosen="not counted",
            source=(
                "TCP over ABR ran ERICA 'enhanced ... to reduce spiking effects due to transient "
                "overloads', the one enhancement it names; the counting of bursty sources "
                "came with the group's later TCP buffer study (docs/model.md, ABR)"
            ),
            key_values=(
                ("seed000-sec9", "total TCP throughput, % of section 8's peak"),
                ("seed000-sec9", "mean ACR from 0.5 s"),
                ("seed000-table1-row4", "total TCP throughput"),
                ("seed000-sec11", "S2's first timeout"),
            ),
        ),
        Lever(
            name="seed000-sec8-tbe",
            parameter="TCP over ABR, section 8's TBE (the text: 512; Figure 5's caption: 1024)",
            experiments=("seed000-sec8",),
            values=tuple(Value(str(tbe), (f"template.tbe={tbe}",)) for tbe in (512, 1024)),
            chosen="512",
            source="the text of section 8 ('TBE = 512') and section 9 ('TBE (512)')",
            key_values=(("seed000-sec8", "total TCP throughput"),),
        ),
        Lever(
            name="seed000-itd",
            parameter="TCP over ABR, section 11: intelligent tail drop's threshold (buffer 1024)",
            experiments=("seed000-sec11",),
            values=tuple(
                Value(f"{1024 - t} ({t} cells below)", runs=_itd(1024 - t)) for t in (6, 12, 24, 48)
            ),
            chosen="1012 (12 cells below)",
            source=(
                "the paper: 'a threshold a few cells before the buffer limit'; one frame of "
                "MSS 512 (12 cells), so that a frame's cells after the threshold still fit"
            ),
            key_values=(
                ("seed000-sec11", "AAL5 frames merged, intelligent tail drop"),
                ("seed000-sec11", "fairness gain"),
            ),
        ),
        Lever(
            name="seed002-runlength",
            parameter="ABR and UBR buffering's run length (RTT up to 30 ms)",
            experiments=SEED002_SHORT,
            values=tuple(Value(d, (f"template.duration={d}",)) for d in ("2 s", "3 s", "5 s")),
            chosen="2 s",
            source=(
                "none in ABR and UBR buffering: TCP over ABR's 2 s (same group, same "
                "configuration); the "
                "maximum queue is set in the first round trips"
            ),
            key_values=(*SEED002_QUEUES, ("seed002-table1-n15", "total TCP throughput")),
        ),
        Lever(
            name="seed002-erica-count",
            parameter=(
                "ABR and UBR buffering: ERICA counting a VC seen by its backward RM cells as active"
            ),
            experiments=SEED002_ABR,
            values=(
                Value("counted", ("links.sw1-sw2.algorithm.bidirectional_count=true",)),
                Value("not counted", ("links.sw1-sw2.algorithm.bidirectional_count=false",)),
            ),
            chosen="counted",
            source=(
                "'ERICA and its variants'; the 'correct counting of bursty sources' of the "
                "group's TCP buffer study this paper grew from (docs/model.md, ABR)"
            ),
            key_values=SEED002_QUEUES,
        ),
        Lever(
            name="seed002-table4-split",
            parameter=(
                "ABR and UBR buffering's Table 4: the RTT beyond the access links, bottleneck vs "
                "exit"
            ),
            experiments=(*SEED002_TABLE4, "seed002-formula"),
            values=(
                Value("equal halves", runs=_split("equal")),
                Value("bottleneck, exit 1 km", runs=_split("bottleneck")),
                Value("exit, bottleneck 1 km", runs=_split("exit")),
            ),
            chosen="equal halves",
            source=(
                "none: Table 4 gives the RTT and the feedback delay only; Tables 1-3 have "
                "links of one length, which equal halves come nearest to"
            ),
            key_values=(
                ("seed002-table4-rtt15-fb1ms", "maximum queue at the bottleneck"),
                ("seed002-table4-rtt30-fb1ms", "maximum queue at the bottleneck"),
                ("seed002-table4-rtt550-fb10ms", "maximum queue at the bottleneck"),
                ("seed002-formula", "c at RTT 15 ms"),
            ),
        ),
        Lever(
            name="seed003-runlength",
            parameter="TCP over FMMRA's run length",
            experiments=SEED003,
            values=tuple(Value(d, (f"template.duration={d}",)) for d in ("1 s", "2 s")),
            chosen="1 s",
            source=(
                "none in TCP over FMMRA (its figures' time axes are not in the text): 0.3 s "
                "before the VBR, then 3.5 on/off cycles of 100 ms"
            ),
            key_values=SEED003_KEYS,
        ),
        Lever(
            name="seed003-links",
            parameter="TCP over FMMRA's access and exit links (km)",
            experiments=SEED003,
            values=tuple(
                Value(f"{km} km", (f"template.access_km={km}", f"template.exit_km={km}"))
                for km in ("0.1", "1", "10")
            ),
            chosen="1 km",
            source="none: the backbone's 1 km (the paper: 'Backbone link length of 1 km')",
            key_values=SEED003_KEYS,
        ),
        Lever(
            name="seed003-min-rto",
            parameter="TCP over FMMRA's fine TCP timer: minimum RTO",
            experiments=SEED003,
            values=tuple(Value(t, (f"{ALL_TCP}.min_rto={t}",)) for t in ("10 ms", "200 ms", "1 s")),
            chosen="200 ms",
            source=(
                "none: the paper avoided coarse timers (double-precision RTT estimation); "
                "200 ms is atmsim's default"
            ),
            key_values=SEED003_KEYS,
        ),
        Lever(
            name="seed003-high-frequency",
            parameter="TCP over FMMRA's Figs. 18-19: the 'high frequency' VBR period",
            experiments=("seed003-queue-10tcp-10ms",),
            values=tuple(Value(t, (f"template.vbr_period={t}",)) for t in ("10 ms", "100 ms")),
            chosen="10 ms",
            source="the paper's two periods are 10 and 100 ms; 'high frequency' is the faster",
            key_values=(
                ("seed003-queue-10tcp-10ms", "max queue, ERICA"),
                ("seed003-queue-10tcp-10ms", "max queue, FMMRA"),
            ),
        ),
        Lever(
            name="seed003-policy",
            parameter="TCP over FMMRA's Figs. 15-17: the drop policy at the 1500-cell buffer",
            experiments=("seed003-buffer1500-2tcp",),
            values=(
                Value("tail drop", ('template.policy="tail"',)),
                Value("PPD", ('template.policy="ppd"',)),
                Value("EPD at 1200 cells", ('template.policy={ kind = "epd", threshold = 1200 }',)),
            ),
            chosen="tail drop",
            source=(
                "none named by the paper: the plainest, as TCP over ABR and the ABR and UBR "
                "buffering paper"
            ),
            key_values=SEED003_KEYS[3:5],
        ),
        Lever(
            name="seed001-active",
            parameter=(
                "Explicit rate control of TCP: the number of active sources (decay of a silent "
                "flow's weight)"
            ),
            experiments=SEED001,
            values=tuple(
                Value(f"decay {d}", (f"template.active_decay={d}",))
                for d in ("0", "0.5", "0.9", "0.99", "1")
            ),
            chosen="decay 0",
            source=(
                "the paper's pseudo-code: 'Measure number of active sources' at each "
                "interval's end, the flows seen in the interval, as Kalyanaraman's "
                "dissertation counts VCs without its 'Averaging VCs' option (whose decay "
                "factor no source we could read gives)"
            ),
            key_values=SEED001_KEYS,
        ),
        Lever(
            name="seed001-own-rtt",
            parameter="Explicit rate control of TCP's Figure 4: which round trip a router knows",
            experiments=("seed001-fig4",),
            values=(
                Value("base round trip", ("template.window_rule=base_rtt",)),
                Value("ping-measured (with queueing)", ("template.window_rule=rtt",)),
            ),
            chosen="base round trip",
            source=(
                "the paper: 'we assume that the routers have knowledge of the round trip "
                "delays, Ti', the 10, 16 and 70 ms it gives for its configuration"
            ),
            key_values=SEED001_KEYS[2:4],
        ),
        Lever(
            name="seed001-tcp",
            parameter="Explicit rate control of TCP: the TCP variant",
            experiments=SEED001,
            values=tuple(
                Value(v, (f"template.variant={v}",)) for v in ("tahoe", "reno", "newreno", "sack")
            ),
            chosen="reno",
            source="the paper names none: 4.4BSD-Lite's Reno, the reference TCP of the time",
            key_values=SEED001_KEYS,
        ),
        Lever(
            name="seed001-timer",
            parameter="Explicit rate control of TCP: the TCP retransmission timer",
            experiments=SEED001,
            values=tuple(Value(t, (f"template.timer={t}",)) for t in ("100 ms", "500 ms", "fine")),
            chosen="100 ms",
            source=(
                "the paper gives none: the BSD timer of the related TCP over ABR and the ABR and "
                "UBR buffering paper"
            ),
            key_values=SEED001_KEYS,
        ),
        Lever(
            name="seed004-tagging",
            parameter=(
                "tagging of the GFR VCs' frames above their MCR in GFR buffer management, and the "
                "MBS"
            ),
            experiments=SEED004,
            values=(
                Value("no tagging", ("template.tagging=false",)),
                Value("tagging at bb1, MBS 192 (1 MFS)", ("template.mbs=192",)),
                Value("tagging at bb1, MBS 384 (2 MFS)", ()),
                Value("tagging at bb1, MBS 1920 (10 MFS)", ("template.mbs=1920",)),
                Value("tagging at bb1, MBS 19200 (100 MFS)", ("template.mbs=19200",)),
            ),
            chosen="tagging at bb1, MBS 384 (2 MFS)",
            source=(
                "GFR buffer management's DFBA drops 'low priority (CLP=1) packets' from L on "
                "(section 3, "
                "its algorithm, Table 7: tag sensitive), so frames are tagged: by the GFR "
                "service's F-GCRA at the network edge, the VC's first switch; the paper gives "
                "no MBS: the model's default, two maximum frames back to back"
            ),
            key_values=SEED004_KEYS,
        ),
        Lever(
            name="seed004-thresholds",
            parameter="DFBA's L and H in GFR buffer management (shares of the buffer)",
            experiments=SEED004,
            values=tuple(
                Value(f"L {low}, H {high}", _dfba(low, high))
                for low, high in (
                    ("25 %", "50 %"),
                    ("30 %", "70 %"),
                    ("50 %", "80 %"),
                    ("50 %", "90 %"),
                    ("70 %", "95 %"),
                )
            ),
            chosen="L 50 %, H 90 %",
            source=(
                "GFR buffer management calls L the knee and H the cliff of the load curve, without "
                "values: half the buffer for the knee, and H a frame window below the top"
            ),
            key_values=SEED004_KEYS,
        ),
        Lever(
            name="seed004-mss",
            parameter="TCP's MSS in GFR buffer management (bytes)",
            experiments=SEED004,
            values=tuple(
                Value(f"{mss} bytes", (f"template.mss={mss}",)) for mss in (512, 1024, 1460, 9140)
            ),
            chosen="1460 bytes",
            source=(
                "GFR buffer management's \"ATM interconnected LANs\": Ethernet's MTU of 1500 bytes "
                "(RFC "
                "894) less 40 bytes of TCP/IP headers; 512 is the group's TCP over ABR and the ABR "
                "and UBR buffering paper "
                "(hosts on ATM), 9140 the MTU of IP over ATM (RFC 1626) less 40"
            ),
            key_values=SEED004_KEYS,
        ),
        Lever(
            name="seed004-window",
            parameter="TCP's receiver window in GFR buffer management",
            experiments=SEED004,
            values=tuple(Value(w, (f"template.window={w}",)) for w in ("64 KB", "256 KB", "1 MB")),
            # 1 MB: the window-scaled 16 x 64 KB of TCP over ABR and of ABR and UBR buffering
            chosen="64 KB",
            source=(
                "the largest window without RFC 1323 scaling, which GFR buffer management does not "
                "mention"
            ),
            key_values=SEED004_KEYS,
        ),
        Lever(
            name="seed004-timer",
            parameter="TCP's retransmission timer in GFR buffer management",
            experiments=SEED004,
            values=tuple(Value(t, (f"template.timer={t}",)) for t in ("100 ms", "500 ms", "fine")),
            chosen="100 ms",
            source=(
                "the TCP timer granularity of the same group's TCP over ABR and the ABR and UBR "
                "buffering paper"
            ),
            key_values=SEED004_KEYS,
        ),
        Lever(
            name="seed004-runlength",
            parameter="run length of GFR buffer management (throughput over the whole run)",
            experiments=SEED004,
            values=tuple(Value(d, (f"template.duration={d}",)) for d in ("10 s", "20 s", "40 s")),
            chosen="20 s",
            source=(
                "GFR buffer management gives none: 200 round trips with the 25k-cell buffer full, "
                "so "
                "that the first second's slow starts weigh 5 %"
            ),
            key_values=SEED004_KEYS,
        ),
        Lever(
            name="seed004-starts",
            parameter="start times of GFR buffer management's connections (spread over, per VC)",
            experiments=SEED004,
            values=tuple(
                Value(t, (f"template.start_spread={t}",)) for t in ("0 s", "10 ms", "100 ms")
            ),
            chosen="10 ms",
            source=(
                "GFR buffer management gives none: about one round trip (10.2 ms), so that the "
                "connections behind one edge switch do not start in one burst"
            ),
            key_values=SEED004_KEYS,
        ),
    )
}
"""Every lever, by name. The chosen value of each is fixed here with its source."""


def slug(label: str) -> str:
    """A directory name for a value's label."""
    return re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")


def find_value(outcomes: list, experiment: str, quantity: str) -> float:
    """The simulated mean of the first judged-or-shown row of ``experiment`` whose
    quantity starts with ``quantity`` (NaN if none)."""
    for outcome in outcomes:
        if outcome.experiment != experiment:
            continue
        for row in outcome.rows:
            if row["quantity"].startswith(quantity) and row.get("see") is None:
                return row["simulated"]
    return math.nan


def study(lever: Lever, out: Path, jobs: int, seeds: tuple) -> list[dict]:
    """Run the lever's experiments once per value; returns one summary per value with
    its outcomes."""
    ids = select(list(lever.experiments))
    summaries = []
    for value in lever.values:
        started = time.perf_counter()
        cpu_before = time.process_time()
        with runs_replaced(ids, value.runs):
            outcomes = run_experiments(
                ids,
                out / lever.name / slug(value.label),
                jobs=jobs,
                extra_overrides=value.overrides,
                figures=False,
                seeds=seeds,
            )
        wall = time.perf_counter() - started
        errors = [o for o in outcomes if o.error]
        for outcome in errors:
            print(f"{lever.name} {value.label}: {outcome.experiment}: {outcome.error}")
        counts = {
            verdict: sum(o.count(verdict) for o in outcomes) for verdict in ("match", "miss", "n/a")
        }
        summaries.append(
            {
                "value": value,
                "outcomes": outcomes,
                "counts": counts,
                "errors": len(errors),
                "wall_s": wall,
                "run_s": sum(o.wall_s for o in outcomes),
                "parent_cpu_s": time.process_time() - cpu_before,
            }
        )
        print(
            f"{lever.name} | {value.label}: {counts['match']} match, {counts['miss']} miss, "
            f"{counts['n/a']} n/a; runs {summaries[-1]['run_s']:.0f} s, wall {wall:.0f} s",
            flush=True,
        )
    return summaries


def verdicts(outcomes: list) -> dict:
    """(experiment, quantity) -> (verdict, simulated) of every judged row."""
    return {
        (o.experiment, row["quantity"]): (row["verdict"], row["simulated"])
        for o in outcomes
        for row in o.rows
        if row["verdict"] != "n/a"
    }


def _fmt(value: float) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}"


def write_tables(lever: Lever, summaries: list[dict], out: Path, seeds: tuple) -> str:
    """OUT/<lever>.md, .csv and -verdicts.csv; returns the Markdown."""
    chosen = next(s for s in summaries if s["value"].label == lever.chosen)
    reference = verdicts(chosen["outcomes"])
    key_heads = [f"{exp.split('-', 1)[1]}: {q}" for exp, q in lever.key_values]
    lines = [
        f"#### {lever.parameter}",
        "",
        f"Experiments: {', '.join(lever.experiments)}; run seeds "
        f"{seeds[0]}..{seeds[-1]} ({len(seeds)}).",
        "",
        "| value | match / miss / n/a | verdicts that differ from the chosen value's | "
        + " | ".join(key_heads)
        + " |",
        "|---|---|---|" + "---|" * len(key_heads),
    ]
    rows_csv = []
    verdict_rows = []
    for summary in summaries:
        value = summary["value"]
        counts = summary["counts"]
        here = verdicts(summary["outcomes"])
        flips = []
        for key, (verdict, _) in sorted(here.items()):
            before = reference.get(key, ("-", math.nan))[0]
            if verdict != before:
                flips.append(f"{key[0].split('-', 1)[1]} {key[1]} ({before} -> {verdict})")
            verdict_rows.append([value.label, key[0], key[1], _fmt(here[key][1]), verdict])
        mark = " **(chosen)**" if value.label == lever.chosen else ""
        keys = [find_value(summary["outcomes"], exp, q) for exp, q in lever.key_values]
        flip_text = "; ".join(flips) if flips else "none"
        if value.label == lever.chosen:
            flip_text = "-"
        lines.append(
            f"| {value.label}{mark} | {counts['match']} / {counts['miss']} / {counts['n/a']} | "
            f"{flip_text} | " + " | ".join(_fmt(k) for k in keys) + " |"
        )
        rows_csv.append(
            [
                lever.name,
                value.label,
                " ".join(value.overrides) or ("per run" if value.runs else ""),
                counts["match"],
                counts["miss"],
                counts["n/a"],
                len(flips) if value.label != lever.chosen else 0,
                f"{summary['run_s']:.1f}",
                f"{summary['wall_s']:.1f}",
                *[_fmt(k) for k in keys],
            ]
        )
    lines += ["", f"Chosen: {lever.chosen}. Source: {lever.source}.", ""]
    text = "\n".join(lines)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{lever.name}.md").write_text(text, encoding="utf-8")
    with (out / f"{lever.name}.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            [
                "lever",
                "value",
                "overrides",
                "match",
                "miss",
                "n/a",
                "flipped",
                "run_s",
                "wall_s",
                *key_heads,
            ]
        )
        writer.writerows(rows_csv)
    with (out / f"{lever.name}-verdicts.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["value", "experiment", "quantity", "simulated", "verdict"])
        writer.writerows(verdict_rows)
    return text


def parse_seeds(text: str) -> tuple:
    """Run seeds from "1-10" or "1,2,5"."""
    if "-" in text:
        first, last = text.split("-", 1)
        return tuple(range(int(first), int(last) + 1))
    return tuple(int(part) for part in text.split(","))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("levers", nargs="*", help="lever names (default: all)")
    parser.add_argument("--list", action="store_true", help="list the levers and exit")
    parser.add_argument("--jobs", type=int, default=1, help="simulations at once (processes)")
    parser.add_argument("--seeds", default="1-10", help='run seeds, "1-10" or "1,2"')
    parser.add_argument("--out", default="runs/sensitivity", help="output directory")
    args = parser.parse_args(argv)
    if args.list:
        for lever in LEVERS.values():
            values = ", ".join(v.label for v in lever.values)
            print(f"{lever.name}: {lever.parameter}; values {values}; chosen {lever.chosen}")
        return 0
    unknown = [name for name in args.levers if name not in LEVERS]
    if unknown:
        print(f"unknown lever(s): {', '.join(unknown)}; levers: {', '.join(LEVERS)}")
        return 2
    seeds = parse_seeds(args.seeds)
    out = Path(args.out)
    for name in args.levers or list(LEVERS):
        lever = LEVERS[name]
        started = time.perf_counter()
        summaries = study(lever, out, args.jobs, seeds)
        print(write_tables(lever, summaries, out, seeds))
        run_s = sum(s["run_s"] for s in summaries)
        print(
            f"{lever.name}: simulations {run_s:.0f} s (summed over runs), "
            f"wall {time.perf_counter() - started:.0f} s",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
