"""The model protocol: what every adapter receives and returns.

Two kinds of request reach a model through the engine (:func:`pytest_mirage.engine.run_requests`):
:class:`ModelRequest` (a suite case to answer) and :class:`PromptRequest` (a bare prompt, e.g. a judge
call). Both follow :class:`EngineRequest`, the small protocol the engine and the adapters rely on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from ..suites.model import Case, Mode, Passage, Suite

DEFAULT_TEMPERATURE = 0.1  # MIRAGE-Bench generates with temperature 0.1
# Output limit when a spec sets none: MIRAGE answers (a reason and a short answer) take a few
# hundred tokens; without a limit a local server may generate until its context is full.
DEFAULT_MAX_TOKENS = 512


@dataclass(frozen=True, slots=True)
class ResponseFormat:
    """A JSON schema the reply must follow (structured output), sent with a request.

    ``name`` names the schema (``mirage_claims``); ``schema_json`` is the schema as canonical JSON
    (sorted keys), so the format is hashable and enters the cache key as text. Adapters that can
    constrain their output (``structured_output = True``: ``openai:``, ``vllm:``) send it; the
    OpenAI shape is :meth:`openai`.
    """

    name: str
    schema_json: str

    @classmethod
    def of(cls, name: str, schema: Mapping[str, Any]) -> ResponseFormat:
        return cls(name, json.dumps(schema, sort_keys=True, ensure_ascii=False, separators=(",", ":")))

    @property
    def schema(self) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(self.schema_json)
        return value

    def openai(self) -> dict[str, Any]:
        """The chat-completions ``response_format`` field (OpenAI's, which vLLM's server accepts too)."""
        return {"type": "json_schema", "json_schema": {"name": self.name, "schema": self.schema, "strict": True}}


def supports_structured_output(adapter: object) -> bool:
    """Whether ``adapter`` sends a request's :class:`ResponseFormat` to its model (a class attribute
    ``structured_output = True``); other adapters would ignore it."""
    return getattr(adapter, "structured_output", False) is True


def sets_own_response_format(adapter: object) -> bool:
    """Whether ``adapter``'s own options already put a ``response_format`` in every request (an
    attribute ``own_response_format = True``, e.g. ``openai:`` with ``extra={"response_format": ...}``),
    which a judge's schema would replace."""
    return getattr(adapter, "own_response_format", False) is True


@runtime_checkable
class EngineRequest(Protocol):
    """What the engine and the adapters need of a request.

    ``item_id`` becomes :attr:`Answer.case_id`; ``ref`` (``suite/case``, ``judge/<id>``) and
    ``noun`` (``case``, ``prompt``) name the request in messages; ``task`` labels progress
    (``model answers``, ``judge calls``). ``prompt`` / ``messages`` are what a chat model sees.
    The cache key hashes the adapter's identity, ``cache_fields``, ``messages`` and, for adapters
    with ``cache_scope = "request"``, ``passages`` too.
    """

    @property
    def item_id(self) -> str: ...

    @property
    def ref(self) -> str: ...

    @property
    def noun(self) -> str: ...

    @property
    def task(self) -> str: ...

    @property
    def prompt(self) -> str: ...

    @property
    def messages(self) -> list[dict[str, str]]: ...

    @property
    def lang(self) -> str | None: ...

    @property
    def passages(self) -> tuple[Passage, ...]: ...

    @property
    def cache_fields(self) -> tuple[str, ...]: ...

    @property
    def response_format(self) -> ResponseFormat | None: ...


@dataclass(frozen=True, slots=True, eq=False)
class ModelRequest:
    """One case to answer.

    ``passages`` is the context the harness gives the generator: the case's (shuffled) passages in
    oracle mode; in retrieval mode, the harness's BM25 top-k for adapters that do not retrieve
    themselves (``ModelAdapter.retrieves`` False), or empty for adapters that do.
    ``prompt`` is the rendered user message (MIRAGE template) for chat models. ``repeat`` is the
    sample index when every case is answered several times (``--mirage-repeat``): each repeat is
    its own cache entry, so repeats are independent calls.
    """

    case: Case
    suite: Suite
    mode: Mode
    passages: tuple[Passage, ...]
    prompt: str
    repeat: int = 0

    @property
    def messages(self) -> list[dict[str, str]]:
        return [{"role": "user", "content": self.prompt}]

    @property
    def item_id(self) -> str:
        return self.case.id

    @property
    def ref(self) -> str:
        return f"{self.case.suite}/{self.case.id}" + (f"#{self.repeat}" if self.repeat else "")

    @property
    def noun(self) -> str:
        return "case"

    @property
    def task(self) -> str:
        return "model answers"

    @property
    def lang(self) -> str:
        return self.case.lang

    @property
    def response_format(self) -> ResponseFormat | None:
        return None  # suite cases are answered in the MIRAGE text format

    @property
    def cache_fields(self) -> tuple[str, ...]:
        case = self.case
        fields = (case.suite, case.id, case.lang, case.question, self.mode)
        # the first sample keeps the key of a run without repeats (its answer is reused)
        return (*fields, f"repeat {self.repeat}") if self.repeat else fields


