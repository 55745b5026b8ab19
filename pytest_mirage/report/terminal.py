"""Terminal output as pure ``lines()`` producers from a :class:`~.model.RunReport`; the plugin only
writes them.

Width: in a terminal the leaderboard fits the terminal's width by leaving out metric columns
(named in a note line), never by cutting names or numbers to "…"; in a CI log (no terminal) it is
as wide as its content (:func:`leaderboard_width`). ``NO_COLOR`` turns every style off. Every
text from a model, a suite or a server is neutralised (:func:`~.sanitize.terminal_safe`,
:func:`~.sanitize.sanitize_name`) and given to rich as plain text, never as markup.
"""

from __future__ import annotations

import io
import os
import textwrap
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from ..aggregate.gates import GateResult
from .format import HEADLINE_METRICS, NULL, SHORT_NAMES, fmt
from .leaderboard import LeaderboardRow
from .model import RunReport
from .sanitize import neutralise_commands, terminal_name, terminal_safe
from .stats_lines import OUTPUT_KEYS, output_mode

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

MIN_WIDTH = 40


def extra_columns(report: RunReport) -> dict[tuple[str, str, str], dict[str, str]]:
    """Arena columns per (suite, lang, model): Bradley-Terry strength and rank, surrogate rank."""
    cols: dict[tuple[str, str, str], dict[str, str]] = defaultdict(dict)
    for a in report.arena:
        cols[(a.suite, a.lang, a.model)]["bt"] = NULL if a.strength is None else f"{a.strength:+.2f}"
        cols[(a.suite, a.lang, a.model)]["bt#"] = str(a.rank)
    for s in report.surrogate_scores:
        cols[(s.suite, s.lang, s.model)]["sur#"] = str(s.rank)
    return dict(cols)


def no_color(environ: Mapping[str, str] | None = None) -> bool:
    """``NO_COLOR`` is set to a non-empty value (https://no-color.org)."""
    env = os.environ if environ is None else environ
    return bool(env.get("NO_COLOR"))


def leaderboard_width(fullwidth: int, *, isatty: bool, environ: Mapping[str, str] | None = None) -> int | None:
    """The width the leaderboard must fit: ``COLUMNS`` when it is set to a number (the user
    asked for it), the terminal's width in a terminal, and None (as wide as the table is) in a CI
    log, whose lines do not wrap and where a reader would rather scroll than lose columns."""
    env = os.environ if environ is None else environ
    columns = env.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return max(MIN_WIDTH, int(columns))
    if isatty:
        return max(MIN_WIDTH, fullwidth)
    return None


def _metrics_of(rows: Sequence[LeaderboardRow], max_metrics: int) -> list[str]:
    present = {k for r in rows for k, v in r.metrics.items() if v is not None}
    return list(dict.fromkeys(m for m in (*HEADLINE_METRICS, *sorted(present)) if m in present))[:max_metrics]


def _table(suite: str, rows: Sequence[LeaderboardRow], metrics: Sequence[str], extra_cols: Sequence[str],
           extra: Mapping[tuple[str, str, str], Mapping[str, str]], *, fold_names: bool,
           marks: Mapping[tuple[str, str, str, str], str] | None = None) -> Table:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(f"pytest-mirage leaderboard — {terminal_name(suite)}"), box=box.SIMPLE_HEAD,
                  title_justify="left", pad_edge=False)
    table.add_column("lang", no_wrap=True, min_width=4)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("model", no_wrap=not fold_names, overflow="fold")
    table.add_column("n", justify="right", no_wrap=True)
    with_errors = any(r.errors for r in rows)
    if with_errors:
        table.add_column("err", justify="right", no_wrap=True, style="red")
    with_nulls = any(r.judge_nulls for r in rows)
    if with_nulls:
        table.add_column("judge nulls", justify="right", no_wrap=True, style="yellow")
    table.add_column("score", justify="right", no_wrap=True)
    for c in extra_cols:
        table.add_column(c, justify="right", no_wrap=True)
    for m in metrics:
        table.add_column(SHORT_NAMES.get(m, m), justify="right", no_wrap=True)
    langs = ["all", *sorted({r.lang for r in rows if r.lang != "all"})]
    for lang in langs:
        lrows = sorted((r for r in rows if r.lang == lang), key=lambda r: (r.rank, r.model))
        for i, r in enumerate(lrows):
            name = terminal_name(r.model) + (" (ref)" if r.reference else "")
            ex = extra.get((r.suite, r.lang, r.model), {})
            err = [str(r.errors)] if with_errors else []
            err += [str(r.judge_nulls)] if with_nulls else []
            cells = [terminal_name(lang) if i == 0 else "", str(r.rank), name, str(r.n), *err, fmt(r.score),
                     *[ex.get(c, NULL) for c in extra_cols],
                     *[fmt(r.metrics.get(m)) + (marks or {}).get((r.suite, r.lang, r.model, m), "") for m in metrics]]
            table.add_row(*(Text(c) for c in cells), style="dim" if r.reference else None,
                          end_section=(i == len(lrows) - 1))
    return table


