"""The HTML report of a JSON report: its size, the time to render it, the time a headless Chromium
takes to open it, and a screenshot (the one in docs/ is made with this).

    python -m pytest suites/ -p no:cacheprovider -q --mirage-report=/tmp/r.json --mirage-html=/tmp/r.html
    python benchmarks/bench_report_html.py /tmp/r.json             # size, render and browser times
    python benchmarks/bench_report_html.py /tmp/r.html --screenshot docs/report-screenshot.png \
        --scroll-to 'div.suite-plots[data-suite="mirage-mini"]'

The screenshot is the top of the page at 1280 px wide (status, filters, the first plots), saved
as an 8-bit palette PNG when Pillow is installed (a few hundred KB otherwise).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_mirage.report.html import html_report  # noqa: E402
from tests.browser.test_report_browser import ARGS, chromium_binary  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("report", type=Path, help="a JSON report (--mirage-report) or an HTML one (--mirage-html)")
    ap.add_argument("--html", type=Path, help="where to write the HTML page (default: a temporary file)")
    ap.add_argument("--screenshot", type=Path, help="PNG of the top of the page")
    ap.add_argument("--scroll-to", default="#plots", help="CSS selector scrolled to before the screenshot")
    args = ap.parse_args()

    if args.report.suffix == ".html":
        out = args.report
        print(f"html: {out} {out.stat().st_size:,} bytes")
    else:
        data = json.loads(args.report.read_text(encoding="utf-8"))
        t0 = time.perf_counter()
        page_text = html_report(data)
        render_s = time.perf_counter() - t0
        out = args.html or Path(tempfile.mkdtemp()) / "report.html"
        out.write_text(page_text, encoding="utf-8")
        print(f"html: {out} {len(page_text.encode('utf-8')):,} bytes, rendered in {render_s:.2f} s "
              f"({len(data.get('results', [])):,} case results)")
    binary = chromium_binary()
    if binary is None:
        print("no Chromium: no browser timing, no screenshot")
        return 0
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as profile, sync_playwright() as pw:
        t0 = time.perf_counter()
        ctx = pw.chromium.launch_persistent_context(profile, executable_path=binary, headless=True, args=ARGS,
                                                    viewport={"width": 1280, "height": 1000})
        launch_s = time.perf_counter() - t0
        page = ctx.new_page()
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        t0 = time.perf_counter()
        page.goto(out.resolve().as_uri())
        page.wait_for_selector("html[data-ready]")
        load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        page.locator("#filters input[data-dim=model]").first.uncheck()
        filter_s = time.perf_counter() - t0
        page.locator("#filters input[data-dim=model]").first.check()
        print(f"chromium: launch {launch_s:.2f} s, open and lay out {load_s:.2f} s, one filter click "
              f"{filter_s * 1000:.0f} ms, console errors: {len(errors)}")
        if args.screenshot:
            if args.scroll_to:
                page.evaluate("s => { const e = document.querySelector(s); if (e) e.scrollIntoView(); }",
                              args.scroll_to)
            page.screenshot(path=str(args.screenshot))
            try:
                from PIL import Image

                Image.open(args.screenshot).convert("P", palette=Image.Palette.ADAPTIVE, colors=128).save(
                    args.screenshot, optimize=True)
            except ImportError:
                pass
            print(f"screenshot: {args.screenshot} {args.screenshot.stat().st_size:,} bytes")
        ctx.close()
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
