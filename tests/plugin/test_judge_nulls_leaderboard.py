"""A model that steers its judge into nulls shows on the leaderboard (issue 21).

A scripted loopback judge answers the claim-extraction prompt with unparseable text whenever the
answer carries a marker, which one model under test writes on three of its six cases: those values
are null (re-asked, then given up), and every leaderboard (terminal, JSON, Markdown, HTML) counts
them per model with the commonest reason. Without judge nulls the reports have no such column or
field, so existing reports keep their bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.fake_openai import FakeOpenAIServer

MARK = "STEER-7"
CASES = ("en-001", "en-002", "hi-001", "hi-002", "ja-001", "ja-002")
STEERED = ("en-001", "hi-001", "ja-001")


def judge(body: Mapping[str, Any]) -> str:
    """Claims for every answer, except that an answer with the marker gets a reply that does not parse."""
    prompt = body["messages"][-1]["content"]
    if "Break the answer down" in prompt:
        if MARK in prompt.split("Answer:")[-1]:
            return "I would rather not say."
        return json.dumps(["first claim"])
    n = len(re.findall(r"^\d+\. ", prompt.split("Claims:")[1], re.M))
    return "\n".join(f"{i}: [[Yes]]" for i in range(1, n + 1))


def _run_file(path: Path, marked: tuple[str, ...]) -> Path:
    path.write_text("".join(json.dumps({"case_id": c, "model": "steer", "output":
                                        f"##Reason: see [1]. ##Answer: {MARK if c in marked else 'plain'} answer [1]"})
                            + "\n" for c in CASES), encoding="utf-8")
    return path


def _run(pytester: pytest.Pytester, srv: FakeOpenAIServer, marked: tuple[str, ...], name: str) -> pytest.RunResult:
    root = pytester.path / name
    root.mkdir()
    run = _run_file(root / "steer.jsonl", marked)
    return pytester.runpytest("demo", "--mirage-model=extractive", f"--mirage-model=replay:{run}",
                              "--mirage-judges=support_llm=openai:fake-judge?structured=off",
                              f"--mirage-openai-base-url={srv.base_url}", f"--mirage-cache={root / 'cache'}",
                              f"--mirage-report={root / 'r.json'}", f"--mirage-markdown={root / 'r.md'}",
                              f"--mirage-html={root / 'r.html'}", "-p", "no:cacheprovider")


def test_judge_nulls_are_counted_per_model_on_every_leaderboard(pytester: pytest.Pytester, demo_suite: Path) -> None:
    with FakeOpenAIServer(answer=judge) as srv:
        res = _run(pytester, srv, STEERED, "steered")
    # the replayed English answers fail the demo suite's language thresholds on two hi/ja cases; a
    # null judge value itself fails nothing here (no gate or threshold on support_llm)
    assert res.ret == pytest.ExitCode.TESTS_FAILED, res.stdout.str()
    res.assert_outcomes(passed=10, failed=2)
    root = pytester.path / "steered"
    rep = json.loads((root / "r.json").read_text(encoding="utf-8"))
    nulls = {r["case_id"] for r in rep["results"] if r["model"] == "steer" and r["metrics"]["support_llm"] is None}
    assert nulls == set(STEERED)
    rows = {(r["lang"], r["model"]): r for r in rep["leaderboard"]}
    steer, extractive = rows[("all", "steer")], rows[("all", "extractive")]
    assert steer["judge_nulls"] == 3 and steer["n"] == 6
    assert steer["judge_null_reason"].startswith("support_llm: ")
    assert extractive["judge_nulls"] == 0 and extractive["judge_null_reason"] is None
    assert rows[("en", "steer")]["judge_nulls"] == 1
    # the report reads back (a baseline) with the counts
    from pytest_mirage.report.model import RunReport

    back = {(r.lang, r.model): r for r in RunReport.from_json(rep).leaderboard}
    assert back[("all", "steer")].judge_nulls == 3
    assert back[("all", "steer")].judge_null_reason == steer["judge_null_reason"]

    out = res.stdout.str()
    assert "judge nulls" in out and "judge nulls of steer: 3 of 6 cases (commonest: support_llm: " in out
    assert "judge nulls of extractive" not in out
    md = (root / "r.md").read_text(encoding="utf-8")
    assert "| judge nulls |" in md
    assert re.search(r"judge nulls of steer: 3 of 6 cases \(commonest: support\\?_llm: ", md), md
    html = (root / "r.html").read_text(encoding="utf-8")
    assert "judge nulls of steer: 3 of 6 cases" in html


def test_without_judge_nulls_the_leaderboard_has_no_such_column(pytester: pytest.Pytester, demo_suite: Path) -> None:
    with FakeOpenAIServer(answer=judge) as srv:
        res = _run(pytester, srv, (), "plain")
    assert res.ret == pytest.ExitCode.TESTS_FAILED, res.stdout.str()  # the same two language failures
    res.assert_outcomes(passed=10, failed=2)
    root = pytester.path / "plain"
    rep = json.loads((root / "r.json").read_text(encoding="utf-8"))
    assert rep["leaderboard"] and not any("judge_nulls" in r or "judge_null_reason" in r for r in rep["leaderboard"])
    assert "judge nulls" not in (root / "r.md").read_text(encoding="utf-8")
    assert "judge nulls" not in res.stdout.str()
