"""Explicit-rate control of TCP at IP routers in scenario files (Explicit rate control of TCP,
Satyavolu et al., 1998): ``rate_control`` and ``ack_control`` on IP links, their errors and core
JSON, the hetero-rtt and gfc2-ip templates, and real runs (windows written, the ack bucket's
ledger term, the per-flow summary and series)."""

from __future__ import annotations

from pathlib import Path

import pytest

from atmsim.scenario import to_core

from conftest import SCENARIOS, balanced, error_of, load_text, needs_core

DUMBBELL = """\
[run]
duration = "1 s"

[nodes]
"s{i}" = { kind = "host", count = 2 }
"d{i}" = { kind = "host", count = 2 }
r1 = {}
r2 = {}

[links."s{i}-r1"]
count = 2
from = "s{i}"
to = "r1"
layer = "ip"
rate = "1 Gbps"
length = "100 km"
duplex = true

[links.r1-r2]
from = "r1"
to = "r2"
layer = "ip"
rate = "20 Mbps"
length = "1000 km"
rate_control = "erica_plus"

[links.r2-r1]
from = "r2"
to = "r1"
layer = "ip"
rate = "20 Mbps"
length = "1000 km"
ack_control = { rates_from = "r1-r2", window = "30 ms" }

[links."r2-d{i}"]
count = 2
from = "r2"
to = "d{i}"
layer = "ip"
rate = "1 Gbps"
length = "1 km"
duplex = true

[flows."tcp{i}"]
count = 2
path = ["s{i}", "r1", "r2", "d{i}"]
variant = "reno"
mss = 1024
window = 600000

[probes]
period = "10 ms"
queue = ["r1-r2"]
flows = "all"
"""
"""Two Reno flows through a 20 Mbps router link whose rates r1 writes into their ACKs."""


def test_defaults_and_core_json(tmp_path: Path) -> None:
    core = to_core(load_text(tmp_path, DUMBBELL))
    links = {link["name"]: (i, link) for i, link in enumerate(core["links"])}
    index, bottleneck = links["r1-r2"]
    assert bottleneck["rate_control"] == {
        "interval_ps": 5 * 10**9,
        "t0_ps": 1_500_000_000,
        "a": 1.15,
        "b": 1.0,
        "qdlf": 0.5,
        "delta": 0.1,
        "max_increase": 0.1,
        # the flows seen in the interval, as Explicit rate control of TCP's pseudo-code
        "active_decay": 0.0,
    }
    assert "ack_control" not in bottleneck
    assert links["r2-r1"][1]["ack_control"] == {
        "rates_from": index,
        "window": {"kind": "fixed", "t_ps": 30 * 10**9},
        "ack_bucket": False,
    }


@pytest.mark.parametrize(
    "window, expected",
    [
        ('"rtt"', {"kind": "rtt"}),
        ('"base_rtt"', {"kind": "base_rtt"}),
        ('"none"', {"kind": "none"}),
        ('"70 ms"', {"kind": "fixed", "t_ps": 70 * 10**9}),
    ],
)
def test_window_rules(tmp_path: Path, window: str, expected: dict) -> None:
    text = DUMBBELL.replace('window = "30 ms"', f"window = {window}")
    core = to_core(load_text(tmp_path, text))
    control = next(link for link in core["links"] if link["name"] == "r2-r1")["ack_control"]
    assert control["window"] == expected


