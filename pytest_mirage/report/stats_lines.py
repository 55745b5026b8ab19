"""Terminal sections of the statistics a run computed: sample, baseline comparison, regression gates,
head-to-head tables and judge calibration (see docs/statistics.md)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .format import HEADLINE_METRICS, NULL, estimate, p_value, signed, stat
from .model import RunReport
from .sanitize import one_line

if TYPE_CHECKING:
    from ..aggregate.regression import RegressionGateResult
    from ..stats.repeats import RepeatSummary
    from ..stats.signals import SignalCalibration
    from .statistics import BaselineRow, BaselineSection, CalibrationSection, HeadToHeadRow

MAX_CHANGES = 10  # added/removed cases listed in the terminal (the report lists all)


def baseline_lines(baseline: BaselineSection) -> list[str]:
    """Per suite x language x model: the headline metrics' changes; significant ones marked ``*``."""
    rows = [r for r in baseline.rows if r.stat == "mean" and r.metric in HEADLINE_METRICS]
    lines = [f"baseline {baseline.path}: paired {baseline.test} test, alpha {baseline.alpha}; "
             "delta = this run - baseline, * = significant (unadjusted)"]
    groups: dict[tuple[str, str, str, str], list[BaselineRow]] = {}
    for r in rows:
        groups.setdefault((r.suite, r.lang, r.model, r.baseline_model), []).append(r)
    for (suite, lang, model, base), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] != "all",
                                                                                 kv[0][1], kv[0][2])):
        who = model if model == base else f"{model} vs {base}"
        cells = ", ".join(f"{r.metric} {signed(r.delta)}{'*' if r.significant else ''}"
                          for r in sorted(rs, key=lambda r: HEADLINE_METRICS.index(r.metric)))
        lines.append(f"  {suite} [{lang}] {who} (n={rs[0].n}): {cells}")
    changes = baseline.changes
    if changes:
        lines.append(f"cases not in both runs: {len(changes)} (listed in the report)")
        lines += [f"  {c.change}: {c.suite} {c.case_id} ({c.lang}) {c.model}" for c in changes[:MAX_CHANGES]]
        if len(changes) > MAX_CHANGES:
            lines.append(f"  ... and {len(changes) - MAX_CHANGES} more")
    for models, what in ((baseline.models_only_in_baseline, "only in the baseline"),
                         (baseline.models_only_in_candidate, "not in the baseline")):
        if models:
            lines.append(f"models {what}: {', '.join(models)} (map names with --mirage-baseline-map NEW=OLD)")
    return lines


def regression_lines(gates: Sequence[RegressionGateResult]) -> list[str]:
    failed = [g for g in gates if g.failed is True]
    unknown = [g for g in gates if g.failed is None]
    lines = [f"mirage regression gates: {len(gates) - len(failed) - len(unknown)} passed, {len(failed)} failed"
             + (f", {len(unknown)} not evaluable" if unknown else "")]
    for g in (*failed, *unknown):
        who = g.model if g.model == g.baseline_model else f"{g.model} vs {g.baseline_model}"
        head = "FAILED" if g.failed else "NOT EVALUABLE"
        if g.failed is None or math.isnan(g.worsening):  # not evaluable, or failed on no data
            lines.append(f"{head} regression gate {g.suite} [{g.lang}] {who}: {g.expr}: {g.note}")
        else:
            lines.append(f"FAILED regression gate {g.suite} [{g.lang}] {who}: {g.expr} -> worse by "
                         f"{signed(g.worsening)} (95% CI {signed(g.ci_low)}..{signed(g.ci_high)}, "
                         f"n={g.n}), Holm-adjusted p={p_value(g.p_adjusted)} over {g.family} tests "
                         f"({g.source})")
    return lines


def head_to_head_lines(rows: Sequence[HeadToHeadRow]) -> list[str]:
    lines = ["per case: wins/ties/losses of the first model, two-sided sign test, 95% Wilson interval of the win "
             "rate among decided cases"]
    for r in rows:
        h, wr = r.comparison, r.comparison.win_rate
        lines.append(f"  {r.suite} {h.metric}: {h.model_a} vs {h.model_b}: {h.wins}/{h.ties}/{h.losses}, "
                     f"p={p_value(h.p_value)}, win rate {estimate(wr.estimate, wr.low, wr.high)}")
    return lines


def repeat_lines(summaries: Sequence[RepeatSummary]) -> list[str]:
    lines = ["per case over its repeats: pass rate of all samples, pass^N = share of cases whose every repeat "
             "passed; flaky = cases whose repeats straddle the threshold"]
    for s in summaries:
        rate, flaky = s.pass_rate, s.flaky
        lines.append(f"  {s.suite} [{s.lang}] {s.model} {s.metric}: {s.samples} samples of {s.cases} cases, "
                     f"pass rate {estimate(rate.estimate, rate.low, rate.high)}, pass^N {stat(s.all_pass.estimate)}"
                     + (f", flaky: {', '.join(flaky[:10])}" + (f" and {len(flaky) - 10} more" if len(flaky) > 10 else "")
                        if flaky else ""))
    return lines


