"""Per-process answering: every item of one model that this process will run is answered in one
engine call (batched for local engines, concurrent for APIs), then items take their answers.

The first item of a model whose answer is missing asks the plugin for the jobs of this process (all
selected items of that model; under xdist, the items queued for this worker) and answers all of them
at once. Planning is linear in the number of items: a job list is built once per miss, and a job is
sent to the model at most once per process.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ..engine import EngineSettings, run_requests
from ..errors import MirageError, ModelError
from ..models.base import Answer, ModelAdapter, ModelRequest
from ..models.registry import ModelSpec
from ..results import CaseResult
from ..suites.model import Case, Suite
from .case import evaluate
from .context import RunContext
from .judging import Judged, Judging
from .requests import build_request

Job = tuple[str, Case, int]  # (suite ref, case, repeat)
JobKey = tuple[str, str, str, int]  # (model spec, suite ref, case id, repeat)


@dataclass
class Answerer:
    """Answers of one process, keyed by (model spec, suite ref, case id)."""

    ctx: RunContext
    judging: Judging
    _answers: dict[JobKey, tuple[ModelRequest, Answer | Exception]] = field(default_factory=dict)
    _judged: dict[JobKey, Judged] = field(default_factory=dict)
    _sent: set[JobKey] = field(default_factory=set)

    def answer(self, spec: ModelSpec, jobs: Iterable[Job]) -> None:
        """Answer the jobs of ``spec`` not sent yet in this process, in one engine call."""
        adapter = self.ctx.adapter(spec)
        todo: list[tuple[JobKey, ModelRequest]] = []
        for ref, case, repeat in jobs:
            key = (spec.raw, ref, case.id, repeat)
            if key in self._sent:
                continue
            self._sent.add(key)  # once per process, even when a job is listed again
            todo.append((key, build_request(self.ctx.suite(ref), case, adapter.retrieves, repeat)))
        if not todo:
            return
        answers = run_requests(adapter, [req for _, req in todo], self.ctx.engine)
        name = self.ctx.model_name(spec)
        by_suite: dict[str, list[tuple[str, ModelRequest, Answer]]] = {}
        keys: dict[str, JobKey] = {}
        for (key, req), ans in zip(todo, answers, strict=True):
            self._answers[key] = (req, ans)
            if isinstance(ans, Answer):
                jk = judge_key(req, name)
                keys[jk] = key
                by_suite.setdefault(key[1], []).append((jk, req, ans.with_model(name)))
        # the judge phase: every judge of a suite once on all the answers just received
        for ref, answered in by_suite.items():
            for jk, judged in self.judging.judge_answers(self.ctx.suite(ref), answered).items():
                self._judged[keys[jk]] = judged

    def result(self, spec: ModelSpec, ref: str, case: Case, plan: Callable[[], Iterable[Job]],
               repeat: int = 0) -> CaseResult:
        """Evaluate one item; raises ModelError/MetricError (an item error) when there is no answer.

        ``plan`` gives this process's jobs of ``spec``; it is called only when the answer is missing.
        """
        key = (spec.raw, ref, case.id, repeat)
        if key not in self._answers:
            self.answer(spec, [(ref, case, repeat), *plan()])
        request, answer = self._answers.pop(key)
        if isinstance(answer, BaseException):
            raise answer if isinstance(answer, MirageError) else ModelError(f"{type(answer).__name__}: {answer}")
        suite = self.ctx.suite(ref)
        name = self.ctx.model_name(spec)
        if answer.model != name:
            answer = answer.with_model(name)
        rules = self.ctx.rules(suite)
        return evaluate(request, answer, self.ctx.metrics, rules.metrics, rules.thresholds, suite_ref=ref,
                        scoring=self.ctx.scoring(suite), judged=self._judged.pop(key, None),
                        faithfulness=self.judging.faithfulness(suite))


def judge_key(request: ModelRequest, model: str) -> str:
    """The judge item key of a model's answer: ``suite/case/model`` (``#repeat`` for a repeat)."""
    return f"{request.case.suite}/{request.case.id}/{model}" + (f"#{request.repeat}" if request.repeat else "")


def answer_cases(adapter: ModelAdapter, suite: Suite, cases: Sequence[Case],
                 settings: EngineSettings | None = None) -> list[tuple[ModelRequest, Answer | Exception]]:
    """Build the requests of ``cases`` and answer them in one engine call (pairs in case order)."""
    requests = [build_request(suite, c, adapter.retrieves) for c in cases]
    return list(zip(requests, run_requests(adapter, requests, settings), strict=True))
