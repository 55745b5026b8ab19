"""Unit tests of suite loading, language codes and the bundled suites' validity."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from pytest_mirage.errors import ModelError, SuiteError
from pytest_mirage.models.replay import ReplayModel
from pytest_mirage.suites.loader import load_suite
from pytest_mirage.suites.resolve import bundled_suites, load_ref, suite_ref
from pytest_mirage.suites.tomllines import key_lines
from pytest_mirage.text.langcodes import MIRAGE_LANGUAGES, check_lang, language_name

ROOT = Path(__file__).resolve().parents[2]


def test_language_codes() -> None:
    assert check_lang("hi") is None and check_lang("yue") is None
    assert "use 'en'" in (check_lang("eng") or "")
    assert "use 'pt'" in (check_lang("pt-BR") or "")
    assert language_name("km") == "Khmer" and language_name("sw") == "Swahili"


def test_bundled_suites_found_and_valid() -> None:
    found = bundled_suites()
    assert {"mirage-mini", "khmer-telecom"} <= set(found)


def test_mirage_mini_shape() -> None:
    s = load_suite(ROOT / "suites" / "mirage-mini")
    counts = Counter(c.lang for c in s.cases)
    assert set(counts) == set(MIRAGE_LANGUAGES)
    assert all(n >= 12 for n in counts.values()), counts
    for c in s.cases:
        assert 6 <= len(c.passages) <= 10, c.id
        assert 1 <= len(c.relevant) <= 3, c.id
        assert c.answers, c.id
        assert all("#" in p.id for p in c.passages), c.id


def test_khmer_telecom_shape() -> None:
    s = load_suite(ROOT / "suites" / "khmer-telecom")
    assert s.mode == "retrieval" and s.corpus is not None
    assert len({p.doc for p in s.corpus}) >= 25 and len(s.corpus) >= 200
    assert len(s.cases) >= 200 and {c.lang for c in s.cases} == {"km"}
    assert all(c.meta.get("category") for c in s.cases)
    assert all(c.relevant and c.answers and c.relevant_docs for c in s.cases)


def test_cases_sorted_and_relevant_docs() -> None:
    s = load_suite(ROOT / "tests" / "data" / "demo")
    assert [c.id for c in s.cases] == sorted(c.id for c in s.cases)
    c = s.case("en-001")
    assert c.relevant_docs == ("9232",)
    with pytest.raises(KeyError):
        s.case("nope")


def test_names_the_manifest_accepts_match_their_implementations() -> None:
    # the suites package names them without importing models/prompts (which import suites)
    from pytest_mirage.models.control import CONTROLS
    from pytest_mirage.prompts import builtin_templates
    from pytest_mirage.suites.manifest import BUILTIN_TEMPLATES, REFERENCE_CONTROLS

    assert tuple(CONTROLS) == REFERENCE_CONTROLS
    assert tuple(builtin_templates()) == BUILTIN_TEMPLATES


# ---------------------------------------------------------------------------- language codes
@pytest.mark.parametrize("code", ["km", "yo", "sw", "hi", "yue", "ceb", "haw", "fil"])
def test_real_language_codes_are_accepted(code: str) -> None:
    assert check_lang(code) is None


@pytest.mark.parametrize(("code", "message"), [
    ("qqq", "neither an ISO 639-1 code nor an ISO 639-3 code"),
    ("xx", "neither an ISO 639-1 code nor an ISO 639-3 code"),
    ("swh", "use 'sw'"),
    ("khm", "use 'km'"),
    ("ger", "use 'de'"),
    ("und", "(undetermined), a special ISO 639 code"),
    ("YUE", "language codes are lowercase"),
    ("zh-Hant", "use 'zh'"),
    ("x" * 100000, "'xxxxxxxxxxxxxxxxxxxx...'"),
])
def test_unreal_language_codes_are_rejected(code: str, message: str) -> None:
    assert message in (check_lang(code) or "")


def test_language_names_come_from_the_iso_table() -> None:
    assert language_name("yue") == "Cantonese"  # the curated prompt name wins
    assert language_name("dje") == "Zarma" and language_name("qqq") == "qqq"


# ---------------------------------------------------------------------------- manifest key lines
def test_key_lines_of_tricky_toml() -> None:
    text = (
        '# [gates] in a comment\n'                          # 1
        'prompt.template = "mirage"  # [gate]\n'            # 2
        '[suite]\n'                                         # 3
        'description = """\n'                               # 4
        '[gate]\n'                                          # 5 (inside a string)
        'k = 3 """"\n'                                      # 6
        '"cases" = ["a", # c\n'                             # 7
        '   "b"]\n'                                         # 8
        '"q\\"uo\\u0074" . sub = { "a" = 1, b.c = [1, {x = 2}] }\n'  # 9
        '[ gates ]\n'                                       # 10
        '"language_match.mean@hi?" = ">= 0.9"\n'            # 11
        "'literal.key' = '>= 1'\n"                          # 12
        '[[arr]]\n'                                         # 13
        'x = 1\n'                                           # 14
    )
    lines = key_lines(text)
    assert lines[("prompt", "template")] == 2 and lines[("suite",)] == 3
    assert lines[("suite", "description")] == 4 and ("suite", "k") not in lines and ("gate",) not in lines
    assert lines[("suite", "cases", 1)] == 8
    assert lines[("suite", 'q"uot', "sub", "b", "c", 1, "x")] == 9
    assert lines[("gates", "language_match.mean@hi?")] == 11 and lines[("gates", "literal.key")] == 12
    assert lines[("arr", 0, "x")] == 14


