"""Scheduling: concurrency limits, batching, order, adapter contract checks, stats."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from pytest_mirage.engine import (
    EngineSettings,
    EngineStats,
    RetryPolicy,
    run_requests,
    summary_lines,
)
from pytest_mirage.errors import ConfigError, ModelError
from pytest_mirage.models.base import Answer
from tests.helpers.adapters import CountingBatchAdapter, SlowAsyncAdapter, transient
from tests.helpers.cases import make_requests

FAST = RetryPolicy(max_retries=2, base_s=0.01, max_backoff_s=0.02)


def test_async_adapters_run_concurrently_up_to_the_limit() -> None:
    reqs = make_requests(40)
    adapter = SlowAsyncAdapter(delay=0.05)
    started = time.monotonic()
    out = run_requests(adapter, reqs, EngineSettings(concurrency=8))
    elapsed = time.monotonic() - started
    assert adapter.max_in_flight == 8
    assert elapsed < 40 * 0.05 / 2  # far from sequential (2 s); ideal is 5 waves = 0.25 s
    assert [a.case_id for a in out if isinstance(a, Answer)] == [r.case.id for r in reqs]  # order kept
    assert adapter.aclosed == 1


def test_the_models_own_concurrency_wins() -> None:
    adapter = SlowAsyncAdapter(delay=0.02, concurrency=3)
    run_requests(adapter, make_requests(12), EngineSettings(concurrency=50))
    assert adapter.max_in_flight == 3


def test_local_engines_get_one_batch_or_batch_size_chunks() -> None:
    reqs = make_requests(10)
    whole = CountingBatchAdapter()
    run_requests(whole, reqs, EngineSettings())
    assert [len(b) for b in whole.batches] == [10]
    chunked = CountingBatchAdapter()
    run_requests(chunked, reqs, EngineSettings(batch_size=4))
    assert [len(b) for b in chunked.batches] == [4, 4, 2]
    own = CountingBatchAdapter(batch_size=3)
    run_requests(own, reqs, EngineSettings(batch_size=4))
    assert [len(b) for b in own.batches] == [3, 3, 3, 1]


def test_unexpected_exceptions_become_errors_naming_the_case_and_type() -> None:
    def fail(req, attempt):  # type: ignore[no-untyped-def]
        return KeyError("missing field") if req.case.id == "q-1" else None

    out = run_requests(SlowAsyncAdapter(delay=0, fail=fail), make_requests(3), EngineSettings())
    assert isinstance(out[1], ModelError)
    assert str(out[1]) == "case engine-suite/q-1: model async:test: KeyError: 'missing field'"
    assert isinstance(out[1].__cause__, KeyError)
    assert isinstance(out[0], Answer) and isinstance(out[2], Answer)


def test_async_transient_errors_are_retried() -> None:
    def fail(req, attempt):  # type: ignore[no-untyped-def]
        return transient() if req.case.id == "q-0" and attempt < 2 else None

    adapter = SlowAsyncAdapter(delay=0, fail=fail)
    stats = EngineStats()
    out = run_requests(adapter, make_requests(2), EngineSettings(retry=FAST, stats=stats))
    assert isinstance(out[0], Answer) and adapter.attempts == {"q-0": 3, "q-1": 1}
    assert (stats.calls, stats.retries, stats.errors) == (4, 2, 0)


def test_call_timeout_counts_as_a_retryable_timeout() -> None:
    adapter = SlowAsyncAdapter(delay=1.0)
    out = run_requests(adapter, make_requests(1),
                       EngineSettings(call_timeout=0.05, retry=RetryPolicy(max_retries=1, base_s=0.01)))
    assert isinstance(out[0], ModelError)
    assert "no answer within 0.05s (call_timeout) (gave up after 2 attempt(s))" in str(out[0])
    assert adapter.attempts == {"q-0": 2}


def test_works_when_called_from_a_running_event_loop() -> None:
    async def main() -> list[Answer | Exception]:
        return run_requests(SlowAsyncAdapter(delay=0.01), make_requests(3), EngineSettings())

    out = asyncio.run(main())
    assert all(isinstance(a, Answer) for a in out)


def test_adapter_contract_violations_are_loud() -> None:
    class Short(CountingBatchAdapter):
        def answer_batch(self, requests):  # type: ignore[no-untyped-def]
            return super().answer_batch(requests)[:-1]

    with pytest.raises(RuntimeError, match="returned 1 answers for 2 requests"):
        run_requests(Short(), make_requests(2), EngineSettings())

    class Swapped(CountingBatchAdapter):
        def answer_batch(self, requests):  # type: ignore[no-untyped-def]
            return list(reversed(super().answer_batch(requests)))

    with pytest.raises(RuntimeError, match="answered 'q-1' for request 'engine-suite/q-0'"):
        run_requests(Swapped(), make_requests(2), EngineSettings())


def test_settings_are_validated() -> None:
    with pytest.raises(ConfigError, match="--mirage-concurrency: found 0"):
        EngineSettings(concurrency=0)
    with pytest.raises(ConfigError, match="batch size"):
        EngineSettings(batch_size=0)
    with pytest.raises(ConfigError, match="retries: found -1"):
        RetryPolicy(max_retries=-1)


def test_empty_request_list_does_nothing(tmp_path: Path) -> None:
    assert run_requests(CountingBatchAdapter(), [], EngineSettings(cache_dir=tmp_path)) == []
    assert not list(tmp_path.iterdir())


def test_progress_bar_runs_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_requests(SlowAsyncAdapter(delay=0.001), make_requests(5),
                       EngineSettings(progress=True, progress_min=1))
    assert all(isinstance(a, Answer) for a in out)
    assert capsys.readouterr().out == ""  # never on stdout


def test_stats_merge_across_workers_and_summary() -> None:
    a = EngineStats(requests=10, hits=4, misses=6, calls=7, retries=1, errors=1, prompt_tokens=30,
                    completion_tokens=12, wall_s=1.5)
    b = EngineStats.from_dict(a.to_dict())
    b.merge({"requests": 5, "hits": 5, "wall_s": 0.5})
    assert (b.requests, b.hits, b.misses, b.calls, b.wall_s) == (15, 9, 6, 7, 2.0)
    assert summary_lines(EngineStats()) == []
    assert summary_lines(b, "/tmp/c/answers.sqlite3") == [
        "mirage engine: 15 requests, 9 cache hits, 6 misses, 7 model calls (1 retries), 0 failed, 1 errors, "
        "tokens 30 prompt + 12 completion, 2.0s",
        "mirage cache: /tmp/c/answers.sqlite3"]
