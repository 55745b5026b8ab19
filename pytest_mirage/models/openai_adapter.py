"""``openai:MODEL``: any OpenAI-compatible chat-completions endpoint through the official SDK.

Works with OpenAI itself and with every server that speaks the same API (vLLM's ``vllm serve``,
llama.cpp's server, Ollama, LiteLLM and other gateways). The SDK's own retries are off
(``max_retries=0``): the engine retries 429 (honouring ``Retry-After``), 5xx, timeouts and dropped
connections with its backoff policy, and reports everything else as an error naming the endpoint,
status and response excerpt.

Options (``openai:gpt-4o-mini?temperature=0&max_tokens=512``; see docs/models.md):
``name`` (the model's display name), ``base_url`` (else ``--mirage-openai-base-url``, else
``OPENAI_BASE_URL``, else OpenAI), ``api_key_env`` (default ``OPENAI_API_KEY``; with a custom base
URL a missing key is replaced by a dummy, as local servers ignore it), ``temperature`` (0.1, as in
MIRAGE), ``max_tokens`` (512; ``none`` sends no limit), ``timeout`` (seconds for the whole request,
60), ``concurrency`` (a fixed limit of requests in flight; default the session's ``--mirage-concurrency``
when given, else adaptive: see ``adaptive``), ``adaptive`` (on by default: the engine finds the
server's capacity, from 4 in flight within ``concurrency_min`` .. ``concurrency_max``, 1 .. 128, and
paces by its rate limits; ``off``: a fixed limit of 16 and per-request retries), ``extra``
(JSON object merged into the request body, e.g. ``{"top_p": 0.9, "seed": 1}``), ``truncated``
(``keep``, the default: an answer cut at ``max_tokens`` is kept and flagged; or ``error``),
``cache_tag`` (a name for the endpoint in the cache key instead of its URL), ``check_model``
(``true``: check the model name against the server's ``/models`` list first), ``http`` (``auto``:
the SDK's aiohttp transport when ``openai[aiohttp]`` is installed, else its default httpx one; or
``httpx`` / ``aiohttp`` explicitly), ``logprobs`` (``K`` from 0 to 20, or ``true`` for 5: ask for the
log-probability of every generated token and its ``K`` most likely alternatives; the ARES judge turns
them into a probability of "yes").

Structured output: a request that carries a
:class:`~pytest_mirage.models.base.ResponseFormat` (LLM judges with ``structured=auto|on``) is sent
with ``response_format={"type": "json_schema", "json_schema": {"name", "schema", "strict": true}}``;
a server that refuses the field (HTTP 400/422 naming ``response_format`` or ``json_schema``) raises
:class:`~pytest_mirage.errors.FormatRejected`. A ``response_format`` in ``extra`` is sent as given
with every other request; a request with its own format replaces it. A judge never gets there: a
judge model whose ``extra`` sets ``response_format`` while the judge sends its schema
(``structured=auto|on``) is refused when the run is configured (``own_response_format``).
"""

from __future__ import annotations

import asyncio
import base64
import importlib.util
import ipaddress
import json
import os
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

from ..errors import ConfigError, FormatRejected, ModelError, did_you_mean
from .base import DEFAULT_MAX_TOKENS, DEFAULT_TEMPERATURE, Answer, EngineRequest
from .credentials import safe_url, secret_name
from .faults import (
    TransientError,
    cause_chain,
    describe_cause,
    excerpt,
    parse_retry_after,
    redact,
    report_headers,
)
from .options import (
    CAPACITY_OPTIONS,
    DEFAULT_START,
    REMOTE_START,
    SpecOptions,
    capacity_bounds,
    parse_int,
)
from .registry import ModelSpec

OPTIONS = ("base_url", "api_key_env", "temperature", "max_tokens", "timeout", "concurrency", "extra",
           "truncated", "cache_tag", "check_model", "http", "logprobs", *CAPACITY_OPTIONS)
