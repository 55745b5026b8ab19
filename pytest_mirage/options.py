"""The option/ini table: each ``--mirage-x`` flag (default None) is paired with a ``mirage_x`` ini key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Option:
    flag: str
    ini: str
    help: str
    kind: str = "string"  # string | list (repeatable flag, linelist ini) | bool | int
    metavar: str | None = None

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


OPTIONS: tuple[Option, ...] = (
    Option("--mirage-model", "mirage_models", "model under test as kind:arg (repeatable); default: extractive. "
           "Kinds: extractive, replay:PATH, control:NAME, openai:MODEL, vllm:MODEL, hf:PATH_OR_NAME, "
           "py:module:callable", "list", "SPEC"),
    Option("--mirage-suite", "mirage_suites", "add a bundled suite by name, a suite folder, or a source such as "
           "miracl:DIR?lang=hi (repeatable)", "list", "NAME|PATH"),
    Option("--mirage-lang", "mirage_lang", "only run cases of these languages (comma-separated ISO codes)",
           "string", "LANGS"),
    Option("--mirage-threshold", "mirage_thresholds", "case-level threshold METRIC[@LANG] OP VALUE (repeatable)",
           "list", "RULE"),
    Option("--mirage-gate", "mirage_gates", "aggregate gate METRIC[.STAT][@LANG] OP VALUE per suite x language "
           "x model (repeatable)", "list", "RULE"),
    Option("--mirage-metrics", "mirage_metrics", "metrics to compute (comma-separated); default: all default "
           "metrics plus those named by thresholds and gates", "string", "NAMES"),
    Option("--mirage-report", "mirage_report", "write the JSON report to PATH", "string", "PATH"),
    Option("--mirage-markdown", "mirage_markdown", "write the leaderboard, arena and gates as Markdown to PATH "
           "(e.g. for a CI job summary)", "string", "PATH"),
    Option("--mirage-html", "mirage_html", "write the same as a self-contained HTML page to PATH", "string", "PATH"),
    Option("--mirage-record", "mirage_record", "write every answer of the models under test to PATH in the "
           "run (replay) format", "string", "PATH"),
    Option("--mirage-seed", "mirage_seed", "seed for bootstrap CIs and sampling (default 0)", "int", "N"),
    Option("--mirage-cache", "mirage_cache", "directory of the answer cache (default: .pytest_cache/mirage)",
           "string", "DIR"),
    Option("--mirage-cache-mode", "mirage_cache_mode", "use | refresh | off | replay-only (default use)",
           "string", "MODE"),
    Option("--mirage-concurrency", "mirage_concurrency", "concurrent requests per API model (default 16)",
           "int", "N"),
    Option("--mirage-openai-base-url", "mirage_openai_base_url", "base URL of an OpenAI-compatible server "
           "(default: $OPENAI_BASE_URL or api.openai.com)", "string", "URL"),
    Option("--mirage-judge", "mirage_judge", "pairwise LLM judge (any model spec, e.g. openai:gpt-4o): judge "
           "sampled pairs of models and fit a Bradley-Terry arena", "string", "SPEC"),
    Option("--mirage-judge-queries", "mirage_judge_queries", "queries judged per suite x language (default 100, "
           "seeded sample)", "int", "N"),
    Option("--mirage-judge-order", "mirage_judge_order", "both (default: each pair judged in both orders) or "
           "random (one seeded order)", "string", "ORDER"),
    Option("--mirage-tournaments", "mirage_tournaments", "bootstrap tournaments of the arena (default 200)",
           "int", "N"),
    Option("--mirage-train-surrogate", "mirage_train_surrogate", "train the surrogate judge from this run's "
           "arena and save it next to each suite (surrogate/<lang>.json)", "bool"),
    Option("--mirage-surrogate-features", "mirage_surrogate_features", "features of the surrogate judge "
           "(comma-separated metric names; default: every metric all models have)", "string", "NAMES"),
    Option("--mirage-suite-stats", "mirage_suite_stats", "print per-language statistics of the collected "
           "suites (MIRAGE Table 1 style) and warnings for thin languages", "bool"),
    Option("--mirage-no-leaderboard", "mirage_no_leaderboard", "do not print the leaderboard", "bool"),
)


def add_options(parser: Any) -> None:
    group = parser.getgroup("mirage", "pytest-mirage: multilingual RAG regression harness")
    for opt in OPTIONS:
        if opt.kind == "list":
            group.addoption(opt.flag, action="append", dest=opt.dest, default=None, metavar=opt.metavar,
                            help=opt.help)
            parser.addini(opt.ini, help=opt.help, type="linelist")
        elif opt.kind == "bool":
            group.addoption(opt.flag, action="store_true", dest=opt.dest, default=None, help=opt.help)
            parser.addini(opt.ini, help=opt.help, type="bool", default=False)
        else:
            group.addoption(opt.flag, action="store", dest=opt.dest, default=None, metavar=opt.metavar,
                            help=opt.help)
            parser.addini(opt.ini, help=opt.help, type="string", default="")


def get(config: Any, flag: str) -> tuple[Any, str]:
    """Value of an option and its source: CLI > ini > None. Returns ``(value, source)``."""
    opt = next(o for o in OPTIONS if o.flag == flag)
    val = config.getoption(opt.dest)
    if val is not None and val != []:
        return val, flag
    ini = config.getini(opt.ini)
    overridden = any(str(o).split("=", 1)[0].strip() == opt.ini
                     for o in (getattr(config.option, "override_ini", None) or ()))
    where = f"-o {opt.ini}" if overridden else f"{opt.ini} in {_ini_name(config)}"
    if opt.kind == "list":
        return (list(ini), where) if ini else (None, "")
    if opt.kind == "bool":
        return (bool(ini), opt.ini) if ini else (None, "")
    if ini not in ("", None):
        return ini, where
    return None, ""


def get_ini(config: Any, flag: str) -> tuple[Any, str]:
    """The ini layer alone (for rules, where CLI and ini layers are merged, not replaced)."""
    opt = next(o for o in OPTIONS if o.flag == flag)
    saved = config.getoption(opt.dest)
    setattr(config.option, opt.dest, None)
    try:
        return get(config, flag)
    finally:
        setattr(config.option, opt.dest, saved)


def _ini_name(config: Any) -> str:
    inipath = getattr(config, "inipath", None)
    return inipath.name if inipath is not None else "ini"
