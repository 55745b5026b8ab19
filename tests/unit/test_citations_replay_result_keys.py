"""Citation resolution, replay fidelity, results keys, gates."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_mirage.aggregate.expr import parse_rule
from pytest_mirage.aggregate.gates import evaluate_gates
from pytest_mirage.evaluate.requests import build_request, finalize_answer
from pytest_mirage.models.base import Answer
from pytest_mirage.prompts import find_citations
from pytest_mirage.results import CaseResult
from pytest_mirage.suites.loader import load_suite

ROOT = Path(__file__).resolve().parents[2]


def test_index_citations_never_index_the_corpus_in_retrieval_mode() -> None:
    suite = load_suite(ROOT / "suites" / "khmer-telecom")
    case = suite.cases[0]
    req = build_request(suite, case, retrieves=True)
    ans = finalize_answer(req, Answer(case.id, "pipe", "##Answer: ចម្លើយ [1]"))  # no retrieved ids given
    assert ans.citations == () and ans.invalid_citations == ("1",)
    # an explicit corpus id is still a valid citation
    ans = finalize_answer(req, Answer(case.id, "pipe", f"##Answer: ចម្លើយ [{case.relevant[0]}]"))
    assert ans.citations == (case.relevant[0],)


def test_invalid_citations_survive_record_and_replay() -> None:
    suite = load_suite(ROOT / "tests" / "data" / "demo")
    case = suite.case("en-001")
    req = build_request(suite, case, retrieves=True)
    first = finalize_answer(req, Answer(case.id, "m", "##Answer: 1889 [9232#1][zzz][9] [9232#1]"))
    assert first.citations == ("9232#1",) and set(first.invalid_citations) == {"zzz", "9"}
    line = first.to_run_line()
    replayed = finalize_answer(req, Answer(case.id, "m", line["output"], answer=line["answer"],
                                           citations=tuple(line["citations"])))
    assert replayed.citations == first.citations and replayed.invalid_citations == first.invalid_citations


def test_arabic_comma_and_full_width_brackets() -> None:
    assert find_citations("[a#0، b#0]", ["a#0", "b#0"]) == (["a#0", "b#0"], [])
    assert find_citations("［a#0］［b#0］", ["a#0", "b#0"]) == (["a#0", "b#0"], [])


def _res(model: str, value: float | None, outcome: str = "passed") -> CaseResult:
    return CaseResult(suite="s", suite_ref="r", case_id=f"c{value}", lang="hi", model=model,
                      metrics={"hit_at_k": value} if outcome != "error" else {}, outcome=outcome)


def test_gate_whose_every_value_is_null_fails_with_a_reason() -> None:
    gates = evaluate_gates([_res("m", None), _res("m", None)], {"s": [parse_rule("hit_at_k.mean >= 0.8", gate=True)]})
    assert gates[0].passed is False and "every hit_at_k value is null" in gates[0].note


def test_gate_language_without_cases_fails_unless_optional() -> None:
    gates = evaluate_gates([_res("m", 1.0)], {"s": [parse_rule("hit_at_k.mean@de >= 0.8", gate=True)]})
    assert [(g.lang, g.passed) for g in gates] == [("de", False)]
    gates = evaluate_gates([_res("m", 1.0)], {"s": [parse_rule("hit_at_k.mean@de? >= 0.8", gate=True)]})
    assert [(g.lang, g.passed) for g in gates] == [("de", None)]


def test_null_value_fails_a_case_threshold_unless_optional() -> None:
    from pytest_mirage.aggregate.thresholds import check_thresholds

    rule = parse_rule("language_match >= 0.5", gate=False, source="--mirage-threshold")
    failures, checks = check_thresholds({"language_match": None}, [rule], "sw", {"language_match": "fewer than 10 letters"})
    assert checks == {"language_match": False}
    assert failures == ["language_match is null (fewer than 10 letters): the threshold 'language_match >= 0.5' cannot "
                        "be met (--mirage-threshold); mark it optional as 'language_match?' if a null value is fine"]
    optional = parse_rule("language_match? >= 0.5", gate=False)
    assert optional.optional and check_thresholds({"language_match": None}, [optional], "sw") == ([], {})


def test_two_suites_with_equal_node_ids_keep_their_results(pytester: pytest.Pytester,
                                                           tmp_path_factory: pytest.TempPathFactory) -> None:
    outside = tmp_path_factory.mktemp("outside")
    for name in ("one", "two"):
        d = outside / name
        shutil.copytree(ROOT / "tests" / "data" / "demo", d)
        toml = d / "suite.toml"
        toml.write_text(toml.read_text().replace('name = "demo"', f'name = "{name}"'))
    report = pytester.path / "r.json"
    res = pytester.runpytest(str(outside / "one"), str(outside / "two"), "--mirage-lang=hi", f"--mirage-report={report}")
    assert res.ret == 0
    rep = json.loads(report.read_text())
    assert sorted({r["suite"] for r in rep["results"] if r["model"] == "extractive"}) == ["one", "two"]


@pytest.mark.parametrize(("expr", "gate", "message"), [
    ("citation_recall.mean >= -1", True, "is always true"),
    ("rouge_l <= 7", False, "is always true"),
    ("rouge_l.pass_rate >= 1.5", True, "can never be met"),
    ("language_match > 1", False, "can never be met"),
    ("invalid_citations < 0", False, "can never be met"),
])
def test_vacuous_rules_are_named(expr: str, gate: bool, message: str) -> None:
    from pytest_mirage.aggregate.expr import vacuous
    from pytest_mirage.metrics import builtin_registry

    rule = parse_rule(expr, gate=gate, source="--mirage-gate")
    why = vacuous(rule, builtin_registry()[rule.metric].bounds)
    assert why is not None and message in why and "--mirage-gate" in why


@pytest.mark.parametrize("expr", ["citation_recall >= 0", "rouge_l <= 1", "invalid_citations <= 3",
                                  "faithfulness.ppi_low >= -0.2"])
def test_rules_at_the_ends_of_the_range_are_allowed(expr: str) -> None:
    from pytest_mirage.aggregate.expr import vacuous
    from pytest_mirage.metrics import builtin_registry

    rule = parse_rule(expr, gate="ppi" in expr)
    assert vacuous(rule, builtin_registry()[rule.metric].bounds) is None
