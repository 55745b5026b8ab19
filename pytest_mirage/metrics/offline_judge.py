"""The offline faithfulness judge at run time: features, the shipped model, the metric.

``faithfulness_judge`` is the probability that an answer is faithful to its passages, from a
logistic regression (with Platt calibration) over the answer-level aggregates :data:`FEATURES` of
the sentence verdicts (:func:`~pytest_mirage.metrics.verdicts.sentence_verdicts`, one pass shared
with ``support_sentences`` and ``support_facts``): word coverage by the sentence's evidence (the
units and the evidence rule of ``support_lexical``), coverage by the best-aligned passage sentence,
the share of the sentence's adjacent token pairs found in that order in its evidence, spans that
replace a span of the aligned passage sentence, shared words in swapped order, the fact check's
unsupported facts by kind, comparison words flipped against the passages, refusals and lengths. It needs no model and
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
from bisect import bisect_right, insort
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache
from importlib import resources
from itertools import pairwise
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..prompts import strip_citations
from ..suites.model import Passage
from ..text.tokenize import NO_SPACE_LANGS, content_units, normalize, tokenize

MODEL_FILE = "offline_faithfulness.json"
MODEL_FORMAT = "pytest-mirage/offline-faithfulness"
TRAIN_COMMAND = "python benchmarks/train_faithfulness.py --seed 0"

#: The fixed feature list, in the order of the model's coefficients. They are answer-level
#: aggregates of the sentence verdicts (:func:`~pytest_mirage.metrics.verdicts.sentence_verdicts`,
#: computed once per metric pass and shared with ``support_sentences`` and ``support_facts``) over
#: the *claim sentences*: the checkable ones (supported or unsupported), all sentences with content
#: when none is checkable. A sentence's evidence is the passages it cites, all passages when it cites
#: none, nothing when it cites only unknown ids.
#:
#: * ``lex_mean``, ``lex_min``: mean and minimum coverage of the sentences' content units by their
#:   evidence (``support_lexical``'s coverage); ``lex_low_share``: share of sentences below 0.6;
#: * ``qlex_min``, ``qlex_mean``: the same coverage with the question's units counted as covered
#:   (answers restate the question);
#: * ``uncovered_log``, ``max_uncovered_log``: ``log1p`` of the content units found in no evidence,
#:   over the answer and in its worst sentence;
#: * ``align_min``, ``align_mean``: coverage by the single best-aligned passage sentence;
#: * ``order_min``, ``order_mean``: share of the sentence's adjacent token pairs (character
#:   triples in scripts without spaces) found adjacent in its evidence;
#: * ``facts_log`` (``log1p`` of the facts checked), ``facts_share`` (share supported, 1 with no
#:   fact) and ``unsup_*``: unsupported facts by kind (capped at 3; ``unsup_comparison``: a
#:   comparison word against the direction of the aligned passage sentence), ``unsup_any`` (0/1),
#:   ``unsup_max``: the most unsupported facts in one sentence (capped at 3);
#: * ``comparison_unsupported``: comparison words (``more``/``less``, ...) absent from the passages
#:   whose opposite the passages use (``at least`` where they say ``at most``), capped at 3;
#: * ``unsupported_share``: share of the claim sentences whose verdict is unsupported (a baseless
#:   added sentence, an invented number); ``baseless``: claim sentences under half covered (capped 3);
#: * ``substitutions``: spans of a sentence that replace a span of its aligned passage sentence
#:   between shared words (``Bangladesh and Myanmar`` where the passage says ``Bangladesh and India``)
#:   with words found in no evidence (capped at 3);
#: * ``inversion_max``: over the sentences, the largest share of pairs of shared words (each once in
#:   the sentence and once in its aligned passage sentence) in the opposite order (swapped roles);
#: * ``swap_restores``: the most adjacent word pairs of an aligned passage sentence that swapping two
#:   words of the answer sentence back would restore (capped at 3; scripts with spaces);
#: * (the share of refusal sentences is no feature: trained on it, the judge learnt that an answer
#:   with a refusal sentence is faithful, which would pass a hedged hallucination, "the passages do
#:   not say; it costs $5"; refusal sentences are left out of the claim sentences instead);
#: * ``displaced``: names and quotes of a sentence that restates one passage sentence (alignment
#:   at least 0.5) which the passages hold elsewhere but that sentence does not ("The Summit Gondola
#:   is run by Alpvia" where Alpvia runs another lift): a fact moved to the wrong place (capped at 3);
#: * ``sentences_log``, ``units_log``: ``log1p`` of the sentence and content-unit counts.
#:
#: (Whether a sentence cites is not a feature: in any training set made by editing answers, the
#: markers follow the edits rather than faithfulness.)
FEATURES: tuple[str, ...] = (
    "lex_mean", "lex_min", "lex_low_share", "qlex_min", "qlex_mean", "uncovered_log", "max_uncovered_log",
    "align_min", "align_mean", "order_min", "order_mean",
    "facts_log", "facts_share", "unsup_number", "unsup_date", "unsup_name", "unsup_quote", "unsup_negation",
    "unsup_dropped_negation", "unsup_comparison", "unsup_any", "unsup_max", "comparison_unsupported",
    "unsupported_share", "baseless", "substitutions", "inversion_max", "swap_restores", "displaced", "sentences_log", "units_log",
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


def is_refusal(answer: str, lang: str) -> bool:
    """True when every sentence of ``answer`` with content declines to answer (the sentence
    verdicts' ``refusal``: the lexicon's refusal phrases of ``lang`` and of English)."""
    from .verdicts import answer_is_refusal, sentence_verdicts

    return answer_is_refusal(sentence_verdicts(answer, (), lang))


# ---------------------------------------------------------------- features


def _passage_text(p: Passage) -> str:
    return f"{p.title}\n{p.text}" if p.title else p.text


def _char_script(lang: str) -> bool:
    """Scripts without word spaces whose tokens are characters (Korean has spaced words)."""
    return lang in NO_SPACE_LANGS and lang != "ko"


def _order_n(lang: str) -> int:
    return 3 if _char_script(lang) else 2


def _grams(tokens: Sequence[str], n: int) -> set[tuple[str, ...]]:
    return set(zip(*(tokens[i:] for i in range(n)), strict=False))


@lru_cache(maxsize=4096)
def _passage_compact(text: str, lang: str) -> str:
    """A passage text normalised, without spaces (character scripts: what their tokens spell)."""
    return "".join(normalize(text, lang).split())


@lru_cache(maxsize=4096)
def _passage_norm(text: str, lang: str) -> str:
    return normalize(text, lang)


@lru_cache(maxsize=8192)
def _tokens(text: str, lang: str) -> tuple[str, ...]:
    return tuple(tokenize(text, lang))


@lru_cache(maxsize=32)
def _comparison_pairs(lang: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(comparison word, its opposites), normalised, for ``lang``."""
    opposite: dict[str, set[str]] = {}
    for a, b in COMPARISONS.get(lang, ()):
        a, b = normalize(a, lang), normalize(b, lang)
        opposite.setdefault(a, set()).add(b)
        opposite.setdefault(b, set()).add(a)
    return tuple((w, tuple(sorted(o))) for w, o in sorted(opposite.items()))


