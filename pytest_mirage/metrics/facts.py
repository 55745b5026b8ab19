"""Offline fact consistency: the numbers, dates, names and negations of an answer must come from
the passages its sentences cite.

``support_facts`` needs no model and works in every language. Each answer sentence's *evidence*
is the passages it cites (all passages of the context when it cites none, nothing when it cites
only ids that name no passage: the rule of ``support_lexical``). Every *fact* the sentence states
is checked against its evidence:

* **numbers and quantities**: digits in any script (Arabic-Indic, Persian, Devanagari, Bengali,
  Thai, Khmer, full-width, ...) with thousands separators and decimal commas read both ways
  (``6.961`` is 6961 or 6.961), numbers written as words from per-language cardinal, ordinal and
  scale lists (``metrics/lexicon/LANG.json``, 19 languages), composed (``twenty-one``,
  ``achtundzwanzig``, ``elfu mbili``, ``二十四``, ``สองพันห้าร้อย``, ``3万``, ``2.5 million``).
  A number is supported when the evidence states the same value (as digits or words). A rounded
  large number (>= 10,000, or a decimal with a scale word) is supported by an evidence value that
  rounds to it (``about 2.5 million`` by ``2,483,000``). A lone "one" (``one``, ``un``, ``一``) is
  not a fact: it is an article or a pronoun far more often than a count;
* **dates**: month names (19 languages), ``N月``/``N월`` and numeric dates; days and years are
  numbers;
* **names**: capitalised words in Latin, Cyrillic and Greek script (a sentence's or line's first
  word only when written as a name, ``NASA``, ``McLaren``, followed by another capitalised word, or
  shown a name by the context: see :func:`check_sentences`), Latin words inside text of another
  script, tokens mixing Latin letters and digits (``4G``, ``A320``), katakana words in Japanese,
  and quoted names (``«...»``, ``“...”``, ``『...』``, ``《...》``, ...). A name is supported when the
  evidence contains it (a word sharing all but its last two letters counts, for inflected
  languages: ``Транссибу`` / ``Транссибирская``);
* **negations** (per-language word lists; substrings for scripts without spaces): a negation in
  the answer is supported when the evidence negates something around the same words (the words
  within three of it, or the character pairs within eight characters, share at least one unit);
  a negation whose clause is restated by a negated clause of the evidence with other words is
  supported too (``without food`` / ``not ... with food``; the lexicon's ``equivalents`` read
  ``使えない`` as ``利用できない``); a sentence that repeats the words around a negation of its
  evidence, and a word next to it (what it negates), *without* a negation has dropped it, which
  counts as one unsupported fact.

List markers at line starts (``1.``, ``2)``, ``-``) are not read. ``support_facts`` is
``(S / N) / (1 + U)`` over the whole answer (N facts, S supported, U unsupported): one invented
fact among seven gives 0.43, not the share 0.86; null when the answer states none.
``faithfulness_lexical`` is the mean of it and ``support_sentences`` (:mod:`.verdicts`;
``support_sentences`` alone when there is no fact), null for a refusal.
On the project's hard set (``fixtures/faithfulness``) these separate faithful answers from
minimal-edit hallucinations that word overlap misses; see ``docs/judges.md`` for the figures.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from itertools import accumulate, pairwise
from typing import Any

import regex  # type: ignore[import-untyped]

from ..prompts import find_citations, strip_citations
from ..suites.model import Passage
from ..text.tokenize import NOSPACE_CLASS, content_units, normalize, split_sentences
from .analysis import PER_TEXT_CACHES

LEXICON_LANGS = ("ar", "bn", "de", "en", "es", "fa", "fi", "fr", "hi", "id", "ja", "km", "ko", "ru", "sw", "te",
                 "th", "yo", "zh")
# languages written in Latin or Cyrillic script: capitalisation marks names
_CASED_LANGS = frozenset({"de", "en", "es", "fi", "fr", "id", "sw", "yo", "ru"})
APPROX_MIN = 10_000  # numbers at least this large may be rounded versions of an evidence value

# ---------------------------------------------------------------- lexicon


@dataclass(frozen=True, slots=True)
class Entry:
    """A lexicon word: a number (cardinal or ordinal), a scale (``small`` multiplies the pending
    group, ``large`` closes it), a month or a connective (``and``/``na``/``و``)."""

    kind: str  # "num", "scale", "month", "conn"
    value: float = 0.0
    large: bool = False


@dataclass(frozen=True, slots=True)
class Lexicon:
    lang: str
    words: dict[str, Entry]
    negations: frozenset[str] = frozenset()
    negation_substrings: tuple[str, ...] = ()
    negation_suffixes: tuple[str, ...] = ()
    negation_prefixes: tuple[str, ...] = ()
    # (prefix, ending) pairs a negated verb form takes together (Swahili present negative: hu-...-i,
    # "huhitaji", you do not need; the habitual "huhitaja" and nouns such as "huduma" end otherwise)
    negation_circumfixes: tuple[tuple[str, str], ...] = ()
    not_negations: tuple[str, ...] = ()
    not_numbers: tuple[str, ...] = ()
    sentence_starters: frozenset[str] = frozenset()
    standalone_exclusions: frozenset[str] = frozenset()
    word_prefixes: tuple[str, ...] = ()
    month_suffixes: tuple[str, ...] = ()
    scale_first: bool = False
    compounds: bool = False
    scan: bool = False
    months_capitalized: bool = False
    month_prefixes: bool = False
    digit_sequences: bool = False
    max_len: int = 1
    month_names: tuple[tuple[str, int], ...] = ()
    # endings glued to a number or month word (Bengali জুনে = জুন + ে, পাঁচজন = পাঁচ + জন)
    word_suffixes: tuple[str, ...] = ()
    # (variant, canonical) forms read alike around negations (ja 使えない = 利用できない), longest first
    equivalents: tuple[tuple[str, str], ...] = ()
    # phrases that decline to answer ("cannot answer", "回答できません"), read by metrics.verdicts
    refusals: tuple[str, ...] = ()
    # comparison words by direction: (more/larger words, less/smaller words), read by metrics.verdicts
    comparisons: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    # words about the source or the answer's framing ("passages", "based", "according", "In short"),
    # not content: read by metrics.verdicts, which leaves their units out of a sentence's coverage
    source_words: tuple[str, ...] = ()
    # verbs of saying about a text ("mention", "specify", "記載", "kerrota"): negated next to a
    # negation, the sentence declines ("they don't mention ...", "ei kerrota"); read by
    # metrics.verdicts. A word of four characters or more also matches as a prefix ("specif"), and
    # inside a negated word (Swahili "hayaelezi"; so no "taji": it is inside "huhitaji", need not).
    speech_verbs: tuple[str, ...] = ()
    # verbs of finding or seeing, in the forms a reader uses of what they searched ("see", "finde",
    # "encontré", "sijaona", "見当たり", "找到", "ឃើញ"): negated, read like the speech verbs ("I don't
    # see anything about parking", "N kò rí", "រកមិនឃើញ"); no bare "found" ("is not found in nature")
    find_verbs: tuple[str, ...] = ()
    # words that suggest asking someone else ("contact", "kannattaa kysyä", "建议", "문의"): beside a
    # refusal, a sentence with one and no unsupported fact is framing, not a claim (metrics.verdicts);
    # a trailing "-" makes a word a stem ("문의-")
    advice_words: tuple[str, ...] = ()
    # the assistant speaking of itself ("I", "me", "my", "ich", "我", "ខ្ញុំ", fi "en") and words of
    # apology ("sorry", "unfortunately", "leider", "抱歉"): a negated sentence with one, which restates
    # no passage sentence, declines ("That isn't in the documents I have", "Eso no viene en el texto
    # que me has pasado"); read by metrics.verdicts (an apology only beside a word about the sources)
    self_words: tuple[str, ...] = ()
    apology_words: tuple[str, ...] = ()
    # words that open a summary of the answer ("in short", "overall", "kurz gesagt", "总之", "សរុបមក"):
    # such a sentence restates the answer's other sentences, and its words are covered by them as
    # well as by its evidence (its facts are still checked against the passages); metrics.verdicts
    summary_words: tuple[str, ...] = ()
    # yes/no reply words ("No,", "Nein,", "いいえ、"): at a sentence's start before punctuation they
    # answer the question and are not a negation fact of their own (the clause after them is checked)
    reply_negations: tuple[str, ...] = ()
    # capitalised words that are not names: polite pronouns ("Sie", "Anda"), currency prefixes ("Rp")
    not_names: frozenset[str] = frozenset()
    # words that state a negation without a negation word ("only", "free", "closed", "except",
    # "対象外"): a negated answer sentence restating a passage sentence that holds one is supported
    implicit_negations: tuple[str, ...] = ()
    # bounds: (lower-bound words "at least", "至少"; upper-bound words "at most", "up to", "以内"), read
    # by metrics.verdicts like the comparisons, as their own family ("最多" is "most" as a comparison
    # and "at most" as a bound)
    bounds: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    # German: every noun is capitalised; one after a determiner or an inflected adjective, or with a
    # noun suffix ("-ung", "-karte"), is a common noun, not a name
    noun_determiners: frozenset[str] = frozenset()
    noun_suffixes: tuple[str, ...] = ()
    # where the negated word stands, in languages whose negation has one side (see _heads):
    # scripts without spaces: the characters after the negation (``不单独享有``), or before it with
    # negation_head_before (Japanese ``行っておりません``), negation_head_chars of them (0: none
    # read); scripts with spaces: the word before and the word after, or with negation_head_before
    # the two words before (Korean ``환승으로 보지 않습니다``) except after negation_after_words, which
    # precede what they negate (``안``/``못``); words shorter than negation_min_word are skipped
    negation_head_chars: int = 0
    negation_head_before: bool = False
    negation_after_words: frozenset[str] = frozenset()
    negation_min_word: int = 3
    # clock times: words right before (fi "klo", sw "saa", ar "الساعة") or right after (zh "点",
    # de "Uhr", th "ทุ่ม") an hour mark it as a time of day, as minutes after it do ("21:00",
    # "21.00"); an answer's hour then also reads as the hour 12 later or earlier ("晚上10点" is
    # 22:00) and as h + offset for the language's own clock (th "สามทุ่ม" is 21:00, offset 18;
    # sw "saa nne" is 10:00, offset 6)
    clock_before: tuple[str, ...] = ()
    clock_after: tuple[str, ...] = ()
    clock_offsets: tuple[int, ...] = ()
    # the decimal mark ("." or ","; "" when unknown): the other one only groups thousands ("25,000"
    # is 25000 in Korean, "Rp5.000" is 5000 in Indonesian)
    decimal_mark: str = ""


def lexicon_path(lang: str) -> Any:
    return resources.files(__package__).joinpath("lexicon", f"{lang}.json")


@lru_cache(maxsize=64)
def lexicon(lang: str) -> Lexicon:
    """The lexicon of ``lang`` (normalised like the text it is matched against); an empty one for
    a language without a file (digits, names and quotes still work)."""
    if lang not in LEXICON_LANGS:
        return Lexicon(lang, {})
    data = json.loads(lexicon_path(lang).read_text(encoding="utf-8"))

    def n(word: str) -> str:
        return normalize(word, lang)

    words: dict[str, Entry] = {}
    for w, v in data.get("cardinals", {}).items():
        words[n(w)] = Entry("num", float(v))
    for w, v in data.get("ordinals", {}).items():
        words.setdefault(n(w), Entry("num", float(v)))
    for w, (v, size) in data.get("scales", {}).items():
        words[n(w)] = Entry("scale", float(v), size == "large")
    for w, v in data.get("months", {}).items():
        words.setdefault(n(w), Entry("month", float(v)))
    for w in data.get("connectives", []):
        words.setdefault(n(w), Entry("conn"))
    return Lexicon(
        lang=lang, words=words,
        negations=frozenset(n(w) for w in data.get("negations", [])),
        negation_substrings=tuple(n(w) for w in data.get("negation_substrings", [])),
        negation_suffixes=tuple(n(w) for w in data.get("negation_suffixes", [])),
        negation_prefixes=tuple(n(w) for w in data.get("negation_prefixes", [])),
        negation_circumfixes=tuple((n(a), n(b)) for a, b in data.get("negation_circumfixes", [])),
        not_negations=tuple(sorted((n(w) for w in data.get("not_negations", [])), key=len, reverse=True)),
        not_numbers=tuple(sorted((n(w) for w in data.get("not_numbers", [])), key=len, reverse=True)),
        sentence_starters=frozenset(n(w) for w in [*data.get("sentence_starters", []), *data.get("source_words", [])]),
        standalone_exclusions=frozenset(n(w) for w in data.get("standalone_exclusions", [])),
        word_prefixes=tuple(n(w) for w in data.get("word_prefixes", [])),
        month_suffixes=tuple(data.get("month_suffixes", [])),
        scale_first=bool(data.get("scale_first")), compounds=bool(data.get("compounds")),
        scan=bool(data.get("scan")), months_capitalized=bool(data.get("months_capitalized")),
        month_prefixes=bool(data.get("month_prefixes")), digit_sequences=bool(data.get("digit_sequences")),
        max_len=max((len(w) for w in words), default=1),
        month_names=tuple((n(w), int(v)) for w, v in data.get("months", {}).items()),
        word_suffixes=tuple(sorted((n(w) for w in data.get("word_suffixes", [])), key=len, reverse=True)),
        equivalents=tuple(sorted(((n(v), n(group[0])) for group in data.get("equivalents", []) for v in group[1:]),
                                 key=lambda x: len(x[0]), reverse=True)),
        refusals=tuple(n(w) for w in data.get("refusals", [])),
        comparisons=_directions(data.get("comparisons", [[], []]), n),
        source_words=tuple(n(w) for w in data.get("source_words", [])),
        speech_verbs=tuple(n(w) for w in data.get("speech_verbs", [])),
        find_verbs=tuple(n(w) for w in data.get("find_verbs", [])),
        advice_words=tuple(n(w) for w in data.get("advice_words", [])),
        self_words=tuple(n(w) for w in data.get("self_words", [])),
        apology_words=tuple(n(w) for w in data.get("apology_words", [])),
        summary_words=tuple(n(w) for w in data.get("summary_words", [])),
        reply_negations=tuple(sorted((n(w) for w in data.get("reply_negations", [])), key=len, reverse=True)),
        not_names=frozenset(n(w) for w in data.get("not_names", [])),
        implicit_negations=tuple(n(w) for w in data.get("implicit_negations", [])),
        bounds=_directions(data.get("bounds", [[], []]), n),
        noun_determiners=frozenset(n(w) for w in data.get("noun_determiners", [])),
        noun_suffixes=tuple(n(w) for w in data.get("noun_suffixes", [])),
        negation_head_chars=int(data.get("negation_head_chars", 0)),
        negation_head_before=bool(data.get("negation_head_before")),
        negation_after_words=frozenset(n(w) for w in data.get("negation_after_words", [])),
        negation_min_word=int(data.get("negation_min_word", 3)),
        clock_before=tuple(n(w) for w in data.get("clock_before", [])),
        clock_after=tuple(n(w) for w in data.get("clock_after", [])),
        clock_offsets=tuple(int(o) for o in data.get("clock_offsets", [])),
        decimal_mark=str(data.get("decimal_mark", "")),
    )


def _directions(groups: Any, n: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    up, down = [*list(groups), [], []][:2]
    return tuple(n(w) for w in up), tuple(n(w) for w in down)


# ---------------------------------------------------------------- normalisation

# a decimal digit (Unicode category Nd, as str.isdecimal) other than 0-9: "not a non-digit and not
# 0-9", one character class (the engine tests one set per position instead of a lookahead and a class)
_NONASCII_DIGIT = re.compile(r"[^\D0-9]")


def _ascii_digits(text: str) -> str:
    # str.isdecimal covers every script's digits (Arabic-Indic, Devanagari, Thai, Khmer, ...)
    # (re's \d is Unicode category Nd, the characters str.isdecimal accepts)
    if text.isascii():  # (a constant-time flag of the string) no digit other than 0-9
        return text
    return _NONASCII_DIGIT.sub(_ascii_digit, text)


def _ascii_digit(m: re.Match[str]) -> str:
    ch = m.group()
    digit = _ASCII_DIGIT.get(ch)
    if digit is None:
        digit = _ASCII_DIGIT[ch] = str(unicodedata.decimal(ch))
    return digit


_ASCII_DIGIT: dict[str, str] = {}


def norm(text: str, lang: str) -> str:
    """The text facts are read from: :func:`~pytest_mirage.text.tokenize.normalize` (NFKC,
    case folding, Arabic and Yoruba normalisation) with every decimal digit made ASCII."""
    return _ascii_digits(normalize(text, lang))


# ---------------------------------------------------------------- numbers

# Each pattern starts with a digit and checks "no digit before it" right after that digit (a
# pattern that starts with a lookbehind is tried at every position; one that starts with a digit
# lets the regex engine skip to the next digit): (?<!\d)\d{4} is written \d{4}(?<!\d{5}).
_DATE_ISO = re.compile(r"(\d{4})(?<!\d{5})-(\d{1,2})-(\d{1,2})(?!\d)")
_DATE_NUM = re.compile(r"(\d(?<!\d\d)\d?)[./](\d{1,2})[./](\d{2,4})(?!\d)")
_NUMBER = re.compile(r"\d(?<!\d\d)(?:\d{0,2}(?:[ \u00a0\u202f]\d{3})+|\d*(?:[.,\u066b\u066c'’]\d+)*)(?!\d)")
_WORD = regex.compile(r"[\p{L}\p{M}]+(?:[-'’][\p{L}\p{M}]+)*", regex.V1)
# a word of _WORD with no character of a space-less script: a chain of such runs joined by - ' ’,
# with no letter, mark or joined run on either side (so never part of a longer word)
_PLAIN_WORD = regex.compile(rf"(?<![\p{{L}}\p{{M}}])(?<![\p{{L}}\p{{M}}][-'’])"
                            rf"[[\p{{L}}\p{{M}}]--[{NOSPACE_CLASS}]]++(?:[-'’][[\p{{L}}\p{{M}}]--[{NOSPACE_CLASS}]]++)*+"
                            rf"(?![\p{{L}}\p{{M}}])(?![-'’][\p{{L}}\p{{M}}])", regex.V1)
_SCANNABLE = regex.compile(rf"[[{NOSPACE_CLASS}]&&[\p{{L}}\p{{M}}\p{{Nl}}]]+", regex.V1)


def number_values(text: str) -> frozenset[float]:
    """The values a written number may have: ``2,460`` is 2460 (or 2.46 where the comma is the
    decimal mark), ``1.234,5`` is 1234.5, ``1 234`` is 1234, ``3,3`` is 3.3."""
    if text.isdigit():  # no separator (the seps of the general path are the non-isdigit characters)
        return frozenset({float(text)})
    s = text.replace("\u00a0", " ").replace("\u202f", " ")
    if " " in s:
        return frozenset({float(s.replace(" ", ""))})
    groups = re.split(r"[^\d]", s)
    seps = [c for c in s if not c.isdigit()]
    if not seps:
        return frozenset({float(s)})
    out: set[float] = set()
    if len(set(seps)) == 1 and seps[0] != "\u066b" and 1 <= len(groups[0]) <= 3 and \
            all(len(g) == 3 for g in groups[1:]):
        out.add(float("".join(groups)))
    last = seps[-1]
    if last in ".,\u066b" and (len(seps) == 1 or all(c != last for c in seps[:-1])):
        out.add(float("".join(groups[:-1]) + "." + groups[-1]))
    if not out:
        out.add(float("".join(groups)))
    return frozenset(out)


@dataclass(frozen=True, slots=True)
class Tok:
    start: int
    end: int
    kind: str  # "digits", "num", "scale", "month", "conn"
    values: frozenset[float] = frozenset()
    large: bool = False
    text: str = ""

    @property
    def value(self) -> float:
        return min(self.values) if self.values else 0.0


@dataclass(frozen=True, slots=True)
class NumberFact:
    values: frozenset[float]
    text: str
    approximate: bool  # may be a rounded form of an evidence value
    # an hour's other readings ("10点": 22; see _clock_readings), which the evidence may state instead
    hours: frozenset[float] = frozenset()


def _lookup(word: str, lex: Lexicon) -> Entry | None:
    e = lex.words.get(word)
    if e is not None:
        return e
    for p in lex.word_prefixes:  # Arabic: "و" (and), "ب", "ل", "ف" glued to the next word
        if word.startswith(p) and len(word) > len(p) + 1:
            e = lex.words.get(word[len(p):])
            if e is not None and e.kind != "conn":
                return e
    if lex.month_prefixes:
        for name, month in lex.month_names:
            if word.startswith(name):
                return Entry("month", float(month))
    for sfx in lex.word_suffixes:  # Bengali জুনে, পাঁচজন: a number or month with a case or classifier ending
        if word.endswith(sfx) and len(word) > len(sfx) + 1:
            e = lex.words.get(word[:-len(sfx)])
            if e is not None and e.kind in ("num", "month"):
                return e
    return None


def _segment(word: str, lex: Lexicon) -> list[Entry] | None:
    """``word`` as a sequence of number morphemes (German, Finnish, Korean compounds such as
    ``achtundzwanzig``, ``kaksikymmentä``, ``스물여덟``); None unless it splits completely into
    at least two, at least one of them a number."""
    n = len(word)
    best: list[list[Entry] | None] = [None] * (n + 1)
    best[0] = []
    for i in range(n):
        if best[i] is None:
            continue
        for j in range(min(n, i + lex.max_len), i, -1):
            e = lex.words.get(word[i:j])
            if e is not None and e.kind in ("num", "scale", "conn"):
                cand = [*best[i], e]  # type: ignore[misc]
                if best[j] is None or len(cand) < len(best[j] or []):
                    best[j] = cand
    seg = best[n]
    if seg is None or len(seg) < 2 or not any(e.kind in ("num", "scale") for e in seg):
        return None
    return seg


def _boundary_ok(text: str, start: int, end: int) -> bool:
    # a match must not split a character cluster: no combining mark or Khmer coeng right after it,
    # and it must not start after a coeng or on a combining mark
    if end < len(text) and (unicodedata.category(text[end])[0] == "M" or text[end] == "\u17d2"):
        return False
    if start > 0 and text[start - 1] == "\u17d2":
        return False
    return unicodedata.category(text[start])[0] != "M"


def _scan(text: str, offset: int, lex: Lexicon) -> list[Tok]:
    """Number, scale and month words inside runs of a script without spaces (longest match first;
    entries of ``not_numbers`` are skipped whole; a word must not split a character cluster)."""
    pattern, skips = _scan_pattern(lex)
    words = lex.words
    out: list[Tok] = []
    pos = 0
    search = pattern.search
    while (m := search(text, pos)) is not None:
        found, start = m.group(), m.start()
        if found in skips:
            pos = m.end()
        elif start > 0 and text[start - 1] == _COENG:  # no word starts after a coeng
            pos = start + 1
        else:
            out.append(_tok(offset + start, offset + m.end(), words[found], found))
            pos = m.end()
    return out


_COENG = "\u17d2"
_SCAN_PATTERNS: dict[int, tuple[Lexicon, tuple[re.Pattern[str], frozenset[str]]]] = {}


@lru_cache(maxsize=1)
def _mark_class() -> str:
    """A character class of every combining mark (Unicode category M*, as ``unicodedata`` has it)."""
    ranges: list[str] = []
    start = prev = -2
    for cp in (*range(0x20000), *range(0xE0000, 0xE1000)):
        if unicodedata.category(chr(cp))[0] == "M":
            if cp != prev + 1:
                if start >= 0:
                    ranges.append(_range(start, prev))
                start = cp
            prev = cp
    ranges.append(_range(start, prev))
    return "[" + "".join(ranges) + "]"


def _range(a: int, b: int) -> str:
    return f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}"


def _scan_pattern(lex: Lexicon) -> tuple[re.Pattern[str], frozenset[str]]:
    """For :func:`_scan`: one alternation, tried at each position in order: the ``not_numbers``
    entries (longest first, as in the lexicon), then the lexicon words, longest first, each
    followed by neither a combining mark nor a coeng; and the set of the skipped entries.

    Only entries made of letters, marks and number letters (``〇``) of the space-less scripts take
    part, so a match never holds a space, punctuation or a character of another script, and the
    whole text is scanned at once (see :func:`_word_tokens`); a word starting with a mark would
    split a cluster wherever it matched."""
    cached = _SCAN_PATTERNS.get(id(lex))
    if cached is not None and cached[0] is lex:
        return cached[1]
    marks = _mark_class()
    skips = [w for w in lex.not_numbers if _SCANNABLE.fullmatch(w)]
    words = sorted((w for w in lex.words if _SCANNABLE.fullmatch(w) and unicodedata.category(w[0])[0] != "M"),
                   key=len, reverse=True)
    # one flat alternation of literals (the engine then skips to positions where one can start);
    # a word followed by a mark or coeng fails and the next, shorter, word is tried
    parts = [re.escape(w) for w in skips] + [f"{re.escape(w)}(?!{marks}|{_COENG})" for w in words]
    compiled = (re.compile("|".join(parts) or "(?!)"), frozenset(skips))
    _SCAN_PATTERNS[id(lex)] = (lex, compiled)
    return compiled


def _tok(start: int, end: int, e: Entry, text: str) -> Tok:
    return Tok(start, end, e.kind, frozenset({e.value}), e.large, text)


_NOSPACE_CHAR = regex.compile(f"[{NOSPACE_CLASS}]", regex.V1)
# _WORD with a group: split gives [between, word, between, word, ..., between], the words of
# _WORD.finditer at the odd indices (the same matches), each starting where the pieces before it end
_WORD_SPLIT = regex.compile(r"([\p{L}\p{M}]+(?:[-'’][\p{L}\p{M}]+)*)", regex.V1)


@dataclass(frozen=True, slots=True)
class _WordFilter:
    """For :func:`_word_tokens`: the words that may give a token, for one lexicon. A word that is
    no lexicon word, holds no hyphen, starts with no word prefix (nor, where they prefix words, a
    month name), ends with no word suffix and, in a language with compounds, starts with no number,
    scale or connective (its first two characters, or its first one, being none of theirs) gets None from
    :func:`_lookup`, has no hyphen pieces and no segmentation: it gives no token."""

    plain: bool  # some lexicon word (or month name) has no character of a space-less script
    starts: tuple[str, ...]  # word prefixes and month-name prefixes (str.startswith(tuple): any of them)
    ends: tuple[str, ...]  # word suffixes (str.endswith(tuple))
    compounds: bool
    first2: frozenset[str]  # the first two characters of the segments of at least two ...
    first1: frozenset[str]  # ... and the one-character segments


_WORD_FILTERS: dict[int, tuple[Lexicon, _WordFilter]] = {}


def _word_filter(lex: Lexicon) -> _WordFilter:
    cached = _WORD_FILTERS.get(id(lex))
    if cached is not None and cached[0] is lex:
        return cached[1]
    segments = [w for w, e in lex.words.items() if e.kind in ("num", "scale", "conn")]
    f = _WordFilter(
        plain=any(_NOSPACE_CHAR.search(w) is None for w in (*lex.words, *(name for name, _ in lex.month_names))),
        starts=lex.word_prefixes + (tuple(name for name, _ in lex.month_names) if lex.month_prefixes else ()),
        ends=lex.word_suffixes,
        compounds=lex.compounds,
        first2=frozenset(w[:2] for w in segments if len(w) >= 2),
        first1=frozenset(w for w in segments if len(w) == 1),
    )
    _WORD_FILTERS[id(lex)] = (lex, f)
    return f


def _word_tokens(masked: str, lex: Lexicon) -> list[Tok]:
    # runs of a script without spaces are scanned for number words, all at once (see _scan_pattern;
    # the characters around a word are neither marks nor a coeng, so the matches inside a word are
    # those of scanning the word alone)
    toks: list[Tok] = _scan(masked, 0, lex) if lex.scan else []
    f = _word_filter(lex)
    if lex.scan:
        # every word without a character of a space-less script, one by one; none is a number
        # when every lexicon word holds such a character (nor are its hyphen pieces or segments)
        if f.plain:
            for m in _PLAIN_WORD.finditer(masked):
                _add_word_tokens(m.group(), m.start(), m.end(), lex, toks)
        return toks
    # the other words: only those that may give a token (see _WordFilter), found among all of them
    # by C-level calls (split, then one comprehension of set and string tests)
    parts = _WORD_SPLIT.split(masked)
    words = parts[1::2]
    keys, starts, suffixes, compounds, first2, first1 = lex.words, f.starts, f.ends, f.compounds, f.first2, f.first1
    hits = [k for k, w in enumerate(words)
            if w in keys or "-" in w or (starts and w.startswith(starts)) or (suffixes and w.endswith(suffixes)) or
            (compounds and len(w) >= 2 and (w[:2] in first2 or w[:1] in first1))]
    if hits:
        ends = list(accumulate(map(len, parts)))  # ends[i]: where parts[i] ends
        for k in hits:
            _add_word_tokens(words[k], ends[2 * k], ends[2 * k + 1], lex, toks)
    return toks


def _add_word_tokens(word: str, start: int, end: int, lex: Lexicon, toks: list[Tok]) -> None:
    """The tokens of one word (``masked[start:end]``), appended to ``toks``."""
    e = _lookup(word, lex)
    if e is not None:
        toks.append(_tok(start, end, e, word))
        return
    if "-" in word:  # greedy longest hyphenated pieces: quatre-vingt-dix = quatre-vingt + dix
        pieces = word.split("-")
        pos, k = start, 0
        found: list[Tok] = []
        while k < len(pieces):
            for j in range(len(pieces), k, -1):
                piece = "-".join(pieces[k:j])
                pe = _lookup(piece, lex)
                if pe is not None:
                    found.append(_tok(pos, pos + len(piece), pe, piece))
                    break
            else:
                j = k + 1
            pos += len("-".join(pieces[k:j])) + 1
            k = j
        if found and all(f.kind in ("num", "scale", "conn") for f in found):
            toks.extend(found)
            return
    if lex.compounds and len(word) >= 2:
        seg = _segment(word, lex)
        if seg is not None:
            toks.extend(Tok(start, end, e.kind, frozenset({e.value}), e.large, word) for e in seg)
            return
    # any other word is left out: the gap between the number words around it holds its
    # letters, so they are never merged across it (see _merge_ok)


def _digit_sequence(group: Sequence[Tok]) -> bool:
    """At least three adjacent digit words (0-9, no scale): a year or code read digit by digit in
    Chinese and Japanese (二〇一九年 is 2019). Two (三四个) is "three or four", not 34."""
    return len(group) >= 3 and all(t.kind == "num" and t.value in _DIGIT_VALUES for t in group) and \
        all(a.end == b.start for a, b in pairwise(group))


_DIGIT_VALUES = frozenset(float(d) for d in range(10))


def _merge_ok(prev: Tok, tok: Tok, gap: str, lex: Lexicon) -> bool:
    if gap.strip(" \u00a0\u202f-"):
        return False
    if prev.kind == "digits" and tok.kind == "scale":
        return True
    if prev.kind == "scale" and tok.kind == "digits":
        return lex.scale_first or gap == ""
    if prev.kind == "digits" or tok.kind == "digits":
        return False
    return True


def _compose(group: Sequence[Tok], lex: Lexicon) -> float:
    """The value of adjacent number words/scales (see the module docstring)."""
    if lex.scale_first:
        return _compose_scale_first(group)
    total = current = pending = 0.0
    prev_large = False
    for t in group:
        if t.kind in ("num", "digits"):
            v = t.value
            if pending and (pending >= 100 or v >= pending):
                current += pending
                pending = v
            else:
                pending += v
            prev_large = False
        elif t.kind == "scale" and not t.large:
            current += (pending or 1) * t.value
            pending = 0.0
            prev_large = False
        elif t.kind == "scale":
            if not pending and not current and prev_large and total:
                total *= t.value  # "mil millones"
            else:
                total += ((current + pending) or 1) * t.value
            current = pending = 0.0
            prev_large = True
    return total + current + pending


def _compose_scale_first(group: Sequence[Tok]) -> float:
    # Swahili/Yoruba put the multiplier after the scale: elfu mbili = 1000 x 2, mia tatu na hamsini = 350
    total = 0.0
    last_num: float | None = None
    i = 0
    while i < len(group):
        t = group[i]
        if t.kind == "scale":
            j = i + 1
            mult: float | None = None
            if j < len(group) and group[j].kind in ("num", "digits"):
                mult = group[j].value
                j += 1
                if mult % 10 == 0 and mult < 100 and j + 1 < len(group) and group[j].kind == "conn" and \
                        group[j + 1].kind in ("num", "digits") and group[j + 1].value < 10:
                    mult += group[j + 1].value
                    j += 2
            if mult is None and last_num is not None:  # "2 milioni"
                total += last_num * (t.value - 1)
            else:
                total += t.value * (mult if mult is not None else 1)
            last_num = None
            i = j
        elif t.kind in ("num", "digits"):
            total += t.value
            last_num = t.value
            i += 1
        else:
            i += 1
    return total


@dataclass(frozen=True, slots=True)
class Negation:
    """A negation: the content units of the words around it (three on each side, or eight
    characters in scripts without spaces) and of the rest of its clause."""

    scope: frozenset[str]
    clause: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Facts:
    """What a text states (answer sentence) or offers as evidence (passage)."""

    numbers: tuple[NumberFact, ...] = ()
    months: tuple[int, ...] = ()
    negations: tuple[Negation, ...] = ()
    names: tuple[str, ...] = ()  # normalised words
    quotes: tuple[str, ...] = ()  # normalised quoted text or katakana words (substring-checked)
    # capitalised first words of a sentence or line that may be names (see _initial_name)
    initial_names: tuple[str, ...] = ()
    # evidence side
    all_numbers: frozenset[float] = frozenset()
    all_months: frozenset[int] = frozenset()
    words: frozenset[str] = frozenset()
    text: str = ""
    units: frozenset[str] = field(default_factory=frozenset)
    # the sentence opens with a yes/no reply word ("No, ..."), left out of its negations
    reply: bool = False

    @property
    def count(self) -> int:
        return len(self.numbers) + len(self.months) + len(self.negations) + len(self.names) + len(self.quotes)


def _numbers(t: str, lex: Lexicon, original: str) -> tuple[list[NumberFact], set[float], list[int], set[int]]:
    """Number facts, every value mentioned (components included), month facts and months."""
    facts: list[NumberFact] = []
    values: set[float] = set()
    months: list[int] = []
    all_months: set[int] = set()
    spans: list[tuple[int, int]] = []
    # (a date pattern finds nothing in a text without its separators: one C-level test each)
    for m in _DATE_ISO.finditer(t) if "-" in t else ():
        y, mo, d = (int(x) for x in m.groups())
        for v in (y, mo, d):
            facts.append(NumberFact(frozenset({float(v)}), str(v), False))
            values.add(float(v))
        if 1 <= mo <= 12:
            all_months.add(mo)
        spans.append(m.span())
    for m in _DATE_NUM.finditer(t) if "." in t or "/" in t else ():
        a, b, y = (int(x) for x in m.groups())
        for v in (a, b, y):
            facts.append(NumberFact(frozenset({float(v)}), str(v), False))
            values.add(float(v))
        all_months.update(x for x in (a, b) if 1 <= x <= 12)
        spans.append(m.span())
    masked = _blank(t, spans)
    if "." in masked:  # "21.00", "08.30": a time of day, read as "21:00" (an hour and its minutes)
        masked = _DOT_TIME.sub(r"\1:\2", masked)
    toks: list[Tok] = []
    for m in _NUMBER.finditer(masked):
        spans.append(m.span())
        if m.group() == "00" and masked[max(0, m.start() - 2):m.start()].rstrip(" \u00a0").endswith(":"):
            continue  # the minutes of a full hour ("14:00"): no fact beyond the hour
        toks.append(Tok(m.start(), m.end(), "digits", number_values(m.group()), text=m.group()))
    toks.extend(_word_tokens(_blank(t, spans), lex))
    toks.sort(key=lambda x: x.start)
    groups: list[list[Tok]] = []
    for tok in toks:
        if tok.kind == "month":
            if not lex.months_capitalized or _capitalized_in(original, tok.text):
                months.append(int(tok.value))
                all_months.add(int(tok.value))
            continue
        if groups and groups[-1] and _merge_ok(groups[-1][-1], tok, t[groups[-1][-1].end:tok.start], lex) and \
                (tok.kind != "conn" or groups[-1][-1].kind != "conn"):
            groups[-1].append(tok)
        else:
            groups.append([tok])
    for g in groups:
        while g and g[-1].kind == "conn":
            g.pop()
        while g and g[0].kind == "conn":
            g.pop(0)
        if not g:
            continue
        for tok in g:
            values.update(tok.values)
        end = g[-1].end
        suffix = next((s for s in lex.month_suffixes if t.startswith(s, end)), None)
        if len(g) == 1 and g[0].kind == "digits":
            vals = g[0].values
            approximate = max(vals) >= APPROX_MIN
        elif lex.digit_sequences and _digit_sequence(g):  # 二〇一九 / 一九九八: read digit by digit
            vals = frozenset({float("".join(str(int(x.value)) for x in g))})
            values.update(vals)
            approximate = min(vals) >= APPROX_MIN
        else:
            composed = _compose(g, lex)
            variants = {composed}
            if g[0].kind == "digits":  # "2.5 million" / "6.961 millones": every reading of the digits
                variants = {_compose([Tok(g[0].start, g[0].end, "digits", frozenset({v})), *g[1:]], lex)
                            for v in g[0].values}
            vals = frozenset(variants)
            values.update(vals)
            approximate = composed >= APPROX_MIN or any(x.kind == "scale" for x in g)
        if suffix is not None and all(float(v).is_integer() and 1 <= v <= 12 for v in vals):
            month = int(min(vals))
            months.append(month)
            all_months.add(month)
            continue
        if len(g) == 1 and g[0].kind != "digits" and (g[0].value == 1 or g[0].text in lex.standalone_exclusions):
            continue  # a lone "one" / "a": an article or pronoun far more often than a count
        if len(vals) == 1 and min(vals).is_integer() and _is_clock(masked, g[0].start, end, lex):
            # an hour: the evidence may state it as any of the hours it may be said as ("10点", 22:00)
            facts.append(NumberFact(vals, t[g[0].start:end], approximate,
                                    frozenset(_clock_readings(int(min(vals)), lex))))
            continue
        facts.append(NumberFact(vals, t[g[0].start:end], approximate))
    return facts, values, months, all_months


# an hour and its minutes written with a dot (de "14.30 Uhr", fi "klo 8.15", th "21.00 น."): minutes
# 00, 15, 30 or 45 only, so that a price ("14.50", "9.99") stays a decimal
_DOT_TIME = re.compile(r"(?<![\d.,])([01]?\d|2[0-4])\.(00|15|30|45)(?![\d.,]\d|\d)")
_MINUTES_AFTER = re.compile(r"[ \u00a0]?:[ \u00a0]?[0-5]\d(?!\d)")
_LETTER_OR_MARK = regex.compile(r"[\p{L}\p{M}]", regex.V1)


def _is_clock(t: str, start: int, end: int, lex: Lexicon) -> bool:
    """Whether the number at ``t[start:end]`` is an hour: minutes follow it (``21:00``), or a clock
    word of the lexicon stands right after or right before it (``10点``, ``14 Uhr``, ``klo 14``)."""
    if _MINUTES_AFTER.match(t, end):
        return True
    glued = lex.lang not in _CASED_LANGS  # (zh 点, ko 시에, bn টায়: written onto the hour or its case ending)
    after = t[end:end + 16].lstrip(" \u00a0")
    for w in lex.clock_after:
        if after.startswith(w) and (glued or len(after) == len(w) or
                                    not _LETTER_OR_MARK.match(after, len(w))):
            return True
    before = t[max(0, start - 16):start].rstrip(" \u00a0")
    for w in lex.clock_before:
        if before.endswith(w) and (glued or len(before) == len(w) or
                                   not _LETTER_OR_MARK.match(before, len(before) - len(w) - 1)):
            return True
    return False


def _clock_readings(h: int, lex: Lexicon) -> set[float]:
    """The other hours an answer's hour ``h`` (0-24) may stand for: the hour 12 later or earlier
    ("晚上10点" is a passage's 22:00, "14:00" its "2 pm"; 0 and 24 are 12), and the hours of the
    lexicon's ``clock_offsets`` (h + offset or h - offset, within 1-24: Thai "สามทุ่ม", 3 + 18, is
    21:00; Swahili "saa nne", 4 + 6, is 10:00). The passage's hours are read as written."""
    if not 0 <= h <= 24:
        return set()
    out: set[float] = set()
    for off in (12, *lex.clock_offsets):
        for r in (h - off, h + off):
            if 1 <= r <= 24:
                out.add(float(r))
    if h in (0, 24):
        out.add(12.0)
    return out


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with every span replaced by as many spaces (spans may overlap)."""
    if not spans:
        return text
    out: list[str] = []
    pos = 0
    for a, b in sorted(spans):
        if b <= pos:
            continue
        a = max(a, pos)
        out.append(text[pos:a])
        out.append(" " * (b - a))
        pos = b
    out.append(text[pos:])
    return "".join(out)


def _capitalized_in(original: str, word: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(word[:1].upper() + word[1:])}(?!\w)", original) is not None


# ---------------------------------------------------------------- negations

_SPACED_WORD = regex.compile(r"[\p{L}\p{M}\p{N}]+(?:['’][\p{L}\p{M}]+)*", regex.V1)


_CLAUSE_END = re.compile(r"[,;:.!?\u060c\u061b\u061f\u3001\u3002\uff0c\uff1b\uff1a\uff01\uff1f\u0964\u17d4\u17d5\n()]")


def _clause(text: str, start: int, end: int, lang: str) -> frozenset[str]:
    """Content units of the clause around ``text[start:end]`` (the negation itself left out).
    Clauses end at punctuation; in Thai and Lao, which mark clauses with spaces, also at spaces."""
    pattern = _CLAUSE_END if lang not in ("th", "lo") else re.compile(_CLAUSE_END.pattern[:-1] + r"\s]")
    left = max((m.end() for m in pattern.finditer(text, 0, start)), default=0)
    right_m = pattern.search(text, end)
    right = right_m.start() if right_m else len(text)
    return frozenset(content_units(text[left:start] + " " + text[end:right], lang))


def _negations(t: str, lex: Lexicon) -> list[Negation]:
    return [Negation(scope, _clause(text, start, end, lex.lang)) for scope, text, start, end in _negation_sites(t, lex)]


class _PassageNegation:
    """A negation of a passage (evidence): its scope, and its clause units computed the first time
    they are read (:func:`_check_sentence` reads them only for a sentence without a negation of its
    own, and only when the scope has not already decided); the same values as :class:`Negation`."""

    __slots__ = ("_clause", "_end", "_heads", "_lang", "_start", "_text", "scope")

    def __init__(self, scope: frozenset[str], text: str, start: int, end: int, lang: str) -> None:
        self.scope = scope
        self._text, self._start, self._end, self._lang = text, start, end, lang
        self._clause: frozenset[str] | None = None
        self._heads: frozenset[str] | None = None

    @property
    def clause(self) -> frozenset[str]:
        if self._clause is None:
            self._clause = _clause(self._text, self._start, self._end, self._lang)
        return self._clause

    @property
    def heads(self) -> frozenset[str]:
        """The units of the words next to the negation (the nearest word of three letters or more
        on each side, in its clause): what it negates (``not [win]``, ``[आया] नहीं``). Empty in
        scripts without spaces, where the scope is a character window already."""
        if self._heads is None:
            self._heads = _heads(self._text, self._start, self._end, self._lang)
        return self._heads


def _heads(text: str, start: int, end: int, lang: str) -> frozenset[str]:
    """The units of the words a negation negates (the lexicon's ``negation_head_*`` fields say
    which side, per language)."""
    lex = lexicon(lang)
    if lex.scan:
        width = lex.negation_head_chars
        if not width:
            return frozenset()
        if lex.negation_head_before:
            window = _CLAUSE_END.split(text[max(0, start - width):start])[-1]
        else:
            window = _CLAUSE_END.split(text[end:end + width])[0]
        return frozenset(content_units(window, lang))
    minimum = lex.negation_min_word
    before = [w for w in _SPACED_WORD.findall(_CLAUSE_END.split(text[max(0, start - 80):start])[-1]) if len(w) >= minimum]
    after = [w for w in _SPACED_WORD.findall(_CLAUSE_END.split(text[end:end + 80])[0]) if len(w) >= minimum]
    if lex.negation_head_before:
        # (the two words before: the verb and its object, "환승으로 보지 않습니다")
        words = after[:1] if text[start:end] in lex.negation_after_words else before[-2:]
    else:
        words = before[-1:] + after[:1]
    return frozenset(content_units(" ".join(words), lang)) if words else frozenset()


@dataclass(frozen=True, slots=True)
class _NegationWords:
    """The word tests of :func:`_negation_sites` for one lexicon, in one-call forms."""

    # the negation words, and each glued to a word prefix: a word is one of them exactly when it
    # is a negation word once a word prefix ("و") is taken off it, or as it is
    words: frozenset[str]
    suffixes: tuple[str, ...]  # str.endswith(tuple): any of them
    prefixes: tuple[str, ...]
    circumfixes: tuple[tuple[str, str], ...] = ()

    def circumfixed(self, w: str) -> bool:
        """``w`` starts and ends as a negated form, with at least three letters between."""
        return any(w.startswith(a) and w.endswith(b) and len(w) >= len(a) + len(b) + 3 for a, b in self.circumfixes)


_NEGATION_WORDS: dict[int, tuple[Lexicon, _NegationWords]] = {}


def _negation_words(lex: Lexicon) -> _NegationWords:
    cached = _NEGATION_WORDS.get(id(lex))
    if cached is not None and cached[0] is lex:
        return cached[1]
    tests = _NegationWords(lex.negations | {p + n for p in lex.word_prefixes for n in lex.negations},
                           lex.negation_suffixes, lex.negation_prefixes, lex.negation_circumfixes)
    _NEGATION_WORDS[id(lex)] = (lex, tests)
    return tests


def _negation_sites(t: str, lex: Lexicon) -> list[tuple[frozenset[str], str, int, int]]:
    """Each negation of ``t``: (scope units, text, start, end), its clause being
    ``_clause(text, start, end, lang)``."""
    out: list[tuple[frozenset[str], str, int, int]] = []
    text = t
    for phrase in lex.not_negations:
        text = text.replace(phrase, " " * len(phrase))
    if lex.negations or lex.negation_suffixes or lex.negation_prefixes or lex.negation_circumfixes:
        tests = _negation_words(lex)
        words = _SPACED_WORD.findall(text)
        # Most texts hold no negation: a word that is one is in tests.words, or holds a suffix or a
        # prefix as a substring of the text; when none of these holds, no word needs a look.
        if not tests.words.isdisjoint(words) or any(s in text for s in tests.suffixes) or \
                any(p in text for p in tests.prefixes) or any(a in text for a, _ in tests.circumfixes):
            spans: list[tuple[int, int]] | None = None
            for i, w in enumerate(words):
                if w in tests.words or w.endswith(tests.suffixes) or \
                        (w.startswith(tests.prefixes) and
                         any(w.startswith(p) and len(w) > len(p) + 1 for p in tests.prefixes)) or \
                        (tests.circumfixes and tests.circumfixed(w)):
                    if spans is None:  # findall and finditer give the same matches
                        spans = [m.span() for m in _SPACED_WORD.finditer(text)]
                    around = words[max(0, i - 3):i] + words[i + 1:i + 4]
                    out.append((_scope_units(" ".join(around), lex.lang), text, *spans[i]))
    for marker in lex.negation_substrings:
        start = text.find(marker)
        while start >= 0:
            end = start + len(marker)
            if _boundary_ok(text, start, end) or not lex.scan:
                window = text[max(0, start - 8):start] + " " + text[end:end + 8]
                out.append((_scope_units(window, lex.lang), text, start, end))
            text = text[:start] + " " * len(marker) + text[end:]
            start = text.find(marker, end)
    return out


def negation_sites(t: str, lang: str) -> list[tuple[frozenset[str], str, int, int]]:
    """Each negation of the normalised text ``t`` in ``lang``: (scope units, the text read, start, end)."""
    return _negation_sites(t, lexicon(lang))


def _scope_units(text: str, lang: str) -> frozenset[str]:
    return frozenset(content_units(text, lang))


# ---------------------------------------------------------------- names

_QUOTES = regex.compile(r"«([^«»\n]{1,80})»|“([^“”\n]{1,80})”|„([^„“”\n]{1,80})[“”]|\"([^\"\n]{1,80})\"|"
                        r"『([^『』\n]{1,80})』|「([^「」\n]{1,80})」|《([^《》\n]{1,80})》|〈([^〈〉\n]{1,80})〉|"
                        r"‹([^‹›\n]{1,80})›")
_CAPITALISED = regex.compile(r"(?<![\p{L}\p{M}\p{N}])[[\p{Lu}\p{Lt}]&&[\p{Latin}\p{Cyrillic}\p{Greek}]]"
                             r"[\p{L}\p{M}]*(?:-[\p{L}\p{M}]+)*", regex.V1)
# (not right after a digit: "80GB", "3Mbps" are units)
_LATIN_WORD = regex.compile(r"(?<![\p{Latin}\p{M}\p{N}])\p{Latin}[\p{Latin}\p{M}]+", regex.V1)
_ALNUM = re.compile(r"(?<![0-9A-Za-z])(?=[0-9A-Za-z]*\d)(?=[0-9A-Za-z]*[A-Za-z])[0-9A-Za-z]+(?![0-9A-Za-z])")
# ordinal suffixes and units glued to a number are not names ("2nd", "5km"); case matters: "5G" is a
# network generation, "5g" five grams
_ORDINAL_OR_UNIT = re.compile(
    r"\d+(?:st|nd|rd|th|er|re|e|eme|ème|o|a|te|ten|ste|sten|km|cm|mm|m|kg|g|mg|t|l|ml|h|s|min|ha|km2|m2|cm2|"
    r"kb|KB|MB|GB|TB|Mb|Gb|Hz|kHz|MHz|GHz|W|kW|MW|GW|kWh|MWh|GWh|V|mph|kmh)")
_KATAKANA = regex.compile(r"\p{Katakana}[\p{Katakana}ー・]+", regex.V1)
_LETTER = regex.compile(r"\p{L}", regex.V1)


def _names(original: str, lang: str, lex: Lexicon,
           initial: list[str] | None = None) -> tuple[list[str], list[str]]:
    """(name words, substring-checked names: quotes and katakana words) of one sentence."""
    nfkc = unicodedata.normalize("NFKC", original)
    quotes: list[str] = []
    spans: list[tuple[int, int]] = []
    for m in _QUOTES.finditer(nfkc):
        inner = next(g for g in m.groups() if g is not None)
        q = _collapse(norm(inner, lang))
        if q:
            quotes.append(q)
            spans.append((m.start(), m.end()))
    rest = list(nfkc)
    for a, b in spans:
        rest[a:b] = " " * (b - a)
    text = "".join(rest)
    names: list[str] = []
    if lang in _CASED_LANGS or lang not in LEXICON_LANGS:
        for m in _CAPITALISED.finditer(text):
            word = m.group()
            low = normalize(word, lang)
            if len(low) < 2 or low in lex.words or low in lex.negations or low in lex.not_names:
                continue
            if lex.noun_determiners and _common_noun(low, text, m.start(), lex):
                continue
            if not _LETTER.search(text, text.rfind("\n", 0, m.start()) + 1, m.start()) and \
                    (low in lex.sentence_starters or lang not in _CASED_LANGS or
                     not _initial_name(word, text, m.end(), lex.not_names)):
                if initial is not None and lang in _CASED_LANGS and low not in lex.sentence_starters:
                    initial.append(low)
                continue
            names.append(low)
    if lang not in _CASED_LANGS:
        names.extend(normalize(m.group(), lang) for m in _LATIN_WORD.finditer(text)
                     if not m.group()[:1].isupper() or lang in LEXICON_LANGS)
    for m in _ALNUM.finditer(text):
        if not _ORDINAL_OR_UNIT.fullmatch(m.group()):
            names.append(m.group().lower())
    if lang == "ja":
        quotes.extend(_collapse(norm(m.group(), lang)) for m in _KATAKANA.finditer(text))
    return list(dict.fromkeys(names)), list(dict.fromkeys(quotes))


_PREVIOUS_WORD = regex.compile(r"([\p{L}\p{M}\p{N}]+)[ \t\u00a0]*$", regex.V1)
_ADJECTIVE_ENDINGS = ("e", "en", "er", "es", "em")


def _common_noun(low: str, text: str, start: int, lex: Lexicon) -> bool:
    """German: a capitalised word is a common noun when it has a noun suffix, or follows a
    determiner, also one written with a capital ("die Terminvereinbarung", "im Wartezimmer", "Ihr
    Sohn", "Die Texte"), a number ("drei Dinge", "12 Monate") or an inflected adjective written in
    lower case ("vorheriger Terminvereinbarung"); a name follows another capitalised word or none
    ("Dr. Keller", "in Lindenau")."""
    if len(low) > 4 and low.endswith(lex.noun_suffixes):
        return True
    m = _PREVIOUS_WORD.search(text, max(0, start - 40), start)
    if m is None:
        return False
    prev = m.group(1)
    p = normalize(prev, lex.lang)
    entry = lex.words.get(p)
    if p in lex.noun_determiners or p.isdigit() or (entry is not None and entry.kind == "num"):
        return True  # "Ihr Sohn", "Die Texte" (a capital at a sentence's start), "drei Dinge"
    if prev[:1].isupper():
        return False
    return len(p) >= 4 and p.endswith(_ADJECTIVE_ENDINGS)


_NEXT_CAPITALISED = regex.compile(r"[ \t\u00a0]+[[\p{Lu}\p{Lt}]&&[\p{Latin}\p{Cyrillic}\p{Greek}]]", regex.V1)


def _initial_name(word: str, text: str, end: int, not_names: frozenset[str] = frozenset()) -> bool:
    """Whether the capitalised first word of a sentence (or line) is read as a name: a capital is
    what every first word has, so only when the word is written as a name only can be (all capitals,
    ``NASA``; a capital inside it, ``McLaren``) or the next word is capitalised too (``New York``,
    ``Nelson Mandela``). ``Unable``, ``Based``, ``Helping``, ``Saa``, ``Ukilinganisha`` are not."""
    if (len(word) >= 2 and word.isupper()) or any(ch.isupper() for ch in word[1:]):
        return True
    nxt = _NEXT_CAPITALISED.match(text, end)
    if nxt is None:
        return False
    # a polite pronoun or a currency prefix is capitalised without being a name ("Denken Sie
    # daran", "Tarifnya Rp4.000")
    word_after = _CAPITALISED.match(text, nxt.end() - 1)
    return word_after is None or normalize(word_after.group(), "und") not in not_names


# A list marker at the start of a line: "1.", "2)", "(3)", "a)", "-", "*", "•" (never "1.5", nor a
# four-digit year): it numbers the list, it states no number.
_LIST_MARKER = re.compile(r"(?m)^[ \t]*(?:[(\[]?\d{1,3}[.)\]．）](?![\d.,])|[(]?[A-Za-z][.)](?=[ \t])|[-*•·–—▪◦‣])[ \t]*")


def strip_list_markers(text: str) -> str:
    """``text`` without the list markers that start its lines (replaced by nothing)."""
    if not any(ch in text for ch in "-*•·–—▪◦‣.)．）"):
        return text
    return _LIST_MARKER.sub("", text)


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _name_supported(name: str, ev: Evidence) -> bool:
    if name in ev.words or (len(name) >= 4 and name in ev.text):
        return True
    if "-" in name and all(_name_supported(p, ev) for p in name.split("-") if p):
        return True
    if len(name) >= 5:  # inflected forms: all but the last two letters (at least 4) shared
        stem = name[:max(4, len(name) - 2)]
        return any(w.startswith(stem) for w in ev.words)
    return False


def _name_held(name: str, ev: Evidence) -> bool:
    """The first test of :func:`_name_supported`, passage by passage (a True here is its True): the
    name is a word of one passage, or (4+ characters, no newline) in the text of one."""
    if not name or any(c.isspace() for c in name):  # (names never are: the general form)
        text_too = len(name) >= 4 and "\n" not in name
        return any(name in words or (text_too and name in text) for words, text in ev.word_parts())
    # A passage's words are substrings of its text without whitespace, so a name (no whitespace) that
    # is one of them is in its text too: a passage whose text lacks the name is passed over, and the
    # words of one that has it are needed only for a name of under 4 characters. (A string without
    # whitespace is in the normalised text exactly when it is in that text with its whitespace
    # collapsed: the runs between whitespace are the same.)
    short = len(name) < 4
    lang = ev.lang
    for t in ev.texts:
        if name in _evidence_norm(t, lang) and (not short or name in _evidence_word_set(t, lang)):
            return True
    return False


# ---------------------------------------------------------------- extraction

_EVIDENCE_WORD = regex.compile(r"[\p{Latin}\p{Cyrillic}\p{Greek}\p{N}\p{M}]+(?:-[\p{Latin}\p{Cyrillic}\p{Greek}\p{N}\p{M}]+)*",
                               regex.V1)


@lru_cache(maxsize=4096)
def facts_of(text: str, lang: str) -> Facts:
    """The facts stated by ``text`` (an answer sentence without citation markers, or a passage)."""
    return _facts(text, lang, evidence=True)


def stated_values(text: str, lang: str) -> frozenset[float]:
    """The values of the numbers ``text`` states, read as an answer sentence's are (cached); a number
    with two readings ("8,000": 8000, or 8 with a decimal comma) gives none."""
    return frozenset(v for n in _sentence_facts(text, lang).numbers if len(n.values) == 1 for v in n.values if v == v)


def states_negation(text: str, lang: str) -> bool:
    """Whether ``text`` (one sentence) holds a negation, by the rules of the answer side."""
    return bool(_sentence_facts(text, lang).negations)


@lru_cache(maxsize=4096)
def _sentence_facts(text: str, lang: str) -> Facts:
    """:func:`facts_of` without the evidence side (all_numbers, all_months, words, text left empty,
    and the negations' clauses): what :func:`_check_sentence` reads of an answer sentence, which is
    never evidence."""
    return _facts(text, lang, evidence=False)


def _facts(text: str, lang: str, evidence: bool) -> Facts:
    lex = lexicon(lang)
    t = norm(text, lang)
    numbers, values, months, all_months = _numbers(t, lex, text)
    initial: list[str] = []
    names, quotes = _names(text, lang, lex, initial)
    # an answer sentence's own negations are read by their scope only (the clause is read of evidence)
    # negations are read on the text with equivalent forms made one (ja 使えない and 利用できない)
    c = _canonical(t, lex)
    reply = _reply_end(c, lex)
    negations = _negations(c if reply is None else " " * reply + c[reply:], lex)
    if negations and _bare_reply(c, lex):
        # "不能。", "Nein." alone: the reply to a yes/no question, read like "No." (any negation of
        # the evidence holds it), not a claim about the reply word's verb
        negations = [Negation(frozenset())]
    f = Facts(numbers=tuple(numbers), months=tuple(months), negations=tuple(negations),
              names=tuple(names), quotes=tuple(quotes), units=frozenset(content_units(c, lang)),
              initial_names=tuple(dict.fromkeys(n for n in initial if n not in names)), reply=reply is not None)
    if not evidence:
        return f
    return replace(f, all_numbers=frozenset(values), all_months=frozenset(all_months), words=_evidence_words(t),
                   text=_collapse(t))


# what may stand between a reply word and the clause it answers: punctuation, or (Thai, Khmer, Lao:
# scripts whose clauses are separated by spaces) a space
_REPLY_PUNCT = regex.compile(r"\s*[,.!;:،؛，、。！।॥៖។-]")
_REPLY_SPACE = regex.compile(r"\s+(?=\S)")
_LEAD = regex.compile(r"^[\s\p{P}]*")
_ALNUM_CHAR = regex.compile(r"[\p{L}\p{N}]")


def _reply_end(t: str, lex: Lexicon) -> int | None:
    """Where the yes/no reply word that opens ``t`` (normalised) ends, with the punctuation after it
    ("no, you cannot ..." -> 3, "いいえ、..." -> 4); None when ``t`` opens otherwise. A reply word
    answers the question ("Is X allowed?" "No, ..."): the clause after it is checked, the word itself
    states nothing the passages could hold."""
    if not lex.reply_negations:
        return None
    lead = _LEAD.match(t)
    start = lead.end() if lead is not None else 0
    for w in lex.reply_negations:  # longest first
        if t.startswith(w, start):
            end = start + len(w)
            m = _REPLY_PUNCT.match(t, end) or (_REPLY_SPACE.match(t, end) if lex.lang in ("th", "km", "lo") else None)
            if m is not None and _ALNUM_CHAR.search(t, m.end()) is not None:  # "No." alone is the answer
                stop: int = m.end()
                return stop
    return None


_PUNCT = regex.compile(r"\p{P}+")


def _bare_reply(t: str, lex: Lexicon) -> bool:
    """Whether ``t`` (normalised) is a yes/no reply word and nothing else ("不能。", "Ei voi.")."""
    return " ".join(_PUNCT.sub(" ", t).split()) in lex.reply_negations


def _evidence_words(t: str) -> frozenset[str]:
    """Latin, Cyrillic and Greek words (and the parts of hyphenated ones), numbers included."""
    words = set(_EVIDENCE_WORD.findall(t))
    # only the distinct words need splitting (the union is the same), and none has a hyphen when
    # the text has none
    if "-" in t:
        for w in [w for w in words if "-" in w]:
            words.update(p for p in w.split("-") if p)
    return frozenset(words)


# The evidence a passage offers, by part, each read only when an answer's fact needs it: a
# sentence without numbers never has its passages' numbers extracted.

@lru_cache(maxsize=4096)
def _evidence_norm(text: str, lang: str) -> str:
    return norm(text, lang)


@lru_cache(maxsize=4096)
def _evidence_numbers(text: str, lang: str) -> tuple[frozenset[float], frozenset[int]]:
    """Every number value (components of composed numbers included) and month ``text`` mentions."""
    _facts, values, _months, all_months = _numbers(_evidence_norm(text, lang), lexicon(lang), text)
    return frozenset(values), frozenset(all_months)


@lru_cache(maxsize=4096)
def _evidence_negations(text: str, lang: str) -> tuple[_PassageNegation, ...]:
    lex = lexicon(lang)
    return tuple(_PassageNegation(scope, t, start, end, lang)
                 for scope, t, start, end in _negation_sites(_canonical(_evidence_norm(text, lang), lex), lex))


def _canonical(t: str, lex: Lexicon) -> str:
    """``t`` with every variant of the lexicon's ``equivalents`` replaced by its group's first form
    (ja 使え -> 利用でき: 使えない and 利用できない are one negation, 使える and 利用できる one
    affirmation), longest variant first."""
    for variant, canonical in lex.equivalents:
        if variant in t:
            t = t.replace(variant, canonical)
    return t


def _evidence_text(text: str, lang: str) -> tuple[frozenset[str], str]:
    """(words of :func:`_evidence_words`, the normalised text with its whitespace collapsed)."""
    return _evidence_word_set(text, lang), _evidence_collapsed(text, lang)


@lru_cache(maxsize=4096)
def _evidence_word_set(text: str, lang: str) -> frozenset[str]:
    return _evidence_words(_evidence_norm(text, lang))


@lru_cache(maxsize=4096)
def _evidence_collapsed(text: str, lang: str) -> str:
    return _collapse(_evidence_norm(text, lang))


class Evidence:
    """What some passages (a sentence's cited passages, or all of them) offer as evidence: every
    number and month they mention, their negations, their words and text, each part extracted
    (once per passage and language, cached) the first time a fact of the sentence asks for it."""

    __slots__ = ("_lang", "_numbers", "_texts", "_words")

    def __init__(self, texts: Sequence[str], lang: str) -> None:
        self._texts = tuple(texts)
        self._lang = lang
        self._numbers: tuple[frozenset[float], frozenset[int]] | None = None
        self._words: tuple[frozenset[str], str] | None = None

    @classmethod
    def of_passages(cls, passages: Iterable[Passage], lang: str) -> Evidence:
        return cls([f"{p.title}\n{p.text}" if p.title else p.text for p in passages], lang)

    def _number_parts(self) -> tuple[frozenset[float], frozenset[int]]:
        if self._numbers is None:
            parts = [_evidence_numbers(t, self._lang) for t in self._texts]
            self._numbers = (frozenset().union(*(p[0] for p in parts)), frozenset().union(*(p[1] for p in parts)))
        return self._numbers

    def _word_parts(self) -> tuple[frozenset[str], str]:
        if self._words is None:
            parts = [_evidence_text(t, self._lang) for t in self._texts]
            self._words = (frozenset().union(*(p[0] for p in parts)), "\n".join(p[1] for p in parts))
        return self._words

    # Per passage, in order, each extracted only when the iteration reaches it: a fact the first
    # passages already support needs nothing from the others (see _check_sentence).

    def number_parts(self) -> Iterator[tuple[frozenset[float], frozenset[int]]]:
        lang = self._lang
        return (_evidence_numbers(t, lang) for t in self._texts)

    def word_parts(self) -> Iterator[tuple[frozenset[str], str]]:
        lang = self._lang
        return (_evidence_text(t, lang) for t in self._texts)

    def text_parts(self) -> Iterator[str]:
        lang = self._lang
        return (_evidence_collapsed(t, lang) for t in self._texts)

    @property
    def texts(self) -> tuple[str, ...]:
        return self._texts

    @property
    def lang(self) -> str:
        return self._lang

    def negation_parts(self) -> Iterator[_PassageNegation]:
        lang = self._lang
        return (n for t in self._texts for n in _evidence_negations(t, lang))

    @property
    def all_numbers(self) -> frozenset[float]:
        return self._number_parts()[0]

    @property
    def all_months(self) -> frozenset[int]:
        return self._number_parts()[1]

    @property
    def negations(self) -> tuple[_PassageNegation, ...]:
        return tuple(self.negation_parts())

    @property
    def words(self) -> frozenset[str]:
        return self._word_parts()[0]

    @property
    def text(self) -> str:
        return self._word_parts()[1]


def _sig_round(x: float, digits: int) -> float:
    if x == 0 or not math.isfinite(x):  # a number of 309+ digits reads as inf: nothing to round
        return x
    return round(x, digits - 1 - math.floor(math.log10(abs(x))))


def _significant(x: float) -> int:
    s = f"{x:.12g}".replace(".", "").replace("-", "").lstrip("0").rstrip("0")
    return max(1, len(s))


def _number_supported(n: NumberFact, ev: Evidence) -> bool:
    # (the values some passage holds exactly are found first, passage by passage: _number_held)
    evidence = ev.all_numbers
    if any(_close(v, e) for v in (n.values | n.hours if n.hours else n.values) for e in evidence):
        return True
    if n.approximate:
        for v in n.values:
            sig = _significant(v)
            if any(e >= APPROX_MIN / 10 and _close(_sig_round(e, sig), v) for e in evidence):
                return True
    return False


def _number_held(n: NumberFact, ev: Evidence) -> bool:
    """Some passage holds one of the values exactly (the first test of :func:`_number_supported`,
    passage by passage: a True here is its True)."""
    values = [v for v in (n.values | n.hours if n.hours else n.values) if v == v]
    if not values:
        return False
    texts: Sequence[str] = ev.texts
    lang = ev.lang
    if len(texts) > 1 and n.text:
        # the passages that write the number as the sentence does (same normalisation) first: one of
        # them most likely holds it, and the others are then not read (any() of the same passages in
        # another order: the same result)
        texts = sorted(texts, key=lambda t: n.text not in _evidence_norm(t, lang))
    return any(not _evidence_numbers(t, lang)[0].isdisjoint(values) for t in texts)


def _reading(n: NumberFact, lex: Lexicon) -> float | None:
    """The one value of ``n``, or None: a number with two readings ("8,000": 8000, or 8 where a
    comma is a decimal mark) has one when its separator is not the language's decimal mark (the
    lexicon's ``decimal_mark``: "." in en, zh, ja, ko, hi, th, ..., "," in de, es, fr, id, ...):
    its thousands reading ("25,000" in Korean, "Rp5.000" in Indonesian)."""
    if len(n.values) == 1:
        (v,) = n.values
        return v if v == v else None
    other = {".": ",", ",": "."}.get(lex.decimal_mark)
    if other and other in n.text and lex.decimal_mark not in n.text and len(n.values) == 2:
        return max(n.values)
    return None


def _derived(v: float | None, operands: Sequence[float]) -> bool:
    """The sentence computes the value ``v`` from two ``operands``: numbers it states that its
    evidence supports, that the question states, or that it derived before (sum, difference or
    product: "10 rupees for the first half hour and 15 for the next, so 25 an hour"; "4 rupees a
    kilometre for 50 km is 200, plus a fee of 15 is 215"). A value of 0, 1 or 2 is never derived (too
    many pairs make it), nor from a zero, nor from or as a number with two readings (:func:`_reading`);
    a value no two operands make (a changed total) stays unsupported."""
    if v is None or v in (0, 1, 2):
        return False
    others = [x for x in operands if x != 0]
    return any(_close(v, a + b) or _close(v, abs(a - b)) or _close(v, a * b)
               for i, a in enumerate(others) for b in others[i + 1:])


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def _overlap(scope: frozenset[str], units: frozenset[str]) -> int:
    """Units of ``scope`` found in ``units``: the same unit, or (both at least 4 characters long)
    one with the same first 4 characters."""
    prefixes = _prefixes(units)
    return sum(1 for u in scope if u in units or (len(u) >= 4 and u[:4] in prefixes))


@lru_cache(maxsize=1024)
def _prefixes(units: frozenset[str]) -> frozenset[str]:
    return frozenset(w[:4] for w in units if len(w) >= 4)


PER_TEXT_CACHES.extend((facts_of, _sentence_facts, _evidence_norm, _evidence_numbers, _evidence_negations,
                         _evidence_word_set, _evidence_collapsed, _prefixes))


@dataclass(frozen=True, slots=True)
class FactCheck:
    """One fact of the answer and whether its evidence supports it."""

    kind: str  # "number", "month", "name", "quote", "negation", "dropped_negation"
    text: str
    supported: bool


def _sentence_texts(answer: str, lang: str) -> list[str]:
    # Thai and Lao end clauses with spaces; facts are checked per punctuation-delimited sentence so
    # that a sentence's citation marker covers the whole sentence
    return split_sentences(answer, "und" if lang in ("th", "lo") else lang)


def check_facts(answer: str, passages: Sequence[Passage], lang: str) -> list[FactCheck]:
    """Every fact of ``answer`` (raw, with citation markers) checked against its evidence."""
    return [c for sentence in check_sentences(answer, passages, lang) for c in sentence.checks]


@dataclass(frozen=True, slots=True)
class SentenceFacts:
    """One answer sentence (as :func:`check_facts` splits the answer) and its fact checks."""

    raw: str  # with its citation markers
    text: str  # without markers and list markers
    cited: tuple[str, ...]
    invalid: tuple[str, ...]
    checks: tuple[FactCheck, ...]


def check_sentences(answer: str, passages: Sequence[Passage], lang: str,
                    asked: frozenset[float] = frozenset(), question: str = "") -> list[SentenceFacts]:
    """:func:`check_facts` sentence by sentence (sentences without a letter or digit left out).
    ``asked``: the values the user's question states (:func:`stated_values`); a number of the
    answer with one of them, restated while applying a rule ("my son is 10", "I scored 55"), is
    the question's, not invented. ``question``: the user's question; a name or quoted term it
    states is the question's too ("Does it work for my Tesla?" - "the passages do not say whether
    a Tesla ..."; "ペット", "Ihr Sohn"). Both accept a false premise the question states.

    The capitalised first word of a sentence is a name when it is written as one (see
    :func:`_initial_name`); otherwise it is checked as a name only when the context shows it is one:
    some passage writes it capitalised inside a sentence, or it is in another passage than the ones
    the sentence cites (a name taken from the wrong passage). ``Unable``, ``Based``, ``Helping``
    are in no passage: not names."""
    ids = [p.id for p in passages]
    by_id = {p.id: p for p in passages}
    everything: Evidence | None = None
    caps: frozenset[str] | None = None
    asked_ev: Evidence | None = None
    out: list[SentenceFacts] = []
    for sentence in _sentence_texts(answer, lang):
        text = strip_list_markers(strip_citations(sentence).strip())
        if not any(ch.isalnum() for ch in text):
            continue
        cited, invalid = find_citations(sentence, ids)
        if cited:
            ev = Evidence.of_passages((by_id[c] for c in cited), lang)
        elif invalid:
            ev = Evidence((), lang)
        else:
            if everything is None:
                everything = Evidence.of_passages(passages, lang)
            ev = everything
        f = _sentence_facts(text, lang)
        checks = _check_sentence(f, ev, asked)
        if f.initial_names:
            if everything is None:
                everything = Evidence.of_passages(passages, lang)
            if caps is None:
                caps = frozenset().union(*(_inner_capitalised(_passage_text(p), lang) for p in passages))
            checks += _initial_checks(f.initial_names, ev, everything, caps)
        if question and any(not c.supported and c.kind in ("name", "quote") for c in checks):
            if asked_ev is None:
                asked_ev = Evidence((question,), lang)
            checks = [_from_question(c, asked_ev) for c in checks]
        out.append(SentenceFacts(sentence, text, tuple(cited), tuple(invalid), tuple(checks)))
    return out


def _from_question(c: FactCheck, question: Evidence) -> FactCheck:
    """``c`` decided supported when it is an unsupported name or quote the question states."""
    if c.supported or c.kind not in ("name", "quote"):
        return c
    if c.kind == "name":
        held = _name_held(c.text, question) or _name_supported(c.text, question)
    else:
        held = c.text in question.text
    return FactCheck(c.kind, c.text, True) if held else c


def _passage_text(p: Passage) -> str:
    return f"{p.title}\n{p.text}" if p.title else p.text


def _initial_checks(names: Sequence[str], ev: Evidence, everything: Evidence, caps: frozenset[str]) -> list[FactCheck]:
    out: list[FactCheck] = []
    for n in names:
        if _name_held(n, ev) or _name_supported(n, ev):
            if n in caps:
                out.append(FactCheck("name", n, True))
        elif n in caps or (ev is not everything and (_name_held(n, everything) or _name_supported(n, everything))):
            out.append(FactCheck("name", n, False))
    return out


_INNER_CAPITALISED = regex.compile(r"(?<=[\p{L}\p{M}\p{N},;)»”\"'’][ \t\u00a0]+)[[\p{Lu}\p{Lt}]&&[\p{Latin}\p{Cyrillic}"
                                   r"\p{Greek}]][\p{L}\p{M}]*", regex.V1)


@lru_cache(maxsize=4096)
def _inner_capitalised(text: str, lang: str) -> frozenset[str]:
    """The capitalised words of ``text`` that follow a word or a comma on the same line (inside a
    sentence: written capitalised because they are names), normalised."""
    if not any(ch.isupper() for ch in text):
        return frozenset()
    return frozenset(normalize(m.group(), lang) for m in _INNER_CAPITALISED.finditer(text))


PER_TEXT_CACHES.append(_inner_capitalised)


def _check_sentence(f: Facts, ev: Evidence, asked: frozenset[float] = frozenset()) -> list[FactCheck]:
    # Each fact is first looked for passage by passage (Evidence.*_parts extract a passage only when
    # the iteration reaches it), and a fact some passage supports is decided there: membership in a
    # union is membership in one of its parts, and a string without a newline is in the passages
    # joined by newlines exactly when it is in one of them. Only a fact none of them holds as such
    # takes the whole-evidence test (which then reads every passage, as before).
    held = [_number_held(n, ev) or _number_supported(n, ev) for n in f.numbers]
    lex = lexicon(ev.lang)
    readings = [_reading(n, lex) for n in f.numbers]
    # the operands a computed number may come from: the supported numbers, the question's (in the
    # order the sentence states them), and each number derived from them in turn
    operands = [v for v, ok in zip(readings, held, strict=True) if ok and v is not None]
    operands += sorted(v for v in asked if v not in operands)
    out = []
    for n, v, ok in zip(f.numbers, readings, held, strict=True):
        if not ok and (len(n.values) == 1 and not n.values.isdisjoint(asked)):
            ok = True
        elif not ok and _derived(v, operands):
            ok = True
            operands.append(v)  # type: ignore[arg-type]  # (_derived is False for None)
        out.append(FactCheck("number", n.text, ok))
    out += [FactCheck("month", str(m), any(m in p[1] for p in ev.number_parts())) for m in f.months]
    out += [FactCheck("name", n, _name_held(n, ev) or _name_supported(n, ev)) for n in f.names]
    out += [FactCheck("quote", q, any(q in t for t in ev.text_parts()) if q and "\n" not in q else q in ev.text)
            for q in f.quotes]
    for neg in f.negations:
        # (any and bool read the negations in order and stop at the first that decides)
        ok = any(_overlap(neg.scope, e.scope) >= 1 or _restated(neg.clause, e.clause) for e in ev.negation_parts()) \
            if neg.scope else any(True for _ in ev.negation_parts())
        out.append(FactCheck("negation", " ".join(sorted(neg.scope)), ok))
    if not f.negations and f.units and not f.reply:  # "No, ..." is a negative answer: nothing dropped
        scan = lexicon(ev.lang).scan
        for e in ev.negation_parts():  # the passages after the first dropped negation are not read
            # the scope first: it is at hand, the clause is computed when read (either one will do)
            if (_repeated(e.scope, f.units) or _restates(f.units, e.clause, scan)) and _negated_word_repeated(e, f.units):
                out.append(FactCheck("dropped_negation", " ".join(sorted(e.scope)), False))
                break
    return out


def _negated_word_repeated(e: Any, units: frozenset[str]) -> bool:
    """The sentence repeats a word next to the passage's negation (what it negates): a sentence that
    only shares the words around it ("the walls", "the name") says something else."""
    heads: frozenset[str] = getattr(e, "heads", frozenset())
    return not heads or _overlap(heads, units) >= 1


def _restated(clause: frozenset[str], other: frozenset[str]) -> bool:
    """A negated clause of the answer stated by a negated clause of the evidence with other words
    around the negation (利用できない / 使えない; "without food" / "not ... with food"): at least
    two of its units, and at least half, found in ``other``."""
    return len(clause) >= 2 and _overlap(clause, other) >= max(2, math.ceil(0.5 * len(clause)))


def _restates(units: frozenset[str], clause: frozenset[str], scan: bool = False) -> bool:
    """A sentence without a negation restates a negated clause of its evidence: at least half that
    clause's units (two or more) are the sentence's and, in a language written with spaces, at least
    60% of the sentence's own units are the clause's (a long sentence that shares a few words with a
    negated clause is about something else). In scripts without spaces (``scan``: units are
    character pairs, the sentence's are many) the first test alone."""
    if len(clause) < 2 or len(units) < 2:
        return False
    if _overlap(clause, units) < math.ceil(0.5 * len(clause)):
        return False
    return scan or _overlap(units, clause) >= math.ceil(0.6 * len(units))


def _repeated(u: frozenset[str], units: frozenset[str]) -> bool:
    """At least half the units of ``u`` (two or more) found in ``units``."""
    return len(u) >= 2 and _overlap(u, units) >= math.ceil(0.5 * len(u))
