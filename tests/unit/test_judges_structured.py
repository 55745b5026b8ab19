"""Structured output for LLM judges: the stage schemas, the JSON check, JSON-first parsing with the
tolerant parser behind it, re-asks and nulls with reasons, and the fallback to plain prompts when a
server refuses ``response_format`` (with a scripted ``complete``; the HTTP path is in
test_adapter_openai_structured.py)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from pytest_mirage.errors import ConfigError, FormatRejected, ModelError, NotCached
from pytest_mirage.judges import structured as st
from pytest_mirage.judges.base import JudgeHealth, JudgeItem, Reply
from pytest_mirage.judges.llm import (
    AnswerOverlapJudge,
    AresJudge,
    FluencyJudge,
    SupportLLMJudge,
    TranslationJudge,
    Unparseable,
    parse_claim_verdicts,
    parse_claims,
    parse_rating,
    parse_structured,
    parse_yes_no,
)
from pytest_mirage.judges.spec import create_judge, parse_judge_spec
from pytest_mirage.models.base import PromptRequest, ResponseFormat
from pytest_mirage.suites.model import Passage
from tests.helpers.fake_openai import FormatJudge, ScriptedJudge, scripted_format_judge

Out = str | Reply | Exception


scripted = scripted_format_judge  # the scripted judge, called the way the server calls it


def item(key: str = "s/c/m", answer: str = "Paris is the capital [p1].", lang: str = "en",
         passages: Sequence[Passage] = (Passage("p1", "Paris is the capital of France."),),
         references: tuple[str, ...] = ("Paris",)) -> JudgeItem:
    return JudgeItem(key, lang, "What is the capital?", answer, tuple(passages), references=references)


# ---------------------------------------------------------------- schemas


def _strict_ok(schema: dict[str, Any]) -> None:
    """OpenAI's strict mode: objects list every property as required and allow no others."""
    if schema.get("type") == "object":
        assert schema["additionalProperties"] is False
        assert sorted(schema["required"]) == sorted(schema["properties"])
        for sub in schema["properties"].values():
            _strict_ok(sub)
    elif schema.get("type") == "array":
        _strict_ok(schema["items"])
    assert not {"minimum", "maximum", "minItems", "maxItems", "pattern"} & set(schema)


@pytest.mark.parametrize("stage", st.STAGES)
def test_every_stage_has_a_strict_object_schema_and_a_note(stage: str) -> None:
    schema = st.SCHEMAS[stage]
    assert schema["type"] == "object"
    _strict_ok(schema)
    fmt = st.response_format(stage)
    assert fmt.openai() == {"type": "json_schema",
                            "json_schema": {"name": f"mirage_{stage}", "schema": schema, "strict": True}}
    # the note's example is the schema's own keys
    assert all(f'"{k}"' in st.NOTES[stage] for k in st.keys(stage))


def test_the_scripted_judge_replies_valid_json_for_every_schema() -> None:
    judge = ScriptedJudge()
    for stage in st.STAGES:
        prompt = "Claims:\n1. a\n2. b" if stage == "claim_verdicts" else "prompt"
        reply = judge({"messages": [{"role": "user", "content": prompt}],
                       "response_format": st.response_format(stage).openai()})
        assert st.check(json.loads(reply), st.SCHEMAS[stage]) is None, (stage, reply)


def test_format_enters_the_prompt_request_cache_fields() -> None:
    plain = PromptRequest(id="a", prompt="p", label="judge x")
    fmt = st.response_format("yes_no")
    structured = PromptRequest(id="a", prompt="p", label="judge x", response_format=fmt)
    assert plain.cache_fields == ("prompt", "judge x", "")  # unchanged: old caches still match
    assert structured.cache_fields == ("prompt", "judge x", "", "response_format", "mirage_yes_no", fmt.schema_json)
    with pytest.raises(TypeError, match="ResponseFormat"):
        PromptRequest(id="a", prompt="p", response_format={"type": "json_schema"})  # type: ignore[arg-type]


