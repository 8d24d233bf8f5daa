"""``[sources.<name>]``: cell sources on a VC."""

# No `from __future__ import annotations`: pydantic would then parse and evaluate
# every field's annotation string when the classes are built (see base.py).

from typing import Literal, Optional

from pydantic import Field, model_validator

from ...errors import show_value
from ...units import (
    parse_cell_rate_cps,
    parse_time_ps,
)
from ..common import TEMPLATE, _fail
from ..core_schema import core_default
from ..limits import (
    MIN_SOURCE_CPS,
    NodePath,
)
from ..quantities import (
    FrameCells,
    Rate,
    VcClass,
)
from .base import Count, MeanBurst, PositiveTime, StartTime, Table
from .vcs import Abr, Gfr, _abr_class, _gfr_class

SOURCE_COMMON_KEYS = ["vc", "path", "class", "abr", "gfr", "kind", "count", "start", "stop"]
SOURCE_KIND_KEYS = {
    "cbr": ["rate"],
    "greedy": [],
    "poisson": ["rate"],
    "vbr_onoff": ["peak", "on", "off", "distribution"],
    "geometric_onoff": ["peak", "mean", "mean_burst"],
    "frames": ["frame_cells", "rate", "arrivals"],
}
SOURCE_DEFAULTS = {
    "distribution": core_default("SourceModel[vbr_onoff].distribution"),
    "arrivals": core_default("SourceModel[frames].arrivals"),
}
"""Per-kind keys that have a default; every other per-kind key is required."""


class Source(Table):
    """``[sources.<name>]``: a cell source on a VC.

    Either ``vc = "<name>"`` or ``path = [...]`` (with an optional ``class``,
    default "ubr"), which creates a VC named like the source. ``count = N > 1``
    makes N copies named ``<name>1`` .. ``<name>N`` (or, in a template
    ``"s{i}"``, with {i} replaced), each with its own VC (needs ``path``, or
    a ``vc`` with {i}). Per ``kind``:

    - cbr: ``rate``; poisson: ``rate`` (mean); greedy: nothing (one cell per
      cell time of the first link);
    - vbr_onoff: ``peak``, ``on``, ``off``, ``distribution`` ("fixed" |
      "exponential", default "fixed");
    - geometric_onoff: ``peak``, ``mean`` (0 < mean < peak), ``mean_burst`` (cells);
    - frames: ``frame_cells`` (n or [lo, hi]), ``rate`` (offered), ``arrivals``
      ("periodic" | "poisson", default "periodic").
    """

    keys_by_kind = {kind: SOURCE_COMMON_KEYS + keys for kind, keys in SOURCE_KIND_KEYS.items()}

    kind: Literal["cbr", "greedy", "poisson", "vbr_onoff", "geometric_onoff", "frames"]
    vc: Optional[str] = None
    path: Optional[NodePath] = None
    class_: Optional[VcClass] = Field(None, alias="class")
    abr: Optional[Abr] = None
    """With path and class = "abr": the source end system's parameters."""
    gfr: Optional[Gfr] = None
    """With path and class = "gfr": the traffic contract."""
    count: Count = 1
    start: StartTime = "0 s"
    stop: Optional[StartTime] = None
    """No more cells from this time on; none = until the end of the run."""
    rate: Optional[Rate] = None
    peak: Optional[Rate] = None
    mean: Optional[Rate] = None
    mean_burst: Optional[MeanBurst] = None
    """Mean burst length in cells (geometric), 1 to 1e9."""
    on: Optional[PositiveTime] = None
    off: Optional[PositiveTime] = None
    distribution: Optional[Literal["fixed", "exponential"]] = None
    frame_cells: Optional[FrameCells] = None
    arrivals: Optional[Literal["periodic", "poisson"]] = None

    @model_validator(mode="after")
    def _resolve(self) -> "Source":
        for key in SOURCE_KIND_KEYS[self.kind]:
            if getattr(self, key) is None:
                if key not in SOURCE_DEFAULTS:
                    raise _fail(key, f'required for kind = "{self.kind}"')
                setattr(self, key, SOURCE_DEFAULTS[key])
        if self.vc is None and self.path is None:
            raise _fail("", 'needs vc = "<vc name>" or path = [<node names>]')
        if self.vc is not None and self.path is not None:
            raise _fail("path", "give vc or path, not both")
        if self.vc is not None and self.class_ is not None:
            raise _fail("class", f"the class belongs to the VC: set it in [vcs.{self.vc}]")
        if self.vc is not None and self.abr is not None:
            raise _fail("abr", f"the ABR parameters belong to the VC: set them in [vcs.{self.vc}]")
        if self.vc is not None and self.gfr is not None:
            raise _fail("gfr", f"the GFR contract belongs to the VC: set it in [vcs.{self.vc}]")
        if self.path is not None and self.class_ is None:
            self.class_ = "ubr"
        if self.path is not None:
            _abr_class(self, self.class_)
            _gfr_class(self, self.class_)
        if self.count > 1 and self.vc is not None and TEMPLATE not in self.vc:
            raise _fail(
                "count",
                "count > 1 needs path (each copy gets its own VC), not vc (or a vc with {i})",
            )
        if self.stop is not None and parse_time_ps(self.stop) <= parse_time_ps(self.start):
            raise _fail(
                "stop",
                f"must be after start ({show_value(self.start)}), got {show_value(self.stop)}",
            )
        for key in ("rate", "peak", "mean"):
            value = getattr(self, key)
            if value is not None and not parse_cell_rate_cps(value) >= MIN_SOURCE_CPS:
                raise _fail(
                    key,
                    "must be from 0.001 cells/s (0.424 bps) to the cell rate of the first "
                    f"link, got {show_value(value)}",
                )
        if self.kind == "geometric_onoff":
            if parse_cell_rate_cps(self.mean) >= parse_cell_rate_cps(self.peak):
                raise _fail(
                    "mean",
                    f"must be below peak ({show_value(self.peak)}), got {show_value(self.mean)}",
                )
        return self

    def offered_rate_key(self) -> Optional[str]:
        """The key whose rate must fit the first link: peak for on/off, else rate."""
        if self.kind in ("vbr_onoff", "geometric_onoff"):
            return "peak"
        if self.kind == "greedy":
            return None
        return "rate"
