"""Control systems usable on any suite (``control:oracle`` etc.).

They check a suite: ``oracle`` must rank first, and each broken control must rank last on the metric
it breaks. Every control is deterministic (seeded by the case id).
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from ..errors import ConfigError
from ..seeding import seeded_rng
from ..suites.bm25 import corpus_map, index_for
from ..suites.model import Case, Passage
from ..text.tokenize import split_sentences
from .base import Answer, ModelRequest, OfflineModel
from .registry import ModelSpec

CONTROLS = ("oracle", "wrong-language", "no-citations", "random-passages")

# A fluent answer in a language other than the case's: English, or German for English cases.
_WRONG = {
    "en": ("Laut den vorliegenden Dokumenten steht die Antwort auf diese Frage in der zitierten Passage, "
           "die die wichtigsten Fakten zusammenfasst."),
    "*": ("According to the provided documents, the answer to this question is given in the cited "
          "passage, which summarises the key facts."),
}


def _rng(case: Case, salt: str) -> random.Random:
    return seeded_rng(f"{salt}/{case.suite}/{case.id}")


def _reference(case: Case, pool: Mapping[str, Passage]) -> str:
    if case.answers:
        return case.answers[0]
    for rid in case.relevant:
        if rid in pool:
            sents = split_sentences(pool[rid].text, case.lang)
            if sents:
                return sents[0]
    return case.question


class ControlModel(OfflineModel):
    def __init__(self, which: str) -> None:
        if which not in CONTROLS:
            raise ConfigError(f"control:{which}: unknown control; expected one of {', '.join(CONTROLS)}")
        self.which = which
        self.name = f"control:{which}"

    def _answer(self, req: ModelRequest) -> Answer:
        case = req.case
        if req.mode == "retrieval":
            assert req.suite.corpus is not None
            pool = corpus_map(req.suite.corpus)
        else:
            pool = {p.id: p for p in req.passages}
        relevant = [r for r in case.relevant if r in pool]
        cite = "".join(f"[{r}]" for r in relevant)
        retrieved: tuple[str, ...] | None = None
        if self.which == "random-passages":
            candidates = self._non_relevant(req, pool)
            rng = _rng(case, self.which)
            picked = rng.sample(candidates, k=min(2, len(candidates)))
            body = " ".join(f"{_first_sentence(p, case.lang)} [{p.id}]" for p in picked)
            output = f"##Reason: {body}\n##Answer: {body}"
            if req.mode == "retrieval":
                retrieved = tuple(p.id for p in candidates[:10])
        else:
            if req.mode == "retrieval":
                retrieved = tuple(relevant)
            ref = _reference(case, pool)
            if self.which == "oracle":
                output = f"##Reason: {ref} {cite}\n##Answer: {ref} {cite}"
            elif self.which == "no-citations":
                output = f"##Reason: {ref}\n##Answer: {ref}"
            else:  # wrong-language
                text = _WRONG["en"] if case.lang == "en" else _WRONG["*"]
                output = f"##Reason: {text} {cite}\n##Answer: {text} {cite}"
        contexts = tuple(pool[r].text for r in retrieved[:3] if r in pool) if retrieved is not None else None
        return Answer(case.id, self.name, output, retrieved=retrieved, contexts=contexts)

    def _non_relevant(self, req: ModelRequest, pool: Mapping[str, Passage]) -> list[Passage]:
        rel = set(req.case.relevant)
        rel_docs = set(req.case.relevant_docs)
        if req.mode == "retrieval":
            assert req.suite.corpus is not None
            # BM25 neighbours from other documents: topical but not relevant
            hits = index_for(req.suite.corpus, req.case.lang).search(req.case.question, 50)
            out = [p for p, _ in hits if p.id not in rel and p.doc_id not in rel_docs]
            if len(out) < 2:
                out += [p for p in req.suite.corpus if p.id not in rel and p.doc_id not in rel_docs and p not in out]
            return out
        return [p for p in req.passages if p.id not in rel]


def _first_sentence(p: Passage, lang: str) -> str:
    sents = split_sentences(p.text, lang)
    return sents[0] if sents else p.text


def create(spec: ModelSpec) -> ControlModel:
    return ControlModel(spec.arg)
