"""A stand-in for ``atmsim._core`` with the interface of docs/core-interface.md.

It simulates nothing: every source offers its mean rate, every cell is
delivered, and the probes report constant values. Tests install it in
``sys.modules["atmsim._core"]`` to check the Python layer (slicing, Ctrl-C,
series decoding, files written) without the Rust core.
"""

from __future__ import annotations

import json

import numpy as np

EVENTS_PER_CELL = 2


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

    def __init__(self, core_json: str) -> None:
        Simulation.last = self
        self.model = json.loads(core_json)
        for key in ("duration_ps", "seed", "nodes", "links", "vcs", "sources", "probes"):
            if key not in self.model:
                raise ValueError(f"missing {key}")
        self.now_ps = 0
        self.events = 0
        self.calls = 0

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

    def finish(self) -> tuple[str, dict]:
        model = self.model
        cells = self._cells()
        self.events = EVENTS_PER_CELL * sum(cells)
        seconds = self.now_ps / 1e12
        per_vc = [0] * len(model["vcs"])
        for source, n in zip(model["sources"], cells):
            per_vc[source["vc"]] += n
        ports = []
        for index, link in enumerate(model["links"]):
            n = sum(per_vc[v] for v, vc in enumerate(model["vcs"]) if index in vc["links"])
            utilization = n / (link["cell_rate_cps"] * seconds) if seconds else 0.0
            ports.append(
                {
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
            )
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
        summary = {
            "sim_time_s": seconds,
            "events": self.events,
            "seed": model["seed"],
            "completed": self.now_ps >= model["duration_ps"],
            "ports": ports,
            "vcs": vcs,
            "conservation": {
                "ok": Simulation.ledger_ok,
                "cells_generated": sum(cells),
                "cells_delivered": sum(cells) if Simulation.ledger_ok else sum(cells) - 1,
                "cells_dropped": 0,
                "cells_queued": 0,
                "cells_on_links": 0,
            },
        }
        return json.dumps(summary), self._series(ports)

    def _series(self, ports: list[dict]) -> dict:
        probes = self.model["probes"]
        metric_names = ["queue_cells", "utilization", "vc_rate_cps"]
        entity_names: list[str] = []
        rows = []  # (time_s, entity, metric, value)
        wanted = [
            (0, [self.model["links"][i]["name"] for i in probes.get("queue", [])]),
            (1, [self.model["links"][i]["name"] for i in probes.get("utilization", [])]),
            (2, [self.model["vcs"][i]["name"] for i in probes.get("vc_rate", [])]),
        ]
        period = probes.get("period_ps", 0)
        for metric, names in wanted:
            for name in names:
                if name not in entity_names:
                    entity_names.append(name)
                t = period
                while period and t <= self.now_ps:
                    rows.append((t / 1e12, entity_names.index(name), metric, float(metric + 1)))
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
