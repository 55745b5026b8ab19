"""A broken suite among good ones: one clean collection error (file:line, no traceback), the others run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.mark.parametrize("broken", ["table-gate", "case-deep-nesting", "template-not-utf8", "gate-lang-absent"])
def test_one_broken_suite_among_good_ones(pytester: pytest.Pytester, broken: str) -> None:
    for name in ("oracle-tiny", "retrieval-tiny"):
        shutil.copytree(FIXTURES / "suites" / name, pytester.path / name)
    shutil.copytree(FIXTURES / "malformed" / broken, pytester.path / broken)
    first = (FIXTURES / "malformed" / broken / "expected.txt").read_text(encoding="utf-8").splitlines()[0]
    res = pytester.runpytest("oracle-tiny", broken, "retrieval-tiny")
    res.assert_outcomes(passed=11, errors=1)  # 7 cases and 4 gates of the good suites
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    res.stdout.fnmatch_lines([f"*ERROR collecting {broken}/suite.toml*",
                              f"{pytester.path / broken}/{first.replace('[', '[[]')}*",
                              "*mirage gates: * passed, 0 failed*"])
    out = res.stdout.str()
    assert "Traceback" not in out and "RecursionError" not in out and "UnicodeDecodeError" not in out
