"""Seed 001: Satyavolu, Duvedi, Kalyanaraman, "Explicit rate control of TCP
applications" (ATM Forum 98-0152, February 1998): a simplified ERICA+ at a router
computes each TCP flow's rate, which the router writes into the receiver window of
the flow's ACKs as ER x T (section 5); the heterogeneous round-trip configuration
(section 6.1, Figures 2-4) and GFC-2 (section 6.2, Figure 6).

The seed publishes figures described in its text: levels ("about 8000 packets",
"between about 100 and 150 packets", "between 30000 and 40000 bytes", "up to
600 ms") judged with the rule for a level read from a figure (+-10 %), and claims
(fair, unfair, proportional, low, high) judged one-sided or with the fairness rule
of seed 003. Scenario files: scenarios/reproduce/seed001-hetero.toml and
seed001-gfc2.toml.

Nothing in these runs draws a random number (IP routers, which serve packets that
arrive together in a fixed order; no RED, no receiver jitter; every flow starts at
0; ``atmsim.determinism.seed_dependence`` is empty for each run), so every
experiment runs one run seed (``SEEDS``): ten would be ten identical runs.
"""

from __future__ import annotations

import numpy as np

from ..compare import ABOVE, BELOW, REPORT, absolute, below, relative
from ..templates import GFC2_LINKS, GFC2_MAX_MIN_MBPS
from . import Experiment, Quantity, Run

HETERO = "seed001-hetero.toml"
GFC2 = "seed001-gfc2.toml"
BOTTLENECK = "r1-r2"
LINK_BPS = 155.52e6
PACKET_BYTES = 1024 + 40
"""A full segment's IP packet: MSS 1024 (seed 001 Table 1) + 40 bytes of headers."""
SEEDS = (1,)
"""The run seeds of every experiment: one, as nothing in these runs is random (module
docstring; a test checks each run's seed dependence)."""
GROUPS = {1: range(1, 6), 2: range(6, 11), 3: range(11, 16)}
"""The three groups of five flows (seed 001 Figure 1)."""
BASE_RTT_S = {1: 0.0101, 2: 0.0161, 3: 0.0701}
"""Each group's round trip: 2 x (access + 1000 + exit km) x 5 us/km (10.06, 16.0,
70.0 ms as the seed states) plus one segment's and one ACK's transmission per hop."""
STEADY_S = 1.0
"""Levels and shares are read from 1 s on: by then every window has stopped growing
under the rate control (the seed's figures show the first second as start-up)."""
CHAIN = tuple(f"{a.replace('sw', 'r')}-{b.replace('sw', 'r')}" for a, b, _ in GFC2_LINKS)

LEVEL = relative(0.10)
LEVEL_WHY = "a level read from a figure: +-10 %, as for seed 000's figures"
CLAIM_WHY = "a direction stated by the seed, no number: on its side of 1"
FAIR = absolute(0.01)
FAIR_WHY = "'fair' read as a Jain index within 0.01 of 1 (the rule of seed 003)"
UNFAIR = below(0.01)
UNFAIR_WHY = "'unfair' read as a Jain index more than 0.01 below 1 (the resolution of 'fair')"
HIGH = ABOVE
HIGH_WHY = (
    "'high' utilization read as above 90 %, the target utilization of ERICA in seeds "
    "000, 002 and 003"
)


def _flows(group: int) -> list[str]:
    return [f"tcp{k}" for k in GROUPS[group]]


def _goodput(result, names) -> float:
    flows = result.flows.set_index("name")
    return float(np.mean([flows.loc[n, "goodput_mbps"] for n in names]))


def _jain(values) -> float:
    from ..compare import jain

    return jain(list(values))


def _wide(result, metric: str):
    rows = result.series[result.series["metric"] == metric]
    if rows.empty:
        raise ValueError(f"no {metric} samples")
    return rows.pivot_table(index="time_s", columns="entity", values="value", aggfunc="last")


def _steady(frame):
    late = frame[frame.index >= STEADY_S]
    if late.empty:
        raise ValueError(f"no samples after {STEADY_S} s")
    return late


def _queue(result, port: str = BOTTLENECK):
    return _steady(_wide(result, "ip_queue_packets"))[port]


def _max_queue(result, port: str = BOTTLENECK) -> float:
    """The most packets waiting at the port over the run (exact, not sampled)."""
    ports = result.ports.set_index("name")
    return float(ports.loc[port, "max_queue_packets"])


