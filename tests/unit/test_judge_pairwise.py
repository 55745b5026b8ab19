"""Pairwise judge: prompt, plan, verdict parsing, retries, reliability, battles; and the whole
arena (scripted judge -> Bradley-Terry -> surrogate -> surrogate rank) end to end."""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter

import numpy as np
import pytest

from pytest_mirage.arena.bt import bradley_terry
from pytest_mirage.arena.numerics import kendall_tau
from pytest_mirage.arena.surrogate import train_surrogate
from pytest_mirage.errors import ConfigError, ModelError
from pytest_mirage.judges.pairwise import (
    RETRY_REMINDER,
    Judgment,
    Matchup,
    PairwiseJudge,
    build_plan,
    format_documents,
    group_battles,
    judge_matchups,
    judge_reliability,
    matchup_prompts,
    pairwise_template,
    parse_verdict,
    render_pairwise,
    sample_cases,
    to_battles,
)
from pytest_mirage.suites.model import Case, Passage
from tests.helpers.simulate_arena import simulate_features

FORMAT_QUOTE = ('I must end with "[[A]]" if assistant A is better, "[[B]]" if assistant B is better, '
                'and "[[C]]" for a tie.')


def _case(cid: str, lang: str = "en", suite: str = "s1") -> Case:
    return Case(suite=suite, id=cid, lang=lang, question=f"question {cid}?",
                passages=(Passage(f"{cid}#0", "first passage", title="Title"), Passage(f"{cid}#1", "second")),
                relevant=(f"{cid}#0",), answers=("x",))


@pytest.mark.parametrize(("reply", "verdict"), [
    ("Assistant A cites [1]. Assistant B does not.\n\n[[A]]", "A"),
    ("Both are grounded.\nFinal verdict: **[[B]]**.", "B"),
    ("Both answer equally.\n[[C]]\n", "C"),
    (f"{FORMAT_QUOTE}\nA is wrong, B is right.\n\n[[B]]", "B"),
    # the final line names several different markers: ambiguous, so re-asked rather than guessed
    (f"{FORMAT_QUOTE} Having compared them, A is better: [[A]]", "unparseable"),
    ("Verdict: [[ b ]]", "B"),
    ("「[[A]]」。", "A"),
    (FORMAT_QUOTE, "unparseable"),  # quotes the format and stops: no verdict
    ('Output "[[A]]" or "[[B]]"', "unparseable"),  # two different markers on the final line
    ("[[A]] is better because it cites its sources.", "unparseable"),  # prose after the marker
    ("I prefer A.", "unparseable"),
    ("[[D]]", "unparseable"),
    ("", "unparseable"),
])
def test_parse_verdict_accepts_only_the_final_marker(reply: str, verdict: str) -> None:
    assert parse_verdict(reply) == verdict


def test_template_is_mirage_figure_13_and_renders_in_one_pass() -> None:
    tpl = pairwise_template()
    assert tpl.startswith("Please act as an impartial judge")
    assert '"[[A]]" if assistant A is better, "[[B]]" if assistant B is better, and "[[C]]" for a tie.' in tpl
    assert all("{{" + p + "}}" in tpl for p in ("query", "documents", "answer_a", "answer_b"))
    case = _case("c1")
    assert format_documents(case.passages) == "[c1#0] Title - first passage\n[c1#1] second"
    prompt = render_pairwise(case.question, case.passages, "I say {{answer_b}} [c1#0]", "other")
    assert "{{" not in prompt.replace("I say {{answer_b}}", "")
    assert "I say {{answer_b}} [c1#0]\n\"[The End of Assistant A’s Answer]\"" in prompt
    assert "[c1#1] second" in prompt and "question c1?" in prompt
    with pytest.raises(ConfigError, match="answer_b"):
        render_pairwise("q", (), "a", "b", template="{{query}} {{documents}} {{answer_a}}")


def test_sampling_is_per_group_seeded_and_stable() -> None:
    en = [_case(f"e{k:03d}") for k in range(50)]
    de = [_case(f"d{k:03d}", lang="de") for k in range(5)]
    got = sample_cases(en + de, per_group=10, seed=1)
    assert list(got) == [("s1", "de"), ("s1", "en")]
    assert len(got[("s1", "en")]) == 10 and len(got[("s1", "de")]) == 5
    ids = [c.id for c in got[("s1", "en")]]
    assert ids == sorted(ids)
    # the English sample does not depend on other groups or on case order
    alone = sample_cases(list(reversed(en)), per_group=10, seed=1)
    assert [c.id for c in alone[("s1", "en")]] == ids
    assert [c.id for c in sample_cases(en, per_group=10, seed=2)[("s1", "en")]] != ids
    with pytest.raises(ConfigError, match="at least 1"):
        sample_cases(en, per_group=0)
    with pytest.raises(ConfigError, match="appears twice"):
        sample_cases([_case("x"), _case("x")])


