"""Real Linux Reno and CUBIC against atmsim's own TCP models over the same networks.

The first check of the model's TCP against a real stack (docs/emulation.md, "The
study: real Linux TCP against the model's"). Six networks, all from the two
emulation examples with ``--set`` overrides, so that every one runs with ``atmsim
emulate`` (real kernel TCP between network namespaces) and with ``atmsim run``
(the model's TCP):

- ``ubr_tail``, ``ubr_epd``, ``abr_erica``: emulate_ubr (h1 -> sw1 -> sw2 -> sw3
  -> h2, 25.6 Mbps, 2 ms per link, RTT 16 ms) with the sw2 -> sw3 port slowed to
  12.8 Mbps so that it is the bottleneck (300 cells), tail drop or EPD at 240
  cells on UBR VCs, or the flow's VCs ABR with ERICA at that port (tail drop
  behind it); the host's port gets a 2,000-cell buffer (a NIC's queue, as
  docs/emulation.md advises).
- ``router_none``, ``router_fixed_t``, ``router_rtt``: emulate_er_router (s1 -> r1
  -> r2 -> d1, r1 -> r2 20 Mbps with 100 packets and ERICA+, RTT about 13 ms)
  with r1's window rule off, at a fixed T = 30 ms (Explicit rate control of TCP's
  Fig. 3 rule), and at T = the flow's RTT as a ping from the router measures it;
  the sender's port gets a 1,000-packet buffer.

Per network: ``--runs`` real transfers of ``--bytes`` with Linux ``reno`` and
``cubic`` (``atmsim emulate``, the project's sender sampling ``TCP_INFO`` every 5
ms; the machine's load average is read before each), and the model's TCP on the
same network with the same transfer: Reno with the scenario's settings (initial
window 1 segment, 100 ms timer ticks, the scenario's receive window), and Reno,
NewReno and SACK "Linux-like" (initial window 10 segments, the fine timer with a
200 ms minimum RTO, a 4 MB receive window). The model has no CUBIC.

Written to ``--out``: every run's directory, ``results.json`` (one row per run)
and ``table.md`` (the Markdown table of docs/emulation.md); to ``--figures``: one
PNG per network, ``emulation_<network>.png``, the real and the model's cwnd over
time (top) and the window in use (bottom: min(cwnd, the window the receiver
offers, lowered by the router's explicit-rate control where there is one)).

Needs root (network namespaces and TUN devices) for the real runs; with
``--model-only`` it runs the model alone, anywhere. Usage:

    sudo .venv/bin/python scripts/study_emulation.py [--runs 3] [--bytes 3000000]
        [--out runs/study_emulation] [--figures docs/figures] [--network NAME ...]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

ATM = [
    'links.sw2-sw3.rate="12.8 Mbps"',
    "links.h1-sw1.buffer=2000",
]
ROUTER = ["links.s1-r1.buffer=1000"]

NETWORKS = {
    "ubr_tail": ("emulate_ubr", ATM + ['links.sw2-sw3.policy={kind="tail"}'], "sw2-sw3"),
    "ubr_epd": ("emulate_ubr", ATM, "sw2-sw3"),
    "abr_erica": (
        "emulate_ubr",
        ATM
        + [
            'links.sw2-sw3.policy={kind="tail"}',
            'links.sw2-sw3.algorithm="erica"',
            'flows.tcp1.class="abr"',
        ],
        "sw2-sw3",
    ),
    "router_none": (
        "emulate_er_router",
        ROUTER + ['links.r2-r1.ack_control.window="none"'],
        "r1-r2",
    ),
    "router_fixed_t": (
        "emulate_er_router",
        ROUTER + ['links.r2-r1.ack_control.window="30 ms"'],
        "r1-r2",
    ),
    "router_rtt": ("emulate_er_router", ROUTER + ['links.r2-r1.ack_control.window="rtt"'], "r1-r2"),
}
"""name: (example scenario, overrides, bottleneck port)."""

TITLES = {
    "ubr_tail": "UBR, tail drop (12.8 Mbps, 300 cells)",
    "ubr_epd": "UBR, EPD at 240 of 300 cells (12.8 Mbps)",
    "abr_erica": "ABR with ERICA (12.8 Mbps, 300 cells)",
    "router_none": "router, no rate control (20 Mbps, 100 packets)",
    "router_fixed_t": "router, window ER x 30 ms",
    "router_rtt": "router, window ER x RTT",
}

LINUX_LIKE = [
    "flows.tcp1.initial_cwnd=10",
    'flows.tcp1.timer="fine"',
    'flows.tcp1.window="4 MB"',
]
MODELS = {
    "model reno": ['flows.tcp1.variant="reno"'],
    "model reno, Linux-like": ['flows.tcp1.variant="reno"', *LINUX_LIKE],
    "model newreno, Linux-like": ['flows.tcp1.variant="newreno"', *LINUX_LIKE],
    "model sack, Linux-like": ['flows.tcp1.variant="sack"', *LINUX_LIKE],
}
"""The model's TCP: the scenario's settings, and closer to Linux's defaults."""

