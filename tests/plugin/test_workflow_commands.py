"""No text from a model, a server, a suite or a judge can issue a GitHub Actions workflow command.

The runner reads a command from a line that starts with ``::`` once leading white space is trimmed,
and the legacy form ``##[cmd]`` anywhere in a line. Each payload below is printed through every
path the plugin writes to stdout (a case error, a suite load error, the leaderboard, a gate line,
the session summary); no line of the output may parse as a command.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_mirage.report.sanitize import (
    is_workflow_command,
    neutralise_commands,
    terminal_name,
    terminal_safe,
)
from tests.helpers.answers import rag_answer
from tests.helpers.fake_openai import FakeOpenAIServer

PAYLOADS = ("##[error]legacy-error", "x ##[add-mask]masked", "##[stop-commands]tok", "::error::v2-error",
            "\u00a0::warning::nbsp-indented", "\t::add-mask::tabbed")


def _commands(text: str) -> list[str]:
    return [line for line in text.splitlines() if is_workflow_command(line)]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_every_neutraliser_breaks_both_forms(payload: str) -> None:
    for fn in (terminal_safe, terminal_name, neutralise_commands):
        once = fn(f"line one\n{payload}\n  {payload} tail")
        assert not _commands(once), (fn.__name__, once)
        assert fn(once) == once  # idempotent: the escapes cannot form a command again


def test_runner_rules_as_the_tests_read_them() -> None:
    assert is_workflow_command("::error::x") and is_workflow_command(" \u3000::notice::x")
    assert is_workflow_command("text ##[group]x") and not is_workflow_command("a::b") and not is_workflow_command("#[x]")


def test_each_payload_through_every_output_path(pytester: pytest.Pytester, demo_suite: Path) -> None:
    bad = pytester.path / "badsuite"
    shutil.copytree(demo_suite, bad)
    toml = bad / "suite.toml"
    # a load error that quotes the suite's text: an unknown key
    toml.write_text(toml.read_text(encoding="utf-8").replace('[suite]\n', '[suite]\n"##[error]k ::x" = 1\n', 1)
                    .replace('name = "demo"', 'name = "bad"'), encoding="utf-8")
    body = json.dumps({"error": {"message": "\n".join(PAYLOADS)}}).encode()
    name = "m ##[error]name ::error::n"
    with FakeOpenAIServer(answer=rag_answer, canned={"Eiffel": (400, body)}) as srv:
        res = pytester.runpytest_subprocess(
            "demo", "badsuite", f"--mirage-model=openai:fake?name={name}", f"--mirage-openai-base-url={srv.base_url}",
            "--mirage-gate=citation_recall.mean >= 0.99", "--mirage-threshold=citation_recall >= 0",
            f"--mirage-cache={pytester.path / 'cache'}", "-p", "no:cacheprovider", "-rA")
        assert srv.count > 0
    out = res.stdout.str() + res.stderr.str()
    assert res.ret != pytest.ExitCode.OK
    # each path printed its payload (escaped), and nothing reads as a command
    assert "#\\x23[error]k" in out  # the load error
    assert "#\\x23[error]legacy-error" in out  # the case error (the server's body)
    assert "m #\\x23[error]name" in out  # the model's name: leaderboard and gate line
    leaderboard = out.split("pytest-mirage leaderboard —")[1].split("pytest-mirage gates")[0]
    assert "#\\x23[error]name" in leaderboard
    assert any("FAILED gate" in line and "#\\x23[error]name" in line for line in out.splitlines())
    assert "mirage" in out.split("short test summary")[-1]
    assert not _commands(out), _commands(out)
