"""The fast paths of ``pytest_mirage.text.langid`` equal the straightforward definitions they replace
(kept here as the reference)."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from pathlib import Path

import pytest
import regex  # type: ignore[import-untyped]
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_mirage.text import langid

# characters that exercise every branch: several scripts, marks, digits, capitals, citation markers,
# format labels, URL and e-mail pieces, parentheses, and characters that NFKC or lower() expand
_ALPHABET = (
    "abcXYZ Ééİßǅĳẞſ 0123456789 ²½Ⅻ ,.;:!?()[]#@/_-'’ \n\t"
    "កខគឃងាិីុូេៃ់៉្ "  # Khmer letters and marks
    "한국어입니다 ㄱㅏ "  # Hangul syllables and jamo
    "ภาษาไทย่้ "  # Thai
    "తెలుగు "  # Telugu
    "日本語のカタカナ中文 "  # Han and kana
    "ﷺ㎒ｱＡ "  # NFKC expands these
    "Ⓐ"  # uppercase but not a letter
)
_PIECES = ("https://x.org/a", "www.example.com", "a@b.co", "### Reason:", "## answer", "[1]", "[2, 3]",
           "SIM", "eSIM", "4G", "USSD", "Albert Einstein", "(Seoul)", "the cat sat on the mat")
texts = st.lists(st.one_of(st.text(alphabet=_ALPHABET, max_size=30), st.sampled_from(_PIECES)),
                 max_size=12).map(" ".join)


def _script_counts_reference(text: str) -> Counter[str]:
    counts: Counter[str] = Counter()
    for ch in text:
        s = langid.script_of(ch)
        if s is not None:
            counts[s] += 1
    return counts


_CLEAN_RES = (
    re.compile(r"\s*\[[^\[\]\n]{1,400}\]"),
    re.compile(r"#{1,3}\s*(?:reason|answer)\s*:?\s*", re.I),
    re.compile(r"https?://\S+|www\.\S+|\S+@\S+\.\w+"),
)


def _clean_text_reference(text: str) -> str:
    text = unicodedata.normalize("NFKC", langid.sample_text(text))
    for pat in _CLEAN_RES:
        text = pat.sub("", text)
    text = " ".join(text.split())
    if len(text) > langid.SAMPLE_CHARS:
        text = " ".join(langid.sample_text(text).split())
    letters = [ch for ch in text if ch.isalpha()]
    if letters and sum(ch.isupper() for ch in letters) > 0.8 * len(letters):
        text = text.lower()
    return text


def _plausibility_grams_reference(text: str, lang: str) -> list[str]:
    scripts = langid.LANG_SCRIPTS.get(lang, frozenset())
    runs = regex.findall(r"[\p{L}\p{M}]+", text)
    grams: list[str] = []
    for run in runs:
        chars = [c for c in run if langid.script_of(c) in scripts or (unicodedata.category(c)[0] == "M")]
        if lang == "ko":
            grams.extend(c for c in chars if langid.script_of(c) == "HANGUL")
        else:
            grams.extend(map(str.__add__, chars, chars[1:]))
    return grams


@settings(max_examples=400, deadline=None)
@given(texts)
def test_script_counts_equal_the_per_character_loop_in_the_same_order(text: str) -> None:
    fast, ref = langid.script_counts(text), _script_counts_reference(text)
    assert list(fast.items()) == list(ref.items())  # same counts, same order (float sums downstream)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_clean_text_and_analyse_equal_the_straightforward_form(text: str) -> None:
    ref = _clean_text_reference(text)
    assert langid.clean_text(text) == ref
    clean, counts = langid._clean(text)
    assert clean == ref
    assert list(counts.items()) == list(Counter(ref).items())
    assert list(langid._script_counts_of(counts).items()) == list(_script_counts_reference(ref).items())


def test_clean_text_removes_markers_labels_and_urls_as_before() -> None:
    for text in ("Paris [1] is ### Reason: big https://x.org/a www.y.com a@b.co", "SIM [2] USSD", "[]", "#",
                 "ＡＢＣ ｄｅｆ [３]"):
        assert langid.clean_text(text) == _clean_text_reference(text)


@settings(max_examples=400, deadline=None)
@given(texts, st.sampled_from(("km", "ko", "th", "te", "ja", "en", "xx")))
def test_plausibility_grams_equal_the_per_character_filter(text: str, lang: str) -> None:
    assert langid.plausibility_grams(text, lang) == _plausibility_grams_reference(text, lang)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_latin_runs_computed_once_give_the_same_running_text(text: str) -> None:
    runs = langid._latin_runs(text)
    spans = langid._neutral_spans(text, runs)
    assert spans == langid._neutral_spans(text)
    assert langid._without_spans(text, spans) == langid.without_latin_terms(text)
    assert langid._latin_running_text(text, runs, spans) == langid._latin_running_text(text)
    if "LATIN" not in langid.script_counts(text):  # assess skips the Latin analysis then
        assert spans == [] and langid.without_latin_terms(text) == text


def _without_names_reference(text: str) -> str:
    out, last = [], 0
    for m in langid._NAME_TOKEN_RE.finditer(text):
        tok = m.group()
        letters = [c for c in tok if c.isalpha()]
        drop = (any(c.isdigit() for c in tok)
                or (len(letters) >= 2 and (tok.isupper() or any(c.isupper() for c in letters[1:])))
                or (letters[:1] != [] and letters[0].isupper()
                    and not langid._SENTENCE_START_RE.search(text[:m.start()])))
        if drop:
            out.append(text[last:m.start()])
            last = m.end()
    out.append(text[last:])
    return " ".join("".join(out).split())


@settings(max_examples=400, deadline=None)
@given(texts)
def test_without_names_equals_the_token_by_token_form(text: str) -> None:
    assert langid.without_names(text) == _without_names_reference(text)


def test_no_character_is_both_a_letter_and_a_digit_nor_lower_and_upper() -> None:
    # what the lowercase-word fast path of without_names relies on (checked on every code point)
    for i in range(0x110000):
        c = chr(i)
        assert not (c.isalpha() and c.isdigit()), hex(i)
        assert not (c.islower() and c.isupper()), hex(i)


# ---------------------------------------------------------------- detector calls skipped

_FIXTURE = Path(__file__).parents[2] / "fixtures" / "langid" / "miracl-dev-questions.tsv"


def _questions() -> list[tuple[str, str]]:
    rows = _FIXTURE.read_text(encoding="utf-8").splitlines()[1:]
    return [(lang, q) for lang, _, q in (row.split("\t", 2) for row in rows)]


@pytest.mark.parametrize("lang", [lang for lang, cfg in langid.calibration()["detection"].items()
                                  if len(cfg["detectors"]) > 1])
def test_sentences_that_surely_pass_do_pass(lang: str) -> None:
    # _surely_passes lets _sentence_is_english skip the detectors other than fastText: wherever it
    # says yes, the full detection score is >= 0.5 (every language's questions, alone and in pairs)
    qs = [q for _, q in _questions()]
    texts = qs + [" ".join(qs[i:i + 2]) for i in range(0, len(qs), 7)]
    hits = 0
    for text in texts:
        if langid._surely_passes(text, lang):
            hits += 1
            assert langid.detection_score(text, lang)[0] >= 0.5, text
    if lang != "yo":  # fastText rarely gives Yoruba the mass the bound needs: no shortcut there
        assert hits > 0  # the shortcut is exercised


def test_the_fasttext_memo_hands_out_copies_of_the_right_text() -> None:
    a, b = "Habari ya asubuhi rafiki yangu mpendwa", "Good morning my dear friend, how are you"
    first = langid._fasttext_dist(a)
    first["xx"] = 1.0  # a caller's change does not reach the memo
    assert "xx" not in langid._fasttext_dist(a)
    assert langid._fasttext_dist(b) != langid._fasttext_dist(a)
    assert langid._fasttext_dist(b) == langid._fasttext_dist(b + "")
