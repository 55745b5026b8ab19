"""The persistent answer cache: one SQLite file in WAL mode, shared by all xdist workers.

A row's key is the SHA-256 of the adapter's cache identity (kind, model, generation parameters,
the endpoint for API models), the request's :attr:`~pytest_mirage.models.base.EngineRequest.cache_fields`
(suite, case, language, question, mode; or a prompt's label and language), its chat messages (and
its passages for adapters that read them) and :data:`pytest_mirage.prompts.TEMPLATE_VERSION`. Rows hold
only what the model answered (text, parsed fields, token usage, whether it was cut at the output
limit), never headers, keys or errors.

WAL mode lets readers proceed while one writer commits; every answer is committed on its own as soon
as it arrives, so a run that is killed keeps every answer it received, and a re-run calls the model
only for the rest. A cache that cannot be written (read-only folder, full disk, I/O error) is read
read-only where possible; the engine keeps the answers in memory and reports the problem once.
"""

from __future__ import annotations

import errno
import hashlib
import json
import shutil
import sqlite3
import struct
import time
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..errors import ConfigError, MirageWarning
from ..models.base import Answer, EngineRequest
from ..models.credentials import secret_name
from ..prompts import TEMPLATE_VERSION

CACHE_FILE = "answers.sqlite3"
CACHE_FORMAT = 2  # bump when the key document or the stored value changes shape
_TABLE = f"answers_v{CACHE_FORMAT}"
_BUSY_TIMEOUT_MS = 60_000
_READ_CHUNK = 500


def request_document(identity: Mapping[str, Any], request: EngineRequest) -> dict[str, Any]:
    """Everything that determines an answer, as a JSON-able document: what :func:`cache_key` hashes
    (for inspection and tests; the key itself is computed field by field, see :class:`KeyBuilder`)."""
    return {
        "format": CACHE_FORMAT,
        "template_version": TEMPLATE_VERSION,
        "adapter": dict(identity),
        "request": {
            "fields": list(request.cache_fields),
            "passages": [[p.id, p.title, p.text] for p in request.passages],
            "messages": request.messages,
        },
    }


CACHE_SCOPES = ("request", "messages")


class KeyBuilder:
    """Cache keys for one adapter identity: SHA-256 over the fields of :func:`request_document`.

    ``scope`` says what of the request the adapter reads: ``request`` (everything: a Python
    pipeline gets the passages themselves) or ``messages`` (chat models see only the rendered
    messages, which already hold the passages as the prompt shows them, so hashing the passages
    again would only cost time). Adapters declare it with a ``cache_scope`` attribute.

    The fields are concatenated behind a binary header of their count and lengths (so no two
    different field sequences give the same bytes) instead of JSON-encoding the whole document: prompts are
    kilobytes of passage text, and a warm run of thousands of cases is mostly key computation.
    """

    def __init__(self, identity: Mapping[str, Any], scope: str = "request") -> None:
        if scope not in CACHE_SCOPES:
            raise ValueError(f"cache scope {scope!r}; expected one of {CACHE_SCOPES}")
        self._passages = scope == "request"
        self._prefix = hashlib.sha256()
        head = [f"pytest-mirage answer cache {CACHE_FORMAT}", TEMPLATE_VERSION, scope,
                json.dumps(identity, sort_keys=True, ensure_ascii=False, separators=(",", ":"))]
        self._update(self._prefix, head)

    @staticmethod
    def _update(h: Any, parts: list[str]) -> None:
        h.update(struct.pack(f"<I{len(parts)}I", len(parts), *map(len, parts)))
        h.update("".join(parts).encode("utf-8", "surrogatepass"))

    def key(self, request: EngineRequest) -> bytes:
        """The 32-byte SHA-256 digest (stored as a BLOB: a smaller index than hex text)."""
        parts = list(request.cache_fields)
        if self._passages:
            for p in request.passages:
                # a marker keeps a missing title apart from an empty one
                parts += (p.id, "\x00" if p.title is None else "\x01" + p.title, p.text)
        for message in request.messages:
            role, content = message.get("role"), message.get("content")
            if len(message) == 2 and type(role) is str and type(content) is str:
                parts += ("m", role, content)
            else:  # multimodal content or extra fields: canonical JSON
                parts += ("j", json.dumps(message, sort_keys=True, ensure_ascii=False))
        h = self._prefix.copy()
        self._update(h, parts)
        return h.digest()


