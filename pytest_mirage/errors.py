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


def for_judge_model(exc: ConfigError, where: str) -> ConfigError:
    """A model-spec error raised for a judge's model, told as the judge's (the adapters word their
    errors for ``--mirage-model``): ``--mirage-model 'x': unknown option`` becomes
    ``WHERE: judge model 'x': unknown option``."""
    msg, prefix = str(exc), "--mirage-model "
    return ConfigError(f"{where}: judge model {msg[len(prefix):]}" if msg.startswith(prefix) else f"{where}: {msg}")


class ModelError(MirageError):
    """A model (adapter) failed to answer a case."""


class FormatRejected(ModelError):
    """The model server refused a request's ``response_format`` (structured output): an older
    llama.cpp or TGI server, a gateway that does not know the field. LLM judges with
    ``structured=auto`` send the prompts again without it."""


class NotCached(ModelError):
    """``--mirage-cache-mode replay-only`` found no cached answer for a request."""


def caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    """Whether ``exc`` or an exception in its ``__cause__`` chain is a ``kind`` (the engine wraps
    adapter errors in a :class:`ModelError` naming the request and keeps the original as cause)."""
    seen: BaseException | None = exc
    for _ in range(10):
        if seen is None:
            return False
        if isinstance(seen, kind):
            return True
        seen = seen.__cause__
    return False


class MetricError(MirageError):
    """A metric could not be computed because of bad input (never scored as 0)."""


class StatsError(MirageError, ValueError):
    """Input to a statistic that cannot be used as given (the message says what and the fix)."""


class MirageWarning(UserWarning):
    """Non-fatal problems: unknown keys, thin languages, ..."""


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """Return ``" Did you mean: x?"`` for the closest choice, or ``""``."""
    close = difflib.get_close_matches(name, list(choices), n=3, cutoff=0.6)
    return f" Did you mean: {', '.join(close)}?" if close else ""
