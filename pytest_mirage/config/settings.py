"""Settings: every option resolved once, validated, with where each value came from.

Precedence is CLI > ini (``[tool.pytest.ini_options]``, ``-o``) > built-in default; thresholds and
gates merge their layers instead (CLI > ini > suite manifest, per rule key), see
:mod:`pytest_mirage.aggregate.expr`. Every resolved value remembers its source, so a message can say
``--mirage-concurrency: found 0 ...`` or ``mirage_thresholds in pyproject.toml``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import defaults
from ..aggregate.expr import Rule, is_regression_gate, parse_rule
from ..errors import ConfigError, StatsError, did_you_mean
from ..models.options import parse_int
from ..models.registry import ModelSpec, parse_model_spec
from ..text.langcodes import check_lang
from . import options

if TYPE_CHECKING:
    from ..judges.spec import JudgeSpec
from ..aggregate.expr import RegressionGate, parse_regression_gate
from ..stats.sampling import parse_sample

JUDGE_ORDERS = ("both", "random")


@dataclass(frozen=True, slots=True)
class Settings:
    """The resolved settings of one run; ``sources[name]`` says where a value came from."""

    models: tuple[ModelSpec, ...]
    suites: tuple[str, ...] = ()
    langs: frozenset[str] | None = None
    thresholds_cli: tuple[Rule, ...] = ()
    thresholds_ini: tuple[Rule, ...] = ()
    gates_cli: tuple[Rule, ...] = ()
    gates_ini: tuple[Rule, ...] = ()
    regressions: tuple[RegressionGate, ...] = ()  # CLI and ini regression gates (need a baseline)
    metrics: tuple[str, ...] | None = None
    report: Path | None = None
    markdown: Path | None = None
    html: Path | None = None
    record: Path | None = None
    seed: int = defaults.SEED
    cache_dir: Path | None = None
    cache_mode: str = defaults.CACHE_MODE
    concurrency: int = defaults.CONCURRENCY
    suite_stats: bool = False
    leaderboard: bool = True
    judge: ModelSpec | None = None  # the arena's pairwise judge, without its judge option (structured)
    judge_structured: str = "auto"  # the arena judge's structured option: auto, on or off
    battles: Path | None = None  # imported pairwise judgments (--mirage-battles), instead of a live judge
    judge_queries: int = defaults.JUDGE_QUERIES
    judge_order: str = defaults.JUDGE_ORDER
    tournaments: int = defaults.TOURNAMENTS
    train_surrogate: bool = False
    surrogate_features: tuple[str, ...] | None = None
    surrogate_dir: Path | None = None
    force_surrogate: bool = False
    baseline: Path | None = None
    baseline_map: Mapping[str, str] = field(default_factory=dict)  # candidate model -> baseline model
    alpha: float = defaults.ALPHA
    calibration_precision: float = defaults.CALIBRATION_PRECISION
    paired_test: str = defaults.PAIRED_TEST
    repeat: int = defaults.REPEAT
    sample_count: int | None = None
    sample_share: float | None = None
    head_to_head: tuple[str, ...] | None = None
    github: bool = True  # GitHub Actions job summary and annotations when running there
    judges_cli: tuple[JudgeSpec, ...] = ()  # metric judges (--mirage-judges); precedence over ini and suites
    judges_ini: tuple[JudgeSpec, ...] = ()
    scoring: str | None = None  # None: each suite's [suite] scoring (default "default")
    model_defaults: Mapping[str, Any] = field(default_factory=dict)  # session-wide model options (base URL, ...)
    shard: tuple[int, int] | None = None  # (K, N) of --mirage-shard K/N: this run answers shard K of N
    trusted_paths: tuple[Path, ...] = ()  # resolved: where suites' [source] data may be besides their folder
    sources: Mapping[str, str] = field(default_factory=dict)

    def source(self, name: str) -> str:
        return self.sources.get(name, "default")

    @property
    def rules_cli_ini(self) -> tuple[Rule, ...]:
        return (*self.thresholds_cli, *self.thresholds_ini, *self.gates_cli, *self.gates_ini)

    @property
    def writes_reports(self) -> bool:
        return self.report is not None or self.markdown is not None or self.html is not None


def _names(raw: Any) -> tuple[str, ...]:
    return tuple(x.strip() for x in str(raw).split(",") if x.strip())


def _rules(raw: options.Raw | None, gate: bool) -> tuple[Rule, ...]:
    if raw is None:
        return ()
    return tuple(parse_rule(v, gate=gate, source=raw.source) for v in raw.value
                 if str(v).strip() and not (gate and is_regression_gate(str(v))))


def _regressions(raw: options.Raw | None) -> tuple[RegressionGate, ...]:
    if raw is None:
        return ()
    out = []
    for v in raw.value:
        if is_regression_gate(str(v)):
            try:
                out.append(parse_regression_gate(str(v), source=raw.source))
            except StatsError as exc:
                raise ConfigError(f"{raw.source}: {exc}") from None
    return tuple(out)


def _arena_judge(raw: options.Raw, defaults: Mapping[str, Any]) -> tuple[ModelSpec, str]:
    """The arena judge's model spec and its ``structured`` option (``auto`` unless given), which is
    the judge's, not the model's: it is taken out of the spec as LLM judge specs do."""
    from ..judges.spec import parse_structured_mode

    spec = parse_model_spec(str(raw.value), defaults)
    if "structured" not in spec.options:
        return spec, "auto"
    value = spec.options["structured"]
    try:
        mode = parse_structured_mode(value)
    except ValueError as exc:
        raise ConfigError(f"{raw.source} {spec.safe_raw!r}: option structured={value!r}: {exc}") from None
    return replace(spec, options={k: v for k, v in spec.options.items() if k != "structured"}), mode


def _judges(raw: options.Raw | None) -> tuple[JudgeSpec, ...]:
    if raw is None:
        return ()
    from ..judges.spec import parse_judge_specs

    return tuple(parse_judge_specs([str(v) for v in raw.value], source=raw.source))


def parse_precision(raw: options.Raw) -> float:
    try:
        value = float(raw.value)
    except (TypeError, ValueError):
        value = float("nan")
    if not 0.0 < value <= 1.0:
        raise ConfigError(f"{raw.source}: found {raw.value!r}; expected a target precision in (0, 1], e.g. 0.9")
    return value


def parse_alpha(raw: options.Raw) -> float:
    try:
        alpha = float(raw.value)
    except (TypeError, ValueError):
        alpha = float("nan")
    if not 0.0 < alpha < 0.5:
        raise ConfigError(f"{raw.source}: found {raw.value!r}; expected a significance level between 0 and 0.5, "
                          "e.g. 0.05")
    return alpha


def parse_mapping(raw: options.Raw) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in raw.value or ():
        new, sep, old = str(item).partition("=")
        if not sep or not new.strip() or not old.strip():
            raise ConfigError(f"{raw.source}: found {item!r}; expected CANDIDATE=BASELINE, e.g. "
                              "openai:my-model-v2=openai:my-model-v1")
        if new.strip() in out:
            raise ConfigError(f"{raw.source}: {new.strip()!r} is mapped twice")
        out[new.strip()] = old.strip()
    return out


def _choice(raw: options.Raw, choices: tuple[str, ...]) -> str:
    value = str(raw.value)
    if value not in choices:
        raise ConfigError(f"{raw.source}: found {value!r}; expected one of {', '.join(choices)}."
                          f"{did_you_mean(value, choices)}")
    return value


def parse_trusted_paths(raw: options.Raw, rootpath: Any) -> tuple[Path, ...]:
    """``--mirage-trusted-path`` values (relative to the current directory) and ``mirage_trusted_paths``
    lines (relative to the rootdir), resolved; each must exist (a typo would refuse the suite anyway,
    with a less direct message)."""
    out: dict[Path, None] = {}
    for item in raw.value or ():
        text = str(item).strip()
        if not text or "\x00" in text:
            raise ConfigError(f"{raw.source}: found {item!r}; expected a folder (or file) outside a suite folder "
                              "that suites' [source] tables may read")
        p = Path(text).expanduser()
        if not p.is_absolute():
            p = (Path.cwd() if raw.from_cli or rootpath is None else Path(str(rootpath))) / p
        if not p.exists():
            raise ConfigError(f"{raw.source}: {text!r} ({p}) does not exist; expected a folder (or file) that "
                              "suites' [source] tables may read")
        out.setdefault(p.resolve(), None)
    return tuple(out)


def parse_shard(raw: options.Raw) -> tuple[int, int] | None:
    """``K/N`` with 1 <= K <= N (None when not given)."""
    if raw.value in (None, ""):
        return None
    k, sep, n = str(raw.value).strip().partition("/")
    try:
        shard = (int(k), int(n)) if sep else None
    except ValueError:
        shard = None
    if shard is None or not 1 <= shard[0] <= shard[1]:
        raise ConfigError(f"{raw.source}: found {raw.value!r}; expected K/N with 1 <= K <= N (shard K of N), "
                          "e.g. 2/4")
    return shard


# options that may differ between the shards of one run (where each writes, its cache, how fast it
# calls): left out of the settings hash that ``merge`` compares
PER_SHARD = frozenset({"--mirage-report", "--mirage-markdown", "--mirage-html", "--mirage-record",
                       "--mirage-shard", "--mirage-cache", "--mirage-cache-mode", "--mirage-concurrency",
                       "--mirage-github"})


def settings_hash(raw: options.RawOptions) -> str:
    """A hash of every option value and its source that decides what a run computes (all but
    :data:`PER_SHARD`): the shards of one run have the same one."""
    import hashlib
    import json

    data = raw.to_json()
    kept = {layer: {flag: v for flag, v in data[layer].items() if flag not in PER_SHARD} for layer in ("cli", "ini")}
    text = json.dumps(kept, sort_keys=True, ensure_ascii=True, default=str)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def resolve(config: Any) -> Settings:
    """Read every option once; raises ConfigError (a usage error) naming the bad value and its source.

    ``config`` is a pytest config or an :class:`~pytest_mirage.config.options.RawOptions` (the values a
    shard stored, read back by ``merge``): both give the same settings for the same values."""
    sources: dict[str, str] = {}

    def get(flag: str) -> options.Raw:
        raw = options.get(config, flag)
        sources[options.BY_FLAG[flag].name] = raw.source
        return raw

    model_defaults: dict[str, Any] = {}
    base_url = get("--mirage-openai-base-url")
    if base_url.value:
        model_defaults["base_url"] = base_url.value
    concurrency_raw = get("--mirage-concurrency")
    concurrency = parse_int(concurrency_raw.value, concurrency_raw.source, defaults.CONCURRENCY, minimum=1)
    if concurrency_raw.source != "default":  # given: a fixed limit; else adaptive models find theirs
        model_defaults["concurrency"] = concurrency
    specs = tuple(parse_model_spec(m, model_defaults) for m in get("--mirage-model").value)
    seen: set[str] = set()
    for s in specs:
        if s.raw in seen:
            raise ConfigError(f"--mirage-model {s.safe_raw!r} is given twice")
        seen.add(s.raw)

    langs_raw = get("--mirage-lang")
    langs = None
    if langs_raw.value:
        langs = frozenset(_names(langs_raw.value))
        for lang in sorted(langs):
            if err := check_lang(lang):
                raise ConfigError(f"{langs_raw.source}: {err}")

    rules: dict[str, tuple[Rule, ...]] = {}
    for flag, gate in (("--mirage-threshold", False), ("--mirage-gate", True)):
        opt = options.BY_FLAG[flag]
        rules[f"{opt.name}_cli"] = _rules(options.cli_value(config, opt), gate)
        rules[f"{opt.name}_ini"] = _rules(options.ini_value(config, opt), gate)
    gate_opt = options.BY_FLAG["--mirage-gate"]
    regressions = (*_regressions(options.ini_value(config, gate_opt)),
                   *_regressions(options.cli_value(config, gate_opt)))
    baseline = get("--mirage-baseline")
    if regressions and not baseline.value:
        raise ConfigError(f"{regressions[0].source}: {regressions[0].expr!r} compares with a baseline run: add "
                          "--mirage-baseline PATH (a JSON report written by --mirage-report)")
    sample_raw = get("--mirage-sample")
    sample_count = sample_share = None
    if sample_raw.value:
        try:
            sample_count, sample_share = parse_sample(str(sample_raw.value))
        except StatsError as exc:
            raise ConfigError(f"{sample_raw.source}: {exc}") from None
    repeat_raw = get("--mirage-repeat")
    h2h = get("--mirage-head-to-head")
    surrogate_dir = get("--mirage-surrogate-dir")
    scoring = get("--mirage-scoring")

    judge_raw = get("--mirage-judge")
    battles = get("--mirage-battles")
    train = get("--mirage-train-surrogate")
    if judge_raw.value and battles.value:
        raise ConfigError(f"{judge_raw.source} and {battles.source} both give the arena's verdicts; use the "
                          "live judge (--mirage-judge) or the imported judgments (--mirage-battles), not both")
    if train.value and not (judge_raw.value or battles.value):
        raise ConfigError("--mirage-train-surrogate needs a judge: add --mirage-judge SPEC (answers and judge "
                          "calls are cached, so re-running costs nothing) or imported pairwise judgments "
                          "(--mirage-battles FILE)")
    arena_judge = _arena_judge(judge_raw, model_defaults) if judge_raw.value else None
    metrics = get("--mirage-metrics")
    features = get("--mirage-surrogate-features")
    cache = get("--mirage-cache")
    cache_dir = Path(str(cache.value))
    if not cache_dir.is_absolute() and not cache.from_cli:
        root = config.rootpath
        cache_dir = (Path(str(root)) if root is not None else Path.cwd()) / cache_dir  # the default and ini values: rootdir-relative
    seed = get("--mirage-seed")
    jq = get("--mirage-judge-queries")
    tn = get("--mirage-tournaments")

    shard_raw = get("--mirage-shard")
    shard = parse_shard(shard_raw)
    if shard is not None and not get("--mirage-report").value:
        raise ConfigError(f"{shard_raw.source} {shard_raw.value}: a shard writes its partial report to "
                          "--mirage-report PATH (merged later by 'python -m pytest_mirage merge'): add "
                          f"--mirage-report mirage-shard-{shard[0]}-of-{shard[1]}.json")

    def path(flag: str) -> Path | None:
        value = get(flag).value
        return Path(value) if value else None

    return Settings(
        models=specs, suites=tuple(get("--mirage-suite").value or ()), langs=langs,
        thresholds_cli=rules["threshold_cli"], thresholds_ini=rules["threshold_ini"],
        gates_cli=rules["gate_cli"], gates_ini=rules["gate_ini"],
        metrics=_names(metrics.value) if metrics.value else None,
        report=path("--mirage-report"), markdown=path("--mirage-markdown"), html=path("--mirage-html"),
        record=path("--mirage-record"), seed=parse_int(seed.value, seed.source, defaults.SEED),
        cache_dir=cache_dir, cache_mode=_choice(get("--mirage-cache-mode"), defaults.CACHE_MODES),
        concurrency=concurrency, suite_stats=bool(get("--mirage-suite-stats").value),
        leaderboard=not get("--mirage-no-leaderboard").value,
        judge=arena_judge[0] if arena_judge else None, judge_structured=arena_judge[1] if arena_judge else "auto",
        battles=Path(str(battles.value)) if battles.value else None,
        judge_queries=parse_int(jq.value, jq.source, defaults.JUDGE_QUERIES, minimum=1),
        judge_order=_choice(get("--mirage-judge-order"), JUDGE_ORDERS),
        tournaments=parse_int(tn.value, tn.source, defaults.TOURNAMENTS, minimum=defaults.MIN_TOURNAMENTS),
        train_surrogate=bool(train.value),
        surrogate_features=_names(features.value) if features.value else None,
        surrogate_dir=Path(surrogate_dir.value) if surrogate_dir.value else None,
        force_surrogate=bool(get("--mirage-force-surrogate").value),
        regressions=regressions, baseline=Path(baseline.value) if baseline.value else None,
        baseline_map=parse_mapping(get("--mirage-baseline-map")), alpha=parse_alpha(get("--mirage-alpha")),
        calibration_precision=parse_precision(get("--mirage-calibration-precision")),
        paired_test=_choice(get("--mirage-paired-test"), defaults.TEST_METHODS),
        repeat=parse_int(repeat_raw.value, repeat_raw.source, defaults.REPEAT, minimum=1, maximum=1000),
        sample_count=sample_count, sample_share=sample_share,
        head_to_head=_names(h2h.value) if h2h.value else None,
        github=_choice(get("--mirage-github"), ("auto", "off")) == "auto",
        judges_cli=_judges(options.cli_value(config, options.BY_FLAG["--mirage-judges"])),
        judges_ini=_judges(options.ini_value(config, options.BY_FLAG["--mirage-judges"])),
        scoring=_choice(scoring, defaults.SCORING_MODES) if scoring.value else None,
        model_defaults=model_defaults, shard=shard,
        trusted_paths=parse_trusted_paths(get("--mirage-trusted-path"), getattr(config, "rootpath", None)),
        sources=sources,
    )
