"""Session state shared by the plugin's hooks (no pytest imports here).

Holds the registries, the model adapters, loaded suites, prefetched answers (per process) and, on the
controller, the collected case results, from which ``finish()`` computes the leaderboard and gates.
"""

from __future__ import annotations

import dataclasses
import statistics
import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .arena.workflow import ArenaOutcome
from .config import MirageConfig
from .engine import EngineSettings, EngineStats, cache_file, run_requests, summary_lines
from .errors import ConfigError, MirageError, ModelError, SuiteError
from .harness import CaseResult, answer_cases, build_request, evaluate
from .metrics.base import MetricRegistry
from .models.base import Answer, ModelAdapter, ModelRequest
from .models.registry import ModelRegistry, ModelSpec, parse_model_spec
from .report import aggregate_gates, build_report, leaderboard, write_report
from .report.aggregate import GateResult, LeaderboardRow
from .retrieval import corpus_map
from .suites.model import Case, Passage, Suite
from .suites.resolve import load_ref
from .suites.runs import load_run_file, write_run_lines
from .thresholds import Rule, merge_rules, parse_rule

LAZY_KINDS = frozenset({"hf", "vllm"})


@dataclass
class Outcome:
    """What ``finish()`` computed for the terminal summary and the exit status."""

    board: list[LeaderboardRow] = field(default_factory=list)
    gates: list[GateResult] = field(default_factory=list)
    report_path: Path | None = None
    record_path: Path | None = None
    problems: list[str] = field(default_factory=list)
    arena: ArenaOutcome = field(default_factory=ArenaOutcome)
    fatal: list[str] = field(default_factory=list)  # make the run fail (e.g. an unusable surrogate)
    extra_paths: list[Path] = field(default_factory=list)  # Markdown / HTML reports written

    def arena_columns(self) -> dict[tuple[str, str, str], dict[str, str]]:
        cols: dict[tuple[str, str, str], dict[str, str]] = defaultdict(dict)
        for row in self.arena.arena:
            key = (row["suite"], row["lang"], row["model"])
            cols[key]["bt"] = f"{row['strength']:+.2f}"
            cols[key]["bt#"] = str(row["rank"])
        for (suite, lang, model), (_score, rank) in self.arena.surrogate_scores.items():
            cols[(suite, lang, model)]["sur#"] = str(rank)
        return dict(cols)

    @property
    def failed_gates(self) -> list[GateResult]:
        return [g for g in self.gates if g.passed is False]


