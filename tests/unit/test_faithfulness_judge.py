"""The offline faithfulness judge: its features, the shipped model (JSON, no pickle, no sklearn at
run time), the metric, refusals and list answers, and retraining with the documented seed."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_mirage.errors import ConfigError
from pytest_mirage.judges import offline as training
from pytest_mirage.metrics import offline_judge as offline
from pytest_mirage.metrics.base import Sample
from pytest_mirage.metrics.builtin import METRICS, builtin_registry
from pytest_mirage.metrics.offline_judge import (
    FEATURES,
    features,
    is_refusal,
    load_model,
    model_from_json,
)
from pytest_mirage.models.base import Answer
from pytest_mirage.suites.model import Case, Passage

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "pytest_mirage" / "metrics" / offline.MODEL_FILE
P = (Passage("p1", "The Golden Gate Bridge opened to traffic on May 27, 1937. The chief engineer was Joseph Strauss, "
                   "although much of the structural design is credited to Leon Moisseiff.", "Golden Gate Bridge"),
     Passage("p2", "The bridge is painted International Orange. Around 112,000 vehicles cross it on an average day."))
Q = "When did the Golden Gate Bridge open?"


def sample(answer: str, passages: tuple[Passage, ...] = P, lang: str = "en", question: str = Q) -> Sample:
    case = Case("s", "c1", lang, question, passages, (passages[0].id,) if passages else (), ())
    return Sample(case, Answer("c1", "m", answer, answer=answer), passages)


def judge(answer: str, passages: tuple[Passage, ...] = P, lang: str = "en") -> float | None:
    return builtin_registry().compute(sample(answer, passages, lang), ["faithfulness_judge"]).values["faithfulness_judge"]


def test_features_are_the_documented_list_and_finite() -> None:
    f = features("The bridge opened on 27 May 1937 [p1]. About 112,000 vehicles use it daily [p2].", P, "en", Q)
    assert tuple(f) == FEATURES
    assert all(isinstance(v, float) and math.isfinite(v) for v in f.values())
    assert f["lex_min"] > 0.5 and f["unsup_any"] == 0.0
    bad = features("The bridge opened on 27 May 1947 [p1].", P, "en", Q)
    assert bad["unsup_number"] == 1.0 and bad["unsup_any"] == 1.0


def test_list_markers_and_headers_are_no_claims() -> None:
    listed = "In short:\n1. Opening: 27 May 1937 [p1].\n2. Chief engineer: Joseph Strauss [p1]."
    f = features(listed, P, "en", Q)
    assert f["unsup_number"] == 0.0  # "1." and "2." number the list
    assert f["lex_min"] == 1.0  # the header and the "Opening:" labels assert nothing
    assert f["unsupported_share"] == 0.0 and f["sentences_log"] == math.log1p(3)


def test_features_are_read_from_the_sentence_verdicts_of_the_metric_pass() -> None:
    from pytest_mirage.metrics.verdicts import sentence_verdicts

    answer = "The bridge opened on 27 May 1937 [p1]. It was painted green and cost 90 million dollars."
    vs = sentence_verdicts(answer, P, "en")
    assert features(answer, P, "en", Q, vs) == features(answer, P, "en", Q)
    f = features(answer, P, "en", Q)
    assert f["unsupported_share"] == 0.5 and f["unsup_max"] >= 1 and f["baseless"] == 1.0


def test_a_replaced_span_is_a_substitution_in_a_script_without_capitals() -> None:
    p = (Passage("p1", "সুন্দরবন বিশ্বের বৃহত্তম ম্যানগ্রোভ বন, যা বাংলাদেশ ও ভারতের পশ্চিমবঙ্গ জুড়ে বিস্তৃত।"),)
    bad = features("সুন্দরবন বাংলাদেশ ও মিয়ানমার জুড়ে বিস্তৃত বিশ্বের বৃহত্তম ম্যানগ্রোভ বন [p1]।", p, "bn")
    good = features("সুন্দরবন বাংলাদেশ ও ভারতের পশ্চিমবঙ্গ জুড়ে বিস্তৃত বিশ্বের বৃহত্তম ম্যানগ্রোভ বন [p1]।", p, "bn")
    assert bad["substitutions"] == 1.0 and good["substitutions"] == 0.0
    th = (Passage("p1", "ดอยอินทนนท์ตั้งอยู่ในจังหวัดเชียงใหม่ สูง 2,565 เมตร"),)
    assert features("ดอยอินทนนท์ตั้งอยู่ในจังหวัดเชียงราย และสูง 2,565 เมตร [p1]", th, "th")["substitutions"] == 1.0
    assert features("ดอยอินทนนท์ตั้งอยู่ในจังหวัดเชียงใหม่ สูง 2,565 เมตร [p1]", th, "th")["substitutions"] == 0.0


def test_swapped_roles_show_as_words_in_the_opposite_order() -> None:
    p = (Passage("p1", "At Trafalgar in 1805 the fleet of Nelson defeated the fleet of Villeneuve."),)
    swapped = features("At Trafalgar in 1805 the fleet of Villeneuve defeated the fleet of Nelson [p1].", p, "en")
    same = features("At Trafalgar in 1805 the fleet of Nelson defeated the fleet of Villeneuve [p1].", p, "en")
    assert swapped["inversion_max"] > 0.0 == same["inversion_max"]
    assert swapped["swap_restores"] >= 1.0 and same["swap_restores"] == 0.0  # "Nelson defeated" restored
    reordered = features("In 1805 at Trafalgar, the fleet of Nelson defeated that of Villeneuve [p1].", p, "en")
    assert reordered["swap_restores"] == 0.0  # words moved, no two of them exchanged
    ru = (Passage("p1", "В 1812 году армия Кутузова остановила армию Наполеона под Москвой."),)
    assert features("В 1812 году армия Наполеона остановила армию Кутузова под Москвой [p1].", ru,
                    "ru")["swap_restores"] >= 1.0


@pytest.mark.parametrize(("answer", "lang"), [
    ("Unable to answer based on given passages.", "en"),
    ("提供された資料には開館時間についての記載がないため、お答えできません。", "ja"),
    ("Maandishi yaliyotolewa hayataji ada ya kutuma pesa, kwa hiyo siwezi kujibu swali hili.", "sw"),
    ("Àwọn ìwé tí a fún mi kò sọ iye owó náà, nítorí náà n kò lè dáhùn ìbéèrè yìí.", "yo"),
    ("ឯកសារមិនបានបញ្ជាក់អំពីតម្លៃទេ ដូច្នេះខ្ញុំមិនអាចឆ្លើយបានទេ។", "km"),
    ("所提供的资料中没有提到运费，因此无法回答。", "zh"),
    ("প্রদত্ত তথ্যে এটি উল্লেখ নেই, তাই উত্তর দেওয়া সম্ভব নয়।", "bn"),
])
def test_refusals_are_recognised(answer: str, lang: str) -> None:
    assert is_refusal(answer, lang)


def test_answers_are_not_refusals() -> None:
    assert not is_refusal("The bridge opened on 27 May 1937.", "en")
    assert not is_refusal("いいえ、雑誌の最新号は借りられません。", "ja")


def test_the_shipped_model_is_json_with_its_training_record() -> None:
    raw = MODEL.read_bytes()
    data = json.loads(raw.decode("utf-8"))  # plain JSON: nothing executable
    assert data["format"] == offline.MODEL_FORMAT and tuple(data["features"]) == FEATURES
    t = data["training"]
    assert t["command"] == "python benchmarks/train_faithfulness.py --seed 0" and t["seed"] == 0
    assert len(t["data_sha256"]) == 64 and t["faithful"] + t["unfaithful"] == t["examples"]
    assert set(t["languages"]) == set(offline_langs())
    m = load_model()
    assert m.path.endswith("offline_faithfulness.json") and len(m.sha256) == 64
    assert 0 < m.threshold < 1


def offline_langs() -> tuple[str, ...]:
    from pytest_mirage.judges.perturb import LANGS

    return LANGS


def test_loading_and_scoring_import_no_training_library() -> None:
    code = ("import sys\n"
            "from pytest_mirage.metrics import offline_judge as offline\n"
            "from pytest_mirage.suites.model import Passage\n"
            "p = offline.score('It opened in 1937.', (Passage('p1', 'The bridge opened in 1937.'),), 'en')\n"
            "assert 0 <= p <= 1\n"
            "bad = [m for m in ('sklearn', 'joblib', 'scipy') if m in sys.modules]\n"
            "assert not bad, bad\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": ""}, check=False)
    assert done.returncode == 0, done.stderr


def test_a_model_with_other_features_is_refused_with_the_retrain_command() -> None:
    data = json.loads(MODEL.read_text(encoding="utf-8"))
    data["features"] = [*data["features"][:-1], "something_else"]
    with pytest.raises(ConfigError, match=r"differ from the code's.*train_faithfulness.py --seed 0"):
        model_from_json(data, path="x.json")
    data["format"] = "pickle"
    with pytest.raises(ConfigError, match="format 'pickle'"):
        model_from_json(data, path="x.json")


def test_the_metric_on_a_real_small_case() -> None:
    faithful = judge("The Golden Gate Bridge opened to traffic on May 27, 1937 [p1]. Joseph Strauss was the "
                     "chief engineer [p1].")
    number = judge("The Golden Gate Bridge opened to traffic on May 27, 1947 [p1]. Joseph Strauss was the "
                   "chief engineer [p1].")
    roles = judge("The Golden Gate Bridge opened to traffic on May 27, 1937 [p1]. Leon Moisseiff was the "
                  "chief engineer, and much of the design is credited to Joseph Strauss [p1].")
    added = judge("The Golden Gate Bridge opened to traffic on May 27, 1937 [p1]. Eleven workers died during "
                  "its construction, and it was closed for three hours in 1951 because of high winds.")
    refusal = judge("The passages do not say who paid for the bridge, so I cannot answer that.")
    assert faithful is not None and number is not None and roles is not None and added is not None
    assert faithful >= load_model().threshold
    assert faithful > number and faithful > roles and faithful > added
    assert number < load_model().threshold and added < load_model().threshold
    assert refusal is None  # a refusal is no hallucination and no pass: null, gate on `refusal`


def test_the_metric_is_null_without_passages_or_words_and_names_its_model() -> None:
    mv = builtin_registry().compute(sample("It opened in 1937.", passages=()), ["faithfulness_judge"])
    assert mv.values["faithfulness_judge"] is None and "no passages" in mv.reasons["faithfulness_judge"]
    mv = builtin_registry().compute(sample("[p1]"), ["faithfulness_judge"])
    assert mv.values["faithfulness_judge"] is None
    m = next(x for x in METRICS if x.name == "faithfulness_judge")
    assert "offline_faithfulness.json" in m.source and load_model().sha256[:16] in m.source
    assert not m.default and m.higher_is_better and m.bounds == (0.0, 1.0)


def test_retraining_with_the_documented_seed_reproduces_the_shipped_model() -> None:
    pytest.importorskip("sklearn")
    retrained = training.train(ROOT, 0)
    shipped = json.loads(MODEL.read_text(encoding="utf-8"))
    assert retrained["training"]["data_sha256"] == shipped["training"]["data_sha256"]
    if training.dump(retrained) != MODEL.read_text(encoding="utf-8"):  # other BLAS, other last bits
        again = model_from_json(retrained)
        ship = load_model()
        for answer in ("The bridge opened in 1937 [p1].", "The bridge opened in 1947 [p1].",
                       "Nobody knows who built it."):
            x = features(answer, P, "en", Q)
            assert again.predict(x) == pytest.approx(ship.predict(x), abs=1e-9)


def test_a_hedged_hallucination_is_not_passed_for_its_refusal_sentence() -> None:
    """A refusal sentence does not vouch for the rest of the answer ("the passages do not say; it
    costs ..."): the judge scores the sentences that answer."""
    hedged = "The passages do not mention the toll. It opened on 27 May 1947 [p1]."
    honest = "The passages do not mention the toll. It opened on 27 May 1937 [p1]."
    m = load_model()
    bad, good = m.predict(features(hedged, P, "en", Q)), m.predict(features(honest, P, "en", Q))
    assert bad < m.threshold <= good
