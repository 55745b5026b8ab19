"""Markdown/HTML blocks of the statistics a run computed (sample, baseline comparison, regression
gates, head-to-head, repeated samples, judge calibration) and of the metric judges' health.

They read the typed sections of :attr:`RunReport.statistics` (:mod:`pytest_mirage.report.statistics`,
built by :mod:`pytest_mirage.finish.report` from :mod:`pytest_mirage.stats`) and
:attr:`RunReport.judge_health`, and format numbers with :mod:`pytest_mirage.report.format`, as the
terminal sections do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .blocks import (
    Block,
    BulletList,
    Column,
    Heading,
    Paragraph,
    Row,
    RowKind,
    Span,
    Table,
    row_tags,
)
from .format import HEADLINE_METRICS, NULL, bounds, estimate, p_value, signed, stat
from .model import RunReport
from .sanitize import one_line, sanitize_name
from .stats_lines import output_mode, precision_threshold, signal_threshold

if TYPE_CHECKING:
    from ..aggregate.regression import RegressionGateResult
    from ..stats.repeats import RepeatSummary
    from ..stats.signals import SignalCalibration
    from .statistics import BaselineSection, CalibrationSection, HeadToHeadRow, SampleSection


def _sample(sample: SampleSection) -> list[Block]:
    return [Heading(2, "Sample"), Paragraph((Span(f"This run answered a seeded subset: {sample.description}."),))]


def _baseline(b: BaselineSection) -> list[Block]:
    rows = [r for r in b.rows if r.stat == "mean" and r.metric in HEADLINE_METRICS]
    rows.sort(key=lambda r: (r.suite, r.lang != "all", r.lang, r.model, HEADLINE_METRICS.index(r.metric)))
    blocks: list[Block] = [
        Heading(2, "Baseline comparison"),
        Paragraph((Span(f"Against {b.path}: per case paired differences (this run - baseline), "
                        f"seeded paired-bootstrap 95% interval, paired {b.test} test p-value "
                        f"(significant at alpha {b.alpha}: marked *; unadjusted)."),)),
        Table((Column("suite"), Column("lang"), Column("model"), Column("baseline model"), Column("metric"),
               Column("n", True), Column("baseline", True), Column("this run", True), Column("delta", True),
               Column("95% CI", True), Column("p", True)),
              tuple(Row((r.suite, r.lang, sanitize_name(r.model), sanitize_name(r.baseline_model),
                         r.metric, str(r.n), stat(r.baseline), stat(r.candidate),
                         signed(r.delta) + ("*" if r.significant else ""),
                         bounds(r.ci_low, r.ci_high, sign=True), p_value(r.p_value)),
                        "fail" if r.significant and (r.delta or 0) < 0 else "",
                        row_tags(r.suite, r.lang, r.model)) for r in rows)),
    ]
    changes = b.changes
    if changes:
        blocks += [Heading(3, f"Cases not in both runs ({len(changes)})"),
                   Table((Column("change"), Column("suite"), Column("case"), Column("lang"), Column("model")),
                         tuple(Row((c.change, c.suite, sanitize_name(c.case_id), c.lang,
                                    sanitize_name(c.model)), tags=row_tags(c.suite, c.lang, c.model))
                               for c in changes))]
    for models, what in ((b.models_only_in_baseline, "only in the baseline"),
                         (b.models_only_in_candidate, "not in the baseline")):
        if models:
            blocks.append(Paragraph((Span(f"Models {what}: {', '.join(sanitize_name(m) for m in models)}."),)))
    return blocks


_GATE_STATUS: dict[bool | None, tuple[str, RowKind]] = {True: ("FAILED", "fail"), False: ("passed", ""),
                                                         None: ("not evaluable", "na")}


def _regressions(gates: Sequence[RegressionGateResult]) -> list[Block]:
    rows = tuple(Row((_GATE_STATUS[g.failed][0], g.suite, g.lang, sanitize_name(g.model),
                      sanitize_name(g.baseline_model), g.expr, str(g.n), signed(g.worsening),
                      bounds(g.ci_low, g.ci_high, sign=True), p_value(g.p_adjusted), g.note or g.source),
                     _GATE_STATUS[g.failed][1],
                     row_tags(g.suite, g.lang, g.model))
                 for g in sorted(gates, key=lambda g: (g.failed is not True, g.suite, g.lang)))
    return [Heading(2, "Regression gates"),
            Paragraph((Span("A regression gate fails only when the drop beyond the allowed change is significant "
                            "(one-sided paired test, Holm-adjusted over all regression gates of the run)."),)),
            Table((Column("status"), Column("suite"), Column("lang"), Column("model"), Column("baseline model"),
                   Column("gate"), Column("n", True), Column("worse by", True), Column("95% CI", True),
                   Column("Holm p", True), Column("note")), rows)]


def _head_to_head(rows: Sequence[HeadToHeadRow]) -> list[Block]:
    return [Heading(2, "Head-to-head"),
            Paragraph((Span("Per case wins / ties / losses of model A against model B, two-sided sign test, "
                            "95% Wilson interval of A's win rate among decided cases."),)),
            Table((Column("suite"), Column("metric"), Column("model A"), Column("model B"), Column("wins", True),
                   Column("ties", True), Column("losses", True), Column("p", True), Column("win rate", True),
                   Column("95% CI", True)),
                  tuple(Row((r.suite, h.metric, sanitize_name(h.model_a), sanitize_name(h.model_b),
                             str(h.wins), str(h.ties), str(h.losses), p_value(h.p_value), stat(h.win_rate.estimate),
                             bounds(h.win_rate.low, h.win_rate.high)),
                            tags=row_tags(r.suite)) for r in rows for h in (r.comparison,)))]


def _repeats(rows: Sequence[RepeatSummary]) -> list[Block]:
    return [Heading(2, "Repeated samples"),
            Paragraph((Span("Every case answered several times: pass rate over all samples (bootstrap clustered by "
                            "case), pass^N = share of cases whose every repeat passed, flaky = cases whose repeats "
                            "fall on both sides of the threshold."),)),
            Table((Column("suite"), Column("lang"), Column("model"), Column("metric"), Column("cases", True),
                   Column("samples", True), Column("pass rate", True), Column("pass^N", True), Column("flaky")),
                  tuple(Row((r.suite, r.lang, sanitize_name(r.model), r.metric, str(r.cases), str(r.samples),
                             estimate(r.pass_rate.estimate, r.pass_rate.low, r.pass_rate.high),
                             estimate(r.all_pass.estimate, r.all_pass.low, r.all_pass.high),
                             ", ".join(sanitize_name(c) for c in r.flaky) or NULL),
                            "fail" if r.flaky else "", row_tags(r.suite, r.lang, r.model))
                        for r in rows))]


def _calibration(sections: Sequence[CalibrationSection]) -> list[Block]:
    blocks: list[Block] = [Heading(2, "Judge calibration against human labels")]
    for sec in sections:
        cal = sec.calibration
        blocks.append(Heading(3, f"{sec.suite} ({sec.labels})"))
        if cal.agreements:
            blocks.append(Table((Column("metric"), Column("labelled rows", True), Column("accuracy", True),
                                 Column("ROC AUC", True), Column("Cohen's kappa", True), Column("ECE", True)),
                                tuple(Row((a.metric, str(ag.n), stat(ag.accuracy), stat(ag.roc_auc), stat(ag.kappa),
                                           stat(ag.ece)))
                                      for a in cal.agreements for ag in (a.agreement,))))
        if cal.groups:
            rows = []
            for g in cal.groups:
                p = g.ppi
                if p is None:  # fewer than 2 usable labels: the note says so
                    rows.append(Row((sanitize_name(g.model), g.metric, NULL, NULL, NULL, g.note),
                                    "na", row_tags(sec.suite, None, g.model)))
                else:
                    rows.append(Row((sanitize_name(g.model), g.metric, stat(p.estimate),
                                     bounds(p.interval.low, p.interval.high), stat(p.judge_mean),
                                     f"{p.n_all} judged, {p.n_labelled} labelled"), "",
                                    row_tags(sec.suite, None, g.model)))
            blocks.append(Table((Column("model"), Column("metric"), Column("PPI mean", True), Column("95% CI", True),
                                 Column("judge mean", True), Column("cases")), tuple(rows)))
        if sec.faithfulness:
            blocks += _faithfulness(sec.suite, sec.faithfulness)
        if cal.unmatched:
            blocks.append(BulletList(tuple(f"{u.where}: {u.reason}" for u in cal.unmatched[:50])))
    return blocks


def _faithfulness(suite: str, rows: Sequence[SignalCalibration]) -> list[Block]:
    target = stat(rows[0].target_precision)
    return [
        Paragraph((Span("Faithfulness signals against the answers' faithfulness labels (label 1 = faithful). "
                        "ROC AUC: faithful answers as positives. Precision, recall and F1 are those of flagging "
                        "unfaithful answers: an answer is flagged when its score fails the threshold (the case "
                        f"threshold on the signal, else its default). Last column: the threshold that flags with "
                        f"precision at least {target} and the highest recall (docs/judges.md, \"Calibrating "
                        "against your labels\")."),)),
        Table((Column("signal"), Column("lang"), Column("labelled", True), Column("unfaithful", True),
               Column("null", True), Column("ROC AUC", True), Column("threshold"), Column("flagged", True),
               Column("precision", True), Column("recall", True), Column("F1", True),
               Column(f"threshold for precision {target}")),
              tuple(Row((r.metric, r.lang, str(r.n), str(r.unfaithful), str(r.nulls), stat(r.roc_auc),
                         signal_threshold(r), str(r.flagged), stat(r.precision), stat(r.recall), stat(r.f1),
                         precision_threshold(r)), "na" if not r.n else "",
                        row_tags(suite, None if r.lang == "all" else r.lang, None)) for r in rows)),
    ]


def _judge_health(health: Mapping[str, Mapping[str, Any]]) -> list[Block]:
    keys = ("items", "parse_failures", "reasks", "refusals", "errors")  # calls and batches vary with -n: not here
    return [Heading(2, "Metric judges"),
            Table((Column("judge"), *[Column(k, True) for k in keys], Column("null values"), Column("output")),
                  tuple(Row((sanitize_name(name), *[str(h.get(k, 0)) for k in keys],
                             ", ".join(f"{m}: {n}" for m, n in sorted((h.get("nulls") or {}).items())) or "0",
                             one_line(output_mode(h), 300) or "-"))
                        for name, h in sorted(health.items())))]


def statistics_blocks(report: RunReport) -> list[Block]:
    st = report.statistics
    blocks: list[Block] = []
    if report.judge_health:
        blocks += _judge_health(report.judge_health)
    if st.sample is not None:
        blocks += _sample(st.sample)
    if st.baseline is not None:
        blocks += _baseline(st.baseline)
    if st.regressions:
        blocks += _regressions(st.regressions)
    if st.head_to_head:
        blocks += _head_to_head(st.head_to_head)
    if st.repeats:
        blocks += _repeats(st.repeats)
    if st.calibration:
        blocks += _calibration(st.calibration)
    return blocks
