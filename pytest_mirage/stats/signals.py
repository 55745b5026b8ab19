"""Faithfulness signals against a team's own human labels: ROC AUC, precision / recall / F1 at the
configured threshold, and the threshold that reaches a chosen precision (docs/judges.md,
"Calibrating against your labels").

**Polarity.** A label says whether a person found the answer *faithful*: ``1`` = faithful (every
statement supported by the passages), ``0`` = unfaithful; a graded label counts as faithful at
``>= 0.5``. A signal's score is higher for more faithful answers. ROC AUC treats faithful answers as
positives (the probability that a random faithful answer scores above a random unfaithful one, ties
half); precision, recall and F1 are those of *flagging* unfaithful answers, as a threshold does:
an answer is flagged when its score fails the threshold (``score < t`` for ``metric >= t``,
``score <= t`` for ``metric > t``), so

    precision = flagged unfaithful / flagged        recall = flagged unfaithful / unfaithful
    F1 = 2 TP / (2 TP + FP + FN)

(``TP`` flagged unfaithful, ``FP`` flagged faithful, ``FN`` unflagged unfaithful). Precision is
undefined (NaN) when nothing is flagged, recall when no answer is unfaithful, F1 when neither.

**Threshold for a precision.** Among the thresholds halfway between two consecutive distinct scores
(flag every answer at or below the lower one), the one with the highest recall whose precision is
at least the target (equal recall: the higher precision, i.e. the lower threshold). A threshold
that flags every labelled answer is not offered; when none reaches the target the result is
"not reachable" (NaN threshold).

Pure numerics (numpy); no pytest. :func:`label_rows` joins a label file with a run's results.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._common import StatsError, vector
from .calibration import roc_auc
from .labels import Label
from .records import to_record

ALL_LANGS = "all"


def _f(v: float) -> float | None:
    return None if math.isnan(v) else v


def _nan(v: float | None) -> float:
    return math.nan if v is None else v


@dataclass(frozen=True, slots=True)
class FlagStats:
    """Flagging unfaithful answers at one threshold (see the module doc)."""

    flagged: int
    precision: float
    recall: float
    f1: float


def flag_stats(faithful: ArrayLike, flagged: ArrayLike) -> FlagStats:
    """Precision, recall and F1 of ``flagged`` (bool per answer) against ``faithful`` (bool per
    answer, the human label); the positive class is *unfaithful*."""
    y = np.asarray(faithful, dtype=bool)
    f = np.asarray(flagged, dtype=bool)
    if y.shape != f.shape or y.ndim != 1:
        raise StatsError(f"faithful and flagged must be 1-d and of one length ({y.shape} and {f.shape})")
    tp = int((f & ~y).sum())
    fp = int((f & y).sum())
    fn = int((~f & ~y).sum())
    precision = tp / (tp + fp) if tp + fp else math.nan
    recall = tp / (tp + fn) if tp + fn else math.nan
    f1 = 2 * tp / (2 * tp + fp + fn) if 2 * tp + fp + fn else math.nan
    return FlagStats(tp + fp, precision, recall, f1)


def flagged_by(scores: ArrayLike, threshold: ArrayLike, *, strict: ArrayLike = False) -> Any:
    """Which answers a threshold fails: ``score < t`` (``metric >= t``), or ``score <= t`` with
    ``strict`` (``metric > t``). ``threshold`` and ``strict``: one value or one per answer."""
    s = vector(scores, "scores")
    t = np.broadcast_to(np.asarray(threshold, dtype=np.float64), s.shape)
    st = np.broadcast_to(np.asarray(strict, dtype=bool), s.shape)
    return np.where(st, s <= t, s < t)


@dataclass(frozen=True, slots=True)
class PrecisionThreshold:
    """The threshold that reaches ``target`` precision with the highest recall (NaN: not reachable)."""

    target: float
    threshold: float
    precision: float
    recall: float
    flagged: int

    @property
    def reachable(self) -> bool:
        return not math.isnan(self.threshold)


def threshold_for_precision(faithful: ArrayLike, scores: ArrayLike, target: float) -> PrecisionThreshold:
    """See the module doc. ``faithful``: bool per answer; ``scores``: the signal per answer."""
    if not 0.0 < target <= 1.0:
        raise StatsError(f"target precision {target!r}; expected a number in (0, 1], e.g. 0.9")
    y = np.asarray(faithful, dtype=bool)
    s = vector(scores, "scores")
    if y.shape != s.shape:
        raise StatsError(f"faithful and scores differ in length ({y.size} and {s.size})")
    none = PrecisionThreshold(target, math.nan, math.nan, math.nan, 0)
    values, inverse = np.unique(s, return_inverse=True)
    if values.size < 2:
        return none
    unfaithful_at = np.bincount(inverse, weights=(~y).astype(np.float64), minlength=values.size)
    count_at = np.bincount(inverse, minlength=values.size).astype(np.float64)
    # candidate k flags every answer scoring values[0..k-1]: threshold halfway to values[k]
    tp = np.cumsum(unfaithful_at)[:-1]
    flagged = np.cumsum(count_at)[:-1]
    precision = tp / flagged
    total_unfaithful = float((~y).sum())
    if total_unfaithful == 0:
        return none
    recall = tp / total_unfaithful
    # a float tolerance: 9/10 must reach a target of 0.9
    ok = np.flatnonzero(precision >= target - 1e-12)
    if ok.size == 0:
        return none
    best = ok[np.lexsort((-precision[ok], -recall[ok]))[0]]
    t = float((values[best] + values[best + 1]) / 2.0)
    return PrecisionThreshold(target, t, float(precision[best]), float(recall[best]), int(flagged[best]))


# ---------------------------------------------------------------- a signal's row


@dataclass(frozen=True, slots=True)
class SignalCalibration:
    """One faithfulness signal of one suite in one language (``lang`` "all": the languages pooled)
    against the human labels.

    ``n``: labelled answers with a value (``faithful`` of them labelled faithful); ``nulls``:
    labelled answers without a value (a refusal, an errored case: left out, never scored 0).
    ``threshold``: the threshold the flags are counted at (NaN when the pooled languages have
    different ones, each answer then flagged at its own), ``threshold_source`` where it comes from.
    ``precision_threshold``: the threshold reaching ``target_precision`` (NaN: not reachable).
    """

    suite: str
    metric: str
    lang: str
    n: int
    faithful: int
    nulls: int
    roc_auc: float
    threshold: float
    strict: bool
    threshold_source: str
    flagged: int
    precision: float
    recall: float
    f1: float
    target_precision: float
    precision_threshold: float
    precision_recall: float
    note: str = ""

    @property
    def unfaithful(self) -> int:
        return self.n - self.faithful

    @property
    def reachable(self) -> bool:
        return not math.isnan(self.precision_threshold)

    def to_json(self) -> dict[str, Any]:
        return {"suite": self.suite, "metric": self.metric, "lang": self.lang, "n": self.n, "faithful": self.faithful,
                "nulls": self.nulls, "roc_auc": _f(self.roc_auc), "threshold": _f(self.threshold),
                "strict": self.strict, "threshold_source": self.threshold_source, "flagged": self.flagged,
                "precision": _f(self.precision), "recall": _f(self.recall), "f1": _f(self.f1),
                "target_precision": self.target_precision, "precision_threshold": _f(self.precision_threshold),
                "precision_recall": _f(self.precision_recall), "note": self.note or None}

    @classmethod
    def of(cls, suite: str, metric: str, lang: str, faithful: ArrayLike, scores: ArrayLike,
           thresholds: ArrayLike, *, strict: ArrayLike = False, threshold_source: str = "", nulls: int = 0,
           target_precision: float) -> SignalCalibration:
        """The row of ``scores`` (one per labelled answer with a value) against ``faithful``
        (bool per answer), flagged at ``thresholds`` and ``strict`` (one, or one per answer)."""
        y = np.asarray(faithful, dtype=bool)
        s = vector(scores, "scores")
        t = np.broadcast_to(np.asarray(thresholds, dtype=np.float64), s.shape)
        st = np.broadcast_to(np.asarray(strict, dtype=bool), s.shape)
        notes = []
        if s.size == 0:
            notes.append("no labelled answer has a value")
        elif y.all() or not y.any():
            notes.append(f"every labelled answer is {'faithful' if y.all() else 'unfaithful'}: ROC AUC undefined")
        auc = roc_auc(y.astype(np.float64), s) if s.size else math.nan
        uniform = s.size > 0 and bool((t == t.flat[0]).all()) and bool((st == st.flat[0]).all())
        if s.size and not uniform:
            notes.append("thresholds differ by language: each answer flagged at its language's")
        if s.size:
            fs = flag_stats(y, flagged_by(s, t, strict=st))
            pt = threshold_for_precision(y, s, target_precision)
        else:
            fs = FlagStats(0, math.nan, math.nan, math.nan)
            pt = PrecisionThreshold(target_precision, math.nan, math.nan, math.nan, 0)
        return cls(suite, metric, lang, int(s.size), int(y.sum()), nulls, auc,
                   float(t.flat[0]) if uniform else math.nan, bool(st.flat[0]) if uniform else False,
                   threshold_source, fs.flagged, fs.precision, fs.recall, fs.f1, target_precision, pt.threshold,
                   pt.recall, "; ".join(notes))


# ---------------------------------------------------------------- run x labels


@dataclass(frozen=True, slots=True)
class LabelledValue:
    """One labelled answer's value of one signal (None: null for this answer)."""

    metric: str
    lang: str
    case_id: str
    model: str
    faithful: bool
    value: float | None


