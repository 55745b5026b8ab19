"""The report as GitHub-flavoured Markdown (e.g. for ``$GITHUB_STEP_SUMMARY``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .document import Block, BulletList, Document, Heading, Paragraph, Table, report_document
from .model import RunReport, as_report

# CommonMark lets any ASCII punctuation be backslash-escaped; these could start emphasis, code,
# links or strike-through, or end a table cell. "<" and "&" become entities so that text such as a
# model named "<script>" is shown, never interpreted as HTML (no tag can open, so ">" may stay as
# it is, except first on a line where it would start a block quote).
_BACKSLASHED = frozenset("\\`*[]~|")
_ENTITIES = {"<": "&lt;", "&": "&amp;"}


def escape_markdown(text: str) -> str:
    """``text`` shown literally in Markdown, including inside a table cell (``|`` becomes ``\\|``).

    ``_`` is escaped unless it is inside a word (``citation_recall`` stays readable: GitHub does not
    emphasise inside words). Line breaks become ``<br>`` so that a multi-line value (an error
    message) stays in its cell.
    """
    out = []
    for i, ch in enumerate(text):
        if ch in _BACKSLASHED:
            out.append("\\" + ch)
        elif ch in _ENTITIES:
            out.append(_ENTITIES[ch])
        elif ch == "_":
            inside = 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()
            out.append("_" if inside else "\\_")
        elif ch == ">" and (i == 0 or text[i - 1] == "\n"):
            out.append("\\>")
        elif ch == "\r":
            continue
        elif ch == "\n":
            out.append("<br>")
        else:
            out.append(ch)
    return "".join(out)


def _table(t: Table) -> list[str]:
    head = "| " + " | ".join(escape_markdown(c.name) for c in t.columns) + " |"
    rule = "|" + "|".join("---:" if c.numeric else "---" for c in t.columns) + "|"
    body = ["| " + " | ".join(escape_markdown(cell) for cell in row.cells) + " |" for row in t.rows]
    return [head, rule, *body]


def _block(b: Block) -> list[str]:
    if isinstance(b, Heading):
        return ["#" * b.level + " " + escape_markdown(b.text)]
    if isinstance(b, Paragraph):
        return ["".join(f"**{escape_markdown(s.text)}**" if s.strong else escape_markdown(s.text)
                        for s in b.spans)]
    if isinstance(b, BulletList):
        return [f"- {escape_markdown(item)}" for item in b.items]
    return _table(b)


def render_markdown(doc: Document) -> str:
    """Blocks separated by one blank line; ends with a newline."""
    return "\n\n".join("\n".join(_block(b)) for b in doc.blocks) + "\n"


def markdown_report(report: RunReport | Mapping[str, Any]) -> str:
    """The JSON report ``report`` (schema ``pytest-mirage/report/1``) as Markdown.

    Leaderboards (the "all" table, then one per language), the arena and judge reliability when
    present, the gates (failed first) and the case errors. Raises
    :class:`~pytest_mirage.report.model.ReportFormatError` naming the field when ``report`` is not a
    valid report.
    """
    return render_markdown(report_document(as_report(report)))
