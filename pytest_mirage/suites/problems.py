"""Collecting validation problems, so a user sees every problem of a suite at once."""

from __future__ import annotations

import re

from ..errors import SuiteError

MAX_REPORTED = 25
_WHERE_RE = re.compile(r"^(?P<path>.*):(?P<line>\d+)$", re.S)


class Problems:
    """Problems of one suite, each ``where: message`` with ``where`` = ``path:line`` (or a spec).

    Reported together by :meth:`raise_if_any` as one :class:`SuiteError`, one problem per line,
    file by file (in the order the files were first named) and by line within a file.
    """

    def __init__(self) -> None:
        self.items: list[tuple[str, int, str]] = []  # (path or where, line or 0, "where: message")
        self.count = 0

    def add(self, where: str, message: str) -> None:
        self.count += 1
        if len(self.items) < MAX_REPORTED:
            m = _WHERE_RE.match(where)
            path, line = (m["path"], int(m["line"])) if m else (where, 0)
            self.items.append((path, line, f"{where}: {message}"))

    def messages(self) -> list[str]:
        """The problems in report order."""
        first: dict[str, int] = {}
        for path, _, _ in self.items:
            first.setdefault(path, len(first))
        ordered = sorted(enumerate(self.items), key=lambda x: (first[x[1][0]], x[1][1], x[0]))
        return [text for _, (_, _, text) in ordered]

    def raise_if_any(self) -> None:
        if not self.items:
            return
        more = self.count - len(self.items)
        tail = f"\n... and {more} more problems" if more else ""
        raise SuiteError("\n".join(self.messages()) + tail)
