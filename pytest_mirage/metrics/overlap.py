"""Answer overlap with the reference answers: BLEU, chrF, ROUGE-L, character 3-gram recall, token F1.

Every metric is the maximum over the case's reference answers, uses the tokenizer of
:mod:`pytest_mirage.text.tokenize` (so no script is dropped) and lies in [0, 1] (clamped: float
division can overshoot, e.g. sacrebleu's exact-match BLEU/100 is 1.0000000000000004).
The ``*_score`` functions are the pure cores (strings in, float out); the Sample-level wrappers
raise ``NotApplicable`` when the case has no reference answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from rapidfuzz.distance import LCSseq

from .analysis import TextAnalysis, char_ngram_stats, matches, of, reference
from .analysis import char3_grams as analysis_char3_grams
from .base import Sample
from .common import clamp01, references

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


def _bleu_of(hyp: TextAnalysis, ref: TextAnalysis) -> float:
    # sacrebleu's sentence statistics [hyp_len, ref_len, correct 1..4, total 1..4] from our counts;
    # the score formula (smoothing, brevity penalty) is sacrebleu's own
    correct = [matches(h, r) for h, r in zip(hyp.word_ngrams, ref.word_ngrams, strict=True)]
    total = [h.total() for h in hyp.word_ngrams]
    stats = [len(hyp.tokens), len(ref.tokens), *correct, *total]
    return float(_bleu()._compute_score_from_stats(stats).score)


def _chrf_of(hyp: TextAnalysis, ref: TextAnalysis) -> float:
    # sacrebleu's [hyp, ref, match] statistics per character order; its F-score formula
    return float(_chrf()._compute_f_score(char_ngram_stats(hyp.chars, ref.chars)))


def _hyp(hypothesis: str, lang: str) -> TextAnalysis:
    return TextAnalysis(hypothesis, lang, hypothesis=True)


def bleu_score(hypothesis: str, refs: Sequence[str], lang: str) -> float:
    """Sentence BLEU/100 (sacrebleu: 4-grams, exponential smoothing, effective order) over the
    language's tokens; max over references."""
    return _bleu_max(_hyp(hypothesis, lang), refs, lang)


def _bleu_max(hyp: TextAnalysis, refs: Sequence[str], lang: str) -> float:
    best = max(_bleu_of(hyp, reference(r, lang)) for r in refs)
    return clamp01(best / 100.0)  # sacrebleu's exact match is 100.00000000000004


def chrf_score(hypothesis: str, refs: Sequence[str], lang: str) -> float:
    """chrF/100 (sacrebleu defaults: character 6-grams, beta 2, spaces ignored) on normalized text;
    max over references."""
    return _chrf_max(_hyp(hypothesis, lang), refs, lang)


def _chrf_max(hyp: TextAnalysis, refs: Sequence[str], lang: str) -> float:
    return clamp01(max(_chrf_of(hyp, reference(r, lang)) for r in refs) / 100.0)


# ---------------------------------------------------------------- ROUGE-L (rouge-score)


def _rouge_l_of(hyp: Sequence[str], ref: Sequence[str]) -> float:
    # rouge-score's _score_lcs with the LCS length from rapidfuzz (C++), same float operations
    if not ref or not hyp:
        return 0.0
    lcs = LCSseq.similarity(ref, hyp)
    precision = lcs / len(hyp)
    recall = lcs / len(ref)
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def rouge_l_score(hypothesis: str, refs: Sequence[str], lang: str) -> float:
    """ROUGE-L F-measure (Lin 2004; rouge-score's definition) over the language's tokens; max over
    references. The longest common subsequence comes from rapidfuzz (equal to rouge-score's table,
    tested)."""
    return _rouge_max(_hyp(hypothesis, lang), refs, lang)


def _rouge_max(hyp: TextAnalysis, refs: Sequence[str], lang: str) -> float:
    return clamp01(max(_rouge_l_of(hyp.tokens, reference(r, lang).tokens) for r in refs))


# ---------------------------------------------------------------- character 3-gram recall


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
    return analysis_char3_grams(text, lang, hypothesis=hypothesis, variant=variant)


def _char3_recall(hyp: Counter[str], refs: Sequence[Counter[str]]) -> float:
    best = 0.0
    for r in refs:
        if r:
            best = max(best, matches(hyp, r) / r.total())
    return clamp01(best)


def char3_recall_score(hypothesis: str, refs: Sequence[str], lang: str, *, variant: bool = True) -> float:
    """Share of the reference's character 3-grams found in the hypothesis (multiset overlap);
    max over references (QTT-RAG, after Chirkova et al. 2024)."""
    if not variant:
        return _char3_recall(char3_grams(hypothesis, lang, hypothesis=True, variant=False),
                             [char3_grams(r, lang, variant=False) for r in refs])
    return _char3_recall(_hyp(hypothesis, lang).char3, [reference(r, lang).char3 for r in refs])


# ---------------------------------------------------------------- token F1


def _token_f1(hyp: Counter[str], refs: Sequence[Counter[str]]) -> float:
    best = 0.0
    for r in refs:
        common = matches(hyp, r)
        if common:
            p, rec = common / hyp.total(), common / r.total()
            best = max(best, 2 * p * rec / (p + rec))
    return clamp01(best)


def token_f1_score(hypothesis: str, refs: Sequence[str], lang: str) -> float:
    """Bag-of-tokens F1 (SQuAD answer F1) over the language's tokens; max over references."""
    return _token_f1(_hyp(hypothesis, lang).token_counts, [reference(r, lang).token_counts for r in refs])


# ---------------------------------------------------------------- Sample-level metrics


def bleu(s: Sample) -> float:
    """Sentence BLEU/100 against the reference answers (max), on the language's tokens."""
    refs = references(s)
    return _bleu_max(of(s).overlap, refs, s.case.lang)


def chrf(s: Sample) -> float:
    """chrF/100 against the reference answers (max)."""
    refs = references(s)
    return _chrf_max(of(s).overlap, refs, s.case.lang)


def rouge_l(s: Sample) -> float:
    """ROUGE-L F-measure against the reference answers (max), on the language's tokens."""
    refs = references(s)
    return _rouge_max(of(s).overlap, refs, s.case.lang)


def char3_recall(s: Sample) -> float:
    """Character 3-gram recall of the reference answers (QTT-RAG; max over references)."""
    refs = references(s)
    return _char3_recall(of(s).overlap.char3, [reference(r, s.case.lang).char3 for r in refs])


def token_f1(s: Sample) -> float:
    """Token F1 against the reference answers (max), on the language's tokens."""
    refs = references(s)
    return _token_f1(of(s).overlap.token_counts, [reference(r, s.case.lang).token_counts for r in refs])
