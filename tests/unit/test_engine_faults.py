"""Fault handling: every injected fault is recovered or reported as an error with its reason.

The faults come from a real HTTP server on 127.0.0.1 speaking the chat-completions API, reached
through the official openai SDK (the ``openai:`` adapter).
"""

from __future__ import annotations

import email.utils
import importlib.util
import itertools
import random
import time
from pathlib import Path

import pytest

from pytest_mirage.engine import (
    EngineSettings,
    EngineStats,
    RetryPolicy,
    parse_retry_after,
    redact,
    run_requests,
)
from pytest_mirage.engine.cache import AnswerCache
from pytest_mirage.errors import ModelError
from pytest_mirage.models.base import Answer
from pytest_mirage.models.faults import cause_chain, describe_cause
from pytest_mirage.models.registry import parse_model_spec
from tests.helpers.adapters import CountingBatchAdapter, transient
from tests.helpers.cases import make_requests
from tests.helpers.fake_openai import FakeOpenAIServer

pytest.importorskip("openai")

from pytest_mirage.models.openai_adapter import create

FAST = RetryPolicy(max_retries=3, base_s=0.01, max_backoff_s=0.05, max_wait_s=5.0)
# the SDK's two transports map faults to the same exceptions; check both where both are installed
TRANSPORTS = ["httpx"] + (["aiohttp"] if importlib.util.find_spec("aiohttp") else [])


def test_backoff_is_exponential_with_bounded_jitter() -> None:
    policy = RetryPolicy(max_retries=5, base_s=0.5, max_backoff_s=4.0)
    rng = random.Random(1)
    for attempt, full in enumerate([0.5, 1.0, 2.0, 4.0, 4.0]):
        waits = [policy.delay(attempt, None, rng) for _ in range(200)]
        assert all(w is not None and full / 2 <= w <= full for w in waits)
        assert max(w for w in waits if w is not None) - min(w for w in waits if w is not None) > full / 4
    assert policy.delay(5, None, rng) is None  # retries exhausted


def test_retry_after_is_honoured_and_capped() -> None:
    policy = RetryPolicy(max_retries=3, max_wait_s=10.0)
    rng = random.Random(0)
    waits = [policy.delay(0, 3.0, rng) for _ in range(100)]
    assert all(w is not None and 3.0 <= w <= 3.3 for w in waits)
    assert policy.delay(0, 11.0, rng) is None  # asks for longer than we wait: give up


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"Retry-After": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    now = time.time()
    date = email.utils.formatdate(now + 30, usegmt=True)
    parsed = parse_retry_after({"retry-after": date}, now=now)
    assert parsed is not None and 28.0 <= parsed <= 31.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({"retry-after": "-1"}) is None
    assert parse_retry_after({}) is None


def test_redact_masks_keys_and_tokens() -> None:
    text = 'Incorrect API key provided: sk-abcdef123456. header Authorization: Bearer tok_9876543210 {"api_key": "zzzz9999"}'
    out = redact(text, ["tok_9876543210"])
    assert "sk-abcdef123456" not in out and "tok_9876543210" not in out and "zzzz9999" not in out
    assert "sk-***" in out


FAULTS = {
    "q-0:": ["429:1", "ok"],  # rate limited, Retry-After: 1 s, then fine
    "q-1:": ["500", "503", "ok"],  # two server errors, then fine
    "q-2:": ["drop", "ok"],  # connection dropped, then fine
    "q-3:": ["slow", "ok"],  # beyond the 0.5 s timeout, then fine
    "q-4:": ["429ms:50", "ok"],  # OpenAI's retry-after-ms header
    "q-5:": ["invalid_json"],  # malformed: error with the excerpt, not retried
    "q-6:": ["empty_choices"],
    "q-7:": ["truncated"],  # cut at max_tokens: kept, flagged and cached
    "q-8:": ["401"],  # client error: not retried
    "q-9:": ["500", "500", "500", "500", "500"],  # more than the retry limit
}


