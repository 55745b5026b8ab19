"""Property tests: ranges and invariants of the metric cores."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pytest_mirage.metrics.citations import average_precision_at, recall_at
from pytest_mirage.metrics.overlap import (
    bleu_score,
    char3_recall_score,
    chrf_score,
    rouge_l_score,
    token_f1_score,
)
from pytest_mirage.metrics.retrieval import hit_at, precision_at, reciprocal_rank_at
from pytest_mirage.text.tokenize import tokenize

LANG = st.sampled_from(["en", "hi", "ja", "zh", "th", "km", "yo", "ar", "ru", "ko", "sw"])
# words from several scripts, so that generated texts share tokens often enough to be interesting
WORDS = st.sampled_from(["paris", "Berlin", "नई", "दिल्ली", "東京", "です", "北京", "กรุงเทพ", "ភ្នំពេញ",
                         "wọ́n", "كتاب", "Москва", "서울", "1998", ",", ".", "!"])
TEXT = st.lists(WORDS, max_size=12).map(" ".join) | st.text(max_size=40)
CORES = (bleu_score, chrf_score, rouge_l_score, char3_recall_score, token_f1_score)


@settings(max_examples=150, deadline=None)
@given(TEXT, st.lists(TEXT, min_size=1, max_size=3), LANG)
def test_overlap_metrics_lie_in_unit_interval_and_take_the_best_reference(hyp: str, refs: list[str],
                                                                            lang: str) -> None:
    refs = [r for r in refs if tokenize(r, lang)]
    assume(refs)
    for core in CORES:
        v = core(hyp, refs, lang)
        assert 0.0 <= v <= 1.0 + 1e-9, core.__name__
        assert v == max(core(hyp, [r], lang) for r in refs), core.__name__


@settings(max_examples=150, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=12).map(" ".join), LANG)
def test_identical_answer_scores_one(text: str, lang: str) -> None:
    assume(tokenize(text, lang))
    for core in CORES:
        # exactly 1: sacrebleu's exact match is 100.00000000000004, so BLEU/100 must be clamped
        assert core(text, [text], lang) == 1.0, core.__name__


@settings(max_examples=100, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=12).map(" ".join), LANG)
def test_empty_answer_scores_zero(ref: str, lang: str) -> None:
    assume(tokenize(ref, lang))
    for core in CORES:
        assert core("", [ref], lang) == 0.0, core.__name__


IDS = st.sampled_from([f"d{i}" for i in range(12)])


@settings(max_examples=300, deadline=None)
@given(st.lists(IDS, unique=True, max_size=12), st.sets(IDS, min_size=1, max_size=6), st.integers(1, 12))
def test_ranking_metric_invariants(run: list[str], rel: set[str], k: int) -> None:
    r, ap = recall_at(run, rel, 10), average_precision_at(run, rel, 10)
    assert 0.0 <= ap <= r <= 1.0
    hit, rr, p = hit_at(run, rel, k), reciprocal_rank_at(run, rel, k), precision_at(run, rel, k)
    assert 0.0 <= p <= hit and 0.0 <= rr <= hit and hit in (0.0, 1.0)
    assert (rr > 0) == (hit == 1.0)
    # moving a relevant id to the front never lowers the ranking metrics
    firsts = [d for d in run if d in rel]
    if firsts:
        better = [firsts[-1], *(d for d in run if d != firsts[-1])]
        assert average_precision_at(better, rel, 10) >= ap
        assert reciprocal_rank_at(better, rel, k) >= rr
    # the cut-off: nothing after rank k counts
    assert hit_at(run[:k], rel, k) == hit and precision_at(run[:k], rel, k) == p
