"""MIRAGE-Bench export rows -> oracle-mode cases.

Rows: ``query_id``, ``prompt``, ``positive_ids``, ``negative_ids``, optionally ``language`` (or
``lang``) and ``answer`` (a string) or ``answers`` (a list). The question and the passages are
recovered from the prompt, which follows MIRAGE's Figure 10 template.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...text.langcodes import ISO639_1, ISO639_3_NAMES, check_lang
from ..cases import parse_case
from ..jsonl import iter_jsonl
from ..model import Case, Passage
from ..problems import Problems
from .spec import MirageExportSource, Where
from .text import sample, warn


def _lang_code(value: str) -> str | None:
    """A language code from a code or an English language name ('Hindi' -> 'hi')."""
    if check_lang(value) is None:
        return value
    names = {name.lower(): code for code, name in {**ISO639_1, **ISO639_3_NAMES}.items()}
    names.setdefault("farsi", "fa")
    return names.get(value.strip().lower())


_SECTION_RE = {name: re.compile(rf"(?m)^[ \t]*{name}:[ \t]*") for name in ("Question", "Contexts", "Instruction")}
_MARKER_RE = re.compile(r'(?m)^[ \t]*(?P<q>"?)\[(?P<id>[^\[\]\n]+)\](?P=q)[ \t]*')
_RESPOND_RE = re.compile(r"respond in (?P<lang>[A-Z][\w ()'-]*?) using the format")


@dataclass(frozen=True, slots=True)
class ParsedPrompt:
    """Question and passages recovered from a MIRAGE (Figure 10) prompt."""

    question: str
    passages: tuple[Passage, ...]
    language: str | None  # the language name the instruction asks for, when present


def parse_mirage_prompt(prompt: str, ids: Sequence[str]) -> ParsedPrompt:
    """Recover the question and passages from a MIRAGE-Bench prompt.

    The prompt follows MIRAGE's Figure 10 template::

        Question:
        <question>

        Contexts:
        "[<docid>]" <title> - <text>
        ...

        Instruction:
        ... Please respond in <Language> using the format: ##Reason: {reason} ##Answer: {answer}.

    A passage starts at a line that begins with one of ``ids`` in brackets, quoted (``"[id]"``) or
    not (``[id]``), and runs to the next passage; the title is the part before the first `` - ``.
    Raises ValueError naming what is missing.
    """
    text = prompt.replace("\r\n", "\n")
    q = _SECTION_RE["Question"].search(text)
    if q is None:
        raise ValueError("no 'Question:' line; expected the MIRAGE template (Question: / Contexts: / Instruction:)")
    c = _SECTION_RE["Contexts"].search(text, q.end())
    if c is None:
        raise ValueError("no 'Contexts:' line after the question; expected the MIRAGE template "
                         "(Question: / Contexts: / Instruction:)")
    i = _SECTION_RE["Instruction"].search(text, c.end())
    question = text[q.end():c.start()].strip()
    if not question:
        raise ValueError("the question under 'Question:' is empty")
    contexts = text[c.end():i.start() if i else len(text)]
    instruction = text[i.end():] if i else ""

    wanted = set(ids)
    starts: list[tuple[int, int, str]] = []  # (marker start, text start, id)
    seen: set[str] = set()
    for m in _MARKER_RE.finditer(contexts):
        pid = m.group("id").strip()
        if pid not in wanted:
            if m.group("q"):  # a quoted marker is a passage for sure: it must be listed
                raise ValueError(f'passage "[{pid}]" in the Contexts is in neither positive_ids nor negative_ids')
            continue  # an unquoted [..] at a line start inside a passage text
        if pid in seen:
            raise ValueError(f"passage [{pid}] appears twice in the Contexts")
        seen.add(pid)
        starts.append((m.start(), m.end(), pid))
    absent = [x for x in ids if x not in seen]
    if absent:
        raise ValueError(f"ids {sample(absent)} listed in positive_ids/negative_ids have no \"[id]\" passage line "
                         "in the Contexts")
    head = contexts[: starts[0][0]].strip() if starts else contexts.strip()
    if head:
        raise ValueError(f"text before the first passage in the Contexts: {head[:40]!r}; expected each passage "
                         "line to start with \"[docid]\"")
    passages: list[Passage] = []
    for n, (_, begin, pid) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(contexts)
        body = contexts[begin:end].strip()
        # "Title - text"; a body that ends in " -" is a title without text
        title, sep, rest = (body + " ").partition(" - ")
        if sep and "\n" not in title:
            ptitle, ptext = title.strip() or None, rest.strip()
        else:
            ptitle, ptext = None, body
        if not ptext:
            raise ValueError(f"passage [{pid}] has no text")
        passages.append(Passage(id=pid, text=ptext, title=ptitle))
    lm = _RESPOND_RE.search(instruction)
    return ParsedPrompt(question=question, passages=tuple(passages), language=lm.group("lang") if lm else None)


def _id_list(obj: Mapping[str, Any], key: str, where: str, problems: Problems) -> list[str] | None:
    val = obj.get(key)
    if not isinstance(val, list) or not all(isinstance(x, (str, int)) and not isinstance(x, bool) for x in val):
        problems.add(where, f"field '{key}': found {val!r:.60}; expected a list of passage ids")
        return None
    return [str(x) for x in val]


@dataclass(frozen=True, slots=True)
class _ExportRow:
    qid: str
    lang: str
    where: str
    question: str
    passages: tuple[Passage, ...]
    relevant: tuple[str, ...]
    answers: tuple[str, ...]


def export_cases(src: MirageExportSource, suite_name: str, where: Where, problems: Problems) -> tuple[Case, ...]:
    if not src.path.is_file():
        problems.add(where("path"), f"{src.path} does not exist; expected a MIRAGE-Bench export JSONL file "
                     "(rows with query_id, prompt, positive_ids, negative_ids)")
        return ()
    if src.path.name.endswith(".gz"):
        problems.add(where("path"), f"{src.path} is compressed; expected a plain JSONL file (gunzip it first)")
        return ()
    opened = None
    if src.confine is not None:  # checked again as read: the file may have become a symlink out
        opened = src.confine.check(src.path, "path", where("path"), problems)
        if opened is None:
            return ()
    rows: list[_ExportRow] = []
    other_langs: dict[str, int] = {}
    no_positive = 0
    for lineno, obj in iter_jsonl(src.path, problems, opened):
        if src.limit is not None and len(rows) >= src.limit:
            break
        here = f"{src.path}:{lineno}"
        n_before = problems.count
        qid = obj.get("query_id")
        if not isinstance(qid, (str, int)) or isinstance(qid, bool) or not str(qid).strip():
            problems.add(here, f"field 'query_id': found {qid!r:.40}; expected a non-empty string")
        prompt = obj.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            problems.add(here, f"field 'prompt': found {prompt!r:.40}; expected the MIRAGE prompt text")
        pos = _id_list(obj, "positive_ids", here, problems)
        neg = _id_list(obj, "negative_ids", here, problems)
        if pos is not None and neg is not None and (both := [x for x in pos if x in set(neg)]):
            problems.add(here, f"ids {sample(both)} are in both positive_ids and negative_ids")
        answers: list[str] = []
        if "answers" in obj:
            a = obj["answers"]
            if not isinstance(a, list) or not all(isinstance(x, str) for x in a):
                problems.add(here, f"field 'answers': found {a!r:.60}; expected a list of strings")
            else:
                answers = a
        elif "answer" in obj and obj["answer"] is not None:
            if not isinstance(obj["answer"], str):
                problems.add(here, f"field 'answer': found {obj['answer']!r:.60}; expected a string")
            else:
                answers = [obj["answer"]]
        if problems.count > n_before:
            continue
        assert isinstance(prompt, str) and pos is not None and neg is not None
        try:
            parsed = parse_mirage_prompt(prompt, pos + neg)
        except ValueError as exc:
            problems.add(here, f"field 'prompt': cannot recover the passages: {exc}")
            continue
        # the row's own language, else the one the prompt's instruction asks for, else ?lang=
        raw_lang = obj.get("language", obj.get("lang"))
        lang: str | None = None
        if raw_lang is not None:
            lang = _lang_code(raw_lang) if isinstance(raw_lang, str) else None
            if lang is None:
                problems.add(here, f"field 'language': found {raw_lang!r:.40}; expected a language code such as 'hi'")
                continue
        elif parsed.language is not None:
            lang = _lang_code(parsed.language)
        if lang is None:
            lang = src.lang
        if lang is None:
            asked = f"the prompt asks for {parsed.language!r}, which is not a known language name" \
                if parsed.language else "the row has no 'language' field and the prompt names none"
            problems.add(here, f"no language: {asked}; add ?lang=CODE (or lang = \"..\" in [source])")
            continue
        if src.lang is not None and lang != src.lang:
            other_langs[lang] = other_langs.get(lang, 0) + 1
            continue
        if not pos:
            no_positive += 1
            continue
        rows.append(_ExportRow(str(qid), lang, here, parsed.question, parsed.passages, tuple(pos),
                               tuple(answers)))
    if no_positive:
        warn(f"{src.path}: {no_positive} rows have no positive_ids (no relevant passage) and are skipped")
    if not rows and not problems.count and other_langs:
        found = ", ".join(f"{k} ({v})" for k, v in sorted(other_langs.items()))
        problems.add(where("lang"), f"lang={src.lang}: {src.path} has no rows in this language; it has: {found}")
    # one language: ids are the query ids; several: '<lang>-<query_id>' (MIRACL qids repeat across languages)
    several = len({r.lang for r in rows}) > 1
    cases: list[Case] = []
    seen: dict[str, str] = {}
    for r in rows:
        cid = f"{r.lang}-{r.qid}" if several else r.qid
        if cid in seen:
            problems.add(r.where, f"field 'query_id': duplicate {r.qid!r} (first at {seen[cid]}); ids must be unique")
            continue
        seen[cid] = r.where
        obj = {"id": cid, "lang": r.lang, "question": r.question,
               "passages": [{"id": p.id, "text": p.text, "title": p.title or ""} for p in r.passages],
               "relevant": list(r.relevant), "answers": list(r.answers)}
        case = parse_case(obj, r.where, suite_name, "oracle", None, problems)
        if case is not None:
            cases.append(case)
    return tuple(sorted(cases, key=lambda c: (c.lang, c.id)))

