"""Fixtures for teams: ``@pytest.mark.mirage`` + ``mirage_case``, ``mirage.check`` and ``mirage_model``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

TEST_FILE = '''
import pytest

@pytest.mark.mirage(suite="demo", lang="en")
def test_my_rag(mirage_case, mirage):
    passage = next(p for p in mirage_case.passages if p.id in mirage_case.relevant)
    mirage.check(f"##Answer: {passage.text} [{passage.id}]", "citation_recall >= 0.5")

@pytest.mark.mirage(suite="demo", lang="hi")
def test_uncited_answer(mirage_case, mirage):
    mirage.check("##Answer: " + mirage_case.answers[0], "citation_recall >= 0.5")
'''


def test_mirage_case_runs_once_per_case_and_check_joins_the_report(pytester: pytest.Pytester,
                                                                    demo_suite: Path) -> None:
    pytester.makepyfile(test_rag=TEST_FILE)
    report = pytester.path / "r.json"
    res = pytester.runpytest("test_rag.py", "-v", f"--mirage-report={report}", "--mirage-gate",
                             "citation_recall.mean >= 0.5")
    res.assert_outcomes(passed=3, failed=3)  # 2 + 2 checks, and one gate per model
    res.stdout.fnmatch_lines(["*test_my_rag[[]en/en-001[]] PASSED*", "*test_uncited_answer[[]hi/hi-001[]] FAILED*"])
    out = res.stdout.str()
    # a clean message naming the case line and the threshold's source, no plugin frames
    assert "cases/demo.jsonl:" in out and "citation_recall 0.00 < 0.50 (mirage.check in" in out
    assert "pytest_mirage" not in out.split("short test summary")[0].split("FAILURES")[-1]
    rep = json.loads(report.read_text())
    ids = {(r["case_id"], r["model"], r["outcome"]) for r in rep["results"]}
    assert ("en-001", "test_my_rag", "passed") in ids and ("hi-002", "test_uncited_answer", "failed") in ids
    board = {(r["lang"], r["model"]) for r in rep["leaderboard"]}
    assert ("en", "test_my_rag") in board and ("hi", "test_uncited_answer") in board
    gates = {(g["lang"], g["model"]): g["passed"] for g in rep["gates"]}
    assert gates[("en", "test_my_rag")] is True and gates[("hi", "test_uncited_answer")] is False
    res.stdout.fnmatch_lines(["*pytest-mirage leaderboard*", "FAILED gate demo [[]hi[]] test_uncited_answer*"])


def test_mirage_model_answers_through_the_engine(pytester: pytest.Pytester, demo_suite: Path) -> None:
    pytester.makepyfile(test_models='''
        import pytest

        @pytest.mark.mirage(suite="demo", lang="ja")
        def test_each_model(mirage_case, mirage_model, mirage):
            answer = mirage_model.answer(mirage_case)
            assert answer.model == mirage_model.name
            mirage.check(answer, "language_match >= 0.5")
    ''')
    res = pytester.runpytest("test_models.py", "-v", "--mirage-model=extractive", "--mirage-model=control:oracle")
    res.assert_outcomes(passed=4)
    res.stdout.fnmatch_lines(["*test_each_model[[]ja/ja-001-extractive[]] PASSED*", "*control:oracle*"])


def test_mirage_case_without_the_marker_is_a_clear_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_x="def test_x(mirage_case):\n    pass\n")
    res = pytester.runpytest("test_x.py")
    assert res.ret != 0
    res.stdout.fnmatch_lines(["*the mirage_case fixture needs @pytest.mark.mirage(suite=NAME_OR_PATH*"])


def test_marker_with_an_unknown_suite_names_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_x='''
        import pytest

        @pytest.mark.mirage(suite="no-such-suite")
        def test_x(mirage_case):
            pass
    ''')
    res = pytester.runpytest("test_x.py")
    assert res.ret != 0
    res.stdout.fnmatch_lines(["*mark.mirage(suite='no-such-suite'): --mirage-suite 'no-such-suite': not a bundled suite*"])


def test_check_with_an_unknown_metric_fails_cleanly(pytester: pytest.Pytester, demo_suite: Path) -> None:
    pytester.makepyfile(test_x='''
        import pytest

        @pytest.mark.mirage(suite="demo", lang="en")
        def test_x(mirage_case, mirage):
            mirage.check("##Answer: x", "citation_recal >= 0.5")
    ''')
    res = pytester.runpytest("test_x.py")
    res.assert_outcomes(failed=2)
    res.stdout.fnmatch_lines(["*Unknown metric 'citation_recal'. Did you mean: citation_recall?*"])


def test_bundled_suite_by_name_in_the_marker(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_x='''
        import pytest

        @pytest.mark.mirage(suite="mirage-mini", lang="sw")
        def test_x(mirage_case):
            assert mirage_case.lang == "sw" and mirage_case.passages
    ''')
    res = pytester.runpytest("test_x.py", "-q")
    res.assert_outcomes(passed=13)  # no case checked with mirage.check: no result, no gate
