"""The offline faithfulness judge at run time: features, the shipped model, the metric.

``faithfulness_judge`` is the probability that an answer is faithful to its passages, from a
logistic regression (with Platt calibration) over the answer-level aggregates :data:`FEATURES` of
signals computed per answer sentence (:func:`claim_sentences`): word coverage by the sentence's
evidence (the units and the evidence rule of ``support_lexical``), coverage by the single best
passage sentence, the share of the sentence's adjacent token pairs found in that order in its
evidence, the fact check's unsupported facts by kind (``support_facts``'s :func:`check_facts`),
comparison words flipped against the passages, a refusal flag and lengths. It needs no model and
no numpy at run time: the coefficients are read from ``pytest_mirage/metrics/offline_faithfulness.json``
(plain JSON, never pickle) and applied in pure Python.

The model is trained the ARES way (:mod:`pytest_mirage.judges.perturb` makes the data,
:mod:`pytest_mirage.judges.offline` fits it): on faithful answers of the bundled suites and
synthetic unfaithful edits of them, in 19 languages. Retrain with
``python benchmarks/train_faithfulness.py --seed 0`` (scikit-learn needed only there); the same seed
writes the same file. To train on richer features, change :func:`features` and :data:`FEATURES`
together and retrain: the file records its feature list and loading refuses a model whose list
differs from the code's."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..prompts import find_citations, strip_citations
from ..suites.model import Passage
from ..text.tokenize import NO_SPACE_LANGS, content_units, normalize, split_sentences, tokenize

MODEL_FILE = "offline_faithfulness.json"
MODEL_FORMAT = "pytest-mirage/offline-faithfulness"
TRAIN_COMMAND = "python benchmarks/train_faithfulness.py --seed 0"

#: The fixed feature list, in the order of the model's coefficients. Per answer sentence (citation
#: markers belong to the sentence they follow; a sentence's evidence is the passages it cites, all
#: passages when it cites none, nothing when it cites only unknown ids):
#:
#: * ``lex_mean``, ``lex_min``: mean and minimum coverage of the sentences' content units by their
#:   evidence (``support_lexical``'s coverage); ``lex_low_share``: share of sentences below 0.6;
#: * ``qlex_min``, ``qlex_mean``: the same coverage with the question's units counted as covered
#:   (answers restate the question);
#: * ``uncovered_log``, ``max_uncovered_log``: ``log1p`` of the content units found in no evidence,
#:   over the answer and in its worst sentence;
#: * ``align_min``, ``align_mean``: coverage by the single best-matching passage sentence;
#: * ``order_min``, ``order_mean``: share of the sentence's adjacent token pairs (character
#:   triples in scripts without spaces) found adjacent in its evidence;
#: * ``facts_log`` (``log1p`` of the facts checked), ``facts_share`` (share supported, 1 with no
#:   fact) and ``unsup_*``: unsupported facts by kind (capped at 3), ``unsup_any`` (0/1);
#: * ``comparison_unsupported``: comparison words (``more``/``less``, ...) absent from the passages
#:   whose opposite the passages use (``at least`` where they say ``at most``), capped at 3;
#: * ``refusal``: the answer says the passages do not answer (0/1);
#: * ``sentences_log``, ``units_log``: ``log1p`` of the sentence and content-unit counts.
#:
#: (Whether a sentence cites is not a feature: in any training set made by editing answers, the
#: markers follow the edits rather than faithfulness.)
FEATURES: tuple[str, ...] = (
    "lex_mean", "lex_min", "lex_low_share", "qlex_min", "qlex_mean", "uncovered_log", "max_uncovered_log",
    "align_min", "align_mean", "order_min", "order_mean",
    "facts_log", "facts_share", "unsup_number", "unsup_month", "unsup_name", "unsup_quote", "unsup_negation",
    "unsup_dropped_negation", "unsup_any", "comparison_unsupported", "refusal", "sentences_log", "units_log",
)

# comparison words and their opposites (each pair is swapped both ways)
COMPARISONS: dict[str, tuple[tuple[str, str], ...]] = {
    "en": (("more", "less"), ("higher", "lower"), ("larger", "smaller"), ("largest", "smallest"),
           ("longest", "shortest"), ("highest", "lowest"), ("before", "after"), ("over", "under"),
           ("first", "last"), ("most", "least"), ("earlier", "later"), ("above", "below"),
           ("at least", "at most"), ("longer", "shorter"), ("bigger", "smaller"), ("older", "younger"),
           ("increased", "decreased"), ("maximum", "minimum")),
    "de": (("mehr", "weniger"), ("höher", "niedriger"), ("größer", "kleiner"), ("größte", "kleinste"),
           ("höchste", "niedrigste"), ("vor", "nach"), ("über", "unter"), ("erste", "letzte"),
           ("länger", "kürzer"), ("längste", "kürzeste"), ("früher", "später"), ("mindestens", "höchstens"),
           ("älter", "jünger")),
    "es": (("más", "menos"), ("mayor", "menor"), ("antes", "después"), ("primer", "último"),
           ("primera", "última"), ("superior", "inferior"), ("alto", "bajo"), ("alta", "baja"),
           ("al menos", "como máximo"), ("largo", "corto"), ("mínimo", "máximo")),
    "fr": (("plus", "moins"), ("avant", "après"), ("premier", "dernier"), ("première", "dernière"),
           ("supérieur", "inférieur"), ("haut", "bas"), ("haute", "basse"), ("grand", "petit"),
           ("grande", "petite"), ("au moins", "au plus"), ("long", "court"), ("minimum", "maximum")),
    "fi": (("enemmän", "vähemmän"), ("suurempi", "pienempi"), ("suurin", "pienin"), ("korkein", "matalin"),
           ("ennen", "jälkeen"), ("ensimmäinen", "viimeinen"), ("yli", "alle"), ("pisin", "lyhin"),
           ("vähintään", "enintään"), ("vanhempi", "nuorempi")),
    "ru": (("больше", "меньше"), ("выше", "ниже"), ("до", "после"), ("первый", "последний"),
           ("первым", "последним"), ("самое", "наименее"), ("более", "менее"), ("крупнейший", "наименьший"),
           ("длиннее", "короче"), ("старше", "моложе"), ("раньше", "позже"), ("дольше", "короче"),
           ("не менее", "не более")),
    "ar": (("أكثر", "أقل"), ("أكبر", "أصغر"), ("أعلى", "أدنى"), ("قبل", "بعد"), ("الأول", "الأخير"),
           ("أطول", "أقصر"), ("الأكبر", "الأصغر"), ("فوق", "تحت")),
    "fa": (("بیشتر", "کمتر"), ("بزرگ‌ترین", "کوچک‌ترین"), ("بزرگتر", "کوچکتر"), ("بالاتر", "پایین‌تر"),
           ("قبل", "بعد"), ("پیش", "پس"), ("اولین", "آخرین"), ("بلندترین", "کوتاه‌ترین")),
    "hi": (("अधिक", "कम"), ("ज़्यादा", "कम"), ("बड़ा", "छोटा"), ("सबसे बड़ा", "सबसे छोटा"), ("पहले", "बाद"),
           ("ऊँचा", "नीचा"), ("पहला", "आख़िरी"), ("लंबा", "छोटा")),
    "bn": (("বেশি", "কম"), ("বড়", "ছোট"), ("বৃহত্তম", "ক্ষুদ্রতম"), ("দীর্ঘতম", "ক্ষুদ্রতম"), ("আগে", "পরে"),
           ("প্রথম", "শেষ"), ("উঁচু", "নিচু"), ("সর্বোচ্চ", "সর্বনিম্ন")),
    "te": (("ఎక్కువ", "తక్కువ"), ("పెద్ద", "చిన్న"), ("ముందు", "తర్వాత"), ("మొదటి", "చివరి"), ("అతిపెద్ద", "అతిచిన్న")),
    "id": (("lebih", "kurang"), ("terbesar", "terkecil"), ("tertinggi", "terendah"), ("sebelum", "sesudah"),
           ("pertama", "terakhir"), ("terpanjang", "terpendek"), ("paling", "kurang"), ("minimal", "maksimal"),
           ("besar", "kecil")),
    "sw": (("zaidi", "chini"), ("kubwa", "ndogo"), ("mrefu", "mfupi"), ("kabla", "baada"), ("kwanza", "mwisho"),
           ("juu", "chini"), ("angalau", "isiyozidi")),
    "yo": (("jùlọ", "kéré jùlọ"), ("ju", "kéré sí"), ("tóbi", "kéré"), ("ṣáájú", "lẹ́yìn"), ("àkọ́kọ́", "ìkẹyìn"),
           ("gùn", "kúrú"), ("pọ̀", "kéré")),
    "ja": (("以上", "以下"), ("より多い", "より少ない"), ("最大", "最小"), ("最も高い", "最も低い"), ("前", "後"),
           ("最初", "最後"), ("高い", "低い"), ("長い", "短い"), ("多い", "少ない"), ("まで", "以上"), ("大きい", "小さい")),
    "zh": (("多", "少"), ("最大", "最小"), ("最高", "最低"), ("最长", "最短"), ("以前", "以后"), ("之前", "之后"),
           ("第一", "最后"), ("高于", "低于"), ("超过", "不到"), ("至少", "至多"), ("长", "短")),
    "ko": (("이상", "이하"), ("많", "적"), ("가장 높은", "가장 낮은"), ("가장 큰", "가장 작은"), ("전", "후"),
           ("첫", "마지막"), ("높", "낮"), ("크", "작"), ("길", "짧")),
    "th": (("มากกว่า", "น้อยกว่า"), ("สูงที่สุด", "ต่ำที่สุด"), ("ใหญ่ที่สุด", "เล็กที่สุด"), ("ก่อน", "หลัง"),
           ("แรก", "สุดท้าย"), ("ไม่เกิน", "อย่างน้อย"), ("สูง", "ต่ำ"), ("ยาว", "สั้น"), ("มาก", "น้อย")),
    "km": (("ច្រើនជាង", "តិចជាង"), ("ធំបំផុត", "តូចបំផុត"), ("ខ្ពស់បំផុត", "ទាបបំផុត"), ("មុន", "ក្រោយ"),
           ("ដំបូង", "ចុងក្រោយ"), ("មិនលើសពី", "យ៉ាងហោចណាស់"), ("ច្រើន", "តិច"), ("ខ្ពស់", "ទាប"), ("វែង", "ខ្លី")),
}


# ---------------------------------------------------------------- refusals

# "the passages do not say / I cannot answer", per language (lower-cased, normalised text)
_REFUSAL = {
    "en": r"(cannot|can't|can not|unable to|not able to) (answer|determine|say|tell|find|provide)|"
          r"(do|does|did) not (mention|say|state|contain|include|provide|specify|cover)|no information|"
          r"not (mentioned|provided|stated|specified|given)|(insufficient|not enough) information",
    "de": r"(keine|nicht) (angaben|informationen|auskunft)|nicht beantworten|kann ich nicht|nicht erwähnt|"
          r"enthalten (keine|nichts)|geht nicht hervor",
    "es": r"no (puedo|es posible) (responder|contestar|determinar)|no (contiene|contienen|menciona|mencionan|indica|"
          r"indican|especifica)|no hay información|sin información",
    "fr": r"ne (peux|puis) pas (répondre|dire|déterminer)|ne (précise|précisent|mentionne|mentionnent|contient|"
          r"contiennent|donne|donnent|indique|indiquent) pas|aucune information|pas d'information",
    "fi": r"en (voi|pysty) (vastata|sanoa)|ei (kerrota|mainita|ole tietoa)|ei sisällä|tietoa ei",
    "ru": r"не (могу|можу) (ответить|сказать|определить)|нет (информации|данных|сведений)|не (указано|упоминается|"
          r"сказано|содержится|содержат)|невозможно ответить",
    "ar": r"لا (أستطيع|يمكنني|يمكن) (الإجابة|الاجابة|تحديد)|لا (تتضمن|تحتوي|تذكر|يذكر|توجد)|لم (يذكر|تذكر|يرد)|"
          r"لا تتوفر|لا توجد معلومات",
    "fa": r"نمی‌?توانم (پاسخ|جواب)|(گفته|ذکر) نشده|اطلاعاتی (وجود )?ندارد|ندارند|اطلاعات .*ندارد",
    "hi": r"(उत्तर|जवाब) नहीं दे (सकता|सकती|सकते)|जानकारी नहीं|उल्लेख नहीं|नहीं बताया",
    "bn": r"উল্লেখ নেই|তথ্য নেই|উত্তর দেওয়া সম্ভব নয়|উত্তর দিতে পারছি না|বলা নেই|উত্তর দিতে পারব না",
    "te": r"సమాధానం ఇవ్వలేను|సమాచారం లేదు|చెప్పలేదు|పేర్కొనలేదు",
    "id": r"tidak (dapat|bisa) menjawab|tidak (menyebutkan|memuat|mencantumkan|ada informasi)|tidak disebutkan|"
          r"tidak ada informasi",
    "sw": r"siwezi kujibu|(hayataji|hayaelezi|hayana|hakuna) (taarifa|maelezo)?|haielezwi|haijatajwa",
    "yo": r"n kò lè dáhùn|kò (sọ|sí ìsọfúnni|ní ìsọfúnni)|mi ò lè dáhùn",
    "ja": r"(記載|情報|記述)(が|は)(ない|ありません|ないため|含まれていない)|(お答え|回答|答え)(でき|られ)ません|"
          r"含まれていない|わかりません",
    "zh": r"(没有|未|并未)(提到|提及|说明|涉及|包含)|无法(回答|确定|判断)|没有(相关)?信息|不能回答",
    "ko": r"(정보|내용)(가|이|는) 없|답변(드리기|하기) 어렵|답변할 수 없|알 수 없|언급(되어 있지|이) 없",
    "th": r"ไม่ได้(กล่าวถึง|ระบุ|บอก)|(ไม่สามารถ|ตอบ)(ตอบ|ไม่ได้)|ไม่มี(ข้อมูล|เรื่องนี้)",
    "km": r"មិន(បាន)?(បញ្ជាក់|និយាយ|លើកឡើង)|មិនអាចឆ្លើយ|មិនមានព័ត៌មាន|គ្មានព័ត៌មាន",
}
# compiled on first use, normalised as the answers are (Yoruba tones and Arabic hamza forms dropped)
@lru_cache(maxsize=32)
def _refusal_re(lang: str) -> re.Pattern[str] | None:
    p = _REFUSAL.get(lang)
    return re.compile(normalize(p, lang)) if p is not None else None


def is_refusal(answer: str, lang: str) -> bool:
    """True when ``answer`` says the passages do not answer the question (per-language phrases,
    English ones in every language). A refusal of more than three sentences is an answer that also
    refuses something: not a refusal."""
    text = normalize(strip_citations(answer), lang)
    if len([s for s in split_sentences(text, lang) if any(c.isalnum() for c in s)]) > 3:
        return False
    pattern = _refusal_re(lang)
    english = _refusal_re("en")
    return bool((pattern is not None and pattern.search(text)) or (english is not None and english.search(text)))


# ---------------------------------------------------------------- features


def _passage_text(p: Passage) -> str:
    return f"{p.title}\n{p.text}" if p.title else p.text


@lru_cache(maxsize=4096)
def _passage_sentence_units(text: str, lang: str) -> tuple[frozenset[str], ...]:
    return tuple(frozenset(content_units(s, lang)) for s in split_sentences(text, lang))


def _order_n(lang: str) -> int:
    return 3 if lang in NO_SPACE_LANGS and lang != "ko" else 2


def _grams(tokens: Sequence[str], n: int) -> set[tuple[str, ...]]:
    return set(zip(*(tokens[i:] for i in range(n)), strict=False))


@lru_cache(maxsize=4096)
def _passage_grams(text: str, lang: str) -> frozenset[tuple[str, ...]]:
    n = _order_n(lang)
    out: set[tuple[str, ...]] = set()
    for line in text.split("\n"):
        out |= _grams(tokenize(line, lang), n)
    return frozenset(out)


@lru_cache(maxsize=4096)
def _passage_norm(text: str, lang: str) -> str:
    return normalize(text, lang)


@lru_cache(maxsize=32)
def _comparison_pairs(lang: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(comparison word, its opposites), normalised, for ``lang``."""
    opposite: dict[str, set[str]] = {}
    for a, b in COMPARISONS.get(lang, ()):
        a, b = normalize(a, lang), normalize(b, lang)
        opposite.setdefault(a, set()).add(b)
        opposite.setdefault(b, set()).add(a)
    return tuple((w, tuple(sorted(o))) for w, o in sorted(opposite.items()))