def check_identity(adapter_name: str, identity: Mapping[str, Any]) -> None:
    """Refuse identities that would write something secret-looking or non-JSON into the cache."""
    for key in _walk_keys(identity):
        # by whole name segments: "max_tokens" and "tokenizer" are parameters, "api_key" is a secret
        if secret_name(key):
            raise ConfigError(f"model {adapter_name!r}: its cache identity has a key {key!r} that looks like "
                              "a secret; adapters must leave API keys and auth headers out of "
                              "cache_identity() (name the environment variable instead)")
    try:
        json.dumps(identity, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"model {adapter_name!r}: cache_identity() must be JSON-serializable ({exc})") from exc


def _walk_keys(obj: Any) -> Iterable[str]:
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            yield str(k)
            yield from _walk_keys(v)
    elif isinstance(obj, list | tuple):
        for v in obj:
            yield from _walk_keys(v)


def cache_key(identity: Mapping[str, Any], request: EngineRequest, scope: str = "request") -> str:
    """The cache key of one request as hex (see :class:`KeyBuilder`; build one per run for many)."""
    return KeyBuilder(identity, scope).key(request).hex()


_LIST_FIELDS = ("citations", "retrieved", "contexts", "invalid_citations")
_TEXT_FIELDS = ("answer", "reason")


def encode_answer(answer: Answer) -> tuple[str, str]:
    """``(output, meta)``: the raw text in its own column (no JSON escaping of long outputs) and a
    small JSON object with the usage and whichever optional fields are set."""
    meta: dict[str, Any] = {"usage": {k: v for k, v in answer.usage.items() if k != "cached"}}
    if not answer.format_ok:
        meta["format_ok"] = False
    if answer.truncated:
        meta["truncated"] = True
    for name in _TEXT_FIELDS:
        if getattr(answer, name) is not None:
            meta[name] = getattr(answer, name)
    for name in _LIST_FIELDS:
        items = getattr(answer, name)
        if items is not None and (items or name != "invalid_citations"):
            meta[name] = list(items)
    if answer.logprobs is not None:
        meta["logprobs"] = [[tok, lp, [list(alt) for alt in top]] for tok, lp, top in answer.logprobs]
    return answer.output, json.dumps(meta, ensure_ascii=False, sort_keys=True)


def _logprob_rows(value: Any) -> tuple[tuple[str, float, tuple[tuple[str, float], ...]], ...]:
    def number(x: Any) -> bool:
        return type(x) in (int, float)

    rows = []
    if type(value) is not list:
        raise ValueError("stored 'logprobs' is not a list")
    for row in value:
        if (type(row) is not list or len(row) != 3 or type(row[0]) is not str or not number(row[1])
                or type(row[2]) is not list
                or not all(type(a) is list and len(a) == 2 and type(a[0]) is str and number(a[1]) for a in row[2])):
            raise ValueError("stored 'logprobs' rows are not [token, logprob, [[token, logprob], ...]]")
        rows.append((row[0], float(row[1]), tuple((a[0], float(a[1])) for a in row[2])))
    return tuple(rows)


_raw_decode = json.JSONDecoder().raw_decode


def decode_answer(output: str, meta_json: str, case_id: str, model: str) -> Answer:
    """Rebuild an :class:`Answer`; raises ``ValueError`` when the stored row is not one."""
    meta, end = _raw_decode(meta_json)  # we write it without surrounding whitespace
    if end != len(meta_json) or type(meta) is not dict or type(output) is not str:
        raise ValueError("stored row is not an answer (text output and a JSON object of fields)")
    usage: dict[str, Any] = {}
    fields: dict[str, Any] = {}
    for name, value in meta.items():  # only the fields that were set: most answers are plain text
        if name == "usage":
            if type(value) is not dict:
                raise ValueError("stored 'usage' is not an object")
            usage = value
        elif name in _LIST_FIELDS:
            if type(value) is not list or not all(type(x) is str for x in value):
                raise ValueError(f"stored {name!r} is not a list of strings")
            fields[name] = tuple(value)
        elif name in _TEXT_FIELDS:
            if type(value) is not str:
                raise ValueError(f"stored {name!r} is not a string")
            fields[name] = value
        elif name in ("format_ok", "truncated") and type(value) is bool:
            fields[name] = value
        elif name == "logprobs":
            fields[name] = _logprob_rows(value)
        else:
            raise ValueError(f"stored field {name!r} is not an answer field")
    usage["cached"] = True
    return Answer(case_id, model, output, usage=usage, **fields)