HTTP_CLIENTS = ("auto", "httpx", "aiohttp")
DEFAULT_TIMEOUT_S = 60.0
OPENAI_URL = "https://api.openai.com/v1"
DUMMY_KEY = "no-key-needed"
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
RAW_RESPONSE_HEADER = "X-Stainless-Raw-Response"  # the SDK's with_raw_response switch: headers and body
TIMEOUT_SLACK = 0.9  # a failure this close to the timeout counts as one (timer and clock granularity)
REFUSED_EXTRA = {"stream": "the adapter reads whole responses, not streams",
                 "model": "the model is the spec's MODEL", "messages": "the messages are the prompt"}


DEFAULT_TOP_LOGPROBS = 5


def _logprobs(raw: Any) -> tuple[tuple[str, float, tuple[tuple[str, float], ...]], ...] | None:
    """``choices[0].logprobs.content`` (OpenAI's shape, also vLLM's and llama.cpp's) as rows of
    (token, logprob, alternatives); None when absent or not in that shape."""
    content = raw.get("content") if isinstance(raw, dict) else None
    if not isinstance(content, list) or not content:
        return None
    rows = []
    for entry in content:
        if not isinstance(entry, dict) or not isinstance(entry.get("token"), str):
            return None
        lp = entry.get("logprob")
        if isinstance(lp, bool) or not isinstance(lp, int | float):
            return None
        top = []
        for alt in entry.get("top_logprobs") or ():
            alp = alt.get("logprob") if isinstance(alt, dict) else None
            if isinstance(alt, dict) and isinstance(alt.get("token"), str) and isinstance(alp, int | float) \
                    and not isinstance(alp, bool):
                top.append((alt["token"], float(alp)))
        rows.append((entry["token"], float(lp), tuple(top)))
    return tuple(rows)


