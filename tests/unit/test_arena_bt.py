"""Bradley-Terry fit and bootstrap tournaments, cross-checked against choix."""

from __future__ import annotations

import random
import time

import choix
import numpy as np
import pytest

from pytest_mirage.arena.bt import (
    ArenaError,
    Battle,
    battle_counts,
    bradley_terry,
    fit_strengths,
    mle_strengths,
    resample_counts,
)
from pytest_mirage.arena.numerics import kendall_tau
from tests.helpers.simulate_arena import simulate_battles


def _random_battles(n_models: int, n_queries: int, seed: int, tie_share: float = 0.0) -> list[Battle]:
    rng = np.random.default_rng(seed)
    q = rng.normal(scale=0.5, size=n_models)
    out = []
    for qi in range(n_queries):
        for _ in range(6):
            i, j = (int(v) for v in rng.choice(n_models, 2, replace=False))
            r = rng.random()
            winner = "tie" if r < tie_share else ("A" if rng.random() < 1 / (1 + np.exp(q[j] - q[i])) else "B")
            out.append(Battle(f"q{qi}", f"m{i}", f"m{j}", winner))
    return out


def _choix_pairs(battles: list[Battle], names: list[str], ties: str) -> list[tuple[int, int]]:
    idx = {n: k for k, n in enumerate(names)}
    pairs = []
    for b in battles:
        a, c = idx[b.model_a], idx[b.model_b]
        if b.winner == "A":
            pairs.append((a, c))
        elif b.winner == "B":
            pairs.append((c, a))
        elif ties == "half":
            pairs += [(a, c), (c, a)]
    return pairs


def _choix_fit(n: int, pairs: list[tuple[int, int]], alpha: float) -> np.ndarray:
    est = choix.opt_pairwise(n, pairs, alpha=alpha, tol=1e-12)
    return est - est.mean()


def test_choix_testcase_pairwise() -> None:
    # choix's "testcase-pairwise": 0 beats 1 twice, 1 beats 2, 2 beats 0
    battles = [Battle("q1", "m0", "m1", "A"), Battle("q2", "m0", "m1", "A"),
               Battle("q3", "m1", "m2", "A"), Battle("q4", "m2", "m0", "A")]
    est = mle_strengths(battles, alpha=0.0)
    assert [est["m0"], est["m1"], est["m2"]] == pytest.approx([0.4196, -0.4196, 0.0], abs=1e-4)
    ref = _choix_fit(3, [(0, 1), (0, 1), (1, 2), (2, 0)], 0.0)
    assert [est["m0"], est["m1"], est["m2"]] == pytest.approx(ref.tolist(), abs=1e-8)


@pytest.mark.parametrize("alpha", [0.0, 0.01, 0.5])
@pytest.mark.parametrize("seed", [1, 2])
def test_matches_choix_on_random_battles(alpha: float, seed: int) -> None:
    battles = _random_battles(7, 40, seed)
    names = sorted({b.model_a for b in battles} | {b.model_b for b in battles})
    est = mle_strengths(battles, alpha=alpha)
    ref = _choix_fit(len(names), _choix_pairs(battles, names, "drop"), alpha)
    assert [est[n] for n in names] == pytest.approx(ref.tolist(), abs=1e-7)
    assert sum(est.values()) == pytest.approx(0.0, abs=1e-12)


def test_half_ties_match_choix_on_doubled_data() -> None:
    # weight-1/2 ties: the objective is half that of doubled data where a tie is one win each way
    battles = _random_battles(6, 40, 5, tie_share=0.3)
    assert any(b.winner == "tie" for b in battles)
    names = sorted({b.model_a for b in battles} | {b.model_b for b in battles})
    est = mle_strengths(battles, ties="half", alpha=0.01)
    decisive = [b for b in battles if b.winner != "tie"]
    doubled = _choix_pairs(decisive, names, "drop") * 2 + _choix_pairs(
        [b for b in battles if b.winner == "tie"], names, "half")
    ref = _choix_fit(len(names), doubled, 0.02)
    assert [est[n] for n in names] == pytest.approx(ref.tolist(), abs=1e-7)
    dropped = mle_strengths(battles, ties="drop", alpha=0.01)
    assert dropped != pytest.approx(est)


def test_bootstrap_equals_per_tournament_choix_loop() -> None:
    battles = _random_battles(5, 30, 7)
    counts = battle_counts(battles)
    lb = bradley_terry(battles, tournaments=4, seed=11, alpha=0.05)
    mult = resample_counts(len(counts.query_ids), 4, 11)
    by_query: dict[str, list[Battle]] = {}
    for b in battles:
        by_query.setdefault(b.query_id, []).append(b)
    for t in range(4):
        resampled = [b for q, k in zip(counts.query_ids, mult[t], strict=True)
                     for _ in range(int(k)) for b in by_query[q]]
        ref = _choix_fit(5, _choix_pairs(resampled, list(counts.models), "drop"), 0.05)
        assert lb.samples[t] == pytest.approx(ref, abs=1e-7)
    assert mult.sum(axis=1).tolist() == [30.0] * 4


