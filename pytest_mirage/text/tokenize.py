"""Per-language tokenization: the single tokenizer of every lexical metric, BM25 and the baseline.

Scheme (see ``docs/metrics.md``):

* The text is normalized first (:func:`normalize`): Unicode NFKC (full-width forms, half-width
  katakana and compatibility characters fold to their plain forms), case folding, Arabic-script
  diacritics and tatweel removed, Arabic/Persian letter variants unified, and for Yoruba the tone
  marks removed (the under-dot letters ẹ ọ ṣ are kept: they are distinct letters).
* Scripts written with spaces (Latin, Cyrillic, Arabic, Devanagari, Bengali, Telugu, Hangul, ...):
  one token per word, a word being a run of letters, digits and combining marks. Combining marks
  (Devanagari vowel signs, viramas, ...) stay inside their word: nothing is dropped for being
  non-ASCII.
* Scripts written without spaces between words (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar,
  Tibetan): one token per character *unit*, a base character together with its combining marks
  (a Thai consonant with its vowel and tone marks; a Khmer consonant with its vowel signs and coeng).
  This is the character-level scheme of sacrebleu's ``zh`` tokenizer, CMRC (Chinese) and JSQuAD
  (Japanese) answer F1. It is deterministic and needs no dictionary, so scores do not move when a
  segmenter's dictionary changes; word segmenters (MeCab, jieba, PyThaiNLP, khmer-nltk) would add
  ~100 MB of dictionaries and dictionary-dependent scores to a regression gate.
* Hangul, although written with spaces, is tokenized into syllables like the scripts above: Korean
  attaches particles and endings to its words (서울 / 서울입니다 / 서울은), so whole words rarely match
  between a reference and a correct answer. Syllables (and syllable pairs in :func:`content_units`)
  match the stem whatever is attached, with no dictionary or particle list.
* The choice is made per character, not per ``lang``: a Latin word inside a Japanese answer is a word,
  a Chinese answer to a Japanese question is tokenized as Chinese. ``lang`` selects only the
  language-specific normalization (Yoruba tone marks).
* Punctuation and symbols are separators and never tokens.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache, lru_cache

import regex  # type: ignore[import-untyped]

# Languages whose running text has no spaces between words (used by BM25 indexing and sentence
# splitting; tokenization itself decides per character, see the module docstring).
# Korean is written with spaces, but its words (eojeol) carry particles and endings (서울 / 서울입니다 /
# 서울은), so it is tokenized into syllables (below) and BM25 indexes it by syllable 2- and 3-grams
# like the space-less languages (syllable unigrams carry almost no topical information).
NO_SPACE_LANGS = frozenset({"ja", "zh", "th", "km", "lo", "my", "bo", "yue", "wuu", "ko"})

# Scripts without word spaces. U+30FC (the katakana-hiragana prolonged sound mark) and U+3005 (々)
# have script Common in Unicode but belong to the Japanese word they lengthen or repeat.
NOSPACE_CLASS = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}\p{Tibetan}\u30fc\u3005"
# Scripts tokenized into character units: the space-less scripts and Hangul. A Korean word (eojeol)
# is a stem with particles/endings attached (서울 / 서울입니다 / 서울은 / 서울의), so whole-word matching
# finds no overlap between a reference and a correct answer; one token per Hangul syllable (and
# syllable pairs in content_units) matches the stem whatever is attached, with no dictionary.
UNIT_CLASS = NOSPACE_CLASS + r"\p{Hangul}"
_TOKEN_RE = regex.compile(
    rf"(?P<unit>[{UNIT_CLASS}]\p{{M}}*)"
    rf"|(?P<word>[[\p{{L}}\p{{N}}]--[{UNIT_CLASS}]][[\p{{L}}\p{{N}}\p{{M}}]--[{UNIT_CLASS}]]*)",
    regex.V1,
)

# Arabic script: harakat, superscript alef and tatweel carry no lexical content in evaluation;
# letter variants that writers use interchangeably (Persian/Arabic yeh and kaf, alef with hamza or
# madda) are unified, as Lucene's Arabic and Persian normalizers do.
_ARABIC_DROP = dict.fromkeys([*range(0x064B, 0x0660), 0x0670, 0x0640])
_ARABIC_MAP = {ord("ی"): "ي", ord("ى"): "ي", ord("ک"): "ك", ord("أ"): "ا", ord("إ"): "ا",
               ord("آ"): "ا", ord("ٱ"): "ا"}
_ARABIC_TABLE: dict[int, str | None] = {**_ARABIC_DROP, **_ARABIC_MAP}
_ARABIC_RE = re.compile("[\u0600-\u06ff]")
# Yoruba tone marks (acute, grave, macron); the dot below of ẹ ọ ṣ is a letter and is kept.
_YORUBA_TONES = dict.fromkeys([0x0300, 0x0301, 0x0304])


@lru_cache(maxsize=2048)
def normalize(text: str, lang: str | None = None) -> str:
    """NFKC, case-folded text with the language-specific normalization described above.

    Cached: the metrics of one case normalise the same answer and passages several times (support,
    the fact check, chrF); :func:`pytest_mirage.metrics.analysis.clear_caches` clears it."""
    if text.isascii():
        # ASCII is NFKC (no ASCII character has a compatibility mapping), its case folding is
        # lower(), and it holds no Arabic letter or Yoruba tone mark
        return text.lower()
    text = unicodedata.normalize("NFKC", text).casefold()
    if _ARABIC_RE.search(text):
        text = text.translate(_ARABIC_TABLE)
    if lang == "yo":
        text = unicodedata.normalize("NFC", unicodedata.normalize("NFD", text).translate(_YORUBA_TONES))
    return text


# ------------------------------------------------ the same patterns for the stdlib re module
# The classes above are unions and differences of Unicode properties, which the regex module tests
# one property after another for every character (the unit class alone names nine scripts). Written
# out as the code points of the Basic Multilingual Plane that the regex module itself puts in them
# (computed from it, so the members are the regex module's whatever its Unicode version), each class
# is one bitmap lookup for the stdlib re module, and the patterns below use nothing whose meaning
# differs between the two modules (classes, greedy repetition, alternation, lookahead). re keeps a
# class as a bitmap only when it holds no code point beyond U+FFFF, so these patterns serve the
# texts without such characters (nearly all); the others take the regex patterns.
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def _bmp_ranges(*classes: str) -> list[str]:
    """The members in the BMP of each regex class of ``classes``, as ranges for a re class."""
    bmp = "".join(map(chr, range(0x10000)))
    return ["".join(f"{re.escape(bmp[m.start()])}-{re.escape(bmp[m.end() - 1])}"
                    for m in regex.finditer(cls + "+", bmp, regex.V1))
            for cls in classes]


class _BmpPatterns:
    """The stdlib re forms of the tokenizer's patterns, for texts without astral characters."""

    def __init__(self) -> None:
        u, ub, um, m, ws, wc = _bmp_ranges(
            f"[{UNIT_CLASS}]",  # character of a unit script
            rf"[[{UNIT_CLASS}]--\p{{M}}]",  # ... that is not a mark: it starts a unit wherever it is
            rf"[[{UNIT_CLASS}]&&\p{{M}}]",  # ... that is a mark: it starts a unit only at the start of a run
            r"\p{M}",
            rf"[[\p{{L}}\p{{N}}]--[{UNIT_CLASS}]]",  # starts a word
            rf"[[\p{{L}}\p{{N}}\p{{M}}]--[{UNIT_CLASS}]]",  # continues a word
        )
        #: _TOKEN_FLAT_RE
        self.tokens = re.compile(f"[{u}][{m}]*|[{ws}][{wc}]*")
        #: _RUN_RE's runs and words, the runs told apart by what content_units takes from them: groups
        #: (a run of one unit, the first pair of a longer run led by a mark, a word). A unit takes
        #: the marks after it greedily, so every unit of a run but the first starts with a base
        #: character ([ub]); the lookahead of the first alternative fails on a mark or a unit
        #: character, so it matches a whole run of one unit and nothing else.
        self.segments = re.compile(
            f"([{u}][{m}]*)(?![{u}{m}])"  # a run of one unit
            f"|[{ub}][{m}]*(?:[{ub}][{m}]*)+"  # a longer run led by a base character: its pairs are all in .pairs
            f"|([{um}][{m}]*[{ub}][{m}]*)(?:[{ub}][{m}]*)*"  # a longer run led by a mark: its first pair
            f"|([{ws}][{wc}]*)"  # a word
        )
        #: Every pair of adjacent units of a run whose first unit starts with a base character: a
        #: base character of a unit script starts a unit wherever it is (no word or unit takes it as
        #: a mark), its unit takes the marks after it, and a base character right after them starts
        #: the next unit of the same run. The pairs overlap, hence the lookahead; a match takes the
        #: base character, so the scan goes on at the next character (after an empty match, re
        #: would try the same position again).
        self.pairs = re.compile(f"(?=([{ub}][{m}]*[{ub}][{m}]*))[{ub}]")


