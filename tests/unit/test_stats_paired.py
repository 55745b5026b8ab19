"""Baseline comparison: paired tests, pairing of runs, regression gates with Holm."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest
from scipy import stats as sps

from pytest_mirage.aggregate.expr import RegressionGate, parse_regression_gate
from pytest_mirage.aggregate.regression import evaluate_regression_gates, holm_adjust
from pytest_mirage.results import CaseResult
from pytest_mirage.stats import (
    StatsError,
    bootstrap_mean_ci,
    compare_runs,
    paired_test,
    records_from_report,
)
from tests.helpers.simulate_stats import regression_flag_rate, simulate_paired_scores


def rec(case: str, lang: str, model: str, outcome: str = "passed", suite: str = "s", repeat: int | None = None,
        checks: dict[str, bool] | None = None, **metrics: float | None) -> dict[str, Any]:
    out: dict[str, Any] = {"suite": suite, "case_id": case, "lang": lang, "model": model, "metrics": metrics,
                           "outcome": outcome}
    if repeat is not None:
        out["repeat"] = repeat
    if checks is not None:
        out["checks"] = checks
    return out


# ---------------------------------------------------------------- paired tests


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
@pytest.mark.parametrize("null", [0.0, -0.02, 0.03])
def test_t_test_matches_scipy(alternative: str, null: float) -> None:
    d = np.random.default_rng(4).normal(-0.03, 0.2, size=57)
    got = paired_test(d, null=null, alternative=alternative)
    ref = sps.ttest_1samp(d, popmean=null, alternative=alternative)
    assert got.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert got.p_value == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-15)
    assert got.n == 57 and got.method == "t"


def test_sign_flip_exact_by_hand() -> None:
    # 8 sign patterns of (1, 2, 3); |sum| >= 6 only for all + and all -
    assert paired_test([1.0, 2.0, 3.0], method="sign_flip").p_value == 0.25
    assert paired_test([-1.0, -2.0, -3.0], method="sign_flip", alternative="less").p_value == 0.125
    # null shifts the differences: (0.5, 1.5, -0.5) -> sums >= 1.5: (+,+,+) 1.5, (+,+,-) 2.5, (-,+,-) 1.5
    got = paired_test([1.0, 2.0, 0.0], null=0.5, method="sign_flip", alternative="greater")
    assert got.p_value == 3 / 8 and "exact" in got.note


def test_sign_flip_random_agrees_with_t_for_many_pairs() -> None:
    d = np.random.default_rng(8).normal(-0.02, 0.3, size=400)
    t = paired_test(d, alternative="less")
    flip = paired_test(d, alternative="less", method="sign_flip", n_perm=20000, seed=1)
    assert flip.p_value == pytest.approx(t.p_value, abs=0.01)
    assert flip.p_value == paired_test(d, alternative="less", method="sign_flip", n_perm=20000, seed=1).p_value


def test_paired_test_degenerate_inputs() -> None:
    few = paired_test([0.1])
    assert math.isnan(few.p_value) and "at least 2" in few.note
    assert paired_test([-0.1] * 5, alternative="less").p_value == 0.0
    assert paired_test([-0.1] * 5, alternative="greater").p_value == 1.0
    assert paired_test([0.0] * 5).p_value == 1.0
    assert paired_test([0.02] * 5, null=0.02).p_value == 1.0
    with pytest.raises(StatsError, match="method"):
        paired_test([1.0, 2.0], method="wilcoxon")
    with pytest.raises(StatsError, match=r"differences\[1\] = nan"):
        paired_test([1.0, float("nan")])


# ---------------------------------------------------------------- pairing two runs


def test_compare_runs_pairs_cases_and_lists_changes() -> None:
    baseline = [rec("h1", "hi", "prod", citation_recall=1.0, support=0.5),
                rec("h2", "hi", "prod", citation_recall=0.5, support=None),
                rec("h3", "hi", "prod", citation_recall=0.0, support=0.2),
                rec("h4", "hi", "prod", citation_recall=1.0),  # removed in the candidate
                rec("s1", "sw", "prod", citation_recall=0.4),
                rec("x1", "hi", "prod", citation_recall=0.4),  # language changes
                rec("h1", "hi", "old-only", citation_recall=0.1)]
    candidate = [rec("h1", "hi", "cand", citation_recall=0.5, support=0.25),
                 rec("h2", "hi", "cand", citation_recall=0.5, support=0.9),
                 rec("h3", "hi", "cand", "error"),
                 rec("h5", "hi", "cand", citation_recall=1.0),  # added
                 rec("s1", "sw", "cand", citation_recall=0.6),
                 rec("x1", "sw", "cand", citation_recall=0.4),
                 rec("h1", "hi", "new-only", citation_recall=0.1)]
    comp = compare_runs(baseline, candidate, model_map={"cand": "prod"}, seed=3)
    hi = comp.row("s", "hi", "cand", "citation_recall")
    assert hi is not None
    assert hi.baseline_model == "prod" and hi.n == 2 and hi.unpaired == 1  # h3 errored in the candidate
    assert hi.baseline_mean == 0.75 and hi.candidate_mean == 0.5 and hi.delta == -0.25
    assert (hi.ci_low, hi.ci_high) == bootstrap_mean_ci([-0.5, 0.0], seed=3)
    assert hi.p_value == paired_test([-0.5, 0.0]).p_value
    support = comp.row("s", "hi", "cand", "support")
    assert support is not None and support.n == 1 and support.unpaired == 2 and math.isnan(support.p_value)
    every = comp.row("s", "all", "cand", "citation_recall")
    assert every is not None and every.n == 3 and every.delta == pytest.approx((-0.5 + 0.0 + 0.2) / 3)
    assert {(c.case_id, c.change) for c in comp.changes} == {
        ("h4", "removed"), ("h5", "added"), ("x1", "language changed")}
    assert next(c for c in comp.changes if c.case_id == "x1").lang == "hi->sw"
    assert comp.models_only_in_baseline == ("old-only",) and comp.models_only_in_candidate == ("new-only",)
    assert [r.lang for r in comp.rows if r.metric == "citation_recall"] == ["hi", "sw", "all"]
    json.dumps(comp.to_json(), allow_nan=False)  # the report can carry it as is


def test_compare_runs_repeats_pass_rates_and_case_results() -> None:
    baseline = [rec("a", "hi", "m", repeat=0, checks={"x": True}, x=1.0),
                rec("a", "hi", "m", repeat=1, checks={"x": False}, x=0.0),
                rec("b", "hi", "m", checks={"x": True}, x=0.8)]
    candidate = [CaseResult(suite="s", suite_ref="s", case_id=c, lang="hi", model="m", metrics={"x": v},
                            checks={"x": v >= 0.5}) for c, v in (("a", 0.2), ("b", 0.9))]
    comp = compare_runs(baseline, candidate, include_all=False)
    mean = comp.row("s", "hi", "m", "x")
    rate = comp.row("s", "hi", "m", "x", "pass_rate")
    assert mean is not None and rate is not None
    assert mean.baseline_mean == pytest.approx((0.5 + 0.8) / 2) and mean.delta == pytest.approx(((0.2 - 0.5) + 0.1) / 2)
    assert rate.baseline_mean == 0.75 and rate.candidate_mean == 0.5  # case a passed 1 of 2 repeats
    report = {"results": baseline}
    assert len(records_from_report(report)) == 3


def test_compare_runs_errors_name_the_problem() -> None:
    base = [rec("a", "hi", "prod", x=1.0)]
    cand = [rec("a", "hi", "gpt-4o-new", x=1.0), rec("a", "hi", "gpt-4o-mini", x=1.0)]
    with pytest.raises(StatsError, match=r"no model 'gpt-4o-nwe'.*Did you mean: gpt-4o-new"):
        compare_runs(base, cand, model_map={"gpt-4o-nwe": "prod"})
    with pytest.raises(StatsError, match="same baseline model"):
        compare_runs(base, cand, model_map={"gpt-4o-new": "prod", "gpt-4o-mini": "prod"})
    with pytest.raises(StatsError, match=r"metric 'xx' has no value.*Did you mean: x"):
        compare_runs(base, cand, metrics=["xx"])
    with pytest.raises(StatsError, match=r"baseline results\[1\]: case 'a' .* language 'sw' here and 'hi'"):
        compare_runs([*base, rec("a", "sw", "prod", x=1.0)], cand)
    with pytest.raises(StatsError, match=r"candidate results\[0\]: metrics.x is 'high'"):
        compare_runs(base, [rec("a", "hi", "prod", x="high")])  # type: ignore[arg-type]
    with pytest.raises(StatsError, match=r"candidate results\[0\]: field 'case_id' is None"):
        compare_runs(base, [{"suite": "s", "lang": "hi", "model": "m", "metrics": {}}])


# ---------------------------------------------------------------- regression gates


def test_parse_regression_gate() -> None:
    g = parse_regression_gate("citation_recall.mean@hi drop <= 0.02", source="pyproject.toml")
    assert (g.metric, g.stat, g.lang, g.max_change, g.direction) == ("citation_recall", "mean", "hi", 0.02, "drop")
    assert g.name == "citation_recall.mean@hi" and g.source == "pyproject.toml"
    assert parse_regression_gate("support drop<=0").stat == "mean"
    assert parse_regression_gate("x.pass_rate rise <= 0.1").direction == "rise"
    for bad, message in [("citation_recall >= 0.5", "cannot parse regression gate"),
                         ("x.median drop <= 0.1", "statistic 'median' cannot be compared"),
                         ("x.meen drop <= 0.1", "Did you mean: mean"),
                         ("x@qq drop <= 0.1", "@qq"),
                         ("x drop <= -0.1", "must be >= 0"),
                         ("x.pass_rate drop <= 1", "never fail")]:
        with pytest.raises(StatsError, match=message):
            parse_regression_gate(bad)
    with pytest.raises(StatsError, match=r"lower-is-better, so a regression is a rise; write 'latency\.mean rise <= 0\.5'"):
        parse_regression_gate("latency drop <= 0.5", higher_is_better=False)


def test_holm_by_hand() -> None:
    # sorted 0.01, 0.03, 0.04 -> 3*0.01, max(0.03, 2*0.03), max(0.06, 1*0.04)
    got = holm_adjust([0.01, 0.04, 0.03, math.nan])
    assert got[:3] == pytest.approx([0.03, 0.06, 0.06]) and math.isnan(got[3])
    assert holm_adjust([0.5, 0.9]) == [1.0, 1.0]  # 2 * 0.5 = 1, then max(1, 0.9)
    assert holm_adjust([0.04, 0.01]) == [0.04, 0.02]
    assert holm_adjust([]) == []
    with pytest.raises(StatsError, match="not a probability"):
        holm_adjust([1.5])


def _two_langs(drop: float | None, n: int = 60) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Two languages with the same per-case noise (so the same p-value) and an exact mean drop;
    ``drop=None`` puts the one-sided t statistic at 1.9 (p about 0.03)."""
    rng = np.random.default_rng(1)
    noise = rng.normal(0, 0.1, n)
    noise -= noise.mean()
    if drop is None:
        drop = 1.9 * float(noise.std(ddof=1)) / math.sqrt(n)
    base, cand = [], []
    for lang in ("hi", "sw"):
        b = rng.random(n)
        for i in range(n):
            base.append(rec(f"{lang}{i}", lang, "m", x=float(b[i])))
            cand.append(rec(f"{lang}{i}", lang, "m", x=float(b[i] - drop + noise[i])))
    return base, cand


