"""Sample-level behaviour of the built-in metrics: nulls, errors, directions, faithfulness source."""

from __future__ import annotations

import pytest

from pytest_mirage.errors import MetricError
from pytest_mirage.metrics.base import Sample, builtin_registry
from pytest_mirage.metrics.builtin import METRICS
from pytest_mirage.metrics.support import sentence_support
from pytest_mirage.models.base import Answer
from pytest_mirage.suites.model import Case, Passage

P1 = Passage("a#0", "Paris is the capital and largest city of France.", title="Paris")
P2 = Passage("b#0", "Berlin is the capital of Germany.")
P3 = Passage("b#1", "Germany borders France.", doc="b")
CTX = (P1, P2, P3)
CASE = Case(suite="s", id="q1", lang="en", question="What is the capital of France?", passages=CTX,
            relevant=("a#0",), answers=("Paris",), source="cases.jsonl:3")
REG = builtin_registry()


def sample(text: str, cited: tuple[str, ...] | None = None, invalid: tuple[str, ...] = (),
           retrieved: tuple[str, ...] | None = None, case: Case = CASE, k: int = 3,
           context: tuple[Passage, ...] = CTX, parsed: bool = True) -> Sample:
    ans = Answer(case.id, "m", text, answer=text if parsed else None, citations=cited,
                 invalid_citations=invalid, retrieved=retrieved)
    return Sample(case, ans, context, k=k, mode="retrieval" if retrieved is not None else "oracle")


def values(s: Sample, *names: str) -> dict[str, float | None]:
    return dict(REG.compute(s, names).values)


def test_directions_and_registry_names() -> None:
    names = [m.name for m in METRICS]
    assert len(names) == len(set(names))
    lower = {m.name for m in METRICS if not m.higher_is_better}
    assert lower == {"invalid_citations", "english_share", "truncated", "refusal"}
    for m in METRICS:
        assert m.description and m.source, m.name
        assert m.name in REG


def test_citation_metrics() -> None:
    s = sample("Paris [b#0][a#0].", cited=("b#0", "a#0"), invalid=("zz",))
    v = values(s, "citation_recall", "citation_map", "citation_precision", "invalid_citations")
    assert v == {"citation_recall": 1.0, "citation_map": 0.5, "citation_precision": 1 / 3,
                 "invalid_citations": 1.0}


def test_no_citations_gives_zero_recall_and_null_precision() -> None:
    mv = REG.compute(sample("Paris.", cited=()), ["citation_recall", "citation_map", "citation_precision"])
    assert mv.values["citation_recall"] == 0.0 and mv.values["citation_map"] == 0.0
    assert mv.values["citation_precision"] is None
    assert "cites nothing" in mv.reasons["citation_precision"]


def test_citation_metrics_null_without_relevant_ids() -> None:
    case = Case(suite="s", id="q2", lang="en", question="?", passages=CTX, relevant=(), answers=("x",))
    mv = REG.compute(sample("x [a#0]", cited=("a#0",), case=case), ["citation_recall", "citation_map"])
    assert mv.values == {"citation_recall": None, "citation_map": None}
    assert "no relevant" in mv.reasons["citation_recall"]


def test_invalid_citations_counts_replayed_ids_outside_the_context() -> None:
    s = sample("Paris [a#0][q#7]", cited=("a#0", "q#7"))
    assert values(s, "invalid_citations")["invalid_citations"] == 1.0


def test_retrieval_metrics_null_in_oracle_mode() -> None:
    mv = REG.compute(sample("Paris"), ["hit_at_k", "file_hit_at_k", "mrr_at_k", "precision_at_k"])
    assert set(mv.values.values()) == {None}
    assert "oracle" in mv.reasons["hit_at_k"]


def test_retrieval_metrics_at_k() -> None:
    s = sample("Paris", retrieved=("b#0", "b#1", "a#0", "c#0"), k=3)
    assert values(s, "hit_at_k", "mrr_at_k", "precision_at_k", "file_hit_at_k") == {
        "hit_at_k": 1.0, "mrr_at_k": 1 / 3, "precision_at_k": 1 / 3, "file_hit_at_k": 1.0}
    s2 = sample("Paris", retrieved=("b#0", "b#1", "a#0"), k=2)
    assert values(s2, "hit_at_k", "mrr_at_k", "precision_at_k", "file_hit_at_k") == {
        "hit_at_k": 0.0, "mrr_at_k": 0.0, "precision_at_k": 0.0, "file_hit_at_k": 0.0}
    # another chunk of the relevant chunk's source document is a file hit, not a hit
    s3 = sample("Paris", retrieved=("a#5",), k=3)
    assert values(s3, "hit_at_k", "file_hit_at_k") == {"hit_at_k": 0.0, "file_hit_at_k": 1.0}


def test_duplicate_retrieved_ids_are_an_error_not_a_score() -> None:
    with pytest.raises(MetricError, match=r"'b#0' twice.*fix the retriever"):
        REG.compute(sample("Paris", retrieved=("b#0", "b#0", "a#0")), ["hit_at_k"])


