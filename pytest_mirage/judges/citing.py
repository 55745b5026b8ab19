"""Which passages an answer's sentences cite: shared by the local-model judges (pure, no model).

A sentence's citation markers belong to it (``"... in 1998 [d#2]."``, see
:func:`pytest_mirage.text.tokenize.split_sentences`). Markers name passage ids or 1-based indices
into the passages in prompt order (:func:`pytest_mirage.prompts.find_citations`). When the answer
carries no marker at all but the adapter reported citations (an API returning citations beside
the text), every sentence is taken to cite those passages.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..prompts import find_citations, strip_citations
from ..suites.model import Passage
from ..text.tokenize import split_sentences
from .base import JudgeItem


@dataclass(frozen=True, slots=True)
class CitedSentence:
    """One answer sentence with content: its text without markers, the valid passage ids it cites
    and the cited tokens that name no passage."""

    text: str
    cited: tuple[str, ...]
    invalid: tuple[str, ...]


def _has_content(text: str) -> bool:
    return any(ch.isalnum() for ch in text)


def cited_sentences(item: JudgeItem) -> list[CitedSentence]:
    """Every sentence of the answer that has letters or digits, with what it cites."""
    ids = list(item.passage_ids)
    out: list[CitedSentence] = []
    for sentence in split_sentences(item.answer, item.lang):
        text = strip_citations(sentence).strip()
        if not _has_content(text):
            continue
        cited, invalid = find_citations(sentence, ids)
        out.append(CitedSentence(text, tuple(cited), tuple(invalid)))
    if not any(s.cited or s.invalid for s in out):
        known = set(ids)
        valid = tuple(dict.fromkeys(c for c in item.citations if c in known))
        unknown = tuple(dict.fromkeys(c for c in item.citations if c not in known))
        if valid or unknown:
            out = [CitedSentence(s.text, valid, unknown) for s in out]
    return out


def cited_passages(item: JudgeItem) -> list[Passage]:
    """The distinct passages the answer cites, in order of first citation (markers and the
    adapter's citations)."""
    by_id = {p.id: p for p in item.passages}
    order: dict[str, None] = {}
    for s in cited_sentences(item):
        order.update(dict.fromkeys(s.cited))
    for c in item.citations:
        if c in by_id:
            order.setdefault(c, None)
    return [by_id[c] for c in order]


def passage_text(p: Passage) -> str:
    """The text a model reads for a passage: ``title`` and text on separate lines."""
    return f"{p.title}\n{p.text}" if p.title else p.text


def resolve_device(device: str) -> str:
    """``auto`` -> ``cuda`` when a GPU is visible, else ``mps`` on Apple silicon, else ``cpu``."""
    if device != "auto":
        return device
    import torch

    if torch.cuda.is_available():
        return "cuda"
    mps: Any = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return "mps"
    return "cpu"


def token_limit(tokenizer: Any, wanted: int) -> int:
    """``wanted``, or less when the tokenizer says its model accepts fewer tokens (FlagEmbedding
    passes its own 512 on, which a smaller checkpoint cannot embed)."""
    limit = getattr(tokenizer, "model_max_length", None)
    return min(wanted, int(limit)) if isinstance(limit, int) and 0 < limit < 1_000_000 else wanted


def local_identity(kind: str, model: str, options: Mapping[str, Any], version: str) -> dict[str, Any]:
    """Identity of a local-model judge: options that do not change values (batch size, device)
    are left out, so that a cache survives moving a run to a GPU."""
    kept = {k: v for k, v in sorted(options.items()) if k not in ("batch_size", "device")}
    return {"kind": kind, "model": model, "version": version, **kept}
