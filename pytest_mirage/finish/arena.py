"""The arena as a session step: judge sampled pairs, fit Bradley-Terry per suite x language (and
"all"), train or apply the surrogate judge. Pure of pytest; :mod:`.finish` calls :func:`run_arena`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..arena.bt import Battle, bradley_terry
from ..arena.surrogate import (
    RELIABILITY_COUNTS,
    RELIABILITY_RATES,
    Surrogate,
    health_decision,
    load_surrogate,
    mean_features,
    surrogate_health,
    train_surrogate,
)
from ..engine import run_requests
from ..errors import ConfigError, MirageError
from ..evaluate.context import RunContext
from ..evaluate.requests import prompt_id
from ..judges.pairwise import Judgment, Matchup
from ..models.base import Answer, PromptRequest, ResponseFormat
from ..models.registry import ModelSpec
from ..results import CaseResult
from ..suites.bm25 import corpus_map
from ..suites.model import Case, Passage, Suite

SURROGATE_DIR = "surrogate"


def surrogate_dir(ctx: RunContext, suite: Suite) -> Path:
    """Where a suite's surrogates are saved and read: ``--mirage-surrogate-dir DIR`` (``DIR/<suite>``);
    else the suite folder's ``surrogate/``, unless the suite is installed with the package (a bundled
    suite: never write into site-packages) — then the cache folder's ``surrogates/<suite>``."""
    s = ctx.settings
    if s.surrogate_dir is not None:
        return s.surrogate_dir / suite.name
    package = Path(__file__).resolve().parents[1]
    if suite.root.resolve().is_relative_to(package) or suite.manifest is None:
        base = s.cache_dir if s.cache_dir is not None else suite.root
        return base / "surrogates" / suite.name
    return suite.root / SURROGATE_DIR


def surrogate_path(directory: Path, lang: str) -> Path:
    """The surrogate for ``lang`` ("all" for the suite-level one) in a suite's surrogate folder."""
    return directory / f"{lang}.json"


@dataclass
class ArenaOutcome:
    arena: list[dict[str, Any]] = field(default_factory=list)
    judge: dict[str, Any] = field(default_factory=dict)
    surrogate: list[dict[str, Any]] = field(default_factory=list)  # health/metadata per (suite, lang)
    surrogate_scores: dict[tuple[str, str, str], tuple[float, int]] = field(default_factory=dict)
    saved: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    fatal: list[str] = field(default_factory=list)  # make the run fail (e.g. no surrogate was saved)
    surrogate_errors: dict[str, str] = field(default_factory=dict)  # suite -> why its model-level gates have no value
    unhealthy: dict[tuple[str, str], str] = field(default_factory=dict)  # (suite, lang) -> why a surrogate is unhealthy


