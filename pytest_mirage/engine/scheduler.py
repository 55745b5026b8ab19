"""Dispatch of one model's requests: cache lookup, then concurrent (API) or batched (local) calls
with retries, writing each answer to the cache as it arrives."""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import random
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from ..errors import ConfigError, ModelError, did_you_mean
from ..models.base import Answer, ModelAdapter, ModelRequest
from .cache import (
    CACHE_SCOPES,
    AnswerCache,
    KeyBuilder,
    check_identity,
    decode_answer,
    warn_bad_entry,
)
from .faults import RetryPolicy, TransientError
from .progress import ProgressBar
from .stats import EngineStats

CACHE_MODES = ("use", "refresh", "off", "replay-only")
T = TypeVar("T")


@runtime_checkable
class AsyncModelAdapter(Protocol):
    """An adapter that answers one request at a time, asynchronously (API clients).

    The engine runs ``answer_async`` under its concurrency limit and retries it on
    :class:`~pytest_mirage.engine.faults.TransientError`; any other
    :class:`~pytest_mirage.errors.ModelError` ends the case. ``aclose`` releases what was bound to
    the event loop of one :func:`run_requests` call (HTTP connections). ``concurrency`` (None: the
    session's ``--mirage-concurrency``) is the model's own limit.
    """

    name: str
    concurrency: int | None

    async def answer_async(self, request: ModelRequest) -> Answer: ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True, slots=True)
class EngineSettings:
    """How :func:`run_requests` runs. The plugin builds one per session from its options.

    ``cache_dir``: folder of the SQLite answer cache (None: no cache). ``cache_mode``: ``use``
    (read, call the misses, store), ``refresh`` (call everything, store), ``off`` (no cache) or
    ``replay-only`` (never call a cacheable model; a miss is an error naming the case).
    ``concurrency``: simultaneous requests for API adapters unless the model sets its own.
    ``batch_size``: requests per ``answer_batch`` call for local engines (None: all in one call,
    unless the adapter sets its own). ``retry``: backoff policy. ``call_timeout``: seconds one
    async call may take before it counts as a (retryable) timeout (None: the adapter's own).
    ``progress``: show a progress bar on stderr when at least ``progress_min`` requests go to a
    model. ``stats``: an accumulator the engine adds its counts to.
    """

    cache_dir: Path | None = None
    cache_mode: str = "use"  # use | refresh | off | replay-only
    concurrency: int = 16
    progress: bool = False
    progress_min: int = 20
    batch_size: int | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    call_timeout: float | None = None
    stats: EngineStats | None = None

    def __post_init__(self) -> None:
        if self.cache_mode not in CACHE_MODES:
            raise ConfigError(f"--mirage-cache-mode: found {self.cache_mode!r}; expected one of "
                              f"{', '.join(CACHE_MODES)}.{did_you_mean(self.cache_mode, CACHE_MODES)}")
        if not isinstance(self.concurrency, int) or self.concurrency < 1:
            raise ConfigError(f"--mirage-concurrency: found {self.concurrency!r}; expected an integer >= 1")
        if self.batch_size is not None and self.batch_size < 1:
            raise ConfigError(f"batch size: found {self.batch_size!r}; expected an integer >= 1 or None")
        if self.cache_mode == "replay-only" and self.cache_dir is None:
            raise ConfigError("--mirage-cache-mode replay-only needs a cache folder (--mirage-cache DIR); "
                              "none is configured")


def case_ref(request: ModelRequest) -> str:
    return f"{request.case.suite}/{request.case.id}"


def with_case(request: ModelRequest, adapter: ModelAdapter, exc: BaseException, suffix: str = "") -> ModelError:
    """A :class:`ModelError` whose message names the case and the model (once)."""
    message = str(exc) or type(exc).__name__
    ref = case_ref(request)
    names_case = ref in message or f"case {request.case.id}" in message
    if isinstance(exc, ModelError) and not isinstance(exc, TransientError) and names_case and not suffix:
        return exc
    if not isinstance(exc, ModelError):
        message = f"{type(exc).__name__}: {message}"
    if not names_case:
        message = f"case {ref}: model {adapter.name}: {message}"
    err = ModelError(message + suffix)
    err.__cause__ = exc
    return err


