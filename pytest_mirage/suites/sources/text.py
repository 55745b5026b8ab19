"""Line reading shared by the source formats (plain or gzipped text files)."""

from __future__ import annotations

import gzip
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

from ...errors import MirageWarning
from ..checks import text_problem
from ..problems import Problems

MAX_LISTED_IDS = 10  # ids named in one message; the rest are counted


def warn(message: str) -> None:
    warnings.warn(MirageWarning(message), stacklevel=3)


def sample(ids: Sequence[str]) -> str:
    """``a, b, c and 7 more``."""
    shown = ", ".join(ids[:MAX_LISTED_IDS])
    more = f" and {len(ids) - MAX_LISTED_IDS} more" if len(ids) > MAX_LISTED_IDS else ""
    return shown + more


def iter_lines(path: Path, problems: Problems, read_as: Path | None = None) -> Iterator[tuple[int, bytes]]:
    """``(line_number, raw_line)`` of a text file, transparently gunzipping ``*.gz``.

    ``read_as``: the path to open (the resolved path a confinement check allowed); messages name ``path``."""
    opened = read_as or path
    try:
        fh = gzip.open(opened, "rb") if path.name.endswith(".gz") else opened.open("rb")
    except OSError as exc:
        problems.add(f"{path}:1", f"cannot read file: {exc.strerror or exc}")
        return
    try:
        with fh:
            yield from enumerate(fh, start=1)
    except (OSError, EOFError) as exc:  # a truncated or corrupt gzip file
        problems.add(f"{path}:1", f"cannot read file: {exc}; expected a readable (gzip) text file")


def decode(raw: bytes, where: str, problems: Problems) -> str | None:
    """A UTF-8 line without its end of line; problems (bad bytes, NUL, ESC) are recorded."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.add(where, f"not valid UTF-8 (byte {exc.start}: {raw[exc.start:exc.start + 4]!r}); "
                     "save the file as UTF-8")
        return None
    if (err := text_problem(text)) is not None:
        problems.add(where, f"the line {err}")
        return None
    return text.lstrip("\ufeff").rstrip("\r\n")
