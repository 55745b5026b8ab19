"""Counters of one session's model traffic, mergeable across xdist workers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

MAX_PROBLEMS = 20  # problems kept per session (each is one line; a broken disk repeats itself)
JUDGE_WORK = ("calls", "batches")  # judge-health counts that depend on how the items were split
_SUMMED = frozenset({"responses_429", "rate_limit_episodes", "backoffs", "timeouts", "queue_timeouts", "waited_s"})


@dataclass(slots=True)
class EngineStats:
    """What the engine did: cache hits and misses, model calls (retries and failures included),
    tokens spent, and the problems it met (a cache it could not write, a model it stopped calling).

    A mutable accumulator (not a value): the plugin creates one per process, passes it in
    :class:`~pytest_mirage.engine.EngineSettings` and sends :meth:`to_dict` through
    ``config.workeroutput`` so the controller can :meth:`merge` the workers' counts.
    """

    requests: int = 0  # requests given to run_requests
    hits: int = 0  # answered from the cache
    misses: int = 0  # not in the cache (or cache off/refresh): sent to the model
    calls: int = 0  # model calls made, retries and failed calls included (a batch of n counts n)
    retries: int = 0  # calls that were retries of a failed attempt
    failed_calls: int = 0  # calls that failed (retried or not)
    errors: int = 0  # requests that ended as an error
    truncated: int = 0  # answers cut at the output limit (kept, flagged Answer.truncated)
    skipped: int = 0  # requests not sent because the model kept failing the same way
    rate_limited: int = 0  # calls answered with a rate limit and sent again without using an attempt
    prompt_tokens: int = 0  # tokens of the calls made in this run, failed ones included when the
    completion_tokens: int = 0  # server reported them (cache hits cost none)
    wall_s: float = 0.0
    problems: list[str] = field(default_factory=list)
    # per model: what its capacity controller learned and did (see engine/capacity.py figures())
    capacity: dict[str, dict[str, Any]] = field(default_factory=dict)
    # per metric judge: the model inputs it evaluated (``calls``) and its ``complete`` calls or
    # forward passes (``batches``), summed over the processes. Each xdist worker batches the items it
    # runs, and a local judge runs an input shared by several items once per batch (an embedding judge
    # once per process), so both vary with -n: shown here, never in a report
    judge_work: dict[str, dict[str, int]] = field(default_factory=dict)

    def add_judge_work(self, health: Mapping[str, Mapping[str, Any]]) -> None:
        """Add the ``calls`` and ``batches`` of each judge's health (``{judge: JudgeHealth.to_json()}``)."""
        for judge, h in health.items():
            if not isinstance(h, Mapping):
                continue
            counts = {k: n for k in JUDGE_WORK if isinstance(n := h.get(k, 0), int) and not isinstance(n, bool)}
            if any(counts.values()):
                mine = self.judge_work.setdefault(str(judge), dict.fromkeys(JUDGE_WORK, 0))
                for k, n in counts.items():
                    mine[k] = mine.get(k, 0) + n

    def add_capacity(self, model: str, figures: Mapping[str, Any]) -> None:
        """Add one run's capacity figures of ``model``: counts and waits add up, the limit and rate
        are the latest, the highest limit used is the highest."""
        mine = self.capacity.get(model)
        if mine is None:
            self.capacity[model] = dict(figures)
            return
        for name, value in figures.items():
            old = mine.get(name)
            if name in _SUMMED and isinstance(value, int | float) and isinstance(old, int | float):
                mine[name] = round(old + value, 3) if isinstance(value, float) else old + value
            elif name in ("concurrency_max_used", "max_in_flight") and isinstance(old, int) and isinstance(value, int):
                mine[name] = max(old, value)
            elif name == "concurrency_min_used" and isinstance(old, int) and isinstance(value, int):
                mine[name] = min(old, value)
            elif name not in ("concurrency_start", "started_from") or old is None:
                mine[name] = value

    def add_usage(self, usage: Mapping[str, Any] | None) -> None:
        if not usage:
            return
        for name in ("prompt_tokens", "completion_tokens"):
            value = usage.get(name)
            if isinstance(value, int) and not isinstance(value, bool):
                setattr(self, name, getattr(self, name) + value)

    def problem(self, message: str) -> None:
        """Record a session-level problem once (the plugin prints them in the summary)."""
        if message not in self.problems and len(self.problems) < MAX_PROBLEMS:
            self.problems.append(message)

    def merge(self, other: EngineStats | Mapping[str, Any]) -> None:
        data = other.to_dict() if isinstance(other, EngineStats) else other
        for f in fields(self):
            value = data.get(f.name, 0)
            if f.name == "problems":
                for message in value if isinstance(value, list) else ():
                    if isinstance(message, str):
                        self.problem(message)
            elif f.name == "judge_work":
                if isinstance(value, Mapping):
                    self.add_judge_work(value)
            elif f.name == "capacity":
                for model, figures in (value.items() if isinstance(value, Mapping) else ()):
                    if isinstance(figures, Mapping):
                        self.add_capacity(str(model), figures)
            elif isinstance(value, int | float) and not isinstance(value, bool):
                setattr(self, f.name, getattr(self, f.name) + value)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        out["problems"] = list(self.problems)
        out["capacity"] = {m: dict(f) for m, f in self.capacity.items()}
        out["judge_work"] = {j: dict(w) for j, w in sorted(self.judge_work.items())}
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EngineStats:
        stats = cls()
        stats.merge(data)
        return stats