def _utilization(result, ports=(BOTTLENECK,)) -> float:
    table = result.ports.set_index("name")
    return float(np.mean([table.loc[p, "utilization"] for p in ports]))


def _windows(result):
    """The flows' actual windows (min(cwnd, advertised)) from 1 s on."""
    return _steady(_wide(result, "window_bytes"))


def _all_jain(result) -> float:
    return _jain(result.flows["goodput_mbps"])


def _steady_jain(result) -> tuple[float, str]:
    """Jain's index of the flows' sending rates from 1 s to the end (highest byte sent,
    sampled every probe period): the state after the start-up."""
    seq = _steady(_wide(result, "seq_bytes"))
    first, last = seq.index[0], seq.index[-1]
    rates = (seq.loc[last] - seq.loc[first]) * 8 / (last - first) / 1e6
    groups = ", ".join(f"{rates[_flows(g)].mean():.2f}" for g in (1, 2, 3))
    return _jain(rates.to_numpy()), f"Mbps per group from 1 s: {groups}"


def _largest_rtt_ms(result) -> tuple[float, str]:
    """The longest round trip a flow of the 70 ms group saw: its base round trip plus
    the most queueing delay at r1 -> r2 (the only queue on its path)."""
    delay = _max_queue(result) * PACKET_BYTES * 8 / LINK_BPS
    return 1e3 * (BASE_RTT_S[3] + delay), f"{_max_queue(result):.0f} packets at most"


def _final_window_share(result) -> tuple[float, str]:
    """The smallest last actual window over the flows, over 600,000 bytes."""
    windows = _wide(result, "window_bytes")
    last = windows.iloc[-1]
    return float(last.min()) / 600000, f"smallest {last.min():.0f} bytes"


def _window_per_rtt(result) -> tuple[float, str]:
    """Group 3's median window per second of its round trip over group 1's."""
    w = _windows(result)
    per = {g: float(np.median(w[_flows(g)].to_numpy())) / BASE_RTT_S[g] for g in (1, 3)}
    medians = {g: float(np.median(w[_flows(g)].to_numpy())) for g in (1, 2, 3)}
    note = "median windows " + ", ".join(f"{medians[g]:.0f}" for g in (1, 2, 3)) + " bytes"
    return per[3] / per[1], note


def _quantile_queue(q: float):
    def extract(results):
        return float(_queue(results["run"]).quantile(q))

    return extract


def _quantile_window(q: float):
    def extract(results):
        return float(np.quantile(_windows(results["run"]).to_numpy(), q))

    return extract


def _group_note(result) -> str:
    return "mean per group " + ", ".join(f"{_goodput(result, _flows(g)):.2f}" for g in (1, 2, 3))


def _report(name: str, unit: str, extract, reason: str = "shown, not published") -> Quantity:
    return Quantity(name, None, unit, REPORT, reason, extract)


FIG2 = Experiment(
    id="seed001-fig2",
    title="Vanilla TCP: 15 flows of 10, 16 and 70 ms round trips through one router",
    source="seed 001 section 6.1, Figure 2",
    runs={"run": Run(HETERO)},
    figures=("window", "ip_queue", "sequence"),
    port=BOTTLENECK,
    seeds=SEEDS,
    published=(
        Quantity(
            "largest queue at r1 -> r2",
            8000.0,
            "packets",
            LEVEL,
            "the seed: 'the queue lengths reach a maximum of about 8000 packets'; " + LEVEL_WHY,
            lambda r: _max_queue(r["run"]),
        ),
        Quantity(
            "longest round trip, 70 ms group",
            600.0,
            "ms",
            LEVEL,
            "the seed: 'round trip times measured at the source ... went up to 600ms'; "
            + LEVEL_WHY,
            lambda r: _largest_rtt_ms(r["run"]),
        ),
        Quantity(
            "smallest final window over 600,000 bytes",
            1.0,
            "ratio",
            relative(0.01),
            "the seed: the windows stop growing at 'the SSTHRESH (and receiver window) "
            "value of 600000 bytes'; within 1 % (one segment of 1024 bytes in 600,000 is "
            "0.2 %)",
            lambda r: _final_window_share(r["run"]),
        ),
        _report("Jain index of the 15 throughputs", "index", lambda r: _all_jain(r["run"])),
        _report(
            "throughput, 10 ms group over 70 ms group",
            "ratio",
            lambda r: (
                _goodput(r["run"], _flows(1)) / _goodput(r["run"], _flows(3)),
                _group_note(r["run"]),
            ),
        ),
    ),
    notes=(
        "Nothing is lost: the buffer is unlimited, and the windows stop at 600,000 bytes. "
        "The longest round trip is the 70 ms group's base round trip plus the largest "
        "queueing delay at r1 -> r2 (the TCP's own RTT estimate moves in 100 ms ticks).",
    ),
)

