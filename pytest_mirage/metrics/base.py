"""Metric protocol and registry. Metrics are pure functions of one :class:`Sample`.

The built-in metrics live in :mod:`.builtin`, which imports this module and registers them here
(:func:`register_builtin`); this module never imports it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..defaults import SCORING_MODES
from ..errors import ConfigError, MetricError, did_you_mean
from ..models.base import Answer
from ..suites.model import Case, Passage


class NotApplicable(Exception):
    """Raised by a metric that cannot be computed for a case; the value is null with this reason."""


@dataclass(frozen=True, slots=True)
class Sample:
    """Everything a metric may look at for one case and one model.

    ``context`` is what the generator saw: the case passages (oracle mode) or the retrieved chunks
    (retrieval mode). ``k`` is the cut-off of retrieval metrics. ``scoring`` selects the
    definitions of the citation and language metrics: ``"default"`` (the robust parser and the
    calibrated language decision) or ``"mirage"`` (MIRAGE-Bench's evaluation code reproduced; see
    :mod:`pytest_mirage.metrics.mirage` and ``docs/metrics.md``).
    """

    case: Case
    answer: Answer
    context: tuple[Passage, ...]
    k: int = 3
    mode: str = "oracle"
    scoring: str = "default"
    # per-sample memo of the text analysis every metric shares (metrics.analysis); not a value field
    _memo: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.scoring not in SCORINGS:
            raise ConfigError(f"scoring={self.scoring!r} for case {self.case.id!r}: expected one of "
                              f"{', '.join(repr(x) for x in SCORINGS)} ('mirage' reproduces MIRAGE-Bench's "
                              "evaluation code)")


SCORINGS = SCORING_MODES


MetricFn = Callable[[Sample], float]


@dataclass(frozen=True, slots=True)
class Metric:
    """A named metric: ``fn(sample) -> float`` (raise :class:`NotApplicable` for null)."""

    name: str
    fn: MetricFn
    higher_is_better: bool = True
    description: str = ""
    source: str = ""  # paper / section the definition comes from
    default: bool = True  # computed unless the user selects metrics explicitly
    scope: str = "case"  # "case": computed per case; "model": one value per suite x language x model
    # the values the metric can take (None: unbounded or unknown); a rule whose bound makes it always
    # true or never satisfiable on this range is a usage error
    bounds: tuple[float, float] | None = None


@dataclass(frozen=True, slots=True)
class MetricValues:
    values: Mapping[str, float | None]
    reasons: Mapping[str, str]  # why a value is null
    # why a (non-null) value is what it is, for failure messages: a metric function returns a float
    # with a ``detail`` attribute (metrics.verdicts.Explained) to give one
    details: Mapping[str, str] = field(default_factory=dict)


class MetricRegistry:
    """Metric name -> Metric. Plugins add theirs with the ``pytest_mirage_register_metrics`` hook."""

    def __init__(self) -> None:
        self._metrics: dict[str, Metric] = {}

    def register(self, metric: Metric) -> None:
        if not metric.name.isidentifier():
            raise ConfigError(f"metric name {metric.name!r} must be a snake_case identifier")
        self._metrics[metric.name] = metric

    def add(self, name: str, *, higher_is_better: bool = True, description: str = "", source: str = "",
            default: bool = True) -> Callable[[MetricFn], MetricFn]:
        """Decorator form: ``@registry.add("my_metric")``."""

        def deco(fn: MetricFn) -> MetricFn:
            self.register(Metric(name, fn, higher_is_better, description or (fn.__doc__ or "").strip(),
                                 source, default))
            return fn

        return deco

    def __contains__(self, name: object) -> bool:
        return name in self._metrics

    def __getitem__(self, name: str) -> Metric:
        try:
            return self._metrics[name]
        except KeyError:
            raise ConfigError(f"Unknown metric {name!r}.{did_you_mean(name, self._metrics)} "
                              f"Known metrics: {', '.join(sorted(self._metrics))}") from None

    @property
    def names(self) -> list[str]:
        return sorted(self._metrics)

    def defaults(self) -> list[str]:
        return [m.name for m in self._metrics.values() if m.default and m.scope == "case"]

    def case_level(self, names: Iterable[str]) -> list[str]:
        """The names among ``names`` that are computed per case."""
        return [n for n in names if self[n].scope == "case"]

    def compute(self, sample: Sample, names: Iterable[str]) -> MetricValues:
        try:
            return self._compute(sample, names)
        finally:
            sample._memo.clear()  # the shared analysis lives for one compute call, not with the sample

    def _compute(self, sample: Sample, names: Iterable[str]) -> MetricValues:
        values: dict[str, float | None] = {}
        reasons: dict[str, str] = {}
        details: dict[str, str] = {}
        for name in names:
            metric = self[name]
            try:
                v = metric.fn(sample)
            except NotApplicable as na:
                values[name] = None
                reasons[name] = str(na) or "not applicable"
                continue
            except MetricError:
                raise
            except Exception as exc:  # a bug or bad input: never silently 0
                raise MetricError(f"metric {name!r} failed on case {sample.case.id!r} "
                                  f"({sample.case.source}): {type(exc).__name__}: {exc}") from exc
            if v is None or (isinstance(v, float) and math.isnan(v)):
                raise MetricError(f"metric {name!r} returned {v!r} for case {sample.case.id!r}; "
                                  "metrics must return a number or raise NotApplicable(reason)")
            values[name] = float(v)
            detail = getattr(v, "detail", "")
            if detail:
                details[name] = str(detail)
        return MetricValues(values, reasons, details)


# The built-in metrics, filled by .builtin when it is imported. The package pytest_mirage.metrics
# imports .builtin, and Python imports the package before any of its modules, so the list is filled
# whenever this module can be imported; this module never imports .builtin (no import cycle).
_BUILTIN_METRICS: list[Metric] = []


def register_builtin(metrics: Iterable[Metric]) -> None:
    """Add ``metrics`` to the built-in set (called once, by :mod:`.builtin`)."""
    _BUILTIN_METRICS.extend(metrics)


def builtin_registry() -> MetricRegistry:
    """A registry holding all built-in metrics (defined in :mod:`pytest_mirage.metrics.builtin`)."""
    reg = MetricRegistry()
    for m in _BUILTIN_METRICS:
        reg.register(m)
    return reg
