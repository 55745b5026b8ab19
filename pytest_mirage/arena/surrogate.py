"""The surrogate judge (MIRAGE-Bench §4.3): a random forest that regresses each model's
Bradley-Terry strength from that model's mean heuristic features, so CI can place a new model on
the arena leaderboard without paying for the LLM judge.

* Training uses scikit-learn (imported inside the functions that fit), then exports every tree to
  plain JSON. Loading and predicting need only numpy and the standard ``json`` module: a surrogate
  file is data, never code (no pickle), and is validated field by field on load.
* Health (Algorithm 1 / Table 5): over bootstrap tournaments that resample queries, fit on the
  training models minus a held-out set and report the held-out R² (mean and 95% percentile
  interval) and Kendall's tau between the surrogate's scores and the tournament's BT strengths over
  all models (Table 2). A cross-validated tau/R² (every model predicted while held out, against
  the full-data strengths) is reported as well: it is the figure that says how well the surrogate
  ranks models it has never seen.
* Health decision (:func:`health_decision`): whether a surrogate is fit to be saved and to gate a
  run, from its cross-validated tau / R² and the pairwise judge's reliability (position bias,
  swap consistency), with the reasons. Thresholds in :class:`HealthThresholds` (docs/statistics.md).
* A surrogate file is untrusted input: its size, nesting, integers, node counts, depth, values and
  total evaluation cost are checked before it is parsed or evaluated, and every problem is a
  :class:`SurrogateError` naming the file (never an ``OverflowError`` or ``RecursionError``).
  ``load_surrogate(path, suite=..., lang=...)`` also checks that the file belongs to that suite.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..defaults import SCORING_MODES
from ..errors import did_you_mean
from .bt import DEFAULT_ALPHA, Battle, TieMode, battle_counts, bootstrap_strengths, fit_strengths
from .numerics import ArenaError, competition_ranks, kendall_tau, percentile_interval, r2_score

FORMAT = "pytest-mirage-surrogate"
FORMAT_VERSION = 1
SCORINGS = SCORING_MODES  # the metric definitions features can be computed with
DEFAULT_TREES = 100
DEFAULT_HEALTH_TOURNAMENTS = 100
RETRAIN_HINT = "retrain it with --mirage-train-surrogate"

# Limits on a surrogate file, checked before it is parsed or evaluated. A forest trained on M
# models has at most 2M - 1 nodes per tree (one leaf per distinct training row); MIRAGE-sized
# surrogates (19 models, 100 trees) are ~0.3 MB with depth <= 12.
MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_NESTING = 16  # the format nests 5 deep
MAX_TREES = 1000
MAX_MODELS = 10_000
MAX_FEATURES = 1000
MAX_TOTAL_NODES = 2_000_000
MAX_DEPTH = 128
# sum of tree depths: one prediction costs about this many vectorised steps (~20 us each)
MAX_EVAL_STEPS = 20_000
MAX_NAME_CHARS = 500
MAX_PARAMS = 64
MAX_INT = 2 ** 53  # integers beyond this are not exact as floats
MAX_ABS_FEATURE = 1e12
MAX_ABS_STRENGTH = 1e4  # Bradley-Terry log-strengths are within +-20 with the default ridge
FLOAT32_MAX = 3.4028234663852886e38

Features = Mapping[str, Mapping[str, float]]  # model -> feature -> per-model mean value


class SurrogateError(ArenaError):
    """A surrogate cannot be trained, loaded or applied as asked."""


# ---------------------------------------------------------------- features


def mean_features(per_case: Mapping[str, Iterable[Mapping[str, float | None]]]) -> dict[str, dict[str, float]]:
    """Per-model mean of each feature over its cases, ignoring null (not applicable) values.

    ``per_case[model]`` is that model's per-case metric values. A feature that is null on every
    case of a model is left out for that model, so using it later is an explicit error.
    """
    out: dict[str, dict[str, float]] = {}
    for model, rows in per_case.items():
        sums: dict[str, float] = {}
        counts: dict[str, int] = {}
        for n, row in enumerate(rows):
            for name, value in row.items():
                if value is None:
                    continue
                v = float(value)
                if not math.isfinite(v):
                    raise SurrogateError(f"model {model!r}, case #{n}: feature {name!r} = {value!r} is "
                                         "not finite; features must be finite numbers or null")
                sums[name] = sums.get(name, 0.0) + v
                counts[name] = counts.get(name, 0) + 1
        out[model] = {name: sums[name] / counts[name] for name in sorted(sums)}
    return out


def feature_matrix(features: Features, models: Sequence[str], names: Sequence[str], *,
                   where: str = "the features") -> NDArray[np.float64]:
    """``(len(models), len(names))`` matrix; a missing or non-finite value is an error naming it."""
    x = np.empty((len(models), len(names)), dtype=np.float64)
    for i, model in enumerate(models):
        row = features.get(model)
        if row is None:
            raise SurrogateError(f"{where} have no entry for model {model!r}"
                                 f"{did_you_mean(model, features)}; known models: {sorted(features)}")
        missing = [n for n in names if n not in row or row[n] is None]
        if missing:
            raise SurrogateError(
                f"{where}: model {model!r} has no value for feature(s) {missing} (it has "
                f"{sorted(row)}). Compute those metrics in this run (they must not be null on every "
                "case), or choose a feature set without them")
        for j, n in enumerate(names):
            try:
                v = float(row[n])
            except OverflowError:
                v = math.inf
            if not math.isfinite(v):
                raise SurrogateError(f"{where}: model {model!r}, feature {n!r} = {row[n]!r} is not finite")
            if abs(v) > FLOAT32_MAX:
                raise SurrogateError(f"{where}: model {model!r}, feature {n!r} = {v!r} is beyond the float32 "
                                     "range the forest compares in")
            x[i, j] = v
    return x


def _feature_names(features: Features, models: Sequence[str], chosen: Sequence[str] | None) -> tuple[str, ...]:
    available = sorted({n for m in models for n in features.get(m, {})})
    if chosen is None:
        if not available:
            raise SurrogateError("no features given for the training models; a surrogate needs at "
                                 "least one per-model feature (e.g. mean metric values)")
        return tuple(available)
    names = tuple(chosen)
    if not names:
        raise SurrogateError("feature_names is empty; choose at least one feature")
    if len(set(names)) != len(names):
        raise SurrogateError(f"feature_names {list(names)} contain duplicates")
    for n in names:
        if n not in available:
            raise SurrogateError(f"unknown feature {n!r}{did_you_mean(n, available)}; "
                                 f"available: {available}")
    return names


# ---------------------------------------------------------------- trees as data


@dataclass(frozen=True, slots=True, eq=False)
class RegressionTree:
    """One exported regression tree. Node ``k`` is a leaf when ``left[k] == -1``; otherwise a
    sample goes left when ``x[feature[k]] <= threshold[k]`` (``x`` rounded to float32, as
    scikit-learn does) and right otherwise. Children always have larger indices than parents."""

    left: NDArray[np.int64]
    right: NDArray[np.int64]
    feature: NDArray[np.int64]
    threshold: NDArray[np.float64]
    value: NDArray[np.float64]

    def predict(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        node = np.zeros(x.shape[0], dtype=np.int64)
        rows = np.arange(x.shape[0])
        while True:
            inner = self.left[node] >= 0
            if not inner.any():
                return np.asarray(self.value[node], dtype=np.float64)
            go_left = x[rows, np.maximum(self.feature[node], 0)] <= self.threshold[node]
            node = np.where(inner, np.where(go_left, self.left[node], self.right[node]), node)

    def to_json(self) -> dict[str, list[Any]]:
        return {"left": self.left.tolist(), "right": self.right.tolist(), "feature": self.feature.tolist(),
                "threshold": self.threshold.tolist(), "value": self.value.tolist()}


def _export_tree(est: Any) -> RegressionTree:
    t = est.tree_
    left = np.asarray(t.children_left, dtype=np.int64)
    leaf = left < 0
    return RegressionTree(
        left=np.where(leaf, -1, left),
        right=np.where(leaf, -1, np.asarray(t.children_right, dtype=np.int64)),
        feature=np.where(leaf, -1, np.asarray(t.feature, dtype=np.int64)),
        threshold=np.where(leaf, 0.0, np.asarray(t.threshold, dtype=np.float64)),
        value=np.asarray(t.value, dtype=np.float64).reshape(-1))


def fit_forest(x: NDArray[np.float64], y: NDArray[np.float64], *, n_estimators: int = DEFAULT_TREES,
               seed: int = 0) -> tuple[RegressionTree, ...]:
    """Fit scikit-learn's ``RandomForestRegressor`` (defaults otherwise) and export its trees."""
    try:
        from sklearn.ensemble import RandomForestRegressor  # type: ignore[import-untyped]
    except ImportError as exc:  # pragma: no cover - scikit-learn is a core dependency
        raise SurrogateError('training a surrogate needs scikit-learn: pip install "scikit-learn>=1.3"') from exc
    if n_estimators < 1:
        raise SurrogateError(f"n_estimators={n_estimators}; expected at least 1 (default {DEFAULT_TREES})")
    forest = RandomForestRegressor(n_estimators=n_estimators, random_state=seed, n_jobs=1)
    forest.fit(x, y)
    return tuple(_export_tree(est) for est in forest.estimators_)


