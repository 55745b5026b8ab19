"""Arena statistics (pure numerics): Bradley-Terry fit with bootstrap tournaments, the random-forest
surrogate judge, and simulated arenas for validation. scikit-learn is imported only when a
surrogate is trained; loading and applying one needs numpy alone."""

from __future__ import annotations

from .bt import (
    DEFAULT_ALPHA,
    DEFAULT_TOURNAMENTS,
    Battle,
    BattleCounts,
    Leaderboard,
    ModelStrength,
    battle_counts,
    bootstrap_strengths,
    bradley_terry,
    fit_strengths,
    mle_strengths,
)
from .numerics import ArenaError, competition_ranks, kendall_tau, percentile_interval, r2_score
from .surrogate import (
    Surrogate,
    SurrogateError,
    SurrogateHealth,
    SurrogateScore,
    load_surrogate,
    mean_features,
    surrogate_health,
    train_surrogate,
)

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_TOURNAMENTS",
    "ArenaError",
    "Battle",
    "BattleCounts",
    "Leaderboard",
    "ModelStrength",
    "Surrogate",
    "SurrogateError",
    "SurrogateHealth",
    "SurrogateScore",
    "battle_counts",
    "bootstrap_strengths",
    "bradley_terry",
    "competition_ranks",
    "fit_strengths",
    "kendall_tau",
    "load_surrogate",
    "mean_features",
    "mle_strengths",
    "percentile_interval",
    "r2_score",
    "surrogate_health",
    "train_surrogate",
]
