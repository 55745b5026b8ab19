"""The wire format results travel in from an item (or an xdist worker) to the controller."""

from __future__ import annotations

import json

import pytest

from pytest_mirage.errors import MirageError
from pytest_mirage.pytest import wire
from pytest_mirage.results import CaseResult, RecordLine


def _report() -> pytest.TestReport:
    return pytest.TestReport(nodeid="suite.toml::en/q1[m]", location=("suite.toml", None, "x"), keywords={},
                             outcome="passed", longrepr=None, when="call", user_properties=[("other", 1)])


def _result() -> CaseResult:
    return CaseResult(suite="s", suite_ref="/x/suite.toml", case_id="q1", lang="en", model="m",
                      metrics={"citation_recall": 0.5, "support_nli": None}, reasons={"support_nli": "no judge"},
                      checks={"citation_recall": True},
                      run_line=RecordLine.from_json({"suite": "s", "case_id": "q1", "model": "m", "output": "a [1]",
                                                     "answer": "a [1]", "citations": ["1"]}))


def test_results_round_trip_through_json_as_xdist_sends_them() -> None:
    rep = _report()
    wire.attach_results(rep, [_result()])
    assert rep.user_properties[0] == ("other", 1)  # what was there stays
    # xdist serializes the report's user_properties as JSON (tuples become lists)
    sent = json.loads(json.dumps(rep.user_properties))
    back = pytest.TestReport(nodeid=rep.nodeid, location=rep.location, keywords={}, outcome="passed",
                             longrepr=None, when="call", user_properties=sent)
    assert wire.results_of(back) == [_result()]


def test_reports_of_other_tests_carry_no_results() -> None:
    assert wire.results_of(_report()) == []


def test_another_version_of_the_format_is_an_error_that_names_it() -> None:
    rep = _report()
    rep.user_properties = [("pytest_mirage.results.v0", [])]
    with pytest.raises(MirageError, match=r"wire format 'pytest_mirage.results.v0'.*same pytest-mirage version"):
        wire.results_of(rep)


def test_attaching_does_not_touch_the_items_list() -> None:
    shared: list[tuple[str, object]] = [("other", 1)]
    rep = pytest.TestReport(nodeid="n", location=("n", None, "n"), keywords={}, outcome="passed", longrepr=None,
                            when="call", user_properties=shared)
    wire.attach_results(rep, [_result()])
    assert shared == [("other", 1)]
