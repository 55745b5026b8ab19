"""Gate statistics: what ``METRIC.STAT`` computes over the non-null values of a group of cases.

A registry (name -> :class:`GateStatistic`) instead of a string switch: the rule parser accepts
exactly the registered names, and :func:`register_statistic` adds one (a plugin's, or a test's).
numpy is imported where a statistic is computed, so that parsing rules stays light.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import ConfigError

# prediction-powered bounds of a judge's mean from a suite's human labels: one value per suite x model,
# evaluated by the gate step from the PPI intervals (not from case values)
PPI_STATS = ("ppi_low", "ppi_high")


@dataclass(frozen=True, slots=True)
class StatContext:
    """What a statistic may read: the non-null values, the pass/fail flags of the cases' thresholds
    (an errored case counts as not passed), the seed of bootstrap statistics, and the values grouped
    by case when cases were answered several times (``--mirage-repeat``)."""

    values: Sequence[float]
    passed: Sequence[bool] = ()
    seed: int = 0
    clusters: Sequence[Sequence[float]] | None = None


@dataclass(frozen=True, slots=True)
class GateStatistic:
    """A named gate statistic. ``scale``: ``value`` (the metric's own range: a bound outside it is a
    configuration mistake), ``rate`` (in [0, 1]) or ``free`` (no range check, e.g. PPI bounds)."""

    name: str
    compute: Callable[[StatContext], float] | None  # None: evaluated by the gate step itself (PPI)
    scale: Literal["value", "rate", "free"] = "value"
    description: str = ""


def _np() -> Any:
    import numpy as np

    return np


def _values(ctx: StatContext) -> Any:
    return _np().asarray(ctx.values, dtype=float)


def _mean(ctx: StatContext) -> float:
    arr = _values(ctx)
    return math.nan if arr.size == 0 else float(arr.mean())


def _median(ctx: StatContext) -> float:
    arr = _values(ctx)
    return math.nan if arr.size == 0 else float(_np().median(arr))


def _min(ctx: StatContext) -> float:
    arr = _values(ctx)
    return math.nan if arr.size == 0 else float(arr.min())


def _p10(ctx: StatContext) -> float:
    arr = _values(ctx)
    return math.nan if arr.size == 0 else float(_np().quantile(arr, 0.10))


def _ci(end: int) -> Callable[[StatContext], float]:
    def compute(ctx: StatContext) -> float:
        from ..stats.intervals import bootstrap_mean_ci, clustered_bootstrap_ci

        arr = _values(ctx)
        if arr.size == 0:
            return math.nan
        if ctx.clusters is not None:
            iv = clustered_bootstrap_ci([c for c in ctx.clusters if len(c)], seed=ctx.seed)
            return float(iv.low if end == 0 else iv.high)
        return float(bootstrap_mean_ci(arr, seed=ctx.seed)[end])

    return compute


def _pass_rate(ctx: StatContext) -> float:
    if not ctx.passed:
        return math.nan
    return float(_np().mean(_np().asarray(ctx.passed, dtype=float)))


_REGISTRY: dict[str, GateStatistic] = {}


def register_statistic(stat: GateStatistic) -> None:
    """Add a gate statistic (a name already registered is an error: statistics are not overridden)."""
    if stat.name in _REGISTRY:
        raise ConfigError(f"gate statistic {stat.name!r} is already registered")
    if not stat.name.isidentifier():
        raise ConfigError(f"gate statistic name {stat.name!r}: expected letters, digits and '_'")
    _REGISTRY[stat.name] = stat


for _stat in (
    GateStatistic("mean", _mean, description="mean of the values"),
    GateStatistic("median", _median, description="median of the values"),
    GateStatistic("min", _min, description="smallest value"),
    GateStatistic("p10", _p10, description="10th percentile (linear interpolation)"),
    GateStatistic("ci_low", _ci(0), description="lower end of the 95% bootstrap interval of the mean"),
    GateStatistic("ci_high", _ci(1), description="upper end of the 95% bootstrap interval of the mean"),
    GateStatistic("pass_rate", _pass_rate, "rate", "share of cases that met their threshold"),
    GateStatistic("ppi_low", None, "free", "lower end of the prediction-powered interval (human labels)"),
    GateStatistic("ppi_high", None, "free", "upper end of the prediction-powered interval (human labels)"),
):
    register_statistic(_stat)


def statistic_names() -> tuple[str, ...]:
    """Every registered statistic, in registration order."""
    return tuple(_REGISTRY)


def gate_statistic(name: str) -> GateStatistic:
    try:
        return _REGISTRY[name]
    except KeyError:
        from ..errors import did_you_mean

        raise ConfigError(f"unknown statistic {name!r}; expected one of {', '.join(_REGISTRY)}."
                          f"{did_you_mean(name, _REGISTRY)}") from None


def statistic(stat: str, values: Sequence[float], passed: Sequence[bool] | None = None,
              seed: int = 0, clusters: Sequence[Sequence[float]] | None = None) -> float:
    """Compute a gate statistic over non-null case values (NaN when there is nothing to compute on).

    ``clusters`` (the values grouped by case, when every case was answered several times) makes
    ``ci_low``/``ci_high`` a bootstrap clustered by case: repeats of one case are not independent.
    """
    entry = gate_statistic(stat)
    if entry.compute is None:
        raise ConfigError(f"statistic {stat!r} is computed from human labels by the gate step, not from case values")
    return entry.compute(StatContext(values, tuple(passed or ()), seed, clusters))
