"""Regression gates against a baseline: ``METRIC[.STAT][@LANG] drop <= D``.

A regression gate fails only when the data show, at level ``alpha``, that the candidate is worse
than the baseline by more than the allowed ``D``. Per gate and suite x language x model it tests

    H0: mean worsening <= D     against     H1: mean worsening > D

on the per-case paired differences (one-sided; worsening = baseline - candidate for a metric where
higher is better, ``drop``; candidate - baseline for one where lower is better, ``rise``). The
p-values of all regression gate tests of a run form one family and are adjusted with Holm's
step-down method (Holm 1979), which keeps the chance of failing a run where no gate is truly
violated at or below ``alpha`` whatever the dependence between the tests.

A small drop that is within noise passes; so does a drop beyond D that too few cases cannot
confirm (``mde`` on the comparison row says what the cases can detect). Use a fixed-threshold gate
(``citation_recall.mean >= 0.6``) for an absolute floor, and a regression gate to catch changes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import StatsError
from ..stats._common import check_alpha, vector
from ..stats.paired import ALL_LANGS, Comparison, ComparisonRow, paired_test
from .expr import RegressionGate


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in input order. NaN entries (tests that could not be
    computed) stay NaN and do not count in the family size.

    Sorted ascending, ``p_adj(i) = max_{j <= i} min(1, (m - j + 1) p_(j))``; rejecting
    ``p_adj <= alpha`` is Holm's procedure at family-wise error rate ``alpha``.
    """
    idx = [i for i, p in enumerate(p_values) if not math.isnan(p)]
    for i in idx:
        if not 0.0 <= p_values[i] <= 1.0:
            raise StatsError(f"p_values[{i}] = {p_values[i]!r} is not a probability")
    order = sorted(idx, key=lambda i: p_values[i])
    m = len(order)
    out = [math.nan] * len(p_values)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        out[i] = running
    return out


@dataclass(frozen=True, slots=True)
class RegressionGateResult:
    """One regression gate on one suite x language x model.

    ``worsening``: mean per-case worsening (positive = candidate worse), with the paired-bootstrap
    interval ``ci_low..ci_high`` of the same quantity. ``p_value``: one-sided test of worsening
    <= allowed; ``p_adjusted``: Holm over the ``family`` evaluable regression tests of the run.
    ``failed`` is None when the gate cannot be evaluated (``note`` says why).
    """

    expr: str
    source: str
    suite: str
    lang: str
    model: str
    baseline_model: str
    n: int
    allowed: float
    worsening: float
    ci_low: float
    ci_high: float
    p_value: float
    p_adjusted: float
    family: int
    alpha: float
    failed: bool | None
    note: str = ""

    @property
    def passed(self) -> bool | None:
        return None if self.failed is None else not self.failed

    def describe(self) -> str:
        where = f"{self.suite} [{self.lang}] {self.model}"
        if self.model != self.baseline_model:
            where += f" vs {self.baseline_model}"
        if self.failed is None:
            return f"{where}: {self.expr} not evaluable: {self.note}"
        if math.isnan(self.worsening):  # failed on no data
            return f"{where}: {self.expr} fails: {self.note}" + (f" ({self.source})" if self.source else "")
        verdict = "significant regression" if self.failed else "ok"
        return (f"{where}: {self.expr} -> worse by {self.worsening:+.4f} "
                f"(95% CI {self.ci_low:+.4f}..{self.ci_high:+.4f}, n={self.n}); p={self.p_value:.3g}, "
                f"Holm-adjusted {self.p_adjusted:.3g} over {self.family} regression test"
                f"{'s' * (self.family != 1)} at alpha {self.alpha:g}: {verdict}"
                + (f" ({self.source})" if self.source else ""))

    def to_json(self) -> dict[str, Any]:
        def f(v: float) -> float | None:
            return None if math.isnan(v) else v

        return {"expr": self.expr, "source": self.source, "suite": self.suite, "lang": self.lang,
                "model": self.model, "baseline_model": self.baseline_model, "n": self.n,
                "allowed": self.allowed, "worsening": f(self.worsening), "ci_low": f(self.ci_low),
                "ci_high": f(self.ci_high), "p_value": f(self.p_value), "p_adjusted": f(self.p_adjusted),
                "family": self.family, "alpha": self.alpha, "failed": self.failed, "note": self.note or None}


def regression_outcome_text(row: Mapping[str, Any]) -> str:
    """A regression gate's outcome from its JSON row (``RegressionGateResult.to_json()``) for one line:
    the note when it could not be evaluated, else how much worse, at the precision the terminal lines
    use (``worse by +0.6090``, not the float's 16 digits) and the Holm-adjusted p-value."""
    if row.get("failed") is None or row.get("worsening") is None:  # not evaluable, or failed on no data
        return str(row.get("note"))
    worse, p = row.get("worsening"), row.get("p_adjusted")
    worse_text = f"{worse:+.4f}" if isinstance(worse, int | float) else "n/a"
    p_text = f"{p:.3g}" if isinstance(p, int | float) else "n/a"
    return f"worse by {worse_text}, Holm-adjusted p={p_text}"


