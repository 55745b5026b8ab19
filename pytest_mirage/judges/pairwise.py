"""Pairwise LLM judge (MIRAGE-Bench Figure 13): prompts, judging plan, verdict parsing,
judge reliability, and turning verdicts into Bradley-Terry battles.

The judge is any object with ``complete(prompts: list[str]) -> list[str | Exception]`` (one reply
or one exception per prompt, in order); the engine wraps model adapters in such an object.
Nothing here talks to a model directly, so every step is a pure function of its inputs.

Structured output (``structured=auto|on`` on the arena judge spec, as for the pointwise LLM judges,
see :mod:`pytest_mirage.judges.structured`): the judge is called as ``complete(prompts,
response_format=...)`` with the ``pairwise`` schema (``{"explanation": ..., "verdict": "A"|"B"|"C"}``,
C a tie as in the prompt) and the prompt gets the schema's one-line note; the prompt's own
instructions are unchanged. Replies are read as that JSON first, by :func:`parse_verdict` when
they hold none; a server that refuses the schema gets the prompts again plain (``auto``).
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from itertools import combinations
from typing import Any, Literal, Protocol, get_args, runtime_checkable

from ..arena.bt import Battle
from ..errors import ConfigError, ModelError
from ..jsonutil import DuplicateKeyError
from ..models.base import ResponseFormat
from ..prompts import MAX_PASSAGE_CHARS
from ..seeding import seeded_rng
from ..suites.model import Case, Passage
from . import structured as st
from .base import JudgeHealth

Verdict = Literal["A", "B", "C", "unparseable", "error"]
Order = Literal["both", "random"]

DEFAULT_QUERIES_PER_GROUP = 100
DEFAULT_RETRIES = 1
# appended when re-asking after an unparseable reply: a deterministic (temperature 0) judge would
# repeat itself on the same prompt, and a cache keyed on the prompt would replay the same reply
RETRY_REMINDER = ('\n\nYour previous reply did not end with a verdict. After your explanation, end '
                  'your reply with exactly one of "[[A]]", "[[B]]" or "[[C]]".')
TEMPLATE_VERSION = "1"  # part of the judge cache identity: bump when the template changes
_ORDERS: tuple[str, ...] = get_args(Order)
_PLACEHOLDER_RE = re.compile(r"\{\{(query|documents|answer_a|answer_b)\}\}")
_MARKER_RE = re.compile(r"\[\[\s*([ABCabc])\s*\]\]")
# what may follow the final marker: whitespace, punctuation, quotes, markdown emphasis
_TRAILER_RE = re.compile(r"[\s\"'`*_.!)\]}>»”’」』。．]*")


@runtime_checkable
class PairwiseJudge(Protocol):
    """A judge model: one reply (or exception) per prompt, in order."""

    def complete(self, prompts: list[str]) -> list[str | Exception]: ...


@runtime_checkable
class StructuredPairwiseJudge(Protocol):
    """A judge model that can be sent a JSON schema: ``complete(prompts, response_format=None)``."""

    def complete(self, prompts: list[str], response_format: ResponseFormat | None = None) -> list[str | Exception]: ...


# ---------------------------------------------------------------- prompt


def pairwise_template() -> str:
    """MIRAGE-Bench's pairwise judge prompt (Figure 13), placeholders ``{{query}}``,
    ``{{documents}}``, ``{{answer_a}}``, ``{{answer_b}}``."""
    return resources.files(__package__).joinpath("templates", "pairwise.txt").read_text(encoding="utf-8")


def format_documents(passages: Sequence[Passage]) -> str:
    """One line per passage: ``[id] text`` (``[id] title - text`` when the passage has a title);
    long passages are cut like the generation prompt does."""
    lines = []
    for p in passages:
        text = p.text if len(p.text) <= MAX_PASSAGE_CHARS else p.text[:MAX_PASSAGE_CHARS] + " ..."
        lines.append(f"[{p.id}] " + (f"{p.title} - " if p.title else "") + text)
    return "\n".join(lines)


def render_pairwise(question: str, passages: Sequence[Passage], answer_a: str, answer_b: str, *,
                    template: str | None = None) -> str:
    """Fill the pairwise template in one pass (text inside an answer is never substituted again)."""
    tpl = pairwise_template() if template is None else template
    missing = [p for p in ("query", "documents", "answer_a", "answer_b") if "{{" + p + "}}" not in tpl]
    if missing:
        raise ConfigError(f"pairwise judge template lacks the placeholders {['{{' + m + '}}' for m in missing]}")
    values = {"query": question, "documents": format_documents(passages), "answer_a": answer_a,
              "answer_b": answer_b}
    return _PLACEHOLDER_RE.sub(lambda m: values[m.group(1)], tpl)


# ---------------------------------------------------------------- verdict parsing


def parse_verdict(reply: str) -> Literal["A", "B", "C", "unparseable"]:
    """The judge's final verdict: the last ``[[A]]``/``[[B]]``/``[[C]]`` marker, accepted only when
    nothing but whitespace, punctuation, quotes or markdown follows it and its line names no other
    marker. Markers quoted earlier in the reasoning (e.g. repeating the required format) are
    ignored; a reply that ends by quoting the format (``"[[A]]" if ..., "[[C]]" for a tie``), that
    ends with prose after the marker, or that has no marker is ``"unparseable"``.
    """
    markers = list(_MARKER_RE.finditer(reply))
    if not markers:
        return "unparseable"
    last = markers[-1]
    if not _TRAILER_RE.fullmatch(reply, last.end()):
        return "unparseable"
    line_start = reply.rfind("\n", 0, last.start()) + 1
    on_line = {m.group(1).upper() for m in markers if m.start() >= line_start}
    if len(on_line) > 1:
        return "unparseable"
    letter = last.group(1).upper()
    return "A" if letter == "A" else "B" if letter == "B" else "C"


STAGE = "pairwise"  # the judge's stage in :data:`pytest_mirage.judges.structured.SCHEMAS`


def _unstructured(reply: str) -> bool:
    """The reply holds no JSON of the pairwise schema (JSON repeating a key is JSON, unparseable)."""
    try:
        return st.structured_object(STAGE, reply) is None
    except DuplicateKeyError:
        return False


def read_verdict(reply: str) -> Literal["A", "B", "C", "unparseable"]:
    """A reply's verdict: the JSON of the pairwise schema first (whole, fenced or inside prose;
    extra keys ignored), :func:`parse_verdict` when the reply holds no such JSON (plain prompts, a
    server that ignored the format). JSON with the schema's keys but a missing key, a wrong type
    or another verdict than ``"A"``, ``"B"``, ``"C"`` is ``"unparseable"``: it is not read as text."""
    try:
        obj = st.structured_object(STAGE, reply)
    except DuplicateKeyError:  # {"verdict": "A", "verdict": "B"}: neither is the verdict
        return "unparseable"
    if obj is None:
        return parse_verdict(reply)
    if st.check(obj, st.SCHEMAS[STAGE]) is not None:
        return "unparseable"
    verdict = obj["verdict"]
    return "A" if verdict == "A" else "B" if verdict == "B" else "C"


# ---------------------------------------------------------------- plan


@dataclass(frozen=True, slots=True)
class Matchup:
    """One judge call: ``model_a`` is shown as assistant A, ``model_b`` as assistant B."""

    suite: str
    lang: str
    case_id: str
    model_a: str
    model_b: str

    @property
    def query_id(self) -> str:
        """The query identity used to resample tournaments (unique across suites)."""
        return f"{self.suite}/{self.case_id}"

    @property
    def pair(self) -> tuple[str, str]:
        """The unordered pair, sorted."""
        a, b = sorted((self.model_a, self.model_b))
        return a, b


def _rng(seed: int, *parts: str) -> random.Random:
    # derived from the key, not from draw order: the same query gets the same sample and order
    # whatever else is in the run, on every machine and every xdist worker
    return seeded_rng("\x1f".join((str(seed), *parts)))


def sample_cases(cases: Iterable[Case], *, per_group: int = DEFAULT_QUERIES_PER_GROUP,
                 seed: int = 0) -> dict[tuple[str, str], tuple[Case, ...]]:
    """Up to ``per_group`` cases per (suite, language), drawn without replacement (seeded), each
    group's sample in case-id order. Groups with fewer cases keep them all."""
    if per_group < 1:
        raise ConfigError(f"arena queries per suite and language = {per_group}; expected at least 1 "
                          f"(default {DEFAULT_QUERIES_PER_GROUP})")
    groups: dict[tuple[str, str], dict[str, Case]] = defaultdict(dict)
    for c in cases:
        group = groups[(c.suite, c.lang)]
        if c.id in group:
            raise ConfigError(f"case id {c.id!r} appears twice in suite {c.suite!r} ({c.source or '?'}); "
                              "case ids must be unique within a suite")
        group[c.id] = c
    out: dict[tuple[str, str], tuple[Case, ...]] = {}
    for key in sorted(groups):
        ids = sorted(groups[key])
        if len(ids) > per_group:
            ids = sorted(_rng(seed, "sample", *key).sample(ids, per_group))
        out[key] = tuple(groups[key][i] for i in ids)
    return out


