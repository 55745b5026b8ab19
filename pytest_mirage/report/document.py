"""What the Markdown and HTML reports show, built once from a :class:`~.model.RunReport`.

:func:`report_document` turns the report into a :class:`Document`: headings, paragraphs, bullet lists
and tables of *plain-text* cells. The writers (:mod:`.markdown`, :mod:`.html`) only escape and lay
out those blocks, so both formats show the same content (the HTML page adds plots and the per-case
view around them). Numbers use :func:`.format.fmt` (3 decimals, half up); a null value is ``–``
(never 0). Identifiers (suite, model, case ids) pass through
:func:`~.sanitize.sanitize_name` here; the writers pass every text through
:func:`~.sanitize.sanitize` when they escape it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from ..aggregate.gates import GateResult
from .blocks import (
    Block,
    BulletList,
    Column,
    Document,
    Heading,
    Paragraph,
    Row,
    RowKind,
    Span,
    Table,
    fmt_any,
    row_tags,
)
from .format import HEADLINE_METRICS, NULL, fmt
from .leaderboard import SCORE_METRICS, LeaderboardRow
from .model import SCHEMA, CaseDetail, RunReport
from .sanitize import one_line, sanitize_name
from .stats_document import statistics_blocks
from .stats_lines import OUTPUT_KEYS, output_mode

# the judge reliability figures in the order shown; other keys follow, sorted
JUDGE_KEYS: tuple[str, ...] = (
    "judgments", "decided", "swap_consistency", "swap_pairs", "swap_consistent", "tie_rate", "ties",
    "position_a_rate", "parse_failures", "parse_failure_rate", "retried", "errors",
)
HEALTH_KEYS: tuple[str, ...] = ("tau_mean", "tau_cv", "r2_mean", "r2_cv")


def _lang_order(langs: set[str]) -> list[str]:
    return (["all"] if "all" in langs else []) + sorted(langs - {"all"})


def _suite_order(names: Sequence[str], *groups: set[str]) -> list[str]:
    rest = set().union(*groups) - set(names)
    return list(dict.fromkeys([*names, *sorted(rest)]))


def _overview(report: RunReport) -> list[Block]:
    n = sanitize_name
    blocks: list[Block] = [Heading(2, "Models under test"),
                           BulletList(tuple(n(m) for m in report.models)) if report.models
                           else Paragraph((Span("none"),))]
    if report.suites:
        rows = tuple(Row((n(s.name), s.mode or NULL, NULL if s.cases is None else str(s.cases),
                          ", ".join(n(x) for x in s.languages) or NULL,
                          ", ".join(n(x) for x in s.reference_models) or NULL, n(s.scoring or "default")),
                         tags=row_tags(s.name))
                     for s in report.suites)
        blocks += [Heading(2, "Suites"),
                   Table((Column("suite"), Column("mode"), Column("cases", True), Column("languages"),
                          Column("reference systems"), Column("scoring")), rows)]
    return blocks


def _gate_status(g: GateResult) -> str:
    return {True: "passed", False: "FAILED", None: "not evaluable"}[g.passed]


def status_paragraph(report: RunReport) -> Paragraph:
    """Gates and case outcomes, counted, in one paragraph."""
    outcomes: dict[str, int] = defaultdict(int)
    for r in report.results:
        outcomes[r.outcome] += 1
    g: dict[str, int] = defaultdict(int)
    for gate in report.gates:
        g[_gate_status(gate)] += 1
    gate_text = (f" {g['passed']} passed, {g['FAILED']} failed"
                 + (f", {g['not evaluable']} not evaluable" if g["not evaluable"] else "")
                 + ("." if report.gates else " (no gates)."))
    n_err = outcomes["error"]
    case_text = (f" {outcomes['passed']} passed, {outcomes['failed']} failed, {n_err} error{'s' * (n_err != 1)}"
                 + (f"; {outcomes['reference']} reference-system results" if outcomes["reference"] else "")
                 + ".")
    return Paragraph((Span("Gates:", strong=True), Span(gate_text), Span(" "),
                      Span("Cases:", strong=True), Span(case_text)))


def problem_blocks(report: RunReport) -> list[Block]:
    """Why the run failed, its problems, and the suites that failed to load."""
    blocks: list[Block] = []
    if report.fatal:
        blocks += [Heading(2, "Why the run failed"), BulletList(report.fatal)]
    if report.problems:
        blocks += [Heading(2, "Problems"), BulletList(report.problems)]
    if report.collection_errors:
        blocks += [Heading(2, f"Suites that failed to load ({len(report.collection_errors)})"),
                   Table((Column("suite"), Column("error")),
                         tuple(Row((sanitize_name(e.nodeid), e.message), "error")
                               for e in report.collection_errors))]
    return blocks


def _leaderboards(report: RunReport) -> list[Block]:
    blocks: list[Block] = []
    by_suite: dict[str, list[LeaderboardRow]] = defaultdict(list)
    for r in report.leaderboard:
        by_suite[r.suite].append(r)
    modes = {s.name: s.mode for s in report.suites}
    marks = report.baseline_marks()
    legend = report.baseline_mark_note(marks)
    for suite in _suite_order([s.name for s in report.suites], set(by_suite)):
        rows = by_suite.get(suite)
        if not rows:
            continue
        present = {k for r in rows for k, v in r.metrics.items() if v is not None}
        metrics = [m for m in HEADLINE_METRICS if m in present]
        with_errors = any(r.errors for r in rows)
        with_nulls = any(r.judge_nulls for r in rows)
        cols = (Column("rank", True), Column("model"), Column("n", True),
                *((Column("err", True),) if with_errors else ()),
                *((Column("judge nulls", True),) if with_nulls else ()), Column("score", True),
                *[Column(m, True) for m in metrics])
        blocks.append(Heading(2, f"Leaderboard: {sanitize_name(suite)}"))
        mode = modes.get(suite)
        blocks.append(Paragraph((Span((f"Mode: {mode}. " if mode else "")
                                      + "score: the mean of the metric means among "
                                      + ", ".join(SCORE_METRICS) + " that every row of the table has "
                                      "(higher is better); reference systems are marked (ref)."
                                      + (f" {legend}." if legend else "")),)))
        for lang in _lang_order({r.lang for r in rows}):
            lrows = sorted((r for r in rows if r.lang == lang), key=lambda r: (r.rank, r.model))
            blocks.append(Heading(3, "all languages" if lang == "all" else f"language {sanitize_name(lang)}"))
            blocks.append(Table(cols, tuple(
                Row((str(r.rank), sanitize_name(r.model) + (" (ref)" if r.reference else ""), str(r.n),
                     *((str(r.errors),) if with_errors else ()),
                     *((str(r.judge_nulls),) if with_nulls else ()), fmt(r.score),
                     *[fmt(r.metrics.get(m)) + marks.get((r.suite, r.lang, r.model, m), "") for m in metrics]),
                    "ref" if r.reference else "",
                    row_tags(r.suite, r.lang, r.model))
                for r in lrows)))
            if lang == "all" and (nulled := [r for r in lrows if r.judge_nulls]):
                blocks.append(BulletList(tuple(f"judge nulls of {sanitize_name(r.model)}: {r.judge_null_text()}"
                                               for r in nulled)))
    return blocks


def _arena(report: RunReport) -> list[Block]:
    blocks: list[Block] = []
    refs = report.reference_models
    if report.arena:
        by: dict[tuple[str, str], list[Any]] = defaultdict(list)
        for a in report.arena:
            by[(a.suite, a.lang)].append(a)
        blocks += [Heading(2, "Arena (pairwise judge, Bradley-Terry)"),
                   Paragraph((Span("Strength: bootstrap mean of the Bradley-Terry strength (natural log, "
                                   "centred at 0; higher is better), with its 95% interval over tournaments."),))]
        for suite in _suite_order([s.name for s in report.suites], {s for s, _ in by}):
            for lang in _lang_order({la for s, la in by if s == suite}):
                rows = sorted(by[(suite, lang)], key=lambda a: (a.rank, a.model))
                ref = refs.get(suite, set())
                blocks.append(Heading(3, f"{sanitize_name(suite)}: "
                                      + ("all languages" if lang == "all" else f"language {sanitize_name(lang)}")))
                blocks.append(Table(
                    (Column("rank", True), Column("model"), Column("strength", True), Column("95% CI", True)),
                    tuple(Row((str(a.rank), sanitize_name(a.model) + (" (ref)" if a.model in ref else ""),
                               fmt(a.strength), f"[{fmt(a.ci_low)}, {fmt(a.ci_high)}]"),
                              "ref" if a.model in ref else "", row_tags(a.suite, a.lang, a.model))
                          for a in rows)))
    if report.judge:
        keys = [k for k in JUDGE_KEYS if k in report.judge] + sorted(k for k in report.judge
                                                                     if k not in JUDGE_KEYS and k not in OUTPUT_KEYS)
        rows = [Row((sanitize_name(k), _judge_value(report.judge[k]))) for k in keys]
        output = output_mode(report.judge)
        if output:  # how the judge asked, one row as in the metric judges' health table
            rows.append(Row(("output", one_line(output, 300))))
        blocks += [Heading(2, "Judge reliability"), Table((Column("measure"), Column("value", True)), tuple(rows))]
    return blocks


def _judge_value(v: Any) -> str:
    """A judge reliability figure; a per-model count (``undecided_by_model``) as ``model n, ...``."""
    if isinstance(v, Mapping):
        return ", ".join(f"{sanitize_name(str(k))} {fmt_any(x)}" for k, x in v.items())
    return fmt_any(v)


def _surrogate(report: RunReport) -> list[Block]:
    blocks: list[Block] = []
    if report.surrogates:
        rows = []
        for e in report.surrogates:
            figs = [fmt_any(e.health.get(k)) if e.health is not None else NULL for k in HEALTH_KEYS]
            rows.append(Row((sanitize_name(e.suite), sanitize_name(e.lang), sanitize_name(e.judge or NULL),
                             ", ".join(e.features) or NULL, str(len(e.training_models)), *figs,
                             sanitize_name(e.path or NULL)), tags=row_tags(e.suite, e.lang)))
        blocks += [Heading(2, "Surrogate judge"),
                   Table((Column("suite"), Column("lang"), Column("judge"), Column("features"),
                          Column("training models", True), *[Column(k, True) for k in HEALTH_KEYS],
                          Column("file")), tuple(rows))]
    if report.surrogate_scores:
        srows = sorted(report.surrogate_scores, key=lambda s: (s.suite, s.lang != "all", s.lang, s.rank, s.model))
        blocks += [Heading(2 if not report.surrogates else 3, "Surrogate scores"),
                   Table((Column("suite"), Column("lang"), Column("surrogate_rank", True), Column("model"),
                          Column("surrogate_score", True)),
                         tuple(Row((sanitize_name(s.suite), sanitize_name(s.lang), str(s.rank),
                                    sanitize_name(s.model), fmt(s.score)), tags=row_tags(s.suite, s.lang, s.model))
                               for s in srows))]
    return blocks


_GATE_ROW: dict[str, RowKind] = {"passed": "", "FAILED": "fail", "not evaluable": "na"}


GATE_COLUMNS = (Column("status"), Column("suite"), Column("lang"), Column("model"), Column("gate"),
                Column("value", True), Column("n", True), Column("source"))


def gate_row(g: GateResult) -> Row:
    n = sanitize_name
    status = _gate_status(g)
    return Row((status, n(g.suite), n(g.lang), n(g.model), g.expr, fmt(g.value), str(g.n), g.source or NULL),
               _GATE_ROW[status], row_tags(g.suite, g.lang, g.model))


def _gate_blocks(gates: Sequence[GateResult]) -> list[Block]:
    row = gate_row
    if not gates:
        return [Heading(2, "Gates"), Paragraph((Span("No gates were evaluated."),))]
    cols = GATE_COLUMNS
    bad = [row(g) for g in gates if g.passed is not True]
    good = [row(g) for g in gates if g.passed is True]
    blocks: list[Block] = [Heading(2, "Gates")]
    n_failed = sum(1 for r in bad if r.cells[0] == "FAILED")
    if bad:
        blocks += [Heading(3, "Failed gates" if n_failed == len(bad) else "Failed and not evaluable gates"),
                   Table(cols, tuple(sorted(bad, key=lambda r: r.cells[0] != "FAILED")))]
    blocks.append(Paragraph((Span(f"{len(good)} passed, {n_failed} failed"
                                  + (f", {len(bad) - n_failed} not evaluable" if len(bad) > n_failed else "")
                                  + f" of {len(gates)} gates."),)))
    if good:
        blocks += [Heading(3, "Passed gates"), Table(cols, tuple(good))]
    return blocks


ANSWER_EXCERPT = 240  # characters of the answer in the failed-cases table


def case_details(report: RunReport) -> dict[tuple[str, str, str], CaseDetail]:
    """(suite, case id, model) -> the per-case view of that failed or errored case."""
    return {(c.suite, c.case_id, c.model): c for c in report.cases}


def _answer_cell(detail: CaseDetail | None, chars: int = ANSWER_EXCERPT) -> str:
    if detail is None:
        return NULL
    if detail.answer is None:
        return "(no answer)"
    return one_line(detail.answer, chars) or "(empty answer)"


FAILURE_COLUMNS = (Column("suite"), Column("lang"), Column("case"), Column("model"), Column("source"),
                   Column("thresholds missed"), Column("answer (excerpt)"))


def failure_rows(report: RunReport, answer_chars: int = ANSWER_EXCERPT) -> list[Row]:
    """One row per failed case: where it is, the thresholds it missed, an excerpt of the answer."""
    details = case_details(report)
    n = sanitize_name
    rows = []
    for r in report.results:
        if r.outcome != "failed":
            continue
        d = details.get((r.suite, r.case_id, r.model))
        rows.append(Row((n(r.suite), n(r.lang), n(r.case_id), n(r.model), n(d.source) if d and d.source else NULL,
                         "\n".join(r.failures) or "(no reason recorded)", _answer_cell(d, answer_chars)), "error",
                        row_tags(r.suite, r.lang, r.model)))
    return rows


def _failures(report: RunReport) -> list[Block]:
    rows = failure_rows(report)
    if not rows:
        return []
    return [Heading(2, f"Failed cases ({len(rows)})"), Table(FAILURE_COLUMNS, tuple(rows))]


ERROR_COLUMNS = (Column("suite"), Column("lang"), Column("case"), Column("model"), Column("reason"))


def error_rows(report: RunReport) -> list[Row]:
    """One row per case whose model failed to answer, with the reason."""
    n = sanitize_name
    return [Row((n(r.suite), n(r.lang), n(r.case_id), n(r.model), r.error or "(no reason recorded)"), "error",
                row_tags(r.suite, r.lang, r.model))
            for r in report.results if r.outcome == "error"]


def _errors(report: RunReport) -> list[Block]:
    rows = error_rows(report)
    if not rows:
        return []
    return [Heading(2, f"Errors ({len(rows)})"),
            Paragraph((Span("Cases whose model failed to answer: they have no metric values; the "
                            "leaderboard counts them in its err column."),)),
            Table(ERROR_COLUMNS, tuple(rows))]


def report_document(report: RunReport) -> Document:
    """The content of the Markdown/HTML report.

    Order: title, a one-line status (gates and case outcomes), why the run failed and its problems,
    models and suites, per suite the "all" leaderboard then one table per language, the arena and
    judge reliability (when present), the surrogate (when present), the gates (failed first, then
    the summary and the passed ones), the failed cases and the case errors with their reasons.
    """
    title = "pytest-mirage report"
    head: list[Block] = [Heading(1, title), status_paragraph(report)]
    if report.version:
        head.append(Paragraph((Span(f"Schema {SCHEMA}, pytest-mirage {sanitize_name(report.version)}."),)))
    sections: list[tuple[str, tuple[Block, ...]]] = [
        ("status", tuple(head)),
        ("problems", tuple(problem_blocks(report))),
        ("overview", tuple(_overview(report))),
        ("leaderboards", tuple(_leaderboards(report))),
        ("arena", tuple(_arena(report))),
        ("surrogate", tuple(_surrogate(report))),
        ("gates", tuple(_gate_blocks(report.gates))),
        ("statistics", tuple(statistics_blocks(report))),
        ("failures", tuple(_failures(report))),
        ("errors", tuple(_errors(report))),
    ]
    return Document(title, tuple(b for _, blocks in sections for b in blocks), tuple(sections))