MSS = 1448
"""Payload per segment, the real one's (MSS 1460 less the timestamp option) and the
model's here: 1500-byte datagrams, 32 cells over ATM."""


def probes(bottleneck: str) -> list[str]:
    return ['probes.period="5 ms"', 'probes.flows="all"', f'probes.queue=["{bottleneck}"]']


def load_average() -> float:
    return os.getloadavg()[0]


def lost_segments(summary: dict) -> int:
    """Data segments the network lost: over ATM the data VC's frames not delivered
    whole, over IP the packets dropped at the ports (the ACKs lose none here)."""
    vcs = [vc for vc in summary["vcs"] if vc["name"] == "tcp1"]
    if vcs:
        return vcs[0]["frames_sent"] - vcs[0]["frames_delivered"]
    return sum(port["packets_dropped"] for port in summary["ports"])


def acks_per_segment(summary: dict) -> float:
    """The receiver's segments per data segment sent: over ATM the ACK VC's frames
    per data VC's frame, over IP the packets entering the ACK path's first port
    (r2 -> d1's reverse) per packet entering the data path's (s1 -> r1)."""
    vcs = {vc["name"]: vc for vc in summary["vcs"]}
    if "tcp1" in vcs:
        return vcs["tcp1-ack"]["frames_sent"] / vcs["tcp1"]["frames_sent"]
    ports = {port["name"]: port for port in summary["ports"]}
    return ports["r2-d1-rev"]["packets_in"] / ports["s1-r1"]["packets_in"]


def median_rtt_ms(run_dir: Path, end_s: float | None = None) -> float:
    """The median of the sender's smoothed RTT over the transfer: the real kernel's
    from its TCP_INFO samples (``end_s`` None), the model's from its flow probe up
    to the transfer's end ``end_s`` (0 before the first sample)."""
    import pandas as pd

    if end_s is None:
        values = pd.read_csv(run_dir / "tcp_info_tcp1.csv")["rtt_s"]
    else:
        series = pd.read_parquet(run_dir / "series.parquet")
        mine = (series["entity"] == "tcp1") & (series["metric"] == "srtt_s")
        values = series[mine & (series["time_s"] <= end_s)]["value"]
    return float(values[values > 0].median()) * 1e3


def bottleneck_row(summary: dict, port: str) -> dict:
    row = next(p for p in summary["ports"] if p["name"] == port)
    if row["layer"] == "atm":
        return {
            "dropped": row["cells_dropped"],
            "max_queue": row["max_queue_cells"],
            "unit": "cells",
        }
    return {
        "dropped": row["packets_dropped"],
        "max_queue": row["max_queue_packets"],
        "unit": "packets",
    }


