"""A small OpenAI-compatible chat-completions server for tests and benchmarks.

It listens on ``127.0.0.1`` on a free port, answers ``POST .../chat/completions`` with scripted
answers after a configurable latency, and injects faults on demand. It speaks plain HTTP/1.1 with
keep-alive over asyncio (one thread runs the event loop), so hundreds of concurrent slow requests
cost no threads.

Faults are scripted per request: ``faults`` maps a substring of the last user message to the list
of faults its successive attempts get (``"ok"`` lets an attempt through); ``default_faults`` applies
to every request whose message matches no key. Fault names:

``429`` / ``429:S``  rate limited, ``Retry-After: S`` (default 1) seconds
``429ms:M``          rate limited, ``retry-after-ms: M`` (the OpenAI header), no ``Retry-After``
``500`` / ``503``    server error with a JSON error body
``400`` / ``401``    client error with a JSON error body (not retryable; 401 echoes the key sent)
``slow``             answers only after ``slow_s`` seconds (beyond the client's timeout)
``invalid_json``     200 with a body that is not JSON
``drop``             closes the connection without answering
``empty_choices``    200 with ``"choices": []``
``truncated``        200 with ``finish_reason: "length"``
``trickle`` / ``trickle:S``  a normal answer whose body arrives a few bytes every S seconds (default
                     ``trickle_s``): each read is quick, the whole response slow
``non_utf8``         200 whose JSON body holds bytes that are not UTF-8 (Latin-1 text)
``surrogate``        200 whose answer text is an unpaired surrogate escape (``\\ud800``)
``ok``               a normal answer

A request with ``logprobs: true`` gets ``choices[0].logprobs.content`` (see :func:`token_logprobs`).

Structured output: ``structured`` says what the server does with a request's ``response_format``:
``honour`` (the default: the answer function sees it in the body and replies JSON for the schema,
as :class:`ScriptedJudge` does), ``ignore`` (the field is dropped before the answer function sees
it, as servers that do not know it do) or ``reject`` (HTTP 400 naming ``response_format``, as older
llama.cpp servers answer). :class:`ScriptedJudge` is a rule-based judge for the project's LLM-judge
prompts that replies in their text formats, or in JSON valid for the requested schema.

``canned`` maps a substring of the last user message to a response sent as is (status, raw body):
recorded-shape replies of real servers, e.g. ``fixtures/openai-replies/``.

Like a small local server (llama.cpp's, one slot), it can also answer one request at a time
(``serial=True``: the others wait in line) and generate token by token (``token_s`` seconds per
whitespace-separated token): with ``context_limit`` set, a request without ``max_tokens``
generates that many tokens (finish ``length``), and one with ``max_tokens`` is cut there. A
generation stops when its client has gone (``abandoned`` counts those), as llama.cpp does.

Usage::

    with FakeOpenAIServer(latency=0.1, faults={"q-7": ["429:1", "ok"]}) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="test")

From a shell (the benchmark runs it in its own process)::

    python -m tests.helpers.fake_openai --latency 0.1   # prints the port on the first line
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import re
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

MAX_BODY_BYTES = 4 * 1024 * 1024  # a request larger than this gets 413 (the server is bounded)
MAX_LOGGED = 10_000  # the request log keeps only the most recent requests

FAULT_NAMES = ("ok", "429", "429ms", "500", "503", "400", "401", "slow", "invalid_json", "drop",
               "empty_choices", "truncated", "trickle", "non_utf8", "surrogate")

AnswerFn = Callable[[Mapping[str, Any]], str]


@dataclass(frozen=True, slots=True)
class Received:
    """One request as the server saw it (after parsing)."""

    path: str
    headers: Mapping[str, str]
    body: Mapping[str, Any]
    content: str  # the last user message
    fault: str
    at: float  # time.monotonic() when the request arrived


def default_answer(body: Mapping[str, Any]) -> str:
    """A deterministic MIRAGE-format answer derived from the last user message."""
    content = _last_user_content(body)
    digest = hashlib.sha256(content.encode()).hexdigest()[:12]
    return f"##Reason: scripted reply.\n##Answer: answer-{digest} [1]"


VERDICT_ALTERNATIVE = {"yes": "[[No]]", "no": "[[Yes]]"}
STRUCTURED_MODES = ("honour", "ignore", "reject")
REJECT_FORMAT_BODY = {"error": {"code": 400, "type": "invalid_request_error", "param": "response_format",
                                "message": "response_format: unsupported type 'json_schema'; supported: text, json_object"}}


def response_schema(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The JSON schema of a request's ``response_format`` (``json_schema`` type), or None."""
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema")
        return schema if isinstance(schema, dict) else None
    return None


