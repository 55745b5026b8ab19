"""Head-to-head comparison of two models: wins, ties and losses, a sign test and a Wilson interval.

For two models answering the same cases, each case is a win for A (A's metric value is better by
more than ``tolerance``), a loss, or a tie. The exact two-sided sign test asks whether wins and
losses could be a fair coin (ties carry no information about which model is better and are left
out, as in the classical sign test); the Wilson interval bounds A's win rate among decisive cases.
The same statistics are computed for arena battles, with the query as the unit: battles judged in
both orders on one query are not independent, so a query counts once (won, lost or tied on net).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ._common import DEFAULT_ALPHA, StatsError, check_alpha, check_count
from .intervals import Interval, wilson_interval
from .records import to_record


class BattleLike(Protocol):
    """An arena battle (``pytest_mirage.arena.bt.Battle`` fits)."""

    @property
    def query_id(self) -> str: ...
    @property
    def model_a(self) -> str: ...
    @property
    def model_b(self) -> str: ...
    @property
    def winner(self) -> str: ...


def sign_test(wins: int, losses: int) -> float:
    """Exact two-sided sign test: ``min(1, 2 P(X <= min(w, l)))`` with ``X ~ Binomial(w + l, 1/2)``
    (scipy's ``binomtest(w, w + l).pvalue``); NaN when there is no decisive comparison."""
    w = check_count(wins, "wins", minimum=0)
    lo = check_count(losses, "losses", minimum=0)
    n = w + lo
    if n == 0:
        return math.nan
    if w == lo:
        return 1.0
    from scipy.special import bdtr  # type: ignore[import-untyped]

    return min(1.0, 2.0 * float(bdtr(min(w, lo), n, 0.5)))


@dataclass(frozen=True, slots=True)
class HeadToHead:
    """``model_a`` against ``model_b``: counts, the sign-test p-value and A's win rate among the
    decisive comparisons (Wilson interval). ``unit`` says what was counted (cases or queries);
    ``unpaired``: units where one model had no value."""

    model_a: str
    model_b: str
    wins: int
    ties: int
    losses: int
    p_value: float
    win_rate: Interval
    unit: str
    metric: str = ""
    unpaired: int = 0

    @property
    def n(self) -> int:
        return self.wins + self.ties + self.losses

    @property
    def win_share(self) -> float:
        """(wins + ties / 2) / all units: the share with ties split evenly."""
        return (self.wins + self.ties / 2.0) / self.n if self.n else math.nan

    def significant(self, alpha: float = DEFAULT_ALPHA) -> bool:
        return not math.isnan(self.p_value) and self.p_value <= check_alpha(alpha)

    def describe(self) -> str:
        what = f" on {self.metric}" if self.metric else ""
        rate = ("n/a" if math.isnan(self.win_rate.estimate) else
                f"{self.win_rate.estimate:.1%} [{self.win_rate.low:.1%}, {self.win_rate.high:.1%}]")
        p = "n/a" if math.isnan(self.p_value) else f"{self.p_value:.3g}"
        return (f"{self.model_a} vs {self.model_b}{what}: {self.wins} wins, {self.ties} ties, {self.losses} losses "
                f"over {self.n} {self.unit}; win rate {rate}; sign test p={p}")

    def to_json(self) -> dict[str, Any]:
        return {"model_a": self.model_a, "model_b": self.model_b, "metric": self.metric or None, "unit": self.unit,
                "wins": self.wins, "ties": self.ties, "losses": self.losses, "unpaired": self.unpaired,
                "p_value": None if math.isnan(self.p_value) else self.p_value,
                "win_rate": self.win_rate.to_json()}


def from_counts(model_a: str, model_b: str, wins: int, ties: int, losses: int, *, unit: str = "cases",
                metric: str = "", unpaired: int = 0, alpha: float = DEFAULT_ALPHA) -> HeadToHead:
    check_count(ties, "ties", minimum=0)
    return HeadToHead(model_a, model_b, wins, ties, losses, sign_test(wins, losses),
                      wilson_interval(wins, wins + losses, alpha=alpha), unit, metric, unpaired)


def compare_values(a: Mapping[str, float | None], b: Mapping[str, float | None], *, model_a: str = "A",
                   model_b: str = "B", metric: str = "", tolerance: float = 0.0, higher_is_better: bool = True,
                   alpha: float = DEFAULT_ALPHA) -> HeadToHead:
    """Per-case head-to-head from two mappings case id -> value (None = no value)."""
    tol = float(tolerance)
    if not math.isfinite(tol) or tol < 0:
        raise StatsError(f"tolerance={tolerance!r}; expected a number >= 0 (differences within it are ties)")
    wins = ties = losses = unpaired = 0
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key), b.get(key)
        if va is None or vb is None:
            unpaired += 1
            continue
        diff = (va - vb) if higher_is_better else (vb - va)
        if abs(diff) <= tol:
            ties += 1
        elif diff > 0:
            wins += 1
        else:
            losses += 1
    return from_counts(model_a, model_b, wins, ties, losses, metric=metric, unpaired=unpaired, alpha=alpha)


