"""Shared pieces of the statistics core: the error type, input checks and normal quantiles."""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..defaults import ALPHA, BOOTSTRAP_RESAMPLES
from ..errors import StatsError as StatsError  # re-exported: the stats modules raise it

Alternative = Literal["two-sided", "less", "greater"]
ALTERNATIVES: tuple[str, ...] = ("two-sided", "less", "greater")
DEFAULT_ALPHA = ALPHA  # pytest_mirage.defaults: each default once
DEFAULT_BOOT = BOOTSTRAP_RESAMPLES

_NORMAL = NormalDist()


def check_alpha(alpha: float, name: str = "alpha") -> float:
    a = float(alpha)
    if not 0.0 < a < 1.0:
        raise StatsError(f"{name}={alpha!r}; expected a number strictly between 0 and 1 (e.g. 0.05)")
    return a


def check_power(power: float) -> float:
    p = float(power)
    if not 0.0 < p < 1.0:
        raise StatsError(f"power={power!r}; expected a number strictly between 0 and 1 (e.g. 0.8)")
    return p


def check_count(value: int, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or int(value) < minimum:
        raise StatsError(f"{name}={value!r}; expected an integer >= {minimum}")
    return int(value)


def check_alternative(alternative: str) -> Alternative:
    if alternative not in ALTERNATIVES:
        raise StatsError(f"alternative={alternative!r}; expected one of {list(ALTERNATIVES)}")
    return alternative  # type: ignore[return-value]


def z_quantile(p: float) -> float:
    """Standard normal quantile (``scipy.stats.norm.ppf``), from the standard library."""
    return _NORMAL.inv_cdf(p)


def vector(values: ArrayLike, name: str) -> NDArray[np.float64]:
    """A 1-d float vector of finite numbers, or a :class:`StatsError` naming the first bad value."""
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise StatsError(f"{name} must be a sequence of numbers ({exc})") from exc
    if arr.ndim != 1:
        raise StatsError(f"{name} must be a 1-d sequence of numbers; got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise StatsError(f"{name}[{i}] = {float(arr[i])!r} is not a finite number; drop null values "
                         "before computing a statistic (a null is not a 0)")
    return arr


def number(value: object, where: str) -> float:
    """A finite float from a JSON-like value; bools and strings are rejected."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
        raise StatsError(f"{where} is {value!r}; expected a number")
    try:
        v = float(value)
    except OverflowError as exc:
        raise StatsError(f"{where} is an integer too large for a float") from exc
    if not math.isfinite(v):
        raise StatsError(f"{where} is {value!r}; expected a finite number")
    return v