@cache
def _bmp() -> _BmpPatterns:
    # compiled on first use (about 0.1 s: the classes hold tens of thousands of code points)
    return _BmpPatterns()


def is_letter(ch: str) -> bool:
    """True for letters, combining marks and digits (Unicode categories L*, M*, N*)."""
    return unicodedata.category(ch)[0] in "LMN"


def tokenize(text: str, lang: str) -> list[str]:
    """Tokens of ``text`` for language ``lang`` (normalized; words or character units, see above)."""
    return list(_tokens(text, lang))


# _TOKEN_RE without its named groups: findall then returns the tokens themselves (no match objects)
_TOKEN_FLAT_RE = regex.compile(
    rf"[{UNIT_CLASS}]\p{{M}}*"
    rf"|[[\p{{L}}\p{{N}}]--[{UNIT_CLASS}]][[\p{{L}}\p{{N}}\p{{M}}]--[{UNIT_CLASS}]]*",
    regex.V1,
)


@lru_cache(maxsize=4096)
def _tokens(text: str, lang: str) -> tuple[str, ...]:
    # every lexical metric tokenizes the same answer and references: tokenize once
    normalized = normalize(text, lang)
    if _ASTRAL.search(normalized) is None:
        return tuple(_bmp().tokens.findall(normalized))
    return tuple(_TOKEN_FLAT_RE.findall(normalized))


