"""Case-level thresholds: does one case's value meet each rule that applies to its language."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .expr import Rule


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
