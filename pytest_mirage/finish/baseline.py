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


def load_baseline(path: Path, source: str = "--mirage-baseline") -> Baseline:
    """The case records of a saved JSON report; errors name the file and what is wrong."""
    try:
        data = json.loads(path.read_bytes())
    except OSError as exc:
        raise ConfigError(f"{source} {path}: cannot read it ({exc.strerror or exc}); expected a JSON report "
                          "written by --mirage-report") from None
    except ValueError as exc:
        raise ConfigError(f"{source} {path}: not JSON ({exc}); expected a JSON report written by --mirage-report") \
            from None
    if not isinstance(data, dict) or not str(data.get("schema", "")).startswith("pytest-mirage/report/"):
        raise ConfigError(f"{source} {path}: not a pytest-mirage report (no 'schema': "
                          "'pytest-mirage/report/1'); save a run with --mirage-report PATH")
    try:
        records = [r for r in records_from_report(data, f"{source} {path}") if r.outcome != "reference"]
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