def _contains(text: str, word: str, lang: str) -> bool:
    if lang in NO_SPACE_LANGS and lang != "ko":
        return word in text
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text) is not None


_LIST_MARKER = re.compile(r"^[ \t]*(?:\d{1,2}[.)]|[\u2022\u00b7\u25cf*\-\u2013])[ \t]+", re.MULTILINE)
_DIGIT_MARKER = re.compile(r"^[ \t]*([^\W\d_]?)(\d{1,2})[.)][ \t]+", re.MULTILINE)
_COLON = ":：៖"
_KEY_VALUE = re.compile(rf"^([^{_COLON}\n]{{1,40}})[{_COLON}]\s*(\S.*)$", re.DOTALL)


def _unlisted(answer: str) -> str:
    """``answer`` without list markers at line starts (``1.``, ``2)``, ``১.``, ``•``): markers
    number the list, they state nothing."""
    out = _LIST_MARKER.sub("", answer)
    return re.sub(r"^[ \t]*\d{1,2}[.)][ \t]+", "", out, flags=re.MULTILINE | re.UNICODE)


@dataclass(frozen=True, slots=True)
class ClaimSentence:
    """One sentence of an answer as the judge reads it: its claim text (without citation markers,
    list marker and ``label:`` prefix), content units, evidence passages and whether it makes a
    claim: a header line ending in a colon does not, nor does a sentence of fewer than three content
    units such as "Yes." or "No, it cannot." unless it is the value of a ``label: value`` line."""

    text: str
    units: frozenset[str]
    evidence: tuple[Passage, ...]
    cited: bool
    claim: bool


