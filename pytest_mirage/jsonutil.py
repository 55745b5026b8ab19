"""JSON read strictly: an object that repeats a key is an error naming the key.

``json.loads`` keeps the last of two equal keys silently, so ``{"temperature": 0, "temperature": 1}``
in ``extra=``, or ``{"verdict": "No", "verdict": "Yes"}`` in a judge's reply, would mean whatever
the last one says. Every JSON value the plugin reads from a user or a model goes through
:func:`loads_unique`.
"""

from __future__ import annotations

import json
from typing import Any


class DuplicateKeyError(ValueError):
    """A JSON object with the same key twice; ``key`` is the repeated key."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} is given twice in one JSON object; give it once")
        self.key = key


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(key)
        out[key] = value
    return out


def loads_unique(text: str | bytes) -> Any:
    """``json.loads`` that raises :class:`DuplicateKeyError` (a ``ValueError``) on a repeated key."""
    return json.loads(text, object_pairs_hook=_unique)
