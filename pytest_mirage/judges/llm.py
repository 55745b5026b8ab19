"""Pointwise LLM judges over any model: claim-level support, MIRAGE-Bench fluency and answer
overlap, ARES's three yes/no judges and QTT-RAG's translation quality.

Every judge reaches its model through ``complete(prompts) -> replies`` (see
:data:`~pytest_mirage.judges.base.Complete`): the engine caches each prompt, retries transient
failures and answers in ``replay-only`` mode from the cache. A judge sends all prompts of a stage
in one call (claim extraction, then claim verdicts, for every item at once), re-asks the prompts
whose reply did not parse once (the prompt with a format reminder appended: a cached or
deterministic judge would repeat itself on the same prompt), and gives the items that still fail
a null value with the reason. It never scores a failure as 0 and never raises on a bad reply.

Templates (``judges/templates/*.txt``) use ``{{placeholders}}``; ``{{language}}`` is the English
name of the case language, so the instruction names the language the judge must read and write.
A suite can override any prompt for any language (spec option ``template.PROMPT.LANG=path``);
the overrides are part of the judge identity (cache key).

Structured output (``structured=auto|on``, see :mod:`pytest_mirage.judges.structured`): each stage
sends its prompts with the stage's JSON schema, and ``complete`` is called as
``complete(prompts, response_format=...)``. Every reply is read as JSON for the schema first (in a
code fence or surrounded by prose too; extra keys ignored, a wrong type unparseable), then by the
tolerant text parser when it holds no such JSON (a server that ignored the format). A server that
refuses the format is asked again without it, and with ``auto`` the judge stays on plain prompts.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Any, Generic, TypeVar

from ..errors import ConfigError, ModelError
from ..jsonutil import DuplicateKeyError
from ..models.base import ResponseFormat
from ..prompts import strip_citations
from ..suites.model import Passage
from ..text.langcodes import language_name
from . import structured as st
from .base import Complete, FormatComplete, JudgeHealth, JudgeItem, JudgeScore, Reply, null_score
from .pairwise import format_documents
from .spec import JUDGES, PROMPTS, STRUCTURED_MODES
from .structured import FormatSwitch, snippet, structured_object
from .structured import json_candidates as _json_candidates

TEMPLATE_VERSION = "1"  # part of every LLM judge's identity: bump when a built-in template changes
DEFAULT_REASK = 1
DEFAULT_MAX_CLAIMS = 30
T = TypeVar("T")

PLACEHOLDERS: dict[str, tuple[str, ...]] = {
    "claims": ("question", "answer"),
    "claim_verdicts": ("documents", "claims"),
    "fluency": ("question", "documents", "answer"),
    "answer_overlap": ("question", "references", "answer"),
    "ares_context_relevance": ("question", "documents"),
    "ares_answer_faithfulness": ("question", "documents", "answer"),
    "ares_answer_relevance": ("question", "documents", "answer"),
    "translation_quality": ("documents", "answer"),
}
_PLACEHOLDER_RE = re.compile(r"\{\{(\w+)\}\}")


def builtin_template(name: str) -> str:
    """The text of a built-in judge template."""
    return resources.files(__package__).joinpath("templates", f"{name}.txt").read_text(encoding="utf-8")


def render(template: str, values: Mapping[str, str]) -> str:
    """Fill ``{{name}}`` placeholders in one pass (text inside a value is never substituted again);
    unknown placeholders stay as they are."""
    return _PLACEHOLDER_RE.sub(lambda m: values.get(m.group(1), m.group(0)), template)


# ---------------------------------------------------------------- reply parsing


class Unparseable(Exception):
    """A judge reply that does not have the requested form; the message says what was missing."""


_REFUSAL_RE = re.compile(
    r"\b(?:I(?:'m| am) sorry|I (?:can(?:no|')t|am unable to|won't)|as an AI\b)|no puedo|je ne peux pas|"
    r"ich kann (?:nicht|keine)|не могу|申し訳|お答えできません|抱歉|无法回答|我不能|죄송|ไม่สามารถ",
    re.I)


def is_refusal(reply: str) -> bool:
    """A reply that declines the task (checked only on replies that did not parse)."""
    return bool(_REFUSAL_RE.search(reply[:400]))


_BULLET_RE = re.compile(r"^\s*(?:[-*•・●▪◦]|\(?\d{1,3}[.)、:：]|\d{1,3}\s*[-–])\s*")
_PREAMBLE_RE = re.compile(r"(?:claims?|statements?|here (?:are|is))\b.*[:：]\s*$", re.I)


def parse_claims(reply: str) -> list[str]:
    """Claims from a JSON array of strings (possibly fenced or surrounded by prose), or else from a
    bulleted or numbered list, one claim per line. An empty array is no claims; a reply with
    neither form is :class:`Unparseable`. Claims are kept in whatever script they are written in:
    nothing here relies on spaces or Latin punctuation."""
    for value in _json_candidates(reply):
        if isinstance(value, dict):
            value = next((v for v in value.values() if isinstance(v, list)), None)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return [v.strip() for v in value if v.strip()]
    lines = [ln for ln in reply.splitlines() if ln.strip()]
    listed = [_BULLET_RE.sub("", ln).strip() for ln in lines if _BULLET_RE.match(ln)]
    listed = [c for c in listed if c]
    if listed:
        return listed
    raise Unparseable("expected a JSON array of claims or one claim per line")


_YES = {"yes", "y", "true", "supported", "faithful", "relevant", "sí", "si", "oui", "ja", "kyllä", "ya",
        "ndiyo", "bẹẹni", "beeni", "да", "نعم", "بله", "हाँ", "हां", "হ্যাঁ", "అవును", "ใช่", "បាទ", "ចាស",
        "はい", "是", "是的", "对", "네", "예"}
_NO = {"no", "n", "false", "unsupported", "not supported", "not faithful", "not relevant", "non", "nein", "ei",
       "tidak", "hapana", "rara", "нет", "لا", "نه", "नहीं", "না", "కాదు", "ไม่", "ไม่ใช่", "ទេ", "いいえ",
       "否", "不", "不是", "아니오", "아니요"}
_MARKED_RE = re.compile(r"\[\[\s*([^\[\]\n]{1,20}?)\s*\]\]")


def _verdict_word(word: str) -> bool | None:
    w = word.strip().strip("*_.!:\"'`").strip().lower()
    if w in _YES:
        return True
    if w in _NO:
        return False
    return None


def parse_yes_no(reply: str) -> bool:
    """A ``[[Yes]]``/``[[No]]`` verdict (the last marked one), or a reply that is or starts with a
    yes/no word (also in the case language: local judges often answer ``[[はい]]`` or ``Ndiyo``)."""
    marked = [_verdict_word(m.group(1)) for m in _MARKED_RE.finditer(reply)]
    marked_verdicts = [v for v in marked if v is not None]
    if marked_verdicts:
        return marked_verdicts[-1]
    text = reply.strip()
    first_line = text.splitlines()[0] if text else ""
    for candidate in (first_line, re.split(r"[\s,.;:!。、，]", first_line, maxsplit=1)[0] if first_line else ""):
        v = _verdict_word(candidate)
        if v is not None:
            return v
    m = re.search(r"(?:verdict|answer|final)\s*[:：]\s*\**\s*(\w+)", text, re.I)
    if m:
        v = _verdict_word(m.group(1))
        if v is not None:
            return v
    raise Unparseable("expected [[Yes]] or [[No]]")


_NUMBERED_VERDICT_RE = re.compile(r"^\s*(?:claim\s*)?\(?(\d{1,3})\)?\s*[.):：\-–]?\s*(.*)$", re.I)


def parse_claim_verdicts(reply: str, n: int) -> list[bool]:
    """``n`` verdicts, in claim order: numbered lines (``1: [[Yes]]``), a JSON list of verdicts or a
    JSON object keyed by claim number, or exactly ``n`` marked verdicts in order. Anything else,
    or a verdict missing for some claim, is :class:`Unparseable`."""
    for value in _json_candidates(reply):
        if isinstance(value, list) and len(value) == n:
            got = [_json_verdict(v) for v in value]
            if all(g is not None for g in got):
                return [bool(g) for g in got]
        if isinstance(value, dict):
            by_num = {}
            for k, v in value.items():
                if str(k).strip().isdigit():
                    by_num[int(str(k).strip())] = _json_verdict(v)
            if set(by_num) == set(range(1, n + 1)) and all(v is not None for v in by_num.values()):
                return [bool(by_num[i]) for i in range(1, n + 1)]
    numbered: dict[int, bool] = {}
    for line in reply.splitlines():
        m = _NUMBERED_VERDICT_RE.match(line)
        if not m:
            continue
        try:
            verdict = parse_yes_no(m.group(2))
        except Unparseable:
            continue
        numbered.setdefault(int(m.group(1)), verdict)
    if all(i in numbered for i in range(1, n + 1)):
        return [numbered[i] for i in range(1, n + 1)]
    marked = [v for v in (_verdict_word(m.group(1)) for m in _MARKED_RE.finditer(reply)) if v is not None]
    if len(marked) == n:
        return marked
    missing = [i for i in range(1, n + 1) if i not in numbered]
    raise Unparseable(f"expected a [[Yes]]/[[No]] verdict for each of the {n} claims; "
                      f"none found for claim(s) {', '.join(map(str, missing[:10]))}")


def _json_verdict(v: Any) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        return _verdict_word(v)
    if isinstance(v, dict):
        for key in ("verdict", "supported", "label", "answer"):
            if key in v:
                return _json_verdict(v[key])
    return None


def _score_in(value: float, low: float, high: float) -> float:
    if not low <= value <= high or math.isnan(value):
        raise Unparseable(f"score {value:g} is outside {low:g}-{high:g}")
    return value


def parse_overlap_score(reply: str) -> float:
    """MIRAGE-Bench answer overlap (Figure 11): the first ``[[n]]`` with n in 1-5; else
    ``Score: n``; else a reply that is a single number."""
    m = re.search(r"\[\[\s*(\d+(?:\.\d+)?)\s*\]\]", reply)
    if m is None:
        m = re.search(r"score\s*\**\s*[:：]?\s*\**\s*(\d+(?:\.\d+)?)", reply, re.I)
    if m is None:
        m = re.fullmatch(r"\s*\**(\d+(?:\.\d+)?)\**\s*", reply)
    if m is None:
        raise Unparseable('expected "Score: [[n]]" with n from 1 to 5')
    return _score_in(float(m.group(1)), 1, 5)


def parse_rating(reply: str) -> float:
    """MIRAGE-Bench fluency (Figure 12): ``##Rating: n`` (also ``Rating: **n**``, ``n/5``,
    ``[[n]]``) with n in 1-5."""
    m = re.search(r"rating\s*\**\s*[:：]?\s*\**\s*\{?\s*(\d+(?:\.\d+)?)", reply, re.I)
    if m is None:
        m = re.search(r"\[\[\s*(\d+(?:\.\d+)?)\s*\]\]", reply)
    if m is None:
        m = re.search(r"\b(\d(?:\.\d+)?)\s*/\s*5\b", reply)
    if m is None:
        m = re.fullmatch(r"\s*\**(\d+(?:\.\d+)?)\**\s*", reply)
    if m is None:
        raise Unparseable('expected "##Rating: n" with n from 1 to 5')
    return _score_in(float(m.group(1)), 1, 5)


# criterion -> names a judge may use for it (QTT-RAG's English, Korean, Finnish and Chinese keys)
TRANSLATION_KEYS: dict[str, tuple[str, ...]] = {
    "translation_equivalence": ("semantic equivalence", "semantic", "equivalence", "의미론적 일치성",
                                "semanttinen johdonmukaisuus", "语义一致性"),
    "translation_grammar": ("grammatical accuracy", "grammatical", "grammar", "문법적 정확성",
                            "kieliopillinen tarkkuus", "语法准确性"),
    "translation_naturalness": ("naturalness & fluency", "naturalness and fluency", "naturalness", "fluency",
                                "자연스러움과 유창성", "luontevuus ja sujuvuus", "语言流畅度", "语言的自然流畅度"),
}


def parse_translation_scores(reply: str) -> dict[str, float]:
    """QTT-RAG's three criteria, 0-5 each: a JSON object keyed by the criteria (English or the
    paper's Korean/Finnish/Chinese names, any case), or ``"Name": n`` pairs in prose, or exactly
    three numbers in the criteria's order."""
    pairs: dict[str, float] = {}
    for value in _json_candidates(reply):
        if isinstance(value, dict):
            for k, v in value.items():
                if isinstance(v, int | float) and not isinstance(v, bool):
                    pairs[str(k).strip().lower()] = float(v)
    if not pairs:
        for m in re.finditer(r"[\"']?([^\"':,{}\n]{2,40}?)[\"']?\s*[:：]\s*(\d+(?:\.\d+)?)", reply):
            pairs[m.group(1).strip().strip("*").strip().lower()] = float(m.group(2))
    out: dict[str, float] = {}
    for metric, names in TRANSLATION_KEYS.items():
        for key, v in pairs.items():
            if any(key == n or key.startswith(n) for n in names):
                out[metric] = _score_in(v, 0, 5)
                break
    if len(out) == 3:
        return out
    numbers = [float(x) for x in re.findall(r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w.])", reply)]
    if len(numbers) == 3:
        return {m: _score_in(v, 0, 5) for m, v in zip(TRANSLATION_KEYS, numbers, strict=True)}
    raise Unparseable("expected JSON with Semantic Equivalence, Grammatical Accuracy and Naturalness & "
                      "Fluency scores from 0.0 to 5.0")


