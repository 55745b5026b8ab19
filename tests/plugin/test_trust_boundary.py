"""A suite folder is data: its [judges] table may name judges and models, but not choose where the
requests (and the API key) go, which credential is sent, code to run, or a file outside the folder.

Each test reproduces an attack from issue 21 with a loopback server standing in for the attacker's
endpoint, and asserts that the run refuses the suite and that the server received nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.fake_openai import FakeOpenAIServer

KEY = "sk-test-TRUST-0a1b2c3d4e5f"


def _four(body: object) -> str:
    return "4"


def _judges(suite: Path, table: str) -> None:
    toml = suite / "suite.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + "\n[judges]\n" + table + "\n", encoding="utf-8")


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("demo", f"--mirage-cache={pytester.path / 'cache'}", "-p", "no:cacheprovider",
                                         *args)


@pytest.fixture
def key_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("SECRETENV", "sk-other-SECRET-99887766")


def _refused(res: pytest.RunResult, *patterns: str) -> str:
    out = res.stdout.str() + res.stderr.str()
    assert res.ret != pytest.ExitCode.OK, out
    for pattern in patterns:
        assert pattern in out, (pattern, out)
    assert KEY not in out and "sk-other-SECRET" not in out
    return out


@pytest.mark.usefixtures("key_env")
def test_suite_base_url_with_environ_template_is_refused(pytester: pytest.Pytester, demo_suite: Path) -> None:
    with FakeOpenAIServer(answer=_four) as srv:
        _judges(demo_suite, f'fluency_llm = "openai:j?base_url={srv.base_url}&template.en=/proc/self/environ"')
        res = _run(pytester)
        assert srv.count == 0  # nothing reached the suite's endpoint: no environment, no key
    _refused(res, "[judges] table", "suite folder")


@pytest.mark.usefixtures("key_env")
def test_suite_base_url_is_refused_and_the_fix_named(pytester: pytest.Pytester, demo_suite: Path) -> None:
    with FakeOpenAIServer(answer=_four) as srv:
        _judges(demo_suite, f'fluency_llm = "openai:j?base_url={srv.base_url}"')
        res = _run(pytester)
        assert srv.count == 0
    _refused(res, "option 'base_url' may not come from a suite's [judges] table", "--mirage-judges fluency_llm=",
             "mirage_judges")


@pytest.mark.usefixtures("key_env")
def test_suite_api_key_env_is_refused(pytester: pytest.Pytester, demo_suite: Path) -> None:
    with FakeOpenAIServer(answer=_four) as srv:
        _judges(demo_suite, 'fluency_llm = { backend = "openai:j", api_key_env = "SECRETENV" }')
        res = _run(pytester, f"--mirage-openai-base-url={srv.base_url}")
        assert srv.count == 0
    _refused(res, "option 'api_key_env' may not come from a suite's [judges] table")


@pytest.mark.usefixtures("key_env")
def test_suite_template_outside_the_folder_is_refused(pytester: pytest.Pytester, demo_suite: Path) -> None:
    (pytester.path / "outside.txt").write_text("{{question}} {{answer}} secret outside", encoding="utf-8")
    with FakeOpenAIServer(answer=_four) as srv:
        _judges(demo_suite, 'fluency_llm = "openai:j?template.en=../outside.txt"')
        res = _run(pytester, f"--mirage-openai-base-url={srv.base_url}")
        assert srv.count == 0
    _refused(res, "leads out of the suite folder")


@pytest.mark.usefixtures("key_env")
@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_suite_template_symlinked_outside_is_refused(pytester: pytest.Pytester, demo_suite: Path) -> None:
    (pytester.path / "outside.txt").write_text("{{question}} {{answer}} secret outside", encoding="utf-8")
    (demo_suite / "t.txt").symlink_to(pytester.path / "outside.txt")
    with FakeOpenAIServer(answer=_four) as srv:
        _judges(demo_suite, 'fluency_llm = "openai:j?template.en=t.txt"')
        res = _run(pytester, f"--mirage-openai-base-url={srv.base_url}")
        out = res.stdout.str() + res.stderr.str()
        assert not any("secret outside" in str(r.body) for r in srv.log), out
    _refused(res, "outside the suite folder")


@pytest.mark.usefixtures("key_env")
def test_suite_python_judge_is_refused(pytester: pytest.Pytester, demo_suite: Path) -> None:
    _judges(demo_suite, 'fluency_llm = "py:os:system"')
    _refused(_run(pytester), "may not use model kind 'py'")


@pytest.mark.usefixtures("key_env")
def test_suite_judge_goes_to_the_endpoint_the_user_configured(pytester: pytest.Pytester, demo_suite: Path) -> None:
    # the allowed form: the suite names the judge and its model; the key goes only to the user's base URL
    (demo_suite / "fluency.txt").write_text("Rate {{question}} / {{answer}} (in-folder template)", encoding="utf-8")
    with FakeOpenAIServer(answer=_four) as srv:
        _judges(demo_suite, 'fluency_llm = "openai:j?template.en=fluency.txt&temperature=0"')
        res = _run(pytester, f"--mirage-openai-base-url={srv.base_url}")
        assert srv.count > 0, res.stdout.str()
        assert {r.headers.get("authorization") for r in srv.log} == {f"Bearer {KEY}"}
        assert any("in-folder template" in str(r.body) for r in srv.log)
    assert res.ret == pytest.ExitCode.OK, res.stdout.str()


@pytest.mark.usefixtures("key_env")
def test_the_named_fix_works(pytester: pytest.Pytester, demo_suite: Path) -> None:
    # a refused entry stays refused while it is in the table (the suite is reviewed, not half-trusted) ...
    with FakeOpenAIServer(answer=_four) as srv:
        _judges(demo_suite, 'fluency_llm = "openai:j?base_url=http://127.0.0.1:9/v1"')
        judge = f"--mirage-judges=fluency_llm=openai:j?base_url={srv.base_url}"
        _refused(_run(pytester, judge), "remove it from the suite's [judges] table")
        # ... and the fix it names runs: the entry removed, the endpoint given on the command line
        toml = demo_suite / "suite.toml"
        toml.write_text(toml.read_text(encoding="utf-8").split("[judges]")[0], encoding="utf-8")
        res = _run(pytester, judge)
        assert srv.count > 0 and res.ret == pytest.ExitCode.OK, res.stdout.str()