@lru_cache(maxsize=2048)
def _word_re(word: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(word)}(?!\w)")


def _contains(text: str, word: str, lang: str) -> bool:
    if _char_script(lang):
        return word in text
    return _word_re(word).search(text) is not None


def _substitutions(tokens: Sequence[str], aligned: Sequence[str], evidence_text: str) -> int:
    """Character scripts: spans of ``tokens`` that replace a span of the aligned passage sentence
    next to a matching span (``เชียงราย`` where it says ``เชียงใหม่``), found nowhere in the evidence."""
    sm = SequenceMatcher(None, tokens, aligned, autojunk=False)
    ops = sm.get_opcodes()
    count = 0
    for k, (tag, i1, i2, _j1, _j2) in enumerate(ops):
        if tag != "replace":
            continue
        if not ((k > 0 and ops[k - 1][0] == "equal") or (k + 1 < len(ops) and ops[k + 1][0] == "equal")):
            continue
        new = "".join(tokens[i1:i2])
        if len(new) >= 2 and new not in evidence_text and any(ch.isalnum() for ch in new):
            count += 1
    return count


def _gap_substitutions(tokens: Sequence[str], aligned: Sequence[str], ev_units: frozenset[str]) -> int:
    """Spaced scripts: runs of words found in no evidence between two words that the aligned passage
    sentence has close together with other words between them, none of them in the sentence
    ("Bangladesh and Myanmar along" where it says "Bangladesh and India's West Bengal along"): a span
    replaced, whatever the order of the rest of the sentence."""
    own = set(tokens)
    where: dict[str, list[int]] = {}
    for i, t in enumerate(aligned):
        where.setdefault(t, []).append(i)
    count = 0
    i = 0
    n = len(tokens)

    def new(t: str) -> bool:
        return t not in ev_units and any(ch.isalnum() for ch in t)

    while i < n:
        if not new(tokens[i]):
            i += 1
            continue
        j = i
        while j + 1 < n and new(tokens[j + 1]):
            j += 1
        if any(len(t) >= 2 or t.isdigit() for t in tokens[i:j + 1]):
            if i > 0 and j + 1 < n:
                a, b = tokens[i - 1], tokens[j + 1]
                count += any(pos + k < len(aligned) and aligned[pos + k] == b and
                             all(t not in own for t in aligned[pos + 1:pos + k])
                             for pos in where.get(a, ()) for k in range(2, 6))
            elif i > 0:  # at the sentence's end: the aligned sentence goes on with a word it lacks
                count += any(pos + 1 < len(aligned) and aligned[pos + 1] not in own and aligned[pos + 1].isalnum()
                             for pos in where.get(tokens[i - 1], ()))
            elif j + 1 < n:  # at its start: the aligned sentence has a word it lacks before
                count += any(pos > 0 and aligned[pos - 1] not in own and aligned[pos - 1].isalnum()
                             for pos in where.get(tokens[j + 1], ()))
        i = j + 1
    return count