def real_run(network: str, cc: str, k: int, nbytes: int, out: Path) -> dict:
    from atmsim.emulate import emulate

    scenario, overrides, port = NETWORKS[network]
    load = load_average()
    run_dir = out / f"{network}-{cc}-{k}"
    done = emulate(
        scenario,
        nbytes=nbytes,
        cc=cc,
        overrides=overrides + probes(port),
        out=run_dir,
        seed=k,
    )
    summary = done.result.summary
    flow = done.report["flows"][0]
    late = done.report["lateness"]
    ext = flow["tcp_ext"]
    return {
        "network": network,
        "tcp": f"Linux {cc}",
        "run": k,
        "ok": flow["ok"] and summary["conservation"]["ok"],
        "goodput_mbps": flow["goodput_mbps"],
        "seconds": flow["seconds"],
        "retransmitted_segments": flow["retransmissions"],
        "timeouts": ext.get("TCPTimeouts"),
        "recoveries": ext.get("TCPSackRecovery", 0) + ext.get("TCPRenoRecovery", 0),
        "loss_probes": ext.get("TCPLossProbes"),
        "lost_retransmissions": ext.get("TCPLostRetransmit"),
        "hystart_exits": ext.get("TCPHystartTrainDetect", 0) + ext.get("TCPHystartDelayDetect", 0),
        "lost_segments": lost_segments(summary),
        "acks_per_segment": acks_per_segment(summary),
        "rtt_ms": median_rtt_ms(run_dir),
        **bottleneck_row(summary, port),
        "acks_rewritten": flow["acks_rewritten"],
        "late_p99_ms": late["p99_s"] * 1e3,
        "late_max_ms": late["max_s"] * 1e3,
        "later_than_1ms": late["later_than_bound"],
        "datagrams": late["datagrams"],
        "load": load,
        "dir": str(run_dir),
    }


def model_run(network: str, model: str, nbytes: int, out: Path) -> dict:
    import atmsim

    scenario, overrides, port = NETWORKS[network]
    run_dir = out / f"{network}-{model.replace(', ', '-').replace(' ', '_')}"
    settings = [f"flows.tcp1.transfer={nbytes}", f"flows.tcp1.mss={MSS}", *MODELS[model]]
    result = atmsim.run(
        scenario,
        overrides=overrides + settings + probes(port),
        out=run_dir,
        progress=False,
    )
    summary = result.summary
    flow = summary["flows"][0]
    seconds = flow["completed_at_s"]
    return {
        "network": network,
        "tcp": model,
        "run": 1,
        "ok": summary["conservation"]["ok"] and seconds is not None,
        "goodput_mbps": nbytes * 8 / seconds / 1e6 if seconds else 0.0,
        "seconds": seconds,
        "retransmitted_segments": round(flow["bytes_retransmitted"] / MSS),
        "timeouts": flow["timeouts"],
        "recoveries": flow["fast_retransmits"],
        "loss_probes": None,
        "lost_retransmissions": None,
        "hystart_exits": None,
        "lost_segments": lost_segments(summary),
        "acks_per_segment": acks_per_segment(summary),
        "rtt_ms": median_rtt_ms(run_dir, seconds),
        **bottleneck_row(summary, port),
        "dir": str(run_dir),
    }


def spread(values: list) -> str:
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    if all(isinstance(v, int) for v in values):
        low, high = min(values), max(values)
        return f"{low}" if low == high else f"{low}-{high}"
    return ", ".join(f"{v:.2f}" for v in values)


