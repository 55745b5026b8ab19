"""Checks of single values read from suite files: ids and strings that must be safe to print and cite."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import Any

MAX_ID_CHARS = 200  # ids end up in node ids, terminal lines and report tables
MAX_DEPTH = 32  # nesting of a JSON line (``meta`` is free-form); deeper is a broken or hostile file

# Passage and chunk ids are cited as [id] or [id1, id2]: these characters would split or end a citation.
_UNCITABLE = re.compile(r"[\s\[\],;，、،；［］]")
# C0 controls and DEL: the fast path for ASCII ids
_ASCII_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# invisible or unprintable: controls, format characters (bidi overrides, zero-width), surrogates,
# line and paragraph separators
_ID_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
# strings of any field: NUL ends C strings (fastText, SQLite text), ESC starts terminal control
# sequences, a lone surrogate cannot be encoded as UTF-8 and crashes the first metric that encodes it
_BAD_TEXT = re.compile("[\x00\x1b\ud800-\udfff]")
_CONTROL_NAMES = {0x00: "NUL", 0x1B: "ESC", 0x7F: "DEL", 0x09: "TAB", 0x0A: "LF", 0x0D: "CR", 0x85: "NEL"}


def describe_char(ch: str) -> str:
    """``U+202E (RIGHT-TO-LEFT OVERRIDE)`` for messages (the character itself may be invisible)."""
    code = ord(ch)
    if 0xD800 <= code <= 0xDFFF:
        return f"U+{code:04X} (a lone surrogate: an unpaired \\u escape)"
    name = _CONTROL_NAMES.get(code) or unicodedata.name(ch, "") or "a control character"
    return f"U+{code:04X} ({name})"


def id_problem(value: str, *, citable: bool = False, what: str = "ids") -> str | None:
    """Why ``value`` cannot be an id, or None.

    Every id: at most ``MAX_ID_CHARS`` characters, no control, format (bidi overrides, zero-width)
    or surrogate characters. ``citable`` ids (passages, chunks) also have no whitespace, brackets,
    commas or semicolons, because answers cite them as ``[id]`` or ``[id1, id2]``.
    """
    if len(value) > MAX_ID_CHARS:
        return f"{len(value)} characters long; {what} have at most {MAX_ID_CHARS} characters"
    if value.isascii():
        m = _ASCII_CONTROL.search(value)
        if m is not None:
            return (f"contains {describe_char(m.group())} at position {m.start() + 1}; {what} must be visible "
                    "text (no control characters)")
    else:
        for i, ch in enumerate(value):
            if unicodedata.category(ch) in _ID_CATEGORIES:
                return (f"contains {describe_char(ch)} at position {i + 1}; {what} must be visible text "
                        "(no control, bidi-override, zero-width or other invisible characters)")
    if citable and (bad := _UNCITABLE.search(value)):
        return (f"{value!r} contains {bad.group()!r}; {what} are cited as [id] or [id1, id2], so they cannot "
                "contain whitespace, brackets, commas or semicolons")
    return None


# The ASCII characters id_problem() rejects in citable ids: _ASCII_CONTROL, ASCII whitespace (\s of
# ASCII is [\t\n\v\f\r\x1c-\x1f ], all but the space already controls) and [ ] , ; (the other
# characters of _UNCITABLE are not ASCII).
_ASCII_BAD_CITABLE_ID = re.compile(r"[\x00-\x1f\x7f\s\[\],;]")


def is_plain_id(value: str, *, citable: bool = False) -> bool:
    """A fast, partial test: True only when ``id_problem(value, citable=citable)`` is None.

    True for ASCII ids without the characters id_problem() rejects; False for every other id
    (a caller then runs id_problem(), which decides and explains)."""
    return (len(value) <= MAX_ID_CHARS and value.isascii()
            and (_ASCII_BAD_CITABLE_ID if citable else _ASCII_CONTROL).search(value) is None)


def text_problem(value: str) -> str | None:
    """Why a string of a suite file is unusable (NUL, ESC, a lone surrogate), or None."""
    m = _BAD_TEXT.search(value)
    if m is None:
        return None
    return f"contains {describe_char(m.group())} at position {m.start() + 1}"


def _children(node: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield (f"{path}.{k}" if path else str(k)), k
            yield (f"{path}.{k}" if path else str(k)), v
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield f"{path}[{i}]", v


def value_problem(obj: Any) -> str | None:
    """The first problem of a parsed JSON value: nesting deeper than ``MAX_DEPTH`` or a bad string.

    Iterative (the line was parsed, so its depth is below the recursion limit, but a recursive walk
    on top of the caller's stack could still overflow)."""
    stack: list[tuple[str, Any, int]] = [("", obj, 0)]
    while stack:
        path, node, depth = stack.pop()
        if isinstance(node, str):
            if (err := text_problem(node)) is not None:
                return f"field '{path or '(line)'}' {err}" if path else err
            continue
        if isinstance(node, (dict, list)):
            if depth >= MAX_DEPTH:
                return (f"field '{path}' is nested more than {MAX_DEPTH} levels deep; expected flat case "
                        "fields (meta may hold a few levels)")
            for child_path, child in _children(node, path):
                stack.append((child_path, child, depth + 1))
    return None
