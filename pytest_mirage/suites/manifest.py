"""The one parser of ``suite.toml``: TOML -> a typed :class:`Manifest` whose every key knows its line.

The schema is closed: an unknown table or key is an error with ``file:line`` and a did-you-mean
(a misspelled ``[gate]`` table would otherwise switch the gates off). Values are type-checked here;
what needs the file system (globs, the template file, source data) is checked by the loader.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from ..defaults import RETRIEVAL_K, SCORING_MODES
from ..errors import MirageError, did_you_mean
from .jsonl import UTF8_BOM, other_encoding
from .model import ManifestRule, Mode
from .problems import Problems
from .tomllines import Path_, key_lines, line_of

T = TypeVar("T")

MANIFEST = "suite.toml"
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
DEFAULT_K = RETRIEVAL_K
MAX_K = 1000  # a cut-off beyond any corpus a suite ships; 10**12 is a typo, not a setting
DEFAULT_TEMPLATE = "mirage"

TABLES = ("suite", "prompt", "thresholds", "gates", "source", "judges")
SUITE_KEYS = ("name", "description", "mode", "cases", "corpus", "runs", "source", "k", "reference_models",
              "scoring")
PROMPT_KEYS = ("template",)
MODES = ("oracle", "retrieval")
# keys of a [source] table per kind (the suite name comes from [suite] name)
SOURCE_TABLE_KEYS: dict[str, tuple[str, ...]] = {
    "miracl": ("kind", "dir", "lang", "split", "corpus", "missing", "limit"),
    "mirage-export": ("kind", "path", "lang", "limit"),
}
OPTIONAL_MARK = "?"
# Names the manifest may use; their implementations live downstream (models/control.py,
# prompts/templates/), which import this package, never the other way round. A unit test keeps the
# lists equal (tests/unit/test_suite_loader.py).
REFERENCE_CONTROLS = ("oracle", "wrong-language", "no-citations", "random-passages")
BUILTIN_TEMPLATES = ("mirage",)
TEMPLATE_PLACEHOLDERS = ("question", "contexts")  # required in a template file; {{language}} is optional


@dataclass(frozen=True, slots=True)
class Located(Generic[T]):
    """A manifest value and the line it was written on."""

    value: T
    line: int


@dataclass(frozen=True, slots=True)
class SourceDecl:
    """The manifest's pointer at public-format data: a ``[source]`` table or a spec string."""

    label: str  # how messages name it: "[source]", "[suite.source]" or "[suite] source"
    line: int
    spec: str | None = None  # "miracl:DIR?lang=hi..." (paths relative to the suite folder)
    kind: str | None = None  # table form: "miracl" or "mirage-export"
    values: Mapping[str, Located[Any]] = field(default_factory=dict)  # table form, without "kind"


@dataclass(frozen=True, slots=True)
class Manifest:
    """A parsed ``suite.toml``. Invalid values were reported and replaced by their defaults."""

    path: Path
    name: str
    description: str
    mode: Mode
    cases: tuple[str, ...] | None
    corpus: tuple[str, ...] | None
    runs: tuple[str, ...] | None
    k: int
    reference_models: tuple[str, ...]
    template: str
    rules: tuple[ManifestRule, ...]
    source: SourceDecl | None
    lines: Mapping[Path_, int]
    scoring: str = "default"
    judges: Mapping[str, Any] | None = None  # the [judges] table as written (validated by the run)

    @property
    def root(self) -> Path:
        return self.path.parent

    def line(self, *path: str | int) -> int:
        """The line of a key path (``line("suite", "name")``), else of its nearest parent, else 1."""
        return line_of(dict(self.lines), path)

    def where(self, *path: str | int) -> str:
        """``path/suite.toml:LINE`` of a key path, for messages."""
        return f"{self.path}:{self.line(*path)}"

    @property
    def thresholds(self) -> dict[str, str]:
        return {r.key: r.value for r in self.rules if not r.gate}

    @property
    def gates(self) -> dict[str, str]:
        return {r.key: r.value for r in self.rules if r.gate}


