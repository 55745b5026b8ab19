"""Gates: a statistic of a metric over the cases of each suite x language x model under test,
compared with a bound (``language_match.mean@hi >= 0.9``); PPI bounds per suite x model."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..results import CaseResult
from .expr import Rule
from .nulls import count_nulls
from .statistics import PPI_STATS, statistic


@dataclass(frozen=True, slots=True)
class GateResult:
    """One gate evaluated for one suite x language x model."""

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
    metric: str = ""  # the gated metric
    nulls: int = 0  # cases (not errored) left out of the value because their metric is null

    def to_json(self) -> dict[str, object]:
        return {"suite": self.suite, "lang": self.lang, "model": self.model, "expr": self.expr,
                "source": self.source, "value": self.value, "passed": self.passed, "n": self.n,
                "errors": self.errors, "nulls": self.nulls, "note": self.note or None}

    @classmethod
    def from_json(cls, d: Mapping[str, object]) -> GateResult:
        value = d.get("value")
        return cls(str(d["suite"]), str(d["lang"]), str(d["model"]), str(d["expr"]), str(d.get("source") or ""),
                   float(value) if isinstance(value, int | float) else None,
                   d.get("passed") if isinstance(d.get("passed"), bool) else None,  # type: ignore[arg-type]
                   int(d.get("n") or 0), int(d.get("errors") or 0),  # type: ignore[call-overload]
                   str(d.get("note") or ""), nulls=int(d.get("nulls") or 0))  # type: ignore[call-overload]

    def describe(self) -> str:
        val = "n/a" if self.value is None else f"{self.value:.3f}"
        note = f"; {self.note}" if self.note else ""
        return f"{self.suite} [{self.lang}] {self.model}: {self.expr} -> {val} ({self.source}{note})"


def _gate(rule: Rule, suite: str, lang: str, model: str, value: float | None, passed: bool | None, n: int,
          errors: int = 0, note: str = "", nulls: int = 0) -> GateResult:
    return GateResult(suite, lang, model, rule.expr, rule.source, value, passed, n, errors, note, rule.metric, nulls)


def evaluate_gates(results: Iterable[CaseResult], gates_by_suite: Mapping[str, Sequence[Rule]], *,
                   model_level: Iterable[str] = (), seed: int = 0,
                   model_values: Mapping[tuple[str, str, str], Mapping[str, float]] | None = None,
                   model_level_reason: str | Mapping[str, str] = "",
                   ppi: Mapping[tuple[str, str, str], tuple[float, float]] | None = None) -> list[GateResult]:
    """Evaluate gates per suite x language x model under test (reference systems are not gated).

    Cases that errored have no values; a gate never passes on the cases that happened to work: with
    errors the gate fails (for ``pass_rate`` an errored case counts as not passed), and a group whose
    every case errored fails. ``model_level`` names the metrics computed once per suite x language x
    model (``model_values`` holds them); a gate on one of them without a value fails with
    ``model_level_reason`` (or, given as a mapping, the reason of its own suite, e.g. its surrogate
    file's error). A gate naming a language the suite has no selected cases in is reported
    as not evaluable. ``ppi`` holds the PPI interval of (suite, model, metric) for the ``ppi_low`` /
    ``ppi_high`` statistics, which are evaluated once per suite x model (``lang`` "all").
    """
    model_values = model_values or {}
    model_level = frozenset(model_level)
    groups: dict[tuple[str, str, str], list[CaseResult]] = defaultdict(list)
    langs: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in results:
        if r.outcome == "reference":
            continue
        groups[(r.suite, r.lang, r.model)].append(r)
        langs[(r.suite, r.model)].add(r.lang)
    out: list[GateResult] = []
    for (suite, lang, model) in sorted(groups):
        rs = groups[(suite, lang, model)]
        for rule in gates_by_suite.get(suite, ()):
            if not rule.applies_to(lang) or rule.stat in PPI_STATS:
                continue
            if rule.metric in model_level:
                # per suite when given as a mapping: a gate names its own suite's surrogate error
                why = (model_level_reason.get(suite, "") if isinstance(model_level_reason, Mapping)
                       else model_level_reason)
                out.append(_model_level_gate(rule, suite, lang, model, model_values.get((suite, lang, model), {}),
                                             why))
            else:
                out.append(_case_gate(rule, suite, lang, model, rs, seed))
    for (suite, model), present in sorted(langs.items()):
        out.extend(_suite_model_gates(gates_by_suite.get(suite, ()), suite, model, present, ppi or {}))
    return out


def _model_level_gate(rule: Rule, suite: str, lang: str, model: str, values: Mapping[str, float],
                      reason: str) -> GateResult:
    """A gate on a metric computed once per suite x language x model (the surrogate's score)."""
    if rule.metric in values:
        value = float(values[rule.metric])
        return _gate(rule, suite, lang, model, value, rule.check(value), 1)
    return _gate(rule, suite, lang, model, None, False, 0, note=reason or "no model-level value")


def _case_gate(rule: Rule, suite: str, lang: str, model: str, rs: Sequence[CaseResult], seed: int) -> GateResult:
    """A gate over the case values of one suite x language x model."""
    assert rule.stat is not None
    errors = sum(1 for r in rs if r.outcome == "error")
    values = [v for r in rs if (v := r.metrics.get(rule.metric)) is not None]
    passed_flags = [r.checks[rule.metric] for r in rs if rule.metric in r.checks]
    if rule.stat == "pass_rate" and passed_flags:
        passed_flags += [False] * errors  # an errored case did not pass its threshold
    v = statistic(rule.stat, values, passed_flags, seed=seed, clusters=_clusters(rs, rule.metric))
    note = f"{errors} of {len(rs)} cases errored" if errors else ""
    # nulls are counted, not dropped silently (aggregate/nulls.py); pass_rate already counts a null
    # as a case that did not pass its threshold
    nulls = None if rule.stat == "pass_rate" else count_nulls(
        (r.metrics.get(rule.metric) for r in rs if r.outcome != "error"), rule.max_null_share)
    null_note = nulls.note(r.reasons.get(rule.metric, "") for r in rs if r.outcome != "error") if nulls else ""
    too_many = nulls is not None and nulls.exceeded and not rule.optional
    note = "; ".join(x for x in (note, null_note) if x)
    n_null = nulls.nulls if nulls else 0
    if math.isnan(v):
        if errors:
            return _gate(rule, suite, lang, model, None, False, 0, errors, note, n_null)
        # a configured gate that cannot be computed protects nothing: it fails, with why
        reasons = Counter(r.reasons.get(rule.metric, "") for r in rs if r.reasons.get(rule.metric))
        because = f" ({reasons.most_common(1)[0][0]})" if reasons else ""
        why = (f"no case has a threshold on {rule.metric}" if rule.stat == "pass_rate"
               else f"every {rule.metric} value is null{because}")
        return _gate(rule, suite, lang, model, None, False, 0, 0, why, n_null)
    n = len(passed_flags) if rule.stat == "pass_rate" else len(values)
    return _gate(rule, suite, lang, model, v, rule.check(v) and not errors and not too_many, n, errors, note, n_null)


def _clusters(rs: Sequence[CaseResult], metric: str) -> list[list[float]] | None:
    """With repeated samples (``--mirage-repeat``), the values grouped by case (repeats of one case
    are not independent: interval statistics resample cases, not samples); None otherwise."""
    if not any(r.repeat for r in rs):
        return None
    by_case: dict[str, list[float]] = defaultdict(list)
    for r in rs:
        if (cv := r.metrics.get(metric)) is not None:
            by_case[r.case_id].append(cv)
    return [by_case[c] for c in sorted(by_case)]


def _suite_model_gates(rules: Sequence[Rule], suite: str, model: str, present: set[str],
                       ppi: Mapping[tuple[str, str, str], tuple[float, float]]) -> list[GateResult]:
    """Per suite x model: the PPI gates, and the gates naming a language with no selected case."""
    out = []
    for rule in rules:
        if rule.stat in PPI_STATS:
            interval = ppi.get((suite, model, rule.metric))
            if interval is None:
                out.append(_gate(rule, suite, "all", model, None, False, 0, 0,
                                 f"no PPI estimate of {rule.metric}: the suite needs human labels "
                                 "(labels.csv) with at least 2 matched cases of this model"))
                continue
            pv = interval[0] if rule.stat == "ppi_low" else interval[1]
            out.append(_gate(rule, suite, "all", model, pv, rule.check(pv), 1))
            continue
        if rule.lang is not None and rule.lang not in present:
            # a gate that cannot be evaluated protects nothing: it fails unless marked optional
            note = f"no selected case in language {rule.lang!r}"
            out.append(_gate(rule, suite, rule.lang, model, None, None if rule.optional else False, 0, 0,
                             note + ("" if rule.optional else f"; mark the gate optional as "
                                     f"'{rule.metric}.{rule.stat}@{rule.lang}?' if that is expected")))
    return out
