"""The HTML report's plots, filters and per-case view, checked on the page's markup (the browser
test checks what a reader sees)."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from html.parser import HTMLParser

from pytest_mirage.report.figures import BINS, build_figures
from pytest_mirage.report.format import fmt
from pytest_mirage.report.html import html_report
from pytest_mirage.report.model import RunReport
from pytest_mirage.report.sanitize import sanitize_name
from pytest_mirage.stats.intervals import bootstrap_mean_ci
from tests.helpers.reports import EVIL_MODEL, ORACLE, sample_report


class _Elements(HTMLParser):
    """Every start tag with its attributes (unescaped), in document order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.items: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.items.append((tag, {k: v or "" for k, v in attrs}))

    def find(self, tag: str | None = None, cls: str | None = None, **data: str) -> list[dict[str, str]]:
        out = []
        for t, a in self.items:
            if tag is not None and t != tag:
                continue
            if cls is not None and cls not in a.get("class", "").split():
                continue
            if all(a.get(f"data-{k}") == v for k, v in data.items()):
                out.append(a)
        return out


def _elements(text: str) -> _Elements:
    p = _Elements()
    p.feed(text)
    p.close()
    return p


def test_figures_numbers() -> None:
    rep = sample_report()
    figs = build_figures(rep)
    assert [f.suite for f in figs.suites] == ["mini", "khmer"]
    mini = figs.suites[0]
    assert mini.models == (ORACLE, "extractive", EVIL_MODEL)  # suite-level ranking
    assert mini.langs == ("en", "hi", "ja") and mini.references == frozenset({ORACLE})
    assert mini.heat_metrics[0] == "score"
    for row in rep.leaderboard:
        if row.suite == "mini":
            assert mini.heat["score"][(row.model, row.lang)] == row.score
            assert mini.heat["rouge_l"][(row.model, row.lang)] == row.metrics["rouge_l"]
    # bars: the mean and the 95% bootstrap interval of the per-case values (seed 0), errors left out
    vals = [r.metrics["rouge_l"] for r in rep.results
            if (r.suite, r.lang, r.model) == ("mini", "hi", EVIL_MODEL) and r.outcome != "error"]
    m = mini.bars["rouge_l"][(EVIL_MODEL, "hi")]
    assert m.n == len(vals) == 7
    assert math.isclose(m.value or 0, sum(vals) / len(vals))  # type: ignore[arg-type]
    assert (m.low, m.high) == bootstrap_mean_ci(vals, seed=0)  # type: ignore[arg-type]
    # "faithfulness" has nulls: they are left out, never counted as 0
    faith = [r.metrics.get("faithfulness") for r in rep.results if (r.suite, r.model) == ("mini", "extractive")]
    assert mini.bars["faithfulness"][("extractive", "all")].n == sum(v is not None for v in faith)
    # histograms: every finite value counted once, in [0, 1] bins
    h = mini.hists["rouge_l"]
    assert (h.lo, h.hi) == (0.0, 1.0)
    counted = sum(sum(c) for per in h.counts.values() for c in per.values())
    assert counted == sum(1 for r in rep.results if r.suite == "mini" and r.metrics.get("rouge_l") is not None)
    assert all(len(c) == BINS for per in h.counts.values() for c in per.values())
    # the arena: "all" first, rows in rank order; colours the same in every suite
    assert list(mini.arena) == ["all", "en", "hi", "ja"] and mini.arena["all"][0].model == ORACLE
    assert figs.suites[1].arena == {}
    assert mini.colours is figs.suites[1].colours and mini.colour("extractive") == 0
    assert figs.lower_is_better == frozenset({"english_share"})


