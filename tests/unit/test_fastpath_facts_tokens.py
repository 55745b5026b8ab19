"""The fast paths of ``metrics/facts.py`` against the straightforward forms they replace (kept here
as the reference): the same tokens, negations, digits and verdicts on generated texts in every
lexicon language."""

from __future__ import annotations

import json
import math
import re
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_mirage.metrics import facts
from pytest_mirage.metrics.facts import LEXICON_LANGS, Lexicon, Negation, Tok, check_facts, lexicon
from pytest_mirage.suites.model import Passage

ROOT = Path(__file__).resolve().parents[2]

# ---------------------------------------------------------------- references (the former code)

_REF_NONASCII_DIGIT = re.compile(r"(?![0-9])\d")


def ref_ascii_digits(text: str) -> str:
    return _REF_NONASCII_DIGIT.sub(lambda m: str(unicodedata.decimal(m.group())), text)


def ref_word_tokens(masked: str, lex: Lexicon) -> list[Tok]:
    """Every word looked up, one by one."""
    toks: list[Tok] = facts._scan(masked, 0, lex) if lex.scan else []
    for m in (facts._PLAIN_WORD if lex.scan else facts._WORD).finditer(masked):
        word, start = m.group(), m.start()
        e = facts._lookup(word, lex)
        if e is not None:
            toks.append(facts._tok(start, m.end(), e, word))
            continue
        if "-" in word:
            pieces = word.split("-")
            pos, k = start, 0
            found: list[Tok] = []
            while k < len(pieces):
                for j in range(len(pieces), k, -1):
                    piece = "-".join(pieces[k:j])
                    pe = facts._lookup(piece, lex)
                    if pe is not None:
                        found.append(facts._tok(pos, pos + len(piece), pe, piece))
                        break
                else:
                    j = k + 1
                pos += len("-".join(pieces[k:j])) + 1
                k = j
            if found and all(f.kind in ("num", "scale", "conn") for f in found):
                toks.extend(found)
                continue
        if lex.compounds and len(word) >= 2:
            seg = facts._segment(word, lex)
            if seg is not None:
                toks.extend(Tok(start, m.end(), e.kind, frozenset({e.value}), e.large, word) for e in seg)
                continue
    return toks


def ref_negations(t: str, lex: Lexicon) -> list[Negation]:
    """Every word tested, one by one."""
    out: list[Negation] = []
    text = t
    for phrase in lex.not_negations:
        text = text.replace(phrase, " " * len(phrase))
    if lex.negations or lex.negation_suffixes or lex.negation_prefixes or lex.negation_circumfixes:
        words = list(facts._SPACED_WORD.finditer(text))
        for i, m in enumerate(words):
            w = m.group()
            bare = w
            for p in lex.word_prefixes:
                if w.startswith(p) and w[len(p):] in lex.negations:
                    bare = w[len(p):]
            if bare in lex.negations or any(w.endswith(s) for s in lex.negation_suffixes) or \
                    any(w.startswith(p) and len(w) > len(p) + 1 for p in lex.negation_prefixes) or \
                    any(w.startswith(a) and w.endswith(b) and len(w) >= len(a) + len(b) + 3
                        for a, b in lex.negation_circumfixes):
                around = [x.group() for x in words[max(0, i - 3):i] + words[i + 1:i + 4]]
                out.append(Negation(facts._scope_units(" ".join(around), lex.lang),
                                    facts._clause(text, m.start(), m.end(), lex.lang)))
    for marker in lex.negation_substrings:
        start = text.find(marker)
        while start >= 0:
            end = start + len(marker)
            if facts._boundary_ok(text, start, end) or not lex.scan:
                window = text[max(0, start - 8):start] + " " + text[end:end + 8]
                out.append(Negation(facts._scope_units(window, lex.lang), facts._clause(text, start, end, lex.lang)))
            text = text[:start] + " " * len(marker) + text[end:]
            start = text.find(marker, end)
    return out


def ref_number_supported(n: facts.NumberFact, all_numbers: frozenset[float]) -> bool:
    if any(facts._close(v, e) for v in n.values for e in all_numbers):
        return True
    if n.approximate:
        for v in n.values:
            sig = facts._significant(v)
            if any(e >= facts.APPROX_MIN / 10 and facts._close(facts._sig_round(e, sig), v) for e in all_numbers):
                return True
    return False


# ---------------------------------------------------------------- generated texts


_FILLERS = ["a", "Z", "é", "x", "ab", "\u0301", "-", "'", "’", " ", " ", ".", ",", "5", "12", "ក", "\u17d2", "ก",
            "\u0e31", "中", "한", "و", "ب", "\n", "("]


