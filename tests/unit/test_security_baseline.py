"""Baseline files are validated (schema, value ranges, unique cases, nesting) and a regression gate
with nothing to compare fails (issue 21, defects 3 and 4)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from pytest_mirage.aggregate.expr import parse_regression_gate
from pytest_mirage.aggregate.regression import evaluate_regression_gates, regression_outcome_text
from pytest_mirage.errors import ConfigError
from pytest_mirage.finish.baseline import load_baseline
from pytest_mirage.stats.paired import compare_runs


def _row(case: str, value: float, model: str = "m", lang: str = "hi", **extra: Any) -> dict[str, Any]:
    return {"suite": "s", "case_id": case, "lang": lang, "model": model, "outcome": "passed",
            "metrics": {"citation_recall": value}, **extra}


def _write(tmp_path: Path, data: Any, name: str = "b.json") -> Path:
    p = tmp_path / name
    p.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return p


def test_a_valid_baseline_loads(tmp_path: Path) -> None:
    base = load_baseline(_write(tmp_path, {"schema": "pytest-mirage/report/1", "results": [_row("a", 0.5)]}))
    assert [r.case_id for r in base.records] == ["a"]


@pytest.mark.parametrize("schema", ["pytest-mirage/report/2", "pytest-mirage/report/1x", "pytest-mirage/report/"])
def test_schema_is_matched_exactly(tmp_path: Path, schema: str) -> None:
    with pytest.raises(ConfigError, match=rf"b\.json: field 'schema' is '{schema}'; expected exactly "
                                          r"'pytest-mirage/report/1'"):
        load_baseline(_write(tmp_path, {"schema": schema, "results": [_row("a", 0.5)]}))


@pytest.mark.parametrize("value", [-1000, 1.5, -0.001])
def test_values_out_of_range_name_file_row_and_field(tmp_path: Path, value: float) -> None:
    rows = [_row("a", 0.5), _row("b", value)]
    with pytest.raises(ConfigError, match=r"b\.json: results\[1\]\.metrics\.citation_recall is .*; citation_recall "
                                          r"takes values from 0 to 1"):
        load_baseline(_write(tmp_path, {"schema": "pytest-mirage/report/1", "results": rows}))


def test_judge_scales_are_checked_too(tmp_path: Path) -> None:
    row = _row("a", 0.5)
    row["metrics"]["fluency_llm"] = 0.0  # a 1-5 scale
    with pytest.raises(ConfigError, match=r"metrics\.fluency_llm is 0\.0; fluency_llm takes values from 1 to 5"):
        load_baseline(_write(tmp_path, {"schema": "pytest-mirage/report/1", "results": [row]}))


def test_a_case_listed_twice_is_refused(tmp_path: Path) -> None:
    rows = [_row("a", 0.5), _row("b", 0.5), _row("a", 0.7)]
    with pytest.raises(ConfigError, match=r"results\[2\] repeats case 'a' of suite 's' for model 'm' \(first at "
                                          r"results\[0\]\)"):
        load_baseline(_write(tmp_path, {"schema": "pytest-mirage/report/1", "results": rows}))
    # repeats of one case are separate samples, not duplicates
    ok = [_row("a", 0.5, repeat=0), _row("a", 0.7, repeat=1)]
    assert len(load_baseline(_write(tmp_path, {"schema": "pytest-mirage/report/1", "results": ok})).records) == 2


def test_deeply_nested_baseline_is_an_error_not_a_crash(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nested too deeply"):
        load_baseline(_write(tmp_path, "[" * 100_000 + "]" * 100_000))


# ---------------------------------------------------------------- gates that cannot pass on nothing


def _gate(base: list[dict[str, Any]], cand: list[dict[str, Any]], expr: str = "citation_recall drop <= 0.05",
          **kw: Any) -> list[Any]:
    return evaluate_regression_gates(compare_runs(base, cand, **kw), [parse_regression_gate(expr)])


CAND = [_row(c, 0.5, model="new") for c in "abc"]


def test_renamed_model_without_a_map_fails_naming_both_sides_and_the_fix() -> None:
    (res,) = _gate([_row(c, 0.5, model="old") for c in "abc"], CAND)
    assert res.failed is True and math.isnan(res.worsening)
    assert "new" in res.note and "old" in res.note and "--mirage-baseline-map NEW=OLD" in res.note
    assert "fails: no comparable baseline data" in res.describe()
    # with the map it is evaluated
    (mapped,) = _gate([_row(c, 0.5, model="old") for c in "abc"], CAND, model_map={"new": "old"})
    assert mapped.failed is False


@pytest.mark.parametrize("base", [
    pytest.param([], id="no-results"),
    pytest.param([{**_row(c, 0.5, model="new"), "suite": "other"} for c in "abc"], id="another-suite"),
    pytest.param([{**_row(c, 0.5, model="new"), "outcome": "error"} for c in "abc"], id="all-errored"),
    pytest.param([{**_row(c, 0.5, model="new"), "metrics": {"citation_recall": None}} for c in "abc"], id="all-null"),
])
def test_gate_on_nothing_fails(base: list[dict[str, Any]]) -> None:
    results = _gate(base, CAND)
    assert results and all(r.failed is True for r in results), results
    assert all("no comparable baseline data" in r.note for r in results)
    json.dumps([r.to_json() for r in results], allow_nan=False)
    text = regression_outcome_text(results[0].to_json())
    assert "no comparable baseline data" in text and "nan" not in text.lower()


def test_worsening_is_rounded_where_it_is_formatted() -> None:
    row = {"failed": True, "worsening": 0.6089743547008547, "p_adjusted": 0.000012345678}
    assert regression_outcome_text(row) == "worse by +0.6090, Holm-adjusted p=1.23e-05"