def token_runs(text: str, lang: str) -> list[list[str]]:
    """Tokens grouped into runs: each word is a run of one token; consecutive character units
    (no separator between them) form one run. Used for n-grams that must not cross a separator."""
    runs: list[list[str]] = []
    last_end = -1
    last_unit = False
    for m in _TOKEN_RE.finditer(normalize(text, lang)):
        unit = m.lastgroup == "unit"
        if unit and last_unit and m.start() == last_end:
            runs[-1].append(m.group())
        else:
            runs.append([m.group()])
        last_end, last_unit = m.end(), unit
    return runs


_RUN_RE = regex.compile(
    rf"((?:[{UNIT_CLASS}]\p{{M}}*)+)"
    rf"|([[\p{{L}}\p{{N}}]--[{UNIT_CLASS}]][[\p{{L}}\p{{N}}\p{{M}}]--[{UNIT_CLASS}]]*)",
    regex.V1,
)
_UNIT_RE = regex.compile(rf"[{UNIT_CLASS}]\p{{M}}*")


def content_units(text: str, lang: str) -> set[str]:
    """Units that carry content, for coverage measures (``support_lexical``): words for spaced
    scripts; adjacent pairs of character units inside runs of space-less scripts and of Hangul
    (a single Han, Thai or Hangul character occurs in almost any passage; pairs approximate words). A run of one unit is kept
    as is. Equal to the pairs of :func:`token_runs`, computed without per-token Python work."""
    return _normalized_units(normalize(text, lang))