def test_overlap_metrics_null_without_references_and_error_on_empty_reference() -> None:
    case = Case(suite="s", id="q3", lang="en", question="?", passages=CTX, relevant=("a#0",), answers=())
    mv = REG.compute(sample("Paris", case=case), ["bleu", "chrf", "rouge_l", "char3_recall", "token_f1"])
    assert set(mv.values.values()) == {None}
    bad = Case(suite="s", id="q4", lang="en", question="?", passages=CTX, relevant=("a#0",), answers=("—",),
               source="cases.jsonl:9")
    with pytest.raises(MetricError, match=r"q4.*cases.jsonl:9.*'—' has no letters or digits"):
        REG.compute(sample("Paris", case=bad), ["token_f1"])


def test_exact_match_scores_exactly_one_not_above() -> None:
    # regression: bleu was 1.0000000000000004 on every exact match, so "bleu <= 1" failed
    overlap = ("bleu", "chrf", "rouge_l", "char3_recall", "token_f1")
    for text, lang in (("Paris", "en"), ("The capital of France is Paris.", "en"), ("東京は日本の首都です。", "ja"),
                       ("กรุงเทพมหานคร", "th")):
        case = Case(suite="s", id="q6", lang=lang, question="?", passages=CTX, relevant=("a#0",), answers=(text,))
        assert values(sample(text, case=case), *overlap) == dict.fromkeys(overlap, 1.0)


def test_language_metrics_on_a_huge_unspaced_answer() -> None:
    # regression: language ID was quadratic on text without spaces (a 6M-character answer hung); it
    # now reads a bounded sample (tests/unit/test_text_langid.py; speed: benchmarks/bench_langid.py)
    for lang, unit in (("ja", "東京は日本の首都であり、政治と経済の中心地です。"), ("th", "กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย")):
        case = Case(suite="s", id="q7", lang=lang, question="?", passages=CTX, relevant=("a#0",), answers=())
        text = (unit * (1_000_000 // len(unit) + 1))[:1_000_000]
        v = values(sample(text, case=case), "language_match", "english_share")
        assert v == {"language_match": 1.0, "english_share": 0.0}


def test_overlap_metrics_use_the_answer_part_of_the_raw_output() -> None:
    raw = "##Reason: Berlin is not it [b#0]. ##Answer: Paris [a#0]."
    s = sample(raw, cited=("a#0",), parsed=False)
    assert values(s, "token_f1")["token_f1"] == 1.0


def test_support_lexical_per_sentence() -> None:
    text = ("Paris is the capital of France [a#0]. Berlin is the capital of Germany [a#0]. "
            "France borders Germany. Rome is old [zz#1].")
    sents = sentence_support(text, CTX, "en")
    # {berlin is the capital of germany}: is, the, capital, of are in a#0 -> 4/6
    assert [x.coverage for x in sents] == pytest.approx([1.0, 4 / 6, 1.0, 0.0])
    assert [x.cited for x in sents] == [("a#0",), ("a#0",), (), ()]
    assert sents[3].invalid == ("zz#1",)
    s = sample(text, cited=("a#0",), invalid=("zz#1",))
    v = values(s, "support_lexical", "support_lexical_uncited", "support_facts", "support_sentences",
               "faithfulness_lexical", "faithfulness_judge", "faithfulness")
    assert v["support_lexical"] == pytest.approx((1 + 4 / 6 + 1 + 0) / 4)
    assert v["support_lexical_uncited"] == 1.0
    # the offline faithfulness: the mean of the sentence verdicts' score and of the facts' score
    assert v["faithfulness_lexical"] == pytest.approx((v["support_sentences"] + v["support_facts"]) / 2)
    # plain faithfulness is the trained offline judge (docs/judges.md)
    assert v["faithfulness"] == v["faithfulness_judge"]
    assert 0.0 <= v["faithfulness"] <= 1.0


def test_support_null_without_context_or_words() -> None:
    mv = REG.compute(sample("Paris [a#0]", context=()), ["support_lexical"])
    assert mv.values["support_lexical"] is None
    mv = REG.compute(sample("[a#0]"), ["support_lexical"])
    assert mv.reasons["support_lexical"] == "the answer has no words to check"


def test_faithfulness_records_its_source() -> None:
    m = REG["faithfulness"]
    assert m.source == "resolved from faithfulness_judge"
    assert "faithfulness_judge" in m.description and "support_llm" in m.description


def test_language_metrics_on_samples() -> None:
    fr = Case(suite="s", id="q5", lang="fr", question="?", passages=CTX, relevant=("a#0",), answers=("Paris",))
    en_answer = sample("The capital of France is the city of Paris [a#0].", case=fr)
    fr_answer = sample("La capitale de la France est la ville de Paris [a#0].", case=fr)
    v_en = values(en_answer, "language_match", "english_share")
    v_fr = values(fr_answer, "language_match", "english_share")
    assert v_fr["language_match"] > 0.9 > 0.1 > v_en["language_match"]
    assert v_en["english_share"] > 0.9 > 0.1 > v_fr["english_share"]
    mv = REG.compute(sample("1998 [a#0]", case=fr), ["language_match"])
    assert mv.values["language_match"] is None and "no letters" in mv.reasons["language_match"]
    mv = REG.compute(sample("", case=fr), ["language_match"])
    assert mv.reasons["language_match"] == "empty answer"