FIG3 = Experiment(
    id="seed001-fig3",
    title="Rate written into the ACKs as ER x 30 ms for every flow",
    source="seed 001 section 6.1, Figure 3",
    runs={"run": Run(HETERO, ('template.window_rule="30 ms"',))},
    figures=("window", "ip_queue", "sequence"),
    port=BOTTLENECK,
    seeds=SEEDS,
    published=(
        Quantity(
            "queue at r1 -> r2 from 1 s, 10th percentile",
            100.0,
            "packets",
            LEVEL,
            "the seed: 'queue lengths which oscillate between about 100 and 150 packets' "
            "(the low end); " + LEVEL_WHY,
            _quantile_queue(0.1),
        ),
        Quantity(
            "queue at r1 -> r2 from 1 s, 90th percentile",
            150.0,
            "packets",
            LEVEL,
            "the seed: 'between about 100 and 150 packets' (the high end); " + LEVEL_WHY,
            _quantile_queue(0.9),
        ),
        Quantity(
            "actual windows from 1 s, 10th percentile",
            30000.0,
            "bytes",
            LEVEL,
            "the seed: 'the actual window size oscillates between 30000 and 40000 bytes' "
            "(the low end); " + LEVEL_WHY,
            _quantile_window(0.1),
        ),
        Quantity(
            "actual windows from 1 s, 90th percentile",
            40000.0,
            "bytes",
            LEVEL,
            "the seed: 'between 30000 and 40000 bytes' (the high end); " + LEVEL_WHY,
            _quantile_window(0.9),
        ),
        Quantity(
            "Jain index of the 15 throughputs",
            1.0,
            "index",
            UNFAIR,
            "the seed: 'the distribution of rate is unfair'; " + UNFAIR_WHY,
            lambda r: _all_jain(r["run"]),
        ),
        Quantity(
            "throughput, 10 ms group over 70 ms group",
            1.0,
            "ratio",
            ABOVE,
            "the seed: 'the smaller RTT connection grabs the available capacity'; " + CLAIM_WHY,
            lambda r: (
                _goodput(r["run"], _flows(1)) / _goodput(r["run"], _flows(3)),
                _group_note(r["run"]),
            ),
        ),
        Quantity(
            "utilization of r1 -> r2",
            0.9,
            "fraction",
            HIGH,
            "the seed: 'The overall utilization ... is high'; " + HIGH_WHY,
            lambda r: _utilization(r["run"]),
        ),
    ),
)

FIG4 = Experiment(
    id="seed001-fig4",
    title="Rate written into the ACKs as ER x each flow's own round trip",
    source="seed 001 section 6.1, Figure 4",
    runs={"run": Run(HETERO, ("template.window_rule=base_rtt",))},
    figures=("window", "ip_queue", "sequence"),
    port=BOTTLENECK,
    seeds=SEEDS,
    published=(
        Quantity(
            "Jain index of the 15 throughputs",
            1.0,
            "index",
            FAIR,
            "the seed: 'As expected the allocations are fair'; " + FAIR_WHY,
            lambda r: (_all_jain(r["run"]), _group_note(r["run"])),
        ),
        Quantity(
            "window per second of round trip, 70 ms group over 10 ms group",
            1.0,
            "ratio",
            LEVEL,
            "the seed: 'the actual window sizes ... are proportional to their RTTs' (median "
            "windows from 1 s over the base round trips 10.1 and 70.1 ms); " + LEVEL_WHY,
            lambda r: _window_per_rtt(r["run"]),
        ),
        Quantity(
            "queue at r1 -> r2 from 1 s, 90th percentile",
            150.0,
            "packets",
            BELOW,
            "the seed: 'Queue sizes are also small': below Figure 3's high end (150 "
            "packets); " + CLAIM_WHY,
            _quantile_queue(0.9),
        ),
        Quantity(
            "utilization of r1 -> r2",
            0.9,
            "fraction",
            HIGH,
            "the seed: 'utilization is not compromised much'; " + HIGH_WHY,
            lambda r: _utilization(r["run"]),
        ),
    ),
)