def _normalized_units(normalized: str) -> set[str]:
    if _ASTRAL.search(normalized) is None:
        fast = _bmp()
        out = set(fast.pairs.findall(normalized))
        segments = fast.segments.findall(normalized)
        if segments:
            out.update(*zip(*segments, strict=True))  # singles, first pairs of runs led by a mark, words
            out.discard("")  # the empty groups of the alternatives that did not match
        return out
    return _regex_units(normalized)


def _regex_units(normalized: str) -> set[str]:
    """:func:`_normalized_units` by its definition (the regex module's patterns; also the path of
    texts with characters beyond the Basic Multilingual Plane)."""
    out: set[str] = set()
    for run, word in _RUN_RE.findall(normalized):
        if word:
            out.add(word)
            continue
        units = _UNIT_RE.findall(run)
        if len(units) == 1:
            out.add(units[0])
        else:
            out.update(map(str.__add__, units, units[1:]))
    return out


# no unit spans one of these (characters outside letters, marks, digits and the unit scripts, whose
# punctuation, e.g. Khmer "។", is a unit of its run)
_SEPARATOR = regex.compile(rf"[^\p{{L}}\p{{N}}\p{{M}}{UNIT_CLASS}]")
_SEPARATOR_BACK = regex.compile(rf"[^\p{{L}}\p{{N}}\p{{M}}{UNIT_CLASS}]", regex.REVERSE)


# One-character classes that decide, from the characters next to an occurrence of a unit, whether
# the occurrence is one of the text's units (see _verdict).
_MARK = regex.compile(r"\p{M}")
_WORD_CHAR = regex.compile(rf"[[\p{{L}}\p{{N}}\p{{M}}]--[{UNIT_CLASS}]]", regex.V1)  # continues a word
_UNIT_CHAR = regex.compile(rf"[{UNIT_CLASS}]", regex.V1)
_WORD_START = regex.compile(rf"[[\p{{L}}\p{{N}}]--[{UNIT_CLASS}]]", regex.V1)
_UNIT_START = regex.compile(rf"[[{UNIT_CLASS}]--\p{{M}}]", regex.V1)
WORD, SINGLE, PAIR, OTHER = range(4)


@dataclass(frozen=True, slots=True)
class UnitKinds:
    """The content units of a text by the branch of :func:`content_units` that made them: words,
    runs of a single character unit, pairs of units starting with a base character, and pairs
    starting with a mark (a run whose first unit is a lone mark)."""

    words: frozenset[str]
    singles: frozenset[str]
    pairs: frozenset[str]
    others: frozenset[str]

    def __len__(self) -> int:
        return len(self.words) + len(self.singles) + len(self.pairs) + len(self.others)


def unit_kinds(text: str, lang: str) -> UnitKinds:
    """:func:`content_units` of ``text`` split by kind (the kinds are disjoint: a word holds no
    character of a unit script, a single unit one base character, a pair two characters that are
    not marks or a mark first)."""
    normalized = normalize(text, lang)
    if _ASTRAL.search(normalized) is None:
        fast = _bmp()
        pairs = set(fast.pairs.findall(normalized))  # the pairs led by a base character
        words: set[str] = set()
        singles: set[str] = set()
        others: set[str] = set()
        for single, marked, word in fast.segments.findall(normalized):
            if word:
                words.add(word)
            elif single:
                (others if _FLAGS[single[0]] & _M else singles).add(single)
            elif marked:
                others.add(marked)
        return UnitKinds(frozenset(words), frozenset(singles), frozenset(pairs), frozenset(others))
    return _regex_unit_kinds(normalized)


