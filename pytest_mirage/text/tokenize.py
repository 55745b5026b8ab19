"""Per-language tokenization used by every lexical metric and by BM25 retrieval.

Space-delimited scripts: lowercase word tokens (Unicode ``\\w`` runs, combining marks kept).
Scripts written without spaces (ja, zh, th, km, lo, my): character-level tokens over the
letters of the text (punctuation and spaces dropped), a documented scheme that never drops a script.
"""

from __future__ import annotations

import re
import unicodedata

NO_SPACE_LANGS = frozenset({"ja", "zh", "th", "km", "lo", "my", "bo", "yue"})
_WORD_RE = re.compile(r"[\w\u0300-\u036f\u0900-\u0dff\u0e00-\u0eff\u1780-\u17ff\u0600-\u06ff\u0c00-\u0c7f]+", re.U)


def normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def is_letter(ch: str) -> bool:
    cat = unicodedata.category(ch)
    return cat[0] in "LMN"


def tokenize(text: str, lang: str) -> list[str]:
    """Tokens of ``text`` for language ``lang`` (lowercased, NFKC-normalized)."""
    text = normalize(text)
    if lang in NO_SPACE_LANGS:
        return [ch for ch in text if is_letter(ch)]
    return _WORD_RE.findall(text)
