"""Results as test reports for JUnit XML and pytest's summary: readable ``mirage.*`` properties on
each item's teardown report, and every gate as a test result of its own (``mirage-gate::...``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pytest

from ..finish.junit import gate_location as _location
from ..finish.junit import junit_properties

__all__ = ["gate_reports", "junit_properties", "publish_gate_reports"]

if TYPE_CHECKING:
    from ..report.model import RunReport


def gate_reports(report: RunReport, rootpath: Path) -> list[pytest.TestReport]:
    """Every gate and regression gate as a test result of its own (``mirage-gate::...``), so JUnit
    consumers and pytest's summary line count them: passed, failed, or skipped when an optional
    gate could not be evaluated."""
    from ..aggregate.regression import regression_outcome_text
    from ..report.sanitize import neutralise_commands

    out = []
    gates = [(f"{g.suite}::{g.lang}::{g.model}::{g.expr}", g.source, g.passed, g.describe(), "gate")
             for g in report.gates]
    gates += [(f"{g.suite}::{g.lang}::{g.model}::{g.expr}", g.source, g.passed,
               f"{g.suite} [{g.lang}] {g.model}: {g.expr}: " + regression_outcome_text(g.to_json()),
               "regression gate")
              for g in report.statistics.regressions]
    gates = [(neutralise_commands(ident), source, passed, neutralise_commands(text), kind)
             for ident, source, passed, text, kind in gates]
    for ident, source, passed, text, kind in gates:
        path, line = _location(source, rootpath)
        outcome: Literal["passed", "failed", "skipped"] = \
            "passed" if passed else ("skipped" if passed is None else "failed")
        longrepr: Any = None
        if outcome == "failed":
            longrepr = f"{kind} {text}"
        elif outcome == "skipped":
            longrepr = (path, (line or 0) + 1, f"not evaluable {kind}: {text}")
        out.append(pytest.TestReport(nodeid=f"mirage-gate::{ident}", location=(path, line, f"{kind} {ident}"),
                                     keywords={"mirage_gate": 1}, outcome=outcome, longrepr=longrepr, when="call",
                                     user_properties=[("mirage.gate", text)]))
    return out


def publish_gate_reports(config: pytest.Config, reports: Sequence[pytest.TestReport]) -> None:
    """Gates as test results for every consumer (JUnit XML, the session's failure count, the
    summary line): the terminal reporter takes them in its statistics, not in its progress
    line (which ended with the last collected item)."""
    from .compat import count_in_terminal_stats

    terminal = config.pluginmanager.get_plugin("terminalreporter")
    others = config.pluginmanager.subset_hook_caller(
        "pytest_runtest_logreport", remove_plugins=[terminal] if terminal is not None else [])
    for rep in reports:
        others(report=rep)
        # JUnit XML records a test case's properties (and closes it) with its teardown report
        others(report=pytest.TestReport(nodeid=rep.nodeid, location=rep.location, keywords=dict(rep.keywords),
                                        outcome="passed", longrepr=None, when="teardown",
                                        user_properties=rep.user_properties))
        if terminal is not None:
            category = config.hook.pytest_report_teststatus(report=rep, config=config)[0]
            count_in_terminal_stats(terminal, category, rep)
