"""The report as GitHub-flavoured Markdown (e.g. for ``$GITHUB_STEP_SUMMARY``).

GitHub accepts at most 1 MiB of job summary per step; :func:`render_markdown` keeps a report
within a byte budget by cutting long tables and lists to the same number of rows, each with a
"N more rows" line, and a single overlong cell with a "N more characters" note.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .blocks import Block, BulletList, Document, Heading, Paragraph, Table
from .document import report_document
from .model import RunReport, as_report
from .sanitize import sanitize

# GitHub's limit for the job summary of one step (bytes)
STEP_SUMMARY_LIMIT = 1024 * 1024
# the default budget: under the limit, with room for a few lines another step of the job adds
MARKDOWN_LIMIT = 1_000_000
MAX_CELL = 2000  # characters of one table cell or list item, before "… (N more characters)"

# CommonMark lets any ASCII punctuation be backslash-escaped; these could start emphasis, code,
# links or strike-through, or end a table cell. "<" and "&" become entities so that text such as a
# model named "<script>" is shown, never interpreted as HTML (no tag can open, so ">" may stay as
# it is, except first on a line where it would start a block quote).
_BACKSLASHED = frozenset("\\`*[]~|")
_ENTITIES = {"<": "&lt;", "&": "&amp;"}


# Mentions and references that GitHub, GitLab and chat bridges turn into notifications or links
# (@user, @org/team, @all, @channel, @here, #123, !123 merge requests): a word joiner (U+2060, no
# width, no meaning) after the sign breaks them without changing what the reader sees. Only where
# the sign starts a word: "a@b.com" and "C#" are left alone.
_MENTION_RE = re.compile(r"(?<![\w@#!])([@#])(?=[\w])|(?<![\w@#!])(!)(?=\d)")
WORD_JOINER = "\u2060"


def defuse_mentions(text: str) -> str:
    """``text`` with ``@name``, ``#123`` and ``!123`` unable to mention or reference anyone."""
    return _MENTION_RE.sub(lambda m: (m.group(1) or m.group(2)) + WORD_JOINER, text)


def escape_markdown(text: str) -> str:
    """``text`` shown literally in Markdown, including inside a table cell (``|`` becomes ``\\|``).

    ``_`` is escaped unless it is inside a word (``citation_recall`` stays readable: GitHub does not
    emphasise inside words). Line breaks become ``<br>`` so that a multi-line value (an error
    message) stays in its cell. Control and escape characters are shown as escapes
    (:func:`~.sanitize.sanitize`); mentions and references cannot ping (:func:`defuse_mentions`).
    """
    text = sanitize(text)
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
    return defuse_mentions("".join(out))


def _cut(text: str) -> str:
    if len(text) <= MAX_CELL:
        return text
    return text[:MAX_CELL] + f"… ({len(text) - MAX_CELL:,} more characters)"


def _cell(text: str) -> str:
    return escape_markdown(_cut(text))


def _table_head(t: Table) -> list[str]:
    head = "| " + " | ".join(escape_markdown(c.name) for c in t.columns) + " |"
    rule = "|" + "|".join("---:" if c.numeric else "---" for c in t.columns) + "|"
    return [head, rule]


def _table_rows(t: Table) -> list[str]:
    return ["| " + " | ".join(_cell(cell) for cell in row.cells) + " |" for row in t.rows]


def _items(b: BulletList) -> list[str]:
    return [f"- {_cell(item)}" for item in b.items]


def _block(b: Block) -> list[str]:
    if isinstance(b, Heading):
        return ["#" * b.level + " " + escape_markdown(b.text)]
    if isinstance(b, Paragraph):
        return ["".join(f"**{escape_markdown(s.text)}**" if s.strong else escape_markdown(s.text)
                        for s in b.spans)]
    if isinstance(b, BulletList):
        return _items(b)
    return [*_table_head(b), *_table_rows(b)]


