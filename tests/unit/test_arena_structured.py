"""Structured output for the arena's pairwise judge: the pairwise schema and its note, JSON-first
verdicts with the tolerant marker parser behind them, re-asks, the fallback to plain prompts when a
server refuses ``response_format``, position-bias figures under JSON verdicts, the judge's
``structured`` option and its configure-time checks (with a scripted ``complete``), then the same
over HTTP against the local OpenAI-compatible server (honour / ignore / reject) and its cache."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_mirage.config.options import Raw
from pytest_mirage.config.settings import _arena_judge
from pytest_mirage.errors import ConfigError, FormatRejected, ModelError
from pytest_mirage.judges import structured as st
from pytest_mirage.judges.base import JudgeHealth
from pytest_mirage.judges.pairwise import (
    RETRY_REMINDER,
    Matchup,
    build_plan,
    judge_matchups,
    judge_reliability,
    matchup_prompts,
    pairwise_template,
    read_verdict,
)
from pytest_mirage.models.base import ResponseFormat
from pytest_mirage.models.registry import ModelRegistry, parse_model_spec
from pytest_mirage.report.stats_lines import OUTPUT_KEYS
from pytest_mirage.suites.model import Case, Passage
from tests.helpers.fake_openai import (
    FakeOpenAIServer,
    FormatJudge,
    ScriptedJudge,
    scripted_format_judge,
)

Out = str | Exception


scripted = scripted_format_judge  # the scripted judge, called the way the server calls it


def _case(cid: str) -> Case:
    return Case(suite="s", id=cid, lang="en", question=f"question {cid}?",
                passages=(Passage(f"{cid}#0", "the passage"),), relevant=(f"{cid}#0",), answers=("x",))


def _arena(n_cases: int = 3) -> tuple[tuple[Matchup, ...], list[str]]:
    """Two models in both orders; ``long`` always answers at greater length than ``short``."""
    cases = [_case(f"c{k}") for k in range(n_cases)]
    plan = build_plan(cases, ["long", "short"], order="both")
    answers = {("s", c.id, "long"): f"a long and detailed answer to {c.id} [{c.id}#0]" for c in cases}
    answers |= {("s", c.id, "short"): f"short {c.id}" for c in cases}
    return plan, matchup_prompts(plan, {("s", c.id): c for c in cases}, answers)


# ---------------------------------------------------------------- schema and reading


def test_the_pairwise_schema_keeps_the_prompts_letters_and_its_note_names_them() -> None:
    schema = st.SCHEMAS["pairwise"]
    assert schema["required"] == ["explanation", "verdict"]  # the prompt explains first, then decides
    assert schema["properties"]["verdict"] == {"type": "string", "enum": ["A", "B", "C"]}
    assert st.response_format("pairwise").name == "mirage_pairwise"
    note = st.NOTES["pairwise"]
    assert note.startswith("\n\nReply with a JSON object only") and '"C" for a tie' in note
    # the prompt's own instructions stay as MIRAGE-Bench wrote them
    assert '"[[A]]" if assistant A is better, "[[B]]" if assistant B is better, and "[[C]]" for a tie' in \
        pairwise_template()


@pytest.mark.parametrize(("reply", "verdict"), [
    ('{"explanation": "A cites the passage.", "verdict": "A"}', "A"),
    ('{"explanation": "B is complete.", "verdict": "B", "confidence": 0.9}', "B"),  # extra keys ignored
    ('Here it is:\n```json\n{"explanation": "same", "verdict": "C"}\n```', "C"),  # fenced in prose
    ('{"explanation": "equal", "verdict": "tie"}', "unparseable"),  # not one of the schema's letters
    ('{"explanation": "A is better", "verdict": ["A"]}', "unparseable"),  # wrong type: not read as text
    ('{"verdict": "A"}', "unparseable"),  # the explanation is part of the schema
    ("A cites its passage; B does not.\n[[A]]", "A"),  # no JSON: the marker parser
    ('{"score": 3} and in the end [[B]]', "B"),  # JSON of another shape: read as text
    ("I prefer A.", "unparseable"),
])
def test_json_first_then_the_marker_parser(reply: str, verdict: str) -> None:
    assert read_verdict(reply) == verdict


# ---------------------------------------------------------------- judging with the schema


def test_every_prompt_carries_the_schema_and_the_note_and_json_verdicts_count() -> None:
    plan, prompts = _arena()
    model = scripted()
    health = JudgeHealth()
    got = judge_matchups(model, plan, prompts, structured="auto", health=health)
    assert [fmt for _p, fmt in model.batches] == [st.response_format("pairwise")]
    assert all(p == base + st.NOTES["pairwise"] for p, base in zip(model.batches[0][0], prompts, strict=True))
    assert [j.winner for j in got] == ["long"] * len(plan)  # the longer answer, in both positions
    assert all(json.loads(j.reply or "")["verdict"] in ("A", "B") for j in got)
    rel = judge_reliability(got)
    assert (rel.swap_consistency, rel.position_a_rate, rel.parse_failures) == (1.0, 0.5, 0)
    assert (health.output, health.output_note, health.unstructured_replies, health.format_fallbacks) == \
        ("json_schema", "", 0, 0)
    assert (health.items, health.calls, health.batches) == (len(plan), len(plan), 1)


def test_plain_mode_sends_no_schema_and_no_note() -> None:
    plan, prompts = _arena(1)
    model = scripted()
    health = JudgeHealth()
    got = judge_matchups(model, plan, prompts, structured="off", health=health,
                         plain_reason="hf: models cannot constrain output to a JSON schema")
    assert model.batches == [(prompts, None)]
    assert [j.verdict for j in got] == ["A", "B"]  # long is A in the first order, B in the second
    assert health.output == "text" and health.output_note.startswith("hf: models cannot")


def test_a_server_that_ignores_the_schema_is_read_as_text_and_counted() -> None:
    plan, prompts = _arena(1)
    plain = ScriptedJudge()
    model = FormatJudge(lambda p, _fmt: plain({"messages": [{"role": "user", "content": p}]}))
    health = JudgeHealth()
    got = judge_matchups(model, plan, prompts, structured="on", health=health)
    assert [j.winner for j in got] == ["long", "long"]
    assert health.output == "json_schema" and health.unstructured_replies == 2 and health.parse_failures == 0


def test_wrong_json_is_reasked_with_the_json_reminder_then_recorded_unparseable() -> None:
    plan, prompts = _arena(1)
    model = scripted(ScriptedJudge(wrong_types=True))
    health = JudgeHealth()
    got = judge_matchups(model, plan, prompts, structured="on", health=health, retries=1)
    assert [j.verdict for j in got] == ["unparseable", "unparseable"]  # never a tie, never a battle
    assert [j.attempts for j in got] == [2, 2]
    again = model.batches[1][0]
    assert all(p.endswith(st.NOTES["pairwise"] + st.REMINDER) for p in again)
    assert (health.parse_failures, health.reasks) == (4, 2)


def test_a_repaired_reply_after_the_reask_counts() -> None:
    plan, prompts = _arena(1)
    good = scripted()

    def answer(prompt: str, fmt: ResponseFormat | None) -> Out:
        if not prompt.endswith(st.REMINDER):
            return '{"explanation": "equal", "verdict": "tie"}'
        return good.answer(prompt, fmt)

    got = judge_matchups(FormatJudge(answer), plan, prompts, structured="on", retries=1)
    assert [j.winner for j in got] == ["long", "long"] and [j.attempts for j in got] == [2, 2]


def _rejecting() -> FormatJudge:
    plain = scripted()

    def answer(prompt: str, fmt: ResponseFormat | None) -> Out:
        if fmt is not None:
            error = ModelError("prompt judge/x: model fake: HTTP 400: response_format unsupported")
            error.__cause__ = FormatRejected("POST http://127.0.0.1/v1/chat/completions: HTTP 400: "
                                             "response_format unsupported; ...")
            return error
        if st.NOTES["pairwise"] in prompt:
            raise AssertionError("a plain prompt must not carry the JSON note")
        return plain.answer(prompt, None)

    return FormatJudge(answer)


def test_auto_falls_back_to_plain_prompts_for_the_rest_of_the_run() -> None:
    plan, prompts = _arena()
    model = _rejecting()
    health = JudgeHealth()
    got = judge_matchups(model, plan, prompts, structured="auto", health=health)
    assert [j.winner for j in got] == ["long"] * len(plan)  # the same verdicts, from plain prompts
    assert [j.attempts for j in got] == [1] * len(plan)  # the fallback is not a retry
    assert [fmt is not None for _p, fmt in model.batches] == [True, False]
    assert health.output == "text" and health.format_fallbacks == len(plan) and health.errors == 0
    assert health.output_note.startswith("the server refused response_format (")


def test_on_keeps_the_refusal_as_an_error_never_a_tie() -> None:
    plan, prompts = _arena(1)
    health = JudgeHealth()
    got = judge_matchups(_rejecting(), plan, prompts, structured="on", health=health, retries=1)
    assert [j.verdict for j in got] == ["error", "error"] and all(not j.decided for j in got)
    assert "response_format unsupported" in (got[0].error or "")
    assert health.output == "json_schema" and health.format_fallbacks == 0 and health.errors == 4


def test_a_plain_judge_object_still_works_and_unparseable_plain_replies_get_the_marker_reminder() -> None:
    plan, prompts = _arena(1)

    class Plain:
        def __init__(self) -> None:
            self.calls: list[list[str]] = []

        def complete(self, batch: list[str]) -> list[str | Exception]:
            self.calls.append(batch)
            return ["[[A]]" if p.endswith(RETRY_REMINDER) else "no verdict" for p in batch]

    judge = Plain()
    got = judge_matchups(judge, plan, prompts)  # structured defaults to off
    assert [j.verdict for j in got] == ["A", "A"] and judge.calls[1] == [p + RETRY_REMINDER for p in prompts]


def test_an_unknown_mode_is_an_error() -> None:
    plan, prompts = _arena(1)
    with pytest.raises(ConfigError, match=r"structured='json'; expected one of auto, on, off"):
        judge_matchups(scripted(), plan, prompts, structured="json")


# ---------------------------------------------------------------- the option and the configure-time checks


def test_the_structured_option_is_the_judges_not_the_models() -> None:
    spec, mode = _arena_judge(Raw("openai:gpt-4o?structured=on&temperature=0", "--mirage-judge"), {})
    assert mode == "on" and dict(spec.options) == {"temperature": "0"}
    assert spec.display_name == "openai:gpt-4o?temperature=0"  # the judge's name in surrogates is unchanged
    assert _arena_judge(Raw("openai:gpt-4o", "--mirage-judge"), {})[1] == "auto"
    assert _arena_judge(Raw("openai:gpt-4o?structured=false", "--mirage-judge"), {})[1] == "off"
    with pytest.raises(ConfigError, match=r"mirage_judge in pyproject.toml 'openai:gpt-4o\?structured=json': option "
                                          r"structured='json': expected auto .*, on .* or off"):
        _arena_judge(Raw("openai:gpt-4o?structured=json", "mirage_judge in pyproject.toml"), {})


@pytest.mark.parametrize("text", ["extractive", "control:oracle"])
def test_on_is_refused_for_a_model_that_cannot_send_a_schema(text: str) -> None:
    kind = text.partition(":")[0]
    adapter = ModelRegistry().create(parse_model_spec(text))
    assert st.resolve_mode("auto", adapter, kind=kind, where="arena judge") == \
        ("off", f"{kind}: models cannot constrain output to a JSON schema")
    assert st.resolve_mode("off", adapter, kind=kind, where="arena judge") == ("off", "structured=off")
    with pytest.raises(ConfigError, match=rf"arena judge '{kind}' \(--mirage-judge\): structured=on needs a judge "
                                          rf"model that can constrain .*; {kind}: models cannot: use structured=auto"):
        st.resolve_mode("on", adapter, kind=kind, where=f"arena judge '{kind}' (--mirage-judge)")


# ---------------------------------------------------------------- a model spec's own response_format


def test_a_judge_model_whose_extra_sets_response_format_is_refused_while_the_judge_sends_its_schema() -> None:
    pytest.importorskip("openai")
    extra = '&extra={"response_format": {"type": "json_object"}}'
    adapter = ModelRegistry().create(parse_model_spec("openai:m?base_url=http://127.0.0.1:9/v1" + extra))
    assert getattr(adapter, "own_response_format", None) is True
    for mode in ("auto", "on"):
        with pytest.raises(ConfigError, match=r"arena judge: the judge model's extra= sets response_format, and the "
                                              rf"judge sends its own JSON schema there \(structured={mode}.*\); one "
                                              r"would replace the other: drop response_format from extra= .*, or give "
                                              r"the judge structured=off"):
            st.resolve_mode(mode, adapter, kind="openai", where="arena judge")
    # off: the judge sends plain prompts, and the model's own format goes out as given
    assert st.resolve_mode("off", adapter, kind="openai", where="arena judge") == ("off", "structured=off")
    plain = ModelRegistry().create(parse_model_spec("openai:m?base_url=http://127.0.0.1:9/v1"))
    assert getattr(plain, "own_response_format", None) is False
    assert st.resolve_mode("auto", plain, kind="openai", where="arena judge") == ("auto", None)


def test_a_metric_judge_model_whose_extra_sets_response_format_is_refused_too() -> None:
    pytest.importorskip("openai")
    from pytest_mirage.evaluate.judging import structured_mode
    from pytest_mirage.judges.spec import parse_judge_spec

    spec = parse_judge_spec('fluency_llm=openai:m?base_url=http://127.0.0.1:9/v1&extra={"response_format": '
                            '{"type": "json_object"}}', source="--mirage-judges")
    model = spec.model_spec()
    adapter = ModelRegistry().create(model)
    with pytest.raises(ConfigError, match=r"judge spec 'fluency_llm=openai:m.*' \(--mirage-judges\): the judge "
                                          r"model's extra= sets response_format.*structured=auto, the default"):
        structured_mode(spec, model, adapter)


# ---------------------------------------------------------------- over HTTP, through the engine and its cache


def _http_arena(server: FakeOpenAIServer, cache: Path, structured: str) -> tuple[dict[str, Any], list[Any]]:
    pytest.importorskip("openai")
    from pytest_mirage.engine import EngineSettings, EngineStats, run_requests
    from pytest_mirage.evaluate.requests import prompt_id
    from pytest_mirage.finish.arena import ArenaOutcome, judge_and_fit
    from pytest_mirage.models.base import Answer, PromptRequest
    from pytest_mirage.models.openai_adapter import create

    model = create(parse_model_spec(f"openai:fake-judge?base_url={server.base_url}"))
    settings = EngineSettings(cache_dir=cache, stats=EngineStats())

    def complete(prompts: list[str], response_format: ResponseFormat | None = None) -> list[str | Exception]:
        reqs = [PromptRequest(id=prompt_id(p), prompt=p, label="judge", response_format=response_format)
                for p in prompts]
        return [a.output if isinstance(a, Answer) else a for a in run_requests(model, reqs, settings)]

    cases = {("s", f"c{k}"): _case(f"c{k}") for k in range(4)}
    answers = {("s", f"c{k}", m): (f"a long and detailed answer {k} [c{k}#0]" if m == "long" else
                                   f"mid answer {k}" if m == "mid" else f"s{k}")
               for k in range(4) for m in ("long", "mid", "short")}
    out = ArenaOutcome()
    judge_and_fit(complete, cases, answers, ["long", "mid", "short"], per_group=10, seed=0, order="both",
                  tournaments=20, out=out, structured=structured)
    return out.judge, [r["model"] for r in sorted((a for a in out.arena if a["lang"] == "all"),
                                                  key=lambda a: a["rank"])]


def test_over_http_the_schema_is_sent_honoured_and_cached(tmp_path: Path) -> None:
    with FakeOpenAIServer(answer=ScriptedJudge()) as srv:
        judge, order = _http_arena(srv, tmp_path, "auto")
        assert order == ["long", "mid", "short"]
        formats = [r.body.get("response_format") for r in srv.log]
        assert len(formats) == 4 * 3 * 2 and all(f["json_schema"]["name"] == "mirage_pairwise" for f in formats)
        assert (judge["output"], judge["unstructured_replies"], judge["parse_failures"]) == ("json_schema", 0, 0)
        assert judge["swap_consistency"] == 1.0
        calls = srv.count
        again, _ = _http_arena(srv, tmp_path, "auto")
        assert srv.count == calls and again == judge  # every structured verdict from the cache
        plain, _ = _http_arena(srv, tmp_path, "off")
        assert srv.count == calls + 24 and plain["output"] == "text"  # plain prompts are other cache entries
        # the same verdicts either way: only how the judge asked differs
        assert {k: v for k, v in plain.items() if k not in OUTPUT_KEYS} == \
            {k: v for k, v in judge.items() if k not in OUTPUT_KEYS}


def test_over_http_a_server_that_ignores_the_schema(tmp_path: Path) -> None:
    with FakeOpenAIServer(answer=ScriptedJudge(), structured="ignore") as srv:
        judge, order = _http_arena(srv, tmp_path, "auto")
    assert order == ["long", "mid", "short"]
    assert judge["output"] == "json_schema" and judge["unstructured_replies"] == 24 and judge["parse_failures"] == 0


def test_over_http_a_refusing_server_falls_back_with_auto_and_errs_with_on(tmp_path: Path) -> None:
    with FakeOpenAIServer(answer=ScriptedJudge(), structured="reject") as srv:
        judge, order = _http_arena(srv, tmp_path / "auto", "auto")
        assert order == ["long", "mid", "short"] and judge["errors"] == 0 and judge["decided"] == 24
        assert judge["output"] == "text" and judge["format_fallbacks"] == 24
        assert judge["output_note"].startswith("the server refused response_format (")
        # one structured batch, refused (the engine stops sending it at the first refusal); then plain prompts
        assert 0 < srv.format_rejections <= 24 and srv.completed == 24

        refused, order = _http_arena(srv, tmp_path / "on", "on")
    assert order == [] and refused["decided"] == 0 and refused["errors"] == 24  # failures, never ties
    assert refused["output"] == "json_schema" and refused["format_fallbacks"] == 0


def test_the_terminal_line_says_how_the_judge_asked() -> None:
    from pytest_mirage.report.terminal import judge_line

    base = {"judgments": 4, "swap_consistency": 1.0}
    assert judge_line({**base, "output": "json_schema", "output_note": "", "format_fallbacks": 0,
                       "unstructured_replies": 1}) == \
        "mirage judge: judgments 4, swap_consistency 1.000; output: JSON schema, 1 replies ignored the schema " \
        "(read as text)"
    assert judge_line({**base, "output": "text", "output_note": "structured=off", "format_fallbacks": 0,
                       "unstructured_replies": 0}) == \
        "mirage judge: judgments 4, swap_consistency 1.000; output: plain text (structured=off)"
    assert judge_line({**base, "source": "imported from b.jsonl"}) == \
        "mirage judge: judgments 4, swap_consistency 1.000, source imported from b.jsonl"  # imported: no output