def yes_probability(reply: Reply | str, verdict: bool) -> float:
    """P(yes) from the token log-probabilities at the verdict token, when the reply carries them:
    the probability mass of yes-tokens renormalised against no-tokens among the alternatives at the
    first generated token that is a yes/no word. Without log-probabilities: 1.0 or 0.0. A
    log-probability that is NaN, infinite or above 0 is :class:`Unparseable`."""
    if not isinstance(reply, Reply) or not reply.logprobs:
        return 1.0 if verdict else 0.0
    for tok in reply.logprobs:
        if _verdict_word(_clean_token(tok.token)) is None:
            continue
        alts: dict[str, float] = dict(tok.top)
        alts.setdefault(tok.token, tok.logprob)
        for t, lp in alts.items():
            # a log-probability is finite and <= 0 (a little above 0 from the server's rounding); NaN,
            # inf or +1000 is a broken reply, not a probability (math.exp(1000) overflows)
            if not isinstance(lp, int | float) or not math.isfinite(lp) or lp > 1e-3:
                raise Unparseable(f"the log-probability {lp!r} of token {t!r} is not a finite number <= 0")
        p_yes = sum(math.exp(lp) for t, lp in alts.items() if _verdict_word(_clean_token(t)) is True)
        p_no = sum(math.exp(lp) for t, lp in alts.items() if _verdict_word(_clean_token(t)) is False)
        if p_yes + p_no == 0:
            break
        return p_yes / (p_yes + p_no)
    return 1.0 if verdict else 0.0