def _matches(gate: RegressionGate, row: ComparisonRow) -> bool:
    if row.metric != gate.metric or row.stat != gate.stat:
        return False
    if gate.suite is not None and row.suite != gate.suite:
        return False
    return row.lang == gate.lang if gate.lang is not None else row.lang != ALL_LANGS


def evaluate_regression_gates(comparison: Comparison, gates: Sequence[RegressionGate], *,
                              alpha: float | None = None, method: str | None = None) -> list[RegressionGateResult]:
    """Evaluate every gate on every matching comparison row, Holm-adjusted across all of them.

    ``alpha`` and ``method`` default to the comparison's. A gate cannot pass on nothing: a gate with
    no matching row, a row with no paired case (every case of one side errored or null), or a gate
    none of whose rows has the 2 pairs a paired test needs, gives ``failed=True`` with NaN figures
    and a note saying why (the models on both sides and ``--mirage-baseline-map`` when no model is
    in both runs). A row with 1 pair next to testable rows is not evaluable (``failed=None``, a
    note). Neither counts in the Holm family.
    """
    a = check_alpha(comparison.alpha if alpha is None else alpha)
    test_method = comparison.method if method is None else method
    pending: list[dict[str, Any]] = []
    for gate in gates:
        rows = [r for r in comparison.rows if _matches(gate, r)]
        if not rows:
            pending.append({"gate": gate, "suite": gate.suite or "*", "lang": gate.lang or "*", "model": "*",
                            "baseline_model": "*", "n": 0, "note": no_data_note(comparison, gate)})
            continue
        for row in rows:
            base: dict[str, Any] = {"gate": gate, "suite": row.suite, "lang": row.lang, "model": row.model,
                                    "baseline_model": row.baseline_model, "n": row.n}
            if row.n < 2:
                # nothing to compare (no pair, or no row of the gate testable): the gate fails
                base["no_data"] = row.n == 0 or all(r.n < 2 for r in rows)
                base["note"] = (("no comparable baseline data: " if base["no_data"] else "")
                                + f"{row.n} paired case{'s' * (row.n != 1)}"
                                + (f" ({row.unpaired} more null or errored on one side)" if row.unpaired else "")
                                + "; a paired test needs at least 2")
                pending.append(base)
                continue
            sign = -1.0 if gate.direction == "drop" else 1.0
            worse = vector(sign * row.diffs, "differences")
            test = paired_test(worse, null=gate.max_change, alternative="greater", method=test_method,
                               seed=comparison.seed)
            lo, hi = sorted((sign * row.ci_low, sign * row.ci_high))
            base.update(worsening=float(worse.mean()), ci_low=lo, ci_high=hi, p_value=test.p_value)
            pending.append(base)
    adjusted = holm_adjust([p.get("p_value", math.nan) for p in pending])
    family = sum(1 for p in adjusted if not math.isnan(p))
    out: list[RegressionGateResult] = []
    for p, adj in zip(pending, adjusted, strict=True):
        gate = p["gate"]
        evaluable = not math.isnan(adj)
        out.append(RegressionGateResult(
            expr=gate.describe(), source=gate.source, suite=p["suite"], lang=p["lang"], model=p["model"],
            baseline_model=p["baseline_model"], n=p["n"], allowed=gate.max_change,
            worsening=p.get("worsening", math.nan), ci_low=p.get("ci_low", math.nan),
            ci_high=p.get("ci_high", math.nan), p_value=p.get("p_value", math.nan), p_adjusted=adj,
            family=family, alpha=a, failed=(adj <= a) if evaluable else (True if p.get("no_data", True) else None),
            note=p.get("note", "")))
    return out


def no_data_note(comparison: Comparison, gate: RegressionGate) -> str:
    """Why ``gate`` matched no comparison row: no model in both runs (the names on both sides and
    the ``--mirage-baseline-map`` fix), else no shared case with a value of the metric."""
    only_base, only_cand = comparison.models_only_in_baseline, comparison.models_only_in_candidate
    where = f"suite {gate.suite!r}" if gate.suite else "any suite"
    lang = f" in language {gate.lang!r}" if gate.lang else ""
    if only_cand and not any(r.metric == gate.metric for r in comparison.rows):
        base = ", ".join(only_base) if only_base else "none"
        return (f"no comparable baseline data for {gate.name}: this run's model(s) {', '.join(only_cand)} are not "
                f"in the baseline (its models: {base}); map a renamed model with --mirage-baseline-map NEW=OLD")
    return (f"no comparable baseline data for {gate.name} in {where}{lang}: the baseline and this run share no "
            "case with a value of that metric (a baseline of another suite, no results, or every baseline case "
            "errored or null)")
