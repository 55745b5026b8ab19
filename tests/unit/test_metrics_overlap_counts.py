"""The character 3-grams (one Counter for a text without a unit script, the normalised text shared
with chrF) equal the per-word, per-segment definition, on many texts across scripts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_mirage.metrics import analysis
from pytest_mirage.text.tokenize import normalize

# small alphabets (many repeated n-grams) from several scripts, combining marks included
CHARS = st.sampled_from(list("abcab aé\u0301ñ") + list("нейа") + list("दिल्ली") + list("北京東京です")
                        + list("กรุงเทพ") + list("ភ្នំពេញ") + list("서울입니다") + list("كتاب") + ["\u3000", "\t", ".", "!"])
TEXT = st.lists(CHARS, max_size=60).map("".join)


def _add_grams(grams: Counter[str], units: Sequence[str]) -> None:
    if len(units) < 3:
        grams["".join(units)] += 1
    else:
        grams.update(map("".join, zip(units, units[1:], units[2:], strict=False)))


def _char3_by_segment(text: str, lang: str, hypothesis: bool) -> Counter[str]:
    # the per-word, per-segment definition (every word through the segment regex)
    grams: Counter[str] = Counter()
    for word in normalize(text, lang).translate(analysis._punct_table()).split():
        for m in analysis._SEGMENT_RE.finditer(word):
            if m.lastgroup == "other":
                _add_grams(grams, m.group())
                continue
            units = analysis._UNIT_RE.findall(m.group())
            _add_grams(grams, units)
            if hypothesis and len(units) > 1:
                grams.update(units)
                if len(units) > 2:
                    grams.update(map(str.__add__, units, units[1:]))
    return grams


@settings(max_examples=300, deadline=None)
@given(TEXT, st.sampled_from(["en", "ru", "hi", "yo", "ar", "zh", "th", "km", "ko"]), st.booleans())
def test_char3_grams_equal_the_segment_definition(text: str, lang: str, hypothesis: bool) -> None:
    expected = _char3_by_segment(text, lang, hypothesis)
    assert analysis.char3_grams(text, lang, hypothesis=hypothesis) == expected
    assert analysis.TextAnalysis(text, lang, hypothesis=hypothesis).char3 == expected
