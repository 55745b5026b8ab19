"""A session end always writes its reports, and a crashed xdist worker's case is an error result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def test_a_failing_session_end_step_is_fatal_and_the_reports_are_still_written(pytester: pytest.Pytester,
                                                                               demo_suite: Path) -> None:
    pytester.makeconftest("""
        def pytest_configure(config):
            import pytest_mirage.finish.report as report

            def broken(ctx, results):
                raise RuntimeError("head-to-head exploded")

            report.head_to_head_rows = broken
    """)
    res = pytester.runpytest_subprocess("demo", "-p", "no:cacheprovider", "--mirage-report=out.json",
                                        "--mirage-markdown=out.md", "--junitxml=junit.xml")
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    data = json.loads((pytester.path / "out.json").read_text())
    assert any("session-end step 'head-to-head' failed (RuntimeError: head-to-head exploded)" in f
               for f in data["fatal"]), data["fatal"]
    assert data["status"] == "failed"
    assert len(data["results"]) >= 6 and data["leaderboard"]  # everything else is there
    assert (pytester.path / "out.md").is_file() and (pytester.path / "junit.xml").is_file()
    res.stdout.fnmatch_lines(["*session-end step 'head-to-head' failed*"])


def test_a_crashed_worker_case_is_an_error_result_in_every_report(pytester: pytest.Pytester, demo_suite: Path) -> None:
    pytest.importorskip("xdist")
    pytester.makeconftest("""
        import os

        def pytest_runtest_setup(item):
            if hasattr(item.config, "workerinput") and item.name.startswith("hi/"):
                os._exit(3)  # the worker dies while running a Hindi case
    """)
    res = pytester.runpytest_subprocess("demo", "-p", "no:cacheprovider", "-n", "2", "--mirage-report=out.json",
                                        "--mirage-markdown=out.md")
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    data = json.loads((pytester.path / "out.json").read_text())
    crashed = [r for r in data["results"] if r["outcome"] == "error" and "crashed while running" in (r["error"] or "")]
    assert crashed, [(r["case_id"], r["outcome"]) for r in data["results"]]
    assert all(r["lang"] == "hi" and r["suite"] == "demo" for r in crashed)
    assert {r["case_id"] for r in data["results"] if r["lang"] != "hi"}  # the other cases are still there
    assert "crashed while running" in (pytester.path / "out.md").read_text()
