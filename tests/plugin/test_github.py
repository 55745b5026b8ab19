"""GitHub Actions: the job summary is appended when GITHUB_STEP_SUMMARY is set, annotations point at
the golden-file line of a failed case and the suite.toml line of a failed gate; nothing without them."""

from __future__ import annotations

from pathlib import Path

import pytest


def _env(monkeypatch: pytest.MonkeyPatch, root: Path, summary: Path | None, actions: bool) -> None:
    for key in ("GITHUB_STEP_SUMMARY", "GITHUB_ACTIONS", "GITHUB_WORKSPACE"):
        monkeypatch.delenv(key, raising=False)
    if summary is not None:
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    if actions:
        monkeypatch.setenv("GITHUB_ACTIONS", "true")
        monkeypatch.setenv("GITHUB_WORKSPACE", str(root))


def test_step_summary_and_annotations(pytester: pytest.Pytester, demo_suite: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    summary = pytester.path / "summary.md"
    summary.write_text("# earlier step\n", encoding="utf-8")
    toml = demo_suite / "suite.toml"
    toml.write_text(toml.read_text() + '\n[gates]\n"rouge_l.mean" = ">= 0.9"\n')
    _env(monkeypatch, pytester.path, summary, actions=True)
    res = pytester.runpytest_subprocess("demo", "--mirage-threshold=rouge_l >= 0.45", "-p", "no:cacheprovider")
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("# earlier step\n")  # appended, never overwritten
    assert "control:oracle" in text and "rouge\\_l.mean >= 0.9" in text.replace("rouge_l", "rouge\\_l")
    out = res.stdout.str()
    # a failed case: at its line in the golden file; a failed gate: at its line in suite.toml
    assert "::error file=demo/cases/demo.jsonl,line=1," in out
    assert "::error file=demo/suite.toml,line=13," in out


def test_nothing_outside_github_or_when_turned_off(pytester: pytest.Pytester, demo_suite: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    summary = pytester.path / "summary.md"
    _env(monkeypatch, pytester.path, None, actions=False)
    res = pytester.runpytest_subprocess("demo", "--mirage-gate=rouge_l.mean >= 0.9", "-p", "no:cacheprovider")
    assert "::error" not in res.stdout.str() and not summary.exists()
    _env(monkeypatch, pytester.path, summary, actions=True)
    res = pytester.runpytest_subprocess("demo", "--mirage-gate=rouge_l.mean >= 0.9", "--mirage-github=off",
                                        "-p", "no:cacheprovider")
    assert "::error" not in res.stdout.str() and not summary.exists()