@pytest.mark.parametrize(("value", "problem"), [
    ({"explanation": "ok", "rating": 4}, None),
    ({"explanation": "ok", "rating": 4.0, "extra": [1]}, None),  # 4.0 is an integer; extra keys are fine
    ({"explanation": "ok", "rating": "4"}, '"rating": expected an integer, got a string "4"'),
    ({"explanation": "ok", "rating": True}, '"rating": expected an integer, got a boolean True'),
    ({"explanation": "ok", "rating": 6}, '"rating": expected one of 1, 2, 3, 4, 5, got 6'),
    ({"explanation": "ok"}, 'missing "rating"'),
    ([4], "expected an object, got an array"),
])
def test_check_names_the_key_the_expectation_and_the_value(value: Any, problem: str | None) -> None:
    assert st.check(value, st.SCHEMAS["fluency"]) == problem


def test_check_descends_into_arrays_of_objects() -> None:
    schema = st.SCHEMAS["claim_verdicts"]
    assert st.check({"verdicts": [{"claim": 1, "verdict": "Yes"}]}, schema) is None
    assert st.check({"verdicts": [{"claim": 1, "verdict": "yes"}]}, schema) == \
        '"verdicts[0].verdict": expected one of "Yes", "No", got "yes"'
    assert st.check({"verdicts": {"1": "Yes"}}, schema) == '"verdicts": expected an array, got an object {\'1\': \'Yes\'}'
    assert st.check({"verdicts": [{"verdict": "No"}]}, schema) == 'missing "verdicts[0].claim"'


# ---------------------------------------------------------------- JSON-first parsing


def test_json_replies_fenced_in_prose_or_with_extra_keys_parse() -> None:
    fenced = 'Here you go:\n```json\n{"explanation": "clear", "rating": 5}\n```'
    assert parse_structured("fluency", parse_rating, fenced) == 5.0
    assert parse_structured("yes_no", parse_yes_no, 'Sure. {"verdict": "No", "confidence": 0.9} Done.') is False
    assert parse_structured("claims", parse_claims, '{"claims": [" a ", "", "b"], "note": "x"}') == ["a", "b"]
    verdicts = '{"verdicts": [{"claim": 2, "verdict": "No"}, {"claim": 1, "verdict": "Yes"}]}'
    assert parse_structured("claim_verdicts", lambda r: parse_claim_verdicts(r, 2), verdicts, n=2) == [True, False]
    zero_based = '{"verdicts": [{"claim": 0, "verdict": "No"}, {"claim": 1, "verdict": "Yes"}]}'
    assert parse_structured("claim_verdicts", lambda r: parse_claim_verdicts(r, 2), zero_based, n=2) == [False, True]


def test_replies_without_schema_json_go_to_the_tolerant_parser() -> None:
    # the server ignored the format: the text formats still read
    assert parse_structured("fluency", parse_rating, "##Rating: 3 ##Explanation: fine") == 3.0
    assert parse_structured("yes_no", parse_yes_no, "[[Yes]]") is True
    assert parse_structured("claims", parse_claims, '["one", "two"]') == ["one", "two"]


@pytest.mark.parametrize(("stage", "reply", "message"), [
    ("fluency", '{"explanation": "x", "rating": "4"}', '"rating": expected an integer, got a string "4"'),
    ("yes_no", '{"verdict": true}', '"verdict": expected a string, got a boolean True'),
    ("claims", '{"claims": "one claim"}', '"claims": expected an array, got a string "one claim"'),
    ("claim_verdicts", '{"verdicts": [{"claim": 1, "verdict": "Yes"}]}', "expected a verdict for each of the 2 claims"),
    ("translation_quality", '{"semantic_equivalence": 4, "grammatical_accuracy": 9, "naturalness_fluency": 4}',
     "score 9 is outside 0-5"),
])
def test_schema_json_with_wrong_types_is_unparseable_not_read_as_text(stage: str, reply: str, message: str) -> None:
    with pytest.raises(Unparseable) as info:
        parse_structured(stage, lambda r: pytest.fail("read as text"), reply, n=2)  # type: ignore[arg-type,return-value]
    assert message in str(info.value)


# ---------------------------------------------------------------- judges in structured mode


