"""A stand-in for ``atmsim._core`` with the interface of docs/core-interface.md.

It simulates nothing: every source offers its mean rate, every cell is
delivered, every TCP flow delivers ``FLOW_GOODPUT_BPS``, and the probes report
simple made-up curves. It checks the JSON it is given against the contract
(the keys of links and flows of the "TCP and IP" section, index ranges), so a
Python-side format slip fails here too. Tests install it in
``sys.modules["atmsim._core"]`` to check the Python layer (slicing, Ctrl-C,
series decoding, files written, tables, plots) without the Rust core.
"""

from __future__ import annotations

import json

import numpy as np

EVENTS_PER_CELL = 2

FLOW_GOODPUT_BPS = 10e6
"""What every fake TCP flow delivers."""

ATM_LINK_KEYS = {
    "name",
    "from",
    "to",
    "bit_rate_bps",
    "cell_rate_cps",
    "delay_ps",
    "buffer_cells",
    "policy",
}
IP_LINK_KEYS = ATM_LINK_KEYS | {"layer", "buffer_packets", "buffer_bytes"}
FLOW_KEYS = {
    "name",
    "layer",
    "data_vc",
    "ack_vc",
    "data_links",
    "ack_links",
    "variant",
    "mss_bytes",
    "rcv_window_bytes",
    "window_scale",
    "initial_cwnd_segments",
    "initial_ssthresh_bytes",
    "timer",
    "initial_rto_ps",
    "min_rto_ps",
    "max_rto_ps",
    "delayed_ack_ps",
    "processing_ps",
    "processing_jitter_ps",
    "start_ps",
    "app_bytes",
    "max_sack_blocks",
}
"""The keys of docs/core-interface.md, section "TCP and IP"."""
VARIANTS = {"tahoe_nofr", "tahoe", "reno", "newreno", "sack"}
ABR_KEYS = [
    "pcr_cps",
    "mcr_cps",
    "icr_cps",
    "rif",
    "rdf",
    "nrm",
    "mrm",
    "trm_ps",
    "crm",
    "cdf",
    "adtf_ps",
    "tcr_cps",
]
"""The keys of an ABR VC's ``abr`` object, in the contract's order (section "ABR")."""
ALGORITHM_KEYS = {
    "erica": {
        "kind",
        "target_utilization",
        "interval_ps",
        "interval_cells",
        "delta",
        "measured_rate",
        "bidirectional_count",
    },
    "erica_plus": {
        "kind",
        "interval_ps",
        "interval_cells",
        "delta",
        "measured_rate",
        "bidirectional_count",
        "t0_ps",
        "a",
        "b",
        "qdlf",
    },
    "efci": {"kind", "high_cells", "low_cells"},
    "fmmra": {"kind", "interval_ps", "interval_cells"},
}
ABR_METRICS = ["acr_cps", "er_cps", "load_factor", "fair_share_cps", "abr_queue_cells"]


def version() -> str:
    return "fake"


def _mean_rate_cps(model: dict, first_link_cps: float) -> float:
    if model["kind"] == "greedy":
        return first_link_cps
    if model["kind"] == "geometric_onoff":
        return model["mean_cps"]
    if model["kind"] == "vbr_onoff":
        return model["peak_cps"] * model["on_ps"] / (model["on_ps"] + model["off_ps"])
    return model["rate_cps"]


