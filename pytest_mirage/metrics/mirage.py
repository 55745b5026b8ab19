"""MIRAGE-Bench-compatible scoring (``Sample.scoring == "mirage"``).

Reproduces the evaluation code MIRAGE-Bench's published numbers come from (the ``dump-v0`` branch
of github.com/vectara/mirage-bench: ``evaluation/citation_precision_recall.py`` for citation
MAP@10 / Recall@10, ``evaluation/avg_citation_and_language_detect.py`` for the language feature),
written from a reading of that code, not copied. Every rule and where it differs from the default
(robust) parser is listed with an example in ``docs/metrics.md``.

Citations
    Only two paragraphs are read: the first paragraph of the Reason (the text between the first
    ``Reason`` and the first ``Answer:`` after it, stripped, cut at the first blank line ``\\n\\n``)
    and the first paragraph of the Answer (the text after the first ``Answer:``, likewise). A
    citation is ``[...]`` (ASCII brackets; the text up to the first ``]``, newlines included);
    its brackets are removed; when it contains a comma it is split on commas *without trimming*
    (``[a, b]`` gives ``a`` and `` b``), otherwise it is taken whole (``[a; b]`` is one token).
    A token counts only when it is exactly one of the judged ids (relevant and non-relevant
    passages of the case); everything else (``[1]`` indices, full-width ``［a］``, ``" b"``) is
    dropped and takes no rank. The run scores the i-th of the n kept tokens ``n - i``; a passage
    cited twice keeps the score of its *last* occurrence, so passages are ranked by their last
    occurrence. trec_eval ``map_cut_10`` and ``recall_10`` over that run, the relevant ids being the
    case's ``relevant``.
    An output without ``Reason ... Answer:`` or without ``Answer:`` makes the seed's code fail
    (its citation lists are then unbound), so it has no value here: null, with that reason.

Language
    The whole output (Reason and Answer), with every judged id removed (``str.replace`` in the
    order relevant ids, then the other case passages, then the other context passages), the exact
    labels ``##Reason:`` and ``##Answer:`` removed, every ``[`` and ``]`` removed, newlines made
    spaces and whitespace runs collapsed. The detector is langdetect (a port of Google's
    language-detection) for every language but Yoruba, for which it is lingua restricted to English
    and Yoruba (high-accuracy mode). The value is the detector's probability of the target
    (``zh-cn`` counts as ``zh``); a text the detector finds no features in scores 0, as in the
    seed's code. langdetect samples n-grams at random and the seed's code does not fix its seed, so
    its own values vary between runs; here the seed is fixed (0), so the values are one of the
    outcomes the seed's code can produce, and the same on every run.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any

from .base import NotApplicable, Sample

_REASON_RE = re.compile(r"Reason(.*?)Answer:", re.DOTALL)
_ANSWER_RE = re.compile(r"Answer:(.*?)$", re.DOTALL)
_CITATION_RE = re.compile(r"\[[^\]]*\]")

# langdetect's labels: its 55 profiles (no Yoruba, no Khmer). zh-cn is read as zh, zh-tw stays.
LANGDETECT_LANGUAGES = frozenset(
    "af ar bg bn ca cs cy da de el en es et fa fi fr gu he hi hr hu id it ja kn ko lt lv mk ml mr ne "
    "nl no pa pl pt ro ru sk sl so sq sv sw ta te th tl tr uk ur vi zh zh-tw".split())
LANGDETECT_SEED = 0


def judged_ids(s: Sample) -> list[str]:
    """The ids the seed's code filters citations with (its qrels: positive then negative ids):
    the case's relevant ids, then the other case passages, then the other context passages."""
    return list(dict.fromkeys([*s.case.relevant, *(p.id for p in s.case.passages), *(p.id for p in s.context)]))


def first_paragraphs(output: str) -> tuple[str, str]:
    """The first paragraph of the Reason and of the Answer, as the seed's citation code reads them."""
    reason = _REASON_RE.search(output)
    answer = _ANSWER_RE.search(output)
    if reason is None or answer is None:
        missing = "'Answer:'" if answer is None else "'Reason' before 'Answer:'"
        raise NotApplicable(f"scoring='mirage': the output has no {missing}, so MIRAGE-Bench's citation "
                            "code fails on it (no value)")
    return (reason.group(1).strip().split("\n\n")[0].strip(),
            answer.group(1).strip().split("\n\n")[0].strip())


