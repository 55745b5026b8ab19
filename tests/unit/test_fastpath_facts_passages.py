"""The passage-by-passage fact checks of ``metrics/facts.py`` against the whole-evidence form they
replace (kept here as the reference, with the answer sentences' full :func:`facts_of`): the same
FactCheck lists on generated answers and passages, cited and uncited, in several languages."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_mirage.metrics import facts
from pytest_mirage.metrics.analysis import clear_caches
from pytest_mirage.metrics.facts import Evidence, FactCheck, Facts, check_facts
from pytest_mirage.suites.model import Passage


def ref_name_supported(name: str, ev: Evidence) -> bool:
    if name in ev.words or (len(name) >= 4 and name in ev.text):
        return True
    if "-" in name and all(ref_name_supported(p, ev) for p in name.split("-") if p):
        return True
    if len(name) >= 5:
        stem = name[:max(4, len(name) - 2)]
        return any(w.startswith(stem) for w in ev.words)
    return False


def ref_check_sentence(f: Facts, ev: Evidence, asked: frozenset[float] = frozenset()) -> list[FactCheck]:
    """Every fact against the union of all the evidence's passages (``check_facts`` passes no
    question values: ``asked`` is empty)."""
    out = [FactCheck("number", n.text, facts._number_supported(n, ev)) for n in f.numbers]
    out += [FactCheck("month", str(m), m in ev.all_months) for m in f.months]
    out += [FactCheck("name", n, ref_name_supported(n, ev)) for n in f.names]
    out += [FactCheck("quote", q, q in ev.text) for q in f.quotes]
    for neg in f.negations:
        ok = any(facts._overlap(neg.scope, e.scope) >= 1 or
                 (len(neg.clause) >= 2 and facts._overlap(neg.clause, e.clause) >= max(2, math.ceil(0.5 * len(neg.clause))))
                 for e in ev.negations) if neg.scope else bool(ev.negations)
        out.append(FactCheck("negation", " ".join(sorted(neg.scope)), ok))
    if not f.negations and f.units and not f.reply:
        for e in ev.negations:
            scope_repeated = len(e.scope) >= 2 and facts._overlap(e.scope, f.units) >= math.ceil(0.5 * len(e.scope))
            clause_restated = len(e.clause) >= 2 and len(f.units) >= 2 and \
                facts._overlap(e.clause, f.units) >= math.ceil(0.5 * len(e.clause)) and \
                (facts.lexicon(ev.lang).scan or facts._overlap(f.units, e.clause) >= math.ceil(0.6 * len(f.units)))
            if (scope_repeated or clause_restated) and (not e.heads or facts._overlap(e.heads, f.units) >= 1):
                out.append(FactCheck("dropped_negation", " ".join(sorted(e.scope)), False))
                break
    return out


_PIECES = {
    "en": ["The", "Nokia", "Thuraya", "ID", "4G", "A320", "X", "Ab", "Abc-Def", "Abcdefg", "Abcdexy", "«Red Sea»",
           "“Blue”", "not", "never", "no", "two", "twenty-one", "3", "2,460", "2.46", "2.5 million", "2483000", "May",
           "2019-05-03", "1/2/2020", "30", "days", "is", "and", "signal", "-", ",", ".", "\n"],
    "km": ["ទូរស័ព្ទ", "Thuraya", "ID", "MB", "៣០", "ថ្ងៃ", "មិន", "គ្មាន", "ពីរ", "លាន", "មួយ", "បី", "២", "រៀល",
           "ការប្រើ", "ន.ទ.ក", "អត់ធ្មត់", "។", " ", "(", ")", "\u17d2", "\u0301", "ab"],
    "ja": ["トヨタ", "東京", "3月", "二〇一九年", "ない", "ません", "『赤い海』", "5G", "Sony", "。", "、"],
    "ru": ["Москва", "Транссибирская", "Транссибу", "не", "нет", "два", "2,5", "млн", "Мая", ".", ","],
}


def _text(lang: str) -> st.SearchStrategy[str]:
    sep = "" if lang in ("km", "ja") else " "
    return st.lists(st.sampled_from(_PIECES[lang]), min_size=1, max_size=12).map(sep.join)


@st.composite
def _case(draw: st.DrawFn) -> tuple[str, tuple[Passage, ...], str]:
    lang = draw(st.sampled_from(sorted(_PIECES)))
    n = draw(st.integers(1, 4))
    passages = tuple(Passage(f"p{i}", draw(_text(lang)), draw(st.sampled_from([None, "Title", "Nokia"])))
                     for i in range(n))
    sentences = []
    for _ in range(draw(st.integers(1, 3))):
        s = draw(_text(lang))
        cite = draw(st.sampled_from(["", " [p0]", " [p1]", " [p0][p2]", " [zz]"]))
        sentences.append(s + cite + ".")
    return " ".join(sentences), passages, lang


def _reference(monkeypatch: pytest.MonkeyPatch, answer: str, passages: tuple[Passage, ...], lang: str) -> list[FactCheck]:
    clear_caches()
    with monkeypatch.context() as m:
        m.setattr(facts, "_check_sentence", ref_check_sentence)
        m.setattr(facts, "_sentence_facts", facts.facts_of)  # the sentence's facts with the evidence side
        out = check_facts(answer, passages, lang)
    clear_caches()
    return out


def test_passage_by_passage_checks_equal_the_whole_evidence(monkeypatch: pytest.MonkeyPatch) -> None:
    @settings(max_examples=400, deadline=None, derandomize=True)
    @given(_case())
    def check(case: tuple[str, tuple[Passage, ...], str]) -> None:
        answer, passages, lang = case
        clear_caches()
        fast = check_facts(answer, passages, lang)
        assert fast == _reference(monkeypatch, answer, passages, lang)

    check()


def test_name_held_is_the_first_test_of_name_supported() -> None:
    ev = Evidence(["Nokia 4G ab\ncd", "Abc-Def xyz", "Москва", "ток"], "en")
    for name in ["nokia", "4g", "ab", "cd", "ab\ncd", "ab cd", "", " ", "abc-def", "abc", "def", "xyz", "моск",
                 "москва", "ток", "to", "okia", "kia 4g", "zz"]:
        expected = name in ev.words or (len(name) >= 4 and name in ev.text)
        assert facts._name_held(name, ev) == expected, name
        assert (facts._name_held(name, ev) or facts._name_supported(name, ev)) == ref_name_supported(name, ev)


def test_hard_set_with_the_whole_evidence_form(monkeypatch: pytest.MonkeyPatch) -> None:
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    n = 0
    for path in sorted((root / "fixtures" / "faithfulness").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            ps = tuple(Passage(p["id"], p["text"], p.get("title")) for p in r["passages"])
            for answer in (str(r["faithful"]), str(r["unfaithful"]), re.sub(r"\[[^\]]*\]", "", str(r["unfaithful"]))):
                clear_caches()
                assert check_facts(answer, ps, str(r["lang"])) == _reference(monkeypatch, answer, ps, str(r["lang"]))
                n += 1
    assert n > 100