@pytest.mark.parametrize("http", TRANSPORTS)
def test_every_fault_is_recovered_or_reported_with_its_reason(tmp_path: Path, http: str) -> None:
    reqs = make_requests(11)
    stats = EngineStats()
    with FakeOpenAIServer(faults=FAULTS, slow_s=2.0) as server:
        adapter = create(parse_model_spec(f"openai:fake?base_url={server.base_url}&timeout=0.5&http={http}"))
        assert adapter.http == http
        started = time.monotonic()
        out = run_requests(adapter, reqs, EngineSettings(cache_dir=tmp_path, retry=FAST, concurrency=8,
                                                         stats=stats))
        elapsed = time.monotonic() - started
        q0 = server.requests_for("q-0:")
        assert [r.fault for r in q0] == ["429:1", "ok"]
        assert all(r.headers.get("x-stainless-retry-count") == "0" for r in server.log)  # SDK retries off
    recovered = {f"q-{i}" for i in (0, 1, 2, 3, 4, 7, 10)}
    for req, result in zip(reqs, out, strict=True):
        if req.case.id in recovered:
            assert isinstance(result, Answer), result
        else:
            assert isinstance(result, ModelError), result
            assert f"case engine-suite/{req.case.id}" in str(result)
            assert "/v1/chat/completions" in str(result)  # names the endpoint
    messages = {req.case.id: str(res) for req, res in zip(reqs, out, strict=True)}
    assert "not valid JSON" in messages["q-5"] and '{"id": "chatcmpl-x"' in messages["q-5"]
    assert "no choices" in messages["q-6"] and '"choices": []' in messages["q-6"]
    truncated = out[7]
    assert isinstance(truncated, Answer) and truncated.truncated and truncated.usage["finish_reason"] == "length"
    assert not any(a.truncated for a in out if isinstance(a, Answer) and a is not truncated)
    assert "HTTP 401" in messages["q-8"] and "Incorrect API key provided" in messages["q-8"]
    assert "HTTP 500" in messages["q-9"] and "gave up after 4 attempt(s)" in messages["q-9"]
    assert elapsed >= 1.0  # waited for Retry-After: 1
    # nothing that failed is recorded: the cache holds exactly the recovered answers
    cache = AnswerCache(tmp_path)
    try:
        assert len(cache) == len(recovered)
    finally:
        cache.close()
    assert stats.errors == 4 and stats.retries == 1 + 2 + 1 + 1 + 1 + 3 and stats.truncated == 1
    # every attempt is a call; failed ones (retried or not) are counted apart
    assert stats.calls == 11 + stats.retries and stats.failed_calls == stats.retries + 4


@pytest.mark.parametrize("http", TRANSPORTS)
def test_timeouts_and_dropped_connections_are_told_apart(http: str) -> None:
    # the aiohttp transport raises APITimeoutError for a dropped connection too; only a request
    # that ran into the timeout is reported as one, and both stay retryable
    reqs = make_requests(2)
    policy = RetryPolicy(max_retries=1, base_s=0.01, max_backoff_s=0.02)
    with FakeOpenAIServer(faults={"q-0:": ["slow", "slow"], "q-1:": ["drop", "drop"]}, slow_s=2.0) as server:
        adapter = create(parse_model_spec(f"openai:fake?base_url={server.base_url}&timeout=0.5&http={http}"))
        out = run_requests(adapter, reqs, EngineSettings(cache_mode="off", retry=policy))
    slow, drop = (str(o) for o in out)
    assert all(isinstance(o, ModelError) for o in out), out
    assert "no complete response within 0.5s (timeout; output limit max_tokens=512" in slow
    assert "raise ?timeout=SECONDS" in slow and "?concurrency=N" in slow
    assert "/v1/chat/completions: connection failed (" in drop and "disconnected" in drop.lower()
    assert "timeout" not in drop.lower()
    assert "gave up after 2 attempt(s)" in slow and "gave up after 2 attempt(s)" in drop


def _raised_from(*chain: BaseException) -> BaseException:
    """``chain[0]`` raised from ``chain[1]`` raised from ..., as ``raise X from Y`` would link them."""
    for outer, inner in itertools.pairwise(chain):
        outer.__cause__ = inner
    return chain[0]


