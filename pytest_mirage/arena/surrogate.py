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
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import did_you_mean
from .bt import DEFAULT_ALPHA, Battle, TieMode, battle_counts, bootstrap_strengths, fit_strengths
from .stats import ArenaError, competition_ranks, kendall_tau, percentile_interval, r2_score

FORMAT = "pytest-mirage-surrogate"
FORMAT_VERSION = 1
DEFAULT_TREES = 100
DEFAULT_HEALTH_TOURNAMENTS = 100
RETRAIN_HINT = "retrain it with --mirage-train-surrogate"

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
            v = float(row[n])
            if not math.isfinite(v):
                raise SurrogateError(f"{where}: model {model!r}, feature {n!r} = {row[n]!r} is not finite")
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

    @property
    def training_models(self) -> tuple[str, ...]:
        return tuple(sorted(self.training_strengths))

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
            "suite": self.suite, "lang": self.lang, "features": list(self.features),
            "training": {"models": list(self.training_models),
                         "strengths": {m: self.training_strengths[m] for m in self.training_models},
                         "features": {m: {n: self.training_features[m][n] for n in self.features}
                                      for m in self.training_models}},
            "health": None if self.health is None else self.health.to_json(),
            "params": dict(self.params),
            "forest": {"kind": "random_forest_regressor", "trees": [t.to_json() for t in self.trees]},
        }

    def save(self, path: str | Path) -> None:
        """Write the surrogate as JSON (data only; loading never executes code)."""
        text = json.dumps(self.to_json(), ensure_ascii=False, allow_nan=False, indent=1)
        Path(path).write_text(text + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Surrogate:
        """Read and validate a surrogate file written by :meth:`save`."""
        p = Path(path)
        try:
            raw = p.read_bytes()
        except OSError as exc:
            raise SurrogateError(f"{p}: cannot read the surrogate file ({exc}); {RETRAIN_HINT}") from exc
        try:
            data = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
        except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
            raise SurrogateError(f"{p}: not valid surrogate JSON ({exc}); {RETRAIN_HINT}") from exc
        return cls.from_json(data, source=str(p))

    @classmethod
    def from_json(cls, data: Any, *, source: str = "<json>") -> Surrogate:
        return _parse(data, source)


def train_surrogate(features: Features, strengths: Mapping[str, float], *,
                    feature_names: Sequence[str] | None = None, n_estimators: int = DEFAULT_TREES,
                    seed: int = 0, judge: str = "", suite: str | None = None, lang: str | None = None,
                    health: SurrogateHealth | None = None, created: str | None = None) -> Surrogate:
    """Fit the forest from per-model mean ``features`` to BT ``strengths`` (one entry per model).

    The training models are the keys of ``strengths``; each needs every chosen feature.
    """
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
        lang=lang, health=health, params={"n_estimators": n_estimators, "seed": seed})


# ---------------------------------------------------------------- loading (strict validation)


def _reject_constant(name: str) -> float:
    raise ValueError(f"non-finite number {name} is not allowed")


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


def _number(val: Any, source: str, where: str) -> float:
    if isinstance(val, bool) or not isinstance(val, int | float) or not math.isfinite(float(val)):
        raise _bad(source, where, val, "a finite number")
    return float(val)


def _parse_tree(obj: Any, n_features: int, source: str, where: str) -> RegressionTree:
    if not isinstance(obj, dict):
        raise _bad(source, where, obj, "an object with left/right/feature/threshold/value lists")
    cols = {k: _get(obj, k, list, source, where + ".") for k in ("left", "right", "feature", "threshold", "value")}
    n = len(cols["left"])
    if n == 0 or any(len(v) != n for v in cols.values()):
        raise _bad(source, where, {k: len(v) for k, v in cols.items()}, "non-empty lists of equal length")
    ints = {}
    for k in ("left", "right", "feature"):
        vals = cols[k]
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
            raise _bad(source, f"{where}.{k}", vals, "a list of integers")
        ints[k] = np.array(vals, dtype=np.int64)
    thr = np.array([_number(v, source, f"{where}.threshold[{i}]") for i, v in enumerate(cols["threshold"])])
    val = np.array([_number(v, source, f"{where}.value[{i}]") for i, v in enumerate(cols["value"])])
    left, right, feat = ints["left"], ints["right"], ints["feature"]
    idx = np.arange(n)
    leaf = left == -1
    # children after their parent guarantees that prediction terminates
    ok = np.where(leaf, (right == -1) & (feat == -1),
                  (left > idx) & (left < n) & (right > idx) & (right < n) & (feat >= 0) & (feat < n_features))
    if not ok.all():
        node = int(np.flatnonzero(~ok)[0])
        raise _bad(source, f"{where} node {node}",
                   {"left": int(left[node]), "right": int(right[node]), "feature": int(feat[node])},
                   f"a leaf (-1, -1, -1) or children with larger indices < {n} and a feature < {n_features}")
    return RegressionTree(left=left, right=right, feature=feat, threshold=thr, value=val)


