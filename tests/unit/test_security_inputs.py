"""Bounded numeric options and strict JSON (issue 21, defects 8 and the duplicate-key item)."""

from __future__ import annotations

import json

import pytest

from pytest_mirage.errors import ConfigError
from pytest_mirage.jsonutil import DuplicateKeyError, loads_unique
from pytest_mirage.judges.base import JudgeItem
from pytest_mirage.judges.llm import FluencyJudge
from pytest_mirage.judges.pairwise import read_verdict
from pytest_mirage.judges.spec import MAX_REASK, parse_judge_spec
from pytest_mirage.models.options import MAX_INTEGER, SpecOptions, parse_int
from pytest_mirage.models.registry import parse_model_spec


@pytest.mark.parametrize("value", ["1000000000", str(MAX_REASK + 1), "-1", "9" * 5000])
def test_reask_is_bounded(value: str) -> None:
    with pytest.raises(ConfigError, match=rf"option reask=.*expected an integer from 0 to {MAX_REASK}"):
        parse_judge_spec(f"fluency_llm=openai:j?reask={value}")
    assert parse_judge_spec(f"fluency_llm=openai:j?reask={MAX_REASK}").option("reask") == MAX_REASK


@pytest.mark.parametrize(("spec", "message"), [
    ("support_llm=openai:j?max_claims=100000", "max_claims=.*from 1 to 200"),
    ("support_nli=hf:/m?batch_size=10000000", "batch_size=.*from 1 to 4096"),
    ("embedding=flag:/m?max_length=999999999", "max_length=.*from 8 to 131072"),
])
def test_every_numeric_judge_option_is_bounded(spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_judge_spec(spec)


def test_integer_options_stop_at_64_bits() -> None:
    assert parse_int(str(MAX_INTEGER), "w", None) == MAX_INTEGER
    with pytest.raises(ConfigError, match="w: found an integer of 19 digits; expected an integer, at most 9223372036854775807"):
        parse_int(str(MAX_INTEGER + 1), "w", None)
    with pytest.raises(ConfigError, match="w: found '9999"):
        parse_int("9" * 5000, "w", None)  # beyond Python's int() limit: an error, not a crash


def test_loads_unique_names_the_key() -> None:
    assert loads_unique('{"a": {"b": 1}, "c": [{"b": 2}]}') == {"a": {"b": 1}, "c": [{"b": 2}]}
    with pytest.raises(DuplicateKeyError, match="the key 'b' is given twice"):
        loads_unique('{"a": {"b": 1, "b": 2}}')


def test_duplicate_keys_in_extra_are_refused() -> None:
    spec = parse_model_spec('openai:m?extra={"temperature": 0, "temperature": 1}')
    with pytest.raises(ConfigError, match=r"option extra: the key 'temperature' is given twice"):
        SpecOptions(spec, ("extra",)).json_object("extra")


def test_duplicate_keys_in_a_judge_reply_make_it_unparseable() -> None:
    replies = iter(['{"explanation": "ok", "rating": 1, "rating": 5}'] * 2)
    judge = FluencyJudge(lambda prompts: [next(replies) for _ in prompts], model="m", metrics=("fluency_llm",),
                         reask=1)
    (score,) = judge.score([JudgeItem(key="s/c/m", lang="en", question="Q?", answer="An answer.", passages=())])
    assert score.values["fluency_llm"] is None
    assert "the key 'rating' is given twice" in score.reasons["fluency_llm"]
    assert judge.health.parse_failures == 2


def test_duplicate_verdict_in_a_pairwise_reply_is_unparseable() -> None:
    assert read_verdict(json.dumps({"explanation": "x", "verdict": "A"})) == "A"
    assert read_verdict('{"explanation": "x", "verdict": "A", "verdict": "B"}') == "unparseable"
