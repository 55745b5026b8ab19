"""Suites provided by a plugin hook, bundled suites by name, --mirage-suite-stats, the wheel's suites."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_suites_provided_by_the_hook(pytester: pytest.Pytester, demo_suite: Path) -> None:
    pytester.makeconftest(f"def pytest_mirage_suites(config):\n    return [{str(demo_suite)!r}]\n")
    pytester.makepyfile(test_x="def test_x(): pass")
    res = pytester.runpytest("test_x.py", "-q", "--mirage-lang=hi")
    res.assert_outcomes(passed=3)


def test_bundled_suite_by_name_with_language_filter(pytester: pytest.Pytester) -> None:
    res = pytester.runpytest("--mirage-suite", "mirage-mini", "--mirage-lang", "sw", "-q", "-p", "no:cacheprovider")
    res.assert_outcomes(passed=15)  # 13 cases and the suite's 2 gates on sw
    res.stdout.fnmatch_lines(["*pytest-mirage leaderboard*mirage-mini*", "*sw*control:oracle (ref)*"])


def test_suite_stats_table_and_thin_language_warning(pytester: pytest.Pytester, demo_suite: Path) -> None:
    res = pytester.runpytest("demo", "--collect-only", "-q", "--mirage-suite-stats")
    res.stdout.fnmatch_lines([
        "*pytest-mirage suite statistics*",
        "suite demo",
        "*lang*queries*q_tokens*rel/q*nonrel/q*needed*",
        "  en *2 *1.00 *2.00 *385",
        "*WARNING demo [[]en[]]: 2 cases < 385 needed (sigma 0.35, assumed)",
    ])
    # after a run, 2 cases are too few to estimate the spread: sigma stays the assumed one
    res = pytester.runpytest("demo", "-q", "--mirage-suite-stats")
    res.stdout.fnmatch_lines(["*WARNING demo [[]*]: 2 cases < 385 needed (sigma 0.35, assumed)"])


def test_suite_stats_uses_observed_spread_with_enough_cases(pytester: pytest.Pytester) -> None:
    res = pytester.runpytest("--mirage-suite", "mirage-mini", "--mirage-lang", "sw", "-q", "--mirage-suite-stats",
                             "-p", "no:cacheprovider")
    res.stdout.fnmatch_lines(["*WARNING mirage-mini [[]sw[]]: 13 cases < * needed (sigma *, observed)"])


@pytest.mark.slow
def test_wheel_ships_the_bundled_suites(tmp_path: Path) -> None:
    pytest.importorskip("hatchling")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp_path), str(ROOT)], check=True, capture_output=True)
    wheel = next(tmp_path.glob("pytest_mirage-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "pytest_mirage/_bundled_suites/mirage-mini/suite.toml" in names
    assert "pytest_mirage/_bundled_suites/khmer-telecom/corpus/km-esim.jsonl" in names
    assert "pytest_mirage/prompts/templates/mirage.txt" in names
    assert "pytest_mirage/judges/templates/pairwise.txt" in names
    assert any(n.endswith("entry_points.txt") for n in names)
