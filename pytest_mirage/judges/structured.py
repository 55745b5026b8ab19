"""Structured output for LLM judges: a JSON schema per judge stage, and the check of a reply against it.

With ``structured=auto`` (the default) or ``structured=on`` on a judge spec, and a judge model whose
adapter can constrain its output (``openai:``, ``vllm:``), every prompt of a stage is sent with
the stage's :class:`~pytest_mirage.models.base.ResponseFormat` and a one-line note naming the
JSON fields. The schemas follow the subset that OpenAI's strict mode, vLLM's guided decoding and
llama.cpp's grammar conversion all accept: an object root, every property required, no other
properties, ``enum`` for verdicts and 1-5 ratings, no numeric bounds (ranges are checked after).

:func:`check` validates a parsed reply against a schema the way the judges read it: extra keys are
ignored (a server that adds fields has still answered), a missing key or a wrong type is a problem
(a rating ``"4"`` is a string, ``true`` is not an integer). :func:`structured_object` finds a
stage's JSON in a reply (whole, fenced or inside prose). :class:`FormatSwitch` sends a judge's
prompts with or without the schema and falls back to plain prompts when the server refuses it;
the pointwise LLM judges and the arena's pairwise judge share it. :func:`resolve_mode` turns a
judge's ``structured`` option into the mode its model can take. Nothing here imports a model library.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import ConfigError, FormatRejected, NotCached, caused_by
from ..jsonutil import DuplicateKeyError, loads_unique
from ..models.base import ResponseFormat, sets_own_response_format, supports_structured_output
from .base import JudgeHealth
from .spec import STRUCTURED_MODES

SNIPPET_CHARS = 120

_RATING = {"type": "integer", "enum": [1, 2, 3, 4, 5]}
_YES_NO = {"type": "string", "enum": ["Yes", "No"]}


def _object(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


# stage -> the schema of its reply (stages: llm.PLACEHOLDERS' prompts, the ARES prompts share "yes_no")
SCHEMAS: dict[str, dict[str, Any]] = {
    "claims": _object(claims={"type": "array", "items": {"type": "string"}}),
    "claim_verdicts": _object(verdicts={"type": "array", "items": _object(claim={"type": "integer"},
                                                                         verdict=_YES_NO)}),
    "fluency": _object(explanation={"type": "string"}, rating=_RATING),
    "answer_overlap": _object(explanation={"type": "string"}, score=_RATING),
    "yes_no": _object(verdict=_YES_NO),
    "translation_quality": _object(semantic_equivalence={"type": "number"}, grammatical_accuracy={"type": "number"},
                                   naturalness_fluency={"type": "number"}),
    # the arena's pairwise judge (MIRAGE-Bench Figure 13): the prompt asks for an explanation, then a
    # verdict "[[A]]", "[[B]]" or "[[C]]" (a tie); the JSON keeps the prompt's letters
    "pairwise": _object(explanation={"type": "string"}, verdict={"type": "string", "enum": ["A", "B", "C"]}),
}

# appended to the prompt when the request carries the schema: local models follow the schema better
# when the prompt names its fields, and a server that ignores the format still gets a readable ask
NOTES: dict[str, str] = {
    "claims": '\n\nReply with a JSON object only: {"claims": ["claim one", "claim two"]}',
    "claim_verdicts": '\n\nReply with a JSON object only, one verdict per claim in order: '
                      '{"verdicts": [{"claim": 1, "verdict": "Yes"}, {"claim": 2, "verdict": "No"}]}',
    "fluency": '\n\nReply with a JSON object only: {"explanation": "...", "rating": n} with n an integer '
               "from 1 to 5.",
    "answer_overlap": '\n\nReply with a JSON object only: {"explanation": "...", "score": n} with n an integer '
                      "from 1 to 5.",
    "yes_no": '\n\nReply with a JSON object only: {"verdict": "Yes"} or {"verdict": "No"}',
    "translation_quality": '\n\nReply with a JSON object only, scores from 0.0 to 5.0: {"semantic_equivalence": '
                           'x, "grammatical_accuracy": y, "naturalness_fluency": z}',
    "pairwise": '\n\nReply with a JSON object only: {"explanation": "...", "verdict": "A"} with the verdict "A" if '
                'assistant A is better, "B" if assistant B is better, "C" for a tie.',
}

REMINDER = "\n\nYour previous reply could not be read. Reply with the JSON object only, exactly in the shape asked."

STAGES = tuple(SCHEMAS)


def response_format(stage: str) -> ResponseFormat:
    """The response format of a judge stage (``mirage_claims``, ``mirage_yes_no``, ...)."""
    return ResponseFormat.of(f"mirage_{stage}", SCHEMAS[stage])


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _shown(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else '"' + value + '"'
    return text if len(text) <= 40 else text[:40] + "..."


def check(value: Any, schema: Mapping[str, Any], path: str = "") -> str | None:
    """The first way ``value`` breaks ``schema`` (``'"rating": expected an integer, got a string
    "4"'``), or None. Extra object keys are allowed; ``integer`` accepts ``4.0`` but never a boolean."""
    where = f'"{path}": ' if path else ""
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(value, dict):
            return f"{where}expected an object, got {_type_name(value)}"
        for key in schema.get("required", ()):
            if key not in value:
                return f'missing "{path + "." if path else ""}{key}"'
        for key, sub in schema.get("properties", {}).items():
            problem = check(value[key], sub, f"{path}.{key}" if path else key)
            if problem:
                return problem
        return None
    if kind == "array":
        if not isinstance(value, list):
            return f"{where}expected an array, got {_type_name(value)} {_shown(value)}"
        for n, item in enumerate(value):
            problem = check(item, schema.get("items", {}), f"{path}[{n}]")
            if problem:
                return problem
        return None
    ok = {
        "string": isinstance(value, str),
        "boolean": isinstance(value, bool),
        "number": isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value),
        "integer": isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        and float(value).is_integer(),
    }.get(str(kind), True)
    if not ok:
        return f"{where}expected {'an' if kind == 'integer' else 'a'} {kind}, got {_type_name(value)} {_shown(value)}"
    allowed = schema.get("enum")
    if allowed is not None and value not in allowed:
        return f"{where}expected one of {', '.join(_shown(a) for a in allowed)}, got {_shown(value)}"
    return None


