"""support_facts / faithfulness_lexical: number normalisation across scripts, number words in the
19 lexicon languages, months, names, quotes, negations, citation scoping, and the hard set."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_mirage.metrics.base import NotApplicable, Sample
from pytest_mirage.metrics.facts import (
    LEXICON_LANGS,
    check_facts,
    facts_of,
    lexicon,
    lexicon_path,
    norm,
    number_values,
)
from pytest_mirage.metrics.support import support_lexical
from pytest_mirage.metrics.verdicts import faithfulness_lexical, support_facts
from pytest_mirage.models.base import Answer
from pytest_mirage.suites.model import Case, Passage

ROOT = Path(__file__).resolve().parents[2]
HARD = ROOT / "fixtures" / "faithfulness"


def sample(answer: str, passages: tuple[Passage, ...], lang: str = "en") -> Sample:
    case = Case("s", "c1", lang, "q?", passages, (passages[0].id,) if passages else (), ())
    return Sample(case, Answer("c1", "m", answer, answer=answer), passages)


def values(text: str, lang: str) -> list[frozenset[float]]:
    return [n.values for n in facts_of(text, lang).numbers]


def unsupported(answer: str, passage: str, lang: str) -> list[str]:
    return [c.kind for c in check_facts(answer, (Passage("p1", passage),), lang) if not c.supported]


# ---------------------------------------------------------------- numbers


@pytest.mark.parametrize(("text", "expected"), [
    ("2,460", {2460.0, 2.46}), ("6.961", {6961.0, 6.961}), ("3,3", {3.3}), ("1.234,5", {1234.5}),
    ("1,234.5", {1234.5}), ("1 234", {1234.0}), ("12345", {12345.0}), ("1,234,567", {1234567.0}),
    ("1'000", {1000.0}), ("12,5", {12.5}),
])
def test_number_values_read_separators_both_ways(text: str, expected: set[float]) -> None:
    assert number_values(text) == frozenset(expected)


@pytest.mark.parametrize(("text", "lang"), [
    ("٦٦٥٠", "ar"), ("۶۶۵۰", "fa"), ("६६५०", "hi"), ("৬৬৫০", "bn"), ("౬౬౫౦", "te"), ("๖๖๕๐", "th"),
    ("៦៦៥០", "km"), ("６６５０", "ja"), ("6650", "en"),
])
def test_digits_of_every_script_are_one_number(text: str, lang: str) -> None:
    assert norm(text, lang) == "6650"
    assert values(f"x {text} y", lang) == [frozenset({6650.0})]


def test_arabic_decimal_and_thousands_marks() -> None:
    assert values("٣٫٥", "ar") == [frozenset({3.5})]
    assert values("٦٬٦٥٠", "ar") == [frozenset({6650.0})]


@pytest.mark.parametrize(("lang", "text", "value"), [
    ("en", "twenty-one", 21), ("en", "two thousand five hundred", 2500), ("en", "2.5 million", 2.5e6),
    ("en", "three hundred thousand", 300000), ("es", "veintiocho", 28), ("es", "dos mil", 2000),
    ("es", "3,3 millones", 3.3e6), ("es", "ciento veinte", 120), ("es", "mil millones", 1e9),
    ("de", "achtundzwanzig", 28), ("de", "zweitausendfünfhundert", 2500), ("de", "dreißig", 30),
    ("fr", "quatre-vingt-dix", 90), ("fr", "dix-sept", 17), ("fr", "deux mille", 2000),
    ("fi", "kaksikymmentäkahdeksan", 28), ("fi", "kahden", 2), ("fi", "kaksituhatta", 2000),
    ("id", "dua puluh lima", 25), ("id", "dua belas", 12), ("id", "tiga ribu", 3000),
    ("sw", "elfu mbili", 2000), ("sw", "mia tatu na hamsini", 350), ("sw", "elfu kumi na nne", 14000),
    ("sw", "milioni 2", 2e6), ("yo", "ẹgbẹ̀rún méjì", 2000), ("yo", "mẹ́ta", 3),
    ("ru", "двадцать пять", 25), ("ru", "семи", 7), ("ru", "три тысячи", 3000),
    ("ar", "ثلاثة وعشرون", 23), ("ar", "سبع", 7), ("ar", "ألفين", 2000),
    ("fa", "بیست و یک", 21), ("fa", "سه هزار", 3000),
    ("hi", "दो हज़ार", 2000), ("hi", "पच्चीस", 25), ("hi", "ढाई लाख", 250000),
    ("bn", "তিন হাজার", 3000), ("bn", "দুটি", 2), ("te", "రెండు వేల", 2000), ("te", "మూడు", 3),
    ("th", "สองพันห้าร้อย", 2500), ("th", "ยี่สิบเอ็ด", 21), ("th", "สามแสน", 300000),
    ("km", "ពីររយ", 200), ("km", "ដប់", 10), ("km", "ប្រាំមួយ", 6), ("km", "បីពាន់", 3000),
    ("ja", "二十四", 24), ("ja", "３万", 30000), ("ja", "1億2千万", 1.2e8),
    ("zh", "二十四", 24), ("zh", "三千万", 3e7), ("zh", "两百", 200),
    ("ko", "스물여덟", 28), ("ko", "3천만", 3e7),
])
def test_number_words_and_scales(lang: str, text: str, value: float) -> None:
    got = values(text, lang)
    assert len(got) == 1, got
    assert any(abs(v - value) < 1e-6 for v in got[0]), (got, value)


@pytest.mark.parametrize(("lang", "text"), [
    ("th", "เขาสามารถว่ายน้ำได้"), ("km", "នៅរដូវប្រាំង"), ("km", "រយៈពេលយូរ"), ("km", "បទចម្រៀងពីរោះ"),
    ("zh", "他十分高兴"), ("ja", "時間は十分ある"), ("en", "one of the largest"), ("zh", "一个人"),
    ("ko", "네, 맞습니다"),
])
def test_words_containing_number_words_are_not_numbers(lang: str, text: str) -> None:
    assert values(text, lang) == []


def test_every_lexicon_language_reads_its_own_two_and_three() -> None:
    # the cardinal 2 and 3 of each language, read through its own lexicon
    for lang in LEXICON_LANGS:
        words = {v: w for w, v in json.loads(lexicon_path(lang).read_text(encoding="utf-8"))["cardinals"].items()}
        for n in (2, 3):
            assert any(float(n) in vals for vals in values(f" {words[n]} ", lang)), (lang, words[n])


def test_issue_examples_number_words_are_checked() -> None:
    assert unsupported("Ina wanafunzi elfu tatu.", "Leo ina wanafunzi elfu mbili.", "sw") == ["number"]
    assert unsupported("Ina wanafunzi elfu mbili.", "Leo ina wanafunzi elfu mbili.", "sw") == []
    assert unsupported("ប្រារព្ធរយៈពេលដប់ថ្ងៃ។", "ពិធីប្រារព្ធរយៈពេលពីរថ្ងៃ។", "km") == ["number"]
    assert unsupported("ប្រារព្ធរយៈពេលពីរថ្ងៃ។", "ពិធីប្រារព្ធរយៈពេលពីរថ្ងៃ។", "km") == []
    assert unsupported("It has two moons.", "It has 2 moons.", "en") == []
    assert unsupported("Hay dos lunas.", "Tiene 3 lunas.", "es") == ["number"]
    assert unsupported("有二个", "有两个", "zh") == []


def test_digits_in_another_script_than_the_passage() -> None:
    assert unsupported("गंगा नदी लगभग 2525 किलोमीटर लंबी है।", "गंगा की लंबाई २५२५ किलोमीटर है।", "hi") == []
    assert unsupported("النيل 5650 كيلومترًا", "طول النيل ٦٦٥٠ كيلومترًا", "ar") == ["number"]


def test_rounded_large_numbers_are_supported_small_ones_exactly() -> None:
    assert unsupported("About 2.5 million people live there.", "The population is 2,483,000.", "en") == []
    assert unsupported("It opened in 2000.", "It opened in 1998.", "en") == ["number"]
    assert unsupported("About 3 million people.", "The population is 2,483,000.", "en") == ["number"]


# ---------------------------------------------------------------- dates and names


def test_months() -> None:
    passage = "The mission flew in December 1993."
    assert unsupported("It flew in March 1993.", passage, "en") == ["month"]
    assert unsupported("It flew in December 1993.", passage, "en") == []
    assert facts_of("You may go.", "en").months == ()  # modal verb, not the month
    assert unsupported("2012年3月22日に開業", "2012年5月22日に開業した。", "ja") == ["month"]
    assert unsupported("12 августа 1961 года", "12 апреля 1961 года", "ru") == ["month"]
    assert unsupported("am 23. Mai 1949", "am 23. Mai 1949 verkündet", "de") == []
    assert unsupported("on 12 March 1998", "signed on 1998-03-12", "en") == []


def test_names() -> None:
    passage = "It was published in 1958 by Heinemann in London."
    assert unsupported("It was published in London by Heinemann.", passage, "en") == []
    assert unsupported("It was published in London by Penguin.", passage, "en") == ["name"]
    assert facts_of("The cat sat.", "en").names == ()  # a sentence opener is not a name
    # inflected forms share a stem
    assert unsupported("По Транссибу поезд идёт неделю.", "Транссибирская магистраль длинная.", "ru") == []
    # Latin words and letter-digit tokens inside other scripts
    assert unsupported("ใช้ iPhone รุ่นใหม่", "ใช้ iPhone ได้", "th") == []
    assert unsupported("ใช้ Android รุ่นใหม่", "ใช้ iPhone ได้", "th") == ["name"]
    assert sorted(unsupported("Supports 5G.", "The phone supports 4G.", "en")) == ["name", "number"]


def test_quotes_and_katakana() -> None:
    assert unsupported("в журнале «Новый мир»", "в журнале «Москва»", "ru") == ["quote"]
    assert unsupported("в журнале «Москва»", "в журнале «Москва»", "ru") == []
    assert unsupported("《红楼梦》原名《金玉缘》", "《红楼梦》原名《石头记》", "zh") == ["quote"]
    assert unsupported("雑誌『ホトトギス』に連載", "雑誌『ホトトギス』に連載された", "ja") == []
    assert unsupported("コーヒーを飲む", "紅茶を飲む", "ja") == ["quote"]


# ---------------------------------------------------------------- negations


def test_added_and_dropped_negations() -> None:
    passage = "Unlike most spiders, the trapdoor spider does not build webs to catch its prey."
    assert unsupported("The trapdoor spider does not build webs.", passage, "en") == []
    assert unsupported("The trapdoor spider builds webs to catch its prey.", passage, "en") == ["dropped_negation"]
    assert unsupported("The trapdoor spider hunts from a burrow.", passage, "en") == []
    assert unsupported("The trapdoor spider does not eat insects.", "The trapdoor spider eats insects.",
                       "en") == ["negation"]
    assert unsupported("No.", passage, "en") == []
    assert unsupported("No.", "The spider builds webs.", "en") == ["negation"]


@pytest.mark.parametrize(("lang", "passage", "kept", "dropped"), [
    ("es", "El ajolote no completa la metamorfosis.", "El ajolote no completa la metamorfosis.",
     "El ajolote completa la metamorfosis."),
    ("ja", "ペンギンは空を飛ぶことはできない。", "ペンギンは空を飛ぶことはできません。", "ペンギンは空を飛ぶことができます。"),
    ("zh", "大熊猫并不以肉为主食。", "大熊猫并不以肉为主食。", "大熊猫以肉为主食。"),
    ("km", "ដំរីមិនអាចលោតបានទេ។", "ដំរីមិនអាចលោតបានទេ។", "ដំរីអាចលោតបាន។"),
    ("ko", "고래는 어류가 아니라 포유류이다.", "고래는 어류가 아닙니다.", "고래는 어류이며 포유류입니다."),
    ("ar", "الجمل لا يخزن الماء في سنامه.", "الجمل لا يخزن الماء في سنامه.", "الجمل يخزن الماء في سنامه."),
])
def test_negations_in_other_languages(lang: str, passage: str, kept: str, dropped: str) -> None:
    assert unsupported(kept, passage, lang) == []
    assert unsupported(dropped, passage, lang) == ["dropped_negation"]


def test_words_that_contain_a_negation_marker_are_not_negations() -> None:
    assert facts_of("他非常喜欢非洲和莫斯科的未来", "zh").negations == ()
    assert facts_of("ลูกค้าสามารถใช้บริการได้ไม่ว่าเวลาใด", "th").negations == ()


# ---------------------------------------------------------------- evidence and nulls


def test_a_sentence_is_checked_against_the_passages_it_cites() -> None:
    p1 = Passage("p1", "The deck is 2,460 metres long.")
    p2 = Passage("p2", "Another bridge is 2,640 metres long.")
    assert support_facts(sample("The deck is 2,640 metres long [p1].", (p1, p2))) == 0.0
    assert support_facts(sample("The deck is 2,640 metres long [p2].", (p1, p2))) == 1.0
    assert support_facts(sample("The deck is 2,640 metres long.", (p1, p2))) == 1.0  # uncited: all passages
    assert support_facts(sample("The deck is 2,460 metres long [p9].", (p1, p2))) == 0.0  # cites nothing real
    assert support_facts(sample("The deck is 2,460 metres long [1].", (p1, p2))) == 1.0  # [1] = first passage


def test_share_of_supported_facts_and_nulls() -> None:
    p = (Passage("p1", "In 1998, 40 people founded the club in Lisbon."),)
    # (S / N) / (1 + U): two of three supported, one unsupported (was the share 2/3, which dilutes it)
    assert support_facts(sample("In 1998, 40 people founded it in Porto [p1].", p)) == pytest.approx(2 / 3 / 2)
    with pytest.raises(NotApplicable, match="states no number"):
        support_facts(sample("they founded a club.", p))
    with pytest.raises(NotApplicable, match="no passages"):
        support_facts(sample("In 1998.", ()))


def test_faithfulness_lexical_is_the_mean_of_the_two_signals() -> None:
    from pytest_mirage.metrics.verdicts import support_sentences

    p = (Passage("p1", "The deck of the Millau Viaduct is 2,460 metres long."),)
    s = sample("The deck of the Millau Viaduct is 2,640 metres long [p1].", p)
    assert faithfulness_lexical(s) == pytest.approx((support_sentences(s) + support_facts(s)) / 2)
    plain = sample("the deck is long [p1].", p)  # states no fact: the sentence verdicts alone
    assert faithfulness_lexical(plain) == support_sentences(plain) == support_lexical(plain)


# ---------------------------------------------------------------- lexicon files


def test_lexicon_files_cover_the_19_languages_with_valid_entries() -> None:
    assert len(LEXICON_LANGS) == 19
    for lang in LEXICON_LANGS:
        data = json.loads(lexicon_path(lang).read_text(encoding="utf-8"))
        assert data["lang"] == lang
        assert {2, 3, 4, 5}.issubset(set(data["cardinals"].values())), lang
        assert all(isinstance(v, int | float) for v in [*data["cardinals"].values(), *data["ordinals"].values()])
        assert all(size in ("small", "large") and v >= 10 for v, size in data["scales"].values()), lang
        months = set(data["months"].values()) | ({1, 12} if data.get("month_suffixes") else set())
        assert {1, 12}.issubset(months), lang
        assert data.get("negations") or data.get("negation_substrings"), lang
        assert lexicon(lang).words, lang


# ---------------------------------------------------------------- the hard set


def _hard_rows() -> list[dict[str, object]]:
    return [json.loads(line) for f in sorted(HARD.glob("*.jsonl")) for line in f.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def _auc(pos: list[float], neg: list[float]) -> float:
    return sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / (len(pos) * len(neg))


def test_hard_set_shape() -> None:
    rows = _hard_rows()
    assert len(rows) >= 60
    langs = {r["lang"] for r in rows}
    assert len(langs) >= 8 and {"km", "th", "ja", "zh", "sw", "hi"} <= langs
    assert {r["edit"] for r in rows} == {"number", "date", "entity", "negation", "roles", "added_clause"}
    assert len({r["id"] for r in rows}) == len(rows)
    for r in rows:
        assert r["faithful"] != r["unfaithful"] and r["passages"], r["id"]


def test_hard_set_separates_fact_edits_without_a_model() -> None:
    facts: dict[str, list[float]] = {"faithful": [], "unfaithful": []}
    combined: dict[str, list[float]] = {"faithful": [], "unfaithful": []}
    target = [r for r in _hard_rows() if r["edit"] in ("number", "date", "entity", "negation")]
    for r in target:
        ps = tuple(Passage(p["id"], p["text"], p.get("title")) for p in r["passages"])  # type: ignore[union-attr]
        for key in ("faithful", "unfaithful"):
            s = sample(str(r[key]), ps, str(r["lang"]))
            try:
                value = support_facts(s)
            except NotApplicable:
                value = 1.0  # nothing contradicted
            facts[key].append(value)
            combined[key].append(faithfulness_lexical(s))
    assert _auc(facts["faithful"], facts["unfaithful"]) >= 0.85
    assert _auc(combined["faithful"], combined["unfaithful"]) >= 0.85
    # faithful answers are (almost) never flagged
    assert sum(v == 1.0 for v in facts["faithful"]) >= 0.95 * len(target)


# ---------------------------------------------------------------- scanning space-less scripts


def _nospace() -> Any:
    import regex

    from pytest_mirage.text.tokenize import NOSPACE_CLASS

    return regex.compile(rf"[{NOSPACE_CLASS}]", regex.V1)


def _scan_each_word(text: str, lang: str) -> list[tuple[int, int, str]]:
    """The reference the whole-text scan must equal: every word of the text scanned alone."""
    from pytest_mirage.metrics import facts

    lex = facts.lexicon(lang)
    out = []
    for m in facts._WORD.finditer(text):
        if _nospace().search(m.group()):
            out += [(t.start, t.end, t.text) for t in facts._scan(m.group(), m.start(), lex)]
    return out


@pytest.mark.parametrize("lang", ["th", "km", "zh", "ja"])
def test_whole_text_scan_equals_scanning_each_word(lang: str) -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from pytest_mirage.metrics import facts

    lex = facts.lexicon(lang)
    marks = ["\u17d2", "\u0e31", "\u0e48"]  # coeng, Thai vowel and tone marks
    # (number letters such as 〇 are scanned too, but no word holds them: see the test below)
    entries = [w for w in sorted({*lex.words, *lex.not_numbers}) if "\u3007" not in w]
    pieces = [*entries, *marks, " ", "-", "x", "ក", "ก", "中", "。", "5"]

    @settings(max_examples=300, deadline=None, derandomize=True)
    @given(st.lists(st.sampled_from(pieces), max_size=14))
    def check(parts: list[str]) -> None:
        text = "".join(parts)
        whole = [(t.start, t.end, t.text) for t in facts._scan(text, 0, lex)]
        assert whole == _scan_each_word(text, lang)

    check()


def test_scan_keeps_clusters_whole() -> None:
    from pytest_mirage.metrics import facts

    km = facts.lexicon("km")
    # a number word right after a coeng, or followed by a combining mark, is part of another cluster
    assert [t.text for t in facts._scan("ពីរថ្ងៃ", 0, km)] == ["ពីរ"]
    assert facts._scan("\u17d2ពីរ", 0, km) == []
    th = facts.lexicon("th")
    assert [t.text for t in facts._scan("สองวัน", 0, th)] == ["สอง"]
    assert facts._scan("สอง\u0e48", 0, th) == []


def test_plain_words_are_the_words_without_space_less_scripts() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from pytest_mirage.metrics import facts

    chars = ["a", "Z", "é", "\u0301", "-", "'", "’", " ", ".", "5", "ក", "\u17d2", "ก", "\u0e31", "中", "ー", "\u3005"]

    @settings(max_examples=500, deadline=None, derandomize=True)
    @given(st.lists(st.sampled_from(chars), max_size=14))
    def check(parts: list[str]) -> None:
        text = "".join(parts)
        expected = [m.span() for m in facts._WORD.finditer(text) if not _nospace().search(m.group())]
        assert [m.span() for m in facts._PLAIN_WORD.finditer(text)] == expected

    check()


def test_number_patterns_match_their_lookbehind_first_forms() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from pytest_mirage.metrics import facts

    plain = {  # the definitions, written the direct way
        facts._DATE_ISO: re.compile(r"(?<!\d)(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)"),
        facts._DATE_NUM: re.compile(r"(?<!\d)(\d{1,2})[./](\d{1,2})[./](\d{2,4})(?!\d)"),
        facts._NUMBER: re.compile(r"(?<!\d)(?:\d{1,3}(?:[ \u00a0\u202f]\d{3})+|\d+(?:[.,\u066b\u066c'’]\d+)*)(?!\d)"),
    }

    @settings(max_examples=1000, deadline=None, derandomize=True)
    @given(st.text(alphabet="0123456789-./, \u00a0\u202f'’\u066b\u066cx", max_size=16))
    def check(text: str) -> None:
        for fast, direct in plain.items():
            assert [(m.span(), m.groups()) for m in fast.finditer(text)] == \
                   [(m.span(), m.groups()) for m in direct.finditer(text)]

    check()


@pytest.mark.parametrize(("text", "lang", "expected"), [
    ("他生于二〇一九年。", "zh", [2019.0]),
    ("公司一九九八年成立。", "zh", [1998.0]),
    ("一千九百九十八年", "zh", [1998.0]),  # with scales: composed as before
    ("二十四", "zh", [24.0]),
    ("三四个人", "zh", [7.0]),  # two digits: "three or four", not read as 34
    ("二〇二〇年に開催された。", "ja", [2020.0]),
])
def test_years_read_digit_by_digit_in_chinese_and_japanese(text: str, lang: str, expected: list[float]) -> None:
    assert [sorted(v) for v in values(text, lang)] == [expected]


def test_a_year_in_characters_is_checked_against_digits() -> None:
    assert unsupported("公司成立于一九九八年。", "公司于1998年在北京成立。", "zh") == []
    assert unsupported("公司成立于一九九七年。", "公司于1998年在北京成立。", "zh") == ["number"]
    assert unsupported("大会は二〇二〇年に開催された。", "大会は2020年に開催された。", "ja") == []
    assert unsupported("大会は二〇二一年に開催された。", "大会は2020年に開催された。", "ja") == ["number"]


def test_a_passage_number_too_long_for_a_float_does_not_break_the_check() -> None:
    # 400 digits read as inf; an approximate answer number is compared with it without an error
    passage = Passage("p1", "The code is " + "7" * 400 + ". About 2,500,000 people live there.")
    checks = check_facts("About 2.5 million people live there [p1].", (passage,), "en")
    assert [(c.kind, c.supported) for c in checks] == [("number", True)]
    checks = check_facts("About 3.5 million people live there [p1].", (passage,), "en")
    assert [(c.kind, c.supported) for c in checks] == [("number", False)]
