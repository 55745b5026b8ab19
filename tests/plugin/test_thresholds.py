"""Thresholds and gates: sources, precedence, messages, exit status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def test_manifest_threshold_passes_for_extractive(pytester: pytest.Pytester, demo_suite: Path) -> None:
    res = pytester.runpytest("demo")
    res.assert_outcomes(passed=6)
    assert res.ret == 0


def test_cli_threshold_fails_cases_with_a_clear_message(pytester: pytest.Pytester, demo_suite: Path) -> None:
    res = pytester.runpytest("demo", "--mirage-threshold", "rouge_l >= 0.9")
    res.assert_outcomes(failed=6)
    res.stdout.fnmatch_lines(["*rouge_l 0.* < 0.90 (--mirage-threshold)*"])


def test_ini_threshold_overrides_manifest(pytester: pytest.Pytester, demo_suite: Path) -> None:
    # manifest: citation_recall >= 0.5 (passes); ini raises it to an impossible < 0.5
    pytester.makeini("[pytest]\nmirage_thresholds =\n    citation_recall < 0.5\n")
    res = pytester.runpytest("demo")
    res.assert_outcomes(failed=6)
    res.stdout.fnmatch_lines(["*citation_recall 1.00 >= 0.50 (mirage_thresholds in tox.ini)*"])


def test_cli_overrides_ini(pytester: pytest.Pytester, demo_suite: Path) -> None:
    pytester.makeini("[pytest]\nmirage_thresholds =\n    citation_recall < 0.5\n")
    res = pytester.runpytest("demo", "--mirage-threshold=citation_recall>=0.5")
    res.assert_outcomes(passed=6)


def test_pyproject_ini_source_is_named(pytester: pytest.Pytester, demo_suite: Path) -> None:
    pytester.makepyprojecttoml('[tool.pytest.ini_options]\nmirage_thresholds = ["rouge_l >= 0.99"]\n')
    res = pytester.runpytest("demo")
    res.stdout.fnmatch_lines(["*rouge_l * < 0.99 (mirage_thresholds in pyproject.toml)*"])


def test_a_bound_outside_the_metric_range_is_a_usage_error(pytester: pytest.Pytester, demo_suite: Path) -> None:
    pytester.makepyprojecttoml('[tool.pytest.ini_options]\nmirage_thresholds = ["language_match >= 1.5"]\n')
    res = pytester.runpytest("demo")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*'language_match >= 1.5' (mirage_thresholds in pyproject.toml) can never be met: "
                              "language_match takes values in [[]0, 1[]]*"])


def test_language_specific_threshold(pytester: pytest.Pytester, demo_suite: Path) -> None:
    res = pytester.runpytest("demo", "--mirage-threshold", "citation_recall@hi < 0.5")
    res.assert_outcomes(passed=4, failed=2)


def test_threshold_with_statistic_is_rejected(pytester: pytest.Pytester, demo_suite: Path) -> None:
    res = pytester.runpytest("demo", "--mirage-threshold", "citation_recall.mean >= 0.5")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*statistics*are for gates only*"])


def test_unknown_metric_in_threshold(pytester: pytest.Pytester, demo_suite: Path) -> None:
    res = pytester.runpytest("demo", "--mirage-threshold", "citation_recal >= 0.5")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*Unknown metric 'citation_recal'. Did you mean: citation_recall*"])


def test_unparseable_rule(pytester: pytest.Pytester, demo_suite: Path) -> None:
    res = pytester.runpytest("demo", "--mirage-gate", "citation_recall => 0.5")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*cannot parse gate 'citation_recall => 0.5'*"])


def test_failed_gate_makes_exit_nonzero(pytester: pytest.Pytester, demo_suite: Path) -> None:
    res = pytester.runpytest("demo", "--mirage-gate", "rouge_l.mean >= 0.95", "--mirage-gate", "citation_recall.min@ja >= 0.5")
    res.assert_outcomes(passed=7, failed=3)  # 6 cases and 1 gate passed, 3 gates failed
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    res.stdout.fnmatch_lines([
        "*mirage gates: 1 passed, 3 failed*",
        "FAILED gate demo [[]en[]] extractive: rouge_l.mean >= 0.95 -> 0.* (--mirage-gate)",
    ])


@pytest.mark.parametrize("stat", ["mean", "median", "min", "p10", "ci_low", "ci_high", "pass_rate"])
def test_every_gate_statistic_is_reported(pytester: pytest.Pytester, demo_suite: Path, stat: str) -> None:
    report = pytester.path / "r.json"
    res = pytester.runpytest("demo", f"--mirage-gate=citation_recall.{stat} >= 0", f"--mirage-report={report}")
    assert res.ret == 0
    gates = json.loads(report.read_text())["gates"]
    mine = [g for g in gates if g["expr"].startswith(f"citation_recall.{stat}")]
    assert len(mine) == 3 and all(g["passed"] is True and g["value"] == 1.0 for g in mine)


def test_manifest_gate_failure(pytester: pytest.Pytester, demo_suite: Path) -> None:
    toml = demo_suite / "suite.toml"
    toml.write_text(toml.read_text() + '\n[gates]\n"rouge_l.mean" = ">= 0.9"\n')
    res = pytester.runpytest("demo")
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    res.stdout.fnmatch_lines(["*rouge_l.mean >= 0.9 -> * (*demo[/]suite.toml:13)*"])
