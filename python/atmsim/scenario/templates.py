"""Named topology templates: the papers' reference configurations from a few parameters.

A scenario file may hold a ``[template]`` table::

    [template]
    kind = "n-source-vbr"
    n = 5
    tbe = 128
    buffer = 1280

It expands into the general form (``[run]``, ``[nodes]``, ``[links]``,
``[sources]``, ``[flows]``, ``[probes]``); every other table of the file is
then merged on top of that expansion (``merge_tables``), so anything can be
overridden. One function per template returns the TOML-shaped dict; one
parameter model per template lists its parameters and their defaults.

Every default below is either given by a paper (the comment names the paper and
section) or is **our choice** (the comment says why). docs/scenarios.md lists
them all. Kinds:

- ``n-source-vbr`` (TCP over ABR's (Kalyanaraman et al., 1996) section 6, Figure 3): n TCP sources
  over ABR s1..sN -> sw1 -> sw2 -> d1..dN, optional VBR on/off background;
- ``n-source`` (ABR and UBR buffering (Kalyanaraman et al., 1998), Figure 5, Tables 1-4): the same
  without VBR;
- ``fmmra-lan`` (TCP over FMMRA's (An et al., 1998) section 4, Fig. 2, section 4.1): the LAN version
  with MSS 9180, 64 KB windows and a 100 Mbps VBR source from 300 ms;
- ``gfc2``: the Generic Fairness Configuration 2 (ATM Forum 94-0557, scaled as
  Explicit rate control of TCP (Satyavolu et al., 1998) uses it), a chain of 7 switches with 22
  greedy ABR sources in 8 groups;
- ``gfr-backbone`` (GFR buffer management's (Goyal et al., 1998) section 4): GFR VCs from local
  switches through two backbone switches, each VC carrying n SACK TCP connections;
- ``hetero-rtt`` (Explicit rate control of TCP's section 6.1): three groups of TCP connections with
  different round-trip times through one router bottleneck, with or without
  explicit-rate control of their windows;
- ``gfc2-ip`` (Explicit rate control of TCP's section 6.2): GFC-2 at packet level, one TCP
  connection per member, with or without explicit-rate control at every chain router.
"""

# No `from __future__ import annotations` here, as in the table models: pydantic would
# then parse and evaluate each field's annotation string when the classes are built
# (about half of this module's import time). Annotations that name a class defined
# further down are written as strings.

import copy
from typing import Any, Callable, Literal, Optional, Union

from pydantic import ConfigDict, ValidationError, model_validator

from ..errors import ScenarioError, from_validation_error, show_value
from ..units import parse_cell_rate_cps, parse_time_ps
from .common import _fail
from .limits import MAX_COUNT, MAX_LINK_KM, MIN_SOURCE_CPS
from .limits import number as number_in
from .models import (
    Count,
    Crm,
    Duration,
    EfciHigh,
    EfciLow,
    Interval,
    IntervalCells,
    Link,
    Mss,
    PositiveTime,
    ProbePeriod,
    StartTime,
    Table,
    UnitFraction,
    UnitInterval,
)
from .models.ports import _check_window_rule
from .quantities import Buffer, Size, Timer, WindowScale

Km = number_in(0, MAX_LINK_KM, unit="km")
"""A link length in km: 0 to 2e8 (a propagation delay of at most 1000 s)."""

OC3 = "155.52 Mbps"
"""The papers' link rate (TCP over ABR's section 6, the ABR and UBR buffering paper; the TCP over
FMMRA paper writes "155 Mbps")."""

# --- the parameters shared by the templates ----------------------------------------------

Algorithm = Literal["erica", "erica_plus", "fmmra", "efci", "none"]


class _Template(Table):
    """The base of the templates' parameter tables. Their validators are built when a
    file first names a template, not when every command's start-up imports this module
    (through ``atmsim.scenario.load``): few files use a template."""

    model_config = ConfigDict(defer_build=True)


class _Switch(_Template):
    """Parameters of the switch algorithm at the bottleneck port(s)."""

    algorithm: Algorithm = "erica"
    """The bottleneck's ABR switch algorithm; "none": the TCP VCs are UBR (no ABR at all)."""
    erica_variant: Literal["max_min", "basic"] = "max_min"
    """ERICA's variant (docs/model.md, "ABR"): "max_min", the ERICA description's version
    with its max-min fairness enhancement (TCP over ABR (Kalyanaraman et al., 1996) and ABR and UBR
    buffering (Kalyanaraman et al., 1998)), or "basic", TCP over ABR section 3.2's ER =
    max(FairShare, VCShare) (the TCP over FMMRA paper, which describes that scheme and its
    limits)."""
    interval: Interval = "1 ms"
    """ERICA, ERICA+, FMMRA averaging interval: TCP over ABR's section 5 ("100 cells or 1 ms,
    whichever is smaller"), the ABR and UBR buffering paper ("(1 ms, 100 cells)")."""
    interval_cells: IntervalCells = 100
    """TCP over ABR's section 5, the ABR and UBR buffering paper."""
    target_utilization: UnitFraction = 0.9
    """ERICA's U: 90 % in TCP over ABR's section 5, ABR and UBR buffering and TCP over FMMRA's
    section 4.1."""
    efci_high: EfciHigh = 300
    """EFCI: ABR queue (cells) above which data cells are marked. Our choice (the TCP over FMMRA
    paper names a "High Queue length Threshold" without its value): 20 % of TCP over FMMRA's
    1500-cell limited buffer, about 1.5 segments of MSS 9180 (193 cells each), so the
    binary feedback starts well before that buffer fills."""
    efci_low: Optional[EfciLow] = None
    """EFCI: the queue below which marking stops; default efci_high (no hysteresis, our
    choice: the paper gives one threshold)."""

    @classmethod
    def allowed_keys(cls, data: dict) -> list[str]:
        """The parameters in the order they are written: kind, the template's own ones,
        then those of the switch algorithm."""
        switch = list(_Switch.model_fields)
        own = [key for key in cls.model_fields if key not in switch and key != "kind"]
        first = [key for key in ("n", "vbr", "vbr_period") if key in own]
        return ["kind", *first, *[key for key in own if key not in first], *switch]

    @model_validator(mode="after")
    def _efci(self) -> "_Switch":
        if self.efci_low is None:
            self.efci_low = self.efci_high
        elif self.efci_low > self.efci_high:
            raise _fail("efci_low", f"must be <= efci_high ({self.efci_high}), got {self.efci_low}")
        return self

    def check_efci_buffer(self, buffer: Any) -> None:
        """EFCI's threshold must sit below a finite buffer, or it would never act."""
        if self.algorithm == "efci" and buffer != "inf" and self.efci_high >= buffer:
            raise _fail(
                "efci_high", f"must be below the buffer ({buffer} cells), got {self.efci_high}"
            )

    def algorithm_table(self) -> Optional[dict]:
        """The ``algorithm`` table of the bottleneck link(s), or None."""
        kind = self.algorithm
        if kind == "none":
            return None
        if kind == "efci":
            return {"kind": "efci", "high": self.efci_high, "low": self.efci_low}
        table: dict[str, Any] = {"kind": kind}
        if kind == "erica":
            table["variant"] = self.erica_variant
            table["target_utilization"] = self.target_utilization
            if self.erica_variant == "basic":
                # The algorithm as first proposed (TCP over ABR's section 3.2, which the TCP over
                # FMMRA paper describes) counts the VCs whose cells arrive; counting them by their
                # backward RM cells came later (docs/model.md, "ABR").
                table["bidirectional_count"] = False
        table["interval"] = self.interval
        table["interval_cells"] = self.interval_cells
        return table

    def ses_factors(self) -> dict:
        """RIF and RDF for the algorithm (TCP over FMMRA's section 4.1): ERICA and FMMRA (and
        ERICA+, our choice: another explicit-rate scheme) RIF 1, RDF 1/512, as in
        TCP over ABR's section 5 too; EFCI (binary feedback) RIF 0.1, RDF 1/16."""
        if self.algorithm == "efci":
            return {"rif": 0.1, "rdf": "1/16"}
        return {"rif": 1, "rdf": "1/512"}