class _Run:
    """State of one run_requests call."""

    def __init__(self, adapter: ModelAdapter, requests: Sequence[ModelRequest], settings: EngineSettings,
                 stats: EngineStats) -> None:
        self.adapter = adapter
        self.requests = requests
        self.settings = settings
        self.stats = stats
        self.results: list[Answer | Exception | None] = [None] * len(requests)
        self.rng = random.Random()
        self.cache: AnswerCache | None = None
        self.keys: list[bytes | None] = [None] * len(requests)
        self.groups: dict[bytes, list[int]] = {}
        self.kind = "?"
        self.model_label = adapter.name
        self.progress: ProgressBar | None = None

    # ------------------------------------------------------------------ cache
    def open_cache(self) -> list[int]:
        """Look up the cache; return the indices (one per distinct request) still to answer."""
        mode = self.settings.cache_mode
        identity = self.adapter.cache_identity() if mode != "off" else None
        if identity is None or self.settings.cache_dir is None:
            # uncacheable adapters (cheap, deterministic local systems, replays) always run
            return list(range(len(self.requests)))
        check_identity(self.adapter.name, identity)
        self.kind = str(identity.get("kind", type(self.adapter).__name__))
        self.model_label = str(identity.get("model", self.adapter.name))
        self.cache = AnswerCache(self.settings.cache_dir)
        scope = getattr(self.adapter, "cache_scope", "request")
        if scope not in CACHE_SCOPES:
            raise ConfigError(f"model {self.adapter.name!r}: cache_scope {scope!r}; expected one of "
                              f"{', '.join(CACHE_SCOPES)}")
        key_of = KeyBuilder(identity, scope).key
        keys = [key_of(req) for req in self.requests]
        self.keys = list(keys)
        groups = self.groups
        todo: list[int] = []
        for i, key in enumerate(keys):
            group = groups.get(key)
            if group is None:
                groups[key] = [i]
                todo.append(i)
            else:
                group.append(i)  # the same request twice: answered once
        if mode == "refresh":
            return todo
        stored = self.cache.get_many(list(groups))
        missing: list[int] = []
        name = self.adapter.name
        for i in todo:
            key = keys[i]
            row = stored.get(key)
            req = self.requests[i]
            if row is not None:
                try:
                    answer = decode_answer(row[0], row[1], req.case.id, name)
                except ValueError as exc:
                    if mode == "replay-only":
                        self.finish(i, ModelError(
                            f"case {case_ref(req)}: model {name}: the cached answer in "
                            f"{self.cache.path} is unreadable ({exc}); replay-only mode cannot call the "
                            "model: re-record it with --mirage-cache-mode refresh"), store=False)
                        continue
                    warn_bad_entry(self.cache.path, req.case.id, exc)
                else:
                    group = groups[key]
                    self.stats.hits += len(group)
                    if len(group) == 1:
                        self.results[i] = answer  # the common case, without finish()'s bookkeeping
                    else:
                        self.finish(i, answer, store=False)
                    continue
            if mode == "replay-only":
                self.stats.misses += len(groups[key])
                self.finish(i, ModelError(
                    f"case {case_ref(req)}: model {name}: no cached answer in {self.cache.path} "
                    "and --mirage-cache-mode replay-only never calls a model; record it first with "
                    "--mirage-cache-mode use (or refresh)"), store=False)
                continue
            missing.append(i)
        return missing

    def finish(self, i: int, result: Answer | Exception, store: bool = True) -> None:
        """Record the result of request ``i`` (and of its duplicates); store answers in the cache."""
        req = self.requests[i]
        if isinstance(result, Answer):
            if result.case_id != req.case.id:
                raise RuntimeError(f"model {self.adapter.name!r} answered case {result.case_id!r} for request "
                                   f"{case_ref(req)!r}: adapters must keep the order of their requests")
            if store:
                self.stats.add_usage(result.usage)
                key = self.keys[i]
                if self.cache is not None and key is not None:
                    self.cache.put(key, self.kind, self.model_label, result)
        elif isinstance(result, Exception):
            result = with_case(req, self.adapter, result)
        else:
            raise TypeError(f"model {self.adapter.name!r} returned {type(result).__name__} for case "
                            f"{case_ref(req)}; expected an Answer or an exception instance")
        key = self.keys[i]
        targets = self.groups.get(key, [i]) if key is not None else [i]
        for j in targets:
            self.results[j] = result if j == i or not isinstance(result, Answer) else \
                replace(result, case_id=self.requests[j].case.id)
            if isinstance(result, Exception):
                self.stats.errors += 1
        if store and self.progress is not None:
            self.progress.advance(len(targets))

    # ------------------------------------------------------------------ calls
    async def run_async(self, adapter: AsyncModelAdapter, todo: list[int]) -> None:
        limit = adapter.concurrency or self.settings.concurrency
        sem = asyncio.Semaphore(limit)
        policy = self.settings.retry

        async def one(i: int) -> None:
            req = self.requests[i]
            attempt = 0
            while True:
                async with sem:
                    self.stats.calls += 1
                    try:
                        call = adapter.answer_async(req)
                        timeout = self.settings.call_timeout
                        answer = await (asyncio.wait_for(call, timeout) if timeout else call)
                    except TransientError as exc:
                        error: TransientError = exc
                    except TimeoutError as exc:
                        error = TransientError(f"no answer within {self.settings.call_timeout}s (call_timeout)")
                        error.__cause__ = exc
                    except Exception as exc:  # reported on the case, never lost
                        self.finish(i, exc)
                        return
                    else:
                        self.finish(i, answer)
                        return
                delay = policy.delay(attempt, error.retry_after, self.rng)
                if delay is None:
                    self.finish(i, with_case(req, self.adapter, error, _gave_up(attempt, error, policy)))
                    return
                attempt += 1
                self.stats.retries += 1
                await asyncio.sleep(delay)  # outside the semaphore: other requests go on meanwhile

        try:
            await asyncio.gather(*(one(i) for i in todo))
        finally:
            await adapter.aclose()

    def run_batches(self, todo: list[int]) -> None:
        size = getattr(self.adapter, "batch_size", None) or self.settings.batch_size or max(1, len(todo))
        policy = self.settings.retry
        for start in range(0, len(todo), size):
            pending = todo[start:start + size]
            attempt = 0
            while pending:
                batch = [self.requests[i] for i in pending]
                self.stats.calls += len(batch)
                out = self.adapter.answer_batch(batch)
                if len(out) != len(batch):
                    raise RuntimeError(f"model {self.adapter.name!r} returned {len(out)} answers for "
                                       f"{len(batch)} requests; answer_batch must return one per request")
                retry: list[tuple[int, TransientError]] = []
                for i, result in zip(pending, out, strict=True):
                    if isinstance(result, TransientError):
                        retry.append((i, result))
                    else:
                        self.finish(i, result)
                if not retry:
                    break
                delays = [policy.delay(attempt, e.retry_after, self.rng) for _, e in retry]
                pending = []
                for (i, exc), delay in zip(retry, delays, strict=True):
                    if delay is None:
                        self.finish(i, with_case(self.requests[i], self.adapter, exc,
                                                 _gave_up(attempt, exc, policy)))
                    else:
                        pending.append(i)
                if pending:
                    attempt += 1
                    self.stats.retries += len(pending)
                    time.sleep(max(d for d in delays if d is not None))


