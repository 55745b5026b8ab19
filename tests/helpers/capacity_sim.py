"""Simulated servers in virtual time, for the capacity controller's tests (issue 25).

:func:`virtual_loop` makes an asyncio event loop whose clock only moves when every task waits: a
``sleep(5)`` takes no real time, so a run of thousands of requests against a slow server is
simulated in a fraction of a second, deterministically. Pass it to the engine as
``EngineSettings(loop_factory=virtual_loop(clock))``.

:class:`SimServer` is a server with a number of slots (a function of the time: a flapping server),
a service time per request (a function of the time: a server that slows down), an optional token
bucket of requests (429 with ``Retry-After`` beyond it, optionally ``x-ratelimit-*`` headers on
every answer) and an optional token bucket of tokens. Requests beyond the free slots wait in line,
as on a llama.cpp server; a request whose client gave up is still worked on (``abandoned_s``
counts that time) unless ``skip_abandoned``. :class:`SimAdapter` is the async adapter that calls
it under a per-call ``timeout``, the way ``openai:`` calls an HTTP server.
"""

from __future__ import annotations

import asyncio
import math
import selectors
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_mirage.models.base import Answer, EngineRequest
from pytest_mirage.models.faults import TransientError, report_headers
from pytest_mirage.models.options import CapacityBounds

ADAPTIVE = CapacityBounds()


@dataclass(slots=True)
class VirtualClock:
    now: float = 0.0


class _VirtualSelector(selectors.DefaultSelector):
    def __init__(self, clock: VirtualClock) -> None:
        super().__init__()
        self.clock = clock

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready = super().select(0)
        if ready:
            return ready
        if timeout is None:
            raise RuntimeError("virtual loop: every task waits and no timer is set (a deadlock)")
        self.clock.now += max(0.0, timeout)
        return []


def virtual_loop(clock: VirtualClock) -> Callable[[], asyncio.AbstractEventLoop]:
    """A loop factory for ``EngineSettings(loop_factory=...)``: time is ``clock.now``."""

    def make() -> asyncio.AbstractEventLoop:
        loop = asyncio.SelectorEventLoop(_VirtualSelector(clock))
        loop.time = lambda: clock.now  # type: ignore[method-assign]
        return loop

    return make


@dataclass(slots=True)
class _Ticket:
    abandoned: bool = False


