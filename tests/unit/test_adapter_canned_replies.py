"""The openai: adapter on replies shaped like those of real servers (fixtures/openai-replies/): OpenAI,
Azure, vLLM (with and without a reasoning parser) and llama.cpp; answers, usage, truncation,
refusals, filters and HTTP errors, each as the file's ``expect`` says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_mirage.engine import EngineSettings, EngineStats, RetryPolicy, run_requests
from pytest_mirage.errors import ModelError
from pytest_mirage.judges.base import Reply, TokenLogprob
from pytest_mirage.judges.llm import yes_probability
from pytest_mirage.models.base import Answer
from pytest_mirage.models.registry import parse_model_spec
from tests.helpers.cases import make_requests
from tests.helpers.fake_openai import FakeOpenAIServer

pytest.importorskip("openai")

from pytest_mirage.models.openai_adapter import create

REPLIES = sorted((Path(__file__).resolve().parents[2] / "fixtures" / "openai-replies").glob("*.json"))


def _load(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert set(data) == {"server", "status", "body", "expect"}, path
    return data


def test_the_fixture_folder_is_there() -> None:
    assert len(REPLIES) >= 10


@pytest.mark.parametrize("path", REPLIES, ids=[p.stem for p in REPLIES])
def test_canned_reply(path: Path) -> None:
    reply = _load(path)
    body = json.dumps(reply["body"], ensure_ascii=False).encode("utf-8")
    expect = reply["expect"]
    with FakeOpenAIServer(canned={"q-0:": (reply["status"], body)}) as srv:
        asks = "&logprobs=2" if "logprobs" in expect else ""
        spec = parse_model_spec(f"openai:some-model?base_url={srv.base_url}&max_tokens=512{asks}")
        stats = EngineStats()
        out = run_requests(create(spec), make_requests(1), EngineSettings(
            cache_mode="off", stats=stats, retry=RetryPolicy(max_retries=2, base_s=0.01, max_backoff_s=0.02)))
        attempts = len(srv.requests_for("q-0:"))
    result = out[0]
    if "output" in expect:
        assert isinstance(result, Answer), result
        assert result.output == expect["output"]
        assert dict(result.usage or {}) == expect["usage"]
        assert result.truncated is expect["truncated"]
        assert attempts == 1
        if "logprobs" in expect:  # the rows as parsed, and the probability the ARES judge reads from them
            assert [[t, lp, [list(a) for a in top]] for t, lp, top in result.logprobs or ()] == expect["logprobs"]
            reply = Reply(result.output, tuple(TokenLogprob(t, lp, dict(top)) for t, lp, top in result.logprobs or ()))
            assert yes_probability(reply, True) == pytest.approx(expect["p_yes"], abs=1e-4)
        return
    assert isinstance(result, ModelError), result
    message = str(result)
    for fragment in expect["error"]:
        assert fragment in message, (fragment, message)
    assert "some-model" in message  # the error names the model
    if "usage" in expect:  # a failed answer still reports the tokens it cost
        usage = getattr(result, "usage", {})
        assert all(usage.get(k) == v for k, v in expect["usage"].items()), usage
    if "attempts" in expect:
        assert attempts == expect["attempts"], attempts
