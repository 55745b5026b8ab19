"""Inline SVG plots for the HTML report, drawn from :mod:`.figures` (no plotting library).

Every plot is complete as drawn here, so the page shows everything without JavaScript. Elements
that a filter may hide carry the class ``f`` and ``data-suite``/``data-lang``/``data-model``;
the layout attributes (``data-layout``, ``data-ri``/``data-ci``, ``data-gi``/``data-mi``) let the
page's script close the gaps that hidden rows, columns and bars leave. Every text passes through
:func:`~.sanitize.sanitize` and is escaped; names are cut for the axis and shown in full in the
``<title>`` tooltip.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from html import escape

from .figures import BINS, Histogram, Mean, SuiteFigures
from .format import NULL, fmt
from .model import ArenaRow
from .sanitize import sanitize, sanitize_name

# Okabe-Ito: distinguishable with the common colour-vision deficiencies
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#F0E442")
# viridis, 5 stops (dark = low)
_VIRIDIS = ((0x44, 0x01, 0x54), (0x3B, 0x52, 0x8B), (0x21, 0x91, 0x8C), (0x5E, 0xC9, 0x62), (0xFD, 0xE7, 0x25))
NAME_CHARS = 28  # characters of a model name on an axis
CHAR_W = 6.6  # average width of a character at the plots' font size (px)


def t(text: str) -> str:
    """Text content: sanitized and escaped."""
    return escape(sanitize(text), quote=False)


def a(text: str) -> str:
    """An attribute value holding a name: sanitized as a name and escaped (quotes included)."""
    return escape(sanitize_name(text), quote=True)


def short(name: str, limit: int = NAME_CHARS) -> str:
    name = sanitize_name(name)
    return name if len(name) <= limit else name[: limit - 1] + "…"


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def heat_colour(x: float) -> str:
    """Viridis at ``x`` in [0, 1] (clamped)."""
    x = min(1.0, max(0.0, x)) * (len(_VIRIDIS) - 1)
    i = min(int(x), len(_VIRIDIS) - 2)
    f = x - i
    c = [round(p + (q - p) * f) for p, q in zip(_VIRIDIS[i], _VIRIDIS[i + 1], strict=True)]
    return "#{:02x}{:02x}{:02x}".format(*c)


def _label_width(names: Sequence[str]) -> int:
    return int(min(NAME_CHARS + 6, max((len(short(n)) for n in names), default=4) + 6) * CHAR_W) + 8


def _n(v: float) -> str:
    """A coordinate: at most 1 decimal."""
    return f"{v:.1f}".rstrip("0").rstrip(".")


def _model_label(name: str, refs: frozenset[str]) -> str:
    return short(name) + (" (ref)" if name in refs else "")


def _svg(cls: str, width: float, height: float, label: str, attrs: str = "") -> str:
    return (f'<svg class="plot {cls}" xmlns="http://www.w3.org/2000/svg" width="{_n(width)}" '
            f'height="{_n(height)}" viewBox="0 0 {_n(width)} {_n(height)}" role="img" aria-label="{a(label)}"'
            f"{attrs}>")


# --------------------------------------------------------------------------- heatmap
def heatmap(fig: SuiteFigures, metric: str, lower_is_better: bool = False) -> str:
    """Models (rows, in ranking order) x languages (columns, ``all`` first): the metric's mean,
    coloured on viridis (bright = better; reversed for a lower-is-better metric)."""
    cols = ["all", *fig.langs]
    rows = fig.models
    values = fig.heat.get(metric, {})
    finite = [v for v in values.values() if v is not None and math.isfinite(v)]
    lo, hi = (0.0, 1.0) if not finite or (min(finite) >= 0 and max(finite) <= 1) else (min(finite), max(finite))
    span = hi - lo or 1.0
    x0, y0, cw, ch = _label_width([_model_label(m, fig.references) for m in rows]), 24, 48, 22
    width, height = x0 + len(cols) * cw + 4, y0 + len(rows) * ch + 4
    out = [_svg("heatmap", width, height, f"{fig.suite}: {metric} per model and language",
                f' data-layout="grid" data-x0="{x0}" data-y0="{y0}" data-cw="{cw}" data-ch="{ch}" data-padw="4" '
                f'data-padh="4"')]
    for j, lang in enumerate(cols):
        out.append(f'<text class="col f" data-lang="{a(lang)}" data-ci="{j}" x="{_n(x0 + j * cw + cw / 2)}" y="16" '
                   f'text-anchor="middle">{t(short(lang, 7))}</text>')
    for i, model in enumerate(rows):
        cls = "row f ref" if model in fig.references else "row f"
        out.append(f'<text class="{cls}" data-model="{a(model)}" data-ri="{i}" x="{x0 - 6}" y="{_n(y0 + i * ch + 15)}" '
                   f'text-anchor="end"><title>{t(model)}</title>{t(_model_label(model, fig.references))}</text>')
        for j, lang in enumerate(cols):
            v = values.get((model, lang))
            if v is None or not math.isfinite(v):
                fill, ink, shown = "#eaeef2", "#57606a", NULL
            else:
                x = (v - lo) / span
                x = 1 - x if lower_is_better else x
                fill, ink, shown = heat_colour(x), "#000" if x > 0.55 else "#fff", fmt(v)
            out.append(f'<g class="cell f" data-model="{a(model)}" data-lang="{a(lang)}" data-ri="{i}" data-ci="{j}" '
                       f'data-v="{"" if shown == NULL else shown}" transform="translate({x0 + j * cw},{y0 + i * ch})">'
                       f'<rect width="{cw - 2}" height="{ch - 2}" fill="{fill}"/>'
                       f'<text x="{(cw - 2) / 2:g}" y="14" text-anchor="middle" fill="{ink}">{shown}</text>'
                       f"<title>{t(model)} · {t(lang)} · {t(metric)}: {shown}</title></g>")
    out.append("</svg>")
    return "".join(out)


# --------------------------------------------------------------------------- bars with intervals
def bars(fig: SuiteFigures, metric: str) -> str:
    """Per language (``all`` first) one bar per model: the mean, with a whisker for its 95%
    bootstrap interval."""
    groups = ["all", *fig.langs]
    models = fig.models
    values = fig.bars.get(metric, {})
    highs = [m.high for m in values.values() if m.high is not None and math.isfinite(m.high)]
    lows = [m.low for m in values.values() if m.low is not None and math.isfinite(m.low)]
    ymax = max(1.0, *highs) if highs else 1.0
    ymin = min(0.0, *lows) if lows else 0.0
    bw, gap, x0, top, h = 9, 10, 38, 10, 150
    gw = len(models) * bw + gap
    width, height = x0 + len(groups) * gw + 4, top + h + 34

    def y(v: float) -> float:
        return top + h * (ymax - v) / ((ymax - ymin) or 1.0)

    out = [_svg("bars", width, height, f"{fig.suite}: {metric} per language with 95% intervals",
                f' data-layout="groups" data-x0="{x0}" data-bw="{bw}" data-gap="{gap}"')]
    for k in range(5):  # grid lines and y axis labels
        v = ymin + (ymax - ymin) * k / 4
        out.append(f'<line class="grid" x1="{x0 - 4}" x2="100%" y1="{_n(y(v))}" y2="{_n(y(v))}"/>'
                   f'<text class="axis" x="{x0 - 6}" y="{_n(y(v) + 4)}" text-anchor="end">{v:.2f}</text>')
    for i, model in enumerate(models):
        out.append(f'<g class="mkey f" data-model="{a(model)}" data-mi="{i}"></g>')
    for gi, lang in enumerate(groups):
        gx = x0 + gi * gw
        out.append(f'<text class="glabel f" data-lang="{a(lang)}" data-gi="{gi}" x="{_n(gx + len(models) * bw / 2)}" '
                   f'y="{top + h + 16}" text-anchor="middle">{t(short(lang, 7))}</text>')
        for mi, model in enumerate(models):
            m = values.get((model, lang))
            if m is None or m.value is None or not math.isfinite(m.value):
                continue
            out.append(_bar(model, lang, metric, m, mi, gi, gx + mi * bw, bw, y, ymin, colour(fig.colour(model))))
    out.append("</svg>")
    return "".join(out)


def _bar(model: str, lang: str, metric: str, m: Mean, mi: int, gi: int, x: float, bw: int,
         y: Callable[[float], float], ymin: float, fill: str) -> str:
    assert m.value is not None
    base = y(max(ymin, 0.0))
    top = y(m.value)
    ci = ""
    if m.low is not None and m.high is not None and math.isfinite(m.low) and math.isfinite(m.high):
        cx = (bw - 1) / 2
        ci = (f'<path class="ci" d="M{_n(cx)} {_n(y(m.low))}V{_n(y(m.high))}M{_n(cx - 2.5)} {_n(y(m.low))}'
              f'h5M{_n(cx - 2.5)} {_n(y(m.high))}h5"/>')
        tip = f"{fmt(m.value)} [{fmt(m.low)}, {fmt(m.high)}], n={m.n}"
    else:
        tip = f"{fmt(m.value)}, n={m.n}"
    return (f'<g class="bar f" data-model="{a(model)}" data-lang="{a(lang)}" data-mi="{mi}" data-gi="{gi}" '
            f'data-v="{fmt(m.value)}" transform="translate({_n(x)},0)">'
            f'<rect width="{bw - 1}" y="{_n(min(top, base))}" height="{_n(abs(base - top))}" fill="{fill}"/>'
            f"{ci}<title>{t(model)} · {t(lang)} · {t(metric)}: {tip}</title></g>")


# --------------------------------------------------------------------------- Bradley-Terry
def strengths(fig: SuiteFigures, lang: str, rows: Sequence[ArenaRow], lo: float, hi: float) -> str:
    """One row per model: the Bradley-Terry strength (dot) and its 95% interval (whisker), on the
    suite's common axis [lo, hi]; the dashed line is 0 (the average model)."""
    x0 = _label_width([_model_label(r.model, fig.references) for r in rows])
    pw, rh, top = 280, 20, 8
    width, height = x0 + pw + 70, top + len(rows) * rh + 24
    span = (hi - lo) or 1.0

    def x(v: float) -> float:
        return x0 + pw * (v - lo) / span

    out = [_svg("strengths", width, height, f"{fig.suite} {lang}: Bradley-Terry strengths",
                f' data-layout="grid" data-x0="0" data-y0="{top}" data-cw="0" data-ch="{rh}" data-padw="{_n(width)}" '
                f'data-padh="24"')]
    if lo <= 0 <= hi:
        out.append(f'<line class="zero" x1="{_n(x(0))}" x2="{_n(x(0))}" y1="{top}" y2="100%"/>')
    for v in (lo, hi):
        out.append(f'<text class="axis foot" x="{_n(x(v))}" y="{_n(height - 6)}" text-anchor="middle">{v:+.2f}</text>')
    for i, r in enumerate(rows):
        cls = "cell f ref" if r.model in fig.references else "cell f"
        parts = [f'<g class="{cls}" data-model="{a(r.model)}" data-ri="{i}" data-ci="0" '
                 f'data-v="{fmt(r.strength)}" transform="translate(0,{top + i * rh})">'
                 f'<text x="{x0 - 6}" y="14" text-anchor="end">{t(_model_label(r.model, fig.references))}</text>']
        if r.ci_low is not None and r.ci_high is not None:
            parts.append(f'<line class="ci" x1="{_n(x(r.ci_low))}" x2="{_n(x(r.ci_high))}" y1="10" y2="10"/>')
        if r.strength is not None:
            parts.append(f'<circle cx="{_n(x(r.strength))}" cy="10" r="4.5" fill="{colour(fig.colour(r.model))}"/>'
                         f'<text class="axis" x="{x0 + pw + 8}" y="14">{r.strength:+.2f}</text>')
        parts.append(f"<title>{t(r.model)}: rank {r.rank}, strength {fmt(r.strength)} "
                     f"[{fmt(r.ci_low)}, {fmt(r.ci_high)}]</title></g>")
        out.append("".join(parts))
    out.append("</svg>")
    return "".join(out)


