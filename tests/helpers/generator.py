"""A ``py:`` generator for generate-suite tests: it records the prompts it is asked."""

from __future__ import annotations

PROMPTS: list[tuple[str | None, str]] = []  # (lang, prompt) of every call, in order


def first_sentence(prompt: str, lang: str | None) -> str:
    """The question is the passage's first sentence asked back; the answer is that sentence."""
    from pytest_mirage.text.tokenize import split_sentences

    PROMPTS.append((lang, prompt))
    passage = prompt.rsplit("Document: ", 1)[1].rsplit("\n", 1)[0]
    first = split_sentences(passage, lang or "en")[0]
    return first.rstrip("។.") + "?" if prompt.endswith("Query:") else first