def _km(length: float) -> str:
    """A length for a link table: "1000 km" (every digit kept: "1234567.5 km", not
    "1.23457e+06 km")."""
    text = f"{length:g}"
    return f"{text if float(text) == length else repr(length)} km"


def _check_port(buffer: Any, policy: Any) -> None:
    """Check a template's buffer and policy as a link would (errors at template.<key>)."""
    try:
        Link.model_validate(
            {"from": "a", "to": "b", "rate": OC3, "buffer": buffer, "policy": policy}
        )
    except ValidationError as validation_error:
        error = from_validation_error(validation_error, None)
        raise _fail(error.key or "policy", error.message) from None


# --- n-source-vbr and n-source (TCP over ABR; ABR and UBR buffering) ----------------------------


class NSource(_Switch):
    """``kind = "n-source"`` (the ABR and UBR buffering paper, Figure 5): n ABR TCP sources s1..sN
    -> sw1 -> sw2 -> d1..dN, one bottleneck (sw1 -> sw2), every link 155.52 Mbps, duplex.
    RTT = 2 x 5 us x (access + bottleneck + exit km); feedback delay from sw1 =
    2 x 5 us x access km (ABR and UBR buffering's Tables 2 and 4)."""

    kind: Literal["n-source"]
    n: Count = 5
    """ABR and UBR buffering's Table 1 starts at 5 sources (and goes to 10 and 15; Tables 2-4 use
    15)."""
    access_km: Km = 1000.0
    """s{i} -> sw1. 1000 km: ABR and UBR buffering's Table 1 (RTT 30 ms, feedback delay 10 ms)."""
    bottleneck_km: Km = 1000.0
    """sw1 -> sw2 (the ABR and UBR buffering paper)."""
    exit_km: Km = 1000.0
    """sw2 -> d{i} (the ABR and UBR buffering paper)."""
    tbe: Crm = 512
    """Transient buffer exposure, cells. The ABR and UBR buffering paper uses "default values [5]"
    that it does not list: its scenario files set TM 4.0's defaults (TBE 16,777,215 and ICR, RIF,
    RDF, CDF in ``[flows."tcp{i}".abr]``); the template keeps TCP over ABR's 512."""
    buffer: Buffer = "inf"
    """Cells at the sw1 -> sw2 port: the ABR and UBR buffering paper gives the buffers enough room
    for zero loss and reports the maximum queue."""
    policy: Union[str, dict] = "tail"
    """Drop policy at sw1 -> sw2 (any link policy); TCP over ABR (Kalyanaraman et al., 1996) and ABR
    and UBR buffering (Kalyanaraman et al., 1998): tail drop."""
    mss: Mss = 512
    """The ABR and UBR buffering paper ("TCP and ABR options"), TCP over ABR's section 4."""
    window: Size = "1024 KB"
    """16 x 64 KB = 1024 KB with window scaling (the ABR and UBR buffering paper, TCP over ABR's
    section 4)."""
    window_scale: WindowScale = 4
    """RFC 1323 shift: 16 x 64 KB is a 16-bit window scaled by 2^4 (TCP over ABR's section 4)."""
    duration: Duration = "2 s"
    """Our choice: TCP over ABR's figures run to 2 s (section 11 cites events at 1.9 s);
    ABR and UBR buffering's queues peak within the first few round trips."""
    period: ProbePeriod = "1 ms"
    """Probe period. Our choice: the ERICA averaging interval, fine enough for 30 ms RTTs."""

    @model_validator(mode="after")
    def _port(self) -> "NSource":
        _check_port(self.buffer, self.policy)
        self.check_efci_buffer(self.buffer)
        return self

    def vbr_source(self) -> Optional[dict]:
        """The VBR background's parameters, or None (n-source has none)."""
        return None


