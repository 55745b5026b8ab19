"""How many null values a gate's statistic leaves out, and when that is too many.

A gate's mean is computed over the cases with a value; a case whose metric is null (a judge reply
that did not parse, a judge that refused, a metric undefined for that answer) is left out. Left out
silently, a model under test could steer a judge into nulls on its bad answers and pass on the
rest. So every gate counts its nulls, and fails when their share of the cases that did not error
exceeds the gate's limit: ``0`` by default (one null fails the gate, with the reason), or the limit
written after the gate, ``nulls <= 10%`` / ``nulls <= 0.1``::

    --mirage-gate "support_llm.mean >= 0.7 nulls <= 10%"
    [gates]
    "fluency_llm.mean@hi" = ">= 3.5 nulls <= 0.05"

The functions are pure; :func:`pytest_mirage.aggregate.gates.evaluate_gates` calls them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import StatsError

DEFAULT_MAX_NULL_SHARE = 0.0
_NULLS_RE = re.compile(r"\s+nulls\s*<=\s*(?P<value>[-+]?(?:\d+\.?\d*|\.\d+))\s*(?P<pct>%)?\s*$", re.I)


def split_null_limit(expr: str) -> tuple[str, float | None]:
    """``expr`` without a trailing ``nulls <= LIMIT`` clause, and the limit as a share (0 to 1;
    ``10%`` is 0.1), or None when there is no clause. A limit outside 0..1 (0..100%) is a
    :class:`~pytest_mirage.stats.StatsError`."""
    m = _NULLS_RE.search(expr)
    if m is None:
        return expr, None
    value = float(m["value"]) / (100.0 if m["pct"] else 1.0)
    if not 0.0 <= value <= 1.0:
        raise StatsError(f"{expr.strip()!r}: the null limit {m['value']}{m['pct'] or ''} is not a share; expected "
                         "nulls <= 0 to 1 (or 0% to 100%) of the cases that did not error")
    return expr[:m.start()], value


@dataclass(frozen=True, slots=True)
class NullCount:
    """A gate's cases: ``n`` with a value (what the statistic rests on), ``nulls`` without one (errored
    cases are counted apart), and the largest share of nulls the gate accepts."""

    n: int
    nulls: int
    limit: float = DEFAULT_MAX_NULL_SHARE

    @property
    def share(self) -> float:
        total = self.n + self.nulls
        return self.nulls / total if total else 0.0

    @property
    def exceeded(self) -> bool:
        return self.share > self.limit + 1e-12

    def note(self, reasons: Iterable[str] = ()) -> str:
        """``"2 of 6 cases null (judge reply unparseable ...); at most 0% allowed (nulls <= ...)"``,
        or "" without nulls. ``reasons``: the null reasons, the most common one is quoted."""
        if not self.nulls:
            return ""
        common = Counter(r for r in reasons if r).most_common(1)
        why = f" ({common[0][0][:160]})" if common else ""
        text = f"{self.nulls} of {self.n + self.nulls} cases null{why}"
        if self.exceeded:
            text += (f"; more than the {self.limit:.0%} the gate accepts: fix the cause, or allow them with "
                     f"'... nulls <= {max(self.share, 0.01):.0%}' after the gate")
        return text


def count_nulls(values: Iterable[float | None], limit: float | None = None) -> NullCount:
    """The :class:`NullCount` of a gate's per-case ``values`` (errored cases left out by the caller)."""
    vals = list(values)
    nulls = sum(1 for v in vals if v is None)
    return NullCount(len(vals) - nulls, nulls, DEFAULT_MAX_NULL_SHARE if limit is None else limit)