def _inversions(tokens: Sequence[str], aligned: Sequence[str], lang: str) -> float:
    """Share of pairs of tokens (each once in the sentence and once in ``aligned``; longer than one
    character outside character scripts) whose order differs between the two."""
    keep = 1 if _char_script(lang) else 2
    a_pos: dict[str, int] = {}
    dup: set[str] = set()
    for i, t in enumerate(tokens):
        if t in a_pos:
            dup.add(t)
        a_pos[t] = i
    p_pos: dict[str, int] = {}
    for i, t in enumerate(aligned):
        if t in p_pos:
            dup.add(t)
        p_pos[t] = i
    order = [p_pos[t] for t in sorted((t for t in a_pos if t in p_pos and t not in dup and len(t) >= keep
                                       and any(ch.isalnum() for ch in t)), key=a_pos.__getitem__)]
    n = len(order)
    if n < 3:
        return 0.0
    # pairs i < j with order[i] > order[j], counted with a sorted prefix (the positions are distinct)
    inverted = 0
    seen: list[int] = []
    for k, x in enumerate(order):
        inverted += k - bisect_right(seen, x)
        insort(seen, x)
    return inverted / (n * (n - 1) / 2)


STEM_CHARS = 5


def _stems(tokens: Sequence[str]) -> tuple[str, ...]:
    """Each token cut to its first :data:`STEM_CHARS` characters: the order features compare words
    across inflection (ru "Карпов обыграл Каспарова" / "Каспаров обыграл Карпова", fi "Hannibal
    voitti Scipion" / "Scipio voitti Hannibalin")."""
    return tuple(t[:STEM_CHARS] for t in tokens)