def judge_and_fit(complete: Callable[..., list[str | Exception]],
                  cases: Mapping[tuple[str, str], Case], answers: Mapping[tuple[str, str, str], str],
                  models: Sequence[str], *, per_group: int, seed: int, order: str, tournaments: int,
                  contexts: Mapping[tuple[str, str], Sequence[Passage]] | None = None,
                  out: ArenaOutcome, structured: str = "off",
                  plain_reason: str | None = None,
                  judged: PreJudged | None = None) -> dict[tuple[str, str], list[Battle]]:
    """Judge every pair of ``models`` on sampled cases and fit BT; returns the battles per group.

    ``complete(prompts, response_format=None)``; ``structured``: the judge's resolved mode (``off``
    sends plain prompts, ``plain_reason`` says why). The judge block of the outcome holds the
    reliability figures and how the judge asked (``output``, ``output_note``, ``format_fallbacks``,
    ``unstructured_replies``, as in the metric judges' health). ``judged``: the matchups the shards
    of a sharded run judged already (:func:`shard_judgments`), used where their prompt is this
    plan's; only the others are sent to ``complete``."""
    from ..judges.base import JudgeHealth
    from ..judges.pairwise import (
        build_plan,
        group_battles,
        judge_matchups,
        judge_reliability,
        matchup_prompts,
    )

    class _Judge:
        def complete(self, prompts: list[str], response_format: ResponseFormat | None = None) -> list[str | Exception]:
            if response_format is None:
                return complete(prompts)
            return complete(prompts, response_format=response_format)

    # only cases every arena model answered (errors are not battles)
    usable = [c for key, c in cases.items() if all((key[0], key[1], m) in answers for m in models)]
    plan = build_plan(usable, models, per_group=per_group, seed=seed, order=order)  # type: ignore[arg-type]
    prompts = matchup_prompts(plan, cases, answers, passages=contexts)
    health = JudgeHealth()
    done = {i: judged.judgments.get((m, prompt_id(p))) for i, (m, p) in enumerate(zip(plan, prompts, strict=True))} \
        if judged is not None else {}
    todo = [i for i in range(len(plan)) if done.get(i) is None]
    if todo:
        live = judge_matchups(_Judge(), [plan[i] for i in todo], [prompts[i] for i in todo], structured=structured,
                              health=health, plain_reason=plain_reason)
        done.update(zip(todo, live, strict=True))
    judgments = tuple(j for _i, j in sorted(done.items()) if j is not None)
    output, note, fallbacks, unstructured = health.output, health.output_note, health.format_fallbacks, \
        health.unstructured_replies
    if judged is not None and len(todo) < len(plan):  # the shards' judge health counts too
        output, note = output or judged.output, note or judged.output_note
        fallbacks += judged.format_fallbacks
        unstructured += judged.unstructured_replies
    out.judge = {**judge_reliability(judgments).to_json(), "output": output, "output_note": note,
                 "format_fallbacks": fallbacks, "unstructured_replies": unstructured}
    groups = group_battles(judgments)
    if not any(groups.values()):
        rel = out.judge
        form = ('are the JSON {"verdict": "A"} (or "B", "C") asked for, or end with [[A]], [[B]] or [[C]]'
                if output == "json_schema" else "end with [[A]], [[B]] or [[C]]")
        out.problems.append(f"arena: no usable verdicts from the judge ({rel.get('parse_failures', 0)} unparseable, "
                            f"{rel.get('errors', 0)} errors of {rel.get('judgments', 0)} judgments); check the "
                            f"judge model and that its replies {form}")
    for (suite, lang), battles in sorted(groups.items()):
        if not battles:
            out.problems.append(f"arena {suite} [{lang}]: no usable verdicts")
            continue
        board = bradley_terry(battles, tournaments=tournaments, seed=seed)
        out.arena.extend(board.to_json(suite, lang))
    return groups


