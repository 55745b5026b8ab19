"""The terminal summary of a run: engine counts, suite statistics, leaderboard, gates, statistics
sections, judge, problems and the files written. Every line comes from a pure producer in
:mod:`pytest_mirage.report`; this module only chooses colours and writes them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..evaluate.context import RunContext
    from ..finish.report import Finished
    from ..results import CaseResult
    from ..suites.model import Case


@dataclass(frozen=True, slots=True)
class SummaryInput:
    """What the summary shows (the controller's state at the end of the session)."""

    ctx: RunContext
    finished: Finished | None
    collected: Sequence[tuple[str, Case]]
    results: Sequence[CaseResult]
    notes: Sequence[str]
    errors: Sequence[str]
    annotations: Sequence[str]


def write_summary(terminalreporter: Any, fullwidth: int, data: SummaryInput) -> None:
    from ..report.sanitize import neutralise_commands, terminal_safe
    from ..report.stats_lines import statistics_sections
    from ..report.terminal import (
        gate_lines,
        judge_line,
        leaderboard_lines,
        leaderboard_width,
        problem_lines,
    )

    def write(line: str, **markup: bool) -> None:  # every summary line may quote a model, server or suite
        terminalreporter.write_line(neutralise_commands(line), **markup)

    ctx = data.ctx
    if ctx.called_cacheable_model or ctx.stats.problems:
        from ..engine import cache_file, summary_lines

        path = cache_file(ctx.engine)
        for line in summary_lines(ctx.stats, str(path) if path else None):
            write(line)
    if ctx.stats.judge_work:
        from ..engine import judge_work_lines

        for line in judge_work_lines(ctx.stats):
            write(line)
    if data.collected:
        from ..finish.collected import run_stats_lines

        lines = run_stats_lines(ctx, data.collected, list(data.results))
        if lines:
            terminalreporter.section("pytest-mirage suite statistics", sep="=")
            for line in lines:
                write(line, yellow=line.lstrip().startswith("WARNING"))
    done = data.finished
    if done is None:
        for line in data.notes:
            write(terminal_safe(f"mirage: {line}"), yellow=True)
        for line in data.errors:
            write(terminal_safe(f"mirage ERROR: {line}"), red=True, bold=True)
        return
    rep = done.report
    if ctx.settings.leaderboard and rep.leaderboard:
        terminalreporter.section("pytest-mirage leaderboard", sep="=")
        width = leaderboard_width(fullwidth, isatty=terminalreporter.isatty)
        for line in leaderboard_lines(rep, width=width, markup=terminalreporter.hasmarkup):
            write(line)
    lines = gate_lines(rep.gates)
    if lines:
        terminalreporter.section("pytest-mirage gates", sep="-")
        for line in lines:
            failed = line.startswith("FAILED")
            write(line, red=failed, bold=failed)
    for title, section in statistics_sections(rep):
        terminalreporter.section(title, sep="-")
        for line in section:
            bad = line.startswith("FAILED")
            write(line, red=bad, bold=bad)
    if rep.judge:
        write(judge_line(rep.judge))
    for path in done.saved_surrogates:
        write(f"mirage surrogate saved: {path}")
    for line, err in problem_lines(rep, [*done.write_problems, *data.errors]):
        write(line, red=err, bold=err, yellow=not err)
    for path in done.written:
        write(f"mirage report: {path}")
    if done.record_path:
        write(f"mirage record: {done.record_path}")
    for line in data.annotations:  # workflow commands: at the start of a line, as they are
        terminalreporter.write(line + "\n")
