"""From a case and a model answer to a CaseResult: request building, answer parsing, metrics, thresholds.

Pure of pytest: the plugin calls these functions; the controller calls them again for reference runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from .engine import EngineSettings, run_requests
from .metrics.base import MetricRegistry, Sample
from .models.base import Answer, ModelAdapter, ModelRequest
from .prompts import load_template, order_passages, parse_output, render, strip_citations
from .retrieval import corpus_map, index_for
from .suites.model import Case, Passage, Suite
from .thresholds import Rule


@lru_cache(maxsize=64)
def _template(name: str, root: Path | None) -> str:
    return load_template(name, root)


def build_request(suite: Suite, case: Case, adapter: ModelAdapter) -> ModelRequest:
    """The request for ``case``: oracle passages (seeded shuffle) or the harness's BM25 context."""
    if suite.mode == "oracle":
        passages = tuple(order_passages(case))
    elif getattr(adapter, "retrieves", False):
        passages = ()
    else:
        assert suite.corpus is not None
        k = int(suite.settings.get("k", 3))
        passages = tuple(p for p, _ in index_for(suite.corpus, case.lang).search(case.question, k))
    prompt = render(_template(suite.template, suite.root), case, passages)
    return ModelRequest(case=case, suite=suite, mode=suite.mode, passages=passages, prompt=prompt)


def answer_cases(adapter: ModelAdapter, suite: Suite, cases: Sequence[Case],
                 settings: EngineSettings | None = None) -> list[tuple[ModelRequest, Answer | Exception]]:
    """Build the requests of ``cases`` and answer them in one engine call (pairs in case order)."""
    requests = [build_request(suite, c, adapter) for c in cases]
    return list(zip(requests, run_requests(adapter, requests, settings), strict=True))


def context_of(request: ModelRequest, answer: Answer) -> tuple[Passage, ...]:
    """The passages the generator saw (citations are resolved against them)."""
    if request.passages:
        return request.passages
    suite = request.suite
    if suite.corpus is None:
        return ()
    by_id = corpus_map(suite.corpus)
    if answer.retrieved is not None:
        k = int(suite.settings.get("k", 3))
        return tuple(by_id[r] for r in answer.retrieved[: max(k, 10)] if r in by_id)
    return ()


def finalize_answer(request: ModelRequest, answer: Answer) -> Answer:
    """Fill the parsed answer text and citations from the raw output when the model gave none.

    When the adapter did not give retrieved ids in retrieval mode, the harness's own context counts
    as what was retrieved.
    """
    ctx = context_of(request, answer)
    ids = [p.id for p in ctx]
    # [n]-style indices refer to the passages listed in the prompt (the context) only; in retrieval
    # mode a model may also cite any corpus chunk by its id
    others: Mapping[str, Passage] = (corpus_map(request.suite.corpus)
                                     if request.mode == "retrieval" and request.suite.corpus else {})
    ctx_ids = set(ids)
    parsed = parse_output(answer.output, ids, others)
    upd: dict[str, Any] = {"format_ok": parsed.format_ok}
    if answer.answer is None:
        upd["answer"] = parsed.answer
    if answer.citations is None:
        upd["citations"] = parsed.citations
        upd["invalid_citations"] = parsed.unknown_citations
    else:
        # given citations (a pipeline's, or a replayed run line): ids that name nothing are invalid
        upd["citations"] = tuple(c for c in answer.citations if c in ctx_ids or c in others)
        upd["invalid_citations"] = tuple(c for c in answer.citations if c not in ctx_ids and c not in others)
    if answer.retrieved is None and request.mode == "retrieval" and request.passages:
        upd["retrieved"] = tuple(p.id for p in request.passages)
        upd["contexts"] = tuple(p.text for p in request.passages)
    if answer.reason is None and parsed.reason is not None:
        upd["reason"] = parsed.reason
    return replace(answer, **upd)


@dataclass(frozen=True, slots=True)
class CaseResult:
    """The outcome of one case for one model (JSON-serialisable with :meth:`to_json`)."""

    suite: str
    suite_ref: str
    case_id: str
    lang: str
    model: str
    metrics: Mapping[str, float | None]
    reasons: Mapping[str, str] = field(default_factory=dict)
    outcome: str = "passed"  # passed | failed | error | reference
    failures: tuple[str, ...] = ()
    checks: Mapping[str, bool] = field(default_factory=dict)  # metric -> passed its threshold
    error: str | None = None
    run_line: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "suite": self.suite, "suite_ref": self.suite_ref, "case_id": self.case_id, "lang": self.lang,
            "model": self.model, "metrics": dict(self.metrics), "null_reasons": dict(self.reasons),
            "outcome": self.outcome, "failures": list(self.failures), "checks": dict(self.checks),
            "error": self.error, "run_line": dict(self.run_line) if self.run_line else None,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> CaseResult:
        return cls(suite=d["suite"], suite_ref=d["suite_ref"], case_id=d["case_id"], lang=d["lang"],
                   model=d["model"], metrics=d["metrics"], reasons=d.get("null_reasons", {}),
                   outcome=d["outcome"], failures=tuple(d.get("failures", ())), checks=d.get("checks", {}),
                   error=d.get("error"), run_line=d.get("run_line"))


def metric_sample(request: ModelRequest, answer: Answer) -> Sample:
    return Sample(case=request.case, answer=answer, context=context_of(request, answer),
                  k=int(request.suite.settings.get("k", 3)), mode=request.mode)


def check_thresholds(values: Mapping[str, float | None], rules: Iterable[Rule],
                     lang: str) -> tuple[list[str], dict[str, bool]]:
    """Case-level checks: failure messages and metric -> passed (null values are not checked)."""
    failures: list[str] = []
    checks: dict[str, bool] = {}
    for rule in rules:
        if not rule.applies_to(lang):
            continue
        v = values.get(rule.metric)
        if v is None:
            continue
        ok = rule.check(v)
        checks[rule.metric] = checks.get(rule.metric, True) and ok
        if not ok:
            failures.append(rule.describe_failure(v))
    return failures, checks


def evaluate(request: ModelRequest, answer: Answer, registry: MetricRegistry, metric_names: Sequence[str],
             rules: Iterable[Rule], suite_ref: str, reference: bool = False) -> CaseResult:
    """Score one answer and check its thresholds."""
    answer = finalize_answer(request, answer)
    mv = registry.compute(metric_sample(request, answer), metric_names)
    failures, checks = check_thresholds(mv.values, rules, request.case.lang)
    if not any(ch.isalnum() for ch in strip_citations(answer.answer or "")):
        # metrics of an empty answer are null (nothing to score), so no threshold would catch it
        failures.insert(0, f"empty answer: the model's output has no answer text (output: {answer.output[:120]!r})")
    run_line = {"suite": request.case.suite, **answer.to_run_line()}
    outcome = "reference" if reference else ("failed" if failures else "passed")
    return CaseResult(suite=request.case.suite, suite_ref=suite_ref, case_id=request.case.id,
                      lang=request.case.lang, model=answer.model, metrics=mv.values, reasons=mv.reasons,
                      outcome=outcome, failures=tuple(failures), checks=checks, run_line=run_line)
