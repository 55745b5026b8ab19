"""The judge phase: model-backed scorers (NLI, reranker, embeddings, LLM judges) run on the answers
of a process in one batch per judge, through the engine, before the items are evaluated.

Which judges a suite gets: its ``[judges]`` table, overridden per metric by ``mirage_judges`` (ini)
and ``--mirage-judges`` (CLI). Every judge reaches the engine, so its work is cached, concurrent and
retried, and ``--mirage-cache-mode replay-only`` never runs a model:

* an LLM judge sends its prompts through :func:`judge_replies` (one cache entry per prompt and
  response format; with ``structured=auto|on`` each stage's JSON schema travels with its prompts
  to adapters that can send it, see :func:`structured_mode`);
* a local judge (NLI, reranker, embeddings) is wrapped in :class:`LocalJudgeAdapter`, a batch
  adapter whose "requests" are the judge items: the engine caches one score per item under the
  judge's identity (kind, model, template version) and the item's content.

Judge values join the case's metrics (null with the reason when an item could not be judged, never
0); ``faithfulness`` takes the value of the strongest configured signal (claim-level LLM > NLI >
the lexical combination).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..engine import run_requests
from ..errors import ConfigError, ModelError, for_judge_model
from ..judges.base import Judge, JudgeHealth, JudgeItem, JudgeScore, Reply, TokenLogprob
from ..judges.spec import METRICS as JUDGE_METRICS
from ..judges.spec import OFFLINE_FAITHFULNESS, JudgeSpec, create_judge, resolve_faithfulness
from ..metrics.base import Metric, MetricRegistry, NotApplicable, Sample
from ..models.base import Answer, EngineRequest, ModelRequest, PromptRequest, ResponseFormat
from ..suites.model import Passage, Suite
from .case import metric_sample
from .context import RunContext
from .requests import finalize_answer, prompt_id

SCALES: dict[str, tuple[float, float]] = {"0-1": (0.0, 1.0), "1-5": (1.0, 5.0), "0-5": (0.0, 5.0)}
REPLY_CHARS = 2000  # judge reply text kept per case for the report's per-case view


@dataclass(frozen=True, slots=True)
class Judged:
    """What the judges of a suite said about one answer."""

    values: Mapping[str, float | None]
    reasons: Mapping[str, str]
    replies: Mapping[str, str]  # judge kind -> its reply text (LLM judges), for the per-case view


class LocalJudgeAdapter:
    """A local judge as a batch adapter for the engine: a request's prompt is the JSON of one judge
    item, its answer the JSON of the item's score (see module doc)."""

    retrieves = True
    cache_scope = "messages"

    def __init__(self, judge: Judge) -> None:
        self.judge = judge
        self.name = f"judge {judge.kind}"

    def cache_identity(self) -> Mapping[str, Any] | None:
        return {"kind": f"judge:{self.judge.kind}", "judge": dict(self.judge.identity())}

    def answer_batch(self, requests: Sequence[EngineRequest]) -> list[Answer | Exception]:
        items = [item_from_json(r.prompt) for r in requests]
        try:
            scores = self.judge.score(items)
        except Exception as exc:  # a model that cannot load or run: every item errs with the reason
            return [ModelError(f"judge {self.judge.kind}: {type(exc).__name__}: {exc}") for _ in requests]
        return [Answer(r.item_id, self.name, json.dumps(s.to_json(), ensure_ascii=False))
                for r, s in zip(requests, scores, strict=True)]

    def close(self) -> None:
        self.judge.close()


def _with_logprobs(model: Any, spec: JudgeSpec) -> Any:
    """The judge's model spec asking for token log-probabilities (``logprobs=true`` on the judge)."""
    if model.kind != "openai":
        raise ConfigError(f"judge spec {spec.raw!r}: logprobs=true needs a model behind the openai: adapter "
                          f"(OpenAI, or a vLLM / llama.cpp server); {model.kind}: models do not return token "
                          "log-probabilities here: drop logprobs=true (the verdict then counts as 1 or 0)")
    if "logprobs" in model.options:
        return model
    return replace(model, raw=model.raw + ("&" if "?" in model.raw else "?") + "logprobs=true",
                   options={**model.options, "logprobs": "true"})


def structured_mode(spec: JudgeSpec, model: Any, adapter: Any) -> tuple[str, str | None]:
    """``(mode, why plain)`` of an LLM judge: its ``structured`` option (``auto`` by default) against
    what the judge model's adapter can do. ``on`` with an adapter that cannot send a JSON schema, or
    a judge model whose ``extra=`` sets its own ``response_format`` while the judge would send its
    schema, is a :class:`ConfigError` naming the judge and the fix (see
    :func:`~pytest_mirage.judges.structured.resolve_mode`)."""
    from ..judges.structured import resolve_mode

    where = f"judge spec {spec.raw!r}" + (f" ({spec.source})" if spec.source else "")
    return resolve_mode(str(spec.options.get("structured", "auto")), adapter, kind=model.kind, where=where)


