"""The terminal leaderboard: width (terminal vs CI log), NO_COLOR, names never read as markup."""

from __future__ import annotations

import re
from dataclasses import replace

from pytest_mirage.report.model import RunReport
from pytest_mirage.report.sanitize import sanitize_name
from pytest_mirage.report.terminal import leaderboard_lines, leaderboard_width, problem_lines
from tests.helpers.reports import EVIL_MODEL, sample_report

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _header(lines: list[str]) -> list[str]:
    return next(line for line in lines if line.lstrip().startswith("lang")).split()


def test_width_for_terminal_ci_log_and_columns() -> None:
    assert leaderboard_width(100, isatty=True, environ={}) == 100
    assert leaderboard_width(80, isatty=False, environ={}) is None  # CI log: as wide as the table
    assert leaderboard_width(80, isatty=False, environ={"COLUMNS": "132"}) == 132
    assert leaderboard_width(80, isatty=True, environ={"COLUMNS": "junk"}) == 80
    assert leaderboard_width(10, isatty=True, environ={}) == 40  # never narrower than 40


def test_ci_log_shows_every_column_in_full() -> None:
    rep = sample_report()
    lines = leaderboard_lines(rep, width=None)
    assert "…" not in "\n".join(lines)
    assert _header(lines)[:9] == ["lang", "#", "model", "n", "err", "score", "lang", "cite_R", "faithfulness"]
    assert any(sanitize_name(EVIL_MODEL) in line for line in lines)  # the long name, whole


def test_terminal_width_leaves_out_metric_columns_never_cuts() -> None:
    rep = sample_report()
    full = leaderboard_lines(rep, width=None)
    for width in (150, 110, 90):
        lines = leaderboard_lines(rep, width=width)
        assert max(len(line) for line in lines) <= width, width
        assert "…" not in "\n".join(lines)
        notes = " ".join(line.strip() for line in lines if not line.startswith(" ") or "left out" in line
                         or line.startswith("  "))
        if len(_header(lines)) < len(_header(full)):
            assert f"left out at width {width}" in notes
    narrow = leaderboard_lines(rep, width=110)
    assert _header(narrow)[:6] == ["lang", "#", "model", "n", "err", "score"]
    # the score and every model name are still there, whole (suite khmer: all + km; mini: all + 3)
    assert sum(sanitize_name(EVIL_MODEL) in line for line in narrow) == 6


def test_very_narrow_terminal_wraps_names_instead_of_cutting() -> None:
    lines = leaderboard_lines(sample_report(), width=50)
    assert max(len(line) for line in lines) <= 50 and "…" not in "\n".join(lines)
    joined = "".join(line.strip() for line in lines)
    assert "evil<script>alert(" in joined


def test_no_color_and_markup() -> None:
    rep = sample_report()
    styled = leaderboard_lines(rep, markup=True, environ={})
    assert any(ANSI.search(line) for line in styled)
    plain = leaderboard_lines(rep, markup=True, environ={"NO_COLOR": "1"})
    assert not any("\x1b" in line for line in plain)
    assert plain == leaderboard_lines(rep, markup=False)
    assert leaderboard_lines(rep, markup=True, environ={"NO_COLOR": ""}) == styled  # empty: not set


def test_names_are_text_not_markup() -> None:
    """rich would read "[/bold]" as a closing tag (MarkupError) and "[red]x" as a style."""
    rep = sample_report()
    for name in ("a[/bold]b", "[red]x", "[link=http://x]y[/link]", ":smile:"):
        r = replace(rep, leaderboard=tuple(replace(x, model=name) if x.model == EVIL_MODEL else x
                                           for x in rep.leaderboard), arena=())
        lines = leaderboard_lines(r, markup=True, environ={})
        assert any(name in ANSI.sub("", line) for line in lines), name


def test_problem_lines() -> None:
    rep = sample_report()
    lines = problem_lines(rep, ["cannot write /x/report.html: No space left"])
    assert lines == [("mirage: reference system 'replay:runs/x.jsonl' skipped: \\x1b]0;pwned\\x07 file missing",
                      False), ("mirage ERROR: the judge failed on every pair: HTTP 401", True),
                     ("mirage ERROR: cannot write /x/report.html: No space left", True)]
    assert problem_lines(RunReport((), (), (), (), ())) == []
