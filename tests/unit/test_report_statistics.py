"""The typed statistics of a report (report/statistics.py): built from the stats modules, written as
the JSON report writes them, read back to the same bytes, and a missing field is an error that
names it; the terminal and the Markdown/HTML sections format a number the same way."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from pytest_mirage.aggregate.expr import parse_regression_gate
from pytest_mirage.aggregate.regression import evaluate_regression_gates
from pytest_mirage.report.format import p_value, signed, stat
from pytest_mirage.report.markdown import markdown_report
from pytest_mirage.report.model import ReportFormatError, RunReport
from pytest_mirage.report.statistics import (
    BaselineSection,
    CalibrationSection,
    HeadToHeadRow,
    SampleSection,
    Statistics,
)
from pytest_mirage.report.stats_lines import statistics_sections
from pytest_mirage.report.write import json_bytes
from pytest_mirage.stats.calibration import calibrate
from pytest_mirage.stats.headtohead import head_to_head
from pytest_mirage.stats.labels import Label
from pytest_mirage.stats.paired import compare_runs
from pytest_mirage.stats.repeats import summarize_repeats
from pytest_mirage.stats.sampling import sample_cases

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "reports"
METRIC = "citation_recall"


def _rows(model: str, shift: float, *, repeats: int = 2, skip: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    out = []
    for lang in ("en", "hi"):
        for i in range(10):
            if f"{lang}-{i}" in skip:
                continue
            for rep in range(repeats):
                v = min(1.0, max(0.0, ((i * 7 + rep * 3) % 10) / 10 + shift))
                out.append({"suite": "s", "case_id": f"{lang}-{i}", "lang": lang, "model": model,
                            "metrics": {METRIC: v, "rouge_l": v / 3}, "outcome": "passed",
                            "checks": {METRIC: v >= 0.5}, "repeat": rep})
    return out


def _statistics() -> Statistics:
    """Every section, computed by the stats modules from synthetic runs."""
    run = _rows("a", 0.0) + _rows("b", 0.15)
    sample = sample_cases({("s", "en"): [f"en-{i}" for i in range(10)], ("s", "hi"): [f"hi-{i}" for i in range(10)]},
                          share=0.5)
    cmp = compare_runs(_rows("a", 0.2) + _rows("gone", 0.0), _rows("a", -0.1, skip=frozenset({"hi-3"})) + _rows("c", 0.0))
    gates = [parse_regression_gate(f"{METRIC}.mean drop <= 0.05", source="--mirage-gate"),
             parse_regression_gate("rouge_l.mean@de drop <= 0.1", source="pyproject.toml")]
    regressions = evaluate_regression_gates(cmp, gates)
    labels = [Label(f"en-{i}", "a", METRIC, float(i % 4 != 0), line=i + 2) for i in range(8)]
    labels += [Label("en-1", "b", METRIC, 1.0, line=20), Label("en-1", "ghost", METRIC, 1.0, line=21)]
    cal = calibrate(run, labels, suite="s")
    h2h = head_to_head(run, "a", "b", METRIC)
    repeats = tuple(summarize_repeats(run, METRIC).values())
    return Statistics(sample=SampleSection.of([sample]), calibration=(CalibrationSection("s", "s/labels.csv", cal),),
                      baseline=BaselineSection.of("base.json", cmp), regressions=tuple(regressions),
                      head_to_head=(HeadToHeadRow("s", h2h),), repeats=repeats)


def _report(statistics: Statistics) -> RunReport:
    return RunReport(models=("a", "b"), suites=(), results=(), leaderboard=(), gates=(), statistics=statistics)


def test_every_section_is_computed_and_written_as_the_stats_modules_write_it() -> None:
    st = _statistics()
    assert st.sample and st.calibration and st.baseline and st.regressions and st.head_to_head and st.repeats
    assert {c.change for c in st.baseline.changes} == {"removed"}
    assert st.baseline.models_only_in_baseline == ("gone",) and st.baseline.models_only_in_candidate == ("c",)
    assert [g.failed for g in st.regressions].count(None) >= 1  # the @de gate has no case
    out = st.to_json()
    assert list(out) == ["sample", "calibration", "baseline", "regressions", "head_to_head", "repeats"]
    assert out["regressions"] == [g.to_json() for g in st.regressions]
    assert out["head_to_head"][0] == {"suite": "s", **st.head_to_head[0].comparison.to_json()}
    assert out["calibration"][0]["ppi"] == [g.to_json() for g in st.calibration[0].calibration.groups]
    assert set(out["baseline"]["rows"][0]) >= {"delta", "p_value", "significant", "mde", "unpaired"}
    assert Statistics().to_json() == {}


def test_json_round_trip_is_byte_identical_and_keeps_undefined_values_undefined() -> None:
    written = json_bytes(_report(_statistics()))
    again = RunReport.from_json(json.loads(written))
    assert json_bytes(again) == written
    st = again.statistics
    not_evaluable = next(g for g in st.regressions if g.failed is None)
    assert math.isnan(not_evaluable.worsening) and not_evaluable.note  # null in the JSON, NaN when read
    assert st.repeats[0].pass_hat and all(isinstance(k, int) for k in st.repeats[0].pass_hat)
    assert again.failed_regressions == [g for g in st.regressions if g.failed is True]


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.json")), ids=lambda p: p.name)
def test_stored_reports_read_back_to_the_same_bytes(path: Path) -> None:
    data = path.read_bytes()
    assert json_bytes(RunReport.from_json(json.loads(data))) == data


@pytest.mark.parametrize(("edit", "field"), [
    (lambda d: d["baseline"]["rows"][0].pop("delta"), "baseline.rows[0].delta: found nothing (missing)"),
    (lambda d: d["regressions"][1].update(failed="no"), "regressions[1].failed: found 'no'; expected true or false"),
    (lambda d: d["head_to_head"][0]["win_rate"].pop("low"), "head_to_head[0].win_rate.low"),
    (lambda d: d["repeats"][0]["pass_hat"].update(x=0.5), "repeats[0].pass_hat.x"),
    (lambda d: d["calibration"][0]["ppi"][0]["ppi"].pop("judge_only"), "calibration[0].ppi[0].ppi.judge_only"),
    (lambda d: d["sample"].pop("description"), "sample.description"),
    (lambda d: d.update(calibration={}), "calibration: found {}; expected a list of objects"),
])
def test_a_missing_or_wrong_statistics_field_is_an_error_that_names_it(edit: Any, field: str) -> None:
    data = json.loads(json_bytes(_report(_statistics())))
    edit(data)
    with pytest.raises(ReportFormatError) as exc:
        RunReport.from_json(data)
    assert field in str(exc.value)


def test_terminal_and_document_format_the_same_numbers_the_same_way() -> None:
    report = _report(_statistics())
    st = report.statistics
    terminal = "\n".join(line for _, lines in statistics_sections(report) for line in lines)
    markdown = markdown_report(report)
    failed = next(g for g in st.regressions if g.failed is True)
    row = next(r for r in st.baseline.rows if r.metric == METRIC and r.stat == "mean" and r.lang == "en")  # type: ignore[union-attr]
    h2h = st.head_to_head[0].comparison
    for text in (signed(failed.worsening), p_value(failed.p_adjusted), signed(row.delta), p_value(h2h.p_value),
                 stat(h2h.win_rate.high), stat(st.repeats[0].pass_rate.estimate)):
        assert text in terminal and text in markdown, text
    # a re-read report renders as the report it was read from
    again = RunReport.from_json(report.to_json())
    assert [s for s in statistics_sections(again)] == [s for s in statistics_sections(report)]
    assert markdown_report(again) == markdown


def test_undefined_statistics_show_as_a_dash_and_defined_ones_never_do() -> None:
    assert stat(math.nan) == stat(None) == signed(math.nan) == p_value(None) == "–"
    assert (stat(0.6665), signed(-0.5), signed(0.0), p_value(1.52588e-05)) == ("0.667", "-0.500", "+0.000", "1.53e-05")


def test_the_transitional_get_gives_the_regression_gates_as_json_and_nothing_else() -> None:
    st = _statistics()
    assert st.get("regressions", ()) == [g.to_json() for g in st.regressions]
    assert Statistics().get("regressions", ()) == ()
    with pytest.raises(KeyError, match=r"statistics\.baseline"):
        st.get("baseline")
