"""The session end: reference systems, arena, gates and outcome -> a RunReport, then the files the
user asked for (record, JSON, Markdown, HTML). Pure of pytest (see :func:`finish`)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..aggregate.expr import Rule
from ..aggregate.gates import GateResult, evaluate_gates
from ..errors import MirageError
from ..evaluate.context import RunContext
from ..evaluate.judging import Judging
from ..evaluate.requests import HARNESS_RETRIEVER, suite_k
from ..report.format import HEADLINE_METRICS
from ..report.leaderboard import build_leaderboard
from ..report.model import (
    ANSWER_CHARS,
    EXCERPT_CHARS,
    ArenaRow,
    CaseDetail,
    CollectionError,
    MetricInfo,
    PassageView,
    RunReport,
    SentenceView,
    SuiteInfo,
    SurrogateInfo,
    SurrogateScore,
)
from ..report.statistics import (
    BaselineSection,
    CalibrationSection,
    HeadToHeadRow,
    SampleSection,
    Statistics,
)
from ..results import CaseResult
from ..suites.bm25 import corpus_map
from ..suites.model import Passage
from .arena import ArenaOutcome, PreJudged, run_arena, surrogate_dir
from .baseline import Baseline, compare_with_baseline
from .references import reference_results
from .signals import is_faithfulness_signal

if TYPE_CHECKING:
    from ..aggregate.regression import RegressionGateResult
    from ..stats.repeats import RepeatSummary


def _excerpt(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rstrip() + " …"


def case_details(ctx: RunContext, results: Iterable[CaseResult]) -> list[CaseDetail]:
    """The per-case view of failed and errored cases: question, answer, passages, citations."""
    out = []
    for r in results:
        if r.outcome not in ("failed", "error"):
            continue
        try:
            suite = ctx.suite(r.suite_ref)
            case = suite.case(r.case_id)
        except (MirageError, KeyError):
            continue  # a case of a suite that no longer loads: its result row still says why
        line = r.run_line
        cited = (line.citations or ()) if line is not None else ()
        answer = line.answer_text if line is not None else None
        passages = case.passages
        known: set[str] = {p.id for p in passages}
        if suite.corpus is not None:
            by_id = corpus_map(suite.corpus)
            known |= {c for c in cited if c in by_id}
            if not passages:
                retrieved = (line.retrieved or ()) if line is not None else ()
                ids = dict.fromkeys([*retrieved[: suite_k(suite)], *case.relevant, *cited])
                passages = tuple(by_id[i] for i in ids if i in by_id)
        views = tuple(PassageView(p.id, _excerpt(p.text, EXCERPT_CHARS), p.title, p.id in case.relevant, p.id in cited)
                      for p in passages)
        sentences: tuple[SentenceView, ...] = ()
        if answer is not None and any(is_faithfulness_signal(m) for m in r.metrics):
            context = case.passages
            if not context and suite.corpus is not None and line is not None:
                by_id = corpus_map(suite.corpus)
                seen = line.contexts or (line.retrieved or ())[: max(suite_k(suite), 10)]
                context = tuple(by_id[i] for i in seen if i in by_id)
            sentences = sentence_views(answer, context, r.lang, case.question)
        out.append(CaseDetail(r.suite, r.case_id, r.lang, r.model, case.source, case.question,
                              _excerpt(answer, ANSWER_CHARS) if answer is not None else None,
                              tuple(c for c in cited if c in known), tuple(c for c in cited if c not in known), views,
                              dict(r.judge_replies), sentences))
    return out


MAX_SENTENCES = 40  # sentence verdicts kept per failed case (the first ones)


def sentence_views(answer: str, passages: Sequence[Passage], lang: str, question: str = "") -> tuple[SentenceView, ...]:
    """The sentence verdicts of ``answer`` against the passages it saw, as the per-case view shows
    them (:func:`pytest_mirage.metrics.verdicts.sentence_verdicts`; texts cut to excerpts)."""
    from ..metrics.verdicts import explain, sentence_verdicts

    out = []
    for v in sentence_verdicts(answer, passages, lang, question)[:MAX_SENTENCES]:
        reason = v.reason or (explain(v) if v.verdict == "unsupported" else "")
        out.append(SentenceView(_excerpt(v.text, EXCERPT_CHARS), v.verdict, v.aligned_passage,
                                _excerpt(v.aligned_sentence, EXCERPT_CHARS), tuple(f"{c.kind}: {c.text}" for c in v.missing),
                                _excerpt(reason, EXCERPT_CHARS)))
    return tuple(out)


# judge-health counts that depend on how the work was split between processes: each xdist worker
# batches the items it runs, and a local judge runs an input that several items share (a passage
# cited by two models' answers, a reference answer) once per batch. Printed with the engine figures
# (EngineStats.judge_work), left out of the report, whose judge health is then the same for any -n
PER_PROCESS_HEALTH = frozenset({"calls", "batches"})


def merge_health(*parts: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Judge health counts added up (xdist workers, and the controller's own judging)."""
    from ..judges.base import JudgeHealth

    out: dict[str, JudgeHealth] = {}
    for part in parts:
        for name, health in part.items():
            out.setdefault(name, JudgeHealth()).merge(JudgeHealth.from_json(health))
    return {name: h.to_json() for name, h in sorted(out.items())}


