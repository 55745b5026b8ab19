"""The sample report under fixtures/reports reads back, writes the same JSON and renders."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_mirage.report.html import html_report
from pytest_mirage.report.markdown import markdown_report
from pytest_mirage.report.model import RunReport

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "reports" / "demo-report.json"


def test_sample_report_round_trips_and_renders() -> None:
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    report = RunReport.from_json(data)
    assert report.to_json() == data
    assert report.status == "failed" and report.failed_gates and report.cases
    md = markdown_report(report)
    assert "## Gates" in md and "control:random-passages" in md and "Head-to-head" in md
    page = html_report(data)
    assert page.lstrip().lower().startswith("<!doctype html") and "citation\\_recall" not in page
