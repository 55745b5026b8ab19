"""Gating statistics through the plugin: a baseline run and regression gates, a mapped candidate,
a seeded sample, head-to-head tables, and judge calibration (PPI gates) from a suite's labels."""

from __future__ import annotations

import json

import pytest

from tests.plugin.test_arena_e2e import N_CASES, read_report, replay_arg, write_suite


def test_baseline_comparison_and_regression_gates(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path)
    base = pytester.path / "base.json"
    res = pytester.runpytest("arena", replay_arg(pytester.path, "prod", 0.95), f"--mirage-report={base}")
    assert res.ret == 0, res.stdout.str()

    # the same answers again: no regression, the gate passes
    same = pytester.path / "same.json"
    res = pytester.runpytest("arena", replay_arg(pytester.path, "prod", 0.95), f"--mirage-baseline={base}",
                             "--mirage-gate=citation_recall.mean drop <= 0.05", f"--mirage-report={same}")
    assert res.ret == 0, res.stdout.str()
    regressions = read_report(same)["regressions"]
    assert regressions and all(g["failed"] is False for g in regressions)
    # compared with its own report, every delta is exactly zero and none is "significant"
    rows = read_report(same)["baseline"]["rows"]
    assert rows and all(r["delta"] == 0 and not r["significant"] for r in rows), \
        [r for r in rows if r["delta"] != 0 or r["significant"]]
    assert "▼" not in res.stdout.str() and "▲" not in res.stdout.str()

    # a worse candidate under another name, compared with production through the map: the gate fails
    worse = pytester.path / "worse.json"
    res = pytester.runpytest("arena", replay_arg(pytester.path, "cand", 0.3), f"--mirage-baseline={base}",
                             "--mirage-baseline-map=cand=prod", "--mirage-gate=citation_recall.mean drop <= 0.05",
                             f"--mirage-report={worse}")
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    rep = read_report(worse)
    failed = [g for g in rep["regressions"] if g["failed"]]
    assert failed and {g["expr"] for g in failed} == {"citation_recall.mean drop <= 0.05"}, failed
    assert all(0 < g["p_adjusted"] < 1e-4 for g in failed), failed  # a tiny p-value is not written as 0
    rows = [r for r in rep["baseline"]["rows"]
            if r["metric"] == "citation_recall" and r["model"] == "cand"]
    assert rows and all(r["delta"] < -0.3 and r["p_value"] < 0.05 for r in rows), rows
    assert "citation_recall" in res.stdout.str() and "drop" in res.stdout.str()
    # the leaderboard marks the significantly worse values and explains the mark
    lines = res.stdout.lines
    row = next(x for x in lines if x.strip().startswith("all") and " cand " in x)
    header = next(x for x in reversed(lines[:lines.index(row)]) if " cite_R " in x).split()
    cells = dict(zip(header, row.split(), strict=True))
    # the candidate cites the wrong passage: both citation columns are significantly worse.
    # (Its off-topic answers are copied from the passage they cite, so they are as faithful as
    # the baseline's: the faithfulness column may move either way by the judge's small preference.)
    assert cells["cite_R"].endswith("▼") and cells["cite_MAP"].endswith("▼"), row
    assert not any(v.endswith("▲") for k, v in cells.items() if k.startswith("cite")), row
    res.stdout.fnmatch_lines(["*▲ / ▼: significantly better / worse than the baseline run*"])
    markdown = pytester.path / "worse.md"
    pytester.runpytest("arena", replay_arg(pytester.path, "cand", 0.3), f"--mirage-baseline={base}",
                       "--mirage-baseline-map=cand=prod", f"--mirage-markdown={markdown}")
    assert "▼" in markdown.read_text() and "significantly better / worse" in markdown.read_text()


def test_a_regression_gate_needs_a_baseline_and_a_baseline_must_be_aread_report(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path)
    res = pytester.runpytest("arena", replay_arg(pytester.path, "prod", 0.9), "--mirage-gate=rouge_l.mean drop <= 0.02")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*'rouge_l.mean drop <= 0.02' compares with a baseline run: add --mirage-baseline*"])
    (pytester.path / "not-a-report.json").write_text('{"results": []}')
    res = pytester.runpytest("arena", replay_arg(pytester.path, "prod", 0.9), "--mirage-baseline=not-a-report.json")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*--mirage-baseline not-a-report.json: not a pytest-mirage report*"])


def test_a_baseline_scored_with_other_definitions_is_refused(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path)
    base = pytester.path / "base.json"
    res = pytester.runpytest("arena", replay_arg(pytester.path, "prod", 0.9), "--mirage-scoring=mirage",
                             f"--mirage-report={base}")
    assert res.ret == 0 and read_report(base)["suites"][0]["scoring"] == "mirage"
    out = pytester.path / "r.json"
    res = pytester.runpytest("arena", replay_arg(pytester.path, "prod", 0.9), f"--mirage-baseline={base}",
                             f"--mirage-report={out}")
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    res.stdout.fnmatch_lines(["*baseline comparison not computed: --mirage-baseline *base.json: suite arena was "
                              "scored with scoring 'mirage' there and with 'default' in this run*"])
    rep = read_report(out)
    assert rep["status"] == "failed" and "baseline" not in rep