def test_cause_chain_follows_explicit_causes_only() -> None:
    root = ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 1)")
    root.__context__ = RuntimeError("no running event loop")  # incidental, e.g. an asyncio probe
    exc = _raised_from(RuntimeError("Request timed out."), OSError("Cannot connect to host"), root)
    assert list(cause_chain(exc)) == [exc, exc.__cause__, root]
    assert describe_cause(exc) == "ConnectionRefusedError: [Errno 111] Connect call failed ('127.0.0.1', 1)"
    silent = _raised_from(ValueError("Connection error."), OSError(), TimeoutError())
    assert describe_cause(silent) == "ValueError: Connection error."  # innermost with a message
    loop = RuntimeError("a")
    loop.__cause__ = RuntimeError("b")
    loop.__cause__.__cause__ = loop
    assert len(list(cause_chain(loop))) == 2


def test_an_ambiguous_timeout_is_judged_by_the_time_it_took() -> None:
    adapter = create(parse_model_spec("openai:fake?base_url=http://127.0.0.1:1/v1&timeout=10"))
    ambiguous = _raised_from(RuntimeError("Request timed out."), RuntimeError("Server disconnected"))
    assert not adapter._timed_out(ambiguous, elapsed=0.2)  # ended long before the timeout could fire
    assert adapter._timed_out(ambiguous, elapsed=10.0)
    read_timeout = _raised_from(RuntimeError("Request timed out."), TimeoutError())
    assert adapter._timed_out(read_timeout, elapsed=10.01)
    refused = _raised_from(RuntimeError("Request timed out."), ConnectionRefusedError(111, "refused"))
    assert not adapter._timed_out(refused, elapsed=10.0)  # an OS error says what it was, whenever


def test_retry_after_delays_the_retry_of_that_request_only() -> None:
    reqs = make_requests(4)
    with FakeOpenAIServer(latency=0.01, faults={"q-0:": ["429:1", "ok"]}) as server:
        adapter = create(parse_model_spec(f"openai:fake?base_url={server.base_url}"))
        out = run_requests(adapter, reqs, EngineSettings(retry=FAST))
        log = list(server.log)
    assert all(isinstance(a, Answer) for a in out)
    first, retry = (r.at for r in log if "q-0:" in r.content)
    others = [r.at for r in log if "q-0:" not in r.content]
    assert len(log) == 5 and len(others) == 3
    assert 1.0 <= retry - first <= 1.5  # Retry-After: 1 (+ at most 10% jitter)
    assert max(others) - first < 0.5  # the other requests did not wait


def test_retry_after_beyond_the_wait_limit_gives_up_with_the_reason() -> None:
    reqs = make_requests(1)
    with FakeOpenAIServer(faults={"q-0:": ["429:3600"]}) as server:
        adapter = create(parse_model_spec(f"openai:fake?base_url={server.base_url}"))
        out = run_requests(adapter, reqs, EngineSettings(retry=FAST))
        attempts = len(server.log)
    assert attempts == 1  # an hour's Retry-After is not waited for, and not retried
    assert isinstance(out[0], ModelError)
    assert "retry after 3600s" in str(out[0]) and "HTTP 429" in str(out[0])


def test_batch_adapters_retry_transient_failures_as_a_smaller_batch() -> None:
    reqs = make_requests(4)
    adapter = CountingBatchAdapter(script={"q-1": [transient(), "ok"], "q-3": [transient(retry_after=0.02)] * 9})
    stats = EngineStats()
    out = run_requests(adapter, reqs, EngineSettings(retry=FAST, stats=stats))
    # max_retries=3: the first call and three retries, each with only what is still failing
    assert adapter.batches == [["q-0", "q-1", "q-2", "q-3"], ["q-1", "q-3"], ["q-3"], ["q-3"]]
    assert [type(a).__name__ for a in out] == ["Answer", "Answer", "Answer", "ModelError"]
    assert "HTTP 503: busy (gave up after 4 attempt(s))" in str(out[3])
    assert stats.calls == 8 and stats.retries == 4 and stats.errors == 1
