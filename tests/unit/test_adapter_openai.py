"""The openai: adapter against a real local HTTP server speaking the chat-completions API."""

from __future__ import annotations

import importlib.util
import re
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_mirage.engine import CACHE_FILE, EngineSettings, EngineStats, RetryPolicy, run_requests
from pytest_mirage.errors import ConfigError, ModelError
from pytest_mirage.models.base import Answer
from pytest_mirage.models.registry import ModelRegistry, parse_model_spec
from tests.helpers.cases import make_requests
from tests.helpers.fake_openai import FakeOpenAIServer

pytest.importorskip("openai")

from pytest_mirage.models.openai_adapter import OpenAIAdapter, create

SECRET = "sk-test-SECRET-0123456789abcdef"
TRANSPORTS = ["httpx"] + (["aiohttp"] if importlib.util.find_spec("aiohttp") else [])


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(answer={"q-1:": "##Reason: r [doc1#0]\n##Answer: Berlin [doc1#0]"}) as srv:
        yield srv


def test_registry_resolves_the_openai_kind(server: FakeOpenAIServer) -> None:
    adapter = ModelRegistry().create(parse_model_spec(f"openai:gpt-4o-mini?base_url={server.base_url}"))
    assert isinstance(adapter, OpenAIAdapter)
    assert adapter.name == "openai:gpt-4o-mini" and adapter.retrieves is False


@pytest.mark.parametrize("http", TRANSPORTS)
def test_request_carries_model_messages_and_parameters(server: FakeOpenAIServer, http: str) -> None:
    reqs = make_requests(2)
    spec = parse_model_spec(f"openai:my-model?base_url={server.base_url}&max_tokens=64&http={http}"
                            '&extra={"top_p": 0.5, "seed": 7}')
    out = run_requests(create(spec), reqs, EngineSettings())
    body = server.requests_for("q-1:")[0].body
    assert body["model"] == "my-model"
    assert body["messages"] == [{"role": "user", "content": reqs[1].prompt}]
    assert body["temperature"] == 0.1  # MIRAGE's default
    assert body["max_tokens"] == 64
    assert body["top_p"] == 0.5 and body["seed"] == 7
    answer = out[1]
    assert isinstance(answer, Answer)
    assert answer.output == "##Reason: r [doc1#0]\n##Answer: Berlin [doc1#0]"
    assert answer.answer is None and answer.citations is None  # the plugin parses later
    assert answer.model == 'openai:my-model?max_tokens=64&extra={"top_p":0.5,"seed":7}'  # no transport options
    assert answer.usage == {"finish_reason": "stop", "prompt_tokens": 10, "completion_tokens": 5,
                            "total_tokens": 15}


def _closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on: bound to find a free one, then closed."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("http", TRANSPORTS)
def test_a_refused_connection_is_a_connection_failure_not_a_timeout(http: str) -> None:
    # The SDK's aiohttp transport maps a refused connection to ConnectTimeout (APITimeoutError);
    # the message must still say the connection failed, name the endpoint and the error, and the
    # failure stay retryable, not advise raising a timeout that never ran out.
    port = _closed_port()
    spec = parse_model_spec(f"openai:m?base_url=http://127.0.0.1:{port}/v1&http={http}&timeout=30")
    adapter = create(spec)
    assert adapter.http == http
    stats = EngineStats()
    out = run_requests(adapter, make_requests(1), EngineSettings(
        cache_mode="off", stats=stats, retry=RetryPolicy(max_retries=2, base_s=0.01, max_backoff_s=0.02)))
    assert stats.calls == 3 and stats.retries == 2  # retried as a connection failure, never timed out
    message = str(out[0])
    assert isinstance(out[0], ModelError), message
    assert f"POST http://127.0.0.1:{port}/v1/chat/completions: connection failed (" in message
    # httpx names its ConnectError, aiohttp the refusal itself
    assert re.search(r"connection failed \((ConnectError|ConnectionRefusedError): \S", message), message
    assert "timeout" not in message.lower() and "no response within" not in message
    assert "gave up after 3 attempt(s)" in message and stats.retries == 2