class MirageSession:
    def __init__(self, cfg: MirageConfig, metrics: MetricRegistry, models: ModelRegistry,
                 progress: bool = False) -> None:
        self.cfg = cfg
        self.metrics = metrics
        self.models = models
        self._adapters: dict[str, ModelAdapter] = {}
        self.suites: dict[str, Suite] = {}
        self._answers: dict[tuple[str, str, str], Answer | Exception] = {}
        self._requests: dict[tuple[str, str, str], ModelRequest] = {}
        self._consumed: set[tuple[str, str, str]] = set()
        self._names: dict[str, str] = {}
        self._rules: dict[int, tuple[list[Rule], list[Rule]]] = {}  # id(suite) -> (thresholds, gates)
        self.collection_errors: list[dict[str, str]] = []  # suites that failed to load (controller)
        self.results: dict[str, CaseResult] = {}  # nodeid -> result (controller)
        self.stats = EngineStats()
        self.engine_settings = EngineSettings(cache_dir=cfg.cache_dir, cache_mode=cfg.cache_mode,
                                              concurrency=cfg.concurrency, progress=progress, stats=self.stats)
        self.outcome: Outcome | None = None

    # ---------------------------------------------------------------- configuration
    def validate_rules(self) -> None:
        for rule in (*self.cfg.thresholds_cli, *self.cfg.thresholds_ini, *self.cfg.gates_cli, *self.cfg.gates_ini):
            if rule.metric not in self.metrics:
                raise ConfigError(f"{rule.source}: {rule.expr!r}: " + str(_unknown(self.metrics, rule.metric)))
        for name in self.cfg.metrics or ():
            if name not in self.metrics:
                raise ConfigError(f"--mirage-metrics: {_unknown(self.metrics, name)}")
        for spec in self.cfg.models:
            self.models.check(spec)
        if self.cfg.judge is not None:
            self.models.check(self.cfg.judge)
        for name in self.cfg.surrogate_features or ():
            if name not in self.metrics:
                raise ConfigError(f"--mirage-surrogate-features: {_unknown(self.metrics, name)}")

    def suite_rules(self, suite: Suite) -> tuple[list[Rule], list[Rule]]:
        """Thresholds and gates for ``suite``, precedence CLI > ini > manifest (parsed once per suite)."""
        cached = self._rules.get(id(suite))
        if cached is not None:
            return cached
        src = f"[thresholds] in {suite.manifest}" if suite.manifest else "suite"
        th_manifest = [parse_rule(f"{k} {v}", gate=False, source=src) for k, v in suite.thresholds.items()]
        gsrc = f"[gates] in {suite.manifest}" if suite.manifest else "suite"
        gt_manifest = [parse_rule(f"{k} {v}", gate=True, source=gsrc) for k, v in suite.gates.items()]
        th = merge_rules([th_manifest, self.cfg.thresholds_ini, self.cfg.thresholds_cli])
        gt = merge_rules([gt_manifest, self.cfg.gates_ini, self.cfg.gates_cli])
        self._rules[id(suite)] = (th, gt)
        return th, gt

    def check_suite_rules(self, suite: Suite) -> None:
        """Every unknown metric of the suite's rules, reported together (with the manifest line)."""
        th, gt = self.suite_rules(suite)
        text = suite.manifest.read_text(encoding="utf-8") if suite.manifest and suite.manifest.is_file() else ""
        problems = []
        for rule in (*th, *gt):
            if rule.metric not in self.metrics:
                where = rule.source
                if suite.manifest and rule.source.endswith(str(suite.manifest)):
                    key = rule.expr.split(" ")[0]
                    line = next((i for i, ln in enumerate(text.splitlines(), 1) if f'"{key}"' in ln or
                                 ln.strip().startswith(key)), None)
                    where = f"{suite.manifest}:{line}" if line else rule.source
                problems.append(f"{where}: {rule.expr!r}: {_unknown(self.metrics, rule.metric)}")
        if problems:
            raise ConfigError("\n".join(problems))

    def register_suite_name(self, suite: Suite, ref: str) -> None:
        """Two different suites with one name would merge their results and gates: an error."""
        first = self._names.setdefault(suite.name, ref)
        if first != ref:
            raise SuiteError(f"suite name {suite.name!r} is already used by {first}; suite names must be unique "
                             f"in a run (rename one in its suite.toml)", ref)

    def open_offline_models(self) -> None:
        """Create the adapters that are cheap to create now, so a bad replay file, a missing API key
        or an unimportable ``py:`` module is one usage error before any item runs. Local engines
        (``hf``, ``vllm``) load weights: they are created when their first item runs."""
        for spec in (*self.cfg.models, *((self.cfg.judge,) if self.cfg.judge else ())):
            if spec.kind not in LAZY_KINDS:
                self.adapter(spec)
        names: dict[str, str] = {}
        for spec in self.cfg.models:
            name = self.model_name(spec) if spec.kind not in LAZY_KINDS else spec.raw
            if name in names:
                raise ConfigError(f"--mirage-model {spec.raw!r} and {names[name]!r} are both named {name!r}; "
                                  "results would be mixed: give one of them another name (replay:PATH?model=...)")
            names[name] = spec.raw

    def metric_names(self, suite: Suite) -> list[str]:
        th, gt = self.suite_rules(suite)
        base = list(self.cfg.metrics) if self.cfg.metrics is not None else self.metrics.defaults()
        names = list(dict.fromkeys([*base, *(r.metric for r in (*th, *gt))]))
        if self.cfg.surrogate_features:
            names = list(dict.fromkeys([*names, *self.cfg.surrogate_features]))
        return self.metrics.case_level(names)

    def adapter(self, spec: ModelSpec) -> ModelAdapter:
        ad = self._adapters.get(spec.raw)
        if ad is None:
            ad = self._adapters[spec.raw] = self.models.create(spec)
        return ad

    def model_name(self, spec: ModelSpec) -> str:
        """Display name of a model under test (a replay is named by its run lines)."""
        if spec.kind in ("replay",):
            return self.adapter(spec).name
        return spec.raw

    def suite(self, ref: str) -> Suite:
        s = self.suites.get(ref)
        if s is None:
            s = self.suites[ref] = load_ref(ref)
        return s

    def selected(self, case: Case) -> bool:
        return self.cfg.langs is None or case.lang in self.cfg.langs

    # ---------------------------------------------------------------- answering
    def prefetch(self, spec: ModelSpec, jobs: Sequence[tuple[str, Suite, Case]]) -> None:
        """Answer every (suite_ref, suite, case) of one model in one engine call."""
        ad = self.adapter(spec)
        todo = []
        for ref, s, c in jobs:
            key = (spec.raw, ref, c.id)
            if key not in self._answers and key not in self._consumed:
                self._consumed.add(key)  # answered once per process, even when listed again
                todo.append((ref, s, c))
        if not todo:
            return
        requests = [build_request(s, c, ad) for _, s, c in todo]
        answers = run_requests(ad, requests, self.engine_settings)
        for (ref, _s, c), req, ans in zip(todo, requests, answers, strict=True):
            self._answers[(spec.raw, ref, c.id)] = ans
            self._requests[(spec.raw, ref, c.id)] = req

    def result_for(self, spec: ModelSpec, ref: str, suite: Suite, case: Case) -> CaseResult:
        """Evaluate one item; raises ModelError/MetricError (an item error) when there is no answer."""
        key = (spec.raw, ref, case.id)
        if key not in self._answers:
            self.prefetch(spec, [(ref, suite, case)])
        ans = self._answers.pop(key)
        req = self._requests.pop(key)
        if isinstance(ans, BaseException):
            raise ans if isinstance(ans, MirageError) else ModelError(f"{type(ans).__name__}: {ans}")
        th, _ = self.suite_rules(suite)
        ans = ans.with_model(self.model_name(spec)) if ans.model != self.model_name(spec) else ans
        return evaluate(req, ans, self.metrics, self.metric_names(suite), th, suite_ref=ref)

    # ---------------------------------------------------------------- suite statistics
    def note_collected(self, pairs: Sequence[tuple[str, Case]]) -> None:
        self._collected: dict[str, dict[str, Case]] = defaultdict(dict)
        for ref, case in pairs:
            self._collected[ref][case.id] = case

    def stats_lines(self) -> list[str]:
        """Per-language statistics of the collected cases; sigma from this run's results when present."""
        collected = getattr(self, "_collected", None)
        if not self.cfg.suite_stats or collected is None:
            return []
        from .report.stats import stats_lines, suite_stats

        sigma: dict[tuple[str, str], float] = {}
        if self.results:
            gated = {r.metric for rules in (self.suite_rules(self.suite(ref))[1] for ref in collected) for r in rules}
            vals: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
            for res in self.results.values():
                for m in gated:
                    v = res.metrics.get(m)
                    if v is not None:
                        vals[(res.suite, res.lang, res.model, m)].append(v)
            for (suite, lang, _model, _m), vs in vals.items():
                if len(vs) > 1:
                    sd = statistics.pstdev(vs)
                    sigma[(suite, lang)] = max(sigma.get((suite, lang), 0.0), sd)
        rows = suite_stats([(self.suite(ref), list(cases.values())) for ref, cases in sorted(collected.items())], sigma)
        return stats_lines(rows)

    # ---------------------------------------------------------------- controller
    def add_result(self, nodeid: str, data: Mapping[str, Any]) -> None:
        # keyed by what the result is about, not the node id: two suites outside the rootdir can
        # share node ids ("suite.toml::hi/hi-001[m]") and must not overwrite each other
        res = CaseResult.from_json(data)
        self.results[f"{res.suite_ref}\x00{res.case_id}\x00{res.model}"] = res

    def reference_results(self, results: Sequence[CaseResult]) -> tuple[list[CaseResult], list[str], list[str]]:
        """Scores of the suites' reference systems (run files, reference models) on the selected cases."""
        selected: dict[str, set[str]] = defaultdict(set)
        for r in results:
            selected[r.suite_ref].add(r.case_id)
        out: list[CaseResult] = []
        names: list[str] = []
        problems: list[str] = []
        under_test = {r.model for r in results}
        for ref in sorted(selected):
            try:
                suite = self.suite(ref)
            except MirageError as exc:
                problems.append(f"reference systems of {ref} skipped: {exc}")
                continue
            cases = [c for c in suite.cases if c.id in selected[ref]]
            th, _ = self.suite_rules(suite)
            metric_names = self.metric_names(suite)
            systems: list[tuple[str, ModelAdapter]] = []
            for path in suite.run_files:
                try:
                    from .models.replay import ReplayModel

                    rows = load_run_file(path)
                    for model in sorted({a.model for _, a in rows}):
                        systems.append((model, ReplayModel(path, model=model)))
                except MirageError as exc:
                    problems.append(f"reference run {path} skipped: {exc}")
            for raw in suite.settings.get("reference_models", ()):
                try:
                    systems.append((raw, self.models.create(parse_model_spec(raw))))
                except MirageError as exc:
                    problems.append(f"reference model {raw} of {ref} skipped: {exc}")
            for name, ad in systems:
                if name in under_test:
                    continue  # the model under test is already on the board
                # reference systems are offline and not counted as model calls of this run
                quiet = dataclasses.replace(self.engine_settings, stats=None, progress=False)
                for req, ans in answer_cases(ad, suite, cases, quiet):
                    if isinstance(ans, BaseException):
                        problems.append(f"reference {name} on {req.case.id}: {ans}")
                        continue
                    out.append(evaluate(req, ans.with_model(name), self.metrics, metric_names, th,
                                        suite_ref=ref, reference=True))
                if name not in names:
                    names.append(name)
        return out, names, problems

    def finish(self, models_under_test: Sequence[str], exitstatus: int = 0) -> Outcome:
        results = sorted(self.results.values(), key=lambda r: (r.suite, r.lang, r.case_id, r.model))
        refs, ref_names, problems = self.reference_results(results) if results else ([], [], [])
        allres = results + refs
        hib = {n: self.metrics[n].higher_is_better for n in self.metrics.names}
        board = leaderboard(allres, ref_names, hib)
        gates_by_suite: dict[str, list[Rule]] = {}
        for r in results:
            if r.suite not in gates_by_suite:
                gates_by_suite[r.suite] = self.suite_rules(self.suite(r.suite_ref))[1]
        arena = self.run_arena(results, refs)
        model_values: dict[tuple[str, str, str], dict[str, float]] = defaultdict(dict)
        for (suite, lang, model), (score, rank) in arena.surrogate_scores.items():
            model_values[(suite, lang, model)].update(surrogate_score=score, surrogate_rank=float(rank))
        self._check_model_gates(gates_by_suite, model_values, arena)
        problems += arena.problems
        gates = aggregate_gates(results, gates_by_suite, seed=self.cfg.seed, model_values=model_values)
        outcome = Outcome(board=board, gates=gates, problems=problems, arena=arena)
        if getattr(self, "surrogate_error", None):
            outcome.fatal.append(f"surrogate: {self.surrogate_error}")
        if self.cfg.report is not None or self.cfg.markdown is not None or self.cfg.html is not None:
            suites_meta = []
            for ref in sorted({r.suite_ref for r in results}):
                s = self.suite(ref)
                suites_meta.append({"name": s.name, "mode": s.mode, "languages": sorted({r.lang for r in results if r.suite_ref == ref}),
                                    "cases": len({r.case_id for r in results if r.suite_ref == ref}),
                                    "reference_models": [n for n in ref_names if any(x.model == n and x.suite_ref == ref for x in refs)]})
            extra: dict[str, Any] = {}
            used = sorted({k for r in allres for k in r.metrics})
            # what each metric is, where it comes from and which way is better (e.g. which signal
            # "faithfulness" resolved to), so a dashboard can read the report on its own
            extra["metric_info"] = {
                n: {"higher_is_better": self.metrics[n].higher_is_better, "source": self.metrics[n].source,
                    "description": self.metrics[n].description.split("\n")[0]}
                for n in used if n in self.metrics}
            if arena.arena or arena.judge:
                extra["arena"] = arena.arena
                extra["judge"] = arena.judge
            if arena.surrogate:
                extra["surrogate"] = arena.surrogate
                extra["surrogate_scores"] = [
                    {"suite": su, "lang": la, "model": mo, "surrogate_score": round(sc, 6), "surrogate_rank": rk}
                    for (su, la, mo), (sc, rk) in sorted(arena.surrogate_scores.items())]
            if problems or outcome.fatal:
                extra["problems"] = list(problems)
                extra["fatal"] = list(outcome.fatal)
            if self.collection_errors:
                extra["collection_errors"] = sorted(self.collection_errors, key=lambda e: e["nodeid"])
            failed = bool(exitstatus != 0 or outcome.failed_gates or outcome.fatal or self.collection_errors
                          or any(r.outcome in ("failed", "error") for r in results))
            extra["status"] = "failed" if failed else "passed"
            extra["exitstatus"] = 1 if failed and exitstatus == 0 else exitstatus
            report = build_report(list(models_under_test), suites_meta, allres, board, gates, extra)
            from .report.render import write_extra_reports

            try:
                if self.cfg.report is not None:
                    write_report(self.cfg.report, report)
                    outcome.report_path = self.cfg.report
                outcome.extra_paths = write_extra_reports(report, self.cfg.markdown, self.cfg.html)
            except (OSError, MirageError) as exc:  # the leaderboard is still printed; the run fails
                outcome.fatal.append(f"cannot write the report: {exc}")
        if self.cfg.record is not None:
            lines = [dict(r.run_line) for r in results if r.run_line is not None]
            write_run_lines(self.cfg.record, lines)
            outcome.record_path = self.cfg.record
        self.outcome = outcome
        return outcome

    def engine_lines(self) -> list[str]:
        """Session summary of model calls: hits, misses, calls, retries, errors, tokens."""
        if not self.stats.to_dict().get("requests"):
            return []
        if not any(ad.cache_identity() is not None for ad in self._adapters.values()):
            return []  # offline deterministic systems only: nothing was called or cached
        path = cache_file(self.engine_settings)
        return summary_lines(self.stats, str(path) if path else None)

    # ---------------------------------------------------------------- arena and surrogate
    def judge_complete(self, spec: ModelSpec) -> Any:
        """A ``complete(prompts)`` callable that sends judge prompts through the engine (cached)."""
        ad = self.adapter(spec)
        dummy = Suite(name="judge", root=Path("."), manifest=None, mode="oracle", cases=())

        def complete(prompts: list[str]) -> list[str | Exception]:
            from .arena.workflow import prompt_id

            reqs = [ModelRequest(case=Case(suite="judge", id=prompt_id(p), lang="en", question="", passages=(),
                                           relevant=(), answers=()), suite=dummy, mode="oracle", passages=(),
                                 prompt=p) for p in prompts]
            outs = run_requests(ad, reqs, self.engine_settings)
            return [o.output if isinstance(o, Answer) else o for o in outs]

        return complete

    def run_arena(self, results: Sequence[CaseResult], refs: Sequence[CaseResult]) -> ArenaOutcome:
        """Judge + Bradley-Terry when a judge is configured; surrogate training or scoring."""
        from .arena import workflow

        out = ArenaOutcome()
        if not results:
            return out
        roots = {r.suite: self.suite(r.suite_ref).root for r in results}
        feats = workflow.per_model_features([*results, *refs], self.cfg.surrogate_features)
        if self.cfg.judge is not None:
            cases: dict[tuple[str, str], Case] = {}
            contexts: dict[tuple[str, str], tuple[Passage, ...]] = {}
            answers: dict[tuple[str, str, str], str] = {}
            for r in (*results, *refs):
                if r.run_line is None or r.outcome == "error":
                    continue
                suite = self.suite(r.suite_ref)
                key = (suite.name, r.case_id)
                if key not in cases:
                    cases[key] = suite.case(r.case_id)
                    if suite.mode == "retrieval" and suite.corpus is not None:
                        by_id = corpus_map(suite.corpus)
                        contexts[key] = tuple(by_id[i] for i in cases[key].relevant if i in by_id)
                answers[(suite.name, r.case_id, r.model)] = str(r.run_line.get("output", ""))
            models = sorted({m for (_s, _c, m) in answers})
            try:
                groups = workflow.judge_and_fit(self.judge_complete(self.cfg.judge), cases, answers, models,
                                                per_group=self.cfg.judge_queries, seed=self.cfg.seed,
                                                order=self.cfg.judge_order, tournaments=self.cfg.tournaments,
                                                contexts=contexts or None, out=out)
            except MirageError as exc:
                out.problems.append(f"arena not computed: {exc}")
                return out
            if self.cfg.train_surrogate:
                workflow.train(groups, feats, roots, feature_names=self.cfg.surrogate_features,
                               judge=self.cfg.judge.raw, seed=self.cfg.seed, tournaments=self.cfg.tournaments, out=out)
                if not out.saved:
                    self.surrogate_error = ("--mirage-train-surrogate was given but no surrogate was trained and "
                                            "saved (see the problems above)")
                return out
        under_test = sorted({r.model for r in results})
        try:
            workflow.apply(feats, roots, under_test, out)
        except MirageError as exc:
            self.surrogate_error = str(exc)
        return out

    def _check_model_gates(self, gates_by_suite: Mapping[str, Sequence[Rule]],
                           model_values: Mapping[tuple[str, str, str], Mapping[str, float]],
                           arena: ArenaOutcome) -> None:
        """A gate on a model-level metric with no value (no surrogate) is an explicit error."""
        for suite, rules in gates_by_suite.items():
            for rule in rules:
                if self.metrics[rule.metric].scope != "model":
                    continue
                if not any(k[0] == suite and rule.metric in v for k, v in model_values.items()):
                    reason = getattr(self, "surrogate_error", None) or (
                        f"no trained surrogate next to suite {suite!r}: train one with --mirage-judge SPEC "
                        "--mirage-train-surrogate")
                    arena.problems.append(f"gate {rule.expr!r} ({rule.source}) cannot be evaluated: {reason}")

    def close(self) -> None:
        for ad in self._adapters.values():
            try:
                ad.close()
            except Exception as exc:  # closing must not hide the run's result, but is reported
                print(f"pytest-mirage: closing model {ad.name!r} failed: {type(exc).__name__}: {exc}", file=sys.stderr)


def _unknown(registry: MetricRegistry, name: str) -> str:
    try:
        registry[name]
    except ConfigError as exc:
        return str(exc)
    return ""
