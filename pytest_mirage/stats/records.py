"""Per-case result records as the statistics read them: the JSON report's ``results`` entries.

A record is ``{suite, case_id, lang, model, metrics: {name: value | null}, outcome}`` with the
optional ``checks: {metric: bool}`` (did the case pass its threshold on that metric) and
``repeat`` (0-based sample index when each case was run several times). ``CaseResult`` objects
and plain mappings are both accepted; anything else is an error naming the record.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ._common import StatsError

OUTCOMES = ("passed", "failed", "error", "reference")


@dataclass(frozen=True, slots=True)
class CaseRecord:
    """One case answered by one model (one sample of it when ``repeat`` is set)."""

    suite: str
    case_id: str
    lang: str
    model: str
    metrics: Mapping[str, float | None]
    outcome: str = "passed"
    checks: Mapping[str, bool] = field(default_factory=dict)
    repeat: int = 0

    @property
    def errored(self) -> bool:
        return self.outcome == "error"

    def value(self, metric: str) -> float | None:
        """The metric's value, None when null, missing or when the case errored."""
        if self.errored:
            return None
        return self.metrics.get(metric)


def _getter(raw: Any) -> Any:
    if isinstance(raw, dict) or isinstance(raw, Mapping):  # dict first: the abc check is slow
        return raw.get
    return lambda name: getattr(raw, name, None)


def to_record(raw: Any, source: str = "record", index: int | None = None) -> CaseRecord:
    """Validate one result entry (mapping or ``CaseResult``) into a :class:`CaseRecord`.

    Errors name ``source[index]`` (e.g. ``baseline results[12]``) and the field.
    """
    if isinstance(raw, CaseRecord):
        return raw
    get = _getter(raw)

    def fail(message: str) -> StatsError:
        return StatsError(f"{source}{'' if index is None else f'[{index}]'}: {message}")

    texts = []
    for name in ("suite", "case_id", "lang", "model"):
        v = get(name)
        if type(v) is not str or not v:
            raise fail(f"field {name!r} is {v!r}; expected a non-empty string")
        texts.append(v)
    outcome = get("outcome")
    outcome = "passed" if outcome is None else outcome
    if outcome not in OUTCOMES:
        raise fail(f"field 'outcome' is {outcome!r}; expected one of {list(OUTCOMES)}")
    raw_metrics = get("metrics")
    if not isinstance(raw_metrics, dict | Mapping):
        raise fail(f"field 'metrics' is {type(raw_metrics).__name__}; expected an object of metric name -> "
                   "number or null")
    metrics: dict[str, float | None] = {}
    for name, v in raw_metrics.items():
        if v is None or (type(v) is float and v - v == 0.0):  # null, or a finite float (fast path)
            metrics[name] = v
            continue
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise fail(f"metrics.{name} is {v!r}; expected a number or null")
        try:
            f = float(v)
        except OverflowError:
            f = math.inf
        if not math.isfinite(f):
            raise fail(f"metrics.{name} is {v!r}; expected a finite number or null")
        metrics[name] = f
    raw_checks = get("checks") or {}
    if not isinstance(raw_checks, dict | Mapping) or not all(isinstance(v, bool) for v in raw_checks.values()):
        raise fail("field 'checks' must map metric names to true/false")
    repeat = get("repeat")
    repeat = 0 if repeat is None else repeat
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 0:
        raise fail(f"field 'repeat' is {repeat!r}; expected an integer >= 0")
    return CaseRecord(texts[0], texts[1], texts[2], texts[3], metrics, outcome, dict(raw_checks), repeat)


def to_records(rows: Iterable[Any], source: str = "results") -> list[CaseRecord]:
    """Validate every entry; errors name ``source[i]``."""
    return [to_record(r, source, i) for i, r in enumerate(rows)]


def records_from_report(report: Mapping[str, Any], source: str = "report") -> list[CaseRecord]:
    """The records of a JSON report (the ``results`` list), e.g. a saved baseline run."""
    if not isinstance(report, Mapping) or not isinstance(report.get("results"), list):
        raise StatsError(f"{source}: expected a pytest-mirage JSON report with a 'results' list")
    return to_records(report["results"], f"{source} results")