def test_plan_both_orders_and_random_order() -> None:
    cases = [_case(f"c{k}") for k in range(4)] + [_case("g1", lang="de")]
    models = ["m3", "m1", "m2"]
    plan = build_plan(cases, models, per_group=3)
    assert len(plan) == (3 + 1) * 3 * 2
    pairs = Counter((m.case_id, m.pair) for m in plan)
    assert set(pairs.values()) == {2}
    assert {(m.model_a, m.model_b) for m in plan if m.case_id == "g1"} == {
        ("m1", "m2"), ("m2", "m1"), ("m1", "m3"), ("m3", "m1"), ("m2", "m3"), ("m3", "m2")}
    assert plan == build_plan(list(reversed(cases)), list(reversed(models)), per_group=3)
    many = [_case(f"c{k:03d}") for k in range(100)]
    one = build_plan(many, ["a", "b", "c"], per_group=100, order="random", seed=5)
    assert len(one) == 300 and len({(m.case_id, m.pair) for m in one}) == 300
    swapped = sum(m.model_a != m.pair[0] for m in one)
    assert 100 < swapped < 200  # about half presented in reverse order
    assert one == build_plan(many, ["a", "b", "c"], per_group=100, order="random", seed=5)
    assert one != build_plan(many, ["a", "b", "c"], per_group=100, order="random", seed=6)
    with pytest.raises(ConfigError, match="at least 2 models"):
        build_plan(cases, ["m1"])
    with pytest.raises(ConfigError, match="more than once"):
        build_plan(cases, ["m1", "m1", "m2"])
    with pytest.raises(ConfigError, match="order"):
        build_plan(cases, ["m1", "m2"], order="sideways")  # type: ignore[arg-type]


class ListJudge:
    """Replies from a script keyed by prompt; records every call."""

    def __init__(self, script: dict[str, list[str | Exception]]) -> None:
        self.script = script
        self.calls: list[list[str]] = []

    def complete(self, prompts: list[str]) -> list[str | Exception]:
        self.calls.append(prompts)
        return [self.script[p.removesuffix(RETRY_REMINDER)].pop(0) for p in prompts]


def test_judge_retries_unparseable_with_a_reminder_and_records_failures() -> None:
    plan = [Matchup("s", "en", f"c{k}", "x", "y") for k in range(4)]
    prompts = ["p0", "p1", "p2", "p3"]
    judge = ListJudge({"p0": ["fine. [[A]]"], "p1": [FORMAT_QUOTE, "now: [[B]]"],
                       "p2": ["no idea", "still none"], "p3": [TimeoutError("slow"), TimeoutError("slow")]})
    assert isinstance(judge, PairwiseJudge)
    got = judge_matchups(judge, plan, prompts, retries=1)
    assert [j.verdict for j in got] == ["A", "B", "unparseable", "error"]
    assert [j.attempts for j in got] == [1, 2, 2, 2]
    assert got[0].winner == "x" and got[1].winner == "y" and got[2].winner is None
    assert got[3].error == "TimeoutError: slow" and got[2].reply == "still none"
    assert judge.calls[1] == ["p1" + RETRY_REMINDER, "p2" + RETRY_REMINDER, "p3"]
    assert to_battles(got)[1].winner == "B"
    rel = judge_reliability(got)
    assert (rel.parse_failures, rel.errors, rel.retried, rel.decided) == (1, 1, 3, 2)
    assert rel.parse_failure_rate == 0.25


class BrokenJudge:
    def complete(self, prompts: list[str]) -> list[str | Exception]:
        return ["[[A]]"]


def test_a_judge_returning_the_wrong_number_of_replies_is_an_error() -> None:
    plan = [Matchup("s", "en", f"c{k}", "x", "y") for k in range(2)]
    with pytest.raises(ModelError, match="returned 1 replies for 2 prompts"):
        judge_matchups(BrokenJudge(), plan, ["a", "b"])


def test_reliability_figures_by_hand() -> None:
    def j(case: str, a: str, b: str, verdict: str) -> Judgment:
        return Judgment(Matchup("s", "en", case, a, b), verdict, "r", 1)  # type: ignore[arg-type]

    got = [j("c1", "x", "y", "A"), j("c1", "y", "x", "B"),  # x wins both orders: consistent
           j("c2", "x", "y", "A"), j("c2", "y", "x", "A"),  # A wins both: inconsistent (position)
           j("c3", "x", "y", "C"), j("c3", "y", "x", "C"),  # tie both: consistent
           j("c4", "x", "y", "B"), j("c4", "y", "x", "unparseable")]
    rel = judge_reliability(got)
    assert (rel.swap_pairs, rel.swap_consistent) == (3, 2)
    assert rel.swap_consistency == pytest.approx(2 / 3)
    assert rel.tie_rate == pytest.approx(2 / 7)
    assert rel.parse_failure_rate == pytest.approx(1 / 8)
    assert rel.position_a_rate == pytest.approx(3 / 5)  # A won c1, c2, c2 of 5 decisive
    assert rel.to_json()["parse_failures"] == 1
    battles = to_battles(got)
    assert len(battles) == 7 and battles[4].winner == "tie" and battles[0].query_id == "s/c1"
    grouped = group_battles([*got, Judgment(Matchup("s", "de", "g1", "x", "y"), "A", "r", 1)])
    assert {k: len(v) for k, v in grouped.items()} == {("s", "all"): 8, ("s", "de"): 1, ("s", "en"): 7}