def _clean_token(token: str) -> str:
    # BPE/SentencePiece word-start markers, the verdict brackets and JSON quoting ({"verdict": "Yes"})
    return token.replace("Ġ", "").replace("▁", "").strip().strip('[]{}":,')


# ---------------------------------------------------------------- structured replies


def _verdicts_from_json(obj: dict[str, Any], n: int | None) -> list[bool]:
    entries = obj["verdicts"]
    numbers = [int(e["claim"]) for e in entries]
    if n is None:
        n = len(entries)
    by_number = {num: e["verdict"] == "Yes" for num, e in zip(numbers, entries, strict=True)}
    if sorted(numbers) == list(range(1, n + 1)):
        return [by_number[i] for i in range(1, n + 1)]
    if len(entries) == n:  # numbered from 0, or not at all: the order is the claims' order
        return [e["verdict"] == "Yes" for e in entries]
    raise Unparseable(f"expected a verdict for each of the {n} claims (claim 1 to {n}); the JSON has "
                      f"{len(entries)} for claim(s) {', '.join(map(str, numbers[:10])) or 'none'}")


_FROM_JSON: dict[str, Callable[[dict[str, Any], int | None], Any]] = {
    "claims": lambda o, _n: [c.strip() for c in o["claims"] if c.strip()],
    "claim_verdicts": _verdicts_from_json,
    "fluency": lambda o, _n: float(o["rating"]),
    "answer_overlap": lambda o, _n: float(o["score"]),
    "yes_no": lambda o, _n: o["verdict"] == "Yes",
    "translation_quality": lambda o, _n: {
        "translation_equivalence": _score_in(float(o["semantic_equivalence"]), 0, 5),
        "translation_grammar": _score_in(float(o["grammatical_accuracy"]), 0, 5),
        "translation_naturalness": _score_in(float(o["naturalness_fluency"]), 0, 5)},
}