def judge_replies(ctx: RunContext, model: Any, label: str) -> Callable[..., list[str | Reply | Exception]]:
    """``complete(prompts, response_format=None)`` for an LLM judge, through the engine (cached per
    prompt and format, retried): the reply text, or a :class:`Reply` carrying token
    log-probabilities when the server returned them."""
    adapter = ctx.adapter(model)

    def complete(prompts: list[str], response_format: ResponseFormat | None = None) -> list[str | Reply | Exception]:
        reqs = [PromptRequest(id=prompt_id(p), prompt=p, label=label, response_format=response_format)
                for p in prompts]
        out: list[str | Reply | Exception] = []
        for a in run_requests(adapter, reqs, ctx.engine):
            if not isinstance(a, Answer):
                out.append(a)
            elif a.logprobs:
                out.append(Reply(a.output, tuple(TokenLogprob(tok, lp, dict(top)) for tok, lp, top in a.logprobs)))
            else:
                out.append(a.output)
        return out

    return complete


def item_to_json(item: JudgeItem) -> str:
    return json.dumps({"key": item.key, "lang": item.lang, "question": item.question, "answer": item.answer,
                       "passages": [[p.id, p.title, p.text, p.lang] for p in item.passages],
                       "citations": list(item.citations), "references": list(item.references)},
                      ensure_ascii=False, sort_keys=True)


def item_from_json(text: str) -> JudgeItem:
    d = json.loads(text)
    return JudgeItem(key=d["key"], lang=d["lang"], question=d["question"], answer=d["answer"],
                     passages=tuple(Passage(id=p[0], title=p[1], text=p[2], lang=p[3]) for p in d["passages"]),
                     citations=tuple(d["citations"]), references=tuple(d["references"]))


def score_from_json(text: str, metrics: Sequence[str]) -> JudgeScore:
    d = json.loads(text)
    values = d.get("values") or {}
    return JudgeScore({m: values.get(m) for m in metrics}, dict(d.get("reasons") or {}),
                      tuple(d["raw"]) if d.get("raw") is not None else None)


@dataclass
class SuiteJudges:
    specs: tuple[JudgeSpec, ...]
    judges: tuple[Judge, ...]
    faithfulness: str  # the metric "faithfulness" stands for in this suite

    @property
    def metrics(self) -> tuple[str, ...]:
        return tuple(m for s in self.specs for m in s.metrics)

    def describe(self, metric: str) -> str:
        spec = next((s for s in self.specs if metric in s.metrics), None)
        return f"{metric} ({spec.raw})" if spec is not None else metric


