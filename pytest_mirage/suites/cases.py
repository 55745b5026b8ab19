"""Case lines and corpus lines: validated once, here, into frozen :class:`Case` and :class:`Passage`.

Every problem is recorded as ``path:line: field: found ...; expected ...``.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import did_you_mean
from ..text.langcodes import check_lang
from .checks import id_problem, is_plain_id
from .jsonl import iter_jsonl
from .model import Case, Mode, Passage
from .problems import Problems

CASE_KEYS = ("id", "lang", "question", "passages", "relevant", "answers", "meta")
PASSAGE_KEYS = ("id", "text", "title", "doc", "lang")
CORPUS_KEYS = ("id", "doc", "text", "title", "lang")
_KEY_SETS = {keys: frozenset(keys) for keys in (CASE_KEYS, PASSAGE_KEYS, CORPUS_KEYS)}

# A character for which str.isalnum() is true: \w is exactly isalnum() or "_" (both use the same
# Unicode alphabetic/numeric tables; tests/unit/test_fastpath_suite_loading.py checks every code point).
_ALNUM = re.compile(r"[^\W_]")

# Fast paths. Loading a suite validates every case line and passage; on a valid line the detailed
# checks below (one function call per field, each recording its problem) cost most of the load time.
# ``_quick_passage`` and ``_quick_case`` test the same conditions in bulk and build the same object,
# or return None as soon as anything is unusual; the detailed checks then run on that line as before,
# so every message still comes from them. Each condition of a fast path is one of the detailed path's
# conditions for "no problem recorded" (or a stricter one), which the comments name.


def unknown_keys(obj: Mapping[str, Any], known: Sequence[str], label: str, where: str, problems: Problems) -> bool:
    """Record each key of ``obj`` that is not in ``known`` (with a did-you-mean); True when there were any."""
    unknown = [k for k in obj if k not in known]
    for key in unknown:
        problems.add(where, f"{label}unknown key {key!r:.60}; known keys: {', '.join(known)}.{did_you_mean(key, known)}"
                     .rstrip("."))
    return bool(unknown)


def str_field(obj: Mapping[str, Any], key: str, where: str, problems: Problems, *, label: str = "",
              required: bool = True, nonempty: bool = True) -> str | None:
    """A string field; problems (missing, wrong type, empty) are recorded and None returned."""
    if key not in obj:
        if required:
            problems.add(where, f"{label}field '{key}' is missing; expected a string")
        return None
    val = obj[key]
    if not isinstance(val, str):
        problems.add(where, f"{label}field '{key}': found {type(val).__name__} {val!r:.60}, expected a string")
        return None
    if nonempty and not val.strip():
        problems.add(where, f"{label}field '{key}' is empty; expected a non-empty string")
        return None
    return val


def id_field(obj: Mapping[str, Any], key: str, where: str, problems: Problems, *, label: str = "",
             citable: bool, required: bool = True) -> str | None:
    """A string field holding an id (see :func:`checks.id_problem`)."""
    val = str_field(obj, key, where, problems, label=label, required=required)
    if val is None:
        return None
    if (err := id_problem(val, citable=citable)) is not None:
        problems.add(where, f"{label}field '{key}': {err}")
        return None
    return val


def _quick_passage(obj: Any, known: frozenset[str]) -> Passage | None:
    """The passage :func:`parse_passage` returns for a plainly valid ``obj`` with keys in ``known``, else None."""
    if not isinstance(obj, dict) or not obj.keys() <= known:  # not an object; unknown_keys
        return None
    pid = obj.get("id")
    text = obj.get("text")
    # id_field(citable=True) and str_field: present, a string, not blank, id_problem() is None
    if not isinstance(pid, str) or not pid.strip() or not is_plain_id(pid, citable=True):
        return None
    if not isinstance(text, str) or not text.strip():
        return None
    if "title" in obj and not isinstance(obj["title"], str):  # optional string, may be empty (null is not)
        return None
    title = obj.get("title")
    # id_field(citable=False, required=False): absent, or a non-blank string with id_problem() None
    if "doc" in obj and not (isinstance(obj["doc"], str) and obj["doc"].strip()
                             and is_plain_id(obj["doc"], citable=False)):
        return None
    doc = obj.get("doc")
    lang = obj.get("lang")  # null or absent: no language; else check_lang()
    if lang is not None and check_lang(lang) is not None:
        return None
    return Passage(id=pid, text=text, title=title or None, doc=doc, lang=lang)


def parse_passage(obj: Any, where: str, label: str, problems: Problems, keys: Sequence[str]) -> Passage | None:
    """A passage object of a case (``keys`` = PASSAGE_KEYS) or a corpus line (CORPUS_KEYS)."""
    known = _KEY_SETS.get(keys) if isinstance(keys, tuple) else None
    if known is not None and (quick := _quick_passage(obj, known)) is not None:
        return quick
    if not isinstance(obj, dict):
        problems.add(where, f"{label}: found {type(obj).__name__}, expected an object {{id, text, title?}}")
        return None
    n_before = problems.count
    prefix = f"{label} " if label else ""
    unknown_keys(obj, keys, prefix, where, problems)
    pid = id_field(obj, "id", where, problems, label=prefix, citable=True)
    text = str_field(obj, "text", where, problems, label=prefix)
    title = str_field(obj, "title", where, problems, label=prefix, required=False, nonempty=False)
    doc = id_field(obj, "doc", where, problems, label=prefix, citable=False, required=False)
    lang = obj.get("lang")
    if lang is not None and (err := check_lang(lang)):
        problems.add(where, f"{prefix}field 'lang': {err}")
    if problems.count > n_before or pid is None or text is None:
        return None
    return Passage(id=pid, text=text, title=title or None, doc=doc, lang=lang)


def load_corpus(paths: Sequence[Path], problems: Problems, rejected: set[str] | None = None) -> tuple[Passage, ...]:
    """Corpus lines ``{id, doc, text, title?, lang?}`` of retrieval-mode suites.

    The ids of lines reported as invalid are added to ``rejected``.
    """
    chunks: list[Passage] = []
    seen: dict[str, str] = {}
    for path in paths:
        for lineno, obj in iter_jsonl(path, problems):
            where = f"{path}:{lineno}"
            if "doc" not in obj:
                problems.add(where, "field 'doc' is missing; expected the id of the source document of this chunk")
            p = parse_passage(obj, where, "", problems, CORPUS_KEYS)
            if p is None:
                if rejected is not None and isinstance(obj.get("id"), str):
                    rejected.add(obj["id"])
                continue
            if p.id in seen:
                problems.add(where, f"field 'id': duplicate chunk id {p.id!r} (first at {seen[p.id]}); chunk ids "
                             "must be unique")
                continue
            seen[p.id] = where
            chunks.append(p)
    return tuple(chunks)


def _relevant(obj: Mapping[str, Any], passages: Sequence[Passage], mode: Mode,
              corpus: Mapping[str, Passage] | None, where: str, problems: Problems,
              reported: Collection[str] = ()) -> list[str]:
    relevant = obj.get("relevant")
    if relevant is None:
        problems.add(where, "field 'relevant' is missing; expected a list of passage/chunk ids judged relevant")
        return []
    if not isinstance(relevant, list) or not all(isinstance(r, str) for r in relevant):
        problems.add(where, f"field 'relevant': found {relevant!r:.80}, expected a list of id strings")
        return []
    if not relevant:
        problems.add(where, "field 'relevant' is empty; citation and retrieval metrics need at least one "
                     "relevant passage id (they would be null for this case in every run)")
        return []
    known = {p.id for p in passages}
    in_corpus = corpus if mode == "retrieval" and corpus is not None else {}
    # ids of passages or chunks already reported as invalid are not reported again here
    missing = [r for r in relevant if r not in known and r not in in_corpus and r not in reported]
    if missing:
        where_ids = "the case's passages" if mode == "oracle" else "the suite corpus"
        shown = [r if len(r) <= 60 else r[:60] + "..." for r in missing[:10]]
        problems.add(where, f"field 'relevant': ids {shown} are not among {where_ids}")
    dup = sorted({r for r in relevant if relevant.count(r) > 1})
    if dup:
        problems.add(where, f"field 'relevant': duplicate ids {dup}")
    return relevant


def _make_case(suite_name: str, cid: str, lang: str, question: str, passages: Sequence[Passage],
               relevant: Sequence[str], answers: Sequence[str], meta: Any, where: str,
               corpus: Mapping[str, Passage] | None) -> Case:
    """The Case of a validated case line (both paths of :func:`parse_case` build it here)."""
    own = {p.id: p for p in passages}
    # a case's own passage wins over a corpus chunk of the same id (not a merged copy of the corpus
    # for each case: that made loading a retrieval suite quadratic)
    found = (own[r] if r in own else corpus.get(r) if corpus else None for r in relevant)
    rel_docs = tuple(dict.fromkeys(p.doc_id for p in found if p is not None))
    return Case(suite=suite_name, id=cid, lang=lang, question=question, passages=tuple(passages),
                relevant=tuple(relevant), answers=tuple(a for a in answers if a.strip()), meta=meta,
                source=where, relevant_docs=rel_docs)


def _quick_case(obj: dict[str, Any], where: str, suite_name: str, mode: Mode,
                corpus: Mapping[str, Passage] | None) -> Case | None:
    """The Case :func:`parse_case` returns for a plainly valid case line, else None."""
    if not obj.keys() <= _KEY_SETS[CASE_KEYS]:  # unknown_keys
        return None
    cid = obj.get("id")
    lang = obj.get("lang")
    question = obj.get("question")
    # id_field(citable=False): a non-blank string, id_problem() None; and no "::"
    if not isinstance(cid, str) or not cid.strip() or not is_plain_id(cid) or "::" in cid:
        return None
    if not isinstance(lang, str) or not lang.strip() or check_lang(lang) is not None:
        return None
    if not isinstance(question, str) or not question.strip():
        return None
    raw_p = obj.get("passages", [] if mode == "retrieval" else None)
    if not isinstance(raw_p, list) or (mode == "oracle" and not raw_p):  # a list; oracle: not empty
        return None
    passages: list[Passage] = []
    for po in raw_p:
        if (p := _quick_passage(po, _KEY_SETS[PASSAGE_KEYS])) is None:
            return None
        passages.append(p)
    known = {p.id for p in passages}
    if len(known) < len(passages):  # duplicate passage id within the case
        return None
    # _relevant: a non-empty list of strings, no duplicates, each among the passages or (retrieval) the
    # corpus (the detailed path also lets pass an id of a rejected chunk: not here, it is reported there)
    relevant = obj.get("relevant")
    if not isinstance(relevant, list) or not relevant or not all(isinstance(r, str) for r in relevant):
        return None
    in_corpus = corpus if mode == "retrieval" and corpus is not None else {}
    if not all(r in known or r in in_corpus for r in relevant) or len(set(relevant)) < len(relevant):
        return None
    answers = obj.get("answers", [])  # a list of strings, each with a letter or digit (_ALNUM)
    if not isinstance(answers, list) or not all(isinstance(a, str) and _ALNUM.search(a) for a in answers):
        return None
    meta = obj.get("meta", {})
    if not isinstance(meta, dict):
        return None
    return _make_case(suite_name, cid, lang, question, passages, relevant, answers, meta, where, corpus)


def parse_case(obj: dict[str, Any], where: str, suite_name: str, mode: Mode,
               corpus: Mapping[str, Passage] | None, problems: Problems,
               rejected_chunks: Collection[str] = ()) -> Case | None:
    """Validate one case line; returns None (and records problems) when it is unusable.

    ``rejected_chunks``: ids of corpus lines that were reported as invalid (a case naming one of them
    as relevant is not reported again).
    """
    if (quick := _quick_case(obj, where, suite_name, mode, corpus)) is not None:
        return quick
    n_before = problems.count
    unknown_keys(obj, CASE_KEYS, "", where, problems)
    cid = id_field(obj, "id", where, problems, citable=False)
    if cid is not None and "::" in cid:
        problems.add(where, f"field 'id': {cid!r} contains '::', which separates the parts of pytest node ids")
    lang = str_field(obj, "lang", where, problems)
    if lang is not None and (err := check_lang(lang)):
        problems.add(where, f"field 'lang': {err}")
    question = str_field(obj, "question", where, problems)

    passages: list[Passage] = []
    reported: set[str] = set(rejected_chunks)
    raw_p = obj.get("passages", [] if mode == "retrieval" else None)
    if raw_p is None:
        problems.add(where, "field 'passages' is missing; expected a list of {id, text, title?} (the oracle context)")
    elif not isinstance(raw_p, list):
        problems.add(where, f"field 'passages': found {type(raw_p).__name__}, expected a list of objects")
    else:
        ids: set[str] = set()
        for i, po in enumerate(raw_p):
            p = parse_passage(po, where, f"passages[{i}]", problems, PASSAGE_KEYS)
            if p is None:
                if isinstance(po, dict) and isinstance(po.get("id"), str):
                    reported.add(po["id"])
                elif isinstance(po, str):
                    reported.add(po)
                continue
            if p.id in ids:
                problems.add(where, f"passages[{i}]: duplicate passage id {p.id!r} within the case")
            ids.add(p.id)
            passages.append(p)
        if mode == "oracle" and not raw_p:
            problems.add(where, "field 'passages' is empty; oracle-mode cases need the context passages")

    if mode == "oracle" and not isinstance(raw_p, list):
        relevant = []  # nothing to check them against; the passages problem is reported
    else:
        relevant = _relevant(obj, passages, mode, corpus, where, problems, reported)
    answers = obj.get("answers", [])
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        problems.add(where, f"field 'answers': found {answers!r:.80}, expected a list of strings (may be empty)")
        answers = []
    for i, a in enumerate(answers):
        if not any(ch.isalnum() for ch in a):
            problems.add(where, f"field 'answers'[{i}]: found {a!r:.60}; a reference answer needs letters or digits "
                         "(leave the list empty when there is no reference answer)")
    meta = obj.get("meta", {})
    if not isinstance(meta, dict):
        problems.add(where, f"field 'meta': found {type(meta).__name__}, expected an object")
    if problems.count > n_before or cid is None or lang is None or question is None:
        return None
    return _make_case(suite_name, cid, lang, question, passages, relevant, answers, meta, where, corpus)


def load_cases(paths: Sequence[Path], suite_name: str, mode: Mode, corpus: tuple[Passage, ...] | None,
               problems: Problems, rejected_chunks: Collection[str] = ()) -> tuple[Case, ...]:
    """Case lines of the suite's case files, sorted by (language, id)."""
    corpus_ids = {p.id: p for p in corpus} if corpus else None
    cases: list[Case] = []
    seen: dict[str, str] = {}
    for path in paths:
        for lineno, obj in iter_jsonl(path, problems):
            where = f"{path}:{lineno}"
            case = parse_case(obj, where, suite_name, mode, corpus_ids, problems, rejected_chunks)
            if case is None:
                continue
            if case.id in seen:
                problems.add(where, f"field 'id': duplicate case id {case.id!r} (first at {seen[case.id]}); ids "
                             "must be unique in the suite")
                continue
            seen[case.id] = where
            cases.append(case)
    return tuple(sorted(cases, key=lambda c: (c.lang, c.id)))