class NSourceVbr(NSource):
    """``kind = "n-source-vbr"`` (TCP over ABR's section 6, Figure 3): n-source with an
    optional VBR on/off source from its own host through the bottleneck."""

    kind: Literal["n-source-vbr"]  # type: ignore[assignment]
    n: Count = 2
    """TCP over ABR's sections 8-10 use n = 2 and n = 5."""
    vbr: bool = True
    """TCP over ABR's section 10: the VBR background is on (sections 8-9: off)."""
    tbe: Crm = 512
    """TCP over ABR's section 5: 128 or 512."""
    buffer: Buffer = "inf"
    """Cells at sw1 -> sw2. TCP over ABR's Table 1: TBE x n x {1, 2, 4} (e.g. 2048 for n = 2,
    TBE 512); "inf" is section 8's peak-throughput case. (Lengths: TCP over ABR's section 6,
    all links 1000 km.)"""

    def algorithm_table(self) -> Optional[dict]:
        """ERICA without bidirectional counting: the TCP over ABR paper ran the basic algorithm
        "enhanced ... to reduce spiking effects due to transient overloads" (section
        3.2), the one enhancement it names; the counting of bursty sources came with
        the group's TCP buffer study ("Buffer Requirements for TCP over ABR", ATM Forum
        96-0517), ABR and UBR buffering's forerunner (docs/model.md, "ABR")."""
        table = super().algorithm_table()
        if table is not None and table["kind"] in ("erica", "erica_plus"):
            table["bidirectional_count"] = False
        return table

    def vbr_source(self) -> Optional[dict]:
        if not self.vbr:
            return None
        return {
            "peak": "124.41 Mbps",  # TCP over ABR's section 6: 80 % of the link rate
            "on": "100 ms",  # TCP over ABR's section 6
            "off": "100 ms",
            "start": "2 ms",  # TCP over ABR's section 6: "starts at t = 2 ms"
            "access_km": self.access_km,  # the TCP over ABR paper: all links 1000 km
            "exit_km": self.exit_km,
        }


def n_source(params: NSource) -> dict:
    """The n-source (and n-source-vbr) configuration as a TOML-shaped dict."""
    abr_on = params.algorithm != "none"
    flow: dict[str, Any] = {
        "class": "abr" if abr_on else "ubr",
        # TCP over ABR's section 4, and ABR and UBR buffering: no fast retransmit
        "variant": "tahoe-nofr",
        "mss": params.mss,
        "window": params.window,
        "window_scale": params.window_scale,
        "timer": "100 ms",  # TCP over ABR's section 4: timer granularity 100 ms
        # The rest of the timer is BSD's, whose tick that granularity is: 4.4BSD's RTO
        # arithmetic (Stevens and Wright, "TCP/IP Illustrated, Volume 2", section 25.10),
        # with its 2-tick minimum (docs/reproduction.md, "Sensitivity to the unstated
        # parameters": TCP over ABR section 9's timeout 300 ms after the last ACK).
        "rtt_arithmetic": "bsd",
        "delayed_ack": "0 ms",  # TCP over ABR's section 4: delayed ACK disabled
        "processing": "0 us",  # TCP over ABR's section 4: processing time 0
    }
    if abr_on:
        flow["abr"] = {
            # TCP over ABR's section 5 (the ABR and UBR buffering paper: "default values"; see the
            # tbe parameter)
            "pcr": OC3,
            "mcr": "0 Mbps",
            "icr": "10 Mbps",
            **params.ses_factors(),
            "cdf": 0.5,
            "nrm": 32,
            "mrm": 2,
            "trm": "100 ms",
            "tbe": params.tbe,
            "adtf": "500 ms",
            "tcr": "10 cells/s",
        }
    return _dumbbell(params, params.bottleneck_km, flow, params.vbr_source())


def _dumbbell(
    params: Union[NSource, "FmmraLan"], bottleneck_km: float, flow: dict, vbr: Optional[dict]
) -> dict:
    """s{i} -> sw1 -> sw2 -> d{i} (duplex, 155.52 Mbps), TCP flows tcp{i}, and an optional
    VBR source "vbr" from host vbr-src through sw1 -> sw2 to host vbr-dst. ``params``
    gives n, the access and exit lengths, the bottleneck's buffer, policy and algorithm,
    the duration and the probe period."""
    nodes: dict[str, Any] = {
        "s{i}": {"kind": "host", "count": params.n},
        "sw1": {"kind": "switch"},
        "sw2": {"kind": "switch"},
        "d{i}": {"kind": "host", "count": params.n},
    }
    links: dict[str, Any] = {
        "s{i}-sw1": {
            "count": params.n,
            "from": "s{i}",
            "to": "sw1",
            "rate": OC3,
            "length": _km(params.access_km),
            "duplex": True,
        },
    }
    bottleneck: dict[str, Any] = {
        "from": "sw1",
        "to": "sw2",
        "rate": OC3,
        "length": _km(bottleneck_km),
        "buffer": params.buffer,
        "policy": copy.deepcopy(params.policy),
        # The reverse direction (sw2 -> sw1, the ACK VCs) gets the same buffer, policy and
        # algorithm: duplex copies them.
        "duplex": True,
    }
    algorithm = params.algorithm_table()
    if algorithm is not None:
        bottleneck["algorithm"] = algorithm
    sources: dict[str, Any] = {}
    if vbr is not None:
        nodes["vbr-src"] = {"kind": "host"}
        nodes["vbr-dst"] = {"kind": "host"}
        links["vbr-src-sw1"] = {
            "from": "vbr-src",
            "to": "sw1",
            "rate": OC3,
            "length": _km(vbr["access_km"]),
        }
    links["sw1-sw2"] = bottleneck
    links["sw2-d{i}"] = {
        "count": params.n,
        "from": "sw2",
        "to": "d{i}",
        "rate": OC3,
        "length": _km(params.exit_km),
        "duplex": True,
    }
    if vbr is not None:
        links["sw2-vbr-dst"] = {
            "from": "sw2",
            "to": "vbr-dst",
            "rate": OC3,
            "length": _km(vbr["exit_km"]),
        }
        sources["vbr"] = {
            "kind": "vbr_onoff",
            "path": ["vbr-src", "sw1", "sw2", "vbr-dst"],
            "class": "vbr",  # VBR has priority over ABR at every port
            "peak": vbr["peak"],
            "on": vbr["on"],
            "off": vbr["off"],
            "distribution": "fixed",
            "start": vbr["start"],
        }
    scenario: dict[str, Any] = {
        "run": {"duration": params.duration},
        "nodes": nodes,
        "links": links,
        "sources": sources,
        "flows": {"tcp{i}": {"count": params.n, "path": ["s{i}", "sw1", "sw2", "d{i}"], **flow}},
        "probes": {
            "period": params.period,
            "queue": ["sw1-sw2"],
            "utilization": ["sw1-sw2"],
            "flows": "all",
            "abr_vcs": "all",  # data VCs tcp{i} and ACK VCs tcp{i}-ack (dashed in acr.png)
            "abr_ports": "all",  # sw1-sw2 and sw1-sw2-rev
        },
    }
    return scenario


# --- fmmra-lan (the TCP over FMMRA paper) ---------------------------------------------------------


