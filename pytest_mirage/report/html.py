"""The report as one self-contained HTML page (inline CSS, no JavaScript, every value escaped)."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from .document import Block, BulletList, Document, Heading, Paragraph, Table, report_document
from .model import RunReport, as_report

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 80rem;
       padding: 0 1rem; color: #1f2328; line-height: 1.4; }
h1 { border-bottom: 1px solid #d0d7de; padding-bottom: .3rem; }
h2 { margin-top: 2rem; border-bottom: 1px solid #d0d7de; padding-bottom: .2rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .9rem; }
th, td { border: 1px solid #d0d7de; padding: .25rem .6rem; text-align: left; vertical-align: top; }
td { white-space: pre-wrap; }
th { background: #f6f8fa; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.ref td { color: #656d76; }
tr.fail td { background: #ffebe9; }
tr.na td { background: #fff8c5; }
tr.error td { background: #fff1e5; }
""".strip()


def _e(text: str) -> str:
    return escape(text, quote=True)


def _table(t: Table) -> list[str]:
    def cls(numeric: bool) -> str:
        return ' class="num"' if numeric else ""

    lines = ["<table>", "<thead><tr>" + "".join(f"<th{cls(c.numeric)}>{_e(c.name)}</th>" for c in t.columns)
             + "</tr></thead>", "<tbody>"]
    for row in t.rows:
        rcls = f' class="{row.kind}"' if row.kind else ""
        lines.append(f"<tr{rcls}>" + "".join(f"<td{cls(c.numeric)}>{_e(cell)}</td>"
                                             for c, cell in zip(t.columns, row.cells, strict=True))
                     + "</tr>")
    lines += ["</tbody>", "</table>"]
    return lines


def _block(b: Block) -> list[str]:
    if isinstance(b, Heading):
        return [f"<h{b.level}>{_e(b.text)}</h{b.level}>"]
    if isinstance(b, Paragraph):
        return ["<p>" + "".join(f"<strong>{_e(s.text)}</strong>" if s.strong else _e(s.text) for s in b.spans)
                + "</p>"]
    if isinstance(b, BulletList):
        return ["<ul>", *[f"<li>{_e(item)}</li>" for item in b.items], "</ul>"]
    return _table(b)


def render_html(doc: Document) -> str:
    """A complete HTML5 document; ends with a newline."""
    head = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{_e(doc.title)}</title>", f"<style>\n{_CSS}\n</style>", "</head>", "<body>"]
    body = [line for b in doc.blocks for line in _block(b)]
    return "\n".join([*head, *body, "</body>", "</html>"]) + "\n"


def html_report(report: RunReport | Mapping[str, Any]) -> str:
    """The JSON report ``report`` (schema ``pytest-mirage/report/1``) as a standalone HTML page.

    Same content as :func:`~pytest_mirage.report.markdown.markdown_report`. Raises
    :class:`~pytest_mirage.report.model.ReportFormatError` naming the field when ``report`` is not a
    valid report.
    """
    return render_html(report_document(as_report(report)))
