"""Adaptive capacity of one model: how many requests it may have in flight, and how fast they may go.

The engine makes one :class:`CapacityController` per adaptive model per run (``openai:`` by
default; see docs/models.md "Local servers"). It learns from two signals:

* **queueing**: a server that answers fewer requests at once than it is sent (a one-slot llama.cpp
  or Ollama server) queues the rest; their latency grows with the number in flight while the
  throughput stays flat. The controller measures throughput at each in-flight limit over windows of
  completed requests (Little's law: requests in flight / latency) and moves the limit the way
  throughput says: it doubles from a cautious start while throughput grows, goes back when a step
  gained nothing, halves while halving costs nothing when the start already queued, and probes
  upwards again now and then. It keeps the latency under half the call timeout (it lowers the limit
  before timeouts fire; a cut that does not shorten the answers is taken back), and a timeout of a
  request sent while others were in flight halves the limit (such a timeout is not the case's
  fault: the request goes back in line).
* **rate limits**: a 429 (or a 503 with ``Retry-After``) pauses the model's whole queue once for the
  server's ``Retry-After`` (one pause per episode, not one per request: no thundering herd) and sets
  or lowers a learned request rate (AIMD: three quarters of the rate sent at on each episode, +5%
  every 5 s without one). When the server sends ``x-ratelimit-limit/remaining/reset-requests`` (and
  the ``-tokens`` twins), requests are paced by them before any 429 comes back.

Everything here is synchronous and takes the time as an argument, so the decisions are tested with a
fake clock; :class:`Gate` is the asyncio front the scheduler awaits. No heavy imports.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..models.options import CapacityBounds

TIMEOUT_SHARE = 0.5  # the mean latency is kept under this share of the call timeout
UP_GAIN = 0.2  # a doubling must raise throughput by 20% to be kept (a growth of 1.25x by 5%...)
DOWN_LOSS = 0.1  # halving is kept while it costs less than 10% of the best throughput
REPROBE_WINDOWS = 8  # steady windows between two probes upwards
RATE_DECREASE = 0.75  # the learned rate after a rate-limit episode, relative to the rate sent at
RATE_INCREASE = 0.05  # growth of the learned rate every RATE_PERIOD_S without a rate-limit episode
RATE_PERIOD_S = 5.0
DEFAULT_PAUSE_S = 1.0  # a 429 without Retry-After pauses the queue this long (doubling per episode)
MAX_PAUSE_S = 30.0
MAX_TOTAL_WAIT_S = 600.0  # what a request may wait in all on rate limits and queue-caused timeouts
CAPACITY_FILE = "capacity.json"
EPSILON_S = 1e-6  # waits shorter than this are none (float rounding would spin the timer)

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str | None) -> float | None:
    """Seconds of an ``x-ratelimit-reset-*`` value: ``1s``, ``6m0s``, ``20ms``, ``1.5`` (seconds)."""
    if text is None:
        return None
    raw = text.strip().lower()
    try:
        value = float(raw)
    except ValueError:
        parts = _DURATION_PART.findall(raw)
        if not parts or "".join(f"{n}{u}" for n, u in parts) != raw.replace(" ", ""):
            return None
        value = sum(float(n) * _UNITS[u] for n, u in parts)
    return value if math.isfinite(value) and value >= 0 else None


@dataclass(frozen=True, slots=True)
class RateHeaders:
    """One kind (requests or tokens) of a response's ``x-ratelimit-*`` headers."""

    limit: float
    remaining: float
    reset_s: float


def parse_rate_headers(headers: Mapping[str, str] | None) -> dict[str, RateHeaders]:
    """``{"requests": ..., "tokens": ...}`` from ``x-ratelimit-limit-X``, ``-remaining-X`` and
    ``-reset-X`` (OpenAI's names, also used by common gateways); kinds with a missing or unreadable
    value are left out."""
    out: dict[str, RateHeaders] = {}
    if not headers:
        return out
    lowered = {k.lower(): v for k, v in headers.items()}
    for kind in ("requests", "tokens"):
        try:
            limit = float(lowered[f"x-ratelimit-limit-{kind}"])
            remaining = float(lowered[f"x-ratelimit-remaining-{kind}"])
        except (KeyError, ValueError):
            continue
        reset = parse_duration(lowered.get(f"x-ratelimit-reset-{kind}"))
        if reset is None or not (math.isfinite(limit) and math.isfinite(remaining)) or limit <= 0:
            continue
        out[kind] = RateHeaders(limit, max(0.0, remaining), reset)
    return out


