"""Explicit-rate control of TCP at ATM edge ports in scenario files (Explicit rate control of TCP
(Satyavolu et al., 1998), "Explicit rate control of TCP applications", sections 3 and 7):
``rate_control`` on an ATM link, ``ack_control`` on the last link of the ACK VCs, their errors (one
line, exit 2) and a real run of UBR TCP over ATM with the windows written at the senders' edge."""

from __future__ import annotations

from pathlib import Path

from atmsim.scenario import to_core

from conftest import balanced, cli_main, error_of, load_text, needs_core, write

# scenarios/ubr_tcp.toml with three Reno flows of 256 KB windows: their sum (18,432
# cells) exceeds the 30 ms pipe (11,004 cells), so without control the shared port
# sw1 -> sw2 holds the excess. The ACK direction of the access links is written out:
# its ack_control acts where the ACK frames are reassembled, at the senders' edge.
EDGE = """\
[run]
duration = "2 s"
seed = 1

[nodes]
"s{i}" = { kind = "host", count = 3 }
sw1 = { kind = "switch" }
sw2 = { kind = "switch" }
"d{i}" = { kind = "host", count = 3 }

[links."s{i}-sw1"]
count = 3
from = "s{i}"
to = "sw1"
rate = "155.52 Mbps"
length = "1000 km"

[links."sw1-s{i}"]
count = 3
from = "sw1"
to = "s{i}"
rate = "155.52 Mbps"
length = "1000 km"
ack_control = { rates_from = "sw1-sw2", window = "base_rtt" }

[links.sw1-sw2]
from = "sw1"
to = "sw2"
rate = "155.52 Mbps"
length = "1000 km"
rate_control = "erica_plus"

[links.sw2-sw1]
from = "sw2"
to = "sw1"
rate = "155.52 Mbps"
length = "1000 km"

[links."sw2-d{i}"]
count = 3
from = "sw2"
to = "d{i}"
rate = "155.52 Mbps"
length = "1000 km"
duplex = true

[flows."tcp{i}"]
count = 3
path = ["s{i}", "sw1", "sw2", "d{i}"]
class = "ubr"
variant = "reno"
mss = 512
window = "256 KB"

[probes]
period = "10 ms"
queue = ["sw1-sw2"]
flows = "all"
"""

ACK_CONTROL = 'ack_control = { rates_from = "sw1-sw2", window = "base_rtt" }\n'
RATE_CONTROL = 'rate_control = "erica_plus"\n'


def test_core_json(tmp_path: Path) -> None:
    core = to_core(load_text(tmp_path, EDGE))
    index = {link["name"]: k for k, link in enumerate(core["links"])}
    port = core["links"][index["sw1-sw2"]]
    assert port["rate_control"]["interval_ps"] == 5_000_000_000
    for i in (1, 2, 3):
        control = core["links"][index[f"sw1-s{i}"]]["ack_control"]
        assert control == {
            "rates_from": index["sw1-sw2"],
            "window": {"kind": "base_rtt"},
            "ack_bucket": False,
        }


def test_ack_control_needs_a_port_with_rate_control(tmp_path: Path) -> None:
    error = error_of(tmp_path, EDGE.replace(RATE_CONTROL, ""))
    assert error.key == "links.sw1-s{i}.ack_control.rates_from"
    assert "computes no rates" in error.message and "\n" not in str(error)
    path = write(tmp_path, EDGE.replace(RATE_CONTROL, ""), "bad.toml")
    assert cli_main("validate", str(path)) == 2


def test_ack_control_sits_where_the_ack_vcs_end(tmp_path: Path) -> None:
    text = EDGE.replace(ACK_CONTROL, "").replace(
        'to = "sw1"\nrate = "155.52 Mbps"\nlength = "1000 km"\n\n[links."sw2-d{i}"]',
        f'to = "sw1"\nrate = "155.52 Mbps"\nlength = "1000 km"\n{ACK_CONTROL}\n'
        '[links."sw2-d{i}"]',
    )
    assert text != EDGE.replace(ACK_CONTROL, "")
    error = error_of(tmp_path, text)
    assert error.key == "links.sw2-sw1.ack_control"
    assert "ACK VC ends" in error.message


def test_no_ack_bucket_at_an_atm_edge(tmp_path: Path) -> None:
    error = error_of(
        tmp_path, EDGE.replace('window = "base_rtt" }', 'window = "base_rtt", ack_bucket = true }')
    )
    assert error.key == "links.sw1-s{i}.ack_control.ack_bucket"
    assert "IP routers only" in error.message


def test_rates_come_from_the_same_network(tmp_path: Path) -> None:
    text = EDGE.replace(
        '[links.sw1-sw2]\nfrom = "sw1"\nto = "sw2"\n',
        '[links.sw1-sw2]\nfrom = "sw1"\nto = "sw2"\nlayer = "ip"\n',
    )
    error = error_of(tmp_path, text)
    assert error.key == "links.sw1-s{i}.ack_control.rates_from"
    assert "same network" in error.message


@needs_core
def test_windows_written_at_the_edge_hold_the_queue_low() -> None:
    import atmsim
    from atmsim.scenario import tomllib

    vanilla = atmsim.run(tomllib.loads(EDGE.replace(ACK_CONTROL, "").replace(RATE_CONTROL, "")))
    result = atmsim.run(tomllib.loads(EDGE))
    assert balanced(result.summary) and balanced(vanilla.summary)

    def late_mean_queue(run) -> float:
        s = run.series
        q = s[(s["metric"] == "queue_cells") & (s["entity"] == "sw1-sw2")]["value"]
        return float(q.iloc[len(q) // 2 :].mean())

    # Vanilla TCP keeps the excess of the windows (about 7400 cells) queued; the
    # windows written from the port's rates keep the queue far lower.
    assert late_mean_queue(vanilla) > 7000
    assert late_mean_queue(result) < late_mean_queue(vanilla) / 3
    for flow in result.summary["flows"]:
        rc = flow["rate_control"]
        assert rc["acks_rewritten"] > 0 and 512 <= rc["window_written_bytes"] <= 262144
        assert rc["acks_released"] == rc["acks_held"] == 0
    assert all(flow.get("rate_control") is None for flow in vanilla.summary["flows"])
    assert list(result.rate_control["name"]) == ["tcp1", "tcp2", "tcp3"]
    written = result.series[result.series["metric"] == "rwnd_written_bytes"]["value"]
    # Never above what the receiver advertises (256 KB, window scale 3: units of 8).
    assert written.max() <= 262144 and (written % 8 == 0).all()
    assert (result.series[result.series["metric"] == "er_bps"]["value"] > 0).all()
