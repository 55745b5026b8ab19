"""Markdown: why the run failed, answer excerpts of failed cases, and the step-summary size cap."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from pytest_mirage.report.document import Document, Heading, Paragraph, Span
from pytest_mirage.report.markdown import (
    MARKDOWN_LIMIT,
    STEP_SUMMARY_LIMIT,
    markdown_report,
    render_markdown,
)
from pytest_mirage.report.model import CaseDetail
from pytest_mirage.results import CaseResult
from tests.helpers.reports import sample_report


def test_problems_fatal_and_answer_excerpts() -> None:
    rep = sample_report()
    md = markdown_report(rep)
    heads = [line for line in md.splitlines() if line.startswith("## ")]
    assert heads[:2] == ["## Why the run failed", "## Problems"]
    assert "- the judge failed on every pair: HTTP 401" in md
    failed = md[md.index("## Failed cases"):md.index("## Errors")]
    assert ("| case | model | source | thresholds missed | answer (excerpt) |" in failed.splitlines()[2])
    assert ("| khmer | km | km-002 | extractive | suites/khmer/cases/km.jsonl:3 | citation_recall 0.17 &lt; 0.30 "
            "(\\[thresholds\\] in suites/mini/suite.toml) | An answer \\[km-p2\\]. |") in failed
    n_failed = sum(r.outcome == "failed" for r in rep.results)
    assert failed.count("An answer \\[km-p2\\].") + failed.count("Fine answer \\[p1\\]") == n_failed


def test_long_answer_is_an_excerpt_on_one_line() -> None:
    rep = sample_report()
    long = "word " * 400 + "\n\nsecond paragraph"
    cases = tuple(replace(c, answer=long) for c in rep.cases)
    md = markdown_report(replace(rep, cases=cases))
    row = next(line for line in md.splitlines() if "| citation_recall" in line and "word word" in line)
    cell = row.rsplit(" | ", 1)[1]
    assert cell.endswith("… |") and len(cell) < 260 and "<br>" not in cell


def _big_report(n: int) -> object:
    rep = sample_report()
    res = [CaseResult(suite="mini", suite_ref="mini", case_id=f"c{i:06d}", lang="en", model="m", metrics={},
                      outcome="failed", failures=("citation_recall 0.0 < 0.5 " + "x" * 200,)) for i in range(n)]
    cases = [CaseDetail("mini", f"c{i:06d}", "en", "m", f"cases/en.jsonl:{i + 1}", "q", "answer " * 60)
             for i in range(n)]
    return replace(rep, results=tuple(res), cases=tuple(cases))


def test_markdown_is_capped_under_the_step_summary_limit() -> None:
    big = _big_report(6000)
    full = markdown_report(big, max_bytes=None)  # type: ignore[arg-type]
    assert len(full.encode("utf-8")) > STEP_SUMMARY_LIMIT
    md = markdown_report(big)  # type: ignore[arg-type]
    assert len(md.encode("utf-8")) <= MARKDOWN_LIMIT < STEP_SUMMARY_LIMIT
    more = re.findall(r"\*… ([0-9,]+) more rows not shown", md)
    assert more, md[-500:]
    # every part of the report is still there: headings are kept, long tables are cut
    assert [h for h in full.splitlines() if h.startswith("#")] == [h for h in md.splitlines() if h.startswith("#")]
    shown = sum(1 for line in md.splitlines() if line.startswith("| mini | en | c"))
    assert shown + int(more[-1].replace(",", "")) == 6000


@pytest.mark.parametrize("budget", [500, 2000, 10_000])
def test_tiny_budgets_leave_out_blocks_with_a_note(budget: int) -> None:
    md = markdown_report(sample_report(), max_bytes=budget)
    assert len(md.encode("utf-8")) <= budget
    assert md.startswith("# pytest-mirage report")
    assert "not shown" in md


def test_overlong_cell_is_cut() -> None:
    doc = Document("t", (Heading(1, "t"), Paragraph((Span("p"),))))
    assert render_markdown(doc, 10_000) == "# t\n\np\n"
    rep = sample_report()
    md = markdown_report(replace(rep, problems=("y" * 10_000,)))
    assert "… (8,000 more characters)" in md