def _more(n: int, what: str) -> str:
    return f"*… {n:,} more {what}{'s' * (n != 1)} not shown (the JSON and HTML reports have them all).*"


def _size(lines: Sequence[str]) -> int:
    return sum(len(line.encode("utf-8")) + 1 for line in lines)


class _Sized:
    """A rendered block: fixed lines, and the row lines a budget may cut (tables and lists)."""

    def __init__(self, b: Block) -> None:
        self.what = "item" if isinstance(b, BulletList) else "row"
        if isinstance(b, Table):
            self.fixed, self.rows = _table_head(b), _table_rows(b)
        elif isinstance(b, BulletList):
            self.fixed, self.rows = [], _items(b)
        else:
            self.fixed, self.rows = _block(b), []
        self.fixed_size = _size(self.fixed)
        self.row_sizes = [_size([r]) for r in self.rows]
        self.prefix = [0]
        for n in self.row_sizes:
            self.prefix.append(self.prefix[-1] + n)

    def size(self, limit: int) -> int:
        shown = min(limit, len(self.rows))
        more = len(self.rows) - shown
        return self.fixed_size + self.prefix[shown] + (_size(["", _more(more, self.what)]) if more else 0) + 1

    def lines(self, limit: int) -> list[str]:
        shown = min(limit, len(self.rows))
        more = len(self.rows) - shown
        if not self.rows:
            return self.fixed
        if shown == 0 and not self.fixed:
            return [_more(more, self.what)]
        out = [*self.fixed, *self.rows[:shown]]
        return [*out, "", _more(more, self.what)] if more else out


def render_markdown(doc: Document, max_bytes: int | None = None) -> str:
    """Blocks separated by one blank line; ends with a newline.

    With ``max_bytes``, the text is at most that many bytes (UTF-8): when the whole report is
    longer, every table and list is cut to the largest common number of rows that fits, each cut
    one followed by a "N more rows not shown" line; if even the headings do not fit, the blocks at
    the end are left out with one closing note.
    """
    sized = [_Sized(b) for b in doc.blocks]
    full = max((len(s.rows) for s in sized), default=0)

    def total(limit: int, blocks: Sequence[_Sized]) -> int:
        return sum(s.size(limit) for s in blocks)

    if max_bytes is None or total(full, sized) <= max_bytes:
        return "\n\n".join("\n".join(s.lines(full)) for s in sized) + "\n"
    reserve = 200  # the closing note, when blocks are left out
    lo, hi = 0, full
    while lo < hi:  # the largest row limit that fits
        mid = (lo + hi + 1) // 2
        if total(mid, sized) <= max_bytes - reserve:
            lo = mid
        else:
            hi = mid - 1
    keep = len(sized)
    while keep and total(lo, sized[:keep]) > max_bytes - reserve:
        keep -= 1
    parts = ["\n".join(s.lines(lo)) for s in sized[:keep]]
    if keep < len(sized):
        left = len(sized) - keep
        parts.append(f"*… {left:,} more block{'s' * (left != 1)} of the report (headings, tables) not shown: "
                     "the JSON and HTML reports have them all.*")
    return "\n\n".join(parts) + "\n"


def markdown_report(report: RunReport | Mapping[str, Any], *, max_bytes: int | None = MARKDOWN_LIMIT) -> str:
    """The JSON report ``report`` (schema ``pytest-mirage/report/1``) as Markdown.

    Leaderboards (the "all" table, then one per language), the arena and judge reliability when
    present, the gates (failed first), the failed cases (with an excerpt of the answer) and the
    case errors; at most ``max_bytes`` bytes (default :data:`MARKDOWN_LIMIT`, under GitHub's 1 MiB
    job-summary limit; ``None``: no limit). Raises
    :class:`~pytest_mirage.report.model.ReportFormatError` naming the field when ``report`` is not a
    valid report.
    """
    return render_markdown(report_document(as_report(report)), max_bytes)