class _Mirror:
    """A local copy of the server's bucket of one kind, refilled at the rate its headers imply
    (``(limit - remaining) / reset``: the time the server says it needs to refill what is used)."""

    def __init__(self) -> None:
        self.level = math.inf
        self.limit = math.inf
        self.rate: float | None = None
        self.at = 0.0

    def report(self, h: RateHeaders, spent_since: float, now: float) -> None:
        used = h.limit - h.remaining
        if h.reset_s > 0 and used > 0:
            self.rate = used / h.reset_s
        self.limit = h.limit
        # requests sent after the one this answers may not be counted yet by the server: conservative
        self.level = max(0.0, h.remaining - spent_since)
        self.at = now

    def _refill(self, now: float) -> None:
        if not self.rate:
            return  # no refill rate known: the level holds until the pause in wait() ends
        if math.isfinite(self.level):
            self.level = min(self.limit, self.level + (now - self.at) * self.rate)
        self.at = now

    def wait(self, cost: float, now: float) -> float:
        if not math.isfinite(self.level):
            return 0.0
        self._refill(now)
        need = min(cost, self.limit) - self.level
        if need <= EPSILON_S:
            return 0.0
        if not self.rate:  # a server that said "none left" without a refill time: try again after a pause
            if now - self.at >= DEFAULT_PAUSE_S:
                self.level, self.at = self.limit, now
                return 0.0
            return self.at + DEFAULT_PAUSE_S - now
        return need / self.rate

    def take(self, cost: float, now: float) -> None:
        if math.isfinite(self.level):
            self._refill(now)
            self.level = max(0.0, self.level - cost)