def write_suite(folder: Path, manifest: str, cases: list[dict[str, object]] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "suite.toml").write_text(manifest, encoding="utf-8")
    good = {"id": "en-001", "lang": "en", "question": "Q?", "passages": [{"id": "1#0", "text": "A."}],
            "relevant": ["1#0"], "answers": ["A."]}
    (folder / "cases.jsonl").write_text("\n".join(json.dumps(c) for c in (cases or [good])) + "\n", encoding="utf-8")
    return folder


def test_rules_keep_their_lines_in_every_toml_form(tmp_path: Path) -> None:
    manifest = (
        'gates."hit_at_k.mean" = ">= 0.1"\n'                                  # 1: dotted key, top level
        'thresholds = { "citation_recall" = ">= 0.5", "bleu@en" = "> 0" }\n'  # 2: inline table
        '  gates . "citation_recall.ci_low" =   ">= 0.2"   # a comment\n'     # 3: indented, spaced dots
        'gates."language_match.mean@sw?" = ">= 0.8"\n'                        # 4: optional, no sw case
        '[suite]\n'
        'name = "lines"\n'
        'cases = ["cases.jsonl"]\n'
    )
    suite = load_suite(write_suite(tmp_path / "lines", manifest))
    got = [(r.gate, r.key, r.value, r.line, r.optional, r.lang) for r in suite.rules]
    assert got == [
        (False, "citation_recall", ">= 0.5", 2, False, None),
        (False, "bleu@en", "> 0", 2, False, "en"),
        (True, "hit_at_k.mean", ">= 0.1", 1, False, None),
        (True, "citation_recall.ci_low", ">= 0.2", 3, False, None),
        (True, "language_match.mean@sw", ">= 0.8", 4, True, "sw"),
    ]
    rule = suite.rules[4]
    assert rule.source == f"{tmp_path / 'lines' / 'suite.toml'}:4" and rule.expr == "language_match.mean@sw >= 0.8"
    # the old mappings still read the same (the optional marker is not part of the key)
    assert dict(suite.thresholds) == {"citation_recall": ">= 0.5", "bleu@en": "> 0"}
    assert dict(suite.gates) == {"hit_at_k.mean": ">= 0.1", "citation_recall.ci_low": ">= 0.2",
                                 "language_match.mean@sw": ">= 0.8"}

    table = '[suite]\nname = "lines"\ncases = ["cases.jsonl"]\n[gates."language_match.mean@sw?"]\n'
    with pytest.raises(SuiteError, match=r"suite.toml:4: \[gates\] 'language_match.mean@sw\?': found a table"):
        load_suite(write_suite(tmp_path / "table", table))


