"""``scoring="mirage"``: MIRAGE-Bench's evaluation code (dump-v0 branch) reproduced.

Every expected value below is derived by hand from a reading of the seed's code
(``evaluation/citation_precision_recall.py``: ``parse_citations``; ``evaluation/
avg_citation_and_language_detect.py``: ``text_postprocessing``), next to the value of the default
(robust) parser on the same output. The derivation notation: ``tokens`` are the judged ids the seed
keeps, in order; ``run`` is the ranking (by last occurrence); AP and R are trec_eval ``map_cut_10``
and ``recall_10``.
"""

from __future__ import annotations

import pytest

from pytest_mirage.errors import ConfigError
from pytest_mirage.metrics import builtin_registry
from pytest_mirage.metrics.base import Sample
from pytest_mirage.metrics.mirage import citation_run, judged_ids, language_text
from pytest_mirage.models.base import Answer
from pytest_mirage.prompts import parse_output
from pytest_mirage.suites.model import Case, Passage

A, B, C, D, E = "10#0", "10#1", "20#0", "30#0", "40#2"
PASSAGES = tuple(Passage(i, f"passage {i}") for i in (A, B, C, D, E))
CASE1 = Case(suite="s", id="q1", lang="en", question="?", passages=PASSAGES, relevant=(A, B), answers=("x",))
CASE2 = Case(suite="s", id="q2", lang="en", question="?", passages=PASSAGES, relevant=(A,), answers=("x",))
REG = builtin_registry()
NULL = None

