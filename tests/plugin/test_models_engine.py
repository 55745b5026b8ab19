"""Plugin-level: a real OpenAI-compatible server on 127.0.0.1, cache modes, faults, xdist cache sharing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.answers import rag_answer
from tests.helpers.fake_openai import FakeOpenAIServer


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(answer=rag_answer) as srv:
        yield srv


def _args(server: FakeOpenAIServer, cache: Path, *extra: str) -> list[str]:
    return ["demo", "--mirage-model", "openai:fake-rag", f"--mirage-openai-base-url={server.base_url}",
            f"--mirage-cache={cache}", "--mirage-threshold=citation_recall>=0", *extra]


def test_openai_model_runs_and_second_run_is_fully_cached(pytester: pytest.Pytester, demo_suite: Path,
                                                         server: FakeOpenAIServer) -> None:
    cache = pytester.path / "cache"
    report = pytester.path / "r.json"
    res = pytester.runpytest(*_args(server, cache, f"--mirage-report={report}"))
    res.assert_outcomes(passed=6)
    assert server.completed == 6
    res.stdout.fnmatch_lines(["mirage engine: * 0 cache hits, 6 misses, 6 model calls*"])
    rows = [r for r in json.loads(report.read_text())["results"] if r["model"] == "openai:fake-rag"]
    assert len(rows) == 6 and all(r["metrics"]["language_match"] is not None for r in rows)
    res = pytester.runpytest(*_args(server, cache))
    res.assert_outcomes(passed=6)
    assert server.completed == 6  # nothing new reached the server
    res.stdout.fnmatch_lines(["mirage engine: * 6 cache hits, 0 misses, 0 model calls*"])


def test_replay_only_fails_on_a_miss_and_passes_on_a_warm_cache(pytester: pytest.Pytester, demo_suite: Path,
                                                               server: FakeOpenAIServer) -> None:
    cache = pytester.path / "cache"
    res = pytester.runpytest(*_args(server, cache, "--mirage-cache-mode=replay-only"))
    res.assert_outcomes(errors=6)
    res.stdout.fnmatch_lines(["*en-001*no cached answer*replay-only never calls a model*"])
    assert server.count == 0
    pytester.runpytest(*_args(server, cache)).assert_outcomes(passed=6)
    res = pytester.runpytest(*_args(server, cache, "--mirage-cache-mode=replay-only"))
    res.assert_outcomes(passed=6)
    assert server.completed == 6


def test_server_errors_are_item_errors_never_scores(pytester: pytest.Pytester, demo_suite: Path) -> None:
    with FakeOpenAIServer(answer=rag_answer, faults={"富士山": ["400"] * 3}) as srv:
        report = pytester.path / "r.json"
        res = pytester.runpytest(*_args(srv, pytester.path / "cache", f"--mirage-report={report}"))
    res.assert_outcomes(passed=5, errors=1)
    res.stdout.fnmatch_lines(["*ja-001*400*"])
    rep = json.loads(report.read_text())
    err = [r for r in rep["results"] if r["outcome"] == "error"]
    assert len(err) == 1 and err[0]["case_id"] == "ja-001" and err[0]["metrics"] == {} and "400" in err[0]["error"]


def test_transient_faults_are_retried(pytester: pytest.Pytester, demo_suite: Path) -> None:
    faults = {"Eiffel": ["500", "ok"], "Things Fall": ["429:0", "ok"], "ताजमहल": ["drop", "ok"]}
    with FakeOpenAIServer(answer=rag_answer, faults=faults) as srv:
        res = pytester.runpytest(*_args(srv, pytester.path / "cache"))
        assert srv.completed == 6 and srv.count == 9
    res.assert_outcomes(passed=6)
    res.stdout.fnmatch_lines(["mirage engine: * 9 model calls (3 retries)*"])


def test_xdist_workers_share_the_cache(pytester: pytest.Pytester, demo_suite: Path, server: FakeOpenAIServer) -> None:
    cache = pytester.path / "cache"
    res = pytester.runpytest_subprocess(*_args(server, cache, "-n", "2", "-p", "no:cacheprovider"))
    res.assert_outcomes(passed=6)
    assert server.completed == 6
    res.stdout.fnmatch_lines(["mirage engine: 6 requests, 0 cache hits, 6 misses*"])
    res = pytester.runpytest(*_args(server, cache, "--mirage-cache-mode=replay-only"))
    res.assert_outcomes(passed=6)
