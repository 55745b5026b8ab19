"""GitHub Actions output, as pure functions of a :class:`~.model.RunReport`: the job summary
(Markdown for ``$GITHUB_STEP_SUMMARY``) and workflow-command annotations (``::error file=...``).

The plugin writes what these return; nothing here reads the environment or writes a file (the
only input besides the report is an optional reader of the ``suite.toml`` a gate came from, to find
its line).

GitHub's rules followed here:

* a step's summary is at most 1 MiB: :func:`step_summary` stays under ``max_bytes``;
* a step shows at most 10 error and 10 warning annotations (50 per job): :func:`annotations`
  emits at most ``max_errors`` / ``max_warnings`` and then one ``::notice`` line saying how many
  more there are and where to find them;
* in a command's message ``%``, ``\\r`` and ``\\n`` are escaped as ``%25``, ``%0D``, ``%0A``; in its
  properties (``file``, ``line``, ``title``) also ``:`` and ``,`` (``%3A``, ``%2C``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..aggregate.gates import GateResult
from .blocks import Block, Column, Document, Heading, Paragraph, Row, Span, Table, row_tags
from .document import (
    ERROR_COLUMNS,
    FAILURE_COLUMNS,
    GATE_COLUMNS,
    error_rows,
    failure_rows,
    gate_row,
    problem_blocks,
    status_paragraph,
)
from .figures import SCORE
from .format import HEADLINE_METRICS, fmt
from .markdown import MARKDOWN_LIMIT, render_markdown
from .model import CaseDetail, RunReport, as_report
from .sanitize import neutralise_commands, one_line, sanitize, sanitize_name

MAX_ANNOTATIONS = 10  # GitHub shows this many error (and as many warning) annotations per step
SUMMARY_CASES = 25  # failed cases (and case errors) listed in the job summary
SUMMARY_ANSWER = 160  # characters of an answer in the job summary
MESSAGE_CHARS = 1000  # characters of an annotation's message (GitHub shows a few lines)
_READ_LIMIT = 2_000_000  # bytes of a suite.toml read to find a gate's line

Level = Literal["error", "warning", "notice"]


# --------------------------------------------------------------------------------- escaping
def escape_data(text: str) -> str:
    """A workflow command's message: sanitized, the legacy ``##[`` command form broken
    (:func:`~.sanitize.neutralise_commands`), then ``%``, ``\\r``, ``\\n`` escaped."""
    return neutralise_commands(sanitize(text)).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value (``file``, ``title``): as :func:`escape_data`, and
    ``:`` and ``,`` escaped too (they separate properties)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


# --------------------------------------------------------------------------------- annotations
@dataclass(frozen=True, slots=True)
class Annotation:
    level: Level
    message: str
    title: str = ""
    file: str | None = None
    line: int | None = None

    def command(self) -> str:
        props = []
        if self.file:
            props.append(f"file={escape_property(self.file)}")
            if self.line is not None:
                props.append(f"line={self.line}")
        if self.title:
            props.append(f"title={escape_property(self.title)}")
        message = self.message if len(self.message) <= MESSAGE_CHARS else self.message[:MESSAGE_CHARS] + " …"
        return f"::{self.level}{' ' + ','.join(props) if props else ''}::{escape_data(message)}"


_PATH_LINE = re.compile(r"^(?P<path>.+?):(?P<line>[0-9]+)$")
_KEY_IN_PATH = re.compile(r"^(?P<key>\S+) in (?P<path>.+)$")
_MESSAGE_AT = re.compile(r"^(?P<path>[^\s:][^:]*):(?P<line>[0-9]+):")


def _read_text(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(_READ_LIMIT).decode("utf-8", errors="replace")
    except OSError:
        return None


def _relative(path: str, workspace: str | None) -> str:
    """``path`` relative to the repository (GitHub matches annotation files against it)."""
    if workspace and os.path.isabs(path):
        try:
            rel = os.path.relpath(path, workspace)
        except ValueError:  # another drive (Windows)
            return path
        if not rel.startswith(".."):
            return Path(rel).as_posix()
    return path


def _line_of(text: str, key: str, expr: str) -> int | None:
    """The line of a gate in a TOML file: the gate's own key inside the table ``key`` names
    (``[gates]``), else the table header; for an ini key (``mirage_gates``), the key's line."""
    lines = text.splitlines()
    metric = expr.split()[0] if expr.split() else ""
    if key.startswith("[") and key.endswith("]"):
        header = re.compile(r"^\s*\[\s*" + re.escape(key[1:-1].strip()) + r"\s*\]\s*(#.*)?$")
        start = next((i for i, line in enumerate(lines) if header.match(line)), None)
        if start is None:
            return None
        for i in range(start + 1, len(lines)):
            stripped = lines[i].strip()
            if stripped.startswith("["):
                break
            if metric and re.match(r'^["\']?' + re.escape(metric) + r'["\']?\s*=', stripped):
                return i + 1
        return start + 1
    pattern = re.compile(r"^\s*" + re.escape(key) + r"\s*=")
    return next((i + 1 for i, line in enumerate(lines) if pattern.match(line)), None)


