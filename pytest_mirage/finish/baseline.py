"""Comparison with a baseline run: per-case pairing, deltas with intervals and p-values, and the
regression gates (Holm-corrected) of this run. The statistics live in :mod:`pytest_mirage.stats`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..aggregate.expr import RegressionGate
from ..aggregate.regression import RegressionGateResult, evaluate_regression_gates
from ..errors import ConfigError
from ..evaluate.context import RunContext
from ..report.format import report_value
from ..results import CaseResult
from ..stats import StatsError
from ..stats.paired import Comparison, compare_runs
from ..stats.records import CaseRecord, records_from_report, to_records


@dataclass(frozen=True, slots=True)
class Baseline:
    """A saved run to compare with: its case records and the metric definitions ("default" or
    "mirage") each suite was scored with (None: a report written before reports recorded them)."""

    records: list[CaseRecord]
    scorings: dict[str, str | None]


_JUDGE_SCALES = {"0-1": (0.0, 1.0), "1-5": (1.0, 5.0), "0-5": (0.0, 5.0)}


def metric_bounds() -> dict[str, tuple[float, float]]:
    """The values each known metric can take: the built-in metrics' ``bounds`` and the judge
    metrics' scales (``raw`` judge metrics and plugin metrics are not bounded)."""
    from ..judges.spec import METRICS as JUDGE_METRICS
    from ..metrics import builtin_registry

    reg = builtin_registry()
    out = {name: reg[name].bounds for name in reg.names if reg[name].bounds is not None}
    out.update({m.name: _JUDGE_SCALES[m.scale] for m in JUDGE_METRICS.values() if m.scale in _JUDGE_SCALES})
    return {k: v for k, v in out.items() if v is not None}


def check_baseline_rows(rows: list[object], where: str,
                        bounds: dict[str, tuple[float, float]] | None = None) -> None:
    """Values out of their metric's range and a case listed twice (its values would be pooled and
    every delta shrunk) are errors naming ``where``, the row and the field."""
    limits = metric_bounds() if bounds is None else bounds
    seen: dict[tuple[object, ...], int] = {}
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            continue  # records_from_report names it
        key = (row.get("suite"), row.get("case_id"), row.get("model"), row.get("repeat") or 0)
        if key in seen:
            raise ConfigError(f"{where}: results[{i}] repeats case {row.get('case_id')!r} of suite {row.get('suite')!r} "
                              f"for model {row.get('model')!r} (first at results[{seen[key]}]); a baseline lists each "
                              "case once per model (and repeat): save it again with --mirage-report")
        seen[key] = i
        metrics = row.get("metrics")
        if not isinstance(metrics, dict):
            continue
        for name, value in metrics.items():
            if name in limits and isinstance(value, int | float) and not isinstance(value, bool):
                lo, hi = limits[name]
                if not lo <= float(value) <= hi:
                    raise ConfigError(f"{where}: results[{i}].metrics.{name} is {value!r}; {name} takes values from "
                                      f"{lo:g} to {hi:g}: the file was edited or is not a pytest-mirage report")


def load_baseline(path: Path, source: str = "--mirage-baseline") -> Baseline:
    """The case records of a saved JSON report; errors name the file and what is wrong.

    Checked here: the exact report schema (``pytest-mirage/report/1``, not a prefix), each metric
    value within its metric's range, and each case once per model; a JSON document nested too
    deeply to read is an error, not a crash."""
    from ..report.model import SCHEMA

    where = f"{source} {path}"
    try:
        data = json.loads(path.read_bytes())
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read it ({exc.strerror or exc}); expected a JSON report "
                          "written by --mirage-report") from None
    except RecursionError:
        raise ConfigError(f"{where}: the JSON is nested too deeply to read; expected a JSON report written by "
                          "--mirage-report") from None
    except ValueError as exc:
        raise ConfigError(f"{where}: not JSON ({exc}); expected a JSON report written by --mirage-report") \
            from None
    if not isinstance(data, dict) or "schema" not in data:
        raise ConfigError(f"{where}: not a pytest-mirage report (no 'schema': {SCHEMA!r}); save a run with "
                          "--mirage-report PATH")
    if data["schema"] != SCHEMA:
        raise ConfigError(f"{where}: field 'schema' is {data['schema']!r:.80}; expected exactly {SCHEMA!r} (a report "
                          "of another pytest-mirage version or another tool); save the baseline again with "
                          "--mirage-report PATH")
    rows = data.get("results")
    if isinstance(rows, list):
        check_baseline_rows(rows, where)
    try:
        records = [r for r in records_from_report(data, where) if r.outcome != "reference"]
    except StatsError as exc:
        raise ConfigError(str(exc)) from None
    scorings: dict[str, str | None] = {}
    for s in data.get("suites") or ():
        if isinstance(s, dict) and isinstance(s.get("name"), str):
            value = s.get("scoring")
            scorings[s["name"]] = value if isinstance(value, str) else None
    return Baseline(records, scorings)


@dataclass(frozen=True, slots=True)
class BaselineOutcome:
    path: Path
    comparison: Comparison
    regressions: tuple[RegressionGateResult, ...]


def compare_with_baseline(ctx: RunContext, path: Path, baseline: Baseline,
                          results: Sequence[CaseResult]) -> BaselineOutcome:
    """Compare this run's models under test with the baseline and evaluate every regression gate.

    A suite scored with other metric definitions in the baseline (``--mirage-scoring``) is an error:
    citation and language values differ between the definitions, so their deltas would be too."""
    s = ctx.settings
    candidate = [r for r in results if r.outcome != "reference"]
    for ref in sorted({r.suite_ref for r in candidate}):
        suite = ctx.suite(ref)
        before, now = baseline.scorings.get(suite.name), ctx.scoring(suite)
        if (before or "default") != now:
            raise ConfigError(f"--mirage-baseline {path}: suite {suite.name} was scored with scoring "
                              f"{before or 'default'!r} there and with {now!r} in this run; the citation and "
                              f"language metrics differ between the two: run with --mirage-scoring "
                              f"{before or 'default'}, or save a new baseline")
    # the baseline's values were stored at the report's precision: compare this run's at the same one,
    # or a run compared with its own report shows rounding residues as (significant) differences
    records = [replace(r, metrics={k: report_value(v) for k, v in r.metrics.items()})
               for r in to_records(candidate, "this run's results")]
    try:
        comparison = compare_runs(baseline.records, records, model_map=s.baseline_map, alpha=s.alpha, seed=s.seed,
                                  method=s.paired_test)
    except StatsError as exc:
        raise ConfigError(f"--mirage-baseline {path}: {exc}") from None
    gates: list[RegressionGate] = list(s.regressions)
    for ref in sorted({r.suite_ref for r in candidate}):
        gates += ctx.rules(ctx.suite(ref)).regressions
    results_ = evaluate_regression_gates(comparison, gates, alpha=s.alpha) if gates else []
    return BaselineOutcome(path, comparison, tuple(results_))
