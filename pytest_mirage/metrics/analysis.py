"""The text analysis the metrics share: every text is cleaned, normalised and tokenised once per case.

:func:`of` returns the :class:`AnswerAnalysis` of a sample (memoised on the sample, computed lazily:
a metric set that needs no tokens never tokenises). :func:`reference` returns the analysis of a
reference answer (memoised per text and language: the same references are scored for every model).
Metrics read these instead of calling the tokenizer, the normaliser or the cleaning code themselves,
so a full metric pass analyses each text once, whatever the number of metrics that read it.

The n-gram statistics are integers; the float formulas that turn them into BLEU and chrF are
sacrebleu's own (``BLEU._compute_score_from_stats``, ``CHRF._compute_f_score``), so the values are
those of sacrebleu's ``sentence_score`` on the same input, bit for bit (tested).
"""

from __future__ import annotations

import sys
import unicodedata
from collections import Counter
from collections.abc import Sequence
from functools import cache, cached_property, lru_cache
from typing import Any

import numpy as np
import regex  # type: ignore[import-untyped]

from ..prompts import parse_output, strip_citations
from ..text.tokenize import UNIT_CLASS, _tokens, normalize
from .base import Sample

BLEU_ORDER = 4  # sacrebleu's default max n-gram order
CHRF_ORDER = 6  # sacrebleu's default character order (chrF, beta 2, no word n-grams)


# ---------------------------------------------------------------- n-gram statistics


def word_ngrams(tokens: Sequence[str], max_order: int = BLEU_ORDER) -> list[Counter[tuple[str, ...]]]:
    """Counts of the 1..``max_order``-grams of ``tokens``, one Counter per order."""
    out: list[Counter[tuple[str, ...]]] = [Counter(zip(tokens))]  # 1-grams as 1-tuples
    for n in range(2, max_order + 1):
        out.append(Counter(zip(*(tokens[i:] for i in range(n)), strict=False)))
    return out


def char_ngrams(text: str, max_order: int = CHRF_ORDER) -> list[Counter[str]]:
    """Counts of the character 1..``max_order``-grams of ``text`` without its whitespace (as
    sacrebleu's chrF reads it), one Counter per order."""
    line = "".join(text.split())
    out: list[Counter[str]] = [Counter(line)]
    grams = list(line)
    for n in range(2, max_order + 1):  # the n-grams: each (n-1)-gram extended by the next character
        grams = list(map(str.__add__, grams, line[n - 1:]))
        out.append(Counter(grams))
    return out


