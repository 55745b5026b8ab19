"""Names and quoted terms of the user's question (metrics/facts.py ``check_sentences(...,
question=)``), and German common nouns after a capitalised determiner or a number: the false
names found in faithful answers of the read held-out sets."""

from __future__ import annotations

from pytest_mirage.metrics.facts import check_facts, check_sentences
from pytest_mirage.metrics.verdicts import sentence_verdicts
from pytest_mirage.suites.model import Passage


def _missing(answer: str, passages: list[Passage], lang: str, question: str = "") -> list[str]:
    return [c.text for s in check_sentences(answer, passages, lang, question=question)
            for c in s.checks if not c.supported and c.kind in ("name", "quote")]


JA = [Passage("p1", "宿泊プランは朝食付きで一泊8000円です。チェックインは15時からです。")]
EN = [Passage("p1", "The charger at Elm Street delivers 50 kW. Charging costs 0.40 euros per kWh.")]


def test_a_katakana_term_of_the_question_is_not_an_invented_name() -> None:
    answer = "申し訳ありませんが、資料にはペット同伴についての記載がありません。"
    assert _missing(answer, JA, "ja") == ["ペット"]
    assert _missing(answer, JA, "ja", question="ペットと一緒に泊まれますか？") == []


def test_a_name_of_the_question_restated_is_the_questions() -> None:
    answer = "The passages do not say whether a Tesla can use the Elm Street charger."
    assert _missing(answer, EN, "en") == ["tesla"]
    assert _missing(answer, EN, "en", question="Can I charge my Tesla there?") == []


def test_a_name_neither_the_question_nor_a_passage_states_stays_unsupported() -> None:
    answer = "The Oak Street charger delivers 50 kW."
    assert _missing(answer, EN, "en", question="How fast is the charger?") == ["oak"]
    # the sentence verdicts pass the question through
    v = sentence_verdicts(answer, EN, "en", "How fast is the Oak Street charger?")
    assert not [c for c in v[0].missing if c.kind == "name"]


DE = [Passage("p1", "Kinder unter 14 Jahren dürfen nur mit einer erwachsenen Begleitperson schwimmen. "
                    "Die Sauna kostet 5 Euro Aufpreis. Montags bleibt das Bad in Lindenau geschlossen.")]


def test_german_nouns_after_a_capitalised_determiner_or_a_number_are_not_names() -> None:
    for answer in ("Ihr Sohn braucht also eine erwachsene Begleitperson.",
                   "Die Texte nennen einen Aufpreis von 5 Euro für die Sauna.",
                   "Sie müssen an drei Dinge denken: Begleitperson, Aufpreis und Montag.",
                   "Für die Sauna zahlen Sie 5 Euro Aufpreis, also nichts Besonderes."):
        assert _missing(answer, DE, "de") == [], answer


def test_german_names_are_still_checked() -> None:
    assert _missing("Montags bleibt das Bad in Brunnhausen geschlossen.", DE, "de") == ["brunnhausen"]
    assert "keller" in _missing("Die Sauna leitet Frau Keller.", DE, "de")
    assert [c.text for c in check_facts("Das Bad in Lindenau ist montags zu.", DE, "de")
            if c.kind == "name"] == ["lindenau"]


def test_a_bare_reply_word_is_read_like_no() -> None:
    # "不能。" / "Ei voi." alone answer a yes/no question: held by any negation of the evidence,
    # not a claim about the verb 能 / voi
    zh = [Passage("p1", "本店不接受现金支付，只能刷卡。")]
    fi = [Passage("p1", "Palstalla ei saa käyttää kemiallisia torjunta-aineita.")]
    for answer, passages, lang in (("不能。", zh, "zh"), ("Ei voi.", fi, "fi"), ("Ei saa.", fi, "fi")):
        checks = check_facts(answer, passages, lang)
        assert [(c.kind, c.supported) for c in checks] == [("negation", True)], answer
        # with no negation in the passages, the reply is still unsupported
        none = check_facts(answer, [Passage("p1", "Vuokra on 40 euroa. 营业时间为9点到18点。")], lang)
        assert [(c.kind, c.supported) for c in none] == [("negation", False)], answer
    # a reply word followed by a clause: the clause is checked
    assert [c.text for c in check_facts("不能，押金是50元。", zh, "zh") if not c.supported] == ["50"]


def test_yoruba_number_words_above_ten() -> None:
    p = [Passage("p1", "Ìsọdọ̀tun yóò parí ní ọjọ́ kọkànlélọ́gbọ̀n oṣù Ẹrẹ̀nà. Ọmọ gbọ́dọ̀ wà láàárín ọmọ ọdún "
                       "mẹ́wàá sí ọmọ ọdún mẹ́tàlá. Ìdánwò yóò wáyé ní ọjọ́ kẹrìnlá oṣù Karùn-ún.")]
    ok = check_facts("Ọjọ́ orí: ọdún 10 sí 13. Ìdánwò: ọjọ́ 14. Ìsọdọ̀tun parí ní ọjọ́ 31 oṣù Ẹrẹ̀nà.", p, "yo")
    assert all(c.supported for c in ok if c.kind == "number") and len([c for c in ok if c.kind == "number"]) == 4
    bad = check_facts("Ìdánwò yóò wáyé ní ọjọ́ 15.", p, "yo")
    assert [(c.kind, c.text, c.supported) for c in bad if c.kind == "number"] == [("number", "15", False)]
