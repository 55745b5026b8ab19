"""The judge interface: what every model-backed scorer receives and returns.

A judge scores a whole batch of answers at once (:meth:`Judge.score`): local-model judges run their
model over all (sentence, passage) pairs of all items in a few forward passes, LLM judges send all
their prompts through one ``complete`` call per stage. Nothing here imports a model library.

* :class:`JudgeItem` is one answer to judge: the case's question and language, the answer text with
  its citation markers, the passages the generator saw (in prompt order, so that ``[1]`` means the
  first one), the ids the answer cites and the case's reference answers.
* :class:`JudgeScore` is the judge's verdict on one item: a value per metric, and for every null
  value the reason (``"the answer cites no passage"``, ``"judge reply unparseable after 1 re-ask:
  ..."``). A judge never turns a failure into 0.
* :class:`JudgeHealth` counts what happened (calls, parse failures, re-asks, refusals, errors, nulls)
  for the report's judge-health block.
* :data:`Complete` is how LLM judges reach a model: one reply (``str`` or :class:`Reply`) or one
  exception per prompt, in order. The engine provides it (cached per prompt, retried).
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..errors import ConfigError
from ..models.base import ResponseFormat
from ..suites.model import Passage


def import_backend(module: str, who: str, extra: str = "hf", note: str = "") -> Any:
    """Import a judge's optional library, or a :class:`ConfigError` naming who needs it and the
    extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ConfigError(f"{who} needs {module} ({exc}); install it with: "
                          f'pip install "pytest-mirage[{extra}]"{note}') from exc


@dataclass(frozen=True, slots=True)
class JudgeItem:
    """One answer to judge.

    ``key`` identifies it in the run (``"suite/case/model"``); ``answer`` is the answer part of the
    output *with* citation markers; ``passages`` is the context the generator saw, in the order the
    prompt listed it; ``citations`` the passage ids the answer cites (answer level, as the adapter
    or the output parser found them); ``references`` the case's reference answers.
    """

    key: str
    lang: str
    question: str
    answer: str
    passages: tuple[Passage, ...]
    citations: tuple[str, ...] = ()
    references: tuple[str, ...] = ()

    @property
    def passage_ids(self) -> tuple[str, ...]:
        return tuple(p.id for p in self.passages)

    def fingerprint(self) -> str:
        """A stable digest of everything a judge may look at (for result caches)."""
        payload = [self.lang, self.question, self.answer,
                   [[p.id, p.title, p.text, p.lang] for p in self.passages],
                   list(self.citations), list(self.references)]
        return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode()).hexdigest()

    @classmethod
    def from_sample(cls, sample: Any, key: str | None = None) -> JudgeItem:
        """The item of a :class:`pytest_mirage.metrics.base.Sample` (the answer part of the output,
        the sample's context, the answer's valid citations, the case's references)."""
        from ..metrics.common import raw_answer

        case, answer = sample.case, sample.answer
        return cls(key=key if key is not None else f"{case.suite}/{case.id}/{answer.model}",
                   lang=case.lang, question=case.question, answer=raw_answer(sample),
                   passages=tuple(sample.context), citations=tuple(answer.citations or ()),
                   references=tuple(case.answers))


@dataclass(frozen=True, slots=True)
class JudgeScore:
    """A judge's result for one item: ``values[metric]`` (None when it could not be judged, with
    ``reasons[metric]`` saying why) and the judge's reply text(s) when an LLM produced them."""

    values: Mapping[str, float | None]
    reasons: Mapping[str, str] = field(default_factory=dict)
    raw: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"values": dict(self.values), "reasons": dict(self.reasons),
                "raw": list(self.raw) if self.raw is not None else None}


def null_score(metrics: Sequence[str], reason: str, raw: tuple[str, ...] | None = None) -> JudgeScore:
    """Every metric null for the same reason."""
    return JudgeScore(dict.fromkeys(metrics), dict.fromkeys(metrics, reason), raw)