def keys(stage: str) -> tuple[str, ...]:
    """The top-level keys of a stage's reply."""
    return tuple(SCHEMAS[stage]["required"])


# ---------------------------------------------------------------- finding a stage's JSON in a reply


def snippet(text: str) -> str:
    """``text`` on one line, cut at :data:`SNIPPET_CHARS` (for reasons and health notes)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[:SNIPPET_CHARS] + "..."


_FENCE_RE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)


def json_candidates(reply: str) -> list[Any]:
    """JSON values found in ``reply``: the whole reply, fenced blocks, then the outermost
    ``[...]``/``{...}`` spans. A JSON object that repeats a key raises
    :class:`~pytest_mirage.jsonutil.DuplicateKeyError` (naming the key): the judge callers count
    such a reply as unparseable instead of reading the last value."""
    texts = [reply.strip(), *(m.group(1).strip() for m in _FENCE_RE.finditer(reply))]
    for open_, close in (("[", "]"), ("{", "}")):
        start, end = reply.find(open_), reply.rfind(close)
        if 0 <= start < end:
            texts.append(reply[start:end + 1])
    out = []
    for t in texts:
        try:
            out.append(loads_unique(t))
        except DuplicateKeyError:
            raise  # {"verdict": "No", "verdict": "Yes"} means nothing: the reply is unparseable, naming the key
        except (ValueError, RecursionError):
            continue
    return out


def structured_object(stage: str, reply: str) -> dict[str, Any] | None:
    """The JSON object in ``reply`` (whole, fenced or inside prose) that answers ``stage``'s schema,
    i.e. has one of its keys; None when the reply holds none (plain text, other JSON)."""
    names = keys(stage)
    for value in json_candidates(reply):
        if isinstance(value, dict) and any(k in value for k in names):
            return value
    return None


# ---------------------------------------------------------------- the mode a judge model can take


def resolve_mode(option: str, adapter: object, *, kind: str, where: str) -> tuple[str, str | None]:
    """``(mode, why plain)`` of a judge: its ``structured`` option (``auto``/``on``/``off``) against
    what its model's ``adapter`` (of model kind ``kind``) can do; ``where`` names the judge in errors.

    ``on`` with an adapter that cannot send a JSON schema is a :class:`ConfigError` naming the judge,
    the model kind and the fix. So is a judge model whose own options already set ``response_format``
    (``extra={"response_format": ...}`` on ``openai:``) while the judge would send its schema (``auto``
    or ``on``): the two would replace each other, so the user drops one."""
    if option not in STRUCTURED_MODES:
        raise ConfigError(f"{where}: structured={option!r}; expected one of {', '.join(STRUCTURED_MODES)}")
    if option == "off":
        return "off", "structured=off"
    if supports_structured_output(adapter):
        if sets_own_response_format(adapter):
            raise ConfigError(
                f"{where}: the judge model's extra= sets response_format, and the judge sends its own JSON schema "
                f"there (structured={option}{', the default' if option == 'auto' else ''}); one would replace the "
                "other: drop response_format from extra= (the judge's schema already asks for JSON), or give the "
                "judge structured=off to send yours with plain prompts")
        return option, None
    if option == "on":
        raise ConfigError(f"{where}: structured=on needs a judge model that can constrain its output to a JSON "
                          f"schema (openai: — OpenAI, or a vLLM / llama.cpp / Ollama server — or vllm:); "
                          f"{kind}: models cannot: use structured=auto (plain prompts for this model) or "
                          "structured=off, or an openai:/vllm: judge model")
    return "off", f"{kind}: models cannot constrain output to a JSON schema"


# ---------------------------------------------------------------- sending with or without the schema


# send(prompts, response_format) -> one reply (a str, a Reply, ...) or exception per prompt
Send = Callable[[list[str], ResponseFormat | None], list[Any]]


class FormatSwitch:
    """How a judge sends its prompts: with the stage's JSON schema (and its note in the prompt)
    while it is structured, else plain; and the switch to plain prompts for the rest of the run
    when, with ``structured=auto``, the server refuses the schema (or a replay-only cache holds no
    structured reply at all). Keeps ``health.output``, ``output_note`` and ``format_fallbacks``.

    ``plain_reason``: why the judge is plain from the start (``structured=off``, a model kind that
    cannot send a schema), for the health block."""

    def __init__(self, structured: str, health: JudgeHealth, plain_reason: str | None = None) -> None:
        if structured not in STRUCTURED_MODES:
            raise ConfigError(f"structured={structured!r}; expected one of {', '.join(STRUCTURED_MODES)}")
        self.structured = structured
        self.health = health
        self.formatted = structured != "off"
        health.output = "json_schema" if self.formatted else "text"
        health.output_note = "" if self.formatted else (plain_reason or "structured=off")

    def call(self, send: Send, prompts: Sequence[str], stage: str, reasks: Sequence[bool],
             plain_reminder: str) -> tuple[list[Any], list[bool]]:
        """One batch of ``stage`` through ``send(prompts, response_format)``. ``reasks[i]``: prompt
        ``i`` is asked again after an unreadable reply (it gets :data:`REMINDER`, or
        ``plain_reminder`` when sent plain). Returns the replies and, per reply, whether its request
        carried the schema; with ``auto``, prompts whose structured request failed because the
        server refused the schema are sent again plain, and the judge stays plain."""
        if not self.formatted:
            return send([p + (plain_reminder if r else "") for p, r in zip(prompts, reasks, strict=True)],
                        None), [False] * len(prompts)
        out = send([p + NOTES[stage] + (REMINDER if r else "") for p, r in zip(prompts, reasks, strict=True)],
                   response_format(stage))
        flags = [True] * len(prompts)
        failed = [i for i, r in enumerate(out) if isinstance(r, Exception)]
        rejected = next((r for r in out if isinstance(r, Exception) and caused_by(r, FormatRejected)), None)
        unrecorded = bool(out) and len(failed) == len(out) and all(caused_by(r, NotCached) for r in out
                                                                   if isinstance(r, Exception))
        if self.structured != "auto" or not failed or (rejected is None and not unrecorded):
            return out, flags
        self.formatted = False
        self.health.output = "text"
        self.health.output_note = (f"the server refused response_format ({snippet(str(rejected))}); plain prompts "
                                   "from then on" if rejected is not None else
                                   "replay-only: the cache holds no structured reply; plain prompts")
        self.health.format_fallbacks += len(failed)
        again = send([prompts[i] + (plain_reminder if reasks[i] else "") for i in failed], None)
        for i, r in zip(failed, again, strict=True):
            out[i], flags[i] = r, False
        return out, flags
