"""Confidence intervals: Wilson for pass rates, percentile bootstrap for means (one group, many
groups at once, and clustered by case for repeated samples).

Every bootstrap is seeded and deterministic: the same values and seed give the same interval in a
serial run, under xdist and on another machine (numpy's PCG64 stream is platform independent).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._common import (
    DEFAULT_ALPHA,
    DEFAULT_BOOT,
    StatsError,
    check_alpha,
    check_count,
    vector,
    z_quantile,
)

K = TypeVar("K", bound=Hashable)

# resampled values held in memory at once (elements): bounds memory to ~64 MB per call
_CHUNK_ELEMENTS = 4_000_000


@dataclass(frozen=True, slots=True)
class Interval:
    """A point estimate with a two-sided ``level`` confidence interval over ``n`` units.

    ``method`` says how it was computed (``wilson``, ``bootstrap``, ``clustered-bootstrap``,
    ``normal``). An empty input gives NaN for all three numbers, never a 0.
    """

    estimate: float
    low: float
    high: float
    n: int
    level: float
    method: str

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2.0

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high

    def to_json(self) -> dict[str, float | int | str | None]:
        return {"estimate": _json_float(self.estimate), "low": _json_float(self.low),
                "high": _json_float(self.high), "n": self.n, "level": self.level, "method": self.method}


def _json_float(v: float) -> float | None:
    return None if math.isnan(v) else v


# ---------------------------------------------------------------- Wilson


def wilson_interval(successes: int, trials: int, *, alpha: float = DEFAULT_ALPHA) -> Interval:
    """Wilson score interval for a proportion (Wilson 1927), the interval to use for pass rates.

    With ``p = k/n`` and ``z = z_{1-alpha/2}``::

        centre = (p + z²/2n) / (1 + z²/n)
        half   = z sqrt(p(1-p)/n + z²/4n²) / (1 + z²/n)

    Unlike the normal (Wald) interval it stays inside [0, 1] and does not collapse to a point at
    0 or n successes (0 of 20 passed gives [0, 0.161], not [0, 0]). ``trials == 0`` gives NaNs.
    """
    a = check_alpha(alpha)
    n = check_count(trials, "trials", minimum=0)
    k = check_count(successes, "successes", minimum=0)
    if k > n:
        raise StatsError(f"successes={k} > trials={n}; a pass rate counts passed cases out of all cases")
    level = 1.0 - a
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0, level, "wilson")
    z = z_quantile(1.0 - a / 2.0)
    p = k / n
    z2n = z * z / n
    denom = 1.0 + z2n
    centre = (p + z2n / 2.0) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z2n / (4.0 * n)) / denom
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return Interval(p, low, high, n, level, "wilson")


def pass_rate_interval(passed: Sequence[bool] | NDArray[np.bool_], *, alpha: float = DEFAULT_ALPHA) -> Interval:
    """Wilson interval of the share of ``True`` in ``passed``."""
    flags = np.asarray(passed)
    if flags.ndim != 1 or (flags.size and flags.dtype != np.bool_):
        raise StatsError("passed must be a 1-d sequence of booleans (one per case)")
    return wilson_interval(int(flags.sum()), int(flags.size), alpha=alpha)


# ---------------------------------------------------------------- bootstrap


def _resampled_means(matrix: NDArray[np.float64], n_boot: int, seed: int) -> NDArray[np.float64]:
    """``(k, n_boot)`` bootstrap means of the ``k`` columns of ``matrix`` (shape ``(n, k)``), all
    columns resampled with the same case indices.

    The indices come from ``default_rng(seed).integers(0, n, size=(n_boot, n))``, drawn in row
    chunks (the PCG64 stream is the same whether drawn at once or in pieces), and each row mean is
    a reduction over a contiguous axis, so a column's means are bit-identical to the one-group
    computation ``values[idx].mean(axis=1)``.
    """
    n, k = matrix.shape
    rng = np.random.default_rng(seed)
    cols = np.ascontiguousarray(matrix.T)
    out = np.empty((k, n_boot), dtype=np.float64)
    rows = max(1, _CHUNK_ELEMENTS // max(1, n * k))
    for start in range(0, n_boot, rows):
        stop = min(n_boot, start + rows)
        idx = rng.integers(0, n, size=(stop - start, n), dtype=np.int32 if n < 2**31 else np.int64)
        # np.take keeps the gathered block C-contiguous (plain fancy indexing would not), so the
        # mean runs over a contiguous axis with numpy's pairwise summation, as for one group
        out[:, start:stop] = np.take(cols, idx, axis=1).mean(axis=2)
    return out


def bootstrap_mean_ci(values: Sequence[float] | NDArray[np.float64], *, n_boot: int = DEFAULT_BOOT,
                      seed: int = 0, alpha: float = DEFAULT_ALPHA) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean: the ``alpha/2`` and ``1 - alpha/2`` quantiles (linear
    interpolation) of ``n_boot`` means of resamples drawn with replacement.

    Gives exactly the numbers of ``pytest_mirage.thresholds.bootstrap_mean_ci`` for the same
    values and seed (it replaces it). Empty input gives ``(nan, nan)``; one value ``(v, v)``.
    """
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise StatsError(f"values must be 1-d; got shape {arr.shape}")
    if arr.size == 0:
        return (math.nan, math.nan)
    if arr.size == 1:
        return (float(arr[0]), float(arr[0]))
    a = check_alpha(alpha)
    means = _resampled_means(arr[:, None], check_count(n_boot, "n_boot"), seed)[0]
    lo, hi = np.quantile(means, [a / 2, 1 - a / 2])
    return (float(lo), float(hi))