# (case, output, (mirage MAP@10, mirage Recall@10), (default MAP@10, default Recall@10), derivation)
CITATIONS = [
    (CASE2, "##Reason: [10#0] [20#0] [30#0]\n##Answer: [10#0]", (1 / 3, 1.0), (1.0, 1.0),
     "tokens A C D A; last occurrence ranks C D A; AP = 1/3"),
    (CASE1, "##Reason: a [10#0] c [20#0] b [10#1]\n##Answer: c [20#0], a [10#0], b [10#1]", (7 / 12, 1.0),
     (5 / 6, 1.0), "tokens A C B C A B; run C A B; AP = (1/2 + 2/3)/2; default run A C B: (1 + 2/3)/2"),
    (CASE1, "##Reason: x [10#0,10#1]\n##Answer: y", (1.0, 1.0), (1.0, 1.0), "comma split: A B"),
    (CASE1, "##Reason: x [10#1, 10#0]\n##Answer: y", (0.5, 0.5), (1.0, 1.0),
     "split on ',' untrimmed: '10#1' kept, ' 10#0' dropped; run B; AP = 1/2"),
    (CASE1, "##Reason: x [10#0; 10#1]\n##Answer: y [20#0]", (0.0, 0.0), (1.0, 1.0),
     "no comma: '10#0; 10#1' is one unjudged token; run C"),
    (CASE1, "##Reason: x [1]\n##Answer: y [2]", (0.0, 0.0), (1.0, 1.0),
     "'1' and '2' are not judged ids; the default reads them as passages 1 and 2 of the prompt (A, B)"),
    (CASE1, "##Reason: x ［10#0］\n##Answer: y ［10#1］", (0.0, 0.0), (1.0, 1.0),
     "full-width brackets are not '[...]' for the seed"),
    (CASE2, "##Reason: x [20#0]\n##Answer: y\n\nz [10#0]", (0.0, 0.0), (0.5, 1.0),
     "Answer read up to its first blank line: tokens C; default run C A"),
    (CASE2, "##Reason: a [20#0]\n\nb [10#0]\n##Answer: c", (0.0, 0.0), (0.5, 1.0),
     "Reason read up to its first blank line: tokens C"),
    (CASE2, "##Answer: y [10#0]", (NULL, NULL), (1.0, 1.0), "no 'Reason ... Answer:': the seed's code fails"),
    (CASE2, "##Reason: y [10#0]", (NULL, NULL), (1.0, 1.0), "no 'Answer:': the seed's code fails"),
    (CASE2, "Paris [10#0].", (NULL, NULL), (1.0, 1.0), "no format at all"),
    (CASE2, "##Reason: [99#9] [10#0]\n##Answer: ok", (1.0, 1.0), (1.0, 1.0),
     "unjudged 99#9 is dropped and takes no rank: run A"),
    (CASE2, '##Reason: ["10#0"]\n##Answer: x', (0.0, 0.0), (1.0, 1.0), "quotes kept: '\"10#0\"' is not judged"),
    (CASE2, "##Reason: [ 10#0 ]\n##Answer: x", (0.0, 0.0), (1.0, 1.0), "no trimming: ' 10#0 ' is not judged"),
    (CASE2, "##Reason: [[10#0]]\n##Answer: x", (1.0, 1.0), (1.0, 1.0),
     "'[[10#0]' matched, brackets removed: A"),
    (CASE2, "##reason: [10#0]\n##answer: [20#0]", (NULL, NULL), (1.0, 1.0),
     "'Reason'/'Answer:' are case-sensitive for the seed; the default is not (run A C)"),
    (CASE2, "Reason: a [20#0]\nAnswer: b [10#0]", (0.5, 1.0), (0.5, 1.0),
     "no '##' needed: tokens C A, run C A; the default reads the whole text: C A"),
    (CASE2, "##Reason: [10#0][20#0]\n##Answer: [10#0][20#0]", (1.0, 1.0), (1.0, 1.0),
     "tokens A C A C; last occurrence A(2) C(3): run A C"),
    (CASE1, "##Reason: [10#0] [20#0] [10#1] [30#0]\n##Answer: [10#0]", (0.5, 1.0), (5 / 6, 1.0),
     "tokens A C B D A; run C B D A; AP = (1/2 + 2/4)/2; default A C B D: (1 + 2/3)/2"),
    (CASE2, "##Reason: a [20#0]\n\n##Answer: b [10#0]", (0.5, 1.0), (0.5, 1.0),
     "Reason ': a [20#0]\\n\\n##' cut at the blank line: C; Answer: A; run C A"),
    (CASE2, "Answer: see below [30#0]\n##Reason: a [10#0]\n##Answer: b [20#0]", (0.5, 1.0), (0.5, 1.0),
     "Reason: A; Answer starts at the FIRST 'Answer:': D A C; tokens A D A C; run D A C; AP = 1/2"),
    (CASE2, "##Reason: [10#0,99#1,20#0]\n##Answer: x", (1.0, 1.0), (1.0, 1.0), "split: A C kept"),
    (CASE1, "##Reason: [10#0 ,10#1]\n##Answer: x", (0.5, 0.5), (1.0, 1.0), "'10#0 ' dropped, '10#1' kept: run B"),
    (CASE1, "##Reason: [10#0、10#1]\n##Answer: x", (0.0, 0.0), (1.0, 1.0),
     "only ASCII ',' splits; the default also splits on 、"),
    (CASE2, "##Reason: a [20#0]\r\n\r\nb [10#0]\n##Answer: c", (0.5, 1.0), (0.5, 1.0),
     "'\\r\\n\\r\\n' is not '\\n\\n': no paragraph cut; tokens C A"),
    (CASE2, "##Reason: ok\n##Answer: [10#0] [20#0] [10#0]", (0.5, 1.0), (1.0, 1.0),
     "tokens A C A; run C A; default A C"),
    (CASE1, "##Reason: intro\n\n[10#0] [10#1]\n##Answer: [10#1]", (0.5, 0.5), (1.0, 1.0),
     "Reason's first paragraph is ': intro': tokens B"),
    (CASE2, "##Reason: [] [,] [10#0]\n##Answer: x", (1.0, 1.0), (1.0, 1.0), "empty tokens dropped: A"),
    (CASE2, "##Reason: [10#00]\n##Answer: x", (0.0, 0.0), (0.0, 0.0), "'10#00' is not judged (nor a passage)"),
    (CASE2, "##Reason: a\n##Answer: b", (0.0, 0.0), (0.0, 0.0), "nothing cited: empty run scores 0"),
    (CASE1, "##Reason: [20#0] [30#0] [40#2] [10#1]\n##Answer: [20#0] [10#0]", (11 / 30, 1.0), (13 / 40, 1.0),
     "tokens C D E B C A; run D E B C A: B at 3, A at 5, AP = (1/3 + 2/5)/2; default C D E B A: (1/4 + 2/5)/2"),
]


def _sample(case: Case, output: str, scoring: str) -> Sample:
    ids = [p.id for p in case.passages]
    parsed = parse_output(output, ids)  # what the harness stores on the Answer
    answer = Answer(case.id, "m", output, answer=parsed.answer, citations=parsed.citations,
                    invalid_citations=parsed.unknown_citations)
    return Sample(case, answer, case.passages, scoring=scoring)


def test_at_least_30_outputs() -> None:
    assert len(CITATIONS) >= 30


@pytest.mark.parametrize(("case", "output", "mirage", "default", "why"), CITATIONS,
                         ids=[f"c{i}" for i in range(len(CITATIONS))])
def test_citation_map_and_recall(case: Case, output: str, mirage: tuple[float | None, float | None],
                                 default: tuple[float, float], why: str) -> None:
    names = ["citation_map", "citation_recall"]
    got = REG.compute(_sample(case, output, "mirage"), names)
    assert (got.values["citation_map"], got.values["citation_recall"]) == pytest.approx(mirage), why
    if mirage[0] is None:
        assert "MIRAGE-Bench's citation code fails" in got.reasons["citation_map"]
    base = REG.compute(_sample(case, output, "default"), names).values
    assert (base["citation_map"], base["citation_recall"]) == pytest.approx(default), why


def test_run_is_ranked_by_last_occurrence() -> None:
    out = "##Reason: [10#0] [20#0] [30#0]\n##Answer: [10#0] [20#0]"
    assert citation_run(out, [A, B, C, D, E]) == [D, A, C]


