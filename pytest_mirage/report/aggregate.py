"""Per suite x language x model aggregation: leaderboard rows and gate evaluation."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..harness import CaseResult
from ..thresholds import Rule, statistic

# The default leaderboard score: the mean of these metrics' means (each in [0, 1], higher is better),
# over the metrics that every model of the group has a value for, so rows stay comparable.
SCORE_METRICS: tuple[str, ...] = (
    "language_match", "citation_recall", "citation_map", "char3_recall", "rouge_l",
    "support_lexical", "hit_at_k", "mrr_at_k",
)


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    suite: str
    lang: str  # "all" for the suite-level row
    model: str
    rank: int
    score: float | None
    metrics: Mapping[str, float | None]
    n: int
    reference: bool

    def to_json(self) -> dict[str, object]:
        return {"suite": self.suite, "lang": self.lang, "model": self.model, "rank": self.rank,
                "score": _r(self.score), "metrics": {k: _r(v) for k, v in self.metrics.items()},
                "n": self.n, "reference": self.reference}


@dataclass(frozen=True, slots=True)
class GateResult:
    suite: str
    lang: str
    model: str
    expr: str
    source: str
    value: float | None
    passed: bool | None  # None: not evaluable (no non-null values)
    n: int

    def to_json(self) -> dict[str, object]:
        return {"suite": self.suite, "lang": self.lang, "model": self.model, "expr": self.expr,
                "source": self.source, "value": _r(self.value), "passed": self.passed, "n": self.n}

    def describe(self) -> str:
        val = "n/a (no values)" if self.value is None else f"{self.value:.3f}"
        return f"{self.suite} [{self.lang}] {self.model}: {self.expr} -> {val} ({self.source})"


def _r(v: float | None) -> float | None:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    return round(float(v), 6)


def _means(results: Sequence[CaseResult]) -> dict[str, float | None]:
    vals: dict[str, list[float]] = defaultdict(list)
    names: set[str] = set()
    for r in results:
        for k, v in r.metrics.items():
            names.add(k)
            if v is not None:
                vals[k].append(v)
    return {k: (float(np.mean(vals[k])) if vals[k] else None) for k in sorted(names)}


def leaderboard(results: Iterable[CaseResult], reference_models: Iterable[str] = (),
                higher_is_better: Mapping[str, bool] | None = None) -> list[LeaderboardRow]:
    """Rows per suite x language (and "all") x model, ranked by the default score (desc, then name)."""
    refs = set(reference_models)
    groups: dict[tuple[str, str], dict[str, list[CaseResult]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        if r.outcome == "error":
            continue
        groups[(r.suite, r.lang)][r.model].append(r)
        groups[(r.suite, "all")][r.model].append(r)
    rows: list[LeaderboardRow] = []
    for (suite, lang) in sorted(groups):
        by_model = groups[(suite, lang)]
        means = {m: _means(rs) for m, rs in by_model.items()}
        common = [k for k in SCORE_METRICS if all(means[m].get(k) is not None for m in means)]
        scored = []
        for m, mm in means.items():
            score = float(np.mean([mm[k] for k in common])) if common else None
            scored.append((m, score))
        scored.sort(key=lambda x: (-(x[1] if x[1] is not None else -math.inf), x[0]))
        for rank, (m, score) in enumerate(scored, start=1):
            rows.append(LeaderboardRow(suite, lang, m, rank, score, means[m], len(by_model[m]), m in refs))
    return rows


def aggregate_gates(results: Iterable[CaseResult], gates_by_suite: Mapping[str, Sequence[Rule]],
                    seed: int = 0,
                    model_values: Mapping[tuple[str, str, str], Mapping[str, float]] | None = None) -> list[GateResult]:
    """Evaluate gates per suite x language x model under test (reference systems are not gated).

    ``model_values`` holds model-level metrics (e.g. ``surrogate_rank``) per (suite, lang, model):
    a gate on one of them compares that single value (any statistic of one value is the value).
    A gate on a model-level metric without a value fails: it must not pass silently.
    """
    model_values = model_values or {}
    model_level = {m for v in model_values.values() for m in v}
    groups: dict[tuple[str, str, str], list[CaseResult]] = defaultdict(list)
    for r in results:
        if r.outcome in ("reference",):
            continue
        groups[(r.suite, r.lang, r.model)].append(r)
    out: list[GateResult] = []
    for (suite, lang, model) in sorted(groups):
        rs = groups[(suite, lang, model)]
        for rule in gates_by_suite.get(suite, ()):
            if not rule.applies_to(lang):
                continue
            assert rule.stat is not None
            mv = model_values.get((suite, lang, model), {})
            if rule.metric in mv or rule.metric.startswith("surrogate_") or rule.metric in model_level:
                if rule.metric in mv:
                    v = float(mv[rule.metric])
                    out.append(GateResult(suite, lang, model, rule.expr, rule.source, v, rule.check(v), 1))
                else:
                    out.append(GateResult(suite, lang, model, rule.expr, rule.source, None, False, 0))
                continue
            values = [r.metrics[rule.metric] for r in rs if r.metrics.get(rule.metric) is not None]
            passed_flags = [r.checks[rule.metric] for r in rs if rule.metric in r.checks]
            errors = sum(1 for r in rs if r.outcome == "error")
            v = statistic(rule.stat, values, passed_flags, seed=seed)  # type: ignore[arg-type]
            if math.isnan(v):
                out.append(GateResult(suite, lang, model, rule.expr, rule.source, None, None, len(values)))
                continue
            ok = rule.check(v)
            if errors and rule.stat != "pass_rate":
                # cases that errored have no value: a gate cannot pass on the cases that happened to work
                ok = False
            out.append(GateResult(suite, lang, model, rule.expr, rule.source, v, ok, len(values)))
    return out
