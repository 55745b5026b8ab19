"""Judge calibration: agreement statistics, PPI (checked against ppi_python), label files."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
from sklearn.metrics import cohen_kappa_score, roc_auc_score

from pytest_mirage.stats import (
    LabelError,
    StatsError,
    calibrate,
    calibration_table,
    cohen_kappa,
    judge_agreement,
    load_labels,
    ppi_mean,
    roc_auc,
)
from pytest_mirage.stats.labels import Label
from tests.helpers.simulate_stats import ppi_coverage, simulate_judged

# ---------------------------------------------------------------- PPI


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_ppi_matches_ppi_python(seed: int, alpha: float) -> None:
    rng = np.random.default_rng(seed)
    judge_all = rng.random(1500)
    labelled = rng.choice(1500, size=180, replace=False)
    labels = (rng.random(180) < judge_all[labelled] - 0.1).astype(float)
    got = ppi_mean(judge_all, labels, judge_all[labelled], alpha=alpha)
    lo, hi = ppi_mean_ci(labels, judge_all[labelled], judge_all, alpha=alpha, lam=1)
    point = ppi_mean_pointestimate(labels, judge_all[labelled], judge_all, lam=1)
    assert abs(got.estimate - float(np.ravel(point)[0])) < 1e-9
    assert abs(got.interval.low - float(np.ravel(lo)[0])) < 1e-9
    assert abs(got.interval.high - float(np.ravel(hi)[0])) < 1e-9


def test_ppi_by_hand() -> None:
    # judge on all 4 cases: mean 0.5, population sd 0.5; labelled 2: label - judge = (0, -1)
    got = ppi_mean([1.0, 0.0, 1.0, 0.0], [1.0, 0.0], [1.0, 1.0])
    assert got.judge_mean == 0.5 and got.rectifier == -0.5 and got.estimate == 0.0
    assert got.se_judge == 0.25 and got.se_rectifier == pytest.approx(0.5 / math.sqrt(2))
    z = 1.959963984540054
    half = z * math.sqrt(0.25 ** 2 + 0.125)
    assert got.interval.low == pytest.approx(-half) and got.interval.high == pytest.approx(half)
    assert got.judge_only.estimate == 0.5 and got.labels_only.estimate == 0.5
    with pytest.raises(StatsError, match="at least 2 labelled"):
        ppi_mean([1.0], [1.0], [1.0])
    with pytest.raises(StatsError, match="pair up"):
        ppi_mean([1.0, 0.0], [1.0, 0.0], [1.0])
    json.dumps(got.to_json(), allow_nan=False)


def test_ppi_coverage_with_a_biased_judge() -> None:
    judge, _labels, truth = simulate_judged(200_000, 10, seed=0)
    assert judge.mean() - truth.mean() == pytest.approx(0.1, abs=0.005)  # the judge is biased by +0.1
    cov = ppi_coverage(runs=200, seed=0)
    assert cov.ppi >= 0.9, cov
    assert cov.judge_only <= 0.05, cov
    assert cov.ppi_width < cov.labels_only_width  # the judge's many scores narrow the interval


# ---------------------------------------------------------------- agreement


def test_agreement_by_hand() -> None:
    labels = [1, 1, 1, 0, 0, 0]
    scores = [0.9, 0.6, 0.4, 0.6, 0.2, 0.1]
    got = judge_agreement(labels, scores)
    # verdicts 1,1,0,1,0,0 vs labels 1,1,1,0,0,0: 4 of 6 agree; p_e = 0.5*0.5 + 0.5*0.5
    assert got.accuracy == pytest.approx(4 / 6)
    assert got.kappa == pytest.approx((4 / 6 - 0.5) / 0.5)
    # positive-negative pairs: 9; positive score higher in 7, one tie (0.6 vs 0.6) counts half
    assert got.roc_auc == pytest.approx(7.5 / 9)
    assert got.n == 6 and got.positives == 3 and got.note == ""
    b = got.bins
    assert len(b) == 10 and b[9].n == 1 and b[6].n == 2 and b[6].label_rate == 0.5 and b[4].n == 1
    assert math.isnan(b[0].mean_score) and b[0].to_json()["mean_score"] is None
    # ECE: bins 1 (0.1->0), 2 (0.2->0), 4 (0.4->1), 6 (0.6->0.5), 9 (0.9->1)
    assert got.ece == pytest.approx((0.1 + 0.2 + 0.6 + 2 * 0.1 + 0.1) / 6)


def test_agreement_matches_sklearn() -> None:
    rng = np.random.default_rng(3)
    y = (rng.random(300) < 0.4).astype(float)
    s = np.clip(y * 0.3 + rng.random(300) * 0.7, 0, 1).round(2)  # rounded: many ties
    assert roc_auc(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    v = (s >= 0.5).astype(float)
    assert cohen_kappa(v, y) == pytest.approx(cohen_kappa_score(v, y), abs=1e-12)


def test_agreement_edge_cases() -> None:
    one_class = judge_agreement([1, 1, 1], [0.9, 0.2, 0.7])
    assert math.isnan(one_class.roc_auc) and "both positive and negative" in one_class.note
    graded = judge_agreement([0.5, 0.0, 1.0], [0.6, 0.1, 0.9])
    assert "graded labels" in graded.note and graded.positives == 2
    assert calibration_table([1.0], [1.4], bins=2)[1].high == 1.4  # widened, not clipped
    with pytest.raises(StatsError, match="at least one labelled row"):
        judge_agreement([], [])


# ---------------------------------------------------------------- label files


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")
    return p


def test_load_csv_and_jsonl(tmp_path: Path) -> None:
    csv_path = write(tmp_path, "labels.csv", "\ufeff# human labels, round 1\ncase_id,model,metric,label,note\n"
                     "hi-1,m,support,1,\n\nhi-2,m,support,0,\"cites the wrong passage, twice\"\n"
                     "hi-2,m,faithfulness,0.5,two annotators\n")
    labels = load_labels(csv_path, suite="s", cases={"hi-1", "hi-2"}, models={"m"})
    assert [(lb.case_id, lb.metric, lb.label, lb.line) for lb in labels.labels] == [
        ("hi-1", "support", 1.0, 3), ("hi-2", "support", 0.0, 5), ("hi-2", "faithfulness", 0.5, 6)]
    assert labels.labels[1].note == "cites the wrong passage, twice" and labels.suite == "s"
    assert labels.metrics == ("faithfulness", "support") and len(labels.for_metric("support")) == 2
    jsonl = write(tmp_path, "labels.jsonl", '{"case_id": "a", "model": "m", "metric": "support", "label": 1}\n\n'
                  '{"case_id": "b", "model": "m", "metric": "support", "label": 0, "annotator": "kd"}\n')
    got = load_labels(jsonl)
    assert [(lb.case_id, lb.line, lb.annotator) for lb in got.labels] == [("a", 1, ""), ("b", 3, "kd")]


@pytest.mark.parametrize(("name", "text", "message"), [
    ("labels.csv", "case_id,model,metric\na,m,s\n", r"labels.csv:1: missing column label"),
    ("labels.csv", "case_id,model,metric,lable\n", r"labels.csv:1: unknown column 'lable'.*Did you mean: label"),
    ("labels.csv", "case_id,model,metric,label\na,m,s,yes\n", r"labels.csv:2: label 'yes' is not a number \(write 1 or 0\)"),
    ("labels.csv", "case_id,model,metric,label\na,m,s,2\n", r"labels.csv:2: label '2' is outside \[0, 1\]"),
    ("labels.csv", "case_id,model,metric,label\na,m,s,nan\n", r"labels.csv:2: label 'nan' is outside"),
    ("labels.csv", "case_id,model,metric,label\n,m,s,1\n", r"labels.csv:2: column 'case_id' is empty"),
    ("labels.csv", "case_id,model,metric,label\na,m,s\n", r"labels.csv:2: 3 fields, but the header \(line 1\) has 4"),
    ("labels.csv", "case_id,model,metric,label\na,m,s,1\nb,m,s,1\na,m,s,0\n",
     r"labels.csv:4: duplicate label for case 'a', model 'm', metric 's' \(first on line 2\)"),
    ("labels.csv", "case_id,model,metric,label\na\x1b[31m,m,s,1\n", r"labels.csv:2: case_id .* control character U\+001B"),
    ("labels.csv", "case_id,model,metric,label,label\n", r"labels.csv:1: column 'label' appears twice"),
    ("labels.csv", "", r"labels.csv: empty label file"),
    ("labels.csv", "case_id,model,metric,label\n\"a,m,s,1\n", r"labels.csv:\d+: "),
    ("labels.jsonl", '{"case_id": "a", "model": "m", "metric": "s", "label": true}\n', r"labels.jsonl:1: label is True"),
    ("labels.jsonl", '{"case_id": "a", "case_id": "b", "model": "m", "metric": "s", "label": 1}\n',
     r"labels.jsonl:1: not a JSON object \(key 'case_id' appears twice"),
    ("labels.jsonl", '[1, 2]\n', r"labels.jsonl:1: found list"),
    ("labels.jsonl", "[" * 100000 + "\n", r"labels.jsonl:1: not a JSON object"),
    ("labels.jsonl", '{"case_id": "a", "model": "m", "metric": "s", "label": 1e400}\n', r"labels.jsonl:1: label inf"),
    ("labels.txt", "x", r"labels.txt: unknown label file type '.txt'"),
])
def test_bad_label_files_name_file_and_line(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(LabelError, match=message) as info:
        load_labels(path)
    assert str(info.value).startswith(str(path))


def test_label_file_checks_against_the_suite(tmp_path: Path) -> None:
    path = write(tmp_path, "labels.csv", "case_id,model,metric,label\nhi-0001,m,support,1\nhi-0O02,m,support,1\n")
    with pytest.raises(LabelError, match=r"labels.csv:3: unknown case 'hi-0O02'.*Did you mean: hi-0002"):
        load_labels(path, cases={"hi-0001", "hi-0002"})
    with pytest.raises(LabelError, match=r"labels.csv:2: unknown metric 'support'.*Did you mean: support_nli"):
        load_labels(path, metrics={"support_nli"})
    bad = write(tmp_path, "bad.csv", b"case_id,model,metric,label\n\xff,m,s,1\n")
    with pytest.raises(LabelError, match=r"bad.csv:2: not UTF-8 \(byte 0xff\)"):
        load_labels(bad)
    with pytest.raises(LabelError, match="no such file"):
        load_labels(tmp_path / "missing.csv")


# ---------------------------------------------------------------- run x labels


def _rec(case: str, model: str, value: float | None, outcome: str = "passed", suite: str = "s") -> dict[str, Any]:
    return {"suite": suite, "case_id": case, "lang": "hi", "model": model, "metrics": {"support": value},
            "outcome": outcome}


def test_calibrate_joins_labels_and_lists_what_it_cannot_use() -> None:
    run = [_rec(f"c{i}", "m", v) for i, v in enumerate([1.0, 1.0, 0.0, 1.0, 0.0, 1.0])]
    run += [_rec("c6", "m", None), _rec("c7", "m", None, "error"), _rec("c0", "other", 1.0, suite="t")]
    labels = [Label("c0", "m", "support", 1.0, line=2), Label("c1", "m", "support", 0.0, line=3),
              Label("c2", "m", "support", 0.0, line=4), Label("c6", "m", "support", 1.0, line=5),
              Label("c9", "m", "support", 1.0, line=6), Label("c0", "ghost", "support", 1.0, line=7)]
    cal = calibrate(run, labels, suite="s")
    (agree,) = cal.agreements
    assert agree.metric == "support" and agree.agreement.n == 3 and agree.agreement.accuracy == pytest.approx(2 / 3)
    group = cal.group("s", "m", "support")
    assert group is not None and group.ppi is not None
    # labels lie in [0, 1]: calibrate cuts the interval there (this one reaches below 0 uncut)
    expected = ppi_mean([1.0, 1.0, 0.0, 1.0, 0.0, 1.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], bounds=(0.0, 1.0))
    assert expected.raw is not None and expected.raw.low < 0 == expected.interval.low
    assert group.ppi.interval == expected.interval and group.ppi.n_all == 6
    reasons = {u.case_id + "/" + u.model: u.reason for u in cal.unmatched}
    assert "null, or the case errored" in reasons["c6/m"]
    assert "was not run for model 'm'" in reasons["c9/m"]
    assert "model 'ghost' is not in this run" in reasons["c0/ghost"]
    assert cal.unmatched[0].where == "labels:5"
    json.dumps(cal.to_json(), allow_nan=False)
    few = calibrate(run, labels[:1], suite="s")
    assert few.groups[0].ppi is None and "PPI needs at least 2" in few.groups[0].note
    with pytest.raises(StatsError, match="which suite"):
        calibrate(run, labels)


def test_ppi_interval_is_cut_at_the_bounds_of_the_labels() -> None:
    # the judge scores 0 on a labelled case the human marked 1: the rectifier lifts the estimate
    # to 0.75 + 0.5 = 1.25, past any rate; with bounds it is moved to 1 and the interval cut
    free = ppi_mean([1.0, 1.0, 1.0, 0.0], [1.0, 1.0], [0.0, 1.0])
    assert free.estimate == 1.25 and free.interval.high > 1.25 and free.raw is None
    cut = ppi_mean([1.0, 1.0, 1.0, 0.0], [1.0, 1.0], [0.0, 1.0], bounds=(0.0, 1.0))
    assert cut.estimate == 1.0 and cut.interval.high == 1.0
    assert cut.interval.low == pytest.approx(free.interval.low)  # below 1: untouched
    assert cut.raw == free.interval
    assert cut.to_json()["raw"]["high"] == pytest.approx(free.interval.high)
    # inside the bounds nothing changes and nothing is recorded
    inside = ppi_mean([1.0, 0.0, 1.0, 0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [1.0, 0.0, 1.0], bounds=(0.0, 1.0))
    assert inside.raw is None and inside.interval == ppi_mean([1.0, 0.0, 1.0, 0.0, 1.0, 0.0], [1.0, 0.0, 1.0],
                                                              [1.0, 0.0, 1.0]).interval
    with pytest.raises(StatsError, match="low <= high"):
        ppi_mean([1.0, 0.0], [1.0, 0.0], [1.0, 0.0], bounds=(1.0, 0.0))
