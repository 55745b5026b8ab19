"""CaseResult.run_line is a typed RecordLine: it writes the replay format as Answer.to_run_line does,
travels through CaseResult's JSON unchanged, and reads back as what a replay reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_mirage.evaluate.requests import build_request, finalize_answer
from pytest_mirage.models.base import Answer
from pytest_mirage.results import CaseResult, RecordLine
from pytest_mirage.suites.loader import load_suite
from pytest_mirage.suites.problems import Problems
from pytest_mirage.suites.runs import read_run_lines

ROOT = Path(__file__).resolve().parents[2]


def _answers() -> list[tuple[str, Answer]]:
    suite = load_suite(ROOT / "tests" / "data" / "demo")
    case = suite.case("en-001")
    req = build_request(suite, case, retrieves=True)
    return [(suite.name, finalize_answer(req, Answer(case.id, "m", "##Answer: 1889 [9232#1][zzz]"))),
            (suite.name, Answer(case.id, "plain", "just text")),
            (suite.name, Answer(case.id, "full", "out", answer="a", citations=("x",), retrieved=("r1", "r2"),
                                contexts=("ctx",), truncated=True))]


@pytest.mark.parametrize("index", range(3))
def test_a_record_line_writes_the_replay_format_and_reads_back(index: int, tmp_path: Path) -> None:
    suite, answer = _answers()[index]
    expected = {"suite": suite, **answer.to_run_line()}
    line = RecordLine.from_json(expected)
    assert line.to_json() == expected and list(line.to_json()) == list(expected)  # same keys, same order
    result = CaseResult(suite=suite, suite_ref=suite, case_id=answer.case_id, lang="en", model=answer.model,
                        metrics={}, run_line=line)
    wire = json.loads(json.dumps(result.to_json()))
    assert wire["run_line"] == expected and CaseResult.from_json(wire) == result
    # what --mirage-record writes is what replay reads
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps(line.to_json()) + "\n", encoding="utf-8")
    problems = Problems()
    (read,) = read_run_lines(path, problems)
    assert not problems.count
    assert (read.suite, read.case_id, read.model, read.output, read.answer, read.citations, read.retrieved,
            read.contexts, read.truncated) == (line.suite, line.case_id, line.model, line.output, line.answer,
                                               line.citations, line.retrieved, line.contexts, line.truncated)


def test_the_answer_text_falls_back_to_the_output_only_when_no_answer_was_parsed() -> None:
    assert RecordLine("s", "c", "m", "raw").answer_text == "raw"
    assert RecordLine("s", "c", "m", "raw", answer="").answer_text == ""


def test_a_record_line_with_an_unknown_or_missing_key_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"unknown keys \['usage'\]"):
        RecordLine.from_json({"suite": "s", "case_id": "c", "model": "m", "output": "o", "usage": {}})
    with pytest.raises(KeyError, match="output"):
        RecordLine.from_json({"suite": "s", "case_id": "c", "model": "m"})