def predict_forest(trees: Sequence[RegressionTree], x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Mean of the trees' predictions (what ``RandomForestRegressor.predict`` computes)."""
    x32 = np.asarray(x, dtype=np.float32).astype(np.float64)
    return np.asarray(np.mean([t.predict(x32) for t in trees], axis=0), dtype=np.float64)


# ---------------------------------------------------------------- health


@dataclass(frozen=True, slots=True)
class SurrogateHealth:
    """How well the surrogate reproduces the arena (MIRAGE Tables 2 and 5).

    ``r2_*``: held-out R² over bootstrap tournaments (Algorithm 1). ``tau_*``: Kendall's tau between
    the surrogate's scores of all models and the tournament's BT strengths. ``tau_cv``/``r2_cv``:
    every model predicted while held out (folds of ``holdout`` models) vs the full-data strengths.
    ``tournaments`` counts the tournaments behind the figures (ones where R² or tau is undefined,
    e.g. equal held-out strengths, are left out).
    """

    r2_mean: float
    r2_ci_low: float
    r2_ci_high: float
    tau_mean: float
    tau_ci_low: float
    tau_ci_high: float
    tau_cv: float
    r2_cv: float
    tournaments: int
    holdout: int
    models: int

    def to_json(self) -> dict[str, float | int]:
        return {"r2_mean": self.r2_mean, "r2_ci_low": self.r2_ci_low, "r2_ci_high": self.r2_ci_high,
                "tau_mean": self.tau_mean, "tau_ci_low": self.tau_ci_low, "tau_ci_high": self.tau_ci_high,
                "tau_cv": self.tau_cv, "r2_cv": self.r2_cv, "tournaments": self.tournaments,
                "holdout": self.holdout, "models": self.models}


def surrogate_health(features: Features, battles: Iterable[Battle], *,
                     feature_names: Sequence[str] | None = None,
                     holdout: int | Sequence[str] | None = None,
                     tournaments: int = DEFAULT_HEALTH_TOURNAMENTS, seed: int = 0, ties: TieMode = "drop",
                     alpha: float = DEFAULT_ALPHA, n_estimators: int = DEFAULT_TREES,
                     level: float = 0.95) -> SurrogateHealth:
    """Algorithm 1 of MIRAGE-Bench: per bootstrap tournament, fit the forest on the models not held
    out and score the held-out ones. ``holdout`` is a number of models drawn at random per
    tournament (seeded) or a fixed list of model names (MIRAGE held out two named models, one weak
    and one strong). The default, ``max(2, ceil(M / 5))`` random models (4 of 19), is a 80/20 split:
    R² over only 2 random models is dominated by draws of two near-equal models (tiny SS_tot), which
    makes its mean meaningless (see docs/arena.md)."""
    counts = battle_counts(battles, ties=ties)
    models = counts.models
    names = _feature_names(features, models, feature_names)
    x = feature_matrix(features, models, names, where="the training features")
    m = len(models)
    if isinstance(holdout, str):
        raise SurrogateError(f"holdout={holdout!r}; expected a number of models or a list of model names")
    if holdout is None or isinstance(holdout, int):
        k = max(2, math.ceil(m / 5)) if holdout is None else holdout
        fixed: NDArray[np.int64] | None = None
    else:
        unknown = [h for h in holdout if h not in models]
        if unknown:
            raise SurrogateError(f"holdout models {unknown} are not in the arena; arena models: {list(models)}")
        fixed = np.array(sorted({models.index(h) for h in holdout}), dtype=np.int64)
        k = int(fixed.size)
    if k < 2 or m - k < 2:
        raise SurrogateError(f"holdout of {k} models out of {m}: R² needs at least 2 held-out models and "
                             "the forest at least 2 training models; use more models or another holdout")
    samples = bootstrap_strengths(counts, tournaments=tournaments, seed=seed, alpha=alpha)
    rng = np.random.default_rng([seed, 1])
    r2s: list[float] = []
    taus: list[float] = []
    for t in range(tournaments):
        hold = fixed if fixed is not None else np.sort(rng.choice(m, size=k, replace=False))
        train = np.setdiff1d(np.arange(m), hold)
        trees = fit_forest(x[train], samples[t, train], n_estimators=n_estimators, seed=seed + t)
        pred = predict_forest(trees, x)
        try:
            r2s.append(r2_score(samples[t, hold], pred[hold]))
        except ArenaError:
            pass  # held-out strengths exactly equal: R² undefined for this tournament
        try:
            taus.append(kendall_tau(pred, samples[t]))
        except ArenaError:
            pass  # constant prediction or strengths: tau undefined for this tournament
    if not r2s or not taus:
        raise SurrogateError("R² / tau are undefined in every tournament (constant strengths or "
                             "predictions): the arena does not separate the models")
    # cross-validated figures on the full-data strengths
    full = fit_strengths(counts.total, alpha=alpha)
    order = np.random.default_rng([seed, 2]).permutation(m)  # random folds of k models
    oof = np.empty(m)
    for start in range(0, m, k):
        fold = order[start:start + k]
        if m - fold.size < 2:
            raise SurrogateError(f"cannot hold out {fold.size} of {m} models")
        train = np.setdiff1d(np.arange(m), fold)
        oof[fold] = predict_forest(fit_forest(x[train], full[train], n_estimators=n_estimators,
                                              seed=seed + start), x[fold])
    r2_lo, r2_hi = percentile_interval(r2s, level)
    tau_lo, tau_hi = percentile_interval(taus, level)
    return SurrogateHealth(r2_mean=float(np.mean(r2s)), r2_ci_low=r2_lo, r2_ci_high=r2_hi,
                           tau_mean=float(np.mean(taus)), tau_ci_low=tau_lo, tau_ci_high=tau_hi,
                           tau_cv=kendall_tau(oof, full), r2_cv=r2_score(full, oof),
                           tournaments=min(len(r2s), len(taus)), holdout=k, models=m)


# ---------------------------------------------------------------- health decision


@dataclass(frozen=True, slots=True)
class HealthThresholds:
    """When a surrogate is fit to be saved and to gate a run (see docs/statistics.md).

    ``min_tau_cv``: cross-validated Kendall tau (every model ranked while held out) must reach
    this; a surrogate on informative features reaches 0.79-0.95 in the arena simulation
    (docs/arena.md), one on unrelated features -0.25..-0.14. ``min_r2_cv``: a cross-validated R²
    below 0 predicts held-out models worse than their mean strength. ``max_position_rate``: the
    judge may pick either presentation position in at most this share of its decisive verdicts
    (an unbiased judge is near 0.5; "always [[A]]" is 1.0). ``min_swap_consistency``: share of
    pairs judged in both orders where the same model won; a judge that follows the position scores
    near 0, a coin flip 0.5. The judge figures decide only over at least ``min_judged`` verdicts
    (decisive ones for the position rate, swapped pairs for consistency); below that they warn.
    """

    min_tau_cv: float = 0.5
    min_r2_cv: float = 0.0
    max_position_rate: float = 0.85
    min_swap_consistency: float = 0.4
    min_judged: int = 20
    min_models: int = 6


DEFAULT_HEALTH_THRESHOLDS = HealthThresholds()


@dataclass(frozen=True, slots=True)
class HealthDecision:
    """``healthy`` is False when any ``reasons`` apply; ``warnings`` are figures too thin or
    missing to decide on (they do not make a surrogate unhealthy)."""

    healthy: bool
    reasons: tuple[str, ...]
    warnings: tuple[str, ...] = ()

    def describe(self) -> str:
        head = "healthy" if self.healthy else "unhealthy: " + "; ".join(self.reasons)
        return head + ("" if not self.warnings else " (note: " + "; ".join(self.warnings) + ")")

    def to_json(self) -> dict[str, Any]:
        return {"healthy": self.healthy, "reasons": list(self.reasons), "warnings": list(self.warnings)}


def _figure(source: Any, name: str) -> Any:
    if source is None:
        return None
    if isinstance(source, Mapping):
        return source.get(name)
    return getattr(source, name, None)


def health_decision(health: SurrogateHealth | Mapping[str, Any] | None, reliability: Any = None, *,
                    thresholds: HealthThresholds = DEFAULT_HEALTH_THRESHOLDS) -> HealthDecision:
    """Decide whether a surrogate may be saved and used to gate, and say why not.

    ``health``: its :class:`SurrogateHealth` (or the ``health`` object of a file or report);
    ``reliability``: the pairwise judge's ``JudgeReliability`` or its JSON (``position_a_rate``,
    ``swap_consistency``, ``decided``, ``ties``, ``swap_pairs``), None when unknown.
    """
    t = thresholds
    reasons: list[str] = []
    warnings: list[str] = []
    tau, r2 = _figure(health, "tau_cv"), _figure(health, "r2_cv")
    if health is None or tau is None or r2 is None:
        reasons.append("no cross-validated health figures (tau_cv, r2_cv): the surrogate's ranking of unseen "
                       f"models is unknown; {RETRAIN_HINT}")
    else:
        if not float(tau) >= t.min_tau_cv:
            reasons.append(f"cross-validated Kendall tau {float(tau):.2f} < {t.min_tau_cv:.2f}: it does not rank "
                           "models it was not trained on (are the features related to quality?)")
        if not float(r2) >= t.min_r2_cv:
            reasons.append(f"cross-validated R² {float(r2):.2f} < {t.min_r2_cv:.2f}: it predicts held-out models "
                           "worse than their average strength")
        models = _figure(health, "models")
        if isinstance(models, int) and models < t.min_models:
            warnings.append(f"health figures rest on {models} models; tau and R² over fewer than "
                            f"{t.min_models} models are coarse")
    if reliability is None:
        warnings.append("judge reliability unknown (position bias and swap consistency not checked)")
    else:
        rate = _figure(reliability, "position_a_rate")
        decided, ties = _figure(reliability, "decided"), _figure(reliability, "ties")
        decisive = decided - ties if isinstance(decided, int) and isinstance(ties, int) else None
        if rate is not None and (decisive is None or decisive >= t.min_judged):
            top = max(float(rate), 1.0 - float(rate))
            if top > t.max_position_rate:
                pos = "first" if float(rate) >= 0.5 else "second"
                reasons.append(f"the judge picked the answer shown {pos} in {top:.0%} of its decisive verdicts "
                               f"(position bias; at most {t.max_position_rate:.0%} allowed): its battles rank "
                               "presentation order, not answers")
        elif rate is not None:
            warnings.append(f"position bias measured on only {decisive} decisive verdicts")
        swap, pairs = _figure(reliability, "swap_consistency"), _figure(reliability, "swap_pairs")
        if swap is None:
            warnings.append("swap consistency not measured (no pair judged in both orders; use order=both)")
        elif isinstance(pairs, int) and pairs < t.min_judged:
            warnings.append(f"swap consistency measured on only {pairs} pairs")
        elif float(swap) < t.min_swap_consistency:
            reasons.append(f"swap consistency {float(swap):.2f} < {t.min_swap_consistency:.2f}: the judge's verdict "
                           "changes when the two answers swap places")
    return HealthDecision(not reasons, tuple(reasons), tuple(warnings))


# ---------------------------------------------------------------- the surrogate


@dataclass(frozen=True, slots=True)
class SurrogateScore:
    """A model's place on the surrogate leaderboard. ``trained``: one of the training models
    scored from its stored training features (a model of the current run replaces it)."""

    model: str
    score: float
    rank: int
    trained: bool


@dataclass(frozen=True, slots=True, eq=False)
class Surrogate:
    """A trained surrogate judge: feature list, forest, training data and metadata."""

    features: tuple[str, ...]
    trees: tuple[RegressionTree, ...]
    training_features: Mapping[str, Mapping[str, float]]
    training_strengths: Mapping[str, float]
    created: str
    judge: str
    suite: str | None = None
    lang: str | None = None
    health: SurrogateHealth | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    source: str = "<memory>"  # where it was loaded from, for error messages
    # the pairwise judge's reliability figures when it was trained (JudgeReliability.to_json())
    judge_reliability: Mapping[str, float | int | None] | None = None
    # the metric definitions its features were computed with: "default" or "mirage" (MIRAGE-Bench's
    # evaluation code); a run applies it only with the same definitions
    scoring: str = "default"

    @property
    def training_models(self) -> tuple[str, ...]:
        return tuple(sorted(self.training_strengths))

    def decision(self, thresholds: HealthThresholds = DEFAULT_HEALTH_THRESHOLDS) -> HealthDecision:
        """:func:`health_decision` from the health and judge figures stored with the surrogate."""
        return health_decision(self.health, self.judge_reliability, thresholds=thresholds)

    def predict(self, features: Features) -> dict[str, float]:
        """``surrogate_score`` per model of ``features``; every trained feature must be present."""
        models = sorted(features)
        if not models:
            return {}
        x = feature_matrix(features, models, self.features,
                           where=f"surrogate {self.source} (trained on features {list(self.features)}); "
                                 "the current run")
        return dict(zip(models, predict_forest(self.trees, x).tolist(), strict=True))

    def rank(self, features: Features) -> tuple[SurrogateScore, ...]:
        """Rank the models of ``features`` among the training models (``surrogate_rank``).

        Every model is scored by the surrogate (training models from their stored features, so all
        scores come from the same function); 1 = best, equal scores share a rank.
        """
        merged: dict[str, Mapping[str, float]] = {m: f for m, f in self.training_features.items()
                                                  if m not in features}
        scores = self.predict(features)
        if merged:
            scores.update(dict(zip(sorted(merged), predict_forest(
                self.trees, feature_matrix(merged, sorted(merged), self.features,
                                           where=f"surrogate {self.source} training features")).tolist(),
                strict=True)))
        names = sorted(scores)
        # round away floating-point summation noise (batch-shape dependent) so ties rank stably
        ranks = competition_ranks([round(scores[n], 9) for n in names])
        out = [SurrogateScore(model=n, score=scores[n], rank=r, trained=n not in features)
               for n, r in zip(names, ranks, strict=True)]
        return tuple(sorted(out, key=lambda s: (s.rank, s.model)))

    # ------------------------------------------------------------ persistence

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT, "version": FORMAT_VERSION, "created": self.created, "judge": self.judge,
            "suite": self.suite, "lang": self.lang, "scoring": self.scoring, "features": list(self.features),
            "training": {"models": list(self.training_models),
                         "strengths": {m: self.training_strengths[m] for m in self.training_models},
                         "features": {m: {n: self.training_features[m][n] for n in self.features}
                                      for m in self.training_models}},
            "health": None if self.health is None else self.health.to_json(),
            "judge_reliability": None if self.judge_reliability is None else dict(self.judge_reliability),
            "params": dict(self.params),
            "forest": {"kind": "random_forest_regressor", "trees": [t.to_json() for t in self.trees]},
        }

    def save(self, path: str | Path) -> None:
        """Write the surrogate as JSON (data only; loading never executes code). The file is
        written next to its destination and renamed into place, so a crash or a full disk never
        leaves a truncated surrogate behind."""
        text = json.dumps(self.to_json(), ensure_ascii=False, allow_nan=False, indent=1) + "\n"
        dest = Path(path)
        tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, dest)
        finally:
            tmp.unlink(missing_ok=True)

    @classmethod
    def load(cls, path: str | Path, *, suite: str | None = None, lang: str | None = None) -> Surrogate:
        """Read and validate a surrogate file written by :meth:`save`.

        ``suite``/``lang``: the suite and language it is about to be used for; a file trained for
        another suite or language (or carrying no identity) is refused.
        """
        p = Path(path)
        data = _read_json(p)
        return cls.from_json(data, source=str(p), suite=suite, lang=lang)

    @classmethod
    def from_json(cls, data: Any, *, source: str = "<json>", suite: str | None = None,
                  lang: str | None = None) -> Surrogate:
        try:
            sur = _parse(data, source)
        except SurrogateError:
            raise
        except (ArithmeticError, LookupError, TypeError, ValueError, RecursionError) as exc:
            # every check above should have caught it; never let a tampered file end the session
            raise SurrogateError(f"{source}: cannot use the surrogate file ({type(exc).__name__}: {exc}); "
                                 f"{RETRAIN_HINT}") from exc
        _check_identity(sur, source, suite, lang)
        return sur