def gate_location(gate: GateResult, *, workspace: str | None = None,
                  read_text: Callable[[str], str | None] = _read_text) -> tuple[str | None, int | None]:
    """(file, line) of the place a gate was written, from its source: ``path:line``,
    ``[gates] in path`` (the file is read to find the line), ``mirage_gates in path``; (None,
    None) for a command-line gate."""
    source = gate.source.strip()
    m = _PATH_LINE.match(source)
    if m:
        return _relative(m["path"], workspace), int(m["line"])
    m = _KEY_IN_PATH.match(source)
    if m:
        path = m["path"].strip()
        text = read_text(path)
        line = _line_of(text, m["key"], gate.expr) if text is not None else None
        return _relative(path, workspace), line
    return None, None


def case_location(source: str, workspace: str | None = None) -> tuple[str | None, int | None]:
    """(file, line) from a case's ``path:line``."""
    m = _PATH_LINE.match(source.strip())
    if m:
        return _relative(m["path"], workspace), int(m["line"])
    return (_relative(source, workspace), None) if source.strip() else (None, None)


def _gate_title(g: GateResult) -> str:
    state = "failed" if g.passed is False else "not evaluable"
    return f"mirage gate {state}: {g.expr} [{g.suite} {g.lang}] {g.model}"


def _case_title(suite: str, case_id: str, model: str) -> str:
    return f"mirage case failed: {sanitize_name(case_id)} ({sanitize_name(suite)}, {sanitize_name(model)})"


def collect_annotations(report: RunReport, *, workspace: str | None = None,
                        read_text: Callable[[str], str | None] = _read_text) -> list[Annotation]:
    """Every annotation the report calls for, most important first: fatal reasons, suites that
    failed to load, failed gates, failed cases, case errors (errors); gates that could not be
    evaluated and the session's problems (warnings)."""
    out: list[Annotation] = [Annotation("error", f, "mirage: the run failed") for f in report.fatal]
    for e in report.collection_errors:
        # the loader's messages start with "path:line: what is wrong"; else the suite's node id
        first = e.message.strip().splitlines()[0] if e.message.strip() else ""
        m = _MESSAGE_AT.match(first)
        where: str = m["path"] if m else e.nodeid.split("::")[0]
        out.append(Annotation("error", e.message, f"mirage suite failed to load: {sanitize_name(e.nodeid)}",
                              _relative(where, workspace) if where else None, int(m["line"]) if m else None))
    for g in report.gates:
        if g.passed is False:
            file, line = gate_location(g, workspace=workspace, read_text=read_text)
            out.append(Annotation("error", g.describe(), _gate_title(g), file, line))
    details: dict[tuple[str, str, str], CaseDetail] = {(c.suite, c.case_id, c.model): c for c in report.cases}
    for outcome in ("failed", "error"):  # missed thresholds first, then cases the model did not answer
        for r in report.results:
            if r.outcome != outcome:
                continue
            d = details.get((r.suite, r.case_id, r.model))
            file, line = case_location(d.source, workspace) if d is not None else (None, None)
            if outcome == "failed":
                msg = "\n".join(r.failures) or "thresholds missed (no reason recorded)"
                if d is not None:
                    msg += "\nanswer: " + ("(none)" if d.answer is None else one_line(d.answer, 300))
                out.append(Annotation("error", msg, _case_title(r.suite, r.case_id, r.model), file, line))
            else:
                out.append(Annotation("error", r.error or "the model gave no answer (no reason recorded)",
                                      f"mirage case error: {sanitize_name(r.case_id)} ({sanitize_name(r.model)})",
                                      file, line))
    for g in report.gates:
        if g.passed is None:
            file, line = gate_location(g, workspace=workspace, read_text=read_text)
            out.append(Annotation("warning", g.describe(), _gate_title(g), file, line))
    out += [Annotation("warning", p, "mirage") for p in report.problems]
    return out


def annotation_lines(report: RunReport | Mapping[str, Any], *, workspace: str | None = None,
                max_errors: int = MAX_ANNOTATIONS, max_warnings: int = MAX_ANNOTATIONS,
                read_text: Callable[[str], str | None] = _read_text) -> list[str]:
    """Workflow-command lines to print in a GitHub Actions step (see the module doc).

    ``workspace``: the repository root (``$GITHUB_WORKSPACE``), to make absolute paths relative.
    At most ``max_errors`` error and ``max_warnings`` warning lines, most important first, then
    one ``::notice`` per level with the number left out.
    """
    rep = as_report(report)
    items = collect_annotations(rep, workspace=workspace, read_text=read_text)
    lines: list[str] = []
    for level, cap in (("error", max_errors), ("warning", max_warnings)):
        mine = [a for a in items if a.level == level]
        lines += [a.command() for a in mine[:max(0, cap)]]
        left = len(mine) - max(0, cap)
        if left > 0:
            lines.append(Annotation("notice", f"{left} more {level}{'s' * (left != 1)} not annotated (GitHub shows "
                                              f"{MAX_ANNOTATIONS} per step); the job summary and the report "
                                              "list them all.", f"mirage: {left} more {level}s").command())
    return lines