# ---------------------------------------------------------------- end to end

QUALITY = {"gpt": 2.0, "llama70": 1.4, "mixtral": 0.9, "aya": 0.4, "qwen7": 0.0, "phi": -0.5,
           "gemma7": -0.9, "gemma2": -1.5}
ANSWER_RE = re.compile(r"Answer\]\"\nanswer of (\w+) to")


class ScriptedJudge:
    """A judge whose verdicts follow known system qualities: P(A wins) = sigmoid(qA - qB + 0.3)
    (a position bias), ties when the two are within 0.15 in logit; it quotes the format in its
    reasoning, and 3% of first replies forget the verdict (they recover when reminded)."""

    def __init__(self) -> None:
        self.prompts = 0

    def complete(self, prompts: list[str]) -> list[str | Exception]:
        out: list[str | Exception] = []
        for p in prompts:
            self.prompts += 1
            a, b = ANSWER_RE.findall(p)
            u = int.from_bytes(hashlib.sha256(p.removesuffix(RETRY_REMINDER).encode()).digest()[:8], "big") / 2**64
            z = math.log(u / (1 - u))  # logistic noise from the prompt hash: deterministic
            d = QUALITY[a] - QUALITY[b] + 0.3 + z
            if not p.endswith(RETRY_REMINDER) and (u * 1000) % 1 < 0.03:
                out.append(f"{FORMAT_QUOTE} Let me think about {a} and {b}.")
                continue
            verdict = "[[C]]" if abs(d) < 0.15 else "[[A]]" if d > 0 else "[[B]]"
            out.append(f"{FORMAT_QUOTE}\nAssistant A cites [1]; assistant B cites [2].\n\nFinal verdict: {verdict}")
        return out


def test_arena_end_to_end_with_scripted_judge_and_surrogate_gate() -> None:
    cases = [_case(f"q{k:03d}", lang=lang) for lang in ("en", "de") for k in range(40)]
    models = sorted(QUALITY)
    plan = build_plan(cases, models, per_group=25, seed=3)
    assert len(plan) == 2 * 25 * 28 * 2
    by_id = {(c.suite, c.id): c for c in cases}
    answers = {(c.suite, c.id, m): f"answer of {m} to {c.id} [{c.id}#0]" for c in cases for m in models}
    prompts = matchup_prompts(plan, by_id, answers)
    judge = ScriptedJudge()
    judgments = judge_matchups(judge, plan, prompts)
    rel = judge_reliability(judgments)
    assert rel.parse_failures == 0 and rel.errors == 0
    assert 0.01 < rel.retried / rel.judgments < 0.06
    assert 0.5 < rel.position_a_rate < 0.65  # the scripted 0.3 position bias shows
    assert rel.swap_consistency is not None and 0.5 < rel.swap_consistency < 0.95
    assert 0.0 < rel.tie_rate < 0.15

    grouped = group_battles(judgments)
    assert set(grouped) == {("s1", "all"), ("s1", "de"), ("s1", "en")}
    lb = bradley_terry(grouped[("s1", "all")], tournaments=50, seed=0)
    strengths = lb.strengths()
    assert kendall_tau([strengths[m] for m in models], [QUALITY[m] for m in models]) >= 0.85
    assert lb.rows[0].model == "gpt"
    for lang in ("en", "de"):
        sub = bradley_terry(grouped[("s1", lang)], tournaments=20, seed=0)
        assert sub.n_queries == 25

    # surrogate trained on features correlated with quality; a deliberately weak model under test
    features = simulate_features({**QUALITY, "weak": -3.0}, noise=0.2, seed=4)
    training = {m: features[m] for m in models}
    sur = train_surrogate(training, strengths, n_estimators=50, judge="scripted", suite="s1", lang="all")
    ranking = {s.model: s for s in sur.rank({"weak": features["weak"], "good": features["gpt"]})}
    gate = 3  # e.g. `surrogate_rank <= 3`
    assert ranking["weak"].rank > gate  # the gate fails for the weak model
    # a forest cannot extrapolate: a model below every training model ties with the worst one at most
    assert ranking["weak"].rank >= len(models) + 1
    assert ranking["good"].rank <= gate  # and passes for a model as good as the best one
    assert ranking["weak"].score < min(sur.predict(training).values()) + 1e-9
    assert np.isfinite(ranking["weak"].score)