def train_surrogate(features: Features, strengths: Mapping[str, float], *,
                    feature_names: Sequence[str] | None = None, n_estimators: int = DEFAULT_TREES,
                    seed: int = 0, judge: str = "", suite: str | None = None, lang: str | None = None,
                    health: SurrogateHealth | None = None, created: str | None = None,
                    judge_reliability: Mapping[str, float | int | None] | None = None,
                    scoring: str = "default") -> Surrogate:
    """Fit the forest from per-model mean ``features`` to BT ``strengths`` (one entry per model).

    The training models are the keys of ``strengths``; each needs every chosen feature.
    ``judge_reliability`` (the pairwise judge's ``JudgeReliability.to_json()``) is stored with the
    surrogate so that :meth:`Surrogate.decision` can repeat the health decision when it is loaded.
    ``scoring``: the metric definitions the features were computed with (stored; see
    :attr:`Surrogate.scoring`).
    """
    if scoring not in SCORINGS:
        raise SurrogateError(f"scoring {scoring!r} is not one of {list(SCORINGS)}")
    models = sorted(strengths)
    if len(models) < 2:
        raise SurrogateError(f"a surrogate needs at least 2 training models with strengths; got {models}")
    names = _feature_names(features, models, feature_names)
    x = feature_matrix(features, models, names, where="the training features")
    y = np.array([float(strengths[m]) for m in models], dtype=np.float64)
    if not np.all(np.isfinite(y)):
        raise SurrogateError(f"strengths must be finite; got {dict(zip(models, y.tolist(), strict=True))}")
    trees = fit_forest(x, y, n_estimators=n_estimators, seed=seed)
    return Surrogate(
        features=names, trees=trees,
        training_features={m: {n: float(x[i, j]) for j, n in enumerate(names)} for i, m in enumerate(models)},
        training_strengths={m: float(y[i]) for i, m in enumerate(models)},
        created=created or datetime.now(UTC).isoformat(timespec="seconds"), judge=judge, suite=suite,
        lang=lang, health=health, params={"n_estimators": n_estimators, "seed": seed},
        judge_reliability=None if judge_reliability is None else dict(judge_reliability), scoring=scoring)


