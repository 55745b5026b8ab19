"""Structured output for LLM judges: a JSON schema per judge stage, and the check of a reply against it.

With ``structured=auto`` (the default) or ``structured=on`` on a judge spec, and a judge model whose
adapter can constrain its output (``openai:``, ``vllm:``), every prompt of a stage is sent with
the stage's :class:`~pytest_mirage.models.base.ResponseFormat` and a one-line note naming the
JSON fields. The schemas follow the subset that OpenAI's strict mode, vLLM's guided decoding and
llama.cpp's grammar conversion all accept: an object root, every property required, no other
properties, ``enum`` for verdicts and 1-5 ratings, no numeric bounds (ranges are checked after).

:func:`check` validates a parsed reply against a schema the way the judges read it: extra keys are
ignored (a server that adds fields has still answered), a missing key or a wrong type is a problem
(a rating ``"4"`` is a string, ``true`` is not an integer). Nothing here imports a model library.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..models.base import ResponseFormat

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