def calibration_lines(sections: Sequence[CalibrationSection]) -> list[str]:
    lines = []
    for sec in sections:
        cal = sec.calibration
        lines.append(f"suite {sec.suite}: human labels {sec.labels}")
        for a in cal.agreements:
            ag = a.agreement
            lines.append(f"  {a.metric}: agreement on {ag.n} labelled rows: accuracy {stat(ag.accuracy)}, "
                         f"ROC AUC {stat(ag.roc_auc)}, kappa {stat(ag.kappa)}")
        for g in cal.groups:
            ppi = g.ppi
            if ppi is None:
                lines.append(f"  {g.model} {g.metric}: no PPI estimate ({g.note})")
            else:
                lines.append(f"  {g.model} {g.metric}: PPI mean {estimate(ppi.estimate, ppi.interval.low, ppi.interval.high)} "
                             f"from {ppi.n_all} judged + {ppi.n_labelled} labelled cases "
                             f"(judge alone {stat(ppi.judge_mean)})")
        if sec.faithfulness:
            lines += faithfulness_lines(sec.faithfulness)
        if cal.unmatched:
            first = cal.unmatched[0]
            lines.append(f"  {len(cal.unmatched)} labels not used (listed in the report), e.g. {first.where}: "
                         f"{first.reason}")
    return lines


NOT_REACHABLE = "not reachable"


def signal_threshold(row: SignalCalibration) -> str:
    """The threshold a row's flags were counted at: ``>= 0.450``, or "per language"."""
    if math.isnan(row.threshold):
        return "per language" if row.n else NULL
    return f"{'>' if row.strict else '>='} {stat(row.threshold)}"


def precision_threshold(row: SignalCalibration) -> str:
    """The threshold reaching the target precision with its recall, or "not reachable"."""
    if not row.n:
        return NULL
    if not row.reachable:
        return NOT_REACHABLE
    return f">= {stat(row.precision_threshold)} (R {stat(row.precision_recall)})"


def faithfulness_lines(rows: Sequence[SignalCalibration]) -> list[str]:
    """The faithfulness signals against the labels, a compact table (docs/judges.md)."""
    target = rows[0].target_precision
    head = ("signal", "lang", "n", "unfaithful", "AUC", "threshold", "P", "R", "F1", f"for P >= {stat(target)}")
    table = [head] + [(r.metric, r.lang, str(r.n), str(r.unfaithful), stat(r.roc_auc), signal_threshold(r),
                       stat(r.precision), stat(r.recall), stat(r.f1), precision_threshold(r)) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    out = ["  faithfulness signals against the labels (label 1 = faithful; P/R/F1 of flagging unfaithful "
           "answers: a score failing the threshold):"]
    for row in table:
        out.append("    " + "  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                                      for i, (c, w) in enumerate(zip(row, widths, strict=True))).rstrip())
    return out


def judge_health_lines(health: Mapping[str, Mapping[str, Any]]) -> list[str]:
    lines = []
    for name, h in sorted(health.items()):
        nulls = ", ".join(f"{m} {n}" for m, n in sorted((h.get("nulls") or {}).items()) if n)
        line = (f"  {name}: {h.get('items', 0)} items, {h.get('parse_failures', 0)} unparseable replies ({h.get('reasks', 0)} re-asked), "
                f"{h.get('refusals', 0)} refusals, {h.get('errors', 0)} errors, null values: {nulls or 'none'}")
        output = output_mode(h)
        lines.append(line + (f"; output: {output}" if output else ""))
    return lines


# how an LLM judge asked (metric judges' health, the arena judge's block): shown as one output_mode() text
OUTPUT_KEYS = ("output", "output_note", "format_fallbacks", "unstructured_replies")


def output_mode(h: Mapping[str, Any]) -> str:
    """How an LLM judge asked (``JSON schema``, or ``plain text (why)``) with its fallbacks; "" for
    local judges."""
    output = h.get("output")
    if not output:
        return ""
    text = "JSON schema" if output == "json_schema" else "plain text"
    if h.get("output_note"):
        text += f" ({one_line(str(h['output_note']), 300)})"  # may quote a server's error body
    if h.get("format_fallbacks"):
        text += f", {h['format_fallbacks']} prompts re-sent without the schema"
    if h.get("unstructured_replies"):
        text += f", {h['unstructured_replies']} replies ignored the schema (read as text)"
    return text


def statistics_sections(report: RunReport) -> Iterator[tuple[str, list[str]]]:
    """(title, lines) of each statistics section the run has, in reading order."""
    st = report.statistics
    if report.judge_health:
        yield "pytest-mirage metric judges", judge_health_lines(report.judge_health)
    if st.sample is not None:
        yield "pytest-mirage sample", [st.sample.description]
    if st.baseline is not None:
        yield "pytest-mirage baseline comparison", baseline_lines(st.baseline)
    if st.regressions:
        yield "pytest-mirage regression gates", regression_lines(st.regressions)
    if st.repeats:
        yield "pytest-mirage repeated samples", repeat_lines(st.repeats)
    if st.head_to_head:
        yield "pytest-mirage head-to-head", head_to_head_lines(st.head_to_head)
    if st.calibration:
        yield "pytest-mirage judge calibration", calibration_lines(st.calibration)
