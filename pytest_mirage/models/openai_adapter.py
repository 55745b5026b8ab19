"""``openai:MODEL``: any OpenAI-compatible chat-completions endpoint through the official SDK.

Works with OpenAI itself and with every server that speaks the same API (vLLM's ``vllm serve``,
Ollama, LiteLLM and other gateways). The SDK's own retries are off (``max_retries=0``): the engine
retries 429 (honouring ``Retry-After``), 5xx, timeouts and dropped connections with its backoff
policy, and reports everything else as an error naming the endpoint, status and response excerpt.

Options (``openai:gpt-4o-mini?temperature=0&max_tokens=512``; see docs/models.md):
``base_url`` (else ``--mirage-openai-base-url``, else ``OPENAI_BASE_URL``, else OpenAI),
``api_key_env`` (default ``OPENAI_API_KEY``; with a custom base URL a missing key is replaced by a
dummy, as local servers ignore it), ``temperature`` (0.1, as in MIRAGE), ``max_tokens``,
``timeout`` (seconds per request, 60), ``concurrency`` (this model's limit; default the session's
``--mirage-concurrency``), ``extra`` (JSON object merged into the request body, e.g.
``{"top_p": 0.9, "seed": 1}``), ``truncated`` (``error``, the default, or ``keep``),
``cache_tag`` (any string, to keep this endpoint's answers apart in the cache), ``http``
(``auto``: the SDK's aiohttp transport when ``openai[aiohttp]`` is installed, else its default
httpx one; or ``httpx`` / ``aiohttp`` explicitly).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..engine.faults import (
    TransientError,
    cause_chain,
    describe_cause,
    excerpt,
    parse_retry_after,
    redact,
)
from ..engine.options import SpecOptions
from ..errors import ConfigError, ModelError
from .base import Answer, ModelRequest
from .registry import ModelSpec

OPTIONS = ("base_url", "api_key_env", "temperature", "max_tokens", "timeout", "concurrency", "extra",
           "truncated", "cache_tag", "http")
HTTP_CLIENTS = ("auto", "httpx", "aiohttp")
DEFAULT_TEMPERATURE = 0.1  # MIRAGE-Bench generates with temperature 0.1
DEFAULT_TIMEOUT_S = 60.0
DUMMY_KEY = "no-key-needed"
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
TIMEOUT_SLACK = 0.9  # a failure this close to the timeout counts as one (timer and clock granularity)


def _safe_url(url: str) -> str:
    """``url`` without user info, query or fragment (they may carry credentials)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