def _gfc2_jain(result) -> float:
    """Jain's index of each flow's throughput over its group's max-min rate (the index
    does not depend on the unit, so goodput against link-rate shares is fine)."""
    flows = result.flows
    return _jain(
        float(g) / GFC2_MAX_MIN_MBPS[str(n)[0]]
        for n, g in zip(flows["name"], flows["goodput_mbps"])
    )


def _gfc2_groups(result) -> str:
    flows = result.flows
    means = {}
    for group in GFC2_MAX_MIN_MBPS:
        values = [float(g) for n, g in zip(flows["name"], flows["goodput_mbps"]) if n[0] == group]
        means[group] = np.mean(values)
    return "mean per group " + ", ".join(f"{g.upper()} {v:.1f}" for g, v in means.items())


def _chain_queue(result) -> float:
    return max(_max_queue(result, p) for p in CHAIN)


def _chain_utilization(result) -> float:
    return _utilization(result, CHAIN)


def _ratio(value, a: str, b: str, names: dict):
    def extract(results):
        x, y = value(results[a]), value(results[b])
        return x / y, f"{names[a]} {x:.4g}, {names[b]} {y:.4g}"

    return extract


def _difference(value, a: str, b: str, names: dict):
    def extract(results):
        x, y = value(results[a]), value(results[b])
        return x - y, f"{names[a]} {x:.4g}, {names[b]} {y:.4g}"

    return extract


GFC2_RUNS = {
    "vanilla": Run(GFC2),
    "fixed": Run(GFC2, ('template.window_rule="30 ms"',)),
    "rtt": Run(GFC2, ("template.window_rule=base_rtt",)),
}
GFC2_NAMES = {"vanilla": "vanilla", "fixed": "T = 30 ms", "rtt": "own RTT"}

FIG6 = Experiment(
    id="seed001-fig6",
    title="GFC-2 with TCP: vanilla, T = 30 ms, each flow's own round trip",
    source="seed 001 section 6.2, Figure 6",
    runs=GFC2_RUNS,
    figures=("sequence", "ip_queue"),
    port="r4-r5",
    seeds=SEEDS,
    published=(
        Quantity(
            "own RTT: Jain index against the max-min rates",
            1.0,
            "index",
            absolute(0.05),
            "the seed: 'a near-fair distribution' (Fig. 6c): 'near' read as within five "
            "times the resolution of 'fair', 0.05 of 1",
            lambda r: (_gfc2_jain(r["rtt"]), _gfc2_groups(r["rtt"])),
        ),
        Quantity(
            "T = 30 ms: Jain index against the max-min rates",
            1.0,
            "index",
            UNFAIR,
            "the seed: 'The distribution is not fair' (Fig. 6b); " + UNFAIR_WHY,
            lambda r: (_gfc2_jain(r["fixed"]), _gfc2_groups(r["fixed"])),
        ),
        Quantity(
            "Jain index, own RTT - T = 30 ms",
            0.0,
            "difference",
            ABOVE,
            "the seed: the own-RTT translation near-fair, the fixed one not; 'fairer' "
            "read as a Jain index higher by more than 0 (the margin of the 'unfair' "
            "reading is in the row above)",
            _difference(_gfc2_jain, "rtt", "fixed", GFC2_NAMES),
        ),
        Quantity(
            "Jain index, vanilla - T = 30 ms",
            0.0,
            "difference",
            ABOVE,
            "the seed: with vanilla TCP 'not much unfairness is seen', with T = 30 ms "
            "'the distribution is not fair'",
            _difference(_gfc2_jain, "vanilla", "fixed", GFC2_NAMES),
        ),
        Quantity(
            "largest chain queue, T = 30 ms / vanilla",
            1.0,
            "ratio",
            BELOW,
            "the seed: vanilla 'queues ... grow to large levels', with T = 30 ms 'the queue "
            "lengths are low'; " + CLAIM_WHY,
            _ratio(_chain_queue, "fixed", "vanilla", GFC2_NAMES),
        ),
        Quantity(
            "largest chain queue, own RTT / vanilla",
            1.0,
            "ratio",
            BELOW,
            "the seed: with the own RTT 'Queue lengths are low'; " + CLAIM_WHY,
            _ratio(_chain_queue, "rtt", "vanilla", GFC2_NAMES),
        ),
        Quantity(
            "chain utilization, T = 30 ms / vanilla",
            1.0,
            "ratio",
            BELOW,
            "the seed: with T = 30 ms 'Utilizations are also somewhat lower'; " + CLAIM_WHY,
            _ratio(_chain_utilization, "fixed", "vanilla", GFC2_NAMES),
        ),
        Quantity(
            "chain utilization, own RTT / T = 30 ms",
            1.0,
            "ratio",
            ABOVE,
            "the seed: with the own RTT 'utilizations are high too', against 'somewhat "
            "lower' with T = 30 ms; " + CLAIM_WHY,
            _ratio(_chain_utilization, "rtt", "fixed", GFC2_NAMES),
        ),
        _report(
            "vanilla: Jain index against the max-min rates",
            "index",
            lambda r: (_gfc2_jain(r["vanilla"]), _gfc2_groups(r["vanilla"])),
        ),
    ),
    notes=(
        "Each router on the reverse chain writes the window its own port allows, so an "
        "ACK reaches its source with the least window of the ports its data crossed. "
        "Utilization is the mean over the six forward chain links; the queue the largest "
        "over them.",
    ),
    weight=2.0,
)

