"""The built-in offline baseline: a deterministic extractive RAG system.

Oracle mode: scores every sentence of the given passages against the question (BM25-style weighting
of shared tokens, per-language tokenizer) and answers with the best sentence(s), citing their passages.
Retrieval mode: first retrieves the top-k chunks from the suite corpus with BM25, then does the same.
The answer uses the MIRAGE output format ``##Reason: ... ##Answer: ...`` with ``[id]`` citations.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from ..suites.bm25 import index_for, terms
from ..suites.model import Passage
from ..text.tokenize import split_sentences
from .base import Answer, ModelRequest, OfflineModel
from .registry import ModelSpec


class ExtractiveModel(OfflineModel):
    """Offline, deterministic extractive baseline (``--mirage-model extractive``)."""

    def __init__(self, name: str = "extractive", top_sentences: int = 2, k: int | None = None) -> None:
        self.name = name
        self.top_sentences = top_sentences
        self.k = k

    def _answer(self, req: ModelRequest) -> Answer:
        case = req.case
        retrieved: tuple[str, ...] | None = None
        contexts: tuple[str, ...] | None = None
        passages: Sequence[Passage]
        if req.mode == "retrieval":
            k = self.k or int(req.suite.settings.get("k", 3))
            assert req.suite.corpus is not None
            hits = index_for(req.suite.corpus, case.lang).search(case.question, max(k, 10))
            passages = [p for p, _ in hits[:k]]
            retrieved = tuple(p.id for p, _ in hits)
            contexts = tuple(p.text for p in passages)
        else:
            passages = req.passages
        best = self._best_sentences(case.question, passages, case.lang)
        if not best:
            text = "##Reason: - ##Answer: -"
            return Answer(case.id, self.name, text, answer="-", citations=(), retrieved=retrieved,
                          contexts=contexts)
        body = " ".join(f"{s} [{pid}]" for pid, s in best)
        output = f"##Reason: {body}\n##Answer: {body}"
        return Answer(case.id, self.name, output, retrieved=retrieved, contexts=contexts)

    def _best_sentences(self, question: str, passages: Sequence[Passage], lang: str) -> list[tuple[str, str]]:
        q = Counter(terms(question, lang))
        sents = [(p.id, s) for p in passages for s in split_sentences(p.text, lang)]
        if not sents or not q:
            return [(passages[0].id, split_sentences(passages[0].text, lang)[0])] if passages and passages[0].text.strip() else []
        toks = [Counter(terms(s, lang)) for _, s in sents]
        n = len(sents)
        df: Counter[str] = Counter()
        for t in toks:
            df.update(t.keys())
        avg = sum(sum(t.values()) for t in toks) / n or 1.0
        scored = []
        for i, t in enumerate(toks):
            length = sum(t.values()) or 1
            score = 0.0
            for term in q:
                tf = t.get(term, 0)
                if tf:
                    idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                    score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / avg))
            scored.append((score, -i))
        scored.sort(reverse=True)
        picked = [sents[-neg] for score, neg in scored[: self.top_sentences] if score > 0]
        return picked or [sents[0]]


def create(spec: ModelSpec) -> ExtractiveModel:
    k = spec.option("k")
    top = spec.option("sentences", 2)
    return ExtractiveModel(name=spec.raw.split("?")[0] or "extractive", top_sentences=int(top),
                           k=int(k) if k is not None else None)
