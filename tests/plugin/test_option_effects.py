"""Options whose effect no other acceptance test shows: metric selection, the leaderboard switch,
the statistics settings, and where/with which features a surrogate is trained."""

from __future__ import annotations

import json

import pytest

from tests.helpers.fake_openai import FakeOpenAIServer
from tests.plugin.test_arena_e2e import (
    N_CASES,
    QUALITY,
    judge,
    read_report,
    replay_arg,
    write_suite,
)


def test_metrics_selects_what_is_computed_plus_what_rules_need(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path)
    out = pytester.path / "r.json"
    res = pytester.runpytest("arena", replay_arg(pytester.path, "prod", 0.9), "--mirage-metrics=token_f1",
                             "--mirage-threshold=citation_recall >= 0", f"--mirage-report={out}")
    assert res.ret == 0, res.stdout.str()
    mine = [r for r in read_report(out)["results"] if r["model"] == "prod"]
    assert {k for r in mine for k in r["metrics"]} == {"token_f1", "citation_recall"}
    res = pytester.runpytest("arena", replay_arg(pytester.path, "prod", 0.9), "--mirage-metrics=token_f1,rouge_L")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*--mirage-metrics: Unknown metric 'rouge_L'. Did you mean: rouge_l?*"])


def test_no_leaderboard_hides_it_but_keeps_theread_report(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path)
    out = pytester.path / "r.json"
    res = pytester.runpytest("arena", replay_arg(pytester.path, "prod", 0.9), "--mirage-no-leaderboard",
                             f"--mirage-report={out}")
    assert res.ret == 0 and "pytest-mirage leaderboard" not in res.stdout.str()
    assert read_report(out)["leaderboard"]
    res = pytester.runpytest("arena", replay_arg(pytester.path, "prod", 0.9))
    res.stdout.fnmatch_lines(["*pytest-mirage leaderboard*"])


@pytest.mark.parametrize(("flag", "message"), [
    ("--mirage-alpha=2", "*--mirage-alpha: found '2'; expected a significance level between 0 and 0.5*"),
    ("--mirage-paired-test=wilcoxon", "*--mirage-paired-test: found 'wilcoxon'; expected one of t, sign_flip*"),
    ("--mirage-judge-order=twice", "*--mirage-judge-order: found 'twice'*"),
])
def test_bad_statistics_settings_are_usage_errors(pytester: pytest.Pytester, flag: str, message: str) -> None:
    write_suite(pytester.path)
    res = pytester.runpytest("arena", replay_arg(pytester.path, "prod", 0.9), flag)
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines([message])


def test_alpha_and_paired_test_reach_the_comparison(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path)
    base = pytester.path / "base.json"
    pytester.runpytest("arena", replay_arg(pytester.path, "prod", 0.9), f"--mirage-report={base}")
    out = pytester.path / "r.json"
    res = pytester.runpytest("arena", replay_arg(pytester.path, "cand", 0.6), f"--mirage-baseline={base}",
                             "--mirage-baseline-map=cand=prod", "--mirage-alpha=0.01", "--mirage-paired-test=sign_flip",
                             "--mirage-gate=citation_recall.mean drop <= 0.5", f"--mirage-report={out}")
    assert res.ret == 0, res.stdout.str()
    rep = read_report(out)
    assert rep["baseline"]["alpha"] == 0.01 and rep["baseline"]["test"] == "sign_flip"
    assert {r["test"] for r in rep["baseline"]["rows"]} == {"sign_flip"}
    assert all(g["alpha"] == 0.01 for g in rep["regressions"])
    res.stdout.fnmatch_lines(["*sign*flip*alpha 0.01*"])


def test_judge_order_random_judges_each_pair_once(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path)
    models = [replay_arg(pytester.path, m, QUALITY[m]) for m in ("sys-a", "sys-c", "sys-f")]
    with FakeOpenAIServer(answer=judge) as srv:
        out = pytester.path / "r.json"
        res = pytester.runpytest("arena", *models, "--mirage-judge", "openai:fake-judge",
                                 f"--mirage-openai-base-url={srv.base_url}", f"--mirage-cache={pytester.path / 'c'}",
                                 "--mirage-judge-order=random", "--mirage-judge-queries=10", "--mirage-tournaments=20",
                                 f"--mirage-report={out}")
    assert res.ret == 0, res.stdout.str()
    rel = read_report(out)["judge"]
    assert rel["judgments"] == 10 * 3 and rel["swap_pairs"] == 0 and rel["swap_consistency"] is None


def test_surrogate_dir_and_features(pytester: pytest.Pytester) -> None:
    suite = write_suite(pytester.path)
    models = [replay_arg(pytester.path, m, q) for m, q in QUALITY.items()]
    battles = pytester.path / "b.jsonl"
    rows = []
    for i in range(N_CASES):
        for x, a in enumerate(QUALITY):
            for b in list(QUALITY)[x + 1:]:
                rows.append({"query_id": f"en-{i:03d}", "model_A": a, "model_B": b,
                             "verdict": "A" if QUALITY[a] > QUALITY[b] else "B"})
    battles.write_text("".join(json.dumps(r) + "\n" for r in rows))
    where = pytester.path / "surrogates"
    res = pytester.runpytest("arena", *models, f"--mirage-battles={battles}", "--mirage-train-surrogate",
                             "--mirage-force-surrogate", f"--mirage-surrogate-dir={where}", "--mirage-tournaments=20",
                             "--mirage-surrogate-features=citation_recall,rouge_l")
    assert res.ret == 0, res.stdout.str()
    assert not (suite / "surrogate").exists()
    saved = json.loads((where / "arena" / "all.json").read_text())
    assert saved["features"] == ["citation_recall", "rouge_l"]
    # read from the same folder in a later run (same definitions: imported judgments mean "mirage")
    out = pytester.path / "r.json"
    res = pytester.runpytest("arena", replay_arg(pytester.path, "new", 0.9), f"--mirage-surrogate-dir={where}",
                             "--mirage-scoring=mirage", f"--mirage-report={out}")
    assert res.ret == 0, res.stdout.str()
    assert any(s["model"] == "new" for s in read_report(out)["surrogate_scores"])
    res = pytester.runpytest("arena", *models, f"--mirage-battles={battles}", "--mirage-train-surrogate",
                             f"--mirage-surrogate-dir={where}", "--mirage-surrogate-features=citation_recal")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*--mirage-surrogate-features: Unknown metric 'citation_recal'. Did you mean: "
                              "citation_recall*"])
