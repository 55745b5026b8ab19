"""Simulated arenas with known latent qualities, for validating the Bradley-Terry fit and the
surrogate judge (MIRAGE-Bench Tables 2 and 5 report the real-data figures).

The simulated judge compares two answers to a query: with answer quality ``q_m + e_qm``
(``e_qm ~ N(0, answer_noise)``: a model is better on some queries than on others) it sees

    u = (q_a + e_qa) - (q_b + e_qb) + position_bias + judge_noise * L,   L ~ Logistic(0, 1)

and says "tie" when ``|u| < tie_margin``, "A" when ``u > 0``, "B" otherwise. With the default
``answer_noise=0, judge_noise=1, tie_margin=0, position_bias=0`` the battles follow a
Bradley-Terry model whose strengths are exactly the qualities, so a fit must recover them.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations
from typing import Literal

import numpy as np

from pytest_mirage.arena.bt import Battle
from pytest_mirage.arena.numerics import ArenaError

Order = Literal["both", "random"]


def simulate_battles(qualities: Mapping[str, float], n_queries: int, *, seed: int = 0,
                     answer_noise: float = 0.0, judge_noise: float = 1.0, tie_margin: float = 0.0,
                     position_bias: float = 0.0, order: Order = "both") -> list[Battle]:
    """All model pairs on ``n_queries`` queries, judged in both orders or one random order."""
    names = sorted(qualities)
    if len(names) < 2 or n_queries < 1:
        raise ArenaError(f"need >= 2 models and >= 1 query; got {len(names)} models, {n_queries} queries")
    if order not in ("both", "random"):
        raise ArenaError(f"order={order!r}; expected 'both' or 'random'")
    rng = np.random.default_rng(seed)
    q = np.array([float(qualities[n]) for n in names])
    quality = q[None, :] + rng.normal(0.0, answer_noise, size=(n_queries, len(names))) if answer_noise > 0 \
        else np.broadcast_to(q, (n_queries, len(names)))
    pairs = list(combinations(range(len(names)), 2))
    shown: list[tuple[int, int, int]] = []  # (query, model shown as A, model shown as B)
    for qi in range(n_queries):
        for i, j in pairs:
            if order == "both":
                shown += [(qi, i, j), (qi, j, i)]
            else:
                shown.append((qi, i, j) if rng.random() < 0.5 else (qi, j, i))
    arr = np.array(shown, dtype=np.int64)
    u = (quality[arr[:, 0], arr[:, 1]] - quality[arr[:, 0], arr[:, 2]] + position_bias
         + judge_noise * rng.logistic(size=len(arr)))
    out: list[Battle] = []
    for (qi, a, b), val in zip(shown, u.tolist(), strict=True):
        winner: Literal["A", "B", "tie"] = "tie" if abs(val) < tie_margin else ("A" if val > 0 else "B")
        out.append(Battle(f"q{qi:04d}", names[a], names[b], winner))
    return out


def simulate_features(qualities: Mapping[str, float], *, n_informative: int = 5, n_noise: int = 1,
                      noise: float = 0.3, seed: int = 0) -> dict[str, dict[str, float]]:
    """Per-model mean "heuristic features" in [0, 1]: ``informative_k = sigmoid(w_k q + b_k + N(0, noise))``
    (w_k in [0.5, 1.5], b_k in [-0.5, 0.5]) and ``noise_k`` uniform, unrelated to quality."""
    names = sorted(qualities)
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.5, 1.5, size=n_informative)
    b = rng.uniform(-0.5, 0.5, size=n_informative)
    out: dict[str, dict[str, float]] = {}
    for n in names:
        z = w * float(qualities[n]) + b + rng.normal(0.0, noise, size=n_informative)
        feats = {f"informative_{k + 1}": float(1.0 / (1.0 + np.exp(-z[k]))) for k in range(n_informative)}
        feats.update({f"noise_{k + 1}": float(rng.uniform()) for k in range(n_noise)})
        out[n] = feats
    return out