def test_judged_ids_are_relevant_first_then_the_other_passages() -> None:
    ctx = (Passage("90#1", "retrieved"),)
    s = Sample(CASE1, Answer("q1", "m", "x"), ctx)
    assert judged_ids(s) == [A, B, C, D, E, "90#1"]


# ---------------------------------------------------------------- the language feature's text

LANGUAGE_TEXTS = [
    ("##Reason: The answer is in passage [10#0].\n##Answer: กรุงเทพ [10#0]", [A],
     "The answer is in passage . กรุงเทพ"),
    # ids go first, in order, by plain replacement: "10#1" inside "10#10" leaves "0"
    ("##Reason: see [10#10]\n##Answer: yes [10#1]", ["10#1", "10#10"], "see 0 yes"),
    ("##Reason: see [10#10]\n##Answer: yes [10#1]", ["10#10", "10#1"], "see yes"),
    # only the exact labels go; other brackets lose their brackets but keep their text
    ("## Reason: a [note]\n##ANSWER: b", [], "## Reason: a note ##ANSWER: b"),
    ("##Reason:\n\n  x\t\ty  \n##Answer:\nz [1]", [], "x y z 1"),
    ("", [], ""),
]


@pytest.mark.parametrize(("output", "judged", "expected"), LANGUAGE_TEXTS)
def test_language_text(output: str, judged: list[str], expected: str) -> None:
    assert language_text(output, judged) == expected


def test_unknown_scoring_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"scoring='mirage-bench'.*expected one of 'default', 'mirage'"):
        Sample(CASE1, Answer("q1", "m", "x"), (), scoring="mirage-bench")


def test_default_scoring_is_unchanged_by_the_field() -> None:
    s = Sample(CASE1, Answer("q1", "m", "x"), (), 3, "oracle")
    assert s.scoring == "default"


def test_language_match_for_a_language_langdetect_lacks_is_null() -> None:
    km = Case(suite="s", id="k", lang="km", question="?", passages=PASSAGES, relevant=(A,), answers=("x",))
    mv = REG.compute(Sample(km, Answer("k", "m", "##Reason: x\n##Answer: y"), PASSAGES, scoring="mirage"),
                     ["language_match"])
    assert mv.values["language_match"] is None and "has no 'km'" in mv.reasons["language_match"]


def test_yoruba_uses_lingua_restricted_to_english_and_yoruba() -> None:
    from lingua import Language, LanguageDetectorBuilder

    yo = Case(suite="s", id="y", lang="yo", question="?", passages=PASSAGES, relevant=(A,), answers=("x",))
    out = "##Reason: Àwọn ìwé náà sọ pé [10#0]\n##Answer: Olú ìlú orílẹ̀-èdè Faransé ni Paris [10#0]."
    text = language_text(out, judged_ids(Sample(yo, Answer("y", "m", out), PASSAGES)))
    detector = LanguageDetectorBuilder.from_languages(Language.ENGLISH, Language.YORUBA).build()
    expected = {cv.language.name: cv.value for cv in detector.compute_language_confidence_values(text)}
    v = REG.compute(Sample(yo, Answer("y", "m", out), PASSAGES, scoring="mirage"),
                    ["language_match", "english_share"]).values
    assert v["language_match"] == expected["YORUBA"]
    assert v["english_share"] == expected["ENGLISH"]


def test_langdetect_values_are_the_seeded_detector_on_the_whole_output() -> None:
    langdetect = pytest.importorskip("langdetect")
    from langdetect.detector_factory import PROFILES_DIRECTORY, DetectorFactory

    th = Case(suite="s", id="t", lang="th", question="?", passages=PASSAGES, relevant=(A,), answers=("x",))
    out = ("##Reason: The question asks for the capital of Thailand. Passage [10#0] says that Bangkok is "
           "the capital and the largest city of the country.\n##Answer: กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย [10#0]")
    factory = DetectorFactory()
    factory.load_profile(PROFILES_DIRECTORY)
    factory.set_seed(0)
    detector = factory.create()
    detector.append("The question asks for the capital of Thailand. Passage says that Bangkok is the capital "
                    "and the largest city of the country. กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย")
    expected = {x.lang: x.prob for x in detector.get_probabilities()}
    mirage = REG.compute(Sample(th, Answer("t", "m", out), PASSAGES, scoring="mirage"),
                         ["language_match", "english_share"]).values
    assert mirage["language_match"] == expected.get("th", 0.0)
    assert mirage["english_share"] == expected.get("en", 0.0)
    # an English reason drags the seed's value down; the default reads the answer only
    assert mirage["language_match"] is not None and mirage["language_match"] < 0.5
    default = REG.compute(Sample(th, Answer("t", "m", out), PASSAGES), ["language_match"]).values
    assert default["language_match"] == 1.0
    assert langdetect is not None