def judge_failures(health: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """A configured metric judge whose model failed (a server down, an HTTP error after the retries,
    a replay-only miss, a local model that raised) fails the run: its metrics are null for those
    items (never 0), and a gate or threshold on them would otherwise pass on what it never saw.
    Replies that came back but did not parse are not failures of the model (null with the reason,
    shown in the judge-health block)."""
    out = []
    for name, h in sorted(health.items()):
        errors = int(h.get("errors", 0))
        if errors:
            nulls = sum(int(v) for v in dict(h.get("nulls", {})).values())
            out.append(f"metric judge {name}: its model failed on {errors} input(s), {nulls} value(s) are null "
                       f"(the reason is in the problems above): fix the judge's model or server and run again (a "
                       f"rerun with the cache calls only what is missing), or leave the judge out of --mirage-judges")
    return out


LABEL_FILES = ("labels.csv", "labels.jsonl")  # human labels a suite may carry (docs/statistics.md)


@dataclass
class Finished:
    """What the session end produced: the report and the files written (for the terminal summary)."""

    report: RunReport
    written: list[Path] = field(default_factory=list)
    record_path: Path | None = None
    saved_surrogates: list[Path] = field(default_factory=list)
    write_problems: list[str] = field(default_factory=list)  # files that could not be written: the run fails


def _needs_arena(ctx: RunContext, results: Sequence[CaseResult]) -> bool:
    """The arena step runs only when it has work: a judge, or a saved surrogate next to a suite."""
    if ctx.settings.judge is not None or ctx.settings.battles is not None:
        return True
    dirs = {surrogate_dir(ctx, ctx.suite(ref)) for ref in {r.suite_ref for r in results}}
    return any(d.is_dir() and any(d.glob("*.json")) for d in dirs)


def _model_gate_problems(gates_by_suite: dict[str, Sequence[Rule]], model_level: frozenset[str],
                         arena: ArenaOutcome) -> list[str]:
    """A gate on a model-level metric with no value (no surrogate) is an explicit problem."""
    have = {(suite, name) for (suite, _lang, _model) in arena.surrogate_scores
            for name in ("surrogate_score", "surrogate_rank")}
    out = []
    for suite, rules in gates_by_suite.items():
        for rule in rules:
            if rule.metric in model_level and (suite, rule.metric) not in have:
                reason = arena.surrogate_errors.get(suite) or (
                    f"no trained surrogate next to suite {suite!r}: train one with --mirage-judge SPEC "
                    "--mirage-train-surrogate")
                out.append(f"gate {rule.expr!r} ({rule.source}) cannot be evaluated: {reason}")
    return out


def head_to_head_rows(ctx: RunContext, results: Sequence[CaseResult]) -> list[HeadToHeadRow]:
    """Per suite, every pair of models under test on each chosen metric (wins/ties/losses, sign test)."""
    from ..stats.headtohead import head_to_head
    from ..stats.records import to_record

    out: list[HeadToHeadRow] = []
    by_suite: dict[str, set[str]] = defaultdict(set)
    for r in results:
        by_suite[r.suite].add(r.model)
    for suite, models in sorted(by_suite.items()):
        if len(models) < 2:
            continue
        mine = [r for r in results if r.suite == suite]
        present = {k for r in mine for k, v in r.metrics.items() if v is not None}
        metrics = ctx.settings.head_to_head or tuple(m for m in HEADLINE_METRICS if m in present)
        ordered = sorted(models)
        # each result validated once, and each pair given only its two models' results (all of them
        # per pair made this quadratic in the models: 171 pairs x every result at 19 models)
        by_model: dict[str, list[Any]] = defaultdict(list)
        for i, r in enumerate(mine):
            by_model[r.model].append(to_record(r, "results", i))
        for i, a in enumerate(ordered):
            for b in ordered[i + 1:]:
                pair = by_model[a] + by_model[b]
                for metric in metrics:
                    if metric not in present:
                        continue
                    h = head_to_head(pair, a, b, metric, higher_is_better=ctx.metrics[metric].higher_is_better,
                                     alpha=ctx.settings.alpha)
                    if h.wins + h.ties + h.losses:  # no case with a value from both: nothing to compare
                        out.append(HeadToHeadRow(suite, h))
    return out


def repeat_sections(ctx: RunContext, results: Sequence[CaseResult]) -> list[RepeatSummary]:
    """With --mirage-repeat: per suite x language x model and threshold metric, the pass rate over
    all samples, pass^N (every repeat passed) and the flaky cases (repeats on both sides)."""
    from ..stats.repeats import summarize_repeats

    if ctx.settings.repeat < 2:
        return []
    metrics = sorted({m for r in results for m in r.checks})
    out: list[RepeatSummary] = []
    for metric in metrics:
        out += summarize_repeats(results, metric, alpha=ctx.settings.alpha, seed=ctx.settings.seed).values()
    return out


def calibration_sections(ctx: RunContext, results: Sequence[CaseResult]) -> tuple[list[CalibrationSection],
                                                                                dict[tuple[str, str, str], tuple[float, float]],
                                                                                list[str]]:
    """Judge agreement and PPI means of every suite that carries human labels (labels.csv/.jsonl)."""
    from ..stats import StatsError
    from ..stats.calibration import calibrate
    from ..stats.labels import load_labels

    sections: list[CalibrationSection] = []
    intervals: dict[tuple[str, str, str], tuple[float, float]] = {}
    problems: list[str] = []
    for ref in sorted({r.suite_ref for r in results}):
        suite = ctx.suite(ref)
        files = [suite.root / name for name in LABEL_FILES if (suite.root / name).is_file()]
        if not files:
            continue
        mine = [r for r in results if r.suite_ref == ref]
        try:
            labels = load_labels(files[0], suite=suite.name, cases={c.id for c in suite.cases},
                                 metrics=ctx.metrics.names)
            cal = calibrate(mine, labels, suite=suite.name, alpha=ctx.settings.alpha)
        except StatsError as exc:
            problems.append(f"human labels of suite {suite.name} not used: {exc}")
            continue
        sections.append(CalibrationSection(suite.name, str(files[0]), cal))
        for g in cal.groups:
            if g.ppi is not None:
                intervals[(g.suite, g.model, g.metric)] = (g.ppi.interval.low, g.ppi.interval.high)
    return sections, intervals, problems


_T = TypeVar("_T")


def _step(name: str, fatal: list[str], run: Callable[[], _T], default: _T) -> _T:
    """``run()``, or ``default`` with a fatal line when the step fails: a session end always writes
    its reports (JSON, Markdown, HTML, JUnit) with what the other steps computed."""
    try:
        return run()
    except Exception as exc:  # any bug or bad input of one step; the run fails with why (never silent)
        fatal.append(f"the session-end step '{name}' failed ({type(exc).__name__}: {exc}); the report holds "
                     "everything else; please report it with this line if the input looks valid")
        return default


def build_report(ctx: RunContext, results: Iterable[CaseResult], *, collection_errors: Sequence[CollectionError] = (),
                 exitstatus: int = 0, problems: Sequence[str] = (),
                 baseline: tuple[Path, Baseline] | None = None,
                 judging: Judging | None = None,
                 judge_health: Mapping[str, Mapping[str, Any]] | None = None,
                 judged: PreJudged | None = None) -> tuple[RunReport, ArenaOutcome]:
    """Everything the run reports, computed once."""
    res = sorted(results, key=lambda r: (r.suite, r.lang, r.case_id, r.model))
    # each step stands alone: one that fails becomes a fatal line (the run fails) and the report is
    # still written with everything else
    fatal: list[str] = []
    refs = _step("reference systems", fatal, lambda: reference_results(ctx, res, judging) if res else None, None)
    # the workers' judge work plus the controller's own (its items in a serial run, the references)
    judge_health = merge_health(judge_health or {}, judging.health_json() if judging is not None else {})
    ref_results = refs.results if refs else []
    allres = res + ref_results
    judge_metrics: dict[str, tuple[str, ...]] = {}
    for r in res:
        if r.suite not in judge_metrics:
            judge_metrics[r.suite] = ctx.rules(ctx.suite(r.suite_ref)).judge_metrics
    board = build_leaderboard(allres, refs.names if refs else (), unscored=(HARNESS_RETRIEVER,),
                              judge_metrics=judge_metrics)
    gates_by_suite: dict[str, Sequence[Rule]] = {}
    for r in res:
        if r.suite not in gates_by_suite:
            gates_by_suite[r.suite] = ctx.rules(ctx.suite(r.suite_ref)).gates
    arena = _step("arena and surrogate", fatal,
                  lambda: run_arena(ctx, res, ref_results, judged) if res and _needs_arena(ctx, res) else ArenaOutcome(),
                  ArenaOutcome())
    model_level = frozenset(n for n in ctx.metrics.names if ctx.metrics[n].scope == "model")
    model_values: dict[tuple[str, str, str], dict[str, float]] = defaultdict(dict)
    for key, (score, rank) in arena.surrogate_scores.items():
        model_values[key].update(surrogate_score=score, surrogate_rank=float(rank))
    all_problems = [*problems, *(refs.problems if refs else []), *arena.problems,
                    *_model_gate_problems(gates_by_suite, model_level, arena)]
    # a gate on a model-level metric names its own suite's surrogate error, not another suite's
    reason = {suite: arena.surrogate_errors.get(suite) or "no model-level value (no trained surrogate?)"
              for suite in gates_by_suite}
    samples = [smp for ref in sorted({r.suite_ref for r in res}) if (smp := ctx.sample(ctx.suite(ref))) is not None]
    no_calibration: tuple[list[CalibrationSection], dict[tuple[str, str, str], tuple[float, float]], list[str]] = \
        ([], {}, [])
    calibration, ppi, cal_problems = _step("human-label calibration", fatal, lambda: calibration_sections(ctx, res),
                                           no_calibration)
    all_problems += cal_problems
    if calibration:  # its own step: a failure here keeps the agreement and PPI rows
        from .signals import faithfulness_calibration

        unchanged: tuple[list[CalibrationSection], list[str]] = (calibration, [])
        calibration, signal_problems = _step("faithfulness calibration", fatal,
                                             lambda: faithfulness_calibration(ctx, res, unchanged[0]), unchanged)
        all_problems += signal_problems
    no_gates: list[GateResult] = []
    gates = _step("gates", fatal, lambda: evaluate_gates(res, gates_by_suite, model_level=model_level,
                                                         seed=ctx.settings.seed, model_values=model_values,
                                                         model_level_reason=reason, ppi=ppi), no_gates)
    gates = [replace(g, note="; ".join(x for x in (g.note, f"the surrogate is {arena.unhealthy[(g.suite, g.lang)]}")
                                       if x))
             if (g.suite, g.lang) in arena.unhealthy and g.metric in model_level
             else g for g in gates]
    fatal += [*arena.fatal, *judge_failures(judge_health)]
    if baseline is None:
        for ref in sorted({r.suite_ref for r in res}):
            suite_gates = ctx.rules(ctx.suite(ref)).regressions
            if suite_gates:
                all_problems.append(f"regression gates of suite {ctx.suite(ref).name} not evaluated "
                                    f"({', '.join(g.expr for g in suite_gates)}): they compare with a baseline "
                                    "run; give one with --mirage-baseline PATH")
    compared: BaselineSection | None = None
    regressions: tuple[RegressionGateResult, ...] = ()
    if baseline is not None:
        try:
            outcome = compare_with_baseline(ctx, baseline[0], baseline[1], res)
        except MirageError as exc:  # the rest of the report still stands; the run fails with why
            fatal.append(f"baseline comparison not computed: {exc}")
        else:
            compared = BaselineSection.of(str(outcome.path), outcome.comparison)
            regressions = outcome.regressions
    statistics = Statistics(sample=SampleSection.of(samples) if samples else None, calibration=tuple(calibration),
                            baseline=compared, regressions=regressions,
                            head_to_head=tuple(_step("head-to-head", fatal, lambda: head_to_head_rows(ctx, res), [])),
                            repeats=tuple(_step("repeated samples", fatal, lambda: repeat_sections(ctx, res), [])))
    failed = bool(exitstatus != 0 or any(g.passed is False for g in gates) or fatal or collection_errors
                  or any(r.outcome in ("failed", "error") for r in res) or statistics.failed_regressions)
    suites = []
    for ref in sorted({r.suite_ref for r in res}):
        suite = ctx.suite(ref)
        mine = [r for r in res if r.suite_ref == ref]
        suites.append(SuiteInfo(suite.name, suite.mode, tuple(sorted({r.lang for r in mine})),
                                len({r.case_id for r in mine}),
                                tuple(n for n in (refs.names if refs else ())
                                      if any(x.model == n and x.suite_ref == ref for x in ref_results)),
                                ctx.scoring(suite)))
    used = sorted({k for r in allres for k in r.metrics})
    info = {n: MetricInfo(ctx.metrics[n].higher_is_better, ctx.metrics[n].source,
                          ctx.metrics[n].description.split("\n")[0]) for n in used if n in ctx.metrics}
    if "faithfulness" in info and judging is not None:
        # what faithfulness stood for, per suite (claim-level LLM > NLI > lexical)
        resolved = {ctx.suite(ref).name: judging.faithfulness(ctx.suite(ref)) for ref in {r.suite_ref for r in res}}
        where = "; ".join(f"{sig} in {name}" for name, sig in sorted(resolved.items()))
        f = info["faithfulness"]
        info["faithfulness"] = MetricInfo(f.higher_is_better, f"resolved to {where}", f.description)
    report = RunReport(
        models=tuple(sorted({r.model for r in res})), suites=tuple(suites), results=tuple(allres),
        leaderboard=tuple(board), gates=tuple(gates), status="failed" if failed else "passed",
        exitstatus=1 if failed and exitstatus == 0 else exitstatus,
        arena=tuple(ArenaRow(a["suite"], a["lang"], a["model"], a["strength"], a["ci_low"], a["ci_high"],
                             int(a["rank"])) for a in arena.arena),
        judge=dict(arena.judge),
        surrogates=tuple(SurrogateInfo(e["suite"], e["lang"], e.get("path"), tuple(e.get("features", ())),
                                       tuple(e.get("training_models", ())), e.get("judge"), e.get("health"),
                                       e.get("created")) for e in arena.surrogate),
        surrogate_scores=tuple(SurrogateScore(su, la, mo, sc, rk)
                               for (su, la, mo), (sc, rk) in sorted(arena.surrogate_scores.items())),
        metric_info=info, problems=tuple(all_problems), fatal=tuple(fatal),
        collection_errors=tuple(sorted(collection_errors, key=lambda e: e.nodeid)),
        cases=tuple(case_details(ctx, res)), statistics=statistics, repeats=ctx.settings.repeat,
        judge_health={name: {k: v for k, v in h.items() if k not in PER_PROCESS_HEALTH}
                      for name, h in (judge_health or {}).items()})
    return report, arena


@dataclass
class Written:
    paths: list[Path] = field(default_factory=list)
    record: Path | None = None
    problems: list[str] = field(default_factory=list)


def write_files(ctx: RunContext, report: RunReport, results: Iterable[CaseResult]) -> Written:
    """The record file and the report files; a file that cannot be written is a problem, never a crash
    (the leaderboard and gates are still printed)."""
    from ..report.write import render_outputs, write_atomic, write_outputs

    s = ctx.settings
    out = Written()
    if s.record is not None:
        lines = sorted((r.run_line for r in results if r.run_line is not None),
                       key=lambda x: (x.suite, x.model, x.case_id))
        data = "".join(json.dumps(line.to_json(), ensure_ascii=False) + "\n" for line in lines).encode("utf-8")
        try:
            write_atomic(s.record, data)
            out.record = s.record
        except OSError as exc:
            out.problems.append(f"cannot write the record file {s.record}: {exc.strerror or exc}")
    written, problems = write_outputs(render_outputs(report, json_path=s.report, markdown=s.markdown, html=s.html))
    out.paths += written
    out.problems += problems
    return out


@dataclass(frozen=True)
class FinishInput:
    """What the session end is computed from: the stored results of the run and what came with them.

    ``results``: every case result (any order; the report sorts them). ``collection_errors``: suites
    that did not load. ``exitstatus``: pytest's status so far (a failure there fails the report).
    ``problems``: lines found along the way (engine problems, notes). ``baseline``: the loaded
    ``--mirage-baseline`` report. ``judge_health``: the judges' counts sent by xdist workers (the
    controller's own judging is added by :func:`finish`). ``judged``: in a merge, the arena
    matchups the shards judged (only the others are judged here)."""

    results: Sequence[CaseResult]
    collection_errors: Sequence[CollectionError] = ()
    exitstatus: int = 0
    problems: Sequence[str] = ()
    baseline: tuple[Path, Baseline] | None = None
    judge_health: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    judged: PreJudged | None = None  # a merge: the arena matchups its shards judged


def finish(ctx: RunContext, given: FinishInput, *, judging: Judging | None = None) -> Finished:
    """The session end: build the report from ``given`` and write the files the user asked for.

    Needs no pytest object: ``ctx`` holds the settings, registries and suites (a
    :class:`~pytest_mirage.evaluate.context.RunContext` is built from settings alone), ``judging``
    the metric judges for the reference systems (None: references are scored without judges)."""
    res = list(given.results)
    report, arena = build_report(ctx, res, collection_errors=given.collection_errors, exitstatus=given.exitstatus,
                                 problems=given.problems, baseline=given.baseline, judging=judging,
                                 judge_health=given.judge_health, judged=given.judged)
    written = write_files(ctx, report, res)
    return Finished(report=report, written=written.paths, record_path=written.record,
                    saved_surrogates=list(arena.saved), write_problems=written.problems)
