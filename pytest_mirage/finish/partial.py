"""A shard's *partial report*: what one ``--mirage-shard K/N`` run stored for ``merge``.

A shard answers its share of the cases and keeps, instead of a report: its case results (the
:class:`~pytest_mirage.results.CaseResult` JSON that travels between xdist workers), the judges'
health, the engine's counts, its collection errors and problems, the options as given (values and
sources, :class:`~pytest_mirage.config.options.RawOptions`) with their hash, and every suite's ref and
content hash. ``merge`` (:mod:`.merge`) checks that partials belong together and runs the session
end once over all of them. Pure of pytest.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..config.options import RawOptions
from ..errors import ConfigError
from ..report.model import CollectionError
from ..results import CaseResult
from ..suites.model import Suite
from .junit import JunitCase

PARTIAL_SCHEMA = "pytest-mirage/partial/1"
SKIPPED_DIRS = frozenset({"__pycache__", ".git", ".pytest_cache"})


@dataclass(frozen=True, slots=True)
class SuiteStamp:
    """A suite a shard ran: its name, its ref (manifest path or source spec) and a hash of its files."""

    name: str
    ref: str
    content_hash: str


def suite_content_hash(suite: Suite) -> str:
    """A hash of every file of the suite (manifest, cases, corpus, runs, labels, surrogates), by path
    relative to its folder; a source suite without a folder is hashed by its ref and cases."""
    h = hashlib.sha256()
    files: list[Path] = []
    root = suite.root
    if root.is_dir():
        files = sorted(p for p in root.rglob("*")
                       if p.is_file() and not any(part in SKIPPED_DIRS or part.startswith(".")
                                                  for part in p.relative_to(root).parts))
    elif root.is_file():
        files = [root]
    for p in files:
        h.update(str(p.relative_to(root) if p != root else p.name).encode("utf-8") + b"\0")
        with p.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        h.update(b"\0")
    if not files:  # no folder: what was loaded
        for c in suite.cases:
            h.update(json.dumps([c.id, c.lang, c.question, [p.id for p in c.passages]], ensure_ascii=False)
                     .encode("utf-8"))
    return "sha256:" + h.hexdigest()


@dataclass(frozen=True)
class Partial:
    """One shard's stored run (see module doc); ``to_json``/``from_json`` are its file format."""

    shard: tuple[int, int]
    settings_hash: str
    options: RawOptions
    suites: tuple[SuiteStamp, ...]
    results: tuple[CaseResult, ...]
    collection_errors: tuple[CollectionError, ...] = ()
    problems: tuple[str, ...] = ()
    judge_health: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    engine_stats: Mapping[str, Any] = field(default_factory=dict)
    exitstatus: int = 0
    junit: tuple[JunitCase, ...] = ()  # the shard's case items for the merge's --junitxml
    arena_judgments: tuple[Mapping[str, Any], ...] = ()  # --mirage-judge: the matchups this shard judged
    arena_judge: Mapping[str, Any] = field(default_factory=dict)  # and the judge's health figures
    rootdir: str = ""  # the shard's rootdir: a merge on another checkout finds the suites below its own
    version: str = __version__

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": PARTIAL_SCHEMA, "version": self.version,
            "shard": {"index": self.shard[0], "count": self.shard[1]},
            "settings_hash": self.settings_hash, "options": self.options.to_json(),
            "suites": [{"name": s.name, "ref": s.ref, "content_hash": s.content_hash} for s in self.suites],
            "results": [r.to_json() for r in sorted(self.results, key=lambda r: r.key)],
            "collection_errors": [{"nodeid": e.nodeid, "message": e.message} for e in self.collection_errors],
            "problems": list(self.problems), "judge_health": {k: dict(v) for k, v in sorted(self.judge_health.items())},
            "engine_stats": dict(self.engine_stats), "exitstatus": self.exitstatus,
            "junit": [c.to_json() for c in sorted(self.junit, key=lambda c: c.nodeid)],
            "arena_judgments": [dict(j) for j in self.arena_judgments], "arena_judge": dict(self.arena_judge),
            "rootdir": self.rootdir,
            "session_gates": "not evaluated: run 'python -m pytest_mirage merge' over every shard",
        }

    def to_bytes(self) -> bytes:
        return (json.dumps(self.to_json(), ensure_ascii=False, indent=1, sort_keys=False) + "\n").encode("utf-8")

    @classmethod
    def from_json(cls, data: Any, where: str) -> Partial:
        """Read a partial back; :class:`ConfigError` names the file and the field."""

        def bad(key: str, found: Any, expected: str) -> ConfigError:
            shown = repr(found) if not isinstance(found, Mapping | list) else type(found).__name__
            return ConfigError(f"{where}: {key}: found {shown[:80]}; expected {expected} (a partial report "
                               f"written by a --mirage-shard K/N run with --mirage-report)")

        if not isinstance(data, Mapping):
            raise bad("the file", data, "a JSON object")
        if data.get("schema") != PARTIAL_SCHEMA:
            raise bad("schema", data.get("schema"), repr(PARTIAL_SCHEMA))
        shard = data.get("shard")
        if not isinstance(shard, Mapping) or not all(isinstance(shard.get(k), int) for k in ("index", "count")) \
                or not 1 <= shard["index"] <= shard["count"]:
            raise bad("shard", shard, '{"index": K, "count": N} with 1 <= K <= N')
        if not isinstance(data.get("settings_hash"), str):
            raise bad("settings_hash", data.get("settings_hash"), "a string")
        try:
            options = RawOptions.from_json(data.get("options"), "options")
        except ValueError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        suites = []
        for i, s in enumerate(_list(data, "suites", bad)):
            if not isinstance(s, Mapping) or not all(isinstance(s.get(k), str) for k in ("name", "ref", "content_hash")):
                raise bad(f"suites[{i}]", s, "{name, ref, content_hash} strings")
            suites.append(SuiteStamp(s["name"], s["ref"], s["content_hash"]))
        results = []
        for i, r in enumerate(_list(data, "results", bad)):
            try:
                results.append(CaseResult.from_json(r))
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise bad(f"results[{i}]", r, f"a case result ({type(exc).__name__}: {exc})") from None
        errors = []
        for i, e in enumerate(_list(data, "collection_errors", bad)):
            if not isinstance(e, Mapping) or not isinstance(e.get("nodeid"), str) or not isinstance(e.get("message"), str):
                raise bad(f"collection_errors[{i}]", e, "{nodeid, message} strings")
            errors.append(CollectionError(e["nodeid"], e["message"]))
        problems = _list(data, "problems", bad)
        if not all(isinstance(p, str) for p in problems):
            raise bad("problems", problems, "a list of strings")
        health = data.get("judge_health", {})
        stats = data.get("engine_stats", {})
        if not isinstance(health, Mapping) or not all(isinstance(v, Mapping) for v in health.values()):
            raise bad("judge_health", health, "a mapping of judge -> counts")
        if not isinstance(stats, Mapping):
            raise bad("engine_stats", stats, "a mapping")
        exitstatus = data.get("exitstatus", 0)
        if not isinstance(exitstatus, int):
            raise bad("exitstatus", exitstatus, "an integer")
        junit = []
        for i, c in enumerate(_list(data, "junit", bad)):
            try:
                junit.append(JunitCase.from_json(c))
            except (KeyError, TypeError, ValueError) as exc:
                raise bad(f"junit[{i}]", c, f"a JUnit test case ({type(exc).__name__}: {exc})") from None
        judgments = _list(data, "arena_judgments", bad)
        if not all(isinstance(j, Mapping) for j in judgments):
            raise bad("arena_judgments", judgments, "a list of judgments")
        judge = data.get("arena_judge", {})
        if not isinstance(judge, Mapping):
            raise bad("arena_judge", judge, "a mapping")
        return cls((shard["index"], shard["count"]), data["settings_hash"], options, tuple(suites), tuple(results),
                   tuple(errors), tuple(problems), dict(health), dict(stats), exitstatus, tuple(junit),
                   tuple(judgments), dict(judge), str(data.get("rootdir", "")), str(data.get("version", "")))

    @classmethod
    def read(cls, path: Path) -> Partial:
        try:
            data = json.loads(path.read_bytes())
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read it ({exc.strerror or exc}); expected a partial report "
                              "written by a --mirage-shard K/N run") from None
        except ValueError as exc:
            raise ConfigError(f"{path}: not JSON ({exc}); expected a partial report written by a "
                              "--mirage-shard K/N run") from None
        return cls.from_json(data, str(path))


def _list(data: Mapping[str, Any], key: str, bad: Any) -> Sequence[Any]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise bad(key, value, "a list")
    return value
