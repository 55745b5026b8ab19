"""Judge nulls count: a gate says how many cases its value rests on and how many were null, and
fails when the nulls exceed its limit (issue 21, defect 5)."""

from __future__ import annotations

import pytest

from pytest_mirage.aggregate.expr import parse_rule
from pytest_mirage.aggregate.gates import GateResult, evaluate_gates
from pytest_mirage.aggregate.nulls import NullCount, count_nulls, split_null_limit
from pytest_mirage.errors import ConfigError
from pytest_mirage.results import CaseResult
from pytest_mirage.stats import StatsError


def _res(case: str, value: float | None, outcome: str = "passed") -> CaseResult:
    reasons = {} if value is not None else {"support_llm": "judge reply unparseable (expected JSON): 'I would rather not say'"}
    return CaseResult(suite="s", suite_ref="s", case_id=case, lang="en", model="m", metrics={"support_llm": value},
                      reasons=reasons, outcome=outcome)


def test_split_null_limit() -> None:
    assert split_null_limit("x.mean >= 0.5") == ("x.mean >= 0.5", None)
    assert split_null_limit("x.mean >= 0.5 nulls <= 10%") == ("x.mean >= 0.5", 0.1)
    assert split_null_limit("x.mean >= 0.5 NULLS<=0.25") == ("x.mean >= 0.5", 0.25)
    with pytest.raises(StatsError, match="not a share"):
        split_null_limit("x >= 0.5 nulls <= 150%")


def test_count_and_note() -> None:
    c = count_nulls([0.5, None, 0.7, None])
    assert (c.n, c.nulls, c.share, c.exceeded) == (2, 2, 0.5, True)
    assert "2 of 4 cases null (why)" in c.note(["why", "why", "other"]) and "nulls <= 50%" in c.note()
    assert not NullCount(9, 1, 0.1).exceeded and NullCount(8, 2, 0.1).exceeded
    assert count_nulls([1.0]).note() == ""


def test_a_judge_steered_into_nulls_fails_the_gate() -> None:
    # the good answer scores 1.0; the bad one gets "I would rather not say": the mean of the rest was 1.0
    results = [_res("good", 1.0), _res("bad", None)]
    (g,) = evaluate_gates(results, {"s": [parse_rule("support_llm.mean >= 0.7", gate=True, source="cli")]})
    assert g.passed is False and g.n == 1 and g.nulls == 1
    assert "1 of 2 cases null (judge reply unparseable" in g.note and "I would rather not say" in g.note
    assert g.to_json()["nulls"] == 1 and GateResult.from_json(g.to_json()).nulls == 1
    assert "1 of 2 cases null" in g.describe()


def test_a_null_limit_per_gate() -> None:
    results = [_res(f"c{k}", 1.0) for k in range(9)] + [_res("c9", None)]
    (ok,) = evaluate_gates(results, {"s": [parse_rule("support_llm.mean >= 0.7 nulls <= 10%", gate=True)]})
    assert ok.passed is True and ok.nulls == 1 and "1 of 10 cases null" in ok.note
    (strict,) = evaluate_gates(results, {"s": [parse_rule("support_llm.mean >= 0.7 nulls <= 0.05", gate=True)]})
    assert strict.passed is False
    # optional gates accept nulls (as they accept a gate that cannot be evaluated); errors are counted apart
    (opt,) = evaluate_gates(results, {"s": [parse_rule("support_llm.mean? >= 0.7", gate=True)]})
    assert opt.passed is True and opt.nulls == 1
    errored = [_res("a", 1.0), _res("b", 1.0, outcome="error")]
    (e,) = evaluate_gates(errored, {"s": [parse_rule("support_llm.mean >= 0.7", gate=True)]})
    assert e.nulls == 0 and e.errors == 1


def test_null_limits_are_for_gates_only() -> None:
    with pytest.raises(ConfigError, match=r"'nulls <= \.\.\.' is for gates"):
        parse_rule("support_llm >= 0.5 nulls <= 10%", gate=False)
    with pytest.raises(ConfigError, match="not a share"):
        parse_rule("support_llm.mean >= 0.5 nulls <= 2", gate=True)


def test_fixed_gates_refuse_at_all() -> None:
    with pytest.raises(ConfigError, match=r"@all is not a language; a gate without @LANG already applies"):
        parse_rule("language_match.mean@all >= 0.9", gate=True)
    with pytest.raises(ConfigError, match=r"threshold .*@all is not a language"):
        parse_rule("citation_recall@all >= 0.5", gate=False)


def test_a_model_level_gate_names_its_own_suites_error() -> None:
    results = [CaseResult(suite=s, suite_ref=s, case_id="c", lang="en", model="m", metrics={}) for s in ("a", "b")]
    rule = parse_rule("surrogate_score.mean >= 0.5", gate=True)
    gates = evaluate_gates(results, {"a": [rule], "b": [rule]}, model_level=["surrogate_score"],
                           model_level_reason={"a": "a/surrogate.json: bad", "b": "b/surrogate.json: worse"})
    assert {g.suite: g.note for g in gates} == {"a": "a/surrogate.json: bad", "b": "b/surrogate.json: worse"}
