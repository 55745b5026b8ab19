"""MirageConfig: every setting resolved once, with precedence CLI > ini > suite manifest > default."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import options
from .errors import ConfigError
from .langcodes import check_lang
from .models.registry import ModelSpec, parse_model_spec
from .thresholds import Rule, parse_rule

CACHE_MODES = ("use", "refresh", "off", "replay-only")
DEFAULT_MODEL = "extractive"


@dataclass(frozen=True, slots=True)
class MirageConfig:
    models: tuple[ModelSpec, ...]
    suites: tuple[str, ...] = ()
    langs: frozenset[str] | None = None
    thresholds_cli: tuple[Rule, ...] = ()
    thresholds_ini: tuple[Rule, ...] = ()
    gates_cli: tuple[Rule, ...] = ()
    gates_ini: tuple[Rule, ...] = ()
    metrics: tuple[str, ...] | None = None
    report: Path | None = None
    markdown: Path | None = None
    html: Path | None = None
    record: Path | None = None
    seed: int = 0
    cache_dir: Path | None = None
    cache_mode: str = "use"
    concurrency: int = 16
    suite_stats: bool = False
    leaderboard: bool = True
    model_defaults: dict[str, Any] = field(default_factory=dict)
    judge: ModelSpec | None = None
    judge_queries: int = 100
    judge_order: str = "both"
    tournaments: int = 200
    train_surrogate: bool = False
    surrogate_features: tuple[str, ...] | None = None

    def rule_names(self) -> set[str]:
        return {r.metric for r in (*self.thresholds_cli, *self.thresholds_ini, *self.gates_cli, *self.gates_ini)}


def _rules(values: list[str] | None, source: str, gate: bool) -> tuple[Rule, ...]:
    out = []
    for v in values or []:
        if v.strip():
            out.append(parse_rule(v, gate=gate, source=source))
    return tuple(out)



def resolve(config: Any) -> MirageConfig:
    """Read flags and ini keys; raises ConfigError (a usage error) naming the bad value."""
    def src_kind(source: str) -> bool:
        return source.startswith("--")

    models_raw, _ = options.get(config, "--mirage-model")
    defaults: dict[str, Any] = {}
    base_url, _ = options.get(config, "--mirage-openai-base-url")
    if base_url:
        defaults["base_url"] = base_url
    concurrency_raw, csrc = options.get(config, "--mirage-concurrency")
    concurrency = _int(concurrency_raw, csrc, 16, minimum=1)
    defaults["concurrency"] = concurrency
    specs = tuple(parse_model_spec(m, defaults) for m in (models_raw or [DEFAULT_MODEL]))
    seen: set[str] = set()
    for s in specs:
        if s.raw in seen:
            raise ConfigError(f"--mirage-model {s.raw!r} is given twice")
        seen.add(s.raw)

    suites_raw, _ = options.get(config, "--mirage-suite")
    langs_raw, lsrc = options.get(config, "--mirage-lang")
    langs = None
    if langs_raw:
        langs = frozenset(x.strip() for x in str(langs_raw).split(",") if x.strip())
        for lang in langs:
            if err := check_lang(lang):
                raise ConfigError(f"{lsrc}: {err}")

    th_raw, th_src = options.get(config, "--mirage-threshold")
    gt_raw, gt_src = options.get(config, "--mirage-gate")
    th_cli = _rules(th_raw, th_src, False) if src_kind(th_src) else ()
    th_ini = _rules(th_raw, th_src, False) if th_raw and not src_kind(th_src) else ()
    gt_cli = _rules(gt_raw, gt_src, True) if src_kind(gt_src) else ()
    gt_ini = _rules(gt_raw, gt_src, True) if gt_raw and not src_kind(gt_src) else ()
    if src_kind(th_src):
        raw, src = options.get_ini(config, "--mirage-threshold")
        th_ini = _rules(raw, src, False)
    if src_kind(gt_src):
        raw, src = options.get_ini(config, "--mirage-gate")
        gt_ini = _rules(raw, src, True)

    metrics_raw, _ = options.get(config, "--mirage-metrics")
    metrics = tuple(x.strip() for x in str(metrics_raw).split(",") if x.strip()) if metrics_raw else None
    report, _ = options.get(config, "--mirage-report")
    record, _ = options.get(config, "--mirage-record")
    markdown, _ = options.get(config, "--mirage-markdown")
    html, _ = options.get(config, "--mirage-html")
    seed_raw, ssrc = options.get(config, "--mirage-seed")
    cache_dir, _ = options.get(config, "--mirage-cache")
    cache_mode, cmsrc = options.get(config, "--mirage-cache-mode")
    cache_mode = cache_mode or "use"
    if cache_mode not in CACHE_MODES:
        raise ConfigError(f"{cmsrc}: found {cache_mode!r}; expected one of {', '.join(CACHE_MODES)}")
    stats, _ = options.get(config, "--mirage-suite-stats")
    no_lb, _ = options.get(config, "--mirage-no-leaderboard")
    judge_raw, _ = options.get(config, "--mirage-judge")
    jq_raw, jqsrc = options.get(config, "--mirage-judge-queries")
    jo_raw, josrc = options.get(config, "--mirage-judge-order")
    if jo_raw and jo_raw not in ("both", "random"):
        raise ConfigError(f"{josrc}: found {jo_raw!r}; expected both or random")
    tn_raw, tnsrc = options.get(config, "--mirage-tournaments")
    train_raw, _ = options.get(config, "--mirage-train-surrogate")
    sf_raw, _ = options.get(config, "--mirage-surrogate-features")
    if train_raw and not judge_raw:
        raise ConfigError("--mirage-train-surrogate needs a judge: add --mirage-judge SPEC (answers and judge "
                          "calls are cached, so re-running costs nothing)")
    root = Path(str(config.rootpath))
    return MirageConfig(
        models=specs, suites=tuple(suites_raw or ()), langs=langs,
        thresholds_cli=th_cli, thresholds_ini=th_ini, gates_cli=gt_cli, gates_ini=gt_ini,
        metrics=metrics, report=Path(report) if report else None,
        markdown=Path(markdown) if markdown else None, html=Path(html) if html else None, record=Path(record) if record else None,
        seed=_int(seed_raw, ssrc, 0), cache_dir=Path(cache_dir) if cache_dir else root / ".pytest_cache" / "mirage",
        cache_mode=cache_mode, concurrency=concurrency, suite_stats=bool(stats), leaderboard=not no_lb,
        model_defaults=defaults,
        judge=parse_model_spec(judge_raw, defaults) if judge_raw else None,
        judge_queries=_int(jq_raw, jqsrc, 100, minimum=1), judge_order=jo_raw or "both",
        tournaments=_int(tn_raw, tnsrc, 200, minimum=10), train_surrogate=bool(train_raw),
        surrogate_features=tuple(x.strip() for x in str(sf_raw).split(",") if x.strip()) if sf_raw else None,
    )


def _int(raw: Any, source: str, default: int, minimum: int | None = None) -> int:
    if raw is None or raw == "":
        return default
    try:
        val = int(raw)
    except (TypeError, ValueError):
        raise ConfigError(f"{source}: found {raw!r}; expected an integer") from None
    if minimum is not None and val < minimum:
        raise ConfigError(f"{source}: found {val}; expected an integer >= {minimum}")
    return val