class ScriptedJudge:
    """A rule-based judge for pytest-mirage's judge prompts, not a model: every answer has two claims
    (``first claim``, ``second claim``), claim 1 is supported and the others are not, fluency is 4,
    answer overlap 3, ARES verdicts Yes, translation scores 4.0 / 3.5 / 4.5; in the arena's pairwise
    prompt the longer answer wins (equal lengths tie), or ``prefer(answer_a, answer_b)`` says
    "A", "B" or "C". It replies in each prompt's text format, or, when the request carries a
    ``json_schema`` response format, in JSON valid for that schema (the stage is read from the
    schema's properties). ``garble(prompt)`` True: an unreadable reply instead; ``wrong_types``:
    JSON replies with the rating, score and verdicts as the wrong JSON type (a server whose
    constraint is broken)."""

    def __init__(self, garble: Callable[[str], bool] | None = None, wrong_types: bool = False,
                 prefer: Callable[[str, str], str] | None = None) -> None:
        self.garble = garble or (lambda prompt: False)
        self.wrong_types = wrong_types
        self.prefer = prefer or _longer
        self.stages: Counter[str] = Counter()  # (stage, "json"/"text") asked

    @staticmethod
    def stage(prompt: str, schema: Mapping[str, Any] | None) -> str:
        if schema is not None:
            props = set(schema.get("properties", {}))
            if "A" in schema.get("properties", {}).get("verdict", {}).get("enum", ()):
                return "pairwise"
            for key, stage in (("claims", "claims"), ("verdicts", "claim_verdicts"), ("rating", "fluency"),
                               ("score", "answer_overlap"), ("verdict", "yes_no"),
                               ("semantic_equivalence", "translation_quality")):
                if key in props:
                    return stage
            raise ValueError(f"scripted judge: unknown schema {sorted(props)}")
        for marker, stage in (("[The Start of Assistant A", "pairwise"), ("Break the answer down", "claims"), ("Claims:", "claim_verdicts"),
                              ("##Rating", "fluency"), ("[[score]]", "answer_overlap"),
                              ("Semantic Equivalence", "translation_quality")):
            if marker in prompt:
                return stage
        return "yes_no"

    def __call__(self, body: Mapping[str, Any]) -> str:
        prompt = _last_user_content(body)
        schema = response_schema(body)
        stage = self.stage(prompt, schema)
        self.stages[f"{stage} {'json' if schema is not None else 'text'}"] += 1
        if self.garble(prompt):
            return "I would rather not say."
        n = len(re.findall(r"^\d+\. ", prompt.split("Claims:")[-1], re.M)) if stage == "claim_verdicts" else 0
        verdicts = [i == 1 for i in range(1, n + 1)]
        if stage == "pairwise":
            letter = self.prefer(*_pairwise_answers(prompt))
            if schema is None:  # quoting the format first, as judges do
                return f'The verdict is one of "[[A]]", "[[B]]" or "[[C]]". Scripted comparison.\n[[{letter}]]'
            return json.dumps({"explanation": "scripted comparison", "verdict": [letter] if self.wrong_types
                               else letter})
        if schema is None:
            return {
                "claims": json.dumps(["first claim", "second claim"]),
                "claim_verdicts": "\n".join(f"{i}: [[{'Yes' if v else 'No'}]]" for i, v in enumerate(verdicts, 1)),
                "fluency": "##Rating: 4 ##Explanation: scripted",
                "answer_overlap": "[[3]] scripted",
                "yes_no": "[[Yes]]",
                "translation_quality": json.dumps({"Semantic Equivalence": 4.0, "Grammatical Accuracy": 3.5,
                                                   "Naturalness & Fluency": 4.5}),
            }[stage]
        bad = self.wrong_types
        value: dict[str, Any] = {
            "claims": {"claims": ["first claim", "second claim"]},
            "claim_verdicts": {"verdicts": [{"claim": i, "verdict": v if bad else ("Yes" if v else "No")}
                                            for i, v in enumerate(verdicts, 1)]},
            "fluency": {"explanation": "scripted", "rating": "4" if bad else 4},
            "answer_overlap": {"explanation": "scripted", "score": "3" if bad else 3},
            "yes_no": {"verdict": True if bad else "Yes"},
            "translation_quality": {"semantic_equivalence": 4.0, "grammatical_accuracy": 3.5,
                                    "naturalness_fluency": "4.5" if bad else 4.5},
        }[stage]
        return json.dumps(value)