@pytest.mark.parametrize(
    "old, new, key, words",
    [
        (
            'rate_control = "erica_plus"',
            'rate_control = "erica"',
            "links.r1-r2.rate_control",
            '"erica_plus"',
        ),
        (
            'rate_control = "erica_plus"',
            'rate_control = { interval = "0 s" }',
            "links.r1-r2.rate_control.interval",
            "",
        ),
        (
            'rate_control = "erica_plus"',
            "rate_control = { active_decay = 1.5 }",
            "links.r1-r2.rate_control.active_decay",
            "",
        ),
        (
            'rate_control = "erica_plus"',
            "rate_control = { max_increase = -0.1 }",
            "links.r1-r2.rate_control.max_increase",
            "",
        ),
        (
            'rate_control = "erica_plus"',
            "rate_control = { gain = 2 }",
            "links.r1-r2.rate_control.gain",
            "unknown key",
        ),
        (
            'window = "30 ms"',
            'window = "half"',
            "links.r2-r1.ack_control.window",
            '"base_rtt"',
        ),
        ('window = "30 ms"', 'window = "0 s"', "links.r2-r1.ack_control.window", ""),
        (
            'rates_from = "r1-r2"',
            'rates_from = "r9"',
            "links.r2-r1.ack_control.rates_from",
            'no link "r9"',
        ),
        (
            'rates_from = "r1-r2"',
            'rates_from = "s1-r1"',
            "links.r2-r1.ack_control.rates_from",
            "computes no rates",
        ),
        (
            '[links.r1-r2]\nfrom = "r1"\nto = "r2"\nlayer = "ip"',
            '[links.r1-r2]\nfrom = "r1"\nto = "r2"\nlayer = "atm"',
            "links.r2-r1.ack_control.rates_from",
            "same network",
        ),
    ],
)
def test_errors(tmp_path: Path, old: str, new: str, key: str, words: str) -> None:
    assert old in DUMBBELL
    error = error_of(tmp_path, DUMBBELL.replace(old, new, 1))
    assert error.key == key, str(error)
    assert words in error.message, str(error)


def test_the_controlling_port_must_leave_the_router_the_acks_reach(tmp_path: Path) -> None:
    # ACKs over r2 -> r1 reach r1; a rate-controlled port at r2 cannot give their rates.
    text = DUMBBELL.replace(
        '[links."r2-d{i}"]\ncount = 2',
        '[links."r2-d{i}"]\nrate_control = "erica_plus"\ncount = 2',
    ).replace('rates_from = "r1-r2"', 'rates_from = "r2-d1"')
    error = error_of(tmp_path, text)
    assert error.key == "links.r2-r1.ack_control.rates_from"
    assert 'leaves "r2"' in error.message and 'reach "r1"' in error.message


def test_duplex_does_not_copy_ack_control(tmp_path: Path) -> None:
    reverse = (
        '[links.r2-r1]\nfrom = "r2"\nto = "r1"\nlayer = "ip"\nrate = "20 Mbps"\n'
        'length = "1000 km"\nack_control = { rates_from = "r1-r2", window = "30 ms" }\n'
    )
    text = DUMBBELL.replace(reverse, "").replace(
        'rate_control = "erica_plus"',
        'rate_control = "erica_plus"\nduplex = true',
    )
    core = to_core(load_text(tmp_path, text))
    reverse = next(link for link in core["links"] if link["name"] == "r1-r2-rev")
    assert "rate_control" in reverse and "ack_control" not in reverse


@needs_core
def test_windows_written_and_the_summary() -> None:
    import atmsim
    from atmsim.scenario import tomllib

    vanilla = atmsim.run(
        tomllib.loads(DUMBBELL.replace('window = "30 ms"', 'window = "none"'))
    ).summary
    result = atmsim.run(tomllib.loads(DUMBBELL))
    summary = result.summary
    assert balanced(summary)
    port = next(p for p in summary["ports"] if p["name"] == "r1-r2")
    base = next(p for p in vanilla["ports"] if p["name"] == "r1-r2")
    assert port["max_queue_packets"] < base["max_queue_packets"]
    for flow in summary["flows"]:
        rc = flow["rate_control"]
        assert rc["acks_rewritten"] > 0 and 1024 <= rc["window_written_bytes"] <= 600000
        assert rc["acks_released"] == 0
    assert list(result.rate_control["name"]) == ["tcp1", "tcp2"]
    written = result.series[result.series["metric"] == "rwnd_written_bytes"]["value"]
    # Never above what the receiver advertises (600,000 bytes, scale 4: 37,500 x 16).
    assert written.max() <= 600000 and (written % 16 == 0).all()
    assert not result.series[result.series["metric"] == "er_bps"].empty