class FmmraLan(_Switch):
    """``kind = "fmmra-lan"`` (TCP over FMMRA's section 4, Fig. 2, section 4.1): n TCP sources
    and one VBR source over a 1 km backbone sw1 -> sw2; all links 155.52 Mbps, duplex."""

    kind: Literal["fmmra-lan"]
    n: Count = 2
    """The TCP over FMMRA paper presents N = 2 and 5 (and 10 in Figs. 18-19)."""
    algorithm: Algorithm = "erica"
    """The TCP over FMMRA paper compares "erica" (U 0.9), "fmmra" and "efci"."""
    backbone_km: Km = 1.0
    """TCP over FMMRA's section 4: the backbone is 1 km (a LAN)."""
    access_km: Km = 1.0
    """Our choice (the TCP over FMMRA paper does not give them): 1 km like the backbone, a LAN."""
    exit_km: Km = 1.0
    """Our choice, as access_km."""
    vbr: bool = True
    """The TCP over FMMRA paper always runs the VBR background."""
    vbr_period: PositiveTime = "100 ms"
    """VBR on time = off time: the TCP over FMMRA paper uses 10 ms and 100 ms (Figs. 12-14: 100
    ms)."""
    buffer: Buffer = "inf"
    """Cells at sw1 -> sw2: the TCP over FMMRA paper runs unlimited buffers and a limited 1500
    cells."""
    policy: Union[str, dict] = "tail"
    """Our choice: tail drop (the TCP over FMMRA paper does not name a drop policy)."""
    duration: Duration = "1 s"
    """Our choice (the TCP over FMMRA paper gives no length): 0.3 s before the VBR starts, then 3.5
    on/off cycles of 100 ms (35 of 10 ms)."""
    period: ProbePeriod = "1 ms"
    """Probe period, our choice: 1/10 of the shortest VBR on time."""

    @model_validator(mode="after")
    def _port(self) -> "FmmraLan":
        _check_port(self.buffer, self.policy)
        self.check_efci_buffer(self.buffer)
        return self


def _seed003_abr(params: _Switch) -> dict:
    """TCP over FMMRA's ABR source parameters (fmmra-lan; gfc2 too: the GFC-2 definition gives
    none)."""
    return {
        "pcr": OC3,  # the TCP over FMMRA paper: "155 Mbits"
        "mcr": "0 Mbps",
        "icr": "10 Mbps",
        **params.ses_factors(),  # TCP over FMMRA's section 4.1, per algorithm
        "cdf": 0.5,
        "nrm": 32,
        "mrm": 2,
        "trm": "100 ms",
        "crm": 20,  # the TCP over FMMRA paper: CRM = TBE / Nrm = 20
        "adtf": "500 ms",  # the TCP over FMMRA paper is silent: TM 4.0's default
        "tcr": "10 cells/s",  # the TCP over FMMRA paper: 0.00424 Mbit/s = 10 cells/s
    }


def fmmra_lan(params: FmmraLan) -> dict:
    """TCP over FMMRA's LAN configuration as a TOML-shaped dict."""
    abr_on = params.algorithm != "none"
    flow: dict[str, Any] = {
        "class": "abr" if abr_on else "ubr",
        "variant": "tahoe-nofr",  # TCP over FMMRA's section 4.1: no fast retransmit and recovery
        "mss": 9180,  # TCP over FMMRA's section 4.1
        "window": "64 KB",  # the TCP over FMMRA paper: receive window 64 KB
        "timer": "fine",  # TCP over FMMRA's section 4: double-precision RTT, no coarse timer
        "delayed_ack": "0 ms",  # TCP over FMMRA's section 4.1
        "processing": "200 us",  # the TCP over FMMRA paper: mean packet processing time 200 us
        "processing_jitter": "50 us",  # the TCP over FMMRA paper: processing time variation 50 us
    }
    if abr_on:
        flow["abr"] = _seed003_abr(params)
    vbr = None
    if params.vbr:
        vbr = {
            "peak": "100 Mbps",  # TCP over FMMRA's section 4: 100 Mbps, 2/3 of the link
            "on": params.vbr_period,
            "off": params.vbr_period,
            "start": "300 ms",  # TCP over FMMRA's section 4
            "access_km": params.access_km,
            "exit_km": params.exit_km,
        }
    return _dumbbell(params, params.backbone_km, flow, vbr)


# --- gfc2 (ATM Forum 94-0557) ----------------------------------------------------------------

GFC2_LINKS = (
    ("sw1", "sw2", "50 Mbps"),
    ("sw2", "sw3", "100 Mbps"),
    ("sw3", "sw4", "50 Mbps"),
    ("sw4", "sw5", "150 Mbps"),
    ("sw5", "sw6", "150 Mbps"),
    ("sw6", "sw7", "50 Mbps"),
)
"""The chain: the Generic Fairness Configuration 2 of ATM Forum 94-0557, scaled as
Explicit rate control of TCP's section 6.2 uses it."""

GFC2_GROUPS = {
    "a": ((1, 6), (2, 6), (3, 6)),
    "b": ((1, 7), (2, 7), (4, 7)),
    "c": ((5, 6),) * 3,
    "d": ((1, 2),),
    "e": ((2, 3),) * 2,
    "f": ((3, 4),),
    "g": ((6, 7),) * 7,
    "h": ((4, 5),) * 2,
}
"""Group -> (entering switch, leaving switch) of each member (GFC-2)."""

GFC2_MAX_MIN_MBPS = {"a": 10, "b": 5, "c": 35, "d": 35, "e": 35, "f": 10, "g": 5, "h": 52.5}
"""The max-min fair rate of each group in GFC-2, for checking results."""


class Gfc2(_Switch):
    """``kind = "gfc2"`` (GFC-2, ATM Forum 94-0557): 7 switches in a chain, 22 greedy ABR sources
    in groups a..h, each from its own host (link ``<src>-in``) to its own sink
    (``<src>-out``)."""

    kind: Literal["gfc2"]
    algorithm: Literal["fmmra", "erica", "erica_plus", "efci"] = "fmmra"  # type: ignore[assignment]
    """At every chain link (both directions). Default FMMRA: our choice, the exact max-min
    allocator, whose rates GFC-2 is designed to check."""
    hop_km: Km = 1000.0
    """Each chain link. Our choice (the GFC-2 scaling gives no lengths): 1000 km, the WAN hop of
    TCP over ABR (Kalyanaraman et al., 1996) and ABR and UBR buffering (Kalyanaraman et al., 1998),
    so the groups' feedback delays differ (5 to 30 ms one way)."""
    access_km: Km = 1.0
    """Host -> first switch and last switch -> sink, 155.52 Mbps. Our choice: 1 km, so
    the delays come from the chain."""
    buffer: Buffer = "inf"
    """Cells at each chain link's port. Our choice: unlimited, to see the queues."""
    duration: Duration = "1 s"
    """Our choice: about 15 round trips of the longest path (b1, 6 hops: 60 ms)."""
    period: ProbePeriod = "1 ms"
    """Probe period, our choice."""

    @model_validator(mode="after")
    def _port(self) -> "Gfc2":
        _check_port(self.buffer, "tail")
        self.check_efci_buffer(self.buffer)
        return self