_PAIRWISE_ANSWER_RE = re.compile(r'Start of Assistant ([AB])’s Answer\]"\n(.*?)\n"\[The End of Assistant \1', re.S)


def _pairwise_answers(prompt: str) -> tuple[str, str]:
    """The two answers of a pairwise judge prompt (MIRAGE-Bench Figure 13 layout)."""
    found = dict(_PAIRWISE_ANSWER_RE.findall(prompt))
    return found.get("A", ""), found.get("B", "")


def _longer(a: str, b: str) -> str:
    return "A" if len(a) > len(b) else "B" if len(b) > len(a) else "C"


def token_logprobs(text: str, top: int) -> list[dict[str, Any]]:
    """OpenAI-shaped ``logprobs.content`` for ``text`` (whitespace tokens): every chosen token at
    log-probability -0.05; a yes/no verdict token has the opposite verdict as its runner-up at -3.0
    (so P(yes) = e^-0.05 / (e^-0.05 + e^-3) = 0.9503 for a "[[Yes]]"), other tokens "the" at -5.0."""
    out = []
    for tok in text.split():
        alt = VERDICT_ALTERNATIVE.get(tok.strip('[].,:{}"').lower())
        alts = [{"token": tok, "logprob": -0.05}, {"token": alt or "the", "logprob": -3.0 if alt else -5.0}]
        out.append({"token": tok, "logprob": -0.05, "bytes": list(tok.encode()), "top_logprobs": alts[:top]})
    return out


class FormatJudge:
    """A judge model called in-process that takes ``response_format=`` (as the engine-backed judge
    callables do): ``answer(prompt, fmt) -> reply``; records every batch with its format. Callable
    (pointwise judges' ``complete``) and with ``.complete`` (the arena's pairwise judge)."""

    def __init__(self, answer: Callable[[str, Any], Any]) -> None:
        self.answer = answer
        self.batches: list[tuple[list[str], Any]] = []

    def __call__(self, prompts: list[str], response_format: Any = None) -> list[Any]:
        self.batches.append((list(prompts), response_format))
        return [self.answer(p, response_format) for p in prompts]

    def complete(self, prompts: list[str], response_format: Any = None) -> list[Any]:
        return self(prompts, response_format)


def scripted_format_judge(judge: ScriptedJudge | None = None) -> FormatJudge:
    """The scripted judge called the way the server calls it (the format in the request body)."""
    j = judge or ScriptedJudge()

    def answer(prompt: str, fmt: Any) -> str:
        body: dict[str, Any] = {"messages": [{"role": "user", "content": prompt}]}
        if fmt is not None:
            body["response_format"] = fmt.openai()
        return j(body)

    return FormatJudge(answer)


def _last_user_content(body: Mapping[str, Any]) -> str:
    messages = body.get("messages")
    if isinstance(messages, list):
        for msg in reversed(messages):
            if isinstance(msg, dict) and msg.get("role") == "user":
                content = msg.get("content")
                return content if isinstance(content, str) else json.dumps(content)
    return ""


def _check_fault(name: str) -> str:
    base = name.split(":", 1)[0]
    if base not in FAULT_NAMES:
        raise ValueError(f"unknown fault {name!r}; expected one of {', '.join(FAULT_NAMES)}")
    return name