def test_sample_runs_a_seeded_subset_per_language(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path)
    runs = []
    for _ in range(2):
        out = pytester.path / f"s{len(runs)}.json"
        res = pytester.runpytest("arena", replay_arg(pytester.path, "prod", 0.9), "--mirage-sample=0.25",
                                 f"--mirage-report={out}")
        assert res.ret == 0, res.stdout.str()
        res.assert_outcomes(passed=N_CASES // 4 + _gate_count(res))  # the sampled cases and the gates
        runs.append(sorted(r["case_id"] for r in read_report(out)["results"] if r["model"] == "prod"))
    assert len(runs[0]) == N_CASES // 4 and runs[0] == runs[1]
    assert read_report(pytester.path / "s0.json")["sample"]["groups"]
    other = pytester.path / "s2.json"
    pytester.runpytest("arena", replay_arg(pytester.path, "prod", 0.9), "--mirage-sample=0.25", "--mirage-seed=7",
                       f"--mirage-report={other}")
    assert sorted(r["case_id"] for r in read_report(other)["results"] if r["model"] == "prod") != runs[0]


def _gate_count(res: pytest.RunResult) -> int:
    line = next((x for x in res.stdout.lines if x.startswith("mirage gates:")), "mirage gates: 0 passed")
    return int(line.split()[2])


def test_head_to_head_table_for_every_pair(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path)
    out = pytester.path / "r.json"
    res = pytester.runpytest("arena", replay_arg(pytester.path, "good", 0.95), replay_arg(pytester.path, "bad", 0.2),
                             "--mirage-head-to-head=citation_recall", f"--mirage-report={out}")
    rows = read_report(out)["head_to_head"]
    pair = [r for r in rows if {r["model_a"], r["model_b"]} == {"bad", "good"} and r["metric"] == "citation_recall"]
    assert pair, rows
    row = pair[0]
    good_wins = row["wins"] if row["model_a"] == "good" else row["losses"]
    bad_wins = row["losses"] if row["model_a"] == "good" else row["wins"]
    assert good_wins > bad_wins and good_wins + bad_wins + row["ties"] == N_CASES
    assert "head-to-head" in res.stdout.str().lower()


def test_human_labels_give_calibration_and_ppi_gates(pytester: pytest.Pytester) -> None:
    suite = write_suite(pytester.path)
    # humans agree with citation_recall on the labelled cases except two
    labels = ["case_id,model,metric,label"]
    for i in range(12):
        labels.append(f"en-{i:03d},prod,citation_recall,{int(i not in (3, 7))}")
    (suite / "labels.csv").write_text("\n".join(labels) + "\n")
    out = pytester.path / "r.json"
    res = pytester.runpytest("arena", replay_arg(pytester.path, "prod", 0.9), "--mirage-gate=citation_recall.ppi_low >= 0.99",
                             f"--mirage-report={out}")
    rep = read_report(out)
    cal = rep["calibration"]
    assert cal, rep.keys()
    gate = [g for g in rep["gates"] if "ppi_low" in g["expr"]]
    assert gate and gate[0]["passed"] is False and gate[0]["value"] < 0.99
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    res = pytester.runpytest("arena", replay_arg(pytester.path, "prod", 0.9), "--mirage-gate=citation_recall.ppi_low >= 0.3")
    assert res.ret == 0, res.stdout.str()
    # a label file that names an unknown case is an error that names the line
    (suite / "labels.csv").write_text("case_id,model,metric,label\nen-999,prod,citation_recall,1\n")
    res = pytester.runpytest("arena", replay_arg(pytester.path, "prod", 0.9))
    assert "labels.csv:2" in res.stdout.str() + res.stderr.str()


def test_a_fresh_report_with_every_statistics_section_reads_back_to_the_same_bytes(pytester: pytest.Pytester) -> None:
    from pytest_mirage.report.model import RunReport
    from pytest_mirage.report.write import json_bytes

    suite = write_suite(pytester.path)
    labels = ["case_id,model,metric,label", *(f"en-{i:03d},cand,citation_recall,{int(i % 5 != 0)}" for i in range(12))]
    (suite / "labels.csv").write_text("\n".join([*labels, "en-001,ghost,citation_recall,1"]) + "\n")
    base = pytester.path / "base.json"
    assert pytester.runpytest("arena", replay_arg(pytester.path, "prod", 0.95), f"--mirage-report={base}").ret == 0
    out = pytester.path / "r.json"
    pytester.runpytest("arena", replay_arg(pytester.path, "cand", 0.4), replay_arg(pytester.path, "other", 0.7),
                       f"--mirage-baseline={base}", "--mirage-baseline-map=cand=prod", "--mirage-sample=0.5",
                       "--mirage-repeat=2", "--mirage-threshold=citation_recall >= 0.5",
                       "--mirage-gate=citation_recall.mean drop <= 0.05", f"--mirage-report={out}")
    written = out.read_bytes()
    data = json.loads(written)
    assert {"sample", "calibration", "baseline", "regressions", "head_to_head", "repeats"} <= set(data), set(data)
    assert json_bytes(RunReport.from_json(data)) == written
