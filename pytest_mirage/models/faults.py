"""Fault handling shared by the engine and the adapters: retryable errors, backoff, redaction."""

from __future__ import annotations

import contextvars
import email.utils
import math
import random
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from ..errors import ConfigError, ModelError
from .credentials import mask_text

EXCERPT_CHARS = 300


class TransientError(ModelError):
    """A failure worth retrying: rate limit (429), server error (5xx), timeout, dropped connection.

    ``retry_after`` is the wait the server asked for, in seconds (``Retry-After`` /
    ``retry-after-ms``), or None. The engine retries these with backoff; when it gives up, the case
    ends as a plain :class:`~pytest_mirage.errors.ModelError` carrying this message.

    ``signal`` tells the engine's capacity controller what the failure says about the server:
    ``rate`` (a rate limit: HTTP 429, or 503 with ``Retry-After``), ``timeout`` (no answer in time:
    possibly queued behind other requests) or None (anything else). Rate limits and queue-caused
    timeouts of an adaptive model use none of the case's attempts (see
    :mod:`pytest_mirage.engine.capacity`).
    """

    def __init__(self, message: str, retry_after: float | None = None, signal: str | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.signal = signal


# The engine sets this, per request, to a function the adapter hands each response's headers to
# (success or failure): the capacity controller paces by ``x-ratelimit-*`` headers. Unset: no-op.
response_headers_sink: contextvars.ContextVar[Callable[[Mapping[str, str]], None] | None] = \
    contextvars.ContextVar("mirage_response_headers", default=None)


def report_headers(headers: Mapping[str, str] | None) -> None:
    """Give a response's headers to the engine (adapters call this; nothing happens outside a run)."""
    sink = response_headers_sink.get()
    if sink is not None and headers:
        sink(headers)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff with jitter; a server's ``Retry-After`` is honoured up to ``max_wait_s``.

    Attempt ``n`` (0-based) without a ``Retry-After`` waits ``d/2 + uniform(0, d/2)`` seconds with
    ``d = min(max_backoff_s, base_s * 2**n)`` ("equal jitter": never less than half the backoff, so
    a crowd of clients spreads out but none retries at once). With a ``Retry-After`` of ``r``
    seconds the wait is ``r`` plus up to 10% jitter; an ``r`` above ``max_wait_s`` ends the retries.
    """

    max_retries: int = 4
    base_s: float = 0.5
    max_backoff_s: float = 20.0
    max_wait_s: float = 120.0

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ConfigError(f"retries: found {self.max_retries}; expected an integer >= 0")
        if not (self.base_s >= 0 and self.max_backoff_s >= 0 and self.max_wait_s >= 0):
            raise ConfigError("retry backoff settings must be >= 0 seconds; found "
                              f"base={self.base_s}, max_backoff={self.max_backoff_s}, max_wait={self.max_wait_s}")

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float | None:
        """Seconds to wait before retry number ``attempt + 1``, or None to give up."""
        if attempt >= self.max_retries:
            return None
        if retry_after is not None:
            if retry_after > self.max_wait_s:
                return None
            return retry_after + rng.uniform(0, 0.1 * retry_after)
        d = min(self.max_backoff_s, self.base_s * (2.0 ** attempt))
        return d / 2 + rng.uniform(0, d / 2)


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    ms = lowered.get("retry-after-ms")
    if ms is not None:
        try:
            value = float(ms) / 1000.0
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value >= 0:
            return value
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - (time.time() if now is None else now))
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


_KEY_ASSIGNMENT = re.compile(r"(?i)\b(api[_-]?key|authorization|x-api-key)(\"?\s*[:=]\s*\"?)[^\s\",}]{4,}")


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with the given secret values and anything shaped like a credential masked: keys and
    bearer tokens, ``api_key=...`` assignments, user info and query values in URLs, secret-named
    JSON keys (see :func:`pytest_mirage.models.credentials.mask_text`)."""
    text = mask_text(text, secrets)
    return _KEY_ASSIGNMENT.sub(lambda m: f"{m.group(1)}{m.group(2)}***", text)


def cause_chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and the exceptions it was explicitly raised from (``raise ... from cause``), outermost
    first; stops at a cycle.

    Implicit contexts ("during handling of the above exception") are not followed: they are often
    incidental (an asyncio or anyio internal caught and dropped on the way), not the failure.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__


def describe_cause(exc: BaseException) -> str:
    """``Type: message`` of the innermost exception in ``exc``'s :func:`cause_chain` with a message.

    HTTP clients wrap the OS error in their own classes, and some map one kind onto another (the
    openai SDK's aiohttp transport reports a refused connection as httpx's ``ConnectTimeout``); the
    innermost error, e.g. ``ConnectionRefusedError: [Errno 111] Connect call failed``, is the fact.
    """
    for link in reversed(list(cause_chain(exc))):
        if str(link).strip():
            return f"{type(link).__name__}: {link}"
    return type(exc).__name__


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """A one-line excerpt of a response body for error messages."""
    flat = " ".join(text.split())
    if not flat:
        return "<empty body>"
    return flat if len(flat) <= limit else flat[:limit] + f"... ({len(flat)} chars)"
