"""The report as one self-contained HTML page: no CDN, no network, no dependency.

The page shows what the Markdown report shows (the same :class:`~.document.Document` blocks),
and around it: filters by suite, language and model; plots drawn as inline SVG (:mod:`.svg`) — a
model x language heatmap of the default score and the headline metrics, per-language bars with
95% bootstrap intervals, Bradley-Terry strengths with their intervals when the arena ran, and
metric distributions; and the failed cases with question, answer, passages and citations side by
side. A small inline script (``assets/report.js``) applies the filters and the metric choice;
without it the page still shows everything (one metric per plot group).

Every text is sanitized (:mod:`.sanitize`) and escaped; text from the report never reaches the
script except as attribute values, which the script reads and writes with ``textContent``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from html import escape
from importlib.resources import files
from typing import Any

from ..results import CaseResult
from .blocks import Block, BulletList, Document, Heading, Paragraph, Table
from .document import report_document
from .figures import SCORE, Figures, SuiteFigures, build_figures
from .model import CaseDetail, RunReport, as_report
from .sanitize import sanitize, sanitize_name
from .svg import a, bars, colour, heatmap, histogram, short, strengths

MAX_CASES = 300  # failed cases shown side by side; the rest are counted (the JSON report has all)


@cache
def _asset(name: str) -> str:
    return (files(__package__) / "assets" / name).read_text(encoding="utf-8")


def _e(text: str) -> str:
    return escape(sanitize(text), quote=True)


# ------------------------------------------------------------------------------ document blocks
def _tag_attrs(tags: Iterable[tuple[str, str]]) -> str:
    return "".join(f' data-{k}="{escape(v, quote=True)}"' for k, v in tags)


def _table(t: Table) -> list[str]:
    def cls(numeric: bool) -> str:
        return ' class="num"' if numeric else ""

    lines = ["<table>", "<thead><tr>" + "".join(f"<th{cls(c.numeric)}>{_e(c.name)}</th>" for c in t.columns)
             + "</tr></thead>", "<tbody>"]
    for row in t.rows:
        classes = " ".join(c for c in (row.kind, "f" if row.tags else "") if c)
        rcls = f' class="{classes}"' if classes else ""
        lines.append(f"<tr{rcls}{_tag_attrs(row.tags)}>" + "".join(f"<td{cls(c.numeric)}>{_e(cell)}</td>"
                                                                  for c, cell in zip(t.columns, row.cells, strict=True))
                     + "</tr>")
    lines += ["</tbody>", "</table>"]
    return lines


def _block(b: Block) -> list[str]:
    if isinstance(b, Heading):
        return [f"<h{b.level}>{_e(b.text)}</h{b.level}>"]
    if isinstance(b, Paragraph):
        return ["<p>" + "".join(f"<strong>{_e(s.text)}</strong>" if s.strong else _e(s.text) for s in b.spans)
                + "</p>"]
    if isinstance(b, BulletList):
        return ["<ul>", *[f"<li>{_e(item)}</li>" for item in b.items], "</ul>"]
    return _table(b)


def _common_tags(blocks: Sequence[Block]) -> list[tuple[str, str]]:
    """The filter values every tagged row of ``blocks`` shares (a section about one suite, one
    language), so the whole section hides with its rows."""
    values: dict[str, set[str]] = defaultdict(set)
    rows = [r for b in blocks if isinstance(b, Table) for r in b.rows]
    if not rows or any(not r.tags for r in rows):
        return []
    keys = set.intersection(*({k for k, _ in r.tags} for r in rows))
    for r in rows:
        for k, v in r.tags:
            values[k].add(v)
    return [(k, next(iter(values[k]))) for k in ("suite", "lang", "model") if k in keys and len(values[k]) == 1]


def _blocks(blocks: Sequence[Block]) -> list[str]:
    """Blocks, each heading of level 2 or 3 opening a ``<section>`` that the filters can hide."""
    out: list[str] = []
    i = 0
    while i < len(blocks):
        b = blocks[i]
        if isinstance(b, Heading) and b.level in (2, 3):
            j = i + 1
            while j < len(blocks) and not (isinstance(blocks[j], Heading)
                                           and blocks[j].level <= b.level):  # type: ignore[union-attr]
                j += 1
            common = _common_tags(blocks[i:j])
            cls = ' class="f"' if common else ""
            out.append(f"<section{cls}{_tag_attrs(common)}>")
            out += _block(b)
            out += _blocks(blocks[i + 1:j])
            out.append("</section>")
            i = j
        else:
            out += _block(b)
            i += 1
    return out


def render_html(doc: Document) -> str:
    """A complete HTML5 page of the document's blocks only (no plots, no script); ends with a
    newline. :func:`html_report` is the full report."""
    return _page(doc.title, _blocks(doc.blocks), script=False)


def _page(title: str, body: list[str], *, script: bool) -> str:
    head = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            # nothing on this page may load anything from anywhere; the inline style and script only
            '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">",
            f"<title>{_e(title)}</title>", f"<style>\n{_asset('report.css')}</style>",
            "<noscript><style>.unchosen { display: block !important; }</style></noscript>", "</head>", "<body>"]
    tail = [f"<script>\n{_asset('report.js')}</script>"] if script else []
    return "\n".join([*head, *body, *tail, "</body>", "</html>"]) + "\n"


# ------------------------------------------------------------------------------ filters
def _filter_values(report: RunReport, figs: Figures) -> dict[str, list[str]]:
    suites: list[str] = [s.name for s in report.suites]
    langs: set[str] = set()
    models: list[str] = list(figs.models)
    rows: list[Any] = [*report.results, *report.leaderboard, *report.gates, *report.arena, *report.cases,
                       *report.surrogate_scores]
    for r in rows:
        suites.append(r.suite)
        langs.add(r.lang)
        models.append(r.model)
    n = sanitize_name
    return {"suite": list(dict.fromkeys(n(s) for s in suites)),
            "lang": sorted({n(la) for la in langs} - {"all"}),
            "model": list(dict.fromkeys(n(m) for m in [*report.models, *models]))}


def _filters(values: Mapping[str, list[str]], figs: Figures) -> list[str]:
    names = {"suite": "Suite", "lang": "Language", "model": "Model"}
    swatch = {sanitize_name(m): s.colour(m) for s in figs.suites for m in s.models}
    refs = {sanitize_name(m) for m in figs.references}
    out = ['<nav id="filters" aria-label="filters">']
    for dim in ("suite", "lang", "model"):
        vals = values[dim]
        if len(vals) < 2:
            continue
        out.append(f'<fieldset data-dim="{dim}"><legend>{names[dim]}</legend>')
        for v in vals:
            mark = ""
            if dim == "model" and v in swatch:
                mark = f'<span class="swatch" style="background:{colour(swatch[v])}"></span> '
            label = escape(short(v, 40)) + (" (ref)" if dim == "model" and v in refs else "")
            out.append(f'<label title="{escape(v, quote=True)}"><input type="checkbox" data-dim="{dim}" '
                       f'value="{escape(v, quote=True)}" checked> {mark}{label}</label>')
        out.append(f'<button type="button" data-dim="{dim}" data-set="all">all</button>'
                   f'<button type="button" data-dim="{dim}" data-set="none">none</button></fieldset>')
    out.append("</nav>")
    return out


# ------------------------------------------------------------------------------ plots
def _choice(group: str, metrics: Sequence[str], default: str) -> str:
    opts = "".join(f'<option value="{a(m)}"{" selected" if m == default else ""}>{_e(m)}</option>' for m in metrics)
    return f'<label class="choose">metric <select class="metric" data-group="{group}">{opts}</select></label>'


def _figure(group: str, metric: str, chosen: bool, svg: str, caption: str = "") -> str:
    cls = "" if chosen else ' class="unchosen"'
    cap = f"<figcaption>{_e(caption)}</figcaption>" if caption else ""
    return f'<figure{cls} data-group="{group}" data-metric="{a(metric)}">{svg}{cap}</figure>'


def _suite_plots(k: int, fig: SuiteFigures, lower: frozenset[str]) -> list[str]:
    groups: list[list[str]] = []
    if fig.heat_metrics:
        group = f"heat-{k}"
        groups.append([f"<h4>Model × language: mean ({_e(SCORE)}: the leaderboard's default score)</h4>",
                       _choice(group, fig.heat_metrics, fig.heat_metrics[0]),
                       *[_figure(group, m, m == fig.heat_metrics[0], heatmap(fig, m, m in lower))
                         for m in fig.heat_metrics]])
    if fig.bar_metrics:
        group = f"bars-{k}"
        groups.append(["<h4>Per language: mean and 95% bootstrap interval</h4>",
                       _choice(group, fig.bar_metrics, fig.bar_metrics[0]),
                       *[_figure(group, m, m == fig.bar_metrics[0], bars(fig, m),
                                 "Whiskers: percentile bootstrap over cases (1,000 resamples, seed 0) of the "
                                 "report's per-case results; errors and null values left out.")
                         for m in fig.bar_metrics]])
    if fig.hist_metrics:
        group = f"hist-{k}"
        groups.append(["<h4>Distribution over cases (stacked by model)</h4>",
                       _choice(group, fig.hist_metrics, fig.hist_metrics[0]),
                       *[_figure(group, m, m == fig.hist_metrics[0], histogram(fig, m)) for m in fig.hist_metrics]])
    if fig.arena:
        rows = [r for rs in fig.arena.values() for r in rs]
        vals = [v for r in rows for v in (r.ci_low, r.ci_high, r.strength) if v is not None]
        lo, hi = (min(vals), max(vals)) if vals else (-1.0, 1.0)
        pad = (hi - lo) * 0.05 or 0.5
        arena = ["<h4>Bradley-Terry strengths (pairwise judge), 95% intervals over tournaments</h4>",
                 '<div class="plots">']
        for lang, arena_rows in fig.arena.items():
            title = "all languages" if lang == "all" else f"language {lang}"
            arena.append(f'<figure class="f" data-lang="{a(lang)}">{strengths(fig, lang, arena_rows, lo - pad, hi + pad)}'
                         f"<figcaption>{_e(title)}</figcaption></figure>")
        groups.append([*arena, "</div>"])
    out = [f'<div class="suite-plots f" data-suite="{a(fig.suite)}">', f"<h3>{_e(fig.suite)}</h3>", '<div class="plots">']
    for g in groups:
        out += ['<div class="pgroup">', *g, "</div>"]
    out += ["</div>", "</div>"]
    return out


def _plots(figs: Figures) -> list[str]:
    if not figs.suites:
        return []
    out = ['<section id="plots">', "<h2>Plots</h2>"]
    for k, fig in enumerate(figs.suites):
        out += _suite_plots(k, fig, figs.lower_is_better)
    out.append("</section>")
    return out


# ------------------------------------------------------------------------------ failed cases
def _passage(p: Any) -> str:
    marks = ('<span class="mark rel">relevant</span>' if p.relevant else "") + (
        '<span class="mark cited">cited</span>' if p.cited else "")
    cls = " ".join(c for c in ("psg", "rel" if p.relevant else "", "cited" if p.cited else "") if c)
    title = f" {_e(p.title)}" if p.title else ""
    return (f'<div class="{cls}"><div class="pid">[{_e(sanitize_name(p.id))}]{title}{marks}</div>'
            f'<p class="txt">{_e(p.text)}</p></div>')


def _case(c: CaseDetail, result: CaseResult | None) -> list[str]:
    n = sanitize_name
    why = list(result.failures) if result is not None else []
    if result is not None and result.error:
        why.append(result.error)
    relevant = {p.id for p in c.passages if p.relevant}
    out = [f'<article class="case f" data-suite="{a(c.suite)}" data-lang="{a(c.lang)}" data-model="{a(c.model)}">',
           f'<header><span class="cid">{_e(n(c.case_id))}</span><span class="tag">{_e(n(c.model))}</span>'
           f'<span class="tag">{_e(n(c.suite))} · {_e(n(c.lang))}</span>'
           + (f'<span class="src">{_e(n(c.source))}</span>' if c.source else "") + "</header>"]
    if why:
        out.append('<ul class="why">' + "".join(f"<li>{_e(w)}</li>" for w in why) + "</ul>")
    answer = ('<p class="txt note">(the model gave no answer)</p>' if c.answer is None
              else f'<p class="txt">{_e(c.answer)}</p>')
    out.append('<div class="cols"><div class="qa"><h4>Question</h4>'
               f'<p class="txt">{_e(c.question)}</p><h4>Answer (excerpt)</h4>{answer}</div>')
    psg = "".join(_passage(p) for p in c.passages) or '<p class="note">no passages</p>'
    out.append(f'<div class="passages"><h4>Passages ({len(c.passages)})</h4>{psg}</div>')
    cites = "".join(f"<li>[{_e(n(x))}]" + ('<span class="mark rel">relevant</span>' if x in relevant
                                           else '<span class="mark bad">not relevant</span>') + "</li>"
                    for x in c.citations)
    parts = [f"<h4>Citations ({len(c.citations)})</h4>", f"<ul>{cites}</ul>" if cites else '<p class="note">none</p>']
    if c.invalid_citations:
        parts.append("<h4>Invalid citations</h4><ul>" + "".join(
            f'<li>[{_e(n(x))}]<span class="mark bad">not a passage</span></li>' for x in c.invalid_citations)
            + "</ul>")
    missed = [r for r in relevant if r not in c.citations]
    if missed:
        parts.append("<h4>Relevant, not cited</h4><ul>" + "".join(f"<li>[{_e(n(x))}]</li>" for x in missed)
                     + "</ul>")
    for kind, reply in c.judges.items():
        parts.append(f"<details><summary>judge: {_e(n(kind))}</summary><pre>{_e(reply)}</pre></details>")
    out.append(f'<div class="cites">{"".join(parts)}</div></div>')
    out += _sentences(c)
    out.append("</article>")
    return out


VERDICT_MARKS = {"supported": ("rel", "supported"), "unsupported": ("bad", "unsupported"),
                 "no_content": ("", "no checkable content"), "refusal": ("cited", "refusal")}


def _sentences(c: CaseDetail) -> list[str]:
    """The answer's sentence verdicts: each sentence, its verdict, the passage sentence it aligns to
    and the facts no passage states."""
    if not c.sentences:
        return []
    rows = []
    for v in c.sentences:
        cls, word = VERDICT_MARKS.get(v.verdict, ("", v.verdict))
        aligned = (f'[{_e(sanitize_name(v.aligned_passage))}] {_e(v.aligned_sentence)}' if v.aligned_passage
                   else '<span class="note">no passage sentence</span>')
        missing = "".join(f"<li>{_e(m)}</li>" for m in v.missing)
        why = f'<p class="note">{_e(v.reason)}</p>' if v.reason else ""
        rows.append(f'<tr class="verdict {a(v.verdict)}"><td class="txt">{_e(v.text)}</td>'
                    f'<td><span class="mark {cls}">{_e(word)}</span></td><td class="txt">{aligned}</td>'
                    f'<td>{f"<ul>{missing}</ul>" if missing else ""}{why}</td></tr>')
    return ['<details class="sentences" open><summary>Faithfulness, sentence by sentence '
            f'({sum(v.verdict == "unsupported" for v in c.sentences)} unsupported of {len(c.sentences)})</summary>'
            '<table><thead><tr><th>answer sentence</th><th>verdict</th><th>aligned passage sentence</th>'
            '<th>missing facts</th></tr></thead><tbody>' + "".join(rows) + "</tbody></table></details>"]


def _cases(report: RunReport, max_cases: int) -> list[str]:
    if not report.cases:
        return []
    by_key = {(r.suite, r.case_id, r.model): r for r in report.results}
    shown = report.cases[:max_cases]
    out = ['<section id="cases">', f"<h2>Failed cases side by side ({len(report.cases)})</h2>",
           f'<p class="note">Showing <span data-count="#cases .case">{len(shown)}</span> of {len(report.cases)}. '
           "Passages: green = relevant (gold), amber = cited but not relevant.</p>"]
    for c in shown:
        out += _case(c, by_key.get((c.suite, c.case_id, c.model)))
    if len(report.cases) > len(shown):
        out.append(f'<p class="note">… {len(report.cases) - len(shown):,} more failed cases not shown here '
                   "(the JSON report has them all).</p>")
    out.append("</section>")
    return out


# ------------------------------------------------------------------------------ page
def _problems(doc: Document, report: RunReport) -> list[str]:
    blocks = doc.section("problems")
    if not blocks:
        return []
    cls = "alert" if report.fatal or report.collection_errors else "alert warn"
    return [f'<div class="{cls}">', *_blocks(blocks), "</div>"]


def build_html(report: RunReport, *, max_cases: int = MAX_CASES) -> str:
    """The full page (see the module doc)."""
    doc = report_document(report)
    figs = build_figures(report)
    status = doc.section("status")
    body: list[str] = [*_block(status[0]),
                       f'<p><span class="badge {report.status}">run {report.status}</span> '
                       f"exit status {report.exitstatus}</p>"]
    for b in status[1:]:
        body += _block(b)
    body += _problems(doc, report)
    body += _filters(_filter_values(report, figs), figs)
    gates = _blocks(doc.section("gates"))
    if report.failed_gates:  # failed gates first; passed ones are a table to look up, after the plots
        body += gates
    body += _plots(figs)
    if not report.failed_gates:
        body += gates
    body += _cases(report, max_cases)
    # the statistics sections (judge health, baseline, calibration, ...) as in the Markdown report
    for name in ("failures", "errors", "leaderboards", "statistics", "arena", "surrogate", "overview"):
        body += _blocks(doc.section(name))
    return _page(doc.title, body, script=True)


def html_report(report: RunReport | Mapping[str, Any], *, max_cases: int = MAX_CASES) -> str:
    """The JSON report ``report`` (schema ``pytest-mirage/report/1``) as a standalone HTML page.

    The content of :func:`~pytest_mirage.report.markdown.markdown_report`, plus filters, plots and
    the failed cases side by side (at most ``max_cases``). Raises
    :class:`~pytest_mirage.report.model.ReportFormatError` naming the field when ``report`` is not a
    valid report.
    """
    return build_html(as_report(report), max_cases=max_cases)
