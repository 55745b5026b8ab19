"""Dispatch of one model's requests: cache lookup, then concurrent (API) or batched (local) calls
with retries, writing each answer to the cache as it arrives."""

from __future__ import annotations

import asyncio
import functools
import inspect
import itertools
import random
import threading
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from .. import defaults
from ..defaults import CACHE_MODES
from ..errors import ConfigError, FormatRejected, ModelError, NotCached, caused_by, did_you_mean
from ..models.base import Answer, AsyncModelAdapter, EngineRequest, ModelAdapter
from ..models.faults import RetryPolicy, TransientError, excerpt, response_headers_sink
from ..models.options import CapacityBounds
from .cache import (
    CACHE_SCOPES,
    AnswerCache,
    CacheUnavailable,
    KeyBuilder,
    _Missing,
    check_identity,
    decode_answer,
    warn_bad_entry,
)
from .capacity import MAX_TOTAL_WAIT_S, CapacityController, Gate, load_learned, save_learned
from .counters import EngineStats
from .progress import PROGRESS_STYLES, ProgressReporter

DEFAULT_CONCURRENCY = defaults.CONCURRENCY
BREAKER_AFTER = 5  # identical failures in a row after which a run stops calling a model
MAX_FREE_TIMEOUTS = 3  # queue-caused timeouts of one request not charged to it; later ones are
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class EngineSettings:
    """How :func:`run_requests` runs. The plugin builds one per session from its options.

    ``cache_dir``: folder of the SQLite answer cache (None: no cache). ``cache_mode``: one of
    :data:`CACHE_MODES`: ``use`` (read, call the misses, store), ``refresh`` (call everything,
    store), ``off`` (no cache) or ``replay-only`` (never call a cacheable model; a miss is an error
    naming the case; the cache is only read, so a read-only folder works). ``concurrency``: a fixed
    number of simultaneous requests for every API adapter that does not set its own (None: adaptive
    adapters find their limit, see :mod:`pytest_mirage.engine.capacity`; the others get
    :data:`DEFAULT_CONCURRENCY`). ``batch_size``: requests
    per ``answer_batch`` call for local engines (None: all in one call, unless the adapter sets its
    own). ``retry``: backoff policy. ``call_timeout``: seconds one async call may take before it
    counts as a (retryable) timeout (None: the adapter's own deadline). ``breaker_after``: after
    this many requests in a row failed the same way, the rest of the run is not sent (0: never stop).
    ``progress``: show progress when at least ``progress_min`` requests go to a model, as a bar on a
    terminal or as plain lines at most every ``progress_interval_s`` seconds otherwise
    (``progress_style``: auto, bar, lines), written by ``progress_write`` (default: stderr).
    ``stats``: an accumulator the engine adds its counts and problems to. ``loop_factory``: the
    event loop async adapters run in (None: asyncio's default; simulations pass a virtual-time loop).
    """

    cache_dir: Path | None = None
    cache_mode: str = "use"
    concurrency: int | None = None
    progress: bool = False
    progress_min: int = 20
    batch_size: int | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    call_timeout: float | None = None
    stats: EngineStats | None = None
    breaker_after: int = BREAKER_AFTER
    progress_style: str = "auto"
    progress_interval_s: float = 10.0
    progress_write: Callable[[str], None] | None = None
    loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = None

    def __post_init__(self) -> None:
        if self.cache_mode not in CACHE_MODES:
            raise ConfigError(f"--mirage-cache-mode: found {self.cache_mode!r}; expected one of "
                              f"{', '.join(CACHE_MODES)}.{did_you_mean(self.cache_mode, CACHE_MODES)}")
        if self.concurrency is not None and (not isinstance(self.concurrency, int) or isinstance(self.concurrency, bool)
                                             or self.concurrency < 1):
            raise ConfigError(f"--mirage-concurrency: found {self.concurrency!r}; expected an integer >= 1")
        if self.batch_size is not None and self.batch_size < 1:
            raise ConfigError(f"batch size: found {self.batch_size!r}; expected an integer >= 1 or None")
        if self.cache_mode == "replay-only" and self.cache_dir is None:
            raise ConfigError("--mirage-cache-mode replay-only needs a cache folder (--mirage-cache DIR); "
                              "none is configured")
        if self.breaker_after < 0:
            raise ConfigError(f"breaker_after: found {self.breaker_after!r}; expected an integer >= 0")
        if self.progress_style not in PROGRESS_STYLES:
            raise ConfigError(f"progress style: found {self.progress_style!r}; expected one of "
                              f"{', '.join(PROGRESS_STYLES)}")
        if self.call_timeout is not None and not self.call_timeout > 0:
            raise ConfigError(f"call_timeout: found {self.call_timeout!r}; expected a number > 0 or None")


