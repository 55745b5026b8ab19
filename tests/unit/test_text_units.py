"""``has_content_unit`` (the support metric's lookup of a sentence's units in long passages) agrees
with membership in ``content_units`` on random text mixing every kind of character the tokenizer
treats differently: unit scripts with their marks and punctuation (Khmer, Thai, Han, kana, Hangul,
Lao), words of spaced scripts with combining marks, Arabic diacritics, digits and separators."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_mirage.text.tokenize import content_units, has_content_unit, normalize

PIECES = ["។", "๏", "・", "〆", "ຯ", "ក", "ា", "្", "ស", "ំ", "ះ", "ก", "ุ", "่", "東", "京", "で", "す", "서", "울",
          "a", "b", "é", "\u0301", "1", " ", "\n", ".", "-", "ब", "ि", "ー", "々", "ц", "ا", "\u064b", "Ä"]
TEXT = st.lists(st.sampled_from(PIECES), max_size=16).map("".join)


@settings(max_examples=1500, deadline=None)
@given(TEXT, TEXT, st.sampled_from(["km", "en", "ja", "yo", "ar"]))
def test_has_content_unit_is_membership_in_content_units(text: str, other: str, lang: str) -> None:
    units = content_units(text, lang)
    normalized = normalize(text, lang)
    memo: dict[str, frozenset[str]] = {}
    for unit in units | content_units(other, lang):
        assert has_content_unit(unit, normalized, memo) == (unit in units), (text, unit)