def parse_structured(stage: str, tolerant: Callable[[str], T], reply: str, n: int | None = None) -> T:
    """Read ``reply`` as the JSON of ``stage``'s schema (see :func:`structured_object`); a reply
    without such JSON goes to ``tolerant`` (the server ignored the format). JSON with the schema's
    keys but a missing key or a wrong type is :class:`Unparseable` naming the key: it is not read
    as text. ``n``: the number of claims (claim verdicts)."""
    obj = structured_object(stage, reply)
    if obj is None:
        return tolerant(reply)
    problem = st.check(obj, st.SCHEMAS[stage])
    if problem:
        raise Unparseable(f"JSON reply does not match the {stage} schema: {problem}")
    value: T = _FROM_JSON[stage](obj, n)
    return value


def reader(stage: str, tolerant: Callable[[str], T], n: int | None = None) -> Callable[[str], T]:
    """The parser of a stage's replies: JSON for its schema first, ``tolerant`` otherwise."""
    return partial(parse_structured, stage, tolerant, n=n)


# ---------------------------------------------------------------- asking


_REMINDERS: dict[str, str] = {
    "claims": "\n\nYour previous reply could not be read. Reply with a JSON array of strings only, "
              'e.g. ["claim one", "claim two"].',
    "claim_verdicts": "\n\nYour previous reply could not be read. Reply with one line per claim, in order: "
                      "the claim's number, a colon and [[Yes]] or [[No]], e.g. 1: [[Yes]]",
    "fluency": "\n\nYour previous reply could not be read. Use exactly the format: ##Rating: n ##Explanation: ..."
               " with n an integer from 1 to 5.",
    "answer_overlap": "\n\nYour previous reply could not be read. Start your reply with Score: [[n]], n an "
                      "integer from 1 to 5.",
    "yes_no": '\n\nYour previous reply could not be read. Reply with exactly "[[Yes]]" or "[[No]]".',
    "translation_quality": '\n\nYour previous reply could not be read. Reply with JSON only, e.g. '
                           '{"Semantic Equivalence": 4.0, "Grammatical Accuracy": 3.5, "Naturalness & Fluency": 4.5}',
}


@dataclass(slots=True)
class Asked(Generic[T]):
    """The outcome of one prompt after its re-asks."""

    value: T | None = None
    reason: str | None = None
    replies: list[str] = field(default_factory=list)
    reply: Reply | str | None = None  # the reply the value was parsed from


