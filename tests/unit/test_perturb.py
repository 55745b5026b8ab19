"""The ARES-style generator of synthetic unfaithful answers: every edit kind in every language,
what each edit changes, seeding, and the training set's shape."""

from __future__ import annotations

import random
import unicodedata
from functools import cache
from pathlib import Path

import pytest

from pytest_mirage.judges import perturb
from pytest_mirage.judges.offline import suite_triples
from pytest_mirage.judges.perturb import LANGS, NEGATIVE_KINDS, Example, generate, positive
from pytest_mirage.judges.perturb import perturb as edit
from pytest_mirage.suites.model import Passage

ROOT = Path(__file__).resolve().parents[2]


def ex(answer: str, passage: str, lang: str, *, eid: str = "x", title: str | None = None) -> Example:
    return Example(eid, lang, "?", (Passage("p1", passage, title),), answer, 1, "original", ("p1",))


# the bundled suites' answers hold no month in these languages: hand-made triples (a month the
# passage names, restated by the answer)
EXTRA = {
    ("fi", "date"): ex("Linna avattiin toukokuussa 1921 [p1].", "Linna avattiin yleisölle toukokuussa 1921.", "fi"),
    ("km", "date"): ex("ពិធីបុណ្យនេះធ្វើនៅខែវិច្ឆិកា [p1]។", "ពិធីបុណ្យអុំទូកធ្វើនៅខែវិច្ឆិកា។", "km"),
    ("yo", "date"): ex("Ìdìbò náà wáyé ní oṣù Júùnù [p1].", "Ìdìbò náà wáyé ní oṣù Júùnù ọdún 1993.", "yo"),
}


@cache
def triples() -> dict[str, list[Example]]:
    out: dict[str, list[Example]] = {}
    for t in suite_triples(ROOT):
        out.setdefault(t.lang, []).append(t)
    return out


def first_edit(lang: str, kind: str) -> tuple[Example, Example]:
    pool = triples()[lang]
    candidates = [EXTRA[(lang, kind)]] if (lang, kind) in EXTRA else pool
    for t in candidates:
        for seed in range(3):
            made = edit(t, kind, random.Random(seed), pool)
            if made is not None:
                return t, made
    raise AssertionError(f"no {kind} edit of any {lang} triple")


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("kind", NEGATIVE_KINDS)
def test_every_kind_in_every_language(lang: str, kind: str) -> None:
    original, made = first_edit(lang, kind)
    assert made.label == 0 and made.kind == kind and made.lang == lang
    assert made.answer.strip() != original.answer.strip()
    assert made.passages == original.passages and made.question == original.question
    assert made.detail
    if kind in ("added_sentence", "added_clause"):
        assert len(made.answer) > len(original.answer)
        assert original.answer.rstrip(".។。 ")[:10] in made.answer  # the faithful part is kept


def test_number_edit_keeps_the_digit_script_and_leaves_citations_alone() -> None:
    t = ex("পদ্মা সেতুর দৈর্ঘ্য ৬.১৫ কিলোমিটার [p1]।", "পদ্মা সেতুর দৈর্ঘ্য ৬.১৫ কিলোমিটার।", "bn")
    for seed in range(20):
        made = edit(t, "number", random.Random(seed))
        assert made is not None and "[p1]" in made.answer
        old, new = made.detail.split(" -> ")
        assert old == "৬.১৫" and new != old and len(new) == len(old)
        assert all(unicodedata.name(c).startswith("BENGALI") for c in new if c.isdigit())


def test_date_edit_swaps_the_month_for_another_month() -> None:
    t = ex("The bridge opened on 27 May 1937 [p1].", "The bridge opened on 27 May 1937.", "en")
    made = edit(t, "date", random.Random(0))
    assert made is not None
    old, new = made.detail.split(" -> ")
    assert old == "May" and new[:1].isupper() and new.lower() in perturb._lexicon("en")["months"] and new != "May"


def test_negation_removed_or_added_per_language() -> None:
    removed = edit(ex("The museum is not open on Mondays.", "The museum is not open on Mondays.", "en"),
                   "negation", random.Random(1))
    assert removed is not None and "not" not in removed.answer.split()
    added = edit(ex("定制商品可以退货。", "定制商品可以退货。", "zh"), "negation", random.Random(0))
    assert added is not None and "不可以" in added.answer
    sw = edit(ex("Huduma hii inapatikana kwa watoto.", "Huduma hii inapatikana kwa watoto.", "sw"), "negation",
              random.Random(0))
    assert sw is not None and "haipatikana" in sw.answer


def test_comparison_and_roles_edits() -> None:
    comp = edit(ex("You can register at most three SIM cards.", "At most three SIM cards per person.", "en"),
                "comparison", random.Random(0))
    assert comp is not None and "at least" in comp.answer
    roles = edit(ex("Brazil beat Germany in the final.", "In the final, Brazil beat Germany.", "en"), "roles",
                 random.Random(0))
    assert roles is not None and roles.answer == "Germany beat Brazil in the final."


def test_an_edit_the_answer_does_not_allow_is_none_not_a_mislabelled_copy() -> None:
    t = ex("The museum opens daily.", "The museum opens daily.", "en")
    assert edit(t, "comparison", random.Random(0)) is None
    assert edit(t, "number", random.Random(0)) is None
    assert edit(t, "added_sentence", random.Random(0), ()) is None  # no other topic to take a sentence from


def test_unknown_kind_or_language_is_an_error() -> None:
    t = ex("a", "a", "en")
    with pytest.raises(ValueError, match="unknown perturbation kind 'typo'"):
        edit(t, "typo", random.Random(0))
    with pytest.raises(ValueError, match="language 'xx'"):
        edit(ex("a", "a", "xx"), "number", random.Random(0))


def test_positives_are_faithful_variants() -> None:
    t = triples()["en"][0]
    rng = random.Random(0)
    lst = positive(t, "list", rng)
    assert lst is not None and lst.label == 1 and lst.answer.startswith("1. ")
    ref = positive(t, "refusal", rng)
    assert ref is not None and ref.answer in perturb.REFUSALS["en"]
    recited = positive(t, "recited", rng)
    assert recited is not None and "[" in recited.answer  # the suite's references cite nothing
    with pytest.raises(ValueError, match="unknown positive kind"):
        positive(t, "nope", rng)


def test_generate_is_seeded_balanced_and_covers_every_language() -> None:
    all_triples = [t for lang in sorted(triples()) for t in triples()[lang][:4]]
    a = generate(all_triples, 0)
    assert a == generate(all_triples, 0)
    assert a != generate(all_triples, 1)
    assert {e.lang for e in a} == set(LANGS)
    assert all(e.label == (0 if e.kind in NEGATIVE_KINDS else 1) for e in a)
    neg = sum(1 for e in a if e.label == 0)
    assert 0.35 < neg / len(a) < 0.75
    assert {e.kind for e in a if e.label == 0} == set(NEGATIVE_KINDS)
