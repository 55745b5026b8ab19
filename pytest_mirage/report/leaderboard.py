"""The leaderboard: per suite x language (and "all") x model, metric means and a default score."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..results import CaseResult

# The default score: the mean of these metrics' means (each in [0, 1], higher is better), over the
# metrics that every model of the group has a value for, so rows stay comparable.
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
    # cases (of n) with a judge-computed metric null: a reply that did not parse, a refusal, a failed
    # judge call. A model that steers its judge into nulls shows here, not only in the gates
    judge_nulls: int = 0
    judge_null_reason: str | None = None  # the commonest reason of those nulls

    def judge_null_text(self) -> str:
        """``"2 of 6 cases (commonest: support_llm: ...)"``; "" without judge nulls."""
        if not self.judge_nulls:
            return ""
        why = f" (commonest: {self.judge_null_reason})" if self.judge_null_reason else ""
        return f"{self.judge_nulls} of {self.n} cases{why}"


REASON_CHARS = 160  # the commonest judge-null reason is quoted up to this length


def _judge_nulls(results: Sequence[CaseResult], judged: Collection[str]) -> tuple[int, str | None]:
    """Cases with a null judge metric, and the commonest reason (``metric: reason``)."""
    if not judged:
        return 0, None
    cases = 0
    reasons: Counter[str] = Counter()
    for r in results:
        null = [m for m in sorted(judged) if m in r.metrics and r.metrics[m] is None]
        if null:
            cases += 1
            reasons.update(f"{m}: {r.reasons.get(m) or 'no value'}"[:REASON_CHARS] for m in null)
    common = min(reasons.items(), key=lambda kv: (-kv[1], kv[0]))[0] if reasons else None  # ties: by text
    return cases, common


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)  # exact summation: the same mean in any order


def _means(results: Sequence[CaseResult]) -> dict[str, float | None]:
    vals: dict[str, list[float]] = defaultdict(list)
    names: set[str] = set()
    for r in results:
        for k, v in r.metrics.items():
            names.add(k)
            if v is not None:
                vals[k].append(v)
    return {k: (_mean(vals[k]) if vals[k] else None) for k in sorted(names)}


def build_leaderboard(results: Iterable[CaseResult], reference_models: Iterable[str] = (),
                      unscored: Iterable[str] = (),
                      judge_metrics: Mapping[str, Collection[str]] | None = None) -> list[LeaderboardRow]:
    """Rows per suite x language (and "all") x model, ranked by the default score (desc, then name).

    ``unscored`` rows (a retriever alone, which has retrieval metrics only) are shown with their
    metrics but no score, and do not narrow the metrics the other rows' scores average.
    ``judge_metrics``: suite -> the metrics its judges compute; each row counts its cases with one
    of them null (``judge_nulls``).
    """
    refs = set(reference_models)
    skip = set(unscored)
    groups: dict[tuple[str, str], dict[str, list[CaseResult]]] = defaultdict(lambda: defaultdict(list))
    errors: dict[tuple[str, str, str], int] = defaultdict(int)
    for r in results:
        if r.outcome == "error":
            # errored cases have no values: counted on the row, never averaged in as zeros
            for lang in (r.lang, "all"):
                errors[(r.suite, lang, r.model)] += 1
                groups[(r.suite, lang)].setdefault(r.model, [])
            continue
        groups[(r.suite, r.lang)][r.model].append(r)
        groups[(r.suite, "all")][r.model].append(r)
    rows: list[LeaderboardRow] = []
    for (suite, lang) in sorted(groups):
        by_model = groups[(suite, lang)]
        means = {m: _means(rs) for m, rs in by_model.items()}
        common = [k for k in SCORE_METRICS
                  if all(means[m].get(k) is not None for m in means if by_model[m] and m not in skip)]
        scored = []
        for m, mm in means.items():
            score = _mean([mm[k] for k in common]) if common and by_model[m] and m not in skip else None  # type: ignore[misc]
            scored.append((m, score))
        scored.sort(key=lambda x: (-(x[1] if x[1] is not None else -math.inf), x[0]))
        judged = (judge_metrics or {}).get(suite, ())
        for rank, (m, score) in enumerate(scored, start=1):
            nulls, reason = _judge_nulls(by_model[m], judged)
            rows.append(LeaderboardRow(suite, lang, m, rank, score, means[m], len(by_model[m]), m in refs,
                                       errors[(suite, lang, m)], nulls, reason))
    return rows
