"""``has_content_unit`` and ``count_content_units`` (the support metric's lookup of a sentence's
units in long passages) agree with membership in ``content_units`` on random text mixing every kind
of character the tokenizer treats differently: unit scripts with their marks and punctuation
(Khmer, Thai, Lao, Han, kana, Hangul with its tone mark, Han radicals), words of spaced scripts
(Latin, Cyrillic, Arabic with harakat, Devanagari) with combining marks, marks after unit
characters and at the start of a text, digits and separators. ``sentence_support`` agrees with its
plain definition (the unit sets of whole sentences and whole evidence texts)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_mirage.metrics.support import SentenceSupport, sentence_support
from pytest_mirage.prompts import find_citations, strip_citations
from pytest_mirage.suites.model import Passage
from pytest_mirage.text.tokenize import (
    OTHER,
    PAIR,
    SINGLE,
    WORD,
    _kind,
    _normalized_units,
    content_units,
    count_content_units,
    has_content_unit,
    has_mark,
    normalize,
    split_sentences,
    unit_kinds,
)

PIECES = ["។", "๏", "・", "〆", "ຯ", "ក", "ា", "្", "ស", "ំ", "ះ", "ก", "ุ", "่", "ั", "東", "京", "で", "す", "서", "울",
          "\u302e", "⺀", "ກ", "ີ", "a", "b", "é", "\u0301", "\u0308", "1", "٣", " ", "\n", ".", "-", "ब", "ि", "्",
          "ー", "々", "ц", "ж", "ا", "\u064b", "ل", "Ä", "ｶ", "ﾞ"]
TEXT = st.lists(st.sampled_from(PIECES), max_size=16).map("".join)
LANGS = st.sampled_from(["km", "en", "ja", "yo", "ar", "th", "ko", "hi", "ru", "zh"])


@settings(max_examples=3000, deadline=None, derandomize=True)
@given(TEXT, TEXT, LANGS)
def test_has_content_unit_is_membership_in_content_units(text: str, other: str, lang: str) -> None:
    units = content_units(text, lang)
    normalized = normalize(text, lang)
    memo: dict[str, frozenset[str]] = {}
    for unit in units | content_units(other, lang):
        assert has_content_unit(unit, normalized, memo) == (unit in units), (text, unit)
        assert has_content_unit(unit, normalized) == (unit in units), (text, unit)


@settings(max_examples=3000, deadline=None, derandomize=True)
@given(TEXT, LANGS)
def test_unit_kinds_split_content_units_by_kind(text: str, lang: str) -> None:
    kinds = unit_kinds(text, lang)
    groups = {WORD: kinds.words, SINGLE: kinds.singles, PAIR: kinds.pairs, OTHER: kinds.others}
    assert set().union(*groups.values()) == content_units(text, lang)
    assert len(kinds) == len(content_units(text, lang))  # disjoint
    for kind, group in groups.items():
        for unit in group:
            assert _kind(unit) == kind, (text, unit)


@settings(max_examples=3000, deadline=None, derandomize=True)
@given(TEXT, TEXT, LANGS)
def test_count_content_units_counts_the_members(text: str, other: str, lang: str) -> None:
    normalized = normalize(text, lang)
    units = content_units(text, lang)
    asked = unit_kinds(other, lang)
    expected = len(content_units(other, lang) & units)
    assert count_content_units(asked, normalized, has_mark(normalized), {}) == expected, (text, other)
    assert count_content_units(asked, normalized, has_mark(normalized)) == expected, (text, other)
    # has_mark only selects a faster path: True is always correct
    assert count_content_units(asked, normalized, True) == expected, (text, other)


def _plain_sentence_support(answer: str, passages: list[Passage], lang: str) -> list[SentenceSupport]:
    """The definition: every sentence's unit set against the unit set of its whole evidence."""
    ids = [p.id for p in passages]
    by_id = {p.id: p for p in passages}
    out = []
    for sentence in split_sentences(answer, lang):
        text = strip_citations(sentence).strip()
        units = content_units(text, lang)
        if not units:
            continue
        cited, invalid = find_citations(sentence, ids)
        if cited or not invalid:
            chosen = cited or ids
            evidence = "\n".join(normalize(f"{by_id[c].title}\n{by_id[c].text}" if by_id[c].title else by_id[c].text,
                                           lang) for c in chosen)
            covered = len(units & _normalized_units(evidence))
        else:
            covered = 0
        out.append(SentenceSupport(text, tuple(cited), tuple(invalid), covered / len(units)))
    return out


ANSWER_PIECES = [*PIECES, "[p1]", "[p2]", " [p2]", "[1]", "[2, p1]", "[zz]", ". ", "。", "\n", "? "]


@settings(max_examples=1500, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(ANSWER_PIECES), max_size=20).map("".join), TEXT, TEXT, TEXT, LANGS)
def test_sentence_support_is_its_plain_definition(answer: str, one: str, two: str, title: str, lang: str) -> None:
    passages = [Passage("p1", one, title=title), Passage("p2", two)]
    assert sentence_support(answer, passages, lang) == _plain_sentence_support(answer, passages, lang)