# ---------------------------------------------------------------- loading (strict validation)

# a JSON string literal, unrolled so that the regex engine does not backtrack per character
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_OPEN = {ord("["), ord("{")}
_CLOSE = {ord("]"), ord("}")}
# characters that must not reach a terminal or a report from a name in the file
_BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _fail(source: str, message: str) -> SurrogateError:
    return SurrogateError(f"{source}: {message}; {RETRAIN_HINT}")


def _read_json(p: Path) -> Any:
    """Read and decode a surrogate file with every size check done before parsing."""
    source = str(p)
    try:
        st = p.stat()
        if not stat.S_ISREG(st.st_mode):
            raise _fail(source, "not a regular file")
        if st.st_size > MAX_FILE_BYTES:
            raise _fail(source, f"the file is {st.st_size:,} bytes; a surrogate file may hold at most "
                                f"{MAX_FILE_BYTES:,} bytes (a MIRAGE-sized one is ~0.3 MB)")
        with p.open("rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise _fail(source, f"cannot read the surrogate file ({exc.strerror or exc})") from exc
    if len(raw) > MAX_FILE_BYTES:
        raise _fail(source, f"the file holds more than {MAX_FILE_BYTES:,} bytes")
    depth = _nesting(raw)
    if depth > MAX_NESTING:
        raise _fail(source, f"JSON nested {depth} levels deep; the surrogate format nests at most 5 "
                            f"(limit {MAX_NESTING})")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _fail(source, f"not valid surrogate JSON (not UTF-8 text: byte 0x{raw[exc.start]:02x} at offset "
                            f"{exc.start})") from exc
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_int=_bounded_int,
                          parse_float=_bounded_float, object_pairs_hook=_unique_keys)
    except RecursionError as exc:  # unreachable after the nesting check; kept as a safety net
        raise _fail(source, "JSON nested too deeply") from exc
    except ValueError as exc:  # JSONDecodeError and the hooks' errors
        raise _fail(source, f"not valid surrogate JSON ({exc})") from exc


