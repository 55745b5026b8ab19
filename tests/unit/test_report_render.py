"""Markdown and HTML report writers: structure, escaping, number format, validation, a real run."""

from __future__ import annotations

import html
import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from pytest_mirage.report.document import Table, report_document
from pytest_mirage.report.format import fmt
from pytest_mirage.report.html import html_report, render_html
from pytest_mirage.report.markdown import escape_markdown, markdown_report
from pytest_mirage.report.model import ReportFormatError, RunReport
from pytest_mirage.report.sanitize import sanitize_name
from pytest_mirage.report.write import render_outputs, write_outputs

EVIL = "a|b<script>"  # a model name that must be shown literally, never interpreted


def _row(suite: str, lang: str, model: str, rank: int, score: float | None, n: int, ref: bool = False,
         **metrics: float | None) -> dict[str, Any]:
    return {"suite": suite, "lang": lang, "model": model, "rank": rank, "score": score, "metrics": metrics,
            "n": n, "reference": ref}


def _result(suite: str, lang: str, case: str, model: str, outcome: str, error: str | None = None) -> dict[str, Any]:
    return {"suite": suite, "case_id": case, "lang": lang, "model": model, "metrics": {}, "null_reasons": {},
            "outcome": outcome, "failures": [], "checks": {}, "error": error}


def _gate(suite: str, lang: str, model: str, expr: str, value: float | None, passed: bool | None,
          n: int) -> dict[str, Any]:
    return {"suite": suite, "lang": lang, "model": model, "expr": expr, "source": "[gates] in suite.toml",
            "value": value, "passed": passed, "n": n}


def _report() -> dict[str, Any]:
    """Two suites, three languages, reference rows, a failed and a not evaluable gate, an error, an arena."""
    ora = "control:oracle"
    board = [
        _row("mini", "all", ora, 1, 0.98765, 6, True, language_match=0.99951, citation_recall=1.0,
             faithfulness=0.5, rouge_l=1, hit_at_k=None, bleu=0.25),
        _row("mini", "all", "extractive", 2, 0.8, 6, language_match=0.9, citation_recall=0.6665,
             faithfulness=None, rouge_l=0.1234, hit_at_k=None, bleu=0.1),
        _row("mini", "all", EVIL, 3, None, 5, language_match=None, citation_recall=None,
             faithfulness=None, rouge_l=None, hit_at_k=None, bleu=None),
    ]
    for lang in ("ja", "en", "hi"):  # deliberately unsorted: tables come in language order
        board += [
            _row("mini", lang, ora, 1, 0.9, 2, True, language_match=1.0, citation_recall=1.0, rouge_l=1.0),
            _row("mini", lang, "extractive", 2, 0.7, 2, language_match=0.9, citation_recall=0.5, rouge_l=0.2),
        ]
    board += [
        _row("retr", "all", "extractive", 1, 0.5, 4, hit_at_k=0.75, mrr_at_k=0.5, citation_map=0.25),
        _row("retr", "en", "extractive", 1, 0.5, 2, hit_at_k=1.0, mrr_at_k=0.5, citation_map=0.25),
        _row("retr", "hi", "extractive", 1, 0.5, 2, hit_at_k=0.5, mrr_at_k=0.5, citation_map=0.25),
    ]
    return {
        "schema": "pytest-mirage/report/1",
        "version": "0.1.0",
        "models": ["extractive", EVIL],
        "suites": [
            {"name": "mini", "mode": "oracle", "languages": ["en", "hi", "ja"], "cases": 6,
             "reference_models": [ora]},
            {"name": "retr", "mode": "retrieval", "languages": ["en", "hi"], "cases": 4, "reference_models": []},
        ],
        "results": [
            _result("mini", "en", "en-001", "extractive", "passed"),
            _result("mini", "hi", "hi-001", "extractive", "failed"),
            _result("mini", "en", "en-001", ora, "reference"),
            _result("mini", "ja", "ja-001", EVIL, "error", "model timed out after 30 s\nretried 2 | gave up"),
        ],
        "leaderboard": board,
        "gates": [
            _gate("mini", "en", "extractive", "citation_recall.mean >= 0.5", 0.75, True, 2),
            _gate("mini", "hi", "extractive", "citation_recall.mean >= 0.9", 0.5, False, 2),
            _gate("mini", "ja", EVIL, "faithfulness.mean >= 0.5", None, None, 0),
            _gate("retr", "en", "extractive", "hit_at_k.mean >= 0.5", 1.0, True, 2),
        ],
        "arena": [
            {"suite": "mini", "lang": "all", "model": EVIL, "strength": -0.41962, "ci_low": -0.7, "ci_high": -0.1,
             "rank": 3},
            {"suite": "mini", "lang": "all", "model": "extractive", "strength": 0.41962, "ci_low": 0.1,
             "ci_high": 0.7, "rank": 1},
            {"suite": "mini", "lang": "all", "model": ora, "strength": 0.0, "ci_low": -0.2, "ci_high": 0.2,
             "rank": 2},
            {"suite": "mini", "lang": "en", "model": "extractive", "strength": 0.2, "ci_low": 0.0,
             "ci_high": 0.4, "rank": 1},
            {"suite": "mini", "lang": "en", "model": EVIL, "strength": -0.2, "ci_low": -0.4, "ci_high": 0.0,
             "rank": 2},
        ],
        "judge": {"swap_consistency": 0.9, "tie_rate": 0.125, "parse_failures": 2, "parse_failure_rate": 0.0208333,
                  "errors": 0, "judgments": 96, "decided": 94, "ties": 12, "retried": 3, "swap_pairs": 40,
                  "swap_consistent": 36, "position_a_rate": None},
        "surrogate": [{"suite": "mini", "lang": "all", "path": "suites/mini/surrogate/all.json",
                       "features": ["citation_recall", "rouge_l"], "training_models": ["x", "y", "z"],
                       "judge": "openai:gpt-4o", "health": {"tau_mean": 0.9123, "tau_cv": 0.8, "r2_mean": 0.7,
                                                            "r2_cv": -0.25}}],
        "surrogate_scores": [{"suite": "mini", "lang": "all", "model": "extractive", "surrogate_score": 0.33333,
                              "surrogate_rank": 2}],
    }


