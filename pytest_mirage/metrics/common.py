"""Helpers shared by the built-in metrics: the answer text a metric scores and reference checks."""

from __future__ import annotations

from ..errors import MetricError
from ..text.tokenize import tokenize
from .analysis import of
from .base import NotApplicable, Sample


def clamp01(value: float) -> float:
    """``value`` clamped to [0, 1]: for bounded metrics computed by float division (a score/100, an
    F-measure), whose rounding can overshoot the bound (sacrebleu's exact-match BLEU is
    100.00000000000004, so BLEU/100 would be 1.0000000000000004 and fail ``bleu <= 1``)."""
    return min(1.0, max(0.0, value))


def raw_answer(s: Sample) -> str:
    """The answer part of the output (``##Answer:`` section when the model used the format)."""
    return of(s).raw


def answer_text(s: Sample) -> str:
    """:func:`raw_answer` without citation markers."""
    return of(s).text


def references(s: Sample) -> tuple[str, ...]:
    """The case's reference answers; null when it has none, an error when one has no content."""
    if not s.case.answers:
        raise NotApplicable("case has no reference answer")
    for ref in s.case.answers:
        if not tokenize(ref, s.case.lang):
            where = f" ({s.case.source})" if s.case.source else ""
            raise MetricError(f"case {s.case.id!r}{where}: reference answer {ref!r} has no letters or "
                              "digits, so no overlap metric can use it; fix the case's 'answers'")
    return s.case.answers
