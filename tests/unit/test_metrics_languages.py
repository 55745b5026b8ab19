"""Every built-in metric, in all 19 languages of the bundled suites: a non-degenerate value on a
correct answer and a worse value on a wrong one (the same sentence with the wrong city, citing the
wrong passage; for the language metrics, the correct answer written in another language)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from pytest_mirage.metrics.base import Sample, builtin_registry
from pytest_mirage.metrics.builtin import METRICS
from pytest_mirage.models.base import Answer
from pytest_mirage.suites.model import Case, Passage


@dataclass(frozen=True)
class Lang:
    code: str
    capital: str  # "The capital of France is Paris."
    largest: str  # "It is the largest city in the country."
    people: str  # "About two million people live there."
    germany: str  # "Berlin is the capital of Germany."
    paris: str
    berlin: str


LANGS = [
    Lang("ar", "عاصمة فرنسا هي باريس.", "وهي أكبر مدينة في البلاد.", "يعيش فيها نحو مليوني شخص.",
         "برلين هي عاصمة ألمانيا.", "باريس", "برلين"),
    Lang("bn", "ফ্রান্সের রাজধানী প্যারিস।", "এটি দেশের বৃহত্তম শহর।", "সেখানে প্রায় বিশ লক্ষ মানুষ বাস করে।",
         "বার্লিন জার্মানির রাজধানী।", "প্যারিস", "বার্লিন"),
    Lang("de", "Die Hauptstadt von Frankreich ist Paris.", "Sie ist die größte Stadt des Landes.",
         "Dort leben etwa zwei Millionen Menschen.", "Berlin ist die Hauptstadt von Deutschland.", "Paris", "Berlin"),
    Lang("en", "The capital of France is Paris.", "It is the largest city in the country.",
         "About two million people live there.", "Berlin is the capital of Germany.", "Paris", "Berlin"),
    Lang("es", "La capital de Francia es París.", "Es la ciudad más grande del país.",
         "Allí viven unos dos millones de personas.", "Berlín es la capital de Alemania.", "París", "Berlín"),
    Lang("fa", "پایتخت فرانسه پاریس است.", "این بزرگ‌ترین شهر کشور است.", "حدود دو میلیون نفر در آنجا زندگی می‌کنند.",
         "برلین پایتخت آلمان است.", "پاریس", "برلین"),
    Lang("fi", "Ranskan pääkaupunki on Pariisi.", "Se on maan suurin kaupunki.",
         "Siellä asuu noin kaksi miljoonaa ihmistä.", "Berliini on Saksan pääkaupunki.", "Pariisi", "Berliini"),
    Lang("fr", "La capitale de la France est Paris.", "C'est la plus grande ville du pays.",
         "Environ deux millions de personnes y vivent.", "Berlin est la capitale de l'Allemagne.", "Paris", "Berlin"),
    Lang("hi", "फ़्रांस की राजधानी पेरिस है।", "यह देश का सबसे बड़ा शहर है।", "वहाँ लगभग बीस लाख लोग रहते हैं।",
         "बर्लिन जर्मनी की राजधानी है।", "पेरिस", "बर्लिन"),
    Lang("id", "Ibu kota Prancis adalah Paris.", "Kota ini merupakan kota terbesar di negara tersebut.",
         "Sekitar dua juta orang tinggal di sana.", "Berlin adalah ibu kota Jerman.", "Paris", "Berlin"),
    Lang("ja", "フランスの首都はパリです。", "それは国内で最も大きな都市です。", "そこには約二百万人が住んでいます。",
         "ベルリンはドイツの首都です。", "パリ", "ベルリン"),
    Lang("ko", "프랑스의 수도는 파리이다.", "그곳은 나라에서 가장 큰 도시이다.", "그곳에는 약 이백만 명이 살고 있다.",
         "베를린은 독일의 수도이다.", "파리", "베를린"),
    Lang("ru", "Столица Франции — Париж.", "Это крупнейший город страны.", "Там живут около двух миллионов человек.",
         "Берлин — столица Германии.", "Париж", "Берлин"),
    Lang("sw", "Mji mkuu wa Ufaransa ni Paris.", "Ni mji mkubwa zaidi nchini humo.",
         "Takriban watu milioni mbili wanaishi huko.", "Berlin ni mji mkuu wa Ujerumani.", "Paris", "Berlin"),
    Lang("te", "ఫ్రాన్స్ రాజధాని పారిస్.", "ఇది దేశంలోనే అతి పెద్ద నగరం.", "అక్కడ సుమారు ఇరవై లక్షల మంది నివసిస్తున్నారు.",
         "బెర్లిన్ జర్మనీ రాజధాని.", "పారిస్", "బెర్లిన్"),
    Lang("th", "เมืองหลวงของฝรั่งเศสคือปารีส", "เป็นเมืองที่ใหญ่ที่สุดในประเทศ", "มีผู้คนอาศัยอยู่ที่นั่นประมาณสองล้านคน",
         "เบอร์ลินเป็นเมืองหลวงของเยอรมนี", "ปารีส", "เบอร์ลิน"),
    Lang("yo", "Olú ìlú orílẹ̀-èdè Faransé ni Paris.", "Òun ni ìlú tí ó tóbi jùlọ ní orílẹ̀-èdè náà.",
         "Nǹkan bí mílíọ̀nù méjì ènìyàn ni ó ń gbé ibẹ̀.", "Berlin ni olú ìlú orílẹ̀-èdè Jámánì.", "Paris", "Berlin"),
    Lang("zh", "法国的首都是巴黎。", "它是该国最大的城市。", "那里大约有两百万人居住。", "柏林是德国的首都。", "巴黎", "柏林"),
    Lang("km", "រាជធានីរបស់ប្រទេសបារាំងគឺប៉ារីស។", "វាជាទីក្រុងធំជាងគេបំផុតក្នុងប្រទេស។",
         "មានមនុស្សប្រហែលពីរលាននាក់រស់នៅទីនោះ។", "ប៊ែកឡាំងជារាជធានីរបស់ប្រទេសអាល្លឺម៉ង់។", "ប៉ារីស", "ប៊ែកឡាំង"),
]
BY_CODE = {lang.code: lang for lang in LANGS}
REGISTRY = builtin_registry()
LANGUAGE_METRICS = {"language_match", "english_share"}
METRIC_NAMES = [m.name for m in METRICS]


def _join(lang: str, *sentences: str) -> str:
    sep = " " if lang not in ("zh", "ja") else ""
    return sep.join(sentences)


def _samples(lang: Lang) -> tuple[Sample, Sample, Sample]:
    sep = lambda *xs: _join(lang.code, *xs)  # noqa: E731
    p1 = Passage("fr#0", sep(lang.capital, lang.largest, lang.people), doc="fr")
    p2 = Passage("de#0", lang.germany, doc="de")
    p3 = Passage("xx#0", lang.people, doc="xx")
    case = Case(suite="t", id=f"{lang.code}-1", lang=lang.code, question="?", passages=(p1, p2, p3),
                relevant=("fr#0",), answers=(lang.capital,), relevant_docs=("fr",))
    ctx = (p1, p2, p3)
    good_text = sep(f"{lang.capital} [fr#0]", f"{lang.largest} [fr#0]")
    wrong_capital = lang.capital.replace(lang.paris, lang.berlin)
    assert wrong_capital != lang.capital
    bad_text = sep(f"{wrong_capital} [de#0]", f"{lang.largest} [de#0] [zz#9]")
    other = BY_CODE["fr" if lang.code == "en" else "en"]
    other_text = sep(f"{other.capital} [fr#0]", f"{other.largest} [fr#0]")

    def sample(text: str, cited: tuple[str, ...], invalid: tuple[str, ...], retrieved: tuple[str, ...]) -> Sample:
        answer = Answer(case.id, "m", text, answer=text, citations=cited, invalid_citations=invalid,
                        retrieved=retrieved)
        return Sample(case, answer, ctx, k=2, mode="retrieval")

    good = sample(good_text, ("fr#0",), (), ("fr#0", "de#0"))
    bad = sample(bad_text, ("de#0",), ("zz#9",), ("de#0", "xx#0"))
    other_lang = sample(other_text, ("fr#0",), (), ("fr#0", "de#0"))
    return good, bad, other_lang


@pytest.mark.parametrize("lang", LANGS, ids=[lang.code for lang in LANGS])
def test_every_metric_separates_correct_from_wrong(lang: Lang) -> None:
    good, bad, other_lang = _samples(lang)
    g = REGISTRY.compute(good, METRIC_NAMES)
    b = REGISTRY.compute(bad, METRIC_NAMES)
    o = REGISTRY.compute(other_lang, METRIC_NAMES)
    for name in METRIC_NAMES:
        if name == "support_lexical_uncited":  # every sentence cites: null by definition
            assert g.values[name] is None and b.values[name] is None
            continue
        if name == "english_share" and lang.code == "en":
            assert g.values[name] is None
            continue
        if name in ("truncated", "refusal"):  # generation flags (max_tokens hit; a refusal), not quality measures
            assert g.values[name] == b.values[name] == 0.0
            continue
        if name == "support_facts" and g.values[name] is None:  # null when the answer states no fact
            assert "states no number" in g.reasons[name]
            continue
        worse = o if name in LANGUAGE_METRICS else b
        gv, wv = g.values[name], worse.values[name]
        assert gv is not None, (name, g.reasons.get(name))
        assert wv is not None, (name, worse.reasons.get(name))
        if REGISTRY[name].higher_is_better:
            assert gv > 0.0, (name, gv)
            assert gv > wv, (name, gv, wv)
        else:
            assert wv > gv, (name, gv, wv)


@pytest.mark.parametrize("lang", LANGS, ids=[lang.code for lang in LANGS])
def test_correct_answer_is_recognised_in_its_language(lang: Lang) -> None:
    good, _, _ = _samples(lang)
    assert REGISTRY.compute(good, ["language_match"]).values["language_match"] >= 0.5
