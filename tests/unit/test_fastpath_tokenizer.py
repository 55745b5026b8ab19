"""The fast paths of the tokenizer give the values of its plain definitions.

* The stdlib ``re`` forms of the token, run and pair patterns (texts without astral characters)
  against the regex-module patterns they stand for: their classes hold the same code points of the
  BMP (exhaustively), and tokens, content units and unit kinds agree on random text mixing Latin,
  Cyrillic, Arabic, Devanagari, Thai, Khmer, CJK, kana and Korean with combining marks, unit-script
  marks at the start of runs, separators and astral characters (which take the regex path).
* ``normalize`` (cached, with an ASCII shortcut) against its definition, kept here.
"""

from __future__ import annotations

import re
import unicodedata

import regex  # type: ignore[import-untyped]
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_mirage.text import tokenize as tok
from pytest_mirage.text.tokenize import UNIT_CLASS

PIECES = [
    # Latin, with combining marks (NFKC composes some, not all)
    "a", "b", "Z", "é", "e\u0301", "\u0301", "\u0308", "\u0323", "ß", "İ", "ǰ", "ﬁ", "Ä",
    # Cyrillic, Greek, Arabic with harakat and tatweel, Persian letters
    "ц", "Ж", "й", "Σ", "ς", "ا", "\u064b", "\u0640", "ل", "ی", "ک", "أ",
    # Devanagari and Bengali: vowel signs and viramas are marks inside words
    "ब", "ि", "्", "क", "ं", "অ", "া",
    # Thai, Lao, Khmer, Myanmar: unit scripts whose marks (also at a run's start) stay in the unit
    "ก", "ุ", "่", "ั", "๏", "ກ", "ີ", "ຯ", "ក", "ា", "្", "ស", "ំ", "ះ", "។", "က", "ျ",
    # Han, kana, Hangul (and its tone mark), half-width kana, radicals
    "東", "京", "で", "す", "ー", "々", "〆", "・", "서", "울", "\u302e", "⺀", "ｶ", "ﾞ", "한",
    # digits, separators, punctuation
    "1", "٣", "१", " ", "\n", ".", "-", "[", "]", "^", "\\",
    # beyond the BMP: Han extension B, a mathematical letter (NFKC: "a"), an emoji, a variation
    # selector (a mark), Adlam (cased), a Brahmi sign
    "\U00020000", "\U0001d41a", "\U0001f600", "\U000e0100", "\U0001e900", "\U00011000",
]
TEXT = st.lists(st.sampled_from(PIECES), max_size=24).map("".join)
BMP_TEXT = st.lists(st.sampled_from([p for p in PIECES if ord(max(p)) < 0x10000]), max_size=24).map("".join)
LANGS = st.sampled_from(["km", "en", "ja", "yo", "ar", "th", "ko", "hi", "ru", "zh", "fa", "tr"])


def test_bmp_classes_hold_the_regex_classes_code_points() -> None:
    classes = [
        f"[{UNIT_CLASS}]",
        rf"[[{UNIT_CLASS}]--\p{{M}}]",
        rf"[[{UNIT_CLASS}]&&\p{{M}}]",
        r"\p{M}",
        rf"[[\p{{L}}\p{{N}}]--[{UNIT_CLASS}]]",
        rf"[[\p{{L}}\p{{N}}\p{{M}}]--[{UNIT_CLASS}]]",
    ]
    bmp = "".join(map(chr, range(0x10000)))
    for cls, ranges in zip(classes, tok._bmp_ranges(*classes), strict=True):
        expected = regex.findall(cls, bmp, flags=regex.V1)
        assert re.findall(f"[{ranges}]", bmp) == expected, cls
        assert expected  # no class is empty


def _plain_units(normalized: str) -> set[str]:
    return tok._regex_units(normalized)


@settings(max_examples=4000, deadline=None, derandomize=True)
@given(TEXT, LANGS)
def test_fast_units_tokens_and_kinds_are_the_regex_ones(text: str, lang: str) -> None:
    normalized = tok.normalize(text, lang)
    assert tok._normalized_units(normalized) == _plain_units(normalized)
    assert tok.content_units(text, lang) == _plain_units(normalized)
    assert tok.unit_kinds(text, lang) == tok._regex_unit_kinds(normalized)
    tok._tokens.cache_clear()
    assert list(tok._tokens(text, lang)) == tok._TOKEN_FLAT_RE.findall(normalized)


@settings(max_examples=3000, deadline=None, derandomize=True)
@given(BMP_TEXT)
def test_fast_patterns_on_unnormalised_bmp_text(text: str) -> None:
    # the re patterns themselves, on text no normalisation has touched (marks at the start of
    # runs and words, decomposed letters, half-width forms)
    fast = tok._bmp()
    assert tok._ASTRAL.search(text) is None
    assert tok._normalized_units(text) == _plain_units(text)
    assert fast.tokens.findall(text) == tok._TOKEN_FLAT_RE.findall(text)
    runs = tok._RUN_RE.findall(text)
    assert sum(1 for run, _ in runs if run and len(tok._UNIT_RE.findall(run)) == 1) == \
        sum(1 for single, _, _ in fast.segments.findall(text) if single)


def _plain_normalize(text: str, lang: str | None = None) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    if regex.search("[\u0600-\u06ff]", text):
        text = text.translate(tok._ARABIC_TABLE)
    if lang == "yo":
        text = unicodedata.normalize("NFC", unicodedata.normalize("NFD", text).translate(tok._YORUBA_TONES))
    return text


@settings(max_examples=3000, deadline=None, derandomize=True)
@given(TEXT, st.one_of(st.none(), LANGS, st.just("yo")))
def test_normalize_is_its_definition(text: str, lang: str | None) -> None:
    tok.normalize.cache_clear()
    assert tok.normalize(text, lang) == _plain_normalize(text, lang)
    assert tok.normalize(text, lang) == _plain_normalize(text, lang)  # from the cache


def test_normalize_of_ascii_is_its_definition() -> None:
    ascii_text = "".join(map(chr, range(128)))
    for lang in (None, "en", "yo", "ar", "tr", "km"):
        for ch in ascii_text:
            assert tok.normalize(ch, lang) == _plain_normalize(ch, lang)
        assert tok.normalize(ascii_text, lang) == _plain_normalize(ascii_text, lang)