def claim_sentences(answer: str, passages: Sequence[Passage], lang: str) -> list[ClaimSentence]:
    """The sentences of ``answer`` with content (evidence rule of ``support_lexical``)."""
    ids = [p.id for p in passages]
    by_id = {p.id: p for p in passages}
    out: list[ClaimSentence] = []
    for sentence in split_sentences(_unlisted(answer), lang):
        cited, invalid = find_citations(sentence, ids)
        text = strip_citations(sentence).strip()
        header = text.rstrip().endswith(tuple(_COLON))
        kv = _KEY_VALUE.match(text)
        labelled = bool(kv and len(tokenize(kv.group(1), lang)) <= (8 if lang in NO_SPACE_LANGS else 3))
        if kv and labelled:
            text = kv.group(2)  # "Height: 2,962 m": the label restates the question
        units = frozenset(content_units(text, lang))
        if not units:
            continue
        evidence = tuple(by_id[c] for c in cited) if cited else () if invalid else tuple(passages)
        out.append(ClaimSentence(text, units, evidence, bool(cited), not header and (labelled or len(units) >= 3)))
    return out


@lru_cache(maxsize=4096)
def _passage_units(text: str, lang: str) -> frozenset[str]:
    # the union of its sentences' units (a unit never spans a sentence end); one pass over the text
    return frozenset().union(*_passage_sentence_units(text, lang))


