"""Counters of one session's model traffic, mergeable across xdist workers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

MAX_PROBLEMS = 20  # problems kept per session (each is one line; a broken disk repeats itself)


@dataclass(slots=True)
class EngineStats:
    """What the engine did: cache hits and misses, model calls (retries and failures included),
    tokens spent, and the problems it met (a cache it could not write, a model it stopped calling).

    A mutable accumulator (not a value): the plugin creates one per process, passes it in
    :class:`~pytest_mirage.engine.EngineSettings` and sends :meth:`to_dict` through
    ``config.workeroutput`` so the controller can :meth:`merge` the workers' counts.
    """

    requests: int = 0  # requests given to run_requests
    hits: int = 0  # answered from the cache
    misses: int = 0  # not in the cache (or cache off/refresh): sent to the model
    calls: int = 0  # model calls made, retries and failed calls included (a batch of n counts n)
    retries: int = 0  # calls that were retries of a failed attempt
    failed_calls: int = 0  # calls that failed (retried or not)
    errors: int = 0  # requests that ended as an error
    truncated: int = 0  # answers cut at the output limit (kept, flagged Answer.truncated)
    skipped: int = 0  # requests not sent because the model kept failing the same way
    prompt_tokens: int = 0  # tokens of the calls made in this run, failed ones included when the
    completion_tokens: int = 0  # server reported them (cache hits cost none)
    wall_s: float = 0.0
    problems: list[str] = field(default_factory=list)

    def add_usage(self, usage: Mapping[str, Any] | None) -> None:
        if not usage:
            return
        for name in ("prompt_tokens", "completion_tokens"):
            value = usage.get(name)
            if isinstance(value, int) and not isinstance(value, bool):
                setattr(self, name, getattr(self, name) + value)

    def problem(self, message: str) -> None:
        """Record a session-level problem once (the plugin prints them in the summary)."""
        if message not in self.problems and len(self.problems) < MAX_PROBLEMS:
            self.problems.append(message)

    def merge(self, other: EngineStats | Mapping[str, Any]) -> None:
        data = other.to_dict() if isinstance(other, EngineStats) else other
        for f in fields(self):
            value = data.get(f.name, 0)
            if f.name == "problems":
                for message in value if isinstance(value, list) else ():
                    if isinstance(message, str):
                        self.problem(message)
            elif isinstance(value, int | float) and not isinstance(value, bool):
                setattr(self, f.name, getattr(self, f.name) + value)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        out["problems"] = list(self.problems)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EngineStats:
        stats = cls()
        stats.merge(data)
        return stats


def summary_lines(stats: EngineStats, cache_path: str | None = None) -> list[str]:
    """Terminal summary lines (the plugin prints them in ``pytest_terminal_summary``)."""
    if stats.requests == 0 and not stats.problems:
        return []
    line = (f"mirage engine: {stats.requests} requests, {stats.hits} cache hits, {stats.misses} misses, "
            f"{stats.calls} model calls ({stats.retries} retries), {stats.failed_calls} failed, "
            f"{stats.errors} errors")
    if stats.truncated:
        line += f", {stats.truncated} cut at max_tokens"
    if stats.skipped:
        line += f", {stats.skipped} not sent"
    line += (f", tokens {stats.prompt_tokens} prompt + {stats.completion_tokens} completion, "
             f"{stats.wall_s:.1f}s")
    lines = [line]
    if cache_path:
        lines.append(f"mirage cache: {cache_path}")
    lines += [f"mirage problem: {p}" for p in stats.problems]
    return lines
