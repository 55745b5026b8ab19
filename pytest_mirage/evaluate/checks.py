"""``mirage.check``: score an answer produced by a team's own Python test like a collected case."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..aggregate.expr import merge_rules, parse_rule
from ..errors import ConfigError
from ..models.base import Answer
from ..results import CaseResult
from ..suites.model import Case
from .case import evaluate
from .context import RunContext, unknown_metric
from .judging import Judging
from .requests import build_request


def as_answer(answer: Any, case: Case, model: str) -> Answer:
    """An :class:`Answer` from the model's raw output (str) or an Answer."""
    if isinstance(answer, Answer):
        return Answer(**{**{f: getattr(answer, f) for f in Answer.__dataclass_fields__}, "case_id": case.id,
                         "model": model})
    if isinstance(answer, str):
        return Answer(case_id=case.id, model=model, output=answer)
    raise ConfigError(f"mirage.check: found an answer of type {type(answer).__name__}; expected the model's "
                      "output (str) or a pytest_mirage.Answer")


def check_answer(ctx: RunContext, judging: Judging, ref: str, case: Case, answer: Any, rules: Sequence[str], *,
                 model: str, where: str) -> CaseResult:
    """Metrics of ``answer`` for ``case`` and the suite's thresholds plus ``rules`` (highest precedence)."""
    suite = ctx.suite(ref)
    extra = [parse_rule(r, gate=False, source=f"mirage.check in {where}") for r in rules]
    for rule in extra:
        if rule.metric not in ctx.metrics:
            raise ConfigError(f"{rule.source}: {rule.expr!r}: {unknown_metric(ctx.metrics, rule.metric)}")
    base = ctx.rules(suite)
    thresholds = merge_rules([base.thresholds, extra])
    names = list(dict.fromkeys([*base.metrics, *ctx.metrics.case_level(r.metric for r in extra)]))
    # the answer comes from the team's own pipeline: in oracle mode it saw the case's passages, in
    # retrieval mode whatever it retrieved (its Answer's retrieved ids)
    request = build_request(suite, case, retrieves=True)
    given = as_answer(answer, case, model)
    key = f"{suite.name}/{case.id}/{model}"
    judged = judging.judge_answers(suite, [(key, request, given)]).get(key)
    return evaluate(request, given, ctx.metrics, names, thresholds, suite_ref=ref, scoring=ctx.scoring(suite),
                    judged=judged, faithfulness=judging.faithfulness(suite))
