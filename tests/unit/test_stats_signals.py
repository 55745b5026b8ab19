"""Faithfulness signals against human labels (stats/signals.py): ROC AUC with ties, precision /
recall / F1 of flagging unfaithful answers at a threshold, the threshold that reaches a chosen
precision, and the join of a label file with a run's results. Cross-checked with scikit-learn."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from pytest_mirage.stats import StatsError
from pytest_mirage.stats.labels import Label
from pytest_mirage.stats.signals import (
    SignalCalibration,
    Threshold,
    calibrate_signals,
    flag_stats,
    flagged_by,
    label_rows,
    threshold_for_precision,
)

# label 1 = faithful; scores of one signal (ties at 0.5 and 0.8)
FAITHFUL = np.array([1, 1, 1, 1, 0, 0, 0, 1, 0, 1], dtype=bool)
SCORES = np.array([0.9, 0.8, 0.8, 0.5, 0.5, 0.2, 0.1, 0.7, 0.8, 0.95])


def test_roc_auc_with_ties_equals_sklearn() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    row = SignalCalibration.of("s", "faithfulness", "en", FAITHFUL, SCORES, 0.6, target_precision=0.9)
    assert row.roc_auc == pytest.approx(metrics.roc_auc_score(FAITHFUL.astype(int), SCORES), abs=1e-12)
    rng = np.random.default_rng(3)
    for _ in range(20):
        y = rng.integers(0, 2, 40).astype(bool)
        s = rng.integers(0, 5, 40) / 4.0  # many ties
        if y.all() or not y.any():
            continue
        got = SignalCalibration.of("s", "m", "en", y, s, 0.5, target_precision=0.9).roc_auc
        assert got == pytest.approx(metrics.roc_auc_score(y.astype(int), s), abs=1e-12)


def test_flags_at_a_threshold_equal_sklearn_with_unfaithful_as_positive() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    flagged = flagged_by(SCORES, 0.6)
    assert flagged.tolist() == [False, False, False, True, True, True, True, False, False, False]
    fs = flag_stats(FAITHFUL, flagged)
    p, r, f1, _ = metrics.precision_recall_fscore_support((~FAITHFUL).astype(int), flagged.astype(int),
                                                          average="binary", zero_division=0)
    assert (fs.flagged, fs.precision, fs.recall, fs.f1) == (4, pytest.approx(p), pytest.approx(r), pytest.approx(f1))
    assert (fs.precision, fs.recall) == (pytest.approx(3 / 4), pytest.approx(3 / 4))
    # '>' fails a score equal to the threshold, '>=' passes it
    assert flagged_by([0.5, 0.6], 0.5, strict=True).tolist() == [True, False]
    assert flagged_by([0.5, 0.6], 0.5).tolist() == [False, False]


def test_undefined_flag_statistics_are_nan_never_zero() -> None:
    nothing = flag_stats([True, False], [False, False])
    assert nothing.flagged == 0 and math.isnan(nothing.precision) and nothing.recall == 0.0 and nothing.f1 == 0.0
    all_faithful = flag_stats([True, True], [False, False])
    assert math.isnan(all_faithful.recall) and math.isnan(all_faithful.f1)


def test_threshold_for_a_precision_is_the_highest_recall_one() -> None:
    # flagged <= 0.2: 2 of 2 unfaithful (P 1.0, R 0.5); <= 0.5: 3 of 4 (P 0.75); <= 0.7: 3 of 5
    pt = threshold_for_precision(FAITHFUL, SCORES, 0.9)
    assert (pt.threshold, pt.precision, pt.recall, pt.flagged) == (pytest.approx(0.35), 1.0, 0.5, 2)
    pt = threshold_for_precision(FAITHFUL, SCORES, 0.75)
    assert (pt.threshold, pt.precision, pt.recall) == (pytest.approx(0.6), 0.75, 0.75)
    # brute force over every candidate agrees
    for target in (0.5, 0.6, 0.75, 0.9, 1.0):
        pt = threshold_for_precision(FAITHFUL, SCORES, target)
        vals = np.unique(SCORES)
        best = None
        for lo, hi in itertools.pairwise(vals):
            fs = flag_stats(FAITHFUL, SCORES <= lo)
            if fs.precision >= target and (best is None or (fs.recall, fs.precision) > best[1:]):
                best = ((lo + hi) / 2, fs.recall, fs.precision)
        assert best is not None and pt.threshold == pytest.approx(best[0]) and pt.recall == pytest.approx(best[1])


def test_threshold_for_a_precision_not_reachable() -> None:
    # the lowest score is a faithful answer: no threshold flags only unfaithful ones
    pt = threshold_for_precision([True, False, True, False], [0.1, 0.2, 0.3, 0.4], 1.0)
    assert not pt.reachable and math.isnan(pt.threshold)
    assert not threshold_for_precision([True, False], [0.5, 0.5], 0.5).reachable  # one distinct score
    with pytest.raises(StatsError, match="target precision"):
        threshold_for_precision([True], [0.5], 0.0)


def _rec(case: str, lang: str, model: str, **metrics: float | None) -> dict[str, object]:
    return {"suite": "s", "case_id": case, "lang": lang, "model": model, "metrics": metrics, "outcome": "passed"}


def test_label_rows_and_per_language_tables() -> None:
    records = [_rec("a", "en", "m", faithfulness=0.9, support_lexical=0.8),
               _rec("b", "en", "m", faithfulness=0.2, support_lexical=0.9),
               _rec("c", "hi", "m", faithfulness=0.7, support_lexical=None),
               _rec("d", "hi", "m", faithfulness=0.3, support_lexical=0.1),
               _rec("e", "hi", "m", faithfulness=0.99),  # not labelled
               {**_rec("a", "en", "m", faithfulness=0.7, support_lexical=0.6), "repeat": 1}]
    labels = [Label("a", "m", "faithfulness", 1, 2), Label("b", "m", "faithfulness", 0, 3),
              Label("c", "m", "support_lexical", 0.8, 4), Label("d", "m", "faithfulness", 0, 5),
              Label("d", "m", "support_lexical", 0.0, 6)]
    joined = label_rows(records, labels, suite="s", signals=["faithfulness", "support_lexical"])
    assert joined.conflicts == ()
    a = next(r for r in joined.rows if r.case_id == "a" and r.metric == "faithfulness")
    assert a.value == pytest.approx(0.8) and a.faithful  # the mean over repeats
    assert next(r for r in joined.rows if r.case_id == "c" and r.metric == "support_lexical").value is None
    th = {(m, lang): Threshold(0.5 if lang == "en" else 0.6, source="x")
          for m in ("faithfulness", "support_lexical") for lang in ("en", "hi")}
    rows = calibrate_signals(joined.rows, suite="s", signals=["faithfulness", "support_lexical"], thresholds=th,
                             target_precision=0.9)
    assert [(r.metric, r.lang) for r in rows] == [("faithfulness", "en"), ("faithfulness", "hi"),
                                                  ("faithfulness", "all"), ("support_lexical", "en"),
                                                  ("support_lexical", "hi"), ("support_lexical", "all")]
    f_all = rows[2]
    assert (f_all.n, f_all.faithful, f_all.roc_auc, f_all.precision, f_all.recall) == (4, 2, 1.0, 1.0, 1.0)
    assert math.isnan(f_all.threshold) and "differ by language" in f_all.note
    lex_hi = rows[4]
    assert (lex_hi.n, lex_hi.nulls) == (1, 1) and "unfaithful" in lex_hi.note and math.isnan(lex_hi.roc_auc)
    assert rows[3].roc_auc == 0.0  # support_lexical ranks the en pair the wrong way round
    # JSON: NaN as null
    assert rows[4].to_json()["roc_auc"] is None and rows[0].to_json()["threshold"] == 0.5


def test_disagreeing_labels_of_one_answer_are_left_out_with_why() -> None:
    labels = [Label("a", "m", "faithfulness", 1, 2), Label("a", "m", "support_lexical", 0, 3)]
    joined = label_rows([_rec("a", "en", "m", faithfulness=0.9)], labels, suite="s", signals=["faithfulness",
                                                                                          "support_lexical"],
                        where="labels.csv")
    assert joined.rows == ()
    (why,) = joined.conflicts
    assert "labels.csv:2 faithfulness=1" in why and "labels.csv:3 support_lexical=0" in why


def test_the_report_section_reads_back_and_names_a_bad_field() -> None:
    from pytest_mirage.report.reading import ReportFormatError
    from pytest_mirage.report.statistics import CalibrationSection, Statistics
    from pytest_mirage.stats.calibration import Calibration

    row = SignalCalibration.of("s", "faithfulness", "en", FAITHFUL, SCORES, 0.6, target_precision=0.9)
    st = Statistics(calibration=(CalibrationSection("s", "labels.csv", Calibration((), (), ()), (row,)),))
    data = st.to_json()
    assert data["calibration"][0]["faithfulness"][0]["metric"] == "faithfulness"
    back = Statistics.from_json(data)
    assert back.to_json() == data and back.calibration[0].faithfulness[0] == row
    # a section without rows writes no key (reports of runs before this section keep their bytes)
    empty = Statistics(calibration=(CalibrationSection("s", "labels.csv", Calibration((), (), ())),)).to_json()
    assert "faithfulness" not in empty["calibration"][0]
    del data["calibration"][0]["faithfulness"][0]["roc_auc"]
    data["calibration"][0]["faithfulness"][0]["n"] = "6"
    with pytest.raises(ReportFormatError, match=r"calibration\[0\]\.faithfulness\[0\]\.n"):
        Statistics.from_json(data)
