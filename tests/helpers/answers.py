"""Scripted model replies for tests against the local OpenAI-compatible server."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any


def rag_answer(body: Mapping[str, Any]) -> str:
    """Cite the first passage of the prompt and copy its first sentence."""
    prompt = body["messages"][-1]["content"]
    m = re.search(r'"\[([^\]]+)\]" (?:[^\n]*? - )?([^\n]+)', prompt)
    assert m, prompt[:200]
    first = re.split(r"(?<=[.。।])\s*", m.group(2))[0]
    return f"##Reason: {first} [{m.group(1)}]\n##Answer: {first} [{m.group(1)}]"
