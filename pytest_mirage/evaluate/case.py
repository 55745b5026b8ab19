"""One item: a finalized answer -> metric values -> threshold checks -> a CaseResult."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..aggregate.expr import Rule
from ..aggregate.thresholds import check_thresholds
from ..metrics.base import MetricRegistry, Sample
from ..models.base import Answer, ModelRequest
from ..prompts import strip_citations
from ..results import CaseResult, Outcome, RecordLine
from .requests import context_of, finalize_answer, suite_k

if TYPE_CHECKING:
    from .judging import Judged


def metric_sample(request: ModelRequest, answer: Answer, scoring: str = "default") -> Sample:
    return Sample(case=request.case, answer=answer, context=context_of(request, answer),
                  k=suite_k(request.suite), mode=request.mode, scoring=scoring)


def evaluate(request: ModelRequest, answer: Answer, registry: MetricRegistry, metric_names: Sequence[str],
             rules: Iterable[Rule], suite_ref: str, reference: bool = False, *, scoring: str = "default",
             judged: Judged | None = None, faithfulness: str | None = None) -> CaseResult:
    """Score one answer and check its thresholds (raises MetricError when a metric cannot run).

    ``judged``: the judge phase's values for this answer (they join the metrics); ``faithfulness``:
    the judge metric ``faithfulness`` resolved to, named in failure messages.
    """
    answer = finalize_answer(request, answer)
    mv = registry.compute(metric_sample(request, answer, scoring), metric_names)
    values, reasons = dict(mv.values), dict(mv.reasons)
    if judged is not None:
        values.update(judged.values)
        reasons.update(judged.reasons)
        for name, value in judged.values.items():
            if value is not None:
                reasons.pop(name, None)
    aliases = {"faithfulness": faithfulness} if faithfulness else {}
    failures, checks = check_thresholds(values, rules, request.case.lang, reasons, aliases)
    if not any(ch.isalnum() for ch in strip_citations(answer.answer or "")):
        # metrics of an empty answer are null (nothing to score), so no threshold would catch it
        failures.insert(0, f"empty answer: the model's output has no answer text (output: {answer.output[:120]!r})")
    run_line = RecordLine.from_json({"suite": request.case.suite, **answer.to_run_line()})
    outcome: Outcome = "reference" if reference else ("failed" if failures else "passed")
    return CaseResult(suite=request.case.suite, suite_ref=suite_ref, case_id=request.case.id,
                      lang=request.case.lang, model=answer.model, metrics=values, reasons=reasons,
                      outcome=outcome, failures=tuple(failures), checks=checks, run_line=run_line,
                      repeat=request.repeat, judge_replies=dict(judged.replies) if judged else {})
