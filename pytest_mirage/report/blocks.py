"""The blocks of a report document (headings, paragraphs, lists, tables of plain-text cells) that the
Markdown and HTML writers lay out; see :mod:`.document`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .format import NULL, fmt
from .sanitize import sanitize_name


@dataclass(frozen=True, slots=True)
class Heading:
    level: int  # 1 = the title
    text: str


@dataclass(frozen=True, slots=True)
class Span:
    text: str
    strong: bool = False


@dataclass(frozen=True, slots=True)
class Paragraph:
    spans: tuple[Span, ...]


@dataclass(frozen=True, slots=True)
class BulletList:
    items: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    numeric: bool = False  # right-aligned


RowKind = Literal["", "ref", "fail", "na", "error"]


Tags = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Row:
    cells: tuple[str, ...]
    kind: RowKind = ""  # how the HTML page styles it: reference system, failed gate, not evaluable, error
    # what the row is about, (("suite", s), ("lang", l), ("model", m)): the HTML page filters on it
    tags: Tags = ()


def row_tags(suite: str | None = None, lang: str | None = None, model: str | None = None) -> Tags:
    """Row tags for the HTML filters (names sanitized, as shown)."""
    return tuple((k, sanitize_name(v)) for k, v in (("suite", suite), ("lang", lang), ("model", model))
                 if v is not None)


@dataclass(frozen=True, slots=True)
class Table:
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]

    def __post_init__(self) -> None:
        for row in self.rows:
            if len(row.cells) != len(self.columns):
                raise ValueError(f"table row {row.cells!r} has {len(row.cells)} cells for "
                                 f"{len(self.columns)} columns")


Block = Heading | Paragraph | BulletList | Table


@dataclass(frozen=True, slots=True)
class Document:
    title: str
    blocks: tuple[Block, ...]
    # name -> the blocks of that part of the report (a partition of ``blocks``, in order), so the
    # HTML page can place its plots and filters between them
    sections: tuple[tuple[str, tuple[Block, ...]], ...] = field(default=())

    def section(self, name: str) -> tuple[Block, ...]:
        return dict(self.sections).get(name, ())


def fmt_any(v: Any) -> str:
    if v is None:
        return NULL
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return fmt(v)
    return str(v)


