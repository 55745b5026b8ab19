"""Synthetic unfaithful answers, the ARES way: training data for the offline faithfulness judge.

ARES (Saad-Falcon et al. 2024, §3.2) trains its faithfulness judge on positives (answers
generated from the passage) and two kinds of negatives: *weak* ones, answers from other passages,
and *strong* ones, answers contradicting the passage. Without a generator model, this module makes
both from faithful ``(question, passages, answer)`` triples by rule, in the 19 languages of the
project (ar bn de en es fa fi fr hi id ja km ko ru sw te th yo zh):

* **strong negatives** (minimal edits, :data:`STRONG_KINDS`): ``number`` (a digit of a number, in
  its own script, or a number word of the lexicon), ``date`` (a month name or ``N月``/``N월``),
  ``entity`` (a name or a passage word swapped for one from another topic's passages),
  ``negation`` (a negation removed, or added by a per-language rule), ``comparison`` (``more`` ->
  ``less``, ``at least`` -> ``at most``, ...), ``roles`` (two names or numbers of a sentence
  swapped), ``added_clause`` (a clause from another topic joined to the last sentence);
* **weak negatives** (:data:`WEAK_KINDS`): ``added_sentence`` (a sentence of another topic's
  passages appended) and ``other_answer`` (another triple's answer, as in ARES);
* **positives** (:data:`POSITIVE_KINDS`): the answer itself, with or without citation markers,
  a sentence copied from its relevant passage, the answer with a further supported sentence, a
  numbered list of supported sentences, and a refusal ("the passages do not say").

Everything is a pure function of its inputs and a seed (:class:`random.Random`); nothing here
reads files except the package's number/month/negation lexicons. An edit that the answer does not
allow (no number to change, no comparison word) yields ``None``, never a copy labelled unfaithful.
"""

from __future__ import annotations

import json
import random
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from typing import Any

import regex  # type: ignore[import-untyped]

from ..metrics.offline_judge import COMPARISONS
from ..prompts import find_citations, strip_citations
from ..suites.model import Passage
from ..text.tokenize import NO_SPACE_LANGS, split_sentences

LANGS = ("ar", "bn", "de", "en", "es", "fa", "fi", "fr", "hi", "id", "ja", "km", "ko", "ru", "sw", "te", "th",
         "yo", "zh")
STRONG_KINDS = ("number", "date", "entity", "negation", "comparison", "roles", "added_clause")
WEAK_KINDS = ("added_sentence", "other_answer")
NEGATIVE_KINDS = STRONG_KINDS + WEAK_KINDS
POSITIVE_KINDS = ("original", "recited", "framed", "extractive", "added_supported", "list", "refusal")

# scripts written without spaces between words: edits work on substrings there
_NOSPACE = NO_SPACE_LANGS - {"ko"}
_CASED = ("de", "en", "es", "fi", "fr", "id", "ru", "sw", "yo")


@dataclass(frozen=True, slots=True)
class Example:
    """One labelled (question, passages, answer) item: ``label`` 1 faithful, 0 unfaithful."""

    id: str
    lang: str
    question: str
    passages: tuple[Passage, ...]
    answer: str
    label: int
    kind: str
    relevant: tuple[str, ...] = ()  # ids of the passages the answer comes from (all when empty)
    detail: str = ""  # what the edit changed

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "lang": self.lang, "question": self.question,
                "passages": [{"id": p.id, "title": p.title, "text": p.text} for p in self.passages],
                "answer": self.answer, "label": self.label, "kind": self.kind, "relevant": list(self.relevant),
                "detail": self.detail}


# ---------------------------------------------------------------- per-language word lists