def features(answer: str, passages: Sequence[Passage], lang: str, question: str = "",
             checks: Sequence[Any] | None = None) -> dict[str, float]:
    """The :data:`FEATURES` of ``answer`` (raw, with citation markers) against ``passages``.

    Coverage-type features are computed over the claim sentences (:func:`claim_sentences`; all
    sentences when none makes a claim); an answer without content units gets 0 coverage (the metric
    makes it null before asking); passages may be empty (every sentence is then unsupported). The
    fact check reads the answer without its list markers."""
    from .facts import check_facts

    every = claim_sentences(answer, passages, lang)
    sents = [s for s in every if s.claim] or every
    if checks is None:  # (the metric passes the checks support_facts already made of the same text)
        checks = check_facts(_unlisted(answer), passages, lang)
    n = _order_n(lang)
    lex: list[float] = []
    qlex: list[float] = []
    q_units = frozenset(content_units(question, lang)) if question else frozenset()
    uncovered: list[float] = []
    align: list[float] = []
    order: list[float] = []
    units_total = 0
    for s in sents:
        units = s.units
        units_total += len(units)
        ev_units: frozenset[str] = frozenset().union(*(_passage_units(_passage_text(p), lang) for p in s.evidence))
        covered = len(units & ev_units)
        lex.append(covered / len(units))
        qlex.append(len(units & (ev_units | q_units)) / len(units))
        uncovered.append(float(len(units) - covered))
        best = 0.0
        for p in s.evidence:
            for pu in _passage_sentence_units(_passage_text(p), lang):
                best = max(best, len(units & pu) / len(units))
        align.append(best)
        grams = _grams(tokenize(s.text, lang), n)
        if grams:
            ev: set[tuple[str, ...]] = set()
            for p in s.evidence:
                ev |= _passage_grams(_passage_text(p), lang)
            order.append(len(grams & ev) / len(grams))
        else:
            order.append(best)
    if not sents:
        lex, qlex, uncovered, align, order = [0.0], [0.0], [0.0], [0.0], [0.0]
    unsupported: dict[str, int] = {}
    for c in checks:
        if not c.supported:
            unsupported[c.kind] = unsupported.get(c.kind, 0) + 1
    evidence = "\n".join(_passage_norm(_passage_text(p), lang) for p in passages)
    text = normalize(strip_citations(answer), lang)
    comparisons = 0
    for w, opposites in _comparison_pairs(lang):
        if _contains(text, w, lang) and not _contains(evidence, w, lang) and \
                any(_contains(evidence, o, lang) for o in opposites):
            comparisons += 1
    return {
        "lex_mean": sum(lex) / len(lex),
        "lex_min": min(lex),
        "lex_low_share": sum(1 for x in lex if x < 0.6) / len(lex),
        "qlex_min": min(qlex),
        "qlex_mean": sum(qlex) / len(qlex),
        "uncovered_log": math.log1p(sum(uncovered)),
        "max_uncovered_log": math.log1p(max(uncovered)),
        "align_min": min(align),
        "align_mean": sum(align) / len(align),
        "order_min": min(order),
        "order_mean": sum(order) / len(order),
        "facts_log": math.log1p(len(checks)),
        "facts_share": sum(c.supported for c in checks) / len(checks) if checks else 1.0,
        "unsup_number": float(min(3, unsupported.get("number", 0))),
        "unsup_month": float(min(3, unsupported.get("month", 0))),
        "unsup_name": float(min(3, unsupported.get("name", 0))),
        "unsup_quote": float(min(3, unsupported.get("quote", 0))),
        "unsup_negation": float(min(3, unsupported.get("negation", 0))),
        "unsup_dropped_negation": float(min(3, unsupported.get("dropped_negation", 0))),
        "unsup_any": 1.0 if unsupported else 0.0,
        "comparison_unsupported": float(min(3, comparisons)),
        "refusal": 1.0 if is_refusal(answer, lang) else 0.0,
        "sentences_log": math.log1p(len(every)),
        "units_log": math.log1p(units_total),
    }


