"""Terminal sections of the statistics a run computed: sample, baseline comparison, regression gates,
head-to-head tables and judge calibration (see docs/statistics.md)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .format import HEADLINE_METRICS, fmt
from .model import RunReport
from .sanitize import one_line

MAX_CHANGES = 10  # added/removed cases listed in the terminal (the report lists all)


def _signed(v: Any) -> str:
    return "–" if not isinstance(v, int | float) else f"{v:+.3f}"


def _p(v: Any) -> str:
    return "–" if not isinstance(v, int | float) else f"{v:.3g}"


def baseline_lines(baseline: Mapping[str, Any]) -> list[str]:
    """Per suite x language x model: the headline metrics' changes; significant ones marked ``*``."""
    rows = [r for r in baseline.get("rows", ()) if r.get("stat") == "mean" and r.get("metric") in HEADLINE_METRICS]
    lines = [f"baseline {baseline.get('path')}: paired {baseline.get('test')} test, alpha {baseline.get('alpha')}; "
             "delta = this run - baseline, * = significant (unadjusted)"]
    groups: dict[tuple[str, str, str, str], list[Mapping[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["suite"], r["lang"], r["model"], r["baseline_model"]), []).append(r)
    for (suite, lang, model, base), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] != "all",
                                                                                 kv[0][1], kv[0][2])):
        who = model if model == base else f"{model} vs {base}"
        cells = ", ".join(f"{r['metric']} {_signed(r.get('delta'))}{'*' if r.get('significant') else ''}"
                          for r in sorted(rs, key=lambda r: HEADLINE_METRICS.index(r["metric"])))
        lines.append(f"  {suite} [{lang}] {who} (n={rs[0].get('n')}): {cells}")
    changes = baseline.get("changes") or []
    if changes:
        lines.append(f"cases not in both runs: {len(changes)} (listed in the report)")
        lines += [f"  {c['change']}: {c['suite']} {c['case_id']} ({c['lang']}) {c['model']}"
                  for c in changes[:MAX_CHANGES]]
        if len(changes) > MAX_CHANGES:
            lines.append(f"  ... and {len(changes) - MAX_CHANGES} more")
    for key, what in (("models_only_in_baseline", "only in the baseline"),
                      ("models_only_in_candidate", "not in the baseline")):
        if baseline.get(key):
            lines.append(f"models {what}: {', '.join(baseline[key])} (map names with --mirage-baseline-map NEW=OLD)")
    return lines


def regression_lines(gates: Sequence[Mapping[str, Any]]) -> list[str]:
    failed = [g for g in gates if g.get("failed") is True]
    unknown = [g for g in gates if g.get("failed") is None]
    lines = [f"mirage regression gates: {len(gates) - len(failed) - len(unknown)} passed, {len(failed)} failed"
             + (f", {len(unknown)} not evaluable" if unknown else "")]
    for g in (*failed, *unknown):
        who = g["model"] if g["model"] == g["baseline_model"] else f"{g['model']} vs {g['baseline_model']}"
        head = "FAILED" if g.get("failed") else "NOT EVALUABLE"
        if g.get("failed") is None or g.get("worsening") is None:  # not evaluable, or failed on no data
            lines.append(f"{head} regression gate {g['suite']} [{g['lang']}] {who}: {g['expr']}: {g.get('note')}")
        else:
            lines.append(f"{head} regression gate {g['suite']} [{g['lang']}] {who}: {g['expr']} -> worse by "
                         f"{_signed(g.get('worsening'))} (95% CI {_signed(g.get('ci_low'))}..{_signed(g.get('ci_high'))}, "
                         f"n={g['n']}), Holm-adjusted p={_p(g.get('p_adjusted'))} over {g['family']} tests "
                         f"({g.get('source')})")
    return lines


