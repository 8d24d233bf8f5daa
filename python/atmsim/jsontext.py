"""The text of a JSON file a person may read (summary.json): indented as
``json.dumps(value, indent=2)`` writes it, except that a list of more than
``LONG_LIST`` items gets one compact line per item.

``json.dumps`` with ``indent`` runs Python's pure-Python encoder (the C encoder
serves only the compact form): for a run of 100,000 VCs that took most of the
run's time after its loop. One line per VC keeps the file readable and lets the C
encoder write each line; a run of up to ``LONG_LIST`` VCs, flows and ports gets
exactly the text it always had.
"""

from __future__ import annotations

import json
from typing import Any

LONG_LIST = 64
"""Lists longer than this are written one compact item per line."""


def json_text(value: Any) -> str:
    """``value`` as JSON text ending in a newline (see the module's docstring)."""
    return _format(value, "") + "\n"


def _format(value: Any, pad: str) -> str:
    inner = pad + "  "
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{inner}{json.dumps(str(k))}: {_format(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        if len(value) > LONG_LIST:
            items = [inner + json.dumps(v) for v in value]
        else:
            items = [inner + _format(v, inner) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(value)
