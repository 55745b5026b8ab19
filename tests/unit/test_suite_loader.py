"""Unit tests of suite loading, language codes and the bundled suites' validity."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from pytest_mirage.langcodes import MIRAGE_LANGUAGES, check_lang, language_name
from pytest_mirage.suites.loader import load_suite
from pytest_mirage.suites.resolve import bundled_suites

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