@needs_core
def test_the_ack_bucket_holds_acks_in_the_packet_ledger() -> None:
    import atmsim
    from atmsim.results import ledger_lines
    from atmsim.scenario import tomllib

    text = DUMBBELL.replace('window = "30 ms" }', 'window = "none", ack_bucket = true }').replace(
        'duration = "1 s"', 'duration = "0.4137 s"'
    )
    summary = atmsim.run(tomllib.loads(text)).summary
    packets = summary["conservation"]["packets"]
    held = sum(flow["rate_control"]["acks_held"] for flow in summary["flows"])
    assert packets["held_at_routers"] == held
    assert balanced(summary)
    lines = dict(ledger_lines(summary))
    packet_line = next(line for line in lines if line.startswith("packet ledger"))
    assert lines[packet_line]
    if held:
        assert "held at routers" in packet_line
    assert all(flow["rate_control"]["acks_released"] > 0 for flow in summary["flows"])


def test_templates_expand(tmp_path: Path) -> None:
    core = to_core(
        load_text(tmp_path, '[template]\nkind = "hetero-rtt"\nwindow_rule = "base_rtt"\n')
    )
    assert len(core["flows"]) == 15
    links = {link["name"]: link for link in core["links"]}
    assert links["s1-r1"]["delay_ps"] == 15_000_000  # 3 km
    assert links["s11-r1"]["delay_ps"] == 15_000_000_000  # 3000 km
    assert links["r2-r1"]["ack_control"]["window"] == {"kind": "base_rtt"}
    vanilla = to_core(load_text(tmp_path, '[template]\nkind = "hetero-rtt"\n'))
    assert all("rate_control" not in link for link in vanilla["links"])
    gfc2 = to_core(load_text(tmp_path, '[template]\nkind = "gfc2-ip"\nwindow_rule = "30 ms"\n'))
    assert len(gfc2["flows"]) == 22
    controls = [link for link in gfc2["links"] if "ack_control" in link]
    assert len(controls) == 6 and all(
        "rate_control" in gfc2["links"][c["ack_control"]["rates_from"]] for c in controls
    )


@needs_core
def test_ack_buckets_at_two_routers_keep_the_ledger(tmp_path):
    """GFC-2 with ack buckets: a flow crossing two controlling routers once had
    one bucket for both, so ACKs held at the second router went on from the
    first and the packet ledger missed 31 packets at 1 s."""
    from atmsim import api

    result = api.run(
        SCENARIOS / "reproduce" / "seed001-gfc2.toml",
        overrides=["template.ack_bucket=true", 'template.duration="1 s"'],
    )
    conservation = result.summary["conservation"]
    assert conservation["ok"], conservation["problems"]
    assert conservation["packets"]["held_at_routers"] > 0
    flows = [f for f in result.summary["flows"] if f.get("rate_control")]
    assert flows and all(f["rate_control"]["acks_released"] > 0 for f in flows)


@needs_core
def test_a_port_told_ahead_counts_no_arrival_after_the_run(tmp_path):
    """Found by the fuzzer's differential check: an eager IP port (the fast paths) is
    told of arrivals beyond the run's end, and its largest queue counted one of them:
    2 packets with the fast paths, 1 without (Explicit rate control of TCP's exit link to d3 at half
    rate, 50 ms)."""
    from atmsim import api

    overrides = ['template.duration="50 ms"', 'links.r2-d3.rate="77.76 Mbps"']
    largest = []
    for fast in (True, False):
        summary = api.run(
            SCENARIOS / "reproduce" / "seed001-hetero.toml",
            overrides=overrides,
            fast_paths=fast,
            progress=False,
        ).summary
        largest.append([p["max_queue_packets"] for p in summary["ports"] if p["name"] == "r2-d3"])
    assert largest[0] == largest[1] == [1]
