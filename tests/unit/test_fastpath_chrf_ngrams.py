"""The numpy chrF statistics (:func:`analysis.char_ngram_stats`) equal the Counter definition
(:func:`analysis.char_ngrams` and :func:`analysis.matches`, kept as the reference here), bit for bit,
on texts with many repeated n-grams, across scripts, and on the fallback for pairs with too many
distinct characters for 64-bit keys; and the character 3-grams without the variant equal the
per-word definition."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_mirage.metrics import analysis
from pytest_mirage.text.tokenize import normalize

# small alphabets (many repeated n-grams), several scripts, combining marks, astral characters
CHARS = st.sampled_from(list("aab") + list("abc") + list("нй") + list("दिल्ली") + list("北京") + ["\U0001f600", "\0", "x"])
LINE = st.lists(CHARS, max_size=40).map("".join)


def _counter_stats(hyp: str, ref: str, max_order: int) -> list[int]:
    out: list[int] = []
    for h, r in zip(analysis.char_ngrams(hyp, max_order), analysis.char_ngrams(ref, max_order), strict=True):
        out += [h.total() if r else 0, r.total(), analysis.matches(h, r)]
    return out


@settings(max_examples=500, deadline=None)
@given(LINE, LINE, st.integers(1, 6))
def test_char_ngram_stats_equal_the_counter_definition(hyp: str, ref: str, max_order: int) -> None:
    assert analysis.char_ngram_stats(hyp, ref, max_order) == _counter_stats(hyp, ref, max_order)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30), st.text(max_size=30))
def test_char_ngram_stats_on_any_text(hyp: str, ref: str) -> None:
    hyp, ref = "".join(hyp.split()), "".join(ref.split())
    assert analysis.char_ngram_stats(hyp, ref) == _counter_stats(hyp, ref, analysis.CHRF_ORDER)


def test_edge_cases_and_the_fallback() -> None:
    for hyp, ref in [("", ""), ("a", ""), ("", "a"), ("ab", "abcdefg"), ("aaaaaaaa", "aaa"), ("abab" * 5, "ba" * 7)]:
        assert analysis.char_ngram_stats(hyp, ref) == _counter_stats(hyp, ref, 6)
    # 2,000 distinct characters: 2001^6 > 2^63, counted by the Counter path
    many = "".join(map(chr, range(0x4E00, 0x4E00 + 2000)))
    hyp, ref = many[:1500] + many[:10], many[500:] + many[:7]
    assert analysis.char_ngram_stats(hyp, ref) == _counter_stats(hyp, ref, 6)
    # just under the limit (1447 distinct characters: 1448^6 < 2^63): numpy keys near 2^63
    near = "".join(map(chr, range(0x4E00, 0x4E00 + 1447)))
    assert 1448 ** 6 < 2 ** 63 <= 1449 ** 6
    hyp, ref = near + near[::-1], near[::-1] + near[:100]
    assert analysis.char_ngram_stats(hyp, ref) == _counter_stats(hyp, ref, 6)


def _char3_per_word(text: str, lang: str) -> Counter[str]:
    # QTT-RAG's definition without the variant: per word, a word shorter than 3 one gram
    grams: Counter[str] = Counter()
    for word in normalize(text, lang).translate(analysis._punct_table()).split():
        grams.update([word] if len(word) < 3 else [word[i:i + 3] for i in range(len(word) - 2)])
    return grams


C3CHARS = st.sampled_from(list("abcab aé\u0301ñ") + list("дом") + list("北京です") + list("กรุง") + list("서울") + [".", "!", "\t"])


@settings(max_examples=300, deadline=None)
@given(st.lists(C3CHARS, max_size=50).map("".join), st.sampled_from(["en", "ru", "zh", "th", "ko"]), st.booleans())
def test_char3_grams_without_the_variant_equal_the_per_word_definition(text: str, lang: str, hyp: bool) -> None:
    assert analysis.char3_grams(text, lang, hypothesis=hyp, variant=False) == _char3_per_word(text, lang)
