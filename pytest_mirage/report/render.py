"""What the Markdown and HTML reports show, built once from a JSON report (``pytest-mirage/report/1``).

:func:`report_document` reads the report dict (as :func:`~pytest_mirage.report.json_report.build_report`
writes it, or as loaded back from ``--mirage-report PATH``), validates every field it shows and turns it
into a :class:`Document`: headings, paragraphs, bullet lists and tables of *plain-text* cells. The
writers (:mod:`.markdown`, :mod:`.html`) only escape and lay out those blocks, so both formats show the
same content. Numbers are shown with 3 decimals, a null value as ``–`` (never as 0).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any, Literal

from ..errors import MirageError
from .aggregate import SCORE_METRICS
from .json_report import SCHEMA

# the metric means shown in the leaderboard tables, in this order, when a suite has values for them
# (the JSON report keeps every metric)
MAIN_METRICS: tuple[str, ...] = (
    "language_match", "citation_recall", "citation_map", "faithfulness", "char3_recall", "rouge_l",
    "hit_at_k", "mrr_at_k",
)
# the judge reliability figures in the order shown; other keys follow, sorted
JUDGE_KEYS: tuple[str, ...] = (
    "judgments", "decided", "swap_consistency", "swap_pairs", "swap_consistent", "tie_rate", "ties",
    "position_a_rate", "parse_failures", "parse_failure_rate", "retried", "errors",
)
HEALTH_KEYS: tuple[str, ...] = ("tau_mean", "tau_cv", "r2_mean", "r2_cv")
NULL = "–"
_MILLI = Decimal("0.001")
_FIX = ("render a report written by pytest-mirage with --mirage-report PATH "
        f"(schema {SCHEMA!r}), unchanged")


class ReportFormatError(MirageError):
    """The report dict given to a Markdown/HTML writer is not a valid ``pytest-mirage/report/1`` report."""


# ---------------------------------------------------------------------------------------------- blocks
@dataclass(frozen=True, slots=True)
class Heading:
    level: int  # 1 = the title
    text: str


@dataclass(frozen=True, slots=True)
class Span:
    text: str
    strong: bool = False


@dataclass(frozen=True, slots=True)
class Paragraph:
    spans: tuple[Span, ...]


@dataclass(frozen=True, slots=True)
class BulletList:
    items: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    numeric: bool = False  # right-aligned


RowKind = Literal["", "ref", "fail", "na", "error"]


@dataclass(frozen=True, slots=True)
class Row:
    cells: tuple[str, ...]
    kind: RowKind = ""  # how the HTML page styles it: reference system, failed gate, not evaluable, error


@dataclass(frozen=True, slots=True)
class Table:
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]

    def __post_init__(self) -> None:
        for row in self.rows:
            if len(row.cells) != len(self.columns):
                raise ValueError(f"table row {row.cells!r} has {len(row.cells)} cells for "
                                 f"{len(self.columns)} columns")


Block = Heading | Paragraph | BulletList | Table


@dataclass(frozen=True, slots=True)
class Document:
    title: str
    blocks: tuple[Block, ...]


# ------------------------------------------------------------------------------------- field readers
def _bad(where: str, value: Any, expected: str) -> ReportFormatError:
    found = "nothing (missing)" if value is _MISSING else repr(value)[:120]
    return ReportFormatError(f"report field {where}: found {found}; expected {expected}; {_FIX}")


_MISSING: Any = object()


def _field(obj: Mapping[str, Any], key: str) -> Any:
    return obj.get(key, _MISSING)


def _str(obj: Mapping[str, Any], key: str, where: str) -> str:
    v = _field(obj, key)
    if not isinstance(v, str):
        raise _bad(f"{where}.{key}", v, "a string")
    return v


def _opt_str(obj: Mapping[str, Any], key: str, where: str) -> str | None:
    v = obj.get(key)
    if v is not None and not isinstance(v, str):
        raise _bad(f"{where}.{key}", v, "a string or null")
    return v


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _num(obj: Mapping[str, Any], key: str, where: str) -> float | None:
    """A number or null (null stays null: it is shown as ``–``, never as 0)."""
    v = obj.get(key, _MISSING)
    if v is None:
        return None
    if not _is_num(v):
        raise _bad(f"{where}.{key}", v, "a number or null")
    return float(v)


def _int(obj: Mapping[str, Any], key: str, where: str) -> int:
    v = _field(obj, key)
    if not isinstance(v, int) or isinstance(v, bool):
        raise _bad(f"{where}.{key}", v, "an integer")
    return v


def _map(obj: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    v = _field(obj, key)
    if not isinstance(v, Mapping):
        raise _bad(f"{where}.{key}", v, "an object")
    return v


def _rows(report: Mapping[str, Any], key: str, required: bool = True) -> list[Mapping[str, Any]]:
    """A top-level list of objects (``required=False``: absent means empty, e.g. no arena)."""
    v = report.get(key, _MISSING)
    if not required and (v is _MISSING or v is None):
        return []
    if not isinstance(v, list):
        raise _bad(key, v, "a list of objects")
    for i, item in enumerate(v):
        if not isinstance(item, Mapping):
            raise _bad(f"{key}[{i}]", item, "an object")
    return v


def _strs(obj: Mapping[str, Any], key: str, where: str, required: bool = True) -> list[str]:
    v = obj.get(key, _MISSING if required else [])
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise _bad(f"{where}.{key}" if where else key, v, "a list of strings")
    return v


def fmt(v: float | None) -> str:
    """3 decimals, half up from the number as written in the JSON (0.6665 -> 0.667); null as ``–``.

    (Formatting the binary float would show 0.666: 0.6665 is stored as 0.66649999...)
    """
    if v is None:
        return NULL
    if not math.isfinite(v):
        return str(v)  # "nan", "inf": shown as they are, never as a number they are not
    if abs(v) >= 1e15:  # beyond the decimal context's precision; no report value is this large
        return f"{v:.3f}"
    text = str(Decimal(repr(float(v))).quantize(_MILLI, rounding=ROUND_HALF_UP))
    return "0.000" if text == "-0.000" else text


def _fmt_any(v: Any, where: str) -> str:
    if v is None:
        return NULL
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return fmt(v)
    if isinstance(v, str):
        return v
    raise _bad(where, v, "a number, string, boolean or null")


# ------------------------------------------------------------------------------------------ content
@dataclass(frozen=True, slots=True)
class _Board:
    suite: str
    lang: str
    model: str
    rank: int
    score: float | None
    metrics: Mapping[str, float | None]
    n: int
    reference: bool
    errors: int = 0


def _board_rows(report: Mapping[str, Any]) -> list[_Board]:
    out = []
    for i, r in enumerate(_rows(report, "leaderboard")):
        w = f"leaderboard[{i}]"
        metrics = _map(r, "metrics", w)
        vals: dict[str, float | None] = {}
        for k in metrics:
            vals[str(k)] = _num(metrics, k, f"{w}.metrics")
        ref = r.get("reference", _MISSING)
        if not isinstance(ref, bool):
            raise _bad(f"{w}.reference", ref, "true or false")
        errors = _int(r, "errors", w) if "errors" in r else 0
        out.append(_Board(_str(r, "suite", w), _str(r, "lang", w), _str(r, "model", w), _int(r, "rank", w),
                          _num(r, "score", w), vals, _int(r, "n", w), ref, errors))
    return out


def _lang_order(langs: set[str]) -> list[str]:
    return (["all"] if "all" in langs else []) + sorted(langs - {"all"})


def _suite_order(names: Sequence[str], *groups: set[str]) -> list[str]:
    rest = set().union(*groups) - set(names)
    return list(dict.fromkeys([*names, *sorted(rest)]))


def _overview(report: Mapping[str, Any], suites: list[Mapping[str, Any]]) -> list[Block]:
    models = _strs(report, "models", "")
    blocks: list[Block] = [Heading(2, "Models under test"),
                           BulletList(tuple(models)) if models else Paragraph((Span("none"),))]
    if suites:
        rows = []
        for i, s in enumerate(suites):
            w = f"suites[{i}]"
            cases = s.get("cases")
            if cases is not None and (not isinstance(cases, int) or isinstance(cases, bool)):
                raise _bad(f"{w}.cases", cases, "an integer")
            rows.append(Row((_str(s, "name", w), _opt_str(s, "mode", w) or NULL,
                             NULL if cases is None else str(cases),
                             ", ".join(_strs(s, "languages", w, required=False)) or NULL,
                             ", ".join(_strs(s, "reference_models", w, required=False)) or NULL)))
        blocks += [Heading(2, "Suites"),
                   Table((Column("suite"), Column("mode"), Column("cases", True), Column("languages"),
                          Column("reference systems")), tuple(rows))]
    return blocks


def _status(results: list[Mapping[str, Any]], gates: list[tuple[str, Mapping[str, Any]]]) -> Paragraph:
    outcomes: dict[str, int] = defaultdict(int)
    for i, r in enumerate(results):
        outcomes[_str(r, "outcome", f"results[{i}]")] += 1
    g = defaultdict(int, {k: sum(1 for s, _ in gates if s == k) for k in ("passed", "FAILED", "not evaluable")})
    gate_text = (f" {g['passed']} passed, {g['FAILED']} failed"
                 + (f", {g['not evaluable']} not evaluable" if g["not evaluable"] else "")
                 + ("." if gates else " (no gates)."))
    n_err = outcomes["error"]
    case_text = (f" {outcomes['passed']} passed, {outcomes['failed']} failed, {n_err} error{'s' * (n_err != 1)}"
                 + (f"; {outcomes['reference']} reference-system results" if outcomes["reference"] else "")
                 + ".")
    return Paragraph((Span("Gates:", strong=True), Span(gate_text), Span(" "),
                      Span("Cases:", strong=True), Span(case_text)))


def _leaderboards(board: list[_Board], suite_meta: Mapping[str, Mapping[str, Any]],
                  suite_names: list[str]) -> list[Block]:
    blocks: list[Block] = []
    by_suite: dict[str, list[_Board]] = defaultdict(list)
    for r in board:
        by_suite[r.suite].append(r)
    for suite in _suite_order(suite_names, set(by_suite)):
        rows = by_suite.get(suite)
        if not rows:
            continue
        present = {k for r in rows for k, v in r.metrics.items() if v is not None}
        metrics = [m for m in MAIN_METRICS if m in present]
        with_errors = any(r.errors for r in rows)
        cols = (Column("rank", True), Column("model"), Column("n", True),
                *((Column("err", True),) if with_errors else ()), Column("score", True),
                *[Column(m, True) for m in metrics])
        blocks.append(Heading(2, f"Leaderboard: {suite}"))
        mode = suite_meta.get(suite, {}).get("mode")
        blocks.append(Paragraph((Span((f"Mode: {mode}. " if isinstance(mode, str) else "")
                                      + "score: the mean of the metric means among "
                                      + ", ".join(SCORE_METRICS) + " that every row of the table has "
                                      "(higher is better); reference systems are marked (ref)."),)))
        for lang in _lang_order({r.lang for r in rows}):
            lrows = sorted((r for r in rows if r.lang == lang), key=lambda r: (r.rank, r.model))
            blocks.append(Heading(3, "all languages" if lang == "all" else f"language {lang}"))
            blocks.append(Table(cols, tuple(
                Row((str(r.rank), r.model + (" (ref)" if r.reference else ""), str(r.n),
                     *((str(r.errors),) if with_errors else ()), fmt(r.score),
                     *[fmt(r.metrics.get(m)) for m in metrics]), "ref" if r.reference else "")
                for r in lrows)))
    return blocks


def _arena(report: Mapping[str, Any], refs: Mapping[str, set[str]], suite_names: list[str]) -> list[Block]:
    arena = _rows(report, "arena", required=False)
    blocks: list[Block] = []
    if arena:
        by: dict[tuple[str, str], list[tuple[int, str, float | None, float | None, float | None]]] = defaultdict(list)
        for i, a in enumerate(arena):
            w = f"arena[{i}]"
            by[(_str(a, "suite", w), _str(a, "lang", w))].append(
                (_int(a, "rank", w), _str(a, "model", w), _num(a, "strength", w), _num(a, "ci_low", w),
                 _num(a, "ci_high", w)))
        blocks += [Heading(2, "Arena (pairwise judge, Bradley-Terry)"),
                   Paragraph((Span("Strength: bootstrap mean of the Bradley-Terry strength (natural log, "
                                   "centred at 0; higher is better), with its 95% interval over tournaments."),))]
        for suite in _suite_order(suite_names, {s for s, _ in by}):
            for lang in _lang_order({la for s, la in by if s == suite}):
                rows = sorted(by[(suite, lang)], key=lambda x: (x[0], x[1]))
                blocks.append(Heading(3, f"{suite}: " + ("all languages" if lang == "all" else f"language {lang}")))
                blocks.append(Table(
                    (Column("rank", True), Column("model"), Column("strength", True), Column("95% CI", True)),
                    tuple(Row((str(rank), model + (" (ref)" if model in refs.get(suite, set()) else ""), fmt(s),
                               f"[{fmt(lo)}, {fmt(hi)}]"), "ref" if model in refs.get(suite, set()) else "")
                          for rank, model, s, lo, hi in rows)))
    judge = report.get("judge")
    if judge:
        if not isinstance(judge, Mapping):
            raise _bad("judge", judge, "an object")
        keys = [k for k in JUDGE_KEYS if k in judge] + sorted(k for k in judge if k not in JUDGE_KEYS)
        blocks += [Heading(2, "Judge reliability"),
                   Table((Column("measure"), Column("value", True)),
                         tuple(Row((k, _fmt_any(judge[k], f"judge.{k}"))) for k in keys))]
    return blocks


def _surrogate(report: Mapping[str, Any]) -> list[Block]:
    blocks: list[Block] = []
    entries = _rows(report, "surrogate", required=False)
    if entries:
        rows = []
        for i, e in enumerate(entries):
            w = f"surrogate[{i}]"
            health = e.get("health")
            if health is not None and not isinstance(health, Mapping):
                raise _bad(f"{w}.health", health, "an object or null")
            figs = [fmt(_num(health, k, f"{w}.health")) if health is not None else NULL for k in HEALTH_KEYS]
            rows.append(Row((_str(e, "suite", w), _str(e, "lang", w), _opt_str(e, "judge", w) or NULL,
                             ", ".join(_strs(e, "features", w, required=False)) or NULL,
                             str(len(_strs(e, "training_models", w, required=False))), *figs,
                             _opt_str(e, "path", w) or NULL)))
        blocks += [Heading(2, "Surrogate judge"),
                   Table((Column("suite"), Column("lang"), Column("judge"), Column("features"),
                          Column("training models", True), *[Column(k, True) for k in HEALTH_KEYS],
                          Column("file")), tuple(rows))]
    scores = _rows(report, "surrogate_scores", required=False)
    if scores:
        srows = []
        for i, s in enumerate(scores):
            w = f"surrogate_scores[{i}]"
            srows.append((_str(s, "suite", w), _str(s, "lang", w), _int(s, "surrogate_rank", w),
                          _str(s, "model", w), _num(s, "surrogate_score", w)))
        srows.sort(key=lambda x: (x[0], x[1] != "all", x[1], x[2], x[3]))
        blocks += [Heading(2 if not entries else 3, "Surrogate scores"),
                   Table((Column("suite"), Column("lang"), Column("surrogate_rank", True), Column("model"),
                          Column("surrogate_score", True)),
                         tuple(Row((su, la, str(rk), mo, fmt(sc))) for su, la, rk, mo, sc in srows))]
    return blocks


def _gates(report: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    out = []
    for i, g in enumerate(_rows(report, "gates")):
        passed = g.get("passed", _MISSING)
        if passed is not None and not isinstance(passed, bool):
            raise _bad(f"gates[{i}].passed", passed, "true, false or null (not evaluable)")
        out.append(({True: "passed", False: "FAILED", None: "not evaluable"}[passed], g))
    return out


_GATE_ROW: dict[str, RowKind] = {"passed": "", "FAILED": "fail", "not evaluable": "na"}


def _gate_blocks(gates: list[tuple[str, Mapping[str, Any]]]) -> list[Block]:
    def row(i: int, status: str, g: Mapping[str, Any]) -> Row:
        w = f"gates[{i}]"
        return Row((status, _str(g, "suite", w), _str(g, "lang", w), _str(g, "model", w), _str(g, "expr", w),
                    fmt(_num(g, "value", w)), str(_int(g, "n", w)), _opt_str(g, "source", w) or NULL),
                   _GATE_ROW[status])

    if not gates:
        return [Heading(2, "Gates"), Paragraph((Span("No gates were evaluated."),))]
    cols = (Column("status"), Column("suite"), Column("lang"), Column("model"), Column("gate"),
            Column("value", True), Column("n", True), Column("source"))
    indexed = list(enumerate(gates))
    bad = [row(i, s, g) for i, (s, g) in indexed if s != "passed"]
    good = [row(i, s, g) for i, (s, g) in indexed if s == "passed"]
    blocks: list[Block] = [Heading(2, "Gates")]
    n_failed = sum(1 for r in bad if r.cells[0] == "FAILED")
    if bad:
        blocks += [Heading(3, "Failed gates" if n_failed == len(bad) else "Failed and not evaluable gates"),
                   Table(cols, tuple(sorted(bad, key=lambda r: r.cells[0] != "FAILED")))]
    blocks.append(Paragraph((Span(f"{len(good)} passed, {n_failed} failed"
                                  + (f", {len(bad) - n_failed} not evaluable"
                                     if len(bad) > n_failed else "")
                                  + f" of {len(gates)} gates."),)))
    if good:
        blocks += [Heading(3, "Passed gates"), Table(cols, tuple(good))]
    return blocks


def _errors(results: list[Mapping[str, Any]]) -> list[Block]:
    rows = []
    for i, r in enumerate(results):
        w = f"results[{i}]"
        if _str(r, "outcome", w) != "error":
            continue
        reason = _opt_str(r, "error", w)
        rows.append(Row((_str(r, "suite", w), _str(r, "lang", w), _str(r, "case_id", w), _str(r, "model", w),
                         reason if reason else "(no reason recorded)"), "error"))
    if not rows:
        return []
    return [Heading(2, f"Errors ({len(rows)})"),
            Paragraph((Span("Cases whose model failed to answer: they have no metric values; the "
                            "leaderboard counts them in its err column."),)),
            Table((Column("suite"), Column("lang"), Column("case"), Column("model"), Column("reason")),
                  tuple(rows))]


def _failures(results: list[Mapping[str, Any]]) -> list[Block]:
    rows = []
    for i, r in enumerate(results):
        w = f"results[{i}]"
        if _str(r, "outcome", w) != "failed":
            continue
        raw = r.get("failures") or []
        reasons = "\n".join(str(x) for x in raw) if isinstance(raw, list) else str(raw)
        rows.append(Row((_str(r, "suite", w), _str(r, "lang", w), _str(r, "case_id", w), _str(r, "model", w),
                         reasons or "(no reason recorded)"), "error"))
    if not rows:
        return []
    return [Heading(2, f"Failed cases ({len(rows)})"),
            Table((Column("suite"), Column("lang"), Column("case"), Column("model"), Column("thresholds missed")),
                  tuple(rows))]


def report_document(report: Mapping[str, Any]) -> Document:
    """The content of the Markdown/HTML report, validated; raises :class:`ReportFormatError` on bad input.

    Order: title, a one-line status (gates and case outcomes), models and suites, per suite the
    "all" leaderboard then one table per language, the arena and judge reliability (when present),
    the surrogate (when present), the gates (failed first, then the summary and the passed ones) and
    the case errors with their reasons.
    """
    if not isinstance(report, Mapping):
        raise ReportFormatError(f"report: found {type(report).__name__}; expected a mapping (the JSON "
                                f"report loaded with json.load); {_FIX}")
    schema = report.get("schema", _MISSING)
    if schema != SCHEMA:
        raise _bad("schema", schema, repr(SCHEMA))
    suites = _rows(report, "suites")
    suite_meta = {_str(s, "name", f"suites[{i}]"): s for i, s in enumerate(suites)}
    suite_names = list(suite_meta)
    refs = {name: set(_strs(s, "reference_models", f"suites[{i}]", required=False))
            for i, (name, s) in enumerate(suite_meta.items())}
    results = _rows(report, "results")
    board = _board_rows(report)
    for r in board:
        if r.reference:
            refs.setdefault(r.suite, set()).add(r.model)
    gates = _gates(report)
    version = report.get("version")
    title = "pytest-mirage report"
    blocks: list[Block] = [Heading(1, title), _status(results, gates)]
    if version is not None:
        blocks.append(Paragraph((Span(f"Schema {SCHEMA}, pytest-mirage {_fmt_any(version, 'version')}."),)))
    blocks += _overview(report, suites)
    blocks += _leaderboards(board, suite_meta, suite_names)
    blocks += _arena(report, refs, suite_names)
    blocks += _surrogate(report)
    blocks += _gate_blocks(gates)
    blocks += _failures(results)
    blocks += _errors(results)
    return Document(title, tuple(blocks))


def write_extra_reports(report: Mapping[str, Any], markdown: Path | None, html: Path | None) -> list[Path]:
    """Write the Markdown and/or HTML report (UTF-8; parent folders are created); returns the paths written.

    Both documents are rendered before anything is written, so a report that cannot be rendered leaves
    no partial file. ``markdown`` may be the file named by ``$GITHUB_STEP_SUMMARY``: it is overwritten,
    not appended to (open it yourself and append :func:`markdown_report` to add to a summary).
    """
    from .html import html_report
    from .markdown import markdown_report

    texts: list[tuple[Path, str]] = []
    if markdown is not None:
        texts.append((Path(markdown), markdown_report(report)))
    if html is not None:
        texts.append((Path(html), html_report(report)))
    for path, text in texts:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return [p for p, _ in texts]
