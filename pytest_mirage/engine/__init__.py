"""Scheduling of model calls: batching/concurrency, on-disk cache, retries, progress.

The plugin calls :func:`run_requests` once per model with every request of that model in this
process (suite cases as :class:`~pytest_mirage.models.base.ModelRequest`, judge and other bare
prompts as :class:`~pytest_mirage.models.base.PromptRequest`), and passes an
:class:`EngineSettings` built from its options (``--mirage-cache``, ``--mirage-cache-mode``,
``--mirage-concurrency``). Nothing here imports a heavy library; adapters import theirs when they
are created. Option values are parsed by :mod:`pytest_mirage.models.options`.
"""

from __future__ import annotations

from ..models.base import AsyncModelAdapter, BatchModelAdapter, EngineRequest, PromptRequest
from ..models.faults import RetryPolicy, TransientError, parse_retry_after, redact
from ..models.options import parse_choice, parse_flag, parse_int, parse_number
from .cache import CACHE_FILE, CACHE_FORMAT, AnswerCache, CacheUnavailable, cache_key
from .counters import EngineStats, judge_work_lines, summary_lines
from .progress import PROGRESS_STYLES, ProgressReporter
from .scheduler import (
    BREAKER_AFTER,
    CACHE_MODES,
    DEFAULT_CONCURRENCY,
    EngineSettings,
    cache_file,
    run_requests,
)

__all__ = [
    "BREAKER_AFTER",
    "CACHE_FILE",
    "CACHE_FORMAT",
    "CACHE_MODES",
    "DEFAULT_CONCURRENCY",
    "PROGRESS_STYLES",
    "AnswerCache",
    "AsyncModelAdapter",
    "BatchModelAdapter",
    "CacheUnavailable",
    "EngineRequest",
    "EngineSettings",
    "EngineStats",
    "ProgressReporter",
    "PromptRequest",
    "RetryPolicy",
    "TransientError",
    "cache_file",
    "cache_key",
    "judge_work_lines",
    "parse_choice",
    "parse_flag",
    "parse_int",
    "parse_number",
    "parse_retry_after",
    "redact",
    "run_requests",
    "summary_lines",
]
