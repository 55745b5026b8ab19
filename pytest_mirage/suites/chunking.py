"""A team's corpus as retrieval chunks: reading, chunking, seeded passage sampling, near-duplicates.

Used by ``python -m pytest_mirage generate-suite`` (:mod:`pytest_mirage.cli.generate`); pure
functions, no model, no pytest.

**Input.** A folder of ``.txt``, ``.md``/``.markdown`` and ``.html``/``.htm`` files (read
recursively, in sorted path order; HTML text extracted with the standard library's
:mod:`html.parser`, ``<script>``/``<style>`` dropped, block elements ending paragraphs, the
``<title>`` or first ``<h1>`` as the title), or a JSONL file of ready chunks
``{"id", "doc", "text", "title"?, "lang"?}`` (the suite corpus format, used as given: one chunk per
line). A file's language is the ``.LANG`` before its extension (``guide.km.md``), else ``--lang``.
Text a suite file cannot hold (NUL, ESC, lone surrogates) is an error naming the file and line.

**Chunking** (deterministic: the same files give the same chunks and ids). A document is split into
paragraphs at blank lines (a Markdown heading line is a paragraph of its own). Paragraphs are packed
in order into chunks of at most ``max_words`` words; a paragraph longer than that is split at
sentence ends (:func:`pytest_mirage.text.tokenize.split_sentences`), and a sentence longer than that
at word boundaries. Words are counted script-aware (:func:`word_count`): whitespace-separated tokens
for scripts written with spaces; for Thai, Lao, Khmer, Myanmar, Han and Kana, the letters divided by
the script's letters per English word (:data:`pytest_mirage.text.langid.LETTERS_PER_WORD`: Thai 3.8,
Khmer 3.1, Han 1.4, Kana 2.7), so a 120-word chunk holds about as much text in every language. The
chunk ids are ``<doc>#<n>`` (n from 0), the doc id is the file's path relative to the folder without
its extension, with ``/`` kept and any character a citation cannot hold replaced by ``-``.

**Sampling** (:func:`sample_passages`): chunks with at least ``min_words`` words, shuffled with
``random.Random(seed)``, taken in that order with at most ``per_doc`` chunks per document until
``n`` are taken.

**Near-duplicates** (:func:`jaccard`): the Jaccard similarity of the sets of character 3-grams of the
normalised texts (NFKC, lower case, punctuation removed, whitespace collapsed).
"""

from __future__ import annotations

import hashlib
import html.parser
import json
import math
import random
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError
from ..text.langcodes import check_lang
from .checks import id_problem, text_problem
from .model import Passage

TEXT_SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm")
DEFAULT_MAX_WORDS = 120
DEFAULT_MIN_WORDS = 20
NO_SPACE_SCRIPTS = frozenset({"THAI", "LAO", "KHMER", "MYANMAR", "HAN", "KANA"})
_BAD_ID_CHARS = re.compile(r"[\s\[\],;，、،；［］#]")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S")
_BLANK = re.compile(r"\n[ \t]*\n+")


@dataclass(frozen=True, slots=True)
class Document:
    """One source document: its id, title, text, language and where it came from."""

    id: str
    text: str
    lang: str
    source: str  # the file (and line, for JSONL) it was read from
    title: str | None = None


# ---------------------------------------------------------------- word counts


def word_count(text: str) -> float:
    """Words of ``text``, script-aware (see the module doc): whitespace tokens with a letter or
    digit, except that letters of scripts written without spaces count as ``letters / letters per
    word`` of their script."""
    from ..text.langid import LETTERS_PER_WORD, script_of

    words = 0.0
    no_space: dict[str, int] = {}
    for token in text.split():
        plain = False
        for ch in token:
            sc = script_of(ch)
            if sc in NO_SPACE_SCRIPTS:
                no_space[sc] = no_space.get(sc, 0) + 1
            elif ch.isalnum():
                plain = True
        if plain:
            words += 1
    return words + sum(n / LETTERS_PER_WORD[sc] for sc, n in no_space.items())