class LLMJudge:
    """Base of the LLM judges: templates, one batched ``complete`` call per stage, re-asks, health."""

    kind: str = ""

    def __init__(self, complete: Complete | FormatComplete, *, model: str, metrics: Sequence[str] | None = None,
                 templates: Mapping[tuple[str, str], str] | None = None, reask: int = DEFAULT_REASK,
                 options: Mapping[str, Any] | None = None, structured: str = "off",
                 plain_reason: str | None = None) -> None:
        info = JUDGES[self.kind]
        chosen = tuple(metrics) if metrics else info.metrics
        unknown = [m for m in chosen if m not in info.metrics]
        if unknown:
            raise ConfigError(f"judge {self.kind!r} has no metric {unknown[0]!r}; its metrics: "
                              f"{', '.join(info.metrics)}")
        if structured not in STRUCTURED_MODES:
            raise ConfigError(f"judge {self.kind!r}: structured={structured!r}; expected one of "
                              f"{', '.join(STRUCTURED_MODES)}")
        self.metrics: tuple[str, ...] = tuple(m for m in info.metrics if m in chosen)
        self.complete = complete
        self.model = model
        self.reask = reask
        self.options: dict[str, Any] = dict(options or {})
        self.templates: dict[tuple[str, str], str] = dict(templates or {})
        self.health = JudgeHealth()
        # structured: "on"/"auto" send each stage's JSON schema (complete must take response_format=);
        # "auto" drops it for the rest of the run when the server refuses it
        self.structured = structured
        self._switch = FormatSwitch(structured, self.health, plain_reason)
        for (prompt, _lang), text in self.templates.items():
            needed = PLACEHOLDERS[prompt] if prompt != "*" else ()
            missing = [p for p in needed if "{{" + p + "}}" not in text]
            if missing:
                raise ConfigError(f"judge {self.kind!r}: the template override for prompt {prompt!r} lacks the "
                                  f"placeholders {', '.join('{{' + m + '}}' for m in missing)}")

    # -- identity and templates

    def identity(self) -> Mapping[str, Any]:
        digest = hashlib.sha256(json.dumps(sorted((list(k), v) for k, v in self.templates.items()),
                                           ensure_ascii=False).encode()).hexdigest()[:16]
        return {"kind": self.kind, "model": self.model, "template_version": TEMPLATE_VERSION,
                "template_overrides": digest if self.templates else None, "metrics": list(self.metrics),
                "output": "json_schema" if self.structured != "off" else "text",
                **{k: v for k, v in sorted(self.options.items())}}

    def template(self, prompt: str, lang: str) -> str:
        """The override for (prompt, lang), else for (prompt, any language), else for (any prompt of a
        one-prompt judge, lang / any), else the built-in template."""
        for key in ((prompt, lang), (prompt, "*")):
            if key in self.templates:
                return self.templates[key]
        if len(PROMPTS[self.kind]) == 1:
            for key in (("*", lang), ("*", "*")):
                if key in self.templates:
                    return self.templates[key]
        return builtin_template(prompt)

    def prompt(self, name: str, item: JudgeItem, **values: str) -> str:
        base = {"language": language_name(item.lang), "question": item.question}
        return render(self.template(name, item.lang), {**base, **values})

    def close(self) -> None:
        pass

    # -- calling the model

    def _send(self, prompts: list[str], fmt: ResponseFormat | None) -> list[Reply | str | Exception]:
        self.health.batches += 1
        self.health.calls += len(prompts)
        try:
            if fmt is None:
                out = self.complete(prompts)
            else:
                formatted: FormatComplete = self.complete  # type: ignore[assignment]
                out = formatted(prompts, response_format=fmt)
        except Exception as exc:  # the engine failed the whole batch: every prompt gets the failure
            return [exc] * len(prompts)
        if not isinstance(out, Sequence) or isinstance(out, str) or len(out) != len(prompts):
            got = len(out) if isinstance(out, Sequence) else type(out).__name__
            raise ModelError(f"judge {self.kind!r} ({self.model}): complete() returned {got} replies for "
                             f"{len(prompts)} prompts; it must return one str, Reply or exception per prompt")
        for r in out:
            if not isinstance(r, str | Reply | Exception):
                raise ModelError(f"judge {self.kind!r} ({self.model}): complete() returned a {type(r).__name__}; "
                                 "expected a str, a Reply or an exception per prompt")
        return list(out)

    def _call(self, prompts: list[str], stage: str, reask: bool = False) -> tuple[list[Reply | str | Exception], list[bool]]:
        """One batch of a stage: with its JSON schema while the judge is structured (the prompt
        gets the schema's note), else plain (see :class:`~.structured.FormatSwitch`). Returns the
        replies and, per reply, whether its request carried the schema."""
        return self._switch.call(self._send, prompts, stage, [reask] * len(prompts), _REMINDERS[stage])

    def ask(self, prompts: Sequence[str], parse: Callable[[str], T] | Sequence[Callable[[str], T]],
            stage: str) -> list[Asked[T]]:
        """Send ``prompts`` of ``stage`` in one batch; re-ask the unparseable ones (a format reminder
        appended) up to ``reask`` times, in one batch each; what still fails gets a reason.
        ``parse`` is one parser for all replies or one per prompt (see :func:`reader`)."""
        parsers = list(parse) if isinstance(parse, Sequence) else [parse] * len(prompts)
        results: list[Asked[T]] = [Asked() for _ in prompts]
        todo = list(range(len(prompts)))
        for attempt in range(self.reask + 1):
            if not todo:
                break
            if attempt:
                self.health.reasks += len(todo)
            out, formatted = self._call([prompts[i] for i in todo], stage, reask=attempt > 0)
            again = []
            for i, r, fmt in zip(todo, out, formatted, strict=True):
                res = results[i]
                if isinstance(r, Exception):
                    self.health.errors += 1
                    res.reason = f"judge call failed: {type(r).__name__}: {r}"
                    continue
                text = r.text if isinstance(r, Reply) else r
                res.replies.append(text)
                try:
                    if fmt and structured_object(stage, text) is None:
                        self.health.unstructured_replies += 1  # the server ignored the schema
                    res.value, res.reason, res.reply = parsers[i](text), None, r
                except (Unparseable, DuplicateKeyError) as exc:
                    if is_refusal(text):
                        self.health.refusals += 1
                        res.reason = f"judge refused: {snippet(text)!r}"
                    else:
                        self.health.parse_failures += 1
                        res.reason = f"judge reply unparseable ({exc}): {snippet(text)!r}"
                    again.append(i)
            todo = again
        if self.reask:
            for i in todo:
                reason = results[i].reason
                if reason and results[i].replies:
                    results[i].reason = f"{reason} (after {self.reask} re-ask{'s' if self.reask > 1 else ''})"
        return results

    # -- scoring

    def score(self, items: Sequence[JudgeItem]) -> list[JudgeScore]:
        self.health.items += len(items)
        scores = self._score(list(items))
        self.health.count_nulls(scores)
        return scores

    def _score(self, items: list[JudgeItem]) -> list[JudgeScore]:
        raise NotImplementedError