def bootstrap_mean_cis(groups: Mapping[K, ArrayLike], *, n_boot: int = DEFAULT_BOOT, seed: int = 0,
                       alpha: float = DEFAULT_ALPHA) -> dict[K, Interval]:
    """Bootstrap CIs of the mean of many groups at once (e.g. every suite x language x model x
    metric of a run).

    Each group's interval equals ``bootstrap_mean_ci(group, seed=seed)``: groups of equal size
    share one index matrix and are resampled together as the columns of one matrix, so the cost is
    one resampling per distinct group size. Values must be finite (drop nulls first).
    """
    a = check_alpha(alpha)
    b = check_count(n_boot, "n_boot")
    level = 1.0 - a
    arrays = {key: vector(v, f"group {key!r}") for key, v in groups.items()}
    out: dict[K, Interval] = {}
    by_size: dict[int, list[K]] = {}
    for key, arr in arrays.items():
        if arr.size <= 1:
            v = float(arr[0]) if arr.size else math.nan
            out[key] = Interval(v, v, v, int(arr.size), level, "bootstrap")
        else:
            by_size.setdefault(int(arr.size), []).append(key)
    for size, keys in by_size.items():
        matrix = np.column_stack([arrays[k] for k in keys])
        means = _resampled_means(matrix, b, seed)
        q = np.quantile(means, [a / 2, 1 - a / 2], axis=1)
        for j, key in enumerate(keys):
            out[key] = Interval(float(arrays[key].mean()), float(q[0, j]), float(q[1, j]), size, level,
                                "bootstrap")
    return {key: out[key] for key in groups}


def clustered_bootstrap_ci(clusters: Sequence[ArrayLike], *, n_boot: int = DEFAULT_BOOT, seed: int = 0,
                           alpha: float = DEFAULT_ALPHA) -> Interval:
    """Bootstrap CI of the mean over all samples when each case was sampled several times.

    ``clusters[c]`` holds case ``c``'s values (one per repeat; nulls dropped). Cases are resampled
    with replacement and keep all their repeats, so the interval reflects that repeats of one case
    are not independent evidence (resampling single samples would give an interval too narrow by
    about sqrt(1 + (N-1) rho) for N repeats with intra-case correlation rho). The estimate is the
    mean over all samples (cases weighted by their number of samples); a case with no values is
    left out. With one value per case this equals :func:`bootstrap_mean_ci`.
    """
    a = check_alpha(alpha)
    b = check_count(n_boot, "n_boot")
    level = 1.0 - a
    arrays = [vector(c, f"clusters[{i}]") for i, c in enumerate(clusters)]
    arrays = [c for c in arrays if c.size]
    if not arrays:
        return Interval(math.nan, math.nan, math.nan, 0, level, "clustered-bootstrap")
    sums = np.array([c.sum() for c in arrays])
    counts = np.array([c.size for c in arrays], dtype=np.float64)
    total = np.concatenate(arrays)
    estimate = float(total.mean())
    m = len(arrays)
    if m == 1:
        return Interval(estimate, estimate, estimate, 1, level, "clustered-bootstrap")
    rng = np.random.default_rng(seed)
    stats = np.empty(b, dtype=np.float64)
    rows = max(1, _CHUNK_ELEMENTS // m)
    for start in range(0, b, rows):
        stop = min(b, start + rows)
        idx = rng.integers(0, m, size=(stop - start, m), dtype=np.int32 if m < 2**31 else np.int64)
        stats[start:stop] = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
    lo, hi = np.quantile(stats, [a / 2, 1 - a / 2])
    return Interval(estimate, float(lo), float(hi), m, level, "clustered-bootstrap")


def normal_interval(estimate: float, se: float, *, alpha: float = DEFAULT_ALPHA, n: int = 0) -> Interval:
    """``estimate ± z_{1-alpha/2} se``."""
    a = check_alpha(alpha)
    z = z_quantile(1.0 - a / 2.0)
    return Interval(estimate, estimate - z * se, estimate + z * se, n, 1.0 - a, "normal")