BUCKET_RUNS = {
    "bucket": Run(HETERO, ("template.ack_bucket=true",)),
    "bucket+T": Run(HETERO, ("template.ack_bucket=true", 'template.window_rule="100 ms"')),
}

ACK_BUCKET = Experiment(
    id="seed001-ack-bucket",
    title="The ack bucket alone, and with windows of ER x T, T above the longest round trip",
    source="seed 001 sections 4.1 and 4.2.1 (no figure)",
    runs=BUCKET_RUNS,
    figures=("window", "ip_queue"),
    port=BOTTLENECK,
    seeds=SEEDS,
    published=(
        Quantity(
            "ack bucket with T = 100 ms: Jain index of the 15 throughputs",
            1.0,
            "index",
            FAIR,
            "the seed (section 4.2.1): 'for this latter case i.e., T >= Max RTT, a simple "
            "ack bucket scheme can be used in conjunction with the explicit feedback scheme "
            "to achieve fairness' (T = 100 ms, above the 70 ms of the longest); " + FAIR_WHY,
            lambda r: (_all_jain(r["bucket+T"]), _group_note(r["bucket+T"])),
        ),
        _report(
            "ack bucket with T = 100 ms: Jain index of the rates from 1 s",
            "index",
            lambda r: _steady_jain(r["bucket+T"]),
            "shown: the state after the start-up, which the seed's argument is about",
        ),
        _report(
            "ack bucket alone: Jain index",
            "index",
            lambda r: (_all_jain(r["bucket"]), _group_note(r["bucket"])),
            "no figure: section 4.1 expects temporary unfairness while the windows grow",
        ),
        _report(
            "ack bucket alone: queue at r1 -> r2 from 1 s, 90th percentile",
            "packets",
            lambda r: float(_queue(r["bucket"]).quantile(0.9)),
        ),
        _report(
            "ack bucket with T = 100 ms: queue at r1 -> r2 from 1 s, 90th percentile",
            "packets",
            lambda r: float(_queue(r["bucket+T"]).quantile(0.9)),
        ),
        _report(
            "ack bucket alone: most ACKs held for one flow",
            "ACKs",
            lambda r: float(r["bucket"].rate_control["acks_held_max"].max()),
        ),
        _report(
            "ack bucket alone: mean time an ACK is held",
            "ms",
            lambda r: 1e3 * float(r["bucket"].rate_control["ack_hold_mean_s"].mean()),
        ),
    ),
    notes=(
        "The seed gives no figure of the ack bucket; these runs show it beside the "
        "translation (docs/reproduction.md). The bucket releases each ACK after the time "
        "its newly acknowledged data take at the flow's explicit rate.",
    ),
)

EXPERIMENTS = (FIG2, FIG3, FIG4, FIG6, ACK_BUCKET)
