"""Thresholds (case level) and gates (suite x language x model level): ``METRIC[.STAT][@LANG] OP VALUE``.

One module for the whole concept: parsing, precedence (CLI > ini > suite manifest), the case-level
check and the gate evaluation over a run's results.
"""

from __future__ import annotations

import math
import operator
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .errors import ConfigError, did_you_mean
from .langcodes import check_lang
from .results import CaseResult
from .stats.intervals import bootstrap_mean_ci, clustered_bootstrap_ci
from .stats.nulls import count_nulls

OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt, "==": operator.eq,
}
# the opposite operator, used to say why a value failed ("0.33 < 0.50")
NEGATION = {">=": "<", ">": "<=", "<=": ">", "<": ">=", "==": "!="}
STATS = ("mean", "median", "min", "p10", "ci_low", "ci_high", "pass_rate", "ppi_low", "ppi_high")
# prediction-powered bounds of a judge's mean from a suite's human labels: one value per suite x model
PPI_STATS = ("ppi_low", "ppi_high")
RULE_RE = re.compile(
    r"^\s*(?P<metric>[A-Za-z_][A-Za-z0-9_]*)"
    r"(?:\.(?P<stat>[A-Za-z0-9_]+))?"
    r"(?:@(?P<lang>[A-Za-z0-9-]+))?"
    r"(?P<optional>\?)?"
    r"\s*(?P<op>>=|<=|==|>|<)\s*(?P<value>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$"
)
_REGRESSION_RE = re.compile(r"\s(drop|rise)\s*<=")


def is_regression_gate(expr: str) -> bool:
    """``citation_recall.mean@hi drop <= 0.02`` (against a baseline), not ``... >= 0.5`` (a floor)."""
    return _REGRESSION_RE.search(expr) is not None


@dataclass(frozen=True, slots=True)
class Rule:
    """A parsed threshold or gate with where it came from."""

    metric: str
    op: str
    value: float
    stat: str | None = None
    lang: str | None = None
    source: str = ""
    expr: str = ""
    optional: bool = False  # "METRIC?": may be null / not evaluable without failing
    max_null_share: float = 0.0  # gates: "... nulls <= 10%" (stats/nulls.py)

    @property
    def key(self) -> tuple[str, str | None, str | None]:
        """Rules with the same key override each other by precedence."""
        return (self.metric, self.stat, self.lang)

    def check(self, observed: float) -> bool:
        return OPS[self.op](observed, self.value)

    def describe_failure(self, observed: float) -> str:
        name = self.metric + (f".{self.stat}" if self.stat else "") + (f"@{self.lang}" if self.lang else "")
        return f"{name} {observed:.2f} {NEGATION[self.op]} {self.value:.2f} ({self.source})"

    def applies_to(self, lang: str) -> bool:
        return self.lang is None or self.lang == lang


def parse_rule(expr: str, *, gate: bool, source: str = "", optional: bool = False) -> Rule:
    """Parse ``citation_recall >= 0.5`` / ``language_match.mean@hi >= 0.9``.

    A ``?`` after the selector (``language_match.mean@sw? >= 0.9``), or ``optional=True``, makes the
    rule optional: a case whose value is null, or a gate that cannot be evaluated, does not fail.
    """
    from .stats import StatsError
    from .stats.nulls import DEFAULT_MAX_NULL_SHARE, split_null_limit

    try:
        core, null_limit = split_null_limit(expr)
    except StatsError as exc:
        raise ConfigError(f"gate {exc}") from None
    if null_limit is not None and not gate:
        raise ConfigError(f"threshold {expr!r}: 'nulls <= ...' is for gates (a share of a group's cases); "
                          "a case threshold fails on a null value unless marked optional with '?'")
    m = RULE_RE.match(core)
    if not m:
        kind = "gate" if gate else "threshold"
        raise ConfigError(
            f"cannot parse {kind} {expr!r}: expected METRIC[.STAT][@LANG] OP VALUE with OP one of "
            f">= > <= < ==, e.g. {'language_match.mean >= 0.9' if gate else 'citation_recall >= 0.5'}"
        )
    stat = m["stat"]
    if stat is not None and not gate:
        raise ConfigError(f"threshold {expr!r}: statistics ('.{stat}') are for gates only; "
                          "a case threshold compares the case's own value (use --mirage-gate)")
    if stat is not None and stat not in STATS:
        raise ConfigError(f"gate {expr!r}: unknown statistic {stat!r}; expected one of "
                          f"{', '.join(STATS)}.{did_you_mean(stat, STATS)}")
    if stat in PPI_STATS and m["lang"] is not None:
        raise ConfigError(f"gate {expr!r}: {stat} is computed per suite x model over all its languages (the "
                          "human labels are too few to split); drop the @LANG")
    if m["lang"] is not None and m["lang"].lower() == "all":
        kind = "gate" if gate else "threshold"
        raise ConfigError(f"{kind} {expr!r}: @all is not a language; a {kind} without @LANG already applies to "
                          f"every language (each one on its own): drop '@all'")
    if m["lang"] is not None:
        if err := check_lang(m["lang"]):
            raise ConfigError(f"{'gate' if gate else 'threshold'} {expr!r}: @{m['lang']}: {err}")
    if gate and stat is None:
        stat = "mean"
    value = float(m["value"])
    if not math.isfinite(value):
        raise ConfigError(f"{'gate' if gate else 'threshold'} {expr!r}: the bound {m['value']} is not a finite "
                          "number")
    return Rule(metric=m["metric"], op=m["op"], value=value, stat=stat, lang=m["lang"], source=source,
                expr=expr.strip(), optional=optional or m["optional"] is not None,
                max_null_share=DEFAULT_MAX_NULL_SHARE if null_limit is None else null_limit)