@dataclass
class Judging:
    """The judges of one process (built once per distinct spec) and their health."""

    ctx: RunContext
    _built: dict[str, Judge] = field(default_factory=dict)
    _suites: dict[str, SuiteJudges] = field(default_factory=dict)
    health: dict[str, JudgeHealth] = field(default_factory=dict)  # judge label -> health (this process)

    def for_suite(self, suite: Suite) -> SuiteJudges:
        """The suite's judges (built once per distinct spec)."""
        cached = self._suites.get(suite.name)
        if cached is not None:
            return cached
        specs = self.ctx.judge_specs(suite)
        judges = tuple(self._judge(spec, suite) for spec in specs)
        sj = SuiteJudges(specs, judges, self.faithfulness(suite))
        self._suites[suite.name] = sj
        return sj

    def _judge(self, spec: JudgeSpec, suite: Suite | None) -> Judge:
        key = f"{spec.judge}|{spec.backend}|{spec.model}|{json.dumps(dict(spec.options), sort_keys=True, default=str)}" \
              f"|{sorted(spec.templates.items())}|{','.join(spec.metrics)}"
        judge = self._built.get(key)
        if judge is None:
            complete = None
            if spec.llm:
                try:
                    model = spec.model_spec(self.ctx.settings.model_defaults)
                    if spec.options.get("logprobs"):
                        model = _with_logprobs(model, spec)
                    self.ctx.models.check(model)
                    adapter = self.ctx.adapter(model)  # a missing key or an unknown kind fails here, once
                except ConfigError as exc:  # told as this judge's, not as --mirage-model's
                    raise for_judge_model(exc, f"judge {spec.judge} ({spec.source or '--mirage-judges'})") from None
                mode, plain_reason = structured_mode(spec, model, adapter)
                complete = judge_replies(self.ctx, model, label=f"judge {spec.judge}")
            else:
                mode, plain_reason = "off", None
            base = suite.root if suite is not None and suite.manifest is not None else Path(".")
            judge = self._built[key] = create_judge(spec, complete=complete, base_dir=base, structured=mode,
                                                    plain_reason=plain_reason)
            self.health[label(spec)] = judge.health
        return judge

    def validate(self) -> None:
        """Build the judges of the command line and ini file now: a bad spec, a missing key or an
        unimportable backend is one usage error before any item runs (local models load on first use)."""
        for spec in (*self.ctx.settings.judges_cli, *self.ctx.settings.judges_ini):
            self._judge(spec, None)

    def score(self, suite: Suite, items: Sequence[JudgeItem]) -> dict[str, Judged]:
        """Every judge of ``suite`` on ``items`` (one batch per judge); keyed by item key."""
        sj = self.for_suite(suite)
        values: dict[str, dict[str, float | None]] = {i.key: {} for i in items}
        reasons: dict[str, dict[str, str]] = {i.key: {} for i in items}
        replies: dict[str, dict[str, str]] = {i.key: {} for i in items}
        for spec, judge in zip(sj.specs, sj.judges, strict=True):
            for item, score in zip(items, self._run(spec, judge, items), strict=True):
                for metric in spec.metrics:
                    values[item.key][metric] = score.values.get(metric)
                    if score.values.get(metric) is None:
                        reasons[item.key][metric] = score.reasons.get(metric) or f"judge {spec.judge} gave no value"
                if score.raw:
                    replies[item.key][spec.judge] = "\n---\n".join(score.raw)[:REPLY_CHARS]
        out: dict[str, Judged] = {}
        for item in items:
            v, r = values[item.key], reasons[item.key]
            if sj.faithfulness != OFFLINE_FAITHFULNESS:
                v["faithfulness"] = v.get(sj.faithfulness)
                if v["faithfulness"] is None:
                    r["faithfulness"] = f"{sj.faithfulness}: {r.get(sj.faithfulness, 'no value')}"
            out[item.key] = Judged(v, r, replies[item.key])
        return out

    def _run(self, spec: JudgeSpec, judge: Judge, items: Sequence[JudgeItem]) -> list[JudgeScore]:
        if spec.llm:  # prompts go through the engine inside the judge's complete()
            return judge.score(items)
        adapter = LocalJudgeAdapter(judge)
        requests = [PromptRequest(id=prompt_id(item.key), prompt=item_to_json(item), label=f"judge {spec.judge}",
                                  lang=item.lang) for item in items]
        out: list[JudgeScore] = []
        failed: list[JudgeScore] = []
        for ans in run_requests(adapter, requests, self.ctx.engine):
            if isinstance(ans, BaseException):  # the model could not load or run, or a replay-only miss
                reason = f"judge {spec.judge} ({spec.raw}): {ans}"
                failed.append(JudgeScore(dict.fromkeys(spec.metrics), dict.fromkeys(spec.metrics, reason)))
                out.append(failed[-1])
            else:
                out.append(score_from_json(ans.output, spec.metrics))
        if failed:  # counted like an LLM judge's failed calls (the run fails on them: run/finish.py)
            judge.health.errors += len(failed)
            judge.health.count_nulls(failed)
        return out

    def judge_answers(self, suite: Suite, answered: Sequence[tuple[str, ModelRequest, Answer]]) -> dict[str, Judged]:
        """The judges of ``suite`` on answers (``(key, request, raw answer)``), one batch per judge;
        empty when the suite has no judge."""
        if not self.ctx.judge_specs(suite) or not answered:
            return {}
        scoring = self.ctx.scoring(suite)
        items = [JudgeItem.from_sample(metric_sample(req, finalize_answer(req, ans), scoring), key=key)
                 for key, req, ans in answered]
        return self.score(suite, items)

    def faithfulness(self, suite: Suite) -> str:
        """What ``faithfulness`` stands for in ``suite`` (claim-level LLM > NLI > lexical)."""
        available = {m for s in self.ctx.judge_specs(suite) for m in s.metrics} | {OFFLINE_FAITHFULNESS}
        return resolve_faithfulness(available)

    def health_json(self) -> dict[str, dict[str, Any]]:
        return {name: h.to_json() for name, h in self.health.items()}

    def close(self) -> None:
        for judge in self._built.values():
            judge.close()


def register_judge_metrics(registry: MetricRegistry) -> None:
    """Every judge metric in the registry (scope "judge": its value comes from the judge phase, so
    thresholds, gates, reports and the surrogate can name it); computed only when its judge is
    configured."""
    for info in JUDGE_METRICS.values():
        registry.register(Metric(info.name, _judge_metric(info.judge), higher_is_better=info.higher_is_better,
                                 description=f"{info.description} (scale {info.scale})", source=info.source,
                                 default=False, scope="judge", bounds=SCALES.get(info.scale)))


def _judge_metric(judge: str) -> Callable[[Sample], float]:
    def fn(sample: Sample) -> float:
        raise NotApplicable(f"computed by the {judge} judge, which is not configured for this suite "
                            f"(--mirage-judges {judge}=BACKEND)")

    return fn


def label(spec: JudgeSpec) -> str:
    return f"{spec.judge} ({spec.raw})"


__all__ = ["JUDGE_METRICS", "Judged", "Judging", "LocalJudgeAdapter", "SuiteJudges"]