def gfc2(params: Gfc2) -> dict:
    """The GFC-2 chain as a TOML-shaped dict."""
    nodes: dict[str, Any] = {f"sw{k}": {"kind": "switch"} for k in range(1, 8)}
    links: dict[str, Any] = {}
    algorithm = params.algorithm_table()
    for here, there, rate in GFC2_LINKS:
        links[f"{here}-{there}"] = {
            "from": here,
            "to": there,
            "rate": rate,
            "length": _km(params.hop_km),
            "buffer": params.buffer,
            "duplex": True,  # backward RM cells return over the reverse chain
            "algorithm": copy.deepcopy(algorithm),
        }
    abr = _seed003_abr(params)  # the FMMRA paper's source parameters
    sources: dict[str, Any] = {}
    for group, members in GFC2_GROUPS.items():
        for number, (enter, leave) in enumerate(members, start=1):
            name = f"{group}{number}"
            nodes[f"{name}-src"] = {"kind": "host"}
            nodes[f"{name}-dst"] = {"kind": "host"}
            links[f"{name}-in"] = {
                "from": f"{name}-src",
                "to": f"sw{enter}",
                "rate": OC3,
                "length": _km(params.access_km),
                "duplex": True,
            }
            links[f"{name}-out"] = {
                "from": f"sw{leave}",
                "to": f"{name}-dst",
                "rate": OC3,
                "length": _km(params.access_km),
                "duplex": True,
            }
            switches = [f"sw{k}" for k in range(enter, leave + 1)]
            sources[name] = {
                "kind": "greedy",  # an infinite backlog at the SES
                "path": [f"{name}-src", *switches, f"{name}-dst"],
                "class": "abr",
                "abr": copy.deepcopy(abr),
            }
    chain = [f"{here}-{there}" for here, there, _ in GFC2_LINKS]
    return {
        "run": {"duration": params.duration},
        "nodes": nodes,
        "links": links,
        "sources": sources,
        "probes": {
            "period": params.period,
            "queue": chain,
            "utilization": chain,
            "vc_rate": "all",
            "abr_vcs": "all",
            "abr_ports": chain,  # the reverse chain carries only backward RM cells
        },
    }


# --- gfr-backbone (the GFR buffer management paper) -----------------------------------------------

SEED004_MCR_50 = (
    "12000 cells/s",
    "24000 cells/s",
    "36000 cells/s",
    "48000 cells/s",
    "60000 cells/s",
)
"""GFR buffer management's first MCR set (about 50 % of the GFR capacity). Its text says "12, 24,
36, 48 and 69 kcells/sec", but Table 1 prints the fifth MCR as 23.04 Mbps (= 60 kcells/s x 384
bits) with the weight 0.170 (= 60000 / 353207); 69 is a typo for 60."""

SEED004_MCR_85 = (
    "20000 cells/s",
    "40000 cells/s",
    "60000 cells/s",
    "80000 cells/s",
    "100000 cells/s",
)
"""GFR buffer management's second MCR set (85 % of the GFR capacity; Tables 2-5)."""


class GfrBackbone(_Template):
    """``kind = "gfr-backbone"`` (GFR buffer management's section 4): len(mcr) local switch pairs
    ``edge{i}`` -> ``exit{i}`` joined through the backbone ``bb1`` -> ``bb2``; one GFR
    VC ``vc{i}`` per pair (ACKs on the UBR VC ``vc{i}-ack``), carrying n TCP
    connections ``vc{i}-tcp{k}``. Every link 155.52 Mbps with cells in the SONET payload
    (353,207 cells/s, GFR buffer management's GFR capacity), duplex. The TCP hosts sit at the local
    switches: the edge switch multiplexes its n connections onto the VC, frame by frame."""

    kind: Literal["gfr-backbone"]
    n: Count = 10
    """TCP connections per VC: the GFR buffer management paper uses 10 (50 TCPs) and 20 (100
    TCPs)."""
    mcr: list[str] = list(SEED004_MCR_50)
    """The VCs' MCRs, one VC each (1 to 1000 VCs): GFR buffer management's 50 % set by default (see
    SEED004_MCR_50); its 85 % set is 20, 40, 60, 80, 100 kcells/s."""
    local_km: Km = 10.0
    """Each local hop (edge{i} -> bb1, bb2 -> exit{i}): GFR buffer management's x = 10 km."""
    backbone_km: Km = 1000.0
    """bb1 -> bb2: GFR buffer management's y = 1000 km."""
    buffer: Buffer = 25000
    """Cells at the bottleneck port bb1 -> bb2: GFR buffer management's 25 kcells (also 6k and
    3k)."""
    policy: Union[str, dict] = "dfba"
    """The bottleneck's policy (any ATM link policy): GFR buffer management's DFBA, its thresholds
    by default L = 0.5 x buffer, H = 0.9 x buffer (our choice, docs/model.md "GFR"), alpha 0.5
    and Z_i = 1 (GFR buffer management's section 4)."""
    tagging: bool = True
    """Tag the frames the frame-based GCRA finds above the MCR, at bb1 (our choice of where:
    the GFR service's network edge; the GFR buffer management paper drops "low priority (CLP=1)"
    frames)."""
    mfs: Optional[Count] = None
    """MFS of the VCs, cells (default 192: docs/scenarios.md, "GFR")."""
    mbs: Optional[Count] = None
    """MBS of the VCs, cells (default 2 x mfs)."""
    variant: Literal["tahoe-nofr", "tahoe", "reno", "newreno", "sack"] = "sack"
    """The GFR buffer management paper: "All TCP sources were persistent TCPs with SACK", after Fall
    and Floyd."""
    mss: Mss = 1460
    """Our choice (the GFR buffer management paper gives none): the connections come from LANs
    interconnected by ATM (GFR buffer management's section 4), so their segments are Ethernet's: MTU
    1500 bytes (RFC 894) less 40 bytes of TCP/IP headers."""
    window: Size = "64 KB"
    """Receiver window. Our choice: the largest window without RFC 1323 scaling (the GFR buffer
    management paper mentions none); 10 connections per VC hold far more than the buffer."""
    timer: Timer = "100 ms"
    """Our choice: the TCP timer of the same group's TCP over ABR (Kalyanaraman et al., 1996) and
    ABR and UBR buffering (Kalyanaraman et al., 1998), a BSD timer of 100 ms ticks (with BSD's RTO
    arithmetic, as the n-source templates; "fine" takes the real-number estimator)."""
    start_spread: StartTime = "10 ms"
    """The connections of a VC start evenly spread over this time from 0 (k-th of n at
    k x spread / n). Our choice: the GFR buffer management paper gives no start times; a spread of
    about one round trip (10.2 ms) keeps the n slow starts of a VC from being one synchronised
    burst, as independent hosts behind an edge switch would not be."""
    duration: Duration = "20 s"
    """Our choice (the GFR buffer management paper gives no run length): 200 round trips of 100 ms
    with the 25k-cell buffer full (71 ms of queueing), long enough that the first second's slow
    starts weigh 5 % of the throughput."""
    period: ProbePeriod = "10 ms"
    """Probe period, our choice: about one round trip."""

    @model_validator(mode="after")
    def _check(self) -> "GfrBackbone":
        if not 1 <= len(self.mcr) <= 1000:
            raise _fail("mcr", f"expected 1 to 1000 rates (one per VC), got {len(self.mcr)}")
        for k, rate in enumerate(self.mcr):
            try:
                cps = parse_cell_rate_cps(rate)
            except ValueError as error:
                raise _fail(f"mcr[{k}]", str(error)) from None
            if not cps >= MIN_SOURCE_CPS:
                raise _fail(f"mcr[{k}]", f"must be at least 0.001 cells/s, got {show_value(rate)}")
        if self.n * len(self.mcr) > MAX_COUNT:
            raise _fail("n", f"at most {MAX_COUNT} connections in all (n x {len(self.mcr)} VCs)")
        _check_port(self.buffer, self.policy)
        return self


