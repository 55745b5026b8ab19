"""Bradley-Terry on very many battles and imported judgments with absurd values (issue 21, defects 6, 9)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pytest_mirage.arena.bt import (
    DEFAULT_ALPHA,
    Battle,
    battle_counts,
    bootstrap_strengths,
    fit_strengths,
    resample_counts,
)
from pytest_mirage.arena.imported import JudgmentFileError, read_judgments
from tests.helpers.simulate_arena import simulate_battles


def _gradient(theta: np.ndarray, w: np.ndarray, alpha: float) -> np.ndarray:
    p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
    n = w + w.T
    return w.sum(axis=1) - (n * p).sum(axis=1) - 2.0 * alpha * theta


def test_seventeen_million_battles_converge_to_the_optimum() -> None:
    # 100,000 battles per pair of 19 models: the unscaled Newton method stalled at steps of ~1e-10
    rng = np.random.default_rng(0)
    q = np.linspace(-1.5, 1.5, 19)
    p = 1.0 / (1.0 + np.exp(-(q[:, None] - q[None, :])))
    w = rng.binomial(np.full((8, 19, 19), 50_000), p).astype(np.float64)
    np.einsum("tii->ti", w)[:] = 0.0
    est = fit_strengths(w)
    for t in range(len(w)):
        grad = _gradient(est[t], w[t], DEFAULT_ALPHA)
        assert np.abs(grad).max() / w[t].sum() < 1e-10  # the optimum, at the precision of the data
        assert est[t] == pytest.approx(q - q.mean(), abs=0.02)


def test_aggregated_counts_give_the_dense_tensor_and_the_same_bootstrap() -> None:
    battles = simulate_battles({"a": 0.0, "b": 0.5, "c": 1.0, "d": -1.0}, 30, seed=3, tie_margin=0.3)
    counts = battle_counts(battles, ties="half")
    dense = np.zeros((len(counts.query_ids), 4, 4))
    qidx = {q: k for k, q in enumerate(counts.query_ids)}
    midx = {m: k for k, m in enumerate(counts.models)}
    for b in battles:
        i, j, k = qidx[b.query_id], midx[b.model_a], midx[b.model_b]
        if b.winner == "A":
            dense[i, j, k] += 1
        elif b.winner == "B":
            dense[i, k, j] += 1
        else:
            dense[i, j, k] += 0.5
            dense[i, k, j] += 0.5
    assert np.array_equal(counts.wins, dense) and np.array_equal(counts.total, dense.sum(axis=0))
    assert len(counts.cell_wins) <= len(battles) * 2
    mult = resample_counts(len(counts.query_ids), 7, 5)
    expected = (mult @ dense.reshape(len(dense), 16)).reshape(7, 4, 4)
    assert np.allclose(counts.resampled(mult), expected, rtol=0, atol=1e-9)
    assert np.allclose(bootstrap_strengths(counts, tournaments=7, seed=5), fit_strengths(expected), atol=1e-9)


def test_a_battle_per_query_does_not_build_a_dense_tensor() -> None:
    # 200,000 queries x 19 models would be 578 MB dense; the cells hold one entry per battle
    rng = np.random.default_rng(1)
    names = [f"m{k:02d}" for k in range(19)]
    pairs = rng.integers(0, 19, size=(200_000, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    battles = [Battle(f"q{k}", names[a], names[b], "A" if rng.random() < 0.5 else "B")
               for k, (a, b) in enumerate(pairs.tolist())]
    counts = battle_counts(battles)
    assert counts.cell_wins.nbytes < 8 * len(battles) + 1
    samples = bootstrap_strengths(counts, tournaments=3, seed=0)
    assert samples.shape == (3, 19) and np.all(np.isfinite(samples))


def _judgment(query_id: object) -> str:
    return json.dumps({"query_id": query_id, "model_A": "a", "model_B": "b", "verdict": "A"})


def test_a_five_thousand_digit_query_id_is_a_clear_error(tmp_path: Path) -> None:
    p = tmp_path / "battles.jsonl"
    p.write_text(_judgment(1) + "\n" + _judgment(1).replace('"query_id": 1', '"query_id": ' + "7" * 5000) + "\n",
                 encoding="utf-8")
    with pytest.raises(JudgmentFileError, match=r"battles\.jsonl:2: a number of 5,000 digits; a query_id or model "
                                                r"name has at most 300 characters"):
        read_judgments(p)
    p.write_text(_judgment("7" * 5000) + "\n", encoding="utf-8")
    with pytest.raises(JudgmentFileError, match=r"battles\.jsonl:1: field 'query_id' is .*at most 300"):
        read_judgments(p)
    p.write_text(_judgment(12345) + "\n", encoding="utf-8")
    assert read_judgments(p)[0].query_id == "12345"