def test_plots_are_inline_svg_with_the_values() -> None:
    rep = sample_report()
    page = _elements(html_report(rep))
    svgs = page.find("svg")
    kinds = {s["class"] for s in svgs}
    assert kinds == {"plot heatmap", "plot bars", "plot strengths", "plot hist"}
    # the heatmap of the score of suite mini: one cell per model x (all + 3 languages), with its value
    heat = [a for a in page.find("figure", metric="score")]
    assert len(heat) == 2 and "unchosen" not in heat[0].get("class", "")
    cells = page.find("g", cls="cell", lang="hi", model="extractive")
    score = next(r.score for r in rep.leaderboard if (r.suite, r.lang, r.model) == ("mini", "hi", "extractive"))
    assert cells[0]["data-v"] == fmt(score)
    assert len(page.find("g", cls="cell", model=sanitize_name(EVIL_MODEL))) > 0  # matched by its shown name
    bars = page.find("g", cls="bar")
    assert bars and all(b["data-v"] for b in bars)
    strengths = page.find("g", cls="cell", v="+0.800") + page.find("g", cls="cell", v="0.800")
    assert len(strengths) == 4  # the oracle in all, en, hi, ja
    hist = page.find("svg", cls="hist")[0]
    counts = json.loads(hist["data-counts"])
    assert set(counts) == {ORACLE, "extractive", sanitize_name(EVIL_MODEL)}
    assert set(counts["extractive"]) == {"en", "hi", "ja"}


def test_filters_cover_every_suite_language_and_model() -> None:
    rep = sample_report()
    page = _elements(html_report(rep))
    boxes = page.find("input")
    by_dim: dict[str, list[str]] = {}
    for b in boxes:
        by_dim.setdefault(b["data-dim"], []).append(b["value"])
    assert by_dim == {"suite": ["mini", "khmer"], "lang": ["en", "hi", "ja", "km"],
                      "model": ["extractive", sanitize_name(EVIL_MODEL), ORACLE]}
    # every filterable element's values are among the filter's values ("all" = all languages)
    for _, attrs in page.items:
        if "f" in attrs.get("class", "").split():
            for dim, values in by_dim.items():
                v = attrs.get(f"data-{dim}")
                assert v is None or v in values or (dim == "lang" and v == "all"), (dim, v)
    # sections about one suite / one language carry it, so that the filter hides them whole
    assert page.find("section", cls="f", suite="khmer")
    assert page.find("section", cls="f", lang="hi")
    # leaderboard rows, gate rows, case cards and plot elements are all filterable
    assert page.find("tr", cls="f", model="extractive", lang="hi")
    assert page.find("article", cls="case", model="extractive")
    assert page.find("div", cls="suite-plots", suite="mini")


def test_failed_cases_side_by_side() -> None:
    rep = sample_report()
    text = html_report(rep)
    page = _elements(text)
    cards = page.find("article", cls="case")
    assert len(cards) == len(rep.cases) == 16
    assert text.count('<div class="psg rel">') == 16 and text.count('<div class="psg cited">') == 16
    assert "Relevant, not cited" in text and "not a passage" in text and "judge: pairwise" in text
    assert "(the model gave no answer)" in text  # the errored cases
    assert all(f'<span class="src">{c.source}</span>' in text for c in rep.cases)  # where the case is
    capped = html_report(rep, max_cases=3)
    assert capped.count('<article class="case f"') == 3 and "… 13 more failed cases not shown" in capped


def test_escaped_everywhere_and_nothing_loaded() -> None:
    text = html_report(sample_report())
    assert "<script>alert" not in text and "onerror=alert" not in text.replace("onerror=alert(2)&gt;", "")
    assert "&lt;img src=x onerror=alert(2)&gt;" in text
    assert text.count("<script") == 1 and "</script>" in text.split("<script>", 1)[1]
    # the inline data attribute is JSON that parses back, with nothing unescaped in it
    assert '"<' not in text.split('data-counts="', 1)[1].split('"', 1)[0]


def test_report_without_results_arena_or_cases() -> None:
    rep = sample_report()
    plain = replace(rep, arena=(), cases=(), judge={})
    text = html_report(plain)
    assert "plot strengths" not in text and '<section id="cases">' not in text
    empty = RunReport(models=(), suites=(), results=(), leaderboard=(), gates=())
    text = html_report(empty)
    assert "<svg" not in text and '<nav id="filters"' in text and "No gates were evaluated." in text
    assert '<section id="plots">' not in text


def test_reference_only_metric_and_nan_values_render() -> None:
    rep = sample_report()
    board = tuple(replace(r, metrics={**r.metrics, "rouge_l": float("nan")}) if r.model == "extractive" else r
                  for r in rep.leaderboard)
    cells = _elements(html_report(replace(rep, leaderboard=board))).find("g", cls="cell", model="extractive")
    assert cells and all(c["data-v"] != "nan" for c in cells)
    assert any(c["data-v"] == "" for c in cells)  # the NaN means are shown as null (–), never as a number
