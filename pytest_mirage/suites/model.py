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
    thresholds: Mapping[str, str] = field(default_factory=dict)
    gates: Mapping[str, str] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(sorted({c.lang for c in self.cases}))

    def case(self, case_id: str) -> Case:
        for c in self.cases:
            if c.id == case_id:
                return c
        raise KeyError(case_id)
