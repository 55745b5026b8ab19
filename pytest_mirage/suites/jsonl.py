"""Reading JSONL files of suites strictly: one JSON object per line, UTF-8, no duplicate keys.

Every problem is recorded as ``path:line: ...``; nothing here raises on bad input, and no input
(deep nesting, lone surrogates, NUL bytes, other encodings) ends in a traceback.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .checks import MAX_DEPTH, value_problem
from .problems import Problems

UTF8_BOM = b"\xef\xbb\xbf"
# byte-order marks of encodings that are not UTF-8 (UTF-32 first: its LE mark starts with UTF-16's)
OTHER_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"),
              (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))


# In a line that parsed, a NUL, an ESC or a lone surrogate can only come from a \u escape (JSON has no
# raw control characters in strings, and valid UTF-8 has no surrogates): lines without such an escape
# skip the walk over their strings. (Surrogate pairs match too; the walk then finds nothing.)
_SUSPECT_ESCAPE = re.compile(r"\\u(?:00(?:00|1[bB])|[dD][89a-fA-F][0-9a-fA-F]{2})")


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def other_encoding(raw: bytes) -> str | None:
    """``UTF-16 (byte-order mark ff fe)`` for a non-UTF-8 encoding announced by a byte-order mark, or None."""
    for bom, name in OTHER_BOMS:
        if raw.startswith(bom):
            return f"{name} (byte-order mark {bom.hex(' ')})"
    return None


def decode_line(line: str, where: str, problems: Problems, expected: str = "one JSON object per line"
                ) -> dict[str, Any] | None:
    """Parse one JSON line into an object; problems are recorded, None returned."""
    try:
        obj = json.loads(line, object_pairs_hook=_no_duplicates)
    except _DuplicateKey as exc:
        problems.add(where, f"duplicate key {exc.key!r:.60} in one object (JSON would keep only the last "
                     "value); give each key once")
        return None
    except json.JSONDecodeError as exc:
        problems.add(where, f"invalid JSON at column {exc.colno}: {exc.msg}; expected {expected}")
        return None
    except RecursionError:
        problems.add(where, f"JSON nested too deeply to read; expected {expected} with flat fields")
        return None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        problems.add(where, f"unreadable JSON value: {str(exc)[:80]}; expected {expected}")
        return None
    if not isinstance(obj, dict):
        kind = {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}.get(type(obj), "null")
        problems.add(where, f"found a JSON {kind}, expected {expected.replace('one ', 'a ', 1)}")
        return None
    deep = line.count("[") + line.count("{") > MAX_DEPTH
    if (deep or _SUSPECT_ESCAPE.search(line)) and (err := value_problem(obj)) is not None:
        problems.add(where, err)
        return None
    return obj


def iter_jsonl(path: Path, problems: Problems, read_as: Path | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line; problems are recorded, not raised.

    ``read_as``: the path to open (the resolved path a confinement check allowed); messages name ``path``."""
    try:
        raw = (read_as or path).read_bytes()
    except OSError as exc:
        problems.add(f"{path}:1", f"cannot read file: {exc.strerror or exc}")
        return
    if (enc := other_encoding(raw)) is not None:
        problems.add(f"{path}:1", f"the file is {enc}; save it as UTF-8")
        return
    if raw.startswith(UTF8_BOM):
        raw = raw[3:]  # a UTF-8 byte-order mark (Windows editors) is not part of the first line
    for lineno, bline in enumerate(raw.split(b"\n"), start=1):
        if not bline.strip():
            continue
        where = f"{path}:{lineno}"
        nul = bline.find(b"\x00")
        if nul >= 0:
            problems.add(where, f"NUL byte at column {nul + 1}; the file is binary or not UTF-8 (save it as "
                         "UTF-8 text)")
            continue
        try:
            line = bline.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.add(where, f"not valid UTF-8 (byte {exc.start}: {bline[exc.start:exc.start + 4]!r}); "
                         "save the file as UTF-8")
            continue
        obj = decode_line(line.removeprefix("\ufeff"), where, problems)
        if obj is not None:
            yield lineno, obj
