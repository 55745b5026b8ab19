"""Prompt templates (files under ``templates/``) and model-output parsing."""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..suites.model import Case, Passage
from ..text.langcodes import language_name

PLACEHOLDERS = ("question", "contexts", "language")
MAX_PASSAGE_CHARS = 4000  # MIRAGE trims passages to 800 tokens; ~4000 characters is its equivalent
TEMPLATE_VERSION = "1"


def builtin_templates() -> list[str]:
    return sorted(p.name[:-4] for p in resources.files(__package__).joinpath("templates").iterdir()
                  if p.name.endswith(".txt"))


def load_template(name: str, suite_root: Path | None = None) -> str:
    if name in builtin_templates():
        return resources.files(__package__).joinpath("templates", f"{name}.txt").read_text(encoding="utf-8")
    assert suite_root is not None
    return (suite_root / name).read_text(encoding="utf-8")


def order_passages(case: Case, passages: Sequence[Passage] | None = None) -> list[Passage]:
    """MIRAGE shuffles the oracle passages; we shuffle with a seed derived from the case id so the
    prompt (and therefore the cache key) is identical on every run and every xdist worker."""
    ps = list(case.passages if passages is None else passages)
    seed = int.from_bytes(hashlib.sha256(f"{case.suite}/{case.id}".encode()).digest()[:8], "big")
    random.Random(seed).shuffle(ps)
    return ps


def format_contexts(passages: Sequence[Passage]) -> str:
    lines = []
    for p in passages:
        text = p.text if len(p.text) <= MAX_PASSAGE_CHARS else p.text[:MAX_PASSAGE_CHARS] + " ..."
        head = f'"[{p.id}]" ' + (f"{p.title} - " if p.title else "")
        lines.append(head + text)
    return "\n".join(lines)


def render(template: str, case: Case, passages: Sequence[Passage]) -> str:
    values = {"question": case.question, "contexts": format_contexts(passages),
              "language": language_name(case.lang)}
    out = template
    for key, val in values.items():
        out = out.replace("{{" + key + "}}", val)
    return out


# ---------------------------------------------------------------- output parsing

_REASON_RE = re.compile(r"#{1,3}\s*Reason\s*:?", re.I)
_ANSWER_RE = re.compile(r"#{1,3}\s*Answer\s*:?", re.I)
_BRACKET_RE = re.compile(r"\[([^\[\]\n]{1,400})\]")
_SPLIT_RE = re.compile(r"\s*[,;，、،；]\s*")
# full-width brackets (CJK input methods) are read as ASCII brackets
_BRACKETS = str.maketrans({"［": "[", "］": "]"})


@dataclass(frozen=True, slots=True)
class ParsedOutput:
    reason: str | None
    answer: str  # the ##Answer part, or the whole text when the format was not followed
    citations: tuple[str, ...]  # known passage ids in order of first appearance (whole output)
    unknown_citations: tuple[str, ...]  # cited tokens that name no passage
    format_ok: bool


def find_citations(text: str, passage_ids: Sequence[str],
                   other_ids: Collection[str] = ()) -> tuple[list[str], list[str]]:
    """Cited passage ids in order of first appearance, and unknown cited tokens.

    Accepts ``[id]``, ``[id1, id2]`` and ``[1]``-style 1-based indices into ``passage_ids`` (the
    passages the prompt listed). ``other_ids`` are further ids a model may cite by name (e.g. corpus
    chunks in retrieval mode) but never by index. A token that matches an id exactly is that id, even
    when it is a number.
    """
    text = text.translate(_BRACKETS)
    listed = set(passage_ids)  # other_ids (a corpus) can be large: looked up, never copied
    cited: dict[str, None] = {}
    unknown: dict[str, None] = {}
    for m in _BRACKET_RE.finditer(text):
        for tok in _SPLIT_RE.split(m.group(1).strip()):
            tok = tok.strip().strip("\"'")
            if not tok:
                continue
            if tok in listed or tok in other_ids:
                cited.setdefault(tok, None)
            elif tok.isdigit() and 1 <= int(tok) <= len(passage_ids):
                cited.setdefault(passage_ids[int(tok) - 1], None)
            elif _looks_like_citation(tok):
                unknown.setdefault(tok, None)
    return list(cited), list(unknown)


def _looks_like_citation(tok: str) -> bool:
    # ids are short and have no inner spaces; "[citation needed]"-style prose is not a citation
    return len(tok) <= 64 and " " not in tok


# a run of citation markers with the blanks before and between them; what follows decides what the
# blanks become (see strip_citations)
_MARKER_RUN_RE = re.compile(r"[ \t]*\[[^\[\]\n]{1,400}\](?:[ \t]*\[[^\[\]\n]{1,400}\])*")
# after a marker, these close the sentence or clause: the blanks the marker left before them go
_CLOSING = frozenset(".,;:!?。、)")


def _marker_gap(m: re.Match[str]) -> str:
    text, end = m.string, m.end()
    nxt = text[end] if end < len(text) else "\n"
    if nxt in _CLOSING or nxt.isspace():
        return ""  # "Paris [a]." -> "Paris."; "Paris [a] is" -> "Paris is" (the blank after stays)
    # a word follows: keep one blank if there was one before the marker ("Paris [a]is" -> "Paris is"),
    # none if there was none (Chinese and Japanese: "東京[a]です" -> "東京です")
    return " " if m.group()[:1] in " \t" else ""


def strip_citations(text: str) -> str:
    """Remove ``[...]`` citation markers (for language ID and lexical metrics).

    Only the blanks a marker leaves behind are removed: those before a marker that ends a clause
    (``Paris [a].`` -> ``Paris.``) or that stands before a blank; every other character of the text
    is kept, so a space the writer put before ``?`` (``Siapa dia ?``, French ``Qui ?``) stays.
    Linear in the text length."""
    return _MARKER_RUN_RE.sub(_marker_gap, text.translate(_BRACKETS))


def parse_output(text: str, passage_ids: Sequence[str], other_ids: Collection[str] = ()) -> ParsedOutput:
    """Parse the MIRAGE ``##Reason: ... ##Answer: ...`` format and its citations."""
    a = list(_ANSWER_RE.finditer(text))
    r = _REASON_RE.search(text)
    if a:
        last = a[-1]
        answer = text[last.end():].strip()
        reason = text[r.end():last.start()].strip() if r and r.start() < last.start() else None
        format_ok = True
    else:
        answer = text.strip()
        reason = None
        format_ok = False
    cited, unknown = find_citations(text, passage_ids, other_ids)
    return ParsedOutput(reason=reason, answer=answer, citations=tuple(cited),
                        unknown_citations=tuple(unknown), format_ok=format_ok)
