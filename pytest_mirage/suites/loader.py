"""Load and validate suite folders (``suite.toml`` + JSONL files, or a ``[source]`` of public data).

Validation happens once, here, at the file boundary. Every problem is reported as
``path:line: field: found ...; expected ...`` and all problems of a suite are reported together, as
one :class:`SuiteError`. No input ends in another exception.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ..errors import SuiteError
from .cases import load_cases, load_corpus
from .jsonl import iter_jsonl, other_encoding
from .manifest import (
    BUILTIN_TEMPLATES,
    MANIFEST,
    NAME_RE,
    TEMPLATE_PLACEHOLDERS,
    Manifest,
    parse_manifest,
)
from .model import Case, Passage, Suite
from .paths import expand, outside_problem, relative_problem
from .paths import trusted_paths as trusted
from .problems import Problems
from .runs import match_problem, read_run_lines
from .sources import cases_from_source, decl_where, source_from_decl

__all__ = ["MANIFEST", "NAME_RE", "iter_jsonl", "load_suite"]


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (when it runs) for the duration of the block.

    Loading a large suite allocates hundreds of thousands of objects (parsed JSON, cases, passages)
    that stay alive: the collector's passes over them (a fifth of the load time of a 10,000-case
    suite) can free nothing. It is restarted afterwards, also after an error; left paused if the
    caller had paused it.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def load_suite(path: str | Path, trusted_paths: Sequence[Path] = ()) -> Suite:
    """Load a suite folder (or its ``suite.toml``); raises SuiteError listing every problem.

    ``trusted_paths``: folders (or files) outside the suite folder that its ``[source]`` may read
    (``--mirage-trusted-path`` / ``mirage_trusted_paths``: the user's, never the suite's)."""
    with _gc_paused():
        return _load_suite(Path(path), trusted(trusted_paths))


def _load_suite(path: Path, trusted_paths: tuple[Path, ...]) -> Suite:
    manifest_path = path / MANIFEST if path.is_dir() else path
    if not manifest_path.is_file():
        raise SuiteError(f"no {MANIFEST} here; a suite is a folder with a {MANIFEST} "
                         "(run `python -m pytest_mirage new-suite PATH` for a skeleton)", str(manifest_path))
    problems = Problems()
    m = parse_manifest(manifest_path, problems)
    if m is None:
        problems.raise_if_any()
        raise AssertionError("parse_manifest returned None without a problem")
    root = manifest_path.parent
    corpus: tuple[Passage, ...] | None = None
    rejected: set[str] = set()
    description = m.description
    if m.source is not None:
        src = source_from_decl(m.source, manifest_path, problems, trusted_paths)
        cases: tuple[Case, ...] = ()
        if src is not None:
            cases = cases_from_source(src, m.name, decl_where(m.source, manifest_path), problems)
            description = description or src.describe()
    else:
        if m.mode == "retrieval":
            corpus_paths = expand(root, m.corpus, "[suite] corpus", m.where("suite", "corpus"), problems,
                                  required=True)
            corpus = load_corpus(corpus_paths, problems, rejected)
        case_paths = expand(root, m.cases, "[suite] cases", m.where("suite", "cases"), problems, required=True)
        cases = load_cases(case_paths, m.name, m.mode, corpus, problems, rejected)
    run_files = expand(root, m.runs, "[suite] runs", m.where("suite", "runs"), problems, required=False)
    if not cases and not problems.count:
        where = m.where("source") if m.source is not None else m.where("suite", "cases")
        problems.add(where, "the suite has no cases; expected at least one case line" if m.source is None
                     else "no cases: no query has a relevant passage")
    _check_template(m, problems)
    cases_ok = problems.count == 0
    suite = Suite(name=m.name, root=root, manifest=manifest_path, mode=m.mode, cases=cases,
                  description=description, corpus=corpus, run_files=tuple(run_files), template=m.template,
                  thresholds=m.thresholds, gates=m.gates,
                  settings={"k": m.k, "reference_models": m.reference_models, "scoring": m.scoring,
                            "judges": m.judges, "judges_where": m.where("judges")},
                  rules=m.rules)
    if cases_ok:
        _check_rule_languages(m, cases, problems)
        _check_runs(suite, problems)
    problems.raise_if_any()
    return suite


def _check_template(m: Manifest, problems: Problems) -> None:
    """A template file must be inside the suite folder, UTF-8, with the placeholders."""
    name = m.template
    where = m.where("prompt", "template")
    if name in BUILTIN_TEMPLATES:
        return
    label = "[prompt] template"
    if (err := relative_problem(name)) is not None:
        problems.add(where, f"{label}: {err}")
        return
    path = m.root / name
    if not path.is_file():
        problems.add(where, f"{label}: found {name!r}; expected a built-in template "
                     f"({', '.join(BUILTIN_TEMPLATES)}) or a file relative to the suite folder")
        return
    if (err := outside_problem(m.root, path)) is not None:
        problems.add(where, f"{label}: {err}")
        return
    try:
        raw = path.read_bytes()
    except OSError as exc:
        problems.add(where, f"{label}: cannot read {path}: {exc.strerror or exc}")
        return
    if (enc := other_encoding(raw)) is not None:
        problems.add(f"{path}:1", f"the template is {enc}; save it as UTF-8 (named by {label} at {where})")
        return
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        problems.add(f"{path}:{line}", f"not valid UTF-8 (byte {exc.start}: {raw[exc.start:exc.start + 4]!r}); "
                     f"save the template as UTF-8 (named by {label} at {where})")
        return
    if b"\x00" in raw:
        line = raw.count(b"\n", 0, raw.index(b"\x00")) + 1
        problems.add(f"{path}:{line}", f"NUL byte in the template; expected a text file (named by {label} at {where})")
        return
    missing = ["{{" + p + "}}" for p in TEMPLATE_PLACEHOLDERS if "{{" + p + "}}" not in text]
    if missing:
        problems.add(where, f"{label}: {name!r} lacks the placeholders {missing}")


def _check_rule_languages(m: Manifest, cases: tuple[Case, ...], problems: Problems) -> None:
    """A rule on a language the suite has no case in could never be evaluated: an error unless optional."""
    langs = sorted({c.lang for c in cases})
    for rule in m.rules:
        if rule.lang is None or rule.lang in langs or rule.optional:
            continue
        kind = "gate" if rule.gate else "threshold"
        problems.add(rule.source, f"[{rule.table}] {rule.key!r}: the suite has no case in language {rule.lang!r} "
                     f"(its languages: {', '.join(langs)}), so this {kind} could never be checked; fix the "
                     f"language, or mark the rule optional with a '?' after its key: \"{rule.key}?\"")


def _check_runs(suite: Suite, problems: Problems) -> None:
    """Reference runs listed in the manifest parse and belong to this suite."""
    for path in suite.run_files:
        lines = read_run_lines(path, problems)
        if (found := match_problem(lines, suite)) is not None:
            line, message = found
            problems.add(f"{path}:{line}", message)