# ---------------------------------------------------------------------------- reading
def _toml_error_line(message: str, text: str) -> int:
    m = re.search(r"\(at line (\d+), column \d+\)", message)
    if m:
        return int(m.group(1))
    return max(1, text.count("\n") + (0 if text.endswith("\n") else 1))  # "at end of document"


def _deepest_line(text: str) -> int:
    """The line of the longest run of opening brackets (where a too-deeply nested value starts)."""
    best = max(re.finditer(r"[\[{][\s\[{]*", text), key=lambda m: m.group().count("[") + m.group().count("{"),
               default=None)
    return text.count("\n", 0, best.start()) + 1 if best else 1


def read_manifest_text(path: Path, problems: Problems) -> tuple[str, dict[str, Any]] | None:
    """Decode and parse the TOML of a manifest; None (with the problem recorded) when it cannot be read."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        problems.add(f"{path}:1", f"cannot read file: {exc.strerror or exc}")
        return None
    if (enc := other_encoding(raw)) is not None:
        problems.add(f"{path}:1", f"the file is {enc}; save it as UTF-8")
        return None
    raw = raw.removeprefix(UTF8_BOM)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        problems.add(f"{path}:{line}", f"not valid UTF-8 (byte {exc.start}: {raw[exc.start:exc.start + 4]!r}); "
                     "save the file as UTF-8")
        return None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", str(exc))
        problems.add(f"{path}:{_toml_error_line(str(exc), text)}", f"invalid TOML: {msg}; see docs/suite-format.md")
        return None
    except RecursionError:
        problems.add(f"{path}:{_deepest_line(text)}", "invalid TOML: a value is nested too deeply to read")
        return None
    return text, data


# ---------------------------------------------------------------------------- schema helpers
def _suggest(name: str, choices: Sequence[str], fmt: str = "{}") -> str:
    close = difflib.get_close_matches(name, list(choices), n=2, cutoff=0.6)
    return f" Did you mean: {', '.join(fmt.format(c) for c in close)}?" if close else ""


def _type_name(value: Any) -> str:
    names = {str: "a string", int: "an integer", float: "a number", bool: "a boolean", list: "an array",
             dict: "a table"}
    return names.get(type(value), type(value).__name__)


class _Reader:
    """Reads one manifest's values, recording each problem at the line of its key."""

    def __init__(self, path: Path, lines: dict[Path_, int], problems: Problems) -> None:
        self.path = path
        self.lines = lines
        self.problems = problems

    def where(self, *keys: str | int) -> str:
        return f"{self.path}:{line_of(self.lines, keys)}"

    def add(self, keys: tuple[str | int, ...], message: str) -> None:
        self.problems.add(self.where(*keys), message)

    def string(self, table: Mapping[str, Any], keys: tuple[str, ...], label: str) -> str | None:
        value = table.get(keys[-1])
        if value is None:
            return None
        if not isinstance(value, str):
            self.add(keys, f"{label}: found {_type_name(value)} {value!r:.60}; expected a string")
            return None
        return value

    def paths(self, table: Mapping[str, Any], keys: tuple[str, ...], label: str) -> tuple[str, ...] | None:
        value = table.get(keys[-1])
        if value is None:
            return None
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(p, str) for p in value) or not value:
            self.add(keys, f"{label}: found {value!r:.80}; expected a file or glob relative to the suite folder, "
                     "or a non-empty list of them")
            return None
        return tuple(value)


def _check_reference_model(spec: str) -> str | None:
    """Reference systems must be offline and deterministic: extractive or a control."""
    kind, _, arg = spec.partition(":")
    kind = kind.split("?")[0]
    if kind == "extractive":
        return None
    if kind == "control":
        arg = arg.split("?")[0]
        if arg in REFERENCE_CONTROLS:
            return None
        names = [f"control:{c}" for c in REFERENCE_CONTROLS]
        return f"found {spec!r}; expected one of {', '.join(names)}.{did_you_mean(spec, names)}"
    return (f"found {spec!r:.80}; reference models are offline systems (extractive, control:NAME); record "
            "other systems once with --mirage-record and list the file under runs")