@dataclass(frozen=True, slots=True)
class Threshold:
    """The threshold a signal's flags are counted at, in one language."""

    value: float
    strict: bool = False
    source: str = "default"


@dataclass(frozen=True, slots=True)
class Joined:
    rows: tuple[LabelledValue, ...]
    conflicts: tuple[str, ...] = field(default_factory=tuple)  # answers whose labels disagree: left out


def label_rows(records: Iterable[Any], labels: Sequence[Label], *, suite: str, signals: Sequence[str],
               where: str = "labels") -> Joined:
    """Every labelled answer x signal of ``suite``: the answer's faithfulness label (a label of any
    signal in ``signals``; one answer's labels must agree) and the signal's value (the mean over
    its repeats; None when null or errored). Labels of answers not in the run are left to
    :func:`~pytest_mirage.stats.calibration.calibrate`, which lists them."""
    wanted = set(signals)
    by_answer: dict[tuple[str, str], list[Label]] = defaultdict(list)
    for lb in labels:
        if lb.metric in wanted:
            by_answer[(lb.case_id, lb.model)].append(lb)
    truth: dict[tuple[str, str], bool] = {}
    conflicts: list[str] = []
    for key, lbs in sorted(by_answer.items()):
        verdicts = {lb.label >= 0.5 for lb in lbs}
        if len(verdicts) > 1:
            lines = ", ".join(f"{where}:{lb.line} {lb.metric}={lb.label:g}" for lb in lbs)
            conflicts.append(f"case {key[0]!r}, model {key[1]!r}: its faithfulness labels disagree ({lines}); "
                             "keep one verdict per answer")
        else:
            truth[key] = verdicts.pop()
    values: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    seen: dict[tuple[str, str], str] = {}
    for i, raw in enumerate(records):
        r = to_record(raw, "results", i)
        key = (r.case_id, r.model)
        if r.suite != suite or key not in truth:
            continue
        seen[key] = r.lang
        for m in signals:
            v = r.value(m)
            if v is not None:
                values[key][m].append(v)
    rows = [LabelledValue(m, seen[key], key[0], key[1], truth[key],
                          float(np.mean(values[key][m])) if values[key].get(m) else None)
            for key in sorted(seen) for m in signals]
    return Joined(tuple(rows), tuple(conflicts))


