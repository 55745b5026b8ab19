"""Counters of one session's model traffic, mergeable across xdist workers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any


@dataclass(slots=True)
class EngineStats:
    """What the engine did: cache hits and misses, model calls (retries included), tokens spent.

    A mutable accumulator (not a value): the plugin creates one per process, passes it in
    :class:`~pytest_mirage.engine.EngineSettings` and sends :meth:`to_dict` through
    ``config.workeroutput`` so the controller can :meth:`merge` the workers' counts.
    """

    requests: int = 0  # requests given to run_requests
    hits: int = 0  # answered from the cache
    misses: int = 0  # not in the cache (or cache off/refresh): sent to the model
    calls: int = 0  # model calls made, retries included (a batch of n counts n)
    retries: int = 0  # calls that were retries of a failed attempt
    errors: int = 0  # requests that ended as an error
    prompt_tokens: int = 0  # tokens of the calls made in this run (cache hits cost none)
    completion_tokens: int = 0
    wall_s: float = 0.0

    def add_usage(self, usage: Mapping[str, Any]) -> None:
        for name in ("prompt_tokens", "completion_tokens"):
            value = usage.get(name)
            if isinstance(value, int) and not isinstance(value, bool):
                setattr(self, name, getattr(self, name) + value)

    def merge(self, other: EngineStats | Mapping[str, Any]) -> None:
        data = other.to_dict() if isinstance(other, EngineStats) else other
        for f in fields(self):
            value = data.get(f.name, 0)
            if isinstance(value, int | float) and not isinstance(value, bool):
                setattr(self, f.name, getattr(self, f.name) + value)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EngineStats:
        stats = cls()
        stats.merge(data)
        return stats


def summary_lines(stats: EngineStats, cache_path: str | None = None) -> list[str]:
    """Terminal summary lines (the plugin prints them in ``pytest_terminal_summary``)."""
    if stats.requests == 0:
        return []
    line = (f"mirage engine: {stats.requests} requests, {stats.hits} cache hits, {stats.misses} misses, "
            f"{stats.calls} model calls ({stats.retries} retries), {stats.errors} errors, "
            f"tokens {stats.prompt_tokens} prompt + {stats.completion_tokens} completion, "
            f"{stats.wall_s:.1f}s")
    lines = [line]
    if cache_path:
        lines.append(f"mirage cache: {cache_path}")
    return lines
