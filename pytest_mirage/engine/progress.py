"""Progress of long model runs: a rich bar on a terminal, plain lines at a bounded rate elsewhere (CI).

Each display names what it is doing (``model answers``, ``judge calls``) and for which model.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

PROGRESS_STYLES = ("auto", "bar", "lines")


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def _stderr_line(text: str) -> None:
    stream = sys.stderr
    stream.write(text + "\n")
    stream.flush()


class ProgressReporter:
    """``advance(n, errors)`` once per finished request; nothing is shown when disabled.

    ``style``: ``bar`` (rich, on stderr, removed when done), ``lines`` (one plain line at the start,
    then at most one every ``interval_s`` seconds, and one at the end: done/total, errors, rate,
    ETA) or ``auto`` (a bar when stderr is a terminal, else lines). ``write`` receives the plain
    lines (default: stderr); the plugin may route them through pytest's terminal writer.
    ``status`` (set by the engine for a model whose capacity it manages) says the model's current
    limit, e.g. ``2 in flight, 9.5 requests/s``; the bar and the lines show it.
    """

    def __init__(self, total: int, task: str, model: str, enabled: bool, style: str = "auto",
                 interval_s: float = 10.0, write: Callable[[str], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total = total
        self.label = f"mirage {task} [{model}]"
        self.done = 0
        self.errors = 0
        self._clock = clock
        self._started = clock()
        self._last = self._started
        self._interval = interval_s
        self._write = write or _stderr_line
        self._bar: Any = None
        self._task: Any = None
        self._lines = False
        self.status: Callable[[], str] | None = None
        if not enabled or total <= 0:
            return
        if style == "auto":
            style = "bar" if sys.stderr.isatty() else "lines"
        if style == "lines":
            self._lines = True
            self._write(f"{self.label}: {total} to go")
            return
        # imported here: rich is only needed when a bar is actually shown
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                             TextColumn("{task.fields[errors]}"), TextColumn("{task.fields[limit]}"),
                             TimeRemainingColumn(), console=Console(stderr=True), transient=True)
        self._bar.start()
        self._task = self._bar.add_task(self.label, total=total, errors="", limit="")

    def line(self, final: bool = False) -> str:
        """The plain progress line as it stands now."""
        elapsed = self._clock() - self._started
        text = f"{self.label}: {self.done}/{self.total} done, {self.errors} errors"
        if self.status is not None:
            text += f", limit {self.status()}"
        if final:
            return f"{text}, {_duration(elapsed)}"
        rate = self.done / elapsed if elapsed > 0 else 0.0
        eta = f"ETA {_duration((self.total - self.done) / rate)}" if rate > 0 else "ETA unknown"
        return f"{text}, {rate:.2f}/s, {eta}"

    def advance(self, n: int = 1, errors: int = 0) -> None:
        self.done += n
        self.errors += errors
        if self._bar is not None:
            shown = f"{self.errors} errors" if self.errors else ""
            limit = f"limit {self.status()}" if self.status is not None else ""
            self._bar.update(self._task, advance=n, errors=shown, limit=limit)
        elif self._lines:
            now = self._clock()
            if now - self._last >= self._interval and self.done < self.total:
                self._last = now
                self._write(self.line())

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        if self._lines:
            self._lines = False
            self._write(self.line(final=True))


ProgressBar = ProgressReporter  # the earlier name


__all__ = ["PROGRESS_STYLES", "ProgressBar", "ProgressReporter"]
