"""Terminal output as pure ``lines()`` producers from a :class:`~.model.RunReport`; the plugin only
writes them."""

from __future__ import annotations

import io
from collections import defaultdict
from collections.abc import Iterable, Mapping

from ..rules import GateResult
from .format import HEADLINE_METRICS, NULL, SHORT_NAMES, fmt
from .leaderboard import LeaderboardRow
from .model import RunReport


def extra_columns(report: RunReport) -> dict[tuple[str, str, str], dict[str, str]]:
    """Arena columns per (suite, lang, model): Bradley-Terry strength and rank, surrogate rank."""
    cols: dict[tuple[str, str, str], dict[str, str]] = defaultdict(dict)
    for a in report.arena:
        cols[(a.suite, a.lang, a.model)]["bt"] = NULL if a.strength is None else f"{a.strength:+.2f}"
        cols[(a.suite, a.lang, a.model)]["bt#"] = str(a.rank)
    for s in report.surrogate_scores:
        cols[(s.suite, s.lang, s.model)]["sur#"] = str(s.rank)
    return dict(cols)


def leaderboard_lines(report: RunReport, width: int = 120, markup: bool = False, max_metrics: int = 8) -> list[str]:
    """One table per suite: the overall ("all") block first, then one block per language."""
    rows = report.leaderboard
    extra = extra_columns(report)
    extra_cols: list[str] = []
    for cols in extra.values():
        extra_cols += [c for c in cols if c not in extra_cols]
    from rich import box
    from rich.console import Console
    from rich.table import Table

    by_suite: dict[str, list[LeaderboardRow]] = defaultdict(list)
    for r in rows:
        by_suite[r.suite].append(r)
    buf = io.StringIO()
    console = Console(file=buf, width=max(width, 160), force_terminal=markup,
                      color_system="standard" if markup else None, highlight=False, legacy_windows=False)
    for suite, srows in by_suite.items():
        present = {k for r in srows for k, v in r.metrics.items() if v is not None}
        metrics = list(dict.fromkeys(m for m in (*HEADLINE_METRICS, *sorted(present)) if m in present))[:max_metrics]
        langs = ["all", *sorted({r.lang for r in srows if r.lang != "all"})]
        table = Table(title=f"pytest-mirage leaderboard — {suite}", box=box.SIMPLE_HEAD, title_justify="left",
                      pad_edge=False)
        table.add_column("lang", no_wrap=True, min_width=4)
        table.add_column("#", justify="right", no_wrap=True)
        table.add_column("model", no_wrap=True)
        table.add_column("n", justify="right", no_wrap=True)
        with_errors = any(r.errors for r in srows)
        if with_errors:
            table.add_column("err", justify="right", no_wrap=True, style="red")
        table.add_column("score", justify="right", no_wrap=True)
        for c in extra_cols:
            table.add_column(c, justify="right", no_wrap=True)
        for m in metrics:
            table.add_column(SHORT_NAMES.get(m, m), justify="right", no_wrap=True)
        for lang in langs:
            lrows = sorted((r for r in srows if r.lang == lang), key=lambda r: r.rank)
            for i, r in enumerate(lrows):
                name = r.model + (" (ref)" if r.reference else "")
                ex = extra.get((r.suite, r.lang, r.model), {})
                err = [str(r.errors)] if with_errors else []
                table.add_row(lang if i == 0 else "", str(r.rank), name, str(r.n), *err, fmt(r.score),
                              *[ex.get(c, NULL) for c in extra_cols], *[fmt(r.metrics.get(m)) for m in metrics],
                              style="dim" if r.reference else None, end_section=(i == len(lrows) - 1))
        console.print(table)
    return [line.rstrip() for line in buf.getvalue().rstrip("\n").splitlines()]


def gate_lines(gates: Iterable[GateResult]) -> list[str]:
    gates = list(gates)
    failed = [g for g in gates if g.passed is False]
    unknown = [g for g in gates if g.passed is None]
    lines: list[str] = []
    if gates:
        lines.append(f"mirage gates: {len(gates) - len(failed) - len(unknown)} passed, {len(failed)} failed"
                     + (f", {len(unknown)} not evaluable" if unknown else ""))
    lines += [f"FAILED gate {g.describe()}" for g in failed]
    lines += [f"NOT EVALUABLE gate {g.describe()}" for g in unknown]
    return lines


def judge_line(judge: Mapping[str, object]) -> str:
    return "mirage judge: " + ", ".join(f"{k} {fmt(v)}" if isinstance(v, float) else f"{k} {v}"
                                        for k, v in judge.items())