def test_regression_gate_tests_the_drop_beyond_the_allowance_with_holm() -> None:
    base, cand = _two_langs(0.03)
    comp = compare_runs(base, cand)
    d = {lang: -(comp.row("s", lang, "m", "x").diffs) for lang in ("hi", "sw")}  # type: ignore[union-attr]
    raw = {lang: sps.ttest_1samp(w, 0.0, alternative="greater").pvalue for lang, w in d.items()}
    results = evaluate_regression_gates(comp, [parse_regression_gate("x drop <= 0")])
    assert [(r.lang, r.family) for r in results] == [("hi", 2), ("sw", 2)]
    for r in results:
        assert r.p_value == pytest.approx(raw[r.lang], rel=1e-9)
        assert r.worsening == pytest.approx(0.03)
    assert [r.p_adjusted for r in results] == pytest.approx(holm_adjust([raw["hi"], raw["sw"]]))
    assert all(r.failed for r in results)  # 3 points with sd 0.1 over 60 cases: clearly significant
    # allowing 2 points leaves a 1-point excess the 60 cases cannot confirm
    lenient = evaluate_regression_gates(comp, [parse_regression_gate("x drop <= 0.02")])
    assert [r.failed for r in lenient] == [False, False]
    assert "ok" in lenient[0].describe() and "Holm-adjusted" in lenient[0].describe()
    # a gate on one language only tests that language (family of 1)
    (only,) = evaluate_regression_gates(comp, [parse_regression_gate("x.mean@sw drop <= 0")])
    assert only.lang == "sw" and only.family == 1 and only.p_adjusted == pytest.approx(raw["sw"])
    # @all: the languages pooled (the leaderboard's "all" rows)
    (pooled,) = evaluate_regression_gates(comp, [parse_regression_gate("x@all drop <= 0")])
    assert pooled.lang == "all" and pooled.n == 120 and pooled.worsening == pytest.approx(0.03)