def table(rows: list[dict]) -> str:
    lines = [
        "| network | TCP | goodput (Mbps) | retransmitted | timeouts | recoveries | HyStart "
        "| segments lost | dropped at the bottleneck | its max queue | ACKs per segment "
        "| median RTT (ms) | late > 1 ms | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    order: list[tuple[str, str]] = []
    for row in rows:
        if (row["network"], row["tcp"]) not in order:
            order.append((row["network"], row["tcp"]))
    for network, tcp in order:
        group = [r for r in rows if r["network"] == network and r["tcp"] == tcp]
        unit = group[0]["unit"]
        real = tcp.startswith("Linux")
        late = (
            spread([r["later_than_1ms"] for r in group])
            + f" of {round(sum(r['datagrams'] for r in group) / len(group)):,}"
            if real
            else "-"
        )
        load = ", ".join(f"{r['load']:.1f}" for r in group) if real else "-"
        acks = ", ".join(sorted({f"{r['acks_per_segment']:.2f}" for r in group}))
        lines.append(
            f"| {network} | {tcp} | {spread([r['goodput_mbps'] for r in group])} "
            f"| {spread([r['retransmitted_segments'] for r in group])} "
            f"| {spread([r['timeouts'] for r in group])} "
            f"| {spread([r['recoveries'] for r in group])} "
            f"| {spread([r['hystart_exits'] for r in group])} "
            f"| {spread([r['lost_segments'] for r in group])} "
            f"| {spread([r['dropped'] for r in group])} {unit} "
            f"| {spread([r['max_queue'] for r in group])} {unit} "
            f"| {acks} | {spread([r['rtt_ms'] for r in group])} | {late} | {load} |"
        )
    return "\n".join(lines) + "\n"


def figure(network: str, rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    styles = {
        "Linux reno": ("tab:blue", "-"),
        "Linux cubic": ("tab:red", "-"),
        "model reno": ("tab:gray", "--"),
        "model sack, Linux-like": ("tab:green", "--"),
    }
    end = 0.0
    for tcp, (color, line) in styles.items():
        run = next((r for r in rows if r["network"] == network and r["tcp"] == tcp), None)
        if run is None:
            continue
        label = f"{tcp} (run 1)" if tcp.startswith("Linux") else tcp
        if tcp.startswith("Linux"):
            samples = pd.read_csv(Path(run["dir"]) / "tcp_info_tcp1.csv")
            # From the first sample, at the connect (its process starts and the
            # handshake takes about 60 ms of the emulation): the model's sender has no
            # handshake and sends at 0.
            t = samples["time_s"] - samples["time_s"].iloc[0]
            top.plot(t, samples["cwnd_bytes"] / 1e3, color=color, ls=line, lw=1, label=label)
            # The window in use: min(cwnd, the window the receiver offers, lowered by
            # a router's explicit-rate control), the model's window_bytes.
            used = samples[["cwnd_bytes", "snd_wnd_bytes"]].min(axis=1)
            bottom.plot(t, used / 1e3, color=color, ls=line, lw=1)
        else:
            series = pd.read_parquet(Path(run["dir"]) / "series.parquet")
            series = series[series["time_s"] <= run["seconds"] + 0.05]
            for axis, metric in ((top, "cwnd_bytes"), (bottom, "window_bytes")):
                s = series[(series["entity"] == "tcp1") & (series["metric"] == metric)]
                axis.plot(s["time_s"], s["value"] / 1e3, color=color, ls=line, lw=1, label=label)
            t = series["time_s"]
        end = max(end, float(t.max()))
    top.set_ylabel("cwnd (KB)")
    top.set_yscale("log")
    top.set_title(TITLES[network])
    top.legend(fontsize=8)
    bottom.set_ylabel("min(cwnd, offered) (KB)")
    bottom.set_xlabel("time from the first data (s)")
    for axis in (top, bottom):
        axis.set_xlim(0, end)
        axis.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--bytes", type=int, default=3_000_000)
    parser.add_argument("--out", type=Path, default=Path("runs/study_emulation"))
    parser.add_argument("--figures", type=Path, default=ROOT / "docs" / "figures")
    parser.add_argument("--network", action="append", choices=sorted(NETWORKS))
    parser.add_argument("--model-only", action="store_true")
    args = parser.parse_args()
    if args.runs < 1 or args.bytes < 1:
        print("error: --runs and --bytes must be at least 1", file=sys.stderr)
        return 2
    networks = args.network or list(NETWORKS)
    if not args.model_only:
        from atmsim.emulate import missing_privileges

        missing = missing_privileges()
        if missing:
            print(
                f"error: the real runs: atmsim emulate {missing}, or use --model-only",
                file=sys.stderr,
            )
            return 2
    args.out.mkdir(parents=True, exist_ok=True)
    args.figures.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    for network in networks:
        if not args.model_only:
            for cc in ("reno", "cubic"):
                for k in range(1, args.runs + 1):
                    row = real_run(network, cc, k, args.bytes, args.out)
                    print(
                        f"{network} Linux {cc} run {k}: {row['goodput_mbps']:.2f} Mbps, "
                        f"{row['retransmitted_segments']} retransmitted, "
                        f"{row['later_than_1ms']} of {row['datagrams']} late > 1 ms, "
                        f"load {row['load']:.2f}",
                        file=sys.stderr,
                    )
                    rows.append(row)
        for model in MODELS:
            rows.append(model_run(network, model, args.bytes, args.out))
        figure(network, rows, args.figures / f"emulation_{network}.png")
    (args.out / "results.json").write_text(json.dumps(rows, indent=1))
    text = table(rows)
    (args.out / "table.md").write_text(text)
    print(text)
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
