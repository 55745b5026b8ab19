"""LLM judges with a scripted ``complete``: batching, multilingual claim extraction, tolerant parsing,
one re-ask, nulls with reasons (never 0), refusals, log-probabilities, translation quality and
per-language template overrides."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence

import pytest

from pytest_mirage.errors import ModelError
from pytest_mirage.judges.base import JudgeItem, Reply, TokenLogprob
from pytest_mirage.judges.llm import (
    AnswerOverlapJudge,
    AresJudge,
    FluencyJudge,
    SupportLLMJudge,
    TranslationJudge,
    Unparseable,
    builtin_template,
    parse_claim_verdicts,
    parse_claims,
    parse_overlap_score,
    parse_rating,
    parse_translation_scores,
    parse_yes_no,
    yes_probability,
)
from pytest_mirage.prompts import strip_citations
from pytest_mirage.suites.model import Passage

Reply_ = str | Reply | Exception


class Scripted:
    """A judge model: ``answer(prompt) -> reply``; records every batch."""

    def __init__(self, answer: Callable[[str], Reply_]) -> None:
        self.answer = answer
        self.batches: list[list[str]] = []

    def __call__(self, prompts: list[str]) -> list[Reply_]:
        self.batches.append(list(prompts))
        return [self.answer(p) for p in prompts]

    @property
    def prompts(self) -> list[str]:
        return [p for b in self.batches for p in b]


def item(key: str, lang: str, answer: str, passages: Sequence[Passage] = (Passage("p1", "passage text"),),
         question: str = "q?", references: tuple[str, ...] = ()) -> JudgeItem:
    return JudgeItem(key, lang, question, answer, tuple(passages), references=references)


# ---------------------------------------------------------------- claim-level support

CLAIMS = {
    "ja": ("富士山の標高は3776メートルです[p1]。最後の噴火は1707年でした。", ["富士山の標高は3776メートルである", "富士山が最後に噴火したのは1707年である"]),
    "zh": ("长江全长约6300公里[p1]，是亚洲最长的河流。", ["长江全长约6300公里", "长江是亚洲最长的河流"]),
    "th": ("ดอยอินทนนท์สูง 2,565 เมตร [p1] อยู่ในจังหวัดเชียงใหม่", ["ดอยอินทนนท์สูง 2,565 เมตร", "ดอยอินทนนท์อยู่ในจังหวัดเชียงใหม่"]),
    "km": ("ប្រាសាទអង្គរវត្តមានផ្ទៃដីប្រមាណ ១៦២ ហិកតា [p1]។ វាត្រូវបានសាងសង់នៅសតវត្សទី១២។",
           ["ប្រាសាទអង្គរវត្តមានផ្ទៃដីប្រមាណ ១៦២ ហិកតា", "ប្រាសាទអង្គរវត្តត្រូវបានសាងសង់នៅសតវត្សទី១២"]),
}
NAMES = {"ja": "Japanese", "zh": "Chinese", "th": "Thai", "km": "Khmer"}


def claim_judge(claims: dict[str, list[str]], verdicts: Callable[[str], str]) -> Callable[[str], Reply_]:
    def answer(prompt: str) -> Reply_:
        if "Break the answer down" in prompt:
            for lang, (text, cl) in CLAIMS.items():
                if strip(text) in prompt:
                    return json.dumps(claims.get(lang, cl), ensure_ascii=False)
            return "[]"
        return verdicts(prompt)
    return answer


def strip(text: str) -> str:
    return strip_citations(text).strip()


def test_claims_in_ja_zh_th_km_are_extracted_and_judged_in_two_batches() -> None:
    def verdicts(prompt: str) -> str:
        n = len(re.findall(r"^\d+\. ", prompt.split("Claims:")[1], re.M))
        return "\n".join(f"{i}: [[{'Yes' if i == 1 else 'No'}]]" for i in range(1, n + 1))

    model = Scripted(claim_judge({}, verdicts))
    judge = SupportLLMJudge(model, model="py:scripted")
    items = [item(f"s/{lang}/m", lang, text) for lang, (text, _cl) in CLAIMS.items()]
    scores = judge.score(items)
    assert [s.values["support_llm"] for s in scores] == [0.5, 0.5, 0.5, 0.5]
    assert len(model.batches) == 2 and [len(b) for b in model.batches] == [4, 4]
    for (lang, (_text, claims)), extraction, verdict in zip(CLAIMS.items(), *model.batches, strict=True):
        # the instruction names the case language and asks for claims in it
        assert f"written in {NAMES[lang]}" in extraction and f"Write every claim in {NAMES[lang]}" in extraction
        assert "[p1]" not in extraction.split("Answer:")[1]
        # the claims reach the verdict prompt in their own script, numbered
        assert all(f"{i}. {c}" in verdict for i, c in enumerate(claims, start=1))
        assert "[p1] passage text" in verdict
    assert judge.health.to_json() == {"items": 4, "calls": 8, "batches": 2, "parse_failures": 0, "reasks": 0,
                                      "refusals": 0, "errors": 0, "nulls": {}, "output": "text",
                                      "output_note": "structured=off", "format_fallbacks": 0,
                                      "unstructured_replies": 0}
    assert all(s.raw is not None and len(s.raw) == 2 for s in scores)


def test_claim_lists_in_other_shapes() -> None:
    assert parse_claims('```json\n["ក", "ខ"]\n```') == ["ក", "ខ"]
    assert parse_claims('Here are the claims:\n- ดอยอินทนนท์สูง 2,565 เมตร\n- อยู่ในเชียงใหม่') == \
        ["ดอยอินทนนท์สูง 2,565 เมตร", "อยู่ในเชียงใหม่"]
    assert parse_claims("1. 长江全长约6300公里\n2) 长江是亚洲最长的河流") == ["长江全长约6300公里", "长江是亚洲最长的河流"]
    assert parse_claims('{"claims": ["a", "b"]}') == ["a", "b"]
    assert parse_claims("[]") == []
    with pytest.raises(Unparseable):
        parse_claims("I think the answer is fine.")


def test_verdict_lists_in_other_shapes() -> None:
    assert parse_claim_verdicts("1: [[Yes]]\n2: [[No]]", 2) == [True, False]
    assert parse_claim_verdicts("Claim 1 - [[yes]]\nClaim 2 - no", 2) == [True, False]
    assert parse_claim_verdicts('["yes", "no", "supported"]', 3) == [True, False, True]
    assert parse_claim_verdicts('{"1": "No", "2": {"verdict": "Yes"}}', 2) == [False, True]
    assert parse_claim_verdicts("[[Yes]] [[はい]] [[いいえ]]", 3) == [True, True, False]
    with pytest.raises(Unparseable, match="claim\\(s\\) 2"):
        parse_claim_verdicts("1: [[Yes]]", 2)


def test_garbled_reply_is_reasked_once_then_null_with_reason() -> None:
    calls: dict[str, int] = {}

    def answer(prompt: str) -> Reply_:
        key = "extract" if "Break the answer down" in prompt else "verdict"
        calls[key] = calls.get(key, 0) + 1
        if key == "extract":
            return '["a claim"]' if "could not be read" in prompt else "Sure! Let me think about it."
        return "1: [[Yes]]"

    model = Scripted(answer)
    judge = SupportLLMJudge(model, model="py:x")
    [score] = judge.score([item("k", "en", "A claim [p1].")])
    assert score.values == {"support_llm": 1.0}
    assert model.prompts[1] == model.prompts[0] + model.prompts[1][len(model.prompts[0]):]  # the same prompt + reminder
    assert judge.health.parse_failures == 1 and judge.health.reasks == 1 and judge.health.batches == 3

    hopeless = Scripted(lambda p: "no idea")
    judge = SupportLLMJudge(hopeless, model="py:x")
    [score] = judge.score([item("k", "en", "A claim [p1].")])
    assert score.values == {"support_llm": None}
    assert re.fullmatch(r"claim extraction failed: judge reply unparseable \(expected a JSON array.*\): 'no idea' "
                        r"\(after 1 re-ask\)", score.reasons["support_llm"])
    assert len(hopeless.batches) == 2 and judge.health.nulls == {"support_llm": 1}

    no_reask = SupportLLMJudge(Scripted(lambda p: "no idea"), model="py:x", reask=0)
    assert no_reask.score([item("k", "en", "A claim.")])[0].reasons["support_llm"].endswith("'no idea'")


def test_refusals_errors_and_empty_claims_are_nulls_never_zero() -> None:
    judge = SupportLLMJudge(Scripted(lambda p: "I'm sorry, but I can't help with that."), model="py:x")
    [s] = judge.score([item("k", "en", "A claim.")])
    assert s.values["support_llm"] is None and s.reasons["support_llm"].startswith("claim extraction failed: judge refused")
    assert judge.health.refusals == 2 and judge.health.parse_failures == 0

    judge = SupportLLMJudge(Scripted(lambda p: ModelError("HTTP 500 after 3 retries")), model="py:x")
    [s] = judge.score([item("k", "en", "A claim.")])
    assert s.reasons["support_llm"] == "claim extraction failed: judge call failed: ModelError: HTTP 500 after 3 retries"
    assert judge.health.errors == 1 and judge.health.reasks == 0  # the engine retried; no re-ask for errors

    def broken(prompts: list[str]) -> list[str]:
        raise RuntimeError("cache miss in replay-only mode")

    [s] = SupportLLMJudge(broken, model="py:x").score([item("k", "en", "A claim.")])
    assert "RuntimeError: cache miss in replay-only mode" in s.reasons["support_llm"]

    [s] = SupportLLMJudge(Scripted(lambda p: "[]"), model="py:x").score([item("k", "en", "Hmm.")])
    assert s.values == {"support_llm": None} and s.reasons == {"support_llm": "the judge found no claim in the answer"}

    judge = SupportLLMJudge(Scripted(lambda p: "[]"), model="py:x")
    skipped = judge.score([item("k", "en", "[p1]"), item("k2", "en", "text", passages=())])
    assert [s.reasons["support_llm"] for s in skipped] == ["the answer is empty",
                                                          "the generator saw no passages to support the answer"]


def test_partial_verdicts_are_unparseable_and_max_claims_caps() -> None:
    def answer(prompt: str) -> Reply_:
        if "Break the answer down" in prompt:
            return json.dumps([f"claim {i}" for i in range(10)])
        return "1: [[Yes]]"

    judge = SupportLLMJudge(Scripted(answer), model="py:x", options={"max_claims": 1})
    assert judge.score([item("k", "en", "x")])[0].values == {"support_llm": 1.0}
    judge = SupportLLMJudge(Scripted(answer), model="py:x")
    [s] = judge.score([item("k", "en", "x")])
    assert s.values == {"support_llm": None} and "none found for claim(s) 2, 3" in s.reasons["support_llm"]


def test_wrong_reply_count_is_a_broken_judge() -> None:
    with pytest.raises(ModelError, match="returned 0 replies for 1 prompts"):
        SupportLLMJudge(lambda ps: [], model="py:x").score([item("k", "en", "x")])
    with pytest.raises(ModelError, match="returned a int"):
        SupportLLMJudge(lambda ps: [3] * len(ps), model="py:x").score([item("k", "en", "x")])  # type: ignore[list-item]


# ---------------------------------------------------------------- MIRAGE pointwise judges


@pytest.mark.parametrize(("reply", "value"), [
    ("##Rating: 4 ##Explanation: fine", 4.0), ("**Rating:** 5\nExplanation: ...", 5.0), ("Rating: {3}", 3.0),
    ("I'd give it 2/5.", 2.0), ("[[1]]", 1.0), ("4", 4.0),
])
def test_fluency_ratings(reply: str, value: float) -> None:
    assert parse_rating(reply) == value


@pytest.mark.parametrize("reply", ["##Rating: 7", "excellent", "##Rating: 0"])
def test_bad_fluency_ratings(reply: str) -> None:
    with pytest.raises(Unparseable):
        parse_rating(reply)


def test_overlap_scores() -> None:
    assert parse_overlap_score("Score: [[3]] Justification: partly aligned") == 3.0
    assert parse_overlap_score("Score: 5") == 5.0
    with pytest.raises(Unparseable, match="outside 1-5"):
        parse_overlap_score("[[9]]")


def test_fluency_and_overlap_judges() -> None:
    model = Scripted(lambda p: "##Rating: 4 ##Explanation: ok" if "fluency" in p.lower() else "Score: [[2]] J.")
    fl = FluencyJudge(model, model="py:x")
    [s] = fl.score([item("k", "sw", "Jibu [p1].", question="Swali?")])
    assert s.values == {"fluency_llm": 4.0}
    assert "documents from Wikipedia in Swahili" in model.prompts[0] and "Jibu [p1]." in model.prompts[0]
    ov = AnswerOverlapJudge(model, model="py:x")
    scores = ov.score([item("k", "sw", "Jibu.", references=("Jibu sahihi", "Jibu jingine")),
                       item("k2", "sw", "Jibu.")])
    assert scores[0].values == {"answer_overlap_llm": 2.0}
    assert "- Jibu sahihi\n- Jibu jingine" in model.prompts[-1] and "Label in Swahili" in model.prompts[-1]
    assert scores[1].values == {"answer_overlap_llm": None}
    assert scores[1].reasons == {"answer_overlap_llm": "case has no reference answer"}
    assert set(re.findall(r"\{\{(\w+)\}\}", builtin_template("fluency"))) == {"language", "question", "documents",
                                                                            "answer"}


# ---------------------------------------------------------------- ARES


def test_yes_no_parsing() -> None:
    assert parse_yes_no("[[Yes]]") is True
    assert parse_yes_no("The documents are not enough.\n[[No]]") is False
    assert parse_yes_no("Yes, the answer is supported.") is True
    assert parse_yes_no("[[はい]]") is True and parse_yes_no("Ndiyo") is True and parse_yes_no("[[Нет]]") is False
    assert parse_yes_no('I answer "[[Yes]]" if faithful... Final: [[No]]') is False
    with pytest.raises(Unparseable):
        parse_yes_no("It depends.")


def test_yes_probability_from_logprobs() -> None:
    reply = Reply("[[Yes]]", (TokenLogprob("[[", -0.01, {"[[": -0.01}),
                              TokenLogprob("Yes", math.log(0.8), {"Yes": math.log(0.8), "No": math.log(0.15),
                                                                  "yes": math.log(0.05)}),
                              TokenLogprob("]]", -0.01)))
    assert yes_probability(reply, True) == pytest.approx(0.85)
    only_no = Reply("No", (TokenLogprob("ĠNo", math.log(0.9), {"ĠNo": math.log(0.9)}),))
    assert yes_probability(only_no, False) == pytest.approx(0.0)
    assert yes_probability("[[Yes]]", True) == 1.0 and yes_probability(Reply("[[No]]"), False) == 0.0


def test_ares_judges_batch_per_metric_and_use_logprobs() -> None:
    def answer(prompt: str) -> Reply_:
        if "contain the information needed" in prompt:
            return Reply("[[Yes]]", (TokenLogprob("Yes", math.log(0.6), {"Yes": math.log(0.6), "No": math.log(0.4)}),))
        if "is faithful" in prompt:
            return "[[No]]"
        return "garbled"

    model = Scripted(answer)
    judge = AresJudge(model, model="py:x")
    scores = judge.score([item("a", "de", "Antwort [p1]."), item("b", "de", "Zweite Antwort.")])
    assert scores[0].values["ares_context_relevance"] == pytest.approx(0.6)
    assert scores[0].values["ares_answer_faithfulness"] == 0.0
    assert scores[0].values["ares_answer_relevance"] is None
    assert "after 1 re-ask" in scores[0].reasons["ares_answer_relevance"]
    assert [len(b) for b in model.batches] == [2, 2, 2, 2]  # 3 metrics x 2 items, + one re-ask batch
    assert "The text is in German" in model.batches[1][0]
    only = AresJudge(Scripted(lambda p: "[[Yes]]"), model="py:x", metrics=["ares_answer_faithfulness"])
    assert only.score([item("a", "en", "x")])[0].values == {"ares_answer_faithfulness": 1.0}
    assert only.health.calls == 1


# ---------------------------------------------------------------- QTT-RAG translation quality


@pytest.mark.parametrize(("reply", "expected"), [
    ('{"Semantic Equivalence": 5.0, "Grammatical Accuracy": 2.5, "Naturalness & Fluency": 4.3}', (5.0, 2.5, 4.3)),
    ('```json\n{"semantic equivalence": 4, "grammatical accuracy": 4, "naturalness and fluency": 3.5}\n```', (4, 4, 3.5)),
    ('"의미론적 일치성": 5.0, "문법적 정확성": 2.5, "자연스러움과 유창성": 4.3', (5.0, 2.5, 4.3)),
    ('{"语义一致性": 3.0, "语法准确性": 2.0, "语言流畅度": 1.5}', (3.0, 2.0, 1.5)),
    ("Scores: 4.5, 4.0 and 3.5", (4.5, 4.0, 3.5)),
])
def test_translation_scores(reply: str, expected: tuple[float, float, float]) -> None:
    got = parse_translation_scores(reply)
    assert (got["translation_equivalence"], got["translation_grammar"], got["translation_naturalness"]) == expected


def test_translation_scores_out_of_range_are_unparseable() -> None:
    with pytest.raises(Unparseable):
        parse_translation_scores('{"Semantic Equivalence": 9, "Grammatical Accuracy": 2, "Naturalness & Fluency": 4}')


def test_translation_judge_applies_to_cross_lingual_passages_only() -> None:
    model = Scripted(lambda p: '{"Semantic Equivalence": 4.0, "Grammatical Accuracy": 3.0, "Naturalness & Fluency": 5.0}')
    judge = TranslationJudge(model, model="py:x")
    en = Passage("e1", "The Millau Viaduct deck is 2,460 metres long.", lang="en")
    ko = Passage("k1", "밀라우 다리의 상판 길이는 2,460미터이다.", lang="ko")
    scores = judge.score([item("a", "ko", "상판 길이는 2,460미터입니다 [e1].", passages=(ko, en)),
                          item("b", "ko", "상판 길이는 2,460미터입니다 [k1].", passages=(ko,))])
    assert scores[0].values == {"translation_equivalence": 4.0, "translation_grammar": 3.0,
                                "translation_naturalness": 5.0}
    assert scores[1].values["translation_equivalence"] is None
    assert "no passage is in another language" in scores[1].reasons["translation_equivalence"]
    [prompt] = model.prompts
    assert "Source passages (in English)" in prompt and "English-to-Korean" in prompt and "[e1] The Millau" in prompt
    assert "[k1]" not in prompt


# ---------------------------------------------------------------- templates per language


def test_per_language_template_override() -> None:
    override = "{{language}} のみ。Q: {{question}} A: {{answer}} JSON で。"
    model = Scripted(lambda p: '["x"]' if ("JSON で" in p or "Break the answer" in p) else "1: [[Yes]]")
    judge = SupportLLMJudge(model, model="py:x", templates={("claims", "ja"): override})
    judge.score([item("a", "ja", "答え。"), item("b", "en", "Answer.")])
    extraction = model.batches[0]
    assert extraction[0] == "Japanese のみ。Q: q? A: 答え。 JSON で。"
    assert "Break the answer down" in extraction[1]
    plain = SupportLLMJudge(model, model="py:x")
    assert plain.identity()["template_overrides"] is None and judge.identity()["template_overrides"]