def test_session_default_base_url_and_env_var(server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    via_defaults = create(parse_model_spec("openai:m", defaults={"base_url": server.base_url}))
    assert isinstance(run_requests(via_defaults, make_requests(1))[0], Answer)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    via_env = create(parse_model_spec("openai:m"))
    assert isinstance(run_requests(via_env, make_requests(1))[0], Answer)
    assert server.count == 2


@pytest.mark.parametrize("http", TRANSPORTS)
def test_api_key_is_sent_but_never_stored_or_shown(server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path, http: str) -> None:
    monkeypatch.setenv("MY_KEY", SECRET)
    server.set_faults("q-0:", ["401"])
    adapter = create(parse_model_spec(f"openai:m?base_url={server.base_url}&api_key_env=MY_KEY&http={http}"))
    out = run_requests(adapter, make_requests(2), EngineSettings(cache_dir=tmp_path))
    assert server.log[0].headers["authorization"] == f"Bearer {SECRET}"
    assert isinstance(out[0], ModelError) and "HTTP 401" in str(out[0]) and "$MY_KEY" in str(out[0])
    assert SECRET not in str(out[0]) and SECRET not in repr(adapter)
    assert "MY_KEY" not in str(adapter.cache_identity()) and SECRET not in str(adapter.cache_identity())
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert (tmp_path / CACHE_FILE).exists() and SECRET.encode() not in stored and b"Bearer" not in stored


def test_error_bodies_that_echo_the_key_are_redacted(server: FakeOpenAIServer,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", SECRET)
    server.set_faults("q-0:", ["401"])
    server.set_faults("q-1:", ["400"])
    adapter = create(parse_model_spec(f"openai:m?base_url={server.base_url}&api_key_env=MY_KEY"))
    out = run_requests(adapter, make_requests(2))
    assert isinstance(out[0], ModelError)
    assert "Incorrect API key provided: ***" in str(out[0]) and SECRET not in str(out[0])
    chain: list[BaseException] = []
    exc: BaseException | None = out[0]
    while exc is not None:  # what a traceback would print: causes, and contexts not suppressed
        chain.append(exc)
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    assert all(SECRET not in str(e) for e in chain)
    assert isinstance(out[1], ModelError) and "HTTP 400" in str(out[1]) and "check max_tokens" in str(out[1])


def test_truncated_answers_are_kept_flagged_and_cached(server: FakeOpenAIServer, tmp_path: Path) -> None:
    server.set_faults("q-0:", ["truncated"])
    adapter = create(parse_model_spec(f"openai:m?base_url={server.base_url}"))
    stats = EngineStats()
    out = run_requests(adapter, make_requests(2), EngineSettings(cache_dir=tmp_path, stats=stats))
    assert isinstance(out[0], Answer) and out[0].truncated and out[0].usage["finish_reason"] == "length"
    assert isinstance(out[1], Answer) and not out[1].truncated
    assert stats.truncated == 1
    again = run_requests(adapter, make_requests(2), EngineSettings(cache_dir=tmp_path))
    assert server.count == 2 and [a.truncated for a in again] == [True, False]  # type: ignore[union-attr]


def test_truncated_answers_are_errors_when_asked(server: FakeOpenAIServer) -> None:
    server.set_faults("q-0:", ["truncated"])
    stats = EngineStats()
    adapter = create(parse_model_spec(f"openai:m?base_url={server.base_url}&truncated=error&max_tokens=9"))
    out = run_requests(adapter, make_requests(1), EngineSettings(stats=stats))
    assert isinstance(out[0], ModelError)
    assert "cut at max_tokens=9 (finish_reason='length')" in str(out[0]) and "?truncated=keep" in str(out[0])
    # the failed call's tokens are counted
    assert (stats.calls, stats.failed_calls, stats.prompt_tokens, stats.completion_tokens) == (1, 1, 10, 5)


def test_cache_identity_has_model_parameters_and_endpoint_not_transport(server: FakeOpenAIServer) -> None:
    a = create(parse_model_spec(f"openai:m?base_url={server.base_url}&temperature=0&timeout=5&concurrency=2"))
    b = create(parse_model_spec(f"openai:m?base_url={server.base_url}/&temperature=0&http=httpx"))
    assert a.cache_identity() == b.cache_identity() == {
        "kind": "openai", "model": "m", "endpoint": server.base_url, "temperature": 0.0, "max_tokens": 512,
        "extra": {}}
    other = create(parse_model_spec("openai:m?base_url=http://other:1/v1&temperature=0"))
    assert other.cache_identity()["endpoint"] == "http://other:1/v1"  # type: ignore[index]
    creds = create(parse_model_spec("openai:m?base_url=http://user:pw-1234@other:1/v1?key=abcd1234&temperature=0"))
    assert creds.cache_identity() == other.cache_identity()  # credentials are never part of it
    tagged = create(parse_model_spec("openai:m?base_url=http://other:1/v1&cache_tag=gateway"))
    assert tagged.cache_identity()["endpoint"] == "gateway"  # type: ignore[index]
    error_mode = create(parse_model_spec("openai:m?base_url=http://other:1/v1&truncated=error"))
    assert error_mode.cache_identity()["truncated"] == "error"  # type: ignore[index]


def test_answers_from_another_endpoint_are_not_reused(tmp_path: Path) -> None:
    reqs = make_requests(2)
    with FakeOpenAIServer() as first, FakeOpenAIServer() as second:
        for srv in (first, second):
            adapter = create(parse_model_spec(f"openai:m?base_url={srv.base_url}"))
            assert all(isinstance(a, Answer) for a in run_requests(adapter, reqs, EngineSettings(cache_dir=tmp_path)))
        assert (first.count, second.count) == (2, 2)


def test_async_adapters_have_no_hidden_engine_call(server: FakeOpenAIServer) -> None:
    # answering goes through run_requests (retries, cache, concurrency); an adapter never calls it itself
    adapter = create(parse_model_spec(f"openai:m?base_url={server.base_url}&concurrency=2"))
    assert not hasattr(adapter, "answer_batch")
    out = run_requests(adapter, make_requests(3), EngineSettings(cache_mode="off"))
    assert [a.case_id for a in out if isinstance(a, Answer)] == ["q-0", "q-1", "q-2"]
    assert server.max_in_flight <= 2


def test_default_max_tokens_is_sent_and_can_be_lifted(server: FakeOpenAIServer) -> None:
    run_requests(create(parse_model_spec(f"openai:m?base_url={server.base_url}")), make_requests(1))
    run_requests(create(parse_model_spec(f"openai:m?base_url={server.base_url}&max_tokens=none")), make_requests(1))
    spec = f'openai:m?base_url={server.base_url}&extra={{"max_completion_tokens": 33}}'
    run_requests(create(parse_model_spec(spec)), make_requests(1))
    bodies = [r.body for r in server.log]
    assert bodies[0]["max_tokens"] == 512
    assert "max_tokens" not in bodies[1]
    assert "max_tokens" not in bodies[2] and bodies[2]["max_completion_tokens"] == 33


def test_the_adapter_is_reusable_across_runs(server: FakeOpenAIServer, tmp_path: Path) -> None:
    adapter = create(parse_model_spec(f"openai:m?base_url={server.base_url}"))
    stats = EngineStats()
    for _ in range(2):  # each run has its own event loop; the client is rebuilt per loop
        out = run_requests(adapter, make_requests(2), EngineSettings(stats=stats))
        assert all(isinstance(a, Answer) for a in out)
    adapter.close()
    assert stats.calls == 4


@pytest.mark.parametrize(("spec", "message"), [
    ("openai:", "no model name; expected openai:MODEL"),
    ("openai:m?base_url=http://x/v1&temprature=0", r"unknown option 'temprature'.*Did you mean: temperature\?"),
    ("openai:m?base_url=http://x/v1&temperature=hot", "option temperature: found 'hot'; expected a finite number"),
    ("openai:m?base_url=http://x/v1&timeout=nan", "option timeout: found 'nan'; expected a finite number >= 0.001"),
    ("openai:m?base_url=http://x/v1&timeout=inf", "option timeout: found 'inf'; expected a finite number"),
    ("openai:m?base_url=http://x/v1&concurrency=2.5", "option concurrency: found '2.5'; expected an integer >= 1"),
    ("openai:m?base_url=http://x/v1&check_model=perhaps", "option check_model: found 'perhaps'; expected true or false"),
    ('openai:m?base_url=http://x/v1&extra={"stream": true}', "option extra: key 'stream' is not allowed"),
    ("openai:m?base_url=http://x/v1&max_tokens=0", "option max_tokens: found '0'; expected an integer >= 1"),
    ("openai:m?base_url=http://x/v1&extra=[1]", "option extra: found '\\[1\\]'; expected a JSON object"),
    ("openai:m?base_url=http://x/v1&truncated=maybe", "option truncated: found 'maybe'; expected one of keep, error"),
    ("openai:m?base_url=http://x/v1&http=curl", "option http: found 'curl'; expected one of auto, httpx, aiohttp"),
])
def test_bad_options_are_config_errors(spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        create(parse_model_spec(spec))


def test_transport_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_mirage.models import openai_adapter

    monkeypatch.setattr(openai_adapter, "aiohttp_available", lambda: False)
    assert create(parse_model_spec("openai:m?base_url=http://x/v1")).http == "httpx"
    with pytest.raises(ConfigError, match=r'http=aiohttp needs aiohttp.*pip install "openai\[aiohttp\]"'):
        create(parse_model_spec("openai:m?base_url=http://x/v1&http=aiohttp"))
    assert create(parse_model_spec("openai:m?base_url=http://x/v1&http=httpx")).http == "httpx"


def test_missing_key_without_a_local_server_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match=r"OPENAI_API_KEY is not set.*\?api_key_env=NAME.*base_url"):
        create(parse_model_spec("openai:gpt-4o-mini"))


def test_logprobs_are_requested_parsed_and_cached(server: FakeOpenAIServer, tmp_path: Path) -> None:
    spec = parse_model_spec(f"openai:m?base_url={server.base_url}&logprobs=2")
    settings = EngineSettings(cache_dir=tmp_path)
    first = run_requests(create(spec), make_requests(2), settings)[1]
    body = server.requests_for("q-1:")[0].body
    assert body["logprobs"] is True and body["top_logprobs"] == 2
    assert isinstance(first, Answer) and first.logprobs is not None
    tok, lp, top = first.logprobs[-1]
    assert tok == "[doc1#0]" and lp == -0.05 and top == (("[doc1#0]", -0.05), ("the", -5.0))
    again = run_requests(create(spec), make_requests(2), settings)[1]
    assert isinstance(again, Answer) and again.usage.get("cached") and again.logprobs == first.logprobs
    # without the option nothing is asked, nothing is kept, and the two never share a cache entry
    plain = run_requests(create(parse_model_spec(f"openai:m?base_url={server.base_url}")), make_requests(2),
                         settings)[1]
    assert isinstance(plain, Answer) and plain.logprobs is None and not plain.usage.get("cached")
    assert "logprobs" not in server.requests_for("q-1:")[-1].body


@pytest.mark.parametrize(("options", "message"), [
    ("logprobs=25", "logprobs"),
    ("logprobs=many", "logprobs"),
    ('logprobs=true&extra={"top_logprobs": 3}', "both ask for log-probabilities"),
])
def test_bad_logprobs_options(server: FakeOpenAIServer, options: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        create(parse_model_spec(f"openai:m?base_url={server.base_url}&{options}"))
