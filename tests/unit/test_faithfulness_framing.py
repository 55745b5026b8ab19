"""Framing sentences (metrics/verdicts.py): refusals that say what the assistant did not find in
its own words (``self_words``, ``apology_words``), a sentence on what the sources do cover beside a
refusal, an opening that only announces the answer, a summary that restates it; and the judge's
order and ``displaced`` features across inflection."""

from __future__ import annotations

import pytest

from pytest_mirage.metrics.base import Sample, builtin_registry
from pytest_mirage.metrics.facts import LEXICON_LANGS, lexicon
from pytest_mirage.metrics.offline_judge import features
from pytest_mirage.metrics.verdicts import declines_by_absence, describes_sources, sentence_verdicts
from pytest_mirage.models.base import Answer
from pytest_mirage.suites.model import Case, Passage

REG = builtin_registry()
FEES = Passage("p1", "The workshop costs 40 euros per person. Fees are not refundable. Sessions start at 10:00 "
                     "on Saturdays and last two hours.")


def sample(answer: str, passages: tuple[Passage, ...], lang: str) -> Sample:
    case = Case(suite="t", id="1", lang=lang, question="?", passages=passages, relevant=(passages[0].id,), answers=())
    return Sample(case, Answer("1", "m", answer, answer=answer, citations=()), passages)


def test_every_lexicon_has_self_apology_and_summary_words() -> None:
    for lang in LEXICON_LANGS:
        lex = lexicon(lang)
        assert lex.self_words and lex.apology_words and lex.summary_words, lang


@pytest.mark.parametrize(("sentence", "lang"), [
    # the assistant speaks of itself next to a negation
    ("Eso no viene en el texto que me has pasado.", "es"),
    ("Je ne peux pas vous répondre sur ce point.", "fr"),
    ("我这边的资料里没有写到停车的事。", "zh"),
    ("ខ្ញុំមិនមានព័ត៌មានអំពីចំណតរថយន្តទេ។", "km"),
    ("నా దగ్గర ఉన్న సమాచారంలో పార్కింగ్ గురించి ఏమీ లేదు.", "te"),
    ("Tästä en löydä tietoa.", "fi"),
    # an apology with a word about the sources
    ("Zur Anreise steht in den Unterlagen leider nichts.", "de"),
    ("Sayangnya, soal parkir tidak disinggung dalam dokumen ini.", "id"),
])
def test_a_negated_sentence_in_the_assistants_own_voice_is_a_refusal(sentence: str, lang: str) -> None:
    assert [v.verdict for v in sentence_verdicts(sentence, (FEES,), lang)] == ["refusal"]


def test_a_negated_claim_with_an_apology_that_restates_a_passage_sentence_is_checked() -> None:
    # restating the passage's sentence, it is a claim (supported), not a refusal ...
    for claim in ("Unfortunately, fees are not refundable.", "I am afraid the fees are not refundable."):
        assert [v.verdict for v in sentence_verdicts(claim, (FEES,), "en")] == ["supported"]
    # ... and a negation the passage does not state stays unsupported
    refundable = Passage("p1", "Fees are refundable up to 14 days before the workshop.")
    vs = sentence_verdicts("Sorry, but I must tell you that fees are not refundable up to 14 days before.",
                           (refundable,), "en")
    assert [v.verdict for v in vs] == ["unsupported"]


def test_an_apology_alone_does_not_make_a_negated_sentence_a_refusal() -> None:
    # no word about the sources and no "I": a claim about the world
    assert not declines_by_absence("Unfortunately, parking is not available on site.", "en")
    assert [v.verdict for v in sentence_verdicts("Unfortunately, parking is not available on site.", (FEES,), "en")] \
        == ["unsupported"]


