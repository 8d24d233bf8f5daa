"""Comparing a simulated value with a reference: tolerances, verdicts, Jain's index.

One ``Tolerance`` serves both comparisons atmsim makes: ``atmsim reproduce``
(simulated against a published value, docs/reproduction.md) and the ns-2
validation (atmsim against ns-2, docs/validation.md). Its verdicts:

- ``relative`` r: match when |simulated - reference| <= r x |reference|; with a
  ``floor`` a, when it is <= max(r x |reference|, a) (small counts: "15 % or 5");
- ``absolute`` a: match when |simulated - reference| <= a;
- ``factor`` k: match when reference / k <= simulated <= reference x k;
- ``exact``: match when simulated == reference (e.g. "no cell lost": 0);
- ``above`` / ``below`` with margin m (default 0): the reference states a
  direction or a bound, not a value: match when simulated > reference + m
  (resp. < reference - m). A qualitative claim such as "FMMRA's queue is smaller
  than ERICA's" is the ratio FMMRA / ERICA with reference 1 and ``below``;
  "fairer" is a difference of Jain indices above 0 by more than 0.01, the
  resolution at which we call two allocations equally fair;
- ``report``: nothing to compare (the reference is "NA", or the row only shows
  a simulated value that explains a claim): verdict "n/a".

A simulated value that cannot be computed (None or NaN) is a miss.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Optional

Verdict = Literal["match", "miss", "n/a"]

SLACK = 1e-12
"""Added to every allowance so that a value on the boundary matches despite rounding."""


@dataclass(frozen=True)
class Tolerance:
    """How close a simulated value must be to its reference (module docstring)."""

    kind: Literal["relative", "absolute", "factor", "exact", "above", "below", "report"]
    value: float = 0.0
    floor: float = 0.0
    """``relative`` only: an absolute allowance too; the larger of the two counts."""

    def verdict(self, reference: Optional[float], simulated: Optional[float]) -> Verdict:
        """ "match", "miss", or "n/a" (``report``, or no reference published)."""
        if self.kind == "report" or reference is None:
            return "n/a"
        if simulated is None or not math.isfinite(simulated):
            return "miss"
        if self.kind == "relative":
            allowed = max(self.value * abs(reference), self.floor)
            ok = abs(simulated - reference) <= allowed + SLACK
        elif self.kind == "absolute":
            ok = abs(simulated - reference) <= self.value + SLACK
        elif self.kind == "factor":
            ok = reference / self.value <= simulated <= reference * self.value
        elif self.kind == "exact":
            ok = abs(simulated - reference) <= SLACK
        elif self.kind == "above":
            ok = simulated > reference + self.value
        elif self.kind == "below":
            ok = simulated < reference - self.value
        else:  # pragma: no cover - the Literal lists them all
            raise ValueError(f"unknown tolerance kind {self.kind!r}")
        return "match" if ok else "miss"

    def allows(self, simulated: Optional[float], reference: Optional[float]) -> bool:
        """True when ``simulated`` is a match for ``reference``."""
        return self.verdict(reference, simulated) == "match"

    def published_text(self, reference: Optional[float]) -> str:
        """The reference as printed: "103.32", "NA", or a bound "> 7000", "< 1"."""
        if reference is None:
            return "NA"
        if self.kind == "above":
            return f"> {reference:g}"
        if self.kind == "below":
            return f"< {reference:g}"
        return f"{reference:g}"

    def text(self) -> str:
        """The tolerance as printed: "±5 %", "±15 % or 5", "±0.01", "×/÷ 2", "exact",
        "one-sided"."""
        if self.kind == "relative":
            floor = f" or {self.floor:g}" if self.floor else ""
            return f"±{self.value * 100:g} %{floor}"
        if self.kind == "absolute":
            return f"±{self.value:g}"
        if self.kind == "factor":
            return f"×/÷ {self.value:g}"
        if self.kind == "exact":
            return "exact"
        if self.kind in ("above", "below"):
            return f"one-sided, margin {self.value:g}" if self.value else "one-sided"
        return "-"


def relative(fraction: float, floor: float = 0.0) -> Tolerance:
    """Within ``fraction`` of the reference (or within ``floor``, whichever is larger)."""
    return Tolerance("relative", fraction, floor)


def absolute(amount: float) -> Tolerance:
    return Tolerance("absolute", amount)


def factor(k: float) -> Tolerance:
    return Tolerance("factor", k)


def above(margin: float = 0.0) -> Tolerance:
    return Tolerance("above", margin)


def below(margin: float = 0.0) -> Tolerance:
    return Tolerance("below", margin)


EXACT = Tolerance("exact")
ABOVE = above()
BELOW = below()
REPORT = Tolerance("report")


def jain(values: Sequence[float]) -> float:
    """Jain's fairness index of the allocations x_1..x_n: (sum x)^2 / (n sum x^2).

    From R. Jain, D. Chiu, W. Hawe, "A Quantitative Measure of Fairness and
    Discrimination for Resource Allocation in Shared Computer Systems" (DEC
    TR-301, 1984): 1 when every allocation is the same positive amount, k / n
    when k of n share equally and the others get nothing.

    NaN when there is nothing to judge: no allocations, or all of them zero.
    The formula is 0 / 0 there and has no limit (equal shares shrinking to 0
    keep 1; (e, 0) keeps 1/2), and a run in which no flow delivered anything
    is not "perfectly fair": reporting 1 would let it match a published
    "fair". NaN makes such a comparison a miss (a value that cannot be
    computed, see ``Tolerance``).
    """
    # Exactly rounded sums (math.fsum), in plain Python: a run's fairness table then
    # needs no numpy, and the index does not depend on the order of the values.
    x = [float(v) for v in values]
    square = math.fsum(v * v for v in x)
    if not x or square == 0:
        return math.nan
    return math.fsum(x) ** 2 / (len(x) * square)