def test_recovers_known_strengths() -> None:
    qualities = {f"sys{k:02d}": float(v) for k, v in enumerate(np.linspace(-1.5, 1.5, 19))}
    battles = simulate_battles(qualities, 100, seed=3)  # an exact Bradley-Terry judge
    lb = bradley_terry(battles, tournaments=50, seed=0)
    names = sorted(qualities)
    got = lb.strengths()
    err = max(abs(got[n] - qualities[n]) for n in names)  # qualities are already centred
    assert err < 0.15
    assert kendall_tau([got[n] for n in names], [qualities[n] for n in names]) >= 0.95
    top = lb.rows[0]
    assert top.model == "sys18" and top.rank == 1
    inside = sum(r.ci_low <= qualities[r.model] <= r.ci_high for r in lb.rows)
    assert inside >= 16  # 95% intervals: about 18 of 19 should cover the truth


def test_leaderboard_fields_and_reproducibility() -> None:
    battles = _random_battles(5, 30, 9)
    a = bradley_terry(battles, tournaments=30, seed=4)
    b = bradley_terry(list(reversed(battles)), tournaments=30, seed=4)
    c = bradley_terry(battles, tournaments=30, seed=5)
    assert [r.strength for r in a.rows] == [r.strength for r in b.rows]
    assert [r.strength for r in a.rows] != [r.strength for r in c.rows]
    assert a.samples.shape == (30, 5)
    assert np.allclose(a.samples.sum(axis=1), 0.0, atol=1e-9)
    for r in a.rows:
        col = a.samples[:, a.names.index(r.model)]
        assert r.strength == pytest.approx(col.mean())
        assert r.ci_low == pytest.approx(np.percentile(col, 2.5))
        assert r.ci_high == pytest.approx(np.percentile(col, 97.5))
        assert r.ci_low <= r.strength <= r.ci_high
    assert [r.rank for r in a.rows] == [1, 2, 3, 4, 5]
    assert all(x.strength >= y.strength for x, y in zip(a.rows, a.rows[1:], strict=False))
    rows = a.to_json("suite1", "all")
    assert rows[0] == {"suite": "suite1", "lang": "all", "model": a.rows[0].model,
                       "strength": a.rows[0].strength, "ci_low": a.rows[0].ci_low,
                       "ci_high": a.rows[0].ci_high, "rank": 1}


def test_never_winning_and_never_losing_models_stay_finite() -> None:
    battles = []
    for q in range(10):
        battles += [Battle(f"q{q}", "best", "mid", "A"), Battle(f"q{q}", "worst", "mid", "B"),
                    Battle(f"q{q}", "mid", "other", "A" if q % 2 else "B"),
                    Battle(f"q{q}", "worst", "best", "B")]
    lb = bradley_terry(battles, tournaments=20, seed=0)
    by = lb.by_model()
    assert all(np.isfinite([r.strength, r.ci_low, r.ci_high]).all() for r in lb.rows)
    assert by["best"].rank == 1 and by["worst"].rank == 4
    assert by["worst"].strength < -3 and by["best"].strength > 3
    with pytest.raises(ArenaError, match=r"never winning \['worst'\], never losing \['best'\]"):
        mle_strengths(battles, alpha=0.0)


def test_bad_input_is_an_error() -> None:
    with pytest.raises(ArenaError, match=r"winner 'X' is not one of \['A', 'B', 'tie'\]"):
        Battle("q1", "a", "b", "X")  # type: ignore[arg-type]
    with pytest.raises(ArenaError, match="plays against itself"):
        Battle("q1", "a", "a", "A")
    with pytest.raises(ArenaError, match="no battles"):
        bradley_terry([])
    ok = [Battle("q1", "a", "b", "A"), Battle("q2", "b", "a", "A")]
    with pytest.raises(ArenaError, match=r"models \['c'\] have no battles"):
        bradley_terry(ok, models=["a", "b", "c"])
    with pytest.raises(ArenaError, match=r"not in models=\['a'\]"):
        bradley_terry(ok, models=["a"])
    with pytest.raises(ArenaError, match="ties='half'"):
        bradley_terry([Battle("q1", "a", "b", "tie")])
    with pytest.raises(ArenaError, match="ties='sometimes'"):
        bradley_terry(ok, ties="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ArenaError, match="tournaments=0"):
        bradley_terry(ok, tournaments=0)
    with pytest.raises(ArenaError, match="non-negative"):
        fit_strengths(np.array([[0.0, -1.0], [1.0, 0.0]]))


def test_speed_19_models_100_queries_200_tournaments() -> None:
    qualities = {f"sys{k:02d}": float(v) for k, v in enumerate(np.linspace(-1.5, 1.5, 19))}
    battles = simulate_battles(qualities, 100, seed=1)
    assert len(battles) == 100 * 171 * 2
    random.Random(0).shuffle(battles)
    start = time.perf_counter()
    lb = bradley_terry(battles, tournaments=200, seed=0)
    elapsed = time.perf_counter() - start
    assert lb.samples.shape == (200, 19)
    assert elapsed < 2.0, f"Bradley-Terry with 200 tournaments took {elapsed:.2f} s (target < 2 s)"
