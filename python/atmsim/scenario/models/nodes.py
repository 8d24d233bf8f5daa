"""``[nodes]``: the hosts and switches."""

# No `from __future__ import annotations`: pydantic would then parse and evaluate
# every field's annotation string when the classes are built (see base.py).

from typing import Literal, Optional

from pydantic import model_validator

from ..common import _fail
from .base import Count, Table


class Node(Table):
    """``[nodes]``: ``name = { kind = "host" }``. The kind is informational.

    ``"s{i}" = { kind = "host", count = 5 }`` is a template for s1..s5.
    """

    kind: Literal["host", "switch"] = "switch"
    count: Optional[Count] = None
    """Copies of a template (a name with {i}), 1 to 100000."""
    real: Optional[bool] = None
    """atmsim emulate: true makes this host a Linux network namespace; a flow between
    two real hosts is real TCP (docs/emulation.md). atmsim run ignores it."""

    @model_validator(mode="after")
    def _only_hosts_are_real(self) -> "Node":
        if self.real and self.kind != "host":
            raise _fail("real", 'only a host can be real (kind = "host"), not a switch')
        return self