def _regex_unit_kinds(normalized: str) -> UnitKinds:
    """:func:`unit_kinds` of a normalised text by its definition (the regex module's patterns; also
    the path of texts with characters beyond the Basic Multilingual Plane)."""
    words: set[str] = set()
    singles: set[str] = set()
    pairs: set[str] = set()
    others: set[str] = set()
    for run, word in _RUN_RE.findall(normalized):
        if word:
            words.add(word)
            continue
        units = _UNIT_RE.findall(run)
        if len(units) == 1:
            (others if _MARK.match(run) else singles).add(run)
            continue
        # only the first unit of a run can start with a mark: the others follow a unit's marks
        if _MARK.match(run):
            others.add(units[0] + units[1])
            pairs.update(map(str.__add__, units[1:], units[2:]))
        else:
            pairs.update(map(str.__add__, units, units[1:]))
    return UnitKinds(frozenset(words), frozenset(singles), frozenset(pairs), frozenset(others))


def _kind(unit: str) -> int:
    """The kind of the content unit ``unit`` (:class:`UnitKinds`)."""
    if _WORD_START.match(unit):
        return WORD
    if _UNIT_START.match(unit):
        return SINGLE if _UNIT_RE.match(unit).end() == len(unit) else PAIR
    return OTHER


class _CharFlags(dict[str, int]):
    """Character -> the classes above it belongs to (_W | _M | _U), filled from the regexes on first
    sight: a table of character properties, the same for every text, so that the checks next to
    an occurrence are a dictionary lookup rather than a regex call."""

    def __missing__(self, c: str) -> int:
        flags = ((_W if _WORD_CHAR.match(c) else 0) | (_M if _MARK.match(c) else 0)
                 | (_U if _UNIT_CHAR.match(c) else 0))
        self[c] = flags
        return flags


_W, _M, _U = 1, 2, 4  # word character, mark, character of a unit script
_FLAGS = _CharFlags()


def _verdict(kind: int, text: str, start: int, end: int) -> bool | None:
    """Whether the occurrence ``text[start:end]`` of a content unit of ``kind`` is one of the text's
    units, decided by the characters next to it; None when they do not decide (a mark before a word
    or a single unit belongs to the word or unit before it or to none, depending on what precedes
    it; a pair starting with a mark)."""
    after = _FLAGS[text[end]] if end < len(text) else 0
    before = _FLAGS[text[start - 1]] if start else 0
    if kind == PAIR:
        # its base character starts a unit, and its second base character the next unit of the
        # same run; the second unit ends the pair unless a further mark follows
        return not after & _M
    if kind == WORD:
        if after & _W:
            return False  # the word goes on
        if before & _W:
            return None if before & _M else False
        return True
    if kind == SINGLE:
        if after & (_U | _M):
            return False  # a mark it would take, or a further unit of its run
        if before & _U:
            return False  # a run of more than one unit
        return None if before & _M else True
    return None


def _chunk_units(normalized: str, start: int, end: int, memo: dict[str, frozenset[str]] | None) -> frozenset[str]:
    """The units of the separator-delimited chunk of ``normalized`` around ``start:end``."""
    before = _SEPARATOR_BACK.search(normalized, 0, start)
    after = _SEPARATOR.search(normalized, end)
    chunk = normalized[before.end() if before else 0:after.start() if after else len(normalized)]
    units = memo.get(chunk) if memo is not None else None
    if units is None:
        units = frozenset(_normalized_units(chunk))
        if memo is not None:
            memo[chunk] = units
    return units


def _has(unit: str, kind: int, normalized: str, memo: dict[str, frozenset[str]] | None) -> bool:
    start = normalized.find(unit)
    while start != -1:
        end = start + len(unit)
        verdict = _verdict(kind, normalized, start, end)
        if verdict is None:
            verdict = unit in _chunk_units(normalized, start, end, memo)
        if verdict:
            return True
        start = normalized.find(unit, start + 1)
    return False


