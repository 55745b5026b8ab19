"""What one run is configured with: settings, registries, model adapters, loaded suites and their rules.

One :class:`RunContext` per process (the controller and each xdist worker). Everything here is
created once and read many times; nothing here answers cases or aggregates results.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from dataclasses import dataclass, field, replace

from ..aggregate.expr import (
    RegressionGate,
    Rule,
    is_regression_gate,
    merge_rules,
    parse_regression_gate,
    parse_rule,
    vacuous,
)
from ..config.settings import Settings
from ..engine import EngineSettings, EngineStats
from ..errors import ConfigError, SuiteError, for_judge_model
from ..judges.spec import JudgeSpec, merge_specs, parse_judge_specs
from ..metrics.base import MetricRegistry
from ..models.base import ModelAdapter
from ..models.registry import ModelRegistry, ModelSpec
from ..stats import StatsError
from ..stats.sampling import Sample, sample_cases
from ..suites.model import Case, Suite
from ..suites.resolve import load_ref
from .requests import suite_k

# Local engines load weights: their adapters are created when their first item runs, not at startup.
LAZY_KINDS = frozenset({"hf", "vllm"})


@dataclass(frozen=True, slots=True)
class SuiteRules:
    """A suite's thresholds and gates after precedence (CLI > ini > manifest), its regression gates
    (manifest ones; the CLI/ini ones apply to every suite) and its metric names."""

    thresholds: tuple[Rule, ...]
    gates: tuple[Rule, ...]
    metrics: tuple[str, ...]
    regressions: tuple[RegressionGate, ...] = ()
    judge_metrics: tuple[str, ...] = ()  # computed by the suite's judges


@dataclass
class RunContext:
    """Settings, registries, adapters and suites of one process (see module doc)."""

    settings: Settings
    metrics: MetricRegistry
    models: ModelRegistry
    progress: bool = False
    stats: EngineStats = field(default_factory=EngineStats)
    _adapters: dict[str, ModelAdapter] = field(default_factory=dict)
    _suites: dict[str, Suite] = field(default_factory=dict)
    _names: dict[str, str] = field(default_factory=dict)
    _rules: dict[str, SuiteRules] = field(default_factory=dict)
    _samples: dict[str, Sample] = field(default_factory=dict)
    _judge_specs: dict[str, tuple[JudgeSpec, ...]] = field(default_factory=dict)
    _shards: dict[str, dict[tuple[str, int], int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        s = self.settings
        fixed = s.concurrency if s.source("concurrency") != "default" else None  # None: adaptive models adapt
        self.engine = EngineSettings(cache_dir=s.cache_dir, cache_mode=s.cache_mode, concurrency=fixed,
                                     progress=self.progress, stats=self.stats)

    # ---------------------------------------------------------------- validation at startup
    def validate(self) -> None:
        """Usage errors before any item runs: unknown metrics in rules, unknown model kinds, adapters
        that cannot be created (bad replay file, missing key, unimportable module), clashing names."""
        s = self.settings
        for rule in s.rules_cli_ini:
            if rule.metric not in self.metrics:
                raise ConfigError(f"{rule.source}: {rule.expr!r}: {unknown_metric(self.metrics, rule.metric)}")
            if why := vacuous(rule, self.metrics[rule.metric].bounds):
                raise ConfigError(why)
        for name in s.metrics or ():
            if name not in self.metrics:
                raise ConfigError(f"{s.source('metrics')}: {unknown_metric(self.metrics, name)}")
        for name in s.surrogate_features or ():
            if name not in self.metrics:
                raise ConfigError(f"{s.source('surrogate-features')}: {unknown_metric(self.metrics, name)}")
        self.settings = replace(s, regressions=tuple(self.check_regression(g) for g in s.regressions))
        for spec in s.models:
            self.models.check(spec)
            if spec.kind not in LAZY_KINDS:
                self.adapter(spec)
        if s.judge is not None:
            try:
                self.models.check(s.judge)
                if s.judge.kind not in LAZY_KINDS:
                    self.adapter(s.judge)
            except ConfigError as exc:  # told as the arena judge's, not as --mirage-model's
                raise for_judge_model(exc, f"arena judge ({s.source('judge')})") from None
        if s.judge is not None and (s.judge.kind not in LAZY_KINDS or s.judge_structured == "on"):
            self.arena_judge_mode()  # structured=on for a model that cannot: a usage error now
        names: dict[str, str] = {}
        for spec in s.models:
            name = self.model_name(spec)
            if name in names:
                raise ConfigError(f"--mirage-model {spec.safe_raw!r} and {names[name]!r} are both named {name!r}; "
                                  "results would be mixed: give one of them another name with ?name=... (for a "
                                  "replay: replay:PATH?model=...)")
            names[name] = spec.safe_raw

    def check_regression(self, gate: RegressionGate, suite: str | None = None) -> RegressionGate:
        """A regression gate whose metric is known, checked against the way the metric is better
        (a ``drop`` gate on a lower-is-better metric would gate improvements)."""
        if gate.metric not in self.metrics:
            raise ConfigError(f"{gate.source}: {gate.expr!r}: {unknown_metric(self.metrics, gate.metric)}")
        try:
            return gate.for_metric(self.metrics[gate.metric].higher_is_better, suite=suite)
        except StatsError as exc:
            raise ConfigError(f"{gate.source}: {exc}") from None

    # ---------------------------------------------------------------- models
    def adapter(self, spec: ModelSpec) -> ModelAdapter:
        ad = self._adapters.get(spec.raw)
        if ad is None:
            ad = self._adapters[spec.raw] = self.models.create(spec)
        return ad

    def arena_judge_mode(self) -> tuple[str, str | None]:
        """``(mode, why plain)`` of the arena's pairwise judge: its ``structured`` option against what
        the judge model's adapter can do (see :func:`~pytest_mirage.judges.structured.resolve_mode`)."""
        from ..judges.structured import resolve_mode

        s = self.settings
        if s.judge is None:
            raise ConfigError("no arena judge: add --mirage-judge SPEC")
        where = f"arena judge {s.judge.safe_raw!r} ({s.source('judge')})"
        try:
            adapter = self.adapter(s.judge)
        except ConfigError as exc:  # told as the arena judge's, not as --mirage-model's
            raise for_judge_model(exc, f"arena judge ({s.source('judge')})") from None
        return resolve_mode(s.judge_structured, adapter, kind=s.judge.kind, where=where)

    def model_name(self, spec: ModelSpec) -> str:
        """Display name of a model under test: ``name=`` when given; else a replay is named by its run
        lines, any other model by its spec."""
        if spec.kind == "replay" and "name" not in spec.options:
            return self.adapter(spec).name
        return spec.display_name

    @property
    def called_cacheable_model(self) -> bool:
        return any(ad.cache_identity() is not None for ad in self._adapters.values())

    # ---------------------------------------------------------------- suites
    def suite(self, ref: str) -> Suite:
        s = self._suites.get(ref)
        if s is None:
            s = self._suites[ref] = load_ref(ref, self.settings.trusted_paths)
        return s

    def register_suite(self, suite: Suite, ref: str) -> None:
        """Two different suites with one name would merge their results and gates: an error."""
        first = self._names.setdefault(suite.name, ref)
        if first != ref:
            raise SuiteError(f"suite name {suite.name!r} is already used by {first}; suite names must be unique "
                             f"in a run (rename one in its suite.toml)", ref)
        self.rules(suite)  # unknown metrics in the manifest's rules are this suite's load error

    def registered_suites(self) -> list[tuple[str, Suite]]:
        """(ref, suite) of every suite registered in this run (collected, even with no item here)."""
        return [(ref, self.suite(ref)) for _name, ref in sorted(self._names.items())]

    def ref_of_suite(self, name: str) -> str | None:
        """The ref of the registered suite called ``name`` (None when no such suite is loaded)."""
        return self._names.get(name)

    def selected(self, case: Case) -> bool:
        return self.settings.langs is None or case.lang in self.settings.langs

    def sample(self, suite: Suite) -> Sample | None:
        """The seeded subset of ``--mirage-sample`` (per suite x language; None: every case runs)."""
        s = self.settings
        if s.sample_count is None and s.sample_share is None:
            return None
        cached = self._samples.get(suite.name)
        if cached is None:
            groups: dict[tuple[str, str], list[str]] = defaultdict(list)
            for case in suite.cases:
                if self.selected(case):
                    groups[(suite.name, case.lang)].append(case.id)
            cached = self._samples[suite.name] = sample_cases(groups, count=s.sample_count, share=s.sample_share,
                                                              seed=s.seed)
        return cached

    def run_cases(self, suite: Suite) -> list[Case]:
        """The cases of ``suite`` this run answers: the language filter, then the sample."""
        sample = self.sample(suite)
        return [c for c in suite.cases if self.selected(c) and (sample is None or sample.contains(suite.name, c.id))]

    def shard_of(self, suite: Suite) -> dict[tuple[str, int], int]:
        """Shard (1..N) of every (case id, repeat) this run selects from ``suite`` under
        ``--mirage-shard K/N`` (see :func:`partition`); computed once per suite."""
        s = self.settings
        n = s.shard[1] if s.shard is not None else 1
        cached = self._shards.get(suite.name)
        if cached is None:
            keys = [(c.lang, c.id, r) for c in self.run_cases(suite) for r in range(s.repeat)]
            cached = self._shards[suite.name] = partition(suite.name, keys, n)
        return cached

    def in_shard(self, suite: Suite, case: Case, repeat: int = 0) -> bool:
        """Whether this run's shard answers ``case`` (its repeat ``repeat``): always without a shard."""
        if self.settings.shard is None:
            return True
        return self.shard_of(suite).get((case.id, repeat)) == self.settings.shard[0]

    def rules(self, suite: Suite) -> SuiteRules:
        """Thresholds, gates and metric names of ``suite`` (computed once per suite)."""
        cached = self._rules.get(suite.name)
        if cached is not None:
            return cached
        s = self.settings
        th_manifest = [parse_rule(r.expr, gate=False, source=r.source, optional=r.optional)
                       for r in suite.rules if not r.gate]
        gt_manifest = [parse_rule(r.expr, gate=True, source=r.source, optional=r.optional)
                       for r in suite.rules if r.gate and not is_regression_gate(r.expr)]
        regressions = []
        for r in suite.rules:
            if r.gate and is_regression_gate(r.expr):
                try:
                    gate = parse_regression_gate(r.expr, source=r.source)
                    regressions.append(self.check_regression(gate, suite=suite.name))
                except (StatsError, ConfigError) as exc:
                    raise SuiteError(f"{r.source}: {exc}") from None
        th = merge_rules([th_manifest, s.thresholds_ini, s.thresholds_cli])
        gt = merge_rules([gt_manifest, s.gates_ini, s.gates_cli])
        problems = [f"{r.source}: {r.expr!r}: {unknown_metric(self.metrics, r.metric)}"
                    for r in (*th_manifest, *gt_manifest) if r.metric not in self.metrics]
        problems += [why for r in (*th_manifest, *gt_manifest)
                     if r.metric in self.metrics and (why := vacuous(r, self.metrics[r.metric].bounds))]
        if problems:
            raise SuiteError("\n".join(problems))
        judged = {m for spec in self.judge_specs(suite) for m in spec.metrics}
        unjudged = [r for r in (*th, *gt) if self.metrics[r.metric].scope == "judge" and r.metric not in judged]
        if unjudged:
            raise SuiteError("\n".join(f"{r.source}: {r.expr!r}: {r.metric} is computed by a judge that is not "
                                       f"configured for suite {suite.name!r}; add --mirage-judges "
                                       f"{r.metric}=BACKEND (docs/judges.md) or a [judges] table to its suite.toml"
                                       for r in unjudged))
        base = list(s.metrics) if s.metrics is not None else self.metrics.defaults()
        names = list(dict.fromkeys([*base, *(r.metric for r in (*th, *gt)), *(s.surrogate_features or ())]))
        names += [g.metric for g in (*regressions, *s.regressions) if g.metric not in names]
        rules = SuiteRules(tuple(th), tuple(gt), tuple(self.metrics.case_level(names)), tuple(regressions),
                           tuple(sorted(judged)))
        self._rules[suite.name] = rules
        return rules

    def judge_specs(self, suite: Suite) -> tuple[JudgeSpec, ...]:
        """The suite's metric judges after precedence CLI > ini > its [judges] table, per metric."""
        cached = self._judge_specs.get(suite.name)
        if cached is not None:
            return cached
        layers: list[list[JudgeSpec]] = []
        table = suite.settings.get("judges")
        if table:
            where = str(suite.settings.get("judges_where") or suite.manifest or suite.name)
            try:
                layers.append(parse_judge_specs(table, source=f"[judges] in {where}"))
            except ConfigError as exc:
                raise SuiteError(str(exc)) from None
        layers += [list(self.settings.judges_ini), list(self.settings.judges_cli)]
        by_metric: dict[str, JudgeSpec] = {}
        for layer in layers:
            for spec in layer:
                for metric in spec.metrics:
                    by_metric[metric] = spec
        chosen: list[JudgeSpec] = []
        for spec in by_metric.values():
            if spec not in chosen:
                chosen.append(spec)
        specs = tuple(merge_specs([replace(s, metrics=tuple(m for m in s.metrics if by_metric.get(m) is s))
                                   for s in chosen]))
        self._judge_specs[suite.name] = specs
        return specs

    def scoring(self, suite: Suite) -> str:
        """``default`` or ``mirage`` (MIRAGE-Bench's evaluation code): --mirage-scoring; else ``mirage``
        when the arena's verdicts are imported (--mirage-battles: the features a surrogate learns from
        are then computed as MIRAGE-Bench computed its own); else the suite's."""
        if self.settings.scoring:
            return self.settings.scoring
        if self.settings.battles is not None:
            return "mirage"
        return str(suite.settings.get("scoring") or "default")

    def k(self, suite: Suite) -> int:
        return suite_k(suite)

    # ---------------------------------------------------------------- end
    def close(self) -> None:
        for ad in self._adapters.values():
            try:
                ad.close()
            except Exception as exc:  # closing must not hide the run's result, but is reported
                print(f"pytest-mirage: closing model {ad.name!r} failed: {type(exc).__name__}: {exc}",
                      file=sys.stderr)


