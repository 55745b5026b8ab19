"""Two false alarms of the number check on faithful answers (issue 20), each in its language:

* a time of day said on another clock than the passage's ("晚上10点" for 22:00, "9 pm" for 21:00,
  Thai "สามทุ่ม" for 21.00, Swahili "saa nne" for 10:00, German "20.30 Uhr" for "20:30");
* a total the answer computes from numbers written with the language's thousands mark ("25,000원"
  + "40,000원" = "65,000원"; "Rp5.000" x "empat" from the question = "Rp20.000"), or from a total
  it computed before (4 x 50 = 200, + 15 = 215).

A wrong hour, a duration that only shares digits with a time, and a wrong total stay unsupported."""

from __future__ import annotations

import pytest

from pytest_mirage.metrics.facts import check_facts, check_sentences, stated_values
from pytest_mirage.suites.model import Passage


def numbers(answer: str, passage: str, lang: str) -> list[tuple[str, bool]]:
    return [(c.text, c.supported) for c in check_facts(answer, (Passage("p1", passage),), lang) if c.kind == "number"]


def unsupported(answer: str, passage: str, lang: str, question: str = "") -> list[str]:
    asked = stated_values(question, lang) if question else frozenset()
    out = check_sentences(answer, (Passage("p1", passage),), lang, asked, question)
    return [c.text for s in out for c in s.checks if c.kind == "number" and not c.supported]


# ---------------------------------------------------------------- clock times


@pytest.mark.parametrize(("lang", "answer", "passage"), [
    ("zh", "施工只能安排在工作日的上午8点半到12点和下午2点到6点。", "装修施工只允许在工作日8:30至12:00和14:00至18:00进行。"),
    ("zh", "营业时间：每天上午10点到晚上11点", "营业时间为每天10:00至23:00。"),
    ("en", "The shop closes at 9 pm.", "Opening hours: 10:00-21:00."),
    ("en", "The café opens at 2 pm.", "The café opens at 14:00."),
    ("en", "The café opens at 14:00.", "The café opens at 2 pm."),
    ("th", "เปิดทุกวันตั้งแต่สิบโมงเช้าถึงสามทุ่ม", "เปิดทุกวันเวลา 10.00–21.00 น."),
    ("sw", "Ofisi inafunguliwa saa nne asubuhi.", "Ofisi inafunguliwa kuanzia 10:00."),
    ("ru", "Шуметь нельзя после одиннадцати вечера.", "Тишина с 23:00 до 7:00."),
    ("de", "Der Laden schließt um 20.30 Uhr.", "Öffnungszeiten: 10:00 bis 20:30 Uhr."),
    ("fi", "Sauna on auki klo 8 illalla asti.", "Sauna on avoinna klo 20.00 asti."),
    ("ja", "受付は午後2時までです。", "受付時間は14:00までです。"),
    ("ko", "오후 2시까지 접수합니다.", "접수는 14:00까지입니다."),
])
def test_a_time_of_day_on_another_clock_is_supported(lang: str, answer: str, passage: str) -> None:
    assert [t for t, ok in numbers(answer, passage, lang) if not ok] == []


@pytest.mark.parametrize(("lang", "answer", "passage", "wrong"), [
    ("en", "The shop closes at 8 pm.", "Opening hours: 10:00-21:00.", "8"),
    ("zh", "每晚9点以后不能使用电钻。", "每天22:00至次日7:00为安静时段，禁止使用电钻。", "9"),
    ("th", "ร้านเปิดถึงสี่ทุ่ม", "ร้านเปิดเวลา 10.00–21.00 น.", "สี่"),
    # a duration is not an hour: "10 days" against 22:00
    ("es", "La receta debe haberse emitido en los últimos diez días.", "Entre las 22:00 y las 9:00 se cobra un suplemento.",
     "diez"),
])
def test_a_wrong_hour_or_a_duration_stays_unsupported(lang: str, answer: str, passage: str, wrong: str) -> None:
    assert (wrong, False) in numbers(answer, passage, lang)


def test_the_minutes_of_a_full_hour_are_no_fact_and_a_price_stays_a_decimal() -> None:
    assert numbers("The café opens at 14:00.", "The café opens at 2 pm.", "en") == [("14", True)]
    assert numbers("It costs 14.50 euros.", "The price is 14.50 euros.", "en") == [("14.50", True)]
    assert numbers("It costs 14.50 euros.", "The price is 14 euros.", "en") == [("14.50", False)]


# ---------------------------------------------------------------- totals


def test_a_total_of_numbers_with_a_thousands_comma_is_supported_in_korean() -> None:
    passage = "번역료는 A4 한 장에 25,000원입니다. 공증 수수료는 문서 한 건당 40,000원입니다."
    ok = "번역료 25,000원에 공증 수수료 40,000원이 붙어 모두 65,000원이 듭니다."
    assert unsupported(ok, passage, "ko") == []
    assert unsupported(ok.replace("65,000", "66,000"), passage, "ko") == ["66,000"]


def test_a_product_with_the_questions_number_and_a_thousands_dot_is_supported_in_indonesian() -> None:
    passage = "Tarif parkir mobil Rp5.000 per jam."
    question = "Berapa biaya parkir mobil selama empat jam?"
    ok = "Tarif untuk mobil Rp5.000 per jam, jadi untuk empat jam biayanya Rp20.000."
    assert unsupported(ok, passage, "id", question) == []
    assert unsupported(ok.replace("Rp20.000", "Rp25.000"), passage, "id", question) == ["25.000"]


def test_a_total_computed_from_a_computed_total_is_supported() -> None:
    passage = "The rate is 4 dollars per km. A booking fee of 15 dollars applies. Trips go up to 50 km."
    ok = "At 4 dollars a km, 50 km costs 200 dollars, and with the 15-dollar fee you pay 215 dollars."
    assert unsupported(ok, passage, "en") == []
    assert unsupported(ok.replace("215", "225"), passage, "en") == ["225"]
