"""The per-language tokenizer, content units and sentence splitting."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_mirage.text.tokenize import (
    content_units,
    normalize,
    split_sentences,
    token_runs,
    tokenize,
)


@pytest.mark.parametrize(("text", "lang", "expected"), [
    ("Paris is the capital of France.", "en", ["paris", "is", "the", "capital", "of", "france"]),
    ("Straße, ÉCOLE!", "de", ["strasse", "école"]),
    ("नई दिल्ली भारत की राजधानी है।", "hi", ["नई", "दिल्ली", "भारत", "की", "राजधानी", "है"]),
    ("ఆంధ్రప్రదేశ్ రాజధాని", "te", ["ఆంధ్రప్రదేశ్", "రాజధాని"]),
    ("서울은 한국의 수도이다.", "ko", ["서", "울", "은", "한", "국", "의", "수", "도", "이", "다"]),
    ("東京は2010年にiPhoneを", "ja", ["東", "京", "は", "2010", "年", "に", "iphone", "を"]),
    ("ｺｰﾋｰ", "ja", ["コ", "ー", "ヒ", "ー"]),  # half-width katakana folded by NFKC
    ("北京是中国的首都。", "zh", ["北", "京", "是", "中", "国", "的", "首", "都"]),
    ("กรุงเทพ", "th", ["ก", "รุ", "ง", "เ", "ท", "พ"]),  # vowel sign stays with its consonant
    ("ភ្នំពេញ", "km", ["ភ្", "នំ", "ពេ", "ញ"]),
    ("Ọjọ́ wo ni wọ́n ṣe ìdíje?", "yo", ["ọjọ", "wo", "ni", "wọn", "ṣe", "idije"]),  # tones dropped
    ("كِتَابٌ أحمد ی", "ar", ["كتاب", "احمد", "ي"]),  # harakat dropped, letter variants unified
    ("", "en", []),
    ("... --- !!!", "en", []),
])
def test_tokenize(text: str, lang: str, expected: list[str]) -> None:
    assert tokenize(text, lang) == expected


def test_yoruba_tones_only_dropped_for_yoruba() -> None:
    assert tokenize("wọ́n", "yo") == ["wọn"]
    assert tokenize("café", "fr") == ["café"]


def test_runs_and_content_units() -> None:
    assert token_runs("北京 是 首都", "zh") == [["北", "京"], ["是"], ["首", "都"]]
    assert content_units("北京是首都", "zh") == {"北京", "京是", "是首", "首都"}
    assert content_units("Paris is Paris", "en") == {"paris", "is"}


def test_split_sentences_keeps_citations_with_their_sentence() -> None:
    text = "Paris is big [a#1]. It has 3.5 million people.[b#2][c#3] 東京は首都です。大阪も大きい [x]。 Last"
    assert split_sentences(text, "en") == [
        "Paris is big [a#1].", "It has 3.5 million people.[b#2][c#3]", "東京は首都です。", "大阪も大きい [x]。", "Last"]
    assert split_sentences("एक है। दो है।", "hi") == ["एक है।", "दो है।"]
    assert split_sentences("ទីមួយ។ទីពីរ។", "km") == ["ទីមួយ។", "ទីពីរ។"]
    assert split_sentences("กรุงเทพ เป็นเมืองหลวง [1] ของไทย", "th") == ["กรุงเทพ", "เป็นเมืองหลวง [1]", "ของไทย"]
    assert split_sentences("line one\nline two", "en") == ["line one", "line two"]


LANG = st.sampled_from(["en", "hi", "ja", "zh", "th", "km", "yo", "ar", "ru", "ko"])


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60), LANG)
def test_tokens_are_stable_under_retokenization(text: str, lang: str) -> None:
    tokens = tokenize(text, lang)
    assert all(tokens)
    assert tokenize(" ".join(tokens), lang) == tokens
    assert all(not any(ch.isspace() for ch in t) for t in tokens)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60), LANG)
def test_normalize_is_idempotent_on_tokens(text: str, lang: str) -> None:
    for token in tokenize(text, lang):
        assert normalize(token, lang) == token


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60) | st.lists(st.sampled_from(["北京", "กรุง", "ភ្នំ", "です", " ", "x", "1", "ั", "、"]),
                                         max_size=12).map("".join), LANG)
def test_content_units_are_words_and_pairs_of_run_units(text: str, lang: str) -> None:
    expected: set[str] = set()
    for run in token_runs(text, lang):
        expected.update(run if len(run) == 1 else (a + b for a, b in itertools.pairwise(run)))
    assert content_units(text, lang) == expected
