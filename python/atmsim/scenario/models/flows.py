"""``[flows.<name>]``: TCP connections over ATM or IP."""

# No `from __future__ import annotations`: pydantic would then parse and evaluate
# every field's annotation string when the classes are built (see base.py).

from typing import Literal, Optional

from pydantic import Field, PrivateAttr, model_validator

from ...errors import show_value
from ...units import (
    MAX_TIME_TEXT,
    parse_size_bytes,
    parse_time_ps,
)
from ..common import MAX_WINDOW_FIELD, MAX_WINDOW_SCALE, _fail
from ..core_schema import core_default, core_time_default, size_text, time_text
from ..limits import (
    NodePath,
)
from ..quantities import (
    Size,
    SizeOrAuto,
    TimeOrAuto,
    Timer,
    VcClass,
    WindowScale,
)
from .base import Count, InitialCwnd, Mss, PositiveTime, ReceiverTime, SackBlocks, StartTime, Table
from .vcs import Abr, Gfr, _abr_class, _gfr_class

TCP_VARIANTS = ("tahoe-nofr", "tahoe", "reno", "newreno", "sack")
FINE_MIN_RTO = "200 ms"
"""Default min_rto with a fine-grained timer."""
COARSE_MIN_RTO_TICKS = 2
"""Default min_rto with a coarse timer: 2 ticks, as BSD (TCP/IP Illustrated, Volume 2)."""


