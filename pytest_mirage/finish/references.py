"""Reference systems of a suite (its recorded runs and offline reference models), scored at session
end on the cases the models under test ran, so they share the leaderboard as ``(ref)`` rows."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import MirageError
from ..evaluate.answering import answer_cases, judge_key
from ..evaluate.case import evaluate
from ..evaluate.context import RunContext
from ..evaluate.judging import Judging
from ..evaluate.requests import HARNESS_RETRIEVER, harness_retrieval, suite_k
from ..metrics.base import Sample
from ..models.base import Answer, ModelAdapter
from ..models.registry import parse_model_spec
from ..models.replay import ReplayModel, load_run_file
from ..results import CaseResult


@dataclass
class References:
    results: list[CaseResult] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def reference_results(ctx: RunContext, results: Sequence[CaseResult], judging: Judging | None = None) -> References:
    """Scores of the suites' reference systems on the selected cases (never gated, never cached)."""
    selected: dict[str, set[str]] = defaultdict(set)
    for r in results:
        selected[r.suite_ref].add(r.case_id)
    out = References()
    under_test = {r.model for r in results}
    # reference systems are offline and not counted as model calls of this run
    quiet = dataclasses.replace(ctx.engine, stats=None, progress=False)
    for ref in sorted(selected):
        try:
            suite = ctx.suite(ref)
        except MirageError as exc:
            out.problems.append(f"reference systems of {ref} skipped: {exc}")
            continue
        cases = [c for c in suite.cases if c.id in selected[ref]]
        rules = ctx.rules(suite)
        systems: list[tuple[str, ModelAdapter]] = []
        for path in suite.run_files:
            try:
                models = sorted({a.model for _, a in load_run_file(path)})
            except MirageError as exc:
                out.problems.append(f"reference run {path} skipped: {exc}")
                continue
            systems += [(model, ReplayModel(path, model=model)) for model in models]
        for raw in suite.settings.get("reference_models", ()):
            try:
                systems.append((raw, ctx.models.create(parse_model_spec(raw))))
            except MirageError as exc:
                out.problems.append(f"reference model {raw} of {ref} skipped: {exc}")
        for name, adapter in systems:
            if name in under_test:
                continue  # the model under test is already on the board
            pairs = answer_cases(adapter, suite, cases, quiet)
            # reference systems are judged like the models under test, so their rows compare
            answered = [(judge_key(req, name), req, ans.with_model(name)) for req, ans in pairs
                        if not isinstance(ans, BaseException)]
            judged = judging.judge_answers(suite, answered) if judging is not None else {}
            for req, ans in pairs:
                if isinstance(ans, BaseException):
                    out.problems.append(f"reference {name} on {req.case.id}: {ans}")
                    continue
                out.results.append(evaluate(
                    req, ans.with_model(name), ctx.metrics, rules.metrics, rules.thresholds, suite_ref=ref,
                    reference=True, scoring=ctx.scoring(suite), judged=judged.get(judge_key(req, name)),
                    faithfulness=judging.faithfulness(suite) if judging is not None else None))
            if name not in out.names:
                out.names.append(name)
    harness_retriever_results(ctx, results, out)
    return out


RETRIEVAL_METRICS = ("hit_at_k", "file_hit_at_k", "mrr_at_k", "precision_at_k")


def harness_retriever_results(ctx: RunContext, results: Sequence[CaseResult], out: References) -> None:
    """In retrieval mode, when a model under test did not retrieve (the harness's BM25 gave it its
    context), the harness's retriever gets a reference row of its own with the retrieval metrics,
    so those numbers are never credited to the model."""
    by_ref: dict[str, set[str]] = defaultdict(set)
    for r in results:
        if r.outcome == "reference":
            continue
        suite = ctx.suite(r.suite_ref)
        if suite.mode != "retrieval" or suite.corpus is None:
            continue
        spec = next((s for s in ctx.settings.models if ctx.model_name(s) == r.model), None)
        if spec is not None and not ctx.adapter(spec).retrieves:
            by_ref[r.suite_ref].add(r.case_id)
    for ref, case_ids in sorted(by_ref.items()):
        suite = ctx.suite(ref)
        names = [m for m in RETRIEVAL_METRICS if m in ctx.metrics]
        for case in suite.cases:
            if case.id not in case_ids:
                continue
            answer = Answer(case.id, HARNESS_RETRIEVER, "", answer="", citations=(),
                            retrieved=harness_retrieval(suite, case))
            mv = ctx.metrics.compute(Sample(case, answer, (), k=suite_k(suite), mode="retrieval"), names)
            out.results.append(CaseResult(suite=suite.name, suite_ref=ref, case_id=case.id, lang=case.lang,
                                          model=HARNESS_RETRIEVER, metrics=mv.values, reasons=mv.reasons,
                                          outcome="reference"))
        if HARNESS_RETRIEVER not in out.names:
            out.names.append(HARNESS_RETRIEVER)