VALUE_STATS = ("mean", "median", "min", "p10", "ci_low", "ci_high")  # statistics on the metric's own scale


def vacuous(rule: Rule, bounds: tuple[float, float] | None) -> str | None:
    """Why ``rule`` can never fail or never pass on a metric whose values lie in ``bounds``, or None.

    ``citation_recall >= -1`` protects nothing and ``language_match.mean <= 7`` neither; a gate
    that no value can meet fails every run. Both are configuration mistakes."""
    if rule.stat == "pass_rate":
        bounds = (0.0, 1.0)
    elif rule.stat is not None and rule.stat not in VALUE_STATS:
        return None  # PPI bounds may leave the metric's range
    if bounds is None:
        return None
    lo, hi = bounds
    v, op = rule.value, rule.op
    # a bound equal to an end of the range ("citation_recall >= 0") is allowed: it switches a
    # manifest rule off on purpose; one beyond the range is a mistake
    always = {">=": v < lo, ">": v < lo, "<=": v > hi, "<": v > hi, "==": False}[op]
    never = {">=": v > hi, ">": v >= hi, "<=": v < lo, "<": v <= lo, "==": not lo <= v <= hi}[op]
    if not (always or never):
        return None
    rng = f"[{lo:g}, {hi:g}]"
    what = "is always true" if always else "can never be met"
    return (f"{rule.expr!r} ({rule.source}) {what}: {rule.metric} takes values in {rng}; choose a bound inside "
            "that range")


def merge_rules(layers: Sequence[Sequence[Rule]]) -> list[Rule]:
    """Merge rule layers from lowest to highest precedence; a later rule with the same key wins."""
    out: dict[tuple[str, str | None, str | None], Rule] = {}
    for layer in layers:
        for rule in layer:
            out[rule.key] = rule
    return list(out.values())


def statistic(stat: str, values: Sequence[float], passed: Sequence[bool] | None = None,
              seed: int = 0, clusters: Sequence[Sequence[float]] | None = None) -> float:
    """Compute a gate statistic over non-null case values.

    ``clusters`` (the values grouped by case, when every case was answered several times) makes
    ``ci_low``/``ci_high`` a bootstrap clustered by case: repeats of one case are not independent.
    """
    if stat == "pass_rate":
        if not passed:
            return math.nan
        return float(np.mean(np.asarray(passed, dtype=float)))
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return math.nan
    if stat == "mean":
        return float(arr.mean())
    if stat == "median":
        return float(np.median(arr))
    if stat == "min":
        return float(arr.min())
    if stat == "p10":
        return float(np.quantile(arr, 0.10))
    if stat in ("ci_low", "ci_high"):
        if clusters is not None:
            iv = clustered_bootstrap_ci([c for c in clusters if len(c)], seed=seed)
            return iv.low if stat == "ci_low" else iv.high
        lo, hi = bootstrap_mean_ci(arr, seed=seed)
        return lo if stat == "ci_low" else hi
    raise ConfigError(f"unknown statistic {stat!r}")