def cited_tokens(paragraphs: Iterable[str], judged: Iterable[str]) -> list[str]:
    """The judged ids cited in ``paragraphs``, in order, repeats kept."""
    keep = set(judged)
    out: list[str] = []
    for para in paragraphs:
        for marker in _CITATION_RE.findall(para):
            inner = marker.replace("[", "").replace("]", "")
            if "," in inner:
                out.extend(tok for tok in inner.split(",") if tok in keep)
            elif inner in keep:
                out.append(inner)
    return out


def citation_run(output: str, judged: Iterable[str]) -> list[str]:
    """The seed's citation run: the cited judged ids ranked by their last occurrence."""
    last: dict[str, int] = {}
    for i, tok in enumerate(cited_tokens(first_paragraphs(output), judged)):
        last.pop(tok, None)  # re-inserted at its new (last) position
        last[tok] = i
    return list(last)


def language_text(output: str, judged: Sequence[str]) -> str:
    """The text the seed's language feature reads: the whole output, cleaned as described above."""
    text = output
    for doc_id in judged:
        text = text.replace(doc_id, "")
    for label in ("##Reason:", "##Answer:", "[", "]"):
        text = text.replace(label, "")
    return " ".join(text.replace("\n", " ").strip().split())


_LOCK = threading.Lock()


@cache
def _langdetect_factory() -> Any:
    try:
        from langdetect.detector_factory import PROFILES_DIRECTORY, DetectorFactory  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError as exc:
        raise ImportError("scoring='mirage' language metrics need langdetect, the detector MIRAGE-Bench's "
                          "evaluation code uses: pip install 'pytest-mirage[mirage-bench]'") from exc
    factory = DetectorFactory()  # our own factory: langdetect's module-level one is left alone
    factory.load_profile(PROFILES_DIRECTORY)
    factory.set_seed(LANGDETECT_SEED)
    return factory


@cache
def _yoruba_detector() -> Any:
    from lingua import Language, LanguageDetectorBuilder

    return LanguageDetectorBuilder.from_languages(Language.ENGLISH, Language.YORUBA).build()


def language_distribution(text: str, lang: str) -> dict[str, float]:
    """The seed's detector output for a case of language ``lang``: label -> probability (labels
    below langdetect's 0.1 reporting threshold are absent); empty when it finds no features."""
    if lang == "yo":
        return {cv.language.iso_code_639_1.name.lower(): float(cv.value)
                for cv in _yoruba_detector().compute_language_confidence_values(text)}
    from langdetect.lang_detect_exception import LangDetectException  # type: ignore[import-not-found,import-untyped,unused-ignore]

    factory = _langdetect_factory()
    with _LOCK:  # a detector is cheap, but the factory's profile tables are shared
        detector = factory.create()
    detector.append(text)
    try:
        found = detector.get_probabilities()
    except LangDetectException:  # "No features in text": the seed's code scores it 0
        return {}
    return {("zh" if x.lang == "zh-cn" else x.lang): float(x.prob) for x in found}


def _check_language(lang: str) -> None:
    if lang != "yo" and lang not in LANGDETECT_LANGUAGES:
        raise NotApplicable(f"scoring='mirage': MIRAGE-Bench's detector (langdetect) has no {lang!r}, so the "
                            "seed's language feature is always 0 for it; use the default scoring")


def language_match(s: Sample) -> float:
    """MIRAGE-Bench's language detection feature: P(target language) of the whole cleaned output."""
    _check_language(s.case.lang)
    text = language_text(s.answer.output, judged_ids(s))
    return language_distribution(text, s.case.lang).get(s.case.lang, 0.0)


def english_share(s: Sample) -> float:
    """MIRAGE-Bench's English detection feature: P(English) of the whole cleaned output."""
    if s.case.lang == "en":
        raise NotApplicable("the case language is English")
    _check_language(s.case.lang)
    text = language_text(s.answer.output, judged_ids(s))
    return language_distribution(text, s.case.lang).get("en", 0.0)