def _url_secrets(url: str | None) -> list[str]:
    """Credentials written into a URL (user, password, query values): redacted wherever they appear."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
        found = [parts.username or "", parts.password or ""]
    except ValueError:
        return []
    found += [v for _, v in parse_qsl(parts.query)]
    return [s for s in found if len(s) >= 4]


def _split_base_url(url: str | None) -> tuple[str | None, dict[str, str], dict[str, str]]:
    """``(url, query, headers)`` for the SDK: user info becomes an HTTP Basic ``Authorization``
    header (both transports send it the same way) and the query becomes ``default_query`` (the
    SDK appends its paths to the base URL, which would put them after a query)."""
    if not url:
        return None, {}, {}
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    headers: dict[str, str] = {}
    if parts.username is not None or parts.password is not None:
        pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", "")), query, headers


def _secret_keys(value: Any, path: str = "") -> list[str]:
    out: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            where = f"{path}.{k}" if path else str(k)
            out += [where] if secret_name(str(k)) else _secret_keys(v, where)
    elif isinstance(value, list):
        for n, v in enumerate(value):
            out += _secret_keys(v, f"{path}[{n}]")
    return out


class OpenAIAdapter:
    """Chat completions over the async OpenAI SDK, one request per case (see module doc)."""

    retrieves = False
    cache_scope = "messages"  # the model sees only the rendered messages
    structured_output = True  # sends a request's response_format (json_schema)

    def __init__(self, spec: ModelSpec) -> None:
        opts = SpecOptions(spec, OPTIONS)
        shown = spec.safe_raw
        if not spec.arg:
            raise ConfigError(f"--mirage-model {shown!r}: no model name; expected openai:MODEL, "
                              "e.g. openai:gpt-4o-mini")
        try:
            import openai
        except ImportError as exc:
            raise ConfigError(f"--mirage-model {shown!r}: the openai package is not installed ({exc}); "
                              'install it with: pip install "pytest-mirage[openai]"') from exc
        self._openai = openai
        self.model = spec.arg
        self.name = spec.display_name
        self.base_url = opts.text("base_url") or os.environ.get("OPENAI_BASE_URL") or None
        self.api_key_env = opts.text("api_key_env", "OPENAI_API_KEY") or "OPENAI_API_KEY"
        key = os.environ.get(self.api_key_env)
        if not key:
            if self.base_url is None:
                raise ConfigError(
                    f"--mirage-model {shown!r}: the environment variable {self.api_key_env} is not set; "
                    "export your API key there, name another variable with ?api_key_env=NAME, or point "
                    "at a local OpenAI-compatible server with ?base_url=http://HOST:PORT/v1 "
                    "(or --mirage-openai-base-url / OPENAI_BASE_URL), which needs no key")
            key = DUMMY_KEY  # local servers (vLLM, llama.cpp, Ollama) accept any key
        self._api_key = key
        self._secrets = [key, *_url_secrets(self.base_url)] if key != DUMMY_KEY else _url_secrets(self.base_url)
        self._client_url, self._query, self._headers = _split_base_url(self.base_url)
        self._secrets += [v for v in self._headers.values()]
        self.temperature = opts.number("temperature", DEFAULT_TEMPERATURE, minimum=0.0)
        raw_max = opts.raw("max_tokens")
        no_limit = isinstance(raw_max, str) and raw_max.strip().lower() == "none"
        self.max_tokens: int | None = None if no_limit else opts.integer("max_tokens", DEFAULT_MAX_TOKENS, minimum=1)
        self.timeout = opts.number("timeout", DEFAULT_TIMEOUT_S, minimum=0.001)
        self.concurrency = opts.integer("concurrency", None, minimum=1)
        # a local server (loopback, a private network) may have one slot: start cautiously; a remote API
        # starts where the former fixed limit was (its 429s and headers are handled either way)
        start = DEFAULT_START if _local_endpoint(self.base_url) else REMOTE_START
        self.capacity_bounds = capacity_bounds(opts, self.concurrency, default_start=start)
        self.extra = opts.json_object("extra")
        for key_name, why in REFUSED_EXTRA.items():
            if key_name in self.extra:
                raise ConfigError(f"{opts.where('extra')}: key {key_name!r} is not allowed ({why})")
        secret = _secret_keys(self.extra)
        if secret:
            # the value is not repeated: it must appear nowhere the plugin writes
            raise ConfigError(f"{opts.where('extra')}: key {secret[0]!r} looks like a credential; credentials "
                              "never go in the request options (they would be stored with the answers and "
                              "shown in names): put the key in an environment variable and name it with "
                              "?api_key_env=NAME")
        # a judge's schema would replace this one on structured requests: judges refuse the pair up front
        self.own_response_format = "response_format" in self.extra
        if "max_completion_tokens" in self.extra:
            self.max_tokens = None  # the newer field replaces it; servers refuse both
        self.truncated = opts.choice("truncated", "keep", ("keep", "error"))
        raw_lp = opts.raw("logprobs")
        lp_text = None if raw_lp is None else str(raw_lp).strip().lower()
        self.top_logprobs: int | None
        if lp_text is None or lp_text in ("false", "no", "off"):
            self.top_logprobs = None
        elif lp_text in ("true", "yes", "on"):
            self.top_logprobs = DEFAULT_TOP_LOGPROBS
        else:
            self.top_logprobs = parse_int(raw_lp, opts.where("logprobs"), 0, 0, 20)
        for key_name in ("logprobs", "top_logprobs"):
            if key_name in self.extra and self.top_logprobs is not None:
                raise ConfigError(f"{opts.where('extra')}: key {key_name!r} and the option logprobs= both ask for "
                                  "log-probabilities; keep the option")
        self.cache_tag = opts.text("cache_tag")
        self.check_model = opts.flag("check_model", False)
        self.http = self._pick_http(spec, opts.choice("http", "auto", HTTP_CLIENTS))
        self.endpoint_url = safe_url(self.base_url) if self.base_url else OPENAI_URL
        self.endpoint = f"POST {self.endpoint_url}/chat/completions"
        # what the engine keeps the learned capacity under: one server, one model
        self.capacity_key = f"openai {self.endpoint_url} {self.model}"
        self.prompt_tokens_extra = self.max_tokens or 0  # rate limiters count the output limit too
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._check_lock: asyncio.Lock | None = None
        self._model_problem: str | None = None
        self._model_checked = False

    def _pick_http(self, spec: ModelSpec, choice: str) -> str:
        # The SDK's aiohttp transport costs about half the CPU per request of its default httpx one,
        # which matters at high concurrency (see docs/performance.md); both map faults the same way.
        available = aiohttp_available() and hasattr(self._openai, "DefaultAioHttpClient")
        if choice == "aiohttp" and not available:
            raise ConfigError(f"--mirage-model {spec.safe_raw!r}: option http=aiohttp needs aiohttp and openai>=1.80; "
                              'install them with: pip install "openai[aiohttp]"')
        if choice == "auto":
            return "aiohttp" if available else "httpx"
        return choice

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIAdapter(model={self.model!r}, endpoint={self.endpoint!r})"

    def cache_identity(self) -> Mapping[str, Any] | None:
        # The endpoint is part of the identity: two servers may serve different weights under one
        # model name. ?cache_tag=NAME replaces the URL, e.g. to replay through a proxy a cache that
        # was recorded against the provider directly. Timeouts, concurrency and keys are left out.
        identity: dict[str, Any] = {"kind": "openai", "model": self.model, "endpoint": self.cache_tag or self.endpoint_url,
                                    "temperature": self.temperature, "max_tokens": self.max_tokens,
                                    "extra": self.extra}
        if self.truncated == "error":
            identity["truncated"] = "error"
        if self.top_logprobs is not None:
            identity["top_logprobs"] = self.top_logprobs
        return identity

    # ------------------------------------------------------------------ calls
    def _client_for_loop(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            # the SDK's HTTP pool belongs to one event loop; each engine run gets its own client
            extra: dict[str, Any] = {}
            if self.http == "aiohttp":
                extra["http_client"] = self._openai.DefaultAioHttpClient(timeout=self.timeout)
            self._client = self._openai.AsyncOpenAI(api_key=self._api_key, base_url=self._client_url,
                                                    default_query=self._query or None,
                                                    default_headers=self._headers or None,
                                                    max_retries=0, timeout=self.timeout, **extra)
            self._loop = loop
            self._check_lock = asyncio.Lock()
        return self._client

    async def aclose(self) -> None:
        client, self._client, self._loop = self._client, None, None
        if client is not None:
            await client.close()

    def _fail(self, message: str, usage: Mapping[str, Any] | None = None) -> ModelError:
        error = ModelError(redact(f"{self.endpoint}: {message}", self._secrets))
        if usage:
            error.usage = dict(usage)  # type: ignore[attr-defined]
        return error

    def _transient(self, message: str, retry_after: float | None = None, signal: str | None = None) -> TransientError:
        return TransientError(redact(f"{self.endpoint}: {message}", self._secrets), retry_after, signal)

    def _timeout_error(self) -> TransientError:
        limit = f"max_tokens={self.max_tokens}" if self.max_tokens else "no max_tokens (the server's own limit)"
        if self.concurrency:
            at_once = f"concurrency {self.concurrency}"
            hint = ("raise ?timeout=SECONDS, or for a server that answers one request at a time lower ?concurrency=N "
                    "(or drop it: the engine then finds the limit) or ?max_tokens=N")
        elif self.capacity_bounds is None:
            at_once = "concurrency from --mirage-concurrency"
            hint = ("raise ?timeout=SECONDS, or for a server that answers one request at a time lower ?concurrency=N or "
                    "?max_tokens=N")
        else:
            at_once = "adaptive concurrency"
            hint = "raise ?timeout=SECONDS or lower ?max_tokens=N, or set a fixed ?concurrency=N"
        return self._transient(
            f"no complete response within {self.timeout:g}s (timeout; output limit {limit}, {at_once}): {hint}",
            signal="timeout")

    async def _request(self, method: str, path: str, body: dict[str, Any] | None = None,
                       structured: bool = False) -> bytes:
        """One HTTP exchange under the adapter's deadline for the whole call: a server that trickles
        bytes cannot hold it longer than ``timeout`` (the SDK's own timeout bounds each read only).
        ``structured``: the body carries a judge's response_format (a refusal of it is
        :class:`FormatRejected`)."""
        openai = self._openai
        client = self._client_for_loop()
        started = time.monotonic()
        try:
            async with asyncio.timeout(self.timeout):
                if method == "GET":
                    raw = await client.get(path, cast_to=bytes)
                else:
                    # The SDK's documented custom-request method on the chat-completions route: same
                    # client, auth, headers, timeouts and error classes as chat.completions.create,
                    # without the typed-parameter transform that costs ~30% of the client CPU per request
                    # at high concurrency (docs/performance.md); the raw bytes are checked below. The
                    # raw-response switch (what with_raw_response sends) also gives the headers, which
                    # carry the server's rate limits.
                    raw = await client.post(path, cast_to=bytes, body=body,
                                            options={"headers": {RAW_RESPONSE_HEADER: "true"}})
        except TimeoutError:
            raise self._timeout_error() from None
        except openai.APIStatusError as exc:
            status = exc.status_code
            text = exc.response.text
            detail = f"HTTP {status}: {excerpt(text)}"
            headers = dict(exc.response.headers)
            report_headers(headers)
            retry_after = parse_retry_after(headers)
            if status == 429 and "insufficient_quota" in text:
                # OpenAI's "out of credit" is a 429 too, but waiting does not help
                raise self._fail(detail + "; the account has no quota left: check its plan and billing") from None
            # "from None": the SDK's exception may quote the key (401 bodies do); ours is redacted
            if status == 429 or (status == 503 and retry_after is not None):
                raise self._transient(detail, retry_after, signal="rate") from None
            if status in RETRYABLE_STATUS or status >= 500:
                raise self._transient(detail, retry_after) from None
            if structured and status in (400, 422) and \
                    _names_response_format(exc.response.text):
                raise FormatRejected(redact(
                    f"{self.endpoint}: {detail}; this server does not accept response_format (structured "
                    "output): give the judge spec structured=auto (plain prompts for this server) or "
                    "structured=off", self._secrets)) from None
            raise self._fail(detail + _status_hint(status, self.api_key_env, self.model, path)) from None
        except openai.APIConnectionError as exc:  # APITimeoutError included: see _timed_out
            if isinstance(exc, openai.APITimeoutError) and self._timed_out(exc, time.monotonic() - started):
                raise self._timeout_error() from None
            raise self._transient(f"connection failed ({describe_cause(exc)})") from None
        headers_of = getattr(raw, "headers", None)
        if headers_of is not None:  # the raw response (LegacyAPIResponse): headers, then the body
            report_headers(dict(headers_of))
            raw = raw.content
        return bytes(raw)

    async def _ensure_model(self) -> None:
        """With ``check_model=true``: the model must be in the server's ``/models`` list (checked once)."""
        if not self.check_model or self._model_checked:
            if self._model_problem:
                raise self._fail(self._model_problem)
            return
        self._client_for_loop()
        assert self._check_lock is not None
        async with self._check_lock:
            if not self._model_checked:
                raw = await self._request("GET", "/models")
                self._model_problem = self._model_list_problem(raw)
                self._model_checked = True
        if self._model_problem:
            raise self._fail(self._model_problem)

    def _model_list_problem(self, raw: bytes) -> str | None:
        where = f"GET {self.endpoint_url}/models"
        try:
            data = json.loads(raw.decode("utf-8"))
            ids = [str(m["id"]) for m in data["data"]]
        except (ValueError, KeyError, TypeError):
            return (f"check_model: {where} did not return a model list: {excerpt(raw.decode('utf-8', 'replace'))}; "
                    "drop ?check_model=true for this server")
        if self.model in ids:
            return None
        listed = ", ".join(ids[:20]) + (f" and {len(ids) - 20} more" if len(ids) > 20 else "")
        return (f"check_model: the server does not serve model {self.model!r} ({where} lists: {listed or 'none'}); "
                f"check the model name and the base URL.{did_you_mean(self.model, ids)}")

    async def answer_async(self, request: EngineRequest) -> Answer:
        await self._ensure_model()
        body: dict[str, Any] = {**self.extra, "model": self.model, "messages": request.messages,
                                "temperature": self.temperature}
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if self.top_logprobs is not None:
            body["logprobs"] = True
            body["top_logprobs"] = self.top_logprobs
        fmt = request.response_format
        if fmt is not None:  # the request's schema replaces extra's response_format (see module doc)
            body["response_format"] = fmt.openai()
        raw = await self._request("POST", "/chat/completions", body, structured=fmt is not None)
        return self._parse(request, raw)

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

    def _parse(self, request: EngineRequest, raw: bytes) -> Answer:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            # JSON is UTF-8 (RFC 8259); a body that is not would become replacement characters
            raise self._fail(f"the response body is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset "
                             f"{exc.start}): {excerpt(raw.decode('utf-8', 'replace'))}") from None
        try:
            data = json.loads(text)
        except ValueError:
            raise self._fail(f"the response is not valid JSON: {excerpt(text)}") from None
        usage: dict[str, Any] = {}
        raw_usage = data.get("usage") if isinstance(data, dict) else None
        if isinstance(raw_usage, dict):
            for name in ("prompt_tokens", "completion_tokens", "total_tokens"):
                if isinstance(raw_usage.get(name), int) and not isinstance(raw_usage.get(name), bool):
                    usage[name] = raw_usage[name]
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list) or not choices:
            raise self._fail(f"the response has no choices: {excerpt(text)}", usage)
        choice: dict[str, Any] = choices[0] if isinstance(choices[0], dict) else {}
        message: dict[str, Any] = choice["message"] if isinstance(choice.get("message"), dict) else {}
        content = message.get("content")
        finish = choice.get("finish_reason")
        if not isinstance(content, str) or not content.strip():
            refusal = message.get("refusal")
            why = f"the model refused: {refusal}" if refusal else f"finish_reason={finish!r}"
            raise self._fail(f"the response has no text content ({why}): {excerpt(text)}", usage)
        try:
            content.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise self._fail(f"the answer holds an unpaired surrogate escape at position {exc.start} (not valid "
                             f"Unicode text): {excerpt(text)}", usage) from None
        truncated = finish == "length"
        if truncated and self.truncated == "error":
            limit = f"max_tokens={self.max_tokens}" if self.max_tokens else "the server's output limit"
            raise self._fail(f"the output was cut at {limit} (finish_reason='length'): {excerpt(content)}; "
                             "raise ?max_tokens=N, or keep cut answers (flagged truncated) with ?truncated=keep",
                             usage)
        if finish == "content_filter":
            raise self._fail(f"the provider's content filter stopped the answer: {excerpt(content)}", usage)
        usage["finish_reason"] = finish
        logprobs = _logprobs(choice.get("logprobs")) if self.top_logprobs is not None else None
        if self.top_logprobs is not None and logprobs is None:
            usage["logprobs_missing"] = True  # asked for, not returned: judges fall back to the verdict
        return Answer(case_id=request.item_id, model=self.name, output=content, usage=usage, truncated=truncated,
                      logprobs=logprobs)

    def close(self) -> None:
        # clients are closed at the end of each engine run (aclose); nothing is held between runs
        self._client = None
        self._loop = None