def with_ref(request: EngineRequest, adapter: ModelAdapter, exc: BaseException, suffix: str = "") -> ModelError:
    """A :class:`ModelError` whose message names the request and the model (once)."""
    message = str(exc) or type(exc).__name__
    ref = request.ref
    names_request = ref in message or f"{request.noun} {request.item_id}" in message
    if isinstance(exc, ModelError) and not isinstance(exc, TransientError) and names_request and not suffix:
        return exc
    if not isinstance(exc, ModelError):
        message = f"{type(exc).__name__}: {message}"
    if not names_request:
        message = f"{request.noun} {ref}: model {adapter.name}: {message}"
    err = ModelError(message + suffix)
    err.__cause__ = exc
    usage = getattr(exc, "usage", None)
    if usage is not None:
        err.usage = usage  # type: ignore[attr-defined]
    return err


with_case = with_ref  # the earlier name


def _usage_of(exc: BaseException) -> Any:
    """Token usage a failed call reported (an adapter sets ``exc.usage`` when the server said)."""
    return getattr(exc, "usage", None)


class _Run:
    """State of one run_requests call."""

    def __init__(self, adapter: ModelAdapter, requests: Sequence[EngineRequest], settings: EngineSettings,
                 stats: EngineStats) -> None:
        self.adapter = adapter
        self.requests = requests
        self.settings = settings
        self.stats = stats
        self.results: list[Answer | Exception | None] = [None] * len(requests)
        self.rng = random.Random()
        self.cache: AnswerCache | None = None
        self.cache_writable = False
        self.keys: list[bytes | None] = [None] * len(requests)
        self.groups: dict[bytes, list[int]] = {}
        self.kind = "?"
        self.model_label = adapter.name
        self.progress: ProgressReporter | None = None
        # circuit breaker: the last final failure's signature, how many in a row, and why it opened
        self._streak_sig: str | None = None
        self._streak = 0
        self.stopped: str | None = None
        # the first refusal of a response_format: the run's other structured requests are not sent
        self.format_rejected: Exception | None = None
        self.capacity: CapacityController | None = None

    # ------------------------------------------------------------------ cache
    def _open(self, directory: Path, mode: str) -> tuple[AnswerCache | None, str | None]:
        """The cache for ``mode`` and, when it cannot be read at all, why."""
        if mode == "replay-only":  # never writes: a read-only folder or file is fine
            try:
                cache = AnswerCache(directory, readonly=True)
            except _Missing:
                return None, None
            except CacheUnavailable as exc:
                return None, str(exc)
            if cache.note:
                self.stats.problem(cache.note)
            return cache, None
        try:
            cache = AnswerCache(directory)
        except CacheUnavailable as exc:
            fallback: AnswerCache | None = None
            if mode == "use":
                try:
                    fallback = AnswerCache(directory, readonly=True)
                except CacheUnavailable:
                    fallback = None
            kept = "cached answers are still read, " if fallback is not None else ""
            self.stats.problem(f"{exc}; {kept}new answers are kept for this session only, not stored")
            if fallback is not None and fallback.note:
                self.stats.problem(fallback.note)
            return fallback, None
        self.cache_writable = True
        return cache, None

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
        self.cache, unreadable = self._open(self.settings.cache_dir, mode)
        if mode == "refresh":
            return todo
        stored: dict[bytes, tuple[str, str]] = {}
        if self.cache is not None:
            try:
                stored = self.cache.get_many(list(groups))
            except CacheUnavailable as exc:
                unreadable = str(exc)
                if mode == "use":
                    self.stats.problem(f"{exc}; every request of this run goes to the model")
        where = self.cache.path if self.cache is not None else Path(self.settings.cache_dir) / "answers.sqlite3"
        missing: list[int] = []
        name = self.adapter.name
        for i in todo:
            key = keys[i]
            row = stored.get(key)
            req = self.requests[i]
            if row is not None:
                try:
                    answer = decode_answer(row[0], row[1], req.item_id, name)
                except ValueError as exc:
                    if mode == "replay-only":
                        self.finish(i, ModelError(
                            f"{req.noun} {req.ref}: model {name}: the cached answer in {where} is unreadable "
                            f"({exc}); replay-only mode cannot call the model: re-record it with "
                            "--mirage-cache-mode refresh"), "cache")
                        continue
                    warn_bad_entry(where, req.item_id, exc)
                else:
                    group = groups[key]
                    self.stats.hits += len(group)
                    if len(group) == 1:
                        self.results[i] = answer  # the common case, without finish()'s bookkeeping
                    else:
                        self.finish(i, answer, "cache")
                    continue
            if mode == "replay-only":
                self.stats.misses += len(groups[key])
                reason = (unreadable + "; replay-only mode never calls a model") if unreadable else (
                    f"no cached answer in {where} and --mirage-cache-mode replay-only never calls a model; "
                    "record it first with --mirage-cache-mode use (or refresh)")
                self.finish(i, NotCached(f"{req.noun} {req.ref}: model {name}: {reason}"), "cache")
                continue
            missing.append(i)
        return missing

    def _store(self, i: int, answer: Answer) -> None:
        key = self.keys[i]
        if self.cache is None or key is None or not self.cache_writable:
            return
        try:
            self.cache.put(key, self.kind, self.model_label, answer)
        except CacheUnavailable as exc:
            # the answer is kept (in results); stop writing, say so once, and go on
            self.cache_writable = False
            self.stats.problem(f"{exc}; answers received from now on are kept for this session only, "
                               "not stored")

    # ------------------------------------------------------------------ results
    def finish(self, i: int, result: Answer | Exception, source: str = "call") -> None:
        """Record the result of request ``i`` (and of its duplicates).

        ``source``: ``call`` (what a model call just returned: its usage is counted and an answer is
        stored in the cache), ``retry`` (the last failure of a request whose attempts are counted
        already), ``cache`` (found in, or missing from, the cache: no call was made) or ``skip``
        (not sent because the breaker is open).
        """
        req = self.requests[i]
        called = source in ("call", "retry")
        if isinstance(result, Answer):
            if result.case_id != req.item_id:
                raise RuntimeError(f"model {self.adapter.name!r} answered {result.case_id!r} for request "
                                   f"{req.ref!r}: adapters must keep the order of their requests")
            if source == "call":
                self.stats.add_usage(result.usage)
                try:
                    result.output.encode("utf-8")
                except UnicodeEncodeError as exc:  # lone surrogates: not text, never stored
                    shown = result.output.encode("utf-8", "replace").decode("utf-8")
                    result = ModelError(f"the answer is not valid Unicode text (an unpaired surrogate at "
                                        f"position {exc.start}): {excerpt(shown)}")
                else:
                    self.stats.truncated += result.truncated
                    self._store(i, result)
        elif not isinstance(result, Exception):
            raise TypeError(f"model {self.adapter.name!r} returned {type(result).__name__} for {req.noun} "
                            f"{req.ref}; expected an Answer or an exception instance")
        if isinstance(result, Exception):
            if source == "call":
                self.stats.add_usage(_usage_of(result))
            result = with_ref(req, self.adapter, result)
            if caused_by(result, FormatRejected):
                # not the model failing: the caller sends these again without the format
                if self.format_rejected is None:
                    self.format_rejected = result
            elif called:
                self._trip(req, result)
        elif called:
            self._streak, self._streak_sig = 0, None
        key = self.keys[i]
        targets = self.groups.get(key, [i]) if key is not None else [i]
        for j in targets:
            self.results[j] = result if j == i or not isinstance(result, Answer) else \
                replace(result, case_id=self.requests[j].item_id)
        if isinstance(result, Exception):
            self.stats.errors += len(targets)
        if source != "cache" and self.progress is not None:
            self.progress.advance(len(targets), len(targets) if isinstance(result, Exception) else 0)

    def _trip(self, req: EngineRequest, error: Exception) -> None:
        """Count identical failures in a row; after ``breaker_after`` of them stop calling the model."""
        limit = self.settings.breaker_after
        if not limit or self.stopped is not None:
            return
        message = str(error)
        signature = message.replace(req.ref, "\0").replace(req.item_id, "\0")
        if signature == self._streak_sig:
            self._streak += 1
        else:
            self._streak_sig, self._streak = signature, 1
        if self._streak >= limit:
            reason = message.replace(f"{req.noun} {req.ref}: ", "", 1).replace(f"model {self.adapter.name}: ", "", 1)
            self.stopped = (f"not sent: the last {limit} {req.task} failed the same way ({excerpt(reason)}); "
                            "fix that and run again (answers received so far are kept)")
            self.stats.problem(f"model {self.adapter.name}: stopped calling it after {limit} {req.task} in a row "
                               f"failed the same way: {excerpt(reason)}")

    def skip_format(self, i: int) -> bool:
        """End request ``i`` unsent when the server refused another request's response_format and
        this one carries one too (every one would be refused the same way)."""
        req = self.requests[i]
        if self.format_rejected is None or req.response_format is None:
            return False
        error = FormatRejected(f"{req.noun} {req.ref}: model {self.adapter.name}: not sent: the server refused "
                               f"the response_format of another request ({excerpt(str(self.format_rejected))})")
        self.finish(i, error, source="skip")
        return True

    def skip(self, i: int) -> None:
        """End request ``i`` without calling the model (the breaker is open)."""
        req = self.requests[i]
        self.stats.skipped += len(self.groups.get(self.keys[i] or b"", [i]))
        error = ModelError(f"{req.noun} {req.ref}: model {self.adapter.name}: {self.stopped}")
        self.finish(i, error, source="skip")

    # ------------------------------------------------------------------ calls
    async def run_async(self, adapter: AsyncModelAdapter, todo: list[int]) -> None:
        bounds = self.capacity_bounds(adapter)
        try:
            if bounds is None:
                await self._run_fixed(adapter, todo, adapter.concurrency or self.settings.concurrency
                                      or DEFAULT_CONCURRENCY)
            else:
                await self._run_adaptive(adapter, todo, bounds)
        finally:
            await adapter.aclose()

    def capacity_bounds(self, adapter: AsyncModelAdapter) -> CapacityBounds | None:
        """The adapter's capacity settings, or None for the plain fixed limit. The engine's own
        ``concurrency`` (the caller's word) and the model's fixed ``concurrency`` make it fixed."""
        bounds: CapacityBounds | None = getattr(adapter, "capacity_bounds", None)
        if bounds is None:
            return None
        fixed = adapter.concurrency or self.settings.concurrency
        if fixed is not None and bounds.adaptive:
            return CapacityBounds(start=fixed, minimum=fixed, maximum=fixed, adaptive=False)
        return bounds

    async def _run_fixed(self, adapter: AsyncModelAdapter, todo: list[int], limit: int) -> None:
        sem = asyncio.Semaphore(limit)
        policy = self.settings.retry
        timeout = self.settings.call_timeout

        async def one(i: int) -> None:
            req = self.requests[i]
            attempt = 0
            last: TransientError | None = None
            while True:
                async with sem:
                    if last is None and self.skip_format(i):
                        return
                    if self.stopped is not None:
                        self._stop(i, last, attempt)
                        return
                    self.stats.calls += 1
                    try:
                        call = adapter.answer_async(req)
                        answer = await (asyncio.wait_for(call, timeout) if timeout else call)
                    except TransientError as exc:
                        error: TransientError = exc
                    except TimeoutError as exc:
                        error = _call_timeout(timeout, exc)
                    except Exception as exc:  # reported on the request, never lost
                        self.stats.failed_calls += 1
                        self.finish(i, exc)
                        return
                    else:
                        self.finish(i, answer)
                        return
                self.stats.failed_calls += 1
                self.stats.add_usage(_usage_of(error))
                delay = policy.delay(attempt, error.retry_after, self.rng)
                if delay is None or self.stopped is not None:
                    self.finish(i, with_ref(req, self.adapter, error, _gave_up(attempt, error, policy)), "retry")
                    return
                attempt += 1
                last = error
                self.stats.retries += 1
                await asyncio.sleep(delay)  # outside the semaphore: other requests go on meanwhile

        await asyncio.gather(*(one(i) for i in todo))

    def _stop(self, i: int, last: TransientError | None, attempt: int) -> None:
        if last is None:
            self.skip(i)
        else:  # sent before: its own last failure, not "not sent"
            self.finish(i, with_ref(self.requests[i], self.adapter, last, f" (not retried after {attempt} "
                                    "attempt(s): the model keeps failing)"), "retry")

    async def _run_adaptive(self, adapter: AsyncModelAdapter, todo: list[int], bounds: CapacityBounds) -> None:
        """Requests under a :class:`~pytest_mirage.engine.capacity.CapacityController`: rate limits
        and queue-caused timeouts go back in line without using an attempt (bounded in total time)."""
        loop = asyncio.get_running_loop()
        clock = loop.time
        key = str(getattr(adapter, "capacity_key", "") or "")
        store = self.settings.cache_dir if key and self.settings.cache_mode != "replay-only" else None
        stored, problem = load_learned(store, key) if bounds.adaptive else (None, None)
        if problem:
            self.stats.problem(problem)
        timeout = self.settings.call_timeout or _number(getattr(adapter, "timeout", None))
        ctl = CapacityController(bounds, clock(), timeout, stored)
        gate = Gate(ctl, clock)
        self.capacity = ctl
        if self.progress is not None:
            self.progress.status = ctl.describe
        policy = self.settings.retry
        call_timeout = self.settings.call_timeout
        extra_tokens = _number(getattr(adapter, "prompt_tokens_extra", None)) or 0.0
        seq_of = itertools.count()

        async def one(i: int) -> None:
            req = self.requests[i]
            attempt = 0
            free = 0  # attempts that were not the case's fault (rate limits, queue-caused timeouts)
            free_s = 0.0
            last: TransientError | None = None
            cost = len(req.prompt) / 4 + extra_tokens if extra_tokens or ctl.mirrors["tokens"].rate else 0.0
            while True:
                if last is None and self.skip_format(i):
                    return
                if self.stopped is not None:
                    self._stop(i, last, attempt)
                    return
                seq = next(seq_of)
                sent = await gate.acquire(seq, cost)
                # what happened while it waited in line: a refused format, an open breaker
                if last is None and self.format_rejected is not None and req.response_format is not None:
                    gate.release(seq, sent, "unsent")
                    self.skip_format(i)
                    return
                if self.stopped is not None:
                    gate.release(seq, sent, "unsent")
                    self._stop(i, last, attempt)
                    return
                self.stats.calls += 1
                token = response_headers_sink.set(functools.partial(_headers_to, ctl, seq, clock))
                try:
                    call = adapter.answer_async(req)
                    answer = await (asyncio.wait_for(call, call_timeout) if call_timeout else call)
                except TransientError as exc:
                    error: TransientError = exc
                except TimeoutError as exc:
                    error = _call_timeout(call_timeout, exc)
                except Exception as exc:  # reported on the request, never lost
                    gate.release(seq, sent, "error")
                    self.stats.failed_calls += 1
                    self.finish(i, exc)
                    return
                else:
                    gate.release(seq, sent, "ok")
                    self.finish(i, answer)
                    return
                finally:
                    response_headers_sink.reset(token)
                self.stats.failed_calls += 1
                self.stats.add_usage(_usage_of(error))
                signal = error.signal
                too_long = error.retry_after is not None and error.retry_after > policy.max_wait_s
                verdict = gate.release(seq, sent, signal or "error", None if too_long else error.retry_after)
                if verdict == "requeue" and not too_long:
                    free_s += clock() - sent + (error.retry_after or 0.0)
                    if signal == "timeout" and free >= MAX_FREE_TIMEOUTS:
                        verdict = None  # timed out again and again, whatever the limit: the usual policy
                    elif free_s > MAX_TOTAL_WAIT_S:
                        self.finish(i, with_ref(req, self.adapter, error, (
                            f" (waited {free_s:.0f}s in all on the server's rate limits and queue, more than the "
                            f"{MAX_TOTAL_WAIT_S:g}s the engine waits per request; learned limit: {ctl.describe()})")),
                            "retry")
                        return
                    else:
                        free += 1
                        last = error
                        self.stats.retries += 1
                        self.stats.rate_limited += int(signal == "rate")
                        continue  # back in line: the gate holds it while the pause or the pacing lasts
                delay = policy.delay(attempt, error.retry_after, self.rng)
                if delay is None or self.stopped is not None:
                    suffix = _gave_up(attempt, error, policy)
                    if bounds.adaptive and signal == "timeout":
                        suffix = suffix[:-1] + f"; learned limit: {ctl.describe()})"
                    self.finish(i, with_ref(req, self.adapter, error, suffix), "retry")
                    return
                attempt += 1
                last = error
                self.stats.retries += 1
                await asyncio.sleep(delay)  # outside the gate: other requests go on meanwhile

        try:
            await asyncio.gather(*(one(i) for i in todo))
        finally:
            figures = ctl.figures()
            self.stats.add_capacity(self.adapter.name, figures)
            if bounds.adaptive and store is not None:
                problem = save_learned(store, key, figures)
                if problem:
                    self.stats.problem(problem)

    def run_batches(self, todo: list[int]) -> None:
        adapter: Any = self.adapter
        size = getattr(adapter, "batch_size", None) or self.settings.batch_size or max(1, len(todo))
        policy = self.settings.retry
        for start in range(0, len(todo), size):
            pending = todo[start:start + size]
            attempt = 0
            while pending:
                if self.stopped is not None:
                    for i in pending:
                        self.skip(i)
                    break
                pending = [i for i in pending if not self.skip_format(i)]
                if not pending:
                    break
                batch = [self.requests[i] for i in pending]
                self.stats.calls += len(batch)
                out = adapter.answer_batch(batch)
                if len(out) != len(batch):
                    raise RuntimeError(f"model {self.adapter.name!r} returned {len(out)} answers for "
                                       f"{len(batch)} requests; answer_batch must return one per request")
                retry: list[tuple[int, TransientError]] = []
                for i, result in zip(pending, out, strict=True):
                    if isinstance(result, Exception):
                        self.stats.failed_calls += 1
                    if isinstance(result, TransientError):
                        self.stats.add_usage(_usage_of(result))
                        retry.append((i, result))
                    else:
                        self.finish(i, result)
                if not retry:
                    break
                delays = [policy.delay(attempt, e.retry_after, self.rng) for _, e in retry]
                pending = []
                for (i, exc), delay in zip(retry, delays, strict=True):
                    if delay is None:
                        self.finish(i, with_ref(self.requests[i], self.adapter, exc, _gave_up(attempt, exc, policy)),
                                    "retry")
                    else:
                        pending.append(i)
                if pending:
                    attempt += 1
                    self.stats.retries += len(pending)
                    time.sleep(max(d for d in delays if d is not None))


