"""The docs/extending.md example runs as written; importing the plugin stays light."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_extending_example_from_docs(pytester: pytest.Pytester, demo_suite: Path) -> None:
    doc = (ROOT / "docs" / "extending.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(# conftest.py\n.*?)```", doc, re.S)
    assert code, "the conftest example is missing from docs/extending.md"
    pytester.makeconftest(code.group(1))
    report = pytester.path / "r.json"
    res = pytester.runpytest("demo", "--mirage-model", "first-passage", "--mirage-threshold", "answer_chars <= 2000",
                             "--mirage-threshold", "citation_recall >= 0",
                             f"--mirage-report={report}")
    assert res.ret == 0, res.stdout.str()
    import json

    rep = json.loads(report.read_text())
    rows = [r for r in rep["results"] if r["model"] == "first-passage"]
    assert len(rows) == 6 and all(r["metrics"]["answer_chars"] > 10 for r in rows)
    res = pytester.runpytest("demo", "--mirage-model", "first-passage", "--mirage-threshold", "answer_chars <= 10",
                             "--mirage-threshold", "citation_recall >= 0")
    res.assert_outcomes(failed=6)
    res.stdout.fnmatch_lines(["*answer_chars * > 10.00 (--mirage-threshold)*"])
