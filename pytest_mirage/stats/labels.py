"""Human labels a suite carries for judge calibration (ARES §3.3): the file format and its loader.

A label says what a person judged one model's answer to one case to be on one metric. The file is
CSV (``labels.csv``, with a header) or JSON Lines (``labels.jsonl``), one label per row::

    case_id,model,metric,label,note
    hi-0001,openai:gpt-4o,support,1,
    hi-0002,openai:gpt-4o,support,0,cites the wrong passage

    {"case_id": "hi-0001", "model": "openai:gpt-4o", "metric": "support", "label": 1}

* ``case_id``: a case of the suite; ``model``: the model name as the report shows it;
  ``metric``: the metric (judge) the label calibrates; ``label``: 0 or 1 (a fraction in [0, 1] is
  accepted for graded labels, e.g. the mean of several annotators); optional ``note`` and
  ``annotator`` columns are kept but not used. No other column is allowed.
* One label per (case_id, model, metric): average several annotators before writing the file.
* A CSV line starting with ``#`` is a comment; blank lines are skipped.

Every problem is a :class:`LabelError` that starts with ``path:line:`` and says the fix.
"""

from __future__ import annotations

import csv
import io
import json
import math
import unicodedata
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import did_you_mean
from ._common import StatsError

REQUIRED = ("case_id", "model", "metric", "label")
OPTIONAL = ("note", "annotator")
COLUMNS = REQUIRED + OPTIONAL
MAX_BYTES = 32 * 1024 * 1024
MAX_FIELD_CHARS = 1000


class LabelError(StatsError):
    """A label file that cannot be used; the message starts with ``path:line:``."""

    def __init__(self, message: str, path: str, line: int | None = None) -> None:
        self.path = path
        self.line = line
        super().__init__(f"{path}:{line}: {message}" if line is not None else f"{path}: {message}")


@dataclass(frozen=True, slots=True)
class Label:
    case_id: str
    model: str
    metric: str
    label: float
    line: int = 0
    note: str = ""
    annotator: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.case_id, self.model, self.metric)


@dataclass(frozen=True, slots=True)
class LabelSet:
    """The labels of one file (``suite``: the suite it belongs to, when known)."""

    labels: tuple[Label, ...]
    path: str
    suite: str | None = None

    def __len__(self) -> int:
        return len(self.labels)

    def where(self, label: Label) -> str:
        return f"{self.path}:{label.line}"

    def for_metric(self, metric: str) -> tuple[Label, ...]:
        return tuple(lb for lb in self.labels if lb.metric == metric)

    @property
    def metrics(self) -> tuple[str, ...]:
        return tuple(sorted({lb.metric for lb in self.labels}))


def _text(value: Any, column: str, path: str, line: int, required: bool) -> str:
    if value is None or value == "":
        if required:
            raise LabelError(f"column {column!r} is empty; every label needs a {column}", path, line)
        return ""
    if not isinstance(value, str):
        raise LabelError(f"{column} is {value!r}; expected a string", path, line)
    if len(value) > MAX_FIELD_CHARS:
        raise LabelError(f"{column} is {len(value)} characters long; at most {MAX_FIELD_CHARS} are allowed",
                         path, line)
    bad = next((c for c in value if unicodedata.category(c) in ("Cc", "Cf", "Cs") and c not in "\t"), None)
    if bad is not None:
        raise LabelError(f"{column} {value[:40]!r} contains the control character U+{ord(bad):04X}; "
                         "ids must be printable text", path, line)
    return value.strip()


def _label_value(value: Any, path: str, line: int) -> float:
    if isinstance(value, bool):
        raise LabelError(f"label is {value!r}; write 1 or 0, not true/false", path, line)
    if isinstance(value, str):
        text = value.strip()
        try:
            v = float(text)
        except ValueError:
            hint = " (write 1 or 0)" if text.lower() in ("yes", "no", "true", "false", "y", "n") else ""
            raise LabelError(f"label {value!r} is not a number{hint}; expected 0 or 1, or a fraction in [0, 1]",
                             path, line) from None
    elif isinstance(value, int | float):
        try:
            v = float(value)
        except OverflowError:
            v = math.inf
    else:
        raise LabelError(f"label is {value!r}; expected 0 or 1, or a fraction in [0, 1]", path, line)
    if not math.isfinite(v) or not 0.0 <= v <= 1.0:
        raise LabelError(f"label {value!r} is outside [0, 1]; expected 0 or 1, or a fraction in [0, 1]", path, line)
    return v


def _row(fields: Mapping[str, Any], path: str, line: int) -> Label:
    return Label(case_id=_text(fields.get("case_id"), "case_id", path, line, True),
                 model=_text(fields.get("model"), "model", path, line, True),
                 metric=_text(fields.get("metric"), "metric", path, line, True),
                 label=_label_value(fields.get("label"), path, line), line=line,
                 note=_text(fields.get("note"), "note", path, line, False),
                 annotator=_text(fields.get("annotator"), "annotator", path, line, False))


