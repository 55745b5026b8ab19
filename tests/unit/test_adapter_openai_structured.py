"""Structured output over HTTP: a judge stage's JSON schema travels as ``response_format`` through
the engine (and its cache) to the openai: adapter and the local OpenAI-compatible server, whose
scripted judge honours it, ignores it or refuses it with a 400 as older llama.cpp servers do."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_mirage.engine import EngineSettings, EngineStats, run_requests
from pytest_mirage.errors import FormatRejected, ModelError, caused_by
from pytest_mirage.judges import structured as st
from pytest_mirage.judges.base import JudgeItem
from pytest_mirage.judges.llm import AresJudge, SupportLLMJudge
from pytest_mirage.models.base import Answer, PromptRequest, ResponseFormat
from pytest_mirage.models.registry import parse_model_spec
from pytest_mirage.suites.model import Passage
from tests.helpers.fake_openai import FakeOpenAIServer, ScriptedJudge, token_logprobs

pytest.importorskip("openai")

from pytest_mirage.models.openai_adapter import OpenAIAdapter, create


def adapter(server: FakeOpenAIServer, options: str = "") -> OpenAIAdapter:
    return create(parse_model_spec(f"openai:fake-judge?base_url={server.base_url}{options}"))


def engine_complete(model: OpenAIAdapter, settings: EngineSettings) -> Any:
    """``complete(prompts, response_format=None)`` straight on the engine, as the plugin builds it."""
    def complete(prompts: list[str], response_format: ResponseFormat | None = None) -> list[Any]:
        reqs = [PromptRequest(id=f"p{n}", prompt=p, label="judge t", response_format=response_format)
                for n, p in enumerate(prompts)]
        return [a.output if isinstance(a, Answer) else a for a in run_requests(model, reqs, settings)]
    return complete


def items(n: int = 3) -> Sequence[JudgeItem]:
    return [JudgeItem(f"s/c{i}/m", "en", f"Question {i}?", f"Answer number {i} [p1].",
                      (Passage("p1", f"Passage {i} text."),)) for i in range(n)]


def test_the_request_carries_the_schema_and_the_cache_keeps_formats_apart(tmp_path: Path) -> None:
    fmt = st.response_format("yes_no")
    with FakeOpenAIServer(answer=ScriptedJudge()) as srv:
        model = adapter(srv)
        settings = EngineSettings(cache_dir=tmp_path, stats=EngineStats())
        same = [PromptRequest(id="a", prompt="Is it? [[Yes]] or [[No]]", label="judge t"),
                PromptRequest(id="b", prompt="Is it? [[Yes]] or [[No]]", label="judge t", response_format=fmt)]
        plain, structured = run_requests(model, same, settings)
        assert srv.count == 2  # one prompt, two formats: two calls, two cache entries
        bodies = [r.body for r in srv.log]
        assert "response_format" not in bodies[0] or "response_format" not in bodies[1]
        sent = next(b for b in bodies if "response_format" in b)
        assert sent["response_format"] == {"type": "json_schema", "json_schema": {
            "name": "mirage_yes_no", "schema": st.SCHEMAS["yes_no"], "strict": True}}
        assert isinstance(plain, Answer) and plain.output == "[[Yes]]"
        assert isinstance(structured, Answer) and structured.output == '{"verdict": "Yes"}'
        again = run_requests(model, list(reversed(same)), settings)
        assert srv.count == 2  # both from the cache, each with its own reply
        assert [a.output for a in again if isinstance(a, Answer)] == ['{"verdict": "Yes"}', "[[Yes]]"]


def test_a_judge_end_to_end_structured_then_from_the_cache(tmp_path: Path) -> None:
    with FakeOpenAIServer(answer=ScriptedJudge()) as srv:
        model = adapter(srv)
        settings = EngineSettings(cache_dir=tmp_path)
        judge = SupportLLMJudge(engine_complete(model, settings), model="fake-judge", structured="auto")
        values = [s.values["support_llm"] for s in judge.score(items())]
        assert values == [0.5, 0.5, 0.5]
        assert srv.count == 6 and all(r.body["response_format"]["type"] == "json_schema" for r in srv.log)
        assert {r.body["response_format"]["json_schema"]["name"] for r in srv.log} == \
            {"mirage_claims", "mirage_claim_verdicts"}
        assert judge.health.output == "json_schema" and judge.health.unstructured_replies == 0
        rerun = SupportLLMJudge(engine_complete(model, settings), model="fake-judge", structured="auto")
        assert [s.values["support_llm"] for s in rerun.score(items())] == values
        assert srv.count == 6  # a rerun makes no call


def test_a_server_that_ignores_the_format_is_read_by_the_tolerant_parser() -> None:
    with FakeOpenAIServer(answer=ScriptedJudge(), structured="ignore") as srv:
        judge = SupportLLMJudge(engine_complete(adapter(srv), EngineSettings()), model="fake-judge",
                                structured="auto")
        assert [s.values["support_llm"] for s in judge.score(items())] == [0.5, 0.5, 0.5]
        assert all("response_format" in r.body for r in srv.log)  # sent, not honoured
        assert judge.health.unstructured_replies == 6 and judge.health.parse_failures == 0


def test_a_refused_format_is_format_rejected_and_the_rest_of_the_run_is_not_sent() -> None:
    fmt = st.response_format("yes_no")
    with FakeOpenAIServer(answer=ScriptedJudge(), structured="reject") as srv:
        stats = EngineStats()
        reqs = [PromptRequest(id=f"p{i}", prompt=f"prompt {i}", label="judge t", response_format=fmt)
                for i in range(12)]
        out = run_requests(adapter(srv), reqs, EngineSettings(concurrency=2, stats=stats))
        assert all(isinstance(r, ModelError) and caused_by(r, FormatRejected) for r in out)
        assert 1 <= srv.format_rejections <= 2  # only the requests already in flight reached the server
        first = next(str(r) for r in out if "not sent" not in str(r))
        assert "HTTP 400" in first and "does not accept response_format" in first and "structured=auto" in first
        assert not stats.problems  # not the circuit breaker: the judge sends them again plain


def test_auto_falls_back_to_plain_prompts_on_a_rejecting_server(tmp_path: Path) -> None:
    with FakeOpenAIServer(answer=ScriptedJudge(), structured="reject") as srv:
        settings = EngineSettings(cache_dir=tmp_path)
        judge = SupportLLMJudge(engine_complete(adapter(srv), settings), model="fake-judge", structured="auto")
        assert [s.values["support_llm"] for s in judge.score(items())] == [0.5, 0.5, 0.5]
        h = judge.health
        assert h.output == "text" and h.format_fallbacks == 3 and h.errors == 0
        assert "the server refused response_format" in h.output_note and "HTTP 400" in h.output_note
        # only the first (claims) batch carried the schema; the verdicts went plain
        plain = [r for r in srv.log if "response_format" not in r.body]
        assert len(plain) == 6 and srv.format_rejections >= 1

        on = SupportLLMJudge(engine_complete(adapter(srv), settings), model="fake-judge", structured="on")
        scores = on.score(items(1))
        assert scores[0].values["support_llm"] is None
        assert "does not accept response_format" in scores[0].reasons["support_llm"]


def test_ares_logprobs_read_through_a_json_verdict() -> None:
    # the fake server's log-probabilities on JSON tokens: '"Yes"}' has '[[No]]' as its runner-up
    rows = token_logprobs('{"verdict": "Yes"}', 2)
    assert rows[1]["top_logprobs"][1]["token"] == "[[No]]"
    with FakeOpenAIServer(answer=ScriptedJudge()) as srv:
        model = adapter(srv, "&logprobs=true")
        settings = EngineSettings()

        def complete(prompts: list[str], response_format: ResponseFormat | None = None) -> list[Any]:
            from pytest_mirage.judges.base import Reply, TokenLogprob

            reqs = [PromptRequest(id=f"p{n}", prompt=p, label="judge t", response_format=response_format)
                    for n, p in enumerate(prompts)]
            return [Reply(a.output, tuple(TokenLogprob(t, lp, dict(top)) for t, lp, top in a.logprobs or ()))
                    if isinstance(a, Answer) else a for a in run_requests(model, reqs, settings)]

        judge = AresJudge(complete, model="fake-judge", metrics=["ares_answer_faithfulness"], structured="on")
        [score] = judge.score(items(1))
        expected = 1 / (1 + 2.718281828459045 ** (-3 + 0.05))
        assert score.values["ares_answer_faithfulness"] == pytest.approx(expected, abs=1e-9)
