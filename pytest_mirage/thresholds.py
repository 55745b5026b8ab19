"""Threshold (case level) and gate (aggregate level) rules: ``METRIC[.STAT][@LANG] OP VALUE``."""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .errors import ConfigError

OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt, "==": operator.eq,
}
# the opposite operator, used to say why a value failed ("0.33 < 0.50")
NEGATION = {">=": "<", ">": "<=", "<=": ">", "<": ">=", "==": "!="}
STATS = ("mean", "median", "min", "p10", "ci_low", "ci_high", "pass_rate")
RULE_RE = re.compile(
    r"^\s*(?P<metric>[A-Za-z_][A-Za-z0-9_]*)"
    r"(?:\.(?P<stat>[A-Za-z0-9_]+))?"
    r"(?:@(?P<lang>[A-Za-z0-9-]+))?"
    r"\s*(?P<op>>=|<=|==|>|<)\s*(?P<value>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$"
)


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


def parse_rule(expr: str, *, gate: bool, source: str = "") -> Rule:
    """Parse ``citation_recall >= 0.5`` / ``language_match.mean@hi >= 0.9``."""
    m = RULE_RE.match(expr)
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
        from .errors import did_you_mean

        raise ConfigError(f"{'gate'} {expr!r}: unknown statistic {stat!r}; expected one of "
                          f"{', '.join(STATS)}.{did_you_mean(stat, STATS)}")
    if m["lang"] is not None:
        from .langcodes import check_lang

        if err := check_lang(m["lang"]):
            raise ConfigError(f"{'gate' if gate else 'threshold'} {expr!r}: @{m['lang']}: {err}")
    if gate and stat is None:
        stat = "mean"
    return Rule(metric=m["metric"], op=m["op"], value=float(m["value"]), stat=stat,
                lang=m["lang"], source=source, expr=expr.strip())


def merge_rules(layers: Sequence[Sequence[Rule]]) -> list[Rule]:
    """Merge rule layers from lowest to highest precedence; a later rule with the same key wins."""
    out: dict[tuple[str, str | None, str | None], Rule] = {}
    for layer in layers:
        for rule in layer:
            out[rule.key] = rule
    return list(out.values())


def bootstrap_mean_ci(values: Sequence[float] | np.ndarray, *, n_boot: int = 1000, seed: int = 0,
                      alpha: float = 0.05) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean (seeded, so xdist and serial runs agree)."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return (math.nan, math.nan)
    if arr.size == 1:
        return (float(arr[0]), float(arr[0]))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, arr.size, size=(n_boot, arr.size))
    means = arr[idx].mean(axis=1)
    lo, hi = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return (float(lo), float(hi))


def statistic(stat: str, values: Sequence[float], passed: Sequence[bool] | None = None,
              seed: int = 0) -> float:
    """Compute a gate statistic over non-null case values."""
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
        lo, hi = bootstrap_mean_ci(arr, seed=seed)
        return lo if stat == "ci_low" else hi
    raise ConfigError(f"unknown statistic {stat!r}")
