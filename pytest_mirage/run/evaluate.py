"""One item: a finalized answer -> metric values -> threshold checks -> a CaseResult."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..metrics.base import MetricRegistry, Sample
from ..models.base import Answer, ModelRequest
from ..prompts import strip_citations
from ..results import CaseResult, Outcome
from ..rules import Rule, check_thresholds
from .requests import context_of, finalize_answer, suite_k


def metric_sample(request: ModelRequest, answer: Answer) -> Sample:
    return Sample(case=request.case, answer=answer, context=context_of(request, answer),
                  k=suite_k(request.suite), mode=request.mode)


def evaluate(request: ModelRequest, answer: Answer, registry: MetricRegistry, metric_names: Sequence[str],
             rules: Iterable[Rule], suite_ref: str, reference: bool = False) -> CaseResult:
    """Score one answer and check its thresholds (raises MetricError when a metric cannot run)."""
    answer = finalize_answer(request, answer)
    mv = registry.compute(metric_sample(request, answer), metric_names)
    failures, checks = check_thresholds(mv.values, rules, request.case.lang, mv.reasons)
    if not any(ch.isalnum() for ch in strip_citations(answer.answer or "")):
        # metrics of an empty answer are null (nothing to score), so no threshold would catch it
        failures.insert(0, f"empty answer: the model's output has no answer text (output: {answer.output[:120]!r})")
    run_line = {"suite": request.case.suite, **answer.to_run_line()}
    outcome: Outcome = "reference" if reference else ("failed" if failures else "passed")
    return CaseResult(suite=request.case.suite, suite_ref=suite_ref, case_id=request.case.id,
                      lang=request.case.lang, model=answer.model, metrics=mv.values, reasons=mv.reasons,
                      outcome=outcome, failures=tuple(failures), checks=checks, run_line=run_line,
                      repeat=request.repeat)
