"""``--mirage-suite-stats``: per-language statistics of the collected cases, with the spread of this
run's gated metrics when there are results."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence

from ..evaluate.context import RunContext
from ..report.suite_stats import stats_lines, suite_stats
from ..results import CaseResult
from ..suites.model import Case


def run_stats_lines(ctx: RunContext, collected: Sequence[tuple[str, Case]], results: Sequence[CaseResult]) -> list[str]:
    """Statistics lines of the collected (suite ref, case) pairs; sigma observed from ``results``."""
    by_ref: dict[str, dict[str, Case]] = defaultdict(dict)
    for ref, case in collected:
        by_ref[ref][case.id] = case
    sigma: dict[tuple[str, str], float] = {}
    if results:
        gated = {r.metric for ref in by_ref for r in ctx.rules(ctx.suite(ref)).gates}
        vals: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
        for res in results:
            for m in gated:
                v = res.metrics.get(m)
                if v is not None:
                    vals[(res.suite, res.lang, res.model, m)].append(v)
        for (suite, lang, _model, _m), vs in vals.items():
            if len(vs) > 1:
                sigma[(suite, lang)] = max(sigma.get((suite, lang), 0.0), statistics.pstdev(vs))
    rows = suite_stats([(ctx.suite(ref), list(cases.values())) for ref, cases in sorted(by_ref.items())], sigma)
    return stats_lines(rows)