def shard_hash(*parts: object) -> str:
    """A stable hash (the same on every machine, Python version and process: no ``hash()``)."""
    import hashlib

    return hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).hexdigest()


def partition(suite: str, keys: list[tuple[str, str, int]], n: int) -> dict[tuple[str, int], int]:
    """Shards 1..``n`` of (case id, repeat) given as ``(lang, case id, repeat)`` keys of ``suite``.

    Per suite x language the keys are sorted by a stable hash of (suite, case id, repeat) and dealt
    round-robin, starting at a shard chosen by the hash of (suite, language): every group's shards
    differ in size by at most one, and the partition depends on nothing but these names (every
    machine and xdist worker computes the same). Every model of a case (of one repeat) is in the
    same shard, so the pairs an arena judges and head-to-head compares are within one shard."""
    groups: dict[str, list[tuple[str, str, int]]] = defaultdict(list)
    for key in keys:
        groups[key[0]].append(key)
    out: dict[tuple[str, int], int] = {}
    for lang, members in sorted(groups.items()):
        start = int(shard_hash(suite, lang)[:12], 16) % n
        ranked = sorted(members, key=lambda k: (shard_hash(suite, k[1], k[2]), k[1], k[2]))
        for i, (_lang, case_id, repeat) in enumerate(ranked):
            out[(case_id, repeat)] = (start + i) % n + 1
    return out


def unknown_metric(registry: MetricRegistry, name: str) -> str:
    """The registry's "Unknown metric ... Did you mean" message for ``name``."""
    try:
        registry[name]
    except ConfigError as exc:
        return str(exc)
    return ""
