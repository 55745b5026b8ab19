"""Option parsing shared by the session settings and model specs; model display names."""

from __future__ import annotations

import pytest

from pytest_mirage.errors import ConfigError
from pytest_mirage.models.options import parse_choice, parse_flag, parse_int, parse_number
from pytest_mirage.models.registry import parse_model_spec


@pytest.mark.parametrize(("raw", "expected"), [("7", 7), (" 12 ", 12), (3, 3), (4.0, 4), (None, 16), ("", 16)])
def test_parse_int_accepts_integers(raw: object, expected: int) -> None:
    assert parse_int(raw, "--mirage-concurrency", 16, minimum=1) == expected


@pytest.mark.parametrize(("raw", "message"), [
    ("abc", "--mirage-concurrency: found 'abc'; expected an integer >= 1"),
    ("2.5", "--mirage-concurrency: found '2.5'; expected an integer >= 1"),
    ("1e3", "--mirage-concurrency: found '1e3'; expected an integer >= 1"),
    ("0", "--mirage-concurrency: found '0'; expected an integer >= 1"),
    (True, "--mirage-concurrency: found True; expected an integer >= 1"),
    (2.5, "--mirage-concurrency: found 2.5; expected an integer >= 1"),
    ("nan", "--mirage-concurrency: found 'nan'; expected an integer >= 1"),
])
def test_parse_int_refuses_the_rest_naming_where_and_what(raw: object, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_int(raw, "--mirage-concurrency", 16, minimum=1)
    assert str(info.value) == message


def test_parse_int_bounds() -> None:
    assert parse_int("10", "k", None, minimum=1, maximum=10) == 10
    with pytest.raises(ConfigError, match=r"^k \(suite.toml:3\): found '1000000000000'; expected an integer from 1 to 1000$"):
        parse_int("1000000000000", "k (suite.toml:3)", None, minimum=1, maximum=1000)
    with pytest.raises(ConfigError, match=r"expected an integer <= 5$"):
        parse_int(6, "x", None, maximum=5)


def test_parse_number_refuses_nan_and_infinities() -> None:
    assert parse_number("0.5", "timeout", None, minimum=0.001) == 0.5
    assert parse_number("1e2", "timeout", None) == 100.0
    assert parse_number(None, "timeout", 60.0) == 60.0
    for raw in ("nan", "inf", "-inf", "1e999", float("nan")):
        with pytest.raises(ConfigError, match=r"expected a finite number >= 0\.001"):
            parse_number(raw, "timeout", None, minimum=0.001)
    with pytest.raises(ConfigError, match=r"^temperature: found '3'; expected a finite number from 0 to 2$"):
        parse_number("3", "temperature", None, minimum=0, maximum=2)


def test_parse_flag_and_choice() -> None:
    assert parse_flag("Yes", "f", False) is True and parse_flag("off", "f", True) is False
    assert parse_flag(None, "f", True) is True
    with pytest.raises(ConfigError, match=r"^f: found 'maybe'; expected true or false$"):
        parse_flag("maybe", "f", False)
    assert parse_choice("refresh", "--mirage-cache-mode", "use", ("use", "refresh")) == "refresh"
    with pytest.raises(ConfigError, match=r"found 'refesh'; expected one of use, refresh\. Did you mean: refresh\?"):
        parse_choice("refesh", "--mirage-cache-mode", "use", ("use", "refresh"))


@pytest.mark.parametrize(("spec", "name"), [
    ("openai:gpt-4o-mini", "openai:gpt-4o-mini"),
    ("openai:gpt-4o-mini?timeout=300&concurrency=2&http=httpx", "openai:gpt-4o-mini"),
    ("openai:m?base_url=http://localhost:8080/v1&temperature=0&max_tokens=256", "openai:m?temperature=0&max_tokens=256"),
    ("openai:m?name=llama-local&temperature=0", "llama-local"),
    ("hf:./model?device=cpu&batch_size=4&dtype=bfloat16", "hf:./model?dtype=bfloat16"),
    ("py:pkg.rag:answer?cache_version=3&threads=4", "py:pkg.rag:answer"),
    ("extractive", "extractive"),
])
def test_display_name_keeps_what_changes_answers(spec: str, name: str) -> None:
    assert parse_model_spec(spec).display_name == name


@pytest.mark.parametrize(("spec", "message"), [
    ("openai:m?name=", "option name: found an empty name"),
    ("openai:m?name=" + "x" * 121, "option name: found 121 characters; expected at most 120"),
    ("openai:m?name=a%1Bb", "option name: found the control or invisible character U\\+001B"),
    ("openai:m?name=a%E2%80%AEb", "option name: found the control or invisible character U\\+202E"),
])
def test_bad_names_are_usage_errors(spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_model_spec(spec)
