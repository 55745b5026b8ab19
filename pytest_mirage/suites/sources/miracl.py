"""MIRACL topics, qrels and corpus files -> oracle-mode cases (as in MIRAGE-Bench).

One case per topic; the oracle passages of a query are its judged passages (relevant and
non-relevant, in qrels order), ``relevant`` are those with a grade > 0, ``answers`` is empty (MIRACL
has no reference answers). Queries without a relevant passage are skipped (with a warning).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..cases import parse_case
from ..jsonl import decode_line
from ..model import Case, Passage
from ..problems import Problems
from .spec import MIRACL_VERSION, MiraclSource, Where
from .text import decode, iter_lines, sample, warn


@dataclass(frozen=True, slots=True)
class Topic:
    """One MIRACL topic line."""

    qid: str
    query: str
    line: int


@dataclass(frozen=True, slots=True)
class Judgment:
    """One qrels line: ``qid Q0 docid rel``."""

    qid: str
    docid: str
    rel: int
    line: int



def miracl_file(directory: Path, what: Literal["topics", "qrels"], lang: str, split: str) -> Path | None:
    """The topics/qrels file of a language and split: ``DIR/<name>``, ``DIR/<what>/<name>`` or
    ``DIR/miracl-v1.0-<lang>/<what>/<name>`` (the layout of the public release)."""
    name = f"{what}.miracl-{MIRACL_VERSION}-{lang}-{split}.tsv"
    for cand in (directory / name, directory / what / name,
                 directory / f"miracl-{MIRACL_VERSION}-{lang}" / what / name):
        if cand.is_file():
            return cand
    return None


def available(directory: Path, split: str) -> list[str]:
    pat = re.compile(rf"^topics\.miracl-{re.escape(MIRACL_VERSION)}-(.+)-{re.escape(split)}\.tsv$")
    found = {m.group(1) for p in directory.rglob("topics.*.tsv") if (m := pat.match(p.name))} if directory.is_dir() else set()
    return sorted(found)


def read_topics(path: Path, problems: Problems, read_as: Path | None = None) -> dict[str, Topic]:
    """Parse a MIRACL topics file (``qid<TAB>query`` per line), in file order (``read_as``: the path
    to open, see :func:`.text.iter_lines`)."""
    topics: dict[str, Topic] = {}
    for lineno, raw in iter_lines(path, problems, read_as):
        where = f"{path}:{lineno}"
        line = decode(raw, where, problems)
        if line is None or not line.strip():
            continue
        qid, tab, query = line.partition("\t")
        qid, query = qid.strip(), query.strip()
        if not tab:
            problems.add(where, f"found {line[:60]!r} without a tab; expected qid<TAB>query")
            continue
        if not qid or not query:
            problems.add(where, f"{'qid' if not qid else 'query'} is empty; expected qid<TAB>query")
            continue
        if qid in topics:
            problems.add(where, f"duplicate qid {qid!r} (first at line {topics[qid].line}); qids must be unique")
            continue
        topics[qid] = Topic(qid, query, lineno)
    return topics


def read_qrels(path: Path, problems: Problems, read_as: Path | None = None) -> dict[str, dict[str, Judgment]]:
    """Parse TREC qrels (``qid Q0 docid rel``, whitespace separated): qid -> docid -> judgment.

    ``rel`` is an integer grade (MIRACL: 0 or 1); a grade > 0 means relevant. A line repeated with
    the same grade is counted in a warning; a docid judged twice with different grades is an error.
    """
    qrels: dict[str, dict[str, Judgment]] = {}
    repeated = 0
    for lineno, raw in iter_lines(path, problems, read_as):
        where = f"{path}:{lineno}"
        line = decode(raw, where, problems)
        if line is None or not line.strip():
            continue
        fields = line.split()
        if len(fields) != 4:
            problems.add(where, f"found {len(fields)} fields {line.strip()[:60]!r}; expected 4 whitespace-separated "
                         "fields: qid Q0 docid rel")
            continue
        qid, _, docid, rel_s = fields
        try:
            rel = int(rel_s)
        except ValueError:
            problems.add(where, f"rel: found {rel_s!r}; expected an integer grade (0 = not relevant, 1 = relevant)")
            continue
        judged = qrels.setdefault(qid, {})
        if docid in judged:
            first = judged[docid]
            if first.rel != rel:
                problems.add(where, f"docid {docid!r} of qid {qid!r} is judged {rel} here and {first.rel} at line "
                             f"{first.line}; keep one judgment")
            else:
                repeated += 1
            continue
        judged[docid] = Judgment(qid, docid, rel, lineno)
    if repeated:
        warn(f"{path}: {repeated} repeated qrels lines (same qid, docid and grade) counted once")
    return qrels


def _corpus_files(src: MiraclSource, problems: Problems, where: Where) -> list[Path]:
    def files_in(folder: Path) -> list[Path]:
        return sorted(p for p in folder.iterdir() if p.is_file() and p.name.endswith((".jsonl", ".jsonl.gz")))

    if src.corpus is not None:
        if src.corpus.is_dir():
            found = files_in(src.corpus)
            if not found:
                problems.add(where("corpus"), f"corpus: the folder {src.corpus} holds no *.jsonl or *.jsonl.gz file")
            return found
        if not src.corpus.is_file():
            problems.add(where("corpus"), f"corpus: {src.corpus} does not exist; expected a corpus JSONL(.gz) file "
                         "or a folder of them ({\"docid\", \"title\", \"text\"} per line)")
            return []
        return [src.corpus]
    cands = [src.dir / "corpus" / f"{src.lang}.jsonl", src.dir / "corpus" / f"{src.lang}.jsonl.gz"]
    for c in cands:
        if c.is_file():
            return [c]
    for folder in (src.dir / "corpus" / src.lang, src.dir / f"miracl-corpus-{MIRACL_VERSION}-{src.lang}"):
        if folder.is_dir() and (found := files_in(folder)):
            return found
    problems.add(where("corpus"), f"no corpus found for {src.lang!r}: looked for {cands[0]}, {cands[1]}, "
                 f"{src.dir / 'corpus' / src.lang}/ and {src.dir / f'miracl-corpus-{MIRACL_VERSION}-{src.lang}'}/; "
                 "pass corpus=PATH (a JSONL(.gz) file or folder with {\"docid\", \"title\", \"text\"} per line)")
    return []


_DOCID_RE = re.compile(rb'"docid"\s*:\s*"((?:[^"\\]|\\.)*)"')


def read_corpus(paths: Sequence[Path], needed: set[str], problems: Problems,
                read_as: Mapping[Path, Path] | None = None) -> dict[str, Passage]:
    """The passages of ``needed`` docids from MIRACL corpus JSONL(.gz) files.

    The files are streamed and only the needed lines are decoded, so a full MIRACL corpus (millions
    of lines) costs one pass and memory for the needed passages only. ``read_as``: file -> the path
    to open (see :func:`.text.iter_lines`).
    """
    found: dict[str, Passage] = {}
    first_seen: dict[str, str] = {}
    for path in paths:
        for lineno, raw in iter_lines(path, problems, (read_as or {}).get(path)):
            if not raw.strip():
                continue
            m = _DOCID_RE.search(raw)
            if m is not None:
                rawid = m.group(1)
                try:
                    docid = json.loads(b'"' + rawid + b'"') if b"\\" in rawid else rawid.decode("utf-8", "replace")
                except json.JSONDecodeError:
                    docid = None  # a bad escape: the full decode below reports the line
                if docid is not None and docid not in needed:
                    continue
            where = f"{path}:{lineno}"
            line = decode(raw, where, problems)
            if line is None:
                continue
            obj = decode_line(line, where, problems, expected='one {"docid", "title", "text"} object per line')
            if obj is None:
                continue
            if not isinstance(obj.get("docid"), str):
                problems.add(where, "field 'docid' is missing or not a string; expected {\"docid\", \"title\", \"text\"}")
                continue
            docid = obj["docid"]
            if docid not in needed:
                continue
            if docid in first_seen:
                problems.add(where, f"duplicate docid {docid!r} (first at {first_seen[docid]}); docids must be unique")
                continue
            text, title = obj.get("text"), obj.get("title", "")
            if not isinstance(text, str) or not text.strip():
                problems.add(where, f"field 'text' of docid {docid!r}: found {text!r:.40}; expected a non-empty string")
                continue
            if title is not None and not isinstance(title, str):
                problems.add(where, f"field 'title' of docid {docid!r}: found {title!r:.40}; expected a string")
                continue
            first_seen[docid] = where
            found[docid] = Passage(id=docid, text=text, title=title or None)
    return found


def miracl_cases(src: MiraclSource, suite_name: str, where: Where, problems: Problems) -> tuple[Case, ...]:
    if not src.dir.is_dir():
        problems.add(where("dir"), f"{src.dir} is not a folder; expected the folder with "
                     f"topics.miracl-{MIRACL_VERSION}-{src.lang}-{src.split}.tsv and its qrels")
        return ()
    topics_path = miracl_file(src.dir, "topics", src.lang, src.split)
    qrels_path = miracl_file(src.dir, "qrels", src.lang, src.split)
    for what, p in (("topics", topics_path), ("qrels", qrels_path)):
        if p is None:
            avail = available(src.dir, src.split)
            problems.add(where("dir"), f"no {what}.miracl-{MIRACL_VERSION}-{src.lang}-{src.split}.tsv under {src.dir}; "
                         f"languages with {src.split} topics there: {', '.join(avail) or 'none'}")
    files = _corpus_files(src, problems, where)
    if topics_path is None or qrels_path is None or not files:
        return ()
    n_before = problems.count
    opened: dict[Path, Path] = {}  # each file -> the resolved path to open
    if src.confine is not None:  # checked again as read: a file in an allowed folder may be a symlink out
        for key, path in (("dir", topics_path), ("dir", qrels_path), *(("corpus", f) for f in files)):
            if (allowed := src.confine.check(path, key, where(key), problems)) is not None:
                opened[path] = allowed
        if problems.count > n_before:
            return ()
    topics = read_topics(topics_path, problems, opened.get(topics_path))
    qrels = read_qrels(qrels_path, problems, opened.get(qrels_path))
    if problems.count > n_before:
        return ()
    orphans = [q for q in qrels if q not in topics]
    if orphans:
        warn(f"{qrels_path}: {len(orphans)} qids have judgments but no topic in {topics_path.name} and are ignored: "
              f"{sample(orphans)}")
    usable = [t for t in topics.values() if any(j.rel > 0 for j in qrels.get(t.qid, {}).values())]
    if len(usable) < len(topics):
        warn(f"{topics_path}: {len(topics) - len(usable)} of {len(topics)} queries have no passage judged relevant "
              f"in {qrels_path.name} and are skipped")
    selected = usable[: src.limit] if src.limit else usable
    needed = {d for t in selected for d in qrels[t.qid]}
    docs = read_corpus(files, needed, problems, opened)
    if problems.count > n_before:
        return ()
    missing = sorted(needed - set(docs))
    files_txt = ", ".join(str(f) for f in files)
    if missing:
        queries = sorted({t.qid for t in selected if any(d not in docs for d in qrels[t.qid])})
        text = (f"{len(missing)} judged passages of {len(queries)} queries (judged in {qrels_path}) are not in the "
                f"corpus {files_txt}: {sample(missing)}")
        if src.missing == "error":
            problems.add(where("corpus"), text + "; add them to the corpus, point corpus= at the full MIRACL corpus, "
                         "or pass missing=skip to drop them")
            return ()
        warn(text + "; dropped (missing=skip)")
    cases: list[Case] = []
    emptied = 0
    for t in selected:
        judged = [j for j in qrels[t.qid].values() if j.docid in docs]
        relevant = [j.docid for j in judged if j.rel > 0]
        if not relevant:
            emptied += 1
            continue
        obj = {"id": t.qid, "lang": src.lang, "question": t.query,
               "passages": [{"id": j.docid, "text": docs[j.docid].text, "title": docs[j.docid].title or ""}
                            for j in judged],
               "relevant": relevant, "answers": []}
        case = parse_case(obj, f"{topics_path}:{t.line}", suite_name, "oracle", None, problems)
        if case is not None:
            cases.append(case)
    if emptied:
        warn(f"{topics_path}: {emptied} queries lost every relevant passage to missing=skip and are skipped")
    return tuple(sorted(cases, key=lambda c: (c.lang, c.id)))

