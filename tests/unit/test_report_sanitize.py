"""Control, escape and invisible characters are neutralised in every output: terminal lines,
Markdown, HTML, the job summary and annotations."""

from __future__ import annotations

import re

import pytest

from pytest_mirage.report.github import annotation_lines, step_summary
from pytest_mirage.report.html import html_report
from pytest_mirage.report.markdown import markdown_report
from pytest_mirage.report.sanitize import one_line, sanitize, sanitize_name, terminal_safe
from pytest_mirage.report.terminal import gate_lines, judge_line, leaderboard_lines, problem_lines
from tests.helpers.reports import EVIL_MODEL, sample_report

# what must never reach an output raw: C0/C1 controls (but \n, \t), DEL, bidi embeddings,
# overrides and isolates, zero-width space, BOM, line/paragraph separators, tag characters
FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200b\ufeff\u2028\u2029"
                       "\U000e0000-\U000e007f]")


@pytest.mark.parametrize(("raw", "shown"), [
    ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
    ("line\r\nnext", "line\nnext"),  # a Windows line end is a line end
    ("progress\roverwritten", "progress\\x0doverwritten"),
    ("abc\u202edcba", "abc\\u202edcba"),  # right-to-left override
    ("x\u2066y\u2069", "x\\u2066y\\u2069"),
    ("zero\u200bwidth\ufeff", "zero\\u200bwidth\\ufeff"),
    ("nul\x00bell\x07del\x7fc1\x9b", "nul\\x00bell\\x07del\\x7fc1\\x9b"),
    ("sep\u2028par\u2029", "sep\\u2028par\\u2029"),
    ("tag\U000e0041\U000e007f", "tag\\U000e0041\\U000e007f"),
    ("lone \udc80 surrogate", "lone \\udc80 surrogate"),
    ("tab\tand\nnewline", "tab\tand\nnewline"),
])
def test_sanitize(raw: str, shown: str) -> None:
    assert sanitize(raw) == shown
    assert sanitize(shown) == shown  # idempotent
    shown.encode("utf-8")  # always encodable (a lone surrogate is not)


def test_prose_keeps_what_multilingual_text_needs() -> None:
    persian = "می\u200cخواهم"  # ZWNJ inside a Persian word
    hindi = "क्\u200dष"  # ZWJ in a Devanagari conjunct
    arabic = "\u200fمرحبا\u200e 1.5"  # right-to-left / left-to-right marks
    family = "👨\u200d👩\u200d👧"
    for text in (persian, hindi, arabic, family):
        assert sanitize(text) == text


def test_names_show_every_invisible_character() -> None:
    assert sanitize_name("en-001\u200b") == "en-001\\u200b"
    assert sanitize_name("a\u200cb\u200dc\u200ed\u200f") == "a\\u200cb\\u200dc\\u200ed\\u200f"
    assert sanitize_name("two\nlines\tx") == "two\\x0alines\\x09x"
    assert sanitize_name("khmer-telecom") == "khmer-telecom"
    assert sanitize_name("ភាសាខ្មែរ") == "ភាសាខ្មែរ"  # Khmer (coeng, vowel signs) untouched


def test_one_line_and_terminal_safe() -> None:
    assert one_line("a\n\n b\x1b[2J  c", 100) == "a b\\x1b[2J c"
    assert one_line("x" * 20, 10) == "x" * 9 + "…"
    # a line of model text that would be a GitHub workflow command is defused, wherever it starts
    text = "answer\n::error file=x::fake\n  ::add-mask::secret\nnot :: a command"
    safe = terminal_safe(text)
    assert not any(line.lstrip().startswith("::") for line in safe.splitlines())
    assert "\\x3a:error file=x::fake" in safe and "not :: a command" in safe


def test_every_output_is_neutralised() -> None:
    rep = sample_report()
    outputs = {
        "markdown": markdown_report(rep),
        "html": html_report(rep),
        "summary": step_summary(rep),
        "annotations": "\n".join(annotation_lines(rep, max_errors=100, max_warnings=100)),
        "leaderboard": "\n".join(leaderboard_lines(rep)),
        "gates": "\n".join(gate_lines(rep.gates)),
        "judge": judge_line({"note": "\x1b[2J"}),
        "problems": "\n".join(line for line, _ in problem_lines(rep, ["cannot write \x1b[31mx"])),
    }
    for name, text in outputs.items():
        assert not FORBIDDEN.search(text), (name, FORBIDDEN.search(text))
        assert "\\x1b" in text, name  # shown, not dropped
    # the answer's right-to-left override and carriage return are visible where answers are shown
    for name in ("markdown", "html", "summary", "annotations"):
        assert "\\u202egnp.exe" in outputs[name] and "\\x0dOVERWRITTEN" in outputs[name], name
    # markup in a name is shown as text everywhere
    assert "evil&lt;script&gt;alert(1)&lt;/script&gt;" in outputs["html"]
    assert "<script>alert" not in outputs["html"] and "<img src=x" not in outputs["html"]
    assert "evil&lt;script>alert(1)&lt;/script>\\[/bold\\]\\|\\*x\\*" in outputs["markdown"]
    assert sanitize_name(EVIL_MODEL) in outputs["leaderboard"]