def _gave_up(attempt: int, exc: TransientError, policy: RetryPolicy) -> str:
    if exc.retry_after is not None and exc.retry_after > policy.max_wait_s:
        return (f" (the server asked to retry after {exc.retry_after:g}s, more than the {policy.max_wait_s:g}s "
                f"the engine waits; gave up after {attempt + 1} attempt(s))")
    return f" (gave up after {attempt + 1} attempt(s))"


def _is_async_adapter(adapter: ModelAdapter) -> bool:
    method = getattr(adapter, "answer_async", None)
    return method is not None and inspect.iscoroutinefunction(method) and hasattr(adapter, "aclose")


def _run_coroutine(factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to completion, also when this thread already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(factory())
    # called from inside a running loop (e.g. an async test): use a private loop in a worker thread
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="mirage-engine") as pool:
        return pool.submit(lambda: asyncio.run(factory())).result()


def run_requests(adapter: ModelAdapter, requests: Sequence[ModelRequest],
                 settings: EngineSettings | None = None) -> list[Answer | Exception]:
    """Answer all ``requests`` with ``adapter``; one entry (Answer or exception) per request, in order.

    Cached answers are returned without a call (their ``usage`` has ``cached: True``); the rest go
    to the model, concurrently (async adapters, up to the concurrency limit) or in batches (local
    engines), with retries on transient faults. Each answer is written to the cache as it arrives.
    Failures come back as :class:`~pytest_mirage.errors.ModelError` instances naming the case, the
    model and the reason; they are never cached and never scored.
    """
    settings = settings or EngineSettings()
    stats = settings.stats if settings.stats is not None else EngineStats()
    if not requests:
        return []
    started = time.perf_counter()
    run = _Run(adapter, requests, settings, stats)
    stats.requests += len(requests)
    try:
        todo = run.open_cache()
        if todo:
            stats.misses += sum(len(run.groups.get(run.keys[i] or b"", [i])) for i in todo)
            run.progress = ProgressBar(len(todo), f"mirage {adapter.name}",
                                       settings.progress and len(todo) >= settings.progress_min)
            try:
                if _is_async_adapter(adapter):
                    async_adapter: Any = adapter
                    _run_coroutine(lambda: run.run_async(async_adapter, todo))
                else:
                    run.run_batches(todo)
            finally:
                run.progress.close()
    finally:
        if run.cache is not None:
            run.cache.close()
        stats.wall_s += time.perf_counter() - started
    missing = [case_ref(requests[i]) for i, r in enumerate(run.results) if r is None]
    if missing:
        raise RuntimeError(f"engine bug: no result for {len(missing)} request(s), e.g. {missing[:3]}")
    return [r for r in run.results if r is not None]


def cache_file(settings: EngineSettings) -> Path | None:
    """Where the answer cache of these settings lives (None when there is none)."""
    from .cache import CACHE_FILE

    if settings.cache_dir is None or settings.cache_mode == "off":
        return None
    return Path(settings.cache_dir) / CACHE_FILE


__all__ = ["CACHE_MODES", "AsyncModelAdapter", "EngineSettings", "cache_file", "run_requests"]
