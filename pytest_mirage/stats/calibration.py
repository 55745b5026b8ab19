"""Judge calibration against human labels (ARES §3.3): agreement, and prediction-powered means.

A judge (an LLM or NLI scorer producing a metric) is cheap to run on every case but biased; human
labels are unbiased but few. Prediction-powered inference (PPI, Angelopoulos et al. 2023) combines
them: with judge scores ``f`` on all ``N`` cases and human labels ``y`` on ``n`` of them,

    theta_PP = mean_N(f) + mean_n(y - f)
    se^2     = var_N(f) / N + var_n(y - f) / n          (population variances, ddof = 0)

and ``theta_PP ± z_{1-alpha/2} se`` is an asymptotically valid interval for the true mean of ``y``
over the cases: the second term (the "rectifier") removes the judge's bias, measured where labels
exist. These are the numbers of ``ppi_py.ppi_mean_ci(..., lam=1)`` (plain PPI, no power tuning),
which the tests check to 1e-9.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._common import DEFAULT_ALPHA, StatsError, check_alpha, check_count, vector
from .intervals import Interval, normal_interval
from .labels import Label, LabelSet
from .records import to_record

DEFAULT_BINS = 10
DEFAULT_THRESHOLD = 0.5


def _f(v: float) -> float | None:
    return None if math.isnan(v) else v


# ---------------------------------------------------------------- agreement


@dataclass(frozen=True, slots=True)
class CalibrationBin:
    """Labelled rows whose judge score fell in ``[low, high)`` (the last bin includes ``high``)."""

    low: float
    high: float
    n: int
    mean_score: float
    label_rate: float

    def to_json(self) -> dict[str, Any]:
        return {"low": self.low, "high": self.high, "n": self.n, "mean_score": _f(self.mean_score),
                "label_rate": _f(self.label_rate)}


@dataclass(frozen=True, slots=True)
class Agreement:
    """How a judge agrees with human labels on the labelled rows.

    ``accuracy`` and Cohen's ``kappa`` compare the judge's verdict (score >= ``threshold``) with
    the label (>= 0.5 for graded labels); ``roc_auc`` is the probability that a random positive
    row gets a higher judge score than a random negative one (ties count half); ``ece`` is the
    expected calibration error of the table ``bins`` (mean |score - label rate|, weighted by rows).
    A statistic that is undefined on these rows (one class only) is NaN with a ``note``.
    """

    n: int
    positives: int
    accuracy: float
    kappa: float
    roc_auc: float
    ece: float
    threshold: float
    bins: tuple[CalibrationBin, ...]
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, "positives": self.positives, "accuracy": _f(self.accuracy),
                "kappa": _f(self.kappa), "roc_auc": _f(self.roc_auc), "ece": _f(self.ece),
                "threshold": self.threshold, "bins": [b.to_json() for b in self.bins], "note": self.note or None}


def roc_auc(labels: ArrayLike, scores: ArrayLike) -> float:
    """Area under the ROC curve (Mann-Whitney U / (n1 n0), average ranks for tied scores); NaN when
    only one class is present."""
    y = vector(labels, "labels") >= 0.5
    s = vector(scores, "scores")
    if y.shape != s.shape:
        raise StatsError(f"labels and scores differ in length ({y.size} and {s.size})")
    n1 = int(y.sum())
    n0 = int(y.size - n1)
    if n1 == 0 or n0 == 0:
        return math.nan
    _, inverse, counts = np.unique(s, return_inverse=True, return_counts=True)
    first = np.cumsum(counts) - counts  # 0-based position of each distinct score's first row
    ranks = (first + (counts + 1) / 2.0)[inverse]
    return float((ranks[y].sum() - n1 * (n1 + 1) / 2.0) / (n1 * n0))


def cohen_kappa(a: ArrayLike, b: ArrayLike) -> float:
    """Cohen's kappa of two 0/1 raters: (p_o - p_e) / (1 - p_e); NaN when p_e = 1."""
    x = vector(a, "a") >= 0.5
    y = vector(b, "b") >= 0.5
    if x.shape != y.shape or x.size == 0:
        raise StatsError(f"cohen_kappa needs two non-empty ratings of equal length; got {x.size} and {y.size}")
    po = float(np.mean(x == y))
    px, py = float(x.mean()), float(y.mean())
    pe = px * py + (1 - px) * (1 - py)
    if pe >= 1.0:
        return math.nan
    return (po - pe) / (1.0 - pe)


