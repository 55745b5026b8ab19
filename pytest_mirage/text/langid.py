"""Language identification: probability that a text is in a given language."""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def _identifier() -> Any:
    from langid.langid import LanguageIdentifier, model

    return LanguageIdentifier.from_modelstring(model, norm_probs=True)


def language_probability(text: str, lang: str) -> float:
    """P(lang | text) under langid's normalized probabilities."""
    return float(dict(_identifier().rank(text)).get(lang, 0.0))
