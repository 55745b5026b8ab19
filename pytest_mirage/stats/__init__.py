"""The statistics of pytest-mirage in one place (pure: numpy, plus scipy.special inside the few
functions that need a t or binomial tail; no pytest).

* :mod:`.intervals`: Wilson intervals for pass rates, percentile bootstrap intervals for means
  (one group, many groups at once, clustered by case for repeated samples).
* :mod:`.power`: minimum detectable effects and the cases / labels a team needs.
* :mod:`.paired` and :mod:`.gates`: baseline comparison (paired deltas, bootstrap intervals,
  paired tests) and regression gates with Holm's correction.
* :mod:`.repeats`: repeated sampling (pass rate, pass^N, pass^k, flaky cases).
* :mod:`.calibration` and :mod:`.labels`: judge agreement with human labels and the
  prediction-powered (PPI) mean of ARES §3.3; the label file format and its loader.
* :mod:`.headtohead`: wins / ties / losses, sign test and Wilson win rate, for cases and battles.
* :mod:`.sampling`: a seeded, stable subset of cases per suite x language.

docs/statistics.md explains what each number means and when to use it.
"""

from __future__ import annotations

from ._common import StatsError
from .calibration import (
    Agreement,
    Calibration,
    CalibrationBin,
    GroupCalibration,
    PPIEstimate,
    calibrate,
    calibration_table,
    cohen_kappa,
    judge_agreement,
    ppi_mean,
    roc_auc,
)
from .gates import (
    RegressionGate,
    RegressionGateResult,
    evaluate_regression_gates,
    holm_adjust,
    parse_regression_gate,
)
from .headtohead import HeadToHead, battle_head_to_head, compare_values, head_to_head, sign_test
from .intervals import (
    Interval,
    bootstrap_mean_ci,
    bootstrap_mean_cis,
    clustered_bootstrap_ci,
    normal_interval,
    pass_rate_interval,
    wilson_interval,
)
from .labels import Label, LabelError, LabelSet, load_labels
from .paired import CaseChange, Comparison, ComparisonRow, TestResult, compare_runs, paired_test
from .power import (
    DEFAULT_SIGMA,
    Detectable,
    cases_needed,
    detectable_effects,
    labels_needed,
    minimum_detectable_effect,
    paired_sigma,
)
from .records import CaseRecord, records_from_report, to_records
from .repeats import (
    CaseRepeats,
    RepeatSummary,
    case_repeats,
    pass_hat_k,
    samples_by_case,
    summarize_repeats,
)
from .sampling import Sample, parse_sample, sample_cases

__all__ = [
    "DEFAULT_SIGMA",
    "Agreement",
    "Calibration",
    "CalibrationBin",
    "CaseChange",
    "CaseRecord",
    "CaseRepeats",
    "Comparison",
    "ComparisonRow",
    "Detectable",
    "GroupCalibration",
    "HeadToHead",
    "Interval",
    "Label",
    "LabelError",
    "LabelSet",
    "PPIEstimate",
    "RegressionGate",
    "RegressionGateResult",
    "RepeatSummary",
    "Sample",
    "StatsError",
    "TestResult",
    "battle_head_to_head",
    "bootstrap_mean_ci",
    "bootstrap_mean_cis",
    "calibrate",
    "calibration_table",
    "case_repeats",
    "cases_needed",
    "clustered_bootstrap_ci",
    "cohen_kappa",
    "compare_runs",
    "compare_values",
    "detectable_effects",
    "evaluate_regression_gates",
    "head_to_head",
    "holm_adjust",
    "judge_agreement",
    "labels_needed",
    "load_labels",
    "minimum_detectable_effect",
    "normal_interval",
    "paired_sigma",
    "paired_test",
    "parse_regression_gate",
    "parse_sample",
    "pass_hat_k",
    "pass_rate_interval",
    "ppi_mean",
    "records_from_report",
    "roc_auc",
    "sample_cases",
    "samples_by_case",
    "sign_test",
    "summarize_repeats",
    "to_records",
    "wilson_interval",
]
