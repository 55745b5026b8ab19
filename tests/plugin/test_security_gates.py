"""Through the plugin: a regression gate with nothing to compare fails the run, with the reason."""

from __future__ import annotations

import json

import pytest

from tests.plugin.test_arena_e2e import replay_arg, write_suite

GATE = "--mirage-gate=citation_recall.mean drop <= 0.05"


def test_regression_gate_on_nothing_fails_the_run(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path)
    base = pytester.path / "base.json"
    res = pytester.runpytest("arena", replay_arg(pytester.path, "prod", 0.95), f"--mirage-report={base}")
    assert res.ret == 0, res.stdout.str()

    # a renamed model without --mirage-baseline-map: used to pass as "1 skipped"
    res = pytester.runpytest("arena", replay_arg(pytester.path, "cand", 0.95), f"--mirage-baseline={base}", GATE)
    assert res.ret == pytest.ExitCode.TESTS_FAILED, res.stdout.str()
    res.stdout.fnmatch_lines(["*no comparable baseline data*cand*prod*--mirage-baseline-map NEW=OLD*"])

    # a baseline with no results
    empty = pytester.path / "empty.json"
    data = json.loads(base.read_text(encoding="utf-8"))
    empty.write_text(json.dumps({**data, "results": []}), encoding="utf-8")
    res = pytester.runpytest("arena", replay_arg(pytester.path, "prod", 0.95), f"--mirage-baseline={empty}", GATE)
    assert res.ret == pytest.ExitCode.TESTS_FAILED, res.stdout.str()
    assert "no comparable baseline data" in res.stdout.str()


def test_out_of_range_baseline_is_a_usage_error(pytester: pytest.Pytester) -> None:
    write_suite(pytester.path)
    base = pytester.path / "base.json"
    pytester.runpytest("arena", replay_arg(pytester.path, "prod", 0.95), f"--mirage-report={base}")
    data = json.loads(base.read_text(encoding="utf-8"))
    row = next(i for i, r in enumerate(data["results"]) if r["metrics"].get("citation_recall") is not None)
    data["results"][row]["metrics"]["citation_recall"] = -1000
    base.write_text(json.dumps(data), encoding="utf-8")
    res = pytester.runpytest("arena", replay_arg(pytester.path, "prod", 0.95), f"--mirage-baseline={base}", GATE)
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines([f"*base.json: results[[]{row}[]].metrics.citation_recall is -1000*"])