def head_to_head_lines(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = ["per case: wins/ties/losses of the first model, two-sided sign test, 95% Wilson interval of the win "
             "rate among decided cases"]
    for r in rows:
        wr = r.get("win_rate") or {}
        lines.append(f"  {r['suite']} {r['metric']}: {r['model_a']} vs {r['model_b']}: {r['wins']}/{r['ties']}/"
                     f"{r['losses']}, p={_p(r.get('p_value'))}, win rate {fmt(wr.get('estimate'))} "
                     f"[{fmt(wr.get('low'))}, {fmt(wr.get('high'))}]")
    return lines


def repeat_lines(summaries: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = ["per case over its repeats: pass rate of all samples, pass^N = share of cases whose every repeat "
             "passed; flaky = cases whose repeats straddle the threshold"]
    for s in summaries:
        rate, every = s.get("pass_rate") or {}, s.get("all_pass") or {}
        flaky = list(s.get("flaky") or ())
        lines.append(f"  {s['suite']} [{s['lang']}] {s['model']} {s['metric']}: {s['samples']} samples of "
                     f"{s['cases']} cases, pass rate {fmt(rate.get('estimate'))} [{fmt(rate.get('low'))}, "
                     f"{fmt(rate.get('high'))}], pass^N {fmt(every.get('estimate'))}"
                     + (f", flaky: {', '.join(flaky[:10])}" + (f" and {len(flaky) - 10} more" if len(flaky) > 10 else "")
                        if flaky else ""))
    return lines


def calibration_lines(sections: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = []
    for sec in sections:
        lines.append(f"suite {sec['suite']}: human labels {sec.get('labels')}")
        for a in sec.get("agreement", ()):
            lines.append(f"  {a['metric']}: agreement on {a.get('n')} labelled rows: accuracy {fmt(a.get('accuracy'))}, "
                         f"ROC AUC {fmt(a.get('roc_auc'))}, kappa {fmt(a.get('kappa'))}")
        for g in sec.get("ppi", ()):
            ppi = g.get("ppi")
            if ppi is None:
                lines.append(f"  {g['model']} {g['metric']}: no PPI estimate ({g.get('note')})")
            else:
                lines.append(f"  {g['model']} {g['metric']}: PPI mean {fmt(ppi['estimate'])} [{fmt(ppi['low'])}, "
                             f"{fmt(ppi['high'])}] from {ppi['n_all']} judged + {ppi['n_labelled']} labelled cases "
                             f"(judge alone {fmt(ppi['judge_mean'])})")
        unmatched = sec.get("unmatched_labels") or []
        if unmatched:
            lines.append(f"  {len(unmatched)} labels not used (listed in the report), e.g. {unmatched[0]['where']}: "
                         f"{unmatched[0]['reason']}")
    return lines


def judge_health_lines(health: Mapping[str, Mapping[str, Any]]) -> list[str]:
    lines = []
    for name, h in sorted(health.items()):
        nulls = ", ".join(f"{m} {n}" for m, n in sorted((h.get("nulls") or {}).items()) if n)
        line = (f"  {name}: {h.get('items', 0)} items, {h.get('calls', 0)} model inputs in {h.get('batches', 0)} "
                f"batches, {h.get('parse_failures', 0)} unparseable replies ({h.get('reasks', 0)} re-asked), "
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
    if "sample" in st:
        yield "pytest-mirage sample", [str(st["sample"].get("description", st["sample"].get("rule")))]
    if "baseline" in st:
        yield "pytest-mirage baseline comparison", baseline_lines(st["baseline"])
    if "regressions" in st:
        yield "pytest-mirage regression gates", regression_lines(st["regressions"])
    if "repeats" in st:
        yield "pytest-mirage repeated samples", repeat_lines(st["repeats"])
    if "head_to_head" in st:
        yield "pytest-mirage head-to-head", head_to_head_lines(st["head_to_head"])
    if "calibration" in st:
        yield "pytest-mirage judge calibration", calibration_lines(st["calibration"])