def calibration_table(labels: ArrayLike, scores: ArrayLike, *, bins: int = DEFAULT_BINS) -> tuple[CalibrationBin, ...]:
    """Equal-width bins over [0, 1] (widened to the scores' range if they leave it)."""
    y = vector(labels, "labels")
    s = vector(scores, "scores")
    k = check_count(bins, "bins")
    lo, hi = min(0.0, float(s.min(initial=0.0))), max(1.0, float(s.max(initial=1.0)))
    edges = np.linspace(lo, hi, k + 1)
    idx = np.minimum(((s - lo) / (hi - lo) * k).astype(np.int64), k - 1)
    out = []
    for b in range(k):
        m = idx == b
        n = int(m.sum())
        out.append(CalibrationBin(float(edges[b]), float(edges[b + 1]), n,
                                  float(s[m].mean()) if n else math.nan, float(y[m].mean()) if n else math.nan))
    return tuple(out)


def judge_agreement(labels: ArrayLike, scores: ArrayLike, *, threshold: float = DEFAULT_THRESHOLD,
                    bins: int = DEFAULT_BINS) -> Agreement:
    """Agreement of judge ``scores`` with human ``labels`` on the same rows."""
    y = vector(labels, "labels")
    s = vector(scores, "scores")
    if y.shape != s.shape:
        raise StatsError(f"labels and scores differ in length ({y.size} and {s.size})")
    if y.size == 0:
        raise StatsError("judge agreement needs at least one labelled row")
    if not math.isfinite(threshold):
        raise StatsError(f"threshold={threshold!r}; expected a finite number")
    truth = y >= 0.5
    verdict = s >= threshold
    notes = []
    if np.any((y != 0) & (y != 1)):
        notes.append("graded labels counted as 1 when >= 0.5 for accuracy, kappa and AUC")
    auc = roc_auc(truth.astype(float), s)
    if math.isnan(auc):
        notes.append("ROC AUC needs both positive and negative labels")
    kappa = cohen_kappa(verdict.astype(float), truth.astype(float))
    if math.isnan(kappa):
        notes.append("kappa is undefined when the judge and the labels are both constant and equal")
    table = calibration_table(y, s, bins=bins)
    filled = [b for b in table if b.n]
    ece = sum(b.n * abs(b.mean_score - b.label_rate) for b in filled) / y.size
    return Agreement(n=int(y.size), positives=int(truth.sum()), accuracy=float(np.mean(verdict == truth)),
                     kappa=kappa, roc_auc=auc, ece=float(ece), threshold=float(threshold), bins=table,
                     note="; ".join(notes))


# ---------------------------------------------------------------- PPI


@dataclass(frozen=True, slots=True)
class PPIEstimate:
    """The prediction-powered mean with its interval, and the pieces it is made of.

    ``judge_mean``: mean judge score over all ``n_all`` cases; ``rectifier``: mean(label - judge)
    over the ``n_labelled`` labelled cases (minus the judge's bias); ``interval``: PPI interval
    of ``judge_mean + rectifier``. ``judge_only``: the naive normal interval of the judge mean
    (what a team would report without labels); ``labels_only``: the classical interval from the
    labels alone. A gate should use ``interval.low``. ``raw``: the PPI interval before it was
    intersected with the bounds of the labels (``None`` when no bound was given or none cut it).
    """

    interval: Interval
    judge_mean: float
    rectifier: float
    se_judge: float
    se_rectifier: float
    n_all: int
    n_labelled: int
    judge_only: Interval
    labels_only: Interval
    raw: Interval | None = None

    @property
    def estimate(self) -> float:
        return self.interval.estimate

    def to_json(self) -> dict[str, Any]:
        return {"estimate": self.estimate, "low": self.interval.low, "high": self.interval.high,
                "level": self.interval.level, "judge_mean": self.judge_mean, "rectifier": self.rectifier,
                "se_judge": self.se_judge, "se_rectifier": self.se_rectifier, "n_all": self.n_all,
                "n_labelled": self.n_labelled, "judge_only": self.judge_only.to_json(),
                "labels_only": self.labels_only.to_json(), "raw": self.raw.to_json() if self.raw else None}


