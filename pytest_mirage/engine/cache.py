"""The persistent answer cache: one SQLite file in WAL mode, shared by all xdist workers.

A row's key is the SHA-256 of a canonical JSON document holding the adapter's cache identity
(kind, model, generation parameters), the full request (case, language, question, passages,
chat messages) and :data:`pytest_mirage.prompts.TEMPLATE_VERSION`. Rows hold only what the model
answered (text, parsed fields, token usage), never headers, keys or errors.

WAL mode lets readers proceed while one writer commits; every answer is committed on its own as soon
as it arrives, so a run that is killed keeps every answer it received, and a re-run calls the model
only for the rest.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import struct
import time
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError, MirageWarning
from ..models.base import Answer, ModelRequest
from ..prompts import TEMPLATE_VERSION

CACHE_FILE = "answers.sqlite3"
CACHE_FORMAT = 1  # bump when the key document or the stored value changes shape
_TABLE = f"answers_v{CACHE_FORMAT}"
_BUSY_TIMEOUT_MS = 60_000
_SECRET_SEGMENTS = frozenset({"apikey", "authorization", "password", "secret", "token", "bearer", "auth",
                              "credential", "credentials"})
_READ_CHUNK = 500


def request_document(identity: Mapping[str, Any], request: ModelRequest) -> dict[str, Any]:
    """Everything that determines an answer, as a JSON-able document: what :func:`cache_key` hashes
    (for inspection and tests; the key itself is computed field by field, see :class:`KeyBuilder`)."""
    case = request.case
    return {
        "format": CACHE_FORMAT,
        "template_version": TEMPLATE_VERSION,
        "adapter": dict(identity),
        "request": {
            "suite": case.suite,
            "case": case.id,
            "lang": case.lang,
            "question": case.question,
            "mode": request.mode,
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

    def key(self, request: ModelRequest) -> bytes:
        """The 32-byte SHA-256 digest (stored as a BLOB: a smaller index than hex text)."""
        case = request.case
        parts = [case.suite, case.id, case.lang, case.question, request.mode]
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
        segments = set(re.split(r"[^a-z0-9]+", key.lower()))
        if segments & _SECRET_SEGMENTS or {"api", "key"} <= segments:
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


def cache_key(identity: Mapping[str, Any], request: ModelRequest, scope: str = "request") -> str:
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
    for name in _TEXT_FIELDS:
        if getattr(answer, name) is not None:
            meta[name] = getattr(answer, name)
    for name in _LIST_FIELDS:
        items = getattr(answer, name)
        if items is not None and (items or name != "invalid_citations"):
            meta[name] = list(items)
    return answer.output, json.dumps(meta, ensure_ascii=False, sort_keys=True)


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
        elif name == "format_ok" and type(value) is bool:
            fields[name] = value
        else:
            raise ValueError(f"stored field {name!r} is not an answer field")
    usage["cached"] = True
    return Answer(case_id, model, output, usage=usage, **fields)


class AnswerCache:
    """Answers on disk, keyed by :func:`cache_key`. Safe with several processes on one file."""

    def __init__(self, directory: Path) -> None:
        self.path = Path(directory) / CACHE_FILE
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"--mirage-cache {directory}: cannot create the cache folder ({exc}); "
                              "choose a writable folder or use --mirage-cache-mode off") from exc
        self._conn = self._connect()

    def _connect(self) -> sqlite3.Connection:
        deadline = time.monotonic() + _BUSY_TIMEOUT_MS / 1000
        while True:
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
                locked = "locked" in str(exc) or "busy" in str(exc)
                if locked and time.monotonic() < deadline:
                    time.sleep(0.05)
                    continue
                raise ConfigError(f"answer cache {self.path}: cannot open it as an SQLite database ({exc}); "
                                  "delete the file (it only holds cached answers) or point --mirage-cache "
                                  "at another folder") from exc

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, tuple[str, str]]:
        """``(output, meta)`` of those ``keys`` that are present."""
        found: dict[bytes, tuple[str, str]] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), _READ_CHUNK):
            chunk = unique[start:start + _READ_CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self._conn.execute(f"SELECT key, output, meta FROM {_TABLE} WHERE key IN ({marks})", chunk)
            for key, output, meta in rows:
                found[key] = (output, meta)
        return found

    def put(self, key: bytes, kind: str, model: str, answer: Answer) -> None:
        """Store one answer and commit at once (a killed run keeps it)."""
        output, meta = encode_answer(answer)
        self._conn.execute(f"INSERT OR REPLACE INTO {_TABLE} (key, kind, model, case_id, output, meta, created) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?)", (key, kind, model, answer.case_id, output, meta, time.time()))

    def __len__(self) -> int:
        return int(self._conn.execute(f"SELECT COUNT(*) FROM {_TABLE}").fetchone()[0])

    def close(self) -> None:
        self._conn.close()


def warn_bad_entry(path: Path, case_id: str, exc: Exception) -> None:
    warnings.warn(MirageWarning(f"answer cache {path}: the entry for case {case_id!r} is unreadable ({exc}); "
                                "calling the model again"), stacklevel=3)
