"""Every suite validation error names file:line, the field, what was found and what was expected."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def _esc(pattern: str) -> str:
    """Escape '[' for fnmatch (messages quote lists like ['9#9'])."""
    return pattern.replace("[", "[[]")


GOOD = {"id": "x-1", "lang": "en", "question": "Q?", "passages": [{"id": "1#0", "text": "A."}, {"id": "1#1", "text": "B."}],
        "relevant": ["1#0"], "answers": ["A."]}


def _suite(pytester: pytest.Pytester, name: str, lines: list[str | bytes], manifest: str | None = None) -> None:
    d = pytester.path / name
    d.mkdir()
    (d / "suite.toml").write_text(manifest or f'[suite]\nname = "{name}"\nmode = "oracle"\ncases = ["cases.jsonl"]\n')
    data = b"\n".join(x if isinstance(x, bytes) else x.encode() for x in lines) + b"\n"
    (d / "cases.jsonl").write_bytes(data)


def _bad(**changes: object) -> str:
    obj = dict(GOOD)
    for k, v in changes.items():
        if v is KeyError:
            obj.pop(k)
        else:
            obj[k] = v
    return json.dumps(obj, ensure_ascii=False)


CASES = [
    ("missing-field", [_bad(question=KeyError)], "cases.jsonl:1: field 'question' is missing; expected a string"),
    ("duplicate-id", [json.dumps(GOOD), json.dumps(GOOD)], "cases.jsonl:2: field 'id': duplicate case id 'x-1' (first at *cases.jsonl:1)*"),
    ("relevant-unknown", [_bad(relevant=["9#9"])], "cases.jsonl:1: field 'relevant': ids ['9#9'] are not among the case's passages"),
    ("bad-lang", [_bad(lang="eng")], "cases.jsonl:1: field 'lang': found 'eng'; this language has an ISO 639-1 code: use 'en'"),
    ("bad-lang2", [_bad(lang="EN")], "cases.jsonl:1: field 'lang': language codes are lowercase*"),
    ("non-utf8", [b'{"id": "x", "lang": "en", "question": "caf\xe9"}'], "cases.jsonl:1: not valid UTF-8*save the file as UTF-8"),
    ("bad-json", ['{"id": "x",'], "cases.jsonl:1: invalid JSON at column *expected one JSON object per line"),
    ("not-object", ['[1, 2]'], "cases.jsonl:1: found a JSON list, expected a JSON object per line"),
    ("wrong-type", [_bad(answers="A.")], "cases.jsonl:1: field 'answers': found 'A.', expected a list of strings*"),
    ("empty-passages", [_bad(passages=[], relevant=[])], "cases.jsonl:1: field 'passages' is empty*"),
]


@pytest.mark.parametrize(("name", "lines", "message"), CASES, ids=[c[0] for c in CASES])
def test_case_validation_messages(pytester: pytest.Pytester, name: str, lines: list, message: str) -> None:
    _suite(pytester, name, lines)
    res = pytester.runpytest(name)
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    res.stdout.fnmatch_lines([f"*{name}/{_esc(message)}"])
    assert "Traceback" not in res.stdout.str()


@pytest.mark.parametrize(("manifest", "message"), [
    ('[suite]\nname = "Bad Name"\ncases = ["cases.jsonl"]\n', "*suite.toml:2: [[]suite[]] name: found 'Bad Name'; expected lowercase*"),
    ('[suite]\nname = "m"\nmode = "closed"\ncases = ["cases.jsonl"]\n', "*suite.toml:3: [[]suite[]] mode: found 'closed'; expected \"oracle\" or \"retrieval\""),
    ('[suite]\nname = "m"\ncases = ["nope/*.jsonl"]\n', "*suite.toml:3: [[]suite[]] cases: 'nope/*.jsonl' matches no file*"),
    ('[suite]\nname = "m"\nmode = "retrieval"\ncases = ["cases.jsonl"]\n', "*[[]suite[]] corpus: missing*"),
    ('[suite\nname = "m"\n', "*suite.toml:1: invalid TOML*"),
    ('[suite]\nname = "m"\ncases = ["cases.jsonl"]\n[thresholds]\n"citation_recall" = "=> 0.5"\n', "*suite.toml:5: [[]thresholds[]] 'citation_recall': cannot parse*"),
    ('[suite]\nname = "m"\ncases = ["cases.jsonl"]\n[gates]\n"citaton_recall.mean" = ">= 0.5"\n', "*Unknown metric 'citaton_recall'. Did you mean: citation_recall*"),
    ('[suite]\nname = "m"\ncases = ["cases.jsonl"]\n[prompt]\ntemplate = "nope.txt"\n', "*[[]prompt[]] template: found 'nope.txt'; expected a built-in template*"),
], ids=["name", "mode", "glob", "corpus", "toml", "rule", "unknown-metric", "template"])
def test_manifest_validation_messages(pytester: pytest.Pytester, manifest: str, message: str) -> None:
    _suite(pytester, "m", [json.dumps(GOOD)], manifest=manifest)
    res = pytester.runpytest("m")
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    res.stdout.fnmatch_lines([message])


def test_unknown_keys_are_errors(pytester: pytest.Pytester) -> None:
    _suite(pytester, "w", [_bad(answer=["A."])])
    res = pytester.runpytest("w")
    res.assert_outcomes(errors=1)
    res.stdout.fnmatch_lines(["*cases.jsonl:1: unknown key 'answer'; known keys: *. Did you mean: answers?"])


def test_all_problems_reported_together(pytester: pytest.Pytester) -> None:
    _suite(pytester, "many", [_bad(lang="eng"), '{"id": ', _bad(id="x-2", relevant=["nope"])])
    res = pytester.runpytest("many")
    res.stdout.fnmatch_lines(["*cases.jsonl:1: field 'lang'*", "*cases.jsonl:2: invalid JSON*", "*cases.jsonl:3: field 'relevant'*"])


def test_broken_suite_does_not_stop_other_suites(pytester: pytest.Pytester, demo_suite: Path) -> None:
    _suite(pytester, "broken", ['{"id": '])
    res = pytester.runpytest("demo", "broken")
    res.assert_outcomes(passed=6, errors=1)
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    res.stdout.fnmatch_lines(["*ERROR collecting broken/suite.toml*", "*broken/cases.jsonl:1: invalid JSON*"])


@pytest.mark.parametrize(("manifest", "message"), [
    ('[suite]\nname = "m"\ncases = ["cases.jsonl"]\nreference_models = ["control:oracel"]\n',
     "*suite.toml:4: [[]suite[]] reference_models: found 'control:oracel'; expected one of control:oracle*Did you mean*"),
    ('[suite]\nname = "m"\ncases = ["cases.jsonl"]\nreference_models = ["openai:gpt-4o"]\n',
     "*reference models are offline systems*"),
], ids=["typo", "online"])
def test_reference_models_are_validated_at_load(pytester: pytest.Pytester, demo_suite: Path, manifest: str,
                                                message: str) -> None:
    _suite(pytester, "m", [json.dumps(GOOD)], manifest=manifest)
    res = pytester.runpytest("m", "demo")
    res.assert_outcomes(passed=6, errors=1)
    res.stdout.fnmatch_lines([message])


def test_passage_ids_must_be_citable(pytester: pytest.Pytester) -> None:
    bad = dict(GOOD, passages=[{"id": "a]b", "text": "A."}, {"id": "1#1", "text": "B."}], relevant=["1#1"])
    _suite(pytester, "ids", [json.dumps(bad)])
    res = pytester.runpytest("ids")
    res.stdout.fnmatch_lines([_esc("*cases.jsonl:1: passages[0] field 'id': 'a]b' contains ']'*")])


def test_reference_answer_without_letters(pytester: pytest.Pytester) -> None:
    _suite(pytester, "ans", [_bad(answers=["!!!"])])
    res = pytester.runpytest("ans")
    res.stdout.fnmatch_lines([_esc("*cases.jsonl:1: field 'answers'[0]: found '!!!'; a reference answer needs letters*")])


def test_duplicate_suite_names_are_an_error(pytester: pytest.Pytester, demo_suite: Path) -> None:
    import shutil

    shutil.copytree(demo_suite, pytester.path / "demo2")
    res = pytester.runpytest("demo", "demo2")
    res.assert_outcomes(passed=6, errors=1)
    res.stdout.fnmatch_lines(["*suite name 'demo' is already used by *demo*suite.toml*"])


def test_bom_is_accepted(pytester: pytest.Pytester) -> None:
    _suite(pytester, "bom", [b"\xef\xbb\xbf" + json.dumps(GOOD).encode()])
    pytester.runpytest("bom").assert_outcomes(passed=1)


def test_bad_language_in_rule(pytester: pytest.Pytester, demo_suite: Path) -> None:
    res = pytester.runpytest("demo", "--mirage-gate", "bleu.mean@HI >= 0.5")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*@HI: language codes are lowercase*"])


def test_gate_on_a_language_without_cases_fails_unless_optional(pytester: pytest.Pytester, demo_suite: Path) -> None:
    res = pytester.runpytest("demo", "--mirage-gate", "bleu.mean@de >= 0.5")
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    res.stdout.fnmatch_lines(["FAILED gate demo [[]de[]] extractive: bleu.mean@de >= 0.5 -> n/a (*no selected case in "
                              "language 'de'; mark the gate optional as 'bleu.mean@de?'*"])
    res = pytester.runpytest("demo", "--mirage-gate", "bleu.mean@de? >= 0.5")
    assert res.ret == pytest.ExitCode.OK
    res.stdout.fnmatch_lines(["NOT EVALUABLE gate demo [[]de[]] extractive: bleu.mean@de? >= 0.5 -> n/a (*no selected "
                              "case in language 'de')"])
