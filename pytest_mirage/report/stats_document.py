"""Markdown/HTML blocks of the statistics a run computed (sample, baseline comparison, regression
gates, head-to-head, repeated samples, judge calibration) and of the metric judges' health.

They read the JSON-able sections of :attr:`RunReport.statistics` (written by
:mod:`pytest_mirage.finish.report` from :mod:`pytest_mirage.stats`) and :attr:`RunReport.judge_health`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .blocks import (
    Block,
    BulletList,
    Column,
    Heading,
    Paragraph,
    Row,
    Span,
    Table,
    fmt_any,
    row_tags,
)
from .format import HEADLINE_METRICS, fmt
from .model import RunReport
from .sanitize import one_line, sanitize_name
from .stats_lines import output_mode


def _num(v: Any, signed: bool = False) -> str:
    if not isinstance(v, int | float) or isinstance(v, bool):
        return "–"
    return f"{v:+.3f}" if signed else fmt(float(v))


def _p(v: Any) -> str:
    return "–" if not isinstance(v, int | float) or isinstance(v, bool) else f"{v:.3g}"


def _sample(sample: Mapping[str, Any]) -> list[Block]:
    text = str(sample.get("description") or sample.get("rule") or "")
    return [Heading(2, "Sample"), Paragraph((Span(f"This run answered a seeded subset: {text}."),))]


def _baseline(b: Mapping[str, Any]) -> list[Block]:
    rows = [r for r in b.get("rows", ()) if r.get("stat") == "mean" and r.get("metric") in HEADLINE_METRICS]
    rows.sort(key=lambda r: (r["suite"], r["lang"] != "all", r["lang"], r["model"],
                             HEADLINE_METRICS.index(r["metric"])))
    blocks: list[Block] = [
        Heading(2, "Baseline comparison"),
        Paragraph((Span(f"Against {b.get('path')}: per case paired differences (this run - baseline), "
                        f"seeded paired-bootstrap 95% interval, paired {b.get('test')} test p-value "
                        f"(significant at alpha {b.get('alpha')}: marked *; unadjusted)."),)),
        Table((Column("suite"), Column("lang"), Column("model"), Column("baseline model"), Column("metric"),
               Column("n", True), Column("baseline", True), Column("this run", True), Column("delta", True),
               Column("95% CI", True), Column("p", True)),
              tuple(Row((r["suite"], r["lang"], sanitize_name(r["model"]), sanitize_name(r["baseline_model"]),
                         r["metric"], str(r.get("n")), _num(r.get("baseline")), _num(r.get("candidate")),
                         _num(r.get("delta"), True) + ("*" if r.get("significant") else ""),
                         f"[{_num(r.get('ci_low'), True)}, {_num(r.get('ci_high'), True)}]", _p(r.get("p_value"))),
                        "fail" if r.get("significant") and (r.get("delta") or 0) < 0 else "",
                        row_tags(r["suite"], r["lang"], r["model"])) for r in rows)),
    ]
    changes = b.get("changes") or []
    if changes:
        blocks += [Heading(3, f"Cases not in both runs ({len(changes)})"),
                   Table((Column("change"), Column("suite"), Column("case"), Column("lang"), Column("model")),
                         tuple(Row((c["change"], c["suite"], sanitize_name(c["case_id"]), c["lang"],
                                    sanitize_name(c["model"])), tags=row_tags(c["suite"], c["lang"], c["model"]))
                               for c in changes))]
    for key, what in (("models_only_in_baseline", "only in the baseline"),
                      ("models_only_in_candidate", "not in the baseline")):
        if b.get(key):
            blocks.append(Paragraph((Span(f"Models {what}: {', '.join(sanitize_name(m) for m in b[key])}."),)))
    return blocks


def _regressions(gates: Sequence[Mapping[str, Any]]) -> list[Block]:
    def status(g: Mapping[str, Any]) -> str:
        return {True: "FAILED", False: "passed", None: "not evaluable"}[g.get("failed")]

    rows = tuple(Row((status(g), g["suite"], g["lang"], sanitize_name(g["model"]), sanitize_name(g["baseline_model"]),
                      g["expr"], str(g.get("n")), _num(g.get("worsening"), True),
                      f"[{_num(g.get('ci_low'), True)}, {_num(g.get('ci_high'), True)}]", _p(g.get("p_adjusted")),
                      str(g.get("note") or g.get("source") or "")),
                     {"FAILED": "fail", "passed": "", "not evaluable": "na"}[status(g)],  # type: ignore[arg-type]
                     row_tags(g["suite"], g["lang"], g["model"]))
                 for g in sorted(gates, key=lambda g: (g.get("failed") is not True, g["suite"], g["lang"])))
    return [Heading(2, "Regression gates"),
            Paragraph((Span("A regression gate fails only when the drop beyond the allowed change is significant "
                            "(one-sided paired test, Holm-adjusted over all regression gates of the run)."),)),
            Table((Column("status"), Column("suite"), Column("lang"), Column("model"), Column("baseline model"),
                   Column("gate"), Column("n", True), Column("worse by", True), Column("95% CI", True),
                   Column("Holm p", True), Column("note")), rows)]


def _head_to_head(rows: Sequence[Mapping[str, Any]]) -> list[Block]:
    return [Heading(2, "Head-to-head"),
            Paragraph((Span("Per case wins / ties / losses of model A against model B, two-sided sign test, "
                            "95% Wilson interval of A's win rate among decided cases."),)),
            Table((Column("suite"), Column("metric"), Column("model A"), Column("model B"), Column("wins", True),
                   Column("ties", True), Column("losses", True), Column("p", True), Column("win rate", True),
                   Column("95% CI", True)),
                  tuple(Row((r["suite"], str(r.get("metric")), sanitize_name(r["model_a"]), sanitize_name(r["model_b"]),
                             str(r["wins"]), str(r["ties"]), str(r["losses"]), _p(r.get("p_value")),
                             fmt((r.get("win_rate") or {}).get("estimate")),
                             f"[{fmt((r.get('win_rate') or {}).get('low'))}, {fmt((r.get('win_rate') or {}).get('high'))}]"),
                            tags=row_tags(r["suite"])) for r in rows))]


def _repeats(rows: Sequence[Mapping[str, Any]]) -> list[Block]:
    def iv(d: Mapping[str, Any] | None) -> str:
        d = d or {}
        return f"{fmt(d.get('estimate'))} [{fmt(d.get('low'))}, {fmt(d.get('high'))}]"

    return [Heading(2, "Repeated samples"),
            Paragraph((Span("Every case answered several times: pass rate over all samples (bootstrap clustered by "
                            "case), pass^N = share of cases whose every repeat passed, flaky = cases whose repeats "
                            "fall on both sides of the threshold."),)),
            Table((Column("suite"), Column("lang"), Column("model"), Column("metric"), Column("cases", True),
                   Column("samples", True), Column("pass rate", True), Column("pass^N", True), Column("flaky")),
                  tuple(Row((r["suite"], r["lang"], sanitize_name(r["model"]), r["metric"], str(r["cases"]),
                             str(r["samples"]), iv(r.get("pass_rate")), iv(r.get("all_pass")),
                             ", ".join(sanitize_name(c) for c in r.get("flaky") or ()) or "–"),
                            "fail" if r.get("flaky") else "", row_tags(r["suite"], r["lang"], r["model"]))
                        for r in rows))]


def _calibration(sections: Sequence[Mapping[str, Any]]) -> list[Block]:
    blocks: list[Block] = [Heading(2, "Judge calibration against human labels")]
    for sec in sections:
        blocks.append(Heading(3, f"{sec['suite']} ({sec.get('labels')})"))
        agreement = sec.get("agreement") or []
        if agreement:
            blocks.append(Table((Column("metric"), Column("labelled rows", True), Column("accuracy", True),
                                 Column("ROC AUC", True), Column("Cohen's kappa", True), Column("ECE", True)),
                                tuple(Row((a["metric"], str(a.get("n")), fmt_any(a.get("accuracy")),
                                           fmt_any(a.get("roc_auc")), fmt_any(a.get("kappa")), fmt_any(a.get("ece"))))
                                      for a in agreement)))
        ppi = sec.get("ppi") or []
        if ppi:
            rows = []
            for g in ppi:
                p = g.get("ppi")
                if p is None:
                    rows.append(Row((sanitize_name(g["model"]), g["metric"], "–", "–", "–", str(g.get("note") or "")),
                                    "na", row_tags(sec["suite"], None, g["model"])))
                else:
                    rows.append(Row((sanitize_name(g["model"]), g["metric"], fmt(p.get("estimate")),
                                     f"[{fmt(p.get('low'))}, {fmt(p.get('high'))}]", fmt(p.get("judge_mean")),
                                     f"{p.get('n_all')} judged, {p.get('n_labelled')} labelled"), "",
                                    row_tags(sec["suite"], None, g["model"])))
            blocks.append(Table((Column("model"), Column("metric"), Column("PPI mean", True), Column("95% CI", True),
                                 Column("judge mean", True), Column("cases")), tuple(rows)))
        unmatched = sec.get("unmatched_labels") or []
        if unmatched:
            blocks.append(BulletList(tuple(f"{u['where']}: {u['reason']}" for u in unmatched[:50])))
    return blocks


def _judge_health(health: Mapping[str, Mapping[str, Any]]) -> list[Block]:
    keys = ("items", "calls", "batches", "parse_failures", "reasks", "refusals", "errors")
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
    if "sample" in st:
        blocks += _sample(st["sample"])
    if "baseline" in st:
        blocks += _baseline(st["baseline"])
    if "regressions" in st:
        blocks += _regressions(st["regressions"])
    if "head_to_head" in st:
        blocks += _head_to_head(st["head_to_head"])
    if "repeats" in st:
        blocks += _repeats(st["repeats"])
    if "calibration" in st:
        blocks += _calibration(st["calibration"])
    return blocks