# What went wrong with the cache file, from SQLite's error code (or the OS error), and what to do.
_ADVICE = {
    "full": "free space on that disk (or lift the file size limit), or point --mirage-cache at another folder",
    "readonly": "make the folder and the file writable for this user, or point --mirage-cache at a writable "
                "folder; --mirage-cache-mode replay-only only reads",
    "io": "the disk or file system reported an I/O error: check the device and the mount, or point "
          "--mirage-cache at another folder",
    "busy": "another process holds the cache locked for too long: let it finish, or point --mirage-cache at "
            "another folder",
    "corrupt": "delete the file (it only holds cached answers) or point --mirage-cache at another folder",
    "other": "point --mirage-cache at another folder, or use --mirage-cache-mode off",
}
_ERRNO_KIND = {errno.ENOSPC: "full", errno.EDQUOT: "full", errno.EFBIG: "full", errno.EACCES: "readonly",
               errno.EPERM: "readonly", errno.EROFS: "readonly", errno.EIO: "io"}


class CacheUnavailable(Exception):
    """The cache file cannot be opened, read or written; ``kind`` is a key of the advice table."""

    def __init__(self, path: Path, action: str, kind: str, detail: str) -> None:
        self.path = path
        self.kind = kind
        self.action = action
        self.detail = detail
        super().__init__(f"answer cache {path}: cannot {action} ({detail}); {_ADVICE[kind]}")


def classify(exc: BaseException) -> tuple[str, str]:
    """``(kind, detail)`` of a cache failure: ``detail`` names SQLite's error code (``SQLITE_FULL``)
    or the errno (``ENOSPC``) and the message."""
    if isinstance(exc, OSError) and not isinstance(exc, sqlite3.Error):
        code = exc.errno or 0
        name = errno.errorcode.get(code, "OSError")
        return _ERRNO_KIND.get(code, "other"), f"{name}: {exc.strerror or exc}"
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    message = str(exc)
    lowered = message.lower()
    if name.startswith("SQLITE_FULL") or "disk is full" in lowered:
        kind, name = "full", name or "SQLITE_FULL"
        detail = f"{name}: {message} (ENOSPC: no space left on the device, or a file size limit)"
        return kind, detail
    if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")) or \
            "readonly" in lowered or "unable to open" in lowered:
        kind = "readonly"
    elif name.startswith("SQLITE_IOERR") or "disk i/o error" in lowered:
        kind = "io"
    elif name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")) or "not a database" in lowered or "malformed" in lowered:
        kind = "corrupt"
    elif name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in lowered:
        kind = "busy"
    else:
        kind = "other"
    if not name:  # errors raised without SQLite's code: name the code their message stands for
        name = {"readonly": "SQLITE_CANTOPEN" if "unable to open" in lowered else "SQLITE_READONLY",
                "io": "SQLITE_IOERR", "corrupt": "SQLITE_NOTADB", "busy": "SQLITE_BUSY"}.get(kind, type(exc).__name__)
    return kind, f"{name}: {message}"


