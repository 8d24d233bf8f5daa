"""Names and limits shared by the scenario modules, and the error helpers of validation."""

from __future__ import annotations

import re
from typing import Any

from pydantic_core import PydanticCustomError

from .core_schema import core_range

SECTIONS = ("run", "nodes", "links", "vcs", "sources", "flows", "probes")
"""Top-level tables of a scenario file, in the order they are written."""

NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]+\Z")
"""Names of nodes, links, VCs, sources and flows: TOML bare keys, so --set paths stay simple.
(\\Z, not $, which would let a name end in a line break.)"""

TEMPLATE = "{i}"
"""In a name (with ``count = N``): replaced by 1..N in the name and every string value."""

VC_CLASSES = ("cbr", "vbr", "abr", "ubr", "gfr")

IP_HEADER_BYTES = 40
"""TCP + IP headers: an IP datagram is the TCP payload + 40 bytes."""

MAX_MSS_BYTES = core_range("FlowSpec.mss_bytes").hi
"""The largest MSS (the core's): an IP datagram of MSS + 40 bytes is at most 65535."""

MAX_WINDOW_FIELD = 65535
"""The TCP header's 16-bit window field."""

MAX_WINDOW_SCALE = core_range("FlowSpec.window_scale").hi
"""RFC 1323: the largest window scale shift (the core's range)."""


def _fail(key: str, message: str) -> PydanticCustomError:
    """An error at ``key``, dotted and relative to the table being validated."""
    return PydanticCustomError("scenario", "{message}", {"key": key, "message": message})


QUOTED_NAMES = 20
"""An error lists at most this many names, then how many more (a template with n =
100,000 makes half a million flows, which no error line should spell out)."""


def _quoted(names: Any) -> str:
    """``a, b, c`` for a list of names (the first ``QUOTED_NAMES``, then ``... and N
    more``), or ``(none)``."""
    names = list(names)
    if not names:
        return "(none)"
    if len(names) > QUOTED_NAMES:
        more = len(names) - QUOTED_NAMES
        return ", ".join(names[:QUOTED_NAMES]) + f", ... and {more:,} more"
    return ", ".join(names)
