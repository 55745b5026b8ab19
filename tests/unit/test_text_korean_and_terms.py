"""Korean particles (syllable tokens) and Latin technical terms in the script share."""

from __future__ import annotations

import pytest

from pytest_mirage.metrics.overlap import char3_recall_score, rouge_l_score, token_f1_score
from pytest_mirage.metrics.support import sentence_support
from pytest_mirage.suites.model import Passage
from pytest_mirage.text.langid import language_probability, without_latin_terms
from pytest_mirage.text.tokenize import content_units, tokenize


def test_hangul_is_tokenized_into_syllables() -> None:
    assert tokenize("서울입니다.", "ko") == ["서", "울", "입", "니", "다"]
    assert content_units("서울은 수도", "ko") == {"서울", "울은", "수도"}


@pytest.mark.parametrize("score", [token_f1_score, rouge_l_score, char3_recall_score])
def test_korean_particles_do_not_zero_overlap(score) -> None:  # type: ignore[no-untyped-def]
    assert score("서울입니다.", ["서울"], "ko") > 0.5
    assert score("부산입니다.", ["서울"], "ko") < score("서울입니다.", ["서울"], "ko")


def test_korean_support_with_other_endings() -> None:
    p = Passage("p1", "6·25 전쟁 정전 협정은 1953년 7월 27일 판문점에서 체결되었다. 협정에는 유엔군 사령관이 서명하였다.")
    right = "6·25 전쟁의 정전협정은 1953년 7월 27일 판문점에서 체결되었습니다 [p1]."
    wrong = "한라산은 제주도 중앙에 솟은 화산으로 남한에서 가장 높은 산입니다 [p1]."
    cov_right = sentence_support(right, [p], "ko")[0].coverage
    cov_wrong = sentence_support(wrong, [p], "ko")[0].coverage
    assert cov_right >= 0.7
    assert cov_right - cov_wrong >= 0.5


KHMER = "សូមប្រើ 4G SIM ហើយចុច USSD *123# ដើម្បីពិនិត្យល្បឿន 100 Mbps និង eSIM"


def test_latin_terms_are_neutral_in_khmer() -> None:
    assert language_probability(KHMER, "km") >= 0.9
    assert "SIM" not in without_latin_terms(KHMER) and "Mbps" not in without_latin_terms(KHMER)


def test_latin_in_parentheses_is_neutral() -> None:
    assert language_probability("서울(Seoul)입니다", "ko") == 1.0


@pytest.mark.parametrize("lang", ["km", "ko", "th"])
def test_english_sentence_still_scores_low(lang: str) -> None:
    assert language_probability("The SIM card can be activated by dialing the code on the phone.", lang) <= 0.1


def test_half_khmer_half_english_stays_mixed() -> None:
    text = ("ទីក្រុងភ្នំពេញគឺជារាជធានីនៃប្រទេសកម្ពុជា ហើយមានប្រជាជនច្រើន។ "
            "The capital city of Cambodia is Phnom Penh and it is large.")
    assert 0.3 <= language_probability(text, "km") <= 0.7


def test_all_capital_english_sentence_is_not_neutral() -> None:
    assert language_probability("THE CAPITAL OF KOREA IS SEOUL AND BUSAN 서울", "ko") <= 0.3