def gfr_backbone(params: GfrBackbone) -> dict:
    """GFR buffer management's configuration as a TOML-shaped dict."""
    # the GFR buffer management paper: 353,207 cells/s
    line = {"rate": OC3, "sonet": True, "duplex": True}
    nodes: dict[str, Any] = {"bb1": {"kind": "switch"}, "bb2": {"kind": "switch"}}
    links: dict[str, Any] = {}
    vcs: dict[str, Any] = {}
    flows: dict[str, Any] = {}
    spread_ps = parse_time_ps(params.start_spread)
    gfr: dict[str, Any] = {"tagging": params.tagging}
    if params.mfs is not None:
        gfr["mfs"] = params.mfs
    if params.mbs is not None:
        gfr["mbs"] = params.mbs
    for i in range(1, len(params.mcr) + 1):
        nodes[f"edge{i}"] = {"kind": "switch"}
        nodes[f"exit{i}"] = {"kind": "switch"}
        links[f"edge{i}-bb1"] = {
            "from": f"edge{i}",
            "to": "bb1",
            "length": _km(params.local_km),
            **line,
        }
    links["bb1-bb2"] = {
        "from": "bb1",
        "to": "bb2",
        "length": _km(params.backbone_km),
        **line,
        "buffer": params.buffer,
        # The reverse direction (bb2 -> bb1) carries the ACK VCs: same buffer and policy.
        "policy": copy.deepcopy(params.policy),
    }
    for i, mcr in enumerate(params.mcr, start=1):
        links[f"bb2-exit{i}"] = {
            "from": "bb2",
            "to": f"exit{i}",
            "length": _km(params.local_km),
            **line,
        }
        vcs[f"vc{i}"] = {
            "path": [f"edge{i}", "bb1", "bb2", f"exit{i}"],
            "class": "gfr",
            "gfr": {"mcr": mcr, **gfr},
        }
        vcs[f"vc{i}-ack"] = {"path": [f"exit{i}", "bb2", "bb1", f"edge{i}"]}
        for k in range(1, params.n + 1):
            flows[f"vc{i}-tcp{k}"] = {
                "vc": f"vc{i}",
                "variant": params.variant,
                "mss": params.mss,
                "window": params.window,
                "timer": params.timer,
                # A coarse timer is BSD's, with BSD's RTO arithmetic (Stevens and Wright,
                # "TCP/IP Illustrated, Volume 2", section 25.10), as in the n-source
                # templates; the fine timer has only the real-number estimator.
                "rtt_arithmetic": "real" if params.timer == "fine" else "bsd",
                # our choice, as the group's TCP over ABR and ABR and UBR buffering papers
                "delayed_ack": "0 ms",
                "start": f"{(k - 1) * spread_ps // params.n} ps",
            }
    return {
        "run": {"duration": params.duration},
        "nodes": nodes,
        "links": links,
        "vcs": vcs,
        "flows": flows,
        "probes": {
            "period": params.period,
            "queue": ["bb1-bb2"],
            "utilization": ["bb1-bb2"],
            "vc_queue": ["bb1-bb2"],
            "flows": [f"vc{i}-tcp1" for i in range(1, len(params.mcr) + 1)],
        },
    }


# --- hetero-rtt and gfc2-ip (the Explicit rate control of TCP paper) ------------------------------

SEED001_TCP: dict[str, Any] = {
    "mss": 1024,  # Explicit rate control of TCP's Table 1
    # Explicit rate control of TCP: "the receiver window ... 600000" (bytes), scaled by 2^4
    "window": 600000,
    "initial_ssthresh": 600000,  # Explicit rate control of TCP's Table 1: SSThresh 600000 bytes
    # Explicit rate control of TCP's section 4: "we shall not involve ... delay ack timer"
    "delayed_ack": "0 ms",
}
"""The TCP parameters the Explicit rate control of TCP paper states (its Table 1 and section 4)."""


