"""ARES A.6 generation prompts, their localised instructions, reply parsing and few-shot files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_mirage.errors import ConfigError
from pytest_mirage.judges.perturb import LANGS
from pytest_mirage.prompts.generation import (
    INSTRUCTIONS,
    Example,
    answer_prompt,
    examples_for,
    instructions,
    load_few_shot,
    parse_answer,
    parse_question,
    question_prompt,
)
from pytest_mirage.text.langid import language_probability


def test_every_harness_language_has_instructions_in_that_language() -> None:
    assert sorted(INSTRUCTIONS) == sorted(LANGS)  # the 19 languages of the harness
    for lang, (q, a) in INSTRUCTIONS.items():
        assert instructions(lang) == (q, a, True)
        # the harness's own language ID reads each line as written in its language
        assert language_probability(q, lang) >= 0.5 and language_probability(a, lang) >= 0.5, lang


def test_other_languages_fall_back_to_english_naming_the_language() -> None:
    q, a, localised = instructions("nl")
    assert not localised
    assert q.endswith("Write only the question, in Dutch.") and a.endswith("Write only the answer, in Dutch.")


EXAMPLES = [Example("Q one?", "A one.", "Passage one."), Example("Q two?", "A two.")]


def test_question_and_answer_prompts_follow_ares_a6() -> None:
    assert question_prompt("The  target\npassage.", "en", EXAMPLES) == (
        f"{INSTRUCTIONS['en'][0]}\n\n"
        "Example 1:\nDocument: Passage one.\nQuery: Q one?\n\n"
        "Example 2:\nQuery: Q two?\n\n"
        "Example 3:\nDocument: The target passage.\nQuery:")
    assert answer_prompt("The target.", "Why?", "km", EXAMPLES) == (
        f"{INSTRUCTIONS['km'][1]}\n\n"
        "Example 1:\nQuery: Q one?\nDocument: Passage one.\nAnswer: A one.\n\n"
        "Example 2:\nQuery: Q two?\nAnswer: A two.\n\n"
        "Example 3:\nQuery: Why?\nDocument: The target.\nAnswer:")
    long = question_prompt("x" * 5000, "en", [])
    assert long.endswith("Document: " + "x" * 4000 + " ...\nQuery:")


def test_replies_are_read_after_their_label_up_to_the_next_field() -> None:
    assert parse_question(" When was it built?\n\nExample 4:\nDocument: ...") == "When was it built?"
    assert parse_question("Query: “Who runs the ferry?”") == "Who runs the ferry?"
    assert parse_question("\n\nWhat is X?\nsecond line") == "What is X?"
    assert parse_question("Example 4:\nDocument: x") == ""
    assert parse_answer("Answer: It was built\nin 1871.\nQuery: next") == "It was built in 1871."
    assert parse_answer("  In 1871. ") == "In 1871."
    assert parse_answer("") == ""
    # nothing a suite file cannot hold; a reply without a letter or digit is empty
    assert parse_answer("In\x00 1871\x1b.") == "In 1871." and parse_question("Who?\ud800") == "Who?"
    assert parse_answer(" ... ") == "" and parse_question("?!") == ""


def test_few_shot_files(tmp_path: Path) -> None:
    jl = tmp_path / "few.jsonl"
    jl.write_text(json.dumps({"question": "Q?", "answer": "A.", "passage": "P.", "lang": "km"}) + "\n\n"
                  + json.dumps({"question": "Q2?", "answer": "A2."}) + "\n", encoding="utf-8")
    examples, sha = load_few_shot(jl)
    assert examples == [Example("Q?", "A.", "P.", "km"), Example("Q2?", "A2.")] and len(sha) == 64
    assert examples_for(examples, "km") == [examples[0]] and examples_for(examples, "en") == examples
    # ARES's columns
    tsv = tmp_path / "few.tsv"
    tsv.write_text("Query\tDocument\tAnswer\nQ?\tP.\tA.\n", encoding="utf-8")
    assert load_few_shot(tsv)[0] == [Example("Q?", "A.", "P.")]
    csv_file = tmp_path / "few.csv"
    csv_file.write_text('question,answer\n"Q, with comma?",A.\n', encoding="utf-8")
    assert load_few_shot(csv_file)[0] == [Example("Q, with comma?", "A.")]


@pytest.mark.parametrize(("text", "message"), [
    ('{"question": "Q?"}\n', "few.jsonl:1: field 'answer' is missing or empty"),
    ('{"question": "Q?", "answer": "A", "lang": "xx-YY"}\n', "few.jsonl:1: field 'lang':"),
    ('\n{"question": "Q?", "answer": 3}\n', "few.jsonl:2: field 'answer': found 3; expected a string"),
    ('{"question": "Q?", "answer": "A", "passages": "P"}\n', "Did you mean: passage?"),
    ("[1]\n", "few.jsonl:1: found a JSON list; expected an object"),
    ("{\n", "few.jsonl:1: not a JSON object"),
    ("\n", "no examples; expected at least 1 question/answer pair"),
])
def test_few_shot_errors_name_the_line_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "few.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_few_shot(path)
    assert message in str(err.value)


def test_few_shot_csv_errors(tmp_path: Path) -> None:
    path = tmp_path / "few.csv"
    path.write_text("question,answer\nQ?,A,extra\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"few\.csv:2: more values than the header's columns"):
        load_few_shot(path)
    with pytest.raises(ConfigError, match="cannot be read"):
        load_few_shot(tmp_path / "missing.csv")
