"""Whole-run hardening: no secret in anything the plugin writes, sane defaults against a one-slot local
server, outputs that cannot be written, a language filter that matches nothing."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.helpers.answers import rag_answer
from tests.helpers.fake_openai import FakeOpenAIServer

KEY = "sk-test-SECRET-9f8e7d6c5b4a"


def test_no_key_in_any_file_the_plugin_writes(pytester: pytest.Pytester, demo_suite: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", KEY)
    out = pytester.path / "out"
    with FakeOpenAIServer(answer=rag_answer) as srv:
        base = srv.base_url.replace("http://", f"http://user:{KEY}@")
        spec = f"openai:fake-rag?base_url={base}%3Ftoken%3D{KEY}&api_key_env=MY_KEY"
        res = pytester.runpytest_subprocess(
            "demo", f"--mirage-model={spec}", f"--mirage-cache={out / 'cache'}", f"--mirage-report={out / 'r.json'}",
            f"--mirage-markdown={out / 'r.md'}", f"--mirage-html={out / 'r.html'}", f"--mirage-record={out / 'run.jsonl'}",
            f"--junitxml={out / 'junit.xml'}", "--mirage-threshold=citation_recall >= 0",
            "--mirage-gate=language_match.mean >= 0.5", "-p", "no:cacheprovider")
        assert srv.completed == 6  # the key in the URL and the query reached the server, as configured
    assert res.ret == pytest.ExitCode.OK, res.stdout.str()
    written = [p for p in out.rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {"r.json", "r.md", "r.html", "run.jsonl", "junit.xml"}
    for path in written:
        assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in res.stdout.str() and KEY not in res.stderr.str()
    models = json.loads((out / "r.json").read_text())["models"]
    assert models == ["openai:fake-rag"]  # transport options and credentials are not part of the name


def test_one_slot_local_server_with_default_options_finishes(pytester: pytest.Pytester, demo_suite: Path) -> None:
    # like llama.cpp's server: one request at a time, generating to its context limit unless told
    with FakeOpenAIServer(answer=rag_answer, serial=True, token_s=0.002, context_limit=20_000) as srv:
        start = time.monotonic()
        res = pytester.runpytest_subprocess("demo", "--mirage-model=openai:local", "--mirage-threshold=citation_recall >= 0",
                                            f"--mirage-openai-base-url={srv.base_url}",
                                            f"--mirage-cache={pytester.path / 'cache'}", "-p", "no:cacheprovider")
        elapsed = time.monotonic() - start
        deadline = time.monotonic() + 10
        while (srv.generating or srv.in_flight) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert srv.generating == 0 and srv.in_flight == 0  # nothing left running after the session
    res.assert_outcomes(passed=6)
    assert srv.completed == 6 and all(r.body.get("max_tokens") for r in srv.log)
    assert elapsed < 120  # generous bound: without max_tokens each answer would take 40 s


def test_unwritable_outputs_still_print_the_leaderboard_and_fail(pytester: pytest.Pytester, demo_suite: Path) -> None:
    blocker = pytester.path / "not-a-dir"
    blocker.write_text("x")
    res = pytester.runpytest("demo", f"--mirage-report={blocker / 'r.json'}", f"--mirage-record={blocker / 'run.jsonl'}")
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    res.stdout.fnmatch_lines(["*pytest-mirage leaderboard*", "*cannot write the record file*not-a-dir*",
                              "*cannot write *not-a-dir*r.json*"])


def test_stale_report_is_removed_at_session_start(pytester: pytest.Pytester, demo_suite: Path) -> None:
    report = pytester.path / "r.json"
    report.write_text('{"stale": true}')
    res = pytester.runpytest("demo", f"--mirage-report={report}", "--mirage-model=replay:missing.jsonl")
    assert res.ret == pytest.ExitCode.USAGE_ERROR  # the run never started: no report, and no stale one either
    assert not report.exists() or "stale" not in report.read_text()


def test_language_filter_that_matches_nothing_says_so(pytester: pytest.Pytester, demo_suite: Path) -> None:
    res = pytester.runpytest("demo", "--mirage-lang", "it")
    assert res.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    res.stdout.fnmatch_lines(["*--mirage-lang: no collected suite has cases in it*"])


def test_a_key_in_extra_is_refused_without_being_repeated(pytester: pytest.Pytester, demo_suite: Path) -> None:
    with FakeOpenAIServer(answer=rag_answer) as srv:
        spec = f'openai:fake-rag?base_url={srv.base_url}&extra={{"api_key": "{KEY}"}}'
        res = pytester.runpytest_subprocess("demo", f"--mirage-model={spec}", "-p", "no:cacheprovider")
        assert srv.count == 0
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    out = res.stdout.str() + res.stderr.str()
    assert "api_key" in out and KEY not in out
