"""Built-in deterministic metrics."""

from __future__ import annotations

from collections import Counter

from ..prompts import strip_citations
from ..text.tokenize import normalize, tokenize
from .base import Metric, NotApplicable, Sample


def _answer_text(s: Sample) -> str:
    return strip_citations(s.answer.answer if s.answer.answer is not None else s.answer.output).strip()


def language_match(s: Sample) -> float:
    """Probability that the answer is written in the case's language (MIRAGE §4.1, langid)."""
    from ..text.langid import language_probability

    text = _answer_text(s)
    if not text:
        raise NotApplicable("empty answer")
    return language_probability(text, s.case.lang)


def _cited(s: Sample) -> list[str]:
    return list(s.answer.citations or ())


def citation_recall(s: Sample) -> float:
    """Recall@10 of the cited ids (in order of first appearance) against the relevant ids."""
    rel = set(s.case.relevant)
    if not rel:
        raise NotApplicable("case has no relevant ids")
    run = _cited(s)[:10]
    return len(rel & set(run)) / len(rel)


def citation_map(s: Sample) -> float:
    """MAP@10 with trec_eval semantics over the cited ids in order of first appearance."""
    rel = set(s.case.relevant)
    if not rel:
        raise NotApplicable("case has no relevant ids")
    hits = 0
    total = 0.0
    for i, cid in enumerate(_cited(s)[:10], start=1):
        if cid in rel:
            hits += 1
            total += hits / i
    return total / len(rel)


def _char3(text: str) -> Counter[str]:
    words = [w for w in normalize(text).split() if w]
    grams: Counter[str] = Counter()
    for w in words:
        w = "".join(ch for ch in w if ch.isalnum() or ch in "\u0300\u036f" or not ch.isascii() and ch.isprintable())
        if not w:
            continue
        if len(w) < 3:
            grams[w] += 1
        else:
            for i in range(len(w) - 2):
                grams[w[i:i + 3]] += 1
    return grams


def char3_recall(s: Sample) -> float:
    """Character 3-gram recall against the reference answers (QTT-RAG), max over references."""
    if not s.case.answers:
        raise NotApplicable("case has no reference answer")
    hyp = _char3(_answer_text(s))
    best = 0.0
    for ref in s.case.answers:
        r = _char3(ref)
        if not r:
            continue
        best = max(best, sum((hyp & r).values()) / sum(r.values()))
    return best


def rouge_l(s: Sample) -> float:
    """ROUGE-L F-measure against the reference answers with the language's tokenizer."""
    if not s.case.answers:
        raise NotApplicable("case has no reference answer")
    from rouge_score import rouge_scorer

    class _Tok:
        def tokenize(self, text: str) -> list[str]:
            return tokenize(text, s.case.lang)

    scorer = rouge_scorer.RougeScorer(["rougeL"], tokenizer=_Tok())
    hyp = _answer_text(s)
    return max(scorer.score(ref, hyp)["rougeL"].fmeasure for ref in s.case.answers)


METRICS: list[Metric] = [
    Metric("language_match", language_match, description=language_match.__doc__ or "", source="MIRAGE-Bench §4.1"),
    Metric("citation_recall", citation_recall, description=citation_recall.__doc__ or "", source="MIRAGE-Bench §4.1"),
    Metric("citation_map", citation_map, description=citation_map.__doc__ or "", source="MIRAGE-Bench §4.1"),
    Metric("char3_recall", char3_recall, description=char3_recall.__doc__ or "", source="QTT-RAG"),
    Metric("rouge_l", rouge_l, description=rouge_l.__doc__ or "", source="Lin 2004"),
]