@pytest.mark.parametrize(("answer", "lang"), [
    ("I couldn't find anything about parking in the documents. The texts only describe the price and the "
     "opening times.", "en"),
    ("No encuentro nada sobre el aparcamiento en lo que me has pasado. Los textos solo mencionan el precio y "
     "el horario.", "es"),
    ("Увы, о парковке в этих текстах ничего не говорится. В них описаны только цены и расписание.", "ru"),
])
def test_what_the_sources_cover_beside_a_refusal_is_framing(answer: str, lang: str) -> None:
    vs = sentence_verdicts(answer, (FEES,), lang)
    assert [v.verdict for v in vs] == ["refusal", "no_content"]
    assert describes_sources(vs[1].text, lang)
    mv = REG.compute(sample(answer, (FEES,), lang), ["refusal", "faithfulness"])
    assert mv.values["refusal"] == 1.0 and mv.values["faithfulness"] is None


def test_a_sentence_on_the_sources_with_a_missing_fact_or_without_a_refusal_is_checked() -> None:
    # an invented price beside a refusal is a claim
    answer = "I couldn't find anything about parking in the documents. The texts only say that parking costs 7 euros."
    assert [v.verdict for v in sentence_verdicts(answer, (FEES,), "en")] == ["refusal", "unsupported"]
    # without a refusal, a sentence about the sources is an answer sentence like any other
    answer = "The workshop costs 40 euros per person. The texts also describe a free parking garage nearby."
    assert [v.verdict for v in sentence_verdicts(answer, (FEES,), "en")][1] == "unsupported"


LONG = Passage("p1", "Residents must clear snow from the pavement in front of their building by 8:00 on weekdays. "
                     "On Sundays the deadline is 10:00. Grit must be spread when the pavement is icy. "
                     "Snow may not be pushed onto the road.")


def test_an_opening_that_only_announces_the_answer_is_framing() -> None:
    answer = ("Based on the information you shared, there are a few things to keep in mind. Residents must clear "
              "the pavement by 8:00 on weekdays and by 10:00 on Sundays. Snow may not be pushed onto the road.")
    vs = sentence_verdicts(answer, (LONG,), "en")
    assert [v.verdict for v in vs] == ["no_content", "supported", "supported"]
    # alone, or after the answer, it is checked like any sentence
    assert [v.verdict for v in sentence_verdicts("Based on the information you shared, there are a few things to "
                                                 "keep in mind.", (LONG,), "en")] == ["unsupported"]
    later = ("Residents must clear the pavement by 8:00 on weekdays. Based on the information you shared, there "
             "are a few more things to keep in mind.")
    assert [v.verdict for v in sentence_verdicts(later, (LONG,), "en")] == ["supported", "unsupported"]


@pytest.mark.parametrize(("summary", "lang", "verdict"), [
    ("In short, be out early with a shovel and keep the road clear.", "en", "no_content"),
    ("Kurz gesagt: früh schaufeln und die Straße frei halten.", "de", "no_content"),
    # a summary with a fact no passage holds stays a claim
    ("In short, be out by 6:30 with a shovel.", "en", "unsupported"),
])
def test_a_summary_restates_the_answer_and_its_facts_are_checked(summary: str, lang: str, verdict: str) -> None:
    body = ("Residents must clear the pavement by 8:00 on weekdays and by 10:00 on Sundays. Snow may not be "
            "pushed onto the road. ")
    vs = sentence_verdicts(body + summary, (LONG,), lang)
    assert vs[-1].verdict == verdict


def test_order_features_read_swapped_roles_across_inflection() -> None:
    p = (Passage("p1", "В матче 1985 года Каспаров обыграл Карпова со счётом 13:11."),)
    same = features("В матче 1985 года Каспаров обыграл Карпова со счётом 13:11.", p, "ru")
    swapped = features("В матче 1985 года Карпов обыграл Каспарова со счётом 13:11.", p, "ru")
    assert same["swap_restores"] == 0.0 and swapped["swap_restores"] >= 1.0


def test_a_name_moved_from_another_passage_sentence_is_displaced() -> None:
    p = (Passage("p1", "The Summit Gondola runs from 8:30 to 16:15 and is operated by Alpvia. The Corrie chairlift "
                       "is operated by Nordlift and runs until 16:00."),)
    moved = features("The Summit Gondola runs from 8:30 to 16:15 and is operated by Nordlift.", p, "en")
    kept = features("The Summit Gondola runs from 8:30 to 16:15 and is operated by Alpvia.", p, "en")
    assert moved["displaced"] >= 1.0 and kept["displaced"] == 0.0