def _nesting(raw: bytes) -> int:
    """Deepest ``[``/``{`` nesting outside string literals (numpy over the bytes, no recursion)."""
    stripped = _JSON_STRING.sub(b'""', raw)
    arr = np.frombuffer(stripped, dtype=np.uint8)
    step = np.isin(arr, list(_OPEN)).astype(np.int64) - np.isin(arr, list(_CLOSE)).astype(np.int64)
    return int(np.cumsum(step).max(initial=0))


def _reject_constant(name: str) -> float:
    raise ValueError(f"non-finite number {name} is not allowed")


def _bounded_int(text: str) -> int:
    digits = text.lstrip("-")
    if len(digits) > 16 or int(text) > MAX_INT or int(text) < -MAX_INT:
        shown = text if len(text) <= 24 else f"{text[:12]}...({len(digits)} digits)"
        raise ValueError(f"integer {shown} is beyond +-2^53 (not exact as a float, not an index)")
    return int(text)


def _bounded_float(text: str) -> float:
    v = float(text)
    if not math.isfinite(v):
        shown = text if len(text) <= 24 else f"{text[:12]}..."
        raise ValueError(f"number {shown} overflows a float")
    return v


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"key {k!r} appears twice in one object")
        out[k] = v
    return out


def _bad(source: str, where: str, found: Any, expected: str) -> SurrogateError:
    shown = repr(found)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return SurrogateError(f"{source}: field {where!r} is {shown}; expected {expected}; {RETRAIN_HINT}")