def per_model_features(results: Sequence[Any], features: Sequence[str] | None) -> dict[tuple[str, str], dict[str, dict[str, float]]]:
    """Mean per-case metric values of each model per (suite, lang) and (suite, "all")."""
    per: dict[tuple[str, str], dict[str, list[Mapping[str, float | None]]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        if r.outcome == "error":
            continue
        vals = {k: v for k, v in r.metrics.items() if features is None or k in features}
        per[(r.suite, r.lang)][r.model].append(vals)
        per[(r.suite, "all")][r.model].append(vals)
    return {key: mean_features(models) for key, models in per.items()}


def train(groups: Mapping[tuple[str, str], list[Battle]], feats: Mapping[tuple[str, str], dict[str, dict[str, float]]],
          dirs: Mapping[str, Path], *, feature_names: Sequence[str] | None, judge: str, seed: int,
          tournaments: int, out: ArenaOutcome, force: bool = False,
          scorings: Mapping[str, str] | None = None) -> None:
    """Train one surrogate per (suite, lang) with its health report; save it only when it is healthy
    (cross-validated tau and R², judge without strong position bias) or ``force``. ``scorings``:
    the metric definitions (suite -> "default"/"mirage") the features were computed with; stored
    in the file so that the surrogate is applied only to features computed the same way."""
    for (suite, lang), battles in sorted(groups.items()):
        f = feats.get((suite, lang))
        if not battles or not f:
            continue
        board = bradley_terry(battles, tournaments=tournaments, seed=seed)
        strengths = {m: s for m, s in board.strengths().items() if m in f}
        try:
            names = _usable_features(f, list(strengths), feature_names)
            health = surrogate_health(f, battles, feature_names=names, seed=seed, tournaments=min(tournaments, 100))
            sur = train_surrogate(f, strengths, feature_names=names, seed=seed, judge=judge, suite=suite, lang=lang,
                                  health=health, judge_reliability=_reliability(out.judge),
                                  scoring=(scorings or {}).get(suite, "default"))
        except Exception as exc:
            out.problems.append(f"surrogate {suite} [{lang}] not trained: {exc}")
            continue
        decision = health_decision(health, _reliability(out.judge))
        if not decision.healthy:
            if not force:
                out.problems.append(f"surrogate {suite} [{lang}] trained but not saved: {decision.describe()}; "
                                    "gates must not rest on it (--mirage-force-surrogate saves it anyway)")
                continue
            out.unhealthy[(suite, lang)] = decision.describe()
            out.problems.append(f"surrogate {suite} [{lang}] saved although {decision.describe()} "
                                "(--mirage-force-surrogate): gates that use it say so")
        path = surrogate_path(dirs[suite], lang)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            sur.save(path)
        except OSError as exc:
            out.problems.append(f"surrogate {suite} [{lang}] trained but not saved to {path}: {exc}")
            continue
        out.saved.append(path)
        out.surrogate.append({"suite": suite, "lang": lang, "path": str(path), "features": list(sur.features),
                              "training_models": list(sur.training_models), "judge": judge,
                              "health": health.to_json(), "decision": decision.to_json()})


def _usable_features(f: Mapping[str, Mapping[str, float]], models: Sequence[str],
                     chosen: Sequence[str] | None) -> list[str]:
    """Features every training model has (a metric that is null for a model cannot be a feature)."""
    common = set.intersection(*(set(f[m]) for m in models)) if models else set()
    names = sorted(common) if chosen is None else list(chosen)
    missing = [n for n in names if n not in common]
    if missing:
        raise ConfigError(f"surrogate features {missing} are not available for every training model")
    return [n for n in names if n not in ("surrogate_score", "surrogate_rank")]


def _reliability(judge: Mapping[str, Any]) -> dict[str, Any] | None:
    """The judge's reliability figures as stored with a surrogate (its numbers only: not the source
    of imported judgments nor the judge's output mode)."""
    figures = {k: v for k, v in judge.items() if k in RELIABILITY_COUNTS or k in RELIABILITY_RATES}
    return figures or None


def apply(feats: Mapping[tuple[str, str], dict[str, dict[str, float]]], dirs: Mapping[str, Path],
          under_test: Sequence[str], out: ArenaOutcome, scorings: Mapping[str, str] | None = None) -> None:
    """Score the models under test with each suite's saved surrogates.

    A surrogate file that cannot be used (tampered, too large, of another suite or language, a
    feature this run lacks) is a problem of its suite only: that suite's model-level gates fail
    with the reason; the other suites, gates and the report are unaffected."""
    for (suite, lang), f in sorted(feats.items()):
        try:
            _apply_one(suite, lang, f, dirs, under_test, out, (scorings or {}).get(suite, "default"))
        except MirageError as exc:
            out.problems.append(f"surrogate of suite {suite} [{lang}] not used: {exc}")
            previous = out.surrogate_errors.get(suite)
            out.surrogate_errors[suite] = f"{previous}; {exc}" if previous else str(exc)


def _apply_one(suite: str, lang: str, f: Mapping[str, dict[str, float]], dirs: Mapping[str, Path],
               under_test: Sequence[str], out: ArenaOutcome, scoring: str = "default") -> None:
    directory = dirs.get(suite)
    if directory is None:
        return
    path = surrogate_path(directory, lang)
    if not path.is_file():
        return
    sur: Surrogate = load_surrogate(path, suite=suite, lang=lang)  # SurrogateError naming the file
    if sur.scoring != scoring:
        raise ConfigError(f"surrogate {path} was trained on features computed with scoring {sur.scoring!r}, but "
                          f"this run computes them with scoring {scoring!r} (citation and language metrics differ "
                          f"between the two); run with --mirage-scoring {sur.scoring}, or retrain with "
                          "--mirage-train-surrogate")
    current = {m: f[m] for m in under_test if m in f}
    if not current:
        return
    missing = {m: [n for n in sur.features if n not in current[m]] for m in current}
    missing = {m: v for m, v in missing.items() if v}
    if missing:
        from ..judges.spec import METRICS as JUDGE_METRICS

        names = sorted({n for v in missing.values() for n in v})
        judges = sorted({JUDGE_METRICS[n].judge for n in names if n in JUDGE_METRICS})
        fix = (f"configure the judge{'s' * (len(judges) > 1)} {', '.join(judges)} (--mirage-judges "
               f"{judges[0]}=BACKEND, as when it was trained)" if judges else "compute them (e.g. --mirage-metrics)")
        raise ConfigError(f"surrogate {path}: features {names} are unavailable in this run for {sorted(missing)}; "
                          f"{fix}, or retrain with --mirage-train-surrogate")
    for s in sur.rank(current):
        if s.model in current:
            out.surrogate_scores[(suite, lang, s.model)] = (s.score, s.rank)
    decision = sur.decision()
    if not decision.healthy:
        out.unhealthy[(suite, lang)] = decision.describe()
    out.surrogate.append({"suite": suite, "lang": lang, "path": str(path), "features": list(sur.features),
                          "training_models": list(sur.training_models), "judge": sur.judge,
                          "created": sur.created, "health": sur.health.to_json() if sur.health else None,
                          "decision": decision.to_json()})


def judge_inputs(ctx: RunContext, rows: Sequence[CaseResult]) -> tuple[
        dict[tuple[str, str], Case], dict[tuple[str, str], tuple[Passage, ...]], dict[tuple[str, str, str], str]]:
    """What the pairwise judge is shown: the cases answered, their passages (the relevant corpus
    chunks of a retrieval suite) and every model's answer, from the results that have one."""
    cases: dict[tuple[str, str], Case] = {}
    contexts: dict[tuple[str, str], tuple[Passage, ...]] = {}
    answers: dict[tuple[str, str, str], str] = {}
    for r in rows:
        if r.run_line is None or r.outcome == "error":
            continue
        suite = ctx.suite(r.suite_ref)
        key = (suite.name, r.case_id)
        if key not in cases:
            cases[key] = suite.case(r.case_id)
            if suite.mode == "retrieval" and suite.corpus is not None:
                by_id = corpus_map(suite.corpus)
                contexts[key] = tuple(by_id[i] for i in cases[key].relevant if i in by_id)
        answers[(suite.name, r.case_id, r.model)] = r.run_line.output
    return cases, contexts, answers


@dataclass
class PreJudged:
    """Matchups a sharded run's shards judged, by (matchup, prompt id), with the judge's health
    figures of those calls (summed over the shards; the output mode of the first that judged)."""

    judgments: dict[tuple[Matchup, str], Judgment] = field(default_factory=dict)
    output: str = ""
    output_note: str = ""
    format_fallbacks: int = 0
    unstructured_replies: int = 0

    def add(self, rows: Sequence[Mapping[str, Any]], health: Mapping[str, Any], where: str) -> None:
        """Add one shard's judgments (:func:`judgment_json` rows) and health; ConfigError naming ``where``."""
        for i, row in enumerate(rows):
            try:
                m = Matchup(*(str(row[k]) for k in ("suite", "lang", "case_id", "model_a", "model_b")))
                verdict = str(row["verdict"])
                if verdict not in ("A", "B", "C", "unparseable", "error"):
                    raise ValueError(f"verdict {verdict!r}")
                reply, error = row.get("reply"), row.get("error")
                j = Judgment(m, verdict, None if reply is None else str(reply), int(row["attempts"]),  # type: ignore[arg-type]
                             None if error is None else str(error))
                self.judgments[(m, str(row["prompt_id"]))] = j
            except (KeyError, TypeError, ValueError) as exc:
                raise ConfigError(f"{where}: arena_judgments[{i}]: {type(exc).__name__}: {exc}; expected a "
                                  "judgment written by a --mirage-shard run") from None
        self.output = self.output or str(health.get("output", ""))
        self.output_note = self.output_note or str(health.get("output_note", ""))
        self.format_fallbacks += int(health.get("format_fallbacks", 0))
        self.unstructured_replies += int(health.get("unstructured_replies", 0))


def judgment_json(j: Judgment, prompt: str) -> dict[str, Any]:
    m = j.matchup
    return {"suite": m.suite, "lang": m.lang, "case_id": m.case_id, "model_a": m.model_a, "model_b": m.model_b,
            "prompt_id": prompt_id(prompt), "verdict": j.verdict, "reply": j.reply, "attempts": j.attempts,
            "error": j.error}


def shard_judgments(ctx: RunContext, results: Sequence[CaseResult], refs: Sequence[CaseResult],
                    selected: Sequence[Case]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``--mirage-shard K/N`` with ``--mirage-judge``: judge the matchups of this shard's cases in
    the plan one run would make (:func:`~pytest_mirage.judges.pairwise.build_plan` over every
    ``selected`` case of the run, which is that run's plan when every case was answered); returns
    the judgments (:func:`judgment_json`) and the judge's health figures for the partial report.
    ``merge`` uses them where its plan and prompts are the same and judges only the rest."""
    from ..judges.base import JudgeHealth
    from ..judges.pairwise import build_plan, judge_matchups, matchup_prompts

    s = ctx.settings
    assert s.judge is not None
    cases, contexts, answers = judge_inputs(ctx, [*results, *refs])
    models = sorted({m for (_s, _c, m) in answers})
    if len(models) < 2:
        return [], {}
    plan = [m for m in build_plan(selected, models, per_group=s.judge_queries, seed=s.seed,
                                  order=s.judge_order)  # type: ignore[arg-type]
            if (m.suite, m.case_id) in cases and all((m.suite, m.case_id, x) in answers for x in models)]
    if not plan:
        return [], {}
    prompts = matchup_prompts(plan, cases, answers, passages=contexts or None)
    mode, plain_reason = ctx.arena_judge_mode()
    complete = judge_complete(ctx, s.judge)

    class _Judge:
        def complete(self, prompts: list[str], response_format: ResponseFormat | None = None) -> list[str | Exception]:
            if response_format is None:
                return complete(prompts)
            return complete(prompts, response_format=response_format)

    health = JudgeHealth()
    judgments = judge_matchups(_Judge(), plan, prompts, structured=mode, health=health, plain_reason=plain_reason)
    return ([judgment_json(j, p) for j, p in zip(judgments, prompts, strict=True)],
            {"output": health.output, "output_note": health.output_note, "format_fallbacks": health.format_fallbacks,
             "unstructured_replies": health.unstructured_replies})


def judge_answers(ctx: RunContext, spec: ModelSpec, label: str = "judge") -> Callable[..., list[Answer | Exception]]:
    """A callable ``answers(prompts, response_format=None)`` that sends judge prompts through the
    engine (cached per prompt and response format, retried) and returns the judge model's answers
    (or the errors), one per prompt."""
    adapter = ctx.adapter(spec)

    def answers(prompts: list[str], response_format: ResponseFormat | None = None) -> list[Answer | Exception]:
        reqs = [PromptRequest(id=prompt_id(p), prompt=p, label=label, response_format=response_format)
                for p in prompts]
        return run_requests(adapter, reqs, ctx.engine)

    return answers


def judge_complete(ctx: RunContext, spec: ModelSpec, label: str = "judge") -> Callable[..., list[str | Exception]]:
    """A ``complete(prompts, response_format=None)`` callable returning the judge's reply texts (see
    :func:`judge_answers`)."""
    answers = judge_answers(ctx, spec, label)

    def complete(prompts: list[str], response_format: ResponseFormat | None = None) -> list[str | Exception]:
        return [o.output if isinstance(o, Answer) else o for o in answers(prompts, response_format)]

    return complete


def run_arena(ctx: RunContext, results: Sequence[CaseResult], refs: Sequence[CaseResult],
              judged: PreJudged | None = None) -> ArenaOutcome:
    """Judge + Bradley-Terry when a judge is configured; surrogate training or scoring. ``judged``:
    the matchups a sharded run's shards judged (see :func:`judge_and_fit`)."""
    s = ctx.settings
    out = ArenaOutcome()
    if not results:
        return out
    dirs = {r.suite: surrogate_dir(ctx, ctx.suite(r.suite_ref)) for r in results}
    scorings = {r.suite: ctx.scoring(ctx.suite(r.suite_ref)) for r in results}
    feats = per_model_features([*results, *refs], s.surrogate_features)
    if s.battles is not None:
        try:
            groups = imported_battles(s.battles, [*results, *refs], tournaments=s.tournaments, seed=s.seed, out=out)
        except MirageError as exc:
            out.fatal.append(f"arena not computed: {exc}")
            return out
        if s.train_surrogate:
            _train_or_fail(groups, feats, dirs, ctx, out, scorings, judge=f"imported:{s.battles.name}")
            return out
    elif s.judge is not None:
        cases, contexts, answers = judge_inputs(ctx, [*results, *refs])
        models = sorted({m for (_s, _c, m) in answers})
        try:
            mode, plain_reason = ctx.arena_judge_mode()
            groups = judge_and_fit(judge_complete(ctx, s.judge), cases, answers, models,
                                   per_group=s.judge_queries, seed=s.seed, order=s.judge_order,
                                   tournaments=s.tournaments, contexts=contexts or None, out=out,
                                   structured=mode, plain_reason=plain_reason, judged=judged)
        except MirageError as exc:
            out.problems.append(f"arena not computed: {exc}")
            return out
        if s.train_surrogate:
            _train_or_fail(groups, feats, dirs, ctx, out, scorings, judge=s.judge.display_name)
            return out
    apply(feats, dirs, sorted({r.model for r in results}), out, scorings)
    return out


def _train_or_fail(groups: Mapping[tuple[str, str], list[Battle]],
                   feats: Mapping[tuple[str, str], dict[str, dict[str, float]]], dirs: Mapping[str, Path],
                   ctx: RunContext, out: ArenaOutcome, scorings: Mapping[str, str], *, judge: str) -> None:
    s = ctx.settings
    train(groups, feats, dirs, feature_names=s.surrogate_features, judge=judge, seed=s.seed,
          tournaments=s.tournaments, out=out, force=s.force_surrogate, scorings=scorings)
    if not out.saved:
        why = "--mirage-train-surrogate was given but no surrogate was trained and saved (see the problems above)"
        out.fatal.append(f"surrogate: {why}")
        for name in dirs:
            out.surrogate_errors.setdefault(name, why)


def imported_battles(path: Path, results: Sequence[CaseResult], *, tournaments: int, seed: int,
                     out: ArenaOutcome) -> dict[tuple[str, str], list[Battle]]:
    """Battles per (suite, lang) and (suite, "all") from a file of imported pairwise judgments, with
    the Bradley-Terry arena fitted on them.

    A row is used when its ``query_id`` is a case of this run (of its ``language``, when the row
    names one) and both of its models answered that case in this run (name them with ``name=`` in
    the model spec as the file does, e.g. ``replay:gpt4o.jsonl?name=gpt-4o-azure``). The other rows
    are counted and reported, never scored; a file none of whose rows match is an error."""
    from ..arena.imported import battle_reliability, read_judgments

    judgments = read_judgments(path)
    where: dict[str, set[tuple[str, str]]] = defaultdict(set)  # case id -> {(suite, lang)}
    answered: dict[tuple[str, str], set[str]] = defaultdict(set)  # (suite, case id) -> models
    models: set[str] = set()
    for r in results:
        if r.outcome == "error":
            continue
        where[r.case_id].add((r.suite, r.lang))
        answered[(r.suite, r.case_id)].add(r.model)
        models.add(r.model)
    used = []
    groups: dict[tuple[str, str], list[Battle]] = defaultdict(list)
    no_case = ambiguous = no_model = 0
    unknown_models: set[str] = set()
    for j in judgments:
        places = [(su, la) for su, la in where.get(j.query_id, ()) if j.lang is None or la == j.lang]
        if not places:
            no_case += 1
            continue
        if len(places) > 1:
            ambiguous += 1
            continue
        suite, lang = places[0]
        have = answered[(suite, j.query_id)]
        missing = [m for m in (j.model_a, j.model_b) if m not in have]
        if missing:
            no_model += 1
            unknown_models.update(m for m in missing if m not in models)
            continue
        used.append(j)
        if j.winner is not None:
            groups[(suite, lang)].append(j.battle())
            groups[(suite, "all")].append(j.battle())
    out.judge = {"source": f"imported from {path}", **battle_reliability(used)}
    skipped = []
    if no_case:
        skipped.append(f"{no_case} name a case that is not in this run")
    if ambiguous:
        skipped.append(f"{ambiguous} name a case id that is in more than one suite of this run (run one suite)")
    if no_model:
        hint = (f" (not in this run: {', '.join(repr(m) for m in sorted(unknown_models)[:5])}"
                f"{', ...' if len(unknown_models) > 5 else ''}; this run's models: {sorted(models)}; give a "
                "model the file's name with name= in its spec)") if unknown_models else ""
        skipped.append(f"{no_model} compare a model that has no answer to that case in this run{hint}")
    if not any(groups.values()):
        raise ConfigError(f"{path}: none of its {len(judgments)} judgments can be used"
                          f"{': ' + '; '.join(skipped) if skipped else ' (none has a verdict)'}")
    if skipped:
        out.problems.append(f"imported judgments {path}: {len(used)} of {len(judgments)} rows used; "
                            + "; ".join(skipped))
    for (suite, lang), battles in sorted(groups.items()):
        board = bradley_terry(battles, tournaments=tournaments, seed=seed)
        out.arena.extend(board.to_json(suite, lang))
    return dict(groups)