def test_every_judge_sends_its_stage_schema_and_reads_the_json() -> None:
    foreign = item(answer="Paris est la capitale [p1].", lang="fr",
                   passages=(Passage("p1", "Paris is the capital of France.", lang="en"),))
    cases: list[tuple[Any, JudgeItem, dict[str, float]]] = [
        (SupportLLMJudge, item(), {"support_llm": 0.5}),
        (FluencyJudge, item(), {"fluency_llm": 4.0}),
        (AnswerOverlapJudge, item(), {"answer_overlap_llm": 3.0}),
        (AresJudge, item(), {"ares_context_relevance": 1.0, "ares_answer_faithfulness": 1.0,
                             "ares_answer_relevance": 1.0}),
        (TranslationJudge, foreign, {"translation_equivalence": 4.0, "translation_grammar": 3.5,
                                     "translation_naturalness": 4.5}),
    ]
    for cls, it, expected in cases:
        model = scripted()
        judge = cls(model, model="scripted", structured="auto")
        [score] = judge.score([it])
        assert dict(score.values) == expected, cls.kind
        for prompts, fmt in model.batches:
            assert fmt is not None and fmt.name.startswith("mirage_")
            assert all(st.NOTES[fmt.name.removeprefix("mirage_")] in p for p in prompts)
        health = judge.health.to_json()
        assert health["output"] == "json_schema" and health["output_note"] == ""
        assert health["unstructured_replies"] == 0 and health["parse_failures"] == 0
        assert judge.identity()["output"] == "json_schema"


def test_plain_mode_sends_no_format_and_no_note() -> None:
    model = scripted()
    judge = FluencyJudge(model, model="scripted", structured="off", plain_reason="hf: models cannot ...")
    assert judge.score([item()])[0].values["fluency_llm"] == 4.0
    [(prompts, fmt)] = model.batches
    assert fmt is None and "JSON" not in prompts[0]
    assert judge.health.output == "text" and judge.health.output_note == "hf: models cannot ..."
    assert judge.identity()["output"] == "text"


def test_a_server_that_ignores_the_format_is_read_as_text_and_counted() -> None:
    model = FormatJudge(lambda prompt, fmt: "##Rating: 2 ##Explanation: terse")
    judge = FluencyJudge(model, model="scripted", structured="auto")
    assert judge.score([item(), item("s/d/m")])[0].values["fluency_llm"] == 2.0
    assert judge.health.unstructured_replies == 2 and judge.health.parse_failures == 0
    assert judge.health.output == "json_schema"


def test_wrong_types_are_reasked_with_a_json_reminder_then_null_with_the_reason() -> None:
    model = scripted(ScriptedJudge(wrong_types=True))
    judge = AresJudge(model, model="scripted", metrics=["ares_answer_faithfulness"], structured="on")
    [score] = judge.score([item()])
    assert score.values["ares_answer_faithfulness"] is None  # never 0
    reason = score.reasons["ares_answer_faithfulness"]
    assert reason.startswith("judge reply unparseable (JSON reply does not match the yes_no schema: "
                             '"verdict": expected a string, got a boolean True)')
    assert reason.endswith("(after 1 re-ask)")
    (first, fmt1), (again, fmt2) = model.batches
    assert fmt1 == fmt2 == st.response_format("yes_no")
    assert again[0] == first[0] + st.REMINDER
    h = judge.health
    assert (h.parse_failures, h.reasks, h.nulls["ares_answer_faithfulness"]) == (2, 1, 1)


def test_a_repaired_reply_after_the_reask_counts() -> None:
    replies = iter(['{"explanation": "x", "rating": "five"}', '{"explanation": "x", "rating": 5}'])
    judge = FluencyJudge(FormatJudge(lambda p, f: next(replies)), model="scripted", structured="on")
    assert judge.score([item()])[0].values["fluency_llm"] == 5.0
    assert (judge.health.parse_failures, judge.health.reasks, judge.health.nulls["fluency_llm"]) == (1, 1, 0)


def _rejecting(after: ScriptedJudge | None = None) -> FormatJudge:
    plain = scripted(after)

    def answer(prompt: str, fmt: ResponseFormat | None) -> Out:
        if fmt is not None:
            error = ModelError("prompt judge/x: model fake: HTTP 400: response_format unsupported")
            error.__cause__ = FormatRejected("POST http://127.0.0.1/v1/chat/completions: HTTP 400: "
                                             "response_format unsupported; ...")
            return error
        return plain.answer(prompt, None)

    return FormatJudge(answer)