def ppi_mean(judge_all: ArrayLike, labels: ArrayLike, judge_labelled: ArrayLike, *,
             alpha: float = DEFAULT_ALPHA, bounds: tuple[float, float] | None = None) -> PPIEstimate:
    """PPI mean and ``1 - alpha`` interval (ARES §3.3; Angelopoulos et al. 2023, plain PPI).

    ``judge_all``: judge scores on every case of the group (labelled ones included, as ARES
    scores the whole evaluation set); ``labels[i]`` and ``judge_labelled[i]``: the human label
    and the judge score of the same labelled case.

    ``bounds``: the range the labels (so their mean, the estimand) lie in, e.g. ``(0, 1)``. The
    normal interval ignores it and can reach past it (a judge that scores 1 where the labels say
    0.9 moves the estimate, not the labels' range); the estimate and the interval ends are then
    moved to the nearest bound, which keeps the coverage (the true mean is inside the bounds) and
    never reports a rate above 1. The uncut interval stays in ``raw``.
    """
    a = check_alpha(alpha)
    f_all = vector(judge_all, "judge_all")
    y = vector(labels, "labels")
    f_lab = vector(judge_labelled, "judge_labelled")
    if y.shape != f_lab.shape:
        raise StatsError(f"labels ({y.size}) and judge_labelled ({f_lab.size}) must pair up one to one")
    if y.size < 2:
        raise StatsError(f"PPI needs at least 2 labelled cases; got {y.size} (ARES used 150-300)")
    if f_all.size < 1:
        raise StatsError("PPI needs judge scores on at least one case")
    n_all, n = int(f_all.size), int(y.size)
    judge_mean = float(f_all.mean())
    rect = y - f_lab
    rectifier = float(rect.mean())
    se_j = float(f_all.std()) / math.sqrt(n_all)
    se_r = float(rect.std()) / math.sqrt(n)
    est = judge_mean + rectifier
    iv = normal_interval(est, math.sqrt(se_j ** 2 + se_r ** 2), alpha=a, n=n)
    ppi = Interval(est, iv.low, iv.high, n, iv.level, "ppi")
    judge_only = normal_interval(judge_mean, se_j, alpha=a, n=n_all)
    labels_only = normal_interval(float(y.mean()), float(y.std()) / math.sqrt(n), alpha=a, n=n)
    raw: Interval | None = None
    if bounds is not None:
        lo, hi = bounds
        if lo > hi:
            raise StatsError(f"bounds must be (low, high) with low <= high; got {bounds}")
        cut = Interval(min(max(est, lo), hi), min(max(ppi.low, lo), hi), min(max(ppi.high, lo), hi), n,
                       ppi.level, "ppi")
        if cut != ppi:
            raw, ppi = ppi, cut
    return PPIEstimate(ppi, judge_mean, rectifier, se_j, se_r, n_all, n, judge_only, labels_only, raw)


# ---------------------------------------------------------------- run x labels


@dataclass(frozen=True, slots=True)
class UnmatchedLabel:
    """A label that could not be used, and why (never dropped silently)."""

    where: str
    case_id: str
    model: str
    metric: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"where": self.where, "case_id": self.case_id, "model": self.model, "metric": self.metric,
                "reason": self.reason}


@dataclass(frozen=True, slots=True)
class GroupCalibration:
    """Judge ``metric`` of ``model`` on ``suite``: PPI mean (None below 2 matched labels)."""

    suite: str
    model: str
    metric: str
    ppi: PPIEstimate | None
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"suite": self.suite, "model": self.model, "metric": self.metric,
                "ppi": None if self.ppi is None else self.ppi.to_json(), "note": self.note or None}


@dataclass(frozen=True, slots=True)
class MetricAgreement:
    """A judge's agreement with the labels of one suite, pooled over models."""

    suite: str
    metric: str
    agreement: Agreement

    def to_json(self) -> dict[str, Any]:
        return {"suite": self.suite, "metric": self.metric, **self.agreement.to_json()}