def _pieces(lex: Lexicon) -> list[str]:
    """Lexicon words, affixes, word prefixes and month names, with letters, marks and punctuation."""
    entries = sorted(lex.words)
    return [*entries, *sorted(lex.negations), *lex.negation_substrings, *lex.negation_suffixes,
            *lex.negation_prefixes, *lex.not_negations, *lex.not_numbers, *lex.word_prefixes,
            *(w for w, _ in lex.month_names), *_FILLERS]


def _texts(lex: Lexicon) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(_pieces(lex)), max_size=16).map("".join)


# ---------------------------------------------------------------- tests


def test_ascii_digits_equals_the_lookahead_form_on_every_decimal_digit() -> None:
    digits = "".join(chr(cp) for cp in range(0x110000) if unicodedata.category(chr(cp)) == "Nd")
    assert facts._ascii_digits(digits) == ref_ascii_digits(digits)
    assert facts._ascii_digits("abc 123") == "abc 123"

    @settings(max_examples=300, deadline=None, derandomize=True)
    @given(st.text(alphabet=st.sampled_from([*"0123456789 a.", "٣", "۵", "७", "៣", "５", "é", "\u0301"]), max_size=20))
    def check(text: str) -> None:
        assert facts._ascii_digits(text) == ref_ascii_digits(text)

    check()


@pytest.mark.parametrize("lang", [*LEXICON_LANGS, "xx"])
def test_word_tokens_equal_looking_up_every_word(lang: str) -> None:
    lex = lexicon(lang)

    @settings(max_examples=250, deadline=None, derandomize=True)
    @given(_texts(lex))
    def check(text: str) -> None:
        assert facts._word_tokens(text, lex) == ref_word_tokens(text, lex)
        # hyphenated and compound forms of the lexicon words
        assert facts._word_tokens(text.replace(" ", "-"), lex) == ref_word_tokens(text.replace(" ", "-"), lex)
        assert facts._word_tokens(text.replace(" ", ""), lex) == ref_word_tokens(text.replace(" ", ""), lex)

    check()


def test_word_tokens_of_a_scan_language_with_plain_lexicon_words() -> None:
    # no bundled lexicon of a space-less script has a word without such a character: one that does
    # takes the plain-word pass
    km = lexicon("km")
    lex = Lexicon("km", {**km.words, "two": facts.Entry("num", 2.0)}, scan=True, max_len=km.max_len)
    assert facts._word_filter(lex).plain and not facts._word_filter(km).plain
    for text in ("two ពីរ", "two-two ពីរ", "ពីរ twos two"):
        assert facts._word_tokens(text, lex) == ref_word_tokens(text, lex)
    assert [t.text for t in facts._word_tokens("two ពីរ", lex)] == ["ពីរ", "two"]


@pytest.mark.parametrize("lang", [*LEXICON_LANGS, "xx"])
def test_negations_equal_testing_every_word(lang: str) -> None:
    lex = lexicon(lang)

    @settings(max_examples=250, deadline=None, derandomize=True)
    @given(_texts(lex))
    def check(text: str) -> None:
        expected = ref_negations(text, lex)
        assert facts._negations(text, lex) == expected
        # passages: the clause computed when read gives the same units
        lazy = [facts._PassageNegation(scope, t, a, b, lang) for scope, t, a, b in facts._negation_sites(text, lex)]
        assert [Negation(n.scope, n.clause) for n in lazy] == expected

    check()


@pytest.mark.parametrize("lang", LEXICON_LANGS)
def test_negations_equal_testing_every_word_on_each_negation_form(lang: str) -> None:
    lex = lexicon(lang)
    forms = [p + n for n in sorted(lex.negations) for p in ("", *lex.word_prefixes)]
    forms += [w + sfx for sfx in lex.negation_suffixes for w in ("do", "ca", "x")]
    forms += [pfx + w for pfx in lex.negation_prefixes for w in ("", "a", "ja", "kuwa")]
    forms += [a + w + b for a, b in lex.negation_circumfixes for w in ("", "hitaj", "ta")]
    forms += [*lex.negation_substrings, *lex.not_negations]
    found = 0
    for form in forms:
        for text in (form, f"alpha beta {form} gamma, delta epsilon.", f"x{form} {form}x {form}'s {form}-y"):
            expected = ref_negations(text, lex)
            assert facts._negations(text, lex) == expected, (form, text)
            found += bool(expected)
    assert found >= len(forms) // 2