# negation added by rule: (pattern, replacement) tried in order; the first that matches is applied once
_NEGATE: dict[str, tuple[tuple[str, str], ...]] = {
    "en": ((r"\b(is|are|was|were|can|will|should|must|could|has been|have been)\b", r"\1 not"),
           (r"\b(has|have)\b", r"does not have"), (r"\b(\w+ed)\b", r"did not \1")),
    "de": ((r"\b(ist|sind|war|waren|wird|werden|kann|können|muss|müssen|hat|haben)\b", r"\1 nicht"),),
    "es": ((r"\b(es|son|fue|fueron|está|están|puede|pueden|tiene|tienen|se|hay)\b", r"no \1"),),
    "fr": ((r"\b(est|sont|était|a|ont|peut|peuvent|doit)\b", r"n'\1 pas"),),
    "fi": ((r"\bon\b", "ei ole"), (r"\bovat\b", "eivät ole"), (r"\boli\b", "ei ollut"), (r"\bvoi\b", "ei voi")),
    "ru": ((r"(?<!\w)(является|являются|был|была|было|были|может|могут|есть|можно)(?!\w)", r"не \1"),
           (r"(?<!\w)(\w+(?:ет|ит|ют|ят|ется|ится|ал|ала|али|ил|ила|или))(?!\w)", r"не \1")),
    "ar": ((r"(?<!\w)(ي\w+|ت\w+)", r"لا \1"),),
    "fa": ((r"(?<!\w)می", "نمی"), (r"(?<!\w)است(?!\w)", "نیست"), (r"(?<!\w)هست(?!\w)", "نیست")),
    "hi": ((r"(?<!\S)(है|हैं|था|थी|थे)(?!\S)", r"नहीं \1"), (r"(?<!\S)(सकते|सकता|सकती|होता|होती|होते)(?!\S)", r"नहीं \1")),
    "bn": ((r"(?<!\S)(হয়|করে|আছে|পারে|থাকে|দেয়|যায়)(?!\S)", r"\1 না"),),
    "te": ((r"(?<!\S)(ఉంది|చేయాలి|కలదు)(?!\S)", "లేదు"), (r"(?<!\S)ఉన్నాయి(?!\S)", "లేవు"),
           (r"(\S+?)(ింది|ాడు|ారు|ాను)(?=[\s.।,]|$)", r"\1లేదు"), (r"(\S+)(?=[.।]?\s*$)", r"\1 కాదు")),
    "id": ((r"\b(adalah|merupakan)\b", "bukan"), (r"\b(ada|bisa|dapat|akan|perlu|harus|sudah|telah)\b", r"tidak \1")),
    "sw": ((r"\bni\b", "si"), (r"\bkuna\b", "hakuna"), (r"\bana\b", "hana"), (r"\bwana\b", "hawana"),
           (r"\bina\b", "haina"), (r"\blina\b", "halina"), (r"\b(wa|a|i|u|li|ya|ki|vi|zi)na(\w{3,})\b", r"ha\1\2")),
    "yo": ((r"(?<!\w)ni(?!\w)", "kọ́ ni"), (r"(?<!\w)(ń|lè|gbọ́dọ̀|máa ń)(?!\w)", r"kò \1")),
    "ja": (("できます", "できません"), ("あります", "ありません"), ("います", "いません"), ("です", "ではありません"),
           ("ます", "ません"), ("した", "しなかった"), ("る。", "ない。"), ("た。", "なかった。")),
    "zh": (("可以", "不可以"), ("是", "不是"), ("有", "没有"), ("会", "不会"), ("能", "不能"), ("在", "不在")),
    "ko": (("있습니다", "없습니다"), ("있다", "없다"), ("입니다", "이 아닙니다"), ("습니다", "지 않습니다"),
           ("이다", "이 아니다"), ("다.", "지 않다.")),
    "th": (("สามารถ", "ไม่สามารถ"), ("ต้อง", "ไม่ต้อง"), ("เป็น", "ไม่ใช่"), ("มี", "ไม่มี"), ("ได้", "ไม่ได้")),
    "km": (("អាច", "មិនអាច"), ("ត្រូវ", "មិនត្រូវ"), ("មាន", "គ្មាន"), ("គឺជា", "មិនមែនជា")),
}

# "and" joining an added clause
_AND = {"en": " and ", "de": " und ", "es": " y ", "fr": " et ", "fi": " ja ", "ru": " и ", "ar": " و", "fa": " و ",
        "hi": " और ", "bn": " এবং ", "te": " మరియు ", "id": " dan ", "sw": " na ", "yo": " àti ", "ja": "、また",
        "zh": "，并且", "ko": ", 그리고 ", "th": " และ", "km": " ហើយ"}

# refusals used as faithful positives (a refusal states nothing the passages could contradict)
REFUSALS: dict[str, tuple[str, ...]] = {
    "en": ("The passages do not contain this information, so I cannot answer.",
           "Unable to answer based on the given passages."),
    "de": ("Die Texte enthalten dazu keine Angaben, daher kann ich die Frage nicht beantworten.",),
    "es": ("Los pasajes no contienen esa información, así que no puedo responder.",),
    "fr": ("Les passages ne contiennent pas cette information ; je ne peux donc pas répondre.",),
    "fi": ("Teksteissä ei ole tätä tietoa, joten en voi vastata.",),
    "ru": ("В текстах нет этой информации, поэтому я не могу ответить.",),
    "ar": ("لا تحتوي النصوص على هذه المعلومة، لذلك لا يمكنني الإجابة.",),
    "fa": ("متن‌ها این اطلاعات را ندارند، بنابراین نمی‌توانم پاسخ دهم.",),
    "hi": ("दिए गए अंशों में यह जानकारी नहीं है, इसलिए मैं उत्तर नहीं दे सकता।",),
    "bn": ("প্রদত্ত অনুচ্ছেদে এই তথ্য নেই, তাই আমি উত্তর দিতে পারছি না।",),
    "te": ("ఇచ్చిన భాగాల్లో ఈ సమాచారం లేదు, కాబట్టి నేను సమాధానం ఇవ్వలేను.",),
    "id": ("Teks yang diberikan tidak memuat informasi ini, jadi saya tidak dapat menjawab.",),
    "sw": ("Maandishi hayana taarifa hii, kwa hiyo siwezi kujibu.",),
    "yo": ("Àwọn ìwé náà kò ní ìsọfúnni yìí, nítorí náà n kò lè dáhùn.",),
    "ja": ("資料にはこの情報が含まれていないため、回答できません。",),
    "zh": ("所给资料中没有这方面的信息，因此无法回答。",),
    "ko": ("주어진 자료에 이 정보가 없어 답변할 수 없습니다.",),
    "th": ("ข้อมูลที่ให้มาไม่มีเรื่องนี้ จึงไม่สามารถตอบได้",),
    "km": ("ឯកសារមិនមានព័ត៌មាននេះទេ ដូច្នេះខ្ញុំមិនអាចឆ្លើយបានទេ។",),
}