class _RateControlled(_Template):
    """Parameters shared by Explicit rate control of TCP's configurations: the explicit-rate control
    at the routers and the TCP the paper leaves open."""

    window_rule: str = "none"
    """How the routers write the explicit rate into the ACKs' windows: "none" (vanilla
    TCP, the Explicit rate control of TCP paper Fig. 2, unless ack_bucket), "rtt" (each flow's own
    round-trip time, Fig. 4) or a time T such as "30 ms" (Fig. 3)."""
    ack_bucket: bool = False
    """Also hold the ACKs in an ack bucket released at the flow's explicit rate (Explicit rate
    control of TCP's section 4.1; no published figure)."""
    interval: Interval = "5 ms"
    """ERICA+'s averaging interval: Explicit rate control of TCP's Table 1."""
    active_decay: UnitInterval = 0.0
    """The number of active sources: a silent flow's weight decays by this factor per
    interval. 0 (the flows seen in the interval): Explicit rate control of TCP's pseudo-code
    ("Measure number of active sources" at each interval's end) and the count of Kalyanaraman's
    dissertation without its "Averaging VCs" option, whose decay factor no source we
    could read gives (docs/model.md, "Explicit-rate control of TCP")."""
    variant: Literal["tahoe-nofr", "tahoe", "reno", "newreno", "sack"] = "reno"
    """Our choice (the Explicit rate control of TCP paper names none): Reno, the TCP of 4.4BSD-Lite
    (1994), the reference implementation when the paper was written; nothing is lost in its vanilla
    runs, so the recovery matters little."""
    timer: Timer = "100 ms"
    """Our choice (the Explicit rate control of TCP paper gives none): a BSD timer of 100 ms ticks,
    as the related papers TCP over ABR (Kalyanaraman et al., 1996) and ABR and UBR buffering
    (Kalyanaraman et al., 1998), with BSD's RTO arithmetic ("fine": the real-number estimator)."""
    buffer: Buffer = "inf"
    """Router buffers (packets). Our choice: unlimited; Explicit rate control of TCP's vanilla queue
    reaches about 8000 packets and the paper reports no loss."""
    duration: Duration = "5 s"
    """Explicit rate control of TCP's Table 1: simulation time 5 s."""
    period: ProbePeriod = "10 ms"
    """Probe period, our choice: twice the averaging interval."""

    @model_validator(mode="after")
    def _rule(self) -> "_RateControlled":
        try:
            _check_window_rule(self.window_rule)
        except ValueError as error:
            raise _fail("window_rule", str(error)) from None
        return self

    @property
    def controlled(self) -> bool:
        return self.window_rule != "none" or self.ack_bucket

    def flow(self) -> dict:
        return {
            **SEED001_TCP,
            "variant": self.variant,
            "timer": self.timer,
            "rtt_arithmetic": "real" if self.timer == "fine" else "bsd",
        }

    def rate_control(self) -> dict:
        return {"interval": self.interval, "active_decay": self.active_decay}

    def ack_control(self, rates_from: str) -> dict:
        return {
            "rates_from": rates_from,
            "window": self.window_rule,
            "ack_bucket": self.ack_bucket,
        }


class HeteroRtt(_RateControlled):
    """``kind = "hetero-rtt"`` (Explicit rate control of TCP's section 6.1, Figure 1):
    len(access_km) groups of n TCP connections from hosts ``s{k}`` over access links to router
    ``r1``, the bottleneck ``r1 -> r2``, and exit links (as long as the access links) to hosts
    ``d{k}``; IP links of 155.52 Mbps. With rate control, ``r1 -> r2`` computes the
    flows' explicit rates and ``r1`` acts on the ACKs arriving from ``r2`` (link
    ``r2-r1``)."""

    kind: Literal["hetero-rtt"]
    n: Count = 5
    """Connections per group: the Explicit rate control of TCP paper, three groups of 5."""
    access_km: list[float] = [3.0, 300.0, 3000.0]
    """Access (and exit) link of each group: Explicit rate control of TCP's 3, 300 and 3000 km
    (round trips of 2012, 3200 and 14000 km: 10, 16 and 70 ms)."""
    bottleneck_km: Km = 1000.0
    """r1 -> r2: the Explicit rate control of TCP paper, 1000 km."""

    @model_validator(mode="after")
    def _groups(self) -> "HeteroRtt":
        if not 1 <= len(self.access_km) <= 1000:
            raise _fail("access_km", f"expected 1 to 1000 lengths, got {len(self.access_km)}")
        for k, km in enumerate(self.access_km):
            if type(km) not in (int, float) or not 0 <= km <= MAX_LINK_KM:
                raise _fail(f"access_km[{k}]", f"expected 0 to 2e8 km, got {show_value(km)}")
        if self.n * len(self.access_km) > 100000:
            raise _fail("n", "at most 100000 connections in all")
        return self


