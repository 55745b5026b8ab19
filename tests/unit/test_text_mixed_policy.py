"""One policy for mixed text, the same verdict in every script (docs/metrics.md, "Mixed text").

An answer passes (``language_match >= 0.5``) when the target language carries at least two thirds of
its running text, measured in English-word equivalents (letters per script / letters per English
word); technical terms (acronyms, codes, units, short Latin insertions, names, Latin words in
parentheses) are neutral. ``english_share`` is the English share of the same running text, so a
passing answer has ``english_share < 1/3`` and a failing one (when the rest is the target language)
``english_share > 1/3``.

Matrix: 8 languages (4 decided by script: th, km, ja, ko, zh; 2 by script and detector: hi, ar; 1
Latin-script language decided by detector per sentence: sw) x 5 kinds of text.
"""

from __future__ import annotations

import random

import pytest

from pytest_mirage.metrics import builtin_registry
from pytest_mirage.metrics.base import Sample
from pytest_mirage.models.base import Answer
from pytest_mirage.suites.model import Case

EN1 = "Please restart your phone and check the settings again."
EN_MORE = ("The network signal is weak in this area and calls may drop often. You can also reset the "
           "network settings from the menu of your phone.")

KINDS = ("target only", "a few technical terms", "many technical terms", "half English", "mostly English")
EXPECTED = {"target only": True, "a few technical terms": True, "many technical terms": True,
            "half English": False, "mostly English": False}

TEXTS: dict[str, dict[str, str]] = {
    "th": {
        "target only": "กรุณารีสตาร์ทโทรศัพท์ของคุณแล้วตรวจสอบการตั้งค่าอีกครั้ง สัญญาณเครือข่ายในพื้นที่นี้อ่อนมาก",
        "a few technical terms": "กรุณารีสตาร์ทโทรศัพท์ของคุณแล้วเปิด 4G ในการตั้งค่า สัญญาณ LTE ในพื้นที่นี้อ่อนมาก",
        "many technical terms": ("กรุณาเปิด WiFi และ Bluetooth แล้วตั้งค่า APN ใหม่ ตรวจสอบ SIM และ eSIM ว่ารองรับ 5G "
                                 "หรือ LTE ความเร็ว 100 Mbps และ router ของคุณ"),
        "half English": "กรุณารีสตาร์ทโทรศัพท์ของคุณแล้วตรวจสอบการตั้งค่าอีกครั้ง " + EN1,
        "mostly English": "กรุณารีสตาร์ทโทรศัพท์ " + EN1 + " " + EN_MORE,
    },
    "km": {
        "target only": "សូមចាប់ផ្តើមទូរស័ព្ទរបស់អ្នកឡើងវិញ ហើយពិនិត្យមើលការកំណត់ម្តងទៀត។ សញ្ញាបណ្តាញនៅតំបន់នេះខ្សោយណាស់។",
        "a few technical terms": "សូមចាប់ផ្តើមទូរស័ព្ទរបស់អ្នកឡើងវិញ ហើយបើក 4G នៅក្នុងការកំណត់។ សញ្ញា LTE នៅតំបន់នេះខ្សោយណាស់។",
        "many technical terms": ("សូមបើក WiFi និង Bluetooth ហើយកំណត់ APN ថ្មី។ ពិនិត្យ SIM និង eSIM ថាគាំទ្រ 5G ឬ LTE "
                                 "ល្បឿន 100 Mbps និង router របស់អ្នក។"),
        "half English": "សូមចាប់ផ្តើមទូរស័ព្ទរបស់អ្នកឡើងវិញ ហើយពិនិត្យមើលការកំណត់ម្តងទៀត។ " + EN1,
        "mostly English": "សូមចាប់ផ្តើមទូរស័ព្ទ។ " + EN1 + " " + EN_MORE,
    },
    "ja": {
        "target only": "携帯電話を再起動して、設定をもう一度確認してください。この地域ではネットワークの電波が弱いです。",
        "a few technical terms": "携帯電話を再起動して、設定で4Gをオンにしてください。この地域ではLTEの電波が弱いです。",
        "many technical terms": ("WiFiとBluetoothをオンにして、APNを設定し直してください。SIMとeSIMが5GやLTEに対応しているか、"
                                 "100 Mbpsの速度とrouterを確認してください。"),
        "half English": "携帯電話を再起動して、設定をもう一度確認してください。" + EN1,
        "mostly English": "再起動してください。" + EN1 + " " + EN_MORE,
    },
    "zh": {
        "target only": "请重新启动您的手机，然后再次检查设置。该地区的网络信号很弱。",
        "a few technical terms": "请重新启动您的手机，然后在设置中打开4G。该地区的LTE信号很弱。",
        "many technical terms": "请打开WiFi和Bluetooth，然后重新设置APN。检查SIM和eSIM是否支持5G或LTE，100 Mbps的速度和router是否正常。",
        "half English": "请重新启动您的手机，然后再次检查设置。" + EN1,
        "mostly English": "请重启手机。" + EN1 + " " + EN_MORE,
    },
    "ko": {
        "target only": "휴대폰을 다시 시작하고 설정을 다시 확인하세요. 이 지역은 네트워크 신호가 약합니다.",
        "a few technical terms": "휴대폰을 다시 시작하고 설정에서 4G를 켜세요. 이 지역은 LTE 신호가 약합니다.",
        "many technical terms": ("WiFi와 Bluetooth를 켜고 APN을 다시 설정하세요. SIM과 eSIM이 5G 또는 LTE를 지원하는지, "
                                 "100 Mbps 속도와 router를 확인하세요."),
        "half English": "휴대폰을 다시 시작하고 설정을 다시 확인하세요. " + EN1,
        "mostly English": "다시 시작하세요. " + EN1 + " " + EN_MORE,
    },
    "hi": {
        "target only": "कृपया अपना फ़ोन फिर से चालू करें और सेटिंग्स दोबारा जाँचें। इस क्षेत्र में नेटवर्क सिग्नल कमज़ोर है।",
        "a few technical terms": "कृपया अपना फ़ोन फिर से चालू करें और सेटिंग्स में 4G चालू करें। इस क्षेत्र में LTE सिग्नल कमज़ोर है।",
        "many technical terms": ("कृपया WiFi और Bluetooth चालू करें और APN फिर से सेट करें। जाँचें कि SIM और eSIM में 5G या "
                                 "LTE है, 100 Mbps की गति और router ठीक है।"),
        "half English": "कृपया अपना फ़ोन फिर से चालू करें और सेटिंग्स दोबारा जाँचें। " + EN1,
        "mostly English": "फ़ोन चालू करें। " + EN1 + " " + EN_MORE,
    },
    "ar": {
        "target only": "يرجى إعادة تشغيل هاتفك والتحقق من الإعدادات مرة أخرى. إشارة الشبكة ضعيفة في هذه المنطقة.",
        "a few technical terms": "يرجى إعادة تشغيل هاتفك وتفعيل 4G في الإعدادات. إشارة LTE ضعيفة في هذه المنطقة.",
        "many technical terms": ("يرجى تشغيل WiFi و Bluetooth وضبط APN من جديد. تحقق من أن SIM و eSIM يدعمان 5G أو LTE "
                                 "وسرعة 100 Mbps وجهاز router."),
        "half English": "يرجى إعادة تشغيل هاتفك والتحقق من الإعدادات مرة أخرى. " + EN1,
        "mostly English": "أعد تشغيل الهاتف. " + EN1 + " " + EN_MORE,
    },
    "sw": {
        "target only": ("Tafadhali zima na uwashe simu yako kisha uangalie mipangilio tena. Mtandao katika eneo "
                        "hili ni dhaifu sana."),
        "a few technical terms": ("Tafadhali zima na uwashe simu yako kisha uwashe 4G kwenye mipangilio. Mtandao wa LTE "
                                  "katika eneo hili ni dhaifu sana."),
        "many technical terms": ("Tafadhali washa WiFi na Bluetooth kisha weka APN upya. Hakikisha kwamba SIM na eSIM "
                                 "zinatumia 5G au LTE, kasi ya 100 Mbps na router yako."),
        "half English": "Tafadhali zima na uwashe simu yako kisha uangalie mipangilio tena. " + EN1,
        "mostly English": "Tafadhali zima simu. " + EN1 + " " + EN_MORE,
    },
}
REG = builtin_registry()


