"""The surrogate judge: forest export, JSON persistence without code, ranking, health."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor

from pytest_mirage.arena import surrogate as surrogate_mod
from pytest_mirage.arena.bt import bradley_terry
from pytest_mirage.arena.surrogate import (
    HealthThresholds,
    Surrogate,
    SurrogateError,
    feature_matrix,
    fit_forest,
    health_decision,
    load_surrogate,
    mean_features,
    predict_forest,
    surrogate_health,
    train_surrogate,
)
from tests.helpers.simulate_arena import simulate_battles, simulate_features

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
    (lambda d: d["forest"]["trees"][1]["feature"].__setitem__(0, 99), r"forest\.trees\[1\]\.feature\[0\]' is 99"),
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


# ---------------------------------------------------------------- health decision


def _reliability(battles: list) -> dict[str, float | int | None]:
    """The judge figures of simulated battles (as JudgeReliability.to_json() reports them)."""
    decisive = [b for b in battles if b.winner != "tie"]
    by_pair: dict[tuple[str, frozenset[str]], list[str]] = {}
    for b in battles:
        winner = {"A": b.model_a, "B": b.model_b, "tie": "tie"}[b.winner]
        by_pair.setdefault((b.query_id, frozenset((b.model_a, b.model_b))), []).append(winner)
    both = [w for w in by_pair.values() if len(w) == 2]
    return {"decided": len(battles), "ties": len(battles) - len(decisive), "swap_pairs": len(both),
            "swap_consistent": sum(w[0] == w[1] for w in both),
            "swap_consistency": sum(w[0] == w[1] for w in both) / len(both) if both else None,
            "position_a_rate": sum(b.winner == "A" for b in decisive) / len(decisive)}


def test_health_decision_thresholds() -> None:
    good = {"tau_cv": 0.86, "r2_cv": 0.9, "models": 19}
    fair_judge = {"position_a_rate": 0.55, "swap_consistency": 0.8, "swap_pairs": 300, "decided": 600, "ties": 40}
    ok = health_decision(good, fair_judge)
    assert ok.healthy and ok.reasons == () and ok.warnings == () and ok.describe() == "healthy"
    # the case: a judge that always answered [[A]] produced tau_cv -0.22, R2_cv -1.23
    always_a = {"position_a_rate": 1.0, "swap_consistency": 0.0, "swap_pairs": 300, "decided": 600, "ties": 0}
    bad = health_decision({"tau_cv": -0.22, "r2_cv": -1.23, "models": 19}, always_a)
    assert not bad.healthy and len(bad.reasons) == 4
    text = bad.describe()
    for part in ("Kendall tau -0.22 < 0.50", "R² -1.23 < 0.00", "shown first in 100%", "swap consistency 0.00 < 0.40"):
        assert part in text
    assert "shown second in 90%" in health_decision(good, {**fair_judge, "position_a_rate": 0.1}).describe()
    thin = health_decision({**good, "models": 4}, {"position_a_rate": 1.0, "decided": 5, "ties": 0,
                                                   "swap_consistency": None, "swap_pairs": 0})
    assert thin.healthy and len(thin.warnings) == 3  # too few models, verdicts and no swapped pairs
    assert not health_decision(None).healthy and "no cross-validated health figures" in health_decision(None).reasons[0]
    strict = health_decision(good, fair_judge, thresholds=HealthThresholds(min_tau_cv=0.9))
    assert not strict.healthy
    json.dumps(bad.to_json())


def test_an_always_a_judge_gives_an_unhealthy_surrogate() -> None:
    # random presentation order, as in the report: the battles' winners are coin flips
    battles = simulate_battles(QUALITIES, 25, seed=3, position_bias=50.0, order="random")
    features = simulate_features(QUALITIES, seed=4)
    health = surrogate_health(features, battles, tournaments=8, n_estimators=20)
    decision = health_decision(health, _reliability(battles))
    assert not decision.healthy
    assert any("shown first in 100%" in r for r in decision.reasons)
    assert health.tau_cv < 0.5 and any("Kendall tau" in r for r in decision.reasons), health
    assert any("swap consistency not measured" in w for w in decision.warnings)
    # judged in both orders, an always-[[A]] judge ties every pair: no arena to fit at all
    both = simulate_battles(QUALITIES, 5, seed=3, position_bias=50.0, order="both")
    assert _reliability(both)["swap_consistency"] == 0.0
    with pytest.raises(SurrogateError, match="does not separate the models"):
        surrogate_health(features, both, tournaments=4, n_estimators=5)
    # the same features with a fair judge: healthy
    fair = simulate_battles(QUALITIES, 25, seed=3, order="both")
    fair_health = surrogate_health(features, fair, tournaments=8, n_estimators=20)
    assert health_decision(fair_health, _reliability(fair)).healthy, health_decision(fair_health, _reliability(fair))


def test_judge_reliability_is_stored_and_the_decision_repeated_on_load(tmp_path: Path, arena) -> None:
    features, strengths, battles = arena
    health = surrogate_health(features, battles, tournaments=4, n_estimators=10)
    rel = _reliability(battles)
    sur = train_surrogate(features, strengths, n_estimators=5, health=health, judge_reliability=rel, suite="s",
                          lang="hi")
    path = tmp_path / "hi.json"
    sur.save(path)
    assert [p.name for p in tmp_path.iterdir()] == ["hi.json"]  # no temporary file left behind
    loaded = load_surrogate(path, suite="s", lang="hi")
    assert loaded.judge_reliability == rel
    assert loaded.decision() == health_decision(health, rel)
    old_style = train_surrogate(features, strengths, n_estimators=2)  # no health, no judge figures
    assert not old_style.decision().healthy


# ---------------------------------------------------------------- hostile files


@pytest.fixture
def good_file(tmp_path: Path, arena) -> tuple[Path, dict]:
    features, strengths, _ = arena
    sur = train_surrogate(features, strengths, n_estimators=3, seed=2, suite="s1", lang="hi")
    data = sur.to_json()
    path = tmp_path / "hi.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path, data


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("replace", "message"), [
    (('"left": [', '"left": [' + "9" * 400 + ", "), r"integer 999999999999\.\.\.\(400 digits\) is beyond \+-2\^53"),
    (('"left": [', '"left": [' + "9" * 5000 + ", "), r"\(5000 digits\) is beyond"),
    (('"left": [', f'"left": [{2 ** 63 + 5}, '), r"integer 9223372036854775813 is beyond \+-2\^53"),
    (('"threshold": [', '"threshold": [1e999, '), r"number 1e999 overflows a float"),
    (('"threshold": [', '"threshold": [NaN, '), r"non-finite number NaN"),
    (('"judge": ', '"judge": "x", "judge": '), r"key 'judge' appears twice"),
    (('"params": ', '"paramz": 1, "params": '), r"unknown field 'paramz'.*Did you mean: params"),
    (('"kind": ', '"seed": 1, "kind": '), r"unknown field 'forest\.seed'"),
])
def test_tampered_values_are_surrogate_errors(good_file, replace: tuple[str, str], message: str) -> None:
    path, data = good_file
    text = json.dumps(data)
    assert replace[0] in text
    _write(path, text.replace(replace[0], replace[1], 1))
    with pytest.raises(SurrogateError, match=message) as info:
        load_surrogate(path)
    assert str(info.value).startswith(str(path))


def test_deep_nesting_is_refused_before_parsing(good_file) -> None:
    path, data = good_file
    text = json.dumps(data)
    _write(path, text.replace('"params": {', '"params": {"x": ' + "[" * 200_000 + "]" * 200_000 + ",", 1))
    with pytest.raises(SurrogateError, match=r"nested 200002 levels deep"):
        load_surrogate(path)
    # brackets inside strings do not count
    _write(path, text.replace('"judge": ""', '"judge": "[[[[[[[[[[[[[[[[[[[[[[[[[\\"{{{{{{{{{{{{{{{{"', 1))
    assert load_surrogate(path).judge.startswith("[[[")


def test_structural_limits(good_file, monkeypatch: pytest.MonkeyPatch) -> None:
    path, data = good_file
    tree = data["forest"]["trees"][0]

    def load_with(edit) -> str:
        d = json.loads(json.dumps(data))
        edit(d)
        _write(path, json.dumps(d))
        with pytest.raises(SurrogateError) as info:
            load_surrogate(path)
        return str(info.value)

    n_models = len(data["training"]["models"])
    big = {k: tree[k] + [-1 if k in ("left", "right", "feature") else 0.0] * (2 * n_models) for k in tree}
    assert f"at most {2 * n_models - 1} nodes" in load_with(lambda d: d["forest"]["trees"].__setitem__(0, big))
    # a node reachable twice (a DAG) is not a tree
    inner = next(i for i, v in enumerate(tree["left"]) if v != -1)

    def share(d):
        t = d["forest"]["trees"][0]
        t["right"][inner] = t["left"][inner]
    assert "every node but the root is the child of exactly one node" in load_with(share)
    # a leaf value outside the training strengths
    assert "within the training strengths" in load_with(
        lambda d: d["forest"]["trees"][0]["value"].__setitem__(-1, 50.0))
    assert "control character U+001B" in load_with(lambda d: d.update(judge="\x1b[2Jgpt"))
    assert "U+202E" in load_with(lambda d: d["training"]["models"].__setitem__(0, "evil\u202emodel"))
    assert "entries only for training.models" in load_with(lambda d: d["training"]["strengths"].update(ghost=0.0))
    assert "1 to 1000 trees" in load_with(lambda d: d["forest"].update(trees=[]))
    assert "Kendall tau in [-1, 1]" in load_with(lambda d: d.update(health={
        **{f: 0.0 for f in ("r2_mean", "r2_ci_low", "r2_ci_high", "tau_mean", "tau_ci_low", "tau_ci_high",
                            "r2_cv")}, "tau_cv": 3.0, "tournaments": 1, "holdout": 2, "models": 12}))
    assert "a share in [0, 1]" in load_with(lambda d: d.update(judge_reliability={"position_a_rate": 7}))
    monkeypatch.setattr(surrogate_mod, "MAX_DEPTH", 1)
    assert "at most 1 deep" in load_with(lambda d: None)
    monkeypatch.setattr(surrogate_mod, "MAX_DEPTH", 128)
    monkeypatch.setattr(surrogate_mod, "MAX_EVAL_STEPS", 2)
    assert "bounds the time one prediction takes" in load_with(lambda d: None)
    monkeypatch.setattr(surrogate_mod, "MAX_FILE_BYTES", 100)
    assert "a surrogate file may hold at most 100 bytes" in load_with(lambda d: None)


def test_not_a_regular_file(tmp_path: Path) -> None:
    with pytest.raises(SurrogateError, match="not a regular file"):
        load_surrogate(tmp_path)
    with pytest.raises(SurrogateError, match="cannot read the surrogate file"):
        load_surrogate(tmp_path / "missing.json")
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "fifo.json"
        os.mkfifo(fifo)
        with pytest.raises(SurrogateError, match="not a regular file"):  # never blocks on open()
            load_surrogate(fifo)


def test_suite_and_language_identity(good_file) -> None:
    path, data = good_file
    assert load_surrogate(path, suite="s1", lang="hi").suite == "s1"
    with pytest.raises(SurrogateError, match=r"trained for suite 's1' \[hi\], not for suite 's2' \[hi\]"):
        load_surrogate(path, suite="s2")
    with pytest.raises(SurrogateError, match=r"language 'hi' != 'sw'"):
        load_surrogate(path, suite="s1", lang="sw")
    _write(path, json.dumps({**data, "suite": None}))
    with pytest.raises(SurrogateError, match="names no suite"):
        load_surrogate(path, suite="s1")
    assert load_surrogate(path).suite is None  # no expectation given: still loads


def test_random_corruption_only_ever_raises_surrogate_error(good_file) -> None:
    path, data = good_file
    text = json.dumps(data)
    rng = np.random.default_rng(0)
    tokens = ["-1", "0", "1e308", "1e309", "-9" * 30, "null", "true", '"x"', "[]", "{}", "[[[", "]", ",", "2.5",
              str(2 ** 64), "-0.0", "1" * 20]
    outcomes = {"loaded": 0, "refused": 0}
    for _ in range(600):
        kind = rng.integers(4)
        pos = int(rng.integers(len(text)))
        if kind == 0:
            bad = text[:pos]  # truncated
        elif kind == 1:
            bad = text[:pos] + rng.choice(tokens) + text[pos:]
        elif kind == 2:
            # replace a number with a hostile token
            starts = [i for i in range(pos, min(len(text), pos + 200)) if text[i].isdigit()]
            if not starts:
                continue
            i = starts[0]
            j = i
            while j < len(text) and (text[j].isdigit() or text[j] in ".e-"):
                j += 1
            bad = text[:i] + rng.choice(tokens) + text[j:]
        else:
            bad = text[:pos] + chr(int(rng.integers(0, 0x3000))) + text[pos + 1:]
        _write(path, bad)
        try:
            sur = load_surrogate(path)
        except SurrogateError as exc:
            assert str(exc).startswith(str(path))
            outcomes["refused"] += 1
        else:
            sur.rank({"new": dict(sur.training_features[sur.training_models[0]])})
            outcomes["loaded"] += 1
    # both paths exercised: most corruptions are refused, some (e.g. in a name or a mid-range
    # number) still give a valid file
    assert outcomes["refused"] > 300 and outcomes["loaded"] > 20, outcomes


def test_current_features_beyond_float32_are_an_error(arena) -> None:
    features, strengths, _ = arena
    sur = train_surrogate(features, strengths, n_estimators=2)
    with pytest.raises(SurrogateError, match="beyond the float32 range"):
        sur.predict({"x": {n: 1e300 for n in sur.features}})
