"""JUnit XML: items carry their metric values, checks and failures as properties; every gate is a test
result of its own, in the XML and in pytest's summary line, consistently with the exit status."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest


def _cases(path: Path) -> dict[str, ET.Element]:
    suite = ET.parse(path).getroot()[0]
    return {f"{c.get('classname')}::{c.get('name')}": c for c in suite}


def _props(case: ET.Element) -> list[tuple[str, str]]:
    props = case.find("properties")
    return [] if props is None else [(p.get("name", ""), p.get("value", "")) for p in props]


@pytest.mark.parametrize("xdist", [False, True], ids=["serial", "xdist"])
def test_junit_properties_and_gate_testcases(pytester: pytest.Pytester, demo_suite: Path, xdist: bool) -> None:
    xml = pytester.path / "junit.xml"
    args = ["demo", f"--junitxml={xml}", "--mirage-threshold=rouge_l >= 0.45", "--mirage-gate=rouge_l.mean >= 0.5",
            "--mirage-gate=bleu.mean@de? >= 0.1", "-p", "no:cacheprovider"]
    res = pytester.runpytest_subprocess(*args, *(["-n", "2"] if xdist else []))
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    # 6 cases (3 miss rouge_l >= 0.45) + 3 rouge_l gates (2 failed) + 1 optional gate skipped
    res.assert_outcomes(passed=4, failed=5, skipped=1)
    cases = _cases(xml)
    root = ET.parse(xml).getroot()[0]
    assert (root.get("tests"), root.get("failures"), root.get("skipped")) == ("10", "5", "1")
    en1 = cases["demo.suite.toml::en/en-001[extractive]"]
    props = dict(_props(en1))
    assert props["mirage.model"] == "extractive" and props["mirage.case"] == "demo/en-001 (en)"
    assert float(props["mirage.metric.citation_recall"]) == 1.0 and props["mirage.metric.hit_at_k"] == "null"
    assert props["mirage.check.rouge_l"] == "failed"
    assert any(k == "mirage.failure" and "rouge_l 0.39 < 0.45" in v for k, v in _props(en1))
    gate = cases["mirage-gate.demo.en.extractive::rouge_l.mean >= 0.5"]
    assert gate.find("failure") is not None
    assert ("mirage.gate", "demo [en] extractive: rouge_l.mean >= 0.5 -> 0.292 (--mirage-gate)") in _props(gate)
    assert cases["mirage-gate.demo.hi.extractive::rouge_l.mean >= 0.5"].find("failure") is None
    assert cases["mirage-gate.demo.de.extractive::bleu.mean@de? >= 0.1"].find("skipped") is not None
    res.stdout.fnmatch_lines(["*gate demo::en::extractive::rouge_l.mean >= 0.5*",
                              "FAILED mirage-gate::demo::en::extractive::rouge_l.mean >= 0.5 - gate demo*"])


def test_all_cases_pass_but_a_gate_fails_the_summary_line_says_so(pytester: pytest.Pytester,
                                                                   demo_suite: Path) -> None:
    res = pytester.runpytest("demo", "--mirage-gate=rouge_l.mean >= 0.9")
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    res.assert_outcomes(passed=6, failed=3)
    res.stdout.fnmatch_lines(["*3 failed, 6 passed*"])


def test_mirage_properties_travel_on_the_teardown_report_only(pytester: pytest.Pytester, demo_suite: Path) -> None:
    # JUnit XML reads properties from the teardown report; setup and call reports stay small (xdist
    # serializes every report of every item)
    pytester.makeconftest("""
        import json
        def pytest_runtest_logreport(report):
            n = sum(1 for k, _ in report.user_properties if k.startswith("mirage."))
            with open("props.jsonl", "a") as fh:
                fh.write(json.dumps([report.nodeid, report.when, n]) + "\\n")
    """)
    res = pytester.runpytest_subprocess("demo", "-p", "no:cacheprovider", "-n", "2")
    assert res.ret == pytest.ExitCode.OK
    rows = [json.loads(x) for x in (pytester.path / "props.jsonl").read_text().splitlines()]
    items = {nodeid for nodeid, _, _ in rows}
    assert len(items) == 6
    assert all(n == 0 for _, when, n in rows if when != "teardown")
    assert all(n > 10 for _, when, n in rows if when == "teardown")
