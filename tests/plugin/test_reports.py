"""JSON report, record/replay round trip, xdist equivalence, model errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def _run_report(pytester: pytest.Pytester, *args: str, name: str = "r.json") -> dict:
    path = pytester.path / name
    res = pytester.runpytest("demo", f"--mirage-report={path}", *args)
    assert res.ret in (0, 1), res.stdout.str()
    return json.loads(path.read_text(encoding="utf-8"))


def test_json_report_contents(pytester: pytest.Pytester, demo_suite: Path) -> None:
    rep = _run_report(pytester, "--mirage-gate=language_match.mean >= 0.5")
    assert rep["schema"] == "pytest-mirage/report/1"
    assert rep["models"] == ["extractive"]
    assert rep["suites"][0]["name"] == "demo" and rep["suites"][0]["languages"] == ["en", "hi", "ja"]
    under_test = [r for r in rep["results"] if r["model"] == "extractive"]
    assert len(under_test) == 6
    first = under_test[0]
    assert set(first) >= {"suite", "case_id", "lang", "model", "metrics", "outcome"}
    assert set(first["metrics"]) >= {"language_match", "citation_recall", "citation_map", "char3_recall", "rouge_l"}
    assert first["outcome"] == "passed"
    refs = [r for r in rep["results"] if r["outcome"] == "reference"]
    assert {r["model"] for r in refs} == {"control:oracle", "control:no-citations"}
    rows = [r for r in rep["leaderboard"] if r["lang"] == "all"]
    assert next(r["model"] for r in rows) == "control:oracle"
    assert {r["lang"] for r in rep["leaderboard"]} == {"all", "en", "hi", "ja"}
    assert all({"suite", "lang", "model", "rank", "score", "metrics"} <= set(r) for r in rep["leaderboard"])
    assert rep["gates"] and all({"suite", "lang", "model", "expr", "value", "passed"} <= set(g) for g in rep["gates"])


def test_null_metric_has_a_reason_never_zero(pytester: pytest.Pytester, demo_suite: Path) -> None:
    cases = demo_suite / "cases" / "demo.jsonl"
    lines = cases.read_text(encoding="utf-8").splitlines()
    obj = json.loads(lines[0])
    obj["answers"] = []
    lines[0] = json.dumps(obj, ensure_ascii=False)
    cases.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rep = _run_report(pytester)
    r = next(r for r in rep["results"] if r["case_id"] == "en-001" and r["model"] == "extractive")
    assert r["metrics"]["rouge_l"] is None and r["metrics"]["char3_recall"] is None
    assert "reference answer" in r["null_reasons"]["rouge_l"]


def test_record_then_replay_round_trip(pytester: pytest.Pytester, demo_suite: Path) -> None:
    rec = pytester.path / "runs" / "extractive.jsonl"
    first = _run_report(pytester, f"--mirage-record={rec}", name="a.json")
    lines = [json.loads(x) for x in rec.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 6 and {"case_id", "model", "output"} <= set(lines[0]) and lines[0]["model"] == "extractive"
    second = _run_report(pytester, f"--mirage-model=replay:{rec}", name="b.json")
    assert second["models"] == ["extractive"]
    pick = lambda rep: [(r["case_id"], r["metrics"]) for r in rep["results"] if r["model"] == "extractive"]  # noqa: E731
    assert pick(first) == pick(second)


def test_replay_missing_case_is_an_error_not_a_zero(pytester: pytest.Pytester, demo_suite: Path) -> None:
    run = pytester.path / "partial.jsonl"
    run.write_text(json.dumps({"case_id": "en-001", "model": "partial", "output": "##Answer: 1889 [9232#1]"}) + "\n")
    report = pytester.path / "r.json"
    res = pytester.runpytest("demo", f"--mirage-model=replay:{run}", f"--mirage-report={report}")
    res.assert_outcomes(passed=1, errors=5)
    res.stdout.fnmatch_lines(["*no recorded answer of model 'partial' for case 'en-002'*"])
    rep = json.loads(report.read_text())
    errors = [r for r in rep["results"] if r["outcome"] == "error"]
    assert len(errors) == 5 and all(r["metrics"] == {} for r in errors)
    # errored cases are counted on the leaderboard, never averaged in as zeros
    rows = {r["lang"]: r for r in rep["leaderboard"] if r["model"] == "partial"}
    assert rows["hi"]["n"] == 0 and rows["hi"]["errors"] == 2 and rows["hi"]["score"] is None
    assert rows["all"]["n"] == 1 and rows["all"]["errors"] == 5
    res.stdout.fnmatch_lines(["*lang*#*model*n*err*score*"])
    # a gate over cases with errors fails and says why
    assert all(g["passed"] is False for g in rep["gates"] if g["lang"] in ("hi", "ja"))
    assert rep["status"] == "failed"


def test_replay_file_with_bad_line_names_the_line(pytester: pytest.Pytester, demo_suite: Path) -> None:
    run = pytester.path / "bad.jsonl"
    run.write_text('{"case_id": "en-001", "model": "m", "output": "x"}\n{"case_id": "en-002", "model": "m"}\n')
    res = pytester.runpytest("demo", f"--mirage-model=replay:{run}")
    assert res.ret != 0
    res.stderr.fnmatch_lines(["*bad.jsonl:2: field 'output'*expected the raw model text*"])


def test_report_identical_with_xdist(pytester: pytest.Pytester, demo_suite: Path) -> None:
    a = pytester.path / "serial.json"
    b = pytester.path / "xdist.json"
    args = ["demo", "--mirage-gate=citation_recall.ci_low >= 0.5", "--mirage-threshold=rouge_l >= 0.4",
            "-p", "no:cacheprovider"]
    r1 = pytester.runpytest_subprocess(*args, f"--mirage-report={a}")
    r2 = pytester.runpytest_subprocess(*args, "-n", "2", f"--mirage-report={b}")
    assert r1.ret == r2.ret == pytest.ExitCode.TESTS_FAILED
    r2.assert_outcomes(passed=6, failed=3)  # 3 cases and the 3 ci_low gates passed; 3 cases failed
    assert a.read_text() == b.read_text()


def test_multiple_models_on_the_leaderboard(pytester: pytest.Pytester, demo_suite: Path) -> None:
    res = pytester.runpytest("demo", "--mirage-model=extractive", "--mirage-model=control:random-passages")
    res.stdout.fnmatch_lines(["*pytest-mirage leaderboard*", "*all*1*control:oracle (ref)*"])
    assert "control:random-passages" in res.stdout.str()


def test_markdown_and_html_reports(pytester: pytest.Pytester, demo_suite: Path) -> None:
    md = pytester.path / "out" / "summary.md"
    html = pytester.path / "out" / "report.html"
    res = pytester.runpytest("demo", f"--mirage-markdown={md}", f"--mirage-html={html}",
                             "--mirage-gate=rouge_l.mean >= 0.99")
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    res.stdout.fnmatch_lines([f"mirage report: {md}", f"mirage report: {html}"])
    text = md.read_text(encoding="utf-8")
    assert "| control:oracle (ref) |" in text.replace("\\", "") or "control:oracle" in text
    assert "rouge_l.mean >= 0.99" in text and "extractive" in text
    page = html.read_text(encoding="utf-8")
    assert page.lstrip().lower().startswith("<!doctype html") and page.count("<script") == 1  # the inline filters
    assert "extractive" in page and "rouge_l.mean &gt;= 0.99" in page


def test_empty_answer_fails_its_case(pytester: pytest.Pytester, demo_suite: Path) -> None:
    run = pytester.path / "empty.jsonl"
    lines = [{"case_id": c, "model": "blank", "output": "##Reason: nothing ##Answer: [9232#1]" if c == "en-001"
              else "##Answer: x [1]"} for c in ("en-001", "en-002", "hi-001", "hi-002", "ja-001", "ja-002")]
    run.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    res = pytester.runpytest("demo", f"--mirage-model=replay:{run}", "--mirage-threshold=citation_recall>=0")
    res.stdout.fnmatch_lines(["*en-001*", "empty answer: the model's output has no answer text*"])


def test_broken_source_suite_does_not_stop_the_others(pytester: pytest.Pytester, demo_suite: Path) -> None:
    report = pytester.path / "r.json"
    res = pytester.runpytest("demo", "--mirage-suite", f"miracl:{pytester.path / 'nothing'}?lang=th",
                             f"--mirage-report={report}")
    res.assert_outcomes(passed=6, errors=1)
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    rep = json.loads(report.read_text())
    assert rep["status"] == "failed" and rep["collection_errors"][0]["nodeid"].lstrip(":").startswith("mirage-suite:")


def test_markdown_lists_failed_cases_and_errors(pytester: pytest.Pytester, demo_suite: Path) -> None:
    run = pytester.path / "partial.jsonl"
    run.write_text(json.dumps({"case_id": "en-001", "model": "partial", "output": "##Answer: 1889 [9232#0]"}) + "\n")
    md = pytester.path / "s.md"
    pytester.runpytest("demo", f"--mirage-model=replay:{run}", f"--mirage-markdown={md}")
    text = md.read_text(encoding="utf-8")
    assert "## Failed cases (1)" in text and "citation_recall 0.00 &lt; 0.50" in text
    assert "## Errors (5)" in text and "| err |" in text