def _restoring_swap(tokens: Sequence[str], aligned: Sequence[str]) -> int:
    """Spaced scripts: the most adjacent pairs of the aligned passage sentence that swapping two
    words of the sentence back would restore ("Villeneuve defeated Nelson" against "Nelson defeated
    Villeneuve": 2), over the pairs of words that occur once in each, in the opposite order."""
    pairs = set(pairwise(aligned))
    at: dict[str, int] = {}
    for i, t in enumerate(aligned):
        at[t] = -1 if t in at else i
    seen: dict[str, int] = {}
    for i, t in enumerate(tokens):
        seen[t] = -1 if t in seen else i
    cand = sorted(i for t, i in seen.items() if i >= 0 and at.get(t, -1) >= 0 and (len(t) >= 2 or t.isdigit()))
    if len(cand) < 2:
        return 0
    n = len(tokens)

    def matched(seq: Sequence[str], spots: set[int]) -> int:
        return sum(1 for k in spots if 0 <= k < n - 1 and (seq[k], seq[k + 1]) in pairs)

    best = 0
    for x in range(len(cand)):
        for y in range(x + 1, len(cand)):
            i, j = cand[x], cand[y]
            if at[tokens[i]] < at[tokens[j]]:
                continue  # same order as in the passage sentence
            spots = {i - 1, i, j - 1, j}
            swapped = list(tokens)
            swapped[i], swapped[j] = swapped[j], swapped[i]
            best = max(best, matched(swapped, spots) - matched(tokens, spots))
    return best


def features(answer: str, passages: Sequence[Passage], lang: str, question: str = "",
             verdicts: Sequence[Any] | None = None) -> dict[str, float]:
    """The :data:`FEATURES` of ``answer`` (raw, with citation markers) against ``passages``.

    ``verdicts``: the answer's sentence verdicts when the metric pass already made them (computed
    here otherwise). An answer without content units gets 0 coverage (the metric makes it null
    before asking); passages may be empty (every sentence is then unsupported)."""
    from .facts import norm
    from .verdicts import (
        _passage_sentences,
        _sentence_units,
        _value_of,
        sentence_verdicts,
        source_units,
    )

    if verdicts is None:
        verdicts = sentence_verdicts(answer, passages, lang, question)
    content = [v for v in verdicts if v.length]
    sents = [v for v in content if v.checkable] or [v for v in content if v.verdict != "refusal"] or content
    by_id = {p.id: p for p in passages}
    q_units = _sentence_units(question, lang) if question else frozenset()
    n = _order_n(lang)
    char = _char_script(lang)
    lex: list[float] = []
    qlex: list[float] = []
    uncovered: list[float] = []
    align: list[float] = []
    order: list[float] = []
    units_total = 0
    substitutions = 0
    inversion = 0.0
    swap = 0
    unsup_max = 0
    unsupported_sents = 0
    baseless = 0
    displaced = 0
    ev_cache: dict[tuple[str, ...], tuple[frozenset[str], str]] = {}
    for v in sents:
        length = v.length
        units_total += length
        evidence = [by_id[c] for c in v.cited] if v.cited else [] if v.invalid else list(passages)
        key = tuple(p.id for p in evidence)
        if key not in ev_cache:  # the evidence's units, and its text without spaces (character scripts)
            texts = [_passage_text(p) for p in evidence]
            ev_cache[key] = (frozenset().union(*(_passage_sentences(t, lang).units for t in texts)),
                             "".join(_passage_compact(t, lang) for t in texts) if char else "")
        ev_units, ev_text = ev_cache[key]
        lex.append(v.coverage)
        uncovered.append(float(length - round(v.coverage * length)))
        if q_units:
            units = _sentence_units(_value_of(v.text, lang), lang) - source_units(lang)
            qlex.append(len(units & (ev_units | q_units)) / len(units) if units else 0.0)
        else:
            qlex.append(v.coverage)
        align.append(v.alignment)
        tokens = _tokens(v.text, lang)
        aligned = _tokens(v.aligned_sentence, lang) if v.aligned_sentence else ()
        grams = _grams(tokens, n)
        order.append(len(grams & _grams(aligned, n)) / len(grams) if grams else v.alignment)
        if aligned:
            substitutions += (_substitutions(tokens, aligned, ev_text) if char
                              else _gap_substitutions(tokens, aligned, ev_units))
            if char:
                inversion = max(inversion, _inversions(tokens, aligned, lang))
            else:  # words cut to their first letters: "Karpov beat Kasparov" against "Kasparov beat Karpova"
                stems, aligned_stems = _stems(tokens), _stems(aligned)
                inversion = max(inversion, _inversions(stems, aligned_stems, lang))
                swap = max(swap, _restoring_swap(stems, aligned_stems))
        if v.alignment >= 0.5 and v.aligned_sentence:
            aligned_norm = norm(v.aligned_sentence, lang)
            displaced += sum(1 for c in v.checks if c.kind in ("name", "quote") and c.supported and
                             c.text not in aligned_norm)
        unsup_max = max(unsup_max, len(v.missing))
        unsupported_sents += v.verdict == "unsupported"
        baseless += v.coverage < 0.5
    if not sents:
        lex, qlex, uncovered, align, order = [0.0], [0.0], [0.0], [0.0], [0.0]
    checks = [c for v in sents for c in v.checks]
    unsupported: dict[str, int] = {}
    for c in checks:
        if not c.supported:
            kind = "date" if c.kind == "month" else c.kind
            unsupported[kind] = unsupported.get(kind, 0) + 1
    evidence_all = "\n".join(_passage_norm(_passage_text(p), lang) for p in passages)
    text = normalize(strip_citations(answer), lang)
    comparisons = 0
    for w, opposites in _comparison_pairs(lang):
        if _contains(text, w, lang) and not _contains(evidence_all, w, lang) and \
                any(_contains(evidence_all, o, lang) for o in opposites):
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
        "unsup_date": float(min(3, unsupported.get("date", 0))),
        "unsup_name": float(min(3, unsupported.get("name", 0))),
        "unsup_quote": float(min(3, unsupported.get("quote", 0))),
        "unsup_negation": float(min(3, unsupported.get("negation", 0))),
        "unsup_dropped_negation": float(min(3, unsupported.get("dropped_negation", 0))),
        "unsup_comparison": float(min(3, unsupported.get("comparison", 0))),
        "unsup_any": 1.0 if unsupported else 0.0,
        "unsup_max": float(min(3, unsup_max)),
        "comparison_unsupported": float(min(3, comparisons)),
        "unsupported_share": unsupported_sents / len(sents) if sents else 1.0,
        "baseless": float(min(3, baseless)),
        "substitutions": float(min(3, substitutions)),
        "inversion_max": inversion,
        "swap_restores": float(min(3, swap)),
        "displaced": float(min(3, displaced)),
        "sentences_log": math.log1p(len(content)),
        "units_log": math.log1p(units_total),
    }


