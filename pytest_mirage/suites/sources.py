"""Suites built from real public formats: MIRACL files and the MIRAGE-Bench dataset export.

Two entry points, both returning a validated oracle-mode :class:`Suite`:

* :func:`load_source_spec` for ``--mirage-suite`` values::

      miracl:DIR?lang=hi[&split=dev][&corpus=PATH][&missing=error|skip][&limit=N][&name=NAME]
      mirage-export:FILE.jsonl[?lang=hi][&limit=N][&name=NAME]

  Relative paths are relative to the current directory.

* :func:`load_source_suite` for a ``suite.toml`` whose ``[source]`` table (or ``[suite] source``,
  a table or a spec string as above) points at these formats. Paths there are relative to the suite
  folder; ``[prompt]``, ``[thresholds]``, ``[gates]`` and the ``[suite]`` keys ``name``,
  ``description``, ``k``, ``runs`` and ``reference_models`` apply as in folder suites.

MIRACL (as in MIRAGE-Bench): one case per topic; the oracle passages of a query are its judged
passages (relevant and non-relevant), ``relevant`` are those with a grade > 0, ``answers`` is empty
(MIRACL has no reference answers). Queries without a relevant passage are skipped (with a warning).

Every problem names the file and line (or the spec/manifest key) and is reported together with the
others, as for folder suites.
"""

from __future__ import annotations

import gzip
import json
import re
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote

from ..errors import MirageWarning, SuiteError, did_you_mean
from ..langcodes import ISO639_1, ISO639_3_NAMES, check_lang
from .loader import NAME_RE, _expand, _key_line, _manifest_tail, _Problems, iter_jsonl, parse_case
from .model import Case, Passage, Suite

MIRACL_VERSION = "v1.0"
MISSING_MODES = ("error", "skip")
MAX_LISTED_IDS = 10  # ids named in one message; the rest are counted

# Keys of a source spec's query string (``?k=v&...``) per kind.
SPEC_KEYS: dict[str, tuple[str, ...]] = {
    "miracl": ("lang", "split", "corpus", "missing", "limit", "name"),
    "mirage-export": ("lang", "limit", "name"),
}
# Keys of a ``[source]`` table per kind (the suite name comes from ``[suite] name``).
TABLE_KEYS: dict[str, tuple[str, ...]] = {
    "miracl": ("kind", "dir", "lang", "split", "corpus", "missing", "limit"),
    "mirage-export": ("kind", "path", "lang", "limit"),
}
_SPLIT_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")

Where = Callable[[str], str]


# ---------------------------------------------------------------------------- source values
@dataclass(frozen=True, slots=True)
class MiraclSource:
    """Where the MIRACL files of one language and split are, and how to read them."""

    dir: Path
    lang: str
    split: str = "dev"
    corpus: Path | None = None  # a JSONL(.gz) file or a folder of them; None: DIR/corpus/<lang>.jsonl
    missing: Literal["error", "skip"] = "error"
    limit: int | None = None  # the first N usable queries, in topics-file order
    name: str | None = None

    @property
    def default_name(self) -> str:
        return f"miracl-{self.lang}-{self.split.lower()}"


@dataclass(frozen=True, slots=True)
class MirageExportSource:
    """A MIRAGE-Bench export (JSONL rows with ``query_id``, ``prompt``, ``positive_ids``, ``negative_ids``)."""

    path: Path
    lang: str | None = None
    limit: int | None = None
    name: str | None = None

    @property
    def default_name(self) -> str:
        if self.lang:
            return f"mirage-export-{self.lang}"
        stem = self.path.name.split(".")[0]
        slug = re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-")
        return f"mirage-export-{slug}" if slug else "mirage-export"


Source = MiraclSource | MirageExportSource


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


# ---------------------------------------------------------------------------- helpers
def _warn(message: str) -> None:
    warnings.warn(MirageWarning(message), stacklevel=3)


def _sample(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:MAX_LISTED_IDS])
    more = f" and {len(ids) - MAX_LISTED_IDS} more" if len(ids) > MAX_LISTED_IDS else ""
    return shown + more