def _get(obj: Mapping[str, Any], key: str, typ: type | tuple[type, ...], source: str, where: str) -> Any:
    if key not in obj:
        raise SurrogateError(f"{source}: missing field {where + key!r}; {RETRAIN_HINT}")
    val = obj[key]
    if not isinstance(val, typ) or (isinstance(val, bool) and typ is not bool):
        raise _bad(source, where + key, val, f"a {getattr(typ, '__name__', typ)}")
    return val


def _known_keys(obj: Mapping[str, Any], allowed: Sequence[str], source: str, where: str) -> None:
    unknown = [k for k in obj if k not in allowed]
    if unknown:
        k = unknown[0]
        raise SurrogateError(f"{source}: unknown field {where + k!r}{did_you_mean(k, allowed)}; a surrogate file "
                             f"has only {', '.join(where + a for a in allowed)}; {RETRAIN_HINT}")


def _name(val: Any, source: str, where: str) -> str:
    if not isinstance(val, str) or not val or len(val) > MAX_NAME_CHARS:
        raise _bad(source, where, val, f"a non-empty string of at most {MAX_NAME_CHARS} characters")
    bad = next((c for c in val if unicodedata.category(c) == "Cc" or c in _BIDI), None)
    if bad is not None:
        raise _bad(source, where, val, f"printable text (found the control character U+{ord(bad):04X})")
    return val


def _number(val: Any, source: str, where: str, bound: float = MAX_ABS_FEATURE) -> float:
    if isinstance(val, bool) or not isinstance(val, int | float):
        raise _bad(source, where, val, "a finite number")
    v = float(val)  # ints are bounded by the parser (|i| <= 2^53), so this cannot overflow
    if not math.isfinite(v) or abs(v) > bound:
        raise _bad(source, where, val, f"a finite number within +-{bound:g}")
    return v


def _count(val: Any, source: str, where: str, limit: int) -> int:
    if isinstance(val, bool) or not isinstance(val, int) or not 0 <= val <= limit:
        raise _bad(source, where, val, f"an integer in [0, {limit}]")
    return val


def _int_column(vals: list[Any], source: str, where: str, low: int, high: int) -> NDArray[np.int64]:
    if not all(type(v) is int for v in vals):
        bad = next(v for v in vals if type(v) is not int)
        raise _bad(source, where, bad, "integers only")
    arr = np.array(vals, dtype=np.int64)  # bounded by the parser: no overflow
    out = (arr < low) | (arr > high)
    if out.any():
        i = int(np.flatnonzero(out)[0])
        raise _bad(source, f"{where}[{i}]", int(arr[i]), f"an integer in [{low}, {high}]")
    return arr


def _float_column(vals: list[Any], source: str, where: str, bound: float) -> NDArray[np.float64]:
    if not all(type(v) is float or type(v) is int for v in vals):
        bad = next(v for v in vals if not (type(v) is float or type(v) is int))
        raise _bad(source, where, bad, "numbers only")
    arr = np.array(vals, dtype=np.float64)
    out = ~(np.abs(arr) <= bound)
    if out.any():
        i = int(np.flatnonzero(out)[0])
        raise _bad(source, f"{where}[{i}]", vals[i], f"a finite number within +-{bound:g}")
    return arr


TREE_FIELDS = ("left", "right", "feature", "threshold", "value")