def build_plan(cases: Iterable[Case], models: Sequence[str], *, per_group: int = DEFAULT_QUERIES_PER_GROUP,
               seed: int = 0, order: Order = "both") -> tuple[Matchup, ...]:
    """Every pair of ``models`` on the sampled cases of each (suite, language).

    ``order="both"`` judges each pair in both presentation orders (swap consistency can then be
    measured); ``"random"`` judges one order per (case, pair), drawn with ``seed``.
    """
    if order not in _ORDERS:
        raise ConfigError(f"arena order {order!r}; expected one of {list(_ORDERS)}")
    names = list(models)
    dupes = sorted({m for m in names if names.count(m) > 1})
    if dupes:
        raise ConfigError(f"arena models {dupes} are listed more than once; give each model once")
    if len(names) < 2:
        raise ConfigError(f"the pairwise arena needs at least 2 models; got {names}. Add models under "
                          "test or suite reference runs")
    pairs = list(combinations(sorted(names), 2))
    plan: list[Matchup] = []
    for (suite, lang), sampled in sample_cases(cases, per_group=per_group, seed=seed).items():
        for case in sampled:
            for a, b in pairs:
                if order == "both":
                    plan += [Matchup(suite, lang, case.id, a, b), Matchup(suite, lang, case.id, b, a)]
                elif _rng(seed, "order", suite, case.id, a, b).random() < 0.5:
                    plan.append(Matchup(suite, lang, case.id, a, b))
                else:
                    plan.append(Matchup(suite, lang, case.id, b, a))
    return tuple(plan)