def _local_endpoint(url: str | None) -> bool:
    """Whether a base URL points at this machine or a private network (a local server, maybe one slot)."""
    if not url:
        return False  # OpenAI itself
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:
        return False
    if host in ("localhost", "host.docker.internal") or host.endswith((".local", ".localhost", ".internal")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def aiohttp_available() -> bool:
    """Whether the SDK's aiohttp transport can be used (``pip install "openai[aiohttp]"``)."""
    return importlib.util.find_spec("aiohttp") is not None


def _names_response_format(text: str) -> bool:
    """Whether an error body is about the structured-output field (llama.cpp, TGI, gateways word it
    differently; all name the field or the json_schema type)."""
    low = text.lower()
    return "response_format" in low or "json_schema" in low or "response format" in low


def _status_hint(status: int, key_env: str, model: str, path: str) -> str:
    if status in (401, 403):
        return f"; check the API key in ${key_env} (or ?api_key_env=NAME)"
    if status == 404 and path == "/models":
        return "; this server has no model list: drop ?check_model=true"
    if status == 404:
        return f"; check the model name {model!r} and the base URL"
    if status in (400, 422):
        return ("; the server rejected the request: check max_tokens (models that want max_completion_tokens: "
                "?max_tokens=none&extra={\"max_completion_tokens\": N}), extra fields and the model's context size")
    return ""


def create(spec: ModelSpec) -> OpenAIAdapter:
    return OpenAIAdapter(spec)
