"""Small pure statistics used by the arena: Kendall's tau-b, R², percentile intervals.

Plain numpy so that the package needs no scipy at run time; the unit tests cross-check every
function against scipy.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import MirageError


class ArenaError(MirageError, ValueError):
    """Arena input (battles, features, surrogate files) that cannot be used as given."""


def _vector(values: ArrayLike, name: str) -> NDArray[np.float64]:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ArenaError(f"{name} must be a 1-d sequence of numbers; got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = [float(v) for v in arr[~np.isfinite(arr)]][:3]
        raise ArenaError(f"{name} contains non-finite values {bad}; every value must be a finite number")
    return arr


def kendall_tau(x: ArrayLike, y: ArrayLike) -> float:
    """Kendall's tau-b between two score vectors (ties handled as in Kendall 1945 / scipy).

    tau_b = (C - D) / sqrt((n0 - n1) (n0 - n2)) with C/D the concordant/discordant pairs,
    n0 = n(n-1)/2 and n1, n2 the pairs tied in x and in y. Raises when either vector is constant
    (tau is undefined there: there is no ranking to agree with).
    """
    xs, ys = _vector(x, "x"), _vector(y, "y")
    if xs.shape != ys.shape:
        raise ArenaError(f"kendall_tau needs vectors of equal length; got {xs.size} and {ys.size}")
    if xs.size < 2:
        raise ArenaError(f"kendall_tau needs at least 2 values; got {xs.size}")
    iu = np.triu_indices(xs.size, k=1)
    dx = np.sign(xs[:, None] - xs[None, :])[iu]
    dy = np.sign(ys[:, None] - ys[None, :])[iu]
    n0 = dx.size
    n1 = int(np.count_nonzero(dx == 0))
    n2 = int(np.count_nonzero(dy == 0))
    if n1 == n0 or n2 == n0:
        raise ArenaError("kendall_tau is undefined for a constant vector (all scores equal)")
    s = float(np.sum(dx * dy))
    return s / float(np.sqrt((n0 - n1) * (n0 - n2)))


def r2_score(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """Coefficient of determination R² = 1 - SS_res / SS_tot (SS_tot around the mean of y_true).

    Raises when y_true is constant (SS_tot = 0, R² undefined).
    """
    yt, yp = _vector(y_true, "y_true"), _vector(y_pred, "y_pred")
    if yt.shape != yp.shape:
        raise ArenaError(f"r2_score needs vectors of equal length; got {yt.size} and {yp.size}")
    ss_tot = float(np.sum((yt - yt.mean()) ** 2))
    # near-constant truth (e.g. two held-out models with equal strengths): R² is meaningless noise
    if yt.size < 2 or ss_tot <= 1e-12 * max(1.0, float(np.sum(yt ** 2))):
        raise ArenaError("r2_score is undefined when the true values are constant")
    return 1.0 - float(np.sum((yt - yp) ** 2)) / ss_tot


def percentile_interval(samples: ArrayLike, level: float = 0.95) -> tuple[float, float]:
    """The central ``level`` percentile interval (2.5/97.5 percentiles for 0.95), linear interpolation."""
    arr = _vector(samples, "samples")
    if not 0.0 < level < 1.0:
        raise ArenaError(f"confidence level must lie in (0, 1); got {level}")
    if arr.size == 0:
        raise ArenaError("percentile_interval needs at least one sample")
    lo, hi = np.percentile(arr, [50.0 * (1.0 - level), 50.0 * (1.0 + level)])
    return float(lo), float(hi)


def competition_ranks(scores: Sequence[float]) -> list[int]:
    """1-based ranks, higher score first; equal scores share the best rank ("1224" ranking)."""
    arr = _vector(scores, "scores")
    return [1 + int(np.count_nonzero(arr > s)) for s in arr]