def _unknown_top(r: _Reader, data: Mapping[str, Any]) -> None:
    for key, value in data.items():
        if key in TABLES:
            continue
        if not isinstance(value, dict):
            if key in SUITE_KEYS:
                r.add((key,), f"{key!r} is written before any table header; move it under [suite]")
            else:
                r.add((key,), f"unknown top-level key {key!r}; a manifest has the tables "
                      f"{', '.join(f'[{t}]' for t in TABLES)}.{_suggest(key, TABLES, '[{}]')}".rstrip("."))
            continue
        r.add((key,), f"unknown table [{key}]; expected one of {', '.join(f'[{t}]' for t in TABLES)}."
              f"{_suggest(key, TABLES, '[{}]')}".rstrip(".") + " An unknown table is never ignored: "
              "a misspelled [gates] would switch the gates off")


def _unknown_in(r: _Reader, table: Mapping[str, Any], name: str, known: Sequence[str]) -> None:
    for key in table:
        if key in known:
            continue
        if name == "suite" and key in ("thresholds", "gates"):
            r.add((name, key), f"[suite] unknown key {key!r}: {key} are a table of their own, not a key of [suite] "
                  f"(here they would be ignored). Did you mean the [{key}] table? Write them under a [{key}] header")
            continue
        if name == "suite" and key in ("prompt", "template"):
            r.add((name, key), f"[suite] unknown key {key!r}: the template is set in its own table. Did you mean "
                  "the [prompt] table? Write [prompt] and template = \"...\" under it")
            continue
        r.add((name, key), f"[{name}] unknown key {key!r:.60}; known keys: {', '.join(known)}."
              f"{_suggest(key, known)}".rstrip("."))


# ---------------------------------------------------------------------------- rules
def _rules(r: _Reader, data: Mapping[str, Any]) -> list[ManifestRule]:
    from ..aggregate.expr import is_regression_gate, parse_regression_gate, parse_rule

    out: list[ManifestRule] = []
    seen: dict[tuple[str, str | None, str | None, bool], int] = {}
    for table, gate in (("thresholds", False), ("gates", True)):
        tab = data.get(table)
        if tab is None:
            continue
        if not isinstance(tab, dict):
            r.add((table,), f"[{table}]: found {_type_name(tab)}; expected a table of \"metric\" = \">= value\" "
                  f"entries under a [{table}] header")
            continue
        for key, value in tab.items():
            line = line_of(r.lines, (table, key))
            where = f"{r.path}:{line}"
            if isinstance(value, dict):
                r.problems.add(where, f"[{table}] {key!r}: found a table; a rule key with a dot must be quoted, "
                               f"e.g. \"{key}.mean\" = \">= 0.5\"")
                continue
            if not isinstance(value, str):
                r.problems.add(where, f"[{table}] {key!r}: found {_type_name(value)} {value!r:.40}; expected a "
                               "string such as \">= 0.5\"")
                continue
            optional = key.endswith(OPTIONAL_MARK)
            base = key.removesuffix(OPTIONAL_MARK).strip()
            try:
                ident: tuple[str, str | None, str | None, bool]
                if gate and is_regression_gate(f"{base} {value}"):
                    reg = parse_regression_gate(f"{base} {value}", source=where)
                    ident = (reg.metric, f"{reg.stat} {reg.direction}", reg.lang, gate)
                    rule_lang = reg.lang
                else:
                    rule = parse_rule(f"{base} {value}", gate=gate, source=where)
                    ident = (rule.metric, rule.stat, rule.lang, gate)
                    rule_lang = rule.lang
            except MirageError as exc:
                r.problems.add(where, f"[{table}] {key!r}: {exc}")
                continue
            if ident in seen:
                r.problems.add(where, f"[{table}] {key!r}: the same rule as line {seen[ident]} (one would silently "
                               "override the other); keep one")
                continue
            seen[ident] = line
            out.append(ManifestRule(gate=gate, key=base, value=value, line=line, manifest=r.path,
                                    optional=optional, lang=rule_lang))
    return out