@dataclass(frozen=True, slots=True)
class PromptRequest:
    """A bare prompt for a model, with no suite or case: judge calls and other model-backed scorers.

    ``id`` becomes :attr:`Answer.case_id`; ``label`` says who asks (``judge``): it names the request
    in messages (``prompt judge/<id>``) and labels progress (``judge calls``). ``lang`` is passed to
    ``py:`` callables. ``response_format``: a JSON schema for the reply (structured output), sent by
    adapters that can. The cache key covers the label, the language, the response format and the
    prompt, not the id: the same prompt asked twice is answered once, and a structured and a plain
    reply to one prompt are different entries.
    """

    id: str
    prompt: str
    label: str = "prompt"
    lang: str | None = None
    response_format: ResponseFormat | None = None

    def __post_init__(self) -> None:
        for name in ("id", "prompt", "label"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"PromptRequest.{name} must be a string, got {type(getattr(self, name)).__name__}")
        if not self.id or not self.label:
            raise ValueError("PromptRequest needs a non-empty id and label")
        if self.response_format is not None and not isinstance(self.response_format, ResponseFormat):
            raise TypeError(f"PromptRequest.response_format must be a ResponseFormat or None, got "
                            f"{type(self.response_format).__name__}")

    @property
    def messages(self) -> list[dict[str, str]]:
        return [{"role": "user", "content": self.prompt}]

    @property
    def item_id(self) -> str:
        return self.id

    @property
    def ref(self) -> str:
        return f"{self.label}/{self.id}"

    @property
    def noun(self) -> str:
        return "prompt"

    @property
    def task(self) -> str:
        return f"{self.label} calls"

    @property
    def passages(self) -> tuple[Passage, ...]:
        return ()

    @property
    def cache_fields(self) -> tuple[str, ...]:
        fields = ("prompt", self.label, self.lang or "")
        fmt = self.response_format
        # a plain prompt keeps the key it had before response formats existed
        return fields if fmt is None else (*fields, "response_format", fmt.name, fmt.schema_json)


@dataclass(frozen=True, slots=True)
class Answer:
    """What a model answered for one case (the run/record line format)."""

    case_id: str
    model: str
    output: str
    answer: str | None = None
    citations: tuple[str, ...] | None = None
    retrieved: tuple[str, ...] | None = None
    contexts: tuple[str, ...] | None = None
    reason: str | None = None
    invalid_citations: tuple[str, ...] = ()
    format_ok: bool = True
    usage: Mapping[str, Any] = field(default_factory=dict)
    truncated: bool = False  # the output was cut at the output limit (max_tokens)
    # per generated token: (token, logprob, ((alternative, logprob), ...)) when the model was asked for
    # them (openai:...?logprobs=K); judges turn the verdict token's into a probability
    logprobs: tuple[tuple[str, float, tuple[tuple[str, float], ...]], ...] | None = None

    def to_run_line(self) -> dict[str, Any]:
        """The replay format: ``{case_id, model, output, answer?, citations?, retrieved?, contexts?}``."""
        line: dict[str, Any] = {"case_id": self.case_id, "model": self.model, "output": self.output}
        if self.answer is not None:
            line["answer"] = self.answer
        if self.citations is not None:
            # invalid citations are kept (after the valid ones) so a replay scores them the same
            line["citations"] = list(self.citations) + [c for c in self.invalid_citations if c not in self.citations]
        if self.retrieved is not None:
            line["retrieved"] = list(self.retrieved)
        if self.contexts is not None:
            line["contexts"] = list(self.contexts)
        if self.truncated:
            line["truncated"] = True
        return line

    def with_model(self, model: str) -> Answer:
        return replace(self, model=model)


class OfflineModel:
    """Base of the built-in offline systems (extractive, controls): deterministic, cheap, never
    cached, nothing to close; a subclass answers one request in ``_answer``."""

    name: str
    retrieves = True

    def cache_identity(self) -> Mapping[str, Any] | None:
        return None

    def close(self) -> None:
        pass

    def answer_batch(self, requests: Sequence[ModelRequest]) -> list[Answer | Exception]:
        return [self._answer(r) for r in requests]

    def _answer(self, request: ModelRequest) -> Answer:
        raise NotImplementedError


@runtime_checkable
class ModelAdapter(Protocol):
    """A model kind. Adapters are created once per session per spec; the engine drives them.

    Every adapter has a ``name`` (the model's display name, see
    :attr:`~pytest_mirage.models.registry.ModelSpec.display_name`), ``retrieves`` (whether it
    retrieves from the suite corpus itself in retrieval mode, e.g. a team's own pipeline, or wants
    the harness's retrieved context), ``cache_identity()`` and ``close()``; it answers either in
    batches (:class:`BatchModelAdapter`, local engines) or one request at a time, asynchronously
    (:class:`AsyncModelAdapter`, API clients). Adapters never call the engine themselves.
    """

    name: str
    retrieves: bool

    def cache_identity(self) -> Mapping[str, Any] | None:
        """Everything besides the request that determines the answer (model, parameters, endpoint),
        or None when answers must not be cached (cheap deterministic local systems, replays)."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class BatchModelAdapter(ModelAdapter, Protocol):
    """An adapter that answers whole batches (local engines).

    ``answer_batch`` returns, for each request in order, an :class:`Answer` or an exception instance
    (a :class:`~pytest_mirage.errors.ModelError` naming the reason); one failed case never loses the
    others.
    """

    def answer_batch(self, requests: Sequence[EngineRequest]) -> list[Answer | Exception]: ...


@runtime_checkable
class AsyncModelAdapter(ModelAdapter, Protocol):
    """An adapter that answers one request at a time, asynchronously (API clients).

    The engine runs ``answer_async`` under its concurrency limit and retries it on
    :class:`~pytest_mirage.models.faults.TransientError`; any other
    :class:`~pytest_mirage.errors.ModelError` ends the request. ``aclose`` releases what was bound to
    the event loop of one :func:`~pytest_mirage.engine.run_requests` call (HTTP connections).
    ``concurrency`` (None: the session's ``--mirage-concurrency``) is the model's own limit.
    """

    concurrency: int | None

    async def answer_async(self, request: EngineRequest) -> Answer: ...

    async def aclose(self) -> None: ...
