"""A loopback OpenAI-compatible server with slots and a rate limit, for capacity tests and benchmarks.

:class:`SlotServer` is :class:`~tests.helpers.fake_openai.FakeOpenAIServer` with the two limits of
real servers:

* ``slots``: how many requests it works on at once (llama.cpp / llama-cpp-python: one; vLLM: many);
  the others wait in line. Each takes ``service_s`` seconds in its slot. Like llama-cpp-python, it
  works on a request whose client has gone (timed out) anyway, unless ``skip_abandoned``:
  ``abandoned_s`` is the slot time spent on requests nobody was waiting for any more.
* ``rate``: a token bucket of ``rate`` requests per second (``burst`` deep, default one second's
  worth), checked when a request arrives, as API gateways do: beyond it, HTTP 429 with
  ``Retry-After: retry_after`` at once. ``ratelimit_headers``: every answer (429s included) carries
  OpenAI's ``x-ratelimit-limit-requests / -remaining-requests / -reset-requests``.

Usage::

    with SlotServer(slots=1, service_s=0.25) as server:
        ... openai:m?base_url={server.base_url} ...

From a shell (the benchmark runs it in its own process)::

    python -m tests.helpers.capacity_server --slots 4 --service 0.25   # prints the port
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import time
from collections.abc import Mapping
from typing import Any

from tests.helpers.fake_openai import FakeOpenAIServer, _last_user_content


class SlotServer(FakeOpenAIServer):
    """See the module doc."""

    def __init__(self, *, slots: int = 1, service_s: float = 0.25, rate: float | None = None,
                 burst: float | None = None, retry_after: str | None = "1", ratelimit_headers: bool = False,
                 skip_abandoned: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.slots = slots
        self.service_s = service_s
        self.rate = rate
        self.burst = burst if burst is not None else rate
        self.retry_after = retry_after
        self.ratelimit_headers = ratelimit_headers
        self.skip_abandoned = skip_abandoned
        self.rejected = 0  # 429s sent
        self.abandoned_s = 0.0
        self.busy = 0
        self.max_busy = 0
        self._sem: asyncio.Semaphore | None = None
        self._level = self.burst or 0.0
        self._at = time.monotonic()

    def _bucket_headers(self) -> dict[str, str]:
        if not (self.ratelimit_headers and self.rate and self.burst):
            return {}
        return {"x-ratelimit-limit-requests": f"{self.burst:g}",
                "x-ratelimit-remaining-requests": str(math.floor(self._level)),
                "x-ratelimit-reset-requests": f"{(self.burst - self._level) / self.rate * 1000:.0f}ms"}

    def _take(self) -> bool:
        if not (self.rate and self.burst):
            return True
        now = time.monotonic()
        with self._lock:
            self._level = min(self.burst, self._level + (now - self._at) * self.rate)
            self._at = now
            if self._level < 1:
                self.rejected += 1
                return False
            self._level -= 1
            return True

    async def _respond(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, body: Mapping[str, Any],
                       fault: str, headers: Mapping[str, str]) -> bool:
        content = _last_user_content(body)
        if fault != "ok" or any(key in content for key in self._canned):  # scripted faults and canned replies
            return await super()._respond(reader, writer, body, fault, headers)
        if not self._take():
            extra = self._bucket_headers()
            if self.retry_after is not None:
                extra["retry-after"] = self.retry_after
            await self._send(writer, 429, {"error": {"message": "Rate limit reached for requests",
                                                     "type": "requests", "code": "rate_limit_exceeded"}}, extra)
            return True
        if self._sem is None:
            self._sem = asyncio.Semaphore(self.slots)
        async with self._sem:
            if self.skip_abandoned and reader.at_eof():
                with self._lock:
                    self.abandoned += 1
                return False
            with self._lock:
                self.busy += 1
                self.max_busy = max(self.max_busy, self.busy)
            try:
                await asyncio.sleep(self.service_s)  # the client's going away does not stop it
            finally:
                with self._lock:
                    self.busy -= 1
            if reader.at_eof():
                with self._lock:
                    self.abandoned += 1
                    self.abandoned_s += self.service_s
                return False
        text = self._answer_text(body)
        payload = self._completion(str(body.get("model", "fake-model")), text)
        await self._send(writer, 200, payload, self._bucket_headers())
        with self._lock:
            self.completed += 1
        return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--slots", type=int, default=1)
    parser.add_argument("--service", type=float, default=0.25, help="seconds per request in its slot")
    parser.add_argument("--rate", type=float, default=None, help="requests per second (429 beyond)")
    parser.add_argument("--burst", type=float, default=None)
    parser.add_argument("--retry-after", default="1")
    parser.add_argument("--ratelimit-headers", action="store_true")
    parser.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    args = parser.parse_args(argv)
    server = SlotServer(slots=args.slots, service_s=args.service, rate=args.rate, burst=args.burst,
                        retry_after=args.retry_after or None, ratelimit_headers=args.ratelimit_headers,
                        port=args.port).start()
    print(server.port, flush=True)
    try:
        for line in sys.stdin:  # "stats" prints the server's figures as JSON; EOF stops it
            if line.strip() == "stats":
                import json

                print(json.dumps({"requests": server.count, "answered": server.completed, "rejected_429": server.rejected,
                                  "abandoned": server.abandoned, "abandoned_s": round(server.abandoned_s, 3),
                                  "max_busy": server.max_busy, "max_in_flight": server.max_in_flight}), flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
