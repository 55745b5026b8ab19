"""Collection: suites become items with stable ids, markers and language filters."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_collects_one_item_per_case_and_model(pytester: pytest.Pytester, demo_suite: Path) -> None:
    res = pytester.runpytest("demo", "--collect-only", "-q", "--mirage-model=extractive",
                             "--mirage-model=control:oracle")
    res.stdout.fnmatch_lines([
        "demo/suite.toml::en/en-001[[]extractive[]]",
        "demo/suite.toml::en/en-001[[]control:oracle[]]",
        "demo/suite.toml::hi/hi-002[[]extractive[]]",
        "demo/suite.toml::ja/ja-002[[]control:oracle[]]",
        "12 tests collected*",
    ])


def test_default_model_is_extractive_and_ids_are_sorted(pytester: pytest.Pytester, demo_suite: Path) -> None:
    res = pytester.runpytest("demo", "--collect-only", "-q")
    ids = [line for line in res.outlines if "::" in line]
    assert ids == sorted(ids, key=lambda x: x.split("::")[1])
    assert len(ids) == 6 and all(i.endswith("[extractive]") for i in ids)


def test_language_filter_option_marker_and_keyword(pytester: pytest.Pytester, demo_suite: Path) -> None:
    res = pytester.runpytest("demo", "--collect-only", "-q", "--mirage-lang", "hi,ja")
    res.stdout.fnmatch_lines(["4 tests collected*"])
    res = pytester.runpytest("demo", "--collect-only", "-q", "-m", "lang_hi")
    res.stdout.fnmatch_lines(["*2/6 tests collected (4 deselected)*"])
    res = pytester.runpytest("demo", "--collect-only", "-q", "-k", "ja")
    res.stdout.fnmatch_lines(["*2/6 tests collected (4 deselected)*"])


def test_bad_language_filter_is_a_usage_error(pytester: pytest.Pytester, demo_suite: Path) -> None:
    res = pytester.runpytest("demo", "--mirage-lang", "hin")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*'hin'*use 'hi'*"])


def test_mirage_suite_option_adds_a_suite_folder(pytester: pytest.Pytester, demo_suite: Path) -> None:
    pytester.makepyfile(test_plain="def test_x(): pass")
    res = pytester.runpytest("test_plain.py", "--mirage-suite", "demo", "-q")
    res.assert_outcomes(passed=7)


def test_unknown_mirage_suite_is_a_usage_error(pytester: pytest.Pytester) -> None:
    res = pytester.runpytest("--mirage-suite", "mirage-minii")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*not a bundled suite*Did you mean: mirage-mini?*"])


def test_unknown_model_kind_is_a_usage_error(pytester: pytest.Pytester, demo_suite: Path) -> None:
    res = pytester.runpytest("demo", "--mirage-model", "extractiv")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*unknown model kind 'extractiv'*Did you mean: extractive?*"])