def _iter_lines(path: Path, problems: _Problems) -> Iterator[tuple[int, bytes]]:
    """``(line_number, raw_line)`` of a text file, transparently gunzipping ``*.gz``."""
    try:
        fh = gzip.open(path, "rb") if path.name.endswith(".gz") else path.open("rb")
    except OSError as exc:
        problems.add(str(path), f"cannot read file: {exc.strerror or exc}")
        return
    try:
        with fh:
            yield from enumerate(fh, start=1)
    except (OSError, EOFError) as exc:  # a truncated or corrupt gzip file
        problems.add(str(path), f"cannot read file: {exc}; expected a readable (gzip) text file")


def _decode(raw: bytes, where: str, problems: _Problems) -> str | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.add(where, f"not valid UTF-8 (byte {exc.start}: {raw[exc.start:exc.start + 4]!r}); "
                     "save the file as UTF-8")
        return None
    return text.lstrip("\ufeff").rstrip("\r\n")


def _lang_code(value: str) -> str | None:
    """A language code from a code or an English language name ('Hindi' -> 'hi')."""
    if check_lang(value) is None:
        return value
    names = {name.lower(): code for code, name in {**ISO639_1, **ISO639_3_NAMES}.items()}
    names.setdefault("farsi", "fa")
    return names.get(value.strip().lower())


# ---------------------------------------------------------------------------- spec parsing
def parse_spec(spec: str, where: str | None = None) -> tuple[str, str, dict[str, str]]:
    """Split ``kind:PATH?key=value&...`` into ``(kind, path, params)``; raises SuiteError.

    ``where`` starts the error messages (default: ``--mirage-suite 'SPEC'``).
    """
    from .resolve import SOURCE_KINDS

    where = where or f"--mirage-suite {spec!r}"
    kind, sep, rest = spec.partition(":")
    if not sep or kind not in SOURCE_KINDS:
        raise SuiteError(f"{where}: unknown source kind {kind!r}; expected one of "
                         f"{', '.join(k + ':PATH' for k in SOURCE_KINDS)}.{did_you_mean(kind, SOURCE_KINDS)}")
    path, _, query = rest.partition("?")
    if not path.strip():
        example = "miracl:DIR?lang=hi" if kind == "miracl" else "mirage-export:FILE.jsonl"
        raise SuiteError(f"{where}: the path is empty; expected e.g. {example}")
    params: dict[str, str] = {}
    known = SPEC_KEYS[kind]
    for part in query.split("&") if query else []:
        key, eq, value = part.partition("=")
        if not eq or not key or not value:
            raise SuiteError(f"{where}: {part!r} is not key=value; expected e.g. ?lang=hi&limit=20")
        if key not in known:
            raise SuiteError(f"{where}: unknown key {key!r} for {kind}; known keys: "
                             f"{', '.join(known)}.{did_you_mean(key, known)}")
        if key in params:
            raise SuiteError(f"{where}: key {key!r} is given twice; give it once")
        params[key] = unquote(value)
    return kind, unquote(path), params


def _path(value: Any, base: Path | None) -> Path:
    p = Path(str(value)).expanduser()
    return base / p if base is not None and not p.is_absolute() else p