def _parse(data: Any, source: str) -> Surrogate:
    if not isinstance(data, dict):
        raise _bad(source, "<top level>", type(data).__name__, "a JSON object")
    if data.get("format") != FORMAT:
        raise _bad(source, "format", data.get("format"), f"{FORMAT!r} (is this a surrogate file?)")
    version = _get(data, "version", int, source, "")
    if version != FORMAT_VERSION:
        raise _bad(source, "version", version, f"{FORMAT_VERSION} (written by another pytest-mirage version)")
    created = _get(data, "created", str, source, "")
    judge = _get(data, "judge", str, source, "")
    suite = data.get("suite")
    lang = data.get("lang")
    for key, v in (("suite", suite), ("lang", lang)):
        if v is not None and not isinstance(v, str):
            raise _bad(source, key, v, "a string or null")
    names = _get(data, "features", list, source, "")
    if not names or not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
        raise _bad(source, "features", names, "a non-empty list of distinct feature names")
    training = _get(data, "training", dict, source, "")
    models = _get(training, "models", list, source, "training.")
    if len(models) < 2 or not all(isinstance(m, str) for m in models) or len(set(models)) != len(models):
        raise _bad(source, "training.models", models, "a list of at least 2 distinct model names")
    raw_strengths = _get(training, "strengths", dict, source, "training.")
    raw_features = _get(training, "features", dict, source, "training.")
    strengths: dict[str, float] = {}
    tfeatures: dict[str, dict[str, float]] = {}
    for m in models:
        if m not in raw_strengths:
            raise SurrogateError(f"{source}: missing field 'training.strengths.{m}'; {RETRAIN_HINT}")
        strengths[m] = _number(raw_strengths[m], source, f"training.strengths.{m}")
        row = raw_features.get(m)
        if not isinstance(row, dict):
            raise _bad(source, f"training.features.{m}", row, "an object of feature values")
        tfeatures[m] = {}
        for n in names:
            if n not in row:
                raise SurrogateError(f"{source}: missing field 'training.features.{m}.{n}'; {RETRAIN_HINT}")
            tfeatures[m][n] = _number(row[n], source, f"training.features.{m}.{n}")
    health = None
    raw_health = data.get("health")
    if raw_health is not None:
        if not isinstance(raw_health, dict):
            raise _bad(source, "health", raw_health, "an object or null")
        kwargs: dict[str, Any] = {}
        for f in SurrogateHealth.__dataclass_fields__:
            if f in ("tournaments", "holdout", "models"):
                kwargs[f] = _get(raw_health, f, int, source, "health.")
            else:
                kwargs[f] = _number(raw_health.get(f), source, f"health.{f}")
        health = SurrogateHealth(**kwargs)
    params = data.get("params", {})
    if not isinstance(params, dict):
        raise _bad(source, "params", params, "an object")
    forest = _get(data, "forest", dict, source, "")
    if forest.get("kind") != "random_forest_regressor":
        raise _bad(source, "forest.kind", forest.get("kind"), "'random_forest_regressor'")
    raw_trees = _get(forest, "trees", list, source, "forest.")
    if not raw_trees:
        raise _bad(source, "forest.trees", raw_trees, "at least one tree")
    trees = tuple(_parse_tree(t, len(names), source, f"forest.trees[{i}]") for i, t in enumerate(raw_trees))
    return Surrogate(features=tuple(names), trees=trees, training_features=tfeatures,
                     training_strengths=strengths, created=created, judge=judge, suite=suite, lang=lang,
                     health=health, params=params, source=source)


def load_surrogate(path: str | Path) -> Surrogate:
    """Load a surrogate JSON file (validated; no code is executed and scikit-learn is not needed)."""
    return Surrogate.load(path)