# ---------------------------------------------------------------- judging


@dataclass(frozen=True, slots=True)
class Judgment:
    """The outcome of one matchup. ``verdict`` is "A"/"B"/"C" (tie), "unparseable" (no final
    marker after all attempts) or "error" (the judge raised on every attempt; see ``error``)."""

    matchup: Matchup
    verdict: Verdict
    reply: str | None
    attempts: int
    error: str | None = None

    @property
    def winner(self) -> str | None:
        """The winning model, or None for ties, unparseable replies and errors."""
        if self.verdict == "A":
            return self.matchup.model_a
        if self.verdict == "B":
            return self.matchup.model_b
        return None

    @property
    def decided(self) -> bool:
        """A usable verdict (A, B or tie)."""
        return self.verdict in ("A", "B", "C")


def judge_matchups(judge: PairwiseJudge | StructuredPairwiseJudge, matchups: Sequence[Matchup],
                   prompts: Sequence[str], *, retries: int = DEFAULT_RETRIES, structured: str = "off",
                   health: JudgeHealth | None = None, plain_reason: str | None = None) -> tuple[Judgment, ...]:
    """Ask ``judge`` for every prompt, then re-ask (up to ``retries`` times, in batches) the ones
    whose reply was unparseable (with :data:`RETRY_REMINDER` appended, or the JSON reminder while
    structured) or an exception (same prompt); what still fails is recorded as such.

    ``structured`` (``auto``/``on``; ``off`` by default): send the pairwise JSON schema with every
    prompt (``judge.complete(prompts, response_format=...)``), read replies with
    :func:`read_verdict`; with ``auto`` a server that refuses the schema gets the prompts again
    plain and the judge stays plain. ``health`` (optional) receives the output mode, fallbacks,
    replies that ignored the schema and the call counts; ``plain_reason``: why the judge is plain.

    A judge that returns the wrong number of replies, or something other than a string or an
    exception, is a :class:`ModelError` (a broken judge, not a bad verdict).
    """
    if len(matchups) != len(prompts):
        raise ValueError(f"{len(matchups)} matchups but {len(prompts)} prompts; give one prompt per matchup")
    if retries < 0:
        raise ConfigError(f"judge retries = {retries}; expected 0 or more (default {DEFAULT_RETRIES})")
    health = health if health is not None else JudgeHealth()
    switch = st.FormatSwitch(structured, health, plain_reason)
    name = type(judge).__name__

    def send(batch: list[str], fmt: ResponseFormat | None) -> list[str | Exception]:
        health.batches += 1
        health.calls += len(batch)
        if fmt is None:
            out = judge.complete(batch)
        else:
            formatted: StructuredPairwiseJudge = judge  # type: ignore[assignment]
            out = formatted.complete(batch, response_format=fmt)
        if not isinstance(out, list) or len(out) != len(batch):
            got = len(out) if isinstance(out, list) else type(out).__name__
            raise ModelError(f"judge {name}.complete returned {got} replies for "
                             f"{len(batch)} prompts; it must return one str or exception per prompt")
        for reply in out:
            if not isinstance(reply, str | Exception):
                raise ModelError(f"judge {name}.complete returned a "
                                 f"{type(reply).__name__}; expected a str or an exception per prompt")
        return out

    health.items += len(prompts)
    replies: list[str | None] = [None] * len(prompts)
    errors: list[str | None] = [None] * len(prompts)
    verdicts: list[Verdict] = ["error"] * len(prompts)
    attempts = [0] * len(prompts)
    todo = list(range(len(prompts)))
    for _ in range(retries + 1):
        if not todo:
            break
        reasks = [verdicts[i] == "unparseable" for i in todo]
        health.reasks += sum(reasks)
        out, formatted_flags = switch.call(send, [prompts[i] for i in todo], STAGE, reasks, RETRY_REMINDER)
        again = []
        for i, reply, fmt in zip(todo, out, formatted_flags, strict=True):
            attempts[i] += 1
            if isinstance(reply, Exception):
                health.errors += 1
                verdicts[i], errors[i] = "error", f"{type(reply).__name__}: {reply}"
                again.append(i)
                continue
            replies[i], errors[i] = reply, None
            verdicts[i] = read_verdict(reply)
            if fmt and _unstructured(reply):
                health.unstructured_replies += 1  # the server ignored the schema: read as text
            if verdicts[i] == "unparseable":
                health.parse_failures += 1
                again.append(i)
        todo = again
    return tuple(Judgment(m, verdicts[i], replies[i], attempts[i], errors[i]) for i, m in enumerate(matchups))