# ---------------------------------------------------------------- reading


class _HTMLText(html.parser.HTMLParser):
    """Text of an HTML page: paragraphs at block elements, no script/style/head content."""

    BLOCKS = frozenset({"p", "div", "br", "li", "ul", "ol", "table", "tr", "td", "th", "section", "article",
                        "header", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "dd",
                        "dt", "main", "aside", "nav", "figure", "figcaption", "hr"})
    SKIP = frozenset({"script", "style", "noscript", "template", "svg"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: str | None = None
        self._skip = 0
        self._in_title = False
        self._in_h1 = False
        self._h1: list[str] = []
        self._title: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self._skip += 1
        elif tag == "title":
            self._in_title = True
        elif tag in self.BLOCKS:
            self.parts.append("\n\n")
            self._in_h1 = tag == "h1" and not self._h1

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self._skip = max(0, self._skip - 1)
        elif tag == "title":
            self._in_title = False
        elif tag in self.BLOCKS:
            self.parts.append("\n\n")
            if tag == "h1":
                self._in_h1 = False

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        if self._in_title:
            self._title.append(data)
            return
        if self._in_h1:
            self._h1.append(data)
        self.parts.append(data)

    def result(self) -> tuple[str, str | None]:
        text = "".join(self.parts)
        lines = [" ".join(line.split()) for line in text.split("\n")]
        title = " ".join("".join(self._title).split()) or " ".join("".join(self._h1).split()) or None
        return "\n".join(lines), title


def html_text(markup: str) -> tuple[str, str | None]:
    """``(text, title)`` of an HTML page (paragraphs separated by blank lines)."""
    parser = _HTMLText()
    parser.feed(markup)
    parser.close()
    return parser.result()


def safe_doc_id(relative: str) -> str:
    """A document id from a relative path without its extension: characters a citation cannot hold
    (whitespace, brackets, commas, semicolons, ``#``) become ``-``; at most 180 characters (longer
    ids end with a hash of the whole path)."""
    cleaned = "".join("-" if _BAD_ID_CHARS.match(ch) or unicodedata.category(ch)[0] == "C" else ch
                      for ch in unicodedata.normalize("NFC", relative)).strip("-") or "doc"
    if len(cleaned) > 180:
        cleaned = cleaned[:160] + "-" + hashlib.sha256(relative.encode()).hexdigest()[:12]
    return cleaned


def _lang_of_file(path: Path, default: str | None, where: str) -> str:
    stem_suffix = Path(path.stem).suffix[1:]
    if stem_suffix and check_lang(stem_suffix) is None:
        return stem_suffix
    if default is None:
        raise ConfigError(f"{where}: no language: the file name has no language suffix (e.g. guide.km.md) and no "
                          "--lang was given; pass --lang CODE (e.g. --lang en) or rename the file")
    return default


def read_documents(folder: Path, lang: str | None) -> list[Document]:
    """Every text, Markdown and HTML file under ``folder`` as a :class:`Document` (sorted by path)."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES)
    if not files:
        raise ConfigError(f"{folder}: no .txt, .md or .html file in this folder; expected the team's documents "
                          "(or a JSONL corpus file of {\"id\", \"doc\", \"text\"} lines)")
    docs: list[Document] = []
    seen: dict[str, Path] = {}
    for path in files:
        rel = path.relative_to(folder).as_posix()
        try:
            raw = path.read_bytes().decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{path}: not UTF-8 (byte {exc.start}); save the file as UTF-8") from None
        if why := text_problem(raw):
            line = raw.count("\n", 0, raw.find(next(ch for ch in raw if text_problem(ch)))) + 1
            raise ConfigError(f"{path}:{line}: the text {why}; a suite file cannot hold it: remove that character")
        base = rel[: -len(path.suffix)]
        code = _lang_of_file(path, lang, str(path))
        if Path(base).suffix[1:] == code:  # guide.km.md -> doc id "guide"
            base = base[: -len(code) - 1]
        title: str | None = None
        if path.suffix.lower() in (".html", ".htm"):
            text, title = html_text(raw)
        else:
            text = raw.replace("\r\n", "\n").replace("\r", "\n")
            if path.suffix.lower() in (".md", ".markdown"):
                first = next((ln for ln in text.split("\n") if _HEADING.match(ln)), None)
                title = first.strip().lstrip("#").strip() if first else None
        doc_id = safe_doc_id(base)
        if doc_id in seen:
            raise ConfigError(f"{path}: its document id {doc_id!r} is also that of {seen[doc_id]}; rename one of "
                              "the files")
        seen[doc_id] = path
        if text.strip():
            docs.append(Document(doc_id, text, code, str(path), title or Path(base).name))
    return docs


JSONL_KEYS = ("id", "doc", "text", "title", "lang")


def read_chunk_lines(path: Path, lang: str | None) -> list[Passage]:
    """A JSONL corpus of ready chunks ``{"id", "doc", "text", "title"?, "lang"?}``, validated line by line."""
    from ..errors import did_you_mean

    out: list[Passage] = []
    seen: dict[str, int] = {}
    try:
        lines = path.read_bytes().decode("utf-8-sig").splitlines()
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 (byte {exc.start}); save the file as UTF-8") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{where}: not a JSON object ({exc.msg} at column {exc.colno}); expected one "
                              '{"id", "doc", "text"} object per line') from None
        if not isinstance(obj, dict):
            raise ConfigError(f"{where}: found a JSON {type(obj).__name__}; expected an object "
                              '{"id", "doc", "text", "title"?, "lang"?}')
        for key in obj:
            if key not in JSONL_KEYS:
                raise ConfigError(f"{where}: unknown key {key!r}; expected {', '.join(JSONL_KEYS)}."
                                  f"{did_you_mean(key, JSONL_KEYS)}")
        for key in ("id", "text"):
            if not isinstance(obj.get(key), str) or not obj[key].strip():
                raise ConfigError(f"{where}: field {key!r}: found {obj.get(key)!r:.60}; expected a non-empty string")
        for key in ("doc", "title", "lang"):
            if key in obj and obj[key] is not None and not isinstance(obj[key], str):
                raise ConfigError(f"{where}: field {key!r}: found {obj[key]!r:.60}; expected a string")
        for key in ("text", "title", "doc"):
            if isinstance(obj.get(key), str) and (why := text_problem(obj[key])):
                raise ConfigError(f"{where}: field {key!r} {why}; a suite file cannot hold it: remove that character")
        cid = obj["id"]
        if why := id_problem(cid, citable=True, what="chunk ids"):
            raise ConfigError(f"{where}: field 'id': {why}")
        if cid in seen:
            raise ConfigError(f"{where}: field 'id': {cid!r} is also the id of line {seen[cid]}; chunk ids are unique")
        seen[cid] = n
        code = obj.get("lang") or lang
        if code is None:
            raise ConfigError(f"{where}: field 'lang': missing and no --lang given; add \"lang\": \"CODE\" to the "
                              "line or pass --lang CODE")
        if why := check_lang(code):
            raise ConfigError(f"{where}: field 'lang': {why}")
        doc = obj.get("doc") or cid.split("#", 1)[0]
        out.append(Passage(cid, obj["text"], obj.get("title"), doc, code))
    if not out:
        raise ConfigError(f"{path}: no chunk lines; expected one {{\"id\", \"doc\", \"text\"}} object per line")
    return out


# ---------------------------------------------------------------- chunking


def paragraphs(text: str) -> list[str]:
    """Paragraphs of ``text``: split at blank lines; a Markdown heading line is its own paragraph."""
    out: list[str] = []
    for block in _BLANK.split(text.replace("\r\n", "\n")):
        current: list[str] = []
        for line in block.split("\n"):
            if _HEADING.match(line):
                if current:
                    out.append(" ".join(current))
                    current = []
                out.append(line.strip().lstrip("#").strip())
            elif line.strip():
                current.append(line.strip())
        if current:
            out.append(" ".join(current))
    return [" ".join(p.split()) for p in out if p.strip()]


def _split_long(sentence: str, max_words: int) -> list[str]:
    """A sentence longer than ``max_words`` cut at word boundaries (or letters, in scripts without spaces)."""
    tokens = sentence.split()
    pieces: list[str] = []
    current: list[str] = []
    for tok in tokens:
        if word_count(tok) > max_words:  # one unspaced run (Thai, Khmer, Chinese): cut by letters
            if current:
                pieces.append(" ".join(current))
                current = []
            step = max(1, math.floor(len(tok) * max_words / word_count(tok)))
            pieces.extend(tok[i:i + step] for i in range(0, len(tok), step))
            continue
        if current and word_count(" ".join([*current, tok])) > max_words:
            pieces.append(" ".join(current))
            current = []
        current.append(tok)
    if current:
        pieces.append(" ".join(current))
    return pieces


def _units(paragraph: str, lang: str, max_words: int) -> list[str]:
    from ..text.tokenize import split_sentences

    if word_count(paragraph) <= max_words:
        return [paragraph]
    out: list[str] = []
    for sentence in split_sentences(paragraph, lang):
        out.extend([sentence] if word_count(sentence) <= max_words else _split_long(sentence, max_words))
    return out


def _joiner(lang: str) -> str:
    # sentences of one paragraph are joined as the language writes them: no space in Chinese and Japanese
    return "" if lang in ("zh", "ja", "yue") else " "


def chunk_document(doc: Document, max_words: int = DEFAULT_MAX_WORDS) -> list[Passage]:
    """The chunks of ``doc`` (see the module doc), ids ``<doc>#<n>``; paragraphs of a chunk are
    separated by a line break."""
    if max_words < 1:
        raise ConfigError(f"--max-words: found {max_words}; expected an integer >= 1")
    chunks: list[list[list[str]]] = []  # chunk -> paragraphs -> units
    current: list[list[str]] = []
    size = 0.0
    for para in paragraphs(doc.text):
        units = _units(para, doc.lang, max_words)
        for i, unit in enumerate(units):
            n = word_count(unit)
            if current and size + n > max_words:
                chunks.append(current)
                current, size = [], 0.0
            if current and i > 0:
                current[-1].append(unit)  # the paragraph continues in this chunk
            else:
                current.append([unit])
            size += n
    if current:
        chunks.append(current)
    join = _joiner(doc.lang)
    texts = ["\n".join(join.join(units) for units in chunk) for chunk in chunks]
    return [Passage(f"{doc.id}#{i}", text, doc.title, doc.id, doc.lang) for i, text in enumerate(texts)]


def chunk_documents(docs: Iterable[Document], max_words: int = DEFAULT_MAX_WORDS) -> list[Passage]:
    return [c for d in docs for c in chunk_document(d, max_words)]


def read_corpus(path: Path, lang: str | None, max_words: int = DEFAULT_MAX_WORDS) -> list[Passage]:
    """The chunks of a corpus folder or JSONL file (see the module doc)."""
    if lang is not None and (why := check_lang(lang)):
        raise ConfigError(f"--lang: {why}")
    if path.is_dir():
        chunks = chunk_documents(read_documents(path, lang), max_words)
        if not chunks:
            raise ConfigError(f"{path}: every document is empty; expected text to generate questions from")
        return chunks
    if path.is_file():
        if path.suffix.lower() != ".jsonl":
            raise ConfigError(f"{path}: expected a folder of .txt/.md/.html files or a .jsonl file of chunks")
        return read_chunk_lines(path, lang)
    raise ConfigError(f"--corpus {path}: no such file or folder")


def corpus_sha256(chunks: Sequence[Passage]) -> str:
    """A hash of the chunks (ids, documents, titles, languages, texts) for provenance."""
    h = hashlib.sha256()
    for c in chunks:
        h.update(json.dumps([c.id, c.doc, c.title, c.lang, c.text], ensure_ascii=False).encode())
        h.update(b"\n")
    return h.hexdigest()


# ---------------------------------------------------------------- sampling and similarity


def sample_passages(chunks: Sequence[Passage], n: int, per_doc: int, seed: int,
                    min_words: int = DEFAULT_MIN_WORDS) -> list[Passage]:
    """Up to ``n`` chunks of at least ``min_words`` words, at most ``per_doc`` per document, in a
    seeded random order (``random.Random(seed)`` shuffle of the eligible chunks in corpus order)."""
    if n < 1 or per_doc < 1:
        raise ConfigError(f"--n and --per-doc must be >= 1; found {n} and {per_doc}")
    eligible = [c for c in chunks if word_count(c.text) >= min_words]
    random.Random(seed).shuffle(eligible)
    taken: list[Passage] = []
    per: dict[str, int] = {}
    for c in eligible:
        if per.get(c.doc_id, 0) >= per_doc:
            continue
        per[c.doc_id] = per.get(c.doc_id, 0) + 1
        taken.append(c)
        if len(taken) == n:
            break
    return taken


_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)


def normalize_question(text: str) -> str:
    """NFKC, lower case, punctuation removed, whitespace collapsed (the exact-duplicate key)."""
    return " ".join(_PUNCT.sub(" ", unicodedata.normalize("NFKC", text).casefold()).split())


def trigrams(text: str) -> frozenset[str]:
    """Character 3-grams of the normalised text (the whole text when shorter than 3 characters)."""
    t = normalize_question(text)
    return frozenset(t[i:i + 3] for i in range(len(t) - 2)) if len(t) >= 3 else frozenset({t})


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b| (1.0 for two empty sets)."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def near_duplicates(texts: Sequence[str], threshold: float) -> list[tuple[int, float] | None]:
    """For each text in order, ``(i, similarity)`` of the first earlier kept text whose character
    3-gram Jaccard similarity (:func:`trigrams`, :func:`jaccard`) is at least ``threshold``, or None
    (the text is kept). Kept texts are the ones with None.

    Exact, and fast on thousands of texts sharing a template ("What does the guide say about ..."):
    prefix filtering (Chaudhuri et al. 2006; Bayardo et al. 2007). With the 3-grams of every text in
    one global order (rarest first), two sets with Jaccard >= t share at least ``ceil(t * |X|)``
    grams, so the first ``|X| - ceil(t * |X|) + 1`` grams of each in that order intersect: only pairs
    sharing one of those prefix grams are compared."""
    if not 0 < threshold <= 1:
        raise ConfigError(f"near-duplicate threshold: found {threshold}; expected a number in (0, 1]")
    grams = [trigrams(t) for t in texts]
    freq: dict[str, int] = {}
    for g in grams:
        for x in g:
            freq[x] = freq.get(x, 0) + 1
    postings: dict[str, list[int]] = {}
    out: list[tuple[int, float] | None] = []
    for i, g in enumerate(grams):
        order = sorted(g, key=lambda x: (freq[x], x))
        prefix = order[: len(order) - math.ceil(threshold * len(order) - 1e-9) + 1]
        seen: set[int] = set()
        match: tuple[int, float] | None = None
        for x in prefix:
            for j in postings.get(x, ()):
                if j in seen:
                    continue
                seen.add(j)
                sim = jaccard(g, grams[j])
                if sim >= threshold and (match is None or j < match[0]):
                    match = (j, sim)
        out.append(match)
        if match is None:
            for x in prefix:
                postings.setdefault(x, []).append(i)
    return out
