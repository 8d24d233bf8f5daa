"""The spread of a quantity over run seeds: mean and Student-t 95 % interval.

``atmsim reproduce`` runs each experiment with several values of ``run.seed``
(``RUN_SEEDS``): since the core takes cells that reach a port at the same
instant in an order drawn from the run seed, each run seed is one sample of the same
configuration. A quantity is judged on the mean of its samples; the 95 %
confidence interval of that mean, mean +- t(0.975, n - 1) x s / sqrt(n) with s
the sample standard deviation (Student, "The probable error of a mean",
Biometrika 1908), shows how far the mean itself may be from the configuration's
expected value. It says nothing about the published value, which is one run of
the paper's own simulator.

No SciPy: the t quantile comes from the regularized incomplete beta function
(continued fraction of Numerical Recipes, section 6.4, "Incomplete Beta
Function, Student's Distribution"), inverted by bisection.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

CONFIDENCE = 0.95
"""The level of the interval printed next to every mean."""


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        step = d * c
        h *= step
        if abs(step - 1.0) < 1e-15:
            break
    return h


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), 0 <= x <= 1."""
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"x = {x} is outside [0, 1]")
    if x in (0.0, 1.0):
        return x
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_continued_fraction(a, b, x) / a
    return 1.0 - front * _beta_continued_fraction(b, a, 1.0 - x) / b


def t_cdf(t: float, dof: float) -> float:
    """P(T <= t) for Student's t with ``dof`` degrees of freedom."""
    if dof <= 0:
        raise ValueError(f"degrees of freedom must be > 0, not {dof}")
    tail = 0.5 * incomplete_beta(dof / 2.0, 0.5, dof / (dof + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p: float, dof: float) -> float:
    """The t with P(T <= t) = p (0 < p < 1), by bisection on ``t_cdf``."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p = {p} is outside (0, 1)")
    if p < 0.5:
        return -t_quantile(1.0 - p, dof)
    low, high = 0.0, 1.0
    while t_cdf(high, dof) < p:
        high *= 2.0
    for _ in range(200):
        middle = 0.5 * (low + high)
        if t_cdf(middle, dof) < p:
            low = middle
        else:
            high = middle
        if high - low < 1e-12 * max(1.0, high):
            break
    return 0.5 * (low + high)


@dataclass(frozen=True)
class Spread:
    """The samples' mean and the ``CONFIDENCE`` interval of the mean.

    ``n`` counts the finite samples (NaN ones, values that could not be computed,
    are left out and counted in ``missing``). With one sample the interval is
    unknown (NaN); with identical samples it is the mean itself."""

    mean: float
    low: float
    high: float
    n: int
    missing: int = 0

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2.0


def spread(values: Sequence[float], confidence: float = CONFIDENCE) -> Spread:
    """Mean and Student-t interval of the finite ``values``."""
    finite = [float(v) for v in values if v is not None and math.isfinite(v)]
    missing = len(values) - len(finite)
    n = len(finite)
    if n == 0:
        return Spread(math.nan, math.nan, math.nan, 0, missing)
    mean = math.fsum(finite) / n
    if n == 1:
        return Spread(mean, math.nan, math.nan, 1, missing)
    variance = math.fsum((v - mean) ** 2 for v in finite) / (n - 1)
    half = t_quantile(0.5 + confidence / 2.0, n - 1) * math.sqrt(variance / n)
    return Spread(mean, mean - half, mean + half, n, missing)