def answer_text(item: JudgeItem) -> str:
    """The answer without citation markers."""
    return strip_citations(item.answer).strip()


def _has_letters(text: str) -> bool:
    return any(ch.isalnum() for ch in text)


def _raw(*asked: Asked[Any] | None) -> tuple[str, ...] | None:
    out = tuple(r for a in asked if a is not None for r in a.replies)
    return out or None


class _Single(LLMJudge):
    """One prompt per item, one value per item (fluency, answer overlap)."""

    prompt_name = ""

    def _skip(self, item: JudgeItem) -> str | None:
        if not _has_letters(answer_text(item)):
            return "the answer is empty"
        return None

    def _values(self, item: JudgeItem) -> dict[str, str]:
        raise NotImplementedError

    def _parse(self, reply: str) -> float:
        raise NotImplementedError

    def _score(self, items: list[JudgeItem]) -> list[JudgeScore]:
        metric = self.metrics[0]
        skips = [self._skip(it) for it in items]
        todo = [i for i, s in enumerate(skips) if s is None]
        asked = self.ask([self.prompt(self.prompt_name, items[i], **self._values(items[i])) for i in todo],
                         reader(self.prompt_name, self._parse), self.prompt_name)
        out: list[JudgeScore] = [null_score(self.metrics, s) if s else JudgeScore({}) for s in skips]
        for i, a in zip(todo, asked, strict=True):
            out[i] = JudgeScore({metric: a.value}, {metric: a.reason} if a.value is None and a.reason else {},
                                _raw(a))
        return out


class FluencyJudge(_Single):
    """MIRAGE-Bench fluency (Figure 12): an integer rating 1-5 of the answer as written."""

    kind = "fluency_llm"
    prompt_name = "fluency"

    def _values(self, item: JudgeItem) -> dict[str, str]:
        return {"documents": format_documents(item.passages), "answer": item.answer.strip()}

    def _parse(self, reply: str) -> float:
        return parse_rating(reply)


class AnswerOverlapJudge(_Single):
    """MIRAGE-Bench answer overlap (Figure 11): 1-5 agreement with the reference answer(s)."""

    kind = "answer_overlap_llm"
    prompt_name = "answer_overlap"

    def _skip(self, item: JudgeItem) -> str | None:
        if not item.references:
            return "case has no reference answer"
        return super()._skip(item)

    def _values(self, item: JudgeItem) -> dict[str, str]:
        refs = item.references
        label = refs[0] if len(refs) == 1 else "\n".join(f"- {r}" for r in refs)
        return {"references": label, "answer": item.answer.strip()}

    def _parse(self, reply: str) -> float:
        return parse_overlap_score(reply)


