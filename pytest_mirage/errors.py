"""Error and warning types. Every message says what, where, what was expected and the fix."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class MirageError(Exception):
    """Base class of all pytest-mirage errors."""


class SuiteError(MirageError):
    """A suite file is malformed. The message starts with ``path:line:``."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None) -> None:
        self.path = path
        self.line = line
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(where + message)


class ConfigError(MirageError):
    """A command-line option, ini key or manifest setting is invalid."""


class ModelError(MirageError):
    """A model (adapter) failed to answer a case."""


class MetricError(MirageError):
    """A metric could not be computed because of bad input (never scored as 0)."""


class MirageWarning(UserWarning):
    """Non-fatal problems: unknown keys, thin languages, ..."""


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """Return ``" Did you mean: x?"`` for the closest choice, or ``""``."""
    close = difflib.get_close_matches(name, list(choices), n=3, cutoff=0.6)
    return f" Did you mean: {', '.join(close)}?" if close else ""