class OpenAIAdapter:
    """Chat completions over the async OpenAI SDK, one request per case (see module doc)."""

    retrieves = False
    cache_scope = "messages"  # the model sees only the rendered messages

    def __init__(self, spec: ModelSpec) -> None:
        opts = SpecOptions(spec, OPTIONS)
        if not spec.arg:
            raise ConfigError(f"--mirage-model {spec.raw!r}: no model name; expected openai:MODEL, "
                              "e.g. openai:gpt-4o-mini")
        try:
            import openai
        except ImportError as exc:
            raise ConfigError(f"--mirage-model {spec.raw!r}: the openai package is not installed ({exc}); "
                              'install it with: pip install "pytest-mirage[openai]"') from exc
        self._openai = openai
        self.model = spec.arg
        self.name = spec.raw.split("?", 1)[0]
        self.base_url = opts.text("base_url") or os.environ.get("OPENAI_BASE_URL") or None
        self.api_key_env = opts.text("api_key_env", "OPENAI_API_KEY") or "OPENAI_API_KEY"
        key = os.environ.get(self.api_key_env)
        if not key:
            if self.base_url is None:
                raise ConfigError(
                    f"--mirage-model {spec.raw!r}: the environment variable {self.api_key_env} is not set; "
                    "export your API key there, name another variable with ?api_key_env=NAME, or point "
                    "at a local OpenAI-compatible server with ?base_url=http://HOST:PORT/v1 "
                    "(or --mirage-openai-base-url / OPENAI_BASE_URL), which needs no key")
            key = DUMMY_KEY  # local servers (vLLM, Ollama) accept any key
        self._api_key = key
        self.temperature = opts.number("temperature", DEFAULT_TEMPERATURE, minimum=0.0)
        self.max_tokens = opts.integer("max_tokens", None, minimum=1)
        self.timeout = opts.number("timeout", DEFAULT_TIMEOUT_S, minimum=0.001)
        self.concurrency = opts.integer("concurrency", None, minimum=1)
        self.extra = opts.json_object("extra")
        self.truncated = opts.choice("truncated", "error", ("error", "keep"))
        self.cache_tag = opts.text("cache_tag")
        self.http = self._pick_http(spec, opts.choice("http", "auto", HTTP_CLIENTS))
        shown = _safe_url(self.base_url) if self.base_url else "https://api.openai.com/v1"
        self.endpoint = f"POST {shown}/chat/completions"
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _pick_http(self, spec: ModelSpec, choice: str) -> str:
        # The SDK's aiohttp transport costs about half the CPU per request of its default httpx one,
        # which matters at high concurrency (see docs/performance.md); both map faults the same way.
        available = aiohttp_available() and hasattr(self._openai, "DefaultAioHttpClient")
        if choice == "aiohttp" and not available:
            raise ConfigError(f"--mirage-model {spec.raw!r}: option http=aiohttp needs aiohttp and openai>=1.80; "
                              'install them with: pip install "openai[aiohttp]"')
        if choice == "auto":
            return "aiohttp" if available else "httpx"
        return choice

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIAdapter(model={self.model!r}, endpoint={self.endpoint!r})"

    def cache_identity(self) -> Mapping[str, Any] | None:
        # The base URL is transport, not model: a cache recorded through a proxy replays in CI that
        # talks to the provider directly. Use ?cache_tag= to separate servers that differ.
        identity: dict[str, Any] = {"kind": "openai", "model": self.model, "temperature": self.temperature,
                                    "max_tokens": self.max_tokens, "extra": self.extra,
                                    "truncated": self.truncated}
        if self.cache_tag:
            identity["cache_tag"] = self.cache_tag
        return identity

    # ------------------------------------------------------------------ calls
    def _client_for_loop(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            # the SDK's HTTP pool belongs to one event loop; each engine run gets its own client
            extra: dict[str, Any] = {}
            if self.http == "aiohttp":
                extra["http_client"] = self._openai.DefaultAioHttpClient(timeout=self.timeout)
            self._client = self._openai.AsyncOpenAI(api_key=self._api_key, base_url=self.base_url,
                                                    max_retries=0, timeout=self.timeout, **extra)
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        client, self._client, self._loop = self._client, None, None
        if client is not None:
            await client.close()

    def _fail(self, message: str) -> ModelError:
        return ModelError(redact(f"{self.endpoint}: {message}", [self._api_key]))

    def _transient(self, message: str, retry_after: float | None = None) -> TransientError:
        return TransientError(redact(f"{self.endpoint}: {message}", [self._api_key]), retry_after)

    async def answer_async(self, request: ModelRequest) -> Answer:
        openai = self._openai
        body: dict[str, Any] = {**self.extra, "model": self.model, "messages": request.messages,
                                "temperature": self.temperature}
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        started = time.monotonic()
        try:
            # The SDK's documented custom-request method on the chat-completions route: same client,
            # auth, headers, timeouts and error classes as chat.completions.create, without the
            # typed-parameter transform that costs ~30% of the client CPU per request at high
            # concurrency (docs/performance.md); the raw text is parsed and validated below.
            text = await self._client_for_loop().post("/chat/completions", cast_to=str, body=body)
        except openai.APIStatusError as exc:
            status = exc.status_code
            detail = f"HTTP {status}: {excerpt(exc.response.text)}"
            # "from None": the SDK's exception may quote the key (401 bodies do); ours is redacted
            if status in RETRYABLE_STATUS or status >= 500:
                raise self._transient(detail, parse_retry_after(dict(exc.response.headers))) from None
            raise self._fail(detail + _status_hint(status, self.api_key_env, self.model)) from None
        except openai.APIConnectionError as exc:  # APITimeoutError included: see _timed_out
            if isinstance(exc, openai.APITimeoutError) and self._timed_out(exc, time.monotonic() - started):
                raise self._transient(f"no response within {self.timeout:g}s (timeout; raise it with "
                                      "?timeout=SECONDS)") from None
            raise self._transient(f"connection failed ({describe_cause(exc)})") from None
        return self._parse(request, text)

    def _timed_out(self, exc: BaseException, elapsed: float) -> bool:
        """Whether an ``APITimeoutError`` is this adapter's ``timeout`` running out.

        The SDK's aiohttp transport maps aiohttp's connection errors (refused, unreachable, DNS
        failure, server disconnected) to httpx's ``ConnectTimeout``, so the class alone misleads:
        an OS error other than a timeout in the chain is a connection failure, and so is anything
        that ended before the timeout could fire (each phase of a request, connect or read, has the
        whole ``timeout``, so a real timeout never comes sooner).
        """
        if any(isinstance(e, OSError) and not isinstance(e, TimeoutError) for e in cause_chain(exc)):
            return False
        return self.timeout is None or elapsed >= TIMEOUT_SLACK * self.timeout

    def _parse(self, request: ModelRequest, text: str) -> Answer:
        try:
            data = json.loads(text)
        except ValueError:
            raise self._fail(f"the response is not valid JSON: {excerpt(text)}") from None
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list) or not choices:
            raise self._fail(f"the response has no choices: {excerpt(text)}")
        choice: dict[str, Any] = choices[0] if isinstance(choices[0], dict) else {}
        message: dict[str, Any] = choice["message"] if isinstance(choice.get("message"), dict) else {}
        content = message.get("content")
        finish = choice.get("finish_reason")
        if not isinstance(content, str) or not content.strip():
            refusal = message.get("refusal")
            why = f"the model refused: {refusal}" if refusal else f"finish_reason={finish!r}"
            raise self._fail(f"the response has no text content ({why}): {excerpt(text)}")
        if finish == "length" and self.truncated == "error":
            limit = f"max_tokens={self.max_tokens}" if self.max_tokens else "the server's output limit"
            raise self._fail(f"the output was cut at {limit} (finish_reason='length'): {excerpt(content)}; "
                             "raise ?max_tokens=N, or keep cut answers with ?truncated=keep")
        if finish == "content_filter":
            raise self._fail(f"the provider's content filter stopped the answer: {excerpt(content)}")
        usage: dict[str, Any] = {"finish_reason": finish}
        raw_usage = data.get("usage")
        if isinstance(raw_usage, dict):
            for name in ("prompt_tokens", "completion_tokens", "total_tokens"):
                if isinstance(raw_usage.get(name), int):
                    usage[name] = raw_usage[name]
        return Answer(case_id=request.case.id, model=self.name, output=content, usage=usage)

    def answer_batch(self, requests: Sequence[ModelRequest]) -> list[Answer | Exception]:
        """All requests, concurrently, with the engine's retries and no cache."""
        from ..engine import EngineSettings, run_requests

        return run_requests(self, requests, EngineSettings(cache_mode="off", concurrency=self.concurrency or 16))

    def close(self) -> None:
        # clients are closed at the end of each engine run (aclose); nothing is held between runs
        self._client = None
        self._loop = None


def aiohttp_available() -> bool:
    """Whether the SDK's aiohttp transport can be used (``pip install "openai[aiohttp]"``)."""
    return importlib.util.find_spec("aiohttp") is not None


def _status_hint(status: int, key_env: str, model: str) -> str:
    if status in (401, 403):
        return f"; check the API key in ${key_env} (or ?api_key_env=NAME)"
    if status == 404:
        return f"; check the model name {model!r} and the base URL"
    if status in (400, 422):
        return "; the server rejected the request: check max_tokens, extra fields and the model's context size"
    return ""


def create(spec: ModelSpec) -> OpenAIAdapter:
    return OpenAIAdapter(spec)