@dataclass(slots=True)
class SimServer:
    """See the module doc. ``slots(now)`` and ``service_s(now)`` may be numbers or functions of the time."""

    slots: int | Callable[[float], int] = 1
    service_s: float | Callable[[float], float] = 0.25
    rate: float | None = None  # requests per second the bucket refills
    burst: float | None = None  # bucket size (default: one second of rate)
    retry_after: float | None = 1.0  # seconds sent with a 429 (None: no Retry-After header)
    send_headers: bool = False  # x-ratelimit-* on every answer
    token_rate: float | None = None
    token_burst: float | None = None
    skip_abandoned: bool = False
    # figures
    arrivals: list[float] = field(default_factory=list)
    answered: int = 0
    rejected: int = 0
    rejected_at: list[float] = field(default_factory=list)
    abandoned: int = 0
    abandoned_s: float = 0.0
    busy: int = 0
    max_busy: int = 0
    _level: float = math.nan
    _tokens: float = math.nan
    _at: float = 0.0
    _line: deque[asyncio.Future[None]] = field(default_factory=deque)
    _timer: asyncio.TimerHandle | None = None

    def _slots(self, now: float) -> int:
        return self.slots(now) if callable(self.slots) else self.slots

    def _service(self, now: float) -> float:
        return self.service_s(now) if callable(self.service_s) else self.service_s

    def _refill(self, now: float) -> None:
        if self.rate is not None:
            cap = self.burst if self.burst is not None else self.rate
            self._level = cap if math.isnan(self._level) else min(cap, self._level + (now - self._at) * self.rate)
        if self.token_rate is not None:
            tcap = self.token_burst if self.token_burst is not None else self.token_rate
            self._tokens = tcap if math.isnan(self._tokens) else min(tcap, self._tokens + (now - self._at) * self.token_rate)
        self._at = now

    def headers(self) -> dict[str, str]:
        out: dict[str, str] = {}
        if self.send_headers and self.rate is not None:
            cap = self.burst if self.burst is not None else self.rate
            out.update({"x-ratelimit-limit-requests": f"{cap:g}", "x-ratelimit-remaining-requests": f"{math.floor(self._level)}",
                        "x-ratelimit-reset-requests": f"{(cap - self._level) / self.rate:.3f}s"})
        if self.send_headers and self.token_rate is not None:
            tcap = self.token_burst if self.token_burst is not None else self.token_rate
            out.update({"x-ratelimit-limit-tokens": f"{tcap:g}", "x-ratelimit-remaining-tokens": f"{math.floor(self._tokens)}",
                        "x-ratelimit-reset-tokens": f"{(tcap - self._tokens) / self.token_rate:.3f}s"})
        return out

    def _pump(self) -> None:
        loop = asyncio.get_running_loop()
        while self._line and self._line[0].done():
            self._line.popleft()
        while self._line and self.busy < self._slots(loop.time()):
            fut = self._line.popleft()
            if not fut.done():
                self.busy += 1
                self.max_busy = max(self.max_busy, self.busy)
                fut.set_result(None)
        if self._line and callable(self.slots) and self._timer is None:
            self._timer = loop.call_at(loop.time() + 0.05, self._wake)  # capacity may come back

    def _wake(self) -> None:
        self._timer = None
        self._pump()

    async def serve(self, tokens: float, ticket: _Ticket) -> tuple[int, dict[str, str]]:
        loop = asyncio.get_running_loop()
        now = loop.time()
        self.arrivals.append(now)
        self._refill(now)
        limited = self.rate is not None and self._level < 1
        limited = limited or (self.token_rate is not None and self._tokens < tokens)
        if limited:
            self.rejected += 1
            self.rejected_at.append(now)
            headers = self.headers()
            if self.retry_after is not None:
                headers["retry-after"] = f"{self.retry_after:g}"
            return 429, headers
        if self.rate is not None:
            self._level -= 1
        if self.token_rate is not None:
            self._tokens -= tokens
        headers = self.headers()
        fut: asyncio.Future[None] = loop.create_future()
        self._line.append(fut)
        self._pump()
        await fut
        try:
            if ticket.abandoned and self.skip_abandoned:
                self.abandoned += 1
                return 499, {}
            took = self._service(loop.time())
            await asyncio.sleep(took)
            if ticket.abandoned:
                self.abandoned += 1
                self.abandoned_s += took
                return 499, {}
            self.answered += 1
            return 200, headers
        finally:
            self.busy -= 1
            self._pump()


class SimAdapter:
    """An adaptive async adapter in front of a :class:`SimServer` (see the module doc)."""

    retrieves = False

    def __init__(self, server: SimServer, timeout: float = 60.0, concurrency: int | None = None,
                 bounds: CapacityBounds | None = ADAPTIVE, key: str = "sim",
                 tokens_per_request: float = 0.0) -> None:
        self.name = "sim:server"
        self.server = server
        self.timeout = timeout
        self.concurrency = concurrency
        self.capacity_bounds = bounds
        self.capacity_key = key
        self.prompt_tokens_extra = tokens_per_request
        self.tokens_per_request = tokens_per_request
        self.timeouts = 0
        self.failed: list[str] = []

    def cache_identity(self) -> Mapping[str, Any] | None:
        return None

    async def answer_async(self, request: EngineRequest) -> Answer:
        ticket = _Ticket()
        job = asyncio.ensure_future(self.server.serve(self.tokens_per_request, ticket))
        try:
            status, headers = await asyncio.wait_for(asyncio.shield(job), self.timeout)
        except TimeoutError:
            ticket.abandoned = True
            self.timeouts += 1
            raise TransientError(f"no complete response within {self.timeout:g}s (timeout)", signal="timeout") from None
        report_headers(headers)
        if status == 429:
            raise TransientError("HTTP 429: rate limited", self.server.retry_after, signal="rate")
        return Answer(case_id=request.item_id, model=self.name, output=f"answer to {request.item_id}")

    async def aclose(self) -> None:
        return None

    def answer_batch(self, requests: Sequence[EngineRequest]) -> list[Answer | Exception]:
        raise AssertionError("the engine must use answer_async for async adapters")

    def close(self) -> None:
        return None
