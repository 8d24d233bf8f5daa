"""How ``atmsim reproduce`` and its HTML report print a simulated value."""

from __future__ import annotations

import math
from typing import Optional


def number(value: Optional[float]) -> str:
    """A simulated value as printed: 18,040 / 109.6 / 0.9513 / NaN."""
    if value is None or not math.isfinite(value):
        return "NaN"
    if abs(value) >= 1000 or (value.is_integer() and abs(value) >= 10):
        return f"{value:,.0f}"
    if abs(value) >= 100:
        return f"{value:.1f}"
    return f"{value:.4g}"
