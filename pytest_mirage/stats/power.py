"""How many cases (and human labels) a comparison needs: minimum detectable effects.

Normal approximation for a test of a mean (or of a mean paired difference) at level ``alpha``
with power ``power``:

    MDE(n) = (z_{1-alpha/s} + z_{power}) * sigma / sqrt(n)          (s = 2 two-sided, 1 one-sided)
    n(effect) = ceil(((z_{1-alpha/s} + z_{power}) * sigma / effect)^2)

``sigma`` is the standard deviation of what is averaged: the per-case metric value for one run, the
per-case *difference* for a paired baseline comparison (``sigma_d = sigma * sqrt(2 (1 - rho))``
for two runs whose per-case values correlate with ``rho``). With no observed values the default
sigma 0.35 is the spread of a [0, 1] metric that is often 0 or 1 (the same default as the
suite-statistics table of ``--mirage-suite-stats``).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from numpy.typing import ArrayLike

from ._common import (
    DEFAULT_ALPHA,
    StatsError,
    check_alpha,
    check_alternative,
    check_count,
    check_power,
    vector,
    z_quantile,
)

K = TypeVar("K", bound=Hashable)

DEFAULT_POWER = 0.8
DEFAULT_SIGMA = 0.35
# a spread estimated from fewer cases is too unstable to size a suite with
MIN_OBSERVED = 10
# an observed spread below this (e.g. a metric that is 1.0 on every case) would claim that a
# handful of cases detects any change; floor it
MIN_SIGMA = 0.05


def _z_sum(alpha: float, power: float, alternative: str) -> float:
    a = check_alpha(alpha)
    p = check_power(power)
    alt = check_alternative(alternative)
    tail = a / 2.0 if alt == "two-sided" else a
    return z_quantile(1.0 - tail) + z_quantile(p)


def _sigma(sigma: float | None) -> float:
    if sigma is None:
        return DEFAULT_SIGMA
    s = float(sigma)
    if not math.isfinite(s) or s < 0:
        raise StatsError(f"sigma={sigma!r}; expected a finite standard deviation >= 0")
    return s


def minimum_detectable_effect(n: int, sigma: float | None = None, *, alpha: float = DEFAULT_ALPHA,
                              power: float = DEFAULT_POWER, alternative: str = "two-sided") -> float:
    """Smallest true shift of the mean that a test on ``n`` cases detects with ``power``.

    ``sigma=None`` uses :data:`DEFAULT_SIGMA`. Use ``alternative="less"`` (one-sided) for a
    regression gate, which only looks for drops.
    """
    cases = check_count(n, "n")
    return _z_sum(alpha, power, alternative) * _sigma(sigma) / math.sqrt(cases)


def cases_needed(effect: float, sigma: float | None = None, *, alpha: float = DEFAULT_ALPHA,
                 power: float = DEFAULT_POWER, alternative: str = "two-sided") -> int:
    """Cases needed to detect a shift of ``effect`` (the inverse of :func:`minimum_detectable_effect`).

    ``--mirage-suite-stats`` reports it per suite x language for a 5-point drop.
    """
    e = float(effect)
    if not math.isfinite(e) or e <= 0:
        raise StatsError(f"effect={effect!r}; expected a positive shift (e.g. 0.05 for 5 points)")
    return max(1, math.ceil((_z_sum(alpha, power, alternative) * _sigma(sigma) / e) ** 2))


def paired_sigma(sigma: float, correlation: float) -> float:
    """Standard deviation of per-case differences of two runs with per-case spread ``sigma`` whose
    values correlate with ``correlation`` across cases: ``sigma * sqrt(2 (1 - rho))``."""
    rho = float(correlation)
    if not -1.0 <= rho <= 1.0:
        raise StatsError(f"correlation={correlation!r}; expected a number in [-1, 1]")
    return _sigma(sigma) * math.sqrt(2.0 * (1.0 - rho))


def labels_needed(half_width: float, disagreement_sd: float, *, alpha: float = DEFAULT_ALPHA) -> int:
    """Human labels for a PPI interval of half-width ``half_width`` when the judge is run on many
    more cases than are labelled: ``n = (z_{1-alpha/2} sd(label - judge) / half_width)^2``.

    For a 0/1 label and a 0/1 judge that disagree on a share ``d`` of cases with bias ``b``,
    ``sd(label - judge) = sqrt(d - b^2)`` (about ``sqrt(1 - accuracy)``).
    """
    h = float(half_width)
    if not math.isfinite(h) or h <= 0:
        raise StatsError(f"half_width={half_width!r}; expected a positive number (e.g. 0.05)")
    sd = _sigma(disagreement_sd)
    z = z_quantile(1.0 - check_alpha(alpha) / 2.0)
    return max(1, math.ceil((z * sd / h) ** 2))


@dataclass(frozen=True, slots=True)
class Detectable:
    """The minimum detectable effect of one group and where its sigma came from."""

    n: int
    sigma: float
    sigma_source: str  # "observed" | "assumed"
    mde: float

    def to_json(self) -> dict[str, float | int | str]:
        return {"n": self.n, "sigma": self.sigma, "sigma_source": self.sigma_source, "mde": self.mde}


def detectable_effects(groups: Mapping[K, ArrayLike], *, alpha: float = DEFAULT_ALPHA,
                       power: float = DEFAULT_POWER, alternative: str = "two-sided",
                       sigma: float | None = None) -> dict[K, Detectable]:
    """MDE per group (e.g. suite x language) for its current case count.

    The spread is the group's observed standard deviation (ddof=1) when it has at least
    :data:`MIN_OBSERVED` values (floored at :data:`MIN_SIGMA`), otherwise ``sigma`` or the default.
    An empty group is left out (no cases: nothing to detect).
    """
    out: dict[K, Detectable] = {}
    for key, values in groups.items():
        arr = vector(values, f"group {key!r}")
        if arr.size == 0:
            continue
        if arr.size >= MIN_OBSERVED:
            s, src = max(float(np.std(arr, ddof=1)), MIN_SIGMA), "observed"
        else:
            s, src = _sigma(sigma), "assumed"
        out[key] = Detectable(int(arr.size), s, src,
                              minimum_detectable_effect(int(arr.size), s, alpha=alpha, power=power,
                                                        alternative=alternative))
    return out


def sample_size_table(effects: tuple[float, ...] = (0.02, 0.03, 0.05, 0.10),
                      sigmas: tuple[float, ...] = (0.15, 0.25, 0.35, 0.5), *, alpha: float = DEFAULT_ALPHA,
                      power: float = DEFAULT_POWER, alternative: str = "two-sided") -> list[dict[str, float | int]]:
    """Rows ``{sigma, effect, cases}`` for the documentation table."""
    return [{"sigma": s, "effect": e,
             "cases": cases_needed(e, s, alpha=alpha, power=power, alternative=alternative)}
            for s in sigmas for e in effects]
