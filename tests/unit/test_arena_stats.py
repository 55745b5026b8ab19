"""Arena statistics helpers, cross-checked against scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from pytest_mirage.arena.numerics import (
    ArenaError,
    competition_ranks,
    kendall_tau,
    percentile_interval,
    r2_score,
)


@pytest.mark.parametrize("seed", range(5))
def test_kendall_tau_matches_scipy_tau_b_with_ties(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 6, size=25).astype(float)  # many ties
    y = x + rng.integers(-2, 3, size=25)
    assert kendall_tau(x, y) == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)


def test_kendall_tau_hand_values() -> None:
    assert kendall_tau([1, 2, 3], [1, 2, 3]) == 1.0
    assert kendall_tau([1, 2, 3], [3, 2, 1]) == -1.0
    # pairs (1,2) concordant, (1,3) concordant, (2,3) discordant -> (2 - 1) / 3
    assert kendall_tau([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)


def test_kendall_tau_rejects_constant_and_bad_input() -> None:
    with pytest.raises(ArenaError, match="constant"):
        kendall_tau([1, 1, 1], [1, 2, 3])
    with pytest.raises(ArenaError, match="equal length"):
        kendall_tau([1, 2], [1, 2, 3])
    with pytest.raises(ArenaError, match="non-finite"):
        kendall_tau([1, float("nan")], [1, 2])


def test_r2_matches_scipy_definition() -> None:
    rng = np.random.default_rng(3)
    y = rng.normal(size=10)
    p = y + rng.normal(scale=0.3, size=10)
    expected = 1 - np.sum((y - p) ** 2) / np.sum((y - y.mean()) ** 2)
    assert r2_score(y, p) == pytest.approx(expected, abs=1e-12)
    assert r2_score([1.0, 3.0], [1.0, 3.0]) == 1.0
    assert r2_score([1.0, 3.0], [2.0, 2.0]) == 0.0
    with pytest.raises(ArenaError, match="constant"):
        r2_score([2.0, 2.0], [1.0, 3.0])


def test_percentile_interval_and_ranks() -> None:
    samples = np.arange(1, 201, dtype=float)
    lo, hi = percentile_interval(samples)
    assert (lo, hi) == pytest.approx((float(np.percentile(samples, 2.5)), float(np.percentile(samples, 97.5))))
    assert lo == pytest.approx(5.975) and hi == pytest.approx(195.025)
    with pytest.raises(ArenaError, match="level"):
        percentile_interval(samples, 1.5)
    assert competition_ranks([0.5, 2.0, 0.5, -1.0]) == [2, 1, 2, 4]