def test_holm_can_turn_a_marginal_failure_into_a_pass() -> None:
    base, cand = _two_langs(None, n=40)
    comp = compare_runs(base, cand)
    results = evaluate_regression_gates(comp, [parse_regression_gate("x drop <= 0")])
    assert all(0.025 < r.p_value < 0.05 for r in results), [r.p_value for r in results]
    assert all(r.failed is False for r in results)
    (single,) = evaluate_regression_gates(comp, [parse_regression_gate("x@hi drop <= 0")])
    assert single.failed is True


def test_regression_gates_not_evaluable_and_rise() -> None:
    base = [rec("a", "hi", "m", x=0.5, lat=1.0), rec("b", "hi", "m", x=0.5, lat=1.0), rec("c", "sw", "m", x=0.1)]
    cand = [rec("a", "hi", "m", x=0.5, lat=2.0), rec("b", "hi", "m", x=0.5, lat=2.5), rec("c", "sw", "m", x=0.1)]
    comp = compare_runs(base, cand)
    results = evaluate_regression_gates(comp, [
        parse_regression_gate("x@ko drop <= 0"), parse_regression_gate("x drop <= 0"),
        parse_regression_gate("lat rise <= 0.5")])
    by = {(r.expr, r.lang): r for r in results}
    # a gate with no data fails (issue 21); a 1-pair language next to a testable one is not evaluable
    ko = by[("x@ko drop <= 0", "ko")]
    assert ko.failed is True and "no comparable baseline data for x.mean@ko" in ko.note
    assert by[("x drop <= 0", "sw")].failed is None and "1 paired case" in by[("x drop <= 0", "sw")].note
    assert by[("x drop <= 0", "hi")].failed is False and by[("x drop <= 0", "hi")].p_value == 1.0
    lat = by[("lat rise <= 0.5", "hi")]
    assert lat.worsening == 1.25 and lat.family == 2
    assert "fails: no comparable baseline data" in ko.describe() and "not evaluable" in by[("x drop <= 0", "sw")].describe()
    json.dumps([r.to_json() for r in results], allow_nan=False)
    with pytest.raises(StatsError, match="allowed change"):
        RegressionGate(metric="x", max_change=float("nan"))


# ---------------------------------------------------------------- acceptance simulation


def _flag_rate_fast(drop: float, runs: int = 200, n: int = 500, alpha: float = 0.05) -> float:
    flagged = 0
    for k in range(runs):
        base, cand = simulate_paired_scores(n, drop, seed=k)
        flagged += paired_test(base - cand, null=0.0, alternative="greater").p_value <= alpha
    return flagged / runs


def test_simulation_a_true_five_point_drop_is_flagged_and_no_drop_is_not() -> None:
    power = _flag_rate_fast(0.05)
    false_alarms = _flag_rate_fast(0.0)
    assert power >= 0.80, power
    assert false_alarms <= 0.06, false_alarms


def test_simulation_full_path_decides_like_the_array_path() -> None:
    full = regression_flag_rate(runs=12, n_cases=500, drop=0.05, n_boot=50)
    fast = sum(paired_test(b - c, alternative="greater").p_value <= 0.05
               for b, c in (simulate_paired_scores(500, 0.05, seed=k) for k in range(12)))
    assert full.flagged == fast and full.runs == 12
    assert full.mean_delta == pytest.approx(-0.05, abs=0.02)