def _register_caches() -> None:
    from .analysis import PER_TEXT_CACHES

    PER_TEXT_CACHES.extend((_passage_compact, _passage_norm, _tokens))


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
    return Explained(_judge_probability(s, verdicts), details(verdicts))


def _judge_probability(s: Any, verdicts: Sequence[Any]) -> float:
    from .analysis import of
    from .base import NotApplicable

    raw = of(s).raw
    if not content_units(strip_citations(raw), s.case.lang):
        raise NotApplicable("the answer has no words to check")
    return load_model().predict(features(raw, s.context, s.case.lang, s.case.question, verdicts))


def model_source() -> str:
    """The metric's source line: the model file, its SHA-256 and how it was trained."""
    try:
        m = load_model()
    except (ConfigError, OSError, ValueError, KeyError) as e:  # the metric raises it when computed
        return f"pytest-mirage offline judge (pytest_mirage/metrics/{MODEL_FILE}: not loadable: {e})"
    return (f"pytest-mirage offline judge ({m.path}, sha256 {m.sha256[:16]}, trained with "
            f"{m.training.get('command', TRAIN_COMMAND)} on data sha256 {str(m.training.get('data_sha256', ''))[:16]}; "
            "ARES-style synthetic negatives, Saad-Falcon et al. 2024 §3.2)")
