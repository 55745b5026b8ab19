"""The fact check's false alarms and misses of issue 20, each in its language: sentence-initial
capitals and list markers are not names or numbers; negation with morphology and with other words;
inflected number and month words; one invented fact among many moves ``support_facts``."""

from __future__ import annotations

import pytest

from pytest_mirage.metrics.base import Sample
from pytest_mirage.metrics.facts import check_facts, strip_list_markers
from pytest_mirage.metrics.verdicts import support_facts
from pytest_mirage.models.base import Answer
from pytest_mirage.suites.model import Case, Passage


def checks(answer: str, passage: str, lang: str) -> list[tuple[str, str, bool]]:
    return [(c.kind, c.text, c.supported) for c in check_facts(answer, (Passage("p1", passage),), lang)]


def unsupported(answer: str, passage: str, lang: str) -> list[str]:
    return [kind for kind, _text, ok in checks(answer, passage, lang) if not ok]


def sample(answer: str, passages: tuple[Passage, ...], lang: str = "en") -> Sample:
    case = Case(suite="t", id="1", lang=lang, question="?", passages=passages, relevant=(passages[0].id,), answers=())
    return Sample(case, Answer("1", "m", answer, answer=answer, citations=()), passages)


# ---------------------------------------------------------------- names and numbers that are not


@pytest.mark.parametrize(("lang", "answer", "passage"), [
    ("en", "Unable to answer based on given passages.", "The city has a mild climate."),
    ("en", "Based on the passages, the city is mild.", "The city is mild."),
    ("en", "Helping others is what the charity does.", "The charity is helping others."),
    ("sw", "Ukilinganisha na nchi nyingine, ni kubwa.", "Nchi hii ni kubwa kuliko nchi nyingine."),
    ("sw", "Saa nyingi hutumika shuleni.", "Wanafunzi hutumia saa nyingi shuleni."),
])
def test_sentence_initial_capitals_are_not_names(lang: str, answer: str, passage: str) -> None:
    assert unsupported(answer, passage, lang) == []


def test_a_sentence_initial_name_is_still_checked_when_the_context_shows_it_is_one() -> None:
    p1 = Passage("p1", "The capital of France is Paris.")
    p2 = Passage("p2", "Berlin is the capital of Germany, and Berlin is large.")
    # "Berlin" is in another passage than the cited one: a name taken from the wrong passage
    got = check_facts("Berlin is the capital of France [p1].", (p1, p2), "en")
    assert ("name", "berlin", False) in [(c.kind, c.text, c.supported) for c in got]
    # written as a name only can be, or followed by another capitalised word: a name
    assert unsupported("NASA launched it.", "The agency launched it.", "en") == ["name"]
    assert "name" in unsupported("New Delhi is the capital.", "The capital is Mumbai.", "en")


@pytest.mark.parametrize("answer", [
    "1. The city is mild.\n2. It rains often.",
    "2) The city is mild.\n3) It rains often.",
    "- The city is mild.\n- It rains often.",
    "The facts:\n1. The city is mild.\n2. It rains often.",
])
def test_list_markers_are_not_numbers(answer: str) -> None:
    assert unsupported(answer, "The city is mild. It rains often.", "en") == []


def test_list_markers_are_taken_off_line_starts_only() -> None:
    assert strip_list_markers("1. Paris\n2) Lyon\n- Nice") == "Paris\nLyon\nNice"
    assert strip_list_markers("1.5 million people") == "1.5 million people"
    assert strip_list_markers("In 2019. It grew.") == "In 2019. It grew."
    assert unsupported("1.5 million people live there.", "About 2 million people live there.", "en") == ["number"]


# ---------------------------------------------------------------- negation


def test_japanese_negation_with_another_verb_form_is_supported() -> None:
    passage = "このアプリは日本では利用できない。"
    assert unsupported("このアプリは使えない。", passage, "ja") == []
    # the affirmation drops the passage's negation (使える = 利用できる)
    assert "dropped_negation" in unsupported("このアプリは使える。", passage, "ja")


def test_korean_negation_with_a_synonym_verb() -> None:
    passage = "이 앱은 이용할 수 없다."
    assert unsupported("이 앱은 사용할 수 없다.", passage, "ko") == []
    assert "dropped_negation" in unsupported("이 앱은 사용할 수 있다.", passage, "ko")


def test_swahili_verb_prefix_negation() -> None:
    assert "dropped_negation" in unsupported("Wanafunzi wanapaswa kuvaa viatu.", "Wanafunzi hawapaswi kuvaa viatu.",
                                             "sw")
    assert "negation" in unsupported("Wanafunzi hawapaswi kuvaa viatu.", "Wanafunzi wanapaswa kuvaa viatu.", "sw")
    assert unsupported("Wanafunzi hawapaswi kuvaa viatu.", "Wanafunzi hawapaswi kuvaa viatu shuleni.", "sw") == []


