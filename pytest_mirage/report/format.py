"""One number formatter and one list of headline metrics for every output (terminal, Markdown, HTML)."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

NULL = "–"
_MILLI = Decimal("0.001")
REPORT_DECIMALS = 6  # values in the JSON report: equal bytes with and without xdist

# The metric means shown in leaderboard tables, in this order, when a suite has values for them
# (the JSON report keeps every metric).
HEADLINE_METRICS: tuple[str, ...] = (
    "language_match", "citation_recall", "citation_map", "faithfulness", "char3_recall", "rouge_l",
    "hit_at_k", "mrr_at_k", "file_hit_at_k",
)
# compact column headers of the terminal table
SHORT_NAMES: dict[str, str] = {
    "language_match": "lang", "citation_recall": "cite_R", "citation_map": "cite_MAP",
    "citation_precision": "cite_P", "invalid_citations": "cite_bad", "char3_recall": "chr3_R",
    "support_lexical": "support", "english_share": "en_share", "file_hit_at_k": "file_hit",
}


def fmt(v: float | None) -> str:
    """3 decimals, half up from the shortest decimal form of the number (0.6665 -> 0.667); null as ``–``.

    (Formatting the binary float directly would show 0.666: 0.6665 is stored as 0.66649999...)
    """
    if v is None:
        return NULL
    if not math.isfinite(v):
        return str(v)  # "nan", "inf": shown as they are, never as a number they are not
    if abs(v) >= 1e15:  # beyond the decimal context's precision; no report value is this large
        return f"{v:.3f}"
    text = str(Decimal(repr(float(v))).quantize(_MILLI, rounding=ROUND_HALF_UP))
    return "0.000" if text == "-0.000" else text


def report_value(v: float | None) -> float | None:
    """A value as stored in the JSON report: rounded to :data:`REPORT_DECIMALS`, NaN as null."""
    if v is None or math.isnan(v):
        return None
    return round(float(v), REPORT_DECIMALS)


# The statistics sections (terminal and Markdown/HTML) format with these three, so a number reads
# the same in every output. NaN is how the stats modules say "undefined here" (no paired case, one
# class only) and None how the report's optional values say "not computed": both show as NULL.


def stat(v: float | None) -> str:
    """A statistic with :func:`fmt`'s 3 decimals; undefined (None or NaN) as ``–``."""
    return NULL if v is None or math.isnan(v) else fmt(v)


def signed(v: float | None) -> str:
    """A change, with its sign and 3 decimals (``+0.050``, ``-0.667``); undefined as ``–``."""
    return NULL if v is None or math.isnan(v) else f"{v:+.3f}"


def p_value(v: float | None) -> str:
    """A p-value to 3 significant digits (``0.0156``, ``1.53e-05``); undefined as ``–``."""
    return NULL if v is None or math.isnan(v) else f"{v:.3g}"


def bounds(low: float | None, high: float | None, *, sign: bool = False) -> str:
    """An interval's ends, ``[0.417, 0.917]`` (``sign``: ``[+0.417, +0.917]``)."""
    f = signed if sign else stat
    return f"[{f(low)}, {f(high)}]"


def estimate(value: float | None, low: float | None, high: float | None) -> str:
    """An estimate with its interval, ``0.750 [0.500, 1.000]``."""
    return f"{stat(value)} {bounds(low, high)}"