# openers of real answers ("Yes, ...", "According to the passages, ..."): faithful framing
OPENERS: dict[str, tuple[str, ...]] = {
    "en": ("Yes, ", "No, ", "According to the passages, ", "In short, "),
    "de": ("Ja, ", "Nein, ", "Laut den Texten ", "Kurz gesagt: "),
    "es": ("Sí, ", "No, ", "Según los textos, ", "En resumen, "),
    "fr": ("Oui, ", "Non, ", "D'après les textes, ", "En bref, "),
    "fi": ("Kyllä, ", "Ei, ", "Tekstien mukaan ", "Lyhyesti: "),
    "ru": ("Да, ", "Нет, ", "Согласно текстам, ", "Коротко: "),
    "ar": ("نعم، ", "لا، ", "وفقًا للنصوص، ", "باختصار، "),
    "fa": ("بله، ", "نه، ", "طبق متن‌ها، ", "به طور خلاصه، "),
    "hi": ("हाँ, ", "नहीं, ", "दिए गए अंशों के अनुसार, ", "संक्षेप में, "),
    "bn": ("হ্যাঁ, ", "না, ", "প্রদত্ত তথ্য অনুযায়ী, ", "সংক্ষেপে, "),
    "te": ("అవును, ", "కాదు, ", "ఇచ్చిన సమాచారం ప్రకారం, ", "సంక్షిప్తంగా, "),
    "id": ("Ya, ", "Tidak, ", "Menurut teks, ", "Singkatnya, "),
    "sw": ("Ndiyo, ", "Hapana, ", "Kwa mujibu wa maandishi, ", "Kwa ufupi, "),
    "yo": ("Bẹ́ẹ̀ni, ", "Rárá, ", "Gẹ́gẹ́ bí àwọn ìwé náà ṣe sọ, ", "Ní kúkúrú, "),
    "ja": ("はい、", "いいえ、", "資料によると、", "簡単に言うと、"),
    "zh": ("是的，", "不，", "根据资料，", "简而言之，"),
    "ko": ("네, ", "아니요, ", "자료에 따르면 ", "요약하면 "),
    "th": ("ใช่ ", "ไม่ ", "จากข้อมูล ", "โดยสรุป "),
    "km": ("បាទ ", "ទេ ", "យោងតាមឯកសារ ", "សរុបមក "),
}

_CITE = re.compile(r"\s?\[[^\[\]\n]{1,400}\]")
_W = r"[\p{L}\p{M}\p{N}]"
_DIGITS = regex.compile(rf"(?<!{_W})\d+(?:[.,]\d+)*(?![\p{{L}}\p{{M}}])")
_CAPWORD = regex.compile(r"(?<![\p{L}\p{M}\p{N}-])\p{Lu}[\p{L}\p{M}'’-]*[\p{L}\p{M}]")
_KATAKANA = regex.compile(r"[\p{Katakana}ー・]{2,}")
_HAN = regex.compile(r"\p{Han}{2,}")
_WORD = regex.compile(rf"(?<!{_W})[\p{{L}}\p{{M}}]{{4,}}(?!{_W})")
_END = re.compile(r"[.!?。！？।។؟]+$")


@lru_cache(maxsize=32)
def _lexicon(lang: str) -> dict[str, Any]:
    path = resources.files("pytest_mirage.metrics").joinpath("lexicon", f"{lang}.json")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _spans_outside_citations(text: str, pattern: Any) -> list[Any]:
    blocked = [(m.start(), m.end()) for m in _CITE.finditer(text)]
    return [m for m in pattern.finditer(text) if not any(a <= m.start() < b for a, b in blocked)]


