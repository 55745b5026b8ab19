"""Answer overlap with the reference answers: BLEU, chrF, ROUGE-L, character 3-gram recall, token F1.

Every metric is the maximum over the case's reference answers, uses the tokenizer of
:mod:`pytest_mirage.text.tokenize` (so no script is dropped) and lies in [0, 1] (clamped: float
division can overshoot, e.g. sacrebleu's exact-match BLEU/100 is 1.0000000000000004).
The ``*_score`` functions are the pure cores (strings in, float out); the Sample-level wrappers
raise ``NotApplicable`` when the case has no reference answer.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import regex  # type: ignore[import-untyped]

from ..text.tokenize import UNIT_CLASS, normalize, tokenize
from .base import Sample
from .common import answer_text, clamp01, references

# ---------------------------------------------------------------- BLEU / chrF (sacrebleu)


@lru_cache(maxsize=1)
def _bleu() -> Any:
    from sacrebleu.metrics.bleu import BLEU

    # our tokens joined by spaces, so sacrebleu must not tokenize again ("none")
    return BLEU(tokenize="none", effective_order=True)


@lru_cache(maxsize=1)
def _chrf() -> Any:
    from sacrebleu.metrics.chrf import CHRF

    return CHRF()


def bleu_score(hypothesis: str, refs: Sequence[str], lang: str) -> float:
    """Sentence BLEU/100 (sacrebleu: 4-grams, exponential smoothing, effective order) over the
    language's tokens; max over references."""
    hyp = " ".join(tokenize(hypothesis, lang))
    best = max(float(_bleu().sentence_score(hyp, [" ".join(tokenize(r, lang))]).score) for r in refs)
    return clamp01(best / 100.0)  # sacrebleu's exact match is 100.00000000000004


def chrf_score(hypothesis: str, refs: Sequence[str], lang: str) -> float:
    """chrF/100 (sacrebleu defaults: character 6-grams, beta 2, spaces ignored) on normalized text;
    max over references."""
    hyp = normalize(hypothesis, lang)
    return clamp01(max(float(_chrf().sentence_score(hyp, [normalize(r, lang)]).score) for r in refs) / 100.0)


# ---------------------------------------------------------------- ROUGE-L (rouge-score)


class _Tokenizer:
    """rouge-score tokenizer interface over our tokenizer (its default keeps only [a-z0-9])."""

    def __init__(self, lang: str) -> None:
        self.lang = lang

    def tokenize(self, text: str) -> list[str]:
        return tokenize(text, self.lang)


@lru_cache(maxsize=64)
def _rouge(lang: str) -> Any:
    from rouge_score import rouge_scorer  # type: ignore[import-untyped]

    return rouge_scorer.RougeScorer(["rougeL"], tokenizer=_Tokenizer(lang))


def rouge_l_score(hypothesis: str, refs: Sequence[str], lang: str) -> float:
    """ROUGE-L F-measure (Lin 2004; rouge-score) over the language's tokens; max over references."""
    scorer = _rouge(lang)
    return clamp01(max(float(scorer.score(r, hypothesis)["rougeL"].fmeasure) for r in refs))


# ---------------------------------------------------------------- character 3-gram recall

_SEGMENT_RE = regex.compile(rf"(?P<ns>[{UNIT_CLASS}][{UNIT_CLASS}\p{{M}}]*)|(?P<other>[^{UNIT_CLASS}]+)")
_UNIT_RE = regex.compile(rf"[{UNIT_CLASS}]\p{{M}}*")


def _strip_punctuation(text: str) -> str:
    return "".join(ch for ch in text if unicodedata.category(ch)[0] not in "PS")


def _grams(units: Sequence[str]) -> list[str]:
    if len(units) < 3:
        return ["".join(units)]
    return ["".join(units[i:i + 3]) for i in range(len(units) - 2)]


def char3_grams(text: str, lang: str, *, hypothesis: bool = False, variant: bool = True) -> Counter[str]:
    """Character 3-grams of ``text`` as QTT-RAG counts them.

    Lowercase (here: :func:`normalize`), strip punctuation, split into words at whitespace; a word
    shorter than 3 characters is one gram, a longer one gives its overlapping 3-grams.

    ``variant`` (the default) changes only runs of scripts written without spaces (Han, kana, Thai,
    Lao, Khmer, Myanmar, Tibetan) and of Hangul (a Korean word carries particles and endings, so
    ``서울`` must be found inside ``서울입니다``): their "characters" are character units (a base character with its
    combining marks, as in the tokenizer, so Thai and Khmer vowel signs are not split from their
    consonant), and the hypothesis also contributes the 1- and 2-unit grams of such runs, so that a
    short reference ("北京", kept whole as one gram) is found inside a longer answer ("首都是北京").
    """
    grams: Counter[str] = Counter()
    for word in _strip_punctuation(normalize(text, lang)).split():
        if not variant:
            grams.update(_grams(list(word)))
            continue
        for m in _SEGMENT_RE.finditer(word):
            if m.lastgroup == "other":
                grams.update(_grams(list(m.group())))
                continue
            units = _UNIT_RE.findall(m.group())
            grams.update(_grams(units))
            if hypothesis:
                for n in (1, 2):
                    if n < len(units):
                        grams.update("".join(units[i:i + n]) for i in range(len(units) - n + 1))
    return grams


def char3_recall_score(hypothesis: str, refs: Sequence[str], lang: str, *, variant: bool = True) -> float:
    """Share of the reference's character 3-grams found in the hypothesis (multiset overlap);
    max over references (QTT-RAG, after Chirkova et al. 2024)."""
    hyp = char3_grams(hypothesis, lang, hypothesis=True, variant=variant)
    best = 0.0
    for ref in refs:
        r = char3_grams(ref, lang, variant=variant)
        if r:
            best = max(best, sum((hyp & r).values()) / sum(r.values()))
    return clamp01(best)


# ---------------------------------------------------------------- token F1


def token_f1_score(hypothesis: str, refs: Sequence[str], lang: str) -> float:
    """Bag-of-tokens F1 (SQuAD answer F1) over the language's tokens; max over references."""
    hyp = Counter(tokenize(hypothesis, lang))
    best = 0.0
    for ref in refs:
        r = Counter(tokenize(ref, lang))
        common = sum((hyp & r).values())
        if common:
            p, rec = common / sum(hyp.values()), common / sum(r.values())
            best = max(best, 2 * p * rec / (p + rec))
    return clamp01(best)


# ---------------------------------------------------------------- Sample-level metrics


def bleu(s: Sample) -> float:
    """Sentence BLEU/100 against the reference answers (max), on the language's tokens."""
    return bleu_score(answer_text(s), references(s), s.case.lang)


def chrf(s: Sample) -> float:
    """chrF/100 against the reference answers (max)."""
    return chrf_score(answer_text(s), references(s), s.case.lang)


def rouge_l(s: Sample) -> float:
    """ROUGE-L F-measure against the reference answers (max), on the language's tokens."""
    return rouge_l_score(answer_text(s), references(s), s.case.lang)


def char3_recall(s: Sample) -> float:
    """Character 3-gram recall of the reference answers (QTT-RAG; max over references)."""
    return char3_recall_score(answer_text(s), references(s), s.case.lang)


def token_f1(s: Sample) -> float:
    """Token F1 against the reference answers (max), on the language's tokens."""
    return token_f1_score(answer_text(s), references(s), s.case.lang)