def test_number_supported_equals_the_isclose_loop() -> None:
    values = st.sampled_from([0.0, 1.0, 2.0, 2.5, 10.0, 2460.0, 2.46, 2483000.0, 2500000.0, 1e-10, 3.0000000001,
                              12345.0, 12000.0, float("inf"), 0.1 + 0.2, 0.3])

    @settings(max_examples=500, deadline=None, derandomize=True)
    @given(st.frozensets(values, min_size=1, max_size=3), st.frozensets(values, max_size=5), st.booleans())
    def check(mine: frozenset[float], evidence: frozenset[float], approximate: bool) -> None:
        n = facts.NumberFact(mine, "x", approximate)
        ev = facts.Evidence((), "en")
        ev._numbers = (evidence, frozenset())
        assert _outcome(facts._number_supported, n, ev) == _outcome(ref_number_supported, n, evidence)

    check()


def _outcome(fn: Any, *args: Any) -> Any:
    """The value, or the type of the exception (an infinite evidence value has no significant
    digits to round to: both forms leave it unrounded)."""
    try:
        return fn(*args)
    except Exception as exc:
        return type(exc)


def ref_repeated(u: frozenset[str], units: frozenset[str]) -> bool:
    return len(u) >= 2 and facts._overlap(u, units) >= math.ceil(0.5 * len(u))


def ref_restated(clause: frozenset[str], other: frozenset[str]) -> bool:
    return len(clause) >= 2 and facts._overlap(clause, other) >= max(2, math.ceil(0.5 * len(clause)))


def ref_restates(units: frozenset[str], clause: frozenset[str], scan: bool) -> bool:
    return len(clause) >= 2 and len(units) >= 2 and ref_repeated(clause, units) and \
        (scan or facts._overlap(units, clause) >= math.ceil(0.6 * len(units)))


def _hard_cases() -> list[tuple[str, tuple[Passage, ...], str]]:
    out = []
    for path in sorted((ROOT / "fixtures" / "faithfulness").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            ps = tuple(Passage(p["id"], p["text"], p.get("title")) for p in r["passages"])
            out += [(str(r["faithful"]), ps, str(r["lang"])), (str(r["unfaithful"]), ps, str(r["lang"]))]
            # the answer without citations: every passage is its evidence
            out.append((re.sub(r"\[[^\]]*\]", "", str(r["unfaithful"])), ps, str(r["lang"])))
    return out


def test_check_facts_with_clauses_read_when_needed_equals_eager_clauses(monkeypatch: pytest.MonkeyPatch) -> None:
    cases = _hard_cases()
    assert len(cases) > 100
    fast = [check_facts(*c) for c in cases]

    def eager(text: str, lang: str) -> tuple[Negation, ...]:
        lex = lexicon(lang)
        t = facts._canonical(facts._evidence_norm(text, lang), lex)
        out = tuple(facts._PassageNegation(n.scope, t, a, b, lang)
                    for n, (_s, _t, a, b) in zip(ref_negations(t, lex), facts._negation_sites(t, lex), strict=True))
        assert all(n.clause == r.clause for n, r in zip(out, ref_negations(t, lex), strict=True))
        return out

    def check_sentence(f: facts.Facts, ev: facts.Evidence, asked: frozenset[float] = frozenset()) -> list[facts.FactCheck]:
        # the former order: clause, then scope
        out = [facts.FactCheck("number", n.text, ref_number_supported(n, ev.all_numbers)) for n in f.numbers]
        out += [facts.FactCheck("month", str(m), m in ev.all_months) for m in f.months]
        out += [facts.FactCheck("name", n, facts._name_supported(n, ev)) for n in f.names]
        out += [facts.FactCheck("quote", q, q in ev.text) for q in f.quotes]
        for neg in f.negations:
            ok = any(facts._overlap(neg.scope, e.scope) >= 1 or ref_restated(neg.clause, e.clause) for e in ev.negations) \
                if neg.scope else bool(ev.negations)
            out.append(facts.FactCheck("negation", " ".join(sorted(neg.scope)), ok))
        if not f.negations and f.units:
            for e in ev.negations:
                if (ref_restates(f.units, e.clause, lexicon(ev.lang).scan) or ref_repeated(e.scope, f.units)) and \
                        (not e.heads or facts._overlap(e.heads, f.units) >= 1):
                    out.append(facts.FactCheck("dropped_negation", " ".join(sorted(e.scope)), False))
                    break
        return out

    from pytest_mirage.metrics.analysis import clear_caches

    clear_caches()
    monkeypatch.setattr(facts, "_evidence_negations", eager)
    monkeypatch.setattr(facts, "_check_sentence", check_sentence)
    monkeypatch.setattr(facts, "_word_tokens", ref_word_tokens)
    monkeypatch.setattr(facts, "_ascii_digits", ref_ascii_digits)
    try:
        reference = [check_facts(*c) for c in cases]
    finally:
        clear_caches()
    assert fast == reference
    assert any(c.kind == "dropped_negation" for checks in fast for c in checks)
