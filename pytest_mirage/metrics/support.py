"""Offline faithfulness: lexical support of the answer's sentences by the passages they cite.

``support_lexical`` is the default faithfulness signal when no NLI or LLM judge is configured.
Per sentence of the answer (citation markers belong to the sentence they follow):

* its evidence is the passages it cites; when it cites nothing, all passages of the context; when
  it cites only ids that name no passage, nothing (such a sentence is unsupported);
* its coverage is the share of its content units (words; pairs of characters in scripts without
  spaces, see :func:`pytest_mirage.text.tokenize.content_units`) that occur in its evidence.

``support_lexical`` is the mean coverage over the answer's sentences: 1 when every sentence is
fully covered, 0.5 when sentences are on average half covered. ``support_lexical_uncited`` is the
same mean over the sentences that cite nothing (checked against all passages), reported separately
so that support earned without citations is visible. On the ARES NQ set the mean coverage separates
faithful from unfaithful answers with ROC AUC 0.967 (a 0/1 "sentence covered at >= 50%" share:
0.934); see ``benchmarks/bench_support_ares.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..prompts import find_citations, strip_citations
from ..suites.model import Passage
from ..text.tokenize import (
    UnitKinds,
    count_content_units,
    has_mark,
    normalize,
    split_sentences,
    unit_kinds,
)
from .analysis import PER_TEXT_CACHES, of
from .base import Metric, NotApplicable, Sample


@dataclass(frozen=True, slots=True)
class SentenceSupport:
    """One answer sentence: its text (without markers), cited passage ids and coverage."""

    text: str
    cited: tuple[str, ...]
    invalid: tuple[str, ...]
    coverage: float


@lru_cache(maxsize=8192)
def _units(text: str, lang: str) -> UnitKinds:
    return unit_kinds(text, lang)


PER_TEXT_CACHES.extend((_units, normalize))  # normalize: see its docstring


def _passage_text(p: Passage) -> str:
    return f"{p.title}\n{p.text}" if p.title else p.text


def sentence_support(answer: str, passages: Sequence[Passage], lang: str) -> list[SentenceSupport]:
    """Coverage of every sentence of ``answer`` (raw, with citation markers) that has content.

    A sentence's few units are looked up in its evidence (the normalised passages joined by newlines,
    which no unit spans) with :func:`~pytest_mirage.text.tokenize.count_content_units`, instead of building the unit sets of whole
    passages: the same coverage, at a fraction of the cost on long passages."""
    ids = [p.id for p in passages]
    by_id = {p.id: p for p in passages}
    normalized: dict[str, str] = {}
    evidence: dict[tuple[str, ...], tuple[str, bool, dict[str, frozenset[str]]]] = {}

    def evidence_of(chosen: tuple[str, ...]) -> tuple[str, bool, dict[str, frozenset[str]]]:
        if chosen not in evidence:
            for c in chosen:
                if c not in normalized:
                    normalized[c] = normalize(_passage_text(by_id[c]), lang)
            text = "\n".join(normalized[c] for c in chosen)
            evidence[chosen] = (text, has_mark(text), {})
        return evidence[chosen]

    out: list[SentenceSupport] = []
    for sentence in split_sentences(answer, lang):
        text = strip_citations(sentence).strip()
        units = _units(text, lang)
        if not units:
            continue
        cited, invalid = find_citations(sentence, ids)
        if cited or not invalid:
            ev, marks, memo = evidence_of(tuple(cited) if cited else tuple(ids))
            covered = count_content_units(units, ev, marks, memo)
        else:
            covered = 0  # it cites only ids that name no passage: nothing supports it
        out.append(SentenceSupport(text, tuple(cited), tuple(invalid), covered / len(units)))
    return out


def _sentences(s: Sample) -> list[SentenceSupport]:
    if not s.context:
        raise NotApplicable("the generator saw no passages to support the answer")
    memo = of(s).extra  # computed once for support_lexical, _uncited and faithfulness
    if "sentences" not in memo:
        memo["sentences"] = sentence_support(of(s).raw, s.context, s.case.lang)
    sents: list[SentenceSupport] = memo["sentences"]
    if not sents:
        raise NotApplicable("the answer has no words to check")
    return sents


def support_lexical(s: Sample) -> float:
    """Mean share of each answer sentence's words found in the passages it cites (all passages for
    a sentence without citations)."""
    sents = _sentences(s)
    return sum(x.coverage for x in sents) / len(sents)


def support_lexical_uncited(s: Sample) -> float:
    """``support_lexical`` over the sentences that cite nothing, checked against all passages."""
    sents = [x for x in _sentences(s) if not x.cited and not x.invalid]
    if not sents:
        raise NotApplicable("every sentence cites a passage")
    return sum(x.coverage for x in sents) / len(sents)


# ---------------------------------------------------------------- faithfulness


def faithfulness_metric(signal: Metric) -> Metric:
    """The ``faithfulness`` metric computed as ``signal`` (the offline default); when a claim-level
    LLM or an NLI judge is configured, the judge phase replaces its value with that judge's
    (:mod:`pytest_mirage.evaluate.judging`) and the report names the signal it resolved to."""
    return Metric("faithfulness", signal.fn, higher_is_better=signal.higher_is_better,
                  description=f"Faithfulness of the answer to its context; resolved to {signal.name} unless a "
                              f"support_llm or support_nli judge is configured: {signal.description}",
                  bounds=(0.0, 1.0),
                  source=f"resolved from {signal.name}")
