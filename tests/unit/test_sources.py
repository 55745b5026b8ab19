"""Suite loaders for real public formats: MIRACL topics/qrels/corpus and the MIRAGE-Bench export."""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Iterable
from pathlib import Path

import pytest

from pytest_mirage.errors import MirageWarning, SuiteError
from pytest_mirage.prompts import load_template, render
from pytest_mirage.suites.loader import load_suite
from pytest_mirage.suites.model import Case, Passage
from pytest_mirage.suites.sources import load_source_spec, parse_mirage_prompt

ROOT = Path(__file__).resolve().parents[2]
# a slice of the real MIRACL v1.0 dev topics and qrels (sw, yo, hi) with a small corpus of the judged
# passages; the full-data check is benchmarks/miracl_counts.py --check
MIRACL_DEV = ROOT / "fixtures" / "miracl"
MIRACL_LANGS = ("hi", "sw", "yo")
EXPORT_SLICE = ROOT / "fixtures" / "mirage-export" / "mirage-dev-slice.jsonl"


# ---------------------------------------------------------------------------- helpers
def direct_counts(lang: str) -> tuple[list[tuple[str, str]], dict[str, dict[str, int]]]:
    """Topics (qid, query) in file order and qrels qid -> docid -> rel, read without the loader."""
    topics = []
    with (MIRACL_DEV / f"topics.miracl-v1.0-{lang}-dev.tsv").open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                qid, query = line.rstrip("\n").split("\t")
                topics.append((qid, query))
    qrels: dict[str, dict[str, int]] = {}
    with (MIRACL_DEV / f"qrels.miracl-v1.0-{lang}-dev.tsv").open(encoding="utf-8") as fh:
        for line in fh:
            qid, _, docid, rel = line.split()
            qrels.setdefault(qid, {})[docid] = int(rel)
    return topics, qrels


def synthetic_text(docid: str) -> str:
    return f"Synthetic passage {docid} written for this test."


