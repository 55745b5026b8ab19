"""From a suite case to a model request, and from a raw answer to a parsed one."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..models.base import Answer, ModelRequest
from ..prompts import load_template, order_passages, parse_output, render
from ..suites.bm25 import corpus_map, index_for
from ..suites.model import Case, Passage, Suite


@lru_cache(maxsize=64)
def _template(name: str, root: Path | None) -> str:
    return load_template(name, root)


HARNESS_RETRIEVER = "bm25 (harness retriever)"  # the leaderboard row of the harness's own retrieval


def harness_retrieval(suite: Suite, case: Case) -> tuple[str, ...]:
    """The ranked chunk ids the harness's BM25 retrieves for ``case`` (what a generator-only model
    is given, and what the harness retriever row is scored on)."""
    assert suite.corpus is not None
    return tuple(p.id for p, _ in index_for(suite.corpus, case.lang).search(case.question, max(suite_k(suite), 10)))


def suite_k(suite: Suite) -> int:
    """The suite's retrieval cut-off ``k`` (validated at load)."""
    return int(suite.settings["k"])


def build_request(suite: Suite, case: Case, retrieves: bool, repeat: int = 0) -> ModelRequest:
    """The request for ``case``: the oracle passages (seeded shuffle), or in retrieval mode nothing for
    a model that ``retrieves`` itself and the harness's BM25 top-k for one that does not."""
    if suite.mode == "oracle":
        passages = tuple(order_passages(case))
    elif retrieves:
        passages = ()
    else:
        assert suite.corpus is not None
        passages = tuple(p for p, _ in index_for(suite.corpus, case.lang).search(case.question, suite_k(suite)))
    prompt = render(_template(suite.template, suite.root), case, passages)
    return ModelRequest(case=case, suite=suite, mode=suite.mode, passages=passages, prompt=prompt, repeat=repeat)


def context_of(request: ModelRequest, answer: Answer) -> tuple[Passage, ...]:
    """The passages the generator saw (citations are resolved against them)."""
    if request.passages:
        return request.passages
    suite = request.suite
    if suite.corpus is None or answer.retrieved is None:
        return ()
    by_id = corpus_map(suite.corpus)
    return tuple(by_id[r] for r in answer.retrieved[: max(suite_k(suite), 10)] if r in by_id)


def finalize_answer(request: ModelRequest, answer: Answer) -> Answer:
    """Fill the parsed answer text and citations from the raw output when the model gave none.

    Retrieval metrics score what the model retrieved: when the harness retrieved its context (a
    generator-only model), the model has no retrieved ids of its own (its retrieval metrics are
    null); the harness's retriever is scored on its own leaderboard row
    (:data:`HARNESS_RETRIEVER`). The context the model saw is kept in ``contexts``.
    """
    ctx = context_of(request, answer)
    ids = [p.id for p in ctx]
    # [n]-style indices refer to the passages listed in the prompt (the context) only; in retrieval
    # mode a model may also cite any corpus chunk by its id
    others: Mapping[str, Passage] = (corpus_map(request.suite.corpus)
                                     if request.mode == "retrieval" and request.suite.corpus else {})
    ctx_ids = set(ids)
    parsed = parse_output(answer.output, ids, others)
    upd: dict[str, Any] = {"format_ok": parsed.format_ok}
    if answer.answer is None:
        upd["answer"] = parsed.answer
    if answer.citations is None:
        upd["citations"] = parsed.citations
        upd["invalid_citations"] = parsed.unknown_citations
    else:
        # given citations (a pipeline's, or a replayed run line): ids that name nothing are invalid
        upd["citations"] = tuple(c for c in answer.citations if c in ctx_ids or c in others)
        upd["invalid_citations"] = tuple(c for c in answer.citations if c not in ctx_ids and c not in others)
    if answer.retrieved is None and request.mode == "retrieval" and request.passages and answer.contexts is None:
        upd["contexts"] = tuple(p.text for p in request.passages)
    if answer.reason is None and parsed.reason is not None:
        upd["reason"] = parsed.reason
    return replace(answer, **upd)


def prompt_id(prompt: str) -> str:
    """The cache id of a judge prompt (the first 16 hex digits of its SHA-256)."""
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:16]