def calibrate_signals(rows: Sequence[LabelledValue], *, suite: str, signals: Sequence[str],
                      thresholds: Mapping[tuple[str, str], Threshold], target_precision: float) -> tuple[
                          SignalCalibration, ...]:
    """Per signal (in ``signals`` order, those with at least one labelled answer) and language
    (sorted; then "all" when there are several): its :class:`SignalCalibration`. ``thresholds``
    maps (metric, lang) to the threshold of that language; a signal without one for a language is
    an error (the caller resolves defaults)."""
    out: list[SignalCalibration] = []
    for m in signals:
        mine = [r for r in rows if r.metric == m]
        if not mine:
            continue
        langs = sorted({r.lang for r in mine})
        groups = [(lang, [r for r in mine if r.lang == lang]) for lang in langs]
        if len(langs) > 1:
            groups.append((ALL_LANGS, mine))
        for lang, group in groups:
            have = [r for r in group if r.value is not None]
            ts = []
            for r in have:
                if (m, r.lang) not in thresholds:
                    raise StatsError(f"no threshold for {m} in language {r.lang!r}")
                ts.append(thresholds[(m, r.lang)])
            out.append(SignalCalibration.of(
                suite, m, lang, [r.faithful for r in have], [_nan(r.value) for r in have], [t.value for t in ts],
                strict=[t.strict for t in ts], threshold_source="; ".join(sorted({t.source for t in ts})),
                nulls=len(group) - len(have), target_precision=target_precision))
    return tuple(out)
