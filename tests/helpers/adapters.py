"""Minimal adapters implementing the protocol, for engine tests that need no HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pytest_mirage.models.base import Answer, ModelRequest
from pytest_mirage.models.faults import TransientError


class CountingBatchAdapter:
    """A local-engine-style adapter: answers whole batches and records every batch it got.

    ``script`` maps a case id to the list of outcomes of its successive attempts: an exception
    instance (returned in place of the answer) or ``"ok"``.
    """

    retrieves = False

    def __init__(self, name: str = "batch:test", identity: Mapping[str, Any] | None = None,
                 script: Mapping[str, list[Any]] | None = None, batch_size: int | None = None) -> None:
        self.name = name
        self.identity = {"kind": "batch-test", "model": "m1"} if identity is None else identity
        self.script = {k: list(v) for k, v in (script or {}).items()}
        self.batch_size = batch_size
        self.batches: list[list[str]] = []
        self.closed = False

    def cache_identity(self) -> Mapping[str, Any] | None:
        return self.identity or None

    def answer_batch(self, requests: Sequence[ModelRequest]) -> list[Answer | Exception]:
        self.batches.append([r.item_id for r in requests])
        out: list[Answer | Exception] = []
        for r in requests:
            queue = self.script.get(r.item_id)
            step = queue.pop(0) if queue else "ok"
            if isinstance(step, Exception):
                out.append(step)
            else:
                out.append(Answer(case_id=r.item_id, model=self.name, output=f"answer to {r.item_id}",
                                  usage={"prompt_tokens": 3, "completion_tokens": 2}))
        return out

    @property
    def calls(self) -> int:
        return sum(len(b) for b in self.batches)

    def close(self) -> None:
        self.closed = True


class SlowAsyncAdapter:
    """An API-style adapter: one request at a time, ``delay`` seconds each, tracking concurrency."""

    retrieves = False

    def __init__(self, delay: float = 0.01, concurrency: int | None = None,
                 fail: Callable[[ModelRequest, int], Exception | None] | None = None) -> None:
        self.name = "async:test"
        self.delay = delay
        self.concurrency = concurrency
        self.fail = fail
        self.in_flight = 0
        self.max_in_flight = 0
        self.attempts: dict[str, int] = {}
        self.aclosed = 0

    def cache_identity(self) -> Mapping[str, Any] | None:
        return {"kind": "async-test", "model": "slow"}

    async def answer_async(self, request: ModelRequest) -> Answer:
        n = self.attempts.get(request.item_id, 0)
        self.attempts[request.item_id] = n + 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
        finally:
            self.in_flight -= 1
        if self.fail is not None:
            exc = self.fail(request, n)
            if exc is not None:
                raise exc
        return Answer(case_id=request.item_id, model=self.name, output=f"async answer to {request.item_id}")

    async def aclose(self) -> None:
        self.aclosed += 1

    def answer_batch(self, requests: Sequence[ModelRequest]) -> list[Answer | Exception]:
        raise AssertionError("the engine must use answer_async for async adapters")

    def close(self) -> None:
        return None


def transient(message: str = "HTTP 503: busy", retry_after: float | None = None) -> TransientError:
    return TransientError(message, retry_after)