# ---------------------------------------------------------------------------- source
def _source(r: _Reader, data: Mapping[str, Any], suite: Mapping[str, Any]) -> SourceDecl | None:
    decls: list[tuple[tuple[str, ...], Any, str]] = []
    if "source" in data:
        decls.append((("source",), data["source"], "[source]" if isinstance(data["source"], dict) else "source"))
    if "source" in suite:
        label = "[suite.source]" if isinstance(suite["source"], dict) else "[suite] source"
        decls.append((("suite", "source"), suite["source"], label))
    if not decls:
        return None
    if len(decls) > 1:
        r.add(decls[1][0], f"the source is given twice ({decls[0][2]} at line {line_of(r.lines, decls[0][0])} and "
              f"{decls[1][2]}); keep one")
    keys, value, label = decls[0]
    line = line_of(r.lines, keys)
    if isinstance(value, str):
        return SourceDecl(label=label, line=line, spec=value)
    if not isinstance(value, dict):
        r.add(keys, f"{label}: found {_type_name(value)} {value!r:.60}; expected a [source] table with kind = "
              "\"miracl\" or \"mirage-export\", or a spec string such as \"miracl:DIR?lang=hi\"")
        return None
    kind = value.get("kind")
    if not isinstance(kind, str) or kind not in SOURCE_TABLE_KEYS:
        found = "nothing (the key is missing)" if kind is None else repr(kind)
        r.add((*keys, "kind"), f"{label} kind: found {found}; expected one of "
              f"{', '.join(repr(k) for k in SOURCE_TABLE_KEYS)}.{_suggest(str(kind), list(SOURCE_TABLE_KEYS))}"
              .rstrip("."))
        return None
    known = SOURCE_TABLE_KEYS[kind]
    bad = False
    for key in value:
        if key not in known:
            bad = True
            r.add((*keys, key), f"{label} unknown key {key!r:.60} for kind {kind!r}; known keys: {', '.join(known)}."
                  f"{_suggest(key, known)}".rstrip("."))
    if bad:
        return None
    values = {k: Located(v, line_of(r.lines, (*keys, k))) for k, v in value.items() if k != "kind"}
    return SourceDecl(label=label, line=line, kind=kind, values=values)