def summary_lines(stats: EngineStats, cache_path: str | None = None) -> list[str]:
    """Terminal summary lines (the plugin prints them in ``pytest_terminal_summary``)."""
    if stats.requests == 0 and not stats.problems:
        return []
    line = (f"mirage engine: {stats.requests} requests, {stats.hits} cache hits, {stats.misses} misses, "
            f"{stats.calls} model calls ({stats.retries} retries), {stats.failed_calls} failed, "
            f"{stats.errors} errors")
    if stats.truncated:
        line += f", {stats.truncated} cut at max_tokens"
    if stats.skipped:
        line += f", {stats.skipped} not sent"
    line += (f", tokens {stats.prompt_tokens} prompt + {stats.completion_tokens} completion, "
             f"{stats.wall_s:.1f}s")
    if stats.rate_limited:
        line += f", {stats.rate_limited} rate-limited and sent again"
    lines = [line]
    lines += capacity_lines(stats)
    if cache_path:
        lines.append(f"mirage cache: {cache_path}")
    lines += [f"mirage problem: {p}" for p in stats.problems]
    return lines


def judge_work_lines(stats: EngineStats) -> list[str]:
    """How much each metric judge computed: model inputs and batches (``complete`` calls or forward
    passes). Each xdist worker batches its own items and runs an input that several items share once
    per batch, so the figures depend on -n, like the engine's wall time: they are printed here and
    left out of the reports (whose judge health is the same for any -n)."""
    if not stats.judge_work:
        return []
    per = "; ".join(f"{judge} {w.get('calls', 0)} model inputs in {w.get('batches', 0)} batches"
                    for judge, w in sorted(stats.judge_work.items()))
    return [f"mirage judge work: {per} (summed over the xdist workers, each batching its own items)"]


def capacity_lines(stats: EngineStats) -> list[str]:
    """One line per model whose capacity the engine managed: the learned limit and rate, 429s,
    back-offs and time waited."""
    out = []
    for model, f in sorted(stats.capacity.items()):
        if f.get("adaptive"):
            lo, hi = (f.get("bounds") or [None, None])[:2]
            text = (f"learned {f.get('concurrency')} in flight (started at {f.get('concurrency_start')}"
                    f"{' from the previous run' if f.get('started_from') == 'stored' else ''}, used up to "
                    f"{f.get('concurrency_max_used')}, bounds {lo}-{hi})")
        else:
            text = f"fixed {f.get('concurrency')} in flight"
        rate = f.get("header_rate_per_s") or f.get("rate_per_s")
        if rate:
            text += f", {rate:g} requests/s ({'x-ratelimit headers' if f.get('header_rate_per_s') else 'learned'})"
        text += (f", {f.get('responses_429', 0)} responses 429 in {f.get('rate_limit_episodes', 0)} episode(s), "
                 f"{f.get('backoffs', 0)} back-offs, {f.get('timeouts', 0)} timeouts "
                 f"({f.get('queue_timeouts', 0)} in the queue, sent again), "
                 f"{f.get('waited_s', 0.0):.1f}s waited on rate limits")
        out.append(f"mirage capacity [{model}]: {text}")
    return out
