"""Minor items of issue 21: broken log-probabilities, Markdown mentions."""

from __future__ import annotations

import math

import pytest

from pytest_mirage.judges.base import JudgeItem, Passage, Reply, TokenLogprob
from pytest_mirage.judges.llm import AresJudge, Unparseable, yes_probability
from pytest_mirage.report.markdown import WORD_JOINER, defuse_mentions, escape_markdown


@pytest.mark.parametrize("lp", [math.nan, math.inf, -math.inf, 1000.0])
def test_broken_log_probabilities_are_unparseable_not_a_crash(lp: float) -> None:
    reply = Reply("[[Yes]]", logprobs=(TokenLogprob("Yes", lp, {"Yes": lp, "No": -2.0}),))
    with pytest.raises(Unparseable, match="is not a finite number <= 0"):
        yes_probability(reply, True)
    ok = Reply("[[Yes]]", logprobs=(TokenLogprob("Yes", -0.1, {"Yes": -0.1, "No": -2.4}),))
    assert 0.5 < yes_probability(ok, True) < 1.0


def test_ares_null_with_the_reason_and_counted_in_health() -> None:
    bad = Reply("[[Yes]]", logprobs=(TokenLogprob("Yes", 1000.0, {"Yes": 1000.0}),))
    judge = AresJudge(lambda prompts: [bad for _ in prompts], model="m", metrics=("ares_answer_faithfulness",))
    item = JudgeItem(key="s/c/m", lang="en", question="Q?", answer="An answer.",
                     passages=(Passage("p1", "A passage."),))
    (score,) = judge.score([item])
    assert score.values["ares_answer_faithfulness"] is None
    assert "log-probability 1000.0" in score.reasons["ares_answer_faithfulness"]
    assert judge.health.parse_failures == 1 and judge.health.nulls["ares_answer_faithfulness"] == 1


@pytest.mark.parametrize("text", ["@all", "@channel", "@here", "#1", "!12", "ping @org/team now", "fixes #42"])
def test_markdown_mentions_cannot_ping(text: str) -> None:
    out = escape_markdown(text)
    assert WORD_JOINER in out and out.replace(WORD_JOINER, "") == text


def test_markdown_leaves_ordinary_text_alone() -> None:
    for text in ("mail a@b.com", "C# and F#", "x#1", "wow!1"):
        assert defuse_mentions(text) == text
