"""Repeated sampling, head-to-head and case sampling."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest
from scipy import stats as sps

from pytest_mirage.arena.bt import Battle
from pytest_mirage.stats import (
    StatsError,
    battle_head_to_head,
    case_repeats,
    clustered_bootstrap_ci,
    compare_values,
    head_to_head,
    parse_sample,
    pass_hat_k,
    sample_cases,
    samples_by_case,
    sign_test,
    summarize_repeats,
    wilson_interval,
)
from pytest_mirage.stats.repeats import flaky_cases
from pytest_mirage.stats.sampling import case_key


def rec(case: str, model: str, repeat: int, value: float | None, *, lang: str = "hi", outcome: str = "passed",
        check: bool | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"suite": "s", "case_id": case, "lang": lang, "model": model, "repeat": repeat,
                           "metrics": {"x": value}, "outcome": outcome}
    if check is not None:
        out["checks"] = {"x": check}
    return out


# ---------------------------------------------------------------- repeats


def test_pass_hat_k_by_hand() -> None:
    assert pass_hat_k(2, 3, 2) == pytest.approx(1 / 3)  # C(2,2)/C(3,2)
    assert pass_hat_k(3, 3, 3) == 1.0 and pass_hat_k(2, 3, 3) == 0.0
    assert pass_hat_k(4, 5, 1) == 0.8
    with pytest.raises(StatsError, match="k=4 > n=3"):
        pass_hat_k(1, 3, 4)


def test_case_repeats_and_summary() -> None:
    records = [rec("a", "m", r, v) for r, v in enumerate([0.9, 0.8, 0.7])]  # always passes
    records += [rec("b", "m", r, v) for r, v in enumerate([0.9, 0.2, 0.6])]  # flaky
    records += [rec("c", "m", 0, 0.1), rec("c", "m", 1, None), rec("c", "m", 2, None, outcome="error")]
    cases = {c.case_id: c for c in case_repeats(records, "x", threshold=(">=", 0.5))}
    assert (cases["a"].passes, cases["a"].samples, cases["a"].all_pass, cases["a"].flaky) == (3, 3, True, False)
    assert (cases["b"].passes, cases["b"].samples, cases["b"].flaky) == (2, 3, True)
    # c: one fail, one null (no decision), one error (a fail)
    assert (cases["c"].passes, cases["c"].samples, cases["c"].errors, cases["c"].values) == (0, 2, 1, (0.1,))
    (summary,) = summarize_repeats(records, "x", threshold=(">=", 0.5), seed=2).values()
    assert summary.cases == 3 and summary.samples == 8 and summary.flaky == ("b",)
    assert summary.all_pass == wilson_interval(1, 3)
    assert summary.pass_hat[1] == pytest.approx((1 + 2 / 3 + 0) / 3)
    assert summary.pass_hat[2] == pytest.approx((1 + 1 / 3 + 0) / 3) and set(summary.pass_hat) == {1, 2}
    assert summary.mean == clustered_bootstrap_ci([[0.9, 0.8, 0.7], [0.9, 0.2, 0.6], [0.1]], seed=2)
    assert summary.pass_rate.estimate == pytest.approx(5 / 8)
    assert flaky_cases({("s", "hi", "m"): summary}) == [("s", "hi", "m", "b")]
    json.dumps(summary.to_json(), allow_nan=False)


def test_case_repeats_uses_the_runs_own_checks() -> None:
    records = [rec("a", "m", 0, 0.4, check=True), rec("a", "m", 1, 0.4, check=False), rec("a", "m", 2, 0.4)]
    (c,) = case_repeats(records, "x")
    assert (c.passes, c.samples, c.flaky) == (1, 2, True)
    with pytest.raises(StatsError, match="repeat 0 more than once"):
        case_repeats([rec("a", "m", 0, 0.4), rec("a", "m", 0, 0.5)], "x")
    with pytest.raises(StatsError, match="several languages"):
        case_repeats([rec("a", "m", 0, 0.4), rec("a", "m", 1, 0.5, lang="sw")], "x")
    with pytest.raises(StatsError, match="threshold operator"):
        case_repeats(records, "x", threshold=("=>", 0.5))


def test_samples_by_case_feeds_the_clustered_gate_statistic() -> None:
    records = [rec("a", "m", 0, 0.1), rec("a", "m", 1, 0.3), rec("b", "m", 0, 1.0), rec("b", "m", 1, None)]
    groups = samples_by_case(records, "x")
    assert groups == {("s", "hi", "m"): [[0.1, 0.3], [1.0]]}
    assert clustered_bootstrap_ci(groups[("s", "hi", "m")]).estimate == pytest.approx(1.4 / 3)


# ---------------------------------------------------------------- head-to-head


@pytest.mark.parametrize(("wins", "losses"), [(8, 2), (2, 8), (30, 31), (0, 5), (120, 80)])
def test_sign_test_matches_scipy(wins: int, losses: int) -> None:
    assert sign_test(wins, losses) == pytest.approx(sps.binomtest(wins, wins + losses).pvalue, rel=1e-12)


def test_sign_test_by_hand() -> None:
    assert sign_test(8, 2) == pytest.approx(2 * (1 + 10 + 45) / 1024)
    assert sign_test(5, 5) == 1.0 and math.isnan(sign_test(0, 0))


def test_head_to_head_on_cases() -> None:
    a = {"c1": 0.9, "c2": 0.5, "c3": 0.2, "c4": 0.7, "c5": None}
    b = {"c1": 0.5, "c2": 0.5, "c3": 0.4, "c4": 0.69, "c6": 0.1}
    got = compare_values(a, b, model_a="new", model_b="prod", metric="x", tolerance=0.02)
    assert (got.wins, got.ties, got.losses, got.unpaired) == (1, 2, 1, 2)
    assert got.win_rate == wilson_interval(1, 2) and got.p_value == 1.0 and got.win_share == 0.5
    lower = compare_values(a, b, higher_is_better=False)
    assert (lower.wins, lower.losses) == (1, 2)
    records = [{"suite": "s", "case_id": c, "lang": "hi", "model": m, "metrics": {"x": v}, "outcome": "passed"}
               for m, vals in (("new", a), ("prod", b)) for c, v in vals.items()]
    via_records = head_to_head(records, "new", "prod", "x", tolerance=0.02)
    assert (via_records.wins, via_records.ties, via_records.losses) == (1, 2, 1)
    assert "1 wins, 2 ties, 1 losses over 4 cases" in via_records.describe()
    with pytest.raises(StatsError, match=r"model 'prdo' is not in the results.*Did you mean: prod"):
        head_to_head(records, "new", "prdo", "x")
    json.dumps(got.to_json(), allow_nan=False)


def test_head_to_head_on_battles_counts_each_query_once() -> None:
    battles = [Battle("q1", "a", "b", "A"), Battle("q1", "b", "a", "B"),  # a wins both orders
               Battle("q2", "a", "b", "A"), Battle("q2", "b", "a", "A"),  # position bias: net tie
               Battle("q3", "a", "b", "B"), Battle("q3", "b", "a", "tie"),  # b on net
               Battle("q4", "a", "c", "A")]  # another pair
    by_query = battle_head_to_head(battles, "a", "b")
    assert (by_query.wins, by_query.ties, by_query.losses, by_query.unit) == (1, 1, 1, "queries")
    each = battle_head_to_head(battles, "a", "b", by_query=False)
    assert (each.wins, each.ties, each.losses, each.unit) == (3, 1, 2, "battles")
    pairs = battle_head_to_head([("a", "b")] * 9 + [("b", "a")], "a", "b")
    assert (pairs.wins, pairs.losses) == (9, 1) and pairs.p_value == pytest.approx(22 / 1024)
    with pytest.raises(StatsError, match="expected \\(winner, loser\\)"):
        battle_head_to_head([("a", "b", "c")], "a", "b")  # type: ignore[list-item]


# ---------------------------------------------------------------- sampling


def test_sampling_is_seeded_stable_and_reported() -> None:
    ids = [f"hi-{i:04d}" for i in range(200)]
    groups = {("s", "hi"): ids, ("s", "sw"): [f"sw-{i}" for i in range(7)]}
    sample = sample_cases(groups, share=0.2, seed=1)
    hi = next(g for g in sample.groups if g.lang == "hi")
    sw = next(g for g in sample.groups if g.lang == "sw")
    assert len(hi.selected) == 40 and len(sw.selected) == 2 and hi.total == 200  # ceil(0.2 * 7)
    assert sample.describe() == "sampled 20% of the cases per suite x language (seed 1): 42 of 207 cases"
    assert sample_cases({("s", "hi"): list(reversed(ids))}, share=0.2, seed=1).groups[0] == hi  # order-free
    assert sample_cases(groups, share=0.2, seed=2).groups[0].selected != hi.selected
    assert hi.selected == tuple(sorted(sorted(ids, key=lambda c: case_key("s", c, 1))[:40]))
    # adding cases: a case that stays out never enters, the selection changes by the newcomers only
    grown = sample_cases({("s", "hi"): [*ids, *(f"hi-new-{i}" for i in range(10))]}, count=40, seed=1).groups[0]
    kept = set(grown.selected) & set(ids)
    assert kept <= set(hi.selected)
    assert len(set(hi.selected) - kept) == len(set(grown.selected) - set(ids))
    counted = sample_cases(groups, count=5)
    assert [len(g.selected) for g in counted.groups] == [5, 5] and counted.contains("s", counted.groups[0].selected[0])
    with pytest.raises(StatsError, match="exactly one of count"):
        sample_cases(groups)
    with pytest.raises(StatsError, match="appears twice"):
        sample_cases({("s", "hi"): ["a", "a"]}, count=1)


def test_parse_sample() -> None:
    assert parse_sample("0.2") == (None, 0.2)
    assert parse_sample("20%") == (None, 0.2)
    assert parse_sample("50") == (50, None)
    assert parse_sample("1") == (1, None)
    for bad in ("0", "1.5", "-3", "abc", "120%", "nan"):
        with pytest.raises(StatsError, match="expected a share"):
            parse_sample(bad)


def test_sampling_share_selects_the_expected_count_per_group() -> None:
    rng = np.random.default_rng(0)
    for n in rng.integers(1, 300, size=20):
        got = sample_cases({("s", "x"): [str(i) for i in range(int(n))]}, share=0.3).groups[0]
        assert len(got.selected) == math.ceil(0.3 * int(n) - 1e-9)