def _word_re(word: str, lang: str) -> Any:
    if lang in _NOSPACE:
        return regex.compile(regex.escape(word))
    return regex.compile(rf"(?<!{_W}){regex.escape(word)}(?!{_W})", regex.IGNORECASE)


def _sub_at(text: str, m: Any, new: str) -> str:
    return text[:m.start()] + new + text[m.end():]


def _match_case(old: str, new: str) -> str:
    return new[:1].upper() + new[1:] if old[:1].isupper() else new


def _passage_text(passages: Sequence[Passage]) -> str:
    return "\n".join(f"{p.title}\n{p.text}" if p.title else p.text for p in passages)


def _sentences(text: str, lang: str) -> list[str]:
    return [s for s in split_sentences(text, "und" if lang == "th" else lang) if any(c.isalnum() for c in s)]


# ---------------------------------------------------------------- strong negatives


def _edit_number(ex: Example, rng: random.Random, donors: Sequence[Example]) -> tuple[str, str] | None:
    found = _spans_outside_citations(ex.answer, _DIGITS)
    words = [(m, w) for w in _lexicon(ex.lang).get("cardinals", {})
             for m in _spans_outside_citations(ex.answer, _word_re(w, ex.lang)) if len(w) > 1 or ex.lang in _NOSPACE]
    if found and (not words or rng.random() < 0.7):
        m = rng.choice(found)
        digits = [i for i, ch in enumerate(m.group()) if ch.isdigit()]
        i = rng.choice(digits[1:] if len(digits) > 1 and rng.random() < 0.8 else digits)
        ch = m.group()[i]
        value = unicodedata.digit(ch)
        new_value = rng.choice([d for d in range(10) if d != value and not (i == digits[0] and d == 0)])
        new = m.group()[:i] + chr(ord(ch) - value + new_value) + m.group()[i + 1:]
        return _sub_at(ex.answer, m, new), f"{m.group()} -> {new}"
    if words:
        cardinals: dict[str, float] = _lexicon(ex.lang)["cardinals"]
        m, w = rng.choice(words)
        others = [x for x, v in cardinals.items() if v != cardinals[w] and 0 < v <= 20 and (len(x) > 1 or ex.lang in _NOSPACE)]
        if not others:
            return None
        new = _match_case(m.group(), rng.choice(sorted(others)))
        return _sub_at(ex.answer, m, new), f"{m.group()} -> {new}"
    return None


def _edit_date(ex: Example, rng: random.Random, donors: Sequence[Example]) -> tuple[str, str] | None:
    lex = _lexicon(ex.lang)
    months: dict[str, int] = lex.get("months", {})
    if lex.get("month_prefixes"):  # Finnish: "toukokuussa" is "toukokuu" inflected
        hits = [(m, w) for w in months
                for m in _spans_outside_citations(ex.answer, regex.compile(rf"(?<!{_W}){regex.escape(w)}", regex.I))]
    else:
        hits = [(m, w) for w in months for m in _spans_outside_citations(ex.answer, _word_re(w, ex.lang))]
    suffix = re.compile(r"(\d{1,2})(\s?)(月|월)")
    numeric = _spans_outside_citations(ex.answer, suffix)
    if hits:
        hits.sort(key=lambda h: -len(h[1]))  # the longest month word at a place ("agosti", not "ago")
        m, w = hits[0]
        tail = w[-2:]
        others = sorted(x for x, v in months.items() if v != months[w] and len(x) > 2)
        same_form = [x for x in others if x.endswith(tail)]
        new = _match_case(m.group(), rng.choice(same_form or others))
        return _sub_at(ex.answer, m, new), f"{m.group()} -> {new}"
    if numeric:
        m = rng.choice(numeric)
        value = int(m.group(1))
        new_value = rng.choice([v for v in range(1, 13) if v != value])
        new = f"{new_value}{m.group(2)}{m.group(3)}"
        return _sub_at(ex.answer, m, new), f"{m.group()} -> {new}"
    return None


def _candidates(text: str, lang: str, names: frozenset[str] = frozenset()) -> list[Any]:
    """Name-like spans of ``text``: capitalised words (sentence-initial ones only when ``names``,
    the passages' capitalised words inside sentences, holds them), katakana words in Japanese, runs
    of Han characters, or other words of four letters or more."""
    if lang == "ja":
        pattern = _KATAKANA
    elif lang == "zh":
        pattern = _HAN
    elif lang in _CASED:
        pattern = _CAPWORD
    else:
        pattern = _WORD
    out = []
    for m in _spans_outside_citations(text, pattern):
        before = text[:m.start()].rstrip()
        if pattern is _CAPWORD and m.group() not in names and (
                not before or before[-1] in ".!?:\n" or re.search(r"\n\s*\d+[.)]\s*$", before)):
            continue  # sentence-initial: not evidence of a name
        out.append(m)
    return out