def _values(text: str, lang: str) -> dict[str, float | None]:
    case = Case(suite="s", id="m", lang=lang, question="?", passages=(), relevant=(), answers=())
    sample = Sample(case, Answer("m", "x", text, answer=text, citations=()), ())
    return dict(REG.compute(sample, ["language_match", "english_share"]).values)


def test_matrix_has_8_languages_and_5_kinds() -> None:
    assert len(TEXTS) >= 8 and {"th", "km", "ja", "hi", "sw"} <= set(TEXTS)
    assert all(set(cells) == set(KINDS) for cells in TEXTS.values())


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("lang", sorted(TEXTS))
def test_same_verdict_in_every_script(lang: str, kind: str) -> None:
    v = _values(TEXTS[lang][kind], lang)
    match, english = v["language_match"], v["english_share"]
    assert match is not None and english is not None
    assert (match >= 0.5) is EXPECTED[kind], (lang, kind, match, english)
    # english_share is consistent with the verdict: the English share of the same running text
    if EXPECTED[kind]:
        assert english < 1 / 3, (lang, kind, english)
    else:
        assert english > 1 / 3, (lang, kind, english)
    if kind in ("target only", "a few technical terms", "many technical terms"):
        assert english == 0.0


# ---------------------------------------------------------------- script-only gibberish


def _gibberish(first: int, last: int, n: int, seed: int) -> str:
    rng = random.Random(seed)
    chars = [chr(c) for c in range(first, last + 1)]
    return " ".join("".join(rng.choice(chars) for _ in range(rng.randint(3, 8))) for _ in range(n))


@pytest.mark.parametrize(("lang", "first", "last"), [
    ("km", 0x1780, 0x17D2), ("th", 0x0E01, 0x0E4E), ("te", 0x0C05, 0x0C4D), ("ko", 0xAC00, 0xD7A3),
])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_characters_of_the_script_fail(lang: str, first: int, last: int, seed: int) -> None:
    v = _values(_gibberish(first, last, 10, seed), lang)["language_match"]
    assert v is not None and v < 0.5


@pytest.mark.parametrize(("lang", "text"), [
    ("km", TEXTS["km"]["target only"]), ("th", TEXTS["th"]["target only"]), ("ko", TEXTS["ko"]["target only"]),
    ("te", "ఫ్రాన్స్ రాజధాని పారిస్. ఇది దేశంలోనే అతి పెద్ద నగరం. అక్కడ సుమారు ఇరవై లక్షల మంది నివసిస్తున్నారు."),
])
def test_real_text_of_the_script_passes(lang: str, text: str) -> None:
    assert _values(text, lang)["language_match"] == 1.0
