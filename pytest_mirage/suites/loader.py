"""Load and validate suite folders (``suite.toml`` + JSONL files).

Validation happens once, here, at the file boundary. Every problem is reported as
``path:line: field: found ...; expected ...`` and all problems of a suite are reported together.
"""

from __future__ import annotations

import json
import re
import tomllib
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import MirageWarning, SuiteError
from ..langcodes import check_lang
from .model import Case, Passage, Suite

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_BAD_ID_CHARS = re.compile(r"[\s\[\],;，、]")
MANIFEST = "suite.toml"
MAX_REPORTED = 25

SUITE_KEYS = {"name", "description", "mode", "cases", "corpus", "runs", "source", "k", "reference_models"}
TOP_KEYS = {"suite", "prompt", "thresholds", "gates", "source"}
PROMPT_KEYS = {"template"}
CASE_KEYS = {"id", "lang", "question", "passages", "relevant", "answers", "meta"}
PASSAGE_KEYS = {"id", "text", "title", "doc", "lang"}
CORPUS_KEYS = {"id", "doc", "text", "title", "lang"}


class _Problems:
    """Collects problems so a user sees all of them at once, not one per run."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.count = 0

    def add(self, where: str, message: str) -> None:
        self.count += 1
        if len(self.items) < MAX_REPORTED:
            self.items.append(f"{where}: {message}")

    def raise_if_any(self, suite_path: Path) -> None:
        if not self.items:
            return
        more = f"\n... and {self.count - len(self.items)} more problems" if self.count > len(self.items) else ""
        raise SuiteError("\n".join(self.items) + more)


def _warn(where: str, message: str) -> None:
    warnings.warn(MirageWarning(f"{where}: {message}"), stacklevel=3)


def _key_line(text: str, key: str) -> int | None:
    """Best-effort line number of a TOML key (tomllib gives no positions)."""
    pat = re.compile(rf'^\s*"?{re.escape(key)}"?\s*=', re.M)
    m = pat.search(text)
    return text.count("\n", 0, m.start()) + 1 if m else None


def _check_reference_model(spec: str) -> str | None:
    """Reference systems must be offline and deterministic: extractive or a control."""
    from ..errors import did_you_mean
    from ..models.control import CONTROLS

    kind, _, arg = spec.partition(":")
    kind = kind.split("?")[0]
    if kind == "extractive":
        return None
    if kind == "control":
        arg = arg.split("?")[0]
        if arg in CONTROLS:
            return None
        names = [f"control:{c}" for c in CONTROLS]
        return f"found {spec!r}; expected one of {', '.join(names)}.{did_you_mean(spec, names)}"
    return (f"found {spec!r}; reference models are offline systems (extractive, control:NAME); record "
            "other systems once with --mirage-record and list the file under runs")


def iter_jsonl(path: Path, problems: _Problems) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line; problems are recorded, not raised."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        problems.add(str(path), f"cannot read file: {exc.strerror}")
        return
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]  # a UTF-8 byte-order mark (Windows editors) is not part of the first line
    for lineno, bline in enumerate(raw.split(b"\n"), start=1):
        if not bline.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            line = bline.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.add(where, f"not valid UTF-8 (byte {exc.start}: {bline[exc.start:exc.start + 4]!r}); "
                         "save the file as UTF-8")
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.add(where, f"invalid JSON at column {exc.colno}: {exc.msg}; expected one JSON object per line")
            continue
        if not isinstance(obj, dict):
            problems.add(where, f"found a JSON {type(obj).__name__}, expected a JSON object per line")
            continue
        yield lineno, obj


def _expand(root: Path, patterns: Any, field_name: str, manifest: Path, text: str,
            problems: _Problems, required: bool) -> list[Path]:
    if patterns is None:
        if required:
            problems.add(f"{manifest}:{_key_line(text, 'name') or 1}",
                         f"[suite] {field_name}: missing; expected a file or glob (or a list of them) relative to the suite folder")
        return []
    if isinstance(patterns, str):
        patterns = [patterns]
    if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
        problems.add(f"{manifest}:{_key_line(text, field_name)}",
                     f"[suite] {field_name}: found {patterns!r}; expected a string or a list of strings")
        return []
    out: list[Path] = []
    for pat in patterns:
        matches = sorted(root.glob(pat)) if any(ch in pat for ch in "*?[") else [root / pat]
        matches = [m for m in matches if m.is_file()]
        if not matches and (required or not any(ch in pat for ch in "*?[")):
            problems.add(f"{manifest}:{_key_line(text, field_name)}",
                         f"[suite] {field_name}: {pat!r} matches no file under {root}")
        out.extend(matches)
    return out


def _str_field(obj: Mapping[str, Any], key: str, where: str, problems: _Problems,
               required: bool = True, nonempty: bool = True) -> str | None:
    if key not in obj:
        if required:
            problems.add(where, f"field '{key}' is missing; expected a string")
        return None
    val = obj[key]
    if not isinstance(val, str):
        problems.add(where, f"field '{key}': found {type(val).__name__} {val!r:.60}, expected a string")
        return None
    if nonempty and not val.strip():
        problems.add(where, f"field '{key}' is empty; expected a non-empty string")
        return None
    return val


def _passage(obj: Any, where: str, label: str, problems: _Problems, keys: set[str]) -> Passage | None:
    if not isinstance(obj, dict):
        problems.add(where, f"{label}: found {type(obj).__name__}, expected an object {{id, text, title?}}")
        return None
    unknown = set(obj) - keys
    if unknown:
        _warn(where, f"{label}: unknown keys {sorted(unknown)} ignored (known: {sorted(keys)})")
    pid = _str_field(obj, "id", where, problems)
    text = _str_field(obj, "text", where, problems)
    title = _str_field(obj, "title", where, problems, required=False, nonempty=False)
    doc = _str_field(obj, "doc", where, problems, required=False)
    lang = obj.get("lang")
    if lang is not None and (err := check_lang(lang)):
        problems.add(where, f"{label} field 'lang': {err}")
        lang = None
    if pid is not None and (bad := _BAD_ID_CHARS.search(pid)):
        problems.add(where, f"{label} field 'id': {pid!r} contains {bad.group()!r}; ids are cited as [id] or "
                     "[id1, id2], so they cannot contain whitespace, brackets, commas or semicolons")
        return None
    if pid is None or text is None:
        return None
    return Passage(id=pid, text=text, title=title or None, doc=doc, lang=lang)


def load_corpus(paths: list[Path], problems: _Problems) -> tuple[Passage, ...]:
    chunks: list[Passage] = []
    seen: dict[str, str] = {}
    for path in paths:
        for lineno, obj in iter_jsonl(path, problems):
            where = f"{path}:{lineno}"
            if "doc" not in obj:
                problems.add(where, "field 'doc' is missing; expected the id of the source document of this chunk")
            p = _passage(obj, where, "corpus chunk", problems, CORPUS_KEYS)
            if p is None:
                continue
            if p.id in seen:
                problems.add(where, f"duplicate chunk id {p.id!r} (first at {seen[p.id]}); chunk ids must be unique")
                continue
            seen[p.id] = where
            chunks.append(p)
    return tuple(chunks)


def parse_case(obj: dict[str, Any], where: str, suite_name: str, mode: str,
               corpus_ids: Mapping[str, Passage] | None, problems: _Problems) -> Case | None:
    """Validate one case line; returns None (and records problems) when it is unusable."""
    unknown = set(obj) - CASE_KEYS
    if unknown:
        _warn(where, f"unknown case keys {sorted(unknown)} ignored (known: {sorted(CASE_KEYS)})")
    n_before = problems.count
    cid = _str_field(obj, "id", where, problems)
    lang = _str_field(obj, "lang", where, problems)
    if lang is not None and (err := check_lang(lang)):
        problems.add(where, f"field 'lang': {err}")
    question = _str_field(obj, "question", where, problems)

    passages: list[Passage] = []
    raw_p = obj.get("passages", [] if mode == "retrieval" else None)
    if raw_p is None:
        problems.add(where, "field 'passages' is missing; expected a list of {id, text, title?} (the oracle context)")
    elif not isinstance(raw_p, list):
        problems.add(where, f"field 'passages': found {type(raw_p).__name__}, expected a list of objects")
    else:
        ids: set[str] = set()
        for i, po in enumerate(raw_p):
            p = _passage(po, where, f"passages[{i}]", problems, PASSAGE_KEYS)
            if p is None:
                continue
            if p.id in ids:
                problems.add(where, f"passages[{i}]: duplicate passage id {p.id!r} within the case")
            ids.add(p.id)
            passages.append(p)
        if mode == "oracle" and not raw_p:
            problems.add(where, "field 'passages' is empty; oracle-mode cases need the context passages")

    relevant = obj.get("relevant")
    if relevant is None:
        problems.add(where, "field 'relevant' is missing; expected a list of passage/chunk ids judged relevant")
        relevant = []
    elif not isinstance(relevant, list) or not all(isinstance(r, str) for r in relevant):
        problems.add(where, f"field 'relevant': found {relevant!r:.80}, expected a list of id strings")
        relevant = []
    else:
        known = {p.id for p in passages} if mode == "oracle" else set(corpus_ids or {}) | {p.id for p in passages}
        missing = [r for r in relevant if r not in known]
        if missing:
            where_ids = "the case's passages" if mode == "oracle" else "the suite corpus"
            problems.add(where, f"field 'relevant': ids {missing} are not among {where_ids}")
        dup = sorted({r for r in relevant if relevant.count(r) > 1})
        if dup:
            problems.add(where, f"field 'relevant': duplicate ids {dup}")

    answers = obj.get("answers", [])
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        problems.add(where, f"field 'answers': found {answers!r:.80}, expected a list of strings (may be empty)")
        answers = []
    for i, a in enumerate(answers):
        if not any(ch.isalnum() for ch in a):
            problems.add(where, f"field 'answers'[{i}]: found {a!r}; a reference answer needs letters or digits "
                         "(leave the list empty when there is no reference answer)")
    meta = obj.get("meta", {})
    if not isinstance(meta, dict):
        problems.add(where, f"field 'meta': found {type(meta).__name__}, expected an object")
        meta = {}
    if problems.count > n_before or cid is None or lang is None or question is None:
        return None
    lookup = {p.id: p for p in passages}
    if corpus_ids:
        lookup = {**corpus_ids, **lookup}
    rel_docs = tuple(dict.fromkeys(lookup[r].doc_id for r in relevant if r in lookup))
    return Case(suite=suite_name, id=cid, lang=lang, question=question, passages=tuple(passages),
                relevant=tuple(relevant), answers=tuple(a for a in answers if a.strip()), meta=meta,
                source=where, relevant_docs=rel_docs)


def load_cases(paths: list[Path], suite_name: str, mode: str, corpus: tuple[Passage, ...] | None,
               problems: _Problems) -> tuple[Case, ...]:
    corpus_ids = {p.id: p for p in corpus} if corpus else None
    cases: list[Case] = []
    seen: dict[str, str] = {}
    for path in paths:
        for lineno, obj in iter_jsonl(path, problems):
            where = f"{path}:{lineno}"
            case = parse_case(obj, where, suite_name, mode, corpus_ids, problems)
            if case is None:
                continue
            if case.id in seen:
                problems.add(where, f"field 'id': duplicate case id {case.id!r} (first at {seen[case.id]}); ids must be unique in the suite")
                continue
            seen[case.id] = where
            cases.append(case)
    return tuple(sorted(cases, key=lambda c: (c.lang, c.id)))


def load_suite(path: str | Path) -> Suite:
    """Load a suite folder (or its ``suite.toml``); raises SuiteError listing every problem."""
    path = Path(path)
    manifest = path / MANIFEST if path.is_dir() else path
    if not manifest.is_file():
        raise SuiteError(f"no {MANIFEST} here; a suite is a folder with a {MANIFEST} "
                         "(run `python -m pytest_mirage new-suite PATH` for a skeleton)", str(manifest))
    try:
        text = manifest.read_bytes().decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise SuiteError(f"not valid UTF-8 at byte {exc.start}; save the file as UTF-8", str(manifest)) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SuiteError(f"invalid TOML: {exc}", str(manifest)) from None
    return suite_from_manifest(data, manifest, text)


def suite_from_manifest(data: dict[str, Any], manifest: Path, text: str = "") -> Suite:
    root = manifest.parent
    problems = _Problems()

    def where(key: str) -> str:
        return f"{manifest}:{_key_line(text, key) or 1}"

    for key in set(data) - TOP_KEYS:
        _warn(where(key), f"unknown table [{key}] ignored (known: {sorted(TOP_KEYS)})")
    s = data.get("suite")
    if not isinstance(s, dict):
        raise SuiteError("missing [suite] table; expected at least name = \"...\" and cases = [...]", str(manifest))
    for key in set(s) - SUITE_KEYS:
        _warn(where(key), f"[suite] unknown key {key!r} ignored (known: {sorted(SUITE_KEYS)})")
    name = s.get("name")
    if not isinstance(name, str) or not NAME_RE.match(name):
        found = "nothing (the key is missing)" if name is None else repr(name)
        problems.add(where("name"), f"[suite] name: found {found}; expected lowercase letters, digits and '-' "
                     "matching [a-z0-9][a-z0-9-]*")
        name = "invalid"
    mode = s.get("mode", "oracle")
    if mode not in ("oracle", "retrieval"):
        problems.add(where("mode"), f"[suite] mode: found {mode!r}; expected \"oracle\" or \"retrieval\"")
        mode = "oracle"
    description = s.get("description", "")
    k = s.get("k", 3)
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        problems.add(where("k"), f"[suite] k: found {k!r}; expected a positive integer (cut-off of retrieval metrics)")
        k = 3

    refs = s.get("reference_models", [])
    if not isinstance(refs, list) or not all(isinstance(x, str) and x for x in refs):
        problems.add(where("reference_models"), f"[suite] reference_models: found {refs!r}; expected a list of "
                     "model specs, e.g. [\"control:oracle\", \"control:no-citations\"]")
        refs = []
    for spec in refs:
        if err := _check_reference_model(spec):
            problems.add(where("reference_models"), f"[suite] reference_models: {err}")

    source = data.get("source") or s.get("source")
    if source is not None:
        # A manifest that points at a real public format (e.g. MIRACL files): the loader builds the cases.
        from .sources import load_source_suite

        return load_source_suite(source, manifest, data, problems)

    corpus = None
    if mode == "retrieval":
        corpus_paths = _expand(root, s.get("corpus"), "corpus", manifest, text, problems, required=True)
        corpus = load_corpus(corpus_paths, problems)
    elif s.get("corpus") is not None:
        _warn(where("corpus"), "[suite] corpus is ignored in oracle mode")
    case_paths = _expand(root, s.get("cases"), "cases", manifest, text, problems, required=True)
    cases = load_cases(case_paths, name, mode, corpus, problems)
    run_files = _expand(root, s.get("runs"), "runs", manifest, text, problems, required=False) if s.get("runs") else []
    if not cases and not problems.count:
        problems.add(where("cases"), "the suite has no cases; expected at least one case line")

    template, thresholds, gates = _manifest_tail(data, manifest, where, problems)
    problems.raise_if_any(manifest)
    return Suite(name=name, root=root, manifest=manifest, mode=mode, cases=cases,
                 description=str(description), corpus=corpus, run_files=tuple(run_files),
                 template=template, thresholds=thresholds, gates=gates, settings={"k": k, "reference_models": tuple(refs)})


def _manifest_tail(data: dict[str, Any], manifest: Path, where: Any,
                   problems: _Problems) -> tuple[str, dict[str, str], dict[str, str]]:
    prompt = data.get("prompt", {})
    template = "mirage"
    if isinstance(prompt, dict):
        for key in set(prompt) - PROMPT_KEYS:
            _warn(where(key), f"[prompt] unknown key {key!r} ignored")
        t = prompt.get("template", "mirage")
        if isinstance(t, str):
            from ..prompts import check_template

            err = check_template(t, manifest.parent)
            if err:
                problems.add(where("template"), f"[prompt] template: {err}")
            template = t
        else:
            problems.add(where("template"), f"[prompt] template: found {t!r}; expected a string")

    def table(name: str) -> dict[str, str]:
        tab = data.get(name, {})
        out: dict[str, str] = {}
        if not isinstance(tab, dict):
            problems.add(where(name), f"[{name}] must be a table of \"metric\" = \">= value\" entries")
            return out
        from ..rules import parse_rule

        for key, val in tab.items():
            expr = f"{key} {val}" if isinstance(val, str) else None
            if expr is None:
                problems.add(where(key), f"[{name}] {key!r}: found {val!r}; expected a string such as \">= 0.5\"")
                continue
            try:
                parse_rule(expr, gate=(name == "gates"))
            except Exception as exc:
                problems.add(where(key), f"[{name}] {key!r}: {exc}")
                continue
            out[key] = val
        return out

    return template, table("thresholds"), table("gates")
