"""The model protocol: what every adapter receives and returns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from ..suites.model import Case, Mode, Passage, Suite


@dataclass(frozen=True, slots=True, eq=False)
class ModelRequest:
    """One case to answer.

    ``passages`` is the context the harness gives the generator: the case's (shuffled) passages in
    oracle mode; in retrieval mode, the harness's BM25 top-k for adapters that do not retrieve
    themselves (``ModelAdapter.retrieves`` False), or empty for adapters that do.
    ``prompt`` is the rendered user message (MIRAGE template) for chat models.
    """

    case: Case
    suite: Suite
    mode: Mode
    passages: tuple[Passage, ...]
    prompt: str

    @property
    def messages(self) -> list[dict[str, str]]:
        return [{"role": "user", "content": self.prompt}]


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
    """A model kind. Adapters are created once per session per spec and answer in batches.

    ``answer_batch`` returns, for each request in order, an :class:`Answer` or an exception instance
    (a :class:`~pytest_mirage.errors.ModelError` naming the reason); one failed case never loses the
    others. ``retrieves`` says whether the adapter retrieves from the suite corpus itself in
    retrieval mode (e.g. a team's own pipeline) or wants the harness's retrieved context.
    """

    name: str
    retrieves: bool

    def answer_batch(self, requests: Sequence[ModelRequest]) -> list[Answer | Exception]: ...

    def cache_identity(self) -> Mapping[str, Any] | None:
        """Everything besides the request that determines the answer (model, parameters), or None
        when answers must not be cached (cheap deterministic local systems, replays)."""
        ...

    def close(self) -> None: ...