def test_auto_falls_back_to_plain_prompts_for_the_rest_of_the_run() -> None:
    model = _rejecting()
    judge = SupportLLMJudge(model, model="scripted", structured="auto")
    scores = judge.score([item(), item("s/d/m")])
    assert [s.values["support_llm"] for s in scores] == [0.5, 0.5]  # never 0, never null
    # claims: refused with the schema, sent again plain; verdicts: plain from the start
    assert [fmt is not None for _p, fmt in model.batches] == [True, False, False]
    assert "JSON object only" not in model.batches[1][0][0]
    h = judge.health
    assert h.output == "text" and h.format_fallbacks == 2 and h.errors == 0
    assert h.output_note.startswith("the server refused response_format (")
    assert h.to_json()["format_fallbacks"] == 2
    # later batches stay plain
    judge.score([item("s/e/m")])
    assert all(fmt is None for _p, fmt in model.batches[3:])


def test_on_keeps_the_refusal_as_null_with_the_servers_reason() -> None:
    judge = FluencyJudge(_rejecting(), model="scripted", structured="on")
    [score] = judge.score([item()])
    assert score.values["fluency_llm"] is None
    assert "response_format unsupported" in score.reasons["fluency_llm"]
    assert judge.health.errors == 1 and judge.health.format_fallbacks == 0 and judge.health.output == "json_schema"


def test_replay_only_without_any_structured_reply_tries_the_plain_prompts() -> None:
    def answer(prompt: str, fmt: ResponseFormat | None) -> Out:
        if fmt is not None:
            return NotCached("prompt judge/x: model fake: no cached answer in c/answers.sqlite3 ...")
        return "##Rating: 3 ##Explanation: ok"

    judge = FluencyJudge(FormatJudge(answer), model="scripted", structured="auto")
    assert judge.score([item()])[0].values["fluency_llm"] == 3.0
    assert judge.health.output == "text" and "replay-only" in judge.health.output_note


def test_health_merge_keeps_the_fallback_note() -> None:
    a = JudgeHealth(output="json_schema", unstructured_replies=1)
    b = JudgeHealth(output="text", output_note="the server refused response_format (...)", format_fallbacks=3)
    a.merge(b)
    assert (a.output, a.output_note, a.format_fallbacks, a.unstructured_replies) == \
        ("text", "the server refused response_format (...)", 3, 1)
    assert JudgeHealth.from_json(a.to_json()).to_json() == a.to_json()
    assert "output" not in JudgeHealth(items=3).to_json()  # local judges keep their shape


# ---------------------------------------------------------------- spec option


def test_structured_option_parses_and_reaches_the_judge() -> None:
    assert parse_judge_spec("fluency_llm=openai:m?structured=on").options["structured"] == "on"
    assert parse_judge_spec("fluency_llm=openai:m?structured=false").options["structured"] == "off"
    assert parse_judge_spec("fluency_llm=openai:m").options.get("structured") is None  # auto by default
    with pytest.raises(ConfigError, match=r"option structured='yes please': expected auto .*, on .* or off"):
        parse_judge_spec("fluency_llm=openai:m?structured=yes%20please")
    spec = parse_judge_spec("fluency_llm=openai:m?structured=on&temperature=0")
    assert spec.model == "openai:m?temperature=0"  # the option stays with the judge, not the model
    judge: Any = create_judge(spec, complete=scripted(), structured="on")
    assert judge.structured == "on" and "structured" not in judge.options


def test_the_mode_follows_what_the_judge_models_adapter_can_do() -> None:
    from pytest_mirage.evaluate.judging import structured_mode
    from pytest_mirage.models.registry import ModelRegistry

    spec = parse_judge_spec("fluency_llm=extractive")
    model = spec.model_spec()
    extractive = ModelRegistry().create(model)
    assert structured_mode(spec, model, extractive) == ("off", "extractive: models cannot constrain output to a "
                                                                 "JSON schema")
    off = parse_judge_spec("fluency_llm=extractive?structured=off")
    assert structured_mode(off, model, extractive) == ("off", "structured=off")
    on = parse_judge_spec("fluency_llm=extractive?structured=on", source="suite.toml")
    with pytest.raises(ConfigError, match=r"judge spec 'fluency_llm=extractive\?structured=on' \(suite.toml\): "
                                          r"structured=on needs .* extractive: models cannot: use structured=auto"):
        structured_mode(on, model, extractive)