# ---------------------------------------------------------------------------- entry point
def parse_manifest(path: Path, problems: Problems) -> Manifest | None:
    """Parse and check a ``suite.toml``. Every problem is recorded as ``path:line: ...``.

    Returns None when the file cannot be used at all (unreadable, not TOML, no ``[suite]`` table);
    otherwise a Manifest, in which invalid values were replaced by defaults (their problems recorded).
    """
    read = read_manifest_text(path, problems)
    if read is None:
        return None
    text, data = read
    lines = key_lines(text)
    r = _Reader(path, lines, problems)
    _unknown_top(r, data)
    s = data.get("suite")
    if not isinstance(s, dict):
        if s is None:
            problems.add(f"{path}:1", "missing [suite] table; expected at least a [suite] header with name = \"...\" "
                         "and cases = [...]")
        else:
            r.add(("suite",), f"suite: found {_type_name(s)}; expected a [suite] table")
        return None
    _unknown_in(r, s, "suite", SUITE_KEYS)

    raw_name = s.get("name")
    name = "invalid"
    if isinstance(raw_name, str) and NAME_RE.match(raw_name):
        name = raw_name
    else:
        found = "nothing (the key is missing)" if raw_name is None else f"{raw_name!r:.60}"
        r.add(("suite", "name"), f"[suite] name: found {found}; expected lowercase letters, digits and '-' "
              "matching [a-z0-9][a-z0-9-]*")
    description = r.string(s, ("suite", "description"), "[suite] description") or ""
    mode: Mode = "oracle"
    raw_mode = s.get("mode", "oracle")
    if raw_mode == "retrieval":
        mode = "retrieval"
    elif raw_mode != "oracle":
        r.add(("suite", "mode"), f"[suite] mode: found {raw_mode!r:.60}; expected \"oracle\" or \"retrieval\"")
    k = DEFAULT_K
    raw_k = s.get("k", DEFAULT_K)
    if isinstance(raw_k, int) and not isinstance(raw_k, bool) and 1 <= raw_k <= MAX_K:
        k = raw_k
    else:
        r.add(("suite", "k"), f"[suite] k: found {raw_k!r:.40}; expected an integer from 1 to {MAX_K} (the cut-off "
              "of the retrieval metrics)")
    refs: tuple[str, ...] = ()
    raw_refs = s.get("reference_models", [])
    if not isinstance(raw_refs, list) or not all(isinstance(x, str) and x for x in raw_refs):
        r.add(("suite", "reference_models"), f"[suite] reference_models: found {raw_refs!r:.80}; expected a list of "
              "model specs, e.g. [\"control:oracle\", \"control:no-citations\"]")
    else:
        refs = tuple(raw_refs)
        for spec in refs:
            if err := _check_reference_model(spec):
                r.add(("suite", "reference_models"), f"[suite] reference_models: {err}")

    cases = r.paths(s, ("suite", "cases"), "[suite] cases")
    corpus = r.paths(s, ("suite", "corpus"), "[suite] corpus")
    runs = r.paths(s, ("suite", "runs"), "[suite] runs")
    source = _source(r, data, s)
    has_source = "source" in data or "source" in s
    if has_source:
        for key in ("cases", "corpus"):
            if key in s:
                r.add(("suite", key), f"[suite] {key}: a source suite takes its cases from the source; remove {key}")
        if raw_mode != "oracle":
            r.add(("suite", "mode"), f"[suite] mode: found {raw_mode!r:.60}; source suites are oracle mode (the "
                  "judged passages are the context); remove mode or set mode = \"oracle\"")
    else:
        if "cases" not in s:
            r.add(("suite",), "[suite] cases: missing; expected a file or glob (or a list of them) relative to the "
                  "suite folder")
        if mode == "retrieval" and "corpus" not in s:
            r.add(("suite",), "[suite] corpus: missing; retrieval mode needs the corpus the model retrieves from "
                  "(a file or glob relative to the suite folder)")
        if mode == "oracle" and "corpus" in s:
            r.add(("suite", "corpus"), "[suite] corpus: only retrieval mode uses a corpus (oracle cases carry their "
                  "passages); remove corpus or set mode = \"retrieval\"")

    template = DEFAULT_TEMPLATE
    prompt = data.get("prompt", {})
    if not isinstance(prompt, dict):
        r.add(("prompt",), f"prompt: found {_type_name(prompt)}; expected a [prompt] table with template = \"...\"")
    else:
        _unknown_in(r, prompt, "prompt", PROMPT_KEYS)
        t = r.string(prompt, ("prompt", "template"), "[prompt] template")
        if t is not None:
            template = t
    rules = _rules(r, data)
    scoring = s.get("scoring", "default")
    if scoring not in SCORING_MODES:
        r.add(("suite", "scoring"), f"[suite] scoring: found {scoring!r:.40}; expected \"default\" (the robust "
              "citation parser and language match) or \"mirage\" (MIRAGE-Bench's evaluation code, see "
              "docs/metrics.md)")
        scoring = "default"
    judges = data.get("judges")
    if judges is not None and not isinstance(judges, dict):
        r.add(("judges",), f"judges: found {_type_name(judges)}; expected a [judges] table of name = \"backend\"")
        judges = None
    return Manifest(path=path, name=name, description=description, mode=mode, cases=cases, corpus=corpus,
                    runs=runs, k=k, reference_models=refs, template=template, rules=tuple(rules),
                    source=source, lines=lines, scoring=str(scoring), judges=judges)
