"""Source values: ``kind:PATH?key=value&...`` specs and ``[source]`` tables -> a validated source.

::

    miracl:DIR?lang=hi[&split=dev][&corpus=PATH][&missing=error|skip][&limit=N][&name=NAME]
    mirage-export:FILE.jsonl[?lang=hi][&limit=N][&name=NAME]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote

from ...errors import SuiteError, did_you_mean
from ...text.langcodes import check_lang
from ..manifest import NAME_RE
from ..paths import Confinement
from ..problems import Problems

SOURCE_KINDS = ("miracl", "mirage-export")
MIRACL_VERSION = "v1.0"
MISSING_MODES = ("error", "skip")
MAX_LIMIT = 10_000_000

# Keys of a source spec's query string (``?k=v&...``) per kind.
SPEC_KEYS: dict[str, tuple[str, ...]] = {
    "miracl": ("lang", "split", "corpus", "missing", "limit", "name"),
    "mirage-export": ("lang", "limit", "name"),
}
_SPLIT_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")

# key -> "where" text of messages (a spec, or the manifest line of the key)
Where = Callable[[str], str]


@dataclass(frozen=True, slots=True)
class MiraclSource:
    """Where the MIRACL files of one language and split are, and how to read them."""

    dir: Path
    lang: str
    split: str = "dev"
    corpus: Path | None = None  # a JSONL(.gz) file or a folder of them; None: DIR/corpus/<lang>.jsonl
    missing: Literal["error", "skip"] = "error"
    limit: int | None = None  # the first N usable queries, in topics-file order
    name: str | None = None
    confine: Confinement | None = None  # a manifest's source: where its files may be (None: a --mirage-suite spec)

    @property
    def default_name(self) -> str:
        return f"miracl-{self.lang}-{self.split.lower()}"

    def describe(self) -> str:
        return f"MIRACL {MIRACL_VERSION} {self.lang} {self.split} (oracle passages = judged passages) from {self.dir}"


@dataclass(frozen=True, slots=True)
class MirageExportSource:
    """A MIRAGE-Bench export (JSONL rows with ``query_id``, ``prompt``, ``positive_ids``, ``negative_ids``)."""

    path: Path
    lang: str | None = None
    limit: int | None = None
    name: str | None = None
    confine: Confinement | None = None  # a manifest's source: where its file may be (None: a --mirage-suite spec)

    @property
    def default_name(self) -> str:
        if self.lang:
            return f"mirage-export-{self.lang}"
        stem = self.path.name.split(".")[0]
        slug = re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-")
        return f"mirage-export-{slug}" if slug else "mirage-export"

    def describe(self) -> str:
        return f"MIRAGE-Bench export {self.path}"


Source = MiraclSource | MirageExportSource


def parse_spec(spec: str, where: str | None = None) -> tuple[str, str, dict[str, str]]:
    """Split ``kind:PATH?key=value&...`` into ``(kind, path, params)``; raises SuiteError.

    ``where`` starts the error messages (default: ``--mirage-suite 'SPEC'``).
    """
    where = where or f"--mirage-suite {spec!r}"
    kind, sep, rest = spec.partition(":")
    if not sep or kind not in SOURCE_KINDS:
        raise SuiteError(f"{where}: unknown source kind {kind!r:.40}; expected one of "
                         f"{', '.join(k + ':PATH' for k in SOURCE_KINDS)}.{did_you_mean(kind, SOURCE_KINDS)}")
    path, _, query = rest.partition("?")
    if not path.strip():
        example = "miracl:DIR?lang=hi" if kind == "miracl" else "mirage-export:FILE.jsonl"
        raise SuiteError(f"{where}: the path is empty; expected e.g. {example}")
    params: dict[str, str] = {}
    known = SPEC_KEYS[kind]
    for part in query.split("&") if query else []:
        key, eq, value = part.partition("=")
        if not eq or not key or not value:
            raise SuiteError(f"{where}: {part!r:.60} is not key=value; expected e.g. ?lang=hi&limit=20")
        if key not in known:
            raise SuiteError(f"{where}: unknown key {key!r:.40} for {kind}; known keys: "
                             f"{', '.join(known)}.{did_you_mean(key, known)}")
        if key in params:
            raise SuiteError(f"{where}: key {key!r} is given twice; give it once")
        params[key] = unquote(value)
    return kind, unquote(path), params


def _path(value: str, base: Path | None) -> Path:
    p = Path(value).expanduser()
    return base / p if base is not None and not p.is_absolute() else p


def _path_value(value: Any, key: str, what: str, where: Where, problems: Problems) -> str | None:
    if not isinstance(value, str) or not value.strip():
        problems.add(where(key), f"{key}: found {value!r:.60}; expected the path of the {what}")
        return None
    if "\x00" in value:
        problems.add(where(key), f"{key}: the path contains a NUL character; expected the path of the {what}")
        return None
    return value


def source_from_values(kind: str, values: Mapping[str, Any], base: Path | None, where: Where,
                       problems: Problems, confine: Confinement | None = None) -> Source | None:
    """Validate the values of a spec or ``[source]`` table; ``values['path']`` is DIR or FILE.

    Relative paths are relative to ``base`` (the suite folder), or to the current directory when
    ``base`` is None (a ``--mirage-suite`` spec, the user's own). With ``confine`` (a manifest's
    source) every path must resolve inside the suite folder or a path the user trusted.
    """
    n_before = problems.count
    path_key = "dir" if kind == "miracl" else "path"
    lang = values.get("lang")
    if lang is not None:
        err = check_lang(lang) if isinstance(lang, str) else f"found {lang!r:.40}; expected a language code such as 'hi'"
        if err:
            problems.add(where("lang"), f"lang: {err}")
            lang = None
    limit = values.get("limit")
    if limit is not None:
        if isinstance(limit, str) and limit.isdigit():
            limit = int(limit)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
            problems.add(where("limit"), f"limit: found {limit!r:.40}; expected a positive integer (the first N "
                         f"queries), at most {MAX_LIMIT}")
            limit = None
    name = values.get("name")
    if name is not None and (not isinstance(name, str) or not NAME_RE.match(name)):
        problems.add(where("name"), f"name: found {name!r:.60}; expected lowercase letters, digits and '-' "
                     "matching [a-z0-9][a-z0-9-]*")
    raw_path = _path_value(values.get("path"), path_key, "folder with the MIRACL topics and qrels files"
                           if kind == "miracl" else "export JSONL file", where, problems)
    if raw_path is None:
        return None
    path = _path(raw_path, base)
    err = confine.problem(path, path_key, raw_path) if confine is not None else None
    refused = err is not None
    if err is not None:
        problems.add(where(path_key), err)

    if kind == "mirage-export":
        if problems.count > n_before:
            return None
        return MirageExportSource(path=path, lang=lang, limit=limit, name=name, confine=confine)

    if lang is None and "lang" not in values:
        problems.add(where("lang"), "lang is missing; expected the MIRACL language code, e.g. lang=hi")
    split = values.get("split", "dev")
    if not isinstance(split, str) or not _SPLIT_RE.match(split) or len(split) > 40:
        problems.add(where("split"), f"split: found {split!r:.60}; expected a MIRACL split name such as dev, train, testB")
        split = "dev"
    corpus = values.get("corpus")
    if corpus is not None:
        corpus = _path_value(corpus, "corpus", "corpus JSONL(.gz) file or folder", where, problems)
    missing = values.get("missing", "error")
    if missing not in MISSING_MODES:
        problems.add(where("missing"), f"missing: found {missing!r:.40}; expected \"error\" (default) or \"skip\" "
                     "(drop judged passages that are not in the corpus)")
        missing = "error"
    if isinstance(corpus, str) and confine is not None \
            and (err := confine.problem(_path(corpus, base), "corpus", corpus)) is not None:
        problems.add(where("corpus"), err)
        corpus = None
    if isinstance(corpus, str) and base is not None and not refused and not Path(corpus).expanduser().is_absolute():
        in_suite, in_dir = _path(corpus, base), _path(corpus, path)
        if not in_suite.exists() and in_dir.exists():
            problems.add(where("corpus"), f"corpus: {in_suite} does not exist (paths are relative to the suite "
                         f"folder); did you mean {in_dir}? Write corpus relative to the suite folder")
    if problems.count > n_before or lang is None:
        return None
    return MiraclSource(dir=path, lang=lang, split=split, corpus=_path(corpus, base) if corpus else None,
                        missing=missing, limit=limit, name=name, confine=confine)

