"""Frozen value types for suites, cases and passages."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Mode = Literal["oracle", "retrieval"]


@dataclass(frozen=True, slots=True)
class Passage:
    """A passage (oracle mode) or a corpus chunk (retrieval mode)."""

    id: str
    text: str
    title: str | None = None
    doc: str | None = None  # source document; MIRACL ids "<docid>#<n>" imply it
    lang: str | None = None

    @property
    def doc_id(self) -> str:
        """The source document id: ``doc`` when given, else the part of ``id`` before ``#``."""
        return self.doc if self.doc is not None else self.id.split("#", 1)[0]


@dataclass(frozen=True, slots=True)
class Case:
    """One golden question with its context, judged relevant ids and reference answers."""

    suite: str
    id: str
    lang: str
    question: str
    passages: tuple[Passage, ...]
    relevant: tuple[str, ...]
    answers: tuple[str, ...]
    meta: Mapping[str, Any] = field(default_factory=dict)
    source: str = ""  # "path:line" of the case line
    relevant_docs: tuple[str, ...] = ()  # documents of the relevant ids (for file_hit_at_k)


@dataclass(frozen=True, slots=True)
class ManifestRule:
    """A threshold or gate as written in a ``suite.toml``, with its line.

    ``key`` is the rule's left side without the optional marker (``language_match.mean@hi``),
    ``value`` its right side (``>= 0.9``). ``optional`` is set by a trailing ``?`` on the key
    (``"language_match.mean@sw?" = ">= 0.9"``): the rule may name a language the suite does not
    contain (and, for the rule engine, may stay not evaluable) without that being an error.
    """

    gate: bool
    key: str
    value: str
    line: int
    manifest: Path
    optional: bool = False
    lang: str | None = None  # the rule's @LANG, when it has one

    @property
    def expr(self) -> str:
        """The rule text for ``parse_rule``: ``language_match.mean@hi >= 0.9``."""
        return f"{self.key} {self.value}"

    @property
    def source(self) -> str:
        """Where the rule was written: ``path/suite.toml:LINE``."""
        return f"{self.manifest}:{self.line}"

    @property
    def table(self) -> str:
        return "gates" if self.gate else "thresholds"


@dataclass(frozen=True, slots=True)
class Suite:
    """A loaded, validated suite."""

    name: str
    root: Path
    manifest: Path | None
    mode: Mode
    cases: tuple[Case, ...]
    description: str = ""
    corpus: tuple[Passage, ...] | None = None
    run_files: tuple[Path, ...] = ()
    template: str = "mirage"
    thresholds: Mapping[str, str] = field(default_factory=dict)  # rule key -> "OP VALUE"
    gates: Mapping[str, str] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)
    rules: tuple[ManifestRule, ...] = ()  # the manifest's thresholds and gates, in file order, with lines

    def case(self, case_id: str) -> Case:
        for c in self.cases:
            if c.id == case_id:
                return c
        raise KeyError(case_id)