def _fits(console: Console, width: int, table: Table) -> bool:
    return console.measure(table).maximum <= width


def leaderboard_lines(report: RunReport, width: int | None = None, markup: bool = False, max_metrics: int = 8,
                      *, environ: Mapping[str, str] | None = None) -> list[str]:
    """One table per suite: the overall ("all") block first, then one block per language.

    ``width``: the width to fit (see :func:`leaderboard_width`); metric columns that do not fit
    are left out, from the last, and named in a line under the table; when even the table
    without metrics is wider, long model names wrap. None: the table's natural width. ``markup``:
    ANSI styles (off under ``NO_COLOR``).
    """
    from rich.console import Console

    markup = markup and not no_color(environ)
    extra = extra_columns(report)
    marks = report.baseline_marks()
    by_suite: dict[str, list[LeaderboardRow]] = defaultdict(list)
    for r in report.leaderboard:
        by_suite[r.suite].append(r)
    wide = Console(file=io.StringIO(), width=100_000, force_terminal=False, color_system=None, legacy_windows=False)
    lines: list[str] = []
    for suite, srows in by_suite.items():
        extra_cols: list[str] = []
        for (su, _, _), cols in extra.items():
            if su == suite:
                extra_cols += [c for c in cols if c not in extra_cols]
        metrics = _metrics_of(srows, max_metrics)
        shown = len(metrics)
        fold = False
        if width is not None:
            while shown > 0 and not _fits(wide, width, _table(suite, srows, metrics[:shown], extra_cols, extra,
                                                              fold_names=False, marks=marks)):
                shown -= 1
            fold = shown == 0 and not _fits(wide, width, _table(suite, srows, [], extra_cols, extra,
                                                                fold_names=False))
        table = _table(suite, srows, metrics[:shown], extra_cols, extra, fold_names=fold, marks=marks)
        render_width = width if width is not None else wide.measure(table).maximum
        buf = io.StringIO()
        console = Console(file=buf, width=max(MIN_WIDTH, render_width), force_terminal=markup,
                          color_system="standard" if markup else None, no_color=not markup, highlight=False,
                          legacy_windows=False, emoji=False)
        console.print(table)
        # a folded cell can start a rendered line with '::' even when each name alone does not
        lines += [neutralise_commands(line.rstrip()) for line in buf.getvalue().rstrip("\n").splitlines()]
        for r in sorted((r for r in srows if r.lang == "all" and r.judge_nulls), key=lambda r: (r.rank, r.model)):
            note = terminal_safe(f"judge nulls of {terminal_name(r.model)}: {r.judge_null_text()}")
            lines += textwrap.wrap(note, width=max(MIN_WIDTH, render_width), initial_indent="  ",
                                   subsequent_indent="    ")
        if shown < len(metrics):
            left = metrics[shown:]
            note = (f"({len(left)} metric column{'s' * (len(left) != 1)} left out at width {width}: "
                    f"{', '.join(left)}; see --mirage-report / --mirage-html)")
            lines += textwrap.wrap(note, width=max(MIN_WIDTH, render_width), initial_indent="  ",
                                   subsequent_indent="  ")
    legend = report.baseline_mark_note(marks)
    lines = [neutralise_commands(line) for line in lines]
    if legend and lines:
        lines += textwrap.wrap(legend, width=max(MIN_WIDTH, width or 100), initial_indent="  ", subsequent_indent="  ")
    return lines


def gate_lines(gates: Iterable[GateResult]) -> list[str]:
    gates = list(gates)
    failed = [g for g in gates if g.passed is False]
    unknown = [g for g in gates if g.passed is None]
    lines: list[str] = []
    if gates:
        lines.append(f"mirage gates: {len(gates) - len(failed) - len(unknown)} passed, {len(failed)} failed"
                     + (f", {len(unknown)} not evaluable" if unknown else ""))
    lines += [terminal_safe(f"FAILED gate {g.describe()}") for g in failed]
    lines += [terminal_safe(f"NOT EVALUABLE gate {g.describe()}") for g in unknown]
    return lines


def judge_line(judge: Mapping[str, object]) -> str:
    """The arena judge's reliability figures, then how it asked (``output: JSON schema``, or plain
    text and why), as the metric judges' health lines say it."""
    figures = ", ".join(f"{k} {fmt(v)}" if isinstance(v, float) else f"{k} {v}"
                        for k, v in judge.items() if k not in OUTPUT_KEYS)
    output = output_mode(judge)
    return terminal_safe("mirage judge: " + figures + (f"; output: {output}" if output else ""))


def problem_lines(report: RunReport, extra_fatal: Sequence[str] = ()) -> list[tuple[str, bool]]:
    """The session's problems (``mirage: ...``) and fatal reasons (``mirage ERROR: ...``, with
    ``extra_fatal``, e.g. files that could not be written), neutralised; each with True when it
    is an error (the plugin writes those red)."""
    return ([(terminal_safe(f"mirage: {p}"), False) for p in report.problems]
            + [(terminal_safe(f"mirage ERROR: {p}"), True) for p in (*report.fatal, *extra_fatal)])
