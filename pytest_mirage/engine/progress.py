"""A progress bar for long generation runs (rich, on stderr, removed when done)."""

from __future__ import annotations

from typing import Any


class ProgressBar:
    """``advance()`` once per finished request; a no-op object when disabled."""

    def __init__(self, total: int, label: str, enabled: bool) -> None:
        self._progress: Any = None
        self._task: Any = None
        if not enabled or total <= 0:
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

        self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  TimeRemainingColumn(), console=Console(stderr=True), transient=True)
        self._progress.start()
        self._task = self._progress.add_task(label, total=total)

    def advance(self, n: int = 1) -> None:
        if self._progress is not None:
            self._progress.advance(self._task, n)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
