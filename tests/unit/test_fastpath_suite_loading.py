"""The fast paths of suite loading accept only what the detailed checks accept, and build the same objects.

* ``is_plain_id``: True only where ``id_problem`` is None (and, for ASCII ids, exactly there).
* ``_ALNUM`` matches exactly the characters for which ``str.isalnum()`` is true (every code point).
* ``_quick_passage`` / ``_quick_case`` against the detailed path (the quick functions patched out):
  whenever a quick path returns an object, the detailed path returns an equal object and records no
  problem; and for random lines built from ordinary and unusual values, ``parse_case`` /
  ``parse_passage`` give the same result and the same messages with and without the fast paths.
* The loader leaves the garbage collector as it found it, also when the suite is broken.
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from pytest_mirage.errors import SuiteError
from pytest_mirage.suites import cases
from pytest_mirage.suites.checks import MAX_ID_CHARS, id_problem, is_plain_id
from pytest_mirage.suites.loader import load_suite
from pytest_mirage.suites.model import Passage
from pytest_mirage.suites.problems import Problems

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

# characters around which the checks change their answer: controls, whitespace (ASCII and not),
# citation separators (ASCII and full-width), format characters, surrogates, '#', ':', letters, digits
CHARS = ["a", "Z", "0", "#", "-", ":", "_", ".", "é", "ज", "東", "١", "½", " ", "\t", "\n", "\x0b", "\x0c", "\r",
         "\x1c", "\x1f", "\x00", "\x1b", "\x7f", "\x85", "\xa0", "\u3000", "\u2028", "\u2029", "\u200b", "\u202e",
         "\ufeff", "\ud800", "\udfff", "[", "]", ",", ";", "，", "、", "،", "；", "［", "］", "\U0001f600"]
TEXT = st.lists(st.sampled_from(CHARS), max_size=8).map("".join)
ID = st.one_of(TEXT, st.sampled_from(["9232#1", "en-001", "kb-esim#0", "a::b", "x" * MAX_ID_CHARS,
                                       "x" * (MAX_ID_CHARS + 1), "ид-1"]))


def test_is_plain_id_is_id_problem_none_for_ascii_and_false_otherwise() -> None:
    for citable in (False, True):
        for code in range(128):
            for value in (chr(code), f"a{chr(code)}b"):
                assert is_plain_id(value, citable=citable) == (id_problem(value, citable=citable) is None), (code, citable)
        for value in ("x" * MAX_ID_CHARS, "x" * (MAX_ID_CHARS + 1), "", "é", "ид-1"):
            assert not is_plain_id(value, citable=citable) or id_problem(value, citable=citable) is None


@given(ID, st.booleans())
@settings(max_examples=3000, deadline=None)
def test_is_plain_id_implies_no_id_problem(value: str, citable: bool) -> None:
    if is_plain_id(value, citable=citable):
        assert id_problem(value, citable=citable) is None
    if value.isascii() and len(value) <= MAX_ID_CHARS:
        assert is_plain_id(value, citable=citable) == (id_problem(value, citable=citable) is None)


def test_alnum_pattern_is_isalnum_on_every_code_point() -> None:
    pattern = cases._ALNUM
    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        assert (pattern.search(ch) is not None) == ch.isalnum(), hex(code)


# ------------------------------------------------------------------------------------ case lines
def _values(text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    return st.one_of(text, st.none(), st.integers(-2, 2), st.booleans(), st.just([]), st.just({}), st.just(1.5))


LANG = st.sampled_from(["en", "sw", "km", "yue", "EN", "eng", "en-US", "und", "zz", "", " en", "hi"])


def _odd(draw: st.DrawFn, one_in: int = 10) -> bool:
    """True about once in ``one_in`` draws (a middle value: hypothesis favours the bounds)."""
    return draw(st.integers(0, one_in - 1)) == one_in // 2


@st.composite
def passage_objects(draw: st.DrawFn, corpus: bool = False, rare: int = 1) -> Any:
    """A passage object; ``rare`` makes its unusual values rarer."""
    if _odd(draw, 30 * rare):
        return draw(_values(ID))
    obj: dict[str, Any] = {}
    keys = cases.CORPUS_KEYS if corpus else cases.PASSAGE_KEYS
    for key in [*keys, "extra", "Text"]:
        if key in ("extra", "Text"):
            if _odd(draw, 30 * rare):
                obj[key] = "x"  # an unknown key
            continue
        if (_odd(draw, 30 * rare) if key in ("id", "text") else draw(st.booleans())):
            continue  # a required key missing, or an optional one absent
        odd = _odd(draw, 15 * rare)
        if key in ("id", "doc"):
            obj[key] = draw(_values(ID)) if odd else draw(st.sampled_from(["p1", "p2", "p3", "p4", "9232#1", "doc-1", "ид-1"]))
        elif key == "lang":
            obj[key] = draw(_values(LANG)) if odd else draw(st.sampled_from(["en", "sw", "km", "yue", None]))
        else:
            obj[key] = draw(_values(TEXT)) if odd else draw(st.sampled_from(["Some text.", "T", "é", "ok"]))
    return obj


@st.composite
def case_objects(draw: st.DrawFn) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    if not _odd(draw, 40):
        obj["id"] = draw(_values(ID)) if _odd(draw, 15) else draw(st.sampled_from(["c1", "en-001", "x", "é-1"]))
    if not _odd(draw, 40):
        obj["lang"] = draw(_values(LANG)) if _odd(draw, 15) else draw(st.sampled_from(["en", "sw", "yue"]))
    if not _odd(draw, 40):
        obj["question"] = draw(_values(TEXT)) if _odd(draw, 15) else "What?"
    passages: list[Any] = draw(st.lists(passage_objects(rare=5), min_size=0 if _odd(draw) else 1, max_size=3))
    if not _odd(draw, 15):
        obj["passages"] = draw(_values(TEXT)) if _odd(draw, 20) else passages
    ids = [p["id"] for p in passages if isinstance(p, dict) and isinstance(p.get("id"), str)]
    if not _odd(draw, 40):
        pool = [*ids, "k1", "k2"] if ids and not _odd(draw, 4) else ["k1", "k2", "p1", "gone", "ид-1"]
        relevant = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3, unique=not _odd(draw)))
        if _odd(draw, 15):
            relevant = draw(st.one_of(_values(TEXT), st.lists(_values(ID), max_size=2)))
        obj["relevant"] = relevant
    if draw(st.booleans()):
        answers = st.lists(st.just("Yes.") if not _odd(draw, 5) else st.one_of(TEXT, st.sampled_from(["1889", "...", "_", "½", " "])),
                           max_size=2)
        obj["answers"] = draw(_values(TEXT)) if _odd(draw, 20) else draw(answers)
    if draw(st.booleans()):
        obj["meta"] = draw(_values(TEXT)) if _odd(draw, 20) else {"qtype": "date"}
    if _odd(draw, 30):
        obj[draw(st.sampled_from(["extra", "Lang", "passage"]))] = 1
    return obj


CORPUS = {p.id: p for p in (Passage("k1", "chunk one", doc="d1"), Passage("k2", "chunk two", title="T"),
                            Passage("p1", "a chunk sharing a passage id", doc="d3"))}


def _detailed() -> Any:
    """The quick paths patched out: parse_case and parse_passage run only their detailed checks."""
    return mock.patch.multiple(cases, _quick_case=lambda *a, **k: None, _quick_passage=lambda *a, **k: None)


def _parse_case(obj: dict[str, Any], mode: Any, corpus: Any, rejected: tuple[str, ...]) -> tuple[Any, list[str], int]:
    problems = Problems()
    case = cases.parse_case(obj, "f.jsonl:1", "s", mode, corpus, problems, rejected)
    return case, problems.messages(), problems.count


@given(case_objects(), st.sampled_from(["oracle", "retrieval"]), st.booleans(),
       st.sampled_from([(), ("gone",)]))
@settings(max_examples=2000, deadline=None)
def test_parse_case_is_the_same_with_and_without_the_fast_path(obj: dict[str, Any], mode: str, with_corpus: bool,
                                                               rejected: tuple[str, ...]) -> None:
    corpus = CORPUS if with_corpus and mode == "retrieval" else None
    quick = cases._quick_case(obj, "f.jsonl:1", "s", mode, corpus)  # type: ignore[arg-type]
    fast = _parse_case(obj, mode, corpus, rejected)
    with _detailed():
        slow = _parse_case(obj, mode, corpus, rejected)
    assert fast == slow
    event("fast path" if quick is not None else "valid, detailed path" if slow[0] is not None else "invalid")
    if quick is not None:
        assert slow == (quick, [], 0)


@given(passage_objects(), st.booleans())
@settings(max_examples=2000, deadline=None)
def test_parse_passage_is_the_same_with_and_without_the_fast_path(obj: Any, corpus_line: bool) -> None:
    keys = cases.CORPUS_KEYS if corpus_line else cases.PASSAGE_KEYS

    def parse() -> tuple[Passage | None, list[str], int]:
        problems = Problems()
        p = cases.parse_passage(obj, "f.jsonl:1", "" if corpus_line else "passages[0]", problems, keys)
        return p, problems.messages(), problems.count

    quick = cases._quick_passage(obj, cases._KEY_SETS[keys])
    fast = parse()
    with _detailed():
        slow = parse()
    assert fast == slow
    event("fast path" if quick is not None else "valid, detailed path" if slow[0] is not None else "invalid")
    if quick is not None:
        assert slow == (quick, [], 0)


def test_the_fast_paths_take_the_ordinary_lines() -> None:
    """The bundled fixtures are plainly valid: every line takes the fast path (no fallback)."""
    for name in ("oracle-tiny", "retrieval-tiny"):
        suite = load_suite(FIXTURES / "suites" / name)
        corpus = {p.id: p for p in suite.corpus} if suite.corpus else None
        for case in suite.cases:
            path, _, line = case.source.rpartition(":")
            obj = dict(next(o for n, o in cases.iter_jsonl(Path(path), Problems()) if n == int(line)))
            assert cases._quick_case(obj, case.source, suite.name, suite.mode, corpus) == case


# ------------------------------------------------------------------------------------ loader
@pytest.mark.parametrize("suite", [FIXTURES / "suites" / "oracle-tiny", FIXTURES / "malformed" / "case-deep-nesting"])
@pytest.mark.parametrize("enabled", [True, False])
def test_load_suite_leaves_the_garbage_collector_as_it_found_it(suite: Path, enabled: bool) -> None:
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        try:
            load_suite(suite)
        except SuiteError:
            pass
        assert gc.isenabled() == enabled
    finally:
        (gc.enable if was else gc.disable)()
