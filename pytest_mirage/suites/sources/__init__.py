"""Suites built from real public formats: MIRACL files and the MIRAGE-Bench dataset export.

Two ways in, both giving oracle-mode cases validated like case lines:

* :func:`load_source_spec` for ``--mirage-suite`` values (``miracl:DIR?lang=hi...``,
  ``mirage-export:FILE.jsonl``); relative paths are relative to the current directory.
* a ``suite.toml`` whose ``[source]`` table (or ``[suite] source``) points at these formats; the
  loader (:mod:`..loader`) calls :func:`source_from_decl` and :func:`cases_from_source`, so the
  manifest's prompt, thresholds, gates, runs and reference models apply as in folder suites.

One module per format: :mod:`.spec` (spec strings and source values), :mod:`.miracl`,
:mod:`.mirage_export`.
"""

from __future__ import annotations

from pathlib import Path

from ...errors import SuiteError
from ..manifest import DEFAULT_K, SourceDecl
from ..model import Case, Suite
from ..paths import Confinement
from ..problems import Problems
from .miracl import miracl_cases, miracl_file, read_corpus, read_qrels, read_topics
from .mirage_export import ParsedPrompt, export_cases, parse_mirage_prompt
from .spec import (
    MIRACL_VERSION,
    SOURCE_KINDS,
    MiraclSource,
    MirageExportSource,
    Source,
    Where,
    parse_spec,
    source_from_values,
)

__all__ = [
    "MIRACL_VERSION", "SOURCE_KINDS", "MiraclSource", "MirageExportSource", "ParsedPrompt", "Source",
    "cases_from_source", "decl_where", "load_source_spec", "miracl_file", "parse_mirage_prompt", "parse_spec", "read_corpus",
    "read_qrels", "read_topics", "source_from_decl",
]


def cases_from_source(src: Source, suite_name: str, where: Where, problems: Problems) -> tuple[Case, ...]:
    """The cases of a source, sorted by (language, id); problems are recorded."""
    if isinstance(src, MiraclSource):
        return miracl_cases(src, suite_name, where, problems)
    return export_cases(src, suite_name, where, problems)


def decl_where(decl: SourceDecl, manifest: Path) -> Where:
    """``path:line`` of a source key in the manifest (the table's or spec's line when not written)."""
    def where(key: str) -> str:
        loc = decl.values.get(key)
        return f"{manifest}:{loc.line if loc is not None else decl.line}"

    return where


def source_from_decl(decl: SourceDecl, manifest: Path, problems: Problems,
                     trusted: tuple[Path, ...] = ()) -> Source | None:
    """The source a manifest points at; paths are relative to the suite folder, and must resolve
    inside it or inside one of the ``trusted`` paths (resolved; the user's ``--mirage-trusted-path``)."""
    root = manifest.parent
    where = decl_where(decl, manifest)
    confine = Confinement(root, trusted, decl.label)
    if decl.spec is not None:
        try:
            kind, path, params = parse_spec(decl.spec, decl.label)
        except SuiteError as exc:  # the spec's own message, placed at the manifest line
            problems.add(where("source"), str(exc))
            return None
        if "name" in params:
            problems.add(where("name"), f"{decl.label}: name= is not used here; the suite name is [suite] name")
            return None
        return source_from_values(kind, {"path": path, **params}, root, where, problems, confine)
    assert decl.kind is not None
    path_key = "dir" if decl.kind == "miracl" else "path"
    values = {k: v.value for k, v in decl.values.items() if k != path_key}
    values["path"] = decl.values[path_key].value if path_key in decl.values else None
    return source_from_values(decl.kind, values, root, where, problems, confine)


def load_source_spec(spec: str) -> Suite:
    """Load ``miracl:DIR?lang=hi...`` or ``mirage-export:FILE.jsonl[?lang=hi]`` (a ``--mirage-suite`` value).

    Raises SuiteError listing every problem (``path:line: ...``).
    """
    kind, path, params = parse_spec(spec)
    label = f"--mirage-suite {spec!r}"
    problems = Problems()

    def where(key: str) -> str:
        return label

    src = source_from_values(kind, {"path": path, **params}, None, where, problems)
    problems.raise_if_any()
    assert src is not None
    name = src.name or src.default_name
    cases = cases_from_source(src, name, where, problems)
    if not cases and not problems.count:
        problems.add(label, "no cases: no query has a relevant passage")
    problems.raise_if_any()
    root = src.dir if isinstance(src, MiraclSource) else src.path.parent
    return Suite(name=name, root=root, manifest=None, mode="oracle", cases=cases, description=src.describe(),
                 settings={"k": DEFAULT_K, "reference_models": ()})
