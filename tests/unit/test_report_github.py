"""GitHub job summary and workflow-command annotations: escaping, locations, caps."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_mirage.aggregate.gates import GateResult
from pytest_mirage.report.github import (
    Annotation,
    annotation_lines,
    case_location,
    escape_data,
    escape_property,
    gate_location,
    step_summary,
)
from pytest_mirage.report.markdown import STEP_SUMMARY_LIMIT
from pytest_mirage.report.model import CaseDetail, CollectionError, RunReport
from pytest_mirage.results import CaseResult
from tests.helpers.reports import sample_report

COMMAND = re.compile(r"^::(error|warning|notice)( [^:]*)?::(.*)$")


def _gate(source: str, expr: str = "citation_recall.mean@hi >= 0.9", passed: bool | None = False) -> GateResult:
    return GateResult("mini", "hi", "m", expr, source, 0.5, passed, 10)


def test_escaping_follows_githubs_rules() -> None:
    assert escape_data("50% done\r\nnext") == "50%25 done%0Anext"  # \r\n is one line end
    assert escape_data("a\rb") == "a\\x0db"  # a lone \r is shown, never sent
    assert escape_property("a:b,c%d\ne") == "a%3Ab%2Cc%25d%0Ae"
    line = Annotation("error", "two\nlines 100%", "t: x, y", "dir,1/f:g.jsonl", 7).command()
    assert line == "::error file=dir%2C1/f%3Ag.jsonl,line=7,title=t%3A x%2C y::two%0Alines 100%25"
    assert "\n" not in line and "\r" not in line


def test_annotation_message_is_capped() -> None:
    line = Annotation("warning", "x" * 5000).command()
    assert line.startswith("::warning::") and len(line) < 1100 and line.endswith(" …")


def test_gate_locations(tmp_path: Path) -> None:
    toml = tmp_path / "suite.toml"
    toml.write_text('[suite]\nname = "mini"\n\n[gates]  # release gates\n"language_match.mean" = ">= 0.8"\n'
                    '"citation_recall.mean@hi" = ">= 0.9"\n\n[thresholds]\ncitation_recall = ">= 0.5"\n',
                    encoding="utf-8")
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.pytest.ini_options]\nmirage_gates = ["rouge_l.mean >= 0.2"]\n', encoding="utf-8")
    ws = str(tmp_path)
    assert gate_location(_gate(f"[gates] in {toml}"), workspace=ws) == ("suite.toml", 6)
    # a gate whose key is not found: the table's header
    assert gate_location(_gate(f"[gates] in {toml}", "bleu.mean >= 0.1"), workspace=ws) == ("suite.toml", 4)
    assert gate_location(_gate(f"{toml}:12"), workspace=ws) == ("suite.toml", 12)
    assert gate_location(_gate("suites/x/suite.toml:3")) == ("suites/x/suite.toml", 3)
    assert gate_location(_gate(f"mirage_gates in {pyproject}"), workspace=ws) == ("pyproject.toml", 2)
    assert gate_location(_gate(f"[gates] in {tmp_path / 'missing.toml'}"), workspace=ws) == ("missing.toml", None)
    assert gate_location(_gate("--mirage-gate")) == (None, None)
    # outside the workspace: the path as given
    assert gate_location(_gate("/elsewhere/suite.toml:2"), workspace=ws) == ("/elsewhere/suite.toml", 2)
    # the reader is a parameter: no file needed
    assert gate_location(_gate("[gates] in s.toml"), read_text=lambda p: "[gates]\n'citation_recall.mean@hi'= 1\n") \
        == ("s.toml", 2)


def test_case_locations() -> None:
    assert case_location("/repo/suites/mini/cases/hi.jsonl:42", "/repo") == ("suites/mini/cases/hi.jsonl", 42)
    assert case_location("cases/hi.jsonl:1") == ("cases/hi.jsonl", 1)
    assert case_location("") == (None, None)


def test_annotations_point_at_case_and_gate_lines() -> None:
    rep = sample_report()
    lines = annotation_lines(rep, max_errors=100, max_warnings=100)
    assert all(COMMAND.match(line) for line in lines), lines
    assert lines[0] == "::error title=mirage%3A the run failed::the judge failed on every pair: HTTP 401"
    gate = next(x for x in lines if "mirage gate failed%3A citation_recall" in x)
    assert gate.startswith("::error file=suites/mini/suite.toml,line=12,title=")
    failed = [x for x in lines if "mirage case failed" in x]
    n_failed = sum(r.outcome == "failed" for r in rep.results)
    assert len(failed) == n_failed
    first = next(r for r in rep.results if r.outcome == "failed")
    line_no = int(next(c for c in rep.cases if c.case_id == first.case_id and c.model == first.model)
                  .source.rsplit(":", 1)[1])
    assert failed[0].startswith(f"::error file=suites/{first.suite}/cases/{first.lang}.jsonl,line={line_no},")
    assert "%0Aanswer: " in failed[0]
    # failed cases come before case errors; warnings (not evaluable gate, problems) after the errors
    errors = [i for i, x in enumerate(lines) if x.startswith("::error")]
    assert max(errors) < min(i for i, x in enumerate(lines) if x.startswith("::warning"))
    kinds = [("error" if "case error" in x else "failed") for x in lines if "mirage case" in x]
    assert kinds == sorted(kinds, key=lambda k: k == "error")
    assert sum(x.startswith("::warning") for x in lines) == 2


def test_annotations_are_capped_with_a_notice() -> None:
    rep = sample_report()
    lines = annotation_lines(rep)
    errors = [x for x in lines if x.startswith("::error")]
    total = len([x for x in annotation_lines(rep, max_errors=1000) if x.startswith("::error")])
    assert len(errors) == 10 and total > 10
    notice = [x for x in lines if x.startswith("::notice")]
    assert notice == [f"::notice title=mirage%3A {total - 10} more errors::{total - 10} more errors not annotated "
                      "(GitHub shows 10 per step); the job summary and the report list them all."]
    assert lines.index(notice[0]) == 10  # right after the errors it stands for
    assert len(annotation_lines(rep, max_errors=3, max_warnings=0)) == 3 + 1 + 1


def test_suite_that_failed_to_load_is_annotated_at_its_line() -> None:
    rep = replace(sample_report(), collection_errors=(
        CollectionError("suites/bad/suite.toml", "/repo/suites/bad/cases/en.jsonl:7: field 'lang' is missing"),
        CollectionError("suites/worse/suite.toml", "cannot read the manifest")))
    lines = [x for x in annotation_lines(rep, workspace="/repo", max_errors=100) if "failed to load" in x]
    assert lines == [
        "::error file=suites/bad/cases/en.jsonl,line=7,title=mirage suite failed to load%3A suites/bad/suite.toml::"
        "/repo/suites/bad/cases/en.jsonl:7: field 'lang' is missing",
        "::error file=suites/worse/suite.toml,title=mirage suite failed to load%3A suites/worse/suite.toml::"
        "cannot read the manifest"]


def test_a_passing_run_has_no_annotations() -> None:
    rep = sample_report()
    ok = replace(rep, fatal=(), problems=(), gates=tuple(g for g in rep.gates if g.passed),
                 results=tuple(r for r in rep.results if r.outcome in ("passed", "reference")), cases=())
    assert annotation_lines(ok) == []


def test_step_summary_content() -> None:
    rep = sample_report()
    md = step_summary(rep)
    heads = [line for line in md.splitlines() if line.startswith("#")]
    assert heads[:5] == ["## pytest-mirage: FAILED", "### Why the run failed", "### Problems",
                         "### Failed and not evaluable gates", "### Leaderboard: mini"]
    assert "### Failed cases (12)" in heads and "### Case errors (4)" in heads
    assert "**score per language**" in md and "| model | en | hi | ja |" in md
    gates = md[md.index("### Failed and not evaluable gates"):md.index("### Leaderboard: mini")]
    assert gates.index("| FAILED |") < gates.index("| not evaluable |") and "| passed |" not in gates
    assert "(\\[thresholds\\] in suites/mini/suite.toml) | Fine answer \\[p1\\]" in md
    short = step_summary(rep, max_cases=2)
    assert "… 10 more not listed here" in short and "… 2 more not listed here" in short


def test_step_summary_stays_under_githubs_limit() -> None:
    """Thousands of failed cases with long messages: the summary is cut, with a note, under 1 MiB."""
    rep = sample_report()
    res, cases = [], []
    for i in range(20_000):
        res.append(CaseResult(suite="mini", suite_ref="mini", case_id=f"c{i:05d}", lang="en", model="m",
                              metrics={}, outcome="failed", failures=("x" * 300,)))
        cases.append(CaseDetail("mini", f"c{i:05d}", "en", "m", f"cases/en.jsonl:{i}", "q?", "a" * 2000))
    big = RunReport(models=("m",), suites=rep.suites, results=tuple(res), leaderboard=rep.leaderboard,
                    gates=rep.gates, cases=tuple(cases))
    md = step_summary(big, max_cases=100_000)
    assert len(md.encode("utf-8")) <= 1_000_000 < STEP_SUMMARY_LIMIT
    assert re.search(r"\*… [0-9,]+ more rows not shown", md)
    assert md.startswith("## pytest-mirage") and "### Failed cases (20000)" in md


@pytest.mark.parametrize("budget", [3000, 20_000, 200_000])
def test_step_summary_budget(budget: int) -> None:
    md = step_summary(sample_report(), max_bytes=budget)
    assert len(md.encode("utf-8")) <= budget