def _source(kind: str, values: Mapping[str, Any], base: Path | None, where: Where,
            problems: _Problems) -> Source | None:
    """Validate the values of a spec or ``[source]`` table; ``values['path']`` is DIR or FILE."""
    n_before = problems.count
    lang = values.get("lang")
    if lang is not None:
        err = check_lang(lang) if isinstance(lang, str) else f"found {lang!r}; expected a language code such as 'hi'"
        if err:
            problems.add(where("lang"), f"lang: {err}")
            lang = None
    limit = values.get("limit")
    if limit is not None:
        if isinstance(limit, str) and limit.isdigit():
            limit = int(limit)
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            problems.add(where("limit"), f"limit: found {limit!r}; expected a positive integer (the first N queries)")
            limit = None
    name = values.get("name")
    if name is not None and (not isinstance(name, str) or not NAME_RE.match(name)):
        problems.add(where("name"), f"name: found {name!r}; expected lowercase letters, digits and '-' "
                     "matching [a-z0-9][a-z0-9-]*")
    raw_path = values.get("path")
    if not isinstance(raw_path, str) or not raw_path.strip():
        key = "dir" if kind == "miracl" else "path"
        problems.add(where(key), f"{key}: found {raw_path!r}; expected the path of the "
                     + ("folder with the MIRACL topics and qrels files" if kind == "miracl" else "export JSONL file"))
        return None
    path = _path(raw_path, base)

    if kind == "mirage-export":
        if problems.count > n_before:
            return None
        return MirageExportSource(path=path, lang=lang, limit=limit, name=name)

    if lang is None and "lang" not in values:
        problems.add(where("lang"), "lang is missing; expected the MIRACL language code, e.g. lang=hi")
    split = values.get("split", "dev")
    if not isinstance(split, str) or not _SPLIT_RE.match(split):
        problems.add(where("split"), f"split: found {split!r}; expected a MIRACL split name such as dev, train, testB")
        split = "dev"
    corpus = values.get("corpus")
    if corpus is not None and (not isinstance(corpus, str) or not corpus.strip()):
        problems.add(where("corpus"), f"corpus: found {corpus!r}; expected the path of a corpus JSONL(.gz) file or folder")
        corpus = None
    missing = values.get("missing", "error")
    if missing not in MISSING_MODES:
        problems.add(where("missing"), f"missing: found {missing!r}; expected \"error\" (default) or \"skip\" "
                     "(drop judged passages that are not in the corpus)")
        missing = "error"
    if isinstance(corpus, str) and base is not None and not Path(corpus).expanduser().is_absolute():
        in_suite, in_dir = _path(corpus, base), _path(corpus, path)
        if not in_suite.exists() and in_dir.exists():
            problems.add(where("corpus"), f"corpus: {in_suite} does not exist (paths are relative to the suite "
                         f"folder); did you mean {in_dir}? Write corpus relative to the suite folder")
    if problems.count > n_before or lang is None:
        return None
    return MiraclSource(dir=path, lang=lang, split=split, corpus=_path(corpus, base) if corpus else None,
                        missing=missing, limit=limit, name=name)


# ---------------------------------------------------------------------------- MIRACL files
def miracl_file(directory: Path, what: Literal["topics", "qrels"], lang: str, split: str) -> Path | None:
    """The topics/qrels file of a language and split: ``DIR/<name>``, ``DIR/<what>/<name>`` or
    ``DIR/miracl-v1.0-<lang>/<what>/<name>`` (the layout of the public release)."""
    name = f"{what}.miracl-{MIRACL_VERSION}-{lang}-{split}.tsv"
    for cand in (directory / name, directory / what / name,
                 directory / f"miracl-{MIRACL_VERSION}-{lang}" / what / name):
        if cand.is_file():
            return cand
    return None


def _available(directory: Path, split: str) -> list[str]:
    pat = re.compile(rf"^topics\.miracl-{re.escape(MIRACL_VERSION)}-(.+)-{re.escape(split)}\.tsv$")
    found = {m.group(1) for p in directory.rglob("topics.*.tsv") if (m := pat.match(p.name))} if directory.is_dir() else set()
    return sorted(found)


def read_topics(path: Path, problems: _Problems) -> dict[str, Topic]:
    """Parse a MIRACL topics file (``qid<TAB>query`` per line), in file order."""
    topics: dict[str, Topic] = {}
    for lineno, raw in _iter_lines(path, problems):
        where = f"{path}:{lineno}"
        line = _decode(raw, where, problems)
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


