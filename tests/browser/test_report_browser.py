"""The HTML report in a real browser (headless Chromium driven by Playwright): no console errors,
no request leaves the page, the plots are drawn with data, and the filters and the metric choice
change what is shown.

Skips, saying why, where Playwright or a Chromium binary is missing (``.ci/run`` installs both;
``MIRAGE_CHROMIUM`` names another binary).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_mirage.report.html import html_report
from pytest_mirage.report.sanitize import sanitize_name
from tests.helpers.reports import EVIL_MODEL, sample_report

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def chromium_binary() -> str | None:
    """``MIRAGE_CHROMIUM`` when set (only that one), else Debian's chromium, else a Chrome
    (GitHub's runners have one)."""
    named = os.environ.get("MIRAGE_CHROMIUM")
    names = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
    candidates = [named] if named else [*(shutil.which(n) for n in names), "/usr/bin/chromium"]
    for candidate in candidates:
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _skip_or_fail(reason: str) -> None:
    """CI sets MIRAGE_REQUIRE_BROWSER=1 after installing the browser: there, missing is a failure."""
    if os.environ.get("MIRAGE_REQUIRE_BROWSER") == "1":
        pytest.fail(f"MIRAGE_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser_page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, list[str], list[str]]]:
    """A fresh headless Chromium (own profile) showing the sample report; with the console errors
    and the URLs of every request the page made."""
    try:
        from playwright import sync_api
    except ImportError:
        _skip_or_fail("playwright is not installed (pip install -e '.[dev]')")
    binary = chromium_binary()
    if binary is None:
        _skip_or_fail("no Chromium binary (apt-get install chromium, or set MIRAGE_CHROMIUM)")
    assert binary is not None
    tmp = tmp_path_factory.mktemp("browser")
    page_file = tmp / "report.html"
    page_file.write_text(html_report(sample_report()), encoding="utf-8")
    errors: list[str] = []
    requests: list[str] = []
    with sync_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(str(tmp / "profile"), executable_path=binary, headless=True,
                                                        args=ARGS, viewport={"width": 1400, "height": 1000})
        try:
            page = context.new_page()
            page.set_default_timeout(30_000)
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
            page.on("request", lambda r: requests.append(r.url))
            page.goto(page_file.as_uri())
            page.wait_for_selector("html[data-ready]")
            yield page, errors, [u for u in requests if u != page_file.as_uri()]
        finally:
            context.close()


def _visible(page: Any, selector: str) -> int:
    return int(page.evaluate("s => [...document.querySelectorAll(s)].filter(e => e.getClientRects().length"
                             " && !e.closest('.off, .unchosen')).length", selector))


def _box(page: Any, selector: str) -> dict[str, float]:
    return dict(page.evaluate("s => { const r = [...document.querySelectorAll(s)].find(e => e.getClientRects()"
                              ".length).getBoundingClientRect(); return {w: r.width, h: r.height}; }", selector))


def test_loads_without_errors_or_requests(browser_page: Any) -> None:
    page, errors, requests = browser_page
    assert errors == []
    assert requests == []  # nothing is fetched: no CDN, no font, no image
    assert page.title() == "pytest-mirage report"
    # hostile text is shown as text: no element was created from it
    assert page.evaluate("document.querySelectorAll('img').length") == 0
    assert page.evaluate("document.querySelectorAll('script').length") == 1


def test_plots_are_drawn_with_data(browser_page: Any) -> None:
    page, errors, _ = browser_page
    # one heatmap, one bar chart and one histogram visible per suite (the chosen metric), and the
    # arena's strength plots for suite mini (all languages + 3)
    assert _visible(page, "svg.heatmap") == 2 and _visible(page, "svg.bars") == 2 and _visible(page, "svg.hist") == 2
    assert _visible(page, "svg.strengths") == 4
    cells = page.evaluate("[...document.querySelectorAll('svg.heatmap g.cell')].filter(e => e.getClientRects()"
                          ".length).map(e => e.getAttribute('data-v'))")
    assert len(cells) == 3 * 4 + 3 * 2  # mini: 3 models x (all + 3 languages); khmer: 3 x (all + km)
    assert all(v for v in cells)
    heights = page.evaluate("[...document.querySelectorAll('svg.bars rect')].filter(e => e.getClientRects()"
                            ".length).map(e => e.getBBox().height)")
    assert heights and sum(h > 0 for h in heights) > len(heights) // 2
    assert _visible(page, "svg.strengths circle") == 12
    hist = page.evaluate("[...document.querySelectorAll('svg.hist rect')].filter(e => e.getClientRects().length)"
                         ".reduce((s, e) => s + Number(e.getAttribute('data-c')), 0)")
    assert hist > 0
    assert errors == []


def test_filters_change_what_is_shown(browser_page: Any) -> None:
    page, errors, _ = browser_page
    cases_all = _visible(page, "article.case")
    rows_all = _visible(page, "svg.heatmap text.row")
    heat = _box(page, "svg.heatmap")
    ymax_all = page.evaluate("document.querySelector('svg.hist .ymax').textContent")
    assert cases_all == 16 and rows_all == 6
    page.locator('#filters input[data-dim="model"][value="extractive"]').uncheck()
    evil = sanitize_name(EVIL_MODEL)
    assert _visible(page, "article.case") == page.evaluate(
        "m => [...document.querySelectorAll('article.case')].filter(e => e.dataset.model === m).length", evil)
    assert 0 < _visible(page, "article.case") < cases_all
    assert _visible(page, "svg.heatmap text.row") == 4  # one model row fewer in each heatmap
    assert _box(page, "svg.heatmap")["h"] < heat["h"]  # and the heatmap closed the gap
    assert page.evaluate("document.querySelector('svg.hist .ymax').textContent") != ymax_all
    assert page.evaluate("document.querySelector('[data-count]').textContent") == str(_visible(page, "article.case"))
    # languages: only Hindi (the "all" column, the suite level, stays)
    page.click('#filters button[data-dim="lang"][data-set="none"]')
    page.locator('#filters input[data-dim="lang"][value="hi"]').check()
    labels = page.evaluate("[...document.querySelectorAll('[data-suite=mini] svg.bars text.glabel')]"
                           ".filter(e => e.getClientRects()"
                           ".length && !e.closest('.off, .unchosen')).map(e => e.textContent)")
    assert labels == ["all", "hi"]
    assert all(_visible(page, f'article.case[data-lang="{la}"]') == 0 for la in ("en", "ja", "km"))
    # the khmer suite has no Hindi: its per-language plots say so
    assert _visible(page, 'div.suite-plots[data-suite="khmer"] figure.empty') >= 1
    # suites: hide khmer
    page.locator('#filters input[data-dim="suite"][value="khmer"]').uncheck()
    assert _visible(page, 'div.suite-plots[data-suite="khmer"]') == 0
    assert _visible(page, 'tr[data-suite="khmer"]') == 0
    # everything back
    for dim in ("suite", "lang", "model"):
        page.click(f'#filters button[data-dim="{dim}"][data-set="all"]')
    assert _visible(page, "article.case") == cases_all and _visible(page, "svg.heatmap text.row") == rows_all
    assert _box(page, "svg.heatmap") == heat
    assert errors == []


def test_metric_choice(browser_page: Any) -> None:
    page, errors, _ = browser_page
    select = page.locator('select.metric[data-group="heat-0"]')
    assert select.input_value() == "score"
    select.select_option("rouge_l")
    shown = page.evaluate("[...document.querySelectorAll('figure[data-group=\"heat-0\"]')].filter(f => "
                          "!f.classList.contains('unchosen')).map(f => f.dataset.metric)")
    assert shown == ["rouge_l"]
    assert _visible(page, 'figure[data-group="heat-0"] svg') == 1
    select.select_option("score")
    assert errors == []


def test_report_file_is_small(tmp_path: Path) -> None:
    """The sample report (3 models, 4 languages, 16 failed cases) stays a light page."""
    assert len(html_report(sample_report()).encode("utf-8")) < 400_000
