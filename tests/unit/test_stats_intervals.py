"""Intervals and sample sizes: Wilson, bootstrap (one group, many groups, clustered), MDE."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats as sps

from pytest_mirage.stats import (
    StatsError,
    bootstrap_mean_ci,
    bootstrap_mean_cis,
    cases_needed,
    clustered_bootstrap_ci,
    detectable_effects,
    labels_needed,
    minimum_detectable_effect,
    paired_sigma,
    pass_rate_interval,
    wilson_interval,
)
from pytest_mirage.stats.power import sample_size_table


@pytest.mark.parametrize(("k", "n"), [(7, 20), (1, 3), (50, 100), (499, 500), (3, 11195)])
def test_wilson_matches_scipy(k: int, n: int) -> None:
    ref = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    got = wilson_interval(k, n)
    assert got.estimate == k / n
    assert got.low == pytest.approx(ref.low, abs=1e-12)
    assert got.high == pytest.approx(ref.high, abs=1e-12)
    ref90 = sps.binomtest(k, n).proportion_ci(confidence_level=0.90, method="wilson")
    assert wilson_interval(k, n, alpha=0.10).low == pytest.approx(ref90.low, abs=1e-12)


def test_wilson_edges_by_hand() -> None:
    # 0 of 20: upper = z^2/(n + z^2) = 3.8415/23.8415
    z2 = 1.959963984540054 ** 2
    none = wilson_interval(0, 20)
    assert none.low == 0.0 and none.high == pytest.approx(z2 / (20 + z2), abs=1e-12)
    every = wilson_interval(20, 20)
    assert every.high == 1.0 and every.low == pytest.approx(20 / (20 + z2), abs=1e-12)
    empty = wilson_interval(0, 0)
    assert math.isnan(empty.estimate) and math.isnan(empty.low) and empty.to_json()["low"] is None
    with pytest.raises(StatsError, match="successes=5 > trials=4"):
        wilson_interval(5, 4)
    with pytest.raises(StatsError, match="alpha"):
        wilson_interval(1, 4, alpha=1.5)
    assert pass_rate_interval([True, False, True, True]).estimate == 0.75
    with pytest.raises(StatsError, match="booleans"):
        pass_rate_interval([1, 0])  # type: ignore[list-item]


def test_bootstrap_mean_ci_is_seeded_and_takes_lists() -> None:
    values = np.random.default_rng(17).random(500)
    assert bootstrap_mean_ci(values, seed=7) == bootstrap_mean_ci(list(values), seed=7)
    assert bootstrap_mean_ci(values, seed=7) != bootstrap_mean_ci(values, seed=8)


def test_bootstrap_edges_and_an_exact_case() -> None:
    assert all(math.isnan(v) for v in bootstrap_mean_ci([]))
    assert bootstrap_mean_ci([0.3]) == (0.3, 0.3)
    # two values 0 and 1: a resample mean is 0, 0.5 or 1 with probabilities 1/4, 1/2, 1/4
    assert bootstrap_mean_ci([0.0, 1.0], n_boot=4000) == (0.0, 1.0)
    assert bootstrap_mean_ci([0.0, 1.0], n_boot=4000, alpha=0.4) == (0.0, 1.0)
    assert bootstrap_mean_ci([0.0, 1.0], n_boot=4000, alpha=0.9) == (0.5, 0.5)


def test_bootstrap_many_groups_equals_one_group_at_a_time() -> None:
    rng = np.random.default_rng(3)
    groups = {("s", lang, metric): rng.random(n)
              for lang, n in (("hi", 40), ("sw", 40), ("yo", 7), ("ko", 1))
              for metric in ("citation_recall", "support")}
    groups[("s", "empty", "x")] = np.array([])
    got = bootstrap_mean_cis(groups, seed=11)
    assert list(got) == list(groups)
    for key, values in groups.items():
        lo, hi = bootstrap_mean_ci(values, seed=11)
        iv = got[key]
        assert iv.n == values.size
        if values.size == 0:
            assert math.isnan(iv.low) and math.isnan(iv.estimate)
        else:
            assert (iv.low, iv.high) == (lo, hi)
            assert iv.estimate == pytest.approx(values.mean())
    with pytest.raises(StatsError, match=r"group \('s', 'hi', 'x'\)\[1\] = nan"):
        bootstrap_mean_cis({("s", "hi", "x"): [0.1, float("nan")]})


def test_clustered_bootstrap() -> None:
    values = np.random.default_rng(5).random(60)
    # one value per case: the ordinary bootstrap
    single = clustered_bootstrap_ci([[v] for v in values], seed=4)
    assert (single.low, single.high) == bootstrap_mean_ci(values, seed=4)
    assert single.estimate == pytest.approx(values.mean())
    # every repeat identical: same interval as one value per case (repeats add no information)
    same = clustered_bootstrap_ci([[v] * 5 for v in values], seed=4)
    assert same.low == pytest.approx(single.low, abs=1e-12) and same.high == pytest.approx(single.high, abs=1e-12)
    # estimate weights cases by their samples; empty cases are left out
    uneven = clustered_bootstrap_ci([[1.0, 1.0, 1.0], [0.0], []], seed=0)
    assert uneven.estimate == 0.75 and uneven.n == 2
    assert math.isnan(clustered_bootstrap_ci([[], []]).estimate)
    assert clustered_bootstrap_ci([[0.2, 0.4]]).low == pytest.approx(0.3)


def test_clustered_interval_is_wider_than_the_naive_one_for_correlated_repeats() -> None:
    rng = np.random.default_rng(9)
    case_means = rng.random(100)
    samples = [list(np.clip(m + rng.normal(0, 0.05, size=5), 0, 1)) for m in case_means]
    clustered = clustered_bootstrap_ci(samples, seed=1)
    naive_low, naive_high = bootstrap_mean_ci(np.concatenate(samples), seed=1)
    assert clustered.high - clustered.low > 1.8 * (naive_high - naive_low)


def test_minimum_detectable_effect_by_hand() -> None:
    # (1.959964 + 0.841621) * 0.35 / sqrt(100)
    assert minimum_detectable_effect(100, 0.35) == pytest.approx(0.0980555, abs=1e-6)
    assert minimum_detectable_effect(100) == minimum_detectable_effect(100, 0.35)
    # one-sided: (1.644854 + 0.841621) * 0.2 / sqrt(400)
    assert minimum_detectable_effect(400, 0.2, alternative="less") == pytest.approx(0.0248648, abs=1e-6)
    assert cases_needed(0.05, 0.35) == 385  # (2.801585 * 7)^2 = 384.6
    assert cases_needed(0.0980555, 0.35) == 100
    with pytest.raises(StatsError, match="effect"):
        cases_needed(0.0)
    with pytest.raises(StatsError, match="power"):
        minimum_detectable_effect(10, power=1.0)
    assert paired_sigma(0.35, 0.5) == pytest.approx(0.35)
    assert labels_needed(0.05, 0.4) == 246  # (1.96 * 0.4 / 0.05)^2 = 245.9


def test_detectable_effects_per_group() -> None:
    rng = np.random.default_rng(2)
    groups = {("s", "hi"): rng.random(200), ("s", "yo"): rng.random(5), ("s", "sw"): np.ones(50), ("s", "x"): []}
    got = detectable_effects(groups)
    assert set(got) == {("s", "hi"), ("s", "yo"), ("s", "sw")}
    hi = got[("s", "hi")]
    assert hi.sigma_source == "observed" and hi.sigma == pytest.approx(np.std(groups[("s", "hi")], ddof=1))
    assert hi.mde == pytest.approx(minimum_detectable_effect(200, hi.sigma))
    assert got[("s", "yo")].sigma_source == "assumed" and got[("s", "yo")].sigma == 0.35
    assert got[("s", "sw")].sigma == 0.05  # a constant metric is floored, not "detects anything"
    rows = sample_size_table()
    assert {"sigma": 0.35, "effect": 0.05, "cases": 385} in rows


def test_the_statistics_core_imports_neither_pytest_nor_scipy() -> None:
    code = ("import sys, pytest_mirage.stats, tests.helpers.simulate_stats; "
            "print(sorted(m for m in ('pytest', 'scipy', '_pytest', 'sklearn') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
