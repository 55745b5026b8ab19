"""The statistics of pytest-mirage in one place (pure: numpy, plus scipy.special inside the few
functions that need a t or binomial tail; no pytest).

* :mod:`.intervals`: Wilson intervals for pass rates, percentile bootstrap intervals for means
  (one group, many groups at once, clustered by case for repeated samples).
* :mod:`.power`: minimum detectable effects and the cases / labels a team needs.
* :mod:`.paired`: baseline comparison (paired deltas, bootstrap intervals, paired tests); the
  regression gates on it, with Holm's correction, are :mod:`pytest_mirage.aggregate.regression`.
* :mod:`.repeats`: repeated sampling (pass rate, pass^N, pass^k, flaky cases).
* :mod:`.calibration` and :mod:`.labels`: judge agreement with human labels and the
  prediction-powered (PPI) mean of ARES §3.3; the label file format and its loader.
* :mod:`.signals`: faithfulness signals against the answers' faithfulness labels (ROC AUC,
  precision / recall / F1 of flagging at a threshold, the threshold for a chosen precision).
* :mod:`.headtohead`: wins / ties / losses, sign test and Wilson win rate, for cases and battles.
* :mod:`.sampling`: a seeded, stable subset of cases per suite x language.

docs/statistics.md explains what each number means and when to use it.

Names are imported on first use (``from pytest_mirage.stats import paired_test``), so that a
module needing one light part (``stats.sampling``) does not load numpy through this package.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE: dict[str, str] = {
    "Agreement": "calibration",
    "Calibration": "calibration",
    "CalibrationBin": "calibration",
    "CaseChange": "paired",
    "CaseRecord": "records",
    "CaseRepeats": "repeats",
    "Comparison": "paired",
    "ComparisonRow": "paired",
    "DEFAULT_SIGMA": "power",
    "Detectable": "power",
    "GroupCalibration": "calibration",
    "HeadToHead": "headtohead",
    "Interval": "intervals",
    "Label": "labels",
    "LabelError": "labels",
    "LabelSet": "labels",
    "PPIEstimate": "calibration",
    "RepeatSummary": "repeats",
    "Sample": "sampling",
    "SignalCalibration": "signals",
    "StatsError": "_common",
    "TestResult": "paired",
    "battle_head_to_head": "headtohead",
    "bootstrap_mean_ci": "intervals",
    "bootstrap_mean_cis": "intervals",
    "calibrate": "calibration",
    "calibrate_signals": "signals",
    "calibration_table": "calibration",
    "case_repeats": "repeats",
    "cases_needed": "power",
    "clustered_bootstrap_ci": "intervals",
    "cohen_kappa": "calibration",
    "compare_runs": "paired",
    "compare_values": "headtohead",
    "detectable_effects": "power",
    "head_to_head": "headtohead",
    "judge_agreement": "calibration",
    "labels_needed": "power",
    "load_labels": "labels",
    "minimum_detectable_effect": "power",
    "normal_interval": "intervals",
    "paired_sigma": "power",
    "paired_test": "paired",
    "parse_sample": "sampling",
    "pass_hat_k": "repeats",
    "pass_rate_interval": "intervals",
    "ppi_mean": "calibration",
    "records_from_report": "records",
    "roc_auc": "calibration",
    "sample_cases": "sampling",
    "samples_by_case": "repeats",
    "sign_test": "headtohead",
    "summarize_repeats": "repeats",
    "threshold_for_precision": "signals",
    "to_records": "records",
    "wilson_interval": "intervals",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(_WHERE)


__all__ = sorted(_WHERE)