class AnswerCache:
    """Answers on disk, keyed by :func:`cache_key`. Safe with several processes on one file.

    ``readonly``: open without ever writing (replay, or a folder this process cannot write). Failures
    raise :class:`CacheUnavailable` (the engine then goes on without writing), except a file that is
    not an SQLite database, which is a :class:`~pytest_mirage.errors.ConfigError`.
    """

    def __init__(self, directory: Path, readonly: bool = False) -> None:
        self.path = Path(directory) / CACHE_FILE
        self.readonly = readonly
        self.note: str | None = None  # a caveat of a read-only open, for the session's problems
        if readonly:
            self._conn = self._connect_readonly()
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            kind, detail = classify(exc)
            raise CacheUnavailable(self.path, "create its folder", kind, detail) from None
        self._conn = self._connect()

    def _fail(self, action: str, exc: BaseException) -> Exception:
        kind, detail = classify(exc)
        if kind in ("full", "io"):
            detail += _space_facts(self.path.parent)
        if kind == "corrupt":
            return ConfigError(f"answer cache {self.path}: cannot open it as an SQLite database ({detail}); "
                               f"{_ADVICE['corrupt']}")
        return CacheUnavailable(self.path, action, kind, detail)

    def _connect(self) -> sqlite3.Connection:
        deadline = time.monotonic() + _BUSY_TIMEOUT_MS / 1000
        while True:
            conn: sqlite3.Connection | None = None
            try:
                conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                       check_same_thread=False)
                conn.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
                conn.execute("PRAGMA journal_mode=WAL")
                # NORMAL in WAL mode: a commit survives a killed process (not a power cut), at no fsync cost
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute(f"CREATE TABLE IF NOT EXISTS {_TABLE} (key BLOB PRIMARY KEY, kind TEXT NOT NULL, "
                             "model TEXT NOT NULL, case_id TEXT NOT NULL, output TEXT NOT NULL, "
                             "meta TEXT NOT NULL, created REAL NOT NULL) WITHOUT ROWID")
                return conn
            except sqlite3.DatabaseError as exc:
                if conn is not None:
                    conn.close()
                if classify(exc)[0] == "busy" and time.monotonic() < deadline:
                    time.sleep(0.05)
                    continue
                raise self._fail("open it for writing", exc) from None

    def _connect_readonly(self) -> sqlite3.Connection:
        """A connection that never writes: ``mode=ro`` (sees committed answers still in the WAL file),
        else ``immutable=1``, which needs no ``-shm`` file and so works in a folder nobody may write."""
        if not self.path.is_file():
            raise _Missing(self.path)
        uri = f"file:{quote(str(self.path.resolve()))}"
        last: BaseException | None = None
        for query in ("mode=ro", "immutable=1"):
            conn = sqlite3.connect(f"{uri}?{query}", uri=True, timeout=_BUSY_TIMEOUT_MS / 1000,
                                   isolation_level=None, check_same_thread=False)
            try:
                conn.execute(f"SELECT 1 FROM {_TABLE} LIMIT 1").fetchall()
            except sqlite3.DatabaseError as exc:
                conn.close()
                last = exc
                if "no such table" in str(exc):
                    raise _Missing(self.path) from None
                if classify(exc)[0] in ("readonly", "io") and query == "mode=ro":
                    continue
                raise self._fail("read it", exc) from None
            if query == "immutable=1":
                wal = self.path.with_name(self.path.name + "-wal")
                if wal.is_file() and wal.stat().st_size > 0:
                    self.note = (f"answer cache {self.path}: read without locking (its folder is not writable); "
                                 f"answers still in {wal.name} are not seen: open the cache once with write "
                                 "access to merge them")
            return conn
        assert last is not None
        raise self._fail("read it", last) from None

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, tuple[str, str]]:
        """``(output, meta)`` of those ``keys`` that are present."""
        found: dict[bytes, tuple[str, str]] = {}
        unique = list(dict.fromkeys(keys))
        try:
            for start in range(0, len(unique), _READ_CHUNK):
                chunk = unique[start:start + _READ_CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(f"SELECT key, output, meta FROM {_TABLE} WHERE key IN ({marks})", chunk)
                for key, output, meta in rows:
                    found[key] = (output, meta)
        except sqlite3.DatabaseError as exc:
            raise self._fail("read it", exc) from None
        return found

    def put(self, key: bytes, kind: str, model: str, answer: Answer) -> None:
        """Store one answer and commit at once (a killed run keeps it)."""
        output, meta = encode_answer(answer)
        try:
            self._conn.execute(f"INSERT OR REPLACE INTO {_TABLE} (key, kind, model, case_id, output, meta, created) "
                               "VALUES (?, ?, ?, ?, ?, ?, ?)",
                               (key, kind, model, answer.case_id, output, meta, time.time()))
        except sqlite3.DatabaseError as exc:
            raise self._fail("write to it", exc) from None

    def __len__(self) -> int:
        return int(self._conn.execute(f"SELECT COUNT(*) FROM {_TABLE}").fetchone()[0])

    def merge_from(self, other: AnswerCache) -> tuple[int, int, int]:
        """Copy the answers of ``other`` that this cache lacks (one transaction per chunk); a key
        already here keeps its answer. Returns (added, already here and the same, already here with
        another answer: a model that answers the same request differently, the first kept)."""
        added = same = differ = 0
        cols = "key, kind, model, case_id, output, meta, created"
        try:
            rows = other._conn.execute(f"SELECT {cols} FROM {_TABLE} ORDER BY key")
            while True:
                chunk = rows.fetchmany(_READ_CHUNK)
                if not chunk:
                    break
                have = self.get_many([r[0] for r in chunk])
                new = [r for r in chunk if r[0] not in have]
                for r in chunk:
                    if r[0] in have:
                        same += have[r[0]] == (r[4], r[5])
                        differ += have[r[0]] != (r[4], r[5])
                if new:
                    self._conn.execute("BEGIN")
                    self._conn.executemany(f"INSERT OR IGNORE INTO {_TABLE} ({cols}) VALUES (?, ?, ?, ?, ?, ?, ?)", new)
                    self._conn.execute("COMMIT")
                    added += len(new)
        except sqlite3.DatabaseError as exc:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise self._fail("merge another cache into it", exc) from None
        return added, same, differ

    def close(self) -> None:
        try:
            self._conn.close()
        except sqlite3.DatabaseError:  # closing checkpoints the WAL, which fails on a full disk
            pass


def merge_caches(out: Path, sources: Sequence[Path]) -> list[str]:
    """``python -m pytest_mirage merge-cache OUT IN...``: the answers of the shards' caches (folders
    given as ``--mirage-cache``, or their ``answers.sqlite3``) in one cache folder ``out`` for the
    next run; one line per source. A source that is not a cache is a ConfigError naming it."""

    def folder(p: Path) -> Path:
        return p.parent if p.name == CACHE_FILE else p

    target = folder(out)
    if any(folder(src).resolve() == target.resolve() for src in sources):
        raise ConfigError(f"merge-cache: {out} is also one of the caches to merge; write to another folder")
    try:
        into = AnswerCache(target)
    except CacheUnavailable as exc:
        raise ConfigError(f"merge-cache: {exc}") from None
    lines = []
    try:
        for src in sources:
            try:
                other = AnswerCache(folder(src), readonly=True)
            except _Missing:
                raise ConfigError(f"merge-cache: {src}: no answer cache there (expected a --mirage-cache folder "
                                  f"holding {CACHE_FILE}, or that file)") from None
            except CacheUnavailable as exc:
                raise ConfigError(f"merge-cache: {exc}") from None
            try:
                added, same, differ = into.merge_from(other)
            except CacheUnavailable as exc:
                raise ConfigError(f"merge-cache: {exc}") from None
            finally:
                other.close()
            lines.append(f"{src}: {added} answers added, {same} already there"
                         + (f", {differ} already there with another answer (the first kept)" if differ else ""))
        lines.append(f"{into.path}: {len(into)} answers")
    finally:
        into.close()
    return lines


def _space_facts(folder: Path) -> str:
    """What the disk and the process limits say (SQLite reports a failed write without its errno)."""
    facts = []
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        free = None
    if free is not None and free < 16 * 1024 * 1024:
        facts.append(f"{free} bytes free on that file system")
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
        if soft != resource.RLIM_INFINITY:
            facts.append(f"a file size limit (ulimit -f) of {soft} bytes applies")
    except (ImportError, OSError, ValueError):
        pass
    return f"; {', '.join(facts)}" if facts else ""


class _Missing(CacheUnavailable):
    """A read-only open of a cache that holds no answers yet (no file or no table): every lookup misses."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, "read it", "other", "it holds no answers yet")


def warn_bad_entry(path: Path, case_id: str, exc: Exception) -> None:
    warnings.warn(MirageWarning(f"answer cache {path}: the entry for case {case_id!r} is unreadable ({exc}); "
                                "calling the model again"), stacklevel=3)


__all__ = [
    "CACHE_FILE",
    "CACHE_FORMAT",
    "AnswerCache",
    "CacheUnavailable",
    "KeyBuilder",
    "cache_key",
    "check_identity",
    "classify",
    "decode_answer",
    "encode_answer",
    "merge_caches",
    "request_document",
]
