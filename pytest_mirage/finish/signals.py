"""The session-end step that calibrates every faithfulness signal of a run against the suites'
human faithfulness labels (``labels.csv`` / ``labels.jsonl``, the file the PPI gates read):
per signal x language ROC AUC, precision / recall / F1 at the configured threshold and the
threshold reaching ``--mirage-calibration-precision`` (:mod:`pytest_mirage.stats.signals`).
Pure of pytest."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from .. import defaults
from ..evaluate.context import RunContext
from ..judges.spec import OFFLINE_FAITHFULNESS, resolve_faithfulness
from ..report.statistics import CalibrationSection
from ..results import CaseResult
from ..suites.model import Suite

if TYPE_CHECKING:
    from ..stats.signals import Threshold

# judge metrics that measure faithfulness although their names say otherwise
FAITHFULNESS_JUDGE_METRICS = ("ares_answer_faithfulness",)


def is_faithfulness_signal(name: str) -> bool:
    """``faithfulness``, ``faithfulness_*``, ``support_*`` and ARES answer faithfulness (a
    lower-is-better one, such as ``support_nli_neutral``, is left out by the caller)."""
    return (name == "faithfulness" or name.startswith(("faithfulness_", "support_"))
            or name in FAITHFULNESS_JUDGE_METRICS)


def signals_of(ctx: RunContext, results: Sequence[CaseResult]) -> list[str]:
    """The faithfulness signals the results have a value of: ``faithfulness`` first, then by name."""
    present = {k for r in results for k, v in r.metrics.items() if v is not None}
    names = sorted(n for n in present if is_faithfulness_signal(n) and n in ctx.metrics
                   and ctx.metrics[n].higher_is_better and ctx.metrics[n].scope != "model")
    return sorted(names, key=lambda n: n != "faithfulness")


def default_threshold(ctx: RunContext, suite: Suite, metric: str) -> tuple[float, str]:
    """The threshold a signal is counted at when no case threshold names it, and why."""
    resolved = metric
    if metric == "faithfulness":
        resolved = resolve_faithfulness({m for s in ctx.judge_specs(suite) for m in s.metrics} | {OFFLINE_FAITHFULNESS})
    if resolved == OFFLINE_FAITHFULNESS:
        from ..metrics.offline_judge import load_model

        return load_model().threshold, f"default (the {OFFLINE_FAITHFULNESS} model's)"
    return defaults.SIGNAL_THRESHOLD, "default"


def thresholds_of(ctx: RunContext, suite: Suite, signals: Sequence[str],
                  langs: Sequence[str]) -> dict[tuple[str, str], Threshold]:
    """(signal, lang) -> :class:`~pytest_mirage.stats.signals.Threshold`: the suite's case threshold
    on the signal in that language (``>=`` or ``>``; a language's own before the general one),
    else the default."""
    from ..stats.signals import Threshold

    rules = [r for r in ctx.rules(suite).thresholds if r.op in (">=", ">")]
    out: dict[tuple[str, str], Threshold] = {}
    for m in signals:
        for lang in langs:
            mine = [r for r in rules if r.metric == m and r.applies_to(lang)]
            mine.sort(key=lambda r: r.lang is None)  # the language's own first
            if mine:
                rule = mine[0]
                out[(m, lang)] = Threshold(rule.value, rule.op == ">", f"{rule.expr} ({rule.source})")
            else:
                value, why = default_threshold(ctx, suite, m)
                out[(m, lang)] = Threshold(value, False, why)
    return out


def faithfulness_calibration(ctx: RunContext, results: Sequence[CaseResult],
                             sections: Sequence[CalibrationSection]) -> tuple[list[CalibrationSection], list[str]]:
    """``sections`` (one per suite with labels) with their ``faithfulness`` rows, and problems
    (answers whose faithfulness labels disagree)."""
    from ..stats.labels import load_labels
    from ..stats.signals import calibrate_signals, label_rows

    by_name = {ctx.suite(r.suite_ref).name: ctx.suite(r.suite_ref) for r in results}
    out: list[CalibrationSection] = []
    problems: list[str] = []
    for sec in sections:
        suite = by_name.get(sec.suite)
        mine = [r for r in results if r.suite == sec.suite]
        signals = signals_of(ctx, mine)
        if suite is None or not signals:
            out.append(sec)
            continue
        labels = load_labels(sec.labels, suite=suite.name)  # validated by the calibration step already
        joined = label_rows(mine, labels.labels, suite=suite.name, signals=signals, where=sec.labels)
        problems += [f"human labels of suite {suite.name}: {c}" for c in joined.conflicts]
        langs = sorted({r.lang for r in joined.rows})
        rows = calibrate_signals(joined.rows, suite=suite.name, signals=signals,
                                 thresholds=thresholds_of(ctx, suite, signals, langs),
                                 target_precision=ctx.settings.calibration_precision)
        out.append(replace(sec, faithfulness=rows))
    return out, problems