def test_problems_are_reported_file_by_file_in_line_order(tmp_path: Path) -> None:
    manifest = '[suite]\nname = "order"\ncases = ["cases.jsonl"]\nk = 0\n[gate]\n"x.mean" = ">= 1"\n'
    bad = {"id": "en-002", "lang": "qqq", "question": "Q?", "passages": [{"id": "1#0", "text": "A."}], "relevant": []}
    folder = write_suite(tmp_path / "order", manifest, [bad, {**bad, "id": "en\x1b"}])
    with pytest.raises(SuiteError) as err:
        load_suite(folder)
    where = [line.split(": ")[0].rsplit("/", 1)[-1] for line in str(err.value).splitlines()]
    assert where == ["suite.toml:4", "suite.toml:5", "cases.jsonl:1", "cases.jsonl:1", "cases.jsonl:2"]


def test_symlink_inside_the_folder_is_fine(tmp_path: Path) -> None:
    folder = write_suite(tmp_path / "links", '[suite]\nname = "links"\ncases = ["data/*.jsonl"]\n')
    (folder / "data").mkdir()
    (folder / "data" / "cases.jsonl").symlink_to(folder / "cases.jsonl")
    assert [c.id for c in load_suite(folder).cases] == ["en-001"]


def test_bom_in_manifest_and_cases_is_accepted(tmp_path: Path) -> None:
    folder = write_suite(tmp_path / "bom", '[suite]\nname = "bom"\ncases = ["cases.jsonl"]\n')
    for name in ("suite.toml", "cases.jsonl"):
        (folder / name).write_bytes(b"\xef\xbb\xbf" + (folder / name).read_bytes())
    assert load_suite(folder).name == "bom"


def test_load_ref_and_suite_ref(tmp_path: Path) -> None:
    demo = ROOT / "tests" / "data" / "demo"
    ref = suite_ref(str(demo), tmp_path)
    assert ref == str((demo / "suite.toml").resolve()) and load_ref(ref).name == "demo"
    spec = f"miracl:{ROOT / 'fixtures' / 'miracl'}?lang=yo"
    assert suite_ref(spec, tmp_path) == spec and load_ref(spec).name == "miracl-yo-dev"
    assert load_ref(suite_ref("mirage-mini", tmp_path)).name == "mirage-mini"


# ---------------------------------------------------------------------------- replay files
def test_replay_file_without_suite_field_must_fit_the_suite(tmp_path: Path) -> None:
    demo = load_suite(ROOT / "tests" / "data" / "demo")
    other = load_suite(ROOT / "fixtures" / "suites" / "oracle-tiny")
    # recorded for oracle-tiny (same case ids as demo's en-001), without a suite field
    lines = [{"case_id": c.id, "model": "m", "output": f"x [{c.relevant[0]}]", "citations": list(c.relevant)}
             for c in other.cases if c.lang == "sw" or c.id == "en-001"]
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    model = ReplayModel(path)
    assert model.check_suite(other) is None
    msg = model.check_suite(demo) or ""
    assert msg.startswith(f"replay:{path}:") and "lines name cases that suite 'demo' does not have" in msg
    # same case ids, different passages: the citations give it away
    same_ids = [{**x, "case_id": c.id} for x, c in zip(lines, demo.cases, strict=False)]  # cite other passages
    path.write_text("".join(json.dumps(x) + "\n" for x in same_ids), encoding="utf-8")
    msg = ReplayModel(path).check_suite(demo) or ""
    assert "cite or retrieve only passages their case does not have in suite 'demo'" in msg
    # with a suite field the file says where it belongs: no guessing
    tagged = [{**x, "suite": "demo"} for x in same_ids]
    path.write_text("".join(json.dumps(x) + "\n" for x in tagged), encoding="utf-8")
    assert ReplayModel(path).check_suite(demo) is None


def test_replay_answers_are_errors_for_a_suite_the_file_does_not_fit(tmp_path: Path) -> None:
    from pytest_mirage.evaluate.requests import build_request

    demo = load_suite(ROOT / "tests" / "data" / "demo")
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps({"case_id": f"zz-{i}", "model": "m", "output": "x"}) + "\n" for i in range(3))
                    + json.dumps({"case_id": demo.cases[0].id, "model": "m", "output": "x"}) + "\n", encoding="utf-8")
    model = ReplayModel(path)
    out = model.answer_batch([build_request(demo, demo.cases[0], retrieves=True)])
    assert isinstance(out[0], ModelError) and "3 of 4 lines name cases" in str(out[0])