def test_bengali_verb_suffix_negation() -> None:
    # -েনি / -য়নি glued to the verb (খেলেনি "did not play", হয়নি "did not happen")
    assert "dropped_negation" in unsupported("দলটি ফাইনালে খেলেছিল।", "দলটি ফাইনালে খেলেনি।", "bn")
    assert "negation" in unsupported("দলটি ফাইনালে খেলেনি।", "দলটি ফাইনালে খেলেছিল।", "bn")
    assert unsupported("দলটি ফাইনালে খেলেনি।", "দলটি ফাইনালে খেলেনি।", "bn") == []
    assert "negation" in unsupported("চুক্তিটি বাতিল হয়নি।", "চুক্তিটি বাতিল হয়েছে।", "bn")
    # words that merely end in নি are no negation (জানি "I know", চিনি "sugar")
    assert unsupported("আমি জানি তিনি চিনি পছন্দ করেন।", "আমি জানি তিনি চিনি পছন্দ করেন।", "bn") == []


def test_english_negation_stated_with_another_word() -> None:
    assert unsupported("The drug can be taken without food.", "The drug does not need to be taken with food.",
                       "en") == []


@pytest.mark.parametrize(("lang", "passage", "kept", "dropped"), [
    ("fi", "Kirjasto ei ole auki sunnuntaisin.", "Kirjasto ei ole auki sunnuntaisin.", "Kirjasto on auki sunnuntaisin."),
    ("hi", "यह पुल रात में नहीं खुलता है।", "यह पुल रात में नहीं खुलता।", "यह पुल रात में खुलता है।"),
    ("bn", "সেতুটি রাতে খোলা থাকে না।", "সেতুটি রাতে খোলা থাকে না।", "সেতুটি রাতে খোলা থাকে।"),
    ("ru", "Музей не работает по понедельникам.", "Музей не работает по понедельникам.",
     "Музей работает по понедельникам."),
    ("th", "ร้านนี้ไม่เปิดวันจันทร์", "ร้านนี้ไม่เปิดวันจันทร์", "ร้านนี้เปิดวันจันทร์"),
    ("km", "ហាងនេះមិនបើកនៅថ្ងៃច័ន្ទទេ។", "ហាងនេះមិនបើកនៅថ្ងៃច័ន្ទទេ។", "ហាងនេះបើកនៅថ្ងៃច័ន្ទ។"),
    ("zh", "这家店周一不营业。", "这家店周一不营业。", "这家店周一营业。"),
])
def test_negations_with_suffixes_and_particles(lang: str, passage: str, kept: str, dropped: str) -> None:
    assert unsupported(kept, passage, lang) == []
    assert "dropped_negation" in unsupported(dropped, passage, lang)


def test_a_sentence_sharing_only_the_words_around_a_negation_has_not_dropped_it() -> None:
    # (a clean answer on ARES NQ: the passage negates something else near the same words)
    passage = "Flying buttresses, unlike columns, do not stand against the walls; they transfer the thrust."
    answer = "The main purpose of the flying buttress is to counterbalance the thrust against the walls."
    assert "dropped_negation" not in unsupported(answer, passage, "en")


# ---------------------------------------------------------------- inflected numbers and months


@pytest.mark.parametrize(("lang", "answer", "passage"), [
    ("bn", "সভাটি জুনে হয়েছিল।", "সভাটি জুলাই মাসে হয়েছিল।"),
    ("bn", "পাঁচজন সদস্য উপস্থিত ছিলেন।", "সাতজন সদস্য উপস্থিত ছিলেন।"),
    ("hi", "पाँचों सदस्य उपस्थित थे।", "सात सदस्य उपस्थित थे।"),
    ("fi", "Kokous pidettiin kesäkuussa.", "Kokous pidettiin heinäkuussa."),
    ("fi", "Hän asui viidessä maassa.", "Hän asui kolmessa maassa."),
    ("ru", "Встреча прошла в июне.", "Встреча прошла в июле."),
    ("sw", "Wanafunzi watano walifika.", "Wanafunzi watatu walifika."),
])
def test_inflected_numbers_and_months_are_read(lang: str, answer: str, passage: str) -> None:
    assert unsupported(answer, passage, lang), (lang, checks(answer, passage, lang))
    assert unsupported(answer, answer, lang) == []


def test_bengali_inflected_month_supports_its_own_month() -> None:
    assert checks("সভাটি জুনে হয়েছিল।", "সভাটি জুন মাসে হয়েছিল।", "bn") == [("month", "6", True)]


# ---------------------------------------------------------------- aggregation


def test_one_invented_number_among_seven_facts_moves_support_facts_a_lot() -> None:
    passage = Passage("p1", "San Diego lies in California near Mexico. In 2020 it had 1,386,932 people, 70 miles of "
                            "beaches and 263 sunny days; Balboa Park opened in 1915.")
    clean = "San Diego, in California near Mexico, had 1,386,932 people in 2020, 70 miles of beaches and 263 sunny days."
    invented = clean[:-1] + ", and an average annual temperature of 61°F."
    assert support_facts(sample(clean, (passage,))) == 1.0
    value = support_facts(sample(invented, (passage,)))
    # (S / N) / (1 + U): a share alone would leave about 0.9
    assert value < 0.5
    n = len(check_facts(invented, (passage,), "en"))
    assert value == pytest.approx((n - 1) / n / 2)