class SupportLLMJudge(LLMJudge):
    """Claim-level support: the judge lists the answer's claims in the answer's language, then
    judges every claim against the passages the generator saw; value = supported / claims."""

    kind = "support_llm"

    def _score(self, items: list[JudgeItem]) -> list[JudgeScore]:
        metric = "support_llm"
        out: list[JudgeScore | None] = [None] * len(items)
        todo: list[int] = []
        for i, it in enumerate(items):
            if not it.passages:
                out[i] = null_score(self.metrics, "the generator saw no passages to support the answer")
            elif not _has_letters(answer_text(it)):
                out[i] = null_score(self.metrics, "the answer is empty")
            else:
                todo.append(i)
        extracted = self.ask([self.prompt("claims", items[i], answer=answer_text(items[i])) for i in todo],
                             reader("claims", parse_claims), "claims")
        max_claims = int(self.options.get("max_claims", DEFAULT_MAX_CLAIMS))
        judged: list[tuple[int, Asked[list[str]], list[str]]] = []
        for i, ex in zip(todo, extracted, strict=True):
            if ex.value is None:
                out[i] = JudgeScore({metric: None}, {metric: f"claim extraction failed: {ex.reason}"}, _raw(ex))
            elif not ex.value:
                out[i] = JudgeScore({metric: None}, {metric: "the judge found no claim in the answer"}, _raw(ex))
            else:
                judged.append((i, ex, ex.value[:max_claims]))
        prompts = [self.prompt("claim_verdicts", items[i], documents=format_documents(items[i].passages),
                               claims="\n".join(f"{n}. {c}" for n, c in enumerate(claims, start=1)))
                   for i, _ex, claims in judged]
        parsers = [reader("claim_verdicts", partial(parse_claim_verdicts, n=len(c)), n=len(c))
                   for _i, _ex, c in judged]
        verdicts = self.ask(prompts, parsers, "claim_verdicts")
        for (i, ex, claims), v in zip(judged, verdicts, strict=True):
            if v.value is None:
                out[i] = JudgeScore({metric: None}, {metric: f"claim verdicts failed: {v.reason}"}, _raw(ex, v))
            else:
                out[i] = JudgeScore({metric: sum(v.value) / len(claims)}, {}, _raw(ex, v))
        return [s if s is not None else null_score(self.metrics, "not judged") for s in out]


class AresJudge(LLMJudge):
    """ARES's three judges, zero-shot: context relevance (question + passages), answer faithfulness
    and answer relevance (question + passages + answer), each a ``[[Yes]]``/``[[No]]`` verdict.
    The value is P(yes) from the verdict token's log-probabilities when ``complete`` returns
    :class:`~pytest_mirage.judges.base.Reply` objects that carry them, else 1.0 or 0.0."""

    kind = "ares"

    def _score(self, items: list[JudgeItem]) -> list[JudgeScore]:
        values: list[dict[str, float | None]] = [{} for _ in items]
        reasons: list[dict[str, str]] = [{} for _ in items]
        raws: list[list[str]] = [[] for _ in items]
        for metric in self.metrics:
            todo = []
            for i, it in enumerate(items):
                skip = self._skip(metric, it)
                if skip:
                    values[i][metric], reasons[i][metric] = None, skip
                else:
                    todo.append(i)
            prompts = [self.prompt(metric, items[i], documents=format_documents(items[i].passages),
                                   answer=answer_text(items[i])) for i in todo]
            for i, a in zip(todo, self.ask(prompts, reader("yes_no", parse_yes_no), "yes_no"), strict=True):
                raws[i].extend(a.replies)
                if a.value is None:
                    values[i][metric], reasons[i][metric] = None, a.reason or "no verdict"
                else:
                    assert a.reply is not None
                    try:
                        values[i][metric] = yes_probability(a.reply, a.value)
                    except Unparseable as exc:  # null with the reason, counted in the judge's health
                        self.health.parse_failures += 1
                        values[i][metric] = None
                        reasons[i][metric] = f"judge reply unparseable ({exc})"
        return [JudgeScore({m: v[m] for m in self.metrics}, r, tuple(raw) or None)
                for v, r, raw in zip(values, reasons, raws, strict=True)]

    @staticmethod
    def _skip(metric: str, item: JudgeItem) -> str | None:
        if not item.passages:
            return "the generator saw no passages"
        if metric != "ares_context_relevance" and not _has_letters(answer_text(item)):
            return "the answer is empty"
        return None


def foreign_passages(item: JudgeItem) -> list[Passage]:
    """The passages written in another language than the question: by their ``lang`` when set,
    else by language identification of their text (a passage whose language cannot be told counts
    as the question's)."""
    from ..text.langid import Undetermined, language_probability

    out = []
    for p in item.passages:
        if p.lang is not None:
            if p.lang.lower() != item.lang.lower():
                out.append(p)
            continue
        try:
            if language_probability(p.text, item.lang) < 0.5:
                out.append(p)
        except Undetermined:
            continue
    return out


