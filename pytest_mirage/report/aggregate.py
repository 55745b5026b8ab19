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
    n: int  # cases with values
    reference: bool
    errors: int = 0  # cases whose model call or metric failed (not in the means)

    def to_json(self) -> dict[str, object]:
        return {"suite": self.suite, "lang": self.lang, "model": self.model, "rank": self.rank,
                "score": _r(self.score), "metrics": {k: _r(v) for k, v in self.metrics.items()},
                "n": self.n, "errors": self.errors, "reference": self.reference}


@dataclass(frozen=True, slots=True)
class GateResult:
    suite: str
    lang: str
    model: str
    expr: str
    source: str
    value: float | None
    passed: bool | None  # None: not evaluable (no values, no cases in that language)
    n: int
    errors: int = 0
    note: str = ""

    def to_json(self) -> dict[str, object]:
        return {"suite": self.suite, "lang": self.lang, "model": self.model, "expr": self.expr,
                "source": self.source, "value": _r(self.value), "passed": self.passed, "n": self.n,
                "errors": self.errors, "note": self.note or None}

    def describe(self) -> str:
        val = "n/a" if self.value is None else f"{self.value:.3f}"
        note = f"; {self.note}" if self.note else ""
        return f"{self.suite} [{self.lang}] {self.model}: {self.expr} -> {val} ({self.source}{note})"


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
    errors: dict[tuple[str, str, str], int] = defaultdict(int)
    for r in results:
        if r.outcome == "error":
            # errored cases have no values: counted on the row, never averaged in as zeros
            errors[(r.suite, r.lang, r.model)] += 1
            errors[(r.suite, "all", r.model)] += 1
            groups[(r.suite, r.lang)].setdefault(r.model, [])
            groups[(r.suite, "all")].setdefault(r.model, [])
            continue
        groups[(r.suite, r.lang)][r.model].append(r)
        groups[(r.suite, "all")][r.model].append(r)
    rows: list[LeaderboardRow] = []
    for (suite, lang) in sorted(groups):
        by_model = groups[(suite, lang)]
        means = {m: _means(rs) for m, rs in by_model.items()}
        common = [k for k in SCORE_METRICS if all(means[m].get(k) is not None for m in means if by_model[m])]
        scored = []
        for m, mm in means.items():
            score = float(np.mean([mm[k] for k in common])) if common and by_model[m] else None
            scored.append((m, score))
        scored.sort(key=lambda x: (-(x[1] if x[1] is not None else -math.inf), x[0]))
        for rank, (m, score) in enumerate(scored, start=1):
            rows.append(LeaderboardRow(suite, lang, m, rank, score, means[m], len(by_model[m]), m in refs,
                                       errors[(suite, lang, m)]))
    return rows


def aggregate_gates(results: Iterable[CaseResult], gates_by_suite: Mapping[str, Sequence[Rule]],
                    seed: int = 0,
                    model_values: Mapping[tuple[str, str, str], Mapping[str, float]] | None = None) -> list[GateResult]:
    """Evaluate gates per suite x language x model under test (reference systems are not gated).

    Cases that errored have no values; a gate never passes on the cases that happened to work: with
    errors the gate fails (for ``pass_rate`` an errored case counts as not passed), and a group whose
    every case errored fails. ``model_values`` holds model-level metrics (e.g. ``surrogate_rank``)
    per (suite, lang, model); a gate on one of them without a value fails. A gate naming a language
    the suite has no selected cases in is reported as not evaluable.
    """
    model_values = model_values or {}
    model_level = {m for v in model_values.values() for m in v}
    groups: dict[tuple[str, str, str], list[CaseResult]] = defaultdict(list)
    langs: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in results:
        if r.outcome in ("reference",):
            continue
        groups[(r.suite, r.lang, r.model)].append(r)
        langs[(r.suite, r.model)].add(r.lang)
    out: list[GateResult] = []
    for (suite, lang, model) in sorted(groups):
        rs = groups[(suite, lang, model)]
        errors = sum(1 for r in rs if r.outcome == "error")
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
                    out.append(GateResult(suite, lang, model, rule.expr, rule.source, None, False, 0,
                                          note="no model-level value (no trained surrogate?)"))
                continue
            values = [r.metrics[rule.metric] for r in rs if r.metrics.get(rule.metric) is not None]
            passed_flags = [r.checks[rule.metric] for r in rs if rule.metric in r.checks]
            if rule.stat == "pass_rate" and passed_flags:
                passed_flags += [False] * errors  # an errored case did not pass its threshold
            v = statistic(rule.stat, values, passed_flags, seed=seed)  # type: ignore[arg-type]
            note = f"{errors} of {len(rs)} cases errored" if errors else ""
            if math.isnan(v):
                if errors:
                    out.append(GateResult(suite, lang, model, rule.expr, rule.source, None, False, 0, errors, note))
                else:
                    # a configured gate that cannot be computed protects nothing: it fails, with why
                    # (null reasons are in the report, e.g. "the model returned no retrieved ids")
                    why = (f"no case has a threshold on {rule.metric}" if rule.stat == "pass_rate"
                           else f"every {rule.metric} value is null")
                    out.append(GateResult(suite, lang, model, rule.expr, rule.source, None, False, 0, 0, why))
                continue
            ok = rule.check(v) and not errors
            n = len(passed_flags) if rule.stat == "pass_rate" else len(values)
            out.append(GateResult(suite, lang, model, rule.expr, rule.source, v, ok, n, errors, note))
    for (suite, model), present in sorted(langs.items()):
        for rule in gates_by_suite.get(suite, ()):
            if rule.lang is not None and rule.lang not in present:
                out.append(GateResult(suite, rule.lang, model, rule.expr, rule.source, None, None, 0, 0,
                                      f"no selected case in language {rule.lang!r}"))
    return out