# --------------------------------------------------------------------------- histograms
def stacks(hist: Histogram, models: Sequence[str], langs: set[str] | None = None,
           shown_models: set[str] | None = None) -> list[list[tuple[str, int]]]:
    """Per bin, (model, count) in model order, over the given languages and models (None: all).
    The page's script computes the same when the filters change."""
    out = []
    for b in range(BINS):
        stack = []
        for m in models:
            if m not in hist.counts or (shown_models is not None and m not in shown_models):
                continue
            stack.append((m, sum(c[b] for la, c in hist.counts[m].items() if langs is None or la in langs)))
        out.append(stack)
    return out


def histogram(fig: SuiteFigures, metric: str) -> str:
    """The per-case values in 10 bins, stacked by model (colours as in the bars)."""
    hist = fig.hists[metric]
    models = [m for m in fig.models if m in hist.counts]
    x0, top, h, bw = 40, 12, 120, 34
    width, height = x0 + BINS * bw + 8, top + h + 34
    st = stacks(hist, models)
    total = max((sum(c for _, c in s) for s in st), default=0)
    counts = {sanitize_name(m): {sanitize_name(la): c for la, c in hist.counts[m].items()} for m in models}
    data = escape(json.dumps(counts, ensure_ascii=True, separators=(",", ":")), quote=True)
    out = [_svg("hist", width, height, f"{fig.suite}: distribution of {metric} over cases",
                f' data-layout="hist" data-x0="{x0}" data-top="{top}" data-h="{h}" data-bw="{bw}" data-counts="{data}"')]
    out.append(f'<line class="grid" x1="{x0}" x2="{x0 + BINS * bw}" y1="{top + h}" y2="{top + h}"/>'
               f'<text class="axis ymax" x="{x0 - 4}" y="{top + 8}" text-anchor="end">{total}</text>'
               f'<text class="axis" x="{x0 - 4}" y="{top + h}" text-anchor="end">0</text>')
    for k, edge in enumerate(hist.edges()):
        if k % 2 == 0:
            out.append(f'<text class="axis" x="{x0 + k * bw}" y="{top + h + 14}" text-anchor="middle">'
                       f"{edge:.4g}</text>")
    for b, stack in enumerate(st):
        ybase = float(top + h)
        for m, c in stack:
            hh = h * c / total if total else 0.0
            ybase -= hh
            out.append(f'<rect class="hseg" data-model="{a(m)}" data-bin="{b}" data-c="{c}" x="{x0 + b * bw + 1}" '
                       f'y="{_n(ybase)}" width="{bw - 2}" height="{_n(hh)}" fill="{colour(fig.colour(m))}">'
                       f"<title>{t(m)}: {c}</title></rect>")
    out.append("</svg>")
    return "".join(out)
