"""Sentence verdicts: offline faithfulness decided per answer sentence, with its evidence.

:func:`sentence_verdicts` splits the answer as :func:`~pytest_mirage.metrics.facts.check_facts`
does (citation markers belong to the sentence they follow; list markers such as ``1.``, ``2)``,
``-`` are dropped) and gives each sentence one :class:`SentenceVerdict`:

* ``refusal``: the sentence declines to answer (``Unable to answer based on given passages.``,
  ``回答できません``, ...: the ``refusals`` phrases of ``metrics/lexicon/LANG.json`` in 19 languages,
  and the English ones in every language; or a negation next to a verb of saying about a text,
  ``speech_verbs``, or of finding it, ``find_verbs``: "they don't mention", "I don't see anything
  about", "N kò rí", "រកមិនឃើញ"). Not a hallucination, and not evidence of faithfulness;
* ``no_content``: nothing to check (no content unit; or at most :data:`SHORT_UNITS` units and no
  fact beside a longer sentence, e.g. ``Yes.``, ``In short:``; a short answer alone is checked);
* ``unsupported``: a fact of the sentence (number, date, name, quote, negation, comparison) is in
  none of its evidence passages, or it cites only ids that name no passage, or it is *baseless*:
  less than :data:`COVERAGE_MIN` of its content units are in its evidence;
* ``supported``: otherwise.

The evidence of a sentence is the rule of ``support_lexical``: the passages it cites, all passages
when it cites none. Its *best-aligned passage sentence* is the passage sentence (of its evidence)
holding the largest share of its content units (``alignment``). A comparison word of the sentence
(``larger``, ``fewer``, ...: the lexicon's ``comparisons``) is unsupported when that aligned
passage sentence holds a comparison of the opposite direction and none of its own; a bound word
(``at least`` / ``at most``, ``up to``, ``至少`` / ``最多``: ``bounds``) likewise, against the aligned
sentence and every evidence sentence holding a bound word and one of its numbers.

Words about the source or the answer's framing (``based on the information provided``, ``In
short``: ``source_words``) are no content units. A negation the fact check finds in no passage is
supported when the sentence restates (:data:`NEGATION_ALIGNMENT`) a passage sentence that negates,
or one that states the negation with an implicit word (``free``, ``only``, ``closed``:
``implicit_negations``) next to what the sentence negates; a dropped negation counts only when the
aligned passage sentence negates, and not when the sentence states it with an implicit word of its
own. A refusal may repeat the question's names and numbers, and the word for one or two that no
passage states ("两份须知都没有提到": it counts the sources). Beside a refusal, a sentence that
suggests whom to ask (``advice_words``: "I'd suggest contacting the organisers") and has no
unsupported fact is ``no_content``: framing, as the refusal is.

The answer-level score ``support_sentences`` (see :func:`sentence_score`) is driven by the weakest
sentence. Each checkable sentence (supported or unsupported) scores

    s = coverage · 2^(−u)

(``u``: its unsupported facts, plus one when it cites only invalid ids), and the answer scores

    support_sentences = (min(s) + mean(s)) / 2

so one invented sentence (coverage 0.2) among five copied ones gives 0.52, one invented number
in a long otherwise copied answer about 0.7, and a fully supported answer 1. An answer whose every
checkable sentence is a refusal is null with the reason ``refusal: ...`` (a threshold on it cannot
pass: a refusal is not shown faithful) and scores 1 on the ``refusal`` metric; its refusal
sentences are left out of the score of an answer that also answers.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import regex  # type: ignore[import-untyped]

from ..suites.model import Passage
from ..text.tokenize import content_units, split_sentences
from .analysis import PER_TEXT_CACHES, of
from .base import NotApplicable, Sample
from .common import raw_answer
from .facts import (
    FactCheck,
    check_sentences,
    facts_of,
    lexicon,
    negation_sites,
    norm,
    stated_values,
    states_negation,
)

COVERAGE_MIN = 0.5  # below this share of its units in its evidence a sentence is baseless
SHORT_UNITS = 3  # a sentence of at most this many units and no fact has nothing to check
# a negation of a sentence with at least this share of its units in one passage sentence that
# negates is that sentence's negation, stated with other words
NEGATION_ALIGNMENT = 0.4

FACT_KINDS = ("number", "date", "name", "quote", "negation", "dropped_negation", "comparison")
_KIND = {"month": "date"}  # FactCheck.kind -> the feature kind

#: The per-sentence features, in this order (:attr:`SentenceVerdict.features`); a stable API read
#: by trained judges. ``length``: content units of the sentence; ``coverage``: share of them in its
#: evidence passages; ``alignment``: share of them in its best-aligned passage sentence;
#: ``is_refusal``: 1 for a refusal; ``cites``: 1 when it cites a passage; ``cites_invalid``: 1 when it
#: cites only ids that name no passage; ``facts`` / ``unsupported``: its fact checks and the
#: unsupported ones; then per kind (number, date, name, quote, negation, comparison) the checks
#: ``KIND`` and the unsupported ones ``unsupported_KIND``, and ``dropped_negation`` (a negation of
#: the aligned evidence the sentence repeats without it: always unsupported).
FEATURES: tuple[str, ...] = (
    "length", "coverage", "alignment", "is_refusal", "cites", "cites_invalid", "facts", "unsupported",
    "number", "unsupported_number", "date", "unsupported_date", "name", "unsupported_name",
    "quote", "unsupported_quote", "negation", "unsupported_negation", "dropped_negation",
    "comparison", "unsupported_comparison",
)

VERDICTS = ("supported", "unsupported", "no_content", "refusal")


@dataclass(frozen=True, slots=True)
class SentenceVerdict:
    """The verdict on one answer sentence and its evidence.

    ``aligned_passage`` / ``aligned_sentence``: the id and text of the best-aligned passage sentence
    (None / "" when the sentence has no evidence); ``missing``: its unsupported fact checks;
    ``reason``: why it is unsupported (or a refusal), quoting the sentence; ``features``: the
    :data:`FEATURES` values, in order."""

    index: int
    text: str
    verdict: str
    cited: tuple[str, ...]
    invalid: tuple[str, ...]
    coverage: float
    alignment: float
    aligned_passage: str | None
    aligned_sentence: str
    checks: tuple[FactCheck, ...]
    missing: tuple[FactCheck, ...]
    length: int
    reason: str = ""
    features: tuple[float, ...] = field(default=(), repr=False)

    @property
    def checkable(self) -> bool:
        return self.verdict in ("supported", "unsupported")

    @property
    def score(self) -> float:
        """``coverage · 2^(−u)`` (see the module docstring)."""
        u = len(self.missing) + (1 if self.invalid and not self.cited else 0)
        return self.coverage * 0.5 ** u

    def feature_map(self) -> Mapping[str, float]:
        return dict(zip(FEATURES, self.features, strict=True))


# ---------------------------------------------------------------- passage sentences


@dataclass(frozen=True, slots=True)
class _PassageSentences:
    units: frozenset[str]  # every unit of the passage
    sentences: tuple[tuple[str, frozenset[str]], ...]


@lru_cache(maxsize=4096)
def _passage_sentences(text: str, lang: str) -> _PassageSentences:
    sents = tuple((s, frozenset(content_units(s, lang))) for s in split_sentences(text, "und" if lang in ("th", "lo")
                                                                                     else lang))
    units = frozenset().union(*(u for _, u in sents)) if sents else frozenset()
    return _PassageSentences(units, sents)


def passage_sentences(text: str, lang: str) -> list[str]:
    """The sentences of a passage text as alignment reads them (stripped, non-empty)."""
    return [s.strip() for s, _ in _passage_sentences(text, lang).sentences if s.strip()]


@lru_cache(maxsize=8192)
def _sentence_units(text: str, lang: str) -> frozenset[str]:
    return frozenset(content_units(text, lang))


# ---------------------------------------------------------------- refusals and comparisons

_SPACED_BOUNDARY = r"(?<![\p{L}\p{M}\p{N}])"
_END_BOUNDARY = r"(?![\p{L}\p{M}\p{N}])"
# languages whose comparison words are whole words (the others inflect, or have no spaces: prefixes)
_WHOLE_WORD_LANGS = frozenset({"en", "es", "fr", "id", "sw", "yo"})


@lru_cache(maxsize=64)
def _refusal_pattern(lang: str) -> regex.Pattern[str] | None:
    phrases = set(lexicon(lang).refusals) | set(lexicon("en").refusals)
    if not phrases:
        return None
    alternation = "|".join(regex.escape(p) for p in sorted(phrases, key=len, reverse=True))
    # a phrase starts a word (scripts without spaces: anywhere)
    return regex.compile(rf"(?:{_SPACED_BOUNDARY}(?:{alternation}))" if not lexicon(lang).scan
                         else rf"(?:{alternation})", regex.V1)


def is_refusal(text: str, lang: str) -> bool:
    """Whether ``text`` (one sentence) declines to answer: it holds a refusal phrase of ``lang`` or
    of English (normalised as the facts are), or negates a verb of saying (the lexicon's
    ``speech_verbs``) next to a negation: "they don't go into X", "ei kerrota", "kò sọ",
    "hayaelezi", "记载" after "没有" (see :func:`negates_speech`)."""
    pattern = _refusal_pattern(lang)
    t = norm(text, lang)
    return (pattern is not None and pattern.search(t) is not None) or negates_speech(t, lang)


def _speech_word(w: str, verbs: Sequence[str]) -> bool:
    return any(w == v or (len(v) >= 4 and w.startswith(v)) for v in verbs)


def negates_speech(t: str, lang: str) -> bool:
    """Whether the normalised sentence ``t`` has a negation with a verb of saying about a text within
    three words of it (ten characters in scripts without spaces), or inside the negated word itself
    (Swahili ``hayaelezi``, ``haijatajwa``): the sentence says what its sources do not state."""
    lex = lexicon(lang)
    verbs = lex.speech_verbs + lex.find_verbs
    # (a verb of saying is a substring wherever it matches: most sentences hold none, and then their
    # negations, which the fact check has read already, need not be read again)
    if not any(v in t for v in verbs):
        return False
    for _scope, text, start, end in negation_sites(t, lang):
        if lex.scan:
            window = text[max(0, start - 10):end + 10]
            if any(v in window for v in verbs):
                return True
            continue
        word = text[start:end]
        if any(len(v) >= 4 and v in word for v in verbs):
            return True
        if any(_speech_word(w, verbs) for w in _words_around(text, start, end)):
            return True
    return False


def describes_sources(text: str, lang: str) -> bool:
    """Whether ``text`` (one sentence) speaks of the sources: it holds one of the lexicon's
    ``source_words`` ("the texts", "資料", "ឯកសារ") or a verb of saying about a text
    (``speech_verbs``: "describe", "cover", "kertovat", "eleza"), matched as :func:`negates_speech`
    matches them ("What they do describe is ...", "Tekstit kertovat hakuajoista ...")."""
    lex = lexicon(lang)
    t = norm(text, lang)
    if lex.scan:
        if any(v in t for v in lex.speech_verbs):
            return True
    elif any(_speech_word(w, lex.speech_verbs) for w in _WINDOW_WORD.findall(t)):
        return True
    return not source_units(lang).isdisjoint(_sentence_units(text, lang))


def _holds_word(t: str, words: Sequence[str], scan: bool) -> bool:
    """Whether the normalised ``t`` holds one of ``words``: as a substring in scripts without spaces
    and for a phrase with a space, as a whole word otherwise."""
    if scan:
        return any(w in t for w in words)
    if any(" " in w and w in t for w in words):
        return True
    single = frozenset(w for w in words if " " not in w)
    return any(w in single for w in _WINDOW_WORD.findall(t))


def declines_by_absence(text: str, lang: str) -> bool:
    """Whether ``text`` (one sentence) negates and the assistant speaks of itself in it (the
    lexicon's ``self_words``: "That isn't in the documents I have", "N kò rí", "我手头的材料里都没写到"),
    or apologises (``apology_words``) while speaking of the sources (:func:`describes_sources`):
    the sentence says what it did not find. Read only for a sentence that restates no passage
    sentence (alignment under ``NEGATION_ALIGNMENT``): "Unfortunately, I can't stress enough that
    fees are not refundable" restating "fees are not refundable" is a claim."""
    lex = lexicon(lang)
    t = norm(text, lang)
    self_ = _holds_word(t, lex.self_words, lex.scan)
    if not self_ and not (_holds_word(t, lex.apology_words, lex.scan) and describes_sources(text, lang)):
        return False
    return states_negation(text, lang)


def is_advice(text: str, lang: str) -> bool:
    """Whether ``text`` (one sentence) suggests asking someone else: it holds one of the lexicon's
    ``advice_words`` ("I'd suggest contacting the organisers", "Asiaa kannattaa kysyä", "建议直接联系").
    A word of four characters or more also matches as a prefix, as does one written with a trailing
    ``-`` (Korean stems: "문의-" for "문의해", "문의하시는"); a phrase with a space, and any word in
    scripts without spaces, as a substring."""
    words = lexicon(lang).advice_words
    if not words:
        return False
    t = norm(text, lang)
    if lexicon(lang).scan:
        return any(w.rstrip("-") in t for w in words)
    if any(" " in w and w in t for w in words):
        return True
    single = [w for w in words if " " not in w and not w.endswith("-")]
    stems = tuple(w[:-1] for w in words if w.endswith("-"))
    return any(_speech_word(w, single) or w.startswith(stems) for w in _WINDOW_WORD.findall(t))


@lru_cache(maxsize=64)
def _implicit_pattern(lang: str) -> regex.Pattern[str] | None:
    words = lexicon(lang).implicit_negations
    if not words:
        return None
    alternation = "|".join(regex.escape(w) for w in sorted(set(words), key=len, reverse=True))
    if lexicon(lang).scan:
        return regex.compile(f"(?:{alternation})", regex.V1)
    return regex.compile(f"{_SPACED_BOUNDARY}(?:{alternation}){_END_BOUNDARY}", regex.V1)


def implies_negation(text: str, lang: str) -> bool:
    """Whether ``text`` (a passage sentence) states a negation without a negation word: it holds one
    of the lexicon's ``implicit_negations`` ("only", "free", "closed", "except", "対象外", ...)."""
    pattern = _implicit_pattern(lang)
    return pattern is not None and pattern.search(norm(text, lang)) is not None


# (a zero-width non-joiner is inside a word: Persian "دانش\u200cآموزان")
_WINDOW_WORD = regex.compile(r"[\p{L}\p{M}\p{N}]+(?:\u200c[\p{L}\p{M}\p{N}]+)*", regex.V1)


def _words_around(text: str, start: int, end: int, n: int = 3) -> list[str]:
    """The ``n`` words before ``text[start:end]`` and the ``n`` after it (scripts with spaces)."""
    words: list[str] = _WINDOW_WORD.findall(text[max(0, start - 60):start])[-n:] + \
        _WINDOW_WORD.findall(text[end:end + 60])[:n]
    return words


def implicit_words(text: str, lang: str) -> frozenset[str]:
    """The lexicon's ``implicit_negations`` that ``text`` holds (normalised)."""
    pattern = _implicit_pattern(lang)
    return frozenset(m.group() for m in pattern.finditer(norm(text, lang))) if pattern is not None else frozenset()


def _implied_near(scope: frozenset[str], aligned: str, lang: str) -> bool:
    """An implicit negation of ``aligned`` (see :func:`implies_negation`) with a unit of ``scope`` (the
    units around a negation of the answer sentence) within three words of it (eight characters in
    scripts without spaces), the implicit word itself not being one of them: "not free" is no
    restatement of "free"."""
    pattern = _implicit_pattern(lang)
    if pattern is None or not scope:
        return False
    t = norm(aligned, lang)
    for m in pattern.finditer(t):
        if lexicon(lang).scan:
            window = t[max(0, m.start() - 8):m.start()] + " " + t[m.end():m.end() + 8]
        else:
            window = " ".join(_words_around(t, m.start(), m.end()))
        near = frozenset(content_units(window, lang))
        if scope & near and not (frozenset(content_units(m.group(), lang)) & scope):
            return True
    return False


@lru_cache(maxsize=64)
def _comparison_patterns(lang: str) -> tuple[regex.Pattern[str] | None, ...]:
    def compile_(words: Sequence[str]) -> regex.Pattern[str] | None:
        if not words:
            return None
        alternation = "|".join(regex.escape(w) for w in sorted(set(words), key=len, reverse=True))
        start = "" if lexicon(lang).scan else _SPACED_BOUNDARY
        end = _END_BOUNDARY if lang in _WHOLE_WORD_LANGS else ""
        return regex.compile(f"{start}(?:{alternation}){end}", regex.V1)

    up, down = lexicon(lang).comparisons
    lower, upper = lexicon(lang).bounds
    return compile_(up), compile_(down), compile_(lower), compile_(upper)


def comparisons(text: str, lang: str, *, bounds: bool = False) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The comparison words of ``text`` (normalised) by direction: (more/larger, less/smaller), outside
    its bound phrases ("least" of "at least" is none); with ``bounds``, its bound words instead:
    (lower bounds "at least", upper bounds "at most")."""
    t = norm(text, lang)
    up, down, lower, upper = _comparison_patterns(lang)
    if bounds:
        up, down = lower, upper
    else:
        for pattern in (lower, upper):
            if pattern is not None:
                t = pattern.sub(lambda m: " " * len(m.group()), t)
    return (tuple(up.findall(t)) if up is not None else (), tuple(down.findall(t)) if down is not None else ())


PER_TEXT_CACHES.extend((_passage_sentences, _sentence_units))


@lru_cache(maxsize=64)
def source_units(lang: str) -> frozenset[str]:
    """The content units of the lexicon's ``source_words`` of ``lang``: words about the passages or
    the answer's framing ("based on the information provided", "according to the text", "In short",
    "この資料によると"). They are not content: a sentence's coverage and alignment leave them out, so
    an LLM-style opening or a refusal's explanation ("the passages only describe ...") is not
    baseless for them."""
    return frozenset().union(*(content_units(w, lang) for w in lexicon(lang).source_words))


# ---------------------------------------------------------------- verdicts


def sentence_verdicts(answer: str, passages: Sequence[Passage], lang: str,
                      question: str = "") -> tuple[SentenceVerdict, ...]:
    """The verdict on every sentence of ``answer`` (raw, with citation markers) that has a letter
    or digit, against ``passages`` (what the generator saw), in ``lang``. Pure and deterministic;
    see the module docstring for the rules and :data:`FEATURES` for the features. ``question``:
    a refusal may repeat its numbers ("nothing about COVID-19 vaccines") and still decline; the
    numbers, names and quoted terms it states are the question's, not invented (see
    :func:`~pytest_mirage.metrics.facts.check_sentences`)."""
    by_id = {p.id: p for p in passages}
    asked = norm(question, lang) if question else ""
    asked_numbers = stated_values(question, lang) if question else frozenset()
    out: list[SentenceVerdict] = []
    for index, sf in enumerate(check_sentences(answer, passages, lang, asked_numbers, question)):
        text = sf.text
        header = text.rstrip().endswith(_COLONS)
        units = _sentence_units(_value_of(text, lang), lang) - source_units(lang)
        if sf.cited:
            evidence = [by_id[c] for c in sf.cited]
        elif sf.invalid:
            evidence = []
        else:
            evidence = list(passages)
        coverage, alignment, aligned_id, aligned = _align(units, evidence, lang)
        checks = list(sf.checks)
        declines = is_refusal(text, lang) or (alignment < NEGATION_ALIGNMENT and declines_by_absence(text, lang))
        if declines:  # its negation speaks of the passages ("does not specify"), not of the world
            checks = [c for c in checks if c.kind not in ("negation", "dropped_negation")]
        # a sentence that declines but also states a number or date, or a name or quote of its evidence,
        # answers after all ("... not specified, but it is 250 pesos"); a name the passages lack does
        # not count (German capitalises every noun: "die Texte enthalten keine Angaben"), nor a quoted
        # word it does not find (katakana loanwords are read as quotes: "グリーン車についての記載がない"),
        # nor a name or number of the question it repeats ("nothing about COVID-19 vaccines", "the
        # passages do not say whether Wiki Bomba works abroad")
        refusal = declines and not any(
            (c.kind in ("number", "month") or (c.kind in ("name", "quote") and c.supported)) and
            not (asked and _asked(c.text, asked)) and not _counts_sources(c, lang) for c in checks)
        if aligned and any(c.kind == "dropped_negation" for c in checks) and not states_negation(aligned, lang):
            # its best-aligned passage sentence negates nothing: the sentence restates that sentence,
            # not a negated one it shares words with (km "...ប្រតិបត្តិករ...បាន..." beside
            # "ប្រតិបត្តិករមិនត្រូវបាន..."; "you'll be fined 20p a day" beside "reserved items
            # cannot be renewed"); a sentence that drops a negation aligns best with the negated one
            checks = [c for c in checks if c.kind != "dropped_negation"]
        elif any(c.kind == "dropped_negation" for c in checks) and implies_negation(text, lang) and \
                not implies_negation(aligned, lang):
            # it states the negation with a word of its own: "free" for "no fee is charged" (but
            # "parking is free" for "parking is not free" still drops it)
            checks = [c for c in checks if c.kind != "dropped_negation"]
        if aligned and alignment >= NEGATION_ALIGNMENT and any(c.kind == "negation" and not c.supported for c in checks):
            # the sentence restates a passage sentence that negates: its negation, in other words
            # ("you cannot take a full-size bike ..." for "full-size bicycles are not allowed ..."), is
            # that sentence's; so is one the passage sentence states without a negation word, next to
            # what the sentence negates ("pupils pay nothing" for "membership is free for pupils")
            # ... and so is the consequence of an exclusion the sentence restates with the passage
            # sentence's own implicit word, when it does not negate that word ("空港連絡バスは対象外
            # なので、パスでは乗れません" for "空港連絡バスと深夜バスは対象外となります"; but "the
            # card is not free" for "the card is free" negates "free")
            negates = states_negation(aligned, lang)
            shared = [frozenset(content_units(w, lang)) for w in implicit_words(text, lang) & implicit_words(aligned, lang)]
            checks = [FactCheck("negation", c.text, True)
                      if c.kind == "negation" and not c.supported and
                      (negates or any(not (w & frozenset(c.text.split())) for w in shared) or
                       _implied_near(frozenset(c.text.split()), aligned, lang)) else c for c in checks]
        if aligned and not refusal:
            checks += _comparison_checks(text, aligned, lang, evidence)
        missing = tuple(c for c in checks if not c.supported)
        if refusal:
            verdict = "refusal"
        elif not units or header or (len(units) <= SHORT_UNITS and not sf.invalid and
                                     (not checks or _negated_reply(units, checks))):
            verdict = "no_content"
        elif missing or (sf.invalid and not sf.cited) or coverage < COVERAGE_MIN:
            verdict = "unsupported"
        else:
            verdict = "supported"
        v = SentenceVerdict(index=index, text=text, verdict=verdict, cited=sf.cited, invalid=sf.invalid,
                            coverage=coverage, alignment=alignment, aligned_passage=aligned_id,
                            aligned_sentence=aligned, checks=tuple(checks), missing=missing, length=len(units))
        out.append(_finish(v, refusal))
    out = _framing(out, lang)
    if any(v.verdict == "no_content" and v.length for v in out) and \
            not any(v.checkable and (v.length > SHORT_UNITS or v.checks) for v in out):
        # a short sentence is filler only beside a sentence with content: alone ("1998", "the Beatles")
        # it is the answer, and is checked
        out = [_finish(_decide(v, "unsupported" if v.missing or v.coverage < COVERAGE_MIN else "supported"), False)
               if v.verdict == "no_content" and v.length else v for v in out]
    if any(v.verdict == "refusal" for v in out):
        # beside a refusal, a suggestion of whom to ask ("I'd suggest contacting the organisers
        # directly") is framing, as the refusal is; one with an unsupported fact (a phone number, a
        # name no passage has) is still checked
        out = [_finish(_decide(v, "no_content"), False)
               if v.checkable and not v.missing and not (v.invalid and not v.cited) and
               (is_advice(v.text, lang) or describes_sources(v.text, lang))
               else v for v in out]
    return tuple(out)


SUMMARY_OPENING = 20  # characters (normalised) within which a summary word opens a summary


def opens_summary(text: str, lang: str) -> bool:
    """Whether ``text`` (one sentence) opens with a summary word of ``lang`` ("In short,", "Jadi,
    intinya:", "总的来说", "សរុបមក"): one of the lexicon's ``summary_words`` starts it, or starts
    within its first :data:`SUMMARY_OPENING` characters followed by punctuation (a whole word in
    scripts with spaces; "the overall limit is 20 kg" is no summary)."""
    lex = lexicon(lang)
    t = norm(text, lang).lstrip()[:SUMMARY_OPENING + 30]
    for w in lex.summary_words:
        at = t.find(w)
        while 0 <= at <= SUMMARY_OPENING:
            end = at + len(w)
            if lex.scan or ((at == 0 or not (t[at - 1].isalnum() or unicodedata.category(t[at - 1]).startswith("M")))
                            and (end >= len(t) or not (t[end].isalnum() or unicodedata.category(t[end]).startswith("M")))):
                rest = t[end:].lstrip()
                # at the very start, or further in and followed by its comma or colon ("Jadi, intinya:")
                if at == 0 or (rest[:1] and unicodedata.category(rest[0]).startswith("P")):
                    return True
            at = t.find(w, at + 1)
    return False


def _framing(out: list[SentenceVerdict], lang: str) -> list[SentenceVerdict]:
    """The answer's framing sentences, decided with the answer's other sentences in view:

    * a summary (a sentence that opens with one of the lexicon's ``summary_words`` within its first
      :data:`SUMMARY_OPENING` characters: "In short, ...", "总之", "Kurz gesagt: ...") restates the answer in words of its own: without a missing fact it is
      framing (``no_content``); its facts stay checked against the passages, and a summary with a
      missing fact ("In short, it costs 61 euros") stays unsupported;
    * an opening that speaks of the sources and states nothing checkable ("Based on the notice you
      shared, there are a few things to keep in mind.", "从您给的店铺须知来看,有这么几点需要注意。"),
      before a sentence with content, is framing (``no_content``), as a header line is."""
    if len(out) < 2:
        return out
    first = next((i for i, v in enumerate(out) if v.length), None)
    result = []
    for i, v in enumerate(out):
        if v.verdict != "unsupported" or v.missing or (v.invalid and not v.cited):
            result.append(v)
            continue
        if i == first and not v.checks and describes_sources(v.text, lang) and \
                any(o.checkable and o.checks for o in out[i + 1:]):
            result.append(_finish(_decide(v, "no_content"), False))
            continue
        if opens_summary(v.text, lang):
            result.append(_finish(_decide(v, "no_content"), False))
            continue
        result.append(v)
    return result


_COLONS = (":", "：", "៖")
_KEY_VALUE = regex.compile(r"^([^:：៖\n]{1,40})[:：៖]\s*(\S.*)$", regex.DOTALL)


def _asked(fact: str, asked: str) -> bool:
    """Whether the question (normalised) holds ``fact``, a name as it is inflected there included: a
    word of the question with the name's first five characters ("Карпова" for "Карпов",
    "Helsingin" for "Helsingissä")."""
    if fact in asked:
        return True
    return len(fact) >= 5 and regex.search(rf"(?<![\p{{L}}\p{{M}}]){regex.escape(fact[:5])}", asked) is not None


def _counts_sources(c: FactCheck, lang: str) -> bool:
    """A number of a refusal that is the word for one or two and no passage has ("两份须知都没有提到",
    "ఈ రెండు విషయాల", "neither of the two documents"): it counts the sources or the asked points and
    states no value (digits, larger number words and one the passages state, "only that it takes
    two weeks", still make the sentence an answer)."""
    entry = lexicon(lang).words.get(c.text) if c.kind == "number" and not c.supported else None
    return entry is not None and entry.kind == "num" and entry.value <= 2


def _value_of(text: str, lang: str) -> str:
    """The value of a ``label: value`` line ("Height: 2,962 m", "開業：1872年"): the label restates
    the question; other text unchanged. A label is at most three words (eight tokens in scripts
    without spaces)."""
    kv = _KEY_VALUE.match(text)
    if kv is None:
        return text
    from ..text.tokenize import NO_SPACE_LANGS, tokenize

    return kv.group(2) if len(tokenize(kv.group(1), lang)) <= (8 if lang in NO_SPACE_LANGS else 3) else text


def _negated_reply(units: frozenset[str], checks: Sequence[FactCheck]) -> bool:
    """A short reply of one or two units whose only check is a negation: "Ei voi." ("No, (you)
    cannot."), "Nein, nicht." — a yes/no word, decided by the sentence that follows it."""
    return len(units) <= 2 and all(c.kind == "negation" for c in checks)


def _decide(v: SentenceVerdict, verdict: str) -> SentenceVerdict:
    return SentenceVerdict(v.index, v.text, verdict, v.cited, v.invalid, v.coverage, v.alignment, v.aligned_passage,
                           v.aligned_sentence, v.checks, v.missing, v.length)


def _align(units: frozenset[str], evidence: Sequence[Passage], lang: str) -> tuple[float, float, str | None, str]:
    """(coverage by all of ``evidence``, best single-sentence alignment, its passage id and text)."""
    if not units or not evidence:
        return 0.0, 0.0, None, ""
    covered: set[str] = set()
    best, best_id, best_text = -1, None, ""
    for p in evidence:
        ps = _passage_sentences(f"{p.title}\n{p.text}" if p.title else p.text, lang)
        shared = units & ps.units
        covered.update(shared)
        if len(shared) <= best:  # no sentence of this passage can align better (first best kept)
            continue
        for s, su in ps.sentences:
            n = len(shared & su)
            if n > best:
                best, best_id, best_text = n, p.id, s
                if n == len(shared):
                    break
    n = len(units)
    return len(covered) / n, max(best, 0) / n, best_id, best_text.strip()


def _comparison_checks(text: str, aligned: str, lang: str, evidence: Sequence[Passage] = ()) -> list[FactCheck]:
    """A check per comparison word and per bound word of ``text``: unsupported when the passage
    sentences it restates hold one of the opposite direction and none of its own. For a comparison
    word that is the aligned passage sentence; for a bound word ("at least", "up to"), also every
    evidence sentence that states a number of ``text`` (an answer sentence that joins two passage
    sentences aligns with one of them: "renew at least six months before expiry, online or at an
    office" against "no more than six months before expiry" and "online or at any office")."""
    out: list[FactCheck] = []
    for bounds in (False, True):
        up, down = comparisons(text, lang, bounds=bounds)
        if not up and not down:
            continue
        a_up, a_down = comparisons(aligned, lang, bounds=bounds)
        for s in _bound_sentences_sharing_a_number(text, aligned, evidence, lang) if bounds else ():
            o_up, o_down = comparisons(s, lang, bounds=bounds)
            a_up, a_down = a_up + o_up, a_down + o_down
        for words, same, opposite in ((up, a_up, a_down), (down, a_down, a_up)):
            for w in dict.fromkeys(words):
                out.append(FactCheck("comparison", w, not (opposite and not same)))
    return out


def _bound_sentences_sharing_a_number(text: str, aligned: str, evidence: Sequence[Passage],
                                     lang: str) -> list[str]:
    """The evidence sentences (other than ``aligned``) that hold a bound word and a number of
    ``text`` (digits or number words, read by the fact check)."""
    out = []
    own: frozenset[float] | None = None
    for p in evidence:
        for s, _ in _passage_sentences(f"{p.title}\n{p.text}" if p.title else p.text, lang).sentences:
            if s.strip() == aligned or comparisons(s, lang, bounds=True) == ((), ()):
                continue
            if own is None:
                own = frozenset(v for n in facts_of(text, lang).numbers for v in n.values)
            if own and any(v in own for n in facts_of(s, lang).numbers for v in n.values):
                out.append(s)
    return out


def _finish(v: SentenceVerdict, refusal: bool) -> SentenceVerdict:
    counts = dict.fromkeys(FACT_KINDS, 0)
    bad = dict.fromkeys(FACT_KINDS, 0)
    for c in v.checks:
        kind = _KIND.get(c.kind, c.kind)
        counts[kind] += 1
        bad[kind] += not c.supported
    features = (
        float(v.length), v.coverage, v.alignment, float(refusal), float(bool(v.cited)),
        float(bool(v.invalid) and not v.cited), float(len(v.checks)), float(len(v.missing)),
        *(x for kind in ("number", "date", "name", "quote", "negation") for x in (float(counts[kind]), float(bad[kind]))),
        float(counts["dropped_negation"]), float(counts["comparison"]), float(bad["comparison"]),
    )
    reason = ""
    if v.verdict == "unsupported":
        reason = explain(v)
    elif v.verdict == "refusal":
        reason = f"{quote(v.text)}: a refusal"
    return SentenceVerdict(v.index, v.text, v.verdict, v.cited, v.invalid, v.coverage, v.alignment,
                           v.aligned_passage, v.aligned_sentence, v.checks, v.missing, v.length, reason, features)


# ---------------------------------------------------------------- explanations

QUOTE_CHARS = 60


def quote(text: str, around: str = "") -> str:
    """``text`` in quotes, cut to about :data:`QUOTE_CHARS` characters around ``around`` (with …)."""
    t = " ".join(text.split())
    if len(t) <= QUOTE_CHARS:
        return f'"{t}"'
    at = t.casefold().find(around.casefold()) if around else -1
    if at < 0:
        return f'"{t[:QUOTE_CHARS].rstrip()}…"'
    start = max(0, at - QUOTE_CHARS // 2)
    end = min(len(t), start + QUOTE_CHARS)
    start = max(0, end - QUOTE_CHARS)
    return '"' + ("…" if start else "") + t[start:end].strip() + ("…" if end < len(t) else "") + '"'


_WHAT = {"number": "the number", "month": "the month", "name": "the name", "quote": "the quoted",
         "comparison": "the comparison"}


def explain(v: SentenceVerdict) -> str:
    """Why ``v`` is unsupported, quoting the sentence: ``"…61°F…": 61 is in no cited passage``."""
    where = "cited passage" if v.cited else "passage"
    if v.invalid and not v.cited:
        return f"{quote(v.text)}: it cites only {', '.join(v.invalid)}, which name no passage"
    parts: list[str] = []
    for c in v.missing:
        if c.kind == "negation":
            parts.append(f"its negation is stated by no {where}")
        elif c.kind == "dropped_negation":
            parts.append(f"the {where} negates it (around: {c.text})")
        elif c.kind == "comparison":
            parts.append(f"{c.text!r}: the aligned passage sentence compares the other way")
        elif c.kind == "month":
            parts.append(f"month {c.text} is in no {where}")
        else:
            parts.append(f"{c.text} is in no {where}")
    if not parts or v.coverage < COVERAGE_MIN:
        parts.append(f"only {v.coverage:.0%} of its words are in the {where}s")
    first = v.missing[0].text if v.missing and v.missing[0].kind in ("number", "name", "quote", "comparison") else ""
    return f"{quote(v.text, first)}: " + "; ".join(parts)


# ---------------------------------------------------------------- the answer level


def sentence_score(verdicts: Sequence[SentenceVerdict]) -> float | None:
    """``(min(s) + mean(s)) / 2`` over the checkable sentences (None when there is none)."""
    scores = [v.score for v in verdicts if v.checkable]
    if not scores:
        return None
    return (min(scores) + sum(scores) / len(scores)) / 2


def answer_is_refusal(verdicts: Sequence[SentenceVerdict]) -> bool:
    """Every sentence with content is a refusal (and there is one)."""
    content = [v for v in verdicts if v.verdict != "no_content"]
    return bool(content) and all(v.verdict == "refusal" for v in content)


class Explained(float):
    """A metric value with a ``detail`` (why it is low) that failure messages show."""

    detail: str

    def __new__(cls, value: float, detail: str = "") -> Explained:
        obj = super().__new__(cls, value)
        obj.detail = detail
        return obj


def verdicts_of(s: Sample) -> tuple[SentenceVerdict, ...]:
    """:func:`sentence_verdicts` of the sample's answer, once per metric pass."""
    extra = of(s).extra
    v = extra.get("verdicts")
    if v is None:
        v = extra["verdicts"] = sentence_verdicts(raw_answer(s), s.context, s.case.lang, s.case.question)
    result: tuple[SentenceVerdict, ...] = v
    return result


def details(verdicts: Sequence[SentenceVerdict], limit: int = 3, *, facts_only: bool = False) -> str:
    """The reasons of the unsupported sentences (``facts_only``: those with an unsupported fact),
    the weakest first, at most ``limit`` of them."""
    bad = sorted((v for v in verdicts if v.verdict == "unsupported" and (v.missing or not facts_only)),
                 key=lambda v: (v.score, v.index))
    if not bad:
        return ""
    more = f"; and {len(bad) - limit} more unsupported sentence(s)" if len(bad) > limit else ""
    return "; ".join(v.reason for v in bad[:limit]) + more


def refusal_reason(verdicts: Sequence[SentenceVerdict]) -> str:
    first = next(v for v in verdicts if v.verdict == "refusal")
    return f"refusal: the answer declines to answer ({quote(first.text)}); gate on the 'refusal' metric"


def support_sentences(s: Sample) -> float:
    """Sentence verdicts: (weakest + mean) / 2 of the checkable sentences' scores, each its word
    coverage by its evidence halved per unsupported fact; null for a refusal."""
    if not s.context:
        raise NotApplicable("the generator saw no passages to support the answer")
    vs = verdicts_of(s)
    if answer_is_refusal(vs):
        raise NotApplicable(refusal_reason(vs))
    score = sentence_score(vs)
    if score is None:
        raise NotApplicable("the answer has no sentence to check")
    return Explained(score, details(vs))


def refusal(s: Sample) -> float:
    """1 when the answer declines to answer (every sentence with content is a refusal: "cannot answer
    from the given passages", in 19 languages), else 0; lower is better unless refusing is right."""
    return 1.0 if answer_is_refusal(verdicts_of(s)) else 0.0


# ---------------------------------------------------------------- fact-level metrics (read the verdicts)


def _fact_checks(s: Sample) -> list[FactCheck]:
    """:func:`check_facts` of the sample's answer, read off its sentence verdicts (computed once per
    metric pass for support_facts, support_sentences and faithfulness); the comparison checks of
    the verdicts are not part of it."""
    return [c for v in verdicts_of(s) for c in v.checks if c.kind != "comparison"]


def support_facts(s: Sample) -> float:
    """Share of the answer's numbers, dates, names and negations that the passages its sentences
    cite support (all passages for a sentence without citations), divided by one plus the number
    of unsupported ones: ``(S / N) / (1 + U)``. One invented fact among seven scores 0.43, not 0.86
    (a share alone dilutes it); null when the answer states no fact."""
    if not s.context:
        raise NotApplicable("the generator saw no passages to support the answer")
    checks = _fact_checks(s)
    if not checks:
        raise NotApplicable("the answer states no number, date, name or negation to check")
    unsupported = [c for c in checks if not c.supported]
    value = (len(checks) - len(unsupported)) / len(checks) / (1 + len(unsupported))
    if not unsupported:
        return value
    return Explained(value, details(verdicts_of(s), facts_only=True) or
                     "unsupported: " + ", ".join(f"{c.kind} {c.text}" for c in unsupported[:5]))


def faithfulness_lexical(s: Sample) -> float:
    """The offline faithfulness signal: the mean of ``support_sentences`` (sentence verdicts: the
    weakest checkable sentence and the mean of all, each sentence's word coverage by its passages
    halved per unsupported fact) and ``support_facts`` (supported share of the answer's facts over
    one plus the unsupported ones); ``support_sentences`` alone when the answer states no fact.
    Null for a refusal (gate on ``refusal``)."""
    sentences = support_sentences(s)
    try:
        facts = support_facts(s)
    except NotApplicable:
        return sentences
    return Explained((sentences + facts) / 2, details(verdicts_of(s)))