# ---------------------------------------------------------------- battles and reliability


def to_battles(judgments: Iterable[Judgment]) -> list[Battle]:
    """One battle per decided judgment (ties included as "tie"); unparseable and failed
    judgments are not battles (they are counted by :func:`judge_reliability`)."""
    out = []
    for j in judgments:
        if j.decided:
            m = j.matchup
            out.append(Battle(m.query_id, m.model_a, m.model_b,
                              "A" if j.verdict == "A" else "B" if j.verdict == "B" else "tie"))
    return out


def group_battles(judgments: Iterable[Judgment]) -> dict[tuple[str, str], list[Battle]]:
    """Battles per (suite, language) and per (suite, "all") for the suite-level fit."""
    out: dict[tuple[str, str], list[Battle]] = defaultdict(list)
    for j in judgments:
        for battle in to_battles([j]):
            out[(j.matchup.suite, j.matchup.lang)].append(battle)
            out[(j.matchup.suite, "all")].append(battle)
    return dict(sorted(out.items()))


@dataclass(frozen=True, slots=True)
class JudgeReliability:
    """How trustworthy the judge's verdicts are.

    ``swap_consistency``: of the (case, pair)s with a usable verdict in both orders, the share where
    the same model won (or both were ties); None when no pair was judged in both orders.
    ``tie_rate``: ties / usable verdicts. ``parse_failure_rate``: unparseable / all judgments.
    ``position_a_rate``: share of decisive verdicts won by the answer shown first (0.5 = no
    position bias).
    """

    judgments: int
    decided: int
    ties: int
    parse_failures: int
    errors: int
    retried: int
    swap_pairs: int
    swap_consistent: int
    swap_consistency: float | None
    tie_rate: float | None
    parse_failure_rate: float | None
    position_a_rate: float | None
    # per model, the judgments of its matchups without a usable verdict (unparseable or errored):
    # a model whose answers steer the judge into nulls is seen, not silently left out of battles
    undecided_by_model: Mapping[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"swap_consistency": self.swap_consistency, "tie_rate": self.tie_rate,
                               "parse_failures": self.parse_failures, "parse_failure_rate": self.parse_failure_rate,
                               "errors": self.errors, "judgments": self.judgments, "decided": self.decided,
                               "ties": self.ties, "retried": self.retried, "swap_pairs": self.swap_pairs,
                               "swap_consistent": self.swap_consistent, "position_a_rate": self.position_a_rate}
        if self.undecided_by_model:  # only when there is one (reports without keep their bytes)
            out["undecided_by_model"] = dict(self.undecided_by_model)
        return out


