"""Scheduling of model calls: batching/concurrency, on-disk cache, retries (see issue #5)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..models.base import Answer, ModelAdapter, ModelRequest


@dataclass(frozen=True, slots=True)
class EngineSettings:
    cache_dir: Path | None = None
    cache_mode: str = "use"  # use | refresh | off | replay-only
    concurrency: int = 16
    progress: bool = False


def run_requests(adapter: ModelAdapter, requests: Sequence[ModelRequest],
                 settings: EngineSettings | None = None) -> list[Answer | Exception]:
    """Answer all ``requests`` with ``adapter``; one entry (Answer or exception) per request, in order."""
    if not requests:
        return []
    out = adapter.answer_batch(list(requests))
    if len(out) != len(requests):
        raise RuntimeError(f"adapter {adapter.name!r} returned {len(out)} answers for {len(requests)} requests")
    return out