def _headers_to(ctl: CapacityController, seq: int, clock: Callable[[], float], headers: Mapping[str, str]) -> None:
    ctl.on_headers(seq, headers, clock())


def _call_timeout(timeout: float | None, exc: BaseException) -> TransientError:
    error = TransientError(f"no answer within {timeout}s (call_timeout)", signal="timeout")
    error.__cause__ = exc
    return error


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else None


def _gave_up(attempt: int, exc: TransientError, policy: RetryPolicy) -> str:
    if exc.retry_after is not None and exc.retry_after > policy.max_wait_s:
        return (f" (the server asked to retry after {exc.retry_after:g}s, more than the {policy.max_wait_s:g}s "
                f"the engine waits; gave up after {attempt + 1} attempt(s))")
    return f" (gave up after {attempt + 1} attempt(s))"


def _is_async_adapter(adapter: ModelAdapter) -> bool:
    method = getattr(adapter, "answer_async", None)
    return method is not None and inspect.iscoroutinefunction(method) and hasattr(adapter, "aclose")


def _run_coroutine(factory: Callable[[], Coroutine[Any, Any, T]],
                   loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = None) -> T:
    """Run a coroutine to completion, also when this thread already runs an event loop.

    An interrupt (Ctrl-C, a test timeout) cancels the coroutine, so its requests are cancelled and
    their connections closed instead of running on after the caller has gone.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            return runner.run(factory())
    # called from inside a running loop (e.g. an async test): use a private loop in a worker thread
    loop = loop_factory() if loop_factory is not None else asyncio.new_event_loop()
    outcome: list[Any] = []
    task: list[asyncio.Task[T]] = []

    def work() -> None:
        try:
            task.append(loop.create_task(factory()))
            outcome.append(("ok", loop.run_until_complete(task[0])))
        except BaseException as exc:
            outcome.append(("error", exc))
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    thread = threading.Thread(target=work, name="mirage-engine", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(0.1)
    except BaseException:
        if task and not loop.is_closed():
            loop.call_soon_threadsafe(task[0].cancel)
        thread.join()
        raise
    status, value = outcome[0]
    if status == "error":
        raise value
    return value  # type: ignore[no-any-return]


def run_requests(adapter: ModelAdapter, requests: Sequence[EngineRequest],
                 settings: EngineSettings | None = None) -> list[Answer | Exception]:
    """Answer all ``requests`` with ``adapter``; one entry (Answer or exception) per request, in order.

    ``requests`` follow :class:`~pytest_mirage.models.base.EngineRequest`: suite cases
    (:class:`~pytest_mirage.models.base.ModelRequest`) or bare prompts
    (:class:`~pytest_mirage.models.base.PromptRequest`). Cached answers are returned without a call
    (their ``usage`` has ``cached: True``); the rest go to the model, concurrently (async adapters,
    up to the concurrency limit) or in batches (local engines), with retries on transient faults.
    Each answer is written to the cache as it arrives; a cache that cannot be written is reported
    once in ``settings.stats.problems`` and the answers are still returned. Failures come back as
    :class:`~pytest_mirage.errors.ModelError` instances naming the request, the model and the
    reason; they are never cached and never scored. After ``settings.breaker_after`` identical
    failures in a row, the remaining requests are not sent.
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
            run.progress = ProgressReporter(
                len(todo), requests[todo[0]].task, adapter.name,
                settings.progress and len(todo) >= settings.progress_min, settings.progress_style,
                settings.progress_interval_s, settings.progress_write)
            try:
                if _is_async_adapter(adapter):
                    async_adapter: Any = adapter
                    _run_coroutine(lambda: run.run_async(async_adapter, todo), settings.loop_factory)
                else:
                    run.run_batches(todo)
            finally:
                run.progress.close()
    finally:
        if run.cache is not None:
            run.cache.close()
        stats.wall_s += time.perf_counter() - started
    missing = [requests[i].ref for i, r in enumerate(run.results) if r is None]
    if missing:
        raise RuntimeError(f"engine bug: no result for {len(missing)} request(s), e.g. {missing[:3]}")
    return [r for r in run.results if r is not None]


def cache_file(settings: EngineSettings) -> Path | None:
    """Where the answer cache of these settings lives (None when there is none)."""
    from .cache import CACHE_FILE

    if settings.cache_dir is None or settings.cache_mode == "off":
        return None
    return Path(settings.cache_dir) / CACHE_FILE


__all__ = ["BREAKER_AFTER", "CACHE_MODES", "DEFAULT_CONCURRENCY", "EngineSettings", "cache_file",
           "run_requests", "with_ref"]