def _parse_tree(obj: Any, n_features: int, max_nodes: int, source: str, where: str) -> RegressionTree:
    if not isinstance(obj, dict):
        raise _bad(source, where, obj, "an object with left/right/feature/threshold/value lists")
    _known_keys(obj, TREE_FIELDS, source, where + ".")
    cols = {k: _get(obj, k, list, source, where + ".") for k in TREE_FIELDS}
    n = len(cols["left"])
    if n == 0 or any(len(v) != n for v in cols.values()):
        raise _bad(source, where, {k: len(v) for k, v in cols.items()}, "non-empty lists of equal length")
    if n > max_nodes:
        raise _bad(source, where, f"{n} nodes", f"at most {max_nodes} nodes (2 x training models - 1: a tree "
                                                 "has at most one leaf per training model)")
    left = _int_column(cols["left"], source, f"{where}.left", -1, n - 1)
    right = _int_column(cols["right"], source, f"{where}.right", -1, n - 1)
    feat = _int_column(cols["feature"], source, f"{where}.feature", -1, n_features - 1)
    thr = _float_column(cols["threshold"], source, f"{where}.threshold", MAX_ABS_FEATURE)
    val = _float_column(cols["value"], source, f"{where}.value", MAX_ABS_STRENGTH)
    idx = np.arange(n)
    leaf = left == -1
    # children after their parent guarantees that prediction terminates
    ok = np.where(leaf, (right == -1) & (feat == -1), (left > idx) & (right > idx) & (feat >= 0))
    if not ok.all():
        node = int(np.flatnonzero(~ok)[0])
        raise _bad(source, f"{where} node {node}",
                   {"left": int(left[node]), "right": int(right[node]), "feature": int(feat[node])},
                   f"a leaf (-1, -1, -1) or children with larger indices < {n} and a feature < {n_features}")
    # a tree: every node but the root is the child of exactly one node
    children = np.sort(np.concatenate([left[~leaf], right[~leaf]]))
    if children.size != n - 1 or not np.array_equal(children, idx[1:]):
        raise _bad(source, where, "nodes shared or unreachable", "a tree (every node but the root is the child "
                                                                 "of exactly one node)")
    return RegressionTree(left=left, right=right, feature=feat, threshold=thr, value=val)


def _tree_depth(tree: RegressionTree) -> int:
    """Edges on the longest root-to-leaf path (children have larger indices, so levels terminate)."""
    depth = 0
    frontier = np.zeros(1, dtype=np.int64)
    while True:
        inner = frontier[tree.left[frontier] >= 0]
        if inner.size == 0:
            return depth
        depth += 1
        if depth > MAX_DEPTH:
            return depth
        frontier = np.concatenate([tree.left[inner], tree.right[inner]])


HEALTH_INTS = ("tournaments", "holdout", "models")
TOP_FIELDS = ("format", "version", "created", "judge", "suite", "lang", "scoring", "features", "training", "health",
              "judge_reliability", "params", "forest")
RELIABILITY_COUNTS = ("judgments", "decided", "ties", "parse_failures", "errors", "retried", "swap_pairs",
                      "swap_consistent")
RELIABILITY_RATES = ("swap_consistency", "tie_rate", "parse_failure_rate", "position_a_rate")


def _parse_health(raw: Any, source: str) -> SurrogateHealth | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise _bad(source, "health", raw, "an object or null")
    fields = tuple(SurrogateHealth.__dataclass_fields__)
    _known_keys(raw, fields, source, "health.")
    kwargs: dict[str, Any] = {}
    for f in fields:
        if f in HEALTH_INTS:
            kwargs[f] = _count(_get(raw, f, int, source, "health."), source, f"health.{f}", 10_000_000)
        elif f.startswith("tau"):
            v = _number(raw.get(f), source, f"health.{f}")
            if not -1.0 <= v <= 1.0:
                raise _bad(source, f"health.{f}", v, "a Kendall tau in [-1, 1]")
            kwargs[f] = v
        else:
            v = _number(raw.get(f), source, f"health.{f}")
            if v > 1.0:
                raise _bad(source, f"health.{f}", v, "an R² <= 1")
            kwargs[f] = v
    return SurrogateHealth(**kwargs)


def _parse_reliability(raw: Any, source: str) -> dict[str, float | int | None] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise _bad(source, "judge_reliability", raw, "an object or null")
    _known_keys(raw, RELIABILITY_COUNTS + RELIABILITY_RATES, source, "judge_reliability.")
    out: dict[str, float | int | None] = {}
    for k, v in raw.items():
        if k in RELIABILITY_COUNTS:
            out[k] = _count(v, source, f"judge_reliability.{k}", MAX_INT)
        elif v is None:
            out[k] = None
        else:
            rate = _number(v, source, f"judge_reliability.{k}")
            if not 0.0 <= rate <= 1.0:
                raise _bad(source, f"judge_reliability.{k}", v, "a share in [0, 1] or null")
            out[k] = rate
    return out


def _parse_params(raw: Any, source: str) -> dict[str, Any]:
    if not isinstance(raw, dict) or len(raw) > MAX_PARAMS:
        raise _bad(source, "params", raw, f"an object of at most {MAX_PARAMS} settings")
    out: dict[str, Any] = {}
    for k, v in raw.items():
        _name(k, source, "params key")
        if isinstance(v, str):
            out[k] = _name(v, source, f"params.{k}") if v else v
        elif v is None or isinstance(v, bool):
            out[k] = v
        elif isinstance(v, int | float):
            _number(v, source, f"params.{k}")
            out[k] = v
        else:
            raise _bad(source, f"params.{k}", v, "a string, number, true/false or null")
    return out


