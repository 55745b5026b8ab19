"""Answer language: ``language_match`` (MIRAGE-Bench §4.1) and ``english_share``.

Both score the answer text without citation markers and format labels; see
:mod:`pytest_mirage.text.langid` for the detectors, the script checks and the short-answer rule.
"""

from __future__ import annotations

from ..text.langid import Undetermined, english_probability, language_probability
from .base import NotApplicable, Sample
from .common import answer_text


def _text(s: Sample) -> str:
    text = answer_text(s)
    if not text:
        raise NotApplicable("empty answer")
    return text


def language_match(s: Sample) -> float:
    """Probability that the answer is written in the case's language."""
    if s.scoring == "mirage":
        from . import mirage

        return mirage.language_match(s)
    try:
        return language_probability(_text(s), s.case.lang)
    except Undetermined as exc:
        raise NotApplicable(str(exc)) from None


def english_share(s: Sample) -> float:
    """Probability that the answer is in English although the case's language is not (lower is
    better: English is what models fall back to)."""
    if s.scoring == "mirage":
        from . import mirage

        return mirage.english_share(s)
    try:
        return english_probability(_text(s), s.case.lang)
    except Undetermined as exc:
        raise NotApplicable(str(exc)) from None