def has_content_unit(unit: str, normalized: str, memo: dict[str, frozenset[str]] | None = None) -> bool:
    """``unit in content_units(text, lang)`` where ``normalized == normalize(text, lang)``, without
    computing the units of the whole text. An occurrence of ``unit`` is one of the text's units when
    the characters next to it end the word or unit there (:func:`_verdict`). Where they do not
    decide, the separator-delimited chunk around the occurrence is analysed: no unit spans a
    separator (a character that is not a letter, mark, digit or character of a unit script), so
    ``unit`` is a content unit of the text exactly when it is one of such a chunk (``memo`` keeps the
    chunks' units between calls on the same text). Coverage checks of a sentence's few units
    against long passages use this instead of building the passages' unit sets."""
    if not unit or unit not in normalized:
        return False
    return _has(unit, _kind(unit), normalized, memo)


def has_mark(normalized: str) -> bool:
    """Whether ``normalized`` holds a combining mark (:func:`count_content_units` takes it)."""
    return _MARK.search(normalized) is not None


def count_content_units(units: UnitKinds, normalized: str, marks: bool,
                        memo: dict[str, frozenset[str]] | None = None) -> int:
    """How many of ``units`` are content units of the text ``normalized`` (``marks``:
    :func:`has_mark` of it), i.e. ``sum(has_content_unit(u, normalized, memo) for u in units)``.
    In a text without marks a pair starting with a base character is one of its units wherever it
    occurs (nothing can extend its second unit), so pairs, the bulk of the units of Chinese,
    Japanese and Korean sentences, are looked up with ``in`` alone."""
    found = 0
    if units.pairs:
        if marks:
            size = len(normalized)
            for u in units.pairs:  # _has(u, PAIR, ...) inlined: the bulk of Thai and Khmer units
                start = normalized.find(u)
                while start != -1:
                    end = start + len(u)
                    if end == size or not _FLAGS[normalized[end]] & _M:
                        found += 1
                        break
                    start = normalized.find(u, start + 1)
        else:
            found += sum(u in normalized for u in units.pairs)
    for kind, group in ((WORD, units.words), (SINGLE, units.singles), (OTHER, units.others)):
        found += sum(_has(u, kind, normalized, memo) for u in group if u in normalized)
    return found


# ---------------------------------------------------------------- sentences

# A sentence ends at terminal punctuation (Latin/Cyrillic ., !, ?; Arabic ؟ and ۔; Devanagari and
# Bengali dandas; Ethiopic ።; Khmer ។ ៕; Myanmar ။; CJK 。！？), followed by closing quotes or
# brackets and by citation markers, which belong to the sentence they follow ("... in 1998. [d#2]").
# Latin-style terminators need a following space (so "3.5" and "e.g.x" stay whole); the others not.
_CITE = r"(?:\s*\[[^\[\]\n]{1,400}\])"
_CLOSE = r"[\"'”’»)\]）」』】]"
_SENT_END_RE = regex.compile(
    rf"(?:[.!?؟۔]+{_CLOSE}*{_CITE}*(?=\s|$)|[।॥።។៕။。！？]+{_CLOSE}*{_CITE}*)|\n+"
)


def split_sentences(text: str, lang: str) -> list[str]:
    """Sentences of ``text`` with their citation markers; empty pieces dropped.

    Thai and Lao mark sentence ends with a space rather than punctuation, so for them every
    whitespace run also ends a sentence (the pieces are then clauses).
    """
    out: list[str] = []
    start = 0
    for m in _SENT_END_RE.finditer(text):
        out.append(text[start:m.end()])
        start = m.end()
    out.append(text[start:])
    pieces = [s.strip() for s in out if s.strip()]
    if lang in ("th", "lo"):
        pieces = [p for s in pieces for p in _split_thai(s)]
    return pieces


def _split_thai(sentence: str) -> list[str]:
    # split at spaces, but keep citation markers with the clause before them
    parts = regex.split(r"\s+(?!\[[^\[\]\n]{1,400}\])", sentence)
    return [p.strip() for p in parts if p.strip()]
