"""--mirage-repeat: N independent (separately cached) calls per case, pass rates and flaky cases."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.fake_openai import FakeOpenAIServer


class Alternating:
    """A sampled model: for the Japanese cases it cites the right passage on every other call only
    (flaky); elsewhere it always cites the first passage of the prompt."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()

    def __call__(self, body: Mapping[str, Any]) -> str:
        prompt = body["messages"][-1]["content"]
        question = prompt.split("Contexts")[0]
        self.calls[question] += 1
        ids = re.findall(r'"\[([^\]]+)\]"', prompt)
        cite = ids[0]
        if "富士山" in question or "日本" in question:
            cite = "nothing" if self.calls[question] % 2 == 0 else ids[0]
        return f"##Reason: see [{cite}]\n##Answer: an answer from the passage [{cite}]"


def test_repeats_are_independent_cached_calls_and_flaky_cases_are_listed(pytester: pytest.Pytester,
                                                                         demo_suite: Path) -> None:
    model = Alternating()
    report = pytester.path / "r.json"
    with FakeOpenAIServer(answer=model) as srv:
        args = ["demo", "--mirage-model=openai:sampled?temperature=0.8", f"--mirage-openai-base-url={srv.base_url}",
                f"--mirage-cache={pytester.path / 'cache'}", "--mirage-repeat=4", "--mirage-threshold=citation_recall >= 0",
                "--mirage-threshold=invalid_citations <= 0", f"--mirage-report={report}",
                "--mirage-gate=citation_recall.ci_low >= 0"]
        res = pytester.runpytest(*args)
        assert srv.completed == 6 * 4  # every repeat is its own call
        res = pytester.runpytest(*args)
        assert srv.completed == 6 * 4  # ... and its own cache entry
    rep = json.loads(report.read_text())
    mine = [r for r in rep["results"] if r["model"].startswith("openai:sampled")]
    assert len(mine) == 24 and sorted({r["repeat"] for r in mine}) == [0, 1, 2, 3]
    flaky = {c for s in rep["repeats"] if s["metric"] == "invalid_citations" for c in s["flaky"]}
    ja_cases = {r["case_id"] for r in mine if r["lang"] == "ja"}
    assert flaky and flaky <= ja_cases
    ja = next(s for s in rep["repeats"] if s["metric"] == "invalid_citations" and s["lang"] == "ja")
    assert ja["samples"] == 8 and ja["all_pass"]["estimate"] < 1.0 < ja["pass_rate"]["estimate"] * 2
    res.stdout.fnmatch_lines(["*pytest-mirage repeated samples*", "*demo [[]ja[]] openai:sampled*flaky: ja-00*"])
