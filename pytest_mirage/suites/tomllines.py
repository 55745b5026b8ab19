"""Line numbers of the keys of a TOML document (``tomllib`` parses values but keeps no positions).

:func:`key_lines` scans a document that ``tomllib`` has already accepted and maps every key path
to the line where it is defined: table headers (``[gates]`` -> ``("gates",)``), keys inside tables,
dotted keys (``suite.name = ...`` -> ``("suite", "name")``), quoted keys with escapes, keys of
inline tables (``gates = { "a" = ">= 1" }``), arrays of tables (``[[x]]`` -> ``("x", 0)``) and
array items. Multi-line strings and comments are skipped, so text that looks like a key inside them
is never taken for one.
"""

from __future__ import annotations

import bisect
import re
import tomllib

Path_ = tuple[str | int, ...]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_SCALAR = re.compile(r"[^,\]\}\n#]*")


class _Scanner:
    def __init__(self, text: str) -> None:
        self.t = text
        self.i = 0
        self.newlines = [m.start() for m in re.finditer("\n", text)]
        self.lines: dict[Path_, int] = {}

    # ---------------------------------------------------------------- positions
    def line_at(self, pos: int) -> int:
        return bisect.bisect_left(self.newlines, pos) + 1

    def record(self, path: Path_, pos: int) -> None:
        line = self.line_at(pos)
        for n in range(1, len(path) + 1):
            self.lines.setdefault(path[:n], line)

    # ---------------------------------------------------------------- lexing
    def peek(self, s: str) -> bool:
        return self.t.startswith(s, self.i)

    def skip_blank(self) -> None:
        """Spaces and tabs."""
        while self.i < len(self.t) and self.t[self.i] in " \t":
            self.i += 1

    def skip_space(self) -> None:
        """Whitespace, newlines and comments."""
        while self.i < len(self.t):
            ch = self.t[self.i]
            if ch in " \t\r\n":
                self.i += 1
            elif ch == "#":
                end = self.t.find("\n", self.i)
                self.i = len(self.t) if end < 0 else end
            else:
                break

    def basic_string_end(self, start: int) -> int:
        """Index after the closing quote of a single-line basic string opened at ``start``."""
        j = start + 1
        while self.t[j] != '"':
            j += 2 if self.t[j] == "\\" else 1
        return j + 1

    def key(self) -> list[str]:
        parts: list[str] = []
        while True:
            self.skip_blank()
            if self.peek('"'):
                end = self.basic_string_end(self.i)
                parts.append(str(tomllib.loads(f"k = {self.t[self.i:end]}")["k"]))
                self.i = end
            elif self.peek("'"):
                end = self.t.index("'", self.i + 1)
                parts.append(self.t[self.i + 1:end])
                self.i = end + 1
            else:
                m = _BARE_KEY.match(self.t, self.i)
                if m is None:
                    raise ValueError(f"no key at {self.i}")
                parts.append(m.group())
                self.i = m.end()
            self.skip_blank()
            if self.peek("."):
                self.i += 1
                continue
            return parts

    def expect(self, s: str) -> None:
        self.skip_blank()
        if not self.peek(s):
            raise ValueError(f"expected {s!r} at {self.i}")
        self.i += len(s)

    def value(self, path: Path_) -> None:
        self.skip_blank()
        if self.peek('"""') or self.peek("'''"):
            quote = self.t[self.i:self.i + 3]
            j = self.i + 3
            while not self.t.startswith(quote, j):
                j += 2 if quote == '"""' and self.t[j] == "\\" else 1
            j += 3
            extra = 0
            while extra < 2 and j < len(self.t) and self.t[j] == quote[0]:
                j += 1  # up to two quotes may end the content right before the delimiter
                extra += 1
            self.i = j
        elif self.peek('"'):
            self.i = self.basic_string_end(self.i)
        elif self.peek("'"):
            self.i = self.t.index("'", self.i + 1) + 1
        elif self.peek("["):
            self.i += 1
            n = 0
            while True:
                self.skip_space()
                if self.peek("]"):
                    self.i += 1
                    return
                self.record((*path, n), self.i)
                self.value((*path, n))
                n += 1
                self.skip_space()
                if self.peek(","):
                    self.i += 1
        elif self.peek("{"):
            self.i += 1
            while True:
                self.skip_space()
                if self.peek("}"):
                    self.i += 1
                    return
                start = self.i
                sub = (*path, *self.key())
                self.record(sub, start)
                self.expect("=")
                self.value(sub)
                self.skip_space()
                if self.peek(","):
                    self.i += 1
        else:
            m = _SCALAR.match(self.t, self.i)
            assert m is not None  # the pattern matches the empty string
            self.i = m.end()

    def document(self) -> None:
        table: Path_ = ()
        arrays: dict[Path_, int] = {}
        while True:
            self.skip_space()
            if self.i >= len(self.t):
                return
            start = self.i
            if self.peek("[["):
                self.i += 2
                name = tuple(self.key())
                self.expect("]]")
                index = arrays.get(name, 0)
                arrays[name] = index + 1
                table = (*name, index)
                self.record(table, start)
            elif self.peek("["):
                self.i += 1
                table = tuple(self.key())
                self.expect("]")
                self.record(table, start)
            else:
                path = (*table, *self.key())
                self.record(path, start)
                self.expect("=")
                self.value(path)


def key_lines(text: str) -> dict[Path_, int]:
    """Key path -> 1-based line of its definition, for a document that ``tomllib`` accepts.

    A path is defined where it first appears (a table's line is its header, or the first dotted key
    that creates it). Should the scanner meet something it does not understand, the lines found up
    to there are returned; callers fall back to the nearest known parent.
    """
    scanner = _Scanner(text)
    try:
        scanner.document()
    except (ValueError, IndexError, tomllib.TOMLDecodeError):
        pass
    return scanner.lines


def line_of(lines: dict[Path_, int], path: Path_, default: int = 1) -> int:
    """The line of ``path``, else of its nearest parent that has one, else ``default``."""
    for n in range(len(path), 0, -1):
        line = lines.get(path[:n])
        if line is not None:
            return line
    return default