# ------------------------------------------------------------------------ parsing what we wrote
def _md_cells(line: str) -> list[str]:
    """Cells of one Markdown table line, unescaped (the inverse of escape_markdown)."""
    assert line.startswith("| ") and line.endswith(" |"), line
    cells = re.split(r"(?<!\\)\|", line[1:-1])
    return [re.sub(r"\\(.)", r"\1", html.unescape(c.strip().replace("<br>", "\n"))) for c in cells]


def _md_tables(md: str) -> list[list[list[str]]]:
    """Every table: header cells, then body rows (the alignment line is checked and skipped)."""
    tables: list[list[list[str]]] = []
    lines = md.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("|"):
            block = []
            while i < len(lines) and lines[i].startswith("|"):
                block.append(lines[i])
                i += 1
            assert re.fullmatch(r"\|(?:---:?\|)+", block[1]), block[1]
            header = _md_cells(block[0])
            assert block[1].count("|") == len(header) + 1
            rows = [_md_cells(x) for x in block[2:]]
            assert all(len(r) == len(header) for r in rows), block
            tables.append([header, *rows])
        i += 1
    return tables


class _Page(HTMLParser):
    """Checks that tags nest and close, and collects headings and table cells (text unescaped)."""

    VOID = frozenset({"meta", "br", "input"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: list[str] = []
        self.headings: list[tuple[str, str]] = []
        self.tables: list[list[list[str]]] = []
        self.text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag not in self.VOID:
            self.stack.append(tag)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        if tag in ("th", "td", "h1", "h2", "h3", "h4"):
            self.text = ""

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, (self.stack, tag)
        self.stack.pop()
        if tag in ("th", "td"):
            self.tables[-1][-1].append(self.text)
        elif tag in ("h1", "h2", "h3", "h4"):
            self.headings.append((tag, self.text))

    def handle_data(self, data: str) -> None:
        self.text += data


def _page(text: str) -> _Page:
    p = _Page()
    p.feed(text)
    p.close()
    assert p.stack == [], p.stack
    return p


def _doc_tables(report: dict[str, Any]) -> list[list[list[str]]]:
    doc = report_document(RunReport.from_json(report))
    return [[[c.name for c in b.columns], *[list(r.cells) for r in b.rows]] for b in doc.blocks
            if isinstance(b, Table)]


# ----------------------------------------------------------------------------------------- tests
def test_markdown_structure_and_leaderboard_table() -> None:
    md = markdown_report(_report())
    heads = [line for line in md.splitlines() if line.startswith("#")]
    assert heads[0] == "# pytest-mirage report"
    assert heads.index("## Leaderboard: mini") < heads.index("## Leaderboard: retr")
    mini = heads[heads.index("## Leaderboard: mini") + 1:heads.index("## Leaderboard: retr")]
    assert mini == ["### all languages", "### language en", "### language hi", "### language ja"]
    order = [h for h in heads if h.startswith("## ")]
    assert order == ["## Models under test", "## Suites", "## Leaderboard: mini", "## Leaderboard: retr",
                     "## Arena (pairwise judge, Bradley-Terry)", "## Judge reliability", "## Surrogate judge",
                     "## Gates", "## Failed cases (1)", "## Errors (1)"]
    # the "all" table of suite mini, exactly: main metrics with a value in this suite (hit_at_k is null
    # everywhere, bleu is not a main metric), 3 decimals, null as "–", the reference marked (ref)
    start = md.index("### all languages")
    table = md[start:].split("\n\n")[1].splitlines()
    assert table == [
        "| rank | model | n | score | language_match | citation_recall | faithfulness | rouge_l |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
        "| 1 | control:oracle (ref) | 6 | 0.988 | 1.000 | 1.000 | 0.500 | 1.000 |",
        "| 2 | extractive | 6 | 0.800 | 0.900 | 0.667 | – | 0.123 |",
        "| 3 | a\\|b&lt;script> | 5 | – | – | – | – | – |",
    ]
    retr = md[md.index("## Leaderboard: retr"):]
    assert "| rank | model | n | score | citation_map | hit_at_k | mrr_at_k |" in retr
    assert "| 1 | extractive | 4 | 0.500 | 0.250 | 0.750 | 0.500 |" in retr
    assert "- extractive\n- a\\|b&lt;script>" in md


def test_status_gates_failed_first_and_errors() -> None:
    md = markdown_report(_report())
    assert md.splitlines()[2] == ("**Gates:** 2 passed, 1 failed, 1 not evaluable. **Cases:** 1 passed, "
                                  "1 failed, 1 error; 1 reference-system results.")
    gates = md[md.index("## Gates"):md.index("## Failed cases")]
    assert gates.index("### Failed and not evaluable gates") < gates.index("2 passed, 1 failed, 1 not evaluable")
    assert gates.index("2 passed, 1 failed") < gates.index("### Passed gates")
    failed, passed = _md_tables(gates)
    assert failed[1] == ["FAILED", "mini", "hi", "extractive", "citation_recall.mean >= 0.9", "0.500", "2",
                         "[gates] in suite.toml"]
    assert failed[2][:6] == ["not evaluable", "mini", "ja", EVIL, "faithfulness.mean >= 0.5", "–"]
    assert [r[0] for r in passed[1:]] == ["passed", "passed"]
    (errors,) = _md_tables(md[md.index("## Errors"):])
    assert errors == [["suite", "lang", "case", "model", "reason"],
                      ["mini", "ja", "ja-001", EVIL, "model timed out after 30 s\nretried 2 | gave up"]]
    assert "model timed out after 30 s<br>retried 2 \\| gave up |" in md


def test_arena_judge_and_surrogate_tables() -> None:
    tables = _md_tables(markdown_report(_report()))
    arena_all = next(t for t in tables if t[0] == ["rank", "model", "strength", "95% CI"])
    assert arena_all[1:] == [["1", "extractive", "0.420", "[0.100, 0.700]"],
                             ["2", "control:oracle (ref)", "0.000", "[-0.200, 0.200]"],
                             ["3", EVIL, "-0.420", "[-0.700, -0.100]"]]
    judge = next(t for t in tables if t[0] == ["measure", "value"])
    assert judge[1:4] == [["judgments", "96"], ["decided", "94"], ["swap_consistency", "0.900"]]
    assert ["position_a_rate", "–"] in judge and ["parse_failure_rate", "0.021"] in judge
    sur = next(t for t in tables if t[0][:3] == ["suite", "lang", "judge"])
    assert sur[1] == ["mini", "all", "openai:gpt-4o", "citation_recall, rouge_l", "3", "0.912", "0.800", "0.700",
                      "-0.250", "suites/mini/surrogate/all.json"]
    scores = next(t for t in tables if "surrogate_score" in t[0])
    assert scores[1] == ["mini", "all", "2", "extractive", "0.333"]


def _sorted(tables: list[list[list[str]]]) -> list[str]:
    return sorted(json.dumps(t) for t in tables)


def test_markdown_and_html_show_the_same_cells() -> None:
    """The HTML page places the document's sections around its plots, in its own order: the same
    tables and headings, plus its own."""
    rep = _report()
    expected = _doc_tables(rep)
    assert _md_tables(markdown_report(rep)) == expected
    page = _page(html_report(rep))
    assert _sorted(page.tables) == _sorted(expected)
    md_heads = [line.lstrip("#").strip() for line in markdown_report(rep).splitlines() if line.startswith("#")]
    html_heads = [t for _, t in page.headings]
    assert set(md_heads) <= set(html_heads) and "Plots" in html_heads
    assert [h for h, _ in page.headings][:1] == ["h1"]
    # the document alone (render_html) keeps the Markdown order exactly
    plain = _page(render_html(report_document(RunReport.from_json(rep))))
    assert plain.tables == expected and [t for _, t in plain.headings] == md_heads


def test_html_is_self_contained_and_escaped() -> None:
    text = html_report(_report())
    assert text.startswith("<!DOCTYPE html>") and "<style>" in text
    # one script, ours; nothing is loaded from anywhere (no src/href; the CSP forbids it anyway)
    assert text.lower().count("<script") == 1 and "a|b&lt;script&gt;" in text
    assert not re.search(r"\s(src|href|xlink:href)=", text, re.IGNORECASE)
    assert "default-src 'none'" in text
    page = _page(text)
    assert set(page.tags) <= {"html", "head", "meta", "title", "style", "noscript", "body", "h1", "h2", "h3", "h4",
                              "p", "strong", "span", "ul", "li", "table", "thead", "tbody", "tr", "th", "td",
                              "section", "nav", "fieldset", "legend", "label", "input", "button", "select",
                              "option", "div", "figure", "figcaption", "svg", "g", "rect", "text",
                              "line", "path", "circle", "script", "article", "header", "details", "summary",
                              "pre"}
    assert '<tr class="fail f" data-suite="mini" data-lang="hi" data-model="extractive"><td>FAILED</td>' in text
    assert '<tr class="ref f" data-suite="mini" data-lang="all" data-model="control:oracle"><td class="num">1</td>' in text
    assert "retried 2 | gave up" in text  # a newline kept in the cell (white-space: pre-wrap)


@pytest.mark.parametrize("name", ["a|b", "<b>x</b>", "x_y _z_ *w* `c` [l](u) ~~s~~ \\| &amp; > q", "\n>quote"])
def test_markdown_escaping_round_trips(name: str) -> None:
    rep = _report()
    rep["models"] = [name]
    rep["leaderboard"][1]["model"] = name
    md = markdown_report(rep)
    shown = sanitize_name(name)  # a line break in a name is shown as \x0a
    assert _md_tables(md)[1][2][1] == shown
    esc = escape_markdown(shown)
    assert "<" not in esc.replace("<br>", "") and not re.search(r"(?<!\\)[|*`\[\]~]", esc)
    assert f"- {esc}\n" in md


def test_escape_markdown_keeps_words_readable() -> None:
    assert escape_markdown("citation_recall.mean >= 0.5") == "citation_recall.mean >= 0.5"
    assert escape_markdown("_x_ a|b <i>") == "\\_x\\_ a\\|b &lt;i>"
    assert escape_markdown(">= 1") == "\\>= 1"


def test_report_without_arena_renders() -> None:
    rep = _report()
    for key in ("arena", "judge", "surrogate", "surrogate_scores"):
        del rep[key]
    rep["gates"] = []
    rep["results"] = [r for r in rep["results"] if r["outcome"] != "error"]
    md = markdown_report(rep)
    assert "Arena" not in md and "Judge" not in md and "Surrogate" not in md and "## Errors" not in md
    assert "No gates were evaluated." in md and "**Gates:** 0 passed, 0 failed (no gates)." in md
    assert _sorted(_page(html_report(rep)).tables) == _sorted(_doc_tables(rep))


@pytest.mark.parametrize(("change", "message"), [
    (lambda r: r.update(schema="pytest-mirage/report/0"),
     "report field schema: found 'pytest-mirage/report/0'; expected 'pytest-mirage/report/1'"),
    (lambda r: r.pop("leaderboard"), "report field leaderboard: found nothing (missing); expected a list"),
    (lambda r: r["leaderboard"][1].update(score="0.8"),
     "report field leaderboard[1].score: found '0.8'; expected a number or null"),
    (lambda r: r["leaderboard"][0]["metrics"].update(rouge_l=True),
     "report field leaderboard[0].metrics.rouge_l: found True; expected a number or null"),
    (lambda r: r["gates"][0].update(passed="yes"), "report field gates[0].passed: found 'yes'; expected true"),
    (lambda r: r["arena"][2].pop("rank"), "report field arena[2].rank: found nothing (missing); expected an integer"),
    (lambda r: r["results"][0].pop("outcome"), "report field results[0].outcome: found nothing"),
    (lambda r: r.update(models="extractive"), "report field models: found 'extractive'; expected a list of strings"),
    (lambda r: r.update(judge=[1]), "report field judge: found [1]; expected an object"),
])
def test_bad_report_is_an_error_naming_the_field(change: Any, message: str) -> None:
    rep = _report()
    change(rep)
    for render in (markdown_report, html_report):
        with pytest.raises(ReportFormatError) as exc:
            render(rep)
        assert message in str(exc.value) and "--mirage-report" in str(exc.value)


def test_write_reports(tmp_path: Path) -> None:
    rep = RunReport.from_json(_report())
    md, page = tmp_path / "out" / "summary.md", tmp_path / "deep" / "er" / "report.html"
    assert write_outputs(render_outputs(rep, json_path=None, markdown=md, html=page)) == ([md, page], [])
    assert md.read_text(encoding="utf-8") == markdown_report(rep)
    assert page.read_text(encoding="utf-8") == html_report(rep)
    assert render_outputs(rep, json_path=None, markdown=None, html=None) == []
    assert not list(tmp_path.rglob("*.tmp"))  # written through temporary files, none left
    mask = os.umask(0)
    os.umask(mask)
    assert md.stat().st_mode & 0o777 == 0o666 & ~mask  # as readable as any file, not mkstemp's 0600


def test_unwritable_report_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    rep = RunReport.from_json(_report())
    blocker = tmp_path / "file"
    blocker.write_text("x")
    written, problems = write_outputs(render_outputs(rep, json_path=blocker / "r.json", markdown=tmp_path / "ok.md",
                                                     html=None))
    assert written == [tmp_path / "ok.md"]
    assert len(problems) == 1 and "cannot write" in problems[0] and "r.json" in problems[0]


def test_renders_the_report_of_a_real_run(pytester: pytest.Pytester, demo_suite: Path) -> None:
    path = pytester.path / "r.json"
    res = pytester.runpytest("demo", f"--mirage-report={path}", "--mirage-gate", "rouge_l.mean >= 0.99",
                             "--mirage-gate", "language_match.mean >= 0.5")
    assert res.ret == 1, res.stdout.str()  # the strict gate fails for the extractive model
    rep = json.loads(path.read_text(encoding="utf-8"))
    md = markdown_report(rep)
    tables = _md_tables(md)
    assert tables == _doc_tables(rep)
    assert _sorted(_page(html_report(rep)).tables) == _sorted(tables)
    langs = [line for line in md.splitlines() if line.startswith("### ")]
    assert langs[:4] == ["### all languages", "### language en", "### language hi", "### language ja"]
    for row in rep["leaderboard"]:
        name = row["model"] + (" (ref)" if row["reference"] else "")
        assert [str(row["rank"]), name, str(row["n"]), f"{row['score']:.3f}"] in [r[:4] for t in tables for r in t]
    assert "(ref)" in md and "control:oracle (ref)" in md
    failed = [g for g in rep["gates"] if g["passed"] is False]
    assert failed and all(g["expr"] == "rouge_l.mean >= 0.99" for g in failed)
    gates = md[md.index("## Gates"):]
    assert gates.index("### Failed gates") < gates.index("### Passed gates")
    assert f"{len(rep['gates']) - len(failed)} passed, {len(failed)} failed of {len(rep['gates'])} gates." in md


@pytest.mark.parametrize(("value", "shown"), [
    (None, "–"), (1, "1.000"), (0.6665, "0.667"), (0.12345, "0.123"), (-0.41962, "-0.420"), (-1e-9, "0.000"),
    (0.0, "0.000"), (float("nan"), "nan"),
])
def test_number_format(value: float | None, shown: str) -> None:

    assert fmt(value) == shown