def read_qrels(path: Path, problems: _Problems) -> dict[str, dict[str, Judgment]]:
    """Parse TREC qrels (``qid Q0 docid rel``, whitespace separated): qid -> docid -> judgment.

    ``rel`` is an integer grade (MIRACL: 0 or 1); a grade > 0 means relevant. A line repeated with
    the same grade is counted in a warning; a docid judged twice with different grades is an error.
    """
    qrels: dict[str, dict[str, Judgment]] = {}
    repeated = 0
    for lineno, raw in _iter_lines(path, problems):
        where = f"{path}:{lineno}"
        line = _decode(raw, where, problems)
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
        _warn(f"{path}: {repeated} repeated qrels lines (same qid, docid and grade) counted once")
    return qrels


def _corpus_files(src: MiraclSource, problems: _Problems, where: Where) -> list[Path]:
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


def read_corpus(paths: Sequence[Path], needed: set[str], problems: _Problems) -> dict[str, Passage]:
    """The passages of ``needed`` docids from MIRACL corpus JSONL(.gz) files.

    The files are streamed and only the needed lines are decoded, so a full MIRACL corpus (millions
    of lines) costs one pass and memory for the needed passages only.
    """
    found: dict[str, Passage] = {}
    first_seen: dict[str, str] = {}
    for path in paths:
        for lineno, raw in _iter_lines(path, problems):
            if not raw.strip():
                continue
            m = _DOCID_RE.search(raw)
            if m is not None:
                rawid = m.group(1)
                docid = json.loads(b'"' + rawid + b'"') if b"\\" in rawid else rawid.decode("utf-8", "replace")
                if docid not in needed:
                    continue
            where = f"{path}:{lineno}"
            line = _decode(raw, where, problems)
            if line is None:
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.add(where, f"invalid JSON at column {exc.colno}: {exc.msg}; expected one "
                             "{\"docid\", \"title\", \"text\"} object per line")
                continue
            if not isinstance(obj, dict) or not isinstance(obj.get("docid"), str):
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


def _miracl_cases(src: MiraclSource, suite_name: str, where: Where, problems: _Problems) -> tuple[Case, ...]:
    if not src.dir.is_dir():
        problems.add(where("dir"), f"{src.dir} is not a folder; expected the folder with "
                     f"topics.miracl-{MIRACL_VERSION}-{src.lang}-{src.split}.tsv and its qrels")
        return ()
    topics_path = miracl_file(src.dir, "topics", src.lang, src.split)
    qrels_path = miracl_file(src.dir, "qrels", src.lang, src.split)
    for what, p in (("topics", topics_path), ("qrels", qrels_path)):
        if p is None:
            avail = _available(src.dir, src.split)
            problems.add(where("dir"), f"no {what}.miracl-{MIRACL_VERSION}-{src.lang}-{src.split}.tsv under {src.dir}; "
                         f"languages with {src.split} topics there: {', '.join(avail) or 'none'}")
    files = _corpus_files(src, problems, where)
    if topics_path is None or qrels_path is None or not files:
        return ()
    n_before = problems.count
    topics = read_topics(topics_path, problems)
    qrels = read_qrels(qrels_path, problems)
    if problems.count > n_before:
        return ()
    orphans = [q for q in qrels if q not in topics]
    if orphans:
        _warn(f"{qrels_path}: {len(orphans)} qids have judgments but no topic in {topics_path.name} and are ignored: "
              f"{_sample(orphans)}")
    usable = [t for t in topics.values() if any(j.rel > 0 for j in qrels.get(t.qid, {}).values())]
    if len(usable) < len(topics):
        _warn(f"{topics_path}: {len(topics) - len(usable)} of {len(topics)} queries have no passage judged relevant "
              f"in {qrels_path.name} and are skipped")
    selected = usable[: src.limit] if src.limit else usable
    needed = {d for t in selected for d in qrels[t.qid]}
    docs = read_corpus(files, needed, problems)
    if problems.count > n_before:
        return ()
    missing = sorted(needed - set(docs))
    files_txt = ", ".join(str(f) for f in files)
    if missing:
        queries = sorted({t.qid for t in selected if any(d not in docs for d in qrels[t.qid])})
        text = (f"{len(missing)} judged passages of {len(queries)} queries (judged in {qrels_path}) are not in the "
                f"corpus {files_txt}: {_sample(missing)}")
        if src.missing == "error":
            problems.add(where("corpus"), text + "; add them to the corpus, point corpus= at the full MIRACL corpus, "
                         "or pass missing=skip to drop them")
            return ()
        _warn(text + "; dropped (missing=skip)")
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
        _warn(f"{topics_path}: {emptied} queries lost every relevant passage to missing=skip and are skipped")
    return tuple(sorted(cases, key=lambda c: (c.lang, c.id)))