class Flow(Table):
    """``[flows.<name>]``: a TCP connection from ``path[0]`` to ``path[-1]``.

    ``path`` carries the data, ``ack_path`` (default: the reverse of path) the
    ACKs; both over ATM links (the flow gets two VCs, ``<name>`` and
    ``<name>-ack``, of ``class``) or both over IP links.

    Or, instead of ``path``: ``vc = "<name>"``, a VC of ``[vcs]`` that carries the
    flow's data, and ``ack_vc`` (default ``"<vc>-ack"``) that carries its ACKs back. Many
    flows may share these VCs, as the TCP connections an edge router multiplexes onto
    one VC (GFR buffer management (Goyal et al., 1998)); the VCs' class and contract are those of
    their ``[vcs]`` tables.
    """

    path: Optional[NodePath] = None
    """Nodes from the sender to the receiver (or give vc)."""
    ack_path: Optional[NodePath] = None
    """Default: the reverse of path."""
    vc: Optional[str] = None
    """A VC of [vcs] carrying the data (instead of path)."""
    ack_vc: Optional[str] = None
    """With vc: the VC of [vcs] carrying the ACKs back; default "<vc>-ack"."""
    count: Optional[Count] = None
    """Copies of a template (a name with {i}), 1 to 100000."""
    class_: Optional[VcClass] = Field(None, alias="class")
    """ATM flows over a path: class of the data VC and of the ACK VC (default "ubr")."""
    abr: Optional[Abr] = None
    """class = "abr": the parameters of both VCs' source end systems (pcr "auto":
    each VC's own first link)."""
    gfr: Optional[Gfr] = None
    """class = "gfr": the contract of both VCs (each tested at its own first switch)."""
    congestion_control: Optional[Literal["reno", "cubic"]] = None
    """atmsim emulate: the Linux congestion control of the flow when its two ends are
    real hosts (default "cubic"; --cc overrides it). atmsim run ignores it: the
    model's TCP is ``variant``."""
    variant: Literal["tahoe-nofr", "tahoe", "reno", "newreno", "sack"] = core_default(
        "FlowSpec.variant"
    ).replace("_", "-")
    mss: Mss = core_default("FlowSpec.mss_bytes")
    """Bytes of TCP payload per segment, 1 to 65495."""
    window: Size = size_text(core_default("FlowSpec.rcv_window_bytes"))
    """Receiver buffer: the largest window the receiver advertises."""
    window_scale: WindowScale = "auto"
    """RFC 1323 shift; auto = the smallest with window >> shift <= 65535."""
    initial_cwnd: InitialCwnd = core_default("FlowSpec.initial_cwnd_segments")
    """Segments, 1 to 1000000."""
    initial_ssthresh: SizeOrAuto = "auto"
    """auto: the largest advertised window."""
    timer: Timer = time_text(core_default("FlowSpec.timer")["tick_ps"])
    """Coarse timer granularity (timers fire on a global tick), or "fine"."""
    rtt_arithmetic: Literal["real", "bsd"] = core_default("FlowSpec.rtt_arithmetic")
    """How the RTT estimator computes with a coarse timer: "real", srtt and rttvar as
    real numbers (RFC 6298's form), the RTO rounded up to whole ticks; "bsd", 4.4BSD's
    fixed-point code (W. R. Stevens and G. R. Wright, "TCP/IP Illustrated, Volume 2",
    section 25.10: the timed segment counted from 1 tick, truncating shifts; sub-tick
    RTTs give an RTO of 3 ticks). "bsd" needs a coarse timer."""
    initial_rto: PositiveTime = core_time_default("FlowSpec.initial_rto_ps")
    min_rto: TimeOrAuto = "auto"
    """auto: 2 ticks with a coarse timer, 200 ms with "fine"."""
    max_rto: PositiveTime = core_time_default("FlowSpec.max_rto_ps")
    delayed_ack: ReceiverTime = core_time_default("FlowSpec.delayed_ack_ps")
    """0 = every segment is ACKed at once."""
    processing: ReceiverTime = core_time_default("FlowSpec.processing_ps")
    """Receiver time per data segment."""
    processing_jitter: ReceiverTime = core_time_default("FlowSpec.processing_jitter_ps")
    """Processing is uniform in [processing - jitter, processing + jitter]."""
    start: StartTime = core_time_default("FlowSpec.start_ps")
    transfer: Optional[Size] = None
    """A finite transfer of this size; none = the source always has data."""
    max_sack_blocks: SackBlocks = core_default("FlowSpec.max_sack_blocks")

    _ack_path_default: bool = PrivateAttr(False)

    @model_validator(mode="after")
    def _resolve(self) -> "Flow":
        if self.vc is not None:
            self._over_vcs()
        elif self.path is None:
            raise _fail(
                "path",
                "required: the nodes from the sender to the receiver (or vc = "
                '"<VC of [vcs]>" for a flow over a VC it may share)',
            )
        elif self.ack_vc is not None:
            raise _fail("ack_vc", "goes with vc (a flow over VCs of [vcs]), not with path")
        else:
            if self.abr is not None and self.class_ is None:
                raise _fail("abr", 'ABR parameters need class = "abr" (the class of both VCs)')
            if self.gfr is not None and self.class_ is None:
                raise _fail("gfr", 'GFR parameters need class = "gfr" (the class of both VCs)')
            _abr_class(self, self.class_)
            _gfr_class(self, self.class_)
            if self.ack_path is None:
                self.ack_path = list(reversed(self.path))
                self._ack_path_default = True
        window = parse_size_bytes(self.window)
        if window < self.mss:
            raise _fail(
                "window",
                f"must hold at least one segment (mss = {self.mss} bytes), "
                f"got {show_value(self.window)}",
            )
        if window >> MAX_WINDOW_SCALE > MAX_WINDOW_FIELD:
            raise _fail(
                "window",
                f"must be from mss ({self.mss} bytes) to 1073725440 bytes: TCP advertises at "
                f"most 65535 << 14 bytes, got {show_value(self.window)}",
            )
        shift = self.window_shift()
        advertised = min(MAX_WINDOW_FIELD, window >> shift) << shift
        if advertised < self.mss:
            raise _fail(
                "window_scale",
                f"with window_scale = {shift} the receiver advertises at most {advertised} "
                f"bytes, less than one segment (mss = {self.mss})",
            )
        if self.initial_ssthresh != "auto" and parse_size_bytes(self.initial_ssthresh) <= 0:
            raise _fail(
                "initial_ssthresh",
                f'must be from 1 byte to 2^53 or "auto", got {show_value(self.initial_ssthresh)}',
            )
        if self.transfer is not None and parse_size_bytes(self.transfer) <= 0:
            raise _fail("transfer", f"must be from 1 byte to 2^53, got {show_value(self.transfer)}")
        if self.rtt_arithmetic == "bsd" and self.timer == "fine":
            raise _fail(
                "rtt_arithmetic",
                'must be "real" with timer = "fine": BSD\'s arithmetic counts in ticks, got "bsd"',
            )
        if self.min_rto != "auto" and parse_time_ps(self.min_rto) == 0:
            raise _fail(
                "min_rto",
                f'must be > 0 s and at most {MAX_TIME_TEXT} or "auto", got "{self.min_rto}"',
            )
        min_rto = self.min_rto_ps()
        min_text = f"{min_rto / 1e12:g} s"
        if self.min_rto == "auto":
            min_text += (
                " with a fine timer" if self.timer == "fine" else f", {COARSE_MIN_RTO_TICKS} ticks"
            )
        if min_rto > parse_time_ps(self.max_rto):
            raise _fail(
                "max_rto", f"must be >= min_rto ({min_text}), got {show_value(self.max_rto)}"
            )
        if parse_time_ps(self.initial_rto) > parse_time_ps(self.max_rto):
            raise _fail(
                "initial_rto",
                f"must be <= max_rto ({show_value(self.max_rto)}), "
                f"got {show_value(self.initial_rto)}",
            )
        if parse_time_ps(self.initial_rto) < min_rto:
            raise _fail(
                "initial_rto",
                f"must be >= min_rto ({min_text}), got {show_value(self.initial_rto)}",
            )
        if parse_time_ps(self.processing_jitter) > parse_time_ps(self.processing):
            raise _fail(
                "processing_jitter",
                f"must be <= processing ({show_value(self.processing)}), "
                f"got {show_value(self.processing_jitter)}",
            )
        return self

    def _over_vcs(self) -> None:
        """A flow over VCs of [vcs]: the VCs carry the path, the class and the contract."""
        for key in ("path", "ack_path", "class_", "abr", "gfr"):
            if getattr(self, key) is not None:
                name = key.rstrip("_")
                raise _fail(
                    name,
                    f"a flow over vc = {show_value(self.vc)} takes its path, class and "
                    f"contract from the VC's [vcs] table: remove {name}",
                )
        if self.ack_vc is None:
            self.ack_vc = f"{self.vc}-ack"

    def window_bytes(self) -> int:
        return parse_size_bytes(self.window)

    def window_shift(self) -> int:
        """The window scale shift: as written, or the smallest that fits the 16-bit field."""
        if self.window_scale != "auto":
            return int(self.window_scale)
        return auto_window_scale(self.window_bytes())

    def tick_ps(self) -> Optional[int]:
        """The coarse timer's tick, or None for a fine-grained timer."""
        return None if self.timer == "fine" else parse_time_ps(self.timer)

    def min_rto_ps(self) -> int:
        if self.min_rto != "auto":
            return parse_time_ps(self.min_rto)
        tick = self.tick_ps()
        return parse_time_ps(FINE_MIN_RTO) if tick is None else COARSE_MIN_RTO_TICKS * tick


def auto_window_scale(window_bytes: int) -> int:
    """The smallest RFC 1323 shift s with window >> s <= 65535 (64 KB -> 1, 65535 -> 0)."""
    shift = 0
    while window_bytes >> shift > MAX_WINDOW_FIELD:
        shift += 1
    return shift