def write_corpus(path: Path, docids: Iterable[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for d in dict.fromkeys(docids):
            fh.write(json.dumps({"docid": d, "title": f"Title {d}", "text": synthetic_text(d)}, ensure_ascii=False) + "\n")
    return path


def write_miracl(folder: Path, lang: str, topics: str, qrels: str, corpus: list[dict[str, str]] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"topics.miracl-v1.0-{lang}-dev.tsv").write_text(topics, encoding="utf-8")
    (folder / f"qrels.miracl-v1.0-{lang}-dev.tsv").write_text(qrels, encoding="utf-8")
    if corpus is not None:
        (folder / "corpus").mkdir(exist_ok=True)
        (folder / "corpus" / f"{lang}.jsonl").write_text(
            "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in corpus), encoding="utf-8")
    return folder


def doc(docid: str, text: str = "", title: str = "T") -> dict[str, str]:
    return {"docid": docid, "title": title, "text": text or f"text of {docid}"}


TOPICS = "1\tWhere is Mombasa?\n2\tWho wrote Pinocchio?\n3\tA query with nothing relevant\n"
QRELS = "1 Q0 10#0 1\n1 Q0 10#1 0\n1\tQ0\t11#0\t0\n2 Q0 20#0 0\n2 Q0 21#3 1\n3 Q0 30#0 0\n"
# the first two queries only: every query has a relevant passage (no warnings)
TOPICS_2 = "".join(TOPICS.splitlines(keepends=True)[:2])
QRELS_2 = "".join(line for line in QRELS.splitlines(keepends=True) if not line.startswith("3 "))
CORPUS = [doc("10#0", "Mombasa is a port city in Kenya."), doc("10#1"), doc("11#0"), doc("20#0"),
          doc("21#3", "Carlo Collodi wrote The Adventures of Pinocchio."), doc("30#0")]


# ---------------------------------------------------------------------------- MIRACL slice (fixtures/miracl)
@pytest.mark.parametrize("lang", MIRACL_LANGS)
def test_miracl_slice_counts_match_the_files(lang: str) -> None:
    topics, qrels = direct_counts(lang)
    suite = load_source_spec(f"miracl:{MIRACL_DEV}?lang={lang}")  # default corpus: DIR/corpus/<lang>.jsonl

    usable = [q for q, _ in topics if any(r > 0 for r in qrels.get(q, {}).values())]
    assert suite.name == f"miracl-{lang}-dev" and suite.mode == "oracle"
    assert len(suite.cases) == len(usable) == len(topics)  # every MIRACL dev query has a relevant passage
    assert sorted(c.id for c in suite.cases) == sorted(usable)
    assert [(c.lang, c.id) for c in suite.cases] == sorted((c.lang, c.id) for c in suite.cases)
    assert sum(len(c.passages) for c in suite.cases) == sum(len(js) for js in qrels.values())
    assert sum(len(c.relevant) for c in suite.cases) == sum(r > 0 for js in qrels.values() for r in js.values())
    # one case in detail: question from the topics file, passages = judged ids, relevant = rel 1
    n = len(topics) // 2
    qid, query = topics[n]
    case = suite.case(qid)
    assert case.question == query and case.answers == () and case.lang == lang
    assert [p.id for p in case.passages] == list(qrels[qid])
    assert list(case.relevant) == [d for d, r in qrels[qid].items() if r > 0]
    lines = (MIRACL_DEV / "corpus" / f"{lang}.jsonl").read_text(encoding="utf-8").splitlines()
    corpus = {d["docid"]: d for d in map(json.loads, lines)}
    assert case.passages[0].text == corpus[case.passages[0].id]["text"]
    assert case.passages[0].title == corpus[case.passages[0].id]["title"]
    assert case.source.endswith(f"topics.miracl-v1.0-{lang}-dev.tsv:{n + 1}")


@pytest.mark.parametrize("lang", ["sw", "yo"])
def test_miracl_limit_takes_the_first_queries_and_needs_only_their_passages(lang: str, tmp_path: Path) -> None:
    topics, qrels = direct_counts(lang)
    first = [q for q, _ in topics[:1]]
    corpus = write_corpus(tmp_path / "c" / f"{lang}.jsonl.gz.src", [d for q in first for d in qrels[q]])
    gz = tmp_path / "c" / f"{lang}.jsonl.gz"
    gz.write_bytes(gzip.compress(corpus.read_bytes()))
    corpus.unlink()
    suite = load_source_spec(f"miracl:{MIRACL_DEV}?lang={lang}&corpus={gz}&limit=1&name=my-{lang}")
    assert suite.name == f"my-{lang}"
    assert [c.id for c in suite.cases] == first
    assert sum(len(c.passages) for c in suite.cases) == len(qrels[first[0]])
    # the 2nd query's passages are not in this corpus: without limit the loader says so
    with pytest.raises(SuiteError, match=r"judged passages of \d+ queries .* are not in the corpus"):
        load_source_spec(f"miracl:{MIRACL_DEV}?lang={lang}&corpus={gz}")


def test_mirage_suite_option_runs_a_miracl_source(pytester: pytest.Pytester) -> None:
    shutil.copytree(MIRACL_DEV, pytester.path / "miracl")
    topics, _ = direct_counts("sw")
    first = [q for q, _ in topics[:3]]
    res = pytester.runpytest("--mirage-suite", "miracl:miracl?lang=sw&limit=3", "--collect-only", "-q")
    res.stdout.fnmatch_lines([f"*mirage-suite:miracl:miracl?lang=sw&limit=3::sw/{q}[[]extractive[]]"
                              for q in sorted(first)] + ["3 tests collected*"])
    res = pytester.runpytest("--mirage-suite", "miracl:miracl?lang=sw&limit=3", "-q")
    res.assert_outcomes(passed=3)
    res.stdout.fnmatch_lines(["*leaderboard*miracl-sw-dev*", "*sw*extractive*3*"])


def test_mirage_export_slice_loads() -> None:
    suite = load_source_spec(f"mirage-export:{EXPORT_SLICE}")
    assert {c.lang for c in suite.cases} == {"hi", "sw"}
    sw = load_source_spec(f"miracl:{MIRACL_DEV}?lang=sw")
    for case in sw.cases:  # the export slice was rendered from the MIRACL slice: same passages
        exported = suite.case(f"sw-{case.id}")
        assert {p.id: p.text for p in exported.passages} == {p.id: p.text for p in case.passages}
        assert exported.relevant == case.relevant and exported.answers


# ---------------------------------------------------------------------------- MIRACL: synthetic files
def test_miracl_builds_oracle_cases_from_judged_passages(tmp_path: Path) -> None:
    folder = write_miracl(tmp_path / "m", "sw", TOPICS, QRELS, CORPUS)
    with pytest.warns(MirageWarning, match=r"1 of 3 queries have no passage judged relevant .* skipped"):
        suite = load_source_spec(f"miracl:{folder}?lang=sw")
    assert [c.id for c in suite.cases] == ["1", "2"]
    c1 = suite.case("1")
    assert c1.question == "Where is Mombasa?"
    assert [p.id for p in c1.passages] == ["10#0", "10#1", "11#0"]
    assert c1.relevant == ("10#0",) and c1.relevant_docs == ("10",)
    assert c1.passages[0].text == "Mombasa is a port city in Kenya." and c1.passages[0].title == "T"
    assert suite.case("2").relevant == ("21#3",)
    assert suite.root == folder and suite.manifest is None


def test_miracl_release_layout_and_corpus_folder(tmp_path: Path) -> None:
    base = tmp_path / "miracl"
    for kind, text in (("topics", TOPICS), ("qrels", QRELS)):
        d = base / "miracl-v1.0-fi" / kind
        d.mkdir(parents=True)
        (d / f"{kind}.miracl-v1.0-fi-dev.tsv").write_text(text, encoding="utf-8")
    corpus = base / "miracl-corpus-v1.0-fi"
    corpus.mkdir()
    half = len(CORPUS) // 2
    for n, part in enumerate((CORPUS[:half], CORPUS[half:])):
        raw = "".join(json.dumps(d) + "\n" for d in part).encode()
        (corpus / f"docs-{n}.jsonl.gz").write_bytes(gzip.compress(raw))
    with pytest.warns(MirageWarning):
        suite = load_source_spec(f"miracl:{base}?lang=fi")
    assert [len(c.passages) for c in suite.cases] == [3, 2]


def test_miracl_bad_qrels_lines_name_file_line_and_fix(tmp_path: Path) -> None:
    qrels = "1 Q0 10#0 1\n1 Q0 10#1\n2 Q0 21#3 yes\n2 Q0 21#3 1\n2 Q0 21#3 0\n"
    folder = write_miracl(tmp_path / "m", "sw", TOPICS, qrels, CORPUS)
    with pytest.raises(SuiteError) as err:
        load_source_spec(f"miracl:{folder}?lang=sw")
    q = folder / "qrels.miracl-v1.0-sw-dev.tsv"
    lines = str(err.value).splitlines()
    assert lines == [
        f"{q}:2: found 3 fields '1 Q0 10#1'; expected 4 whitespace-separated fields: qid Q0 docid rel",
        f"{q}:3: rel: found 'yes'; expected an integer grade (0 = not relevant, 1 = relevant)",
        f"{q}:5: docid '21#3' of qid '2' is judged 0 here and 1 at line 4; keep one judgment",
    ]


def test_miracl_bad_topics_lines(tmp_path: Path) -> None:
    folder = write_miracl(tmp_path / "m", "sw", "1\tfine\n2 no tab here\n1\tagain\n", QRELS, CORPUS)
    with pytest.raises(SuiteError) as err:
        load_source_spec(f"miracl:{folder}?lang=sw")
    t = folder / "topics.miracl-v1.0-sw-dev.tsv"
    assert str(err.value).splitlines() == [
        f"{t}:2: found '2 no tab here' without a tab; expected qid<TAB>query",
        f"{t}:3: duplicate qid '1' (first at line 1); qids must be unique",
    ]


def test_miracl_missing_corpus_passages_are_an_error_or_skipped(tmp_path: Path) -> None:
    corpus = [d for d in CORPUS if d["docid"] not in ("10#1", "21#3")]
    folder = write_miracl(tmp_path / "m", "sw", TOPICS, QRELS, corpus)
    spec = f"miracl:{folder}?lang=sw"
    with pytest.warns(MirageWarning), pytest.raises(SuiteError) as err:
        load_source_spec(spec)
    msg = str(err.value)
    assert msg.startswith(f"--mirage-suite {spec!r}: 2 judged passages of 2 queries (judged in "
                          f"{folder / 'qrels.miracl-v1.0-sw-dev.tsv'}) are not in the corpus "
                          f"{folder / 'corpus' / 'sw.jsonl'}: 10#1, 21#3;")
    assert "missing=skip" in msg and msg.count("\n") == 0
    with pytest.warns(MirageWarning) as record:
        suite = load_source_spec(spec + "&missing=skip")
    texts = [str(w.message) for w in record]
    assert any("2 judged passages of 2 queries" in t and "dropped (missing=skip)" in t for t in texts)
    assert any("1 queries lost every relevant passage to missing=skip" in t for t in texts)
    assert [c.id for c in suite.cases] == ["1"]
    assert [p.id for p in suite.case("1").passages] == ["10#0", "11#0"]


def test_miracl_bad_corpus_lines_for_needed_passages(tmp_path: Path) -> None:
    folder = write_miracl(tmp_path / "m", "sw", TOPICS, QRELS, CORPUS)
    path = folder / "corpus" / "sw.jsonl"
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"docid": "10#0", "title": "dup", "text": "again"}\n')
        fh.write('{"docid": "99#0", "text": ""}\n')  # not judged: not read
        fh.write("{not json\n")
    with pytest.warns(MirageWarning), pytest.raises(SuiteError) as err:
        load_source_spec(f"miracl:{folder}?lang=sw")
    assert str(err.value).splitlines() == [
        f"{path}:7: duplicate docid '10#0' (first at {path}:1); docids must be unique",
        f"{path}:9: invalid JSON at column 2: Expecting property name enclosed in double quotes; "
        'expected one {"docid", "title", "text"} object per line',
    ]


@pytest.mark.parametrize(("query", "expected"), [
    ("lang=sw&limt=3", "unknown key 'limt' for miracl; known keys: lang, split, corpus, missing, limit, name. "
                       "Did you mean: limit"),
    ("limit=3", "lang is missing; expected the MIRACL language code, e.g. lang=hi"),
    ("lang=swa", "lang: found 'swa'; this language has an ISO 639-1 code: use 'sw'"),
    ("lang=sw&limit=0", "limit: found 0; expected a positive integer"),
    ("lang=sw&missing=ignore", "missing: found 'ignore'; expected \"error\" (default) or \"skip\""),
    ("lang=sw&lang=hi", "key 'lang' is given twice"),
    ("lang=hi", "no topics.miracl-v1.0-hi-dev.tsv under {folder}; languages with dev topics there: sw"),
    ("lang=sw&corpus=nope.jsonl", "corpus: nope.jsonl does not exist"),
])
def test_miracl_spec_errors(tmp_path: Path, query: str, expected: str) -> None:
    folder = write_miracl(tmp_path / "m", "sw", TOPICS, QRELS, CORPUS)
    spec = f"miracl:{folder}?{query}"
    with pytest.raises(SuiteError) as err:
        load_source_spec(spec)
    assert str(err.value).startswith(f"--mirage-suite {spec!r}: ")
    assert expected.format(folder=folder) in str(err.value)


def test_unknown_source_kind_and_empty_path() -> None:
    with pytest.raises(SuiteError, match=r"unknown source kind 'miracle'.*Did you mean: miracl\?"):
        load_source_spec("miracle:x?lang=hi")
    with pytest.raises(SuiteError, match=r"the path is empty; expected e.g. miracl:DIR\?lang=hi"):
        load_source_spec("miracl:?lang=hi")


# ---------------------------------------------------------------------------- MIRAGE-Bench export
def rendered_prompt(lang: str, question: str, passages: list[Passage]) -> str:
    """A prompt rendered with the project's MIRAGE (Figure 10) template."""
    case = Case(suite="x", id="q", lang=lang, question=question, passages=tuple(passages), relevant=(), answers=())
    return render(load_template("mirage"), case, passages)


HI_PASSAGES = [
    Passage("4410#2", "ताजमहल आगरा में यमुना नदी के किनारे स्थित है। इसका निर्माण 1632 में शुरू हुआ।", "ताजमहल"),
    Passage("771#0", "आगरा का किला एक ऐतिहासिक किला है।", "आगरा का किला"),
    Passage("9902#5", "दिल्ली भारत की राजधानी है - यह एक बड़ा शहर है।", "दिल्ली"),
]


def export_row(qid: str, prompt: str, pos: list[str], neg: list[str], **extra: object) -> str:
    return json.dumps({"query_id": qid, "prompt": prompt, "positive_ids": pos, "negative_ids": neg, **extra},
                      ensure_ascii=False)


def test_parse_rendered_figure_10_prompt() -> None:
    prompt = rendered_prompt("hi", "ताजमहल कहाँ स्थित है?", HI_PASSAGES)
    parsed = parse_mirage_prompt(prompt, ["4410#2", "771#0", "9902#5"])
    assert parsed.question == "ताजमहल कहाँ स्थित है?"
    assert parsed.passages == tuple(HI_PASSAGES)  # titles split at the first " - ", text kept whole
    assert parsed.language == "Hindi"


def test_parse_prompt_with_unquoted_ids_multiline_text_and_no_title() -> None:
    prompt = ("Question:\nWhat is the capital of Kenya?\n\nContexts:\n"
              "[1#0] Kenya - Nairobi is the capital.\nIt is also the largest city.\n"
              "[1#1] Mombasa is on the coast.\n[2] a bracketed line inside the text\n"
              "\n\nInstruction:\nPlease respond in English using the format: ##Reason: {reason} ##Answer: {answer}.")
    parsed = parse_mirage_prompt(prompt, ["1#1", "1#0"])
    assert [(p.id, p.title, p.text) for p in parsed.passages] == [
        ("1#0", "Kenya", "Nairobi is the capital.\nIt is also the largest city."),
        ("1#1", None, "Mombasa is on the coast.\n[2] a bracketed line inside the text"),
    ]
    assert parsed.language == "English"


@pytest.mark.parametrize(("prompt", "message"), [
    ("Contexts:\n\"[1#0]\" T - x", "no 'Question:' line"),
    ("Question:\nq?\n\n\"[1#0]\" T - x", "no 'Contexts:' line after the question"),
    ("Question:\n\nContexts:\n\"[1#0]\" T - x", "the question under 'Question:' is empty"),
    ("Question:\nq?\n\nContexts:\n\"[1#0]\" T - x\n\"[7#7]\" T - y", 'passage "[7#7]" in the Contexts is in neither'),
    ("Question:\nq?\n\nContexts:\n\"[1#0]\" T - x\n\"[1#0]\" T - y", "passage [1#0] appears twice"),
    ("Question:\nq?\n\nContexts:\n\"[2#0]\" T - x", "ids 1#0 listed in positive_ids/negative_ids have no"),
    ("Question:\nq?\n\nContexts:\nintro\n\"[1#0]\" T - x", "text before the first passage in the Contexts: 'intro'"),
    ("Question:\nq?\n\nContexts:\n\"[1#0]\" T - \n\nInstruction:\n", "passage [1#0] has no text"),
])
def test_parse_prompt_errors(prompt: str, message: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_mirage_prompt(prompt, ["1#0", "2#0"] if "[2#0]" in prompt else ["1#0"])
    assert message in str(err.value)


def test_mirage_export_rows_become_cases(tmp_path: Path) -> None:
    en_prompt = ("Question:\nWho wrote Pinocchio?\n\nContexts:\n[5#1] Carlo Collodi - Collodi wrote it in 1883.\n"
                 "[6#0] Pinocchio (film) - A 1940 film.\n\nInstruction:\nPlease respond in English using the format: "
                 "##Reason: {reason} ##Answer: {answer}.")
    rows = [
        export_row("17", rendered_prompt("hi", "ताजमहल कहाँ स्थित है?", HI_PASSAGES), ["4410#2"], ["771#0", "9902#5"],
                   answer="आगरा में"),
        export_row("3", en_prompt, ["5#1"], ["6#0"], language="en", answers=["Carlo Collodi"]),
        export_row("4", en_prompt.replace("Pinocchio?", "Pinocchio, really?"), [], ["5#1", "6#0"]),
    ]
    path = tmp_path / "mirage-dev.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    with pytest.warns(MirageWarning, match="1 rows have no positive_ids"):
        suite = load_source_spec(f"mirage-export:{path}")
    assert suite.name == "mirage-export-mirage-dev" and suite.root == tmp_path
    assert [(c.lang, c.id) for c in suite.cases] == [("en", "en-3"), ("hi", "hi-17")]  # two languages: prefixed
    hi = suite.case("hi-17")
    assert hi.question == "ताजमहल कहाँ स्थित है?" and hi.relevant == ("4410#2",) and hi.answers == ("आगरा में",)
    assert hi.passages == tuple(HI_PASSAGES) and hi.source == f"{path}:1"
    en = suite.case("en-3")
    assert [(p.id, p.title) for p in en.passages] == [("5#1", "Carlo Collodi"), ("6#0", "Pinocchio (film)")]
    assert en.answers == ("Carlo Collodi",)

    only_hi = load_source_spec(f"mirage-export:{path}?lang=hi&limit=1")
    assert only_hi.name == "mirage-export-hi" and [c.id for c in only_hi.cases] == ["17"]
    with pytest.raises(SuiteError, match=r"lang=fr: .* has no rows in this language; it has: en \(2\), hi \(1\)"):
        load_source_spec(f"mirage-export:{path}?lang=fr")


def test_mirage_export_unparseable_rows_are_reported_with_file_and_line(tmp_path: Path) -> None:
    good = rendered_prompt("hi", "ताजमहल कहाँ स्थित है?", HI_PASSAGES)
    rows = [
        export_row("1", good, ["4410#2"], ["771#0", "9902#5"]),
        export_row("2", "Answer the question: what is RAG?", ["1#0"], []),
        export_row("3", good, ["4410#2", "1#0"], ["771#0", "9902#5"]),
        json.dumps({"query_id": "4", "prompt": good, "positive_ids": "4410#2", "negative_ids": []}),
        export_row("1", good, ["4410#2"], ["771#0", "9902#5"]),
        "{broken",
    ]
    path = tmp_path / "export.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(SuiteError) as err:
        load_source_spec(f"mirage-export:{path}")
    assert str(err.value).splitlines() == [
        f"{path}:2: field 'prompt': cannot recover the passages: no 'Question:' line; expected the MIRAGE "
        "template (Question: / Contexts: / Instruction:)",
        f"{path}:3: field 'prompt': cannot recover the passages: ids 1#0 listed in positive_ids/negative_ids "
        "have no \"[id]\" passage line in the Contexts",
        f"{path}:4: field 'positive_ids': found '4410#2'; expected a list of passage ids",
        f"{path}:5: field 'query_id': duplicate '1' (first at {path}:1); ids must be unique",
        f"{path}:6: invalid JSON at column 2: Expecting property name enclosed in double quotes; "
        "expected one JSON object per line",
    ]


def test_mirage_export_without_language_needs_lang(tmp_path: Path) -> None:
    prompt = "Question:\nq?\n\nContexts:\n\"[1#0]\" T - x\n\nInstruction:\nAnswer."
    path = tmp_path / "e.jsonl"
    path.write_text(export_row("1", prompt, ["1#0"], []) + "\n", encoding="utf-8")
    with pytest.raises(SuiteError, match=r"e.jsonl:1: no language: .* add \?lang=CODE"):
        load_source_spec(f"mirage-export:{path}")
    suite = load_source_spec(f"mirage-export:{path}?lang=sw")
    assert suite.cases[0].lang == "sw" and suite.cases[0].id == "1"


# ---------------------------------------------------------------------------- suite.toml pointing at a source
def test_manifest_source_table_applies_prompt_thresholds_and_gates(tmp_path: Path) -> None:
    write_miracl(tmp_path / "data" / "miracl", "sw", TOPICS_2, QRELS_2)
    write_corpus(tmp_path / "data" / "sw-corpus.jsonl", [d["docid"] for d in CORPUS])
    suite_dir = tmp_path / "suites" / "miracl-sw"
    suite_dir.mkdir(parents=True)
    (suite_dir / "suite.toml").write_text(
        '[suite]\nname = "miracl-sw"\nk = 5\nreference_models = ["control:oracle"]\n\n'
        '[source]\nkind = "miracl"\ndir = "../../data/miracl"\nlang = "sw"\nsplit = "dev"\n'
        'corpus = "../../data/sw-corpus.jsonl"\nlimit = 1\n\n'
        '[thresholds]\ncitation_recall = ">= 0.5"\n\n[gates]\n"language_match.mean" = ">= 0.9"\n',
        encoding="utf-8")
    with pytest.raises(SuiteError, match=r"suite.toml:8: \[source\] dir: '../../data/miracl' is outside the suite "
                       r"folder .*--mirage-trusted-path "):
        load_suite(suite_dir)  # data outside the suite folder: only where the user allows it
    suite = load_suite(suite_dir, trusted_paths=[tmp_path / "data"])
    assert suite.name == "miracl-sw" and suite.mode == "oracle" and suite.manifest == suite_dir / "suite.toml"
    assert [c.id for c in suite.cases] == ["1"] and suite.cases[0].suite == "miracl-sw"
    assert suite.cases[0].passages[0].text == synthetic_text("10#0")
    assert dict(suite.thresholds) == {"citation_recall": ">= 0.5"}
    assert dict(suite.gates) == {"language_match.mean": ">= 0.9"}
    assert {k: suite.settings[k] for k in ("k", "reference_models")} == {"k": 5, "reference_models": ("control:oracle",)}
    assert suite.root == suite_dir and "MIRACL v1.0 sw dev" in suite.description


def test_manifest_source_spec_string_is_relative_to_the_suite_folder(tmp_path: Path) -> None:
    prompt = rendered_prompt("hi", "ताजमहल कहाँ स्थित है?", HI_PASSAGES)
    (tmp_path / "export.jsonl").write_text(export_row("1", prompt, ["4410#2"], ["771#0", "9902#5"]) + "\n",
                                           encoding="utf-8")
    (tmp_path / "suite.toml").write_text('[suite]\nname = "mirage-hi"\nsource = "mirage-export:export.jsonl?lang=hi"\n',
                                         encoding="utf-8")
    suite = load_suite(tmp_path)
    assert suite.name == "mirage-hi" and [c.id for c in suite.cases] == ["1"] and suite.cases[0].lang == "hi"


def test_manifest_source_errors_name_the_manifest_line(tmp_path: Path) -> None:
    write_miracl(tmp_path / "m", "sw", TOPICS_2, QRELS_2, CORPUS)
    manifest = tmp_path / "suite.toml"
    manifest.write_text('[suite]\nname = "x"\nmode = "retrieval"\n\n[source]\nkind = "miracl"\ndir = "m"\n'
                        'lang = "sw"\nlimt = 2\n\n[thresholds]\ncitation_recall = "about 0.5"\n', encoding="utf-8")
    with pytest.raises(SuiteError) as err:
        load_suite(tmp_path)
    lines = str(err.value).splitlines()
    assert lines[0] == (f"{manifest}:3: [suite] mode: found 'retrieval'; source suites are oracle mode "
                        "(the judged passages are the context); remove mode or set mode = \"oracle\"")
    assert lines[1] == (f"{manifest}:9: [source] unknown key 'limt' for kind 'miracl'; known keys: "
                        "kind, dir, lang, split, corpus, missing, limit. Did you mean: limit, split?")
    assert lines[2].startswith(f"{manifest}:12: [thresholds] 'citation_recall':")
    assert len(lines) == 3

    manifest.write_text('[suite]\nname = "x"\n[source]\nkind = "miracl"\ndir = "m"\nlang = "sw"\n'
                        'corpus = "corpus/sw.jsonl"\n', encoding="utf-8")
    with pytest.raises(SuiteError) as err:
        load_suite(tmp_path)
    assert str(err.value) == (f"{manifest}:7: corpus: {tmp_path / 'corpus' / 'sw.jsonl'} does not exist (paths are "
                              f"relative to the suite folder); did you mean {tmp_path / 'm' / 'corpus' / 'sw.jsonl'}? "
                              "Write corpus relative to the suite folder")

    manifest.write_text('[suite]\nname = "x"\n[source]\nkind = "miracle"\n', encoding="utf-8")
    with pytest.raises(SuiteError, match=r"suite.toml:4: \[source\] kind: found 'miracle'.*Did you mean: miracl"):
        load_suite(tmp_path)
