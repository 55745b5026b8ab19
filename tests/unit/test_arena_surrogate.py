"""The surrogate judge: forest export, JSON persistence without code, ranking, health."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor

from pytest_mirage.arena.bt import bradley_terry
from pytest_mirage.arena.simulate import simulate_battles, simulate_features
from pytest_mirage.arena.surrogate import (
    Surrogate,
    SurrogateError,
    feature_matrix,
    fit_forest,
    load_surrogate,
    mean_features,
    predict_forest,
    surrogate_health,
    train_surrogate,
)

QUALITIES = {f"sys{k:02d}": float(v) for k, v in enumerate(np.linspace(-1.5, 1.5, 12))}


@pytest.fixture(scope="module")
def arena() -> tuple[dict[str, dict[str, float]], dict[str, float], list]:
    battles = simulate_battles(QUALITIES, 30, seed=1)
    strengths = bradley_terry(battles, tournaments=20).strengths()
    return simulate_features(QUALITIES, seed=2), strengths, battles


def test_exported_forest_predicts_exactly_like_sklearn() -> None:
    rng = np.random.default_rng(0)
    x = rng.random((15, 4))
    y = x @ np.array([1.0, -2.0, 0.5, 0.0]) + rng.normal(scale=0.1, size=15)
    trees = fit_forest(x, y, n_estimators=25, seed=3)
    ref = RandomForestRegressor(n_estimators=25, random_state=3, n_jobs=1).fit(x, y)
    probe = np.vstack([x, rng.random((500, 4)), rng.random((50, 4)) * 4 - 2])
    assert np.array_equal(predict_forest(trees, probe), ref.predict(probe))


def test_save_load_roundtrip_keeps_predictions_and_metadata(tmp_path: Path, arena) -> None:
    features, strengths, _ = arena
    sur = train_surrogate(features, strengths, judge="openai:gpt-4o", suite="s1", lang="en",
                          n_estimators=20, created="2025-01-02T03:04:05+00:00")
    path = tmp_path / "surrogate.json"
    sur.save(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == "pytest-mirage-surrogate" and data["version"] == 1
    assert data["judge"] == "openai:gpt-4o" and data["created"] == "2025-01-02T03:04:05+00:00"
    assert data["features"] == sorted(features["sys00"])
    assert data["training"]["models"] == sorted(QUALITIES)
    assert len(data["forest"]["trees"]) == 20
    loaded = load_surrogate(path)
    probe = {f"new{k}": {n: float(v) for n, v in zip(sur.features, row, strict=True)}
             for k, row in enumerate(np.random.default_rng(1).random((30, len(sur.features))))}
    assert loaded.predict(probe) == sur.predict(probe)
    assert loaded.training_models == sur.training_models
    assert loaded.source == str(path)


def test_loading_needs_no_sklearn_and_runs_no_code(tmp_path: Path, arena) -> None:
    features, strengths, _ = arena
    path = tmp_path / "s.json"
    train_surrogate(features, strengths, n_estimators=3).save(path)
    code = ("import sys; from pytest_mirage.arena.surrogate import load_surrogate; "
            f"s = load_surrogate({str(path)!r}); "
            "s.predict({'x': dict(s.training_features['sys00'])}); "
            "print(sorted(m for m in ('sklearn', 'scipy', 'pickle') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "sklearn" not in out.stdout and "scipy" not in out.stdout
    # a pickle is rejected as not-JSON, never unpickled
    bad = tmp_path / "evil.json"
    bad.write_bytes(pickle.dumps({"format": "pytest-mirage-surrogate"}))
    with pytest.raises(SurrogateError, match="not valid surrogate JSON"):
        load_surrogate(bad)


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d.update(format="other"), r"field 'format' is 'other'"),
    (lambda d: d.pop("features"), r"missing field 'features'"),
    (lambda d: d["training"]["features"]["sys00"].pop(d["features"][0]), r"missing field 'training\.features\.sys00\."),
    (lambda d: d["forest"]["trees"][0]["left"].__setitem__(0, 0), r"forest\.trees\[0\] node 0"),
    (lambda d: d["forest"]["trees"][1]["feature"].__setitem__(0, 99), r"forest\.trees\[1\] node 0"),
    (lambda d: d["forest"]["trees"][0].__setitem__("value", "x"), r"forest\.trees\[0\]\.value"),
    (lambda d: d.update(version=7), r"field 'version' is 7"),
])
def test_load_rejects_bad_files_naming_the_field(tmp_path: Path, arena, edit, message: str) -> None:
    features, strengths, _ = arena
    sur = train_surrogate(features, strengths, n_estimators=2, seed=1)
    data = sur.to_json()
    edit(data)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SurrogateError, match=message) as info:
        load_surrogate(path)
    assert str(path) in str(info.value) and "--mirage-train-surrogate" in str(info.value)


def test_load_rejects_nan(tmp_path: Path, arena) -> None:
    features, strengths, _ = arena
    text = json.dumps(train_surrogate(features, strengths, n_estimators=1).to_json())
    path = tmp_path / "s.json"
    path.write_text(text.replace('"value": [', '"value": [NaN, ', 1), encoding="utf-8")
    with pytest.raises(SurrogateError, match="NaN"):
        load_surrogate(path)


def test_missing_feature_in_the_current_run_is_an_explicit_error(arena) -> None:
    features, strengths, _ = arena
    sur = train_surrogate(features, strengths, n_estimators=5)
    current = {"candidate": {k: v for k, v in features["sys05"].items() if k != "informative_2"}}
    with pytest.raises(SurrogateError, match=r"model 'candidate' has no value for feature\(s\) \['informative_2'\]"):
        sur.predict(current)
    with pytest.raises(SurrogateError, match="informative_2"):
        sur.rank(current)
    with pytest.raises(SurrogateError, match="not finite"):
        sur.predict({"candidate": {**features["sys05"], "informative_2": float("inf")}})


def test_rank_places_new_models_among_training_models(arena) -> None:
    features, strengths, _ = arena
    sur = train_surrogate(features, strengths, n_estimators=30)
    strong = {n: 0.99 for n in features["sys00"]}
    weak = {n: 0.01 for n in features["sys00"]}
    ranking = sur.rank({"strong": strong, "weak": weak})
    assert len(ranking) == len(QUALITIES) + 2
    by = {s.model: s for s in ranking}
    assert by["strong"].rank <= 2 and not by["strong"].trained
    assert by["weak"].rank >= len(QUALITIES) and by["sys11"].trained
    # a model of the current run replaces the stored training model of the same name
    replaced = {s.model: s for s in sur.rank({"sys11": weak})}
    assert len(replaced) == len(QUALITIES) and not replaced["sys11"].trained
    assert replaced["sys11"].rank > by["sys11"].rank
    assert [s.rank for s in ranking] == sorted(s.rank for s in ranking)


def test_feature_selection(arena) -> None:
    features, strengths, _ = arena
    sur = train_surrogate(features, strengths, feature_names=["informative_1", "informative_3"], n_estimators=5)
    assert sur.features == ("informative_1", "informative_3")
    sur.predict({"x": {"informative_1": 0.5, "informative_3": 0.5}})  # other features not needed
    with pytest.raises(SurrogateError, match=r"unknown feature 'informativ_1'.*Did you mean: informative_1"):
        train_surrogate(features, strengths, feature_names=["informativ_1"])
    partial = {m: dict(v) for m, v in features.items()}
    del partial["sys03"]["noise_1"]
    with pytest.raises(SurrogateError, match=r"model 'sys03' has no value for feature\(s\) \['noise_1'\]"):
        train_surrogate(partial, strengths)


def test_mean_features_ignores_nulls_and_omits_all_null() -> None:
    got = mean_features({"m": [{"a": 1.0, "b": None}, {"a": 0.0, "b": None}, {"a": 0.5}]})
    assert got == {"m": {"a": 0.5}}
    with pytest.raises(SurrogateError, match="not finite"):
        mean_features({"m": [{"a": float("nan")}]})
    with pytest.raises(SurrogateError, match="no entry for model 'q'"):
        feature_matrix({"m": {"a": 1.0}}, ["q"], ["a"])


def test_health_with_fixed_holdout(arena) -> None:
    features, _, battles = arena
    health = surrogate_health(features, battles, holdout=["sys01", "sys10"], tournaments=10, n_estimators=20)
    assert health.holdout == 2 and health.models == 12 and health.tournaments == 10
    assert health.r2_ci_low <= health.r2_mean <= health.r2_ci_high
    assert health.r2_mean > 0.8 and health.tau_mean > 0.8 and health.tau_cv > 0.5
    sur = train_surrogate(features, {"sys00": 0.0, "sys01": 1.0}, health=health, n_estimators=2)
    assert Surrogate.from_json(sur.to_json()).health == health
    with pytest.raises(SurrogateError, match="not in the arena"):
        surrogate_health(features, battles, holdout=["nope", "sys01"], tournaments=2)
    with pytest.raises(SurrogateError, match="at least 2 held-out models"):
        surrogate_health(features, battles, holdout=11, tournaments=2)