def head_to_head(records: Iterable[Any], model_a: str, model_b: str, metric: str, *, suite: str | None = None,
                 lang: str | None = None, tolerance: float = 0.0, higher_is_better: bool = True,
                 alpha: float = DEFAULT_ALPHA) -> HeadToHead:
    """Head-to-head of two models of one run on ``metric`` over the cases both answered.

    A case is (suite, case_id); ``suite``/``lang`` restrict the cases. With repeated samples a
    case's value is the mean over its repeats. A model absent from the records is an error.
    """
    if model_a == model_b:
        raise StatsError(f"head_to_head needs two different models; got {model_a!r} twice")
    vals: dict[str, dict[str, list[float]]] = {model_a: defaultdict(list), model_b: defaultdict(list)}
    seen: dict[str, set[str]] = {model_a: set(), model_b: set()}
    models: set[str] = set()
    for i, raw in enumerate(records):
        r = to_record(raw, "results", i)
        models.add(r.model)
        if r.model not in vals or (suite is not None and r.suite != suite) or (lang is not None and r.lang != lang):
            continue
        key = f"{r.suite}\x1f{r.case_id}"
        seen[r.model].add(key)
        v = r.value(metric)
        if v is not None:
            vals[r.model][key].append(v)
    for m in (model_a, model_b):
        if m not in models:
            from ..errors import did_you_mean

            raise StatsError(f"model {m!r} is not in the results{did_you_mean(m, models)}; models: {sorted(models)}")

    def means(m: str) -> dict[str, float | None]:
        def mean(v: list[float]) -> float:
            return float(v[0]) if len(v) == 1 else float(np.mean(v))  # one sample (no repeats): its value

        return {k: (mean(vals[m][k]) if vals[m].get(k) else None) for k in seen[m]}

    return compare_values(means(model_a), means(model_b), model_a=model_a, model_b=model_b, metric=metric,
                          tolerance=tolerance, higher_is_better=higher_is_better, alpha=alpha)


def battle_head_to_head(battles: Iterable[BattleLike | tuple[str, str]], model_a: str, model_b: str, *,
                        by_query: bool = True, alpha: float = DEFAULT_ALPHA) -> HeadToHead:
    """Head-to-head of two arena models from judged battles.

    ``battles``: arena battles (``query_id``, ``model_a``, ``model_b``, ``winner`` "A"/"B"/"tie")
    or plain ``(winner, loser)`` pairs. Battles between other models are ignored. ``by_query``
    (battles only): each query counts once, by the net of its battles between the two models, so
    both presentation orders of one query are not counted as two independent wins.
    """
    if model_a == model_b:
        raise StatsError(f"battle_head_to_head needs two different models; got {model_a!r} twice")
    pair = {model_a, model_b}
    net: dict[str, int] = defaultdict(int)
    plain_w = plain_l = plain_t = 0
    counted_by_query = False
    for i, b in enumerate(battles):
        if isinstance(b, tuple):
            if len(b) != 2 or not all(isinstance(x, str) for x in b):
                raise StatsError(f"battles[{i}] = {b!r}; expected (winner, loser) model names or a Battle")
            if set(b) != pair:
                continue
            if b[0] == model_a:
                plain_w += 1
            else:
                plain_l += 1
            continue
        if {b.model_a, b.model_b} != pair:
            continue
        if b.winner not in ("A", "B", "tie"):
            raise StatsError(f"battles[{i}]: winner {b.winner!r}; expected 'A', 'B' or 'tie'")
        if b.winner == "tie":
            score = 0
        else:
            winner = b.model_a if b.winner == "A" else b.model_b
            score = 1 if winner == model_a else -1
        if by_query:
            counted_by_query = True
            net[b.query_id] += score
        elif score > 0:
            plain_w += 1
        elif score < 0:
            plain_l += 1
        else:
            plain_t += 1
    wins = plain_w + sum(1 for v in net.values() if v > 0)
    losses = plain_l + sum(1 for v in net.values() if v < 0)
    ties = plain_t + sum(1 for v in net.values() if v == 0)
    unit = "queries" if counted_by_query and not (plain_w or plain_l or plain_t) else "battles"
    return from_counts(model_a, model_b, wins, ties, losses, unit=unit, alpha=alpha)