def _titles(examples: Sequence[Example]) -> list[str]:
    return sorted({t for e in examples for p in e.passages for t in _title_names(p.title or "")})


def _title_names(title: str) -> list[str]:
    # a title, or its parts around brackets and colons ("Nàìjíríà (ìtàn)", "Zugspitze: Seilbahn")
    return [t.strip() for t in regex.split(r"[():：（）,，、]", title) if len(t.strip()) >= 2]


def _edit_title(ex: Example, rng: random.Random, donors: Sequence[Example]) -> tuple[str, str] | None:
    """A name the answer takes from its passages' titles, replaced by another topic's title."""
    own = _passage_text(ex.passages)
    mine = [t for t in _titles([ex]) if _spans_outside_citations(ex.answer, _word_re(t, ex.lang))]
    if not mine:
        return None
    old = rng.choice(sorted(mine, key=len, reverse=True)[:3])
    pool = [t for t in _titles([d for d in donors if d.id != ex.id]) if t not in own and t.lower() != old.lower()]
    if not pool:
        return None
    new = rng.choice(pool)
    m = _spans_outside_citations(ex.answer, _word_re(old, ex.lang))[0]
    return _sub_at(ex.answer, m, new), f"{old} -> {new}"


def _inner_names(text: str) -> frozenset[str]:
    """Capitalised words of ``text`` that stand inside a sentence somewhere (names, not openers)."""
    return frozenset(m.group() for m in _candidates(text, "en"))


def _edit_entity(ex: Example, rng: random.Random, donors: Sequence[Example]) -> tuple[str, str] | None:
    own = _passage_text(ex.passages)
    if rng.random() < 0.5 or ex.lang in ("th", "km", "zh"):
        edited = _edit_title(ex, rng, donors)
        if edited is not None:
            return edited
    if ex.lang in ("th", "km"):
        return _edit_substring(ex, rng, donors, own)
    cands = [m for m in _candidates(ex.answer, ex.lang) if m.group() in own or ex.lang not in ("zh", "ja")]
    if ex.lang == "zh":
        # a Han run is a clause: take two or three of its characters as the "name"
        spans = []
        for m in cands:
            s = m.group()
            n = min(len(s), rng.choice((2, 2, 3)))
            k = rng.randrange(0, len(s) - n + 1)
            spans.append((m.start() + k, m.start() + k + n))
    else:
        spans = [(m.start(), m.end()) for m in cands]
    if not spans:
        return None
    start, end = rng.choice(spans)
    old = ex.answer[start:end]
    pool = sorted({m.group() for d in donors for m in _candidates(_passage_text(d.passages), ex.lang)
                   if m.group() not in own and m.group() != old})
    if ex.lang == "zh":
        pool = sorted({p[:len(old)] for p in pool if len(p) >= len(old) and p[:len(old)] not in own})
    if not pool:
        return None
    new = _match_case(old, rng.choice(pool))
    return ex.answer[:start] + new + ex.answer[end:], f"{old} -> {new}"


def _graphemes(text: str) -> list[str]:
    out: list[str] = []
    for ch in text:
        if out and (unicodedata.category(ch)[0] == "M" or out[-1].endswith("\u17d2")):
            out[-1] += ch
        else:
            out.append(ch)
    return out


def _edit_substring(ex: Example, rng: random.Random, donors: Sequence[Example], own: str) -> tuple[str, str] | None:
    """Thai and Khmer: a stretch of three to five letters of the answer found in its passages,
    replaced by a stretch of another topic's passages."""
    body = _CITE.sub("", ex.answer)
    g = _graphemes(body)
    letters = [i for i, c in enumerate(g) if c[0].isalpha()]
    if len(letters) < 6:
        return None
    for _ in range(20):
        n = rng.randint(3, 5)
        i = rng.choice(letters)
        piece = g[i:i + n]
        old = "".join(piece)
        if len(piece) == n and all(c[0].isalpha() for c in piece) and old in own:
            break
    else:
        return None
    donor_texts = [_passage_text(d.passages) for d in donors]
    for _ in range(20):
        dg = _graphemes(rng.choice(donor_texts)) if donor_texts else []
        if len(dg) < n + 1:
            continue
        j = rng.randrange(0, len(dg) - n)
        new = "".join(dg[j:j + n])
        if all(c[0].isalpha() for c in dg[j:j + n]) and new not in own:
            pos = ex.answer.find(old)
            return ex.answer[:pos] + new + ex.answer[pos + len(old):], f"{old} -> {new}"
    return None