def _register_caches() -> None:
    from .analysis import PER_TEXT_CACHES

    PER_TEXT_CACHES.extend((_passage_sentence_units, _passage_grams, _passage_norm, _passage_units))


_register_caches()


# ---------------------------------------------------------------- the model


@dataclass(frozen=True, slots=True)
class OfflineModel:
    """A standardised logistic regression with Platt calibration, read from JSON."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    calib_a: float
    calib_b: float
    threshold: float
    sha256: str  # of the model file's bytes
    path: str
    training: Mapping[str, Any]

    def decision(self, x: Mapping[str, float]) -> float:
        z = self.intercept
        for name, m, s, c in zip(self.features, self.mean, self.scale, self.coef, strict=True):
            z += c * (x[name] - m) / s
        return z

    def predict(self, x: Mapping[str, float]) -> float:
        """P(faithful) of the feature values ``x`` (Platt: 1 / (1 + exp(a f + b)))."""
        t = self.calib_a * self.decision(x) + self.calib_b
        if t >= 0:
            e = math.exp(-t)
            return e / (1.0 + e)
        return 1.0 / (1.0 + math.exp(t))


def model_from_json(data: Mapping[str, Any], *, sha256: str = "", path: str = "") -> OfflineModel:
    where = path or "offline faithfulness model"
    if data.get("format") != MODEL_FORMAT:
        raise ConfigError(f"{where}: format {data.get('format')!r} is not {MODEL_FORMAT!r}; retrain it with "
                          f"{TRAIN_COMMAND}")
    feats = tuple(data["features"])
    if feats != FEATURES:
        raise ConfigError(f"{where}: its features {list(feats)} differ from the code's {list(FEATURES)}; retrain it "
                          f"with {TRAIN_COMMAND}")
    lr = data["logistic"]
    cal = data["calibration"]
    return OfflineModel(feats, tuple(map(float, lr["mean"])), tuple(map(float, lr["scale"])),
                        tuple(map(float, lr["coef"])), float(lr["intercept"]), float(cal["a"]), float(cal["b"]),
                        float(data["threshold"]), sha256, path, data.get("training", {}))


@lru_cache(maxsize=4)
def load_model(path: str | None = None) -> OfflineModel:
    """The shipped model (``pytest_mirage/metrics/offline_faithfulness.json``), or the one at ``path``."""
    raw = (Path(path).read_bytes() if path is not None
           else resources.files("pytest_mirage.metrics").joinpath(MODEL_FILE).read_bytes())
    return model_from_json(json.loads(raw.decode("utf-8")), sha256=hashlib.sha256(raw).hexdigest(),
                           path=path or f"pytest_mirage/metrics/{MODEL_FILE}")


def score(answer: str, passages: Sequence[Passage], lang: str, question: str = "",
          model: OfflineModel | None = None) -> float:
    """P(faithful) of ``answer`` given ``passages`` by the shipped (or given) model."""
    return (model or load_model()).predict(features(answer, passages, lang, question))


def faithfulness_judge(s: Any) -> float:
    """Probability that the answer is faithful to its context by the offline judge (a calibrated
    logistic regression over sentence-level lexical, alignment and fact-check signals, trained on
    synthetic ARES-style edits in 19 languages; model file and hash in ``metric_info``). Null for a
    refusal (gate on ``refusal``); a failure quotes the unsupported sentences (sentence verdicts)."""
    from .base import NotApplicable
    from .verdicts import Explained, answer_is_refusal, details, refusal_reason, verdicts_of

    if not s.context:
        raise NotApplicable("the generator saw no passages to support the answer")
    verdicts = verdicts_of(s)
    if answer_is_refusal(verdicts):
        raise NotApplicable(refusal_reason(verdicts))
    return Explained(_judge_probability(s), details(verdicts))


def _judge_probability(s: Any) -> float:
    from .analysis import of
    from .base import NotApplicable

    raw = of(s).raw
    if not content_units(strip_citations(raw), s.case.lang):
        raise NotApplicable("the answer has no words to check")
    # the fact checks support_facts already made of the same text in this metric pass, if any (a
    # missing memo only costs the check again)
    checks = of(s).extra.get("fact_checks") if _unlisted(raw) == raw else None
    return load_model().predict(features(raw, s.context, s.case.lang, s.case.question, checks))


def model_source() -> str:
    """The metric's source line: the model file, its SHA-256 and how it was trained."""
    try:
        m = load_model()
    except (ConfigError, OSError, ValueError, KeyError) as e:  # the metric raises it when computed
        return f"pytest-mirage offline judge (pytest_mirage/metrics/{MODEL_FILE}: not loadable: {e})"
    return (f"pytest-mirage offline judge ({m.path}, sha256 {m.sha256[:16]}, trained with "
            f"{m.training.get('command', TRAIN_COMMAND)} on data sha256 {str(m.training.get('data_sha256', ''))[:16]}; "
            "ARES-style synthetic negatives, Saad-Falcon et al. 2024 §3.2)")