class CapacityController:
    """In-flight limit and pacing of one model (see the module doc). Times are in seconds of the
    clock the caller passes in (the event loop's ``time()`` in the engine)."""

    def __init__(self, bounds: CapacityBounds, now: float, timeout_s: float | None = None,
                 stored: Mapping[str, Any] | None = None) -> None:
        self.bounds = bounds
        stored_limit = stored.get("concurrency") if stored else None
        stored_rate = stored.get("rate") if stored else None
        self.started_from = "stored" if (bounds.start is None and isinstance(stored_limit, int)) else "default"
        self.limit = bounds.first(stored_limit if isinstance(stored_limit, int) else None)
        self.start = self.limit
        self.timeout_s = timeout_s
        self.in_flight = 0
        self.max_limit = self.limit
        self.min_limit = self.limit
        # rate limiting
        self.pause_until = now
        self.episode_started = -math.inf
        self.episodes = 0
        self.rate: float | None = float(stored_rate) if isinstance(stored_rate, int | float) and stored_rate > 0 \
            else None
        self.rate_source = "stored" if self.rate else None
        self.next_send = now
        self.rate_checked = now
        self.sends: deque[float] = deque()  # send times of the last second
        self.sent = 0
        self.sent_tokens = 0.0
        self.tokens_at_seq: dict[int, float] = {}
        self.mirrors = {"requests": _Mirror(), "tokens": _Mirror()}
        self.sent_at_seq: dict[int, int] = {}
        self.crowd: dict[int, int] = {}  # requests in flight (itself included) when each was sent
        self.held_since: float | None = None  # since when the pause or the pacing holds the queue
        # figures
        self.rate_limited = 0
        self.timeouts = 0
        self.queue_timeouts = 0  # of which sent while others were in flight (not charged to the case)
        self.backoffs = 0
        self.waited_s = 0.0
        self.max_in_flight = 0
        # queueing probe: the level now, since when, its window and the reference to beat
        self.phase = "start" if bounds.adaptive else "fixed"
        self.level_since = now
        self.count_from = now  # completions of requests sent from then on measure the current level
        self.warmup = self.limit  # the first requests met an empty server: their latency is not the level's
        self.level_old: set[int] = set()
        self.skip_sends = 0
        self.skipped: set[int] = set()  # requests not measured (sent the moment the level rose)
        self.area = 0.0  # integral of the requests in flight over time
        self.area_at = now
        self.ref: tuple[int, float] | None = None  # (limit, throughput) of the last kept level
        self.best_x = 0.0
        self.queued_at_start = False
        self.steady = 0
        self.min_latency = math.inf
        self.guard_check: tuple[int, float] | None = None  # (limit, latency) before the latency guard cut
        self.guard_off = False
        self._reset_window(now)
        self.history: list[tuple[float, int, str]] = [(now, self.limit, "start")]

    # ---------------------------------------------------------------- sending
    def wait_s(self, now: float, cost_tokens: float = 0.0) -> float:
        """Seconds until the next request may be sent (0: now), by the pause and the pacing."""
        wait = max(0.0, self.pause_until - now)
        if self.rate:
            wait = max(wait, self.next_send - now)
        wait = max(wait, self.mirrors["requests"].wait(1.0, now))
        if cost_tokens > 0:
            wait = max(wait, self.mirrors["tokens"].wait(cost_tokens, now))
        return wait

    def _integrate(self, now: float) -> None:
        self.area += self.in_flight * max(0.0, now - self.area_at)
        self.area_at = now

    def has_room(self) -> bool:
        return self.in_flight < self.limit

    def on_send(self, seq: int, now: float, cost_tokens: float = 0.0) -> None:
        self._integrate(now)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        self.sent += 1
        self.sent_tokens += cost_tokens
        self.sent_at_seq[seq] = self.sent
        self.tokens_at_seq[seq] = self.sent_tokens
        self.crowd[seq] = self.in_flight
        if self.skip_sends > 0:
            self.skip_sends -= 1
            self.skipped.add(seq)
        self.sends.append(now)
        while self.sends and self.sends[0] < now - 1.0:
            self.sends.popleft()
        if self.rate:
            self.next_send = max(self.next_send, now) + 1.0 / self.rate
        self.mirrors["requests"].take(1.0, now)
        if cost_tokens > 0:
            self.mirrors["tokens"].take(cost_tokens, now)
        self._grow_rate(now)

    def on_headers(self, seq: int, headers: Mapping[str, str] | None, now: float) -> None:
        """A response's ``x-ratelimit-*`` headers (success or failure)."""
        parsed = parse_rate_headers(headers)
        if not parsed:
            return
        # what was sent after this request may not be counted by the server yet: taken off, conservatively
        spent = {"requests": float(self.sent - self.sent_at_seq.get(seq, self.sent)),
                 "tokens": self.sent_tokens - self.tokens_at_seq.get(seq, self.sent_tokens)}
        for kind, h in parsed.items():
            self.mirrors[kind].report(h, spent[kind], now)

    # ---------------------------------------------------------------- outcomes
    def on_done(self, seq: int, sent_at: float, now: float, outcome: str,
                retry_after: float | None = None) -> str | None:
        """Record the end of request ``seq``; ``outcome``: ``ok``, ``rate`` (429 / 503+Retry-After),
        ``timeout`` or ``error``. Returns what the engine should do with a failed request: ``requeue``
        (not the case's fault: send it again without using an attempt) or None (the usual retry
        policy decides)."""
        self._integrate(now)
        self.in_flight = max(0, self.in_flight - 1)
        self.sent_at_seq.pop(seq, None)
        self.tokens_at_seq.pop(seq, None)
        crowd = self.crowd.pop(seq, 1)
        if self.level_old:
            self.level_old.discard(seq)
            if not self.level_old:  # the old level's requests are done: count what is sent from now on
                self.count_from = now
                self._reset_window(now)
        if outcome == "rate":
            self.rate_limited += 1
            self._rate_episode(sent_at, now, retry_after)
            return "requeue"
        if outcome == "timeout":
            self.timeouts += 1
            if not self.bounds.adaptive or crowd <= 1:
                return None  # nothing else was in flight when it was sent: the server itself is too slow
            if sent_at >= self.level_since:
                self._set(max(self.bounds.minimum, self.limit // 2), now, "timeout", steady=True)
            self.queue_timeouts += 1
            return "requeue"
        if outcome == "ok" and self.bounds.adaptive:
            latency = now - sent_at
            self.min_latency = min(self.min_latency, latency)
            if self.warmup > 0:
                self.warmup -= 1
                if not self.warmup:
                    self.count_from = now
                    self._reset_window(now)
            elif sent_at >= self.count_from and not self.level_old and seq not in self.skipped:
                self._count(latency, now)
        self.skipped.discard(seq)
        return None

    def _rate_episode(self, sent_at: float, now: float, retry_after: float | None) -> None:
        if sent_at < self.episode_started or now < self.pause_until:
            # sent before the episode began, or while the queue is paused: the same episode
            if retry_after is not None:
                self.pause_until = max(self.pause_until, now + retry_after)
            return
        self.episodes += 1
        self.episode_started = now
        pause = retry_after if retry_after is not None else min(MAX_PAUSE_S, DEFAULT_PAUSE_S * 2 ** (self.episodes - 1))
        self.pause_until = max(self.pause_until, now + pause)
        while self.sends and self.sends[0] < now - 1.0:
            self.sends.popleft()
        sent_rate = float(len(self.sends))  # requests sent in the last second
        base = min(self.rate, sent_rate) if self.rate else sent_rate
        self.rate = max(0.1, RATE_DECREASE * max(base, 1.0))
        self.rate_source = "429"
        self.rate_checked = now
        self.next_send = self.pause_until
        self.backoffs += 1
        if self.phase in ("start", "up"):
            self.phase = "steady"  # slow start ends at the first rate-limit episode
        self._reset_window(now)

    def _grow_rate(self, now: float) -> None:
        if self.rate is None or now - self.rate_checked < RATE_PERIOD_S:
            return
        if now - max(self.episode_started, self.pause_until) >= RATE_PERIOD_S:
            self.rate *= 1 + RATE_INCREASE
        self.rate_checked = now

    # ---------------------------------------------------------------- queueing probe
    def _reset_window(self, now: float) -> None:
        self._integrate(now)
        self.w_start = now
        self.w_area0 = self.area
        self.w_done = 0
        self.w_latency = 0.0

    def _count(self, latency: float, now: float) -> None:
        self.w_done += 1
        self.w_latency += latency
        if self.w_done >= max(5, self.limit if self.phase in ("start", "up") else 2 * self.limit):
            self._integrate(now)
            duration = now - self.w_start
            if duration > 0:
                n_avg = (self.area - self.w_area0) / duration
                mean = self.w_latency / self.w_done
                # Little's law: throughput = requests in flight / latency, free of the window's edges
                self._evaluate(n_avg / mean, mean, n_avg, now)
            self._reset_window(now)

    def _projected_ok(self, latency: float, factor: float) -> bool:
        """Whether the latency stays under the timeout share if it grew by ``factor`` (a queueing server)."""
        return self.timeout_s is None or self.guard_off or latency * factor <= TIMEOUT_SHARE * self.timeout_s

    def _evaluate(self, x: float, latency: float, n_avg: float, now: float) -> None:
        lo, hi = self.bounds.minimum, self.bounds.maximum
        if self.guard_check is not None:
            before_limit, before_latency = self.guard_check
            self.guard_check = None
            if latency > 0.85 * before_latency:
                # a lower limit did not shorten the answers: their latency is the server's, not a queue's
                # (long answers of a parallel API); the guard is off for this run, timeouts still count
                self.guard_off = True
                self.ref = None
                self._set(before_limit, now, "start")  # measured afresh, then grown as from the start
                return
        if (self.timeout_s is not None and not self.guard_off and latency > TIMEOUT_SHARE * self.timeout_s
                and self.limit > lo):
            target = max(lo, min(self.limit - 1, int(self.limit * TIMEOUT_SHARE * self.timeout_s / latency)))
            self.backoffs += 1
            self.guard_check = (self.limit, latency)
            if latency > 1.5 * self.min_latency:  # queued: go on halving while it costs no throughput
                self.ref, self.best_x = (target, x), x
                self._set(target, now, "down")
            else:
                self.ref = None
                self._set(target, now, "latency", steady=True)
            return
        if n_avg < 0.6 * self.limit and self.phase not in ("down",):
            return  # the limit was not used (too little work, or paced): nothing learned at this level
        self.best_x = max(self.best_x, x)
        phase = self.phase
        if phase == "start":
            self.ref = (self.limit, x)
            self.queued_at_start = latency > 1.5 * self.min_latency
            if self.limit < hi and self._projected_ok(latency, 2.0):
                self._set(min(hi, self.limit * 2), now, "up")
            elif self.queued_at_start and self.limit > lo:
                self._set(max(lo, self.limit // 2), now, "down")
            else:
                self._set(self.limit, now, "steady")
        elif phase == "up" or phase == "probe":
            assert self.ref is not None
            ref_limit, ref_x = self.ref
            step = self.limit / ref_limit - 1.0
            needed = UP_GAIN if phase == "up" else max(0.05, 0.4 * step)
            if x >= ref_x * (1.0 + needed):
                self.ref = (self.limit, x)
                if phase == "up" and self.limit < hi and self._projected_ok(latency, 2.0):
                    self._set(min(hi, self.limit * 2), now, "up")
                else:
                    self._set(self.limit, now, "steady")
            elif phase == "up" and ref_limit == self.start and self.queued_at_start and ref_limit > lo:
                self._set(max(lo, ref_limit // 2), now, "down")
            else:
                self._set(ref_limit, now, "steady")
        elif phase == "down":
            assert self.ref is not None
            ref_limit, _ = self.ref
            if x >= (1.0 - DOWN_LOSS) * self.best_x:
                self.ref = (self.limit, x)
                if self.limit > lo:
                    self._set(max(lo, self.limit // 2), now, "down")
                else:
                    self._set(self.limit, now, "steady")
            else:
                self._set(ref_limit, now, "steady")
        else:  # steady
            if self.ref is None or self.ref[0] != self.limit or x < 0.7 * self.ref[1]:
                self.ref = (self.limit, x)  # a server that slowed down is measured afresh
                self.best_x = x
            self.steady += 1
            if self.steady >= REPROBE_WINDOWS and self.limit < hi:
                step = max(1, self.limit // 4)
                if self._projected_ok(latency, (self.limit + step) / self.limit):
                    self.ref = (self.limit, x)
                    self._set(min(hi, self.limit + step), now, "probe")

    def _set(self, limit: int, now: float, phase: str, steady: bool = False) -> None:
        if limit < self.limit and phase == "timeout":
            self.backoffs += 1
        changed = limit != self.limit
        old_limit = self.limit
        self.limit = limit
        self.phase = "steady" if steady else phase
        if phase != "steady" or changed:
            self.steady = 0
        self.max_limit = max(self.max_limit, limit)
        self.min_limit = min(self.min_limit, limit)
        if changed:
            self.history.append((now, limit, phase))
            self.level_since = now
            if limit < old_limit:
                # more are in flight than the new level allows: the window waits until they are done
                self.level_old = set(self.sent_at_seq)
                self.count_from = now if not self.level_old else math.inf
            else:  # a higher level: measured from now, but not on the first requests the rise lets in,
                # which find slots the old level's requests are about to free (a latency too short)
                self.level_old = set()
                self.count_from = now
                self.skip_sends = limit - old_limit
        self._reset_window(now)

    # ---------------------------------------------------------------- figures
    def learned(self) -> int:
        """The limit learned: the current one, or during a probe upwards the level the probe started from."""
        if self.phase in ("up", "probe") and self.ref is not None:
            return self.ref[0]
        return self.limit

    def figures(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "adaptive": self.bounds.adaptive, "concurrency": self.learned(), "concurrency_start": self.start,
            "concurrency_max_used": self.max_limit, "concurrency_min_used": self.min_limit,
            "bounds": [self.bounds.minimum, self.bounds.maximum], "max_in_flight": self.max_in_flight,
            "rate_per_s": round(self.rate, 3) if self.rate else None,
            "responses_429": self.rate_limited, "rate_limit_episodes": self.episodes, "backoffs": self.backoffs,
            "timeouts": self.timeouts, "queue_timeouts": self.queue_timeouts, "rate_source": self.rate_source,
            "waited_s": round(self.waited_s, 3), "started_from": self.started_from,
        }
        header_rate = self.mirrors["requests"].rate
        if header_rate:
            out["header_rate_per_s"] = round(header_rate, 3)
        return out

    def describe(self) -> str:
        """The learned limit in words (for messages and the progress display)."""
        text = f"{self.limit} in flight" + ("" if self.bounds.adaptive else " (fixed)")
        rate = self.mirrors["requests"].rate or self.rate
        if rate:
            text += f", {rate:.3g} requests/s"
        return text


class Gate:
    """The asyncio front of a :class:`CapacityController`: ``await acquire()`` before a call,
    ``release(...)`` after it. Waiters are served first come first served; one timer wakes the head
    of the line when the pause or the pacing holds it, so a thousand waiting requests cost nothing."""

    def __init__(self, controller: CapacityController, clock: Callable[[], float]) -> None:
        self.ctl = controller
        self.clock = clock
        self._waiters: deque[tuple[asyncio.Future[None], int, float]] = deque()
        self._timer: asyncio.TimerHandle | None = None

    async def acquire(self, seq: int, cost_tokens: float = 0.0) -> float:
        """Wait for room and for the pacing; returns the send time."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        self._waiters.append((fut, seq, cost_tokens))
        self._pump()
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.ctl.in_flight = max(0, self.ctl.in_flight - 1)  # granted, then cancelled: give it back
                self.ctl.sent_at_seq.pop(seq, None)
                self.ctl.tokens_at_seq.pop(seq, None)
                self.ctl.crowd.pop(seq, None)
            else:
                self._waiters = deque(w for w in self._waiters if w[0] is not fut)
            self._pump()
            raise
        return self.clock()

    def release(self, seq: int, sent_at: float, outcome: str, retry_after: float | None = None) -> str | None:
        verdict = self.ctl.on_done(seq, sent_at, self.clock(), outcome, retry_after)
        self._pump()
        return verdict

    def _pump(self) -> None:
        ctl = self.ctl
        while self._waiters and self._waiters[0][0].done():
            self._waiters.popleft()
        while self._waiters and ctl.has_room():
            fut, seq, cost = self._waiters[0]
            now = self.clock()
            wait = ctl.wait_s(now, cost)
            if wait > EPSILON_S:
                if ctl.held_since is None:
                    ctl.held_since = now
                if self._timer is None:
                    loop = asyncio.get_running_loop()
                    self._timer = loop.call_at(loop.time() + wait, self._wake)
                return
            self._waiters.popleft()
            if fut.done():
                continue
            if ctl.held_since is not None:  # the time the queue was held by a pause or the pacing
                ctl.waited_s += now - ctl.held_since
                ctl.held_since = None
            ctl.on_send(seq, now, cost)
            fut.set_result(None)

    def _wake(self) -> None:
        self._timer = None
        self._pump()


# ---------------------------------------------------------------------- learned capacity on disk
def load_learned(directory: Path | None, key: str) -> tuple[dict[str, Any] | None, str | None]:
    """What a previous run learned about endpoint ``key`` (None when nothing), and a problem to report."""
    if directory is None:
        return None, None
    path = Path(directory) / CAPACITY_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"the learned capacities in {path} cannot be read ({exc}); starting from the defaults"
    try:
        data = json.loads(text)
    except ValueError as exc:
        return None, f"the learned capacities in {path} are not JSON ({exc}); starting from the defaults"
    entry = data.get(key) if isinstance(data, dict) else None
    if entry is None:
        return None, None
    limit = entry.get("concurrency") if isinstance(entry, dict) else None
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        return None, (f"the learned capacity of {key} in {path} is unreadable ({entry!r}); starting from the "
                      "defaults (delete the file to clear it)")
    return entry, None


def save_learned(directory: Path | None, key: str, figures: Mapping[str, Any]) -> str | None:
    """Keep what this run learned about endpoint ``key`` as the next run's start; a problem or None."""
    if directory is None:
        return None
    path = Path(directory) / CAPACITY_FILE
    try:
        Path(directory).mkdir(parents=True, exist_ok=True)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                data = {}
        except (FileNotFoundError, ValueError):
            data = {}
        entry: dict[str, Any] = {"concurrency": int(figures["concurrency"]), "updated": round(time.time())}
        if figures.get("rate_per_s"):
            entry["rate"] = figures["rate_per_s"]
        data[key] = entry
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        return f"the learned capacity cannot be kept in {path} ({exc}); the next run starts from the defaults"
    return None


__all__ = ["CAPACITY_FILE", "MAX_TOTAL_WAIT_S", "CapacityBounds",
           "CapacityController", "Gate", "RateHeaders", "load_learned", "parse_duration", "parse_rate_headers",
           "save_learned"]