def _edit_negation(ex: Example, rng: random.Random, donors: Sequence[Example]) -> tuple[str, str] | None:
    lex = _lexicon(ex.lang)
    text = ex.answer
    if ex.lang in _NOSPACE or ex.lang == "ko":
        for neg in sorted(lex.get("negation_substrings", []), key=len, reverse=True):
            if neg in text and not any(neg in x for x in lex.get("not_negations", [])) and rng.random() < 0.6:
                i = text.find(neg)
                return text[:i] + text[i + len(neg):], f"{neg} removed"
    else:
        words = [w for w in lex.get("negations", []) if w not in ("without", "sans", "bila", "ohne", "без", "ilman")]
        hits = [m for w in words for m in _spans_outside_citations(text, _word_re(w, ex.lang))]
        if hits and rng.random() < 0.6:
            m = rng.choice(hits)
            new = re.sub(r"\s{2,}", " ", text[:m.start()] + text[m.end():]).replace(" ,", ",").replace(" .", ".")
            if ex.lang == "fr":
                new = re.sub(r"\b(n'|ne )", "", new, count=1)
            return new, f"{m.group()} removed"
    rules = _NEGATE.get(ex.lang, ())
    for pattern, repl in rules:
        if ex.lang in _NOSPACE or ex.lang == "ko":
            if pattern in text:
                i = text.find(pattern)
                return text[:i] + repl + text[i + len(pattern):], f"{pattern} -> {repl}"
            continue
        found = _spans_outside_citations(text, regex.compile(pattern))
        if found:
            m = rng.choice(found)
            new = m.expand(repl)
            return _sub_at(text, m, new), f"{m.group()} -> {new}"
    return None


def _edit_comparison(ex: Example, rng: random.Random, donors: Sequence[Example]) -> tuple[str, str] | None:
    hits: list[tuple[Any, str]] = []
    for a, b in COMPARISONS.get(ex.lang, ()):
        for old, new in ((a, b), (b, a)):
            hits += [(m, new) for m in _spans_outside_citations(ex.answer, _word_re(old, ex.lang))]
    if not hits:
        return None
    m, new = rng.choice(hits)
    new = _match_case(m.group(), new)
    return _sub_at(ex.answer, m, new), f"{m.group()} -> {new}"


def _edit_roles(ex: Example, rng: random.Random, donors: Sequence[Example]) -> tuple[str, str] | None:
    for sentence in rng.sample(_sentences(ex.answer, ex.lang), k=len(_sentences(ex.answer, ex.lang))):
        # names (capitalised words, katakana, titles of the passages) and numbers of similar size:
        # swapping two arbitrary words of an uncased script would make no sentence at all
        spans = _spans_outside_citations(sentence, _DIGITS)
        if ex.lang in _CASED or ex.lang == "ja":
            spans += _candidates(sentence, ex.lang, _inner_names(_passage_text(ex.passages)))
        for t in _titles([ex]):
            spans += _spans_outside_citations(sentence, _word_re(t, ex.lang))
        spans = sorted({(m.start(), m.end()): m for m in spans}.values(), key=lambda m: m.start())
        pairs = [(a, b) for i, a in enumerate(spans) for b in spans[i + 1:]
                 if a.end() <= b.start() and a.group().lower() != b.group().lower()
                 and a.group()[:1].isdigit() == b.group()[:1].isdigit()
                 and (not a.group()[:1].isdigit() or abs(len(a.group()) - len(b.group())) <= 1)]
        if not pairs:
            continue
        a, b = rng.choice(pairs)
        swapped = (sentence[:a.start()] + b.group() + sentence[a.end():b.start()] + a.group() + sentence[b.end():])
        return ex.answer.replace(sentence, swapped, 1), f"{a.group()} <-> {b.group()}"
    return None


def _donor_sentence(ex: Example, rng: random.Random, donors: Sequence[Example]) -> str | None:
    own = _passage_text(ex.passages)
    pool = [d for d in donors if d.lang == ex.lang and d.id != ex.id]
    for _ in range(10):
        if not pool:
            return None
        d = rng.choice(pool)
        sents = [s for p in d.passages for s in _sentences(p.text, d.lang) if 20 <= len(s) <= 240 and s not in own]
        if sents:
            return rng.choice(sents)
    return None


def _citation_of(answer: str) -> str:
    m = _CITE.search(answer)
    return m.group().strip() if m else ""


def _append(answer: str, sentence: str, lang: str, cite: str) -> str:
    sep = "" if lang in _NOSPACE else " "
    if cite:
        body = _END.sub("", sentence.strip())
        end = _END.search(sentence.strip())
        sentence = f"{body}{'' if lang in _NOSPACE else ' '}{cite}{end.group() if end else ''}"
    return answer.rstrip() + sep + sentence.strip()


