"""``[vcs.<name>]``: a virtual circuit and its service class parameters (``Abr``,
``Gfr``), shared by the sources and flows that name a class."""

# No `from __future__ import annotations`: pydantic would then parse and evaluate
# every field's annotation string when the classes are built (see base.py).

from typing import Any, Optional

from pydantic import Field, model_validator

from ...errors import show_value
from ...units import (
    parse_cell_rate_cps,
    parse_time_ps,
)
from ..common import _fail
from ..core_schema import core_default, core_time_default, factor_text
from ..limits import (
    MIN_SOURCE_CPS,
    NodePath,
    cells_text,
    core_whole,
)
from ..quantities import (
    Fraction,
    Rate,
    RateOrAuto,
    VcClass,
    fraction_value,
)
from .base import AdtfTime, Crm, Mrm, Nrm, Table, TrmTime

TBE_MAX = 2**24 - 1
"""The largest TBE (a 24-bit field), and TM 4.0's default."""
ABR_FACTOR_DEFAULT = factor_text(core_default("AbrParams.rif"))
"""TM 4.0's default RIF, RDF and CDF, 1/16 (the core's, ATM Forum Traffic Management
Specification 4.0)."""


class Abr(Table):
    """``abr = { ... }``: an ABR VC's source end system parameters (ATM Forum TM 4.0).

    Every key is optional; where absent, TM 4.0's default: pcr "auto" (the
    cell rate of the VC's first link), mcr "0 Mbps", icr "auto" (= pcr),
    rif = rdf = cdf = 1/16, nrm 32, mrm 2, trm "100 ms", tbe 16777215, adtf
    "500 ms", tcr "10 cells/s", use_it_or_lose_it false. Rates take any rate unit; the
    factors a
    number or a fraction like "1/512". Give ``tbe`` or ``crm``, not both:
    the core gets crm = ceil(tbe / nrm).
    """

    pcr: RateOrAuto = "auto"
    """Peak cell rate; "auto": the cell rate of the VC's first link."""
    mcr: Rate = f"{core_default('AbrParams.mcr_cps'):g} cells/s"
    """Minimum cell rate."""
    icr: RateOrAuto = "auto"
    """Initial cell rate; "auto": pcr."""
    rif: Fraction = ABR_FACTOR_DEFAULT
    """Rate increase factor: ACR grows by rif x pcr per backward RM cell."""
    rdf: Fraction = ABR_FACTOR_DEFAULT
    """Rate decrease factor (CI = 1)."""
    cdf: Fraction = ABR_FACTOR_DEFAULT
    """Cut-off decrease factor (rule 6)."""
    nrm: Nrm = core_default("AbrParams.nrm")
    """In-rate cells per forward RM cell, 2 to 256."""
    mrm: Mrm = core_default("AbrParams.mrm")
    """Fewest in-rate cells between forward RM cells sent on the trm timer, 1 to nrm."""
    trm: TrmTime = core_time_default("AbrParams.trm_ps")
    """Upper bound on the time between forward RM cells, 100 us to 10^6 s."""
    tbe: Optional[Crm] = None
    """Transient buffer exposure, cells, 1 to 2^24 - 1; default 16777215 unless crm is given."""
    crm: Optional[Crm] = None
    """Forward RM cells without feedback before ACR is cut, 1 to 2^24 - 1; default
    ceil(tbe / nrm)."""
    adtf: AdtfTime = core_time_default("AbrParams.adtf_ps")
    """ACR decrease time factor (rule 5), 10 ms to 10.23 s."""
    tcr: Rate = f"{core_default('AbrParams.tcr_cps'):g} cells/s"
    """Tagged cell rate: the least rate of forward RM cells."""
    use_it_or_lose_it: bool = False
    """Before each forward RM cell, an ACR above the rate the source actually sent at
    since the previous one falls to that rate, not below icr (an option beside TM 4.0's
    mandatory rules; docs/model.md, "ABR")."""

    @model_validator(mode="after")
    def _resolve(self) -> "Abr":
        for key in ("rif", "rdf", "cdf"):
            value = fraction_value(getattr(self, key))
            if not 0 < value <= 1:
                raise _fail(key, f"must be > 0 and <= 1, got {show_value(getattr(self, key))}")
        if self.tbe is not None and self.crm is not None:
            raise _fail("crm", "give tbe or crm (crm = ceil(tbe / nrm)), not both")
        if self.tbe is None and self.crm is None:
            self.tbe = TBE_MAX
        if self.mrm > self.nrm:
            raise _fail("mrm", f"must be from 1 to nrm ({self.nrm}), got {self.mrm}")
        for key in ("pcr", "icr", "tcr"):
            value = getattr(self, key)
            if value != "auto" and parse_cell_rate_cps(value) <= 0:
                raise _fail(key, f"must be > 0, got {show_value(value)}")
        if self.pcr != "auto":
            problem = self.rate_problem(parse_cell_rate_cps(self.pcr))
            if problem is not None:
                raise _fail(*problem)
        elif self.icr != "auto" and parse_cell_rate_cps(self.mcr) > parse_cell_rate_cps(self.icr):
            raise _fail(
                "mcr", f"must be <= icr ({show_value(self.icr)}), got {show_value(self.mcr)}"
            )
        return self

    def pcr_cps(self, link_cps: float) -> float:
        """PCR in cells/s; ``link_cps`` is the cell rate of the VC's first link."""
        return link_cps if self.pcr == "auto" else parse_cell_rate_cps(self.pcr)

    def icr_cps(self, link_cps: float) -> float:
        return self.pcr_cps(link_cps) if self.icr == "auto" else parse_cell_rate_cps(self.icr)

    def crm_value(self) -> int:
        """CRM = ceil(TBE / Nrm), or as given."""
        if self.crm is not None:
            return self.crm
        return -(-(self.tbe or TBE_MAX) // self.nrm)

    def rate_problem(self, link_cps: float) -> Optional[tuple[str, str]]:
        """(key, message) unless pcr <= the first link's cell rate ``link_cps``,
        mcr <= icr <= pcr and tcr <= pcr (TM 4.0; a relative 1e-12 is tolerated, and
        ``core_json`` clamps within it)."""
        pcr = self.pcr_cps(link_cps)
        icr = self.icr_cps(link_cps)
        mcr = parse_cell_rate_cps(self.mcr)
        tcr = parse_cell_rate_cps(self.tcr)
        where = " (the cell rate of the first link)" if self.pcr == "auto" else ""
        if pcr > link_cps * (1 + 1e-12):
            return "pcr", (
                f"must be at most the cell rate of the VC's first link ({cells_text(link_cps)}), "
                f"got {show_value(self.pcr)}"
            )
        if icr > pcr * (1 + 1e-12):
            return (
                "icr",
                f"must be <= pcr ({pcr:.6g} cells/s{where}), got {show_value(self.icr)}",
            )
        if mcr > icr * (1 + 1e-12):
            return "mcr", f"must be <= icr ({icr:.6g} cells/s), got {show_value(self.mcr)}"
        if tcr > pcr * (1 + 1e-12):
            return (
                "tcr",
                f"must be <= pcr ({pcr:.6g} cells/s{where}), got {show_value(self.tcr)}",
            )
        return None

    def core_json(self, link_cps: float) -> dict:
        """The ``abr`` object of a VC in the core JSON (docs/core-interface.md, "ABR")."""
        pcr = self.pcr_cps(link_cps)
        icr = min(self.icr_cps(link_cps), pcr)  # equal within validation's 1e-12
        return {
            "pcr_cps": pcr,
            "mcr_cps": min(parse_cell_rate_cps(self.mcr), icr),
            "icr_cps": icr,
            "rif": fraction_value(self.rif),
            "rdf": fraction_value(self.rdf),
            "nrm": self.nrm,
            "mrm": self.mrm,
            "trm_ps": parse_time_ps(self.trm),
            "crm": self.crm_value(),
            "cdf": fraction_value(self.cdf),
            "adtf_ps": parse_time_ps(self.adtf),
            "tcr_cps": min(parse_cell_rate_cps(self.tcr), pcr),
            "use_it_or_lose_it": self.use_it_or_lose_it,
        }


GfrCells = core_whole("GfrParams.mbs_cells")
"""A GFR VC's MBS or MFS, cells (the length field of an AAL5 frame in cells fits 16 bits)."""
GFR_MFS_CELLS = core_default("GfrParams.mfs_cells")
"""Default MFS, 192 cells (the core's, with its source: the AAL5 frame of the largest IP
datagram of IP over ATM's default MTU)."""
GFR_MBS_FRAMES = 2
"""Default MBS = 2 x MFS (our choice: the ATM Forum's GFR definition leaves MBS to the
contract; two maximum-size frames back to back let a TCP sender's pair of segments in slow
start through without tagging; docs/model.md, "GFR")."""


class Gfr(Table):
    """``gfr = { ... }``: a GFR VC's traffic contract (ATM Forum Traffic Management
    Specification 4.1, Guaranteed Frame Rate).

    ``mcr`` is required (any rate unit; "12000 cells/s"); ``mfs`` defaults to 192 cells,
    ``mbs`` to 2 x mfs, ``tagging`` to true. The VC's first switch tests each frame with
    the frame-based GCRA(1/MCR, (MBS - 1)(1/MCR - 1/PCR)), PCR its first link's cell
    rate; with ``tagging`` the cells of a frame that is not eligible leave it with
    CLP = 1 (docs/model.md, "GFR").
    """

    mcr: Rate
    """Minimum cell rate, above 0 and at most the cell rate of the VC's first link."""
    mbs: Optional[GfrCells] = None
    """Maximum burst size, cells (1 to 65535; default 2 x mfs)."""
    mfs: GfrCells = GFR_MFS_CELLS
    """Maximum frame size, cells (1 to 65535): a longer frame is not eligible."""
    tagging: bool = core_default("GfrParams.tagging")
    """Tag (CLP = 1) the frames the frame-based GCRA finds not eligible, at the VC's first
    switch; false: test and count them only."""

    @model_validator(mode="after")
    def _resolve(self) -> "Gfr":
        if not parse_cell_rate_cps(self.mcr) >= MIN_SOURCE_CPS:
            raise _fail(
                "mcr",
                "must be from 0.001 cells/s (0.424 bps) to the cell rate of the first link, "
                f"got {show_value(self.mcr)}",
            )
        if self.mbs is None:
            self.mbs = min(65535, GFR_MBS_FRAMES * self.mfs)
        return self

    def rate_problem(self, link_cps: float) -> Optional[tuple[str, str]]:
        """(key, message) unless mcr <= the first link's cell rate ``link_cps``."""
        if parse_cell_rate_cps(self.mcr) > link_cps * (1 + 1e-12):
            return "mcr", (
                f"must be at most the cell rate of the VC's first link ({cells_text(link_cps)}), "
                f"got {show_value(self.mcr)}"
            )
        return None

    def core_json(self, link_cps: float) -> dict:
        """The ``gfr`` object of a VC in the core JSON (docs/core-interface.md, "GfrParams")."""
        return {
            "mcr_cps": min(parse_cell_rate_cps(self.mcr), link_cps),
            "mbs_cells": self.mbs,
            "mfs_cells": self.mfs,
            "tagging": self.tagging,
        }


def _gfr_class(table: Any, vc_class: Optional[str]) -> None:
    """A GFR VC needs its ``gfr`` table (mcr has no default); ``gfr`` on another class
    is an error."""
    if vc_class == "gfr":
        if table.gfr is None:
            raise _fail(
                "gfr",
                'required for class = "gfr": the traffic contract, e.g. '
                '{ mcr = "12000 cells/s" } (mbs, mfs and tagging have defaults)',
            )
    elif table.gfr is not None:
        raise _fail(
            "gfr",
            f'GFR parameters need class = "gfr", got class = "{vc_class or "ubr"}"',
        )


def _abr_class(table: Any, vc_class: Optional[str]) -> None:
    """Give an ABR VC its default ``abr`` table; ``abr`` on another class is an error."""
    if vc_class == "abr":
        if table.abr is None:
            table.abr = Abr()
    elif table.abr is not None:
        raise _fail(
            "abr",
            f'ABR parameters need class = "abr", got class = "{vc_class or "ubr"}"',
        )


class Vc(Table):
    """``[vcs.<name>]``: a virtual circuit along a path of node names (ATM links)."""

    path: NodePath
    class_: VcClass = Field("ubr", alias="class")
    """Service class; priority at a port: cbr > vbr > abr = ubr = gfr."""
    abr: Optional[Abr] = None
    """class = "abr": the source end system's parameters (all have defaults)."""
    gfr: Optional[Gfr] = None
    """class = "gfr": the traffic contract (mcr required)."""

    @model_validator(mode="after")
    def _abr(self) -> "Vc":
        _abr_class(self, self.class_)
        _gfr_class(self, self.class_)
        return self
