"""Retrieval metrics at a cut-off k (the Khmer RAG study: Hit@k, file Hit@k, MRR@k, Precision@k).

They read the ranked chunk ids of ``sample.answer.retrieved`` (retrieval mode) and are null in
oracle mode, where nothing was retrieved. ``k`` is ``sample.k`` (suite setting ``k``, default 3).
Semantics follow trec_eval on the run cut at k: ``success_k``, ``recip_rank`` of the cut run, ``P_k``
(divided by k even when fewer than k chunks were retrieved).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ..errors import MetricError
from .base import NotApplicable, Sample


def hit_at(run: Sequence[str], relevant: Collection[str], k: int) -> float:
    """1 when a relevant id is among the first ``k`` of the run, else 0."""
    rel = set(relevant)
    return float(any(doc in rel for doc in run[:k]))


def reciprocal_rank_at(run: Sequence[str], relevant: Collection[str], k: int) -> float:
    """1/rank of the first relevant id within the first ``k``, else 0."""
    rel = set(relevant)
    for rank, doc in enumerate(run[:k], start=1):
        if doc in rel:
            return 1.0 / rank
    return 0.0


def precision_at(run: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Relevant ids among the first ``k`` of the run, divided by ``k``."""
    rel = set(relevant)
    return sum(doc in rel for doc in run[:k]) / k


def _retrieved(s: Sample) -> tuple[str, ...]:
    if s.answer.retrieved is None:
        if s.mode == "retrieval":
            raise NotApplicable("the model returned no retrieved ids: a generator-only model is given the harness's "
                                "BM25 context, which is scored on the 'bm25 (harness retriever)' row; a pipeline "
                                "that retrieves itself must return 'retrieved', the ranked chunk ids")
        raise NotApplicable("nothing was retrieved (oracle mode)")
    if s.k < 1:
        raise MetricError(f"retrieval cut-off k={s.k} for case {s.case.id!r}; set the suite's k to 1 or more")
    run = s.answer.retrieved
    if len(set(run)) != len(run):
        dup = next(r for i, r in enumerate(run) if r in run[:i])
        raise MetricError(f"case {s.case.id!r}: the retrieved ids list {dup!r} twice; a ranking lists "
                          "each chunk once (trec_eval rejects it too): fix the retriever's output")
    return run


def _relevant(s: Sample) -> tuple[str, ...]:
    if not s.case.relevant:
        raise NotApplicable("case has no relevant chunk ids")
    return s.case.relevant


def _doc_of(chunk_id: str, known: dict[str, str]) -> str:
    return known.get(chunk_id, chunk_id.split("#", 1)[0])


def hit_at_k(s: Sample) -> float:
    """Hit@k: 1 when a relevant chunk is among the top k retrieved, else 0."""
    return hit_at(_retrieved(s), _relevant(s), s.k)


def file_hit_at_k(s: Sample) -> float:
    """File Hit@k: 1 when a top-k chunk comes from a source document of a relevant chunk."""
    run = _retrieved(s)
    known = {p.id: p.doc_id for p in (*s.case.passages, *s.context)}
    docs = set(s.case.relevant_docs) or {_doc_of(r, known) for r in _relevant(s)}
    if not docs:
        raise NotApplicable("case has no relevant documents")
    return float(any(_doc_of(r, known) in docs for r in run[: s.k]))


def mrr_at_k(s: Sample) -> float:
    """MRR@k: reciprocal rank of the first relevant chunk within the top k (0 when none)."""
    return reciprocal_rank_at(_retrieved(s), _relevant(s), s.k)


def precision_at_k(s: Sample) -> float:
    """Precision@k: relevant chunks among the top k retrieved, divided by k."""
    return precision_at(_retrieved(s), _relevant(s), s.k)