class FakeOpenAIServer:
    """An OpenAI-compatible server on 127.0.0.1 with latency and fault injection (see module doc)."""

    def __init__(self, *, latency: float = 0.0, answer: AnswerFn | Mapping[str, str] | None = None,
                 faults: Mapping[str, Iterable[str]] | None = None,
                 default_faults: Iterable[str] = (), slow_s: float = 5.0,
                 usage: tuple[int, int] = (10, 5), port: int = 0, trickle_s: float = 0.1,
                 serial: bool = False, token_s: float = 0.0, context_limit: int | None = None,
                 models: Iterable[str] = ("fake-model",),
                 canned: Mapping[str, tuple[int, bytes]] | None = None, structured: str = "honour") -> None:
        if structured not in STRUCTURED_MODES:
            raise ValueError(f"structured={structured!r}; expected one of {', '.join(STRUCTURED_MODES)}")
        self.structured = structured
        self.format_rejections = 0  # requests refused for their response_format (structured="reject")
        self.latency = latency
        self.slow_s = slow_s
        self.usage = usage
        self.trickle_s = trickle_s
        self.serial = serial
        self.token_s = token_s
        self.context_limit = context_limit
        self.models = list(models)
        self.abandoned = 0  # generations stopped because the client had gone
        self.generating = 0  # generations running now (serial: at most one)
        self._slot: asyncio.Lock | None = None
        self._answer = answer
        self._canned = dict(canned or {})  # substring of the user message -> (status, raw body)
        self._faults: dict[str, deque[str]] = {
            key: deque(_check_fault(f) for f in seq) for key, seq in (faults or {}).items()}
        self._default_faults = deque(_check_fault(f) for f in default_faults)
        self._port = port
        self._lock = threading.Lock()
        self.log: deque[Received] = deque(maxlen=MAX_LOGGED)
        self.count = 0  # chat-completion requests received (every attempt, faults included)
        self.completed = 0  # requests answered with a normal 200 answer
        self.fault_counts: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None

    # ------------------------------------------------------------------ lifecycle
    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeOpenAIServer is not started; use it as a context manager")
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAIServer:
        self._thread = threading.Thread(target=self._run, name="fake-openai", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        if self._startup_error is not None:
            raise RuntimeError(f"fake OpenAI server failed to start: {self._startup_error}")
        if self._server is None:
            raise RuntimeError("fake OpenAI server did not start within 10 s")
        return self

    def stop(self) -> None:
        loop, server = self._loop, self._server
        if loop is not None and server is not None and loop.is_running():
            async def _shutdown() -> None:
                server.close()
                for task in asyncio.all_tasks():
                    if task is not asyncio.current_task():
                        task.cancel()
                loop.stop()
            asyncio.run_coroutine_threadsafe(_shutdown(), loop)
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            self._server = loop.run_until_complete(
                asyncio.start_server(self._handle, "127.0.0.1", self._port, backlog=1024))
        except BaseException as exc:  # reported to the thread that called start()
            self._startup_error = exc
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            with contextlib.suppress(Exception):
                loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    # ------------------------------------------------------------------ scripting
    def set_faults(self, key: str, faults: Iterable[str]) -> None:
        with self._lock:
            self._faults[key] = deque(_check_fault(f) for f in faults)

    def requests_for(self, substring: str) -> list[Received]:
        """Logged requests whose last user message contains ``substring``."""
        with self._lock:
            return [r for r in self.log if substring in r.content]

    def _next_fault(self, content: str) -> str:
        with self._lock:
            for key, queue in self._faults.items():
                if key in content:
                    return queue.popleft() if queue else "ok"
            return self._default_faults.popleft() if self._default_faults else "ok"

    def _answer_text(self, body: Mapping[str, Any]) -> str:
        if self._answer is None:
            return default_answer(body)
        if callable(self._answer):
            return self._answer(body)
        content = _last_user_content(body)
        for key, text in self._answer.items():
            if key in content:
                return text
        return default_answer(body)

    # ------------------------------------------------------------------ HTTP
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                keep = await self._one_request(reader, writer)
                if not keep:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _one_request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        request_line = await reader.readline()
        if not request_line:
            return False
        method, path, _ = request_line.decode("latin-1").split(" ", 2)
        headers: dict[str, str] = {}
        while True:
            line = await reader.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        if length > MAX_BODY_BYTES:
            await self._send(writer, 413, {"error": {"message": "request too large"}})
            return False
        raw = await reader.readexactly(length) if length else b""
        route = path.split("?", 1)[0].rstrip("/")  # query parameters (api-version=...) do not change the route
        if method == "GET" and route.endswith("/models"):
            with self._lock:
                self.log.append(Received(path=path, headers=headers, body={}, content="", fault="models",
                                         at=time.monotonic()))
            await self._send(writer, 200, {"object": "list", "data": [
                {"id": m, "object": "model", "owned_by": "tests"} for m in self.models]})
            return True
        if method != "POST" or not route.endswith("/chat/completions"):
            await self._send(writer, 404, {"error": {"message": f"no route {method} {path}"}})
            return True
        try:
            body = json.loads(raw)
        except ValueError:
            await self._send(writer, 400, {"error": {"message": "request body is not JSON"}})
            return True
        content = _last_user_content(body)
        fault = self._next_fault(content)
        with self._lock:
            self.count += 1
            self.fault_counts[fault] += 1
            self.log.append(Received(path=path, headers=headers, body=body, content=content, fault=fault,
                                     at=time.monotonic()))
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self._respond(reader, writer, body, fault, headers)
        finally:
            with self._lock:
                self.in_flight -= 1

    async def _generate(self, reader: asyncio.StreamReader, text: str, body: Mapping[str, Any],
                        finish: str) -> tuple[str, str, int] | None:
        """Token-by-token generation (see the module doc); None when the client went away."""
        words = text.split(" ")
        limit = body.get("max_tokens")
        if isinstance(limit, int) and limit < len(words):
            words, finish = words[:limit], "length"
        elif not isinstance(limit, int) and self.context_limit is not None:
            filler = ["word"] * max(0, self.context_limit - len(words))
            words, finish = (words + filler)[: self.context_limit], "length"
        if self._slot is None:
            self._slot = asyncio.Lock()
        async with self._slot if self.serial else contextlib.nullcontext():
            if reader.at_eof():  # the client gave up while waiting for the slot
                with self._lock:
                    self.abandoned += 1
                return None
            with self._lock:
                self.generating += 1
            try:
                for _ in words:
                    if self.token_s:
                        await asyncio.sleep(self.token_s)
                    if reader.at_eof():
                        with self._lock:
                            self.abandoned += 1
                        return None
            finally:
                with self._lock:
                    self.generating -= 1
        return " ".join(words), finish, len(words)

    async def _respond(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, body: Mapping[str, Any],
                       fault: str, headers: Mapping[str, str]) -> bool:
        if self.latency:
            await asyncio.sleep(self.latency)
        name, _, arg = fault.partition(":")
        if name == "drop":
            writer.transport.abort()
            return False
        if name == "slow":
            await asyncio.sleep(self.slow_s)
        if name == "429":
            await self._send(writer, 429, {"error": {"message": "Rate limit reached", "type": "rate_limit"}},
                             {"retry-after": arg or "1"})
            return True
        if name == "429ms":
            await self._send(writer, 429, {"error": {"message": "Rate limit reached", "type": "rate_limit"}},
                             {"retry-after-ms": arg or "100"})
            return True
        if name == "401":  # like OpenAI, echo the key that was sent: clients must redact it
            key = headers.get("authorization", "").removeprefix("Bearer ")
            await self._send(writer, 401, {"error": {"message": f"Incorrect API key provided: {key}",
                                                     "type": "invalid_request_error"}})
            return True
        if name in ("500", "503", "400"):
            await self._send(writer, int(name), {"error": {"message": f"scripted {name} error",
                                                           "type": "server_error"}})
            return True
        if name == "invalid_json":
            await self._send_raw(writer, 200, b'{"id": "chatcmpl-x", "choices": [{"mess', "application/json")
            return True
        model = str(body.get("model", "fake-model"))
        if name == "empty_choices":
            await self._send(writer, 200, self._completion(model, None))
            return True
        if name == "non_utf8":
            payload = self._completion(model, "caf\u00e9 ##Answer: cr\u00e8me [1]")
            await self._send_raw(writer, 200, json.dumps(payload, ensure_ascii=False).encode("latin-1"),
                                 "application/json")
            return True
        if name == "surrogate":
            data = json.dumps(self._completion(model, "PLACEHOLDER")).replace("PLACEHOLDER", "\\ud800 lone")
            await self._send_raw(writer, 200, data.encode(), "application/json")
            return True
        content = _last_user_content(body)
        for key, (status, raw) in self._canned.items():
            if key in content:
                await self._send_raw(writer, status, raw, "application/json")
                if status == 200:
                    with self._lock:
                        self.completed += 1
                return True
        if body.get("response_format") is not None and self.structured == "reject":
            with self._lock:
                self.format_rejections += 1
            await self._send(writer, 400, REJECT_FORMAT_BODY)
            return True
        if self.structured == "ignore":
            body = {k: v for k, v in body.items() if k != "response_format"}
        text = self._answer_text(body)
        finish = "length" if name == "truncated" else "stop"
        tokens: int | None = None
        if self.token_s or self.context_limit is not None or self.serial:
            generated = await self._generate(reader, text, body, finish)
            if generated is None:
                return False
            text, finish, tokens = generated
        payload = self._completion(model, text, finish, tokens)
        if body.get("logprobs") and payload["choices"]:
            payload["choices"][0]["logprobs"] = {"content": token_logprobs(text, int(body.get("top_logprobs") or 0))}
        if name == "trickle":
            await self._trickle(writer, json.dumps(payload).encode(), float(arg) if arg else self.trickle_s)
        else:
            await self._send(writer, 200, payload)
        with self._lock:
            self.completed += 1
        return True

    async def _trickle(self, writer: asyncio.StreamWriter, data: bytes, every_s: float) -> None:
        head = ["HTTP/1.1 200 OK", "Content-Type: application/json", f"Content-Length: {len(data)}",
                "Connection: keep-alive"]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        await writer.drain()
        for start in range(0, len(data), 8):
            await asyncio.sleep(every_s)
            writer.write(data[start:start + 8])
            await writer.drain()

    def _completion(self, model: str, text: str | None, finish: str = "stop",
                    tokens: int | None = None) -> dict[str, Any]:
        prompt_tokens, completion_tokens = self.usage
        if tokens is not None:
            completion_tokens = tokens
        choices = [] if text is None else [{
            "index": 0, "finish_reason": finish, "logprobs": None,
            "message": {"role": "assistant", "content": text}}]
        return {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                "model": model, "choices": choices,
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                          "total_tokens": prompt_tokens + completion_tokens}}

    async def _send(self, writer: asyncio.StreamWriter, status: int, payload: Any,
                    extra_headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        await self._send_raw(writer, status, data, "application/json", extra_headers)

    async def _send_raw(self, writer: asyncio.StreamWriter, status: int, data: bytes, ctype: str,
                        extra_headers: Mapping[str, str] | None = None) -> None:
        reason = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 413: "Too Large",
                  429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable"}
        head = [f"HTTP/1.1 {status} {reason.get(status, 'Status')}", f"Content-Type: {ctype}",
                f"Content-Length: {len(data)}", "Connection: keep-alive"]
        head += [f"{k}: {v}" for k, v in (extra_headers or {}).items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + data)
        await writer.drain()


def main(argv: list[str] | None = None) -> int:
    """Run the server in the foreground; print its port on the first line of stdout."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    parser.add_argument("--structured", choices=STRUCTURED_MODES, default="honour",
                        help="what to do with a request's response_format")
    parser.add_argument("--scripted-judge", action="store_true", help="answer with the rule-based ScriptedJudge")
    args = parser.parse_args(argv)
    server = FakeOpenAIServer(latency=args.latency, port=args.port, structured=args.structured,
                              answer=ScriptedJudge() if args.scripted_judge else None).start()
    print(server.port, flush=True)
    try:
        # serve until stdin closes (the parent died or closed the pipe) or Ctrl-C
        sys.stdin.read()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
