"""Terminal output as pure ``lines()`` producers; plugin.py only writes them."""

from __future__ import annotations

import io
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from .aggregate import GateResult, LeaderboardRow

# the columns shown first (the JSON report has every metric)
COLUMNS = ("language_match", "citation_recall", "citation_map", "faithfulness", "char3_recall", "rouge_l",
           "hit_at_k", "mrr_at_k", "file_hit_at_k")
# compact column headers
SHORT = {"language_match": "lang", "citation_recall": "cite_R", "citation_map": "cite_MAP",
         "citation_precision": "cite_P", "invalid_citations": "cite_bad", "char3_recall": "chr3_R",
         "support_lexical": "support", "english_share": "en_share", "file_hit_at_k": "file_hit"}


def _fmt(v: float | None) -> str:
    return "–" if v is None else f"{v:.3f}"


def leaderboard_lines(rows: Sequence[LeaderboardRow], width: int = 120, markup: bool = False,
                      max_metrics: int = 8,
                      extra: Mapping[tuple[str, str, str], Mapping[str, str]] | None = None) -> list[str]:
    """One table per suite: the overall ("all") block first, then one block per language.

    ``extra`` adds columns per (suite, lang, model), e.g. the Bradley-Terry strength and rank and the
    surrogate rank, shown next to the default score.
    """
    extra = extra or {}
    extra_cols: list[str] = []
    for cols in extra.values():
        for c in cols:
            if c not in extra_cols:
                extra_cols.append(c)
    from rich import box
    from rich.console import Console
    from rich.table import Table

    by_suite: dict[str, list[LeaderboardRow]] = defaultdict(list)
    for r in rows:
        by_suite[r.suite].append(r)
    buf = io.StringIO()
    console = Console(file=buf, width=max(width, 160), force_terminal=markup, color_system="standard" if markup else None,
                      highlight=False, legacy_windows=False)
    for suite, srows in by_suite.items():
        present = {k for r in srows for k, v in r.metrics.items() if v is not None}
        metrics = [m for m in (*COLUMNS, *sorted(present)) if m in present]
        metrics = list(dict.fromkeys(metrics))[:max_metrics]
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
            table.add_column(SHORT.get(m, m), justify="right", no_wrap=True)
        for lang in langs:
            lrows = sorted((r for r in srows if r.lang == lang), key=lambda r: r.rank)
            for i, r in enumerate(lrows):
                name = r.model + (" (ref)" if r.reference else "")
                ex = extra.get((r.suite, r.lang, r.model), {})
                err = [str(r.errors)] if with_errors else []
                table.add_row(lang if i == 0 else "", str(r.rank), name, str(r.n), *err, _fmt(r.score),
                              *[ex.get(c, "–") for c in extra_cols],
                              *[_fmt(r.metrics.get(m)) for m in metrics],
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
    for g in failed:
        lines.append(f"FAILED gate {g.describe()}")
    for g in unknown:
        lines.append(f"NOT EVALUABLE gate {g.describe()}")
    return lines
