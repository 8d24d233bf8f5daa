"""``[nodes]``: the hosts and switches."""

# No `from __future__ import annotations`: pydantic would then parse and evaluate
# every field's annotation string when the classes are built (see base.py).

from typing import Literal, Optional

from .base import Count, Table


class Node(Table):
    """``[nodes]``: ``name = { kind = "host" }``. The kind is informational.

    ``"s{i}" = { kind = "host", count = 5 }`` is a template for s1..s5.
    """

    kind: Literal["host", "switch"] = "switch"
    count: Optional[Count] = None
    """Copies of a template (a name with {i}), 1 to 100000."""