def judge_reliability(judgments: Iterable[Judgment]) -> JudgeReliability:
    js = list(judgments)
    decided = [j for j in js if j.decided]
    ties = sum(j.verdict == "C" for j in decided)
    decisive = [j for j in decided if j.verdict != "C"]
    by_pair: dict[tuple[str, str, tuple[str, str]], dict[str, Judgment]] = defaultdict(dict)
    for j in decided:
        m = j.matchup
        by_pair[(m.suite, m.case_id, m.pair)][m.model_a] = j
    undecided: Counter[str] = Counter()
    for j in js:
        if not j.decided:
            undecided.update((j.matchup.model_a, j.matchup.model_b))
    swap_pairs = swap_consistent = 0
    for both in by_pair.values():
        if len(both) == 2:
            first, second = both.values()
            swap_pairs += 1
            swap_consistent += first.winner == second.winner
    return JudgeReliability(
        judgments=len(js), decided=len(decided), ties=ties,
        parse_failures=sum(j.verdict == "unparseable" for j in js),
        errors=sum(j.verdict == "error" for j in js), retried=sum(j.attempts > 1 for j in js),
        swap_pairs=swap_pairs, swap_consistent=swap_consistent,
        swap_consistency=swap_consistent / swap_pairs if swap_pairs else None,
        tie_rate=ties / len(decided) if decided else None,
        parse_failure_rate=sum(j.verdict == "unparseable" for j in js) / len(js) if js else None,
        position_a_rate=sum(j.verdict == "A" for j in decisive) / len(decisive) if decisive else None,
        undecided_by_model=dict(sorted(undecided.items())))


def matchup_prompts(matchups: Sequence[Matchup], cases: Mapping[tuple[str, str], Case],
                    answers: Mapping[tuple[str, str, str], str], *,
                    passages: Mapping[tuple[str, str], Sequence[Passage]] | None = None,
                    template: str | None = None) -> list[str]:
    """The judge prompt of every matchup.

    ``cases[(suite, case_id)]`` gives the question; ``answers[(suite, case_id, model)]`` the text
    shown for a model; ``passages[(suite, case_id)]`` the documents (default: the case passages;
    pass the retrieved chunks in retrieval mode). A missing case or answer is an error naming it.
    """
    tpl = pairwise_template() if template is None else template
    out = []
    for m in matchups:
        key = (m.suite, m.case_id)
        case = cases.get(key)
        if case is None:
            raise ConfigError(f"matchup {m.query_id}: no case {m.case_id!r} in suite {m.suite!r}")
        texts = []
        for model in (m.model_a, m.model_b):
            text = answers.get((m.suite, m.case_id, model))
            if text is None:
                raise ConfigError(f"matchup {m.query_id}: no answer of model {model!r}; build the plan "
                                  "only from cases every arena model answered")
            texts.append(text)
        docs = case.passages if passages is None else passages.get(key, case.passages)
        out.append(render_pairwise(case.question, docs, texts[0], texts[1], template=tpl))
    return out