class Simulation:
    """Follows the contract: advance in slices, then finish at now_ps."""

    interrupt_at_slice: int | None = None
    """If set, the advance() call with this number raises KeyboardInterrupt (as Ctrl-C would)."""

    last: Simulation | None = None
    """The most recently built simulation, for tests to inspect."""

    ledger_ok: bool = True
    """Set False to report an unbalanced conservation ledger."""

    bytes_ok: bool = True
    """Set False to report an unbalanced byte ledger (flows only)."""

    def __init__(self, core_json: str) -> None:
        Simulation.last = self
        self.model = json.loads(core_json)
        for key in ("duration_ps", "seed", "nodes", "links", "vcs", "sources", "probes"):
            if key not in self.model:
                raise ValueError(f"missing {key}")
        self._check_contract()
        self.now_ps = 0
        self.events = 0
        self.calls = 0

    def _check_contract(self) -> None:
        links = self.model["links"]
        for i, link in enumerate(links):
            keys = IP_LINK_KEYS if link.get("layer", "atm") == "ip" else ATM_LINK_KEYS
            given = set(link) - {"algorithm"}
            if given != keys and given != keys | {"layer"}:
                raise ValueError(f"links[{i}]: keys {sorted(given ^ keys)} differ")
            if "algorithm" in link:
                algorithm = link["algorithm"]
                if link.get("layer") == "ip" or set(algorithm) != ALGORITHM_KEYS.get(
                    algorithm.get("kind"), set()
                ):
                    raise ValueError(f"links[{i}].algorithm: {algorithm}")
        for i, vc in enumerate(self.model["vcs"]):
            abr = vc["class"] == "abr"
            keys = {"name", "class", "links"} | ({"back_links", "abr"} if abr else set())
            if set(vc) != keys:
                raise ValueError(f"vcs[{i}]: keys {sorted(set(vc) ^ keys)} differ")
            if abr:
                if list(vc["abr"]) != ABR_KEYS:
                    raise ValueError(f"vcs[{i}].abr: keys {list(vc['abr'])}")
                forward = [links[n] for n in vc["links"]]
                back = [links[n] for n in vc["back_links"]]
                if [(b["from"], b["to"]) for b in back] != [
                    (f["to"], f["from"]) for f in reversed(forward)
                ]:
                    raise ValueError(f"vcs[{i}].back_links: must reverse the forward path")
            if link.get("layer") == "ip":
                if link["buffer_packets"] is not None and link["buffer_bytes"] is not None:
                    raise ValueError(f"links[{i}]: buffer in packets or bytes, not both")
                if link["policy"]["kind"] not in ("tail", "red"):
                    raise ValueError(f"links[{i}]: IP links take tail or red")
        n_vcs = len(self.model["vcs"])
        for i, flow in enumerate(self.model.get("flows", [])):
            if set(flow) != FLOW_KEYS:
                raise ValueError(f"flows[{i}]: keys {sorted(set(flow) ^ FLOW_KEYS)} differ")
            if flow["variant"] not in VARIANTS:
                raise ValueError(f"flows[{i}].variant: {flow['variant']}")
            if flow["layer"] == "atm":
                if not (0 <= flow["data_vc"] < n_vcs and 0 <= flow["ack_vc"] < n_vcs):
                    raise ValueError(f"flows[{i}]: VC index out of range")
            else:
                for link in flow["data_links"] + flow["ack_links"]:
                    if links[link].get("layer") != "ip":
                        raise ValueError(f"flows[{i}]: link {link} is not an IP link")
        probes = self.model["probes"]
        if any(f >= len(self.model.get("flows", [])) for f in probes.get("flows", [])):
            raise ValueError("probes.flows: index out of range")
        if any(self.model["vcs"][v]["class"] != "abr" for v in probes.get("abr_vcs", [])):
            raise ValueError("probes.abr_vcs: not an ABR VC")
        if any("algorithm" not in links[n] for n in probes.get("abr_ports", [])):
            raise ValueError("probes.abr_ports: not a port with a switch algorithm")

    def advance(self, until_ps: int) -> None:
        self.calls += 1
        if self.calls == Simulation.interrupt_at_slice:
            raise KeyboardInterrupt
        self.now_ps = min(until_ps, self.model["duration_ps"])

    def _cells(self) -> list[int]:
        seconds = self.now_ps / 1e12
        cells = []
        for source in self.model["sources"]:
            first_link = self.model["links"][self.model["vcs"][source["vc"]]["links"][0]]
            cells.append(
                int(_mean_rate_cps(source["model"], first_link["cell_rate_cps"]) * seconds)
            )
        return cells

    def _flows(self, seconds: float) -> list[dict]:
        flows = []
        for flow in self.model.get("flows", []):
            delivered = int(FLOW_GOODPUT_BPS / 8 * seconds)
            mss = flow["mss_bytes"]
            flows.append(
                {
                    "name": flow["name"],
                    "goodput_mbps": delivered * 8 / seconds / 1e6 if seconds else 0.0,
                    "bytes_delivered": delivered,
                    "bytes_sent": delivered + 2 * mss,
                    "bytes_sent_once": delivered + mss,
                    "bytes_retransmitted": mss,
                    "bytes_duplicate": mss,
                    "segments_sent": delivered // mss + 2,
                    "timeouts": 1,
                    "fast_retransmits": 0,
                    "final_cwnd_bytes": float(min(8 * mss, flow["rcv_window_bytes"])),
                    "final_ssthresh_bytes": float(4 * mss),
                    "srtt_s": 0.03,
                    "rto_s": 0.2,
                    "completed_at_s": None if flow["app_bytes"] is None else seconds / 2,
                }
            )
        return flows

    def finish(self) -> tuple[str, dict]:
        model = self.model
        cells = self._cells()
        self.events = EVENTS_PER_CELL * sum(cells)
        seconds = self.now_ps / 1e12
        per_vc = [0] * len(model["vcs"])
        for source, n in zip(model["sources"], cells):
            per_vc[source["vc"]] += n
        flows = self._flows(seconds)
        packets_on_link = [0] * len(model["links"])
        for flow, stats in zip(model.get("flows", []), flows):
            for link in flow["data_links"]:
                packets_on_link[link] += stats["segments_sent"]
        ports = []
        for index, link in enumerate(model["links"]):
            n = sum(per_vc[v] for v, vc in enumerate(model["vcs"]) if index in vc["links"])
            utilization = n / (link["cell_rate_cps"] * seconds) if seconds and n else 0.0
            port = {
                "name": link["name"],
                "cells_in": n,
                "cells_out": n,
                "cells_dropped": 0,
                "drops": {"tail": 0, "intelligent_tail": 0, "ppd": 0, "epd": 0},
                "clr": 0.0,
                "max_queue_cells": 0,
                "mean_queue_cells": 0.0,
                "utilization": utilization,
            }
            if "flows" in model:
                packets = packets_on_link[index]
                port.update(
                    {
                        "packets_in": packets,
                        "packets_out": packets - 1 if packets else 0,
                        "packets_dropped": 1 if packets else 0,
                        "max_queue_packets": 7 if packets else 0,
                        "mean_queue_packets": 2.5 if packets else 0.0,
                    }
                )
                if link.get("layer") == "ip" and packets and seconds:
                    port["utilization"] = 0.5
            ports.append(port)
        vcs = [
            {
                "name": vc["name"],
                "cells_sent": n,
                "cells_delivered": n,
                "frames_sent": n,
                "frames_delivered": n,
                "frames_corrupted": 0,
                "frames_merged": 0,
                "cells_discarded_aal5": 0,
                "frame_goodput_cps": n / seconds if seconds else 0.0,
            }
            for vc, n in zip(model["vcs"], per_vc)
        ]
        for vc, entry in zip(model["vcs"], vcs):
            if vc["class"] == "abr":  # ACR at half the PCR, a few RM cells
                entry["abr"] = {
                    "acr_cps": vc["abr"]["pcr_cps"] / 2,
                    "last_er_cps": vc["abr"]["pcr_cps"] / 2,
                    "frms_sent": entry["cells_sent"] // 32,
                    "brms_received": entry["cells_sent"] // 32,
                    "rule6_cuts": 1,
                    "source_queue_cells": 0,
                }
        conservation = {
            "ok": Simulation.ledger_ok,
            "cells_generated": sum(cells),
            "cells_delivered": sum(cells) if Simulation.ledger_ok else sum(cells) - 1,
            "cells_dropped": 0,
            "cells_queued": 0,
            "cells_on_links": 0,
        }
        summary = {
            "sim_time_s": seconds,
            "events": self.events,
            "seed": model["seed"],
            "completed": self.now_ps >= model["duration_ps"],
            "ports": ports,
            "vcs": vcs,
            "conservation": conservation,
        }
        if "flows" in model:
            summary["flows"] = flows
            segments = sum(flow["segments_sent"] for flow in flows)
            conservation["packets"] = {
                "ok": True,
                "generated": segments,
                "delivered": segments - len(flows),
                "dropped": len(flows),
                "queued": 0,
                "on_links": 0,
            }
            sent = sum(flow["bytes_sent"] for flow in flows)
            duplicates = sum(flow["bytes_duplicate"] for flow in flows)
            conservation["bytes"] = {
                "ok": Simulation.bytes_ok,
                "sent": sent,
                "sent_once": sum(flow["bytes_sent_once"] for flow in flows),
                "retransmitted": sum(flow["bytes_retransmitted"] for flow in flows),
                "delivered": sum(flow["bytes_delivered"] for flow in flows),
                "dropped_in_network": 0,
                "dropped_aal5": 0,
                "duplicates": duplicates,
                "held_out_of_order": 0 if Simulation.bytes_ok else 1,
                "in_path": sent - duplicates - sum(flow["bytes_delivered"] for flow in flows),
            }
            conservation["ok"] = Simulation.ledger_ok and Simulation.bytes_ok
        return json.dumps(summary), self._series()

    def _series(self) -> dict:
        """Queue, utilization and VC rate: constants 1, 2, 3; per flow made-up TCP curves:
        cwnd a sawtooth, window = min(cwnd, advertised), seq = goodput x t, srtt 0 at the
        first sample then 30 ms; IP queues 4 packets; ABR VCs: ACR and ER = PCR / 2;
        ABR ports: load factor infinite at the first sample then 11, fair share 12,
        ER written 10, ABR queue 13."""
        model = self.model
        probes = model["probes"]
        links = model["links"]
        metric_names = [
            "queue_cells",
            "utilization",
            "vc_rate_cps",
            "cwnd_bytes",
            "window_bytes",
            "seq_bytes",
            "srtt_s",
            "ip_queue_packets",
            *ABR_METRICS,
        ]
        entity_names: list[str] = []
        rows = []  # (time_s, entity, metric, value)
        flows = model.get("flows", [])

        def flow_value(metric: int, flow: dict, t: float, first: bool) -> float:
            mss, rwnd = flow["mss_bytes"], flow["rcv_window_bytes"]
            cwnd = mss * (1 + (int(t * 100) % 40))
            if metric == 3:
                return float(cwnd)
            if metric == 4:
                return float(min(cwnd, rwnd))
            if metric == 5:
                return FLOW_GOODPUT_BPS / 8 * t
            return 0.0 if first else 0.03

        wanted = [
            (0, [links[i]["name"] for i in probes.get("queue", []) if "layer" not in links[i]]),
            (1, [links[i]["name"] for i in probes.get("utilization", [])]),
            (2, [model["vcs"][i]["name"] for i in probes.get("vc_rate", [])]),
            *[(m, [flows[i]["name"] for i in probes.get("flows", [])]) for m in (3, 4, 5, 6)],
            (7, [links[i]["name"] for i in probes.get("queue", []) if "layer" in links[i]]),
            *[(m, [model["vcs"][i]["name"] for i in probes.get("abr_vcs", [])]) for m in (8, 9)],
            *[
                (m, [links[i]["name"] for i in probes.get("abr_ports", [])])
                for m in (10, 11, 9, 12)
            ],
        ]
        pcr = {vc["name"]: vc["abr"]["pcr_cps"] for vc in model["vcs"] if vc["class"] == "abr"}
        by_name = {flow["name"]: flow for flow in flows}
        period = probes.get("period_ps", 0)
        for metric, names in wanted:
            for name in names:
                if name not in entity_names:
                    entity_names.append(name)
                t = period
                while period and t <= self.now_ps:
                    if 3 <= metric <= 6:
                        value = flow_value(metric, by_name[name], t / 1e12, t == period)
                    elif metric in (8, 9) and name in pcr:  # ACR and ER of a VC: PCR / 2
                        value = pcr[name] / 2
                    elif metric == 10 and t == period:  # z over an interval without input
                        value = float("inf")
                    else:
                        value = float(metric + 1)
                    rows.append((t / 1e12, entity_names.index(name), metric, value))
                    t += period
        columns = list(zip(*rows)) if rows else [[], [], [], []]
        return {
            "time_s": np.asarray(columns[0], dtype="<f8").tobytes(),
            "entity": np.asarray(columns[1], dtype="<u4").tobytes(),
            "metric": np.asarray(columns[2], dtype="u1").tobytes(),
            "value": np.asarray(columns[3], dtype="<f8").tobytes(),
            "entity_names": entity_names,
            "metric_names": metric_names,
        }