# --------------------------------------------------------------------------------- job summary
def _score_table(report: RunReport, suite: str) -> list[Block]:
    """Suite-level leaderboard rows (score and headline metrics) and the score per language."""
    rows = [r for r in report.leaderboard if r.suite == suite]
    overall = sorted((r for r in rows if r.lang == "all"), key=lambda r: (r.rank, r.model))
    if not overall:
        return []
    present = {k for r in overall for k, v in r.metrics.items() if v is not None}
    metrics = [m for m in HEADLINE_METRICS if m in present]
    n = sanitize_name
    blocks: list[Block] = [
        Heading(3, f"Leaderboard: {n(suite)}"),
        Table((Column("rank", True), Column("model"), Column("n", True), Column(SCORE, True),
               *[Column(m, True) for m in metrics]),
              tuple(Row((str(r.rank), n(r.model) + (" (ref)" if r.reference else ""), str(r.n), fmt(r.score),
                         *[fmt(r.metrics.get(m)) for m in metrics]), "ref" if r.reference else "",
                        row_tags(r.suite, r.lang, r.model)) for r in overall)),
    ]
    langs = sorted({r.lang for r in rows} - {"all"})
    if len(langs) > 1:
        by = {(r.model, r.lang): r.score for r in rows}
        blocks += [Paragraph((Span(f"{SCORE} per language", strong=True),)),
                   Table((Column("model"), *[Column(n(la), True) for la in langs]),
                         tuple(Row((n(r.model) + (" (ref)" if r.reference else ""),
                                    *[fmt(by.get((r.model, la))) for la in langs])) for r in overall))]
    return blocks


def _limited(title: str, columns: tuple[Column, ...], rows: Sequence[Row], limit: int) -> list[Block]:
    if not rows:
        return []
    blocks: list[Block] = [Heading(3, f"{title} ({len(rows)})"), Table(columns, tuple(rows[:limit]))]
    if len(rows) > limit:
        blocks.append(Paragraph((Span(f"… {len(rows) - limit:,} more not listed here; the report artifacts "
                                      "(JSON, HTML) have them all."),)))
    return blocks


def summary_document(report: RunReport, *, max_cases: int = SUMMARY_CASES) -> Document:
    """What the job summary shows: status, why the run failed, failed gates, the leaderboard
    (suite level, and the score per language), the failed cases with an excerpt of the answer and
    the case errors (each list cut at ``max_cases``)."""
    mark = "passed" if report.status == "passed" else "FAILED"
    blocks: list[Block] = [Heading(2, f"pytest-mirage: {mark}"), status_paragraph(report)]
    blocks += [Heading(3, b.text) if isinstance(b, Heading) else b for b in problem_blocks(report)]
    bad = [g for g in report.gates if g.passed is not True]
    if bad:
        blocks += [Heading(3, "Failed gates" if all(g.passed is False for g in bad) else
                           "Failed and not evaluable gates"),
                   Table(GATE_COLUMNS, tuple(gate_row(g) for g in sorted(bad, key=lambda g: g.passed is not False)))]
    for suite in dict.fromkeys([s.name for s in report.suites] + [r.suite for r in report.leaderboard]):
        blocks += _score_table(report, suite)
    blocks += _limited("Failed cases", FAILURE_COLUMNS, failure_rows(report, SUMMARY_ANSWER), max_cases)
    blocks += _limited("Case errors", ERROR_COLUMNS, error_rows(report), max_cases)
    return Document("pytest-mirage", tuple(blocks))


def step_summary(report: RunReport | Mapping[str, Any], *, max_bytes: int = MARKDOWN_LIMIT,
                 max_cases: int = SUMMARY_CASES) -> str:
    """The Markdown to append to ``$GITHUB_STEP_SUMMARY`` (at most ``max_bytes`` bytes)."""
    return render_markdown(summary_document(as_report(report), max_cases=max_cases), max_bytes)


def github_outputs(report: RunReport) -> tuple[list[str], list[str]]:
    """In GitHub Actions: the Markdown summary appended to ``$GITHUB_STEP_SUMMARY``, and the
    annotation lines (at the golden-file line of failed cases and the suite.toml line of failed
    gates) to print at the end of the run. Returns (annotation lines, problems); a summary file
    that cannot be written is a problem (the run fails), never a crash."""
    problems: list[str] = []
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        try:
            with open(summary, "a", encoding="utf-8") as fh:
                fh.write(step_summary(report))
        except OSError as exc:
            problems.append(f"cannot append the job summary to $GITHUB_STEP_SUMMARY {summary}: "
                            f"{exc.strerror or exc}")
    annotations: list[str] = []
    if os.environ.get("GITHUB_ACTIONS") == "true":
        annotations = annotation_lines(report, workspace=os.environ.get("GITHUB_WORKSPACE"))
    return annotations, problems