def _edit_added_sentence(ex: Example, rng: random.Random, donors: Sequence[Example]) -> tuple[str, str] | None:
    s = _donor_sentence(ex, rng, donors)
    if s is None:
        return None
    cite = _citation_of(ex.answer) if rng.random() < 0.5 else ""
    return _append(ex.answer, s, ex.lang, cite), f"+ {s}"


def _edit_added_clause(ex: Example, rng: random.Random, donors: Sequence[Example]) -> tuple[str, str] | None:
    s = _donor_sentence(ex, rng, donors)
    if s is None:
        return None
    clause = _END.sub("", s.strip())
    if ex.lang not in _NOSPACE and clause[:1].isupper() and not clause.split(" ", 1)[0][1:].isupper():
        first = clause.split(" ", 1)[0]
        if first not in ex.answer:  # lower-case a sentence opener, keep names
            clause = clause[:1].lower() + clause[1:]
    body = ex.answer.rstrip()
    cites = ""
    while True:
        m = re.search(r"\s?\[[^\[\]\n]{1,400}\]\s*$", _END.sub("", body))
        if not m:
            break
        cites = m.group().strip() + cites
        body = _END.sub("", body)[:m.start()].rstrip()
    end = _END.search(body)
    body = _END.sub("", body)
    punct = end.group() if end else ("។" if ex.lang == "km" else "。" if ex.lang in ("ja", "zh") else "" if ex.lang == "th" else ".")
    cite = f"{'' if ex.lang in _NOSPACE else ' '}{cites}" if cites else ""
    return f"{body}{_AND.get(ex.lang, ' ')}{clause}{cite}{punct}", f"+ {clause}"


def _edit_other_answer(ex: Example, rng: random.Random, donors: Sequence[Example]) -> tuple[str, str] | None:
    pool = [d for d in donors if d.lang == ex.lang and d.id != ex.id and d.answer != ex.answer]
    if not pool:
        return None
    d = rng.choice(pool)
    if set(d.passages) & set(ex.passages):
        return None
    return d.answer, f"answer of {d.id}"


_EDITS = {"number": _edit_number, "date": _edit_date, "entity": _edit_entity, "negation": _edit_negation,
          "comparison": _edit_comparison, "roles": _edit_roles, "added_clause": _edit_added_clause,
          "added_sentence": _edit_added_sentence, "other_answer": _edit_other_answer}


def perturb(ex: Example, kind: str, rng: random.Random, donors: Sequence[Example] = ()) -> Example | None:
    """An unfaithful version of the faithful ``ex`` made by edit ``kind`` (one of
    :data:`NEGATIVE_KINDS`), or ``None`` when its answer allows no such edit. ``donors`` are other
    triples (same language) whose passages supply foreign names and sentences."""
    if kind not in _EDITS:
        raise ValueError(f"unknown perturbation kind {kind!r}: expected one of {', '.join(NEGATIVE_KINDS)}")
    if ex.lang not in LANGS:
        raise ValueError(f"perturbation language {ex.lang!r} is not supported: expected one of {', '.join(LANGS)}")
    edited = _EDITS[kind](ex, rng, donors)
    if edited is None or edited[0].strip() == ex.answer.strip():
        return None
    answer, detail = edited
    return replace(ex, id=f"{ex.id}~{kind}", answer=answer, label=0, kind=kind, detail=detail)


# ---------------------------------------------------------------- positives


def _relevant(ex: Example) -> list[Passage]:
    rel = [p for p in ex.passages if p.id in ex.relevant]
    return rel or list(ex.passages)


def _best_sentence(ex: Example, exclude: str = "") -> tuple[Passage, str] | None:
    from ..text.tokenize import content_units

    units = content_units(strip_citations(ex.answer), ex.lang)
    best: tuple[float, Passage, str] | None = None
    for p in _relevant(ex):
        for s in _sentences(p.text, ex.lang):
            if s == exclude or len(s) < 10:
                continue
            score = len(units & content_units(s, ex.lang))
            if best is None or score > best[0]:
                best = (score, p, s)
    return None if best is None else (best[1], best[2])


def _cite(sentence: str, pid: str, lang: str) -> str:
    s = sentence.strip()
    end = _END.search(s)
    body = _END.sub("", s)
    return f"{body}{'' if lang in _NOSPACE else ' '}[{pid}]{end.group() if end else ''}"