class TranslationJudge(LLMJudge):
    """QTT-RAG's translation-quality judge (Table 8) applied to cross-lingual answers: for a case
    whose passages are in another language than the question, the answer renders their content in
    the question's language; the judge rates that rendering on semantic equivalence, grammatical
    accuracy and naturalness & fluency, 0-5 each. The sources are the foreign-language passages the
    answer cites (all foreign-language passages when it cites none of them)."""

    kind = "translation_quality"

    def _score(self, items: list[JudgeItem]) -> list[JudgeScore]:
        out: list[JudgeScore | None] = [None] * len(items)
        todo: list[tuple[int, list[Passage]]] = []
        for i, it in enumerate(items):
            if not _has_letters(answer_text(it)):
                out[i] = null_score(self.metrics, "the answer is empty")
                continue
            foreign = foreign_passages(it)
            if not foreign:
                out[i] = null_score(self.metrics, f"no passage is in another language than the question "
                                                  f"({it.lang}): translation quality does not apply")
                continue
            cited = [p for p in foreign if p.id in _cited_ids(it)]
            todo.append((i, cited or foreign))
        prompts = []
        for i, sources in todo:
            langs = sorted({p.lang for p in sources if p.lang})
            source_language = ", ".join(language_name(x) for x in langs) if langs else "another language"
            prompts.append(self.prompt("translation_quality", items[i], documents=format_documents(sources),
                                       answer=answer_text(items[i]), source_language=source_language))
        asked = self.ask(prompts, reader("translation_quality", parse_translation_scores), "translation_quality")
        for (i, _src), a in zip(todo, asked, strict=True):
            if a.value is None:
                out[i] = null_score(self.metrics, a.reason or "no scores", _raw(a))
            else:
                out[i] = JudgeScore({m: a.value[m] for m in self.metrics}, {}, _raw(a))
        return [s if s is not None else null_score(self.metrics, "not judged") for s in out]


def _cited_ids(item: JudgeItem) -> set[str]:
    from ..prompts import find_citations

    cited, _unknown = find_citations(item.answer, list(item.passage_ids))
    return {*cited, *item.citations}


JUDGE_CLASSES: dict[str, type[LLMJudge]] = {c.kind: c for c in (
    SupportLLMJudge, FluencyJudge, AnswerOverlapJudge, AresJudge, TranslationJudge)}


def load_templates(templates: Mapping[tuple[str, str], str], base_dir: Path | None,
                   where: str, *, confined: bool = False) -> dict[tuple[str, str], str]:
    """Read template override files (paths relative to ``base_dir``). ``confined`` (a spec from a
    suite's ``[judges]`` table): each file must be inside ``base_dir`` (the suite folder) once
    symlinks are resolved, or the judge is refused."""
    from .spec import template_path_problem

    out = {}
    for key, path_text in templates.items():
        path = Path(path_text)
        if confined:
            why = template_path_problem(path_text) if base_dir is not None else \
                "a suite's judge template needs the suite folder to be read from"
            if why is None and base_dir is not None:
                resolved, root = (base_dir / path).resolve(), base_dir.resolve()
                if not resolved.is_relative_to(root):
                    why = f"{path_text!r} resolves to {resolved}, outside the suite folder {root} (a symlink)"
            if why is not None:
                raise ConfigError(f"{where}: a suite's [judges] table reads judge templates from the suite folder "
                                  f"only: {why}; copy the template into the suite folder")
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        try:
            out[key] = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"{where}: cannot read template {path_text!r} ({exc.strerror or exc}); give a path "
                              f"relative to {base_dir or 'the working directory'}") from None
    return out


def create(spec: Any, *, complete: Complete | FormatComplete | None = None, base_dir: Path | None = None,
           structured: str = "off", plain_reason: str | None = None) -> LLMJudge:
    """Factory for :func:`pytest_mirage.judges.spec.create_judge`. ``structured``: the mode the
    caller resolved for the judge model (``off`` when its adapter cannot send a response format,
    with ``plain_reason`` saying so for the health block)."""
    if complete is None:
        raise ConfigError(f"judge spec {spec.raw!r}: an LLM judge needs a complete(prompts) callable")
    from ..models.credentials import mask_text

    where = f"judge spec {mask_text(spec.raw)!r}" + (f" ({spec.source})" if spec.source else "")
    templates = load_templates(spec.templates, base_dir, where, confined=bool(getattr(spec, "suite_data", False)))
    options = {k: v for k, v in spec.options.items() if k not in ("reask", "structured")}
    cls = JUDGE_CLASSES[spec.judge]
    return cls(complete, model=spec.model, metrics=spec.metrics, templates=templates,
               reask=int(spec.options.get("reask", DEFAULT_REASK)), options=options, structured=structured,
               plain_reason=plain_reason)