@dataclass(frozen=True, slots=True)
class Calibration:
    agreements: tuple[MetricAgreement, ...]
    groups: tuple[GroupCalibration, ...]
    unmatched: tuple[UnmatchedLabel, ...]

    def group(self, suite: str, model: str, metric: str) -> GroupCalibration | None:
        return next((g for g in self.groups if (g.suite, g.model, g.metric) == (suite, model, metric)), None)

    def to_json(self) -> dict[str, Any]:
        return {"agreement": [a.to_json() for a in self.agreements], "ppi": [g.to_json() for g in self.groups],
                "unmatched_labels": [u.to_json() for u in self.unmatched]}


def calibrate(records: Iterable[Any], labels: LabelSet | Sequence[Label], *, suite: str | None = None,
              alpha: float = DEFAULT_ALPHA, threshold: float = DEFAULT_THRESHOLD,
              bins: int = DEFAULT_BINS) -> Calibration:
    """Join a suite's labels with a run's per-case judge values and calibrate every labelled judge.

    ``records``: the run's results (JSON report entries or ``CaseResult``); only the suite of the
    labels is used (``suite`` or ``labels.suite``). A case's judge value is the mean over its
    repeats; errored cases and null values have none. Per labelled metric: the agreement pooled
    over models, and per model the PPI mean over all that model's cases with a judge value. A label
    whose case, model or judge value is missing from the run is listed in ``unmatched``.
    """
    a = check_alpha(alpha)
    label_rows = tuple(labels.labels if isinstance(labels, LabelSet) else labels)
    source = labels.path if isinstance(labels, LabelSet) else "labels"
    name = suite if suite is not None else (labels.suite if isinstance(labels, LabelSet) else None)
    if name is None:
        raise StatsError("calibrate: say which suite the labels belong to (suite=...)")
    metrics = sorted({lb.metric for lb in label_rows})
    values: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    cases: dict[str, set[str]] = defaultdict(set)  # model -> case ids in the run
    for i, raw in enumerate(records):
        r = to_record(raw, "results", i)
        if r.suite != name:
            continue
        cases[r.model].add(r.case_id)
        for m in metrics:
            v = r.value(m)
            if v is not None:
                values[(r.model, m)][r.case_id].append(v)
    unmatched: list[UnmatchedLabel] = []
    matched: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    for lb in label_rows:
        where = f"{source}:{lb.line}" if lb.line else source
        if lb.model not in cases:
            reason = f"model {lb.model!r} is not in this run of suite {name!r}"
        elif lb.case_id not in cases[lb.model]:
            reason = f"case {lb.case_id!r} was not run for model {lb.model!r} (deselected or removed?)"
        elif lb.case_id not in values[(lb.model, lb.metric)]:
            reason = f"no {lb.metric} value for this case (null, or the case errored)"
        else:
            judge = float(np.mean(values[(lb.model, lb.metric)][lb.case_id]))
            matched[(lb.model, lb.metric)].append((lb.label, judge))
            continue
        unmatched.append(UnmatchedLabel(where, lb.case_id, lb.model, lb.metric, reason))
    agreements: list[MetricAgreement] = []
    for m in metrics:
        rows = [p for (model, metric), ps in sorted(matched.items()) if metric == m for p in ps]
        if rows:
            y, s = np.array(rows).T
            agreements.append(MetricAgreement(name, m, judge_agreement(y, s, threshold=threshold, bins=bins)))
    groups: list[GroupCalibration] = []
    for (model, m) in sorted({(lb.model, lb.metric) for lb in label_rows if lb.model in cases}):
        pairs = matched.get((model, m), [])
        all_vals = np.array([float(np.mean(v)) for _, v in sorted(values[(model, m)].items())])
        if len(pairs) < 2:
            groups.append(GroupCalibration(name, model, m, None,
                                           f"{len(pairs)} usable label{'s' * (len(pairs) != 1)}; PPI needs at least 2"))
            continue
        y, s = np.array(pairs).T
        # labels are 0/1 or fractions in [0, 1] (read_labels checks): so is their mean
        groups.append(GroupCalibration(name, model, m, ppi_mean(all_vals, y, s, alpha=a, bounds=(0.0, 1.0))))
    return Calibration(tuple(agreements), tuple(groups), tuple(unmatched))

