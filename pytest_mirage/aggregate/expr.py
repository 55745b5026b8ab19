"""The rule language: thresholds (case level), gates (suite x language x model level)
``METRIC[.STAT][@LANG][?] OP VALUE`` and regression gates ``METRIC[.STAT][@LANG] drop|rise <= D``.

Pure syntax and precedence (CLI > ini > suite manifest): light to import (no numpy), so that
configuration and suite manifests can parse rules. What a statistic computes is
:mod:`.statistics`; evaluation is :mod:`.thresholds`, :mod:`.gates` and :mod:`.regression`.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from ..errors import ConfigError, StatsError, did_you_mean
from ..text.langcodes import check_lang
from .nulls import DEFAULT_MAX_NULL_SHARE, split_null_limit
from .statistics import PPI_STATS, gate_statistic, statistic_names

OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt, "==": operator.eq,
}
# the opposite operator, used to say why a value failed ("0.33 < 0.50")
NEGATION = {">=": "<", ">": "<=", "<=": ">", "<": ">=", "==": "!="}
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
    max_null_share: float = 0.0  # gates: "... nulls <= 10%" (aggregate/nulls.py)

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
    names = statistic_names()
    if stat is not None and stat not in names:
        raise ConfigError(f"gate {expr!r}: unknown statistic {stat!r}; expected one of "
                          f"{', '.join(names)}.{did_you_mean(stat, names)}")
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


def vacuous(rule: Rule, bounds: tuple[float, float] | None) -> str | None:
    """Why ``rule`` can never fail or never pass on a metric whose values lie in ``bounds``, or None.

    ``citation_recall >= -1`` protects nothing and ``language_match.mean <= 7`` neither; a gate
    that no value can meet fails every run. Both are configuration mistakes."""
    scale = gate_statistic(rule.stat).scale if rule.stat is not None else "value"
    if scale == "rate":
        bounds = (0.0, 1.0)
    elif scale == "free":
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



Direction = Literal["drop", "rise"]
REGRESSION_STATS = ("mean", "pass_rate")
GATE_RE = re.compile(
    r"^\s*(?P<metric>[A-Za-z_][A-Za-z0-9_]*)"
    r"(?:\.(?P<stat>[A-Za-z0-9_]+))?"
    r"(?:@(?P<lang>[A-Za-z0-9-]+))?"
    r"\s+(?P<dir>drop|rise)\s*<=\s*(?P<value>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$"
)


@dataclass(frozen=True, slots=True)
class RegressionGate:
    """``metric.stat@lang drop <= max_change``; ``lang=None`` gates every language separately,
    ``suite=None`` every suite."""

    metric: str
    max_change: float
    stat: str = "mean"
    lang: str | None = None
    direction: Direction = "drop"
    suite: str | None = None
    expr: str = ""
    source: str = ""

    def __post_init__(self) -> None:
        if self.stat not in REGRESSION_STATS:
            raise StatsError(f"regression gate {self.expr or self.metric!r}: statistic {self.stat!r} cannot be "
                             f"compared case by case; use one of {list(REGRESSION_STATS)}")
        if self.direction not in ("drop", "rise"):
            raise StatsError(f"regression gate direction {self.direction!r}; expected 'drop' or 'rise'")
        if not math.isfinite(self.max_change) or self.max_change < 0:
            raise StatsError(f"regression gate {self.expr or self.metric!r}: allowed change {self.max_change!r} "
                             "must be a finite number >= 0 (0 = no drop allowed)")

    @property
    def name(self) -> str:
        return self.metric + f".{self.stat}" + (f"@{self.lang}" if self.lang else "")

    def describe(self) -> str:
        return self.expr or f"{self.name} {self.direction} <= {self.max_change:g}"

    def for_metric(self, higher_is_better: bool, *, suite: str | None = None) -> RegressionGate:
        """This gate for a metric whose direction is known (and, with ``suite``, for that suite only):
        a ``drop`` gate on a lower-is-better metric, or a ``rise`` gate on a higher-is-better one, is
        an error, since it would gate improvements."""
        if (self.direction == "drop") != higher_is_better:
            want = "drop" if higher_is_better else "rise"
            raise StatsError(f"regression gate {self.describe()!r}: {self.metric} is "
                             f"{'higher' if higher_is_better else 'lower'}-is-better, so a regression is a {want}; "
                             f"write '{self.name} {want} <= {self.max_change:g}'")
        return replace(self, suite=suite if suite is not None else self.suite)


def parse_regression_gate(expr: str, *, source: str = "", suite: str | None = None,
                          higher_is_better: bool | None = None) -> RegressionGate:
    """Parse ``citation_recall.mean@hi drop <= 0.02`` (``rise`` for lower-is-better metrics).

    ``.STAT`` defaults to ``mean``; ``@LANG`` must be an ISO 639 code. When ``higher_is_better``
    is known (from the metric registry) a ``drop`` gate on a lower-is-better metric, or a ``rise``
    gate on a higher-is-better one, is an error: it would gate improvements.
    """
    m = GATE_RE.match(expr)
    if not m:
        raise StatsError(f"cannot parse regression gate {expr!r}: expected METRIC[.STAT][@LANG] drop <= D "
                         "(or 'rise <= D' for a metric where lower is better), e.g. "
                         "'citation_recall.mean@hi drop <= 0.02'")
    stat = m["stat"] or "mean"
    if stat not in REGRESSION_STATS:
        raise StatsError(f"regression gate {expr!r}: statistic {stat!r} cannot be compared case by case; "
                         f"expected one of {list(REGRESSION_STATS)}.{did_you_mean(stat, REGRESSION_STATS)}")
    lang = m["lang"]
    if lang is not None:
        if err := check_lang(lang):
            raise StatsError(f"regression gate {expr!r}: @{lang}: {err}")
    direction: Direction = "drop" if m["dir"] == "drop" else "rise"
    value = float(m["value"])
    if value < 0:
        raise StatsError(f"regression gate {expr!r}: the allowed {direction} must be >= 0 (0 = none allowed)")
    if stat == "pass_rate" and value >= 1:
        raise StatsError(f"regression gate {expr!r}: a pass rate cannot {direction} by {value:g} or more; "
                         "the gate could never fail")
    gate = RegressionGate(metric=m["metric"], max_change=value, stat=stat, lang=lang, direction=direction,
                          suite=suite, expr=expr.strip(), source=source)
    return gate if higher_is_better is None else gate.for_metric(higher_is_better, suite=suite)