# ---------------------------------------------------------------------------- case thresholds
def check_thresholds(values: Mapping[str, float | None], rules: Iterable[Rule], lang: str,
                     reasons: Mapping[str, str] | None = None,
                     aliases: Mapping[str, str] | None = None) -> tuple[list[str], dict[str, bool]]:
    """Case-level checks: failure messages and metric -> passed.

    A threshold on a metric whose value is null fails the case (nothing was shown to meet it),
    with the reason, unless the threshold is optional (``metric?``).
    """
    failures: list[str] = []
    checks: dict[str, bool] = {}
    for rule in rules:
        if not rule.applies_to(lang):
            continue
        v = values.get(rule.metric)
        if v is None:
            if not rule.optional:
                why = (reasons or {}).get(rule.metric, "no value")
                failures.append(f"{rule.metric} is null ({why}): the threshold {rule.expr!r} cannot be met "
                                f"({rule.source}); mark it optional as '{rule.metric}?' if a null value is fine")
                checks[rule.metric] = False
            continue
        ok = rule.check(v)
        checks[rule.metric] = checks.get(rule.metric, True) and ok
        if not ok:
            alias = (aliases or {}).get(rule.metric)
            failures.append(rule.describe_failure(v) + (f" [{rule.metric} = {alias}]" if alias else ""))
    return failures, checks


# ---------------------------------------------------------------------------- gates
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
    ``model_level_reason`` (a mapping: the reason of each suite, e.g. its surrogate file's error). A gate naming a language the suite has no selected cases in is reported
    as not evaluable. ``ppi`` holds the PPI interval of (suite, model, metric) for the ``ppi_low`` /
    ``ppi_high`` statistics, which are evaluated once per suite x model (``lang`` "all").
    """
    model_values = model_values or {}
    ppi = ppi or {}
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
        errors = sum(1 for r in rs if r.outcome == "error")
        for rule in gates_by_suite.get(suite, ()):
            if not rule.applies_to(lang) or rule.stat in PPI_STATS:
                continue
            assert rule.stat is not None
            if rule.metric in model_level:
                mv = model_values.get((suite, lang, model), {})
                if rule.metric in mv:
                    mval = float(mv[rule.metric])
                    out.append(_gate(rule, suite, lang, model, mval, rule.check(mval), 1))
                else:
                    # per suite when given as a mapping: a gate names its own suite's surrogate error
                    why = (model_level_reason.get(suite, "") if isinstance(model_level_reason, Mapping)
                           else model_level_reason)
                    out.append(_gate(rule, suite, lang, model, None, False, 0,
                                          note=why or "no model-level value"))
                continue
            values = [v for r in rs if (v := r.metrics.get(rule.metric)) is not None]
            passed_flags = [r.checks[rule.metric] for r in rs if rule.metric in r.checks]
            if rule.stat == "pass_rate" and passed_flags:
                passed_flags += [False] * errors  # an errored case did not pass its threshold
            clusters = None
            if any(r.repeat for r in rs):
                by_case: dict[str, list[float]] = defaultdict(list)
                for r in rs:
                    if (cv := r.metrics.get(rule.metric)) is not None:
                        by_case[r.case_id].append(cv)
                clusters = [by_case[c] for c in sorted(by_case)]
            v = statistic(rule.stat, values, passed_flags, seed=seed, clusters=clusters)
            note = f"{errors} of {len(rs)} cases errored" if errors else ""
            # nulls are counted, not dropped silently (stats/nulls.py); pass_rate already counts a
            # null as a case that did not pass its threshold
            nulls = None if rule.stat == "pass_rate" else count_nulls(
                (r.metrics.get(rule.metric) for r in rs if r.outcome != "error"), rule.max_null_share)
            null_note = nulls.note(r.reasons.get(rule.metric, "") for r in rs if r.outcome != "error") if nulls else ""
            too_many = nulls is not None and nulls.exceeded and not rule.optional
            note = "; ".join(x for x in (note, null_note) if x)
            n_null = nulls.nulls if nulls else 0
            if math.isnan(v):
                if errors:
                    out.append(_gate(rule, suite, lang, model, None, False, 0, errors, note, n_null))
                else:
                    # a configured gate that cannot be computed protects nothing: it fails, with why
                    reasons = Counter(r.reasons.get(rule.metric, "") for r in rs if r.reasons.get(rule.metric))
                    because = f" ({reasons.most_common(1)[0][0]})" if reasons else ""
                    why = (f"no case has a threshold on {rule.metric}" if rule.stat == "pass_rate"
                           else f"every {rule.metric} value is null{because}")
                    out.append(_gate(rule, suite, lang, model, None, False, 0, 0, why, n_null))
                continue
            ok = rule.check(v) and not errors and not too_many
            n = len(passed_flags) if rule.stat == "pass_rate" else len(values)
            out.append(_gate(rule, suite, lang, model, v, ok, n, errors, note, n_null))
    for (suite, model), present in sorted(langs.items()):
        for rule in gates_by_suite.get(suite, ()):
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
                out.append(_gate(rule, suite, rule.lang, model, None,
                                      None if rule.optional else False, 0, 0,
                                      note + ("" if rule.optional else f"; mark the gate optional as "
                                              f"'{rule.metric}.{rule.stat}@{rule.lang}?' if that is expected")))
    return out
