"""The fast metric path gives the reference libraries' values bit for bit: ROUGE-L's LCS through
rapidfuzz against rouge-score's own table, BLEU and chrF from our n-gram counts against sacrebleu's
``sentence_score``, character 3-grams against the plain definition; and the shared per-sample
analysis is computed once per ``compute`` call."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer
from sacrebleu.metrics.bleu import BLEU
from sacrebleu.metrics.chrf import CHRF

from pytest_mirage.metrics import analysis, builtin_registry
from pytest_mirage.metrics.base import Sample
from pytest_mirage.metrics.overlap import bleu_score, char3_recall_score, chrf_score, rouge_l_score
from pytest_mirage.models.base import Answer
from pytest_mirage.suites.model import Case, Passage
from pytest_mirage.text.tokenize import normalize, tokenize

WORDS = ["paris", "Berlin", "नई", "दिल्ली", "東京", "です", "北京", "กรุงเทพ", "ភ្នំពេញ", "wọ́n", "كتاب", "Москва",
         "서울", "1998", ",", ".", "the", "of", "capital", "la"]
TEXT = st.lists(st.sampled_from(WORDS), min_size=0, max_size=25).map(" ".join)
LANG = st.sampled_from(["en", "hi", "ja", "zh", "th", "km", "yo", "ar", "ru", "ko"])


class _Tok:
    def __init__(self, lang: str) -> None:
        self.lang = lang

    def tokenize(self, text: str) -> list[str]:
        return tokenize(text, self.lang)


@settings(max_examples=300, deadline=None)
@given(TEXT, TEXT, LANG)
def test_rouge_l_lcs_equals_rouge_score_table(hyp: str, ref: str, lang: str) -> None:
    expected = rouge_scorer.RougeScorer(["rougeL"], tokenizer=_Tok(lang)).score(ref, hyp)["rougeL"].fmeasure
    got = rouge_l_score(hyp, [ref], lang) if tokenize(ref, lang) else None
    if got is not None:
        assert got == min(1.0, float(expected))  # bit-identical (rouge-score's LCS is pure Python)


def test_rouge_l_on_long_random_token_sequences() -> None:
    rng = random.Random(3)
    for _ in range(30):
        vocab = [f"w{i}" for i in range(rng.randint(2, 40))]
        hyp = " ".join(rng.choices(vocab, k=rng.randint(1, 300)))
        ref = " ".join(rng.choices(vocab, k=rng.randint(1, 300)))
        expected = rouge_scorer.RougeScorer(["rougeL"], tokenizer=_Tok("en")).score(ref, hyp)["rougeL"].fmeasure
        assert rouge_l_score(hyp, [ref], "en") == min(1.0, float(expected))


@settings(max_examples=300, deadline=None)
@given(TEXT, st.lists(TEXT, min_size=1, max_size=3), LANG)
def test_bleu_and_chrf_equal_sacrebleu_sentence_score(hyp: str, refs: list[str], lang: str) -> None:
    refs = [r for r in refs if tokenize(r, lang)]
    if not refs:
        return
    bleu = BLEU(tokenize="none", effective_order=True)
    chrf = CHRF()
    joined = " ".join(tokenize(hyp, lang))
    expected_bleu = max(bleu.sentence_score(joined, [" ".join(tokenize(r, lang))]).score for r in refs)
    assert bleu_score(hyp, refs, lang) == min(1.0, max(0.0, expected_bleu / 100.0))
    expected_chrf = max(chrf.sentence_score(normalize(hyp, lang), [normalize(r, lang)]).score for r in refs)
    assert chrf_score(hyp, refs, lang) == min(1.0, max(0.0, expected_chrf / 100.0))


def _plain_char3(text: str, lang: str) -> Counter[str]:
    # QTT-RAG's definition on spaced scripts, written the slow way
    import unicodedata

    out: Counter[str] = Counter()
    for word in "".join(c for c in normalize(text, lang) if unicodedata.category(c)[0] not in "PS").split():
        out.update([word] if len(word) < 3 else [word[i:i + 3] for i in range(len(word) - 2)])
    return out


@settings(max_examples=200, deadline=None)
@given(TEXT, TEXT)
def test_char3_without_variant_is_the_plain_definition(hyp: str, ref: str) -> None:
    r = _plain_char3(ref, "en")
    h = _plain_char3(hyp, "en")
    expected = sum((h & r).values()) / sum(r.values()) if r else 0.0
    assert char3_recall_score(hyp, [ref], "en", variant=False) == pytest.approx(expected, abs=0.0)


def test_analysis_is_shared_within_one_compute_call_and_dropped_after() -> None:
    p = Passage("a#0", "Paris is the capital of France.")
    case = Case(suite="s", id="q", lang="en", question="?", passages=(p,), relevant=("a#0",),
                answers=("Paris is the capital",))
    s = Sample(case, Answer("q", "m", "Paris is the capital [a#0].", answer="Paris is the capital [a#0].",
                            citations=("a#0",)), (p,))
    built: list[object] = []
    real = analysis.AnswerAnalysis.__init__

    def counting(self: analysis.AnswerAnalysis, sample: Sample) -> None:
        built.append(sample)
        real(self, sample)

    analysis.AnswerAnalysis.__init__ = counting  # type: ignore[method-assign]
    try:
        reg = builtin_registry()
        v = reg.compute(s, ["bleu", "chrf", "rouge_l", "token_f1", "char3_recall", "support_lexical",
                            "support_lexical_uncited", "faithfulness", "language_match"])
    finally:
        analysis.AnswerAnalysis.__init__ = real  # type: ignore[method-assign]
    assert len(built) == 1
    assert s._memo == {}
    assert v.values["token_f1"] == 1.0 and v.values["support_lexical"] == 1.0
