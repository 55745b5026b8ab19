"""Scheduling of model calls: batching/concurrency, on-disk cache, retries (see issue #5).

The plugin calls :func:`run_requests` once per model after collection, with every request of that
model in this process, and passes an :class:`EngineSettings` built from its options
(``--mirage-cache``, ``--mirage-cache-mode``, ``--mirage-concurrency``). Nothing here imports a
heavy library; adapters import theirs when they are created.
"""

from __future__ import annotations

from .cache import CACHE_FILE, AnswerCache, cache_key
from .faults import RetryPolicy, TransientError, parse_retry_after, redact
from .scheduler import CACHE_MODES, AsyncModelAdapter, EngineSettings, cache_file, run_requests
from .stats import EngineStats, summary_lines

__all__ = [
    "CACHE_FILE",
    "CACHE_MODES",
    "AnswerCache",
    "AsyncModelAdapter",
    "EngineSettings",
    "EngineStats",
    "RetryPolicy",
    "TransientError",
    "cache_file",
    "cache_key",
    "parse_retry_after",
    "redact",
    "run_requests",
    "summary_lines",
]