def _check_columns(columns: Iterable[str], path: str, line: int) -> None:
    cols = list(columns)
    unknown = [c for c in cols if c not in COLUMNS]
    if unknown:
        c = unknown[0]
        raise LabelError(f"unknown column {c!r}{did_you_mean(c, COLUMNS)}; allowed columns: {', '.join(COLUMNS)}",
                         path, line)
    missing = [c for c in REQUIRED if c not in cols]
    if missing:
        raise LabelError(f"missing column{'s' * (len(missing) > 1)} {', '.join(missing)}; a label file needs "
                         f"the columns {', '.join(REQUIRED)} (header line first in a CSV file)", path, line)
    dup = sorted({c for c in cols if cols.count(c) > 1})
    if dup:
        raise LabelError(f"column {dup[0]!r} appears twice", path, line)


def _parse_csv(text: str, path: str) -> list[Label]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    header_line = 0
    out: list[Label] = []
    try:
        for row in reader:
            line = reader.line_num
            if not row or all(not c.strip() for c in row) or row[0].lstrip().startswith("#"):
                continue
            if header is None:
                header = [c.strip() for c in row]
                header_line = line
                _check_columns(header, path, line)
                continue
            if len(row) != len(header):
                raise LabelError(f"{len(row)} fields, but the header (line {header_line}) has {len(header)}: "
                                 f"{', '.join(header)}; quote fields that contain commas", path, line)
            out.append(_row(dict(zip(header, row, strict=True)), path, line))
    except csv.Error as exc:
        raise LabelError(f"not valid CSV ({exc})", path, reader.line_num) from None
    if header is None:
        raise LabelError(f"empty label file; expected a header line '{','.join(REQUIRED)}' and one row per label",
                         path)
    return out


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    dup = next((k for k in keys if keys.count(k) > 1), None)
    if dup is not None:
        raise ValueError(f"key {dup!r} appears twice in one object")
    return dict(pairs)


def _parse_jsonl(text: str, path: str) -> list[Label]:
    out: list[Label] = []
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw, object_pairs_hook=_no_duplicate_keys)
        except (ValueError, RecursionError) as exc:
            raise LabelError(f"not a JSON object ({exc}); each line holds one label object", path, line) from None
        if not isinstance(obj, dict):
            raise LabelError(f"found {type(obj).__name__}; each line must be an object with "
                             f"{', '.join(REQUIRED)}", path, line)
        _check_columns(obj.keys(), path, line)
        out.append(_row(obj, path, line))
    if not out:
        raise LabelError("empty label file; expected one JSON object per line", path)
    return out


def parse_labels(text: str, path: str, *, fmt: str) -> list[Label]:
    """Parse label text in ``fmt`` ("csv" or "jsonl"); ``path`` is used in messages."""
    if fmt == "csv":
        return _parse_csv(text.removeprefix("\ufeff"), path)
    if fmt == "jsonl":
        return _parse_jsonl(text.removeprefix("\ufeff"), path)
    raise StatsError(f"label format {fmt!r}; expected 'csv' or 'jsonl'")


def load_labels(path: str | Path, *, suite: str | None = None, cases: Collection[str] | None = None,
                models: Collection[str] | None = None, metrics: Collection[str] | None = None) -> LabelSet:
    """Read and validate a label file (``.csv`` or ``.jsonl``).

    ``cases``, ``models``, ``metrics``: when given, a label naming anything else is an error with
    a did-you-mean (a typo in a case id must not silently drop the label). Duplicate
    (case_id, model, metric) rows are an error naming both lines.
    """
    p = Path(path)
    where = str(p)
    fmt = {".csv": "csv", ".jsonl": "jsonl"}.get(p.suffix.lower())
    if fmt is None:
        raise LabelError(f"unknown label file type {p.suffix!r}; name it labels.csv or labels.jsonl", where)
    try:
        if not p.is_file():
            raise LabelError("no such file (or not a regular file)", where)
        size = p.stat().st_size
        if size > MAX_BYTES:
            raise LabelError(f"{size} bytes; a label file may hold at most {MAX_BYTES} bytes", where)
        raw = p.read_bytes()
    except OSError as exc:
        raise LabelError(f"cannot read the label file ({exc.strerror or exc})", where) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise LabelError(f"not UTF-8 (byte 0x{raw[exc.start]:02x}); save the file as UTF-8", where, line) from None
    labels = parse_labels(text, where, fmt=fmt)
    checks = [(None if known is None else frozenset(known), what)
              for known, what in ((cases, "case"), (models, "model"), (metrics, "metric"))]
    seen: dict[tuple[str, str, str], int] = {}
    for lb in labels:
        if lb.key in seen:
            raise LabelError(f"duplicate label for case {lb.case_id!r}, model {lb.model!r}, metric {lb.metric!r} "
                             f"(first on line {seen[lb.key]}); keep one label per case, model and metric "
                             "(average several annotators first)", where, lb.line)
        seen[lb.key] = lb.line
        for value, (known, what) in zip((lb.case_id, lb.model, lb.metric), checks, strict=True):
            if known is not None and value not in known:
                raise LabelError(f"unknown {what} {value!r}{did_you_mean(value, known)}", where, lb.line)
    return LabelSet(tuple(labels), where, suite)