def hetero_rtt(params: HeteroRtt) -> dict:
    """Explicit rate control of TCP's heterogeneous-RTT configuration as a TOML-shaped dict."""
    ip = {"layer": "ip", "rate": OC3}
    nodes: dict[str, Any] = {"r1": {"kind": "switch"}, "r2": {"kind": "switch"}}
    links: dict[str, Any] = {}
    flows: dict[str, Any] = {}
    names = []
    k = 0
    for group, km in enumerate(params.access_km, start=1):
        for _ in range(params.n):
            k += 1
            nodes[f"s{k}"] = {"kind": "host"}
            nodes[f"d{k}"] = {"kind": "host"}
            links[f"s{k}-r1"] = {
                "from": f"s{k}",
                "to": "r1",
                "length": _km(km),
                "duplex": True,
                **ip,
            }
            flows[f"tcp{k}"] = {"path": [f"s{k}", "r1", "r2", f"d{k}"], **params.flow()}
            names.append((group, f"tcp{k}"))
    bottleneck = {
        "from": "r1",
        "to": "r2",
        "length": _km(params.bottleneck_km),
        "buffer": params.buffer,
        **ip,
    }
    back = {
        "from": "r2",
        "to": "r1",
        "length": _km(params.bottleneck_km),
        "buffer": params.buffer,
        **ip,
    }
    if params.controlled:
        bottleneck["rate_control"] = params.rate_control()
        back["ack_control"] = params.ack_control("r1-r2")
    links["r1-r2"] = bottleneck
    links["r2-r1"] = back
    for k in range(1, len(names) + 1):
        km = params.access_km[(k - 1) // params.n]
        links[f"r2-d{k}"] = {"from": "r2", "to": f"d{k}", "length": _km(km), "duplex": True, **ip}
    return {
        "run": {"duration": params.duration},
        "nodes": nodes,
        "links": links,
        "flows": flows,
        "probes": {
            "period": params.period,
            "queue": ["r1-r2"],
            "utilization": ["r1-r2"],
            "flows": "all",
        },
    }


class Gfc2Ip(_RateControlled):
    """``kind = "gfc2-ip"`` (Explicit rate control of TCP's section 6.2): the GFC-2 chain of
    ``gfc2`` with IP routers ``r1``..``r7`` and one TCP connection per member of each group
    (a1..h2), each from its own host over ``<name>-in`` to its own sink over ``<name>-out``. With
    rate control, every chain link computes rates and every router acts on the ACKs arriving
    over the reverse chain link, so an ACK's window is the least allowed along its
    path."""

    kind: Literal["gfc2-ip"]
    hop_km: Km = 1000.0
    """Each chain link, as the gfc2 template (our choice: the scaled GFC-2 gives no
    lengths; the Explicit rate control of TCP paper none either)."""
    access_km: Km = 1.0
    """Host -> first router and last router -> sink (our choice, as gfc2)."""
    duration: Duration = "5 s"
    """Explicit rate control of TCP's Table 1: 5 s."""


def gfc2_ip(params: Gfc2Ip) -> dict:
    """GFC-2 at packet level as a TOML-shaped dict."""
    ip = {"layer": "ip"}
    nodes: dict[str, Any] = {f"r{k}": {"kind": "switch"} for k in range(1, 8)}
    links: dict[str, Any] = {}
    for here, there, rate in GFC2_LINKS:
        a, b = here.replace("sw", "r"), there.replace("sw", "r")
        forward = {
            "from": a,
            "to": b,
            "rate": rate,
            "length": _km(params.hop_km),
            "buffer": params.buffer,
            **ip,
        }
        backward = {
            "from": b,
            "to": a,
            "rate": rate,
            "length": _km(params.hop_km),
            "buffer": params.buffer,
            **ip,
        }
        if params.controlled:
            forward["rate_control"] = params.rate_control()
            backward["ack_control"] = params.ack_control(f"{a}-{b}")
        links[f"{a}-{b}"] = forward
        links[f"{b}-{a}"] = backward
    flows: dict[str, Any] = {}
    for group, members in GFC2_GROUPS.items():
        for number, (enter, leave) in enumerate(members, start=1):
            name = f"{group}{number}"
            nodes[f"{name}-src"] = {"kind": "host"}
            nodes[f"{name}-dst"] = {"kind": "host"}
            links[f"{name}-in"] = {
                "from": f"{name}-src",
                "to": f"r{enter}",
                "rate": OC3,
                "length": _km(params.access_km),
                "duplex": True,
                **ip,
            }
            links[f"{name}-out"] = {
                "from": f"r{leave}",
                "to": f"{name}-dst",
                "rate": OC3,
                "length": _km(params.access_km),
                "duplex": True,
                **ip,
            }
            routers = [f"r{k}" for k in range(enter, leave + 1)]
            flows[name] = {"path": [f"{name}-src", *routers, f"{name}-dst"], **params.flow()}
    chain = [f"{h.replace('sw', 'r')}-{t.replace('sw', 'r')}" for h, t, _ in GFC2_LINKS]
    return {
        "run": {"duration": params.duration},
        "nodes": nodes,
        "links": links,
        "flows": flows,
        "probes": {"period": params.period, "queue": chain, "utilization": chain, "flows": "all"},
    }


# --- expansion and merging ----------------------------------------------------------------

TEMPLATES: dict[str, tuple[type[Table], Callable[[Any], dict]]] = {
    "n-source-vbr": (NSourceVbr, n_source),
    "n-source": (NSource, n_source),
    "fmmra-lan": (FmmraLan, fmmra_lan),
    "gfc2": (Gfc2, gfc2),
    "gfr-backbone": (GfrBackbone, gfr_backbone),
    "hetero-rtt": (HeteroRtt, hetero_rtt),
    "gfc2-ip": (Gfc2Ip, gfc2_ip),
}
"""kind -> (parameter model, expansion function)."""


def merge_tables(base: dict, over: dict) -> dict:
    """``over`` merged onto ``base`` (a new dict): tables are updated key by key, at every
    depth; any other value replaces the old one. A table whose ``kind`` differs from the
    old one's (``policy``, ``algorithm``) replaces it whole."""
    merged = copy.deepcopy(base)
    for key, value in over.items():
        old = merged.get(key)
        if (
            isinstance(value, dict)
            and isinstance(old, dict)
            and not ("kind" in value and "kind" in old and value["kind"] != old["kind"])
        ):
            merged[key] = merge_tables(old, value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def template_params(table: Any, file: Optional[str]) -> Table:
    """The validated parameters of a ``[template]`` table (errors name ``template.<key>``)."""
    if not isinstance(table, dict):
        raise ScenarioError(file, "template", f"expected a table, got {show_value(table)}")
    kind = table.get("kind")
    if not isinstance(kind, str) or kind not in TEMPLATES:
        problem = "required key is missing" if kind is None else f"got {show_value(kind)}"
        raise ScenarioError(
            file,
            "template.kind",
            f"{problem}; templates: " + ", ".join(f'"{name}"' for name in TEMPLATES),
        )
    model = TEMPLATES[kind][0]
    try:
        return model.model_validate(table)
    except ValidationError as validation_error:
        error = from_validation_error(validation_error, file)
        key = "template" + (f".{error.key}" if error.key else "")
        raise ScenarioError(file, key, error.message) from None


def expand(data: dict, file: Optional[str] = None) -> tuple[dict, dict, dict]:
    """A scenario dict with ``[template]`` -> (the merged general form, the expansion
    alone, the source form: the resolved template table + the other tables as given)."""
    params = template_params(data["template"], file)
    expansion = TEMPLATES[params.kind][1](params)  # type: ignore[attr-defined]
    others = {key: value for key, value in data.items() if key != "template"}
    merged = merge_tables(expansion, others)
    source = {"template": resolved_params(params), **copy.deepcopy(others)}
    return merged, expansion, source


def resolved_params(params: Table) -> dict:
    """The template table with every default written out: kind, the template's own
    parameters, then those of the switch algorithm."""
    dump = params.model_dump(exclude_none=True)
    return {key: dump[key] for key in params.allowed_keys(dump) if key in dump}