@dataclass(slots=True)
class JudgeHealth:
    """What a judge did, for the report's judge-health block.

    ``items``: items scored; ``calls``: model inputs evaluated (prompts sent, or sentence/passage
    pairs run through a local model); ``batches``: ``complete`` calls or forward passes;
    ``parse_failures``: replies that did not parse (before any re-ask); ``reasks``: prompts sent
    again after a parse failure; ``refusals``: unparseable replies that read as a refusal;
    ``errors``: prompts whose call failed (an exception from ``complete``); ``nulls``: null values
    per metric. LLM judges also say how they asked: ``output`` is ``json_schema`` (structured
    output) or ``text`` (plain prompts), ``output_note`` why it is text (``structured=off``, a
    model kind that cannot constrain its output, a server that refused ``response_format``);
    ``format_fallbacks``: prompts sent again without the schema after the server refused it;
    ``unstructured_replies``: replies to a request with a schema that held no JSON for it (the
    server ignored it; they were read by the tolerant parser).
    """

    items: int = 0
    calls: int = 0
    batches: int = 0
    parse_failures: int = 0
    reasks: int = 0
    refusals: int = 0
    errors: int = 0
    nulls: Counter[str] = field(default_factory=Counter)
    output: str = ""  # LLM judges: "json_schema" or "text"; "" for local judges
    output_note: str = ""
    format_fallbacks: int = 0
    unstructured_replies: int = 0

    def count_nulls(self, scores: Sequence[JudgeScore]) -> None:
        for s in scores:
            for metric, value in s.values.items():
                if value is None:
                    self.nulls[metric] += 1

    def merge(self, other: JudgeHealth) -> None:
        """Add ``other``'s counts (e.g. from another xdist worker)."""
        self.items += other.items
        self.calls += other.calls
        self.batches += other.batches
        self.parse_failures += other.parse_failures
        self.reasks += other.reasks
        self.refusals += other.refusals
        self.errors += other.errors
        self.nulls.update(other.nulls)
        self.format_fallbacks += other.format_fallbacks
        self.unstructured_replies += other.unstructured_replies
        # plain text wins over json_schema: a worker that fell back says why
        if other.output and (not self.output or (other.output == "text" and self.output != "text")):
            self.output, self.output_note = other.output, other.output_note

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"items": self.items, "calls": self.calls, "batches": self.batches,
                               "parse_failures": self.parse_failures, "reasks": self.reasks,
                               "refusals": self.refusals, "errors": self.errors,
                               "nulls": dict(sorted(self.nulls.items()))}
        if self.output:  # LLM judges only: local judges' health keeps its shape
            out.update(output=self.output, output_note=self.output_note, format_fallbacks=self.format_fallbacks,
                       unstructured_replies=self.unstructured_replies)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> JudgeHealth:
        return cls(items=int(data.get("items", 0)), calls=int(data.get("calls", 0)),
                   batches=int(data.get("batches", 0)), parse_failures=int(data.get("parse_failures", 0)),
                   reasks=int(data.get("reasks", 0)), refusals=int(data.get("refusals", 0)),
                   errors=int(data.get("errors", 0)), nulls=Counter(dict(data.get("nulls", {}))),
                   output=str(data.get("output") or ""), output_note=str(data.get("output_note") or ""),
                   format_fallbacks=int(data.get("format_fallbacks", 0)),
                   unstructured_replies=int(data.get("unstructured_replies", 0)))


@dataclass(frozen=True, slots=True)
class TokenLogprob:
    """One generated token: its text, log-probability and the top alternatives at its position
    (``token -> logprob``, the chosen token included), as OpenAI-compatible servers return them
    with ``logprobs=true, top_logprobs=k``."""

    token: str
    logprob: float
    top: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Reply:
    """A judge reply with optional token log-probabilities. ``complete`` may return a plain ``str``
    instead; judges that can use probabilities (ARES yes/no) fall back to the hard verdict."""

    text: str
    logprobs: tuple[TokenLogprob, ...] | None = None


Complete = Callable[[list[str]], Sequence["str | Reply | Exception"]]
"""``complete(prompts) -> replies``: one ``str``, :class:`Reply` or exception per prompt, in order."""


class FormatComplete(Protocol):
    """A ``complete`` that can also send a JSON schema for the replies (structured output):
    ``complete(prompts, response_format=fmt)``. LLM judges call it that way only with
    ``structured=on|auto``; the plugin's complete for ``openai:`` and ``vllm:`` judge models is one."""

    def __call__(self, prompts: list[str], response_format: ResponseFormat | None = None
                 ) -> Sequence[str | Reply | Exception]: ...


@runtime_checkable
class Judge(Protocol):
    """A model-backed scorer.

    ``kind`` names the judge (``"support_nli"``); ``metrics`` the metrics it produces, in the order
    of :attr:`JudgeScore.values`; ``identity()`` everything besides the item that determines its
    values (kind, model, template version, options that change scores), for cache keys;
    ``score(items)`` returns one :class:`JudgeScore` per item, in order, computing all items
    together (batched), never one model call per item; ``health`` accumulates over calls.
    """

    kind: str
    metrics: tuple[str, ...]
    health: JudgeHealth

    def identity(self) -> Mapping[str, Any]: ...

    def score(self, items: Sequence[JudgeItem]) -> list[JudgeScore]: ...

    def close(self) -> None: ...
