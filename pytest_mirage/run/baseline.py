"""Comparison with a baseline run: per-case pairing, deltas with intervals and p-values, and the
regression gates (Holm-corrected) of this run. The statistics live in :mod:`pytest_mirage.stats`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError
from ..results import CaseResult
from ..stats import StatsError
from ..stats.gates import RegressionGate, RegressionGateResult, evaluate_regression_gates
from ..stats.paired import Comparison, compare_runs
from ..stats.records import CaseRecord, records_from_report
from .context import RunContext


def load_baseline(path: Path, source: str = "--mirage-baseline") -> list[CaseRecord]:
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
        return [r for r in records_from_report(data, f"{source} {path}") if r.outcome != "reference"]
    except StatsError as exc:
        raise ConfigError(str(exc)) from None


@dataclass(frozen=True, slots=True)
class BaselineOutcome:
    path: Path
    comparison: Comparison
    regressions: tuple[RegressionGateResult, ...]


def compare_with_baseline(ctx: RunContext, path: Path, baseline: Sequence[CaseRecord],
                          results: Sequence[CaseResult]) -> BaselineOutcome:
    """Compare this run's models under test with the baseline and evaluate every regression gate."""
    s = ctx.settings
    candidate = [r for r in results if r.outcome != "reference"]
    try:
        comparison = compare_runs(baseline, candidate, model_map=s.baseline_map, alpha=s.alpha, seed=s.seed,
                                  method=s.paired_test)
    except StatsError as exc:
        raise ConfigError(f"--mirage-baseline {path}: {exc}") from None
    gates: list[RegressionGate] = list(s.regressions)
    for ref in sorted({r.suite_ref for r in candidate}):
        gates += ctx.rules(ctx.suite(ref)).regressions
    results_ = evaluate_regression_gates(comparison, gates, alpha=s.alpha) if gates else []
    return BaselineOutcome(path, comparison, tuple(results_))