def char_ngram_stats(hyp: str, ref: str, max_order: int = CHRF_ORDER) -> list[int]:
    """sacrebleu's chrF statistics ``[hyp count, ref count, matches]`` for each order 1..``max_order``
    of two lines without whitespace (the hyp count is 0 when the reference has no n-gram of that
    order): the integers of :func:`char_ngrams` and :func:`matches`, counted in numpy.

    Each character of the pair gets an id 1..k; an n-gram's key is its ids read as the digits of a
    base-(k+1) number. Keys are exact (no hashing): two n-grams have the same key iff they are the
    same string; and the digits being >= 1, an n-gram's key lies in [((k+1)^n - 1)/k, (k+1)^n - 1],
    so the sorted keys of all orders are one block per order, in order, of ``max(0, len - n + 1)``
    keys. The c-th copy of a key among the hypothesis' sorted keys is matched iff the reference
    has more than c copies of it, so an order's matched keys number ``sum(min(hyp count, ref
    count))`` over its n-grams, as in :func:`matches`. A pair with too many distinct characters for
    64-bit keys is counted by :func:`char_ngrams` and :func:`matches`.
    """
    lh, lr = len(hyp), len(ref)
    chars = set(hyp).union(ref)
    base = len(chars) + 1
    if base ** max_order >= 2 ** 63:  # keys would overflow int64
        return [v for h, r in zip(char_ngrams(hyp, max_order), char_ngrams(ref, max_order), strict=True)
                for v in (h.total() if r else 0, r.total(), matches(h, r))]
    # the pair's characters as their ids 1..k (any numbering of them gives the same counts)
    ids = dict(zip(map(ord, chars), range(1, base), strict=True))
    digits = np.frombuffer((hyp + ref).translate(ids).encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    hk, rk = _ngram_keys(digits[:lh], base, max_order), _ngram_keys(digits[lh:], base, max_order)
    hk.sort()
    rk.sort()
    # the c-th copy of a key in hk is matched iff rk[(first index of the key in rk) + c] is that key
    # (c = index in hk - first index of the key in hk); rk + a 0 (no key) for indexes past its end
    at = np.searchsorted(rk, hk) + (np.arange(hk.size) - np.searchsorted(hk, hk))
    np.minimum(at, rk.size, out=at)
    matched = np.cumsum(np.append(rk, 0)[at] == hk).tolist()  # matched keys up to each index
    stats: list[int] = []
    end = before = 0
    for n in range(1, max_order + 1):  # order n: the next max(0, len - n + 1) keys of hk
        nh, nr = max(0, lh - n + 1), max(0, lr - n + 1)
        end += nh
        upto = matched[end - 1] if end else 0
        stats += [nh if nr else 0, nr, upto - before]
        before = upto
    return stats


def _ngram_keys(digits: Any, base: int, max_order: int) -> Any:
    # the keys of the 1..max_order-grams, order by order: an n-gram's key is its (n-1)-gram prefix's
    # times base plus its last digit (len - n + 1 of them; none when the line is shorter than n)
    keys = [digits]
    cur = digits
    for n in range(2, max_order + 1):
        cur = cur[:-1] * base + digits[n - 1:]
        keys.append(cur)
    return np.concatenate(keys)


def matches(hyp: Counter[str] | Counter[tuple[str, ...]], ref: Counter[str] | Counter[tuple[str, ...]]) -> int:
    """Clipped n-gram matches: the size of the multiset intersection of ``hyp`` and ``ref``."""
    if len(ref) < len(hyp):
        hyp, ref = ref, hyp
    get = ref.get
    total = 0
    for gram, count in hyp.items():
        other = get(gram)  # type: ignore[arg-type]
        if other:
            total += count if count < other else other
    return total


# ---------------------------------------------------------------- character 3-grams (QTT-RAG)

_SEGMENT_RE = regex.compile(rf"(?P<ns>[{UNIT_CLASS}][{UNIT_CLASS}\p{{M}}]*)|(?P<other>[^{UNIT_CLASS}]+)")
_UNIT_RE = regex.compile(rf"[{UNIT_CLASS}]\p{{M}}*")
_ANY_UNIT_RE = regex.compile(rf"[{UNIT_CLASS}]")


@cache
def _punct_table() -> dict[int, None]:
    # unicodedata's categories (not the regex module's, whose Unicode version may be newer)
    return dict.fromkeys(cp for cp in range(sys.maxunicode + 1) if unicodedata.category(chr(cp))[0] in "PS")


def char3_grams(text: str, lang: str, *, hypothesis: bool = False, variant: bool = True) -> Counter[str]:
    """Character 3-grams of ``text`` as QTT-RAG counts them (see
    :func:`pytest_mirage.metrics.overlap.char3_grams` for the definition)."""
    return _char3_of(normalize(text, lang), hypothesis=hypothesis, variant=variant)


def _char3_of(normalized: str, *, hypothesis: bool, variant: bool) -> Counter[str]:
    # every gram goes into one list, counted once at the end (the same multiset as one Counter
    # updated per segment); a string's 3-grams as slices, a unit list's joined
    cleaned = normalized.translate(_punct_table())
    grams: list[str] = []
    if not variant or not _ANY_UNIT_RE.search(cleaned):
        # no unit script (the variant changes nothing): each word is one run of characters, a word
        # shorter than 3 one gram
        for word in cleaned.split():
            if len(word) < 3:
                grams.append(word)
            else:
                grams += [word[i:i + 3] for i in range(len(word) - 2)]
        return Counter(grams)
    for word in cleaned.split():
        for m in _SEGMENT_RE.finditer(word):
            if m.lastgroup == "other":
                run = m.group()
                if len(run) < 3:
                    grams.append(run)
                else:
                    grams += [run[i:i + 3] for i in range(len(run) - 2)]
                continue
            units = _UNIT_RE.findall(m.group())
            if len(units) < 3:
                grams.append("".join(units))
            else:
                grams += map("".join, zip(units, units[1:], units[2:], strict=False))
            if hypothesis and len(units) > 1:
                grams += units
                if len(units) > 2:
                    grams += map(str.__add__, units, units[1:])
    return Counter(grams)


# ---------------------------------------------------------------- analyses


class TextAnalysis:
    """What the overlap metrics read from one text in one language; each part computed on first use."""

    def __init__(self, text: str, lang: str, *, hypothesis: bool) -> None:
        self.text, self.lang, self.hypothesis = text, lang, hypothesis

    @cached_property
    def tokens(self) -> tuple[str, ...]:
        return _tokens(self.text, self.lang)

    @cached_property
    def token_counts(self) -> Counter[str]:
        return Counter(self.tokens)

    @cached_property
    def word_ngrams(self) -> list[Counter[tuple[str, ...]]]:
        """BLEU: orders 1..4 over :attr:`tokens`."""
        return word_ngrams(self.tokens)

    @cached_property
    def normalized(self) -> str:
        """The normalised text, read by chrF and the character 3-grams (normalised once)."""
        return normalize(self.text, self.lang)

    @cached_property
    def chars(self) -> str:
        """:attr:`normalized` without whitespace (the line chrF reads)."""
        return "".join(self.normalized.split())

    @cached_property
    def char3(self) -> Counter[str]:
        """QTT-RAG character 3-grams (with the hypothesis' 1- and 2-unit grams for an answer)."""
        return _char3_of(self.normalized, hypothesis=self.hypothesis, variant=True)


@lru_cache(maxsize=4096)
def reference(text: str, lang: str) -> TextAnalysis:
    """The analysis of a reference answer (cached: every model is scored against the same ones)."""
    return TextAnalysis(text, lang, hypothesis=False)


class AnswerAnalysis:
    """The analysis of one sample's answer; every part is computed on first use and kept."""

    def __init__(self, sample: Sample) -> None:
        self.sample = sample
        self.extra: dict[str, Any] = {}  # what other modules derive from the answer (sentence support)

    @cached_property
    def raw(self) -> str:
        """The answer part of the output (``##Answer:`` section when the model used the format)."""
        a = self.sample.answer
        return a.answer if a.answer is not None else parse_output(a.output, ()).answer

    @cached_property
    def text(self) -> str:
        """:attr:`raw` without citation markers."""
        return strip_citations(self.raw).strip()

    @cached_property
    def overlap(self) -> TextAnalysis:
        return TextAnalysis(self.text, self.sample.case.lang, hypothesis=True)



def of(sample: Sample) -> AnswerAnalysis:
    """The (memoised) analysis of ``sample``'s answer."""
    memo = sample._memo
    a = memo.get("analysis")
    if a is None:
        a = memo["analysis"] = AnswerAnalysis(sample)
    return a


# per-text caches of other metric modules (they register here; this module imports none of them)
PER_TEXT_CACHES: list[Any] = []


def clear_caches() -> None:
    """Forget every per-text cache of the metrics (benchmarks: real cases do not repeat texts)."""
    from ..text import langid, tokenize

    reference.cache_clear()
    tokenize._tokens.cache_clear()
    tokenize.normalize.cache_clear()
    for fn in (*PER_TEXT_CACHES, langid.distribution, langid.analyse, langid.assess):
        fn.cache_clear()
