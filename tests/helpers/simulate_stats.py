"""Seeded simulations that validate the gates and intervals (used by the tests and the benchmark).

Paired runs. Each simulated suite draws a latent quality per case, ``q_i ~ Beta(2, 1)`` (mean
2/3: most cases are easy, some are hard), and each run of a system scores a case
``Beta(kappa q_i, kappa (1 - q_i))``: mean ``q_i``, spread set by ``kappa`` (run-to-run noise of the
model and its judge; ``kappa -> 0`` is a pass/fail metric, ``kappa = 2`` gives a per-case
difference between two runs with standard deviation ~0.33). The candidate's scores are multiplied
by ``1 - drop / E[q]``, so its expected mean is exactly ``drop`` below the baseline's while every
value stays in [0, 1].

Judge calibration. Per case a true 0/1 label ``y ~ Bernoulli(truth)``; a lenient 0/1 judge says
1 on a true 1 with probability ``sensitivity`` and on a true 0 with the probability that makes its
mean exactly ``bias`` above the truth (``bias=0.1``, ``sensitivity=0.95``, ``truth=0.6``: false
positives on 32.5% of the true 0s, accuracy 0.84). The PPI interval must cover ``truth`` about 95%
of the time; a judge-only interval, centred on the biased judge mean, must not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pytest_mirage.aggregate.expr import RegressionGate
from pytest_mirage.aggregate.regression import evaluate_regression_gates
from pytest_mirage.stats._common import DEFAULT_ALPHA, StatsError, check_count
from pytest_mirage.stats.calibration import ppi_mean
from pytest_mirage.stats.intervals import normal_interval
from pytest_mirage.stats.paired import compare_runs

QUALITY_A, QUALITY_B = 2.0, 1.0
QUALITY_MEAN = QUALITY_A / (QUALITY_A + QUALITY_B)
DEFAULT_KAPPA = 2.0


def simulate_paired_scores(n_cases: int, drop: float, *, kappa: float = DEFAULT_KAPPA,
                           seed: int = 0) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per-case scores of a baseline run and a candidate run whose true mean is ``drop`` lower."""
    n = check_count(n_cases, "n_cases")
    if not 0.0 <= drop < QUALITY_MEAN or kappa <= 0:
        raise StatsError(f"drop={drop!r} must lie in [0, {QUALITY_MEAN:.3f}) and kappa={kappa!r} be > 0")
    rng = np.random.default_rng(seed)
    q = rng.beta(QUALITY_A, QUALITY_B, size=n)
    a, b = kappa * q, kappa * (1.0 - q)
    a, b = np.maximum(a, 1e-9), np.maximum(b, 1e-9)
    base = rng.beta(a, b)
    cand = rng.beta(a, b) * (1.0 - drop / QUALITY_MEAN)
    return base, cand


def _records(values: NDArray[np.float64], model: str) -> list[dict[str, object]]:
    return [{"suite": "sim", "case_id": f"c{i:05d}", "lang": "hi", "model": model,
             "metrics": {"score": float(v)}, "outcome": "passed"} for i, v in enumerate(values)]


@dataclass(frozen=True, slots=True)
class FlagRate:
    runs: int
    flagged: int
    rate: float
    mean_delta: float

    def to_json(self) -> dict[str, float | int]:
        return {"runs": self.runs, "flagged": self.flagged, "rate": self.rate, "mean_delta": self.mean_delta}


def regression_flag_rate(*, runs: int = 200, n_cases: int = 500, drop: float = 0.05, allowed: float = 0.0,
                         kappa: float = DEFAULT_KAPPA, alpha: float = DEFAULT_ALPHA, method: str = "t",
                         n_boot: int = 200, seed: int = 0) -> FlagRate:
    """Share of simulated runs in which ``score.mean@hi drop <= allowed`` fails, through the full
    path (records -> :func:`compare_runs` -> :func:`evaluate_regression_gates`)."""
    r = check_count(runs, "runs")
    gate = RegressionGate(metric="score", max_change=allowed, lang="hi", expr=f"score.mean@hi drop <= {allowed:g}")
    flagged = 0
    deltas = []
    for k in range(r):
        base, cand = simulate_paired_scores(n_cases, drop, kappa=kappa, seed=seed * 1_000_003 + k)
        comp = compare_runs(_records(base, "prod"), _records(cand, "prod"), alpha=alpha, n_boot=n_boot,
                            seed=k, method=method, include_all=False)
        (res,) = evaluate_regression_gates(comp, [gate])
        flagged += bool(res.failed)
        deltas.append(float(cand.mean() - base.mean()))
    return FlagRate(r, flagged, flagged / r, float(np.mean(deltas)))


@dataclass(frozen=True, slots=True)
class Coverage:
    runs: int
    ppi: float
    judge_only: float
    labels_only: float
    ppi_width: float
    labels_only_width: float

    def to_json(self) -> dict[str, float | int]:
        return {"runs": self.runs, "ppi": self.ppi, "judge_only": self.judge_only,
                "labels_only": self.labels_only, "ppi_width": self.ppi_width,
                "labels_only_width": self.labels_only_width}


def simulate_judged(n_cases: int, n_labels: int, *, truth: float = 0.6, sensitivity: float = 0.95,
                    bias: float = 0.1, seed: int = 0) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """(judge verdicts on all cases, true labels of the first ``n_labels`` cases, all true labels)."""
    false_positive = (bias + truth * (1.0 - sensitivity)) / (1.0 - truth)
    if not 0.0 <= false_positive <= 1.0:
        raise StatsError(f"no judge with sensitivity {sensitivity} has bias {bias} at truth {truth}")
    rng = np.random.default_rng(seed)
    y = (rng.random(n_cases) < truth).astype(np.float64)
    u = rng.random(n_cases)
    judge = np.where(y == 1.0, u < sensitivity, u < false_positive).astype(np.float64)
    return judge, y[:n_labels], y


def ppi_coverage(*, runs: int = 200, n_cases: int = 2000, n_labels: int = 200, truth: float = 0.6,
                 sensitivity: float = 0.95, bias: float = 0.1, alpha: float = DEFAULT_ALPHA, seed: int = 0) -> Coverage:
    """Coverage of the true mean ``truth`` by the PPI interval, the judge-only normal interval and
    the labels-only normal interval over ``runs`` simulated suites."""
    r = check_count(runs, "runs")
    hits = {"ppi": 0, "judge": 0, "labels": 0}
    widths: dict[str, list[float]] = {"ppi": [], "labels": []}
    for k in range(r):
        judge, labels, _ = simulate_judged(n_cases, n_labels, truth=truth, sensitivity=sensitivity, bias=bias,
                                           seed=seed * 1_000_003 + k)
        est = ppi_mean(judge, labels, judge[:n_labels], alpha=alpha)
        jo = normal_interval(float(judge.mean()), float(judge.std() / np.sqrt(judge.size)), alpha=alpha)
        lo = normal_interval(float(labels.mean()), float(labels.std() / np.sqrt(labels.size)), alpha=alpha)
        hits["ppi"] += est.interval.contains(truth)
        hits["judge"] += jo.contains(truth)
        hits["labels"] += lo.contains(truth)
        widths["ppi"].append(est.interval.high - est.interval.low)
        widths["labels"].append(lo.high - lo.low)
    return Coverage(r, hits["ppi"] / r, hits["judge"] / r, hits["labels"] / r,
                    float(np.mean(widths["ppi"])), float(np.mean(widths["labels"])))