# ---------------------------------------------------------------------------- MIRAGE-Bench export
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
        raise ValueError(f"ids {_sample(absent)} listed in positive_ids/negative_ids have no \"[id]\" passage line "
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


def _id_list(obj: Mapping[str, Any], key: str, where: str, problems: _Problems) -> list[str] | None:
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


def _export_cases(src: MirageExportSource, suite_name: str, where: Where, problems: _Problems) -> tuple[Case, ...]:
    if not src.path.is_file():
        problems.add(where("path"), f"{src.path} does not exist; expected a MIRAGE-Bench export JSONL file "
                     "(rows with query_id, prompt, positive_ids, negative_ids)")
        return ()
    if src.path.name.endswith(".gz"):
        problems.add(where("path"), f"{src.path} is compressed; expected a plain JSONL file (gunzip it first)")
        return ()
    rows: list[_ExportRow] = []
    other_langs: dict[str, int] = {}
    no_positive = 0
    for lineno, obj in iter_jsonl(src.path, problems):
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
            problems.add(here, f"ids {_sample(both)} are in both positive_ids and negative_ids")
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
        _warn(f"{src.path}: {no_positive} rows have no positive_ids (no relevant passage) and are skipped")
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


# ---------------------------------------------------------------------------- entry points
def _cases(src: Source, name: str, where: Where, problems: _Problems) -> tuple[Case, ...]:
    if isinstance(src, MiraclSource):
        return _miracl_cases(src, name, where, problems)
    return _export_cases(src, name, where, problems)


def _describe(src: Source) -> str:
    if isinstance(src, MiraclSource):
        return f"MIRACL {MIRACL_VERSION} {src.lang} {src.split} (oracle passages = judged passages) from {src.dir}"
    return f"MIRAGE-Bench export {src.path}"


def load_source_spec(spec: str) -> Suite:
    """Load ``miracl:DIR?lang=hi...`` or ``mirage-export:FILE.jsonl[?lang=hi]`` (a ``--mirage-suite`` value).

    Raises SuiteError listing every problem (``path:line: ...``).
    """
    kind, path, params = parse_spec(spec)
    label = f"--mirage-suite {spec!r}"
    problems = _Problems()

    def where(key: str) -> str:
        return label

    src = _source(kind, {"path": path, **params}, None, where, problems)
    problems.raise_if_any(Path(path))
    assert src is not None
    name = src.name or src.default_name
    cases = _cases(src, name, where, problems)
    if not cases and not problems.count:
        problems.add(label, "no cases: no query has a relevant passage")
    problems.raise_if_any(Path(path))
    root = src.dir if isinstance(src, MiraclSource) else src.path.parent
    return Suite(name=name, root=root, manifest=None, mode="oracle", cases=cases, description=_describe(src),
                 settings={"k": 3, "reference_models": ()})


def load_source_suite(source: Any, manifest: Path, data: dict[str, Any], problems: _Problems) -> Suite:
    """Build the suite of a ``suite.toml`` that points at a public format.

    Supported forms (paths relative to the suite folder)::

        [suite]
        name = "miracl-hi"             # required, as for every suite
        [source]
        kind = "miracl"                # or "mirage-export"
        dir = "../data/miracl"         # miracl: folder with topics.miracl-v1.0-<lang>-<split>.tsv + qrels
        lang = "hi"                    # miracl: required; mirage-export: optional language filter
        split = "dev"                  # miracl: default "dev"
        corpus = "corpus/hi.jsonl"     # miracl: JSONL(.gz) file or folder; default DIR/corpus/<lang>.jsonl
        missing = "error"              # miracl: or "skip" to drop judged passages absent from the corpus
        limit = 50                     # first N queries (rows)
        # path = "export/hi.jsonl"     # mirage-export: the export file (instead of dir)

    or ``[suite] source = "miracl:../data/miracl?lang=hi&limit=50"`` (a spec string), or a
    ``[suite.source]`` table with the keys above.
    """
    try:
        text = manifest.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""
    root = manifest.parent

    def where(key: str) -> str:
        return f"{manifest}:{_key_line(text, key) or _table_line(text) or 1}"

    s = data.get("suite") if isinstance(data.get("suite"), dict) else {}
    assert isinstance(s, dict)
    if isinstance(data.get("source"), (dict, str)) and s.get("source") is not None:
        problems.add(where("source"), "the source is given twice ([source] and [suite] source); keep one")
    for key in ("cases", "corpus"):
        if key in s:
            warnings.warn(MirageWarning(f"{where(key)}: [suite] {key} is ignored: the cases come from the [source]"),
                          stacklevel=2)
    if s.get("mode", "oracle") != "oracle":
        problems.add(where("mode"), f"[suite] mode: found {s.get('mode')!r}; source suites are oracle mode "
                     "(the judged passages are the context); remove mode or set mode = \"oracle\"")

    src: Source | None = None
    if isinstance(source, str):
        try:
            kind, path, params = parse_spec(source, "[suite] source")
        except SuiteError as exc:
            problems.add(where("source"), str(exc))
        else:
            if "name" in params:
                problems.add(where("source"), "[suite] source: name= is not used here; the suite name is [suite] name")
            src = _source(kind, {"path": path, **params}, root, where, problems)
    elif isinstance(source, dict):
        table_kind = source.get("kind")
        if not isinstance(table_kind, str) or table_kind not in TABLE_KEYS:
            problems.add(where("kind"), f"[source] kind: found {table_kind!r}; expected one of "
                         f"{', '.join(repr(k) for k in TABLE_KEYS)}.{did_you_mean(str(table_kind), TABLE_KEYS)}")
        else:
            kind = table_kind
            known = TABLE_KEYS[kind]
            for key in sorted(set(source) - set(known)):
                problems.add(where(key), f"[source] unknown key {key!r} for kind {kind!r}; known keys: "
                             f"{', '.join(known)}.{did_you_mean(key, known)}")
            values = {k: v for k, v in source.items() if k not in ("kind", "dir", "path")}
            values["path"] = source.get("dir" if kind == "miracl" else "path")
            src = _source(kind, values, root, where, problems)
    else:
        problems.add(where("source"), f"source: found {source!r:.60}; expected a [source] table with kind = "
                     "\"miracl\" or \"mirage-export\", or a spec string such as \"miracl:DIR?lang=hi\"")

    raw_name = s.get("name")
    name = raw_name if isinstance(raw_name, str) and NAME_RE.match(raw_name) else "invalid"
    cases: tuple[Case, ...] = ()
    if src is not None:
        cases = _cases(src, name, where, problems)
        if not cases and not problems.count:
            problems.add(where("source"), "no cases: no query has a relevant passage")
    template, thresholds, gates = _manifest_tail(data, manifest, where, problems)
    runs = s.get("runs")
    run_files = _expand(root, runs, "runs", manifest, text, problems, required=False) if runs else []
    problems.raise_if_any(manifest)
    k = s.get("k", 3)
    refs = s.get("reference_models", [])
    description = s.get("description") or (_describe(src) if src is not None else "")
    return Suite(name=name, root=root, manifest=manifest, mode="oracle", cases=cases,
                 description=str(description), run_files=tuple(run_files), template=template,
                 thresholds=thresholds, gates=gates, settings={"k": k, "reference_models": tuple(refs)})


def _table_line(text: str) -> int | None:
    m = re.search(r"(?m)^\s*\[\s*(suite\.)?source\s*\]", text)
    return text.count("\n", 0, m.start()) + 1 if m else None