def positive(ex: Example, kind: str, rng: random.Random) -> Example | None:
    """A faithful variant of ``ex`` (one of :data:`POSITIVE_KINDS`), or ``None`` when it has none."""
    if kind == "original":
        return replace(ex, id=f"{ex.id}~original", kind=kind)
    if kind == "recited":
        if _CITE.search(ex.answer):
            answer = strip_citations(ex.answer)
        else:
            pid = _relevant(ex)[0].id
            answer = "".join(_cite(s, pid, ex.lang) + ("" if ex.lang in _NOSPACE else " ")
                             for s in _sentences(ex.answer, ex.lang)).strip()
        return replace(ex, id=f"{ex.id}~recited", answer=answer, kind=kind)
    if kind == "framed":
        opener = rng.choice(OPENERS[ex.lang])
        body = ex.answer
        if ex.lang not in _NOSPACE and opener[-2:] in (", ", "، ") and body[:2].istitle() and body.split(" ", 1)[0] \
                not in _passage_text(_relevant(ex)).split(" ", 1)[0]:
            body = body[:1].lower() + body[1:]
        return replace(ex, id=f"{ex.id}~framed", answer=opener + body, kind=kind)
    if kind == "extractive":
        best = _best_sentence(ex)
        if best is None:
            return None
        p, s = best
        answer = _cite(s, p.id, ex.lang) if rng.random() < 0.5 else s
        return replace(ex, id=f"{ex.id}~extractive", answer=answer, kind=kind)
    if kind in ("added_supported", "list"):
        sents = [(p, s) for p in _relevant(ex) for s in _sentences(p.text, ex.lang) if 10 <= len(s) <= 240]
        if len(sents) < 2:
            return None
        if kind == "added_supported":
            p, s = rng.choice(sents)
            if s in ex.answer:
                return None
            # cited as often as the added sentences of the negatives are (no label may follow the markers)
            answer = _append(ex.answer, s, ex.lang, f"[{p.id}]" if _CITE.search(ex.answer) and rng.random() < 0.5 else "")
        else:
            chosen = rng.sample(sents, k=min(len(sents), rng.choice((2, 3))))
            cite = rng.random() < 0.5
            answer = "\n".join(f"{i}. {_cite(s, p.id, ex.lang) if cite else s}" for i, (p, s) in enumerate(chosen, 1))
        return replace(ex, id=f"{ex.id}~{kind}", answer=answer, kind=kind)
    if kind == "refusal":
        return replace(ex, id=f"{ex.id}~refusal", answer=rng.choice(REFUSALS[ex.lang]), kind=kind)
    raise ValueError(f"unknown positive kind {kind!r}: expected one of {', '.join(POSITIVE_KINDS)}")


def generate(triples: Sequence[Example], seed: int, *, negatives: int = 4, refusal_rate: float = 0.1,
             extractive_negatives: int = 2) -> list[Example]:
    """The synthetic training set of ``triples`` (faithful examples): per triple its original and
    up to two other positives, and up to ``negatives`` negatives of distinct kinds drawn at random
    (strong edits twice as likely as weak ones); then its ``extractive`` positive (a passage sentence
    copied) and up to ``extractive_negatives`` strong edits of that copy (minimal edits against the
    passage's own wording: a swapped name or number is then the only difference, as in real
    answers that copy a sentence and change one fact); in a fixed order, the same for the same seed."""
    rng = random.Random(seed)
    by_lang: dict[str, list[Example]] = {}
    for t in triples:
        by_lang.setdefault(t.lang, []).append(t)
    out: list[Example] = []
    for t in triples:
        donors = by_lang[t.lang]
        if rng.random() < 0.5:  # half the triples cite their passages: no label may follow the markers
            cited = positive(t, "recited", rng)
            t = replace(cited, id=t.id, kind="original") if cited is not None else t
        out.append(positive(t, "original", rng) or t)
        for kind in rng.sample(["recited", "framed", "extractive", "added_supported", "list"], k=2):
            p = positive(t, kind, rng)
            if p is not None:
                out.append(p)
        if rng.random() < refusal_rate:
            p = positive(t, "refusal", rng)
            if p is not None:
                out.append(p)
        kinds = list(STRONG_KINDS) * 2 + list(WEAK_KINDS)
        rng.shuffle(kinds)
        made: set[str] = set()
        for kind in kinds:
            if len(made) >= negatives:
                break
            if kind in made:
                continue
            n = perturb(t, kind, rng, donors)
            if n is not None:
                out.append(n)
                made.add(kind)
        if extractive_negatives:
            ext = positive(t, "extractive", rng)
            if ext is not None:
                if not any(e.id == ext.id for e in out[-8:]):
                    out.append(ext)
                strong = list(STRONG_KINDS)
                rng.shuffle(strong)
                done = 0
                for kind in strong:
                    if done >= extractive_negatives:
                        break
                    n = perturb(ext, kind, rng, donors)
                    if n is not None:
                        out.append(n)
                        done += 1
    return out


def citing_ids(answer: str, passages: Sequence[Passage]) -> list[str]:
    """The passage ids ``answer`` cites (for checks of generated examples)."""
    return find_citations(answer, [p.id for p in passages])[0]
