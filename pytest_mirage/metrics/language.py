"""Answer language: ``language_match`` (the feature of MIRAGE-Bench §4.1) and ``english_share``.

Default scoring: both read one assessment of the answer text (citation markers and format labels
removed): ``language_match`` is a calibrated score whose decision boundary is 0.5 and
``english_share`` the English share of the running text; see :mod:`pytest_mirage.text.langid` for
the mixed-text policy, the calibrated detection and the short-answer rule. ``scoring="mirage"``:
MIRAGE-Bench's own definitions (:mod:`pytest_mirage.metrics.mirage`).
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
    """Calibrated score that the answer is written in the case's language (>= 0.5: it is; mixed
    text passes when the target language carries at least 2/3 of the running text)."""
    if s.scoring == "mirage":
        from . import mirage

        return mirage.language_match(s)
    try:
        return language_probability(_text(s), s.case.lang)
    except Undetermined as exc:
        raise NotApplicable(str(exc)) from None


def english_share(s: Sample) -> float:
    """Share of the answer's running text in English although the case's language is not (lower is
    better: English is what models fall back to)."""
    if s.scoring == "mirage":
        from . import mirage

        return mirage.english_share(s)
    try:
        return english_probability(_text(s), s.case.lang)
    except Undetermined as exc:
        raise NotApplicable(str(exc)) from None
