"""ARES judge training data (judges/ares_data.py): balance, determinism, negative kinds, no leaks."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from pytest_mirage.errors import ConfigError
from pytest_mirage.judges import ares_data
from pytest_mirage.suites.loader import load_suite
from pytest_mirage.suites.model import Suite
from tests.helpers.judge_suite import write_suite


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Suite:
    return load_suite(write_suite(tmp_path_factory.mktemp("judge-suite")) / "suite.toml")


@pytest.fixture(scope="module")
def dataset(suite: Suite) -> ares_data.Dataset:
    return ares_data.build(suite, seed=0)


def test_balanced_per_judge_and_split(dataset: ares_data.Dataset) -> None:
    for judge in ares_data.JUDGES:
        for split in ("train", "dev"):
            labels = Counter(r.label for r in dataset.rows if r.judge == judge and r.split == split)
            assert labels[0] == labels[1] > 0, (judge, split, labels)
    # whole cases go to one split: a case's rows never train and validate at once
    splits: dict[str, set[str]] = {}
    for r in dataset.rows:
        splits.setdefault(r.case, set()).add(r.split)
    assert all(len(s) == 1 for s in splits.values())
    assert {r.split for r in dataset.rows} == {"train", "dev"}


def test_every_negative_kind_is_present(dataset: ares_data.Dataset) -> None:
    kinds = {(r.judge, r.kind, r.strength) for r in dataset.rows if r.label == 0}
    by_judge = {j: {k for jj, k, _s in kinds if jj == j} for j in ares_data.JUDGES}
    assert {"other_question_passage", "same_document", "bm25_neighbour"} <= by_judge["context_relevance"]
    assert {"other_answer", "perturb_added_sentence", "perturb_number", "perturb_negation",
            "perturb_entity"} <= by_judge["answer_faithfulness"]
    assert {"other_answer", "neighbour_answer"} <= by_judge["answer_relevance"]
    for judge in ares_data.JUDGES:
        assert {s for j, _k, s in kinds if j == judge} == {"weak", "strong"}, judge
    # the single-chunk document's case gets a BM25 neighbour, the others a passage of their document
    cr = {r.case: r for r in dataset.rows if r.judge == "context_relevance" and r.strength == "strong"}
    assert cr["en-005"].kind == "bm25_neighbour"
    assert all(r.kind == "same_document" for c, r in cr.items() if c != "en-005")


def test_no_positive_leaks_as_a_negative(suite: Suite, dataset: ares_data.Dataset) -> None:
    positives = {(r.judge, r.text_a, r.text_b) for r in dataset.rows if r.label == 1}
    negatives = [r for r in dataset.rows if r.label == 0]
    assert not [r for r in negatives if (r.judge, r.text_a, r.text_b) in positives]
    corpus = {p.id: p for p in suite.corpus or ()}
    for r in negatives:
        case = suite.case(r.case)
        if r.judge == "context_relevance":  # a negative passage is never one of the case's relevant ones
            assert r.detail not in case.relevant and r.detail in corpus
        else:
            assert r.text_b not in case.answers
    # same-document strong negatives come from the gold passage's document
    for r in negatives:
        if r.kind == "same_document":
            assert corpus[r.detail].doc_id == corpus[suite.case(r.case).relevant[0]].doc_id
    assert len({r.id for r in dataset.rows}) == len(dataset.rows)


def test_a_duplicated_question_cannot_leak(tmp_path: Path) -> None:
    # a second case with the first one's question and passage: its answer is a valid answer, so
    # rows pairing the question with it as a negative are dropped and counted
    twin = {"id": "en-099", "lang": "en", "question": "How long is the harbour bridge?", "relevant": ["bridge#0"],
            "answers": ["It is 2460 metres long."]}
    ds = ares_data.build(load_suite(write_suite(tmp_path, extra_cases=[twin]) / "suite.toml"), seed=3)
    positives = {(r.judge, r.text_a, r.text_b) for r in ds.rows if r.label == 1}
    assert not [r for r in ds.rows if r.label == 0 and (r.judge, r.text_a, r.text_b) in positives]
    assert ds.dropped["negative equal to a positive pair"] == 2  # seed 3 draws the twin's answer twice


def test_deterministic_for_a_seed_and_versioned_on_disk(suite: Suite, tmp_path: Path) -> None:
    a = ares_data.build(suite, seed=0, suite_hash="h")
    b = ares_data.build(suite, seed=0, suite_hash="h")
    assert a.rows == b.rows
    assert ares_data.build(suite, seed=1).rows != a.rows
    ares_data.write(a, tmp_path / "a")
    ares_data.write(b, tmp_path / "b")
    for name in ("data.jsonl", "manifest.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    manifest, rows = ares_data.load(tmp_path / "a")
    assert rows == a.rows
    assert manifest["schema"] == ares_data.SCHEMA and manifest["seed"] == 0 and manifest["suite_hash"] == "h"
    assert manifest["rows"] == len(rows)
    for judge in ares_data.JUDGES:
        c = manifest["counts"][judge]
        mine = [r for r in rows if r.judge == judge]
        assert c["rows"] == len(mine)
        assert c["label"] == {"0": len(mine) // 2, "1": len(mine) // 2}
        assert c["lang"] == dict(sorted(Counter(r.lang for r in mine).items()))
        assert c["kind"] == dict(sorted(Counter(r.kind for r in mine).items()))


def test_an_edited_data_file_or_bad_row_is_an_error(suite: Suite, tmp_path: Path) -> None:
    ares_data.write(ares_data.build(suite, seed=0), tmp_path)
    data = tmp_path / "data.jsonl"
    lines = data.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[1])
    row["label"] = 1 - row["label"]
    data.write_text("\n".join([lines[0], json.dumps(row), *lines[2:]]) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="differs from the manifest's data_sha256"):
        ares_data.load(tmp_path)
    with pytest.raises(ConfigError, match="no judge-data manifest"):
        ares_data.load(tmp_path / "missing")
    with pytest.raises(ConfigError, match=r"data.jsonl:1: field 'judge'"):
        list(ares_data._rows(data, ['{"id": "x"}']))


def test_cases_without_answer_or_gold_passage_are_counted(tmp_path: Path) -> None:
    extra = [{"id": "en-100", "lang": "en", "question": "Is there a ferry?", "relevant": ["ships#2"], "answers": []}]
    ds = ares_data.build(load_suite(write_suite(tmp_path, extra_cases=extra) / "suite.toml"), seed=0)
    assert ds.skipped == Counter({"no reference answer": 1})
    assert "en-100" not in {r.case for r in ds.rows}
    with pytest.raises(ConfigError, match="dev_share"):
        ares_data.build(load_suite(tmp_path / "suite.toml"), seed=0, dev_share=1.5)


def test_contradictions_from_a_generator_through_the_engine(tmp_path: Path) -> None:
    from pytest_mirage.cli.train_judge import make_judge_data

    suite = write_suite(tmp_path / "suite")
    prompts = ares_data.contradiction_prompts(load_suite(suite / "suite.toml"), seed=0)
    assert len(prompts) == 10
    cid, lang, prompt = prompts[0]
    assert (cid, lang) == ("en-001", "en") and "in English" in prompt and prompt.endswith(
        "Question: How long is the harbour bridge?\nAnswer:")
    assert prompt.count("Document: ") == 4  # three contradicted demonstrations of the same language, then the case
    gen = "py:tests.helpers.judge_suite:contradict?cache_version=1"
    make_judge_data(str(suite), tmp_path / "a", seed=0, generator=gen, cache=tmp_path / "cache")
    manifest, rows = ares_data.load(tmp_path / "a")
    made = [r for r in rows if r.kind == "generated_contradiction"]
    assert made and all(r.label == 0 and r.judge == "answer_faithfulness" and r.text_b.startswith("It is not true")
                        and "second paragraph" not in r.text_b for r in made)
    assert manifest["dropped_rows"]["generated contradiction: same as the gold answer"] == 1
    assert manifest["dropped_rows"]["generated contradiction: empty"] == 1
    assert manifest["contradictions"] == {"generator": gen, "prompt_version": "1", "asked": 10, "kept": len(made)}
    # a rerun answers from the cache: replay-only never calls the model, and writes the same bytes
    make_judge_data(str(suite), tmp_path / "b", seed=0, generator=gen, cache=tmp_path / "cache",
                    cache_mode="replay-only")
    assert (tmp_path / "a" / "data.jsonl").read_bytes() == (tmp_path / "b" / "data.jsonl").read_bytes()