def _parse(data: Any, source: str) -> Surrogate:
    if not isinstance(data, dict):
        raise _bad(source, "<top level>", type(data).__name__, "a JSON object")
    if data.get("format") != FORMAT:
        raise _bad(source, "format", data.get("format"), f"{FORMAT!r} (is this a surrogate file?)")
    version = _get(data, "version", int, source, "")
    if version != FORMAT_VERSION:
        raise _bad(source, "version", version, f"{FORMAT_VERSION} (written by another pytest-mirage version)")
    _known_keys(data, TOP_FIELDS, source, "")
    created = _get(data, "created", str, source, "")
    if len(created) > MAX_NAME_CHARS:
        raise _bad(source, "created", created, "a timestamp")
    judge = _get(data, "judge", str, source, "")
    if judge:
        _name(judge, source, "judge")
    suite = data.get("suite")
    lang = data.get("lang")
    for key, v in (("suite", suite), ("lang", lang)):
        if v is not None:
            _name(v, source, key)
    scoring = data.get("scoring", "default")  # files written before the field: the default definitions
    if scoring not in SCORINGS:
        raise _bad(source, "scoring", scoring, f"one of {list(SCORINGS)}")
    names = _get(data, "features", list, source, "")
    if not names or len(names) > MAX_FEATURES or len(set(map(repr, names))) != len(names):
        raise _bad(source, "features", names, f"a non-empty list of at most {MAX_FEATURES} distinct feature names")
    names = [_name(n, source, f"features[{i}]") for i, n in enumerate(names)]
    training = _get(data, "training", dict, source, "")
    _known_keys(training, ("models", "strengths", "features"), source, "training.")
    models = _get(training, "models", list, source, "training.")
    if not 2 <= len(models) <= MAX_MODELS or len(set(map(repr, models))) != len(models):
        raise _bad(source, "training.models", models, f"a list of 2 to {MAX_MODELS} distinct model names")
    models = [_name(m, source, f"training.models[{i}]") for i, m in enumerate(models)]
    raw_strengths = _get(training, "strengths", dict, source, "training.")
    raw_features = _get(training, "features", dict, source, "training.")
    for what, obj in (("strengths", raw_strengths), ("features", raw_features)):
        extra = sorted(set(obj) - set(models))
        if extra:
            raise _bad(source, f"training.{what}", f"an entry for {extra[0]!r}", "entries only for training.models")
    strengths: dict[str, float] = {}
    tfeatures: dict[str, dict[str, float]] = {}
    for m in models:
        if m not in raw_strengths:
            raise SurrogateError(f"{source}: missing field 'training.strengths.{m}'; {RETRAIN_HINT}")
        strengths[m] = _number(raw_strengths[m], source, f"training.strengths.{m}", MAX_ABS_STRENGTH)
        row = raw_features.get(m)
        if not isinstance(row, dict):
            raise _bad(source, f"training.features.{m}", row, "an object of feature values")
        extra = sorted(set(row) - set(names))
        if extra:
            raise _bad(source, f"training.features.{m}.{extra[0]}", row[extra[0]], "only the listed features")
        tfeatures[m] = {}
        for n in names:
            if n not in row:
                raise SurrogateError(f"{source}: missing field 'training.features.{m}.{n}'; {RETRAIN_HINT}")
            tfeatures[m][n] = _number(row[n], source, f"training.features.{m}.{n}")
    health = _parse_health(data.get("health"), source)
    reliability = _parse_reliability(data.get("judge_reliability"), source)
    params = _parse_params(data.get("params", {}), source)
    forest = _get(data, "forest", dict, source, "")
    _known_keys(forest, ("kind", "trees"), source, "forest.")
    if forest.get("kind") != "random_forest_regressor":
        raise _bad(source, "forest.kind", forest.get("kind"), "'random_forest_regressor'")
    raw_trees = _get(forest, "trees", list, source, "forest.")
    if not 1 <= len(raw_trees) <= MAX_TREES:
        raise _bad(source, "forest.trees", f"{len(raw_trees)} trees", f"1 to {MAX_TREES} trees")
    max_nodes = 2 * len(models) - 1
    total = sum(len(t.get("left", ())) if isinstance(t, dict) and isinstance(t.get("left"), list) else 0
                for t in raw_trees)
    if total > MAX_TOTAL_NODES:
        raise _bad(source, "forest.trees", f"{total:,} nodes in all", f"at most {MAX_TOTAL_NODES:,} nodes")
    trees = tuple(_parse_tree(t, len(names), max_nodes, source, f"forest.trees[{i}]")
                  for i, t in enumerate(raw_trees))
    # leaf values are means of training strengths: outside their range means the file was edited
    lo, hi = min(strengths.values()), max(strengths.values())
    tol = 1e-9 * max(1.0, hi - lo, abs(lo), abs(hi))
    steps = 0
    for i, t in enumerate(trees):
        outside = (t.value < lo - tol) | (t.value > hi + tol)
        if outside.any():
            node = int(np.flatnonzero(outside)[0])
            raise _bad(source, f"forest.trees[{i}].value[{node}]", float(t.value[node]),
                       f"a value within the training strengths [{lo:.6g}, {hi:.6g}]")
        depth = _tree_depth(t)
        if depth > MAX_DEPTH:
            raise _bad(source, f"forest.trees[{i}]", f"depth > {MAX_DEPTH}", f"a tree at most {MAX_DEPTH} deep")
        steps += max(1, depth)
    if steps > MAX_EVAL_STEPS:
        raise _bad(source, "forest.trees", f"{steps:,} levels over {len(trees)} trees",
                   f"at most {MAX_EVAL_STEPS:,} tree levels in all (bounds the time one prediction takes)")
    return Surrogate(features=tuple(names), trees=trees, training_features=tfeatures,
                     training_strengths=strengths, created=created, judge=judge, suite=suite, lang=lang,
                     health=health, params=params, source=source, judge_reliability=reliability,
                     scoring=scoring)


def _check_identity(sur: Surrogate, source: str, suite: str | None, lang: str | None) -> None:
    for what, expected, found in (("suite", suite, sur.suite), ("language", lang, sur.lang)):
        if expected is None or expected == found:
            continue
        if found is None:
            raise SurrogateError(f"{source}: the surrogate names no {what}, so it cannot be checked against "
                                 f"{what} {expected!r}; {RETRAIN_HINT}")
        raise SurrogateError(f"{source}: this surrogate was trained for suite {sur.suite!r} [{sur.lang}], not for "
                             f"suite {suite or sur.suite!r} [{lang or sur.lang}] ({what} {found!r} != "
                             f"{expected!r}); it was copied from elsewhere: {RETRAIN_HINT}")


def load_surrogate(path: str | Path, *, suite: str | None = None, lang: str | None = None) -> Surrogate:
    """Load a surrogate JSON file (validated; no code is executed and scikit-learn is not needed).

    ``suite``/``lang``: refuse a file trained for another suite or language. Every problem is a
    :class:`SurrogateError` that names the file.
    """
    return Surrogate.load(path, suite=suite, lang=lang)
